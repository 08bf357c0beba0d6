// `ddpscope record [-o DIR] [--nproc N] [--flush-ms MS] [--no-cupti] [--no-nvtx]
//  [--no-python-hook] [--no-nccl-plugin] [--hang-after S] [--live-every S]
//  [--metrics-file F] [--metrics-every S] [--window S] -- CMD...`

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/progress_line.h"
#include "profiler/analysis/hang_watch.h"
#include "profiler/core/rank_launcher.h"
#include "profiler/core/record_env.h"
#include "profiler/store/recording_dir.h"
#include "reports/live_publisher.h"
#include "reports/sections/hangs.h"

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
  reports::LiveOptions live;
  std::vector<std::string> command;
};

// Interrupted, or the job stuck: the ranks' stacks first, while they can
// answer; with --hang-after, record watches for a stall and then says where
// the job stopped before ending it as torchrun would (SIGTERM, then SIGKILL).
std::function<bool()> watch_for_hangs(core::LaunchSpec& spec, const RecordArgs& a) {
  std::string dir = a.out_dir;
  spec.before_forward = [dir](int) { analysis::request_stacks(dir, analysis::stack_signal()); };
  if (a.hang_after_s <= 0) return {};
  auto watch = std::make_shared<analysis::HangWatch>(dir, a.hang_after_s);
  return [dir, watch] {
    if (!watch->stuck()) return false;
    fprintf(stderr,
            "ddpscope: no collective completed for %.1f s while %d rank(s) wait in one: "
            "stopping the job (--hang-after)\n",
            watch->stalled_s(), watch->waiting_ranks());
    analysis::request_stacks(dir, analysis::stack_signal());
    try {
      reports::print_hangs(analysis::analyse_so_far(dir), std::cerr);
    } catch (const std::exception& e) {
      std::cerr << "ddpscope: no diagnosis: " << e.what() << "\n";
    }
    return true;
  };
}

// Every look record takes while the ranks run, in one (docs/watching.md,
// docs/hangs.md): true stops the job.
void install_watches(core::LaunchSpec& spec, const RecordArgs& a, std::function<bool()> hangs,
                     reports::LivePublisher* live) {
  if (!hangs && !live) return;
  spec.watch_ms = std::clamp(a.flush_ms, 50, live ? 250 : 1000);
  spec.watch = [hangs, live] {
    try {
      if (live) live->tick();
    } catch (const std::exception& e) {  // the job goes on; the next look may do
      fprintf(stderr, "ddpscope: live view: %s\n", e.what());
    }
    return hangs && hangs();
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
  a.live.check();
  if (a.out_dir.empty()) a.out_dir = store::default_recording_dir();
  store::check_recording_dir(a.out_dir);

  core::LaunchSpec spec;
  spec.argv = a.command;
  spec.nproc = a.nproc;
  if (a.nproc > 0) {
    spec.env["MASTER_ADDR"] = "127.0.0.1";
    spec.env["MASTER_PORT"] = std::to_string(core::free_port());
  }
  std::unique_ptr<reports::LivePublisher> live;
  StatusRow row;
  bool on_terminal = drawing_on_terminal();
  std::string injector = core::find_injector();
  bool recording = !injector.empty() && store::prepare_recording_dir(a.out_dir);
  if (injector.empty())
    std::cerr << "ddpscope: libddpscope_inject.so not found next to ddpscope; running unrecorded\n";
  else if (!recording)
    std::cerr << "ddpscope: cannot write to " << a.out_dir << "; running the command unrecorded\n";
  if (recording) {
    core::preload_injector(spec, injector, fs::absolute(a.out_dir).string(), a.flush_ms);
    spec.env["DDPSCOPE_CUPTI"] = a.no_cupti ? "0" : "1";
    spec.env["DDPSCOPE_NVTX"] = a.no_nvtx ? "0" : "1";
    spec.env["DDPSCOPE_PYTHON"] = a.no_python_hook ? "0" : "1";
    if (!a.no_nvtx) core::attach_tool(spec, "NVTX_INJECTION64_PATH", injector, "NVTX ranges");
    if (!a.no_python_hook) core::attach_python_hook(spec, injector);
    if (!a.no_python_hook)
      spec.env["DDPSCOPE_STACK_SIGNAL"] = std::to_string(analysis::stack_signal());
    auto hangs = watch_for_hangs(spec, a);
    live = reports::LivePublisher::make(a.out_dir, a.live, on_terminal, [&](const std::string& l) {
      on_terminal ? row.draw(l) : (void)fprintf(stderr, "%s\n", l.c_str());
    });
    install_watches(spec, a, hangs, live.get());
    if (!a.no_nccl_plugin)
      core::attach_tool(spec, "NCCL_PROFILER_PLUGIN", injector,
                        "NCCL's algorithm and protocol choices");
  }
  std::vector<RankExitRecord> ends;
  int status = core::launch_and_wait(spec, &ends);
  row.clear();
  try {
    if (live) live->finish();
  } catch (const std::exception& e) {  // the job's end and its merge matter more
    fprintf(stderr, "ddpscope: metrics file: %s\n", e.what());
  }
  if (recording) store::finish_recording(a.out_dir, a.nproc, ends, std::cerr);
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
  sub->add_option("--live-every", args->live.line_every_s,
                  "live line every S s, 0: off [default: 1 on a terminal (its last row), else 0]");
  sub->add_option("--metrics-file", args->live.metrics_file,
                  "rewrite F every --metrics-every seconds in Prometheus' text format (for "
                  "node_exporter's textfile collector)");
  sub->add_option("--metrics-every", args->live.metrics_every_s, "seconds between metrics files")
      ->capture_default_str();
  sub->add_option("--window", args->live.window_s,
                  "seconds of the job the live line and the metrics cover")
      ->capture_default_str();
  sub->add_option("command", args->command, "the training command (after --)")->required();
  sub->footer(core::inject_options_help());
  return [args] { return run_record(*args); };
}

}  // namespace ddpscope::cli
