#include "tuner/report/tune_text.h"

#include <algorithm>
#include <cstdio>

namespace ddpscope::tuner::report {

void print_workload(const Workload& w, std::ostream& out) {
  out << "workload " << w.name << ": " << w.params.size() << " gradients, "
      << double(w.total_bytes()) / (1 << 20) << " MiB\n";
  if (!w.source.empty()) out << "  buckets from " << w.source << "\n";
}

void print_tune_table(const std::vector<SettingResult>& results, std::ostream& out) {
  char line[512];
  int width = 9;  // topology names with link fields ("2x2:inter=1gbit") are longer
  for (const auto& r : results) width = std::max(width, int(r.topology.size()));
  snprintf(line, sizeof line, "%-8s %-*s %10s %8s %12s %18s %10s %12s\n", "backend", width,
           "topology", "bucket MB", "buckets", "iter ms", "iter ms p25..p75", "comm ms",
           "exposed ms");
  out << line;
  for (const auto& r : results) {
    snprintf(line, sizeof line, "%-8s %-*s %10g %8d %12.2f %8.2f..%-8.2f %10.2f %12.2f\n",
             r.setting.backend.c_str(), width, r.topology.c_str(), r.setting.bucket_mb, r.buckets,
             r.iter_ms_median, r.iter_ms_p25, r.iter_ms_p75, r.comm_ms_median, r.exposed_ms_median);
    out << line;
  }
}

void print_tune_recommendation(const TuneRecommendation& rec, std::ostream& out) {
  char line[256];
  snprintf(line, sizeof line,
           "\nrecommended: %s, bucket_cap_mb=%g: %.2f ms per iteration (median; p25..p75 "
           "%.2f..%.2f)\n",
           rec.best.backend.c_str(), rec.best.bucket_mb, rec.iter_ms_median, rec.iter_ms_p25,
           rec.iter_ms_p75);
  out << line;
  if (rec.compared && rec.within_noise) {
    snprintf(line, sizeof line,
             "DDP's default 25 MB is within noise of the fastest, bucket_cap_mb=%g (%.2f ms vs "
             "%.2f ms; %.0f%% interval of the gain %+.1f%%..%+.1f%% includes 0): keep the "
             "default\n",
             rec.fastest.bucket_mb, rec.fastest_iter_ms_median, rec.default_iter_ms_median,
             rec.level * 100, 100 * (1 - rec.ratio_hi), 100 * (1 - rec.ratio_lo));
    out << line;
  } else if (rec.have_default) {
    snprintf(line, sizeof line, "vs DDP's default 25 MB: %.2f ms, %+.1f%% %s",
             rec.default_iter_ms_median, rec.gain_pct, rec.gain_pct > 0 ? "faster" : "");
    out << line;
    if (rec.compared) {
      snprintf(line, sizeof line, " (%.0f%% interval of the gain %+.1f%%..%+.1f%%)",
               rec.level * 100, 100 * (1 - rec.ratio_hi), 100 * (1 - rec.ratio_lo));
      out << line;
    }
    out << "\n";
  } else {
    out << "DDP's default 25 MB was not measured: no confidence in the gain over it\n";
  }
  out << "  " << rec.ddp_arguments << "\n";
  for (const auto& e : rec.environment) out << "  " << e << "\n";
}

}  // namespace ddpscope::tuner::report
