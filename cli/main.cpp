// ddpscope: record, merge and report the communication of data-parallel jobs.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/progress_line.h"
#include "profiler/core/input_error.h"
#include "profiler/core/progress.h"
#include "record/environment.h"

namespace {

// A flag given an empty value (`--json ''`, `-o ""`) would otherwise read as
// a flag not given, or as the current directory.
void refuse_empty_values(const CLI::App& command) {
  for (const CLI::Option* o : command.get_options()) {
    if (o->get_positional() || o->count() == 0 || o->get_expected_max() == 0) continue;
    for (const auto& value : o->results())
      if (value.empty()) throw ddpscope::InputError(o->get_name(), "an empty value");
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ddpscope: profile the communication of data-parallel training jobs"};
  app.footer(ddpscope::record::ddpscope_environment_help());
  app.require_subcommand(1);
  app.set_version_flag("--version", DDPSCOPE_VERSION);
  std::vector<std::pair<CLI::App*, ddpscope::cli::Run>> commands;
  auto add = [&](auto adder) {
    size_t before = app.get_subcommands({}).size();
    auto run = adder(app);
    commands.emplace_back(app.get_subcommands({})[before], run);
  };
  add(ddpscope::cli::add_record);
  add(ddpscope::cli::add_merge);
  add(ddpscope::cli::add_report);
  add(ddpscope::cli::add_tune);
  add(ddpscope::cli::add_check);

  auto known = [&](const std::string& name) {
    for (auto* sub : app.get_subcommands({}))
      if (sub->get_name() == name) return true;
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !known(argv[1])) {
    std::cerr << "ddpscope: unknown command '" << argv[1]
              << "' (commands: record, merge, report, tune, check)\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "ddpscope: " << e.what() << " (see ddpscope --help)\n";
    return 2;
  }
  ddpscope::cli::show_progress_on_terminal();
  try {
    for (auto& [sub, run] : commands) {
      if (!sub->parsed()) continue;
      refuse_empty_values(*sub);
      return run();
    }
  } catch (const ddpscope::InputError& e) {
    // The one place bad input becomes its line and exit 2 (input_error.h).
    ddpscope::core::progress::finish();
    std::cerr << "ddpscope: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    ddpscope::core::progress::finish();
    std::cerr << "ddpscope: " << e.what() << "\n";
    return 1;
  }
  return 2;
}
