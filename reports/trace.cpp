// Perfetto / chrome://tracing output: the Chrome trace-event "JSON Object
// Format". One process per rank, one track per NCCL stream or Gloo thread, and
// tracks for host calls, kernels, NVTX ranges and synchronisations. Events are
// streamed row by row from the database into a string buffer flushed every
// megabyte: a run of millions of collectives and kernels never sits in memory.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include "profiler/core/atomic_file.h"
#include "profiler/core/input_error.h"
#include "reports/renderer.h"

namespace ddpscope::reports {
namespace {

void put(std::string& out, int64_t v) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

// Microseconds with exact nanosecond decimals: integer arithmetic, so no
// rounding and no locale. Never negative: the origin is the earliest start.
void put_us(std::string& out, int64_t ns) {
  uint64_t v = uint64_t(std::max<int64_t>(ns, 0));
  put(out, int64_t(v / 1000));
  char frac[8];
  if (v % 1000) out.append(frac, snprintf(frac, sizeof frac, ".%03u", unsigned(v % 1000)));
}

// Names are almost always plain ASCII; anything else (quotes, control
// characters, invalid UTF-8 from a kernel or NVTX name) goes through nlohmann.
void put(std::string& out, std::string_view s) {
  auto plain = [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; };
  if (std::all_of(s.begin(), s.end(), plain)) {
    out.append(1, '"').append(s).append(1, '"');
    return;
  }
  auto j = nlohmann::json(std::string(s));
  out += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// One member of an "args" object: `"key":value`, after a comma unless first.
template <class T>
void arg(std::string& out, const char* key, const T& v) {
  out += out.back() == '{' ? "\"" : ",\"";
  out += key;
  out += "\":";
  put(out, v);
}

std::string hex(uint64_t v) {
  char buf[24] = "0x";
  return std::string(buf, std::to_chars(buf + 2, buf + sizeof buf, v, 16).ptr);
}

// The output buffer and the comma discipline of the traceEvents array.
class EventWriter {
 public:
  EventWriter(std::ostream& os, int64_t origin_ns) : os_(os), origin_(origin_ns) {}

  // Starts an event with its phase, name, pid and tid; the caller appends its
  // other fields and opens "args", adds args with arg(), then calls close().
  std::string& open(char ph, std::string_view name, int pid, int64_t tid) {
    buf_ += events_++ ? ",\n{\"ph\":\"" : "{\"ph\":\"";
    buf_ += ph;
    buf_ += "\",\"name\":";
    put(buf_, name);
    buf_ += ",\"pid\":";
    put(buf_, pid);
    buf_ += ",\"tid\":";
    put(buf_, tid);
    return buf_;
  }
  void close() {
    buf_ += "}}";
    if (buf_.size() >= kFlushAt) flush();
  }
  // A complete event over [start, end]; an unknown or earlier end is dur 0.
  std::string& slice(std::string_view name, const char* cat, int pid, int64_t tid, int64_t start,
                     int64_t end) {
    open('X', name, pid, tid) += ",\"cat\":\"";
    buf_.append(cat).append("\",\"ts\":");
    put_us(buf_, start - origin_);
    buf_ += ",\"dur\":";
    put_us(buf_, end != kNoTime && end > start ? end - start : 0);
    return buf_ += ",\"args\":{";
  }
  // Metadata ("M"): names and sort order; ts 0 so that every event has one.
  template <class T>
  void meta(const char* what, int pid, int64_t tid, const char* key, const T& value) {
    arg(open('M', what, pid, tid) += ",\"ts\":0,\"args\":{", key, value);
    close();
  }
  void raw(std::string_view s) { buf_ += s; }
  void flush() {
    os_.write(buf_.data(), std::streamsize(buf_.size()));
    buf_.clear();
  }

 private:
  static constexpr size_t kFlushAt = 1 << 20;
  std::ostream& os_;
  int64_t origin_;
  std::string buf_;
  uint64_t events_ = 0;
};

// What a track shows; the order here is the order of tracks in the UI, since
// tids are numbered kind by kind.
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

// Processes and tracks, each named by a metadata event the first time it is
// used. Small: one entry per (rank, stream/thread/domain, kind).
class Tracks {
 public:
  Tracks(EventWriter& w, const std::vector<ProcessRecord>& processes) : w_(w) {
    for (const auto& p : processes) hosts_[p.rank] = p.host;
    for (const auto& p : processes) announce(p.rank);
  }
  int64_t tid(int rank, Track kind, uint64_t id, const std::string& domain = "") {
    // Consecutive events mostly share a track: skip the map for a repeat.
    if (domain.empty() && last_.rank == rank && last_.kind == kind && last_.id == id)
      return last_.tid;
    int64_t t = lookup(rank, kind, id, domain);
    if (domain.empty()) last_ = {rank, kind, id, t};
    return t;
  }

 private:
  int64_t lookup(int rank, Track kind, uint64_t id, const std::string& domain) {
    auto key = std::make_tuple(rank, kind, id, domain);
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
    announce(rank);
    int64_t tid = int64_t(kind) * 100000 + 1 + int64_t(count_[{rank, kind}]++);
    ids_.emplace(key, tid);
    w_.meta("thread_name", rank, tid, "name", track_name(kind, id, domain));
    return tid;
  }
  struct Last {
    int rank = -1;
    Track kind = Track::stream;
    uint64_t id = 0;
    int64_t tid = 0;
  } last_;
  void announce(int rank) {
    if (!announced_.insert(rank).second) return;
    auto host = hosts_.find(rank);
    std::string name = "rank " + std::to_string(rank);
    if (host != hosts_.end() && !host->second.empty()) name += " (" + host->second + ")";
    w_.meta("process_name", rank, 0, "name", name);
    w_.meta("process_sort_index", rank, 0, "sort_index", rank);
  }
  EventWriter& w_;
  std::map<int, std::string> hosts_;
  std::set<int> announced_;
  std::map<std::tuple<int, Track, uint64_t, std::string>, int64_t> ids_;
  std::map<std::pair<int, Track>, int> count_;
};

// The earliest time of any event, so timestamps start near 0 (wall-clock ns
// since 1970 do not fit a double's precision as microseconds).
int64_t earliest_ns(store::Connection& db) {
  store::Statement s(db,
                     "SELECT min(t) FROM (SELECT min(host_start_ns) AS t FROM collectives "
                     "UNION ALL SELECT min(start_ns) FROM collectives "
                     "UNION ALL SELECT min(start_ns) FROM kernels "
                     "UNION ALL SELECT min(start_ns) FROM ranges "
                     "UNION ALL SELECT min(start_ns) FROM syncs)");
  return s.step() && !s.is_null(0) ? s.time(0) : 0;
}

void write_collectives(EventWriter& w, Tracks& tracks, store::RunReader& reader) {
  std::map<std::pair<int, uint64_t>, Backend> backends;  // Gloo groups run on host threads
  for (const auto& p : reader.processes()) backends[{p.rank, 0}] = p.backend;
  for (const auto& c : reader.comms()) backends[{c.rank, c.comm_id}] = c.backend;
  reader.for_each_collective([&](const CollectiveRecord& c) {
    bool measured = c.start_ns != kNoTime && c.end_ns != kNoTime;
    int64_t start = measured ? c.start_ns : c.host_start_ns;
    int64_t end = measured ? c.end_ns : c.host_end_ns;
    if (start == kNoTime) return;
    auto b = backends.find({c.rank, c.comm_id});
    if (b == backends.end()) b = backends.find({c.rank, 0});
    bool gloo = b != backends.end() && b->second == Backend::gloo;
    std::string op(name_of(c.op));
    int64_t tid = gloo ? tracks.tid(c.rank, Track::thread, c.tid)
                       : tracks.tid(c.rank, Track::stream, c.stream);
    std::string& out = w.slice(op, gloo ? "gloo" : "nccl", c.rank, tid, start, end);
    arg(out, "bytes", c.bytes);
    arg(out, "count", c.count);
    arg(out, "dtype", name_of(c.dtype));
    arg(out, "seq", c.seq);
    arg(out, "comm_id", hex(c.comm_id));  // a string: 63 bits do not survive a JS double
    arg(out, "group_id", c.group_id);
    arg(out, "nranks", c.nranks);
    arg(out, "timing", name_of(c.timing));
    w.close();
    // The enqueue on the host, when the slice above is the device execution.
    if (measured && c.timing != Timing::host && c.host_start_ns != kNoTime) {
      int64_t host = tracks.tid(c.rank, Track::host_calls, c.tid);
      arg(w.slice(op, "host", c.rank, host, c.host_start_ns, c.host_end_ns), "seq", c.seq);
      w.close();
    }
  });
}

// Kernel kinds are the capture's vocabulary (docs/schema.md leaves it open):
// memcpy*/memset* are copies; a kernel tied to a collective, of kind comm/nccl,
// or named nccl* is communication; everything else is compute.
Track kernel_track(std::string_view kind, bool for_collective, std::string_view name) {
  if (kind.find("memcpy") != std::string::npos || kind.find("memset") != std::string::npos)
    return Track::memory;
  if (for_collective || kind == "comm" || kind == "nccl" || kind == "communication" ||
      name.starts_with("nccl"))
    return Track::comm_kernels;
  return Track::compute_kernels;
}

// No ORDER BY: sorting 5M rows would cost a temp b-tree, and trace viewers
// sort events themselves.
void write_kernels(EventWriter& w, Tracks& tracks, store::Connection& db) {
  store::Statement s(db,
                     "SELECT rank, stream, name, start_ns, end_ns, kind, collective_id, "
                     "correlation, device FROM kernels WHERE start_ns IS NOT NULL");
  while (s.step()) {
    int rank = int(s.int64(0));
    std::string_view name = s.text_view(2);  // no copies: millions of rows
    bool for_collective = !s.is_null(6);
    Track kind = kernel_track(s.text_view(5), for_collective, name);  // kinds are lower-case
    int64_t tid = tracks.tid(rank, kind, uint64_t(s.int64(1)));
    std::string& out = w.slice(name, "kernel", rank, tid, s.time(3), s.time(4));
    arg(out, "device", s.int64(8));
    arg(out, "correlation", s.int64(7));
    if (for_collective) arg(out, "collective_id", s.int64(6));
    w.close();
  }
}

constexpr const char* kRangesSql =
    "SELECT rank, tid, name, start_ns, end_ns, domain FROM ranges WHERE start_ns IS NOT NULL";
constexpr const char* kSyncsSql =
    "SELECT rank, tid, call, start_ns, end_ns, '' FROM syncs WHERE start_ns IS NOT NULL";

// Host-thread intervals: NVTX ranges (a track per thread and domain) and
// synchronising calls. `sql` selects rank, tid, name, start_ns, end_ns, domain.
void write_host_spans(EventWriter& w, Tracks& tracks, store::Connection& db, const char* sql,
                      Track kind, const char* cat) {
  store::Statement s(db, sql);
  while (s.step()) {
    int rank = int(s.int64(0));
    int64_t tid = tracks.tid(rank, kind, uint64_t(s.int64(1)), s.text(5));
    w.slice(s.text(2), cat, rank, tid, s.time(3), s.time(4));
    w.close();
  }
}

void render(store::RunReader& reader, std::ostream& os) {
  auto& db = reader.connection();
  int64_t origin = earliest_ns(db);
  EventWriter w(os, origin);
  nlohmann::json other = {{"run", reader.path()},
                          {"timeline", reader.timeline()},
                          {"origin_ns", std::to_string(origin)}};
  w.raw("{\"displayTimeUnit\":\"ms\",\"otherData\":" +
        other.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
        ",\n\"traceEvents\":[\n");
  Tracks tracks(w, reader.processes());
  write_collectives(w, tracks, reader);
  write_kernels(w, tracks, db);
  write_host_spans(w, tracks, db, kRangesSql, Track::nvtx, "nvtx");
  write_host_spans(w, tracks, db, kSyncsSql, Track::syncs, "sync");
  w.raw("\n]}\n");
  w.flush();
}

class TraceRenderer : public Renderer {
 public:
  void write(const ReportInput& input, const std::string& target) override {
    core::write_atomically(target, [&](std::ostream& os) {
      try {
        render(input.reader, os);
      } catch (const InputError& e) {
        // A database error names the database; the user asked about the target.
        throw InputError(target, e.what());
      } catch (const std::exception& e) {
        throw std::runtime_error(target + ": " + e.what());
      }
    });
  }
};

}  // namespace

std::unique_ptr<Renderer> make_trace_renderer() { return std::make_unique<TraceRenderer>(); }

}  // namespace ddpscope::reports
