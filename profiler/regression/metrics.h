// What `ddpscope check` compares: the metrics of one run (a recorded run, or
// one `ddpscope tune` invocation), each with every sample the run gave, plus
// what identifies the job (compared exactly: a mismatch is bad input) and
// facts without noise (bucket layout: compared exactly, reported as changed).
#pragma once

#include <string>
#include <vector>

#include "profiler/core/input_error.h"

namespace ddpscope::regression {

// Bad input to the check (mismatched or unusable databases) is an InputError
// naming the file(s) and the problem; `ddpscope check` exits 2 on it.

enum class Better { lower, higher };

struct Metric {
  std::string family;  // comm, exposed, bucket, busbw, fsdp, iter: the --metric names
  std::string key;     // matched between baseline and candidate
  std::string label;   // for people: "bucket 3 (1.0 MiB)"
  std::string unit;    // ms, us, GB/s
  Better better = Better::lower;
  double floor = 0;  // values below it are indistinguishable from 0
  std::vector<double> samples;
};

// A field that identifies the job: world size, backend, workload.
struct Field {
  std::string name, value;
};

// A noise-free fact about the run, e.g. buckets per iteration.
struct Fact {
  std::string name, value;
};

struct RunMetrics {
  std::string path;    // the database
  std::string source;  // "A.db", or "A.db (tune run 2)"
  std::string kind;    // "recorded run" or "tuner results"
  std::vector<Field> identity;
  std::vector<Fact> facts;
  std::vector<Metric> metrics;
};

// The floor of a per-iteration time (communication, exposed, iteration): 1% of
// the run's median iteration, at least 1 us. Exposed communication that small
// is negligible whatever its relative change, so going from 0 to 2 us of it is
// not a regression of thousands of percent.
double per_iteration_floor(double iteration_median_ms);

// Every family, in the order reports list them.
const std::vector<std::string>& metric_families();

// Everything a database holds that check can compare: its recorded run (if it
// has collectives) and each of its tuner runs; or, for a directory, the run
// its rank files hold (read together, as report DIR reads them). Throws
// InputError (naming the file) for a database with neither, a recorded run
// without iterations, or a missing, foreign or damaged file.
std::vector<RunMetrics> load_run_metrics(const std::string& path);

}  // namespace ddpscope::regression
