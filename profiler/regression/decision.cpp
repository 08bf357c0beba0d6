#include "profiler/regression/decision.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "profiler/regression/alike.h"

namespace ddpscope::regression {
namespace {

// One metric across the runs of both sides.
struct Compared {
  Verdict verdict;
  double floor = 0;
  RunSamples baseline, candidate;  // the runs with enough samples
  bool decidable = false;
};

bool wanted(const CheckOptions& o, const std::string& family) {
  return o.families.empty() ||
         std::find(o.families.begin(), o.families.end(), family) != o.families.end();
}

void gather(const std::vector<const RunMetrics*>& runs, bool is_baseline, const std::string& kind,
            const CheckOptions& o, std::vector<Compared>& out, std::map<std::string, size_t>& at) {
  for (const auto* run : runs)
    for (const auto& m : run->metrics) {
      if (!wanted(o, m.family)) continue;
      auto [it, fresh] = at.try_emplace(m.key, out.size());
      if (fresh) {
        Compared c;
        c.verdict.kind = kind;
        c.verdict.family = m.family;
        c.verdict.key = m.key;
        c.verdict.label = m.label;
        c.verdict.unit = m.unit;
        c.verdict.better = m.better;
        c.floor = m.floor;
        out.push_back(std::move(c));
      }
      auto& side = is_baseline ? out[it->second].baseline : out[it->second].candidate;
      auto& v = out[it->second].verdict;
      (is_baseline ? v.baseline_runs : v.candidate_runs) += 1;  // counted before the filter
      (is_baseline ? v.baseline_samples : v.candidate_samples) += m.samples.size();
      if (m.samples.size() >= o.min_samples) side.push_back(m.samples);
    }
}

uint64_t seed_of(const std::string& key) {  // FNV-1a: the same verdict on every platform
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Enough resamples that the interval's tails hold a couple of dozen of them
// (bounded: 20,000 leaves ~17 in each tail with 30 metrics).
int resamples_for(double level) {
  double tail = (1 - level) / 2;
  return int(std::clamp(std::ceil(25 / tail), 2000.0, 20000.0));
}

void decide(Compared& c, const CheckOptions& o, double level) {
  Verdict& v = c.verdict;
  v.baseline = centre(c.baseline, c.floor);
  v.candidate = centre(c.candidate, c.floor);
  v.change = v.candidate / v.baseline - 1;
  v.ratio = bootstrap_ratio(c.baseline, c.candidate,
                            {resamples_for(level), level, seed_of(v.key), c.floor});
  v.run_noise = run_noise(c.baseline, c.candidate, c.floor);
  // "Worse" as a factor > 1 whichever way the metric improves.
  Interval worse = v.better == Better::lower ? v.ratio : Interval{1 / v.ratio.hi, 1 / v.ratio.lo};
  if (worse.lo > 1 + o.tolerance)
    v.status = Status::regression;
  else if (worse.hi < 1 / (1 + o.tolerance))
    v.status = Status::improved;
  else
    v.status = Status::unchanged;
}

// Whether the metric can be decided, and if not why; counts the decidable.
void classify(Compared& c, CheckResult& result) {
  Verdict& v = c.verdict;
  if (v.baseline_runs == 0)
    v.status = Status::candidate_only;
  else if (v.candidate_runs == 0)
    v.status = Status::baseline_only;
  else if (c.baseline.empty() || c.candidate.empty())
    v.status = Status::too_few_samples;
  else {
    c.decidable = true;
    ++result.decided;
  }
}

void compare_facts(const Pairing& p, CheckResult& result) {
  const auto &base = p.baseline.front()->facts, &cand = p.candidate.front()->facts;
  for (size_t i = 0; i < base.size() && i < cand.size(); ++i)
    if (base[i].value != cand[i].value)
      result.changed_facts.push_back({p.kind, base[i].name, base[i].value, cand[i].value});
}

}  // namespace

const char* name_of(Status s) {
  switch (s) {
    case Status::regression:
      return "REGRESSION";
    case Status::improved:
      return "improved";
    case Status::unchanged:
      return "ok";
    case Status::too_few_samples:
      return "too few samples";
    case Status::baseline_only:
      return "only in baseline";
    case Status::candidate_only:
      return "only in candidate";
  }
  return "?";
}

int CheckResult::count(Status s) const {
  return int(std::count_if(verdicts.begin(), verdicts.end(),
                           [s](const Verdict& v) { return v.status == s; }));
}

bool CheckResult::run_noise_measured() const {
  return std::any_of(verdicts.begin(), verdicts.end(),
                     [](const Verdict& v) { return v.run_noise.has_value(); });
}

CheckResult check(const std::vector<RunMetrics>& baseline, const std::vector<RunMetrics>& candidate,
                  const CheckOptions& options) {
  CheckResult result;
  result.options = options;
  for (const auto& r : baseline) result.baseline_sources.push_back(r.source);
  for (const auto& r : candidate) result.candidate_sources.push_back(r.source);
  auto pairs = pair_alike(baseline, candidate);
  result.notes = pairs.unpaired;
  std::vector<Compared> all;
  for (const auto& p : pairs.alike) {
    std::map<std::string, size_t> at;  // per kind: keys never mix kinds
    gather(p.baseline, true, p.kind, options, all, at);
    gather(p.candidate, false, p.kind, options, all, at);
    compare_facts(p, result);
  }
  for (auto& c : all) classify(c, result);
  if (std::none_of(all.begin(), all.end(), [](const Compared& c) {
        return c.verdict.baseline_runs > 0 && c.verdict.candidate_runs > 0;
      }))
    throw InputError("no metric in common between baseline " + baseline.front().source +
                     " and candidate " + candidate.front().source +
                     " (different tuner settings, or --metric selects none of theirs)");
  // Bonferroni: with m metrics at 1 - a/m each, the chance that any of them
  // flags noise as a regression stays within a.
  result.level = 1 - (1 - options.confidence) / std::max(1, result.decided);
  for (auto& c : all) {
    if (c.decidable) decide(c, options, result.level);
    result.verdicts.push_back(std::move(c.verdict));
  }
  return result;
}

}  // namespace ddpscope::regression
