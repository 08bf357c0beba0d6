// NVTX ranges through NVTX's own injection mechanism: nvtx_workload (NVTX3,
// header-only) runs with NVTX_INJECTION64_PATH and LD_PRELOAD naming the
// injector, as `ddpscope record` sets them; the ranges table must hold exactly
// the ranges it marked, with their domains, threads and nesting.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <sstream>

#include "profiler/store/reader.h"
#include "tests/support/built_path.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;
namespace fs = std::filesystem;

namespace {

struct Range {
  uint32_t tid;
  std::string domain, name;
  int64_t start_ns, end_ns;
};

std::map<std::string, Range> ranges_by_name(const std::string& db_path) {
  store::RunReader db(db_path);
  store::Statement q(db.connection(), "SELECT tid, domain, name, start_ns, end_ns FROM ranges");
  std::map<std::string, Range> by_name;
  while (q.step())
    by_name[q.text(2)] = {uint32_t(q.int64(0)), q.text(1), q.text(2), q.time(3), q.time(4)};
  return by_name;
}

// What `ddpscope record` sets (DDPSCOPE_NVTX: "0" for --no-nvtx).
std::map<std::string, std::string> nvtx_env(const std::string& out, const char* nvtx = "1") {
  return {{"LD_PRELOAD", INJECT_LIB}, {"NVTX_INJECTION64_PATH", INJECT_LIB},
          {"DDPSCOPE_NVTX", nvtx},    {"DDPSCOPE_OUT", out},
          {"DDPSCOPE_RANK", "0"},     {"DDPSCOPE_FLUSH_MS", "50"}};
}

// The workload's "key value..." lines.
std::map<std::string, std::string> said(const std::string& out) {
  std::map<std::string, std::string> lines;
  std::istringstream in(out);
  std::string key, rest;
  while (in >> key && std::getline(in, rest)) lines[key] = rest.substr(1);
  return lines;
}

bool inside(const Range& inner, const Range& outer) {
  return outer.start_ns <= inner.start_ns && inner.end_ns <= outer.end_ns;
}

}  // namespace

TEST_CASE("NVTX ranges are recorded with names, domains, threads and nesting") {
  auto dir = testing::temp_dir("nvtx");
  auto r = testing::run({NVTX_WORKLOAD_EXE}, nvtx_env(dir));
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  auto out = said(r.out);
  uint32_t main_tid = std::stoul(out["main"]), worker_tid = std::stoul(out["worker"]);
  CHECK(out["levels"] == "0 1 1 0");  // NVTX hands the app our nesting levels
  CHECK(out["unbalanced"] == "-1");

  auto ranges = ranges_by_name(dir + "/rank-0.db");
  std::map<std::string, std::pair<std::string, uint32_t>> want = {
      {"step", {"", main_tid}},
      {"forward", {"", main_tid}},
      {"backward-\u00fc", {"", main_tid}},
      {"bucket", {"ddp", main_tid}},
      {"outer", {"", main_tid}},
      {"inner", {"ddp", main_tid}},
      {"load", {"", main_tid}},
      {"prefetch", {"ddp", worker_tid}}};
  REQUIRE(ranges.size() == want.size());
  for (const auto& [name, where] : want) {
    INFO(name);
    REQUIRE(ranges.count(name) == 1);
    const Range& got = ranges[name];
    CHECK(got.domain == where.first);
    CHECK(got.tid == where.second);  // start/end ranges: the thread that started them
    CHECK(got.start_ns <= got.end_ns);
  }
  CHECK(inside(ranges["forward"], ranges["step"]));
  CHECK(inside(ranges["backward-\u00fc"], ranges["step"]));
  CHECK(ranges["forward"].end_ns <= ranges["backward-\u00fc"].start_ns);
  CHECK(ranges["step"].end_ns <= ranges["bucket"].start_ns);
  // Popping the default domain ended "outer" while "inner" (ddp) stayed open.
  CHECK(ranges["outer"].start_ns <= ranges["inner"].start_ns);
  CHECK(ranges["outer"].end_ns <= ranges["inner"].end_ns);
  CHECK(ranges["inner"].end_ns <= ranges["load"].start_ns);
  CHECK(ranges["load"].end_ns <= ranges["prefetch"].start_ns);
}

TEST_CASE("NVTX nesting deeper than the stack: the outer 32 recorded, levels and pops still pair") {
  auto dir = testing::temp_dir("nvtx-deep");
  auto r = testing::run({NVTX_WORKLOAD_EXE, "deep", "40"}, nvtx_env(dir));
  REQUIRE(r.status == 0);
  std::string push, pop;
  for (int i = 0; i < 40; ++i) {
    push += " " + std::to_string(i);
    pop += " " + std::to_string(39 - i);
  }
  auto out = said(r.out);
  CHECK(" " + out["push"] == push);
  CHECK(" " + out["pop"] == pop);
  CHECK(r.err ==
        "ddpscope: NVTX ranges nested deeper than 32 on a thread; the deeper ones are "
        "not recorded\n");
  auto ranges = ranges_by_name(dir + "/rank-0.db");
  REQUIRE(ranges.size() == 32);
  for (int i = 0; i < 32; ++i) {
    INFO(i);
    REQUIRE(ranges.count("d" + std::to_string(i)) == 1);
    if (i) CHECK(inside(ranges["d" + std::to_string(i)], ranges["d" + std::to_string(i - 1)]));
  }
}

TEST_CASE("loaded only through NVTX_INJECTION64_PATH, after static TLS was used up") {
  // No LD_PRELOAD (a launcher dropped it): NVTX dlopen()s the library late,
  // after another library took what glibc keeps free for late initial-exec TLS.
  auto dir = testing::temp_dir("nvtx-late-dlopen");
  auto env = nvtx_env(dir);
  env.erase("LD_PRELOAD");
  auto r = testing::run({NVTX_WORKLOAD_EXE, "hog", STATIC_TLS_HOG, "3"}, env);
  REQUIRE(r.status == 0);
  CHECK(said(r.out)["push"] == "0 1 2");
  auto ranges = ranges_by_name(dir + "/rank-0.db");
  CHECK(ranges.size() == 3);
  CHECK(ranges.count("d2") == 1);
}

TEST_CASE("DDPSCOPE_NVTX=0: NVTX gets no tool and nothing is recorded") {
  auto dir = testing::temp_dir("nvtx-off");
  auto r = testing::run({NVTX_WORKLOAD_EXE}, nvtx_env(dir, "0"));
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  CHECK(said(r.out)["levels"] == "-2 -2 -2 -2");  // NVTX_NO_PUSH_POP_TRACKING: no tool attached
  CHECK(fs::is_empty(dir));                       // no event, so no rank file
}

TEST_CASE("ddpscope record sets NVTX up, off with --no-nvtx or the user's own NVTX tool") {
  auto dir = testing::temp_dir("nvtx-record");
  auto r = testing::run({DDPSCOPE_BIN, "record", "-o", dir + "/on", "--", NVTX_WORKLOAD_EXE});
  REQUIRE(r.status == 0);
  CHECK(ranges_by_name(dir + "/on/run.db").size() == 8);

  r = testing::run(
      {DDPSCOPE_BIN, "record", "--no-nvtx", "-o", dir + "/off", "--", NVTX_WORKLOAD_EXE});
  REQUIRE(r.status == 0);
  CHECK(said(r.out)["levels"] == "-2 -2 -2 -2");
  CHECK(!fs::exists(dir + "/off/run.db"));

  r = testing::run({DDPSCOPE_BIN, "record", "-o", dir + "/theirs", "--", NVTX_WORKLOAD_EXE},
                   {{"NVTX_INJECTION64_PATH", "/nonexistent/libsometool.so"}});
  REQUIRE(r.status == 0);
  CHECK(r.err.find("ddpscope: keeping your NVTX_INJECTION64_PATH (/nonexistent/libsometool.so)") !=
        std::string::npos);
  CHECK(!fs::exists(dir + "/theirs/run.db"));
}
