// The progress line of long merges and reports: one line on stderr, redrawn
// in place, only when stderr is a terminal (a pipe or a CI log gets nothing)
// and DDPSCOPE_PROGRESS is not 0.
#pragma once

#include <string>

namespace ddpscope::cli {

void show_progress_on_terminal();

// Whether stderr is a terminal that may be drawn on (DDPSCOPE_PROGRESS not 0).
bool drawing_on_terminal();

// `record`'s live line on a terminal: kept on its last row, below a scroll
// region that takes the job's own output (as apt's progress row does), so the
// ranks' prints never run into it; redrawn in place, and gone at clear().
class StatusRow {
 public:
  void draw(const std::string& text);
  void clear();

 private:
  int rows_ = 0;  // the terminal's height when the region was set; 0: not set
};

}  // namespace ddpscope::cli
