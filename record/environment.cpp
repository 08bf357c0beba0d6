#include "record/environment.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "profiler/core/inject_options.h"

namespace fs = std::filesystem;

namespace ddpscope::record {
namespace {

// The Python start-up hook's folder (holding sitecustomize.py), beside the
// injector in the build tree or under the install prefix's share/.
std::string find_python_hook(const std::string& injector) {
  fs::path dir = fs::path(injector).parent_path();
  for (const fs::path& p : {dir / "python", dir.parent_path() / "share" / "ddpscope" / "python"})
    if (fs::exists(p / "sitecustomize.py")) return p;
  return "";
}

}  // namespace

std::string find_injector() {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "";
  exe[n] = '\0';
  fs::path dir = fs::path(exe).parent_path();
  for (const fs::path& p :
       {dir / "libddpscope_inject.so", dir.parent_path() / "lib" / "libddpscope_inject.so"})
    if (fs::exists(p)) return p;
  return "";
}

// Python imports sitecustomize from the first folder on its path that has one:
// ours goes first and then loads the one it hides (Debian's, or the user's).
void attach_python_hook(core::LaunchSpec& spec, const std::string& injector) {
  std::string dir = find_python_hook(injector);
  if (dir.empty()) {
    std::cerr << "ddpscope: the Python start-up hook is missing next to the injector; DDP "
                 "buckets will be inferred from the all-reduce pattern\n";
    return;
  }
  const char* old = getenv("PYTHONPATH");
  spec.env["PYTHONPATH"] = dir + (old && *old ? ":" + std::string(old) : "");
}

// NVTX loads its tool from NVTX_INJECTION64_PATH (how ranges reach us), NCCL
// (>= 2.23) its profiler plugin from NCCL_PROFILER_PLUGIN
// (docs/nccl_plugin.md). A tool the user chose already (Nsight, say) keeps
// the slot.
void attach_tool(core::LaunchSpec& spec, const char* var, const std::string& injector,
                 const char* missed) {
  const char* theirs = getenv(var);
  if (theirs && *theirs) {
    if (theirs != injector)
      std::cerr << "ddpscope: keeping your " << var << " (" << theirs << "); " << missed
                << " go to that tool, not to ddpscope\n";
    return;
  }
  spec.env[var] = injector;
}

std::string inject_options_help() {
  std::string s =
      "\nInjector environment (record sets these; they also work under any launcher):\n";
  for (const auto& o : kInjectOptions) {
    s += "  " + std::string(o.env);
    s.append(o.env.size() < 24 ? 24 - o.env.size() : 1, ' ');
    s += std::string(o.help);
    if (!o.default_value.empty()) s += " [default: " + std::string(o.default_value) + "]";
    s += "\n";
  }
  return s;
}

std::string ddpscope_environment_help() {
  return "\nEnvironment:\n"
         "  DDPSCOPE_PROGRESS=0       no progress line on a terminal (merge, report)\n"
         "  DDPSCOPE_NETWORK_FS=1|0   treat the output folder as on a network file system, or "
         "not (default: statfs(2) decides)\n"
         "  DDPSCOPE_TUNE_IFACE_ADDR  tune: the address its ranks bind (else "
         "DDPSCOPE_TUNE_IFACE, a network interface; else 127.0.0.1)\n"
         "  DDPSCOPE_NCCL_LIBRARY     tune --backend nccl: the libnccl to load (else "
         "libnccl.so.2)\n"
         "record --help lists the injector's own variables.\n";
}

void preload_injector(core::LaunchSpec& spec, const std::string& injector,
                      const std::string& out_dir, int flush_ms) {
  const char* old = getenv("LD_PRELOAD");
  spec.env["LD_PRELOAD"] = injector + (old && *old ? ":" + std::string(old) : "");
  spec.env["DDPSCOPE_OUT"] = out_dir;
  spec.env["DDPSCOPE_FLUSH_MS"] = std::to_string(flush_ms);
}

}  // namespace ddpscope::record
