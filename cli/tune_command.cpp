// `ddpscope tune`: replay a DDP gradient workload over bucket sizes and
// backends, measure each setting on real ranks, recommend one.
//
// The run, in each of its roles, is the tuner library's (tuner/tune_run.h);
// this file only declares the flags.
#include "cli/commands.h"
#include "tuner/tune_run.h"

namespace ddpscope::cli {
namespace {

// The cost model's flags (tuner/model_tune.h).
void add_model_options(CLI::App* tune, tuner::ModelOptions& m) {
  tune->add_option("--calibration", m.calibration,
                   "calibration JSON for --backend model (written there with --calibrate)");
  tune->add_flag("--calibrate", m.calibrate,
                 "measure a calibration with the first measured backend (default gloo) first");
  tune->add_option("--gpu", m.gpu, "GPU class for NCCL's priors: volta, ampere, hopper")
      ->capture_default_str();
  tune->add_option("--model-algorithm", m.algorithm,
                   "all-reduce a calibrated backend is predicted with: ring, recursive_doubling, "
                   "tree, hierarchical (default: the one it runs)");
  tune->add_option("--nccl-tuner-config", m.nccl_tuner_config,
                   "write NCCL's example tuner-plugin CSV for the modelled cluster");
}

}  // namespace

Run add_tune(CLI::App& app) {
  auto a = std::make_shared<tuner::TuneOptions>();
  auto* sub = app.add_subcommand("tune", "replay a DDP gradient workload and recommend settings");
  sub->add_option("--workload", a->workload, "RUN.db | preset:NAME | FILE.json")
      ->capture_default_str();
  sub->add_option("--backend", a->backends, "comma-separated: gloo, mpi, nccl, model")
      ->capture_default_str();
  sub->add_option("--bucket-mb", a->bucket_mb, "comma-separated bucket caps in MiB (as DDP's bucket_cap_mb)")
      ->capture_default_str();
  sub->add_option("--first-bucket-mb", a->first_bucket_mb, "DDP's first bucket size in MB")
      ->capture_default_str();
  auto* nproc =
      sub->add_option("--nproc", a->nproc, "ranks to start on this machine")->capture_default_str();
  sub->add_option("--topology", a->topology,
                  "NODESxRANKS[:inter=BW,...] or FILE.json: emulated for measured backends "
                  "(root), modelled for --backend model");
  sub->add_option("--iters", a->iters, "measured iterations per setting")->capture_default_str();
  sub->add_option("--warmup", a->warmup, "warm-up iterations per setting")->capture_default_str();
  sub->add_option("--json", a->json, "write results and the recommendation as JSON");
  sub->add_option("-o,--output", a->db, "store results in this ddpscope database");
  sub->add_flag("--dry-run", a->dry_run, "write only the bucket plans (to --json or stdout)");
  sub->add_option("--results-dir", a->results_dir,
                  "where ranks exchange results (shared across hosts under a launcher)");
  add_model_options(sub, a->model);
  sub->add_flag("--worker", a->worker, "internal: run as one rank")->group("");
  sub->footer(
      "\nMulti-node: run one worker per rank under your launcher, e.g.\n"
      "  mpirun -np 16 -H a:8,b:8 ddpscope tune --backend mpi --results-dir /shared/t\n"
      "  srun -n 16 ddpscope tune --backend gloo --results-dir /shared/t\n"
      "Each process acts as one rank; rank 0 prints the table and writes --json/-o.\n"
      "--backend nccl loads NCCL from DDPSCOPE_NCCL_LIBRARY (a path; torch's wheel keeps it\n"
      "in site-packages/nvidia/nccl/lib/), else libnccl.so.2, and one GPU per rank.");
  return [a, nproc] {
    a->nproc_given = nproc->count() > 0;
    return tuner::run_tune(*a);
  };
}

}  // namespace ddpscope::cli
