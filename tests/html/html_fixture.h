// Hand-built analyses for the HTML report tests, and rendering one to a file.
#pragma once

#include <string>

#include "profiler/analysis/run_analysis.h"

namespace ddpscope::html_test {

// 3 ranks, 6 iterations (one warm-up), 4 buckets, a timeline sample, rank 2 a
// straggler, 2 recommendations (one full of characters that need escaping).
analysis::RunAnalysis sample_run();

// A run in which no iterations were detected: header and nothing else.
analysis::RunAnalysis empty_run();

// Many ranks and iterations, to check the page stays small.
analysis::RunAnalysis large_run(int ranks, int iterations);

// Renders `run` with the HTML renderer into `dir`/report.html (with a small
// rank database as the ReportInput's reader) and returns the file's path.
std::string render(const analysis::RunAnalysis& run, const std::string& dir);

std::string read_text(const std::string& path);

}  // namespace ddpscope::html_test
