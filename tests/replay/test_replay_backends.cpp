// Replays over real backends, each rank its own process (replay_worker): Gloo
// with 2 and 3 ranks meeting in a file store, MPI under mpirun, and NCCL's
// clean refusal on a machine without a GPU. Every rank must exit 0, report
// the same number of iterations with communication in each, and have summed
// known data correctly.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/built_path.h"
#include "tests/support/subprocess.h"
#include "tuner/backend.h"

using ddpscope::testing::Process;
using ddpscope::testing::Result;
using nlohmann::json;

namespace {

// The JSON lines of a worker's (or mpirun's, for all ranks) stdout.
std::vector<json> reports_in(const Result& r) {
  std::vector<json> out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] == '{') out.push_back(json::parse(line));
  return out;
}

void check_reports(const std::vector<json>& reports, int nranks, const std::string& backend) {
  REQUIRE(reports.size() == size_t(nranks));
  std::vector<bool> seen(size_t(nranks), false);
  for (const auto& r : reports) {
    INFO(r.dump());
    CHECK(r["backend"] == backend);
    CHECK(r["world_size"] == nranks);
    CHECK(r["check"] == "ok");
    seen.at(r["rank"].get<size_t>()) = true;
    REQUIRE(r["iterations"].size() == reports[0]["iterations"].size());
    CHECK(r["iterations"].size() == 5);
    for (const auto& it : r["iterations"]) {
      CHECK(it["comm_ms"].get<double>() > 0);
      CHECK(it["iter_ms"].get<double>() >= it["comm_ms"].get<double>());
      CHECK(it["exposed_ms"].get<double>() >= 0);
    }
  }
  for (bool s : seen) CHECK(s);
}

std::vector<json> run_gloo_ranks(int nranks, const std::string& dir, const std::string& run_id) {
  std::vector<std::unique_ptr<Process>> ranks;
  for (int r = 0; r < nranks; ++r)
    ranks.push_back(std::make_unique<Process>(
        std::vector<std::string>{WORKER_EXE, "gloo", dir, run_id},
        std::map<std::string, std::string>{{"RANK", std::to_string(r)},
                                           {"WORLD_SIZE", std::to_string(nranks)}}));
  std::vector<json> reports;
  for (int r = 0; r < nranks; ++r) {
    Result res = ranks[size_t(r)]->wait();
    INFO("rank " << r << " stderr: " << res.err);
    CHECK(res.status == 0);
    for (auto& j : reports_in(res)) reports.push_back(j);
  }
  return reports;
}

}  // namespace

#ifdef REPLAY_HAVE_GLOO
TEST_CASE("gloo: two ranks replay and sum correctly") {
  auto dir = ddpscope::testing::temp_dir("gloo2");
  check_reports(run_gloo_ranks(2, dir, "two"), 2, "gloo");
}

TEST_CASE("gloo: three ranks replay and sum correctly") {
  auto dir = ddpscope::testing::temp_dir("gloo3");
  check_reports(run_gloo_ranks(3, dir, "three"), 3, "gloo");
}

TEST_CASE("gloo: a second run with the same run id in the same directory works") {
  auto dir = ddpscope::testing::temp_dir("gloo-again");
  check_reports(run_gloo_ranks(2, dir, "same"), 2, "gloo");
  check_reports(run_gloo_ranks(2, dir, "same"), 2, "gloo");
}

TEST_CASE("gloo: a missing rendezvous directory is one clear error") {
  ddpscope::tuner::RankInfo info;
  info.rank = 0;
  info.world_size = 2;
  info.rendezvous_dir = "/nonexistent/ddpscope-rendezvous";
  info.run_id = "x";
  std::string error;
  CHECK(ddpscope::tuner::make_gloo_backend(info, &error) == nullptr);
  // The caller (tune, replay_worker) names the backend; the factory does not
  // again ("tune: gloo: gloo: ..." on the GPU run of 2026-11-26).
  CHECK(error == "rendezvous directory '/nonexistent/ddpscope-rendezvous' does not exist");
}
#endif

#ifdef REPLAY_HAVE_MPI
namespace {

std::vector<std::string> mpirun(std::vector<std::string> mca) {
  std::vector<std::string> argv = {MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", "2"};
  for (size_t i = 0; i + 1 < mca.size(); i += 2)
    for (const auto& a : {std::string("--mca"), mca[i], mca[i + 1]}) argv.push_back(a);
  for (const auto& a :
       {std::string(WORKER_EXE), std::string("mpi"), std::string("."), std::string("mpi")})
    argv.push_back(a);
  return argv;
}

}  // namespace

TEST_CASE("mpi: two ranks under mpirun replay and sum correctly (Open MPI's default algorithms)") {
  Result res = ddpscope::testing::run(mpirun({}));
  INFO("stderr: " << res.err);
  REQUIRE(res.status == 0);
  check_reports(reports_in(res), 2, "mpi");
}

TEST_CASE("mpi: two ranks with the ring forced for allreduce and iallreduce") {
  Result res = ddpscope::testing::run(
      mpirun({"coll_tuned_use_dynamic_rules", "1", "coll_tuned_allreduce_algorithm", "4",
              "coll_libnbc_iallreduce_algorithm", "1"}));
  INFO("stderr: " << res.err);
  REQUIRE(res.status == 0);
  check_reports(reports_in(res), 2, "mpi");
}
#endif

TEST_CASE("nccl: works where a GPU is, and says why not everywhere else") {
  ddpscope::tuner::RankInfo info;
  info.rendezvous_dir = ddpscope::testing::temp_dir("nccl");
  info.run_id = "single";
  std::string error;
  auto backend = ddpscope::tuner::make_nccl_backend(info, &error);
  if (!backend) {
    INFO(error);
#ifdef REPLAY_HAVE_NCCL
    // Here libnccl.so.2 is whatever the loader finds first; a machine without
    // a GPU stops at the driver or the device, one without NCCL before them.
    CHECK((error.rfind("no CUDA driver: ", 0) == 0 || error.rfind("no CUDA device: ", 0) == 0 ||
           error.rfind("no NCCL: ", 0) == 0));
#else
    CHECK(error.find("without CUDA and NCCL") != std::string::npos);
#endif
    return;
  }
  // A GPU: one rank all-reduces with itself.
  int id = backend->add_buffer(1 << 20);
  backend->barrier();
  backend->start_allreduce(id);
  int64_t start = 0, end = 0;
  backend->wait(id, &start, &end);
  CHECK(start > 0);
  CHECK(end >= start);
}

#ifdef REPLAY_HAVE_NCCL
namespace {

// NCCL is loaded at run time (tuner/backends/nccl_runtime.h), once per
// process: each case runs its own worker with DDPSCOPE_NCCL_LIBRARY set.
Result nccl_worker(const std::string& library) {
  auto dir = ddpscope::testing::temp_dir("nccl-lib");
  return ddpscope::testing::run({WORKER_EXE, "nccl", dir, "lib"},
                                {{"DDPSCOPE_NCCL_LIBRARY", library}});
}

bool have_cuda_driver() {
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (h) dlclose(h);
  return h != nullptr;
}

}  // namespace

TEST_CASE("nccl: a missing NCCL library is named, with where to find one") {
  Result res = nccl_worker("/nonexistent/libnccl.so.2");
  INFO(res.err);
  CHECK(res.status == 3);
  CHECK(res.err.find("no NCCL: cannot load /nonexistent/libnccl.so.2 (") != std::string::npos);
  CHECK(res.err.find("set DDPSCOPE_NCCL_LIBRARY") != std::string::npos);
}

TEST_CASE("nccl: a library that is not NCCL is refused by the symbol it lacks") {
  Result res = nccl_worker("libm.so.6");
  INFO(res.err);
  CHECK(res.status == 3);
  CHECK(res.err.find("no NCCL: libm.so.6 has no ncclGetVersion") != std::string::npos);
}

TEST_CASE("nccl: a library with NCCL's ABI is taken, then the driver is looked for") {
  if (have_cuda_driver()) {
    // The double reduces host memory: on a GPU machine it would be handed
    // device pointers. The real NCCL is checked there (scripts/gpu_check.sh).
    WARN("a CUDA driver is here: the NCCL double is not run against it");
    return;
  }
  Result res = nccl_worker(NCCL_DOUBLE);
  INFO(res.err);
  CHECK(res.status == 3);
  CHECK(res.err.find("no CUDA driver: cannot load libcuda.so.1 (") != std::string::npos);
}
#endif
