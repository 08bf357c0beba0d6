// Stragglers: how late each rank enters the collectives and iterations after
// the first rank (profiler/analysis/stragglers.cpp), in every format: the
// terminal's rank table, JSON's `ranks` and `lateness`, ranks.csv, and the
// page's rank table and lateness heatmap (drawn by reports/html/timeline.js).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "reports/csv_table.h"
#include "reports/html/html_parts.h"
#include "reports/json_fields.h"
#include "reports/sections/section.h"
#include "reports/text_line.h"

namespace ddpscope::reports {
namespace {

// --- the terminal ---

void print_rank_row(const analysis::RankStats& r, std::ostream& out) {
  line(out, "%-5d %-16s %12.3f %12.3f %12.3f %10.1f %12.2f %12.2f", r.rank, r.host.c_str(),
       r.late_ms_median, r.late_ms_p95, r.iteration_late_ms_median, r.last_share_pct,
       r.iter_ms_median, r.comm_ms_median);
}

// Past kRanksShown ranks a terminal shows the latest ranks and one line for
// the rest: at 1,024 ranks the straggler must not scroll away. The CSV and
// JSON keep every rank; `report --ranks` narrows the run.
constexpr size_t kRanksShown = 16;

void print_ranks(const RunAnalysis& run, std::ostream& out) {
  if (run.ranks.size() < 2) return;
  const bool all = run.ranks.size() <= kRanksShown;
  if (!all)
    line(out, "ranks: the %zu latest of %zu (by median lateness)", kRanksShown, run.ranks.size());
  line(out, "%-5s %-16s %12s %12s %12s %10s %12s %12s", "rank", "host", "late ms med",
       "late ms p95", "iter late ms", "last %", "iter ms med", "comm ms med");
  std::vector<const analysis::RankStats*> order;
  for (const auto& r : run.ranks) order.push_back(&r);
  if (!all)
    std::stable_sort(order.begin(), order.end(),
                     [](auto* a, auto* b) { return a->late_ms_median > b->late_ms_median; });
  for (size_t i = 0; i < order.size() && (all || i < kRanksShown); ++i)
    print_rank_row(*order[i], out);
  if (!all) {
    double low = order.back()->late_ms_median, high = order[kRanksShown]->late_ms_median;
    line(out, "... %zu more ranks, late ms med %.3f to %.3f (all in --csv and --json)",
         order.size() - kRanksShown, low, high);
  }
  out << "\n";
}

// --- JSON ---

using json_fields::Json;
using json_fields::num;

Json to_json(const analysis::RankStats& r) {
  return {{"rank", r.rank},
          {"host", r.host},
          {"late_ms_median", num(r.late_ms_median)},
          {"late_ms_p95", num(r.late_ms_p95)},
          {"late_ms_max", num(r.late_ms_max)},
          {"iteration_late_ms_median", num(r.iteration_late_ms_median)},
          {"last_share_pct", num(r.last_share_pct)},
          {"clock_correction_us", num(r.clock_correction_us)},
          {"clock_drift_ppm", num(r.clock_drift_ppm)},
          {"clock_residual_us", num(r.clock_residual_us)},
          {"kernel_overlap_pct", num(r.kernel_overlap_pct)},
          {"iter_ms_median", num(r.iter_ms_median)},
          {"comm_ms_median", num(r.comm_ms_median)},
          {"collectives", r.collectives},
          {"dropped_events", r.dropped_events},
          {"iterations", r.iterations},
          {"shadow_iterations", r.shadow_iterations},
          {"exit_code", r.exit_code >= 0 ? Json(r.exit_code) : Json()},
          {"signal", r.signal > 0 ? Json(r.signal) : Json()},
          {"finalized", r.finalized}};
}

Json lateness(const RunAnalysis& run) {
  Json rows = Json::array();
  for (const auto& rank_row : run.lateness) {
    Json row = Json::array();
    for (double v : rank_row) row.push_back(num(v));
    rows.push_back(std::move(row));
  }
  return rows;
}

void json_stragglers(const RunAnalysis& run, Json& report) {
  Json ranks = Json::array();
  for (const auto& r : run.ranks) ranks.push_back(to_json(r));
  report["ranks"] = std::move(ranks);
  report["lateness"] = lateness(run);
}

// --- CSV ---

void csv_stragglers(const RunAnalysis& run, const std::string& dir) {
  using R = analysis::RankStats;
  csv::write_table<R>(
      dir + "/ranks.csv",
      {{"rank", [](const R& r) { return csv::num(r.rank); }},
       {"host", [](const R& r) { return r.host; }},
       {"late_ms_median", [](const R& r) { return csv::num(r.late_ms_median); }},
       {"late_ms_p95", [](const R& r) { return csv::num(r.late_ms_p95); }},
       {"late_ms_max", [](const R& r) { return csv::num(r.late_ms_max); }},
       {"iteration_late_ms_median",
        [](const R& r) { return csv::num(r.iteration_late_ms_median); }},
       {"last_share_pct", [](const R& r) { return csv::num(r.last_share_pct); }},
       {"clock_correction_us", [](const R& r) { return csv::num(r.clock_correction_us); }},
       {"iter_ms_median", [](const R& r) { return csv::num(r.iter_ms_median); }},
       {"comm_ms_median", [](const R& r) { return csv::num(r.comm_ms_median); }},
       {"collectives", [](const R& r) { return csv::num(r.collectives); }},
       {"dropped_events", [](const R& r) { return csv::num(r.dropped_events); }},
       {"clock_drift_ppm", [](const R& r) { return csv::num(r.clock_drift_ppm); }},
       {"clock_residual_us", [](const R& r) { return csv::num(r.clock_residual_us); }},
       {"kernel_overlap_pct", [](const R& r) { return csv::num(r.kernel_overlap_pct); }}},
      run.ranks);
}

// --- the HTML page ---

void html_stragglers(const RunAnalysis& run, std::ostream& out) {
  out << "<section id=\"ranks\">\n<h2>Ranks</h2>\n";
  if (run.ranks.empty()) {
    out << "<p class=\"note\">No ranks recorded.</p>\n</section>\n";
    return;
  }
  // The same rank the "slowest rank" card names: the first with the largest lateness.
  auto slowest = std::max_element(run.ranks.begin(), run.ranks.end(), [](auto& a, auto& b) {
    return analysis::straggle_ms(a) < analysis::straggle_ms(b);
  });
  html::table_head(out, {"rank", "host", "iteration ms", "comm ms", "late median ms", "late p95 ms",
                         "late max ms", "iteration late ms", "last to enter %",
                         "clock corr. &micro;s", "collectives", "dropped"});
  size_t shown = std::min(run.ranks.size(), html::kMaxRankRows);
  for (size_t i = 0; i < shown; ++i) {
    const auto& r = run.ranks[i];
    bool highlight = &r == &*slowest && analysis::straggle_ms(r) > 0;
    out << "<tr" << (highlight ? " class=\"slowest\"" : "") << ">";
    html::cell(out, std::to_string(r.rank));
    html::text_cell(out, r.host);
    html::cell(out, html::fixed(r.iter_ms_median, 2));
    html::cell(out, html::fixed(r.comm_ms_median, 2));
    html::cell(out, html::fixed(r.late_ms_median, 2));
    html::cell(out, html::fixed(r.late_ms_p95, 2));
    html::cell(out, html::fixed(r.late_ms_max, 2));
    html::cell(out, html::fixed(r.iteration_late_ms_median, 2));
    html::cell(out, html::fixed(r.last_share_pct, 1));
    html::cell(out, html::fixed(r.clock_correction_us, 1));
    html::cell(out, std::to_string(r.collectives));
    html::cell(out, std::to_string(r.dropped_events));
    out << "</tr>\n";
  }
  html::table_end(out, shown, run.ranks.size(), "ranks");
  out << "</section>\n";
}

// Rank x iteration lateness, binned when the run is large: a bin is the mean
// over its iterations and the max over its ranks, so a straggler stays visible.
nlohmann::json heatmap(const RunAnalysis& run) {
  using nlohmann::json;
  const auto& m = run.lateness;
  size_t ranks = m.size(), iters = 0;
  for (const auto& row : m) iters = std::max(iters, row.size());
  if (ranks == 0 || iters == 0) return {{"ranks", 0}, {"iters", 0}, {"cells", json::array()}};
  size_t rank_step = (ranks + 511) / 512;
  size_t rows = (ranks + rank_step - 1) / rank_step;
  size_t max_cols = std::clamp<size_t>(html::kMaxHeatmapCells / rows, 10, 400);
  size_t iter_step = (iters + max_cols - 1) / max_cols;
  size_t cols = (iters + iter_step - 1) / iter_step;
  json cells = json::array();
  for (size_t r0 = 0; r0 < ranks; r0 += rank_step) {
    json row = json::array();
    for (size_t c = 0; c < cols; ++c) {
      double worst = NAN;
      for (size_t r = r0; r < std::min(ranks, r0 + rank_step); ++r) {
        double sum = 0;
        int n = 0;
        for (size_t i = c * iter_step; i < std::min(m[r].size(), (c + 1) * iter_step); ++i) {
          if (std::isfinite(m[r][i])) sum += m[r][i], ++n;
        }
        if (n && !(sum / n <= worst)) worst = sum / n;
      }
      row.push_back(std::isfinite(worst) ? json(html::rounded(worst, 3)) : json(nullptr));
    }
    cells.push_back(row);
  }
  return {{"ranks", ranks},
          {"iters", iters},
          {"rank_step", rank_step},
          {"iter_step", iter_step},
          {"cells", cells}};
}

void chart_data(const RunAnalysis& run, nlohmann::json& data) { data["heatmap"] = heatmap(run); }

}  // namespace

Section stragglers_section() {
  return {.name = "stragglers",
          .text = print_ranks,
          .json = json_stragglers,
          .csv = csv_stragglers,
          .html = html_stragglers,
          .chart = {"chart-heatmap", "Stragglers: lateness per rank and iteration",
                    "How late each rank entered the iteration's collectives after the first "
                    "rank."},
          .chart_data = chart_data};
}

}  // namespace ddpscope::reports
