// Workload JSON (docs/tuner.md, "Workloads"): parsing, and the invariants every
// workload must satisfy however it was made (file, preset, recording).
#include "tuner/workload.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "tuner/json_file.h"

namespace ddpscope::tuner {

using nlohmann::json;

uint64_t Workload::total_bytes() const {
  uint64_t total = 0;
  for (const Param& p : params) total += p.bytes();
  return total;
}

double Workload::backward_us() const {
  double total = 0;
  for (const Param& p : params) total += p.backward_us;
  return total;
}

namespace {

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw InputError(where + ": " + what);
}

std::string param_field(size_t i, const char* field) {
  return "params[" + std::to_string(i) + "]." + field;
}

// Times are checked here rather than only in JSON: presets and recordings
// produce workloads too, and a NaN would poison every replay that uses it.
// The cap (11.6 days per step) keeps every sum of times finite.
constexpr double kMaxTimeUs = 1e12;
void check_time(double us, const std::string& where, const std::string& field) {
  if (!(us >= 0 && us <= kMaxTimeUs))
    fail(where, field + " must be a number of microseconds from 0 to 1e12");
}

void check_ready_order(const Workload& w, const std::string& where) {
  const size_t n = w.params.size();
  const std::string range = "0.." + std::to_string(n - 1);
  if (w.ready_order.size() != n)
    fail(where, "ready_order has " + std::to_string(w.ready_order.size()) +
                    " entries, params has " + std::to_string(n) + " (it must be a permutation of " +
                    range + ")");
  std::vector<bool> seen(n, false);
  for (size_t k = 0; k < n; ++k) {
    const size_t i = w.ready_order[k];
    const std::string field = "ready_order[" + std::to_string(k) + "]";
    if (i >= n) fail(where, field + " is " + std::to_string(i) + ", outside " + range);
    if (seen[i])
      fail(where, field + " repeats " + std::to_string(i) +
                      " (ready_order must be a permutation of " + range + ")");
    seen[i] = true;
  }
}

}  // namespace

void validate(const Workload& w, const std::string& where) {
  if (w.params.empty()) fail(where, "params must not be empty");
  uint64_t total = 0;
  for (size_t i = 0; i < w.params.size(); ++i) {
    const Param& p = w.params[i];
    if (p.numel == 0) fail(where, param_field(i, "numel") + " must be a positive integer");
    if (dtype_bytes(p.dtype) == 0)
      fail(where, param_field(i, "dtype") + " '" + std::string(name_of(p.dtype)) +
                      "' has no element size");
    // Sizes must add up without wrapping: 2^62 float32 elements are 2^64 bytes,
    // which uint64_t arithmetic would plan as a bucket of 0 bytes.
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(p.numel, dtype_bytes(p.dtype), &bytes) ||
        __builtin_add_overflow(total, bytes, &total))
      fail(where, param_field(i, "numel") + " is too large: the parameters' bytes exceed 2^64");
    check_time(p.backward_us, where, param_field(i, "backward_us"));
  }
  check_time(w.forward_us, where, "forward_us");
  check_time(w.optimizer_us, where, "optimizer_us");
  check_ready_order(w, where);
}

namespace {

const json& field(const json& object, const char* key, const std::string& where,
                  const std::string& name) {
  auto it = object.find(key);
  if (it == object.end()) fail(where, name + " is missing");
  return *it;
}

double number(const json& object, const char* key, const std::string& where,
              const std::string& name) {
  const json& v = field(object, key, where, name);
  if (!v.is_number() || v.get<double>() < 0) fail(where, name + " must be a non-negative number");
  return v.get<double>();
}

std::string text(const json& object, const char* key, const std::string& where,
                 const std::string& name) {
  const json& v = field(object, key, where, name);
  if (!v.is_string()) fail(where, name + " must be a string");
  return v.get<std::string>();
}

Param parse_param(const json& j, size_t i, const std::string& where) {
  if (!j.is_object()) fail(where, "params[" + std::to_string(i) + "] must be an object");
  Param p;
  p.name = text(j, "name", where, param_field(i, "name"));
  const json& numel = field(j, "numel", where, param_field(i, "numel"));
  // is_number_integer() is also true for negative integers; 1.0 and 1e3 are floats.
  if (!numel.is_number_unsigned() || numel.get<uint64_t>() == 0)
    fail(where, param_field(i, "numel") + " must be a positive integer");
  p.numel = numel.get<uint64_t>();
  const std::string dtype = text(j, "dtype", where, param_field(i, "dtype"));
  auto parsed = parse_dtype(dtype);
  if (!parsed || dtype_bytes(*parsed) == 0)
    fail(where, param_field(i, "dtype") + " '" + dtype +
                    "' is not a known dtype (float32, float16, bfloat16, float64, int8, uint8, "
                    "int32, int64, ...)");
  p.dtype = *parsed;
  p.backward_us = number(j, "backward_us", where, param_field(i, "backward_us"));
  return p;
}

std::vector<size_t> parse_ready_order(const json& j, size_t n, const std::string& where) {
  if (!j.is_array()) fail(where, "ready_order must be an array of parameter indices");
  std::vector<size_t> order;
  for (size_t k = 0; k < j.size(); ++k) {
    // Negative or fractional entries cannot be stored; range and repeats are
    // validate()'s, so a hand-built workload gets the same message.
    if (!j[k].is_number_unsigned())
      fail(where, "ready_order[" + std::to_string(k) + "] must be an integer in 0.." +
                      std::to_string(n - 1));
    order.push_back(j[k].get<size_t>());
  }
  return order;
}

}  // namespace

Workload load_workload_json(const std::string& path) {
  return workload_from_json_text(path, read_json_text(path, "workload file"));
}

Workload workload_from_json_text(const std::string& path, const std::string& file_text) {
  const json j = parse_json_text(path, file_text);
  if (!j.is_object()) fail(path, "the top level must be a JSON object");
  Workload w;
  w.name = text(j, "name", path, "name");
  const json& params = field(j, "params", path, "params");
  if (!params.is_array() || params.empty()) fail(path, "params must be a non-empty array");
  for (size_t i = 0; i < params.size(); ++i) w.params.push_back(parse_param(params[i], i, path));
  w.forward_us = number(j, "forward_us", path, "forward_us");
  w.optimizer_us = number(j, "optimizer_us", path, "optimizer_us");
  if (auto it = j.find("ready_order"); it != j.end()) {
    w.ready_order = parse_ready_order(*it, w.params.size(), path);
  } else {
    // DDP's assumption before its first iteration: gradients arrive in the
    // reverse of model.parameters() order.
    w.ready_order.resize(w.params.size());
    std::iota(w.ready_order.rbegin(), w.ready_order.rend(), size_t{0});
  }
  validate(w, path);
  return w;
}

}  // namespace ddpscope::tuner
