// FSDP2 units: per root, each unit's communication by phase
// (profiler/analysis/fsdp_units.cpp), in every format: the terminal's unit
// table, JSON's `fsdp` (the contract in docs/schema.md's report section),
// fsdp_units.csv, and the page's FSDP table.
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "reports/csv_table.h"
#include "reports/html/html_parts.h"
#include "reports/json_fields.h"
#include "reports/sections/section.h"
#include "reports/text_line.h"

namespace ddpscope::reports {
namespace {

using analysis::FsdpPhaseStats;
using analysis::FsdpRootStats;
using analysis::FsdpUnitStats;

// One row of the flat tables (terminal, CSV, HTML): a phase of a unit.
struct Row {
  const FsdpRootStats* root;
  const FsdpUnitStats* unit;
  const FsdpPhaseStats* phase;
};

std::vector<Row> rows_of(const RunAnalysis& run) {
  std::vector<Row> out;
  for (const auto& r : run.fsdp)
    for (const auto& u : r.units)
      for (const auto& p : u.phases) out.push_back({&r, &u, &p});
  return out;
}

// "reduce_scatter" or "reduce_scatter as allreduce".
std::string op_text(const FsdpPhaseStats& p) {
  std::string s(name_of(p.op));
  if (p.carried_as) s += " as " + std::string(name_of(*p.carried_as));
  return s;
}

std::string slack_text(const FsdpPhaseStats& p, int decimals) {
  return p.slack_us ? html::fixed(*p.slack_us, decimals) : "-";
}

// --- the terminal ---

void print_root(const FsdpRootStats& r, std::ostream& out) {
  line(out, "FSDP root %d (%s): %zu units on %d ranks%s; all-gathers and reduce-scatters %s",
       r.root, r.module.c_str(), r.units.size(), r.world_size,
       r.replicas > 0 ? (", HSDP x" + std::to_string(r.replicas)).c_str() : "",
       !r.shared_comm ? "on separate communicators"
       : r.overlapped ? "share one communicator and overlapped"
                      : "share one communicator, one after another");
}

// Each root, then its units' table.
void print_units(const RunAnalysis& run, std::ostream& out) {
  if (run.fsdp.empty()) return;
  for (const auto& r : run.fsdp) {
    print_root(r, out);
    line(out, "%-16s %-20s %-28s %10s %6s %10s %10s %9s %11s %10s", "unit", "phase", "op", "bytes",
         "/step", "median us", "p95 us", "busbw", "exposed us", "slack us");
    for (const auto& u : r.units)
      for (const auto& p : u.phases)
        line(out, "%-16s %-20s %-28s %10s %6.1f %10.1f %10.1f %9.3f %11.1f %10s",
             unit_name(u).c_str(), name_of(p.phase), op_text(p).c_str(),
             html::bytes_text(double(p.bytes)).c_str(), p.per_iteration, p.median_us, p.p95_us,
             p.busbw_gbps, p.exposed_us, slack_text(p, 1).c_str());
  }
  line(out, "FSDP per step: communication %.2f ms, exposed %.2f ms (medians over steps)",
       run.iterations.fsdp_comm_median_ms, run.iterations.fsdp_exposed_median_ms);
  out << "\n";
}

// --- JSON ---

using json_fields::Json;
using json_fields::num;

Json to_json(const FsdpPhaseStats& p) {
  return {{"phase", name_of(p.phase)},
          {"op", name_of(p.op)},
          {"carried_as", p.carried_as ? Json(name_of(*p.carried_as)) : Json()},
          {"dtype", p.dtype},
          {"bytes", p.bytes},
          {"wire_bytes", p.wire_bytes},
          {"per_iteration", num(p.per_iteration)},
          {"calls", p.calls},
          {"prefetched", p.prefetched},
          {"median_us", num(p.median_us)},
          {"p95_us", num(p.p95_us)},
          {"busbw_gbps", num(p.busbw_gbps)},
          {"exposed_us", num(p.exposed_us)},
          {"exposed_steps_pct", num(p.exposed_steps_pct)},
          {"slack_us", p.slack_us ? num(*p.slack_us) : Json()},
          {"tail_us", p.tail_us ? num(*p.tail_us) : Json()}};
}

Json to_json(const FsdpUnitStats& u) {
  Json phases = Json::array();
  for (const auto& p : u.phases) phases.push_back(to_json(p));
  return {{"unit", u.unit},
          {"fqn", u.fqn},
          {"module", u.module},
          {"params", u.params},
          {"reshard_after_forward", u.reshard_after_forward},
          {"phases", std::move(phases)}};
}

void json_fsdp(const RunAnalysis& run, Json& report) {
  if (run.fsdp.empty()) return;
  Json roots = Json::array();
  for (const auto& r : run.fsdp) {
    Json units = Json::array();
    for (const auto& u : r.units) units.push_back(to_json(u));
    roots.push_back({{"root", r.root},
                     {"module", r.module},
                     {"world_size", r.world_size},
                     {"replicas", r.replicas},
                     {"shared_comm", r.shared_comm},
                     {"overlapped", r.overlapped},
                     {"units", std::move(units)}});
  }
  report["fsdp"] = std::move(roots);
}

// --- CSV ---

void csv_fsdp(const RunAnalysis& run, const std::string& dir) {
  if (run.fsdp.empty()) return;
  csv::write_table<Row>(
      dir + "/fsdp_units.csv",
      {{"root", [](const Row& r) { return csv::num(r.root->root); }},
       {"unit", [](const Row& r) { return csv::num(r.unit->unit); }},
       {"fqn", [](const Row& r) { return r.unit->fqn; }},
       {"phase", [](const Row& r) { return std::string(name_of(r.phase->phase)); }},
       {"op", [](const Row& r) { return std::string(name_of(r.phase->op)); }},
       {"carried_as",
        [](const Row& r) {
          return r.phase->carried_as ? std::string(name_of(*r.phase->carried_as)) : "";
        }},
       {"dtype", [](const Row& r) { return r.phase->dtype; }},
       {"bytes", [](const Row& r) { return csv::num(r.phase->bytes); }},
       {"wire_bytes", [](const Row& r) { return csv::num(r.phase->wire_bytes); }},
       {"per_iteration", [](const Row& r) { return csv::num(r.phase->per_iteration); }},
       {"calls", [](const Row& r) { return csv::num(r.phase->calls); }},
       {"prefetched", [](const Row& r) { return csv::num(r.phase->prefetched); }},
       {"median_us", [](const Row& r) { return csv::num(r.phase->median_us); }},
       {"p95_us", [](const Row& r) { return csv::num(r.phase->p95_us); }},
       {"busbw_gbps", [](const Row& r) { return csv::num(r.phase->busbw_gbps); }},
       {"exposed_us", [](const Row& r) { return csv::num(r.phase->exposed_us); }},
       {"slack_us",
        [](const Row& r) { return r.phase->slack_us ? csv::num(*r.phase->slack_us) : ""; }},
       {"tail_us",
        [](const Row& r) { return r.phase->tail_us ? csv::num(*r.phase->tail_us) : ""; }}},
      rows_of(run));
}

// --- the HTML page ---

// Each root's line, then its units' table.
void html_root(const FsdpRootStats& r, std::ostream& out) {
  std::ostringstream head;
  print_root(r, head);
  out << "<p>" << html::escape(head.str()) << "</p>\n";
  html::table_head(out, {"unit", "phase", "op", "bytes", "per step", "median &micro;s",
                         "p95 &micro;s", "busbw GB/s", "exposed &micro;s", "slack &micro;s"});
  size_t rows = 0;
  for (const auto& u : r.units)
    for (const auto& p : u.phases) {
      out << "<tr>";
      html::text_cell(out, unit_name(u));
      html::text_cell(out, name_of(p.phase));
      html::text_cell(out, op_text(p));
      html::cell(out, html::bytes_text(double(p.bytes)));
      html::cell(out, html::fixed(p.per_iteration, 1));
      html::cell(out, html::fixed(p.median_us, 1));
      html::cell(out, html::fixed(p.p95_us, 1));
      html::cell(out, html::fixed(p.busbw_gbps, 3));
      html::cell(out, html::fixed(p.exposed_us, 1));
      html::cell(out, slack_text(p, 1));
      out << "</tr>\n";
      ++rows;
    }
  html::table_end(out, rows, rows, "phases");
}

void html_fsdp(const RunAnalysis& run, std::ostream& out) {
  if (run.fsdp.empty()) return;
  out << "<section id=\"fsdp\">\n<h2>FSDP units</h2>\n";
  for (const auto& r : run.fsdp) html_root(r, out);
  out << "</section>\n";
}

}  // namespace

Section fsdp_section() {
  return {
      .name = "fsdp", .text = print_units, .json = json_fsdp, .csv = csv_fsdp, .html = html_fsdp};
}

}  // namespace ddpscope::reports
