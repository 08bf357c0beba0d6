// The `ddpscope` subcommands. Each registers its options on the CLI11 app and
// returns the exit status it wants (record passes the command's own on; check:
// 1 for a regression, docs/cli.md; otherwise 0 ok, 1 runtime failure, 2 bad
// usage or bad input).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "profiler/core/input_error.h"

namespace ddpscope::cli {

using Run = std::function<int()>;

Run add_record(CLI::App& app);
Run add_merge(CLI::App& app);
Run add_report(CLI::App& app);
Run add_tune(CLI::App& app);
Run add_check(CLI::App& app);

// Bad input throws ddpscope::InputError (profiler/core/input_error.h): main
// prints "ddpscope: <what>" and exits 2.

}  // namespace ddpscope::cli
