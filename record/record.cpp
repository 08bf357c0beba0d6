#include "record/record.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "profiler/core/input_error.h"
#include "profiler/core/rank_launcher.h"
#include "record/environment.h"
#include "record/recording_dir.h"
#include "record/stacks.h"
#include "record/status_row.h"
#include "record/watchers.h"

namespace fs = std::filesystem;

namespace ddpscope::record {
namespace {

// An hour: a longer interval only risks losing more events to a crash.
constexpr int kMaxFlushMs = 3'600'000;

void check(const RecordOptions& a) {
  if (a.command.empty()) throw InputError("record needs a command after --");
  if (a.nproc < 0 || a.nproc > core::kMaxLocalRanks)
    throw InputError("--nproc must be from 1 to " + std::to_string(core::kMaxLocalRanks));
  if (a.flush_ms < 1 || a.flush_ms > kMaxFlushMs)
    throw InputError("--flush-ms must be from 1 to " + std::to_string(kMaxFlushMs));
  if (!(a.hang_after_s >= 0) || a.hang_after_s > 7 * 24 * 3600.0)
    throw InputError("--hang-after must be from 0 (off) to 604800 seconds");
  a.live.check();
}

// The injector and its tools in the ranks' environment, as the flags chose.
void attach_injector(core::LaunchSpec& spec, const RecordOptions& a, const std::string& injector) {
  preload_injector(spec, injector, fs::absolute(a.out_dir).string(), a.flush_ms);
  spec.env["DDPSCOPE_CUPTI"] = a.no_cupti ? "0" : "1";
  spec.env["DDPSCOPE_NVTX"] = a.no_nvtx ? "0" : "1";
  spec.env["DDPSCOPE_PYTHON"] = a.no_python_hook ? "0" : "1";
  if (!a.no_nvtx) attach_tool(spec, "NVTX_INJECTION64_PATH", injector, "NVTX ranges");
  if (!a.no_python_hook) attach_python_hook(spec, injector);
  if (!a.no_python_hook) spec.env["DDPSCOPE_STACK_SIGNAL"] = std::to_string(stack_signal());
}

core::LaunchSpec launch_spec(const RecordOptions& a) {
  core::LaunchSpec spec;
  spec.argv = a.command;
  spec.nproc = a.nproc;
  if (a.nproc > 0) {
    spec.env["MASTER_ADDR"] = "127.0.0.1";
    spec.env["MASTER_PORT"] = std::to_string(core::free_port());
  }
  // torchrun's default for more than one local rank, with its notice
  // (torch/distributed/run.py): without it the ranks' thread pools
  // oversubscribe the cores, and a job's floating-point results can differ
  // from torchrun's (reductions split across another number of threads).
  if (a.nproc > 1 && !std::getenv("OMP_NUM_THREADS")) {
    spec.env["OMP_NUM_THREADS"] = "1";
    std::cerr << "ddpscope: OMP_NUM_THREADS set to 1 for each rank, as torchrun does when it is "
                 "unset; set it yourself to tune\n";
  }
  return spec;
}

// Whether the ranks will be recorded: the injector found and the output
// directory writable; says why not otherwise (the command then runs as it is).
bool can_record(const RecordOptions& a, const std::string& injector) {
  bool recording = !injector.empty() && prepare_recording_dir(a.out_dir);
  if (injector.empty())
    std::cerr << "ddpscope: libddpscope_inject.so not found next to ddpscope; running unrecorded\n";
  else if (!recording)
    std::cerr << "ddpscope: cannot write to " << a.out_dir << "; running the command unrecorded\n";
  return recording;
}

}  // namespace

int run(RecordOptions& a) {
  check(a);
  if (a.out_dir.empty()) a.out_dir = default_recording_dir();
  check_recording_dir(a.out_dir);

  core::LaunchSpec spec = launch_spec(a);
  StatusRow row;
  std::string injector = find_injector();
  bool recording = can_record(a, injector);
  std::unique_ptr<Watchers> watchers;
  if (recording) {
    attach_injector(spec, a, injector);
    auto live = LivePublisher::make(a.out_dir, a.live, a.on_terminal, [&](const std::string& l) {
      a.on_terminal ? row.draw(l) : (void)fprintf(stderr, "%s\n", l.c_str());
    });
    watchers = std::make_unique<Watchers>(a.out_dir, a.hang_after_s, std::move(live));
    watchers->install(spec, a.flush_ms);
    if (!a.no_nccl_plugin)
      attach_tool(spec, "NCCL_PROFILER_PLUGIN", injector, "NCCL's algorithm and protocol choices");
  }
  std::vector<RankExitRecord> ends;
  int status = core::launch_and_wait(spec, &ends);
  row.clear();
  if (watchers) watchers->finish();
  if (recording) finish_recording(a.out_dir, a.nproc, ends, std::cerr);
  return status;
}

}  // namespace ddpscope::record
