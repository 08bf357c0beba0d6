// A worker program for the tuner library's tests: one rank of a sweep, as
// `ddpscope tune --worker` is, but built from the library alone (no cli/).
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "tuner/sweep_launch.h"

int main(int argc, char** argv) {
  try {
    const auto sweep = ddpscope::tuner::parse_worker_arguments({argv + 1, argv + argc});
    const auto w = ddpscope::tuner::load_workload(sweep.workload);
    return ddpscope::tuner::run_as_rank(sweep, w).status;
  } catch (const std::exception& e) {
    fprintf(stderr, "sweep_worker: %s\n", e.what());
    return 2;
  }
}
