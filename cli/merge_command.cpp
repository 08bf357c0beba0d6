// `ddpscope merge DIR [-o RUN.db]`: rank files gathered from several hosts
// into one run database.
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "profiler/core/atomic_file.h"
#include "profiler/store/launch_account.h"
#include "profiler/store/merge.h"

namespace ddpscope::cli {

Run add_merge(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("merge", "merge rank-*.db files into one run database");
  sub->add_option("dir", *dir, "directory holding rank-<R>.db files")->required();
  sub->add_option("-o,--output", *out, "output file [default: DIR/run.db]");
  return [dir, out] {
    auto files = store::find_rank_files(*dir);
    if (files.empty()) throw InputError(*dir + ": no rank-*.db files to merge");
    std::string target = out->empty() ? (std::filesystem::path(*dir) / "run.db").string() : *out;
    core::check_output_path(target);
    auto s = store::merge_rank_files(files, target, store::read_launch_account(*dir));
    std::cout << "merged " << s.ranks << " ranks, " << s.collectives << " collectives -> " << target
              << "\n";
    return 0;
  };
}

}  // namespace ddpscope::cli
