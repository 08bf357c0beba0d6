// The progress line of long merges and reports: one line on stderr, redrawn
// in place, only when stderr is a terminal (a pipe or a CI log gets nothing)
// and DDPSCOPE_PROGRESS is not 0.
#pragma once

namespace ddpscope::cli {

void show_progress_on_terminal();

}  // namespace ddpscope::cli
