// `ddpscope tune`: the flags (cli/tune_command.cpp) and what runs them
// (cli/tune_run.cpp) over the tuner library.
#pragma once

#include <string>

#include "tuner/model_tune.h"

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
  std::string topology;      // --topology SPEC (tuner/topology.h)
  bool nproc_given = false;  // --nproc was on the command line
  bool dry_run = false, worker = false;
  tuner::ModelOptions model;  // --backend model and its flags
};

int run_tune(const TuneArgs& args);

}  // namespace ddpscope::cli
