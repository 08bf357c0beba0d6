// The `ddpscope` subcommands. Each registers its options on the CLI11 app and
// returns the exit status it wants (see DESIGN.md: record passes the command's
// own on; check: 1 for a regression; otherwise 0 ok, 1 runtime failure, 2 bad
// usage or bad input).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace ddpscope::cli {

using Run = std::function<int()>;

Run add_record(CLI::App& app);
Run add_merge(CLI::App& app);
Run add_report(CLI::App& app);
Run add_tune(CLI::App& app);
Run add_check(CLI::App& app);

// Thrown for bad input; main prints "ddpscope: <what>" and exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace ddpscope::cli
