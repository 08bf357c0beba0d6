// `tune --backend model`: the sweep predicted by the cost model
// (tuner/model/), next to any measured backends of the same sweep, with the
// error between them where both exist. The modelled backend is the
// calibrated one (a calibration file, or one measured now) or, without a
// calibration, NCCL with its own priors on the sweep's topology.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tuner/model/calibration.h"
#include "tuner/model/model_backend.h"
#include "tuner/model/nccl_recorded.h"
#include "tuner/model/validation.h"
#include "tuner/sweep.h"
#include "tuner/sweep_launch.h"

namespace ddpscope::tuner {

struct ModelOptions {
  std::string calibration;        // read (or, with calibrate, written)
  bool calibrate = false;         // measure the calibration first
  std::string gpu = "hopper";     // NCCL's architecture class for the priors
  std::string nccl_tuner_config;  // write the example plugin's CSV here
  std::string algorithm;          // what-if for a calibrated backend
};

// Every model option, alone and together (InputError naming the flag): also
// where nothing is modelled (--dry-run), so that a typo is never ignored.
void check_model_options(const ModelOptions& o);

// True when the sweep asks for predictions or a calibration.
bool uses_model(const SweepSpec& s, const ModelOptions& o);

// Measured and predicted sweeps of one request, and what follows from them.
struct ModelTune {
  std::optional<model::Calibration> calibration;
  model::ModelBackend model;
  std::vector<SettingResult> measured, predicted, all;
  TuneRecommendation measured_rec, model_rec;
  model::Validation validation;
  // A recorded run's workload with NCCL's profiler plugin rows, modelled as
  // NCCL: the model's choice per all-reduce size beside NCCL's.
  std::vector<model::NcclChoiceCheck> nccl_vs_recorded;
};

// Checks every option before anything is measured (calibrating takes a
// while, and a mistake should not cost it): InputError, InputError.
// Then calibrates if asked, measures the measured backends through
// `program`, predicts, and writes the NCCL tuner config if asked.
ModelTune run_model_tune(const SweepSpec& s, const ModelOptions& o, const Workload& w,
                         const WorkerProgram& program);

}  // namespace ddpscope::tuner
