#include "record/live_view.h"

#include <chrono>

#include "profiler/core/progress.h"
#include "profiler/store/reader.h"

namespace ddpscope::record {

const analysis::LiveFigures& LiveView::refresh(int64_t now_wall_ns, bool ended) {
  core::progress::Silence quiet;  // the live line owns the terminal's last row
  auto began = std::chrono::steady_clock::now();
  auto seen = window_.refresh(watch_.since(now_wall_ns));
  glances_ = std::move(seen.ranks);
  store::RunReader reader(window_.path());
  auto& figures = watch_.analyse(reader, now_wall_ns, ended);
  figures.files = seen.files;
  figures.unreadable = seen.unreadable;
  figures.refresh_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
  return figures;
}

}  // namespace ddpscope::record
