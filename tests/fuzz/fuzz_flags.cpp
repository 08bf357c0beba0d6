// The flags `tune` parses itself: --bucket-mb lists (each size then planned
// into DDP buckets), --backend lists, and the argument list a coordinator
// hands its worker ranks. Sizes must survive the trip to the workers exactly.
#include <cstdlib>
#include <sstream>
#include <vector>

#include "tests/fuzz/fuzz_support.h"
#include "tuner/bucket_plan.h"
#include "tuner/sweep_launch.h"
#include "tuner/sweep_spec.h"

using namespace ddpscope;

namespace {

tuner::Workload small_workload() {
  tuner::Workload w;
  w.name = "fuzz";
  w.params = {{"w", 3 << 20, Dtype::float32, 100},
              {"b", 1000, Dtype::float16, 10},
              {"e", 1ull << 40, Dtype::bfloat16, 5}};
  w.ready_order = {2, 1, 0};
  return w;
}

// What a coordinator sends is what its workers measure.
void check_worker_round_trip(const std::vector<double>& sizes) {
  tuner::SweepSpec s;
  s.bucket_mb = sizes;
  s.first_bucket_mb = sizes.front();
  s.results_dir = "/nonexistent";
  const auto back = tuner::parse_worker_arguments(tuner::worker_arguments(s, "gloo"));
  if (back.bucket_mb != s.bucket_mb || back.first_bucket_mb != s.first_bucket_mb) abort();
}

void bucket_sizes(const std::string& line) {
  static const tuner::Workload w = small_workload();
  const auto sizes = tuner::parse_bucket_sizes(line);
  check_worker_round_trip(sizes);
  for (double mb : sizes) tuner::plan_buckets(w, mb, sizes.front());
}

}  // namespace

// Line 1: a --bucket-mb value; line 2: a --backend value; the other lines:
// worker arguments, one a line.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> lines;
  std::stringstream in(fuzz::as_text(data, size));
  for (std::string line; lines.size() < 32 && std::getline(in, line);) lines.push_back(line);
  if (lines.empty()) return 0;
  fuzz::refusing_bad_input([&] { bucket_sizes(lines[0]); });
  if (lines.size() < 2) return 0;
  fuzz::refusing_bad_input([&] { tuner::parse_backends(lines[1]); });
  fuzz::refusing_bad_input([&] {
    tuner::parse_worker_arguments(std::vector<std::string>(lines.begin() + 2, lines.end()));
  });
  return 0;
}
