#include "cli/progress_line.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "profiler/core/progress.h"

namespace ddpscope::cli {
namespace {

bool g_drawn = false;
std::string g_stage;  // drawn last
std::chrono::steady_clock::time_point g_last;

// Redraws at most 10 times a second within a stage (a redraw is a write(2)
// to a terminal); a new stage at once.
void draw(std::string_view stage, uint64_t done, uint64_t total) {
  if (stage.empty()) {  // finished: leave the terminal as it was
    if (g_drawn) fputs("\r\033[K", stderr);
    g_drawn = false;
    return;
  }
  auto now = std::chrono::steady_clock::now();
  if (g_drawn && stage == g_stage && now - g_last < std::chrono::milliseconds(100)) return;
  g_last = now;
  g_stage = stage;
  std::string line = "\r\033[Kddpscope: " + std::string(stage) + " " + std::to_string(done);
  if (total) {
    char pct[32];
    snprintf(pct, sizeof pct, " of %llu (%.0f%%)", static_cast<unsigned long long>(total),
             100.0 * double(done) / double(total));
    line += pct;
  }
  fputs(line.c_str(), stderr);
  fflush(stderr);
  g_drawn = true;
}

}  // namespace

bool drawing_on_terminal() {
  const char* env = getenv("DDPSCOPE_PROGRESS");
  return !(env && !strcmp(env, "0")) && isatty(STDERR_FILENO);
}

void show_progress_on_terminal() {
  if (drawing_on_terminal()) core::progress::set_sink(draw);
}

}  // namespace ddpscope::cli
