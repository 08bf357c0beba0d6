// The steps of `ddpscope tune` (cli/tune_command.cpp declares the flags).
#pragma once

#include <string>
#include <vector>

#include "cli/tune_model_args.h"
#include "tuner/sweep.h"

namespace ddpscope::cli {

struct TuneArgs {
  std::string workload = "preset:resnet50";
  std::string backends = "gloo";
  std::string bucket_mb = "1,2,5,10,25,50,100";
  double first_bucket_mb = 1;
  int nproc = 2;
  int iters = 10;
  int warmup = 3;
  std::string json, db, results_dir;
  // --topology SPEC (tuner/topology.h): emulated for measured backends
  // (cli/tune_topology.h), the modelled cluster for --backend model.
  std::string topology;
  bool nproc_given = false;  // --nproc was on the command line
  bool dry_run = false, worker = false;
  ModelArgs model;  // --backend model and its flags (cli/tune_model.cpp)
};

int run_tune(TuneArgs& args);

// "a,b,,c" -> {"a", "b", "c"}: the comma lists of --backend and --bucket-mb.
std::vector<std::string> split_list(const std::string& list);
// --bucket-mb's sizes; UsageError for anything but positive numbers.
std::vector<double> parse_sizes(const std::string& list);

// Runs every measured backend of `args` on --nproc local ranks and returns
// their results; throws std::runtime_error when a backend's ranks fail.
std::vector<tuner::SettingResult> measure_sweep(TuneArgs args);

}  // namespace ddpscope::cli
