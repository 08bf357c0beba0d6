#include "tuner/model/model_sweep.h"

#include "tuner/bucket_plan.h"
#include "tuner/model/iteration_model.h"

namespace ddpscope::tuner::model {

std::vector<SettingResult> predict_sweep(const Workload& w, const ModelBackend& m,
                                         const std::vector<double>& bucket_mb,
                                         double first_bucket_mb, double compute_scale) {
  std::vector<SettingResult> out;
  for (double mb : bucket_mb) {
    const BucketPlan plan = plan_buckets(w, mb, first_bucket_mb);
    std::vector<double> comm_ms;
    IterationModelOptions options;
    double all_ms = 0, cpu_ms = 0;
    for (const auto& b : plan.buckets) {
      comm_ms.push_back(m.bucket_ms(b.bytes));
      all_ms += comm_ms.back();
      cpu_ms += comm_ms.back() * m.cpu_share(b.bytes);
    }
    options.compute_scale = compute_scale;
    options.comm_rate_during_compute =
        m.comm_rate_while_computing(all_ms > 0 ? cpu_ms / all_ms : 1);
    // Every rank computes under the calibrated contention, over a shaped
    // link too. A ring does leave the ranks that send across the link early
    // by what is still on the wire, but on 2x2 over 2 Gbit/s compute added
    // 16-19 ms to comm-only iterations at 8 and 32 MB, as much as on 4x1,
    // where no rank leaves early (bench/model_accuracy.sh): the relief the
    // stagger should give is not there to measure.
    options.step_delay_ms = m.step_delay_ms();
    options.step_delay_under_comm_ms = m.step_delay_under_comm_ms();
    options.step_delay_step_us = m.step_delay_step_us();
    const auto p = predict_iteration(w, plan, comm_ms, options);

    SettingResult r;
    r.setting = {kModelBackendLabel, mb, first_bucket_mb};
    r.topology = m.topology().name();
    r.nranks = m.topology().nranks();
    r.buckets = int(plan.buckets.size());
    r.iterations = {{p.iter_ms, p.comm_ms, p.exposed_ms}};
    r.iter_ms_median = r.iter_ms_p25 = r.iter_ms_p75 = p.iter_ms;
    r.comm_ms_median = p.comm_ms;
    r.exposed_ms_median = p.exposed_ms;
    out.push_back(r);
  }
  return out;
}

}  // namespace ddpscope::tuner::model
