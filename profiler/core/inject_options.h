// The injector's environment contract, declared once: `ddpscope record` sets
// these variables, the injector reads them, and `ddpscope record --help` prints
// this table. Adding an option here is the only step needed for all three.
#pragma once

#include <array>
#include <cstdlib>
#include <string_view>

namespace ddpscope {

struct InjectOption {
  std::string_view env;
  std::string_view default_value;
  std::string_view help;
};

inline constexpr std::array<InjectOption, 10> kInjectOptions = {{
    {"DDPSCOPE_OUT", "ddpscope-out", "directory for rank-<R>.db (record sets it from -o)"},
    {"DDPSCOPE_FLUSH_MS", "200",
     "writer thread flush interval in milliseconds (record: --flush-ms)"},
    {"DDPSCOPE_BUFFER_EVENTS", "65536",
     "events per thread buffer (a power of two); when full, new events are dropped and counted"},
    {"DDPSCOPE_CUPTI", "1", "0 disables CUPTI kernel timing (record: --no-cupti)"},
    {"DDPSCOPE_NVTX", "1", "0 disables NVTX range capture (record: --no-nvtx)"},
    {"DDPSCOPE_PYTHON", "1",
     "0 disables the Python start-up hook that reads DDP's and FSDP2's own account (record: "
     "--no-python-hook)"},
    {"DDPSCOPE_STACK_SIGNAL", "",
     "a signal number on which the Python start-up hook dumps every thread's stack to "
     "DDPSCOPE_OUT/stacks-<pid>.txt (record sets it; empty: none)"},
    {"DDPSCOPE_RANK", "",
     "overrides the rank found in RANK / OMPI_COMM_WORLD_RANK / PMI_RANK / SLURM_PROCID"},
    {"DDPSCOPE_QUIET", "0", "1 silences the injector's notices on stderr (warnings still print)"},
    {"NCCL_PROFILER_PLUGIN", "",
     "NCCL's own: the path of libddpscope_inject.so makes NCCL (>= 2.27) hand ddpscope the "
     "algorithm, protocol, channels and network steps of each collective (record sets it "
     "unless you did; --no-nccl-plugin)"},
}};

// The value of an option from the environment, or its default.
inline std::string_view inject_option(std::string_view env) {
  for (const auto& o : kInjectOptions) {
    if (o.env != env) continue;
    const char* v = std::getenv(o.env.data());
    return v && *v ? std::string_view(v) : o.default_value;
  }
  return {};
}

}  // namespace ddpscope
