// What `record` shows of a job while it runs (analysis/live_watch.h): the
// live line for the terminal and the metrics file in Prometheus' text
// exposition format (version 0.0.4, what node_exporter's textfile collector
// reads). Both render one LiveFigures; neither computes a figure.
#pragma once

#include <ostream>
#include <string>

#include "profiler/analysis/live_watch.h"

namespace ddpscope::reports {

// One line, no control characters: steps done, the median step, communication
// and exposed communication per step (ms and % of the step), the slowest
// bucket, the latest rank and by how much, dropped events.
std::string live_line(const analysis::LiveFigures& live);

// Every series, with `job` and per rank `rank` and `host`, per DDP bucket
// `bucket` and `op` labels (docs/watching.md lists them). Base units:
// seconds, bytes per second.
void write_prometheus(const analysis::LiveFigures& live, const std::string& job, std::ostream& out);

}  // namespace ddpscope::reports
