// The outputs of `ddpscope check`: a terminal table, JUnit XML (rendered by CI
// systems as test results: one test case per metric, a regression a failure),
// and Markdown for a CI job summary. File outputs are written all-or-nothing
// (profiler/core/atomic_file.h); errors are std::runtime_error naming the file.
#pragma once

#include <ostream>
#include <string>

#include "profiler/regression/decision.h"

namespace ddpscope::regression {

void print_check(const CheckResult& result, std::ostream& out);
void write_junit(const CheckResult& result, const std::string& path);
void write_markdown(const CheckResult& result, const std::string& path);

}  // namespace ddpscope::regression
