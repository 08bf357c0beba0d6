// What the renderer tests render: an analysis built by hand (with the awkward
// values: commas, quotes and newlines in text, NaN figures) and a small real
// run database of two ranks, written and merged by the store itself.
#pragma once

#include <string>
#include <vector>

#include "profiler/analysis/run_analysis.h"

namespace ddpscope::testing {

analysis::RunAnalysis sample_analysis();

// The recommendation reason of sample_analysis(), which CSV must carry intact.
extern const char* const kAwkwardReason;

// Facts about the run written by make_run_db, for the trace checks.
struct SampleRun {
  std::string path;       // the merged run.db
  int64_t origin_ns = 0;  // earliest event on the wall timeline
  int64_t collectives = 0;
};

// Rank 0 (host node0): NCCL all-reduces on streams 0x10 and 0x20 (event
// timing), one Gloo all-reduce on thread 77, kernels of every kind, NVTX ranges
// in two domains and a sync. Rank 1 (host node1): NCCL all-reduces on stream
// 0x30 (host timing). `extra` more all-reduces on rank 1 exercise the buffer.
SampleRun make_run_db(const std::string& dir, int extra = 0);

std::string read_text(const std::string& path);

// RFC 4180, strictly: CRLF after every record, quotes only around a whole
// field, "" for a quote inside. Throws std::runtime_error on anything else.
std::vector<std::vector<std::string>> parse_csv(const std::string& text);

}  // namespace ddpscope::testing
