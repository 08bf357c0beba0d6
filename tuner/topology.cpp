// Topology specs: the shorthand ("2x2:inter=1gbit") and the JSON file of the
// same fields. Every problem is an InputError of one line that names the
// spec or file, because `ddpscope tune` prints it as it is and exits 2.
#include "tuner/topology.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "tuner/json_file.h"

namespace ddpscope::tuner {
namespace {

constexpr const char* kFields = "inter, intra, inter_lat, intra_lat";
constexpr const char* kBandwidthUnits = "bit, kbit, mbit, gbit, tbit";
constexpr const char* kLatencyUnits = "us, ms, s";
// Far beyond any cluster the model predicts for; stops integer overflow.
constexpr long kMaxCount = 1'000'000;

struct Unit {
  const char* name;
  double scale;  // to gbit/s or to microseconds
};
constexpr Unit kBandwidthScale[] = {
    {"bit", 1e-9}, {"kbit", 1e-6}, {"mbit", 1e-3}, {"gbit", 1.0}, {"tbit", 1e3}};
constexpr Unit kLatencyScale[] = {{"us", 1.0}, {"ms", 1e3}, {"s", 1e6}};

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "<number><unit>" -> number x the unit's scale; `what` names the field in errors.
template <size_t N>
double parse_quantity(const std::string& text, const std::string& what, const Unit (&units)[N],
                      const char* unit_list) {
  if (text.empty()) throw InputError(what + " has no value");
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(begin, &end);
  if (end == begin || !std::isdigit(static_cast<unsigned char>(*begin)))
    throw InputError(what + " '" + text + "' does not start with a number");
  // strtod also reads hexadecimal ("0x10"), which nobody means here.
  if (text.substr(0, size_t(end - begin)).find_first_not_of("0123456789.eE+-") != std::string::npos)
    throw InputError(what + " '" + text + "' is not a decimal number with a unit");
  if (errno == ERANGE || !std::isfinite(value))
    throw InputError(what + " '" + text + "' is out of range");
  const std::string unit = lower(end);
  if (unit.empty()) throw InputError(what + " '" + text + "' has no unit (" + unit_list + ")");
  for (const Unit& u : units)
    if (unit == u.name) return value * u.scale;
  throw InputError(what + " '" + text + "': unknown unit '" + std::string(end) + "' (" + unit_list +
                   ")");
}

double parse_bandwidth(const std::string& text, const std::string& what) {
  double gbps = parse_quantity(text, what, kBandwidthScale, kBandwidthUnits);
  // 0 would mean "not limited" in Link; asking for it explicitly is a mistake.
  if (!(gbps > 0)) throw InputError(what + " must be a positive bandwidth, not '" + text + "'");
  return gbps;
}

double parse_latency(const std::string& text, const std::string& what) {
  return parse_quantity(text, what, kLatencyScale, kLatencyUnits);
}

int parse_count(const std::string& text, const std::string& what) {
  if (text.empty()) throw InputError(what + " is missing");
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      throw InputError(what + " '" + text + "' is not a whole number");
  long n = std::strtol(text.c_str(), nullptr, 10);
  if (text.size() > 7 || n > kMaxCount) throw InputError(what + " '" + text + "' is too large");
  if (n < 1) throw InputError(what + " must be at least 1");
  return int(n);
}

// Sets one named field from its text form; the same names in both formats.
void set_field(Topology& t, const std::string& key, const std::string& value) {
  if (key == "inter")
    t.inter.bandwidth_gbps = parse_bandwidth(value, key);
  else if (key == "intra")
    t.intra.bandwidth_gbps = parse_bandwidth(value, key);
  else if (key == "inter_lat")
    t.inter.latency_us = parse_latency(value, key);
  else if (key == "intra_lat")
    t.intra.latency_us = parse_latency(value, key);
  else
    throw InputError("unknown field '" + key + "' (" + kFields + ")");
}

// nranks() is an int: the product is bounded as each count is.
void check_ranks(const Topology& t) {
  if (int64_t(t.nodes) * t.ranks_per_node > kMaxCount)
    throw InputError(std::to_string(t.nodes) + " nodes of " + std::to_string(t.ranks_per_node) +
                     " ranks are more than " + std::to_string(kMaxCount) + " ranks");
}

// "4" is one node of four ranks; "2x4" is two nodes of four.
void parse_shape(Topology& t, const std::string& shape) {
  if (shape.empty()) throw InputError("the shape is missing (NODESxRANKS, e.g. 2x4)");
  const size_t x = lower(shape).find('x');
  if (x == std::string::npos) {
    t.ranks_per_node = parse_count(shape, "ranks");
    return;
  }
  t.nodes = parse_count(shape.substr(0, x), "nodes");
  t.ranks_per_node = parse_count(shape.substr(x + 1), "ranks per node");
  check_ranks(t);
}

void parse_fields(Topology& t, const std::string& fields) {
  if (fields.empty()) throw InputError("nothing after ':' (e.g. :inter=1gbit)");
  if (fields.back() == ',') throw InputError("an empty field after the last comma");
  std::vector<std::string> seen;
  std::stringstream in(fields);
  for (std::string field; std::getline(in, field, ',');) {
    if (field.empty()) throw InputError("an empty field between commas");
    const size_t eq = field.find('=');
    if (eq == std::string::npos)
      throw InputError("'" + field + "' is not KEY=VALUE (" + kFields + ")");
    const std::string key = lower(field.substr(0, eq));
    for (const auto& s : seen)
      if (s == key) throw InputError(key + " is given twice");
    seen.push_back(key);
    set_field(t, key, field.substr(eq + 1));
  }
}

Topology parse_shorthand(const std::string& spec) {
  try {
    Topology t;
    const size_t colon = spec.find(':');
    parse_shape(t, spec.substr(0, colon));
    if (colon != std::string::npos) parse_fields(t, spec.substr(colon + 1));
    return t;
  } catch (const InputError& e) {
    throw InputError("topology '" + spec + "': " + e.what());
  }
}

// The JSON file: {"nodes": 2, "ranks_per_node": 4, "inter": "10gbit", ...}.
Topology parse_json(const nlohmann::json& j) {
  if (!j.is_object()) throw InputError("the top level must be a JSON object");
  Topology t;
  for (const char* key : {"nodes", "ranks_per_node"}) {
    if (!j.contains(key)) throw InputError(std::string(key) + " is missing");
    const auto& v = j[key];
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > kMaxCount)
      throw InputError(std::string(key) + " must be a whole number from 1 to 1000000");
  }
  t.nodes = j["nodes"].get<int>();
  t.ranks_per_node = j["ranks_per_node"].get<int>();
  check_ranks(t);
  for (const auto& [key, value] : j.items()) {
    if (key == "nodes" || key == "ranks_per_node" || key == "description") continue;
    if (!value.is_string())
      throw InputError(key + " must be a string with a unit, e.g. \"10gbit\" or \"5us\"");
    set_field(t, key, value.get<std::string>());
  }
  return t;
}

}  // namespace

Topology topology_from_json_text(const std::string& path, const std::string& text) {
  const nlohmann::json j = parse_json_text(path, text);
  try {
    return parse_json(j);
  } catch (const InputError& e) {
    throw InputError(path, e.what());
  }
}

namespace {

Topology parse_file(const std::string& path) {
  return topology_from_json_text(path, read_json_text(path, "topology file"));
}

// A spec that looks like a path but names nothing gets the file's message, not
// a puzzling one about shorthand syntax.
bool looks_like_path(const std::string& spec) {
  return spec.find('/') != std::string::npos ||
         (spec.size() > 5 && lower(spec.substr(spec.size() - 5)) == ".json");
}

std::string number(double x) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

}  // namespace

std::string format_bandwidth(double gbps) {
  if (gbps >= 1e3) return number(gbps / 1e3) + "tbit";
  if (gbps >= 1) return number(gbps) + "gbit";
  if (gbps >= 1e-3) return number(gbps * 1e3) + "mbit";
  if (gbps >= 1e-6) return number(gbps * 1e6) + "kbit";
  return number(gbps * 1e9) + "bit";
}

std::string format_latency(double us) {
  if (us >= 1e6) return number(us / 1e6) + "s";
  if (us >= 1e3) return number(us / 1e3) + "ms";
  return number(us) + "us";
}

std::string Topology::name() const {
  std::string s = std::to_string(nodes) + "x" + std::to_string(ranks_per_node);
  std::vector<std::string> fields;
  if (inter.bandwidth_gbps > 0) fields.push_back("inter=" + format_bandwidth(inter.bandwidth_gbps));
  if (intra.bandwidth_gbps > 0) fields.push_back("intra=" + format_bandwidth(intra.bandwidth_gbps));
  if (inter.latency_us > 0) fields.push_back("inter_lat=" + format_latency(inter.latency_us));
  if (intra.latency_us > 0) fields.push_back("intra_lat=" + format_latency(intra.latency_us));
  for (size_t i = 0; i < fields.size(); ++i) s += (i == 0 ? ":" : ",") + fields[i];
  return s;
}

Topology parse_topology(const std::string& spec) {
  std::error_code ec;
  if (std::filesystem::is_directory(spec, ec))
    throw InputError(spec, "is a directory, not a topology file");
  if (std::filesystem::exists(spec, ec) || looks_like_path(spec)) return parse_file(spec);
  if (spec.empty()) throw InputError("topology '': the spec is empty (e.g. 2x4:inter=10gbit)");
  return parse_shorthand(spec);
}

}  // namespace ddpscope::tuner
