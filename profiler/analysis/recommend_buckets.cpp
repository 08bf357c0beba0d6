// bucket_cap_mb advice in terms of the instance's own cap and bucket layout.
//
// DDP fills a bucket with gradients in reduction order and closes it once it
// reaches its limit (bucket_cap_mb; on rebuild the first bucket has its own,
// first_bucket_bytes), so each bucket but the last of a dtype is at least its
// limit, and one of twice the larger limit or more must hold a single tensor
// larger than the cap: DDP never splits a tensor between buckets. The rules
// take the timing from the measured buckets and, where DDP gave them, the cap
// and layout from DDP itself; with the configuration unknown (pattern
// fall-back) a value is derived from the bucket sizes alone, never from DDP's
// default cap.
//
// At most one bucket_cap_mb advice per instance, because the directions
// conflict; tried in this order: a bucket that holds most of the gradient
// (smaller, or "no cap helps" if it is one tensor), an exposed last bucket
// (smaller), small buckets far below the run's best all-reduce bandwidth
// (larger).
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "profiler/analysis/recommend_rules.h"
#include "profiler/core/stats.h"

namespace ddpscope::analysis::rules {
namespace {

// Exposed communication costs step time one for one, but a smaller cap buys
// overlap with more per-collective latency, so the gain is below the exposed
// time: only a share this large is worth re-bucketing for.
constexpr double kExposedShare = 0.15;

// One DDP instance's buckets: the measured ones (reduction order) and their
// sizes, DDP's own where it gave a layout of the same length.
struct InstanceBuckets {
  int instance = 0;
  const DdpInstanceSummary* config = nullptr;  // null: unknown (pattern)
  std::vector<const BucketStats*> measured;
  std::vector<uint64_t> bytes;  // per measured bucket
  uint64_t total = 0;           // the instance's gradient bytes per iteration
};

std::vector<InstanceBuckets> by_instance(const RunAnalysis& run) {
  std::set<int> ids;
  for (const auto& b : run.buckets) ids.insert(b.instance);
  std::vector<InstanceBuckets> out;
  for (int id : ids) {
    InstanceBuckets ib;
    ib.instance = id;
    ib.config = known_config(run, id);
    for (const auto& b : run.buckets)
      if (b.instance == id) ib.measured.push_back(&b);
    bool layout = ib.config && ib.config->bucket_bytes.size() == ib.measured.size();
    for (size_t i = 0; i < ib.measured.size(); ++i)
      ib.bytes.push_back(layout ? ib.config->bucket_bytes[i] : ib.measured[i]->bytes);
    for (uint64_t x : ib.bytes) ib.total += x;
    out.push_back(std::move(ib));
  }
  return out;
}

uint64_t cap_of(const InstanceBuckets& b) { return b.config ? b.config->bucket_cap_bytes : 0; }

std::string cap_text(const InstanceBuckets& b) {
  return cap_of(b) ? fmt("your cap is %.3g MiB; ", mib(cap_of(b))) : "";
}

std::string lead(const RunAnalysis& run, const InstanceBuckets& b) {
  return instance_prefix(run, b.instance) + cap_text(b);
}

std::string step_share(const RunAnalysis& run, double us) {
  return fmt("%.0f%% of the %.1f ms step", 100 * us / (run.iterations.median_ms * 1e3),
             run.iterations.median_ms);
}

// Known cap only: a bucket of twice the larger limit or more holds one tensor
// of at least (bucket - limit) bytes, which no cap can split.
bool one_oversized_tensor(const InstanceBuckets& b, uint64_t bytes) {
  if (!cap_of(b)) return false;
  return bytes >= 2 * std::max(b.config->bucket_cap_bytes, b.config->first_bucket_bytes);
}

Recommendation no_cap_helps(const RunAnalysis& run, const InstanceBuckets& b, size_t i) {
  uint64_t limit = std::max(b.config->bucket_cap_bytes, b.config->first_bucket_bytes);
  return {"bucket_cap_mb", "no smaller value helps",
          lead(run, b) +
              fmt("bucket %d (%.2f MiB) is at least twice its limit, so one gradient tensor in it "
                  "holds at least %.2f MiB: DDP never splits a tensor between buckets, so no "
                  "smaller cap shortens its %.0f us of exposed communication (",
                  b.measured[i]->index, mib(b.bytes[i]), mib(b.bytes[i] - limit),
                  b.measured[i]->exposed_us) +
              step_share(run, b.measured[i]->exposed_us) + ")"};
}

bool exposed_enough(const RunAnalysis& run, const BucketStats& s) {
  return run.iterations.median_ms > 0 &&
         s.exposed_us >= kExposedShare * run.iterations.median_ms * 1e3;
}

// One bucket holds half the gradient or more: its all-reduce waits for all of
// its gradients, so little of the backward is left to hide it behind. About
// four buckets give overlap without many more collectives.
std::optional<Recommendation> dominant_bucket(const RunAnalysis& run, const InstanceBuckets& b) {
  size_t i = std::max_element(b.bytes.begin(), b.bytes.end()) - b.bytes.begin();
  const BucketStats& s = *b.measured[i];
  if (2 * b.bytes[i] < b.total || !exposed_enough(run, s)) return std::nullopt;
  if (one_oversized_tensor(b, b.bytes[i])) return no_cap_helps(run, b, i);
  double target = double(b.total) / 4;
  if (cap_of(b) && target >= double(cap_of(b))) return std::nullopt;
  return Recommendation{
      "bucket_cap_mb", fmt("%.3g", mib(target)),
      lead(run, b) +
          fmt("bucket %d holds %.2f MiB of the %.2f MiB of gradients in %d bucket%s, so its "
              "all-reduce cannot start before all %.2f MiB are ready: %.0f us of it is exposed, ",
              s.index, mib(b.bytes[i]), mib(b.total), int(b.bytes.size()),
              b.bytes.size() == 1 ? "" : "s", mib(b.bytes[i]), s.exposed_us) +
          step_share(run, s.exposed_us) +
          ": a cap of a quarter of the gradient gives about 4 buckets that start while backward "
          "still runs"};
}

// The last bucket (the first layers' gradients, ready last) is exposed for a
// large share of the step and is not a small remainder: halving the cap
// (or, with the cap unknown, the largest bucket) lets more of it start while
// backward still runs.
std::optional<Recommendation> exposed_last_bucket(const RunAnalysis& run,
                                                  const InstanceBuckets& b) {
  size_t i = b.measured.size() - 1;
  const BucketStats& last = *b.measured[i];
  if (!exposed_enough(run, last) || double(b.bytes[i]) < stats::median(b.bytes))
    return std::nullopt;
  if (one_oversized_tensor(b, b.bytes[i])) return no_cap_helps(run, b, i);
  uint64_t base = cap_of(b) ? cap_of(b) : *std::max_element(b.bytes.begin(), b.bytes.end());
  return Recommendation{"bucket_cap_mb", fmt("%.3g", mib(double(base) / 2)),
                        lead(run, b) +
                            fmt("the last bucket (%.2f MiB) runs %.0f us after backward ends, ",
                                mib(b.bytes[i]), last.exposed_us) +
                            step_share(run, last.exposed_us) +
                            (cap_of(b) ? ": half the cap" : ": half the largest bucket's size") +
                            " lets more of it start while backward still runs"};
}

// The best all-reduce bus bandwidth the run reached at any size: what the
// buckets could get if they were large enough.
const SizeClassStats* best_allreduce(const RunAnalysis& run) {
  const SizeClassStats* best = nullptr;
  for (const auto& s : run.collectives)
    if (s.op == Op::allreduce && (!best || s.busbw_gbps > best->busbw_gbps)) best = &s;
  return best && best->busbw_gbps > 0 ? best : nullptr;
}

// The measured bucket whose size is nearest the median (on a tie the larger,
// then the later): the bucket a typical bucket's bandwidth is read from.
const BucketStats& typical_bucket(const InstanceBuckets& b, double median) {
  size_t typical = 0;
  for (size_t i = 1; i < b.bytes.size(); ++i) {
    double d = std::abs(double(b.bytes[i]) - median);
    double best = std::abs(double(b.bytes[typical]) - median);
    if (d < best || (d == best && b.bytes[i] >= b.bytes[typical])) typical = i;
  }
  return *b.measured[typical];
}

// Many small buckets far below the bandwidth larger all-reduces reached in the
// same run: fewer, larger buckets amortise the per-collective latency. The
// new cap is 4x the current one (or the median bucket, which a cap never
// exceeds by much when the cap is unknown), at most half the gradient so
// that two buckets remain to overlap.
std::optional<Recommendation> small_slow_buckets(const RunAnalysis& run, const InstanceBuckets& b) {
  const SizeClassStats* best = best_allreduce(run);
  double median = stats::median(b.bytes);
  if (b.bytes.size() < 8 || mib(median) >= 4 || !best) return std::nullopt;
  double busbw = typical_bucket(b, median).busbw_gbps;
  if (busbw >= 0.5 * best->busbw_gbps) return std::nullopt;
  double base = cap_of(b) ? double(cap_of(b)) : median;
  double target = std::min(4 * base, double(b.total) / 2);
  if (target <= base) return std::nullopt;
  return Recommendation{
      "bucket_cap_mb", fmt("%.3g", mib(target)),
      lead(run, b) +
          fmt("%d buckets per iteration of median %.2f MiB reach %.2f GB/s bus bandwidth, under "
              "half the best all-reduce in this run (%.2f GB/s at %.2f MiB): larger buckets "
              "amortise the per-collective latency",
              int(b.bytes.size()), mib(median), busbw, best->busbw_gbps, mib(best->bytes))};
}

}  // namespace

void bucket_rules(const RunAnalysis& run, std::vector<Recommendation>& out) {
  for (const auto& b : by_instance(run)) {
    auto advice = dominant_bucket(run, b);
    if (!advice) advice = exposed_last_bucket(run, b);
    if (!advice) advice = small_slow_buckets(run, b);
    if (advice) out.push_back(*advice);
  }
}

}  // namespace ddpscope::analysis::rules
