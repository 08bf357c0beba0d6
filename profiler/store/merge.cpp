#include "profiler/store/merge.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "profiler/core/atomic_file.h"
#include "profiler/core/progress.h"
#include "profiler/store/nccl_join.h"
#include "profiler/store/rank_files.h"
#include "profiler/store/reader.h"
#include "profiler/store/rows.h"
#include "profiler/store/schema.h"
#include "profiler/store/table.h"

namespace fs = std::filesystem;

namespace ddpscope::store {
namespace {

void copy_rank(Connection& out, const RankFileHead& in) {
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

void write_meta(Connection& out, const std::vector<RankFileHead>& inputs) {
  Transaction tx(out);
  Statement st(out, "INSERT OR REPLACE INTO meta(key, value) VALUES(?,?)");
  for (const auto& [k, v] : merged_meta(inputs)) {
    st.bind_text(1, k);
    st.bind_text(2, v);
    st.run();
  }
  tx.commit();
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
  std::vector<RankFileHead> inputs;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::equivalent(p, out_path, ec))
      throw InputError(out_path, "is one of the rank files being merged (choose another -o)");
    RunReader reader(p);
    inputs.push_back(head_of(reader));
    core::progress::update("merge: reading rank files", inputs.size(), paths.size());
  }
  check_ranks_unique(inputs);
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
