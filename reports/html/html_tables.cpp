// The report's tables and their helpers. Rows are capped (kMaxIterationRows, kMaxRankRows) with
// a note, so a run of a million iterations still gives a page a browser opens;
// the CSV and JSON reports carry every row.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "profiler/core/stats.h"
#include "reports/html/html_parts.h"

namespace ddpscope::reports::html {
namespace {

// The ranks' median; NaN (shown as "-") where no rank has the iteration.
double median(const std::vector<double>& v) { return v.empty() ? NAN : stats::median(v); }

// One row per iteration index: the ranks' median, and the latest rank from
// the lateness matrix.
struct IterationRow {
  bool warmup = false;
  std::vector<double> iter, comm, busy, exposed, buckets;
};

void write_iteration_row(const analysis::RunAnalysis& run, int index, const IterationRow& row,
                         std::ostream& out) {
  double iter = median(row.iter), exposed = median(row.exposed);
  out << "<tr" << (row.warmup ? " class=\"warmup\"" : "") << ">";
  cell(out, std::to_string(index) + (row.warmup ? " (warm-up)" : ""));
  cell(out, std::to_string(row.comm.size()));
  cell(out, iter > 0 ? fixed(iter, 2) : "-");
  cell(out, iter > 0 ? fixed(*std::max_element(row.iter.begin(), row.iter.end()), 2) : "-");
  cell(out, fixed(median(row.comm), 2));
  cell(out, fixed(median(row.busy), 2));
  cell(out, fixed(exposed, 2));
  cell(out, iter > 0 ? fixed(100 * exposed / iter, 1) : "-");
  cell(out, fixed(median(row.buckets), 0));
  int late_rank = -1;
  double late = 0;
  for (size_t r = 0; r < run.lateness.size(); ++r) {
    const auto& l = run.lateness[r];
    if (size_t(index) < l.size() && std::isfinite(l[index]) && l[index] > late) {
      late = l[index];
      late_rank = int(r);
    }
  }
  cell(out, late_rank < 0 ? "-" : std::to_string(late_rank) + " (" + fixed(late, 2) + " ms)");
  out << "</tr>\n";
}

}  // namespace

void table_head(std::ostream& out, std::initializer_list<const char*> columns) {
  out << "<div class=\"table-wrap\"><table>\n<thead><tr>";
  for (const char* c : columns) {
    // Columns named "host", "op" and "timing" hold text: aligned left.
    std::string_view name(c);
    bool text = name == "host" || name == "op" || name == "timing";
    out << (text ? "<th class=\"text\">" : "<th>") << c << "</th>";
  }
  out << "</tr></thead>\n<tbody>\n";
}

void table_end(std::ostream& out, size_t shown, size_t total, const char* what) {
  out << "</tbody></table></div>\n";
  if (shown < total) {
    out << "<p class=\"note\">Showing the first " << shown << " of " << total << " " << what
        << "; the CSV and JSON reports have all of them.</p>\n";
  }
}

void cell(std::ostream& out, const std::string& text) { out << "<td>" << escape(text) << "</td>"; }
// A left-aligned cell: names, where the numbers around them align right.
void text_cell(std::ostream& out, const std::string& text) {
  out << "<td class=\"text\">" << escape(text) << "</td>";
}

void write_iteration_table(const analysis::RunAnalysis& run, std::ostream& out) {
  out << "<section id=\"iterations\">\n<h2>Iterations</h2>\n";
  // The smallest kMaxIterationRows indexes, whatever order the list is in.
  std::set<int> shown;
  for (const auto& it : run.iteration_list) {
    shown.insert(it.index);
    if (shown.size() > kMaxIterationRows) shown.erase(std::prev(shown.end()));
  }
  std::map<int, IterationRow> rows;
  for (const auto& it : run.iteration_list) {
    if (!shown.count(it.index)) continue;
    auto& row = rows[it.index];
    row.warmup = row.warmup || it.warmup;
    if (it.iter_ms > 0) row.iter.push_back(it.iter_ms);
    row.comm.push_back(it.comm_ms);
    row.busy.push_back(it.comm_busy_ms);
    row.exposed.push_back(it.exposed_ms);
    row.buckets.push_back(it.buckets);
  }
  if (rows.empty()) {
    out << "<p class=\"note\">No iterations detected.</p>\n</section>\n";
    return;
  }
  int total = 0;
  for (const auto& it : run.iteration_list) total = std::max(total, it.index + 1);
  out << "<p class=\"note\">Medians over ranks; times in ms. The last iteration has no "
         "successor, so no duration.</p>\n";
  table_head(out, {"iteration", "ranks", "iteration ms", "max ms", "comm ms", "busy ms",
                   "exposed ms", "exposed %", "buckets", "latest rank"});
  for (const auto& [index, row] : rows) write_iteration_row(run, index, row, out);
  table_end(out, rows.size(), std::max<size_t>(total, rows.size()), "iterations");
  out << "</section>\n";
}

void write_op_table(const analysis::RunAnalysis& run, std::ostream& out) {
  out << "<section id=\"ops\">\n<h2>Collectives by op</h2>\n";
  if (run.ops.empty()) {
    out << "<p class=\"note\">No collectives recorded.</p>\n</section>\n";
    return;
  }
  table_head(out, {"op", "ranks", "calls", "bytes", "total ms", "median &micro;s", "p95 &micro;s",
                   "algbw GB/s", "busbw GB/s", "timing"});
  for (const auto& s : run.ops) {
    out << "<tr>";
    cell(out, std::string(name_of(s.op)));
    cell(out, std::to_string(s.ranks));
    cell(out, std::to_string(s.calls));
    cell(out, bytes_text(double(s.bytes)));
    cell(out, fixed(s.total_ms, 2));
    cell(out, fixed(s.median_us, 1));
    cell(out, fixed(s.p95_us, 1));
    cell(out, fixed(s.algbw_gbps, 3));
    cell(out, fixed(s.busbw_gbps, 3));
    text_cell(out, std::string(name_of(s.timing)));
    out << "</tr>\n";
  }
  table_end(out, run.ops.size(), run.ops.size(), "ops");
  out << "</section>\n";
}

}  // namespace ddpscope::reports::html
