#include "reports/regression/verdict_text.h"

#include <cmath>
#include <cstdio>

namespace ddpscope::regression {
namespace {

std::string format(const char* fmt, double a) {
  char buf[64];
  snprintf(buf, sizeof buf, fmt, a);
  return buf;
}

}  // namespace

std::string value_text(double value, const std::string& unit) {
  const char* fmt = unit == "GB/s" ? "%.3f" : unit == "us" ? "%.1f" : "%.2f";
  return format(fmt, value) + " " + unit;
}

std::string change_text(double ratio) { return format("%+.1f%%", 100 * (ratio - 1)); }

std::string interval_text(const Interval& ratio) {
  return change_text(ratio.lo) + " .. " + change_text(ratio.hi);
}

std::string noise_text(const Verdict& v) {
  if (!v.run_noise) return "-";
  return format("±%.0f%%", 100 * (std::exp(*v.run_noise) - 1));
}

std::string confidence_text(double level) {
  // Enough digits to tell 99.5% from 99.95%.
  return level >= 0.999 ? format("%.2f%%", 100 * level) : format("%.1f%%", 100 * level);
}

std::string verdict_line(const Verdict& v, const CheckResult& result) {
  std::string line = v.label + ": " + value_text(v.baseline, v.unit) + " -> " +
                     value_text(v.candidate, v.unit) + " (" + change_text(1 + v.change) + "; " +
                     confidence_text(result.level) + " interval " + interval_text(v.ratio) +
                     ", tolerance " + format("%g%%", 100 * result.options.tolerance);
  if (v.run_noise) line += ", run-to-run noise " + noise_text(v);
  return line + ")";
}

std::string summary_line(const CheckResult& r) {
  int regressions = r.count(Status::regression);
  std::string by = " worse by more than " + format("%g%%", 100 * r.options.tolerance) + " (" +
                   confidence_text(r.options.confidence) + " confidence for the whole check)";
  if (regressions == 0)
    return "no regression: " + std::to_string(r.decided) + " metrics checked, none" + by;
  return "REGRESSION: " + std::to_string(regressions) + " of " + std::to_string(r.decided) +
         " metrics" + by;
}

bool decided(const Verdict& v) {
  return v.status == Status::regression || v.status == Status::improved ||
         v.status == Status::unchanged;
}

std::vector<std::string> undecided_lines(const CheckResult& r) {
  std::vector<std::string> out;
  for (Status s : {Status::too_few_samples, Status::baseline_only, Status::candidate_only}) {
    std::string labels;
    for (const auto& v : r.verdicts)
      if (v.status == s) labels += (labels.empty() ? "" : ", ") + v.label;
    if (labels.empty()) continue;
    std::string why = name_of(s);
    if (s == Status::too_few_samples)
      why += " (under " + std::to_string(r.options.min_samples) + " per run)";
    out.push_back(why + ": " + labels);
  }
  return out;
}

std::string noise_note(const CheckResult& r) {
  if (r.run_noise_measured())
    return "run-to-run noise measured from repeated runs and included in every interval";
  return "run-to-run noise not measured (one run per side): intervals cover the noise within "
         "the runs only, so --tolerance must cover how much a rerun moves on this machine "
         "(or pass several --baseline runs; docs/ci.md)";
}

}  // namespace ddpscope::regression
