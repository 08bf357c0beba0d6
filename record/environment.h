// The environment `ddpscope record` gives a job: where the injector and the
// Python start-up hook are (beside the executable in a build tree, or under
// its install prefix), and the tool slots the injector fills (NVTX's
// injection, NCCL's profiler plugin). A slot the user filled stays theirs.
#pragma once

#include <string>

#include "profiler/core/rank_launcher.h"

namespace ddpscope::record {

// libddpscope_inject.so next to the running executable, else under its
// install prefix's lib/; "" when neither has it.
std::string find_injector();

// Puts the Python start-up hook found beside `injector` first on PYTHONPATH;
// says so on stderr when it is missing.
void attach_python_hook(core::LaunchSpec& spec, const std::string& injector);

// Sets `var` to the injector unless the user set it already; then says on
// stderr what goes to their tool (`missed`) instead of to ddpscope.
void attach_tool(core::LaunchSpec& spec, const char* var, const std::string& injector,
                 const char* missed);

// The injector's environment variables with their defaults and help
// (profiler/core/inject_options.h), for `record --help`.
std::string inject_options_help();

// The variables ddpscope's own commands read (not the injector's), for
// `ddpscope --help`.
std::string ddpscope_environment_help();

// The injector preloaded into the ranks (ahead of any LD_PRELOAD they had),
// writing into `out_dir` every `flush_ms`.
void preload_injector(core::LaunchSpec& spec, const std::string& injector,
                      const std::string& out_dir, int flush_ms);

}  // namespace ddpscope::record
