#include "profiler/store/rank_exits.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "profiler/core/atomic_file.h"
#include "profiler/core/input_error.h"

namespace ddpscope::store {

std::string rank_exits_path(const std::string& dir) {
  return (std::filesystem::path(dir) / "rank-exits.tsv").string();
}

void write_rank_exits(const std::string& dir, const std::vector<RankExitRecord>& exits) {
  core::write_atomically(rank_exits_path(dir), [&](std::ostream& os) {
    for (const auto& e : exits) os << e.rank << '\t' << e.exit_code << '\t' << e.signal << '\n';
  });
}

std::vector<RankExitRecord> read_rank_exits(const std::string& dir) {
  std::string path = rank_exits_path(dir);
  std::ifstream in(path);
  std::vector<RankExitRecord> out;
  if (!in) return out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::istringstream fields(line);
    RankExitRecord e;
    std::string rest;
    if (!(fields >> e.rank >> e.exit_code >> e.signal) || (fields >> rest) || e.rank < 0 ||
        e.exit_code < -1 || e.exit_code > 255 || e.signal < 0 || e.signal > 64)
      throw InputError(
          path, "line " + std::to_string(n) + " is not 'rank exit_code signal' (three integers)");
    out.push_back(e);
  }
  return out;
}

}  // namespace ddpscope::store
