#include "tuner/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "profiler/core/stats.h"
#include "profiler/regression/statistics.h"

namespace ddpscope::tuner {
namespace {

std::string number(double x) {
  char buf[32];
  snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

}  // namespace

SettingResult summarize_setting(const Setting& s, int buckets,
                                const std::vector<std::vector<IterationSample>>& per_rank) {
  SettingResult r;
  r.setting = s;
  r.nranks = int(per_rank.size());
  r.topology = "1x" + std::to_string(r.nranks);
  r.buckets = buckets;
  size_t n = per_rank.empty() ? 0 : per_rank[0].size();
  for (const auto& rank : per_rank) n = std::min(n, rank.size());
  std::vector<double> iter, comm, exposed;
  for (size_t i = 0; i < n; ++i) {
    IterationSample job;
    for (const auto& rank : per_rank) {
      job.iter_ms += rank[i].iter_ms / double(per_rank.size());
      job.comm_ms = std::max(job.comm_ms, rank[i].comm_ms);
      job.exposed_ms = std::max(job.exposed_ms, rank[i].exposed_ms);
    }
    r.iterations.push_back(job);
    iter.push_back(job.iter_ms);
    comm.push_back(job.comm_ms);
    exposed.push_back(job.exposed_ms);
  }
  r.iter_ms_median = stats::median(iter);
  r.iter_ms_p25 = stats::quantile(iter, 0.25);
  r.iter_ms_p75 = stats::quantile(iter, 0.75);
  r.comm_ms_median = stats::median(comm);
  r.exposed_ms_median = stats::median(exposed);
  return r;
}

namespace {

std::vector<double> iteration_ms(const SettingResult& r) {
  std::vector<double> out;
  for (const auto& i : r.iterations) out.push_back(i.iter_ms);
  return out;
}

// Whether the fastest setting beats DDP's default by more than the noise:
// `check`'s bootstrap of the ratio of medians (one run a side, so iterations
// are resampled in moving blocks), the same seed every time.
void compare_with_default(const SettingResult& fastest, const SettingResult& def,
                          TuneRecommendation& rec) {
  rec.compared = true;
  regression::BootstrapSpec spec;
  spec.level = rec.level;
  auto ci = regression::bootstrap_ratio({iteration_ms(def)}, {iteration_ms(fastest)}, spec);
  rec.ratio_lo = ci.lo;
  rec.ratio_hi = ci.hi;
  rec.within_noise = ci.hi >= 1.0;
}

void take(const SettingResult& r, TuneRecommendation& rec) {
  rec.best = r.setting;
  rec.iter_ms_median = r.iter_ms_median;
  rec.iter_ms_p25 = r.iter_ms_p25;
  rec.iter_ms_p75 = r.iter_ms_p75;
}

}  // namespace

TuneRecommendation recommend(const std::vector<SettingResult>& results) {
  TuneRecommendation rec;
  const SettingResult* best = nullptr;
  for (const auto& r : results)
    if (!r.iterations.empty() && (!best || r.iter_ms_median < best->iter_ms_median)) best = &r;
  if (!best) return rec;
  rec.fastest = best->setting;
  rec.fastest_iter_ms_median = best->iter_ms_median;
  take(*best, rec);
  for (const auto& r : results)
    if (r.setting.backend == best->setting.backend && std::fabs(r.setting.bucket_mb - 25) < 1e-9 &&
        !r.iterations.empty()) {
      rec.have_default = true;
      rec.default_iter_ms_median = r.iter_ms_median;
      rec.gain_pct = 100.0 * (r.iter_ms_median - best->iter_ms_median) / r.iter_ms_median;
      if (&r == best) break;
      compare_with_default(*best, r, rec);
      if (rec.within_noise) take(r, rec);
      break;
    }
  rec.ddp_arguments =
      "DistributedDataParallel(model, bucket_cap_mb=" + number(rec.best.bucket_mb) + ")";
  std::string backend = rec.best.backend;
  if (backend == "gloo" || backend == "nccl" || backend == "mpi")
    rec.environment.push_back("torch.distributed.init_process_group(backend=\"" + backend + "\")");
  // DDP reads the first bucket's size from this module constant at construction.
  if (rec.best.first_bucket_mb != 1)
    rec.environment.push_back("torch.distributed._DEFAULT_FIRST_BUCKET_BYTES = " +
                              number(rec.best.first_bucket_mb * 1024 * 1024) +
                              "  # before DistributedDataParallel(...)");
  return rec;
}

std::vector<store::TuneSample> to_samples(const std::vector<SettingResult>& results) {
  std::vector<store::TuneSample> out;
  for (const auto& r : results)
    for (size_t i = 0; i < r.iterations.size(); ++i)
      out.push_back({r.setting.backend, r.topology, r.nranks, r.setting.bucket_mb,
                     r.setting.first_bucket_mb, r.buckets, int(i), r.iterations[i].iter_ms,
                     r.iterations[i].comm_ms, r.iterations[i].exposed_ms});
  return out;
}

}  // namespace ddpscope::tuner
