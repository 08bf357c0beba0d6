#include "cli/tune_output.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "profiler/store/tune_store.h"
#include "reports/atomic_file.h"
#include "tuner/bucket_plan.h"

namespace ddpscope::cli {
namespace {

using nlohmann::json;

void print_table(const std::vector<tuner::SettingResult>& results, std::ostream& out) {
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

json recommendation_json(const tuner::TuneRecommendation& rec) {
  json j = {{"backend", rec.best.backend},
            {"bucket_mb", rec.best.bucket_mb},
            {"first_bucket_mb", rec.best.first_bucket_mb},
            {"iter_ms_median", rec.iter_ms_median},
            {"iter_ms_p25", rec.iter_ms_p25},
            {"iter_ms_p75", rec.iter_ms_p75},
            {"ddp_arguments", rec.ddp_arguments},
            {"environment", rec.environment}};
  if (rec.have_default) {
    j["default_bucket_mb"] = 25;
    j["default_iter_ms_median"] = rec.default_iter_ms_median;
    j["gain_pct_vs_default"] = rec.gain_pct;
  }
  return j;
}

void print_recommendation(const tuner::TuneRecommendation& rec, std::ostream& out) {
  char line[256];
  snprintf(line, sizeof line,
           "\nrecommended: %s, bucket_cap_mb=%g: %.2f ms per iteration (median; p25..p75 "
           "%.2f..%.2f)\n",
           rec.best.backend.c_str(), rec.best.bucket_mb, rec.iter_ms_median, rec.iter_ms_p25,
           rec.iter_ms_p75);
  out << line;
  if (rec.have_default) {
    snprintf(line, sizeof line, "vs DDP's default 25 MB: %.2f ms, %+.1f%% %s\n",
             rec.default_iter_ms_median, rec.gain_pct, rec.gain_pct > 0 ? "faster" : "");
    out << line;
  }
  out << "  " << rec.ddp_arguments << "\n";
  for (const auto& e : rec.environment) out << "  " << e << "\n";
}

json results_json(const TuneArgs& a, const tuner::Workload& w,
                  const std::vector<tuner::SettingResult>& results,
                  const tuner::TuneRecommendation& rec) {
  json rows = json::array();
  for (const auto& r : results)
    rows.push_back({{"backend", r.setting.backend},
                    {"topology", r.topology},
                    {"nranks", r.nranks},
                    {"bucket_mb", r.setting.bucket_mb},
                    {"first_bucket_mb", r.setting.first_bucket_mb},
                    {"buckets", r.buckets},
                    {"iterations", r.iterations.size()},
                    {"iter_ms_median", r.iter_ms_median},
                    {"iter_ms_p25", r.iter_ms_p25},
                    {"iter_ms_p75", r.iter_ms_p75},
                    {"comm_ms_median", r.comm_ms_median},
                    {"exposed_ms_median", r.exposed_ms_median}});
  return {{"workload", w.name},
          {"workload_bytes", w.total_bytes()},
          {"params", w.params.size()},
          {"warmup", a.warmup},
          {"iters", a.iters},
          {"results", rows},
          {"recommendation", recommendation_json(rec)}};
}

std::string now_iso() {
  char buf[32];
  time_t t = time(nullptr);
  tm u{};
  gmtime_r(&t, &u);
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &u);
  return buf;
}

void store_results(const TuneArgs& a, const tuner::Workload& w,
                   const std::vector<tuner::SettingResult>& results, const json& rec) {
  store::TuneRun run;
  run.started = now_iso();
  run.workload = w.name;
  run.workload_bytes = int64_t(w.total_bytes());
  run.params = int(w.params.size());
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  run.host = host;
  run.command_line = "ddpscope tune --workload " + a.workload + " --backend " + a.backends +
                     " --bucket-mb " + a.bucket_mb +
                     (a.topology.empty() ? "" : " --topology " + a.topology);
  run.warmup = a.warmup;
  run.iters = a.iters;
  run.first_bucket_mb = a.first_bucket_mb;
  run.recommendation = rec.dump();
  store::write_tune_run(a.db, run, tuner::to_samples(results));
}

}  // namespace

int report_tune(const TuneArgs& a, const tuner::Workload& w,
                const std::vector<tuner::SettingResult>& results) {
  auto rec = tuner::recommend(results);
  std::cout << "workload " << w.name << ": " << w.params.size() << " gradients, "
            << double(w.total_bytes()) / (1 << 20) << " MiB\n\n";
  print_table(results, std::cout);
  print_recommendation(rec, std::cout);
  json j = results_json(a, w, results, rec);
  if (!a.json.empty())
    reports::write_atomically(a.json, [&](std::ostream& out) { out << j.dump(1) << "\n"; });
  if (!a.db.empty()) store_results(a, w, results, j["recommendation"]);
  return 0;
}

void print_tune_table(const std::vector<tuner::SettingResult>& results, std::ostream& out) {
  print_table(results, out);
}

void print_tune_recommendation(const tuner::TuneRecommendation& rec, std::ostream& out) {
  print_recommendation(rec, out);
}

json tune_json(const TuneArgs& a, const tuner::Workload& w,
               const std::vector<tuner::SettingResult>& results,
               const tuner::TuneRecommendation& rec) {
  return results_json(a, w, results, rec);
}

void store_tune_results(const TuneArgs& a, const tuner::Workload& w,
                        const std::vector<tuner::SettingResult>& results, const json& rec) {
  store_results(a, w, results, rec);
}

int write_plans(const TuneArgs& a, const tuner::Workload& w, const std::vector<double>& sizes) {
  json plans = json::array();
  for (double mb : sizes) {
    auto plan = tuner::plan_buckets(w, mb, a.first_bucket_mb);
    json buckets = json::array();
    for (const auto& b : plan.buckets)
      buckets.push_back({{"bytes", b.bytes}, {"params", b.params}});
    plans.push_back(
        {{"bucket_mb", mb}, {"first_bucket_mb", a.first_bucket_mb}, {"buckets", buckets}});
  }
  json j = {{"workload", w.name}, {"plans", plans}};
  if (a.json.empty())
    std::cout << j.dump(1) << "\n";
  else
    reports::write_atomically(a.json, [&](std::ostream& out) { out << j.dump(1) << "\n"; });
  return 0;
}

}  // namespace ddpscope::cli
