#include "tuner/model/iteration_model.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace ddpscope::tuner::model {
namespace {

// The order gradients become ready in: the workload's, or reverse parameter
// order (what DDP assumes, and what replay() uses, when none is given).
std::vector<size_t> ready_order_of(const Workload& w) {
  if (!w.ready_order.empty()) return w.ready_order;
  std::vector<size_t> order(w.params.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = order.size() - 1 - i;
  return order;
}

// Position of each parameter in ready order; throws for a bad ready_order.
std::vector<long> ready_positions(const Workload& w, const std::vector<size_t>& order) {
  std::vector<long> position(w.params.size(), -1);
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] >= w.params.size())
      throw std::invalid_argument("model: ready_order names parameter " + std::to_string(order[i]) +
                                  " of " + std::to_string(w.params.size()));
    position[order[i]] = long(i);
  }
  return position;
}

// The ready step after which each bucket is launched: the step readying its
// last gradient, but never before its predecessor's (a running maximum);
// -1 for a bucket due before backward.
std::vector<long> launch_steps(const Workload& w, const BucketPlan& plan,
                               const std::vector<long>& position) {
  std::vector<long> steps;
  long step = -1;
  for (size_t k = 0; k < plan.buckets.size(); ++k) {
    for (size_t p : plan.buckets[k].params) {
      if (p >= position.size() || position[p] < 0)
        throw std::invalid_argument("model: bucket " + std::to_string(k) + " holds parameter " +
                                    std::to_string(p) + ", which never becomes ready");
      step = std::max(step, position[p]);
    }
    steps.push_back(step);
  }
  return steps;
}

// The one comm stream: launched all-reduces run one at a time, in order.
class CommStream {
 public:
  // `rate[k]`: bucket k's speed while the rank computes (1 once it waits).
  CommStream(const std::vector<double>& work_ms, const std::vector<double>& rate,
             std::vector<BucketTiming>* timings)
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
      const double rate = computing ? rate_[running_] : 1.0;
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
  const std::vector<double>& rate_;
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
  std::vector<double> rates = options.bucket_comm_rate_during_compute;
  if (rates.empty()) rates.assign(plan.buckets.size(), options.comm_rate_during_compute);
  if (rates.size() != plan.buckets.size())
    throw std::invalid_argument("model: one communication rate per bucket is needed");
  for (double r : rates)
    if (!(r > 0))
      throw std::invalid_argument("model: the communication rate during compute must be positive");
  IterationPrediction out;
  out.buckets.resize(plan.buckets.size());
  const double scale = options.compute_scale;
  const auto order = ready_order_of(w);
  const auto launch_after = launch_steps(w, plan, ready_positions(w, order));
  CommStream stream(bucket_comm_ms, rates, &out.buckets);
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
