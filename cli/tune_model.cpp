// `ddpscope tune --backend model`: predicts the sweep with the cost model
// (tuner/model/), next to any measured backends of the same command line,
// with the error table where both exist. The modelled backend is the
// calibrated one (--calibration FILE, or --calibrate to measure it now) or,
// without a calibration, NCCL with its own priors on the --topology given.
#include "cli/tune_model.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "cli/tune_calibrate.h"
#include "cli/tune_output.h"
#include "reports/atomic_file.h"
#include "tuner/bucket_plan.h"
#include "tuner/model/calibration_file.h"
#include "tuner/model/model_sweep.h"
#include "tuner/model/nccl_outputs.h"
#include "tuner/model/validation.h"
#include "tuner/topology.h"

namespace ddpscope::cli {
namespace {

using nlohmann::json;
namespace model = tuner::model;

std::vector<double> bucket_sizes(const TuneArgs& a) { return parse_sizes(a.bucket_mb); }

std::string measured_backends(const TuneArgs& a) {
  std::string out;
  for (const auto& b : split_list(a.backends))
    if (!is_model_backend(b)) out += (out.empty() ? "" : ",") + b;
  return out;
}

tuner::Topology topology_of(const TuneArgs& a) {
  if (a.topology.empty()) return tuner::parse_topology("1x" + std::to_string(a.nproc));
  try {
    return tuner::parse_topology(a.topology);
  } catch (const tuner::TopologyError& e) {
    throw UsageError(std::string("--topology ") + e.what());
  }
}

model::GpuArch gpu_arch(const std::string& name) {
  if (name == "volta") return model::GpuArch::volta;
  if (name == "ampere") return model::GpuArch::ampere;
  if (name == "hopper") return model::GpuArch::hopper;
  throw UsageError("--gpu: '" + name + "' is not volta, ampere or hopper");
}

std::optional<model::Algorithm> algorithm_of(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (auto a = model::algorithm_named(name)) return a;
  throw UsageError("--model-algorithm: '" + name +
                   "' is not ring, recursive_doubling, tree or hierarchical");
}

// The calibration to model with: measured now, read from a file, or none (NCCL).
std::optional<model::Calibration> calibration_for(const TuneArgs& a,
                                                  const tuner::Topology& topology) {
  const auto& m = a.model;
  if (m.calibrate) {
    const auto measured = split_list(measured_backends(a));
    const std::string backend = measured.empty() ? "gloo" : measured[0];
    if (backend == "nccl") throw UsageError("--calibrate: NCCL is modelled from its priors");
    auto c = measure_calibration(a, backend, topology);
    if (!m.calibration.empty()) model::save_calibration(m.calibration, c);
    return c;
  }
  if (m.calibration.empty()) return std::nullopt;
  try {
    return model::load_calibration(m.calibration);
  } catch (const model::CalibrationError& e) {
    throw UsageError(e.what());
  }
}

const char* overlap_note(const model::LinkFit& f) {
  return f.cost.overlapped ? " (overlapped: the longer of the message steps and the bytes)" : "";
}

// The residual the per-size ratios carry: how far the measured sizes are from the fit.
std::string by_size_note(const model::LinkFit& f) {
  if (f.by_size.empty()) return "";
  double lo = f.by_size.points().front().ratio, hi = lo;
  for (const auto& p : f.by_size.points()) lo = std::min(lo, p.ratio), hi = std::max(hi, p.ratio);
  char note[96];
  snprintf(note, sizeof note, "; measured/fitted %.2f..%.2f over %zu sizes", lo, hi,
           f.by_size.points().size());
  return note;
}

void print_calibration(const model::Calibration& c, std::ostream& out) {
  char line[512];
  snprintf(line, sizeof line,
           "calibration: %s %s all-reduce, %d points at %d sizes: alpha %.1f us, beta %.3f GB/s"
           "%s%s; R^2 %.4f, median error %.1f%%, max %.1f%%%s; comm rate during compute %.2f, "
           "step delay %.2f ms (+%.2f under comm) (%s)\n",
           c.backend.c_str(), model::algorithm_name(c.algorithm), c.intra.observations,
           c.intra.distinct_sizes, c.intra.cost.alpha_s * 1e6,
           c.intra.cost.beta_s_per_byte > 0 ? 1e-9 / c.intra.cost.beta_s_per_byte : 0.0,
           c.intra.gamma_fitted ? "" : " (reduction folded into beta)", overlap_note(c.intra),
           c.intra.r2, 100 * c.intra.median_rel_error, 100 * c.intra.max_rel_error,
           by_size_note(c.intra).c_str(), c.comm_rate_during_compute, c.step_delay_ms,
           c.step_delay_under_comm_ms, c.comm_rate_source.c_str());
  out << line;
  if (c.inter) {
    const auto& f = c.inter->fit;
    snprintf(line, sizeof line,
             "calibration between nodes, fitted on %s: %d points at %d sizes: alpha %.1f us, "
             "beta %.3f GB/s%s; R^2 %.4f, median error %.1f%%, max %.1f%%%s\n",
             c.inter->topology.c_str(), f.observations, f.distinct_sizes, f.cost.alpha_s * 1e6,
             f.cost.beta_s_per_byte > 0 ? 1e-9 / f.cost.beta_s_per_byte : 0.0, overlap_note(f),
             f.r2, 100 * f.median_rel_error, 100 * f.max_rel_error, by_size_note(f).c_str());
    out << line;
  }
  for (const auto* f : {&c.intra, c.inter ? &c.inter->fit : nullptr})
    if (f && f->r2 < 0.9)
      out << "warning: the calibration fits its points poorly (R^2 " << f->r2
          << "): the machine was probably busy with other work; calibrate again\n";
}

void print_validation(const model::Validation& v, std::ostream& out) {
  char line[256];
  out << "\nmodel vs measurement (iteration time, median over iterations)\n";
  snprintf(line, sizeof line, "%-8s %-9s %10s %12s %12s %9s\n", "backend", "topology", "bucket MB",
           "measured ms", "predicted ms", "error");
  out << line;
  for (const auto& r : v.rows) {
    snprintf(line, sizeof line, "%-8s %-9s %10g %12.2f %12.2f %+8.1f%%\n", r.backend.c_str(),
             r.topology.c_str(), r.bucket_mb, r.measured_ms, r.predicted_ms, r.error_pct);
    out << line;
  }
  snprintf(line, sizeof line, "median |error| %.1f%%, max %.1f%% over %zu settings\n",
           v.median_abs_error_pct, v.max_abs_error_pct, v.rows.size());
  out << line;
}

json validation_json(const model::Validation& v) {
  json rows = json::array();
  for (const auto& r : v.rows)
    rows.push_back({{"backend", r.backend},
                    {"topology", r.topology},
                    {"bucket_mb", r.bucket_mb},
                    {"measured_iter_ms", r.measured_ms},
                    {"predicted_iter_ms", r.predicted_ms},
                    {"error_pct", r.error_pct}});
  return {{"rows", rows},
          {"median_abs_error_pct", v.median_abs_error_pct},
          {"max_abs_error_pct", v.max_abs_error_pct}};
}

// As the calibration file has the fits (with `points`, the observations),
// and what the model takes from the calibration besides.
json calibration_json(const model::Calibration& c) {
  json j = model::link_fit_json(c.intra);
  j.update({{"backend", c.backend},
            {"algorithm", model::algorithm_name(c.algorithm)},
            {"points", c.intra.observations},
            {"comm_rate_during_compute", c.comm_rate_during_compute},
            {"step_delay_ms", c.step_delay_ms},
            {"step_delay_under_comm_ms", c.step_delay_under_comm_ms},
            {"cores", c.cores}});
  if (c.inter) {
    json inter = model::link_fit_json(c.inter->fit);
    inter.update({{"topology", c.inter->topology},
                  {"bandwidth_gbps", c.inter->bandwidth_gbps},
                  {"points", c.inter->fit.observations}});
    j["inter"] = inter;
  }
  return j;
}

// NCCL's variables and plugin file for the recommended bucket size.
std::vector<std::string> nccl_outputs(const TuneArgs& a, const tuner::Workload& w,
                                      const model::ModelBackend& m, double best_mb) {
  std::vector<uint64_t> sizes;
  for (const auto& b : tuner::plan_buckets(w, best_mb, a.first_bucket_mb).buckets)
    sizes.push_back(b.bytes);
  const auto& path = a.model.nccl_tuner_config;
  if (!path.empty())
    reports::write_atomically(path, [&](std::ostream& out) {
      model::write_nccl_tuner_config(out, m.cluster(), model::nccl_choice_ranges(m.cluster()));
    });
  return model::nccl_environment(m.cluster(), sizes, path);
}

// What is modelled: the calibrated backend (under --model-algorithm if
// given) or NCCL with its priors.
model::ModelBackend model_for(const TuneArgs& a, const tuner::Topology& topology,
                              const std::optional<model::Calibration>& calibration) {
  if (!calibration) return model::ModelBackend::nccl_priors(topology, gpu_arch(a.model.gpu));
  return model::ModelBackend::calibrated(*calibration, topology, algorithm_of(a.model.algorithm));
}

// Every model flag, alone and together, before anything is measured:
// calibrating takes a while, and a mistake should not cost it.
void check_model_flags(const TuneArgs& a) {
  gpu_arch(a.model.gpu);
  const bool calibrated = a.model.calibrate || !a.model.calibration.empty();
  if (algorithm_of(a.model.algorithm) && !calibrated)
    throw UsageError("--model-algorithm: only for a calibrated backend (NCCL chooses its own)");
  if (calibrated && !a.model.nccl_tuner_config.empty())
    throw UsageError("--nccl-tuner-config: only for the NCCL model (no --calibration)");
}

// Measured and predicted sweeps of one command line, and what follows from them.
struct ModelRun {
  std::vector<tuner::SettingResult> measured, predicted, all;
  tuner::TuneRecommendation measured_rec, model_rec;
  model::Validation validation;
};

void print_report(const tuner::Workload& w, const std::optional<model::Calibration>& calibration,
                  const model::ModelBackend& m, const ModelRun& run) {
  std::cout << "workload " << w.name << ": " << w.params.size() << " gradients, "
            << double(w.total_bytes()) / (1 << 20) << " MiB\n";
  if (calibration) print_calibration(*calibration, std::cout);
  std::cout << m.describe() << "\n\n";
  print_tune_table(run.all, std::cout);
  if (!run.measured.empty()) print_tune_recommendation(run.measured_rec, std::cout);
  std::cout << "\npredicted by the model:";
  print_tune_recommendation(run.model_rec, std::cout);
  if (!run.validation.rows.empty()) print_validation(run.validation, std::cout);
}

json report_json(const TuneArgs& a, const tuner::Workload& w,
                 const std::optional<model::Calibration>& calibration, const model::ModelBackend& m,
                 const ModelRun& run) {
  json j = tune_json(a, w, run.all, run.measured.empty() ? run.model_rec : run.measured_rec);
  for (auto& row : j["results"])
    if (row["backend"] == model::kModelBackendLabel) row["modelled_backend"] = m.backend();
  j["model"] = {
      {"backend", m.backend()},
      {"topology", m.topology().name()},
      {"description", m.describe()},
      {"recommendation", tune_json(a, w, run.predicted, run.model_rec)["recommendation"]}};
  if (calibration) j["model"]["calibration"] = calibration_json(*calibration);
  if (!run.validation.rows.empty()) j["validation"] = validation_json(run.validation);
  return j;
}

}  // namespace

void add_model_options(CLI::App* tune, TuneArgs& a) {
  tune->add_option("--calibration", a.model.calibration,
                   "calibration JSON for --backend model (written there with --calibrate)");
  tune->add_flag("--calibrate", a.model.calibrate,
                 "measure a calibration with the first measured backend (default gloo) first");
  tune->add_option("--gpu", a.model.gpu, "GPU class for NCCL's priors: volta, ampere, hopper")
      ->capture_default_str();
  tune->add_option("--model-algorithm", a.model.algorithm,
                   "all-reduce a calibrated backend is predicted with: ring, recursive_doubling, "
                   "tree, hierarchical (default: the one it runs)");
  tune->add_option("--nccl-tuner-config", a.model.nccl_tuner_config,
                   "write NCCL's example tuner-plugin CSV for the modelled cluster");
}

bool is_model_backend(const std::string& name) { return name == model::kModelBackendLabel; }

bool uses_model(const TuneArgs& a) {
  for (const auto& b : split_list(a.backends))
    if (is_model_backend(b)) return true;
  return a.model.calibrate;
}

int run_model_tune(TuneArgs& a, const tuner::Workload& w) {
  const auto topology = topology_of(a);  // bad input first: calibrating takes a while
  check_model_flags(a);
  const auto calibration = calibration_for(a, topology);
  const auto m = model_for(a, topology, calibration);
  ModelRun run;
  TuneArgs measured_args = a;
  measured_args.backends = measured_backends(a);
  if (!measured_args.backends.empty()) run.measured = measure_sweep(measured_args);
  run.predicted = model::predict_sweep(w, m, bucket_sizes(a), a.first_bucket_mb);
  run.all = run.measured;
  run.all.insert(run.all.end(), run.predicted.begin(), run.predicted.end());
  run.measured_rec = tuner::recommend(run.measured);
  run.model_rec = tuner::recommend(run.predicted);
  run.model_rec.environment.insert(
      run.model_rec.environment.begin(),
      "torch.distributed.init_process_group(backend=\"" + m.backend() + "\")");
  if (m.is_nccl()) {
    auto env = nccl_outputs(a, w, m, run.model_rec.best.bucket_mb);
    run.model_rec.environment.insert(run.model_rec.environment.end(), env.begin(), env.end());
  }
  run.validation = model::validate_model(run.measured, run.predicted);

  print_report(w, calibration, m, run);
  const json j = report_json(a, w, calibration, m, run);
  if (!a.json.empty())
    reports::write_atomically(a.json, [&](std::ostream& out) { out << j.dump(1) << "\n"; });
  if (!a.db.empty()) store_tune_results(a, w, run.all, j["recommendation"]);
  return 0;
}

}  // namespace ddpscope::cli
