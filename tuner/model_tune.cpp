#include "tuner/model_tune.h"

#include "profiler/core/atomic_file.h"
#include "tuner/bucket_plan.h"
#include "tuner/calibrate.h"
#include "tuner/model/calibration_file.h"
#include "tuner/model/model_sweep.h"
#include "tuner/model/nccl_outputs.h"
#include "tuner/topology.h"

namespace ddpscope::tuner {
namespace {

Topology topology_of(const SweepSpec& s) {
  if (s.topology.empty()) return parse_topology("1x" + std::to_string(s.nproc));
  try {
    return parse_topology(s.topology);
  } catch (const InputError& e) {
    throw InputError(std::string("--topology ") + e.what());
  }
}

model::GpuArch gpu_arch(const std::string& name) {
  if (name == "volta") return model::GpuArch::volta;
  if (name == "ampere") return model::GpuArch::ampere;
  if (name == "hopper") return model::GpuArch::hopper;
  throw InputError("--gpu: '" + name + "' is not volta, ampere or hopper");
}

std::optional<model::Algorithm> algorithm_of(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (auto a = model::algorithm_named(name)) return a;
  throw InputError("--model-algorithm: '" + name +
                   "' is not ring, recursive_doubling, tree or hierarchical");
}

}  // namespace

void check_model_options(const ModelOptions& o) {
  gpu_arch(o.gpu);
  const bool calibrated = o.calibrate || !o.calibration.empty();
  if (algorithm_of(o.algorithm) && !calibrated)
    throw InputError("--model-algorithm: only for a calibrated backend (NCCL chooses its own)");
  if (calibrated && !o.nccl_tuner_config.empty())
    throw InputError("--nccl-tuner-config: only for the NCCL model (no --calibration)");
}

namespace {

// The calibration to model with: measured now, read from a file, or none (NCCL).
std::optional<model::Calibration> calibration_for(const SweepSpec& s, const ModelOptions& o,
                                                  const Topology& topology,
                                                  const WorkerProgram& program) {
  if (o.calibrate) {
    const auto measured = measured_backends(s);
    const std::string backend = measured.empty() ? "gloo" : measured[0];
    if (backend == "nccl") throw InputError("--calibrate: NCCL is modelled from its priors");
    auto c = measure_calibration(s, backend, topology, program);
    if (!o.calibration.empty()) model::save_calibration(o.calibration, c);
    return c;
  }
  if (o.calibration.empty()) return std::nullopt;
  return model::load_calibration(o.calibration);
}

// What is modelled: the calibrated backend (under o.algorithm if given) or
// NCCL with its priors.
model::ModelBackend model_for(const ModelOptions& o, const Topology& topology,
                              const std::optional<model::Calibration>& calibration) {
  if (!calibration) return model::ModelBackend::nccl_priors(topology, gpu_arch(o.gpu));
  return model::ModelBackend::calibrated(*calibration, topology, algorithm_of(o.algorithm));
}

// NCCL's variables and plugin file for the recommended bucket size.
std::vector<std::string> nccl_outputs(const SweepSpec& s, const ModelOptions& o, const Workload& w,
                                      const model::ModelBackend& m, double best_mb) {
  std::vector<uint64_t> sizes;
  for (const auto& b : plan_buckets(w, best_mb, s.first_bucket_mb).buckets)
    sizes.push_back(b.bytes);
  const auto& path = o.nccl_tuner_config;
  if (!path.empty())
    core::write_atomically(path, [&](std::ostream& out) {
      model::write_nccl_tuner_config(out, m.cluster(), model::nccl_choice_ranges(m.cluster()));
    });
  return model::nccl_environment(m.cluster(), sizes, path);
}

}  // namespace

bool uses_model(const SweepSpec& s, const ModelOptions& o) {
  for (const auto& b : s.backends)
    if (is_model_backend(b)) return true;
  return o.calibrate;
}

ModelTune run_model_tune(const SweepSpec& s, const ModelOptions& o, const Workload& w,
                         const WorkerProgram& program) {
  const auto topology = topology_of(s);  // bad input first: calibrating takes a while
  check_model_options(o);
  const auto calibration = calibration_for(s, o, topology, program);
  ModelTune t{calibration, model_for(o, topology, calibration), {}, {}, {}, {}, {}, {}, {}};
  SweepSpec measured = s;
  measured.backends = measured_backends(s);
  if (!measured.backends.empty()) t.measured = measure_sweep(measured, program);
  t.predicted = model::predict_sweep(w, t.model, s.bucket_mb, s.first_bucket_mb);
  t.all = t.measured;
  t.all.insert(t.all.end(), t.predicted.begin(), t.predicted.end());
  t.measured_rec = recommend(t.measured);
  t.model_rec = recommend(t.predicted);
  t.model_rec.environment.insert(
      t.model_rec.environment.begin(),
      "torch.distributed.init_process_group(backend=\"" + t.model.backend() + "\")");
  if (t.model.is_nccl()) {
    auto env = nccl_outputs(s, o, w, t.model, t.model_rec.best.bucket_mb);
    t.model_rec.environment.insert(t.model_rec.environment.end(), env.begin(), env.end());
    const std::string recorded = "recorded:";
    if (w.name.rfind(recorded, 0) == 0)
      t.nccl_vs_recorded =
          model::compare_nccl_choices(w.name.substr(recorded.size()), t.model.cluster());
  }
  t.validation = model::validate_model(t.measured, t.predicted);
  return t;
}

}  // namespace ddpscope::tuner
