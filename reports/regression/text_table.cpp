// The terminal table of `ddpscope check`.
#include <algorithm>
#include <cstdio>

#include "reports/regression/renderers.h"
#include "reports/regression/verdict_text.h"

namespace ddpscope::regression {
namespace {

std::string samples_text(const Verdict& v) {
  auto side = [](int runs, size_t n) {
    return runs > 1 ? std::to_string(runs) + "x" + std::to_string(n / size_t(runs))
                    : std::to_string(n);
  };
  return side(v.baseline_runs, v.baseline_samples) + "/" +
         side(v.candidate_runs, v.candidate_samples);
}

void print_sources(const char* name, const std::vector<std::string>& sources, std::ostream& out) {
  std::string all;
  for (const auto& s : sources) all += (all.empty() ? "" : ", ") + s;
  out << name << all << "\n";
}

void print_row(std::ostream& out, int label_width, const std::string& status,
               const std::string& label, const std::string& base, const std::string& cand,
               const std::string& change, const std::string& interval, const std::string& noise,
               const std::string& samples) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%-17s %-*s %14s %14s %9s %22s %7s  %s", status.c_str(), label_width,
           label.c_str(), base.c_str(), cand.c_str(), change.c_str(), interval.c_str(),
           noise.c_str(), samples.c_str());
  out << buf << "\n";
}

}  // namespace

void print_check(const CheckResult& r, std::ostream& out) {
  print_sources("baseline    ", r.baseline_sources, out);
  print_sources("candidate   ", r.candidate_sources, out);
  out << "\n";
  int width = 6;
  for (const auto& v : r.verdicts)
    if (decided(v)) width = std::max(width, int(v.label.size()));
  print_row(out, width, "status", "metric", "baseline", "candidate", "change",
            "interval " + confidence_text(r.level), "noise", "samples");
  for (const auto& v : r.verdicts)
    if (decided(v))
      print_row(out, width, name_of(v.status), v.label, value_text(v.baseline, v.unit),
                value_text(v.candidate, v.unit), change_text(1 + v.change), interval_text(v.ratio),
                noise_text(v), samples_text(v));
  out << "\n";
  for (const auto& line : undecided_lines(r)) out << "not decided " << line << "\n";
  for (const auto& f : r.changed_facts)
    out << "changed     " << f.name << ": " << f.baseline << " -> " << f.candidate << "\n";
  for (const auto& n : r.notes) out << "note        " << n << "\n";
  out << "noise       " << noise_note(r) << "\n\n";
  for (const auto& v : r.verdicts)
    if (v.status == Status::regression) out << "regression  " << verdict_line(v, r) << "\n";
  out << summary_line(r) << "\n";
}

}  // namespace ddpscope::regression
