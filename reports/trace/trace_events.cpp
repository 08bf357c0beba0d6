// The walk over a run that both trace formats share: which track each row of
// the database lands on, and the slice and args it becomes.
#include "reports/trace/trace_events.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <set>
#include <tuple>

#include "profiler/core/parallel.h"
#include "profiler/core/progress.h"
#include "reports/trace/event_feed.h"

namespace ddpscope::reports::trace {
namespace {

// v as "0x..." in `buf`, which the view is of (a million collectives: no
// string made for each).
std::string_view hex(char (&buf)[24], uint64_t v) {
  buf[0] = '0', buf[1] = 'x';
  return {buf, size_t(std::to_chars(buf + 2, buf + sizeof buf, v, 16).ptr - buf)};
}
std::string hex(uint64_t v) {
  char buf[24];
  return std::string(hex(buf, v));
}

// What a track shows; the order here is the order of tracks in the UI, since
// tracks are numbered kind by kind.
enum class Track { stream, thread, host_calls, comm_kernels, compute_kernels, memory, nvtx, syncs };

std::string track_name(Track kind, uint64_t id, const std::string& domain) {
  static const char* const kLabels[] = {
      "stream",          "thread",        "host calls", "comm kernels",
      "compute kernels", "memcpy/memset", "nvtx",       "syncs"};
  bool on_stream = kind == Track::stream || (kind >= Track::comm_kernels && kind <= Track::memory);
  std::string where = on_stream ? "stream " + hex(id) : "thread " + std::to_string(id);
  if (kind == Track::stream || kind == Track::thread) return where;
  std::string label = kLabels[int(kind)];
  if (!domain.empty()) label += " " + domain;
  return label + " (" + where + ")";
}

// Ranks and tracks, each announced to the sink the first time it is used.
// Small: one entry per (rank, stream/thread/domain, kind).
class Tracks {
 public:
  Tracks(TraceSink& sink, const std::vector<ProcessRecord>& processes) : sink_(sink) {
    for (const auto& p : processes) hosts_[p.rank] = p.host;
    for (const auto& p : processes) announce(p.rank);
  }
  uint32_t of(int rank, Track kind, uint64_t id, const std::string& domain = "") {
    if (!domain.empty()) return lookup(rank, kind, id, domain);
    // Events move among a few tracks (a rank's streams and kernel kinds): a
    // slot picked by the track's key skips the map for most of them.
    uint64_t h =
        ((uint64_t(uint32_t(rank)) << 36) ^ (uint64_t(kind) << 32) ^ id) * 0x9E3779B97F4A7C15ull;
    Recent& r = recent_[h >> 58];
    if (r.index == kNone || r.rank != rank || r.kind != kind || r.id != id)
      r = {rank, kind, id, lookup(rank, kind, id, domain)};
    return r.index;
  }

 private:
  uint32_t lookup(int rank, Track kind, uint64_t id, const std::string& domain) {
    auto key = std::make_tuple(rank, kind, id, domain);
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
    announce(rank);
    TrackInfo t{uint32_t(ids_.size()), rank,
                int64_t(kind) * 100000 + 1 + int64_t(count_[{rank, kind}]++),
                track_name(kind, id, domain)};
    ids_.emplace(key, t.index);
    sink_.track(t);
    return t.index;
  }
  void announce(int rank) {
    if (!announced_.insert(rank).second) return;
    auto host = hosts_.find(rank);
    std::string name = "rank " + std::to_string(rank);
    if (host != hosts_.end() && !host->second.empty()) name += " (" + host->second + ")";
    sink_.process(rank, name);
  }
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Recent {
    int rank = -1;
    Track kind = Track::stream;
    uint64_t id = 0;
    uint32_t index = kNone;
  };
  std::array<Recent, 64> recent_{};  // by the top 6 bits of the key's hash
  TraceSink& sink_;
  std::map<int, std::string> hosts_;
  std::set<int> announced_;
  std::map<std::tuple<int, Track, uint64_t, std::string>, uint32_t> ids_;
  std::map<std::pair<int, Track>, int> count_;
};

// A labelled collective's args beyond the op's: its role, and its DDP bucket
// or its FSDP unit, phase and prefetch; the op it was carried as where that
// is not the op it is (FSDP's reduce-scatter as Gloo's all-reduce). Returns
// how many it wrote into `out`.
size_t label_args(const analysis::CollectiveLabel& l, Op carried, Arg* out) {
  size_t n = 0;
  out[n++] = text_arg("role", analysis::name_of(l.role));
  if (l.bucket >= 0) out[n++] = number_arg("bucket", l.bucket);
  if (l.ddp_instance > 0) out[n++] = number_arg("ddp_instance", l.ddp_instance);
  if (l.phase) {
    out[n++] = text_arg("unit", l.unit);
    out[n++] = text_arg("phase", l.phase);
  }
  if (l.prefetch) out[n++] = number_arg("prefetch", 1);
  if (carried != l.op) out[n++] = text_arg("carried_as", name_of(carried));
  return n;
}

// A collective's slice: its device execution, or its host call where it has
// none, and then the host call beside the device execution. Named by its
// label where the analysis gave it one.
void collective_slices(TraceSink& sink, Tracks& tracks, const CollectiveBackends& backends,
                       const analysis::CollectiveLabels* labels, const CollectiveRecord& c) {
  bool measured = c.start_ns != kNoTime && c.end_ns != kNoTime;
  int64_t start = measured ? c.start_ns : c.host_start_ns;
  int64_t end = measured ? c.end_ns : c.host_end_ns;
  if (start == kNoTime) return;
  bool gloo = backends.gloo(c);  // Gloo groups run on host threads
  const analysis::CollectiveLabel* label = labels ? labels->find(c.rank, c.id) : nullptr;
  std::string_view name = label ? std::string_view(label->name) : name_of(c.op);
  uint32_t track =
      gloo ? tracks.of(c.rank, Track::thread, c.tid) : tracks.of(c.rank, Track::stream, c.stream);
  char comm_text[24];
  std::string_view comm = hex(comm_text, c.comm_id);  // text: 63 bits do not survive a JS double
  Arg args[16] = {number_arg("bytes", int64_t(c.bytes)),
                  number_arg("count", int64_t(c.count)),
                  text_arg("dtype", name_of(c.dtype)),
                  number_arg("seq", int64_t(c.seq)),
                  text_arg("comm_id", comm),
                  number_arg("group_id", int64_t(c.group_id)),
                  number_arg("nranks", c.nranks),
                  text_arg("timing", name_of(c.timing))};
  size_t n = 8 + (label ? label_args(*label, c.op, args + 8) : 0);
  sink.slice({name, gloo ? "gloo" : "nccl", track, start, end, args, n});
  // The enqueue on the host, when the slice above is the device execution.
  if (measured && c.timing != Timing::host && c.host_start_ns != kNoTime) {
    const Arg seq[] = {number_arg("seq", int64_t(c.seq))};
    sink.slice({name, "host", tracks.of(c.rank, Track::host_calls, c.tid), c.host_start_ns,
                c.host_end_ns, seq, 1});
  }
}

// Kernel kinds are the capture's vocabulary (docs/schema.md leaves it open):
// memcpy*/memset* are copies; a kernel tied to a collective, of kind comm/nccl,
// or named nccl* is communication; everything else is compute. Kinds are
// lower-case.
class KernelTracks {
 public:
  Track of(std::string_view kind, bool for_collective, std::string_view name) {
    // A run's kinds are a handful of texts: what a kind alone decides is
    // kept by the kind, so most kernels cost no search for "memcpy".
    auto known =
        std::find_if(kinds_.begin(), kinds_.end(), [&](const auto& k) { return k.first == kind; });
    if (known == kinds_.end()) known = kinds_.emplace(kinds_.end(), kind, by_kind(kind));
    if (known->second != Track::compute_kernels) return known->second;
    return for_collective || name.starts_with("nccl") ? Track::comm_kernels
                                                      : Track::compute_kernels;
  }

 private:
  static Track by_kind(std::string_view kind) {
    if (kind.find("memcpy") != std::string::npos || kind.find("memset") != std::string::npos)
      return Track::memory;
    if (kind == "comm" || kind == "nccl" || kind == "communication") return Track::comm_kernels;
    return Track::compute_kernels;
  }
  std::vector<std::pair<std::string, Track>> kinds_;
};

void kernel_slice(TraceSink& sink, Tracks& tracks, KernelTracks& kinds, const EventBatch& batch,
                  const KernelRow& k) {
  const std::string_view name = batch.view(k.name_at, k.name_size);
  Track kind = kinds.of(batch.view(k.kind_at, k.kind_size), k.for_collective, name);
  const Arg args[] = {number_arg("device", k.device), number_arg("correlation", k.correlation),
                      number_arg("collective_id", k.collective_id)};
  sink.slice({name, "kernel", tracks.of(k.rank, kind, k.stream), k.start_ns, k.end_ns, args,
              k.for_collective ? 3u : 2u});
}

// Collectives, then each file's kernels in the order one run database gives
// them (the merge's order), and so kernels of some ranks by rank
// (rank_order); read on the feed's thread while these are written. The
// collectives `read` already are written while the feed reads kernels.
void walk_collectives_and_kernels(TraceSink& sink, Tracks& tracks, store::RunReader& reader,
                                  const CollectiveRuns* read,
                                  const analysis::CollectiveLabels* labels) {
  CollectiveBackends backends(reader);
  EventFeed feed(reader, !reader.filter().ranks.empty(), read == nullptr);
  if (read)
    for (const auto& run : *read)
      for (const CollectiveRecord& c : run) collective_slices(sink, tracks, backends, labels, c);
  EventBatch batch;
  KernelTracks kinds;
  while (feed.next(batch)) {
    for (const CollectiveRecord& c : batch.collectives)
      collective_slices(sink, tracks, backends, labels, c);
    for (const KernelRow& k : batch.kernels) kernel_slice(sink, tracks, kinds, batch, k);
  }
}

// NVTX ranges are stored when they end, so an enclosing range comes after the
// ranges it encloses: ordered by start (longest first on a tie), a track's
// slices arrive as they nest. Syncs are calls of one thread, in order already.
std::string ranges_sql(const store::RunReader& reader) {
  return "SELECT rank, tid, name, start_ns, end_ns, domain FROM ranges WHERE start_ns IS NOT NULL "
         "AND " +
         reader.where("ranges") + " ORDER BY rank, tid, domain, start_ns, end_ns DESC";
}
std::string syncs_sql(const store::RunReader& reader) {
  return "SELECT rank, tid, call, start_ns, end_ns, '' FROM syncs WHERE start_ns IS NOT NULL AND " +
         reader.where("syncs");
}

// Host-thread intervals: NVTX ranges (a track per thread and domain) and
// synchronising calls. `sql` selects rank, tid, name, start_ns, end_ns, domain.
void walk_host_spans(TraceSink& sink, Tracks& tracks, store::RunReader& file,
                     const std::string& sql, Track kind, const char* cat) {
  store::Statement s(file.connection(), sql);
  while (s.step()) {
    uint32_t track = tracks.of(int(s.int64(0)), kind, uint64_t(s.int64(1)), s.text(5));
    sink.slice({s.text_view(2), cat, track, s.required_time(3), s.time(4), nullptr, 0});
  }
}

// Passes every call on, counting the slices for the progress line.
class CountingSink : public TraceSink {
 public:
  CountingSink(TraceSink& sink, uint64_t rows) : sink_(sink), slices_("trace: events", rows) {}
  void begin(const RunInfo& run) override { sink_.begin(run); }
  void process(int rank, const std::string& name) override { sink_.process(rank, name); }
  void track(const TrackInfo& t) override { sink_.track(t); }
  void slice(const Slice& s) override {
    slices_.tick();
    sink_.slice(s);
  }
  void end() override { sink_.end(); }

 private:
  TraceSink& sink_;
  core::progress::Counter slices_;
};

}  // namespace

// The earliest time of any event in the part of the run the reader keeps,
// so timestamps start near 0 (wall-clock ns since 1970 do not fit a
// double's precision as microseconds).
namespace {

// The ranks of `table`, one index seek each (a loose index scan of its
// (rank, ...) index), as a recursive CTE named `name`.
std::string ranks_of(const std::string& name, const std::string& table) {
  return name + "(x) AS (SELECT min(rank) FROM " + table +
         " UNION ALL SELECT (SELECT min(rank) FROM " + table + " WHERE rank > " + name +
         ".x) FROM " + name + " WHERE " + name + ".x IS NOT NULL)";
}

// min(column) over a table whose index leads with (rank, column): rank by
// rank, a seek each, rather than a pass over millions of rows.
std::string min_by_rank(const std::string& ranks, const std::string& table,
                        const std::string& column, const std::string& where) {
  return "SELECT min((SELECT min(" + column + ") FROM " + table + " WHERE rank = " + ranks +
         ".x AND " + where + ")) AS t FROM " + ranks;
}

// The earliest time in one file's tables; `indexed`: a run database's
// (rank, time) indexes are there to seek. Without `collectives`, those are
// left to the caller.
int64_t earliest_in_file(store::RunReader& file, bool indexed, bool collectives) {
  auto w = [&](const char* table) { return std::string(" WHERE ") + file.where(table); };
  auto by_rank = [&](const std::string& ranks, const char* table, const char* column) {
    return indexed ? min_by_rank(ranks, table, column, file.where(table))
                   : std::string("SELECT min(") + column + ") AS t FROM " + table + w(table);
  };
  const std::string collective_ranks = collectives ? ranks_of("cr", "collectives") + ", " : "";
  const std::string collective_times =
      collectives ? by_rank("cr", "collectives", "host_start_ns") +
                        " UNION ALL SELECT min(start_ns) FROM collectives" + w("collectives") +
                        " UNION ALL "
                  : "";
  store::Statement s(file.connection(),
                     "WITH RECURSIVE " + collective_ranks + ranks_of("kr", "kernels") +
                         " SELECT min(t) AS earliest_time FROM (" + collective_times +
                         by_rank("kr", "kernels", "start_ns") +
                         " UNION ALL SELECT min(start_ns) FROM ranges" + w("ranges") +
                         " UNION ALL SELECT min(start_ns) FROM syncs" + w("syncs") + ")");
  // time(): a stored value outside the time range is a damaged file, not an
  // origin every other time would overflow against.
  return s.step() && !s.is_null(0) ? s.time(0) : INT64_MAX;
}

int64_t earliest_collective(const CollectiveRuns& read) {
  int64_t earliest = INT64_MAX;
  for (const auto& run : read)
    for (const CollectiveRecord& c : run) {
      earliest = std::min(earliest, c.host_start_ns);  // never kNoTime
      if (c.start_ns != kNoTime) earliest = std::min(earliest, c.start_ns);
    }
  return earliest;
}

}  // namespace

int64_t trace_origin_ns(store::RunReader& reader, const CollectiveRuns* read) {
  // One file's tables are seeked rank by rank on their (rank, time) indexes;
  // a run's rank files have no such index and hold one rank each, so their
  // kernels are a pass over each file: a few ms a file, on every core.
  // Collectives' device starts have no index either: the records read
  // already make that pass one over memory.
  auto files = reader.parts();
  const bool indexed = files.size() == 1;
  std::vector<int64_t> earliest(files.size(), INT64_MAX);
  core::parallel_runs(files.size(), core::worker_threads(int(files.size())),
                      [&](size_t, size_t first, size_t last) {
                        for (size_t i = first; i < last; ++i)
                          earliest[i] = earliest_in_file(*files[i], indexed, read == nullptr);
                      });
  int64_t origin = read ? earliest_collective(*read) : INT64_MAX;
  for (int64_t t : earliest) origin = std::min(origin, t);
  return origin == INT64_MAX ? 0 : origin;
}

CollectiveBackends::CollectiveBackends(store::RunReader& reader) {
  for (const auto& p : reader.processes()) backends_[{p.rank, 0}] = p.backend;
  for (const auto& c : reader.comms()) backends_[{c.rank, c.comm_id}] = c.backend;
}

bool CollectiveBackends::gloo(const CollectiveRecord& c) const {
  auto b = backends_.find({c.rank, c.comm_id});
  if (b == backends_.end()) b = backends_.find({c.rank, 0});
  return b != backends_.end() && b->second == Backend::gloo;
}

void walk_run(store::RunReader& reader, TraceSink& out, const CollectiveRuns* read,
              const analysis::CollectiveLabels* labels) {
  // Host enqueues are slices too: the count may pass the rows a little.
  CountingSink sink(out, uint64_t(event_rows(reader)));
  sink.begin({reader.path(), reader.timeline(), trace_origin_ns(reader, read)});
  Tracks tracks(sink, reader.processes());
  walk_collectives_and_kernels(sink, tracks, reader, read, labels);
  // Each file's rows in the order one run database gives them: syncs as
  // stored (the merge's order), ranges by rank.
  for (store::RunReader* file : reader.parts(true))
    walk_host_spans(sink, tracks, *file, ranges_sql(*file), Track::nvtx, "nvtx");
  for (store::RunReader* file : reader.parts())
    walk_host_spans(sink, tracks, *file, syncs_sql(*file), Track::syncs, "sync");
  sink.end();
  core::progress::finish();
}

int64_t event_rows(store::RunReader& reader) {
  int64_t rows = 0;
  for (const char* table : {"collectives", "kernels", "ranges", "syncs"})
    rows += reader.count(table);
  return rows;
}

}  // namespace ddpscope::reports::trace
