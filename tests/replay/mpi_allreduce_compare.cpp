// The MPI backend's acceptance: under `mpirun -np N`, one large all-reduce
// (default 64 MiB of float32) timed through the backend (start_allreduce then
// wait, as the replay drives it) and as a plain blocking MPI_Allreduce of the
// same size, alternating, 3 warm-ups then 15 timed runs each. A run's time is
// the slowest rank's; rank 0 prints the medians as one JSON line:
//   {"bytes":..,"ranks":..,"backend_median_ms":..,"mpi_allreduce_median_ms":..,"ratio":..}

// The C API only: Open MPI's mpi.h otherwise pulls in the deprecated C++
// bindings, which live in a library MPI::MPI_C does not link.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tuner/backend.h"

namespace {

constexpr int kWarmup = 3, kTimed = 15;

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double backend_once(ddpscope::tuner::Backend& b, int id) {
  b.barrier();
  int64_t start = 0, end = 0;
  b.start_allreduce(id);
  b.wait(id, &start, &end);
  return double(end - start) / 1e6;
}

double plain_once(std::vector<float>& data) {
  MPI_Barrier(MPI_COMM_WORLD);
  const int64_t start = now_ns();
  MPI_Allreduce(MPI_IN_PLACE, data.data(), int(data.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  return double(now_ns() - start) / 1e6;
}

// The slowest rank's time, as a collective's duration is usually reported.
double slowest(double ms) {
  double max = 0;
  MPI_Allreduce(&ms, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 64ull << 20;
  std::string error;
  auto backend = ddpscope::tuner::make_mpi_backend(&error);  // initialises MPI
  if (!backend) {
    std::cerr << "mpi_allreduce_compare: " << error << "\n";
    return 1;
  }
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int id = backend->add_buffer(bytes);
  std::vector<float> plain((bytes + 3) / 4, 0.0f);  // the backend's buffer is zeros too

  std::vector<double> via_backend, via_plain;
  for (int i = 0; i < kWarmup + kTimed; ++i) {
    const double b = slowest(backend_once(*backend, id));
    const double p = slowest(plain_once(plain));
    if (i < kWarmup) continue;
    via_backend.push_back(b);
    via_plain.push_back(p);
  }
  if (rank == 0) {
    const double mb = median(via_backend), mp = median(via_plain);
    nlohmann::json out = {{"bytes", bytes},
                          {"ranks", ranks},
                          {"backend_median_ms", mb},
                          {"mpi_allreduce_median_ms", mp},
                          {"ratio", mb / mp},
                          {"backend_ms", via_backend},
                          {"mpi_allreduce_ms", via_plain}};
    std::cout << out.dump() << std::endl;
  }
  backend.reset();  // finalises MPI: nothing MPI after this
  return 0;
}
