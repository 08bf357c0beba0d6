// Topologies (`tune --topology SPEC|FILE.json`): the shorthand and the JSON
// file, then NCCL's cost model built on what parsed and asked for one bucket
// size, as `tune --backend model` does.
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/fuzz_workload.h"
#include "tuner/model/model_backend.h"
#include "tuner/model/model_sweep.h"
#include "tuner/topology.h"

using namespace ddpscope;

namespace {

void model_on(const tuner::Topology& t) {
  static const tuner::Workload w = fuzz::small_workload();
  const auto m = tuner::model::ModelBackend::nccl_priors(t, tuner::model::GpuArch::hopper);
  tuner::model::predict_sweep(w, m, {1.0, 25.0}, 1.0);
  (void)t.name();
}

}  // namespace

// The first byte picks the form: shorthand (the CLI reads a spec naming an
// existing path as a file; such specs are left to the file form here, so the
// target never reads the machine's files) or the JSON file's text.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text = fuzz::as_text(data + 1, size - 1);
  fuzz::refusing_bad_input([&] {
    if (data[0] & 1) {
      model_on(tuner::topology_from_json_text("topology.json", text));
    } else if (text.find('/') == std::string::npos && text.find(".json") == std::string::npos &&
               access(text.c_str(), F_OK) != 0) {
      model_on(tuner::parse_topology(text));
    }
  });
  return 0;
}
