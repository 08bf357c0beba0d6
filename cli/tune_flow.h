// The steps of `ddpscope tune` (cli/tune_command.cpp declares the flags).
#pragma once

#include <string>

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
  std::string topology;      // --topology SPEC: emulate it (cli/tune_topology.h)
  bool nproc_given = false;  // --nproc was on the command line
  bool dry_run = false, worker = false;
};

int run_tune(TuneArgs& args);

}  // namespace ddpscope::cli
