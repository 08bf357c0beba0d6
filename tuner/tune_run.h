// `ddpscope tune`: what its flags asked (cli/tune_command.cpp declares them)
// and the run over the tuner library, in whichever role this process has
// (tune_run.cpp: coordinator, worker, or a rank under a launcher).
#pragma once

#include <string>

#include "tuner/model_tune.h"

namespace ddpscope::tuner {

struct TuneOptions {
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
  ModelOptions model;  // --backend model and its flags
};

// The exit status: 0 done, 1 a failed sweep (said on stderr); bad input throws
// InputError (profiler/core/input_error.h).
int run_tune(const TuneOptions& options);

}  // namespace ddpscope::tuner
