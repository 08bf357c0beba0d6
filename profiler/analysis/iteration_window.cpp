#include "profiler/analysis/iteration_window.h"

#include <algorithm>
#include <climits>
#include <tuple>

#include "profiler/analysis/analyze.h"
#include "profiler/core/index_ranges.h"
#include "profiler/core/input_error.h"

namespace ddpscope::analysis {
namespace {

// The rank whose iterations number the window: the lowest asked for that the run has.
int numbering_rank(store::RunReader& reader, const std::vector<int>& ranks) {
  std::vector<int> recorded;
  for (const auto& p : reader.processes()) recorded.push_back(p.rank);
  std::sort(recorded.begin(), recorded.end());
  for (int r : recorded)
    if (ranks.empty() || std::binary_search(ranks.begin(), ranks.end(), r)) return r;
  throw InputError("--iterations: none of the ranks asked for is in the run");
}

}  // namespace

IterationWindow iteration_window(store::RunReader& reader, const std::string& spec,
                                 const std::vector<int>& ranks) {
  IterationWindow w;
  const auto ranges = core::parse_index_ranges(spec, "--iterations", INT_MAX / 2, "an iteration");
  if (ranges.size() != 1) throw InputError("--iterations " + spec + ": one range, e.g. 100-109");
  std::tie(w.first, w.last) = ranges.front();
  w.rank = numbering_rank(reader, ranks);

  // One rank's analysis: a 1/N share of the run's cost.
  const store::RunFilter kept = reader.filter();
  store::RunFilter one;
  one.ranks = {w.rank};
  reader.set_filter(one);
  const RunAnalysis run = analyze_run(reader);
  reader.set_filter(kept);

  const IterationStats *before = nullptr, *first = nullptr, *last = nullptr;
  int count = 0;
  for (const auto& s : run.iteration_list) {
    if (s.rank != w.rank) continue;
    ++count;
    if (s.index == w.first) first = &s;
    if (s.index == w.last) last = &s;
    if (s.index + 1 == w.first) before = &s;
  }
  if (!first || !last)
    throw InputError("--iterations " + spec + ": rank " + std::to_string(w.rank) +
                     (count ? " has iterations 0 to " + std::to_string(count - 1)
                            : " has no iterations (no repeating DDP all-reduce pattern)"));
  w.since_ns = before ? before->comm_end_ns : INT64_MIN;
  w.until_ns = last->comm_end_ns + 1;
  return w;
}

}  // namespace ddpscope::analysis
