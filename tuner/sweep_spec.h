// What a tune sweep measures, however it was asked for: the workload, the
// backends, DDP's bucket caps, the ranks and the replay's iterations. The
// CLI's flags fill one; a C++ caller (a test, a notebook binding) builds one.
#pragma once

#include <string>
#include <vector>

#include "profiler/core/input_error.h"
#include "tuner/replay.h"
#include "tuner/workload.h"

namespace ddpscope::tuner {

// Bad input to a sweep (a malformed list, flags that cannot go together) is
// an InputError (profiler/core/input_error.h) whose message names the
// `ddpscope tune` flag it came from.
struct SweepSpec {
  std::string workload = "preset:resnet50";   // preset:NAME | RUN.db | FILE.json (load_workload)
  std::vector<std::string> backends{"gloo"};  // gloo, mpi, nccl; "model" is predicted, not run
  std::vector<double> bucket_mb{1, 2, 5, 10, 25, 50, 100};
  double first_bucket_mb = 1;
  int nproc = 2;  // ranks started on this machine
  ReplayOptions replay;
  // Where ranks exchange their samples (shared across hosts under a
  // launcher); empty: a temporary directory of the coordinator's.
  std::string results_dir;
  // NODESxRANKS[:...] or FILE.json (tuner/topology.h): the cluster emulated
  // for measured backends (root), the one modelled for "model". Empty: this
  // machine, one node of nproc ranks.
  std::string topology;
};

// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& list);
// Decimal numbers of MiB, each at least one byte and below 2^43 MiB;
// InputError (naming --bucket-mb) otherwise.
std::vector<double> parse_bucket_sizes(const std::string& list);
// One bucket cap as --bucket-mb takes it; InputError naming `flag` otherwise.
double parse_bucket_cap(const std::string& flag, const std::string& text);
// A decimal int; InputError naming `flag` otherwise.
int parse_count(const std::string& flag, const std::string& text);
// gloo, mpi, nccl, model; InputError otherwise.
std::vector<std::string> parse_backends(const std::string& list);

bool is_model_backend(const std::string& name);  // "model"
// The backends of `s` that run on ranks (not the model).
std::vector<std::string> measured_backends(const SweepSpec& s);

// preset:NAME, a recorded RUN.db or a workload FILE.json; InputError.
Workload load_workload(const std::string& spec);

// Far more than any measurement needs; keeps warm-up + iterations in an int.
constexpr int kMaxIterations = 1'000'000;

// InputError for iterations, ranks or a first bucket that cannot run.
void check_sweep(const SweepSpec& s);
// InputError for a --first-bucket-mb the workload's DDP cannot have: on a
// torch whose first bucket follows an explicit bucket_cap_mb (Workload::ddp).
void check_sweep_workload(const SweepSpec& s, const Workload& w);

}  // namespace ddpscope::tuner
