// FSDP rules (recommend_rules.h): only what the unit figures measured. An
// all-gather exposed in most steps, a wrapping so fine that the fixed cost of
// each collective dominates, and reductions still running after backward.
#include <algorithm>

#include "profiler/analysis/recommend_rules.h"

namespace ddpscope::analysis::rules {
namespace {

struct Exposed {
  std::string unit;
  const FsdpPhaseStats* phase;
};

// In a sentence: "the root" rather than the tables' "(root)".
std::string unit_phrase(const FsdpUnitStats& u, const FsdpRootStats& root, size_t roots) {
  return (u.fqn.empty() ? "the root" : u.fqn) + of_root(root, roots);
}

// "blocks.0 1.8 ms in 90 % of steps, blocks.1 ... and 2 more"
std::string listing(std::vector<Exposed> xs) {
  std::sort(xs.begin(), xs.end(),
            [](auto& a, auto& b) { return a.phase->exposed_us > b.phase->exposed_us; });
  std::string text;
  for (size_t i = 0; i < xs.size() && i < 3; ++i)
    text += (i ? ", " : "") + xs[i].unit +
            fmt(" %.2f ms in %.0f%% of steps", xs[i].phase->exposed_us / 1e3,
                xs[i].phase->exposed_steps_pct);
  if (xs.size() > 3) text += fmt(" and %zu more", xs.size() - 3);
  return text;
}

// Exposed in most steps: prefetch where it does not happen; where it does and
// the all-gather still blocks, earlier or asynchronous unsharding. Not the
// forward all-gather of the root's first unit (the root's own, or where the
// root module holds no parameters its first child's): its forward's first,
// no unit runs before it to prefetch it.
void exposed_all_gathers(const FsdpRootStats& root, size_t roots, FsdpRegionKind phase,
                         std::vector<Recommendation>& out) {
  const bool forward = phase == FsdpRegionKind::forward_all_gather;
  std::vector<Exposed> late, prefetched_late;
  for (const auto& u : root.units)
    for (const auto& p : u.phases)
      if (p.phase == phase && p.exposed_steps_pct > 50 && p.exposed_us > 0 &&
          !(forward && u.unit == root.root))
        (2 * p.prefetched < p.calls ? late : prefetched_late)
            .push_back({unit_phrase(u, root, roots), &p});
  const char* pass = forward ? "forward" : "backward";
  if (!late.empty())
    out.push_back({"FSDP prefetch",
                   forward ? "set_modules_to_forward_prefetch" : "set_modules_to_backward_prefetch",
                   fmt("%s all-gathers the compute waits for, issued only when needed: %s", pass,
                       listing(late).c_str())});
  if (!prefetched_late.empty())
    out.push_back({"FSDP prefetch",
                   "prefetch further ahead, or unshard asynchronously "
                   "(_set_unshard_async_op(True))",
                   fmt("%s all-gathers prefetched yet still waited for: %s", pass,
                       listing(prefetched_late).c_str())});
}

// The quickest all-gather bounds the fixed cost of one collective. Not the
// smallest one's time: the step's first all-gather (often the root's, the
// smallest) also waits for the last rank to arrive. Only where sizes differ
// (the smallest a quarter or less of the largest), else time cannot tell the
// fixed cost from the bytes.
void fine_wrapping(const FsdpRootStats& root, std::vector<Recommendation>& out) {
  const FsdpPhaseStats *small = nullptr, *large = nullptr, *quickest = nullptr;
  double total_us = 0, calls = 0;
  for (const auto& u : root.units)
    for (const auto& p : u.phases) {
      if (p.op != Op::allgather || p.median_us <= 0) continue;
      if (!small || p.bytes < small->bytes) small = &p;
      if (!large || p.bytes > large->bytes) large = &p;
      if (!quickest || p.median_us < quickest->median_us) quickest = &p;
      total_us += p.median_us * p.per_iteration;
      calls += p.per_iteration;
    }
  if (!small || total_us <= 0 || 4 * small->bytes > large->bytes) return;
  double share = std::min(1.0, quickest->median_us * calls / total_us);
  if (share < 0.5) return;
  out.push_back({"fully_shard wrapping", "fewer, larger units (several blocks per fully_shard)",
                 fmt("all-gathers of %.1f to %.1f KiB each take %.0f us or more (medians): at "
                     "that cost per call, the %.0f all-gathers per step spend %.0f%% of their "
                     "%.2f ms on the per-collective cost, not on bytes",
                     small->bytes / 1024.0, large->bytes / 1024.0, quickest->median_us, calls,
                     100 * share, total_us / 1e3)});
}

// Reductions still running after autograd finished delay the optimizer.
void reduction_tail(const RunAnalysis& run, const FsdpRootStats& root,
                    std::vector<Recommendation>& out) {
  double tail_us = 0;
  for (const auto& u : root.units)
    for (const auto& p : u.phases)
      if (p.tail_us) tail_us += *p.tail_us * p.per_iteration;
  double step_ms = run.iterations.median_ms;
  if (step_ms <= 0 || tail_us / 1e3 < 0.05 * step_ms) return;
  out.push_back({"FSDP reduce-scatter tail", "smaller units for the modules forward runs first",
                 fmt("reduce-scatters (and all-reduces) run %.2f ms per step after backward "
                     "ended, %.0f%% of the %.2f ms step: the optimizer waits for them",
                     tail_us / 1e3, 100 * tail_us / 1e3 / step_ms, step_ms)});
}

}  // namespace

void fsdp_rules(const RunAnalysis& run, std::vector<Recommendation>& out) {
  for (const auto& root : run.fsdp) {
    exposed_all_gathers(root, run.fsdp.size(), FsdpRegionKind::forward_all_gather, out);
    exposed_all_gathers(root, run.fsdp.size(), FsdpRegionKind::backward_all_gather, out);
    fine_wrapping(root, out);
    reduction_tail(run, root, out);
  }
}

}  // namespace ddpscope::analysis::rules
