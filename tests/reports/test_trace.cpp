// The Perfetto trace: valid Chrome trace-event JSON, a process per rank, a
// track per stream / thread / kernel kind / NVTX domain, and exact times.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "profiler/analysis/fsdp_account.h"
#include "profiler/core/input_error.h"
#include "reports/renderer.h"
#include "reports/trace/trace_events.h"
#include "tests/reports/fixtures.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;
using namespace ddpscope::testing;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct Trace {
  Json root;
  std::map<int, std::vector<std::string>> processes;       // pid -> process_name(s)
  std::map<std::pair<int, int64_t>, std::string> threads;  // (pid, tid) -> thread_name
  std::vector<Json> slices;                                // "X" events

  std::string track(const Json& e) const {
    auto it = threads.find({e["pid"].get<int>(), e["tid"].get<int64_t>()});
    return it == threads.end() ? "" : it->second;
  }
  std::vector<Json> named(const std::string& name) const {
    std::vector<Json> out;
    for (const auto& e : slices)
      if (e["name"] == name) out.push_back(e);
    return out;
  }
};

// Rank 0's collectives DDP's bucket all-reduces (bucket = seq); rank 1's
// first FSDP's reduce-scatter of blocks.0 (Gloo's all-reduce carried it).
analysis::CollectiveLabels sample_labels(store::RunReader& reader) {
  std::vector<analysis::Call> calls;
  reader.for_each_collective([&](const CollectiveRecord& c) {
    analysis::Call call = analysis::call_of(c);
    if (c.rank == 0) {
      call.role = analysis::CollectiveRole::ddp_bucket;
      call.instance = 0;
      call.bucket = int(c.seq);
    } else if (c.seq == 0) {
      call.role = analysis::CollectiveRole::fsdp_reduce_scatter;
      call.instance = 1;
    }
    calls.push_back(call);
  });
  std::map<int, analysis::FsdpRankAccount> fsdp;
  fsdp[1].units[1].fqn = "blocks.0";
  return analysis::CollectiveLabels(calls, fsdp);
}

Trace render(const std::string& dir, int extra = 0, bool labelled = false) {
  SampleRun db = make_run_db(dir, extra);
  analysis::RunAnalysis run;
  store::RunReader reader(db.path);
  analysis::CollectiveLabels labels;
  if (labelled) labels = sample_labels(reader);
  reports::make_trace_renderer()->write({run, reader, nullptr, labelled ? &labels : nullptr},
                                        dir + "/trace.json");
  Trace t;
  t.root = Json::parse(read_text(dir + "/trace.json"));
  for (const auto& e : t.root.at("traceEvents")) {
    REQUIRE(e.contains("ph"));
    REQUIRE(e.contains("pid"));
    REQUIRE(e["ts"].is_number());
    if (e["ph"] == "X") {
      CHECK(e["dur"].get<double>() >= 0);
      CHECK(e["ts"].get<double>() >= 0);
      t.slices.push_back(e);
    } else if (e["name"] == "process_name") {
      t.processes[e["pid"]].push_back(e["args"]["name"]);
    } else if (e["name"] == "thread_name") {
      auto key = std::make_pair(e["pid"].get<int>(), e["tid"].get<int64_t>());
      CHECK(t.threads.count(key) == 0);  // each track named once
      t.threads[key] = e["args"]["name"];
    }
  }
  return t;
}

std::set<std::string> tracks_of(const Trace& t, int pid) {
  std::set<std::string> names;
  for (const auto& [key, name] : t.threads)
    if (key.first == pid) CHECK(names.insert(name).second);  // no two tids per track
  return names;
}

}  // namespace

TEST_CASE("Trace: a process per rank, a track per stream, thread and kind") {
  std::string dir = temp_dir("trace");
  Trace t = render(dir);
  CHECK(t.root["displayTimeUnit"] == "ms");
  CHECK(t.root["otherData"]["timeline"] == "wall");
  CHECK(t.processes ==
        std::map<int, std::vector<std::string>>{{0, {"rank 0 (node0)"}}, {1, {"rank 1 (node1)"}}});
  CHECK(tracks_of(t, 0) ==
        std::set<std::string>{"stream 0x10", "stream 0x20", "thread 77", "host calls (thread 42)",
                              "compute kernels (stream 0x10)", "comm kernels (stream 0x10)",
                              "memcpy/memset (stream 0x20)", "nvtx pytorch (thread 42)",
                              "nvtx (thread 42)", "syncs (thread 42)"});
  CHECK(tracks_of(t, 1) == std::set<std::string>{"stream 0x30"});
  for (const auto& e : t.slices) {
    if (e["cat"] == "nccl") CHECK(t.track(e).rfind("stream 0x", 0) == 0);
    if (e["cat"] == "gloo") CHECK(t.track(e) == "thread 77");
  }
  fs::remove_all(dir);
}

TEST_CASE("Trace: collectives with their args, device and host intervals") {
  std::string dir = temp_dir("trace-times");
  Trace t = render(dir);
  auto all = t.named("allreduce");
  int collectives = 0;
  for (const auto& e : all) collectives += e["cat"] != "host";
  CHECK(collectives == 6);

  // Rank 0's first all-reduce: device 15.0..115.5 us, host call 10..13 us on
  // rank 0's monotonic clock; the trace starts at the NVTX range at 1 us.
  std::vector<Json> first;
  for (const auto& e : all)
    if (e["pid"] == 0 && e["args"]["seq"] == 0) first.push_back(e);
  REQUIRE(first.size() == 2);
  const Json& dev = first[0]["cat"] == "nccl" ? first[0] : first[1];
  const Json& host = first[0]["cat"] == "nccl" ? first[1] : first[0];
  CHECK(dev["ts"] == 14);
  CHECK(dev["dur"] == 100.5);
  CHECK(t.track(dev) == "stream 0x10");
  CHECK(dev["args"] == Json{{"bytes", 4096},
                            {"count", 1024},
                            {"dtype", "float32"},
                            {"seq", 0},
                            {"comm_id", "0x7123456789abcdef"},
                            {"group_id", 0},
                            {"nranks", 2},
                            {"timing", "event"}});
  CHECK(host["cat"] == "host");
  CHECK(host["ts"] == 9);
  CHECK(host["dur"] == 3);
  CHECK(t.track(host) == "host calls (thread 42)");

  // Host-timed calls have no separate host track: the slice is the call.
  for (const auto& e : all)
    if (e["pid"] == 1) {
      CHECK(e["cat"] == "nccl");
      CHECK(e["args"]["timing"] == "host");
      CHECK(e["dur"] == 3);
    }
  // Rank 1's clock starts 1 ms later on the wall timeline.
  CHECK(all.back()["pid"] == 1);
  CHECK(all.back()["ts"] == 1029);
  fs::remove_all(dir);
}

TEST_CASE("Trace: labelled collectives are named by bucket or unit, their role in the args") {
  std::string dir = temp_dir("trace-labels");
  Trace t = render(dir, 0, true);
  // Rank 0's first all-reduce, device and host slices alike.
  auto bucket = t.named("allreduce bucket 0");
  REQUIRE(bucket.size() == 2);
  for (const auto& e : bucket) CHECK(e["pid"] == 0);
  const Json& dev = bucket[0]["cat"] == "nccl" ? bucket[0] : bucket[1];
  CHECK(dev["args"]["role"] == "ddp_bucket");
  CHECK(dev["args"]["bucket"] == 0);
  CHECK(dev["args"]["seq"] == 0);
  CHECK_FALSE(dev["args"].contains("unit"));
  CHECK(t.named("allreduce bucket 1").size() == 2);
  // Rank 1's first: what FSDP issued, not the all-reduce that carried it.
  auto rs = t.named("reduce_scatter blocks.0");
  REQUIRE(rs.size() == 1);
  CHECK(rs[0]["pid"] == 1);
  CHECK(rs[0]["args"]["role"] == "fsdp_reduce_scatter");
  CHECK(rs[0]["args"]["unit"] == "blocks.0");
  CHECK(rs[0]["args"]["phase"] == "reduce_scatter");
  CHECK(rs[0]["args"]["carried_as"] == "allreduce");
  CHECK(rs[0]["args"]["bytes"] == 4096);
  // Rank 1's second, unlabelled: named by its op, with no role.
  auto plain = t.named("allreduce");
  REQUIRE(plain.size() == 1);
  CHECK(plain[0]["pid"] == 1);
  CHECK(plain[0]["args"]["seq"] == 1);
  CHECK_FALSE(plain[0]["args"].contains("role"));
  fs::remove_all(dir);
}

TEST_CASE("Trace: kernels by kind, NVTX ranges by domain, syncs") {
  std::string dir = temp_dir("trace-kernels");
  Trace t = render(dir);
  auto one = [&](const std::string& name) {
    auto found = t.named(name);
    REQUIRE(found.size() == 1);
    return found[0];
  };
  CHECK(t.track(one("sgemm_128x64")) == "compute kernels (stream 0x10)");
  Json comm = one("ncclDevKernel_AllReduce_Sum_f32");
  CHECK(t.track(comm) == "comm kernels (stream 0x10)");
  CHECK(comm["args"]["collective_id"] == 1);
  CHECK(comm["ts"] == 5);
  CHECK(comm["dur"] == 98);
  CHECK(t.track(one("Memcpy HtoD")) == "memcpy/memset (stream 0x20)");
  CHECK(t.track(one("Memset")) == "memcpy/memset (stream 0x20)");
  Json step = one("step \"1\"");  // quotes in a name survive
  CHECK(t.track(step) == "nvtx (thread 42)");
  CHECK(step["ts"] == 0);  // the earliest event of the run
  CHECK(step["dur"] == 399);
  CHECK(t.track(one("forward")) == "nvtx pytorch (thread 42)");
  CHECK(t.track(one("cudaStreamSynchronize")) == "syncs (thread 42)");
  fs::remove_all(dir);
}

TEST_CASE("Trace: a run larger than the write buffer streams out whole") {
  std::string dir = temp_dir("trace-large");
  Trace t = render(dir, 20000);
  CHECK(fs::file_size(dir + "/trace.json") > (2u << 20));
  size_t rank1 = 0;
  for (const auto& e : t.slices) rank1 += e["pid"] == 1;
  CHECK(rank1 == 20002);
  CHECK(tracks_of(t, 1) == std::set<std::string>{"stream 0x30"});
  fs::remove_all(dir);
}

namespace {

// `n` compute kernels of rank 1 on stream 0x50, k0, k1, ... in the order
// stored: the trace reads rows in batches of 8,192 on a thread of its own.
void add_kernels(const std::string& db, int n) {
  store::Connection conn(db, store::Connection::Mode::read_write);
  conn.exec("WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < " +
            std::to_string(n - 1) +
            ") INSERT INTO kernels SELECT 1, 0, 80, 'k' || i, 1700000000003000000 + 10 * i, "
            "1700000000003000005 + 10 * i, i, NULL, 'compute' FROM n");
}

// Fails at its `left`-th slice, as a full disk would.
struct FailingSink : reports::trace::TraceSink {
  int left;
  explicit FailingSink(int n) : left(n) {}
  void begin(const reports::trace::RunInfo&) override {}
  void process(int, const std::string&) override {}
  void track(const reports::trace::TrackInfo&) override {}
  void slice(const reports::trace::Slice&) override {
    if (--left == 0) throw std::runtime_error("disk full");
  }
  void end() override {}
};

}  // namespace

TEST_CASE(
    "Trace: kernels past several batches come whole and in order, a damaged one is bad input") {
  std::string dir = temp_dir("trace-kernel-batches");
  SampleRun db = make_run_db(dir);
  add_kernels(db.path, 20000);
  analysis::RunAnalysis run;
  auto write = [&](const std::string& name) {
    store::RunReader reader(db.path);
    reports::make_trace_renderer()->write({run, reader}, dir + "/" + name);
  };
  write("trace.json");
  std::vector<std::string> added;
  const Json root = Json::parse(read_text(dir + "/trace.json"));
  for (const auto& e : root.at("traceEvents"))
    if (e["ph"] == "X" && e["pid"] == 1 && e["cat"] == "kernel") added.push_back(e["name"]);
  REQUIRE(added.size() == 20000);
  for (size_t i = 0; i < added.size(); ++i) REQUIRE(added[i] == "k" + std::to_string(i));

  // In the third batch: the error comes after two batches were written.
  store::Connection(db.path, store::Connection::Mode::read_write)
      .exec("UPDATE kernels SET start_ns = 'x' WHERE name = 'k17000'");
  try {
    write("damaged.json");
    FAIL("a damaged kernel row was written");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains(db.path) && Catch::Contains("start_ns holds 'x'"));
  }
  CHECK_FALSE(fs::exists(dir + "/damaged.json"));  // nothing half-written
  fs::remove_all(dir);
}

TEST_CASE("Trace: a writer that fails stops the rows' reading thread, and the run reads on") {
  std::string dir = temp_dir("trace-writer-fails");
  SampleRun db = make_run_db(dir);
  add_kernels(db.path, 50000);  // more than the feed's queue holds
  store::RunReader reader(db.path);
  const int64_t kernels = reader.count("kernels");
  FailingSink sink(100);
  REQUIRE_THROWS_WITH(reports::trace::walk_run(reader, sink), "disk full");
  // The feed's statements are finalized: its connection is the caller's again.
  CHECK(reader.count("kernels") == kernels);
  fs::remove_all(dir);
}
