// One rank of a replay over a real backend, for the tests:
//   replay_worker <gloo|mpi|nccl> <rendezvous dir> <run id>
// Rank and world size from RANK/WORLD_SIZE (or Open MPI's variables; MPI
// itself for the mpi backend). First all-reduces known data and checks the
// sum, then replays a small hand-built workload; prints one JSON line:
//   {"rank":..,"world_size":..,"backend":..,"check":"ok"|"skipped"|<problem>,
//    "iterations":[{"iter_ms":..,"comm_ms":..,"exposed_ms":..},...]}
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/replay/backend_hooks.h"
#include "tuner/replay.h"

using namespace ddpscope::tuner;

namespace {

int env_int(const char* a, const char* b, int fallback) {
  for (const char* name : {a, b})
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return fallback;
}

float* host_buffer(const std::string& backend, Backend& b, int id) {
#ifdef REPLAY_HAVE_GLOO
  if (backend == "gloo") return gloo_buffer_for_testing(b, id);
#endif
#ifdef REPLAY_HAVE_MPI
  if (backend == "mpi") return mpi_buffer_for_testing(b, id);
#endif
  return nullptr;
}

// Two buffers in flight at once (an odd element count, so the ring's chunks
// are uneven); element i of rank r holds (r + 1) * (i % 7 + 1), so the sum is
// n(n+1)/2 * (i % 7 + 1), exact in float for small n.
std::string check_sums(const std::string& name, Backend& b, int rank, int size) {
  const uint64_t elements[2] = {250'001, 1'031};
  int ids[2];
  for (int k = 0; k < 2; ++k) {
    ids[k] = b.add_buffer(elements[k] * 4 - 1);  // bytes round up to whole floats
    float* data = host_buffer(name, b, ids[k]);
    if (!data) return "skipped";
    for (uint64_t i = 0; i < elements[k]; ++i) data[i] = float((rank + 1) * int(i % 7 + 1));
  }
  for (int id : ids) b.start_allreduce(id);
  for (int k = 0; k < 2; ++k) {
    int64_t start = 0, end = 0;
    b.wait(ids[k], &start, &end);
    if (!(start > 0 && end >= start)) return "bad timestamps from wait()";
    const float* data = host_buffer(name, b, ids[k]);
    const int ranks_sum = size * (size + 1) / 2;
    for (uint64_t i = 0; i < elements[k]; ++i)
      if (data[i] != float(ranks_sum * int(i % 7 + 1)))
        return "buffer " + std::to_string(k) + " element " + std::to_string(i) + " is " +
               std::to_string(data[i]) + ", want " + std::to_string(ranks_sum * int(i % 7 + 1));
  }
  return "ok";
}

// Eight parameters, ready in reverse order, in three buckets of a few hundred KB.
void small_job(Workload* w, BucketPlan* plan) {
  const uint64_t numel[8] = {60'000, 1'000, 250'000, 3, 100'000, 40'000, 7, 200'000};
  for (int i = 0; i < 8; ++i) {
    Param p;
    p.name = "layer" + std::to_string(i);
    p.numel = numel[i];
    p.backward_us = 150 + 50 * (i % 3);
    w->params.push_back(p);
  }
  w->name = "replay-worker";
  w->forward_us = 400;
  w->optimizer_us = 150;
  for (std::vector<size_t> group : {std::vector<size_t>{7, 6}, {5, 4, 3}, {2, 1, 0}}) {
    Bucket b;
    b.params = group;
    for (size_t p : group) b.bytes += w->params[p].bytes();
    plan->buckets.push_back(b);
  }
}

std::unique_ptr<Backend> open(const std::string& name, const RankInfo& info, std::string* error) {
  if (name == "gloo") return make_gloo_backend(info, error);
  if (name == "mpi") return make_mpi_backend(error);
  if (name == "nccl") return make_nccl_backend(info, error);
  *error = "unknown backend " + name;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: replay_worker <gloo|mpi|nccl> <rendezvous dir> <run id>\n";
    return 2;
  }
  RankInfo info;
  info.rank = env_int("RANK", "OMPI_COMM_WORLD_RANK", 0);
  info.world_size = env_int("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", 1);
  info.rendezvous_dir = argv[2];
  info.run_id = argv[3];
  std::string error;
  auto backend = open(argv[1], info, &error);
  if (!backend) {
    std::cerr << "replay_worker: " << argv[1] << ": " << error << "\n";
    return 3;
  }
  try {
    const std::string check = check_sums(argv[1], *backend, info.rank, info.world_size);
    Workload w;
    BucketPlan plan;
    small_job(&w, &plan);
    auto samples = replay(w, plan, *backend, ReplayOptions{2, 5, 1.0});
    nlohmann::json out = {{"rank", info.rank},
                          {"world_size", info.world_size},
                          {"backend", backend->name()},
                          {"check", check},
                          {"iterations", nlohmann::json::array()}};
    for (const auto& s : samples)
      out["iterations"].push_back(
          {{"iter_ms", s.iter_ms}, {"comm_ms", s.comm_ms}, {"exposed_ms", s.exposed_ms}});
    std::cout << out.dump() << std::endl;
    return check == "ok" || check == "skipped" ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "replay_worker: rank " << info.rank << ": " << e.what() << "\n";
    return 4;
  }
}
