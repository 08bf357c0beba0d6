// Two ways to a workload from a recording. With DDP's own account (ddp_info):
// the reducer's real parameters, its gradient-ready order and its bucketing
// rules, so plan_buckets at another cap gives what DDP builds there. Without
// one (a non-Python job, a v1 file): one pseudo-gradient per bucket the
// analysis found in the all-reduce pattern, which can merge recorded buckets
// but never split one. Either way the times come from the analysis.
#include "tuner/workload_from_run.h"

#include <algorithm>

#include "profiler/analysis/analyze.h"
#include "profiler/store/reader.h"
#include "tuner/bucket_plan.h"
#include "tuner/recorded_ddp.h"

namespace ddpscope::tuner {
namespace {

constexpr double kMiB = 1024 * 1024;

// What is left of the iteration is forward, the first bucket's backward and
// the optimizer; it is not visible apart, so it all runs before backward.
void set_forward(Workload& w, const analysis::RunAnalysis& run) {
  const double rest_us =
      run.iterations.median_ms * 1e3 - w.backward_us() - run.iterations.exposed_median_ms * 1e3;
  w.forward_us = std::max(0.0, rest_us);
  w.optimizer_us = 0;
}

Workload from_pattern(const std::string& path, const analysis::RunAnalysis& run,
                      const std::string& why) {
  Workload w;
  w.name = "recorded:" + path;
  w.source = "the all-reduce pattern, one gradient per detected bucket (" + why + ")";
  // Bucket 0 is reduced first: its gradients became ready first. Params are
  // listed in model order (reverse of readiness), ready_order says the rest.
  for (const auto& b : run.buckets) {
    Param p;
    p.name = "bucket " + std::to_string(b.index);
    p.dtype = Dtype::float32;
    p.numel = std::max<uint64_t>(1, b.bytes / 4);
    p.backward_us = b.index == 0 ? 0 : b.launch_gap_us;
    w.params.insert(w.params.begin(), p);
  }
  size_t n = w.params.size();
  for (size_t i = 0; i < n; ++i) w.ready_order.push_back(n - 1 - i);
  set_forward(w, run);
  return w;
}

// torch's dtype names are ours, but for float8's longer ones.
std::optional<Dtype> torch_dtype(const std::string& name) {
  if (name == "float8_e4m3fn") return Dtype::fp8e4m3;
  if (name == "float8_e5m2") return Dtype::fp8e5m2;
  return parse_dtype(name);
}

// The reducer's parameters and the order their gradients became ready: the
// rebuilt layout flattened (each bucket holds its parameters in ready order,
// the buckets in the order they filled), or, before any rebuild, autograd's
// usual reverse module order. With several dtypes the flattening loses how
// their gradients interleaved, but re-planning at the recorded cap still
// gives DDP's recorded buckets.
std::optional<Workload> ddp_params(const RecordedDdp& d, const std::string& path,
                                   std::string* why) {
  Workload w;
  for (size_t i = 0; i < d.param_bytes.size(); ++i) {
    const auto dtype = torch_dtype(d.param_dtypes[i]);
    const unsigned size = dtype ? dtype_bytes(*dtype) : 0;
    if (!size) {
      *why = "DDP's parameter " + std::to_string(i) + " has dtype " + d.param_dtypes[i] +
             ", which the tuner cannot replay";
      return std::nullopt;
    }
    if (d.param_bytes[i] == 0 || d.param_bytes[i] % size)
      throw InputError(path + ": ddp_info: parameter " + std::to_string(i) + " of " +
                       std::to_string(d.param_bytes[i]) + " bytes is no whole number of " +
                       d.param_dtypes[i] + " elements");
    w.params.push_back({"param " + std::to_string(i), d.param_bytes[i] / size, *dtype, 0});
  }
  for (const auto& bucket : d.rebuilt_buckets)
    w.ready_order.insert(w.ready_order.end(), bucket.begin(), bucket.end());
  if (d.rebuilt_buckets.empty())
    for (size_t i = w.params.size(); i-- > 0;) w.ready_order.push_back(i);
  w.ddp = DdpBucketing{d.torch_version, d.explicit_cap_sets_first_bucket, d.rebuilds()};
  return w;
}

// The plan at the recorded setting: the limits DDP used, as they were (a
// job on torch 2.x that left bucket_cap_mb at its default had a 1 MiB first
// bucket under a 25 MiB cap, which the explicit-cap rule would not give).
BucketPlan plan_as_recorded(const Workload& w, const RecordedDdp& d) {
  Workload as_recorded = w;
  as_recorded.ddp->first_bucket_follows_cap = false;
  return plan_buckets(as_recorded, double(d.bucket_cap_bytes) / kMiB,
                      double(d.first_bucket_bytes) / kMiB);
}

std::vector<uint64_t> bytes_of(const std::vector<Bucket>& buckets) {
  std::vector<uint64_t> out;
  for (const auto& b : buckets) out.push_back(b.bytes);
  return out;
}

// DDP's steady buckets by parameter: its own rebuilt layout, or the
// constructor's as planned. Where DDP's recorded sizes are known, a plan
// that does not reproduce them is said in *mismatch: then ddpscope's
// bucketing does not model this DDP (e.g. bucket_cap_mb_list, sparse
// gradients, DDP_SET_LAST_BUCKET_CAP).
std::vector<std::vector<size_t>> steady_layout(const Workload& w, const RecordedDdp& d,
                                               std::string* mismatch) {
  const BucketPlan plan = plan_as_recorded(w, d);
  std::vector<std::vector<size_t>> layout = d.rebuilt_buckets;
  std::vector<uint64_t> recorded;
  if (!layout.empty()) {
    for (const auto& bucket : layout) {
      uint64_t bytes = 0;
      for (size_t i : bucket) bytes += d.param_bytes[i];
      recorded.push_back(bytes);
    }
  } else {
    for (const auto& b : plan.buckets) layout.push_back(b.params);
    if (!d.rebuilds()) recorded = d.bucket_sizes;  // else: it ended before rebuilding
  }
  if (!recorded.empty() && recorded != bytes_of(plan.buckets))
    *mismatch = "; ddpscope's bucketing does not reproduce DDP's recorded buckets";
  return layout;
}

// Backward time per parameter. The analysis measures, per bucket, the
// compute gap before its launch: the time its gradients took to become ready
// after the previous bucket's. Each gap is split over the bucket's
// parameters in proportion to their bytes (backward compute scales with a
// layer's size to first order, and it is the one per-parameter measure we
// have), so replaying the recorded cap launches every bucket when DDP did.
// Bucket 0's gradients get none, as in the pattern workload: the time before
// it is not told apart from forward. Where the analysis' buckets are not
// DDP's (another count), the gaps' sum is spread over all parameters alike.
void spread_backward(Workload& w, const std::vector<std::vector<size_t>>& layout,
                     const std::vector<analysis::BucketStats>& measured) {
  auto spread = [&](const std::vector<size_t>& params, double us) {
    uint64_t bytes = 0;
    for (size_t i : params) bytes += w.params[i].bytes();
    for (size_t i : params)
      w.params[i].backward_us += us * double(w.params[i].bytes()) / double(bytes);
  };
  if (measured.size() == layout.size()) {
    for (size_t k = 1; k < layout.size(); ++k) spread(layout[k], measured[k].launch_gap_us);
    return;
  }
  double total_us = 0;
  for (size_t k = 1; k < measured.size(); ++k) total_us += measured[k].launch_gap_us;
  spread(w.ready_order, total_us);
}

std::vector<analysis::BucketStats> buckets_of(const analysis::RunAnalysis& run, int instance) {
  std::vector<analysis::BucketStats> out;
  for (const auto& b : run.buckets)
    if (b.instance == instance) out.push_back(b);
  return out.empty() ? run.buckets : out;  // a pattern analysis labels every bucket 0
}

std::string describe(const RecordedDdp& d) {
  std::string s = "DDP's own layout (instance " + std::to_string(d.instance) + ", torch " +
                  (d.torch_version.empty() ? "?" : d.torch_version) + ", ";
  s += !d.rebuilds()               ? "constructor's buckets: never rebuilt"
       : d.rebuilt_buckets.empty() ? "not rebuilt yet: reverse module order"
                                   : "rebuilt from the gradient-ready order";
  s += d.explicit_cap_sets_first_bucket ? "; first bucket = bucket_cap_mb"
                                        : "; first bucket = _DEFAULT_FIRST_BUCKET_BYTES";
  return s;
}

Workload from_ddp(const std::string& path, const analysis::RunAnalysis& run, const RecordedDdp& d,
                  Workload w) {
  w.name = "recorded:" + path;
  std::string mismatch;
  const auto layout = steady_layout(w, d, &mismatch);
  spread_backward(w, layout, buckets_of(run, d.instance));
  set_forward(w, run);
  w.source = describe(d) + mismatch + ")";
  return w;
}

}  // namespace

Workload workload_from_run(const std::string& path) {
  store::RunReader reader(path);
  const auto run = analysis::analyze_run(reader);
  // A job sharded with FSDP2 only has no gradient buckets: its units'
  // all-gathers and reduce-scatters are not a DDP workload.
  if (run.buckets.empty() && !run.fsdp.empty())
    throw InputError(path +
                     ": an FSDP2 job without DDP; tune replays DDP's gradient buckets "
                     "only (`report` gives FSDP's units and their advice)");
  if (run.buckets.empty() || run.iterations.median_ms <= 0)
    throw InputError(path + ": no DDP iterations detected, nothing to replay");
  std::string why;
  if (const auto d = recorded_ddp(reader, path, &why))
    if (auto w = ddp_params(*d, path, &why)) return from_ddp(path, run, *d, std::move(*w));
  return from_pattern(path, run, why);
}

}  // namespace ddpscope::tuner
