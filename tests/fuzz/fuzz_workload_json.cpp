// Workload JSON (`tune --workload FILE.json`): parsed, then planned into DDP
// buckets at a small, the default and a huge cap, as `tune --dry-run` does.
#include "tests/fuzz/fuzz_support.h"
#include "tuner/bucket_plan.h"
#include "tuner/workload.h"

using namespace ddpscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::refusing_bad_input([&] {
    const auto w = tuner::workload_from_json_text("workload.json", fuzz::as_text(data, size));
    (void)w.total_bytes();
    (void)w.backward_us();
    for (double cap_mb : {0.000001, 25.0, 1e6}) tuner::plan_buckets(w, cap_mb, 1.0);
  });
  return 0;
}
