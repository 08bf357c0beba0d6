// What a trace shows, independent of the file format: one walk over the run
// database that hands processes (ranks), tracks and slices to a TraceSink.
// The Chrome JSON writer (trace_json.cpp) and the Perfetto protobuf writer
// (trace_perfetto.cpp) are two sinks of the same walk, so both formats carry
// the same tracks, slices and args. Rows are streamed: nothing but the track
// table and a few batches of rows (event_feed.h) is held in memory, whatever
// the size of the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "profiler/analysis/collective_labels.h"
#include "profiler/store/reader.h"

namespace ddpscope::reports::trace {

// A slice argument: an integer, or text (`is_text`).
struct Arg {
  const char* key;
  int64_t number = 0;
  std::string_view text = {};
  bool is_text = false;
};
inline Arg number_arg(const char* key, int64_t v) { return {key, v}; }
inline Arg text_arg(const char* key, std::string_view v) { return {key, 0, v, true}; }

// A track: one stream, thread, kernel kind or NVTX domain of one rank. `index`
// counts tracks in the order they appear (0, 1, ...); `order` is the track's
// place among its rank's tracks (kind by kind, as the JSON tids).
struct TrackInfo {
  uint32_t index;
  int rank;
  int64_t order;
  std::string name;
};

// An interval on a track. `end_ns` may be kNoTime or earlier than the start
// (an unfinished call): writers draw such a slice with no duration. Views are
// valid during the call only.
struct Slice {
  std::string_view name;
  const char* category;  // nccl, gloo, host, kernel, nvtx, sync
  uint32_t track;        // TrackInfo::index
  int64_t start_ns;
  int64_t end_ns;
  const Arg* args;
  size_t arg_count;
};

struct RunInfo {
  std::string path;       // the run database
  std::string timeline;   // "wall" or "monotonic" (RunReader::timeline)
  int64_t origin_ns = 0;  // the earliest time of any event: writers count from it
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void begin(const RunInfo& run) = 0;
  // Once per rank, before any of its tracks.
  virtual void process(int rank, const std::string& name) = 0;
  // Once per track, before its first slice.
  virtual void track(const TrackInfo& track) = 0;
  virtual void slice(const Slice& slice) = 0;
  virtual void end() = 0;
};

// Walks the run: ranks, then collectives (device and host intervals),
// kernels, NVTX ranges and synchronisations. `read`: the run's collectives
// as the analysis read them through the same filter
// (AnalysisOptions::keep_collectives), else they are read from the run.
// `labels`: who issued each collective (AnalysisOptions::keep_labels), which
// names its slices ("allreduce bucket 3") and adds its role, bucket or unit
// and phase to their args; without it a slice is named by its op alone.
void walk_run(store::RunReader& reader, TraceSink& sink, const CollectiveRuns* read = nullptr,
              const analysis::CollectiveLabels* labels = nullptr);

// The earliest time of any event (collectives' host and device starts,
// kernels, NVTX ranges, syncs), so that timestamps count from near 0:
// wall-clock ns since 1970 do not fit a double's precision as microseconds.
// A stored time out of range is a damaged file (InputError).
// `read`: the run's collectives as walk_run takes them.
int64_t trace_origin_ns(store::RunReader& reader, const CollectiveRuns* read = nullptr);

// Which collectives ran on Gloo (host threads) rather than a device stream:
// by their communicator's backend, else their process's.
class CollectiveBackends {
 public:
  explicit CollectiveBackends(store::RunReader& reader);
  bool gloo(const CollectiveRecord& c) const;

 private:
  std::map<std::pair<int, uint64_t>, Backend> backends_;  // (rank, comm_id); comm 0: the process
};

// How many event rows the run holds (collectives, kernels, NVTX ranges and
// syncs): what decides the automatic trace format.
int64_t event_rows(store::RunReader& reader);

}  // namespace ddpscope::reports::trace
