#include "profiler/store/rank_files.h"

#include <cstdlib>
#include <filesystem>

#include "profiler/store/reader.h"
#include "profiler/store/rows.h"
#include "profiler/store/table.h"

namespace ddpscope::store {
namespace {

template <typename Record>
void insert_all(Connection& db, const std::vector<Record>& rows) {
  Transaction tx(db);
  Statement st(db, insert_sql(Row<Record>::table(), 1));
  for (const auto& r : rows) {
    Row<Record>::bind(st, 0, r);
    st.run();
  }
  tx.commit();
}

}  // namespace

RankFileHead head_of(RunReader& rank_file) {
  auto procs = rank_file.processes();
  if (procs.size() != 1)
    throw InputError(rank_file.path(), "expected one process row in a rank file, found " +
                                           std::to_string(procs.size()) +
                                           " (is this a merged run.db?)");
  return {rank_file.path(), procs[0], rank_file.meta(), rank_file.schema_version()};
}

void check_ranks_unique(const std::vector<RankFileHead>& heads) {
  std::map<int, std::string> seen;
  for (const auto& h : heads)
    if (auto [it, fresh] = seen.emplace(h.process.rank, h.path); !fresh)
      throw InputError(
          h.path, "rank " + std::to_string(h.process.rank) + " is also claimed by " + it->second);
}

std::map<std::string, std::string> merged_meta(const std::vector<RankFileHead>& heads) {
  std::map<std::string, std::string> meta = heads.front().meta;
  meta["kind"] = "run";
  meta["timeline"] = "wall";
  meta["ranks"] = std::to_string(heads.size());
  std::string from;
  for (const auto& h : heads)
    from += (from.empty() ? "" : " ") + std::filesystem::path(h.path).filename().string();
  meta["merged_from"] = from;
  meta.erase("host");  // per rank: see processes.host
  // Per-rank counts (`count:<name>`, the injector's) are summed over the ranks.
  std::map<std::string, uint64_t> counts;
  for (const auto& h : heads)
    for (const auto& [k, v] : h.meta)
      if (k.rfind("count:", 0) == 0) counts[k] += std::strtoull(v.c_str(), nullptr, 10);
  for (const auto& [k, n] : counts) meta[k] = std::to_string(n);
  return meta;
}

void write_launch_account(Connection& db, const LaunchAccount& launch,
                          const std::vector<RankFileHead>& heads) {
  insert_all(db, launch.exits);
  std::vector<StackRecord> stacks;
  for (const auto& d : launch.stacks)
    for (const auto& h : heads)
      if (h.process.pid == d.pid) stacks.push_back({h.process.rank, d.pid, d.text});
  insert_all(db, stacks);
}

}  // namespace ddpscope::store
