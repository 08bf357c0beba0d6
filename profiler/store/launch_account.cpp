#include "profiler/store/launch_account.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
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

std::vector<StackDump> read_stack_dumps(const std::string& dir) {
  std::vector<StackDump> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("stacks-", 0) != 0 || e.path().extension() != ".txt") continue;
    char* end = nullptr;
    long long pid = std::strtoll(name.c_str() + 7, &end, 10);
    if (pid <= 0 || std::string(end) != ".txt") continue;
    std::ifstream in(e.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!text.empty()) out.push_back({pid, std::move(text)});
  }
  return out;
}

LaunchAccount read_launch_account(const std::string& dir) {
  return {read_rank_exits(dir), read_stack_dumps(dir)};
}

}  // namespace ddpscope::store
