// The replay engine: one DDP training iteration per loop, with compute as
// busy-waits and each bucket's all-reduce launched the way DDP's reducer
// launches it (strictly in bucket order, as soon as the bucket is complete).
#include "tuner/replay.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "profiler/core/clock.h"

namespace ddpscope::tuner {
namespace {

double ms_between(int64_t from_ns, int64_t to_ns) { return double(to_ns - from_ns) / 1e6; }

// What one iteration of backward does, precomputed: the compute per ready
// step and, per step, how many buckets may be launched once it is done.
struct Schedule {
  std::vector<double> step_us;        // backward compute of the i-th ready gradient
  std::vector<size_t> launch_after;   // buckets launched by the end of step i (cumulative)
  size_t launch_before_backward = 0;  // leading buckets without gradients
};

Schedule make_schedule(const Workload& w, const BucketPlan& plan, double scale) {
  const LaunchSchedule launch = launch_schedule(w, plan);
  Schedule s;
  for (size_t p : launch.order) s.step_us.push_back(w.params[p].backward_us * scale);
  s.launch_after.assign(launch.order.size(), 0);
  for (size_t k = 0; k < launch.bucket_step.size(); ++k) {
    long step = launch.bucket_step[k];
    if (step < 0)
      s.launch_before_backward = k + 1;
    else
      s.launch_after[size_t(step)] = k + 1;
  }
  for (size_t i = 1; i < s.launch_after.size(); ++i)
    s.launch_after[i] = std::max(s.launch_after[i], s.launch_after[i - 1]);
  return s;
}

struct BucketTimes {
  int64_t first_start = 0, last_end = 0;
};

// Waits for every bucket (DDP's finalize_backward), in launch order.
BucketTimes wait_all(Backend& backend, const std::vector<int>& ids) {
  BucketTimes t;
  for (size_t k = 0; k < ids.size(); ++k) {
    int64_t start = 0, end = 0;
    backend.wait(ids[k], &start, &end);
    t.first_start = k == 0 ? start : std::min(t.first_start, start);
    t.last_end = k == 0 ? end : std::max(t.last_end, end);
  }
  return t;
}

IterationSample one_iteration(const Workload& w, const Schedule& s, Backend& backend,
                              const std::vector<int>& ids, double scale) {
  const int64_t iter_start = clock::monotonic_ns();
  spin_for_us(w.forward_us * scale);
  size_t launched = 0;
  auto launch_up_to = [&](size_t n) {
    for (; launched < n; ++launched) backend.start_allreduce(ids[launched]);
  };
  launch_up_to(s.launch_before_backward);
  for (size_t i = 0; i < s.step_us.size(); ++i) {
    spin_for_us(s.step_us[i]);
    launch_up_to(s.launch_after[i]);
  }
  launch_up_to(ids.size());  // a no-op: every bucket was due by the last step
  const int64_t backward_end = clock::monotonic_ns();
  BucketTimes comm = wait_all(backend, ids);
  spin_for_us(w.optimizer_us * scale);
  const int64_t iter_end = clock::monotonic_ns();

  IterationSample out;
  out.iter_ms = ms_between(iter_start, iter_end);
  if (!ids.empty()) {
    out.comm_ms = ms_between(comm.first_start, comm.last_end);
    out.exposed_ms = std::max(0.0, ms_between(backward_end, comm.last_end));
  }
  return out;
}

}  // namespace

void spin_for_us(double us) {
  if (!(us > 0)) return;
  // Busy-wait rather than sleep: real compute keeps the core busy, and a
  // sleeping rank would hand its core to the backend's threads for free.
  const int64_t end = clock::monotonic_ns() + int64_t(std::llround(us * 1000.0));
  while (clock::monotonic_ns() < end) {
  }
}

std::vector<IterationSample> replay(const Workload& w, const BucketPlan& plan, Backend& backend,
                                    const ReplayOptions& options) {
  const Schedule schedule = make_schedule(w, plan, options.compute_scale);
  std::vector<int> ids;
  ids.reserve(plan.buckets.size());
  for (const auto& bucket : plan.buckets) ids.push_back(backend.add_buffer(bucket.bytes));

  // One barrier so the ranks start together; afterwards the all-reduces
  // themselves keep them in step, as in a real job.
  backend.barrier();
  std::vector<IterationSample> samples;
  for (int it = 0; it < options.warmup + options.iters; ++it) {
    IterationSample sample = one_iteration(w, schedule, backend, ids, options.compute_scale);
    if (it >= options.warmup) samples.push_back(sample);
  }
  return samples;
}

}  // namespace ddpscope::tuner
