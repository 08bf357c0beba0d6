// The report's stylesheet, inlined so the page needs nothing but itself. The
// series colors live in the script (D.colors); the legend swatches come from
// there too, so a chart and its legend cannot disagree.
#include "reports/html/html_parts.h"

namespace ddpscope::reports::html {

const char* const kStyle = R"CSS(
:root {
  --ink: #1f2430; --muted: #5f6673; --line: #d9dde3; --panel: #ffffff; --page: #f4f5f7;
  --comm: #f58518; --compute: #4c78a8; --warn: #c4490a;
}
* { box-sizing: border-box; }
body {
  margin: 0; padding: 24px clamp(12px, 3vw, 40px) 48px; background: var(--page); color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
h1 { font-size: 22px; margin: 0 0 10px; }
h2 { font-size: 17px; margin: 0 0 4px; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
header.run { margin-bottom: 18px; }
dl.meta { display: grid; grid-template-columns: repeat(auto-fill, minmax(240px, 1fr)); gap: 4px 24px; margin: 0; }
dl.meta div { display: flex; gap: 10px; min-width: 0; }
dl.meta div.wide { grid-column: 1 / -1; }
dl.meta dt { color: var(--muted); min-width: 112px; flex: none; }
dl.meta dd { margin: 0; overflow-wrap: anywhere; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px; }
#ddpscope-errors {
  background: #fff1f0; border: 1px solid #e45756; color: #8a1c1c; padding: 10px 14px;
  border-radius: 6px; white-space: pre-wrap; margin: 0 0 16px;
}
#ddpscope-errors:empty { display: none; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 12px; margin-bottom: 18px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; border-top: 4px solid var(--line); }
.card.comm { border-top-color: var(--comm); }
.card.warn { border-top-color: var(--warn); }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .value { font-size: 24px; font-weight: 600; margin: 2px 0; font-variant-numeric: tabular-nums; }
.card .sub { color: var(--muted); font-size: 12.5px; }
section { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 14px 18px; margin-bottom: 16px; }
section.cards { background: none; border: 0; padding: 0; }
.hint, .note { color: var(--muted); margin: 0 0 8px; font-size: 13px; }
.chart { width: 100%; min-height: 60px; position: relative; }
.chart svg { display: block; max-width: 100%; height: auto; overflow: visible; }
.chart .empty { margin: 0; padding: 36px 0; text-align: center; color: var(--muted); font-style: italic; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; margin: 2px 0 6px; font-size: 12.5px; color: var(--muted); }
.legend .key { display: inline-flex; align-items: center; gap: 6px; }
.legend .swatch { width: 12px; height: 12px; border-radius: 2px; display: inline-block; }
.legend .swatch.line { height: 3px; border-radius: 0; }
.legend .swatch.dot { border-radius: 50%; width: 9px; height: 9px; }
svg text { font: 11.5px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; fill: #3b4250; }
svg .tick-label { fill: #5f6673; font-variant-numeric: tabular-nums; }
svg .axis-title { font-size: 12px; fill: #3b4250; font-weight: 500; }
svg .axis, svg .tick { stroke: #8a919c; stroke-width: 1; shape-rendering: crispEdges; }
svg .grid { stroke: #eceef1; stroke-width: 1; shape-rendering: crispEdges; }
svg .sep { stroke: #7b8290; stroke-width: 1; stroke-dasharray: 3 3; }
svg .row-bg { fill: #fafbfc; }
svg .row-bg.odd { fill: #f2f4f7; }
svg .series { fill: none; stroke-width: 2; }
svg [data-tip]:hover { stroke: #111; stroke-width: 1.2; }
.tooltip {
  position: fixed; z-index: 10; pointer-events: none; max-width: 420px; white-space: pre-line;
  background: rgba(31, 36, 48, .94); color: #fff; padding: 6px 9px; border-radius: 5px;
  font-size: 12.5px; box-shadow: 0 2px 8px rgba(0, 0, 0, .25); overflow-wrap: anywhere;
}
ol.recs { margin: 6px 0 0; padding-left: 22px; }
ol.recs li { margin-bottom: 10px; }
ol.recs .setting { font-weight: 600; }
ol.recs code { background: #fff4e8; padding: 1px 5px; border-radius: 4px; }
ol.recs p { margin: 2px 0 0; color: #3b4250; }
.table-wrap { overflow: auto; max-height: 520px; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 10px; text-align: right; white-space: nowrap; border-bottom: 1px solid #eef0f3; }
th:first-child, td:first-child, th.text, td.text { text-align: left; }
th { position: sticky; top: 0; background: #f7f8fa; font-weight: 600; color: #3b4250; }
tbody tr:nth-child(even) { background: #fbfcfd; }
tr.warmup td { color: var(--muted); }
tr.slowest td { background: #fff1e6; font-weight: 600; }
footer { color: var(--muted); font-size: 12px; text-align: center; }
@media print {
  body { background: #fff; padding: 0; font-size: 12px; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  section, .card { break-inside: avoid; box-shadow: none; }
  .table-wrap { max-height: none; overflow: visible; border: 0; }
  th { position: static; }
  .tooltip { display: none !important; }
}
)CSS";

}  // namespace ddpscope::reports::html
