// The report's text sections: the run header, the summary cards and the
// recommendations. Every string from the run is escaped here.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "profiler/core/stats.h"
#include "reports/html/html_parts.h"

namespace ddpscope::reports::html {
namespace {

void meta_item(std::ostream& out, const char* label, const std::string& value, bool wide = false) {
  out << (wide ? "<div class=\"wide\">" : "<div>") << "<dt>" << label << "</dt><dd>"
      << (value.empty() ? "-" : escape(value)) << "</dd></div>\n";
}

void card(std::ostream& out, const char* label, const std::string& value, const std::string& sub,
          const char* extra_class = "") {
  out << "<div class=\"card" << extra_class << "\"><div class=\"label\">" << label
      << "</div><div class=\"value\">" << escape(value) << "</div><div class=\"sub\">"
      << escape(sub) << "</div></div>\n";
}

// Buckets per iteration: the steady bucket layout when there is one, else the
// median over the iterations seen.
int buckets_per_iteration(const analysis::RunAnalysis& run) {
  if (!run.buckets.empty()) return int(run.buckets.size());
  std::vector<int> counts;
  for (const auto& it : run.iteration_list) counts.push_back(it.buckets);
  if (counts.empty()) return 0;
  return int(std::lround(stats::median(counts)));  // a count is whole: halves up
}

}  // namespace

void write_header(const analysis::RunAnalysis& run, std::ostream& out) {
  out << "<header class=\"run\">\n<h1>ddpscope report</h1>\n<dl class=\"meta\">\n";
  meta_item(out, "run", run.path, true);
  meta_item(out, "command", run.command, true);
  std::string world = std::to_string(run.world_size);
  if (run.ranks_recorded != run.world_size) {
    world += " (" + std::to_string(run.ranks_recorded) + " recorded)";
  }
  meta_item(out, "world size", world);
  meta_item(out, "backend", run.backend);
  meta_item(out, "timing source", run.timing);
  meta_item(out, "compute source", run.compute_source);
  out << "</dl>\n</header>\n";
}

namespace {

// Where the buckets came from, per DDP instance (docs/analysis.md).
std::string buckets_source(const analysis::RunAnalysis& run) {
  if (run.ddp.empty()) return "no DDP found";
  std::string s;
  for (const auto& d : run.ddp) {
    if (!s.empty()) s += "; ";
    if (run.ddp.size() > 1) s += "DDP " + std::to_string(d.instance) + ": ";
    s +=
        d.buckets_from == "ddp" ? "from DDP's own account" : "inferred from the all-reduce pattern";
  }
  return s;
}

}  // namespace

void write_cards(const analysis::RunAnalysis& run, std::ostream& out) {
  const auto& it = run.iterations;
  out << "<section class=\"cards\" id=\"summary\">\n";
  card(out, "iterations", std::to_string(it.count),
       it.count == 0
           ? "no iterations detected"
           : "median " + fixed(it.median_ms, 2) + " ms, p95 " + fixed(it.p95_ms, 2) + " ms" +
                 (it.warmup ? ", " + std::to_string(it.warmup) + " warm-up" : ""));
  card(out, "communication / iteration", fixed(it.comm_median_ms, 2) + " ms",
       "median; busy " + fixed(it.busy_median_ms, 2) + " ms", " comm");
  double exposed_pct = it.median_ms > 0 ? 100.0 * it.exposed_median_ms / it.median_ms : 0;
  card(out, "exposed communication", fixed(it.exposed_median_ms, 2) + " ms",
       fixed(exposed_pct, 1) + "% of the median iteration", exposed_pct >= 10 ? " warn" : "");
  card(out, "buckets / iteration", std::to_string(buckets_per_iteration(run)),
       std::to_string(run.buckets.size()) + " bucket positions, " + buckets_source(run));
  auto slowest = std::max_element(run.ranks.begin(), run.ranks.end(), [](auto& a, auto& b) {
    return analysis::straggle_ms(a) < analysis::straggle_ms(b);
  });
  if (slowest == run.ranks.end()) {
    card(out, "slowest rank", "-", "no ranks recorded");
  } else {
    card(out, "slowest rank", "rank " + std::to_string(slowest->rank),
         "median " + fixed(analysis::straggle_ms(*slowest), 2) + " ms late" +
             (slowest->host.empty() ? "" : " (" + slowest->host + ")"));
  }
  uint64_t dropped = std::accumulate(run.ranks.begin(), run.ranks.end(), uint64_t{0},
                                     [](uint64_t s, auto& r) { return s + r.dropped_events; });
  card(out, "dropped events", std::to_string(dropped),
       dropped ? "raise DDPSCOPE_BUFFER_EVENTS" : "none lost", dropped ? " warn" : "");
  out << "</section>\n";
}

void write_recommendations(const analysis::RunAnalysis& run, std::ostream& out) {
  out << "<section id=\"recommendations\">\n<h2>Recommendations</h2>\n";
  if (run.recommendations.empty()) {
    out << "<p class=\"note\">No recommendations: nothing stood out in this run.</p>\n";
  } else {
    out << "<ol class=\"recs\">\n";
    for (const auto& r : run.recommendations) {
      out << "<li><span class=\"setting\">" << escape(r.setting) << "</span>";
      if (!r.value.empty())
        out << " <span class=\"arrow\">&rarr;</span> <code>" << escape(r.value) << "</code>";
      out << "<p>" << escape(r.reason) << "</p></li>\n";
    }
    out << "</ol>\n";
  }
  out << "</section>\n";
}

}  // namespace ddpscope::reports::html
