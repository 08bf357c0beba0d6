// `ddpscope record [-o DIR] [--nproc N] [--flush-ms MS] [--no-cupti] [--no-nvtx]
//  [--no-python-hook] [--no-nccl-plugin] [--hang-after S] [--live-every S]
//  [--metrics-file F] [--metrics-every S] [--window S] -- CMD...`
//
// The recording itself is the record library's (record/record.h); this file
// only declares the flags.
#include "cli/commands.h"
#include "cli/progress_line.h"
#include "record/environment.h"
#include "record/record.h"

namespace ddpscope::cli {

Run add_record(CLI::App& app) {
  auto args = std::make_shared<record::RecordOptions>();
  auto* sub = app.add_subcommand("record", "run a command and record its collectives");
  sub->add_option("-o,--output", args->out_dir,
                  "output directory [default: ddpscope-<YYYYmmdd-HHMMSS>]");
  sub->add_option("--nproc", args->nproc,
                  "start N local ranks with torchrun's variables (RANK, WORLD_SIZE, ...) and its "
                  "OMP_NUM_THREADS=1 where unset");
  sub->add_option("--flush-ms", args->flush_ms, "flush interval of each rank's writer")
      ->capture_default_str();
  sub->add_flag("--no-cupti", args->no_cupti, "no CUPTI kernel timing");
  sub->add_flag("--no-nvtx", args->no_nvtx, "no NVTX range capture");
  sub->add_flag("--no-python-hook", args->no_python_hook,
                "no Python start-up hook: no FSDP2 account, and DDP buckets are inferred from the "
                "all-reduce pattern");
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
  sub->footer(record::inject_options_help());
  return [args] {
    args->on_terminal = drawing_on_terminal();
    return record::run(*args);
  };
}

}  // namespace ddpscope::cli
