// The JSON the report's charts are drawn from. Compact on purpose (arrays and
// a string table for the timeline, rounded numbers, a binned heatmap): it is
// embedded in the page, which must stay small for long, wide runs.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "reports/html/html_parts.h"
#include "reports/sections/section.h"

namespace ddpscope::reports::html {
namespace {

using nlohmann::json;

double at_precision(double v, double step) {
  return std::isfinite(v) ? std::round(v / step) * step : 0;
}

// Spans as [rank, iteration, kind, name, start_ms, end_ms] with kind and name
// indexes into string tables: kernel names repeat thousands of times.
json timeline_data(const analysis::RunAnalysis& run) {
  json names = json::array(), kinds = json::array(), spans = json::array();
  std::map<std::string, int> name_ids, kind_ids;
  auto id_of = [](std::map<std::string, int>& ids, json& table, const std::string& s) {
    auto [it, added] = ids.emplace(s, int(ids.size()));
    if (added) table.push_back(s);
    return it->second;
  };
  // Over the cap, whole iterations are dropped: a half-drawn one would look
  // like ranks that stopped working.
  std::map<int, size_t> per_iteration;
  for (const auto& s : run.timeline) ++per_iteration[s.iteration];
  std::set<int> kept;
  size_t n = 0;
  for (auto [it, count] : per_iteration) {
    if (n + count > kMaxTimelineSpans && !kept.empty()) break;
    kept.insert(it);
    n += count;
  }
  for (const auto& s : run.timeline) {
    if (!kept.count(s.iteration)) continue;
    if (spans.size() == kMaxTimelineSpans) break;  // one iteration alone over the cap
    spans.push_back({s.rank, s.iteration, id_of(kind_ids, kinds, s.kind),
                     id_of(name_ids, names, s.name), at_precision(s.start_ms, 1e-4),
                     at_precision(s.end_ms, 1e-4)});
  }
  return {{"kinds", kinds},
          {"names", names},
          {"spans", spans},
          {"omitted", run.timeline.size() - spans.size()}};
}

json bucket_data(const analysis::RunAnalysis& run) {
  json out = json::array();
  for (const auto& b : run.buckets) {
    double hidden = std::max(0.0, b.median_us * b.overlap_pct / 100.0);
    out.push_back({{"index", b.index},
                   {"bytes", b.bytes},
                   {"calls", b.calls},
                   {"median_us", rounded(b.median_us, 4)},
                   {"p95_us", rounded(b.p95_us, 4)},
                   {"busbw", rounded(b.busbw_gbps, 4)},
                   {"overlap_pct", rounded(b.overlap_pct, 3)},
                   {"hidden_us", rounded(hidden, 4)},
                   {"exposed_us", rounded(std::max(0.0, b.exposed_us), 4)}});
  }
  return out;
}

json size_class_data(const analysis::RunAnalysis& run) {
  json out = json::array();
  for (const auto& s : run.collectives) {
    out.push_back({{"op", std::string(name_of(s.op))},
                   {"bytes", s.bytes},
                   {"nranks", s.nranks},
                   {"calls", s.calls},
                   {"median_us", rounded(s.median_us, 4)},
                   {"algbw", rounded(s.algbw_gbps, 4)},
                   {"busbw", rounded(s.busbw_gbps, 4)}});
  }
  return out;
}

}  // namespace

json chart_data(const analysis::RunAnalysis& run) {
  json data = {{"iterations", run.iterations.count},
               {"iteration_count", run.iteration_list.size()},
               {"timeline", timeline_data(run)},
               {"buckets", bucket_data(run)},
               {"sizes", size_class_data(run)}};
  for (const auto& section : sections())
    if (section.chart_data) section.chart_data(run, data);
  return data;
}

}  // namespace ddpscope::reports::html
