// analyze_fsdp (fsdp_units.h): per rank, its steps and one sample per FSDP
// collective; then, over every rank's steady steps, the figures per unit and
// phase.
#include "profiler/analysis/fsdp_units.h"

#include <algorithm>
#include <optional>
#include <set>

#include "profiler/core/stats.h"

namespace ddpscope::analysis {
namespace {

bool all_gather(FsdpRegionKind k) {
  return k == FsdpRegionKind::forward_all_gather || k == FsdpRegionKind::backward_all_gather;
}

// One FSDP collective of one rank, as the unit figures need it.
struct Sample {
  int rank = 0, step = 0, unit = 0;
  FsdpRegionKind phase = FsdpRegionKind::forward_all_gather;
  Op ran = Op::allgather;
  int nranks = 0;
  uint64_t wire_bytes = 0;
  double dur_us = 0, exposed_us = 0;
  std::optional<double> slack_us, tail_us;
  bool prefetched = false;
  uint64_t comm_id = 0;
  Interval span;
};

// One rank's marks: where its steps begin, where each step's backward ended,
// and each unit's waits for its parameters.
struct Marks {
  std::vector<int64_t> steps;                                 // step start times, ascending
  std::vector<int64_t> backward_end;                          // per step; INT64_MAX: not seen
  std::map<int, std::vector<const FsdpRegionRecord*>> waits;  // per unit, by start

  int step_of(int64_t t) const {
    auto it = std::upper_bound(steps.begin(), steps.end(), t);
    return int(it - steps.begin()) - 1;  // -1: before the first step
  }
};

Marks marks_of(const FsdpRankAccount& acc) {
  Marks m;
  m.steps = step_starts(acc);
  m.backward_end.assign(m.steps.size(), INT64_MAX);
  for (const auto& r : acc.regions) {
    int s = m.step_of(r.start_ns);
    if (r.kind == FsdpRegionKind::backward_end && s >= 0) {  // the step's last backward
      auto& end = m.backward_end[size_t(s)];
      end = end == INT64_MAX ? r.start_ns : std::max(end, r.start_ns);
    }
    if (r.kind == FsdpRegionKind::wait) m.waits[r.unit].push_back(&r);
  }
  return m;
}

// The unit's first wait that began after its all-gather was issued.
const FsdpRegionRecord* wait_after(const Marks& m, int unit, int64_t issued) {
  auto w = m.waits.find(unit);
  if (w == m.waits.end()) return nullptr;
  auto it = std::lower_bound(w->second.begin(), w->second.end(), issued,
                             [](const FsdpRegionRecord* r, int64_t t) { return r->start_ns < t; });
  return it == w->second.end() ? nullptr : *it;
}

// CPU: the part of the collective the training thread spent blocked on it.
double blocked_us(const Sample& s, const FsdpRegionRecord& issued, const FsdpRegionRecord* wait,
                  int64_t backward_end) {
  std::vector<Interval> blocked;
  if (!(issued.flags & kFsdpAsync)) blocked.push_back({issued.start_ns, issued.end_ns});
  if (all_gather(s.phase) && wait) blocked.push_back({wait->start_ns, wait->end_ns});
  if (!all_gather(s.phase) && backward_end != INT64_MAX)
    blocked.push_back({backward_end, INT64_MAX});
  return double(covered(union_of(std::move(blocked)), s.span)) / 1e3;
}

Sample sample_of(const Call& c, const FsdpRegionRecord& issued, const Marks& m, int step,
                 const std::vector<Interval>& compute) {
  Sample s;
  s.step = step;
  s.unit = issued.unit;
  s.phase = issued.kind;
  s.ran = c.op;
  s.nranks = c.nranks;
  s.wire_bytes = c.bytes;
  s.comm_id = c.comm_id;
  s.span = {c.start, c.end};
  s.prefetched = (issued.flags & kFsdpPrefetch) != 0;
  s.dur_us = double(c.end - c.start) / 1e3;
  const FsdpRegionRecord* wait =
      all_gather(s.phase) ? wait_after(m, s.unit, issued.start_ns) : nullptr;
  const int64_t backward_end = m.backward_end[size_t(step)];
  if (!compute.empty())
    s.exposed_us = s.dur_us - double(covered(compute, s.span)) / 1e3;
  else
    s.exposed_us = blocked_us(s, issued, wait, backward_end);
  if (!all_gather(s.phase) && backward_end != INT64_MAX)
    s.tail_us = double(covered({{backward_end, INT64_MAX}}, s.span)) / 1e3;
  // When the unit needed its parameters: for an all-gather it asked for
  // itself, as it issued it (FSDP waits for it right after); for a prefetch,
  // when its wait began. The hook marks the waits of prefetched and async
  // all-gathers only: the others' would say nothing more.
  if (all_gather(s.phase) && !s.prefetched)
    s.slack_us = double(issued.start_ns - c.end) / 1e3;
  else if (wait)
    s.slack_us = double(wait->start_ns - c.end) / 1e3;
  return s;
}

std::vector<Sample> rank_samples(const FsdpRankInput& in, const Marks& m) {
  static const std::vector<Interval> kNone;
  const auto& compute = in.compute ? *in.compute : kNone;
  std::vector<Sample> out;
  for (const auto& c : in.calls) {
    auto r = in.account->region_of.find(c.id);
    if (r == in.account->region_of.end()) continue;
    const auto& issued = in.account->regions[r->second];
    int step = m.step_of(issued.start_ns);
    if (step < 0) continue;
    out.push_back(sample_of(c, issued, m, step, compute));
    out.back().rank = in.rank;
  }
  return out;
}

// The rank's steps as iterations: the first is warm-up; the last ends with
// its last FSDP collective (no next step starts it).
std::vector<IterationStats> rank_steps(int rank, const Marks& m, const std::vector<Sample>& ss) {
  std::vector<IterationStats> out(m.steps.size());
  std::vector<std::vector<Interval>> comm(m.steps.size());
  for (size_t k = 0; k < out.size(); ++k) {
    auto& it = out[k];
    it.rank = rank;
    it.index = int(k);
    it.warmup = k == 0;
    it.start_ns = it.launch_ns = m.steps[k];
    it.end_ns = k + 1 < out.size() ? m.steps[k + 1] : m.steps[k];
    if (k + 1 < out.size()) it.iter_ms = double(it.end_ns - it.start_ns) / 1e6;
  }
  for (const auto& s : ss) {
    auto& it = out[size_t(s.step)];
    comm[size_t(s.step)].push_back(s.span);
    it.fsdp_exposed_ms += s.exposed_us / 1e3;
    it.comm_end_ns = std::max(it.comm_end_ns, s.span.end);
    ++it.buckets;
  }
  for (size_t k = 0; k < out.size(); ++k) {
    auto u = union_of(comm[k]);
    out[k].fsdp_comm_ms = out[k].comm_busy_ms = double(total_length(u)) / 1e6;
    out[k].comm_ms = u.empty() ? 0 : double(u.back().end - u.front().start) / 1e6;
    out[k].exposed_ms = out[k].fsdp_exposed_ms;
    if (k + 1 == out.size()) out[k].end_ns = std::max(out[k].end_ns, out[k].comm_end_ns);
  }
  return out;
}

// --- the figures per unit and phase, over every rank's steady steps --------

struct PhaseSamples {
  std::vector<double> dur_us, slack_us, tail_us;
  std::map<std::pair<int, int>, std::pair<double, double>>
      per_step;  // (rank, step) -> (exposed, dur)
  uint64_t prefetched = 0;
  std::vector<double> wire;
  std::map<Op, int> ran;
  int nranks = 0;
};

Op asked(FsdpRegionKind phase) {
  if (all_gather(phase)) return Op::allgather;
  return phase == FsdpRegionKind::reduce_scatter ? Op::reduce_scatter : Op::allreduce;
}

// FSDP's own size of the phase: the unit's unsharded (padded) elements in the
// collective's dtype; HSDP's all-reduce carries the reduce-scatter's output.
void account_size(FsdpPhaseStats& p, const FsdpUnitFacts& f) {
  p.dtype = all_gather(p.phase) ? f.all_gather_dtype : f.reduce_dtype;
  uint64_t elem = dtype_bytes(parse_dtype(p.dtype).value_or(Dtype::unknown));
  uint64_t numel = f.unsharded_numel;
  if (p.phase == FsdpRegionKind::all_reduce && f.all_gather_size > 0) numel /= f.all_gather_size;
  p.bytes = numel * elem;
}

FsdpPhaseStats phase_stats(FsdpRegionKind phase, PhaseSamples& s, double steady_steps) {
  FsdpPhaseStats p;
  p.phase = phase;
  p.op = asked(phase);
  auto most = std::max_element(s.ran.begin(), s.ran.end(),
                               [](auto& a, auto& b) { return a.second < b.second; });
  if (most != s.ran.end() && most->first != p.op) p.carried_as = most->first;
  p.calls = s.dur_us.size();
  p.prefetched = s.prefetched;
  p.per_iteration = steady_steps > 0 ? double(p.calls) / steady_steps : 0;
  p.wire_bytes = uint64_t(stats::median(s.wire));
  p.median_us = stats::quantile(s.dur_us, 0.5);
  p.p95_us = stats::quantile(s.dur_us, 0.95);
  if (p.median_us > 0)
    p.busbw_gbps = double(p.wire_bytes) / (p.median_us * 1e3) *
                   busbw_factor(p.carried_as.value_or(p.op), s.nranks);
  std::vector<double> exposed;
  int mostly = 0;
  for (const auto& [key, ed] : s.per_step) {
    exposed.push_back(ed.first);
    if (ed.second > 0 && ed.first >= 0.5 * ed.second) ++mostly;
  }
  p.exposed_us = stats::quantile(exposed, 0.5);
  p.exposed_steps_pct = exposed.empty() ? 0 : 100.0 * mostly / double(exposed.size());
  if (!s.slack_us.empty()) p.slack_us = stats::quantile(s.slack_us, 0.5);
  if (!s.tail_us.empty()) p.tail_us = stats::quantile(s.tail_us, 0.5);
  return p;
}

// Whether the root's all-gathers and reduce-scatters shared one communicator,
// and whether any of them ran at the same time on a rank.
void communicators(FsdpRootStats& root, const std::vector<std::vector<Sample>>& samples,
                   const std::map<int, FsdpUnitFacts>& units) {
  std::set<uint64_t> ag, rs;
  for (const auto& rank : samples) {
    std::vector<Interval> g, r;
    for (const auto& s : rank) {
      if (!units.count(s.unit) || units.at(s.unit).root != root.root) continue;
      if (all_gather(s.phase)) ag.insert(s.comm_id), g.push_back(s.span);
      if (s.phase == FsdpRegionKind::reduce_scatter) rs.insert(s.comm_id), r.push_back(s.span);
    }
    auto both = g;
    both.insert(both.end(), r.begin(), r.end());
    if (total_length(union_of(g)) + total_length(union_of(r)) > total_length(union_of(both)))
      root.overlapped = true;
  }
  root.shared_comm = ag.size() == 1 && ag == rs;
}

std::vector<FsdpRootStats> unit_stats(const std::map<int, FsdpUnitFacts>& units,
                                      const std::vector<std::vector<Sample>>& samples,
                                      double steady_steps) {
  std::map<std::pair<int, FsdpRegionKind>, PhaseSamples> by;
  for (const auto& rank : samples)
    for (const auto& s : rank) {
      if (s.step == 0) continue;  // warm-up
      auto& p = by[{s.unit, s.phase}];
      p.dur_us.push_back(s.dur_us);
      if (s.slack_us) p.slack_us.push_back(*s.slack_us);
      if (s.tail_us) p.tail_us.push_back(*s.tail_us);
      auto& step = p.per_step[{s.rank, s.step}];
      step.first += s.exposed_us;
      step.second += s.dur_us;
      p.prefetched += s.prefetched;
      p.wire.push_back(double(s.wire_bytes));
      ++p.ran[s.ran];
      p.nranks = s.nranks;
    }
  std::map<int, FsdpRootStats> roots;
  for (const auto& [unit, f] : units) {
    auto& root = roots[f.root];
    root.root = f.root;
    if (unit == f.root) {
      // A hook before root_module named a root by its first unit's module.
      root.module = f.root_module.empty() ? f.module : f.root_module;
      root.world_size = f.all_gather_size;
      root.replicas = f.all_reduce_size;
    }
    FsdpUnitStats u{unit, f.fqn, f.module, f.params, f.reshard_after_forward, {}, {}};
    std::map<std::pair<int, int>, double> exposed;  // (rank, step) -> all-gathers' exposed
    for (auto& [key, s] : by) {
      if (key.first != unit) continue;
      u.phases.push_back(phase_stats(key.second, s, steady_steps));
      account_size(u.phases.back(), f);
      if (all_gather(key.second))
        for (const auto& [step, ed] : s.per_step) exposed[step] += ed.first;
    }
    for (const auto& [step, us] : exposed) u.all_gather_exposed_us.push_back(us);
    root.units.push_back(std::move(u));
  }
  std::vector<FsdpRootStats> out;
  for (auto& [id, root] : roots) {
    communicators(root, samples, units);
    out.push_back(std::move(root));
  }
  return out;
}

}  // namespace

FsdpAnalysis analyze_fsdp(const std::vector<FsdpRankInput>& ranks) {
  FsdpAnalysis out;
  std::vector<std::vector<Sample>> samples;
  const FsdpRankAccount* first = nullptr;
  double steady = 0;
  for (const auto& in : ranks) {
    if (!in.account || in.account->empty()) continue;
    if (!first) first = in.account;
    Marks m = marks_of(*in.account);
    samples.push_back(rank_samples(in, m));
    out.steps[in.rank] = rank_steps(in.rank, m, samples.back());
    steady += m.steps.empty() ? 0 : double(m.steps.size() - 1);
  }
  if (first) out.roots = unit_stats(first->units, samples, steady);
  return out;
}

}  // namespace ddpscope::analysis
