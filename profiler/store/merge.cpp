#include "profiler/store/merge.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "profiler/core/atomic_file.h"
#include "profiler/core/progress.h"
#include "profiler/store/nccl_join.h"
#include "profiler/store/reader.h"
#include "profiler/store/rows.h"
#include "profiler/store/schema.h"
#include "profiler/store/table.h"

namespace fs = std::filesystem;

namespace ddpscope::store {
namespace {

struct Input {
  std::string path;
  ProcessRecord process;
  std::map<std::string, std::string> meta;
  int version = 0;
};

Input inspect(const std::string& path) {
  RunReader reader(path);
  auto procs = reader.processes();
  if (procs.size() != 1)
    throw InputError(path, "expected one process row in a rank file, found " +
                               std::to_string(procs.size()) + " (is this a merged run.db?)");
  return {path, procs[0], reader.meta(), reader.schema_version()};
}

void copy_rank(Connection& out, const Input& in) {
  Statement attach(out, "ATTACH DATABASE ? AS src");
  attach.bind_text(1, in.path);
  attach.run();
  {
    Transaction tx(out);
    Statement last_id(out, "SELECT coalesce(max(id), 0) FROM main.collectives");
    int64_t base = last_id.step() ? last_id.int64(0) : 0;
    // Times onto the wall timeline (?1), collective ids past the ranks merged
    // before (?2): table.h's convention, for every per-rank table.
    const auto present = table_names(out, "src");
    for (const TableSpec* t : tables()) {
      if (!t->per_rank || !present.count(t->name)) continue;
      Statement st(out, merge_sql(*t, in.version));
      st.bind(1, in.process.clock_offset_ns);
      if (st.parameters() >= 2) st.bind(2, base);
      st.run();
    }
    // Files before v4 carry no keys to join the plugin's rows by.
    if (in.version >= 4) join_nccl_plugin(out, in.process.rank);
    tx.commit();
  }
  out.exec("DETACH DATABASE src");
}

void write_meta(Connection& out, const std::vector<Input>& inputs) {
  std::map<std::string, std::string> meta = inputs.front().meta;
  meta["kind"] = "run";
  meta["timeline"] = "wall";
  meta["ranks"] = std::to_string(inputs.size());
  std::string from;
  for (const auto& in : inputs)
    from += (from.empty() ? "" : " ") + fs::path(in.path).filename().string();
  meta["merged_from"] = from;
  meta.erase("host");  // per rank: see processes.host
  // Per-rank counts (`count:<name>`, the injector's) are summed over the ranks.
  std::map<std::string, uint64_t> counts;
  for (const auto& in : inputs)
    for (const auto& [k, v] : in.meta)
      if (k.rfind("count:", 0) == 0) counts[k] += std::strtoull(v.c_str(), nullptr, 10);
  for (const auto& [k, n] : counts) meta[k] = std::to_string(n);
  Transaction tx(out);
  Statement st(out, "INSERT OR REPLACE INTO meta(key, value) VALUES(?,?)");
  for (const auto& [k, v] : meta) {
    st.bind_text(1, k);
    st.bind_text(2, v);
    st.run();
  }
  tx.commit();
}

template <typename Record>
void insert_all(Connection& out, const std::vector<Record>& rows) {
  Transaction tx(out);
  Statement st(out, insert_sql(Row<Record>::table(), 1));
  for (const auto& r : rows) {
    Row<Record>::bind(st, 0, r);
    st.run();
  }
  tx.commit();
}

// What record knew beside the rank files (launch_account.h): the exits as
// they are, each stack dump under the rank whose process wrote it.
void write_launch_account(Connection& out, const LaunchAccount& launch,
                          const std::vector<Input>& inputs) {
  insert_all(out, launch.exits);
  std::vector<StackRecord> stacks;
  for (const auto& d : launch.stacks)
    for (const auto& in : inputs)
      if (in.process.pid == d.pid) stacks.push_back({in.process.rank, d.pid, d.text});
  insert_all(out, stacks);
}

}  // namespace

std::vector<std::string> find_rank_files(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir, "not a directory");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    auto name = e.path().filename().string();
    if (name.rfind("rank-", 0) == 0 && e.path().extension() == ".db") files.push_back(e.path());
  }
  if (ec) throw InputError(dir, "cannot list: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

MergeSummary merge_rank_files(const std::vector<std::string>& paths, const std::string& out_path,
                              const LaunchAccount& launch) {
  if (paths.empty()) throw InputError(out_path, "nothing to merge: no rank files given");
  std::vector<Input> inputs;
  std::map<int, std::string> seen;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::equivalent(p, out_path, ec))
      throw InputError(out_path, "is one of the rank files being merged (choose another -o)");
    inputs.push_back(inspect(p));
    core::progress::update("merge: reading rank files", inputs.size(), paths.size());
    int rank = inputs.back().process.rank;
    if (auto [it, fresh] = seen.emplace(rank, p); !fresh)
      throw InputError(p, "rank " + std::to_string(rank) + " is also claimed by " + it->second);
  }
  MergeSummary summary;
  core::replace_atomically(out_path, [&](const std::string& tmp) {
    {
      Connection out(tmp, Connection::Mode::create);
      out.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;");
      create_schema(out);
      write_meta(out, inputs);
      write_launch_account(out, launch, inputs);
      for (size_t i = 0; i < inputs.size(); ++i) {
        copy_rank(out, inputs[i]);
        summary.dropped_events += inputs[i].process.dropped_events;
        core::progress::update("merge: rank files", i + 1, inputs.size());
      }
      core::progress::update("merge: indexing", 0, 0);
      create_indexes(out);
      Statement n(out, "SELECT count(*) FROM collectives");
      summary.collectives = n.step() ? n.int64(0) : 0;
    }
  });
  core::progress::finish();
  summary.ranks = int(inputs.size());
  return summary;
}

}  // namespace ddpscope::store
