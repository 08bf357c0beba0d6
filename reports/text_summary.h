// The terminal summary of a run: who ran, and the per-op table (calls, bytes,
// time, algbw and busbw as nccl-tests defines them).
#pragma once

#include <ostream>
#include <vector>

#include "profiler/analysis/op_summary.h"
#include "profiler/core/records.h"
#include "profiler/core/units.h"

namespace ddpscope::reports {

struct RunOverview {
  std::string path;
  std::string command;
  std::vector<ProcessRecord> processes;
  int64_t collectives = 0;
  std::string part;  // what part of the run the report looks at ("": all of it)
};

void print_overview(const RunOverview& run, std::ostream& out);
void print_op_table(const std::vector<analysis::OpSummary>& ops, std::ostream& out);

using ddpscope::human_bytes;  // profiler/core/units.h

}  // namespace ddpscope::reports
