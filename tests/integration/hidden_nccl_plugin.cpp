// A stand-in for a framework extension that carries its own NCCL under a name
// no search for "libnccl" would guess: linked against the NCCL-ABI test
// library built as libcollectives_hidden.so and loaded RTLD_LOCAL by
// hidden_nccl_workload, so neither dlsym(RTLD_NEXT) nor a soname or path
// search finds the real functions behind the hooks; only the caller's scope
// does. Runs a 3-rank all-reduce (ranks are threads) and hands back each
// rank's result.
#include <thread>
#include <vector>

#include "injector/nccl/nccl_api.h"

extern "C" ncclResult_t ncclGetUniqueId(ncclUniqueId*);

extern "C" __attribute__((visibility("default"))) int run_allreduce(int nranks, int count,
                                                                    float* results) {
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) return -1;
  std::vector<int> codes(nranks, 0);
  std::vector<std::thread> ranks;
  for (int r = 0; r < nranks; ++r)
    ranks.emplace_back([&, r] {
      ncclComm_t comm;
      codes[r] = ncclCommInitRank(&comm, nranks, id, r);
      if (codes[r] != ncclSuccess) return;
      std::vector<float> grad(count);
      for (int i = 0; i < count; ++i) grad[i] = float(r + 1) * 0.5f + float(i);
      codes[r] = ncclAllReduce(grad.data(), results + r * count, count, ncclFloat32, ncclSum, comm,
                               nullptr);
      ncclCommDestroy(comm);
    });
  for (auto& t : ranks) t.join();
  for (int c : codes)
    if (c != ncclSuccess) return c;
  return 0;
}
