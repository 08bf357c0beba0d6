// `ddpscope record [-o DIR] [--nproc N] [--flush-ms MS] [--no-cupti] [--no-nvtx]
//  [--no-python-hook] [--no-nccl-plugin] [--hang-after S] -- CMD...`
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "profiler/analysis/hang_watch.h"
#include "profiler/core/inject_options.h"
#include "profiler/core/rank_launcher.h"
#include "profiler/store/completion.h"
#include "profiler/store/launch_account.h"
#include "profiler/store/merge.h"
#include "reports/text_hangs.h"

namespace fs = std::filesystem;

namespace ddpscope::cli {
namespace {

// An hour: a longer interval only risks losing more events to a crash.
constexpr int kMaxFlushMs = 3'600'000;

struct RecordArgs {
  std::string out_dir;
  int nproc = 0;
  int flush_ms = 200;
  bool no_cupti = false, no_nvtx = false, no_python_hook = false, no_nccl_plugin = false;
  double hang_after_s = 0;  // 0: off
  std::vector<std::string> command;
};

std::string default_dir() {
  char buf[64];
  time_t now = time(nullptr);
  tm local{};
  localtime_r(&now, &local);
  strftime(buf, sizeof buf, "ddpscope-%Y%m%d-%H%M%S", &local);
  return buf;
}

// Next to the executable (the build tree), else under its install prefix.
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

// The Python start-up hook's folder (holding sitecustomize.py), beside the
// injector in the build tree or under the install prefix's share/.
std::string find_python_hook(const std::string& injector) {
  fs::path dir = fs::path(injector).parent_path();
  for (const fs::path& p : {dir / "python", dir.parent_path() / "share" / "ddpscope" / "python"})
    if (fs::exists(p / "sitecustomize.py")) return p;
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

std::string options_help() {
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

std::string this_host() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  return h;
}

// An existing directory may be reused, but never one that holds a finished
// (or merging) recording. Rank files still being written are allowed: with -o
// on a shared directory, other hosts' ranks of the same job started first.
void check_output_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec)) throw InputError(dir + ": exists and is not a directory");
  if (fs::exists(fs::path(dir) / "run.db") || fs::exists(fs::path(dir) / ".merge-claim") ||
      store::holds_finished_rank_file(dir, this_host()))
    throw InputError(dir + ": already holds a recording; choose another -o or remove it");
}

// A tool slot the injector fills: NVTX loads its tool from
// NVTX_INJECTION64_PATH (how ranges reach us), NCCL (>= 2.23) its profiler
// plugin from NCCL_PROFILER_PLUGIN (docs/nccl_plugin.md). A tool the user
// chose already (Nsight, say) keeps the slot, with a note of what we miss.
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

bool prepare_output_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  return !ec && access(dir.c_str(), W_OK | X_OK) == 0;
}

// Merges once every rank of the job has finished its file, on whichever host
// sees that first (profiler/store/completion.h); other hosts say where things
// stand. With --nproc every rank was ours and has ended: what exists is all
// there will be, so it is merged, and the ranks without a file named.
void merge_recording(const std::string& dir, int nproc) {
  auto done = store::check_completion(dir, this_host());
  if (done.files.empty()) {
    std::cerr
        << "ddpscope: nothing recorded (the command made no NCCL, Gloo, CUDA wait or NVTX calls)\n";
    return;
  }
  if (nproc > 0) {
    done.files = store::find_rank_files(dir);
    if (auto missing = store::ranks_without_file(dir, nproc); !missing.empty())
      std::cerr << "ddpscope: no file from rank" << (missing.size() > 1 ? "s " : " ")
                << store::rank_list(missing) << " of " << nproc << "; merging the others\n";
  } else if (!done.complete) {
    std::cerr << "ddpscope: " << done.ranks << " of " << done.world_size << " ranks recorded in "
              << dir
              << (done.unfinished ? ", " + std::to_string(done.unfinished) + " still writing" : "")
              << "; the host whose ranks finish last merges (or run `ddpscope merge " << dir
              << "` once the job is done)\n";
    return;
  }
  if (!store::claim_merge(dir)) {
    std::cerr << "ddpscope: another host is merging " << dir << "\n";
    return;
  }
  std::string out = (fs::path(dir) / "run.db").string();
  const auto& files = done.files;
  try {
    auto s = store::merge_rank_files(files, out, store::read_launch_account(dir));
    std::cerr << "ddpscope: recorded " << s.ranks << (s.ranks == 1 ? " rank, " : " ranks, ")
              << s.collectives << " collectives -> " << out;
    if (s.dropped_events) std::cerr << " (" << s.dropped_events << " events dropped)";
    std::cerr << "\n";
  } catch (const std::exception& e) {
    std::cerr << "ddpscope: could not merge the rank files: " << e.what() << " (they stay in "
              << dir << ")\n";
  }
}

// The signal on which the ranks' start-up hook dumps their Python stacks: a
// real-time one no job uses by accident (record sends it only to processes
// whose hook registered for it).
int stack_signal() { return SIGRTMIN + 3; }

// Interrupted, or the job stuck: the ranks' stacks first, while they can
// answer; with --hang-after, record watches for a stall and then says where
// the job stopped before ending it as torchrun would (SIGTERM, then SIGKILL).
void watch_for_hangs(core::LaunchSpec& spec, const RecordArgs& a) {
  std::string dir = a.out_dir;
  spec.before_forward = [dir](int) { analysis::request_stacks(dir, stack_signal()); };
  if (a.hang_after_s <= 0) return;
  auto watch = std::make_shared<analysis::HangWatch>(dir, a.hang_after_s);
  spec.watch_ms = std::clamp(a.flush_ms, 50, 1000);
  spec.watch = [dir, watch] {
    if (!watch->stuck()) return false;
    fprintf(stderr,
            "ddpscope: no collective completed for %.1f s while %d rank(s) wait in one: "
            "stopping the job (--hang-after)\n",
            watch->stalled_s(), watch->waiting_ranks());
    analysis::request_stacks(dir, stack_signal());
    try {
      reports::print_hangs(analysis::analyse_so_far(dir), std::cerr);
    } catch (const std::exception& e) {
      std::cerr << "ddpscope: no diagnosis: " << e.what() << "\n";
    }
    return true;
  };
}

int run_record(RecordArgs& a) {
  if (a.command.empty()) throw InputError("record needs a command after --");
  if (a.nproc < 0 || a.nproc > core::kMaxLocalRanks)
    throw InputError("--nproc must be from 1 to " + std::to_string(core::kMaxLocalRanks));
  if (a.flush_ms < 1 || a.flush_ms > kMaxFlushMs)
    throw InputError("--flush-ms must be from 1 to " + std::to_string(kMaxFlushMs));
  if (!(a.hang_after_s >= 0) || a.hang_after_s > 7 * 24 * 3600.0)
    throw InputError("--hang-after must be from 0 (off) to 604800 seconds");
  if (a.out_dir.empty()) a.out_dir = default_dir();
  check_output_dir(a.out_dir);

  core::LaunchSpec spec;
  spec.argv = a.command;
  spec.nproc = a.nproc;
  if (a.nproc > 0) {
    spec.env["MASTER_ADDR"] = "127.0.0.1";
    spec.env["MASTER_PORT"] = std::to_string(core::free_port());
  }
  std::string injector = find_injector();
  bool recording = !injector.empty() && prepare_output_dir(a.out_dir);
  if (injector.empty())
    std::cerr << "ddpscope: libddpscope_inject.so not found next to ddpscope; running unrecorded\n";
  else if (!recording)
    std::cerr << "ddpscope: cannot write to " << a.out_dir << "; running the command unrecorded\n";
  if (recording) {
    const char* old = getenv("LD_PRELOAD");
    spec.env["LD_PRELOAD"] = injector + (old && *old ? ":" + std::string(old) : "");
    spec.env["DDPSCOPE_OUT"] = fs::absolute(a.out_dir).string();
    spec.env["DDPSCOPE_FLUSH_MS"] = std::to_string(a.flush_ms);
    spec.env["DDPSCOPE_CUPTI"] = a.no_cupti ? "0" : "1";
    spec.env["DDPSCOPE_NVTX"] = a.no_nvtx ? "0" : "1";
    spec.env["DDPSCOPE_PYTHON"] = a.no_python_hook ? "0" : "1";
    if (!a.no_nvtx) attach_tool(spec, "NVTX_INJECTION64_PATH", injector, "NVTX ranges");
    if (!a.no_python_hook) attach_python_hook(spec, injector);
    if (!a.no_python_hook) spec.env["DDPSCOPE_STACK_SIGNAL"] = std::to_string(stack_signal());
    watch_for_hangs(spec, a);
    if (!a.no_nccl_plugin)
      attach_tool(spec, "NCCL_PROFILER_PLUGIN", injector, "NCCL's algorithm and protocol choices");
  }
  std::vector<RankExitRecord> ends;
  int status = core::launch_and_wait(spec, &ends);
  if (recording && a.nproc > 0) try {
      store::write_rank_exits(a.out_dir, ends);
    } catch (const std::exception& e) {
      std::cerr << "ddpscope: cannot keep how the ranks ended: " << e.what() << "\n";
    }
  if (recording) merge_recording(a.out_dir, a.nproc);
  return status;
}

}  // namespace

Run add_record(CLI::App& app) {
  auto args = std::make_shared<RecordArgs>();
  auto* sub = app.add_subcommand("record", "run a command and record its collectives");
  sub->add_option("-o,--output", args->out_dir,
                  "output directory [default: ddpscope-<YYYYmmdd-HHMMSS>]");
  sub->add_option("--nproc", args->nproc,
                  "start N local ranks with torchrun's variables (RANK, WORLD_SIZE, ...)");
  sub->add_option("--flush-ms", args->flush_ms, "flush interval of each rank's writer")
      ->capture_default_str();
  sub->add_flag("--no-cupti", args->no_cupti, "no CUPTI kernel timing");
  sub->add_flag("--no-nvtx", args->no_nvtx, "no NVTX range capture");
  sub->add_flag("--no-python-hook", args->no_python_hook,
                "no Python start-up hook: DDP buckets are inferred from the all-reduce pattern");
  sub->add_flag("--no-nccl-plugin", args->no_nccl_plugin,
                "do not load ddpscope as NCCL's profiler plugin (no algorithm, protocol, "
                "channels or network steps)");
  sub->add_option("--hang-after", args->hang_after_s,
                  "when no collective completed for S seconds while some are in flight: print "
                  "where the job stopped (and the ranks' Python stacks), then end it as torchrun "
                  "would [default: off]");
  sub->add_option("command", args->command, "the training command (after --)")->required();
  sub->footer(options_help());
  return [args] { return run_record(*args); };
}

}  // namespace ddpscope::cli
