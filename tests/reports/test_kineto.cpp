// `report --kineto DIR`: the layout of the PyTorch profiler's trace that HTA
// reads, on the generated GPU-like run (gpu_run.h): one file per rank with the
// rank where HTA's loader finds it, every kernel on its device and stream with
// one launch on the host under its correlation id, NCCL's collective args,
// ProfilerStep spans, exact times; and a directory that cannot take the
// traces refused before anything is written. HTA itself reads the traces in
// test_kineto_hta.py.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "profiler/analysis/analyze.h"
#include "profiler/core/input_error.h"
#include "reports/kineto/kineto_trace.h"
#include "reports/trace/trace_events.h"
#include "tests/reports/fixtures.h"
#include "tests/reports/gpu_run.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;
using namespace ddpscope::testing;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct KinetoRendered {
  std::string dir;  // the traces
  GpuRun gpu;
  analysis::RunAnalysis run;
  int64_t origin = 0;
  std::map<int, Json> traces;       // rank -> parsed file
  std::map<int, std::string> text;  // rank -> file text
};

KinetoRendered render_kineto(const std::string& dir) {
  KinetoRendered r;
  r.dir = dir + "/kineto";
  r.gpu = make_gpu_run(dir);
  store::RunReader reader(r.gpu.path);
  r.run = analysis::analyze_run(reader);
  r.origin = reports::trace::trace_origin_ns(reader);
  reports::make_kineto_renderer()->write({r.run, reader}, r.dir);
  for (int rank = 0; rank < int(r.gpu.kernels.size()); ++rank) {
    r.text[rank] = read_text(reports::kineto_file(r.dir, rank));
    r.traces[rank] = Json::parse(r.text[rank]);
  }
  return r;
}

const KinetoRendered& rendered() {
  static KinetoRendered r = render_kineto(temp_dir("kineto"));
  return r;
}

std::vector<Json> events(const Json& trace, const std::string& ph, const std::string& cat = "") {
  std::vector<Json> out;
  for (const auto& e : trace.at("traceEvents"))
    if (e["ph"] == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
  return out;
}

// Metadata events ("M") have no category; a const Json asked for a key it
// lacks is undefined behaviour (an assertion in a debug build): value() it.
bool on_gpu(const Json& e) {
  return e.value("cat", "") == "kernel" || e.value("cat", "") == "gpu_memcpy" ||
         e.value("cat", "") == "gpu_memset";
}

int64_t ns(const Json& us) { return std::llround(us.get<double>() * 1000.0); }

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("kineto: a file per rank, its rank where HTA's loader looks") {
  const auto& r = rendered();
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(r.dir)) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  CHECK(files ==
        std::vector<std::string>{"rank-0.json", "rank-1.json", "rank-2.json", "rank-3.json"});
  // HTA takes the rank from the first line matching this (hta/common/trace_file.py).
  const std::regex hta_rank(R"re("rank":\s+(\d+))re");
  for (const auto& [rank, trace] : r.traces) {
    std::smatch m;
    REQUIRE(std::regex_search(r.text.at(rank), m, hta_rank));
    CHECK(std::stoi(m[1].str()) == rank);
    CHECK(trace["schemaVersion"] == 1);
    CHECK(trace["distributedInfo"] == Json{{"backend", "nccl"}, {"rank", rank}, {"world_size", 4}});
    // The run's clock is the wall clock: the origin is the base as it is.
    CHECK(trace["baseTimeNanoseconds"].get<int64_t>() == r.origin);
    CHECK(trace["displayTimeUnit"] == "ms");
  }
}

TEST_CASE("kineto: every kernel on its device and stream, launched once under its correlation") {
  const auto& r = rendered();
  for (const auto& [rank, trace] : r.traces) {
    std::map<int64_t, Json> launches;  // correlation -> cuda_runtime event
    for (const auto& e : events(trace, "X", "cuda_runtime")) {
      if (!e["args"].contains("correlation")) continue;
      CHECK(launches.emplace(e["args"]["correlation"].get<int64_t>(), e).second);
      CHECK(e["pid"] == 30000 + rank);            // the host process
      CHECK_FALSE(e["args"].contains("stream"));  // HTA reads a stream as "on the GPU"
    }
    int64_t gpu_events = 0;
    std::map<int64_t, int> flows;  // correlation -> "s" + "f" seen
    for (const auto& e : trace["traceEvents"])
      if (e.value("cat", "") == "ac2g") flows[e["id"].get<int64_t>()] += e["ph"] == "s" ? 1 : 10;
    for (const auto& e : events(trace, "X")) {
      if (!on_gpu(e)) continue;
      ++gpu_events;
      CHECK(e["pid"] == rank);  // the device
      CHECK(e["args"]["device"] == rank);
      CHECK(e["args"]["stream"] == e["tid"]);
      int64_t corr = e["args"]["correlation"];
      REQUIRE(launches.count(corr) == 1);
      CHECK(ns(launches[corr]["ts"]) <= ns(e["ts"]));
      CHECK(flows[corr] == 11);  // one arrow from the launch to the kernel
      std::string name = e["name"];
      if (e.value("cat", "") != "kernel")
        CHECK((name.rfind("Memcpy", 0) == 0 || name.rfind("Memset", 0) == 0));
    }
    CHECK(gpu_events == r.gpu.kernels[size_t(rank)]);
    CHECK(launches.size() == size_t(gpu_events));
  }
}

TEST_CASE("kineto: NCCL kernels carry the collective's args and are launched by its call") {
  const auto& r = rendered();
  for (const auto& [rank, trace] : r.traces) {
    std::map<int64_t, Json> calls;  // External id -> cpu_op
    for (const auto& e : events(trace, "X", "cpu_op")) {
      CHECK(e["name"] == "nccl:allreduce");
      CHECK(e["tid"] == 4000 + rank);
      calls[e["args"]["External id"].get<int64_t>()] = e;
    }
    int comm = 0;
    for (const auto& e : events(trace, "X", "kernel")) {
      if (e["name"] != "ncclDevKernel_AllReduce_Sum_f32_RING_LL") continue;
      ++comm;
      const Json& a = e["args"];
      CHECK(a["Collective name"] == "allreduce");
      CHECK(a["dtype"] == "Float");
      CHECK(a["Group size"] == 4);
      CHECK(a["In msg nelems"] == a["Out msg nelems"]);
      CHECK(a["In msg nelems"].get<int64_t>() * 4 >= 10 << 20);
      REQUIRE(calls.count(a["External id"]) == 1);
      const Json& call = calls[a["External id"]];
      CHECK(call["args"]["In msg nelems"] == a["In msg nelems"]);
      CHECK(ns(call["ts"]) < ns(e["ts"]));  // the host runs ahead
    }
    CHECK(comm == r.gpu.comm_kernels[size_t(rank)]);
    CHECK(calls.size() == size_t(comm));
  }
}

TEST_CASE("kineto: a ProfilerStep per iteration, back to back, the last to the rank's end") {
  const auto& r = rendered();
  for (const auto& [rank, trace] : r.traces) {
    std::vector<Json> steps;
    int64_t last_end = 0;
    for (const auto& e : events(trace, "X")) {
      last_end = std::max(last_end, ns(e["ts"]) + ns(e["dur"]));
      if (e["name"].get<std::string>().rfind("ProfilerStep#", 0) == 0) steps.push_back(e);
    }
    REQUIRE(int(steps.size()) == r.gpu.iterations);
    std::vector<const analysis::IterationStats*> mine;
    for (const auto& it : r.run.iteration_list)
      if (it.rank == rank) mine.push_back(&it);
    REQUIRE(mine.size() == steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      CHECK(steps[i]["name"] == "ProfilerStep#" + std::to_string(mine[i]->index));
      CHECK(steps[i]["cat"] == "user_annotation");
      CHECK(ns(steps[i]["ts"]) == mine[i]->launch_ns - r.origin);
      int64_t end = ns(steps[i]["ts"]) + ns(steps[i]["dur"]);
      if (i + 1 < steps.size())
        CHECK(end == ns(steps[i + 1]["ts"]));
      else
        CHECK(end == last_end);
    }
  }
}

TEST_CASE("kineto: times are exact nanoseconds from the run's origin") {
  const auto& r = rendered();
  store::RunReader reader(r.gpu.path);
  auto k = reader.rows<KernelRecord>("rank = 2", "start_ns LIMIT 3");
  REQUIRE(k.size() == 3);
  std::map<std::pair<int64_t, int64_t>, const Json*> gpu;  // (stream, start) -> event
  const auto all = events(r.traces.at(2), "X");
  for (const auto& e : all)
    if (on_gpu(e)) gpu[{e["tid"].get<int64_t>(), ns(e["ts"])}] = &e;
  for (const auto& row : k) {
    auto it = gpu.find({int64_t(row.stream), row.start_ns - r.origin});
    REQUIRE(it != gpu.end());
    CHECK(ns((*it->second)["dur"]) == row.end_ns - row.start_ns);
  }
  // Three decimals in the text, the way Kineto writes them.
  CHECK(std::regex_search(r.text.at(2), std::regex(R"("ts": \d+\.\d{3},)")));
}

TEST_CASE("kineto: the rank's overlap figure differs by rank on the generated run") {
  const auto& r = rendered();
  REQUIRE(r.run.ranks.size() == 4);
  double lo = 100, hi = 0;
  for (const auto& s : r.run.ranks) {
    REQUIRE(std::isfinite(s.kernel_overlap_pct));
    lo = std::min(lo, s.kernel_overlap_pct);
    hi = std::max(hi, s.kernel_overlap_pct);
  }
  CHECK(lo < 30);
  CHECK(hi > 80);
}

TEST_CASE("kineto: host-only and device-timed collectives") {
  auto dir = temp_dir("kineto-sample");
  SampleRun db = make_run_db(dir);
  store::RunReader reader(db.path);
  analysis::RunAnalysis run;  // no iterations: no ProfilerStep
  reports::make_kineto_renderer()->write({run, reader}, dir + "/k");
  Json rank0 = Json::parse(read_text(dir + "/k/rank-0.json"));
  Json rank1 = Json::parse(read_text(dir + "/k/rank-1.json"));
  // Gloo runs on the calling thread: its call is all there is.
  bool gloo = false;
  for (const auto& e : events(rank0, "X"))
    if (e["name"] == "gloo:allreduce") gloo = e.value("cat", "") == "cpu_op" && e["tid"] == 77;
  CHECK(gloo);
  // NCCL timed by CUDA events, without kernel rows: one GPU span per call,
  // named so that HTA counts it as communication, with its launch.
  int spans = 0;
  for (const auto& e : events(rank0, "X", "kernel"))
    if (e["name"] == "ncclKernel_allreduce") {
      ++spans;
      CHECK(e["args"]["timing"] == "event");
    }
  CHECK(spans == 3);
  // Host-timed NCCL (rank 1): host calls, nothing on a GPU.
  for (const auto& e : events(rank1, "X")) CHECK_FALSE(on_gpu(e));
  CHECK(events(rank1, "X", "cpu_op").size() == 2);
}

TEST_CASE("kineto: a directory that cannot take the traces is refused, nothing written") {
  auto dir = temp_dir("kineto-refused");
  CHECK_NOTHROW(reports::check_kineto_dir(dir + "/new"));  // created when written
  CHECK_THROWS_AS(reports::check_kineto_dir(""), InputError);
  CHECK_THROWS_AS(reports::check_kineto_dir(dir + "/missing/new"), InputError);
  write_text(dir + "/file", "x");
  CHECK_THROWS_AS(reports::check_kineto_dir(dir + "/file"), InputError);
  fs::create_directories(dir + "/other");
  write_text(dir + "/other/trace.pt.trace.json", "{}");
  CHECK_THROWS_WITH(reports::check_kineto_dir(dir + "/other"),
                    Catch::Contains("trace.pt.trace.json") && Catch::Contains("HTA"));
  // A rank this run does not have: found once the ranks are known, before writing.
  fs::create_directories(dir + "/stale");
  write_text(dir + "/stale/rank-9.json", "{}");
  CHECK_NOTHROW(reports::check_kineto_dir(dir + "/stale"));
  SampleRun db = make_run_db(dir);
  store::RunReader reader(db.path);
  analysis::RunAnalysis run;
  CHECK_THROWS_AS(reports::make_kineto_renderer()->write({run, reader}, dir + "/stale"),
                  InputError);
  CHECK_FALSE(fs::exists(dir + "/stale/rank-0.json"));
  // Our own files of the same ranks are replaced.
  reports::make_kineto_renderer()->write({run, reader}, dir + "/ours");
  CHECK_NOTHROW(reports::make_kineto_renderer()->write({run, reader}, dir + "/ours"));
}
