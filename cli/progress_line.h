// The progress line of long merges and reports: one line on stderr, redrawn
// in place, only when stderr is a terminal (a pipe or a CI log gets nothing)
// and DDPSCOPE_PROGRESS is not 0.
#pragma once

namespace ddpscope::cli {

void show_progress_on_terminal();

// Whether stderr is a terminal that may be drawn on (DDPSCOPE_PROGRESS not 0):
// also where record's live line goes (record/status_row.h).
bool drawing_on_terminal();

}  // namespace ddpscope::cli
