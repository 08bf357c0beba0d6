#include "tuner/report/model_report.h"

#include <cstdio>

#include "tuner/model/calibration_file.h"
#include "tuner/model/model_sweep.h"
#include "tuner/report/tune_json.h"
#include "tuner/report/tune_text.h"

namespace ddpscope::tuner::report {

using nlohmann::json;

namespace {

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

}  // namespace

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

json calibration_json(const model::Calibration& c) {
  json j = model::link_fit_json(c.intra);
  j.update({{"backend", c.backend},
            {"algorithm", model::algorithm_name(c.algorithm)},
            {"points", c.intra.observations},
            {"comm_rate_during_compute", c.comm_rate_during_compute},
            {"step_delay_ms", c.step_delay_ms},
            {"step_delay_under_comm_ms", c.step_delay_under_comm_ms},
            {"cores", c.cores}});
  if (c.intra_pair) {
    j["intra_pair"] = model::link_fit_json(*c.intra_pair);
    j["intra_pair"]["points"] = c.intra_pair->observations;
  }
  if (c.inter) {
    json inter = model::link_fit_json(c.inter->fit);
    inter.update({{"topology", c.inter->topology},
                  {"bandwidth_gbps", c.inter->bandwidth_gbps},
                  {"points", c.inter->fit.observations}});
    j["inter"] = inter;
  }
  return j;
}

// The model's NCCL choice per recorded all-reduce size beside NCCL's own.
void print_nccl_vs_recorded(const ModelTune& t, std::ostream& out) {
  if (t.nccl_vs_recorded.empty()) return;
  out << "\nNCCL's choice in the recorded run vs the model's for " << t.model.topology().name()
      << ":\n";
  char buf[256];
  snprintf(buf, sizeof buf, "%12s %6s %7s  %-14s %-14s %14s %14s\n", "bytes", "ranks", "calls",
           "NCCL chose", "model chose", "model us NCCL", "model us own");
  out << buf;
  for (const auto& c : t.nccl_vs_recorded) {
    std::string rec = c.recorded_algo + "/" + c.recorded_proto;
    std::string mod = c.model_algo + "/" + c.model_proto + (c.agree ? "" : " *");
    snprintf(buf, sizeof buf, "%12llu %6d %7llu  %-14s %-14s %14.1f %14.1f\n",
             (unsigned long long)c.bytes, c.nranks, (unsigned long long)c.calls, rec.c_str(),
             mod.c_str(), c.recorded_model_us, c.model_us);
    out << buf;
  }
  out << "(* the model prices another choice faster; \"model us NCCL\" -1: a choice the model "
         "does not cover)\n";
}

void print_model_tune(const Workload& w, const ModelTune& t, std::ostream& out) {
  print_workload(w, out);
  if (t.calibration) print_calibration(*t.calibration, out);
  out << t.model.describe() << "\n\n";
  print_tune_table(t.all, out);
  if (!t.measured.empty()) print_tune_recommendation(t.measured_rec, out);
  out << "\npredicted by the model:";
  print_tune_recommendation(t.model_rec, out);
  if (!t.validation.rows.empty()) print_validation(t.validation, out);
  print_nccl_vs_recorded(t, out);
}

json model_tune_json(const SweepSpec& s, const Workload& w, const ModelTune& t) {
  json j = tune_json(s, w, t.all, t.measured.empty() ? t.model_rec : t.measured_rec);
  for (auto& row : j["results"])
    if (row["backend"] == model::kModelBackendLabel) row["modelled_backend"] = t.model.backend();
  j["model"] = {{"backend", t.model.backend()},
                {"topology", t.model.topology().name()},
                {"description", t.model.describe()},
                {"recommendation", recommendation_json(t.model_rec)}};
  if (t.calibration) j["model"]["calibration"] = calibration_json(*t.calibration);
  if (!t.validation.rows.empty()) j["validation"] = validation_json(t.validation);
  if (!t.nccl_vs_recorded.empty()) {
    json rows = json::array();
    for (const auto& c : t.nccl_vs_recorded)
      rows.push_back({{"bytes", c.bytes},
                      {"nranks", c.nranks},
                      {"calls", c.calls},
                      {"recorded_algo", c.recorded_algo},
                      {"recorded_proto", c.recorded_proto},
                      {"model_algo", c.model_algo},
                      {"model_proto", c.model_proto},
                      {"agree", c.agree},
                      {"model_us_recorded_choice",
                       c.recorded_model_us < 0 ? json() : json(c.recorded_model_us)},
                      {"model_us", c.model_us}});
    j["nccl_vs_recorded"] = rows;
  }
  return j;
}

}  // namespace ddpscope::tuner::report
