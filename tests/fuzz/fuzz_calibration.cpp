// Calibration files (`tune --backend model --calibration FILE`): parsed, then
// the calibrated model built on a two-node topology, under the file's own
// algorithm and a what-if one, and asked for a sweep.
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/fuzz_workload.h"
#include "tuner/model/calibration_file.h"
#include "tuner/model/model_backend.h"
#include "tuner/model/model_sweep.h"
#include "tuner/topology.h"

using namespace ddpscope;

namespace {}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tuner::Workload w = fuzz::small_workload();
  static const tuner::Topology t = tuner::parse_topology("2x2:inter=10gbit");
  fuzz::refusing_bad_input([&] {
    const auto c =
        tuner::model::calibration_from_json_text("calibration.json", fuzz::as_text(data, size));
    for (auto what_if :
         {std::optional<tuner::model::Algorithm>(), std::optional(tuner::model::Algorithm::tree)}) {
      const auto m = tuner::model::ModelBackend::calibrated(c, t, what_if);
      tuner::model::predict_sweep(w, m, {0.5, 25.0}, 1.0);
    }
  });
  return 0;
}
