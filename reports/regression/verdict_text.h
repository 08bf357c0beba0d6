// How a verdict reads, shared by the terminal table, JUnit and Markdown, so
// every output names a regression the same way: metric, baseline, candidate,
// change and the interval at its confidence.
#pragma once

#include <string>
#include <vector>

#include "profiler/regression/decision.h"

namespace ddpscope::regression {

std::string value_text(double value, const std::string& unit);  // "12.34 ms"
std::string change_text(double ratio);                          // ratio 1.123 -> "+12.3%"
std::string interval_text(const Interval& ratio);               // "+5.0% .. +20.1%"
std::string noise_text(const Verdict& v);                       // "±12%" or "-"
std::string confidence_text(double level);                      // "99.6%"

// "communication per iteration: 12.30 ms -> 45.60 ms (+270.7%; 99.6% interval
// +210.0% .. +330.0%, tolerance 5%)"
std::string verdict_line(const Verdict& v, const CheckResult& result);

// The one-line outcome: "REGRESSION: 1 of 12 metrics ..." or "no regression: ...".
std::string summary_line(const CheckResult& result);

// Whether the metric was compared (enough samples, on both sides).
bool decided(const Verdict& v);

// The metrics that were not compared, one line per reason:
// "too few samples (under 5 per run): busbw allreduce 4 B (2 ranks), ...".
std::vector<std::string> undecided_lines(const CheckResult& result);

// Why a run-to-run spread was or was not taken into account, for the footer.
std::string noise_note(const CheckResult& result);

}  // namespace ddpscope::regression
