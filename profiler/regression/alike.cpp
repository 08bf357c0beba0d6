#include "profiler/regression/alike.h"

#include <set>

namespace ddpscope::regression {
namespace {

std::vector<const RunMetrics*> of_kind(const std::vector<RunMetrics>& runs,
                                       const std::string& kind) {
  std::vector<const RunMetrics*> out;
  for (const auto& r : runs)
    if (r.kind == kind) out.push_back(&r);
  return out;
}

std::string kinds_text(const std::vector<RunMetrics>& runs) {
  std::set<std::string> kinds;
  for (const auto& r : runs) kinds.insert(r.kind);
  std::string s;
  for (const auto& k : kinds)
    s += (s.empty() ? "" : " and ") + (k == "recorded run" ? "a " + k : k);
  return s;
}

void require_same_job(const RunMetrics& reference, const RunMetrics& run, const char* side) {
  for (size_t i = 0; i < reference.identity.size() && i < run.identity.size(); ++i) {
    const Field &want = reference.identity[i], &got = run.identity[i];
    if (want.value != got.value)
      throw InputError("not the same job: baseline " + reference.source + " has " + want.name +
                       " " + want.value + ", " + side + " " + run.source + " has " + got.value +
                       " (only like is compared with like: record a new baseline)");
  }
}

}  // namespace

Pairings pair_alike(const std::vector<RunMetrics>& baseline,
                    const std::vector<RunMetrics>& candidate) {
  Pairings out;
  for (const char* kind : {"recorded run", "tuner results"}) {
    Pairing p{kind, of_kind(baseline, kind), of_kind(candidate, kind)};
    if (p.baseline.empty() && p.candidate.empty()) continue;
    if (p.baseline.empty() || p.candidate.empty()) {
      out.unpaired.push_back(std::string(kind) + " only in the " +
                             (p.baseline.empty() ? "candidate" : "baseline") + ": not compared");
      continue;
    }
    for (const auto* r : p.baseline) require_same_job(*p.baseline.front(), *r, "baseline");
    for (const auto* r : p.candidate) require_same_job(*p.baseline.front(), *r, "candidate");
    out.alike.push_back(std::move(p));
  }
  if (out.alike.empty())
    throw InputError("nothing alike to compare: baseline " + baseline.front().path + " holds " +
                     kinds_text(baseline) + ", candidate " + candidate.front().path + " holds " +
                     kinds_text(candidate));
  return out;
}

}  // namespace ddpscope::regression
