#include "tuner/report/tune_json.h"

#include "tuner/bucket_plan.h"

namespace ddpscope::tuner::report {

using nlohmann::json;

json recommendation_json(const TuneRecommendation& rec) {
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
    j["gain_pct_vs_default"] = rec.gain_pct;  // the fastest's median gain
  }
  j["fastest_bucket_mb"] = rec.fastest.bucket_mb;
  if (rec.compared) {
    // `check`'s bootstrap of median(fastest) / median(default), as a gain.
    j["confidence"] = rec.level;
    j["gain_pct_interval"] = {100 * (1 - rec.ratio_hi), 100 * (1 - rec.ratio_lo)};
    j["within_noise"] = rec.within_noise;
  }
  return j;
}

json tune_json(const SweepSpec& s, const Workload& w, const std::vector<SettingResult>& results,
               const TuneRecommendation& rec) {
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
  json out = {{"workload", w.name},
              {"workload_bytes", w.total_bytes()},
              {"params", w.params.size()},
              {"warmup", s.replay.warmup},
              {"iters", s.replay.iters},
              {"results", rows},
              {"recommendation", recommendation_json(rec)}};
  if (!w.source.empty()) out["workload_source"] = w.source;
  return out;
}

json plans_json(const SweepSpec& s, const Workload& w) {
  json plans = json::array();
  for (double mb : s.bucket_mb) {
    auto plan = plan_buckets(w, mb, s.first_bucket_mb);
    json buckets = json::array();
    for (const auto& b : plan.buckets)
      buckets.push_back({{"bytes", b.bytes}, {"params", b.params}});
    // The limit the plan used: the cap itself where the workload's DDP says so.
    plans.push_back(
        {{"bucket_mb", mb}, {"first_bucket_mb", plan.first_bucket_mb}, {"buckets", buckets}});
  }
  json out = {{"workload", w.name}, {"plans", plans}};
  if (!w.source.empty()) out["workload_source"] = w.source;
  return out;
}

}  // namespace ddpscope::tuner::report
