// A DDP-like NCCL job on the NCCL test double (tests/nccl_abi), built twice:
// against libnccl.so (the hooks interpose, NCCL's plugin loads too) and with
// the double linked statically (no hook can interpose: only NCCL's profiler
// plugin sees the collectives, as with conda's statically linked NCCL).
// Four ranks are four threads. Per step: the gradient buckets' all-reduces in
// reverse layer order, a loss all-reduce, a coalesced group of two
// all-reduces (NCCL launches a group's calls in its own order), an
// all-gather; then an all-reduce on a split communicator and one on a
// one-rank communicator (NCCL's one-rank short-cut shows the plugin nothing).
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "injector/nccl/nccl_api.h"

extern "C" ncclResult_t ncclGetUniqueId(ncclUniqueId*);

namespace {

constexpr int kRanks = 4, kSteps = 3;
// Elements per bucket, last layer first: sizes that make the double's
// stand-in tuner pick SIMPLE, LL128 and LL.
constexpr size_t kBuckets[] = {3 << 20, 600 << 10, 5000};

void check(ncclResult_t rc, const char* what) {
  if (rc == ncclSuccess) return;
  fprintf(stderr, "ddp_like_job: %s failed (%d)\n", what, int(rc));
  exit(90);
}

void step(ncclComm_t comm, std::vector<float>& a, std::vector<float>& b, cudaStream_t s) {
  for (size_t n : kBuckets)
    check(ncclAllReduce(a.data(), b.data(), n, ncclFloat32, ncclSum, comm, s), "bucket");
  check(ncclAllReduce(a.data(), b.data(), 1, ncclFloat32, ncclAvg, comm, s), "loss");
  check(ncclGroupStart(), "group start");
  check(ncclAllReduce(a.data(), b.data(), 64, ncclFloat32, ncclSum, comm, s), "group 64");
  check(ncclAllReduce(a.data(), b.data(), 300 << 10, ncclFloat32, ncclSum, comm, s), "group 300k");
  check(ncclGroupEnd(), "group end");
  check(ncclAllGather(a.data(), b.data(), 256, ncclBfloat16, comm, s), "allgather");
}

void rank_main(ncclUniqueId id, int rank) {
  ncclComm_t comm;
  check(ncclCommInitRank(&comm, kRanks, id, rank), "init");
  std::vector<float> a(kBuckets[0], 1.0f), b(kBuckets[0] * kRanks);
  cudaStream_t s = reinterpret_cast<cudaStream_t>(uintptr_t(0x100 + rank));
  check(ncclBroadcast(a.data(), a.data(), 1000, ncclFloat32, 0, comm, s), "broadcast");
  for (int i = 0; i < kSteps; ++i) step(comm, a, b, s);
  ncclComm_t half;
  check(ncclCommSplit(comm, rank % 2, rank, &half, nullptr), "split");
  check(ncclAllReduce(a.data(), b.data(), 2048, ncclBfloat16, ncclSum, half, s), "half");
  check(ncclCommDestroy(half), "destroy half");
  check(ncclCommDestroy(comm), "destroy");
}

void solo() {
  ncclUniqueId id;
  check(ncclGetUniqueId(&id), "solo id");
  ncclComm_t comm;
  check(ncclCommInitRank(&comm, 1, id, 0), "solo init");
  std::vector<float> a(16, 1.0f), b(16);
  check(ncclAllReduce(a.data(), b.data(), 16, ncclFloat32, ncclSum, comm, nullptr), "solo");
  check(ncclCommDestroy(comm), "solo destroy");
}

}  // namespace

int main() {
  ncclUniqueId id;
  check(ncclGetUniqueId(&id), "unique id");
  std::vector<std::thread> ranks;
  for (int r = 0; r < kRanks; ++r) ranks.emplace_back(rank_main, id, r);
  for (auto& t : ranks) t.join();
  solo();
  printf("ddp_like_job: done\n");
  return 0;
}
