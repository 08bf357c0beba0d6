#include "tuner/model/calibration_file.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "profiler/core/atomic_file.h"
#include "tuner/json_file.h"

namespace ddpscope::tuner::model {
namespace {

using nlohmann::json;

double number(const json& j, const char* key, const std::string& where);

// Optional (files written before it have none: no correction).
SizeCorrection by_size_from(const json& f, const std::string& where) {
  if (!f.contains("by_size")) return {};
  if (!f["by_size"].is_array()) throw InputError(where + ": 'by_size' is not a list");
  std::vector<SizePoint> points;
  for (const auto& p : f["by_size"]) {
    if (!p.is_object()) throw InputError(where + ": a 'by_size' entry is not an object");
    points.push_back({number(p, "bytes_per_step", where + ": by_size"),
                      number(p, "ratio", where + ": by_size")});
    if (!(points.back().ratio > 0)) throw InputError(where + ": by_size: 'ratio' must be positive");
  }
  return SizeCorrection(points);
}

// Reads a number that must be there and be finite and non-negative.
double number(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_number())
    throw InputError(where + ": '" + key + "' is missing or not a number");
  double v = j[key].get<double>();
  if (!(v >= 0) || !std::isfinite(v))
    throw InputError(where + ": '" + key + "' must be a non-negative number");
  return v;
}

// Optional fields keep `fallback` when absent; present, they must have the
// type the writer gives them (nlohmann's value() would throw its own error).
double optional_number(const json& j, const char* key, const std::string& where, double fallback,
                       bool signed_ok = false) {
  if (!j.contains(key)) return fallback;
  const json& v = j[key];
  if (!v.is_number() || !std::isfinite(v.get<double>()) || (!signed_ok && v.get<double>() < 0))
    throw InputError(where + ": '" + key + "' must be a " + (signed_ok ? "" : "non-negative ") +
                     "number");
  return v.get<double>();
}

// A count the writer stores as an int: a whole number that fits one.
int optional_count(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) return 0;
  const json& v = j[key];
  if (!v.is_number_unsigned() || v.get<uint64_t>() > 1'000'000'000)
    throw InputError(where + ": '" + key + "' must be a whole number from 0 to 1000000000");
  return int(v.get<uint64_t>());
}

bool optional_flag(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) return false;
  if (!j[key].is_boolean()) throw InputError(where + ": '" + key + "' must be true or false");
  return j[key].get<bool>();
}

std::string optional_text(const json& j, const char* key, const std::string& where,
                          const std::string& fallback = "") {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_string()) throw InputError(where + ": '" + key + "' must be a string");
  return j[key].get<std::string>();
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
  fit.cost.overlapped = optional_flag(f, "overlapped", where);
  fit.gamma_fitted = optional_flag(f, "gamma_fitted", where);
  fit.observations = optional_count(f, "observations", where);
  fit.distinct_sizes = optional_count(f, "distinct_sizes", where);
  fit.r2 = optional_number(f, "r2", where, 0, true);  // below 0 for a fit worse than the mean
  fit.median_rel_error = optional_number(f, "median_rel_error", where, 0);
  fit.max_rel_error = optional_number(f, "max_rel_error", where, 0);
  fit.by_size = by_size_from(f, where);
  return fit;
}

InterLinkFit inter_from(const json& f, const std::string& path, const char* key = "inter") {
  const std::string where = path + ": " + key;
  if (!f.is_object()) throw InputError(where + " is not an object");
  InterLinkFit inter;
  inter.fit = fit_from(f, where);
  inter.topology = optional_text(f, "topology", where);
  inter.bandwidth_gbps = number(f, "bandwidth_gbps", where);
  return inter;
}

// Files written before `ranks`: the rank count of their first one-node point.
int ranks_of_points(const json& j, const std::string& path) {
  if (!j.contains("points") || !j["points"].is_array() || j["points"].empty()) return 0;
  const json& first = j["points"][0];
  if (!first.is_object()) throw InputError(path + ": points: an entry is not an object");
  return optional_count(first, "nranks", path + ": points");
}

Algorithm algorithm_from(const std::string& name, const std::string& path) {
  if (auto a = algorithm_named(name)) return *a;
  throw InputError(path + ": algorithm '" + name +
                   "' is not ring, recursive_doubling, tree or hierarchical");
}

json by_size_json(const SizeCorrection& by_size) {
  json out = json::array();
  for (const auto& p : by_size.points())
    out.push_back({{"bytes_per_step", p.bytes_per_step}, {"ratio", p.ratio}});
  return out;
}

// Both non-negative numbers (number() says which is not).
Calibration::StepDelays step_delays_from(const json& j, const std::string& path) {
  const auto& d = j["pair_step_delays"];
  const std::string where = path + ": pair_step_delays";
  if (!d.is_object()) throw InputError(where + " is not an object");
  return {number(d, "alone_ms", where), number(d, "under_comm_ms", where)};
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
            {"ranks", calibrated_ranks(c)},
            {"comm_rate_source", c.comm_rate_source},
            {"points", points_json(c.points)}};
  if (c.intra_pair) {
    j["intra_pair"] = link_fit_json(*c.intra_pair);
    j["intra_pair_points"] = points_json(c.intra_pair_points);
  }
  if (c.pair_step_delays)
    j["pair_step_delays"] = {{"alone_ms", c.pair_step_delays->alone_ms},
                             {"under_comm_ms", c.pair_step_delays->under_comm_ms}};
  if (c.inter) {
    j["inter"] = link_fit_json(c.inter->fit);
    j["inter"]["topology"] = c.inter->topology;
    j["inter"]["bandwidth_gbps"] = c.inter->bandwidth_gbps;
    j["inter_points"] = points_json(c.inter_points);
  }
  if (c.inter_path) {
    j["inter_path"] = link_fit_json(c.inter_path->fit);
    j["inter_path"]["topology"] = c.inter_path->topology;
    j["inter_path"]["bandwidth_gbps"] = c.inter_path->bandwidth_gbps;
    j["inter_path_points"] = points_json(c.inter_path_points);
  }
  // Written aside and renamed, so a reader never sees half a calibration; a
  // path that cannot be written is an InputError naming it.
  core::write_atomically(path, [&](std::ostream& out) { out << j.dump(1) << "\n"; });
}

Calibration load_calibration(const std::string& path) {
  return calibration_from_json_text(path, read_json_text(path, "calibration file"));
}

Calibration calibration_from_json_text(const std::string& path, const std::string& text) {
  const json j = parse_json_text(path, text);
  if (!j.is_object()) throw InputError(path + ": not a JSON object");
  if (!j.contains("kind") || j["kind"] != "ddpscope-calibration")
    throw InputError(path +
                     ": not a ddpscope calibration (\"kind\" is not "
                     "\"ddpscope-calibration\")");
  if (!j.contains("intra") || !j["intra"].is_object())
    throw InputError(path + ": 'intra' (the fitted link) is missing");
  Calibration c;
  c.backend = optional_text(j, "backend", path);
  if (c.backend != "gloo" && c.backend != "mpi")
    throw InputError(path + ": backend '" + c.backend + "' is not gloo or mpi");
  c.host = optional_text(j, "host", path);
  c.algorithm = algorithm_from(optional_text(j, "algorithm", path, "ring"), path);
  c.intra = fit_from(j["intra"], path + ": intra");
  if (j.contains("intra_pair")) {
    if (!j["intra_pair"].is_object()) throw InputError(path + ": intra_pair is not an object");
    c.intra_pair = fit_from(j["intra_pair"], path + ": intra_pair");
  }
  if (j.contains("inter")) c.inter = inter_from(j["inter"], path);
  if (j.contains("inter_path")) c.inter_path = inter_from(j["inter_path"], path, "inter_path");
  c.comm_rate_during_compute = number(j, "comm_rate_during_compute", path);
  // Below 0.1 % communication would never finish while compute runs.
  if (!(c.comm_rate_during_compute >= 0.001 && c.comm_rate_during_compute <= 1))
    throw InputError(path + ": 'comm_rate_during_compute' must be from 0.001 to 1");
  if (j.contains("step_delay_ms")) c.step_delay_ms = number(j, "step_delay_ms", path);
  if (j.contains("step_delay_under_comm_ms"))
    c.step_delay_under_comm_ms = number(j, "step_delay_under_comm_ms", path);
  if (j.contains("step_delay_step_us"))
    c.step_delay_step_us = number(j, "step_delay_step_us", path);
  if (j.contains("pair_step_delays")) c.pair_step_delays = step_delays_from(j, path);
  c.cores = optional_count(j, "cores", path);
  c.ranks = optional_count(j, "ranks", path);
  if (!j.contains("ranks")) c.ranks = ranks_of_points(j, path);
  c.comm_rate_source = optional_text(j, "comm_rate_source", path);
  return c;
}

}  // namespace ddpscope::tuner::model
