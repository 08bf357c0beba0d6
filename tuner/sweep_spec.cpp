#include "tuner/sweep_spec.h"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "profiler/core/rank_launcher.h"
#include "tuner/model/model_sweep.h"
#include "tuner/workload_from_run.h"

namespace ddpscope::tuner {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

namespace {

// A cap DDP can take: int(mb * 2^20) bytes must be at least one byte and
// below 2^63 (strtod gives inf for 1e309; NaN fails every comparison).
bool is_bucket_cap(double mb) { return mb * 1024 * 1024 >= 1 && mb * 1024 * 1024 < 0x1p63; }

constexpr const char* kCapRange = "a number of MiB from 1 byte (0.000001) to below 2^43";

}  // namespace

double parse_bucket_cap(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double v = strtod(text.c_str(), &end);
  // strtod also reads hexadecimal, "inf" and "nan", which nobody means here.
  if (text.empty() || *end || text.find_first_not_of("0123456789.eE+-") != std::string::npos ||
      !is_bucket_cap(v))
    throw InputError(flag + ": '" + text + "' is not " + kCapRange);
  return v;
}

int parse_count(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long v = strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || errno == ERANGE || v < INT_MIN || v > INT_MAX)
    throw InputError(flag + ": '" + text + "' is not a whole number");
  return int(v);
}

std::vector<double> parse_bucket_sizes(const std::string& list) {
  std::vector<double> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty())
      throw InputError("--bucket-mb: an empty item in '" + list + "' (write 1,2,4)");
    out.push_back(parse_bucket_cap("--bucket-mb", item));
  }
  if (out.empty()) throw InputError("--bucket-mb: no sizes given");
  return out;
}

std::vector<std::string> parse_backends(const std::string& list) {
  auto out = split_list(list);
  for (const auto& b : out)
    if (b != "gloo" && b != "mpi" && b != "nccl" && !is_model_backend(b))
      throw InputError("--backend: unknown backend '" + b + "' (gloo, mpi, nccl, model)");
  if (out.empty()) throw InputError("--backend: no backend given");
  return out;
}

bool is_model_backend(const std::string& name) { return name == model::kModelBackendLabel; }

std::vector<std::string> measured_backends(const SweepSpec& s) {
  std::vector<std::string> out;
  for (const auto& b : s.backends)
    if (!is_model_backend(b)) out.push_back(b);
  return out;
}

Workload load_workload(const std::string& spec) {
  if (spec.rfind("preset:", 0) == 0) return preset_workload(spec.substr(7));
  if (spec.size() > 3 && spec.substr(spec.size() - 3) == ".db") return workload_from_run(spec);
  return load_workload_json(spec);
}

void check_sweep(const SweepSpec& s) {
  if (s.nproc < 1 || s.nproc > core::kMaxLocalRanks)
    throw InputError("--nproc must be from 1 to " + std::to_string(core::kMaxLocalRanks));
  // Samples are kept per iteration, and warm-up plus measured must not overflow.
  if (s.replay.iters < 1 || s.replay.iters > kMaxIterations)
    throw InputError("--iters must be from 1 to " + std::to_string(kMaxIterations));
  if (s.replay.warmup < 0 || s.replay.warmup > kMaxIterations)
    throw InputError("--warmup must be from 0 to " + std::to_string(kMaxIterations));
  if (!is_bucket_cap(s.first_bucket_mb))
    throw InputError("--first-bucket-mb must be " + std::string(kCapRange));
  std::error_code ec;
  if (!s.results_dir.empty() && std::filesystem::exists(s.results_dir, ec) &&
      !std::filesystem::is_directory(s.results_dir, ec))
    throw InputError("--results-dir", s.results_dir + " exists and is not a directory");
}

void check_sweep_workload(const SweepSpec& s, const Workload& w) {
  if (w.ddp && w.ddp->first_bucket_follows_cap && s.first_bucket_mb != 1)
    throw InputError("--first-bucket-mb: the recorded DDP (torch " + w.ddp->torch_version +
                     ") sizes its first bucket by bucket_cap_mb, so the tuner does too; "
                     "leave --first-bucket-mb out");
}

}  // namespace ddpscope::tuner
