// The MPI backend times an all-reduce as MPI itself does: a 64 MiB all-reduce
// through start_allreduce + wait against a blocking MPI_Allreduce of the same
// size, both with Open MPI's ring (tuned for the blocking call, libnbc for the
// non-blocking one), under `mpirun -np 2`. Medians of 15 must agree within
// 35%: this is a shared 2-core VM, so the bound is about gross mistakes
// (wrong size, a missing wait, a serialised extra copy), not small overheads.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/support/built_path.h"
#include "tests/support/subprocess.h"

TEST_CASE("mpi backend: a 64 MiB all-reduce takes as long as MPI_Allreduce") {
  auto res = ddpscope::testing::run({MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", "2",
                                     "--mca", "coll_tuned_use_dynamic_rules", "1", "--mca",
                                     "coll_tuned_allreduce_algorithm", "4", "--mca",
                                     "coll_libnbc_iallreduce_algorithm", "1", COMPARE_EXE});
  INFO("stdout: " << res.out << "\nstderr: " << res.err);
  REQUIRE(res.status == 0);
  nlohmann::json j;
  std::istringstream lines(res.out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] == '{') j = nlohmann::json::parse(line);
  REQUIRE(j.contains("ratio"));
  CHECK(j["bytes"] == 64u << 20);
  CHECK(j["backend_median_ms"].get<double>() > 0);
  CHECK(j["ratio"].get<double>() == Approx(1.0).margin(0.35));
}
