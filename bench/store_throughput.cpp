// bench_store_throughput: how many collective records per second the store's
// batched writer (store::RankWriter) sustains on one core.
//
// The injector's writer thread hands RankWriter one transaction per flush
// (every 200 ms by default); this benchmark replays that pattern with
// synthetic but realistic records and times only the writer calls, so the
// figure is the ceiling the store puts on a rank's event rate.
//
//   bench_store_throughput [--events N] [--batch N] [--reps N] [--dir DIR]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/core/records.h"
#include "profiler/store/writer.h"

namespace fs = std::filesystem;
using ddpscope::CollectiveRecord;

namespace {

constexpr double kTargetEventsPerSec = 1e6;

struct Options {
  uint64_t events = 2'000'000;
  uint64_t batch = 50'000;  // ~what one 200 ms flush carries at 250k events/s
  int reps = 5;
  std::string dir = "/tmp";
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--events N] [--batch N] [--reps N] [--dir DIR]\n"
               "  --events N  records written per repetition [2000000]\n"
               "  --batch N   records per transaction (one flush) [50000]\n"
               "  --reps N    repetitions per mode [5]\n"
               "  --dir DIR   where the scratch files go [/tmp]\n",
               argv0);
  std::exit(2);
}

uint64_t parse_count(const char* argv0, const char* text) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || v == 0) usage(argv0);
  return v;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "-h" || a == "--help") usage(argv[0]);
    if (i + 1 >= argc) usage(argv[0]);
    const char* v = argv[++i];
    if (a == "--events")
      o.events = parse_count(argv[0], v);
    else if (a == "--batch")
      o.batch = parse_count(argv[0], v);
    else if (a == "--reps")
      o.reps = int(parse_count(argv[0], v));
    else if (a == "--dir")
      o.dir = v;
    else
      usage(argv[0]);
  }
  return o;
}

// xorshift64*: deterministic and far cheaper than what it feeds, so record
// generation stays negligible next to the SQLite work being measured.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 0x2545F4914F6CDD1DULL;
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t s_;
};

// Synthetic records shaped like a DDP job on NCCL: mostly gradient-bucket
// all-reduces on the default communicator, some broadcasts/all-gathers/
// reduce-scatters and a little point-to-point on a second one, sizes spread
// log-uniformly over 4 B..100 MB, times increasing like a real timeline.
class RecordSource {
 public:
  CollectiveRecord next() {
    CollectiveRecord r;
    r.rank = 0;
    r.nranks = 8;
    r.comm_rank = 0;
    r.op = pick_op();
    // The second communicator carries the non-gradient traffic, so its seq
    // numbers advance independently as NCCL's do.
    int comm = (r.op == ddpscope::Op::allreduce) ? 0 : 1;
    r.comm_id = kCommIds[comm];
    r.seq = seq_[comm]++;
    r.dtype = pick_dtype();
    r.redop =
        ddpscope::op_is(r.op, ddpscope::kReduces) ? ddpscope::RedOp::sum : ddpscope::RedOp::none;
    r.bytes = pick_bytes();
    r.count = std::max<uint64_t>(1, r.bytes / ddpscope::dtype_bytes(r.dtype));
    if (r.op == ddpscope::Op::broadcast) r.root = 0;
    bool point_to_point = ddpscope::op_is(r.op, ddpscope::kPointToPoint);
    if (point_to_point) r.peer = 1;
    r.stream = kStreams[comm];
    r.tid = 4242 + comm;
    r.group_id = point_to_point ? group_++ : 0;
    fill_times(r);
    return r;
  }

 private:
  static constexpr uint64_t kCommIds[2] = {0x9e3779b97f4a7c15ULL, 0x5bd1e9955bd1e995ULL};
  static constexpr uint64_t kStreams[2] = {0x7f3a1c000000ULL, 0x7f3a1c000400ULL};

  ddpscope::Op pick_op() {
    double u = rng_.uniform();
    if (u < 0.80) return ddpscope::Op::allreduce;
    if (u < 0.88) return ddpscope::Op::broadcast;
    if (u < 0.94) return ddpscope::Op::allgather;
    if (u < 0.98) return ddpscope::Op::reduce_scatter;
    return (rng_.next() & 1) ? ddpscope::Op::send : ddpscope::Op::recv;
  }

  ddpscope::Dtype pick_dtype() {
    double u = rng_.uniform();
    if (u < 0.6) return ddpscope::Dtype::float32;
    if (u < 0.9) return ddpscope::Dtype::bfloat16;
    return ddpscope::Dtype::float16;
  }

  // Log-uniform over [4 B, 100 MB], rounded to 4 bytes.
  uint64_t pick_bytes() {
    double lo = std::log(4.0), hi = std::log(100e6);
    uint64_t b = uint64_t(std::exp(lo + (hi - lo) * rng_.uniform()));
    return std::max<uint64_t>(4, b & ~uint64_t(3));
  }

  // Host call of a few microseconds, device execution after it at ~100 GB/s
  // plus latency, then a gap before the next call.
  void fill_times(CollectiveRecord& r) {
    now_ns_ += 2'000 + int64_t(rng_.next() % 50'000);
    r.host_start_ns = now_ns_;
    r.host_end_ns = now_ns_ + 3'000 + int64_t(rng_.next() % 7'000);
    r.start_ns = r.host_end_ns + int64_t(rng_.next() % 20'000);
    r.end_ns = r.start_ns + 8'000 + int64_t(r.bytes / 100);
    r.timing = ddpscope::Timing::event;
    now_ns_ = r.host_end_ns;
  }

  Rng rng_{0x12345678abcdefULL};
  uint64_t seq_[2] = {0, 0};
  uint64_t group_ = 1;
  int64_t now_ns_ = 1'000'000'000;
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct RunResult {
  double write_s = 0;  // begin/add/commit of every batch
  double close_s = 0;  // the final close(): WAL checkpoint into the main file
  uint64_t file_bytes = 0;
};

// Records are generated in chunks outside the timed region: the injector's
// writer thread also has them in memory before it calls the store. Chunking
// keeps memory bounded even when one batch holds every record.
constexpr uint64_t kChunk = 16'384;

double write_batch(ddpscope::store::RankWriter& w, RecordSource& src, uint64_t n,
                   std::vector<CollectiveRecord>& chunk) {
  double s = 0;
  auto t0 = Clock::now();
  w.begin();
  s += seconds_since(t0);
  for (uint64_t done = 0; done < n;) {
    uint64_t k = std::min(kChunk, n - done);
    chunk.clear();
    for (uint64_t i = 0; i < k; ++i) chunk.push_back(src.next());
    t0 = Clock::now();
    for (const auto& r : chunk) w.add(r);
    s += seconds_since(t0);
    done += k;
  }
  t0 = Clock::now();
  w.commit();
  return s + seconds_since(t0);
}

const std::map<std::string, std::string>& bench_meta() {
  static const std::map<std::string, std::string> meta = {
      {"tool", "ddpscope"},
      {"schema_version", "1"},
      {"kind", "rank"},
      {"timeline", "monotonic"},
      {"command_line", "bench_store_throughput"}};
  return meta;
}

RunResult run_once(const std::string& path, uint64_t events, uint64_t batch) {
  RunResult res;
  RecordSource src;
  std::vector<CollectiveRecord> chunk;
  chunk.reserve(kChunk);
  ddpscope::store::RankWriter w(path, bench_meta());
  for (uint64_t done = 0; done < events;) {
    uint64_t n = std::min(batch, events - done);
    res.write_s += write_batch(w, src, n, chunk);
    done += n;
  }
  auto t0 = Clock::now();
  w.close();
  res.close_s = seconds_since(t0);
  res.file_bytes = fs::file_size(path);
  return res;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Summary {
  std::vector<double> rates, close_ms;
  uint64_t file_bytes = 0;
};

// Each repetition writes a fresh file, as each rank of a recording does.
Summary run_mode(const Options& o, const std::string& scratch, uint64_t batch) {
  Summary s;
  for (int rep = 0; rep < o.reps; ++rep) {
    std::string path = scratch + "/rank-" + std::to_string(rep) + ".db";
    RunResult r = run_once(path, o.events, batch);
    s.rates.push_back(double(o.events) / r.write_s);
    s.close_ms.push_back(r.close_s * 1e3);
    s.file_bytes = r.file_bytes;
    fs::remove(path);
  }
  return s;
}

void print_header() {
  std::printf("%-13s %9s %9s %13s %13s %13s %9s %10s\n", "mode", "batch", "events", "median ev/s",
              "min ev/s", "max ev/s", "B/event", "close ms");
}

void print_row(const char* mode, uint64_t batch, uint64_t events, const Summary& s) {
  auto [lo, hi] = std::minmax_element(s.rates.begin(), s.rates.end());
  std::printf("%-13s %9llu %9llu %13.0f %13.0f %13.0f %9.1f %10.1f\n", mode,
              (unsigned long long)batch, (unsigned long long)events, median(s.rates), *lo, *hi,
              double(s.file_bytes) / double(events), median(s.close_ms));
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse_options(argc, argv);
  std::string tmpl = o.dir + "/ddpscope-bench-XXXXXX";
  if (!mkdtemp(tmpl.data())) {
    std::perror(("mkdtemp " + tmpl).c_str());
    return 1;
  }
  std::printf("store throughput: %llu records per repetition, %d repetitions, files in %s\n",
              (unsigned long long)o.events, o.reps, tmpl.c_str());
  std::fflush(stdout);
  try {
    Summary batched = run_mode(o, tmpl, o.batch);
    Summary single = run_mode(o, tmpl, o.events);
    print_header();
    print_row("batched", o.batch, o.events, batched);
    print_row("single batch", o.events, o.events, single);
    double m = median(batched.rates);
    std::printf("target: >= %.0f events/s batched -> %s (%.2fx)\n", kTargetEventsPerSec,
                m >= kTargetEventsPerSec ? "met" : "NOT met", m / kTargetEventsPerSec);
    std::printf("events/s counts begin/add/commit only; close ms is the final close() alone\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_store_throughput: %s\n", e.what());
    fs::remove_all(tmpl);
    return 1;
  }
  fs::remove_all(tmpl);
  return 0;
}
