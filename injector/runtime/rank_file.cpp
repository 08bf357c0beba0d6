#include "injector/runtime/rank_file.h"

#include <unistd.h>

#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "injector/runtime/capture.h"
#include "injector/runtime/collective_timer.h"
#include "injector/runtime/comm_registry.h"
#include "injector/runtime/counters.h"
#include "injector/runtime/device_tracer.h"
#include "injector/runtime/log.h"
#include "injector/runtime/name_table.h"
#include "injector/runtime/symbols.h"
#include "injector/runtime/thread_buffer.h"
#include "profiler/core/rank_env.h"
#include "profiler/core/shared_fs.h"
#include "profiler/store/schema.h"
#include "profiler/store/writer.h"

namespace fs = std::filesystem;

namespace ddpscope::inject {

int64_t g_load_ns = 0;

namespace {

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (auto& c : s)
    if (c == '\0') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

RankFile::RankFile(std::string out_dir, BufferRegistry* buffers)
    : out_dir_(std::move(out_dir)), buffers_(buffers), id_(identity_from_env()) {}

RankFile::~RankFile() = default;

void RankFile::convert(const Event& e) {
  if (const Source* source = find_source(e.source)) source->convert(e, *this);
}

// The rank is filled in at write time: it may not be known yet.
void RankFile::collective(const CollectiveRecord& r, uint32_t timer, uint32_t correlation) {
  entered_.erase({r.tid, r.comm_id, r.seq});
  if (correlation != 0 && device_tracer())
    linker_.add_collective(r, correlation);
  else if (timer != kNoTimer)
    timed_.push_back({r, timer});
  else
    ready_.push_back(r);
}

void RankFile::collective_begin(const CollectiveRecord& r) {
  entered_[{r.tid, r.comm_id, r.seq}] = r;
}

void RankFile::comm_begin(const CommRecord& r) { comms_.push_back(r); }

namespace {

InflightRecord inflight_of(const CollectiveRecord& c, InflightState state, int64_t now) {
  InflightRecord r;
  r.comm_id = c.comm_id;
  r.comm_rank = c.comm_rank;
  r.nranks = c.nranks;
  r.seq = c.seq;
  r.op = c.op;
  r.dtype = c.dtype;
  r.count = c.count;
  r.bytes = c.bytes;
  r.tid = c.tid;
  r.host_start_ns = c.host_start_ns;
  r.seen_ns = now;
  r.state = state;
  return r;
}

}  // namespace

// Entered and not returned (Gloo: running in the call), or returned with the
// GPU work not known done (NCCL: a pending device timer or kernel link).
std::vector<InflightRecord> RankFile::inflight() const {
  std::vector<InflightRecord> out;
  int64_t now = clock::monotonic_ns();
  for (const auto& [_, c] : entered_) out.push_back(inflight_of(c, InflightState::running, now));
  for (const auto& t : timed_) out.push_back(inflight_of(t.record, InflightState::enqueued, now));
  linker_.for_each_pending([&](const CollectiveRecord& c) {
    out.push_back(inflight_of(c, InflightState::enqueued, now));
  });
  return out;
}

void RankFile::comm_end(const CommEndEvent& e) {
  CommEndEvent end = e;
  end.t = uint64_t(ticks_.to_ns(end.t));
  ends_.push_back(end);
}

void RankFile::resolve_timers(bool final) {
  // Only once a hook has used the timer: made earlier (at the first flush, say,
  // before the job has loaded the CUDA driver) it would stay null for good.
  if (timed_.empty()) return;
  CollectiveTimer* timer = collective_timer();
  if (!timer) {
    for (auto& t : timed_) ready_.push_back(t.record);
    timed_.clear();
    return;
  }
  // At exit, give outstanding GPU work a moment to finish. Work still
  // unfinished then is not known done: it stays in flight (the last flush
  // lists it enqueued), never written as completed.
  for (int attempt = 0;; ++attempt) {
    timer->sync_clocks();
    std::vector<Timed> still;
    for (auto& t : timed_) {
      TimerReading r = timer->poll(t.timer);
      if (r.state == TimerReading::State::pending) {
        still.push_back(t);
        continue;
      }
      if (r.state == TimerReading::State::done) {
        t.record.start_ns = r.start_ns;
        t.record.end_ns = r.end_ns;
        t.record.timing = Timing::event;
      } else {
        count(Counter::untimed_collectives);  // the driver cannot time it
      }
      timer->release(t.timer);
      ready_.push_back(t.record);
    }
    timed_.swap(still);
    if (!final || timed_.empty() || attempt >= 50) return;
    usleep(10000);
  }
}

// GPU activities collected since the last flush, tied to their collectives.
void RankFile::collect_activities(bool final) {
  DeviceTracer* tracer = device_tracer();
  if (!tracer) return;
  if (final) tracer->stop();
  tracer->collect(batch_);
  cupti_dropped_ += batch_.dropped;
  cupti_overhead_ns_ += batch_.overhead_ns;
  linker_.add_activities(batch_);
  linker_.take(final, linked_, kernels_);
}

bool RankFile::open() {
  id_ = resolve_identity(id_);
  host_ = rank_env::host_name();
  const ForkOrigin& origin = fork_origin();
  if (is_helper_of_parent(id_, origin.before_start, origin.parent_rank))
    return false;  // silent, as a child of a running rank is (docs/reliability.md)
  std::error_code ec;
  fs::create_directories(out_dir_, ec);
  // The name is claimed atomically (hosts sharing the directory may race for
  // it); a rank another process claimed already keeps both, and merge says so.
  std::string path = out_dir_ + "/rank-" + std::to_string(id_.rank) + ".db";
  if (!core::claim_file(path)) {
    path = out_dir_ + "/rank-" + std::to_string(id_.rank) + "." + std::to_string(getpid()) + ".db";
    core::claim_file(path);
  }
  int64_t wall = clock::wall_ns();
  try {
    writer_ = std::make_unique<store::RankWriter>(
        path, std::map<std::string, std::string>{
                  {"tool", "ddpscope"},
                  {"tool_version", DDPSCOPE_VERSION},
                  {"schema_version", std::to_string(store::kSchemaVersion)},
                  {"kind", "rank"},
                  {"timeline", "monotonic"},
                  {"command_line", command_line()},
                  {"host", host_},
                  {"start_time", clock::iso_utc(wall)},
                  {"tick_source", clock::kTicksAreTsc ? "tsc" : "clock_monotonic"},
              });
  } catch (const std::exception& e) {
    notice_once(Notice::no_output, "cannot write %s (%s); this process runs on unrecorded",
                path.c_str(), e.what());
    return false;
  }
  return true;
}

void RankFile::fail(const char* what) {
  notice_once(Notice::write_failed, "%s; recording stops, the job runs on", what);
  stop_recording();
  writer_.reset();
}

// Nothing more can be written: the hooks pass calls through from now on, and
// CUPTI, which would go on tracing every kernel and API call of the job for
// nobody, stops (after handing back its buffers).
void RankFile::stop_recording() {
  failed_ = true;
  g_state.store(int(State::disabled), std::memory_order_relaxed);
  if (DeviceTracer* tracer = device_tracer()) tracer->stop();
}

// Rows of the rank's own tables: the rank is known only at write time.
template <typename Record>
void RankFile::write_rows(std::vector<Record>& rows) {
  for (auto& r : rows) {
    r.rank = id_.rank;
    writer_->add(r);
  }
}

void RankFile::write() {
  ProcessRecord p;
  p.rank = id_.rank;
  p.world_size = id_.world_size;
  p.local_rank = id_.local_rank;
  p.host = host_;
  p.pid = getpid();
  int r, n;
  comm_registry().first_comm(&r, &n, &p.device, &p.backend);
  p.clock_offset_ns = clock::wall_offset_ns();
  p.dropped_events = buffers_->dropped();
  p.rank_source = id_.rank_source;
  p.start_ns = g_load_ns;
  p.end_ns = clock::monotonic_ns();
  p.finalized = final_ ? 1 : 0;

  writer_->begin();
  write_rows(comms_);
  for (auto& c : ready_) write_collective(c);
  for (auto& g : linked_) {
    for (auto& c : g.collectives) write_collective(c);
    // A group's kernels ran for all its collectives; they name the first.
    for (auto& k : g.kernels) k.collective_id = g.collectives.front().id;
    write_rows(g.kernels);
  }
  write_rows(kernels_);
  auto pending = inflight();
  for (auto& r : pending) r.rank = id_.rank;
  writer_->replace_inflight(pending);
  inflight_written_ = !pending.empty();
  write_counts();
  writer_->put_meta("event_rings", std::to_string(buffers_->size()));
  if (device_tracer()) {
    writer_->put_meta("cupti_dropped_records", std::to_string(cupti_dropped_));
    writer_->put_meta("cupti_overhead_ns", std::to_string(cupti_overhead_ns_));
  }
  for (const auto& e : ends_)
    writer_->end_comm(id_.rank, e.comm_id, e.comm_rank, int64_t(e.t), e.how);
  write_staged(*writer_, id_.rank);
  write_resolutions();
  writer_->put(p);
  writer_->commit();
}

// What was seen but not recorded in full (counters.h), as meta `count:<name>`;
// written once non-zero, so a file without them had nothing to say.
void RankFile::write_counts() {
  auto put = [&](const char* name, uint64_t n) {
    if (n) writer_->put_meta(std::string("count:") + name, std::to_string(n));
  };
  put("dropped_comm_events", buffers_->dropped_comm());
  for (int c = 0; c < int(Counter::count_of_counters); ++c)
    put(counter_name(Counter(c)), counter_value(Counter(c)));
}

// Where each hook's calls went (symbols.h), new ones since the last flush.
void RankFile::write_resolutions() {
  Resolution r[16];
  while (int n = resolutions(resolutions_written_, r, 16)) {
    for (int i = 0; i < n; ++i) writer_->put_meta(std::string("real:") + r[i].symbol, r[i].object);
    resolutions_written_ += n;
  }
}

void RankFile::write_collective(CollectiveRecord& c) {
  c.rank = id_.rank;
  c.id = next_collective_id_++;
  writer_->add(c);
}

void RankFile::flush(bool final) {
  final_ = final;
  ticks_.calibrate();
  for (int i = 0; i < buffers_->size(); ++i) {
    ThreadBuffer* b = buffers_->at(i);
    b->drain([this](const Event& e) { convert(e); });
    b->note_flush();
  }
  resolve_timers(final);
  collect_activities(final);
  bool have_events = !ready_.empty() || !comms_.empty() || !ends_.empty() || !staged_empty() ||
                     !linked_.empty() || !kernels_.empty() || inflight_written_ ||
                     !entered_.empty() || !timed_.empty() || linker_.pending() > 0;
  if (!failed_ && (writer_ || have_events)) {
    if (!writer_ && !open()) {
      stop_recording();
    } else {
      try {
        write();
      } catch (const std::exception& e) {
        fail(e.what());
      }
    }
  }
  discard_staged();  // written above, or never to be
  comms_.clear();
  ends_.clear();
  ready_.clear();
  linked_.clear();
  kernels_.clear();
}

void RankFile::close() {
  if (!writer_) return;
  try {
    writer_->close();
  } catch (const std::exception& e) {
    notice_once(Notice::write_failed, "closing %s: %s", writer_->path().c_str(), e.what());
  }
  writer_.reset();
}

}  // namespace ddpscope::inject
