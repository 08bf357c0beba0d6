#include "tuner/model/calibration_file.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "profiler/core/atomic_file.h"

namespace ddpscope::tuner::model {
namespace {

using nlohmann::json;

double number(const json& j, const char* key, const std::string& where);

// Optional (files written before it have none: no correction).
SizeCorrection by_size_from(const json& f, const std::string& where) {
  if (!f.contains("by_size")) return {};
  if (!f["by_size"].is_array()) throw CalibrationError(where + ": 'by_size' is not a list");
  std::vector<SizePoint> points;
  for (const auto& p : f["by_size"]) {
    if (!p.is_object()) throw CalibrationError(where + ": a 'by_size' entry is not an object");
    points.push_back({number(p, "bytes_per_step", where + ": by_size"),
                      number(p, "ratio", where + ": by_size")});
    if (!(points.back().ratio > 0))
      throw CalibrationError(where + ": by_size: 'ratio' must be positive");
  }
  return SizeCorrection(points);
}

// Reads a number that must be there and be finite and non-negative.
double number(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_number())
    throw CalibrationError(where + ": '" + key + "' is missing or not a number");
  double v = j[key].get<double>();
  if (!(v >= 0) || !std::isfinite(v))
    throw CalibrationError(where + ": '" + key + "' must be a non-negative number");
  return v;
}

json points_json(const std::vector<CommObservation>& points) {
  json out = json::array();
  for (const auto& o : points)
    out.push_back({{"algorithm", algorithm_name(o.algorithm)},
                   {"nranks", o.nranks},
                   {"bucket_bytes", o.bucket_bytes},
                   {"seconds", o.seconds}});
  return out;
}

// A fitted link ("intra" or "inter"): α, β, γ required, the quality optional.
LinkFit fit_from(const json& f, const std::string& where) {
  LinkFit fit;
  fit.cost = {number(f, "alpha_us", where) * 1e-6, number(f, "beta_ns_per_byte", where) * 1e-9,
              number(f, "gamma_ns_per_byte", where) * 1e-9};
  fit.cost.overlapped = f.value("overlapped", false);
  fit.gamma_fitted = f.value("gamma_fitted", false);
  fit.observations = f.value("observations", 0);
  fit.distinct_sizes = f.value("distinct_sizes", 0);
  fit.r2 = f.value("r2", 0.0);
  fit.median_rel_error = f.value("median_rel_error", 0.0);
  fit.max_rel_error = f.value("max_rel_error", 0.0);
  fit.by_size = by_size_from(f, where);
  return fit;
}

InterLinkFit inter_from(const json& f, const std::string& path) {
  const std::string where = path + ": inter";
  if (!f.is_object()) throw CalibrationError(where + " is not an object");
  InterLinkFit inter;
  inter.fit = fit_from(f, where);
  inter.topology = f.value("topology", "");
  inter.bandwidth_gbps = number(f, "bandwidth_gbps", where);
  return inter;
}

Algorithm algorithm_from(const std::string& name, const std::string& path) {
  if (auto a = algorithm_named(name)) return *a;
  throw CalibrationError(path + ": algorithm '" + name +
                         "' is not ring, recursive_doubling, tree or hierarchical");
}

json by_size_json(const SizeCorrection& by_size) {
  json out = json::array();
  for (const auto& p : by_size.points())
    out.push_back({{"bytes_per_step", p.bytes_per_step}, {"ratio", p.ratio}});
  return out;
}

}  // namespace

json link_fit_json(const LinkFit& f) {
  return {{"alpha_us", f.cost.alpha_s * 1e6},
          {"beta_ns_per_byte", f.cost.beta_s_per_byte * 1e9},
          {"gamma_ns_per_byte", f.cost.gamma_s_per_byte * 1e9},
          {"gamma_fitted", f.gamma_fitted},
          {"overlapped", f.cost.overlapped},
          {"observations", f.observations},
          {"distinct_sizes", f.distinct_sizes},
          {"r2", f.r2},
          {"median_rel_error", f.median_rel_error},
          {"max_rel_error", f.max_rel_error},
          {"by_size", by_size_json(f.by_size)}};
}

void save_calibration(const std::string& path, const Calibration& c) {
  json j = {{"kind", "ddpscope-calibration"},
            {"version", 1},
            {"backend", c.backend},
            {"host", c.host},
            {"algorithm", algorithm_name(c.algorithm)},
            {"intra", link_fit_json(c.intra)},
            {"comm_rate_during_compute", c.comm_rate_during_compute},
            {"step_delay_ms", c.step_delay_ms},
            {"step_delay_under_comm_ms", c.step_delay_under_comm_ms},
            {"step_delay_step_us", c.step_delay_step_us},
            {"cores", c.cores},
            {"comm_rate_source", c.comm_rate_source},
            {"points", points_json(c.points)}};
  if (c.inter) {
    j["inter"] = link_fit_json(c.inter->fit);
    j["inter"]["topology"] = c.inter->topology;
    j["inter"]["bandwidth_gbps"] = c.inter->bandwidth_gbps;
    j["inter_points"] = points_json(c.inter_points);
  }
  // Written aside and renamed, so a reader never sees half a calibration.
  try {
    core::write_atomically(path, [&](std::ostream& out) { out << j.dump(1) << "\n"; });
  } catch (const std::runtime_error& e) {
    throw CalibrationError(e.what());  // "<path>: cannot write (<why>)"
  }
}

Calibration load_calibration(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CalibrationError(path + ": cannot open the file (" + std::strerror(errno) + ")");
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw CalibrationError(path + ": not a JSON object");
  if (j.value("kind", "") != "ddpscope-calibration")
    throw CalibrationError(path +
                           ": not a ddpscope calibration (\"kind\" is not "
                           "\"ddpscope-calibration\")");
  if (!j.contains("intra") || !j["intra"].is_object())
    throw CalibrationError(path + ": 'intra' (the fitted link) is missing");
  Calibration c;
  c.backend = j.value("backend", "");
  if (c.backend != "gloo" && c.backend != "mpi")
    throw CalibrationError(path + ": backend '" + c.backend + "' is not gloo or mpi");
  c.host = j.value("host", "");
  c.algorithm = algorithm_from(j.value("algorithm", "ring"), path);
  c.intra = fit_from(j["intra"], path + ": intra");
  if (j.contains("inter")) c.inter = inter_from(j["inter"], path);
  c.comm_rate_during_compute = number(j, "comm_rate_during_compute", path);
  if (!(c.comm_rate_during_compute > 0 && c.comm_rate_during_compute <= 1))
    throw CalibrationError(path + ": 'comm_rate_during_compute' must be in (0, 1]");
  if (j.contains("step_delay_ms")) c.step_delay_ms = number(j, "step_delay_ms", path);
  if (j.contains("step_delay_under_comm_ms"))
    c.step_delay_under_comm_ms = number(j, "step_delay_under_comm_ms", path);
  if (j.contains("step_delay_step_us"))
    c.step_delay_step_us = number(j, "step_delay_step_us", path);
  if (j.contains("cores")) c.cores = int(number(j, "cores", path));
  c.comm_rate_source = j.value("comm_rate_source", "");
  return c;
}

}  // namespace ddpscope::tuner::model
