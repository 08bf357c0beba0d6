#include "tuner/sweep_spec.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

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

// A cap DDP can take: int(mb * 2^20) bytes must be a finite number of bytes
// (strtod gives inf for 1e309).
std::vector<double> parse_bucket_sizes(const std::string& list) {
  std::vector<double> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty())
      throw SweepInputError("--bucket-mb: an empty item in '" + list + "' (write 1,2,4)");
    char* end = nullptr;
    double v = strtod(item.c_str(), &end);
    if (*end || !(v > 0) || !std::isfinite(v) || v * 1024 * 1024 >= 0x1p63)
      throw SweepInputError("--bucket-mb: '" + item +
                            "' is not a positive number of MiB below 2^43");
    out.push_back(v);
  }
  if (out.empty()) throw SweepInputError("--bucket-mb: no sizes given");
  return out;
}

std::vector<std::string> parse_backends(const std::string& list) {
  auto out = split_list(list);
  for (const auto& b : out)
    if (b != "gloo" && b != "mpi" && b != "nccl" && !is_model_backend(b))
      throw SweepInputError("--backend: unknown backend '" + b + "' (gloo, mpi, nccl, model)");
  if (out.empty()) throw SweepInputError("--backend: no backend given");
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
  if (s.nproc < 1) throw SweepInputError("--nproc must be at least 1");
  if (s.replay.iters < 1 || s.replay.warmup < 0)
    throw SweepInputError("--iters must be >= 1 and --warmup >= 0");
  if (!(s.first_bucket_mb > 0)) throw SweepInputError("--first-bucket-mb must be positive");
}

void check_sweep_workload(const SweepSpec& s, const Workload& w) {
  if (w.ddp && w.ddp->first_bucket_follows_cap && s.first_bucket_mb != 1)
    throw SweepInputError("--first-bucket-mb: the recorded DDP (torch " + w.ddp->torch_version +
                          ") sizes its first bucket by bucket_cap_mb, so the tuner does too; "
                          "leave --first-bucket-mb out");
}

}  // namespace ddpscope::tuner
