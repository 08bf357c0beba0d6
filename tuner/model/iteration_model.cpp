#include "tuner/model/iteration_model.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace ddpscope::tuner::model {
namespace {

// The one comm stream: launched all-reduces run one at a time, in order.
class CommStream {
 public:
  // `rate`: an all-reduce's speed while the rank computes (1 once it waits).
  CommStream(const std::vector<double>& work_ms, double rate, std::vector<BucketTiming>* timings)
      : work_(work_ms), rate_(rate), timings_(timings) {}
  void launch(size_t k, double at_ms) {
    (*timings_)[k].ready_ms = at_ms;
    if (launched_ == k) ++launched_;
  }
  bool busy() const { return running_ < launched_; }
  // Runs the stream from now_ until `until`, each all-reduce at its rate
  // under compute when `computing`, at stand-alone speed otherwise.
  void advance(double until, bool computing) {
    while (running_ < launched_ && now_ < until) {
      BucketTiming& b = (*timings_)[running_];
      const double rate = computing ? rate_ : 1.0;
      if (done_ == 0) b.start_ms = std::max(now_, b.ready_ms);
      now_ = std::max(now_, b.ready_ms);
      const double left = work_[running_] - done_;
      if (now_ + left / rate <= until) {
        now_ += left / rate;
        b.end_ms = now_;
        done_ = 0;
        ++running_;
      } else {
        done_ += (until - now_) * rate;
        now_ = until;
      }
    }
    now_ = std::max(now_, until);
  }
  // Runs everything launched to the end at full speed; returns when it ends.
  double drain() {
    advance(std::numeric_limits<double>::infinity(), false);
    return running_ == 0 ? 0 : (*timings_)[running_ - 1].end_ms;
  }

 private:
  const std::vector<double>& work_;
  double rate_;
  std::vector<BucketTiming>* timings_;
  size_t launched_ = 0, running_ = 0;
  double done_ = 0;  // of the running all-reduce's work
  double now_ = 0;
};

}  // namespace

IterationPrediction predict_iteration(const Workload& w, const BucketPlan& plan,
                                      const std::vector<double>& bucket_comm_ms,
                                      const IterationModelOptions& options) {
  if (bucket_comm_ms.size() != plan.buckets.size())
    throw std::invalid_argument("model: one communication time per bucket is needed");
  if (!(options.comm_rate_during_compute > 0))
    throw std::invalid_argument("model: the communication rate during compute must be positive");
  IterationPrediction out;
  out.buckets.resize(plan.buckets.size());
  const double scale = options.compute_scale;
  const LaunchSchedule schedule = launch_schedule(w, plan);
  const auto& order = schedule.order;
  const auto& launch_after = schedule.bucket_step;
  CommStream stream(bucket_comm_ms, options.comm_rate_during_compute, &out.buckets);
  // A compute interval as the rank lives it: a zero-length one is no wait at all.
  // The share of the measured delays an interval of `us` gets.
  auto delay_share = [&](double us) {
    const double ref = options.step_delay_step_us;
    return ref > 0 ? std::min(1.0, us * scale / ref) : 1.0;
  };
  auto interval_ms = [&](double us) {
    return us > 0 ? us * scale / 1000 + options.step_delay_ms * delay_share(us) : 0;
  };
  double t = interval_ms(w.forward_us);
  size_t next = 0;  // next bucket to launch
  auto launch_through = [&](long step) {
    for (; next < launch_after.size() && launch_after[next] <= step; ++next) stream.launch(next, t);
  };
  stream.advance(t, false);
  launch_through(-1);
  for (size_t i = 0; i < order.size(); ++i) {
    const double us = w.params[order[i]].backward_us;
    double step_ms = interval_ms(us);
    if (step_ms > 0 && stream.busy()) step_ms += options.step_delay_under_comm_ms * delay_share(us);
    stream.advance(t + step_ms, true);
    t += step_ms;
    launch_through(long(i));
  }
  out.backward_end_ms = t;
  const double last_end = stream.drain();
  out.exposed_ms = std::max(0.0, last_end - out.backward_end_ms);
  out.comm_ms = out.buckets.empty() ? 0 : last_end - out.buckets.front().start_ms;
  out.iter_ms = out.backward_end_ms + out.exposed_ms + interval_ms(w.optimizer_us);
  return out;
}

}  // namespace ddpscope::tuner::model
