// The pieces of the HTML report (html.cpp puts them together). Text
// sections are rendered here in C++, already escaped, so the page reads well
// even with scripts off; charts are drawn in the browser from one JSON blob.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

#include "profiler/analysis/run_analysis.h"

namespace ddpscope::reports::html {

// Size caps that keep the page under ~2 MB however long the run was.
constexpr size_t kMaxIterationRows = 500;
constexpr size_t kMaxRankRows = 1024;
constexpr size_t kMaxTimelineSpans = 20000;
constexpr size_t kMaxHeatmapCells = 40000;

// --- html_text.cpp: escaping and number formatting ---
std::string escape(std::string_view text);  // for element content and quoted attributes
// The JSON text made safe inside <script>: no "</" (ends the element) and no
// "<!--" (switches the parser into a script-data-escaped state).
std::string script_safe(const nlohmann::json& j);
std::string fixed(double v, int decimals);  // "-" for NaN/inf
std::string bytes_text(double bytes);       // 1.5 MiB
double rounded(double v, int significant);  // fewer digits in the embedded JSON

// --- html_data.cpp: what the charts draw ---
nlohmann::json chart_data(const analysis::RunAnalysis& run);

// --- html_sections.cpp: header, summary cards, recommendations ---
void write_header(const analysis::RunAnalysis& run, std::ostream& out);
void write_cards(const analysis::RunAnalysis& run, std::ostream& out);
void write_recommendations(const analysis::RunAnalysis& run, std::ostream& out);

// --- html_tables.cpp: iterations, ops, and the helpers of every table ---
void write_iteration_table(const analysis::RunAnalysis& run, std::ostream& out);
void write_op_table(const analysis::RunAnalysis& run, std::ostream& out);
// A table's start (header cells "host", "op" and "timing" align left) and
// end, with a note when `shown` < `total` rows.
void table_head(std::ostream& out, std::initializer_list<const char*> columns);
void table_end(std::ostream& out, size_t shown, size_t total, const char* what);
void cell(std::ostream& out, const std::string& text);       // a number: aligned right
void text_cell(std::ostream& out, const std::string& text);  // a name: aligned left

// --- inline assets, in page order: html_style.cpp, and reports/html/*.js
// embedded at build time by reports/html/embed.cmake (each script's text
// without its leading comment block; each ends with a newline) ---
extern const char* const kStyle;
extern const char* const kErrorCapture;    // error_capture.js: in <head>, reports script errors
extern const char* const kScriptCore;      // core.js: SVG helpers, axes, tooltip
extern const char* const kScriptCharts;    // charts.js: buckets, bandwidth, overlap
extern const char* const kScriptTimeline;  // timeline.js: timeline, heatmap, then draws everything

}  // namespace ddpscope::reports::html
