// Markdown for a CI job summary (GitHub's $GITHUB_STEP_SUMMARY, a GitLab MR
// note): the outcome first, the regressions named, then the whole table.
#include "profiler/core/atomic_file.h"
#include "reports/regression/renderers.h"
#include "reports/regression/verdict_text.h"

namespace ddpscope::regression {
namespace {

// Table cells: a pipe would end the cell, a newline the row.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string code_list(const std::vector<std::string>& sources) {
  std::string s;
  for (const auto& x : sources) s += (s.empty() ? "`" : ", `") + cell(x) + "`";
  return s;
}

void write_table(const CheckResult& r, std::ostream& out) {
  out << "| status | metric | baseline | candidate | change | interval ("
      << confidence_text(r.level)
      << ") | run noise | samples |\n|---|---|---:|---:|---:|---|---:|---:|\n";
  for (const auto& v : r.verdicts) {
    if (!decided(v)) continue;
    std::string status = v.status == Status::regression ? "**REGRESSION**" : name_of(v.status);
    out << "| " << status << " | " << cell(v.label) << " | " << value_text(v.baseline, v.unit)
        << " | " << value_text(v.candidate, v.unit) << " | " << change_text(1 + v.change) << " | "
        << interval_text(v.ratio) << " | " << noise_text(v) << " | " << v.baseline_samples << " / "
        << v.candidate_samples << " |\n";
  }
}

}  // namespace

void write_markdown(const CheckResult& r, const std::string& path) {
  core::write_atomically(path, [&](std::ostream& out) {
    out << "### ddpscope check: " << (r.regressed() ? "communication regression" : "no regression")
        << "\n\n"
        << summary_line(r) << ".\n\n"
        << "Baseline " << code_list(r.baseline_sources) << "; candidate "
        << code_list(r.candidate_sources) << ".\n\n";
    for (const auto& v : r.verdicts)
      if (v.status == Status::regression) out << "- **" << cell(verdict_line(v, r)) << "**\n";
    if (r.regressed()) out << "\n";
    write_table(r, out);
    out << "\n";
    for (const auto& line : undecided_lines(r)) out << "- not decided: " << cell(line) << "\n";
    for (const auto& f : r.changed_facts)
      out << "- changed: " << cell(f.name) << ": " << cell(f.baseline) << " → " << cell(f.candidate)
          << "\n";
    for (const auto& n : r.notes) out << "- " << cell(n) << "\n";
    out << "- " << noise_note(r) << "\n";
  });
}

}  // namespace ddpscope::regression
