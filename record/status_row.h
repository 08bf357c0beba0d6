// `record`'s live line on a terminal: kept on its last row, below a scroll
// region that takes the job's own output (as apt's progress row does), so the
// ranks' prints never run into it; redrawn in place, and gone at clear().
#pragma once

#include <string>

namespace ddpscope::record {

class StatusRow {
 public:
  void draw(const std::string& text);
  void clear();

 private:
  int rows_ = 0;  // the terminal's height when the region was set; 0: not set
};

}  // namespace ddpscope::record
