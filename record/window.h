// record's one reader of the rank files of a recording in progress: every
// look attaches each rank file read-only once, takes the hang watch's glance
// at it (profiler/analysis/hang_watch.h: its process row, newest collectives,
// collectives in flight) and, for the live view (`record`'s live line and
// metrics file), copies its new rows into a sliding window.
//
// Each refresh copies from every rank file only the rows it gained since the
// last refresh (by rowid: the writer only appends to its event tables;
// processes, comms and inflight, which it rewrites, are copied whole), and
// drops the events that started before the window (the kernels' blocks too:
// window_kernel_blocks.h). The window is a database
// of the merged run's schema, every rank on the wall timeline, that the
// analysis reads like any run (merge.h's conventions; collective ids of the
// k-th rank file start past k·2^36 so they stay put between refreshes).
//
// Rank files are attached read-only: a WAL reader never blocks its writer,
// and a file locked or still being created is read at the next refresh. On a
// network file system a writer holds its file's lock for the rank's life
// (writer.cpp), so nothing there can be read before the rank ends.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "profiler/analysis/hang_watch.h"
#include "profiler/store/sqlite.h"
#include "record/window_kernel_blocks.h"

namespace ddpscope::record {

struct WindowRefresh {
  int files = 0;       // rank files in the directory
  int unreadable = 0;  // of which locked or being created now
  int64_t rows = 0;    // rows copied by this refresh
  // The glance at each rank file that could be read now (the hang watch's).
  std::vector<analysis::RankGlance> ranks;
};

// A look without a window: the glance at each rank file of `dir` that can be
// read now, attached to a database in memory.
std::vector<analysis::RankGlance> glance_rank_files(const std::string& dir);

class RecordingWindow {
 public:
  // `scratch`: where the window database lives (replaced; removed by the
  // destructor). A private path: nothing else writes it.
  RecordingWindow(std::string dir, std::string scratch);
  ~RecordingWindow();
  RecordingWindow(const RecordingWindow&) = delete;
  RecordingWindow& operator=(const RecordingWindow&) = delete;

  // Glances at every rank file and reads what it gained, then drops the
  // events that started before `since_wall_ns`.
  WindowRefresh refresh(int64_t since_wall_ns);
  const std::string& path() const { return scratch_; }

 private:
  struct Source {
    int version = 0;
    int rank = 0;
    int64_t clock_offset_ns = 0;
    int64_t id_base = 0;
    std::map<std::string, int64_t> last_rowid;  // per appended table
  };
  // False when the file cannot be read now.
  bool look_at(const std::string& file, Source& source, WindowRefresh& seen);
  bool take(Source& source, const std::set<std::string>& present, int64_t& rows);
  bool inspect(Source& source);
  void write_meta();
  void drop_before(int64_t since_wall_ns);

  std::string dir_, scratch_;
  std::unique_ptr<store::Connection> db_;
  std::map<std::string, Source> sources_;  // by rank file path
  WindowKernelBlocks kernel_blocks_;
  bool meta_written_ = false;
};

}  // namespace ddpscope::record
