// The model's NCCL choice beside NCCL's own in a recorded run: per all-reduce
// size the run carried, what NCCL chose (its profiler plugin's rows the
// merge joined to `collectives`) and what NCCL's cost model, as ddpscope
// models it for the sweep's cluster (nccl_priors.h), predicts fastest, with
// the model's time for both. Where they differ and the model prices NCCL's
// choice clearly slower, NCCL's tuning for this cluster is suspect; where the
// modelled cluster is not the recorded one, so is the comparison (the table
// names the cluster).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner/model/nccl_priors.h"

namespace ddpscope::tuner::model {

struct NcclChoiceCheck {
  uint64_t bytes = 0;
  int nranks = 0;
  uint64_t calls = 0;
  std::string recorded_algo, recorded_proto;  // NCCL's names ("RING", "SIMPLE")
  std::string model_algo, model_proto;        // the model's choice, in NCCL's names
  bool agree = false;
  double recorded_model_us = -1;  // the model's time for NCCL's choice; -1: not modelled
  double model_us = 0;            // the model's time for its own choice
};

// One row per all-reduce size of the run that NCCL's plugin reported on (the
// choice NCCL made most often at that size). Empty when the run has no
// plugin rows.
std::vector<NcclChoiceCheck> compare_nccl_choices(const std::string& run_path,
                                                  const GpuCluster& cluster);

}  // namespace ddpscope::tuner::model
