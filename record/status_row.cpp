#include "record/status_row.h"

#include <sys/ioctl.h>
#include <unistd.h>

namespace ddpscope::record {
namespace {

// One write(2) for a whole redraw: a rank's print cannot land inside it.
void put(const std::string& s) {
  ssize_t ignored = write(STDERR_FILENO, s.data(), s.size());
  (void)ignored;
}

}  // namespace

void StatusRow::draw(const std::string& text) {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_row < 3 || ws.ws_col < 10) {
    put("\r\033[K" + text.substr(0, 79));  // no size: one line, redrawn where it is
    return;
  }
  std::string s;
  int rows = ws.ws_row;
  if (rows != rows_) {
    // A free last row (the newline scrolls if the cursor is there), then the
    // region above it; setting a region homes the cursor, hence save/restore.
    s += rows_ ? "" : "\n\033[1A";
    s += "\0337\033[1;" + std::to_string(rows - 1) + "r\0338";
    rows_ = rows;
  }
  s += "\0337\033[" + std::to_string(rows) + ";1H\033[2K" + text.substr(0, ws.ws_col - 1) + "\0338";
  put(s);
}

void StatusRow::clear() {
  if (!rows_) return;
  put("\0337\033[r\033[" + std::to_string(rows_) + ";1H\033[2K\0338");
  rows_ = 0;
}

}  // namespace ddpscope::record
