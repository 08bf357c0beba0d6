// analyze_run(): from a run database to the RunAnalysis every report format
// and the regression check consume. How each figure is defined is written
// down in docs/figures.md, how it is found in docs/analysis.md.
#pragma once

#include "profiler/analysis/collective_labels.h"
#include "profiler/analysis/run_analysis.h"
#include "profiler/store/reader.h"

namespace ddpscope::analysis {

struct AnalysisOptions {
  int timeline_iterations = 6;  // steady iterations sampled into the timeline chart
  int max_iteration_rows = 100000;
  // A run of this many collectives or more is read in two halves, on two
  // threads (below it a second thread and connection cost more than they save).
  int64_t split_read_rows = 100'000;
  // Where set, the collectives the analysis read are left here (in id
  // order, as the filter keeps them) for the trace, which then need not read
  // them again: ~136 bytes a collective held until the caller drops them.
  CollectiveRuns* keep_collectives = nullptr;
  // Where set, each collective's label (who issued it, for what) is left
  // here for the trace: 16 bytes a labelled collective.
  CollectiveLabels* keep_labels = nullptr;
};

RunAnalysis analyze_run(store::RunReader& reader, const AnalysisOptions& options = {});

}  // namespace ddpscope::analysis
