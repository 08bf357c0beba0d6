// Tuner results in the run-database schema (tables tune_runs, tune_results;
// docs/schema.md): one tune_runs row per `ddpscope tune`, one tune_results row
// per measured iteration of each setting, so later checks can compare
// distributions, not just medians.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/store/reader.h"

namespace ddpscope::store {

struct TuneRun {
  int64_t id = 0;
  std::string started;  // ISO 8601 UTC
  std::string workload;
  int64_t workload_bytes = 0;
  int params = 0;
  std::string host, command_line;
  int warmup = 0, iters = 0;
  double first_bucket_mb = 1;
  std::string recommendation;  // JSON text
};

struct TuneSample {
  std::string backend, topology;
  int nranks = 0;
  double bucket_mb = 0, first_bucket_mb = 0;
  int buckets = 0;
  int iteration = 0;
  double iter_ms = 0, comm_ms = 0, exposed_ms = 0;
};

// Appends a run and its samples to `path` in one transaction, creating the
// database (through a temporary file renamed into place) if it does not exist.
// Returns the run's id. Throws InputError.
int64_t write_tune_run(const std::string& path, TuneRun run,
                       const std::vector<TuneSample>& samples);

std::vector<TuneRun> read_tune_runs(RunReader& reader);
// The samples of run `run_id` (the latest run when 0).
std::vector<TuneSample> read_tune_samples(RunReader& reader, int64_t run_id = 0);

}  // namespace ddpscope::store
