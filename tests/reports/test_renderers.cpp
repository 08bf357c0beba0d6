// CSV and JSON renderers: what they write reads back with a strict parser and
// carries every value; a target that cannot be written fails with one line
// naming it and leaves nothing behind.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "reports/formats.h"
#include "reports/renderer.h"
#include "reports/sections/hangs.h"
#include "tests/reports/fixtures.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;
using namespace ddpscope::testing;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

using Table = std::vector<std::vector<std::string>>;

struct Rendered {
  std::string dir;
  analysis::RunAnalysis run = sample_analysis();
  SampleRun db;
  explicit Rendered(const std::string& name) : dir(temp_dir(name)), db(make_run_db(dir)) {}
  ~Rendered() { fs::remove_all(dir); }
  void write(reports::Renderer& r, const std::string& target) {
    store::RunReader reader(db.path);
    r.write({run, reader}, target);
  }
};

Table csv_table(const std::string& dir, const std::string& name,
                const std::vector<std::string>& header) {
  Table t = parse_csv(read_text(dir + "/" + name));
  REQUIRE(!t.empty());
  CHECK(t[0] == header);
  for (const auto& row : t) CHECK(row.size() == header.size());
  return t;
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

std::string error_of(reports::Renderer& r, Rendered& fixture, const std::string& target) {
  try {
    fixture.write(r, target);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("CSV: one RFC 4180 file per table, headers are the struct fields") {
  Rendered f("csv");
  std::string out = f.dir + "/csv/nested";  // created, parents included
  auto csv = reports::make_csv_renderer();
  f.write(*csv, out);
  CHECK(files_in(out) == std::vector<std::string>{"buckets.csv", "collectives.csv",
                                                  "iterations.csv", "ops.csv", "ranks.csv",
                                                  "recommendations.csv"});

  auto it = csv_table(out, "iterations.csv",
                      {"rank", "index", "warmup", "start_ns", "end_ns", "iter_ms", "comm_ms",
                       "comm_busy_ms", "exposed_ms", "buckets"});
  REQUIRE(it.size() == 3);
  CHECK(it[1] == std::vector<std::string>{"0", "0", "true", "1000", "2000", "0.001", "0.0005",
                                          "0.0004", "0.0001", "3"});
  CHECK(it[2][3] == "1700000000123456789");

  auto b = csv_table(out, "buckets.csv",
                     {"index", "bytes", "calls", "median_us", "p95_us", "algbw_gbps", "busbw_gbps",
                      "overlap_pct", "exposed_us", "launch_gap_us", "nccl_choice"});
  REQUIRE(b.size() == 3);
  CHECK(b[1][1] == "26214400");
  CHECK(b[1][3] == "2500.5");
  CHECK(b[2][5] == "");  // NaN and infinity: no value
  CHECK(b[2][6] == "");

  auto c = csv_table(
      out, "collectives.csv",
      {"op", "bytes", "nranks", "calls", "median_us", "p95_us", "algbw_gbps", "busbw_gbps"});
  CHECK(c.at(1)[0] == "allreduce");

  auto ops = csv_table(out, "ops.csv",
                       {"op", "ranks", "calls", "bytes", "total_ms", "median_us", "p95_us",
                        "algbw_gbps", "busbw_gbps", "timing"});
  CHECK(ops.at(1) == std::vector<std::string>{"allreduce", "2", "32", "436207616", "41.5", "1234.5",
                                              "3000", "10.5", "10.5", "event"});

  auto ranks = csv_table(
      out, "ranks.csv",
      {"rank", "host", "late_ms_median", "late_ms_p95", "late_ms_max", "iteration_late_ms_median",
       "last_share_pct", "clock_correction_us", "iter_ms_median", "comm_ms_median", "collectives",
       "dropped_events", "clock_drift_ppm", "clock_residual_us", "kernel_overlap_pct"});
  REQUIRE(ranks.size() == 3);
  CHECK(ranks[2][1] == "node,1");
  CHECK(ranks[2][5] == "4.25");
  CHECK(ranks[2][7] == "-12.5");
  CHECK(ranks[2][11] == "7");
  CHECK(ranks[1][14] == "");  // NaN: no device communication
  CHECK(ranks[2][14] == "62.5");

  auto rec = csv_table(out, "recommendations.csv", {"setting", "value", "reason"});
  REQUIRE(rec.size() == 3);
  CHECK(rec[1] == std::vector<std::string>{"bucket_cap_mb", "100", kAwkwardReason});
  CHECK(rec[2] == std::vector<std::string>{"rank 1", "", "late"});
}

TEST_CASE("CSV: an empty analysis still writes every header") {
  Rendered f("csv-empty");
  f.run = analysis::RunAnalysis{};
  auto csv = reports::make_csv_renderer();
  f.write(*csv, f.dir + "/out");
  CHECK(parse_csv(read_text(f.dir + "/out/ops.csv")).size() == 1);
  CHECK(read_text(f.dir + "/out/recommendations.csv") == "setting,value,reason\r\n");
}

TEST_CASE("JSON: where a job stopped and who called something else (docs/hangs.md)") {
  Rendered f("json-hangs");
  analysis::Hang h;
  h.comm_id = 18446744073709551557ull;  // 64 bits: a string, not a JSON number
  h.nranks = 3, h.seq = 14, h.op = Op::allreduce, h.dtype = Dtype::float32;
  h.count = 4810, h.bytes = 19240, h.bucket = 0, h.iteration = 3, h.state = "running";
  h.waiting_ranks = {0, 1}, h.missing_ranks = {2};
  h.waiting_since_s = 0.5, h.waited_s = 10.25;
  analysis::MissingRank m;
  m.rank = 2, m.last_seq = 13, m.last_bytes = 16640, m.last_bucket = 3, m.signal = 2;
  m.ended = "killed by signal 2 (SIGINT)";
  h.missing = {m};
  h.stacks = {{2, {"train.py:186 in stall", "train.py:140 in main"}, "train.py:186 in stall"}};
  f.run.hangs = {h};
  analysis::Mismatch mm;
  mm.comm_id = 7, mm.seq = 10;
  mm.shapes = {{{0, 1}, Op::allreduce, Dtype::float32, 4}, {{2}, Op::allreduce, Dtype::float32, 7}};
  f.run.mismatches = {mm};
  auto json = reports::make_json_renderer();
  f.write(*json, f.dir + "/report.json");
  Json j = Json::parse(read_text(f.dir + "/report.json"));
  CHECK(j["hangs"][0] == Json{{"comm", "18446744073709551557"},
                              {"nranks", 3},
                              {"seq", 14},
                              {"op", "allreduce"},
                              {"dtype", "float32"},
                              {"count", 4810},
                              {"bytes", 19240},
                              {"bucket", 0},
                              {"fsdp", nullptr},
                              {"iteration", 3},
                              {"state", "running"},
                              {"waiting_ranks", {0, 1}},
                              {"missing_ranks", {2}},
                              {"completed_ranks", Json::array()},
                              {"waiting_since_s", 0.5},
                              {"waited_s", 10.25},
                              {"missing",
                               {{{"rank", 2},
                                 {"last_completed",
                                  {{"seq", 13},
                                   {"op", "allreduce"},
                                   {"bytes", 16640},
                                   {"bucket", 3},
                                   {"fsdp", nullptr}}},
                                 {"exit_code", nullptr},
                                 {"signal", 2},
                                 {"ended", "killed by signal 2 (SIGINT)"}}}},
                              {"stacks",
                               {{{"rank", 2},
                                 {"frames", {"train.py:186 in stall", "train.py:140 in main"}},
                                 {"user_frame", "train.py:186 in stall"}}}}});
  CHECK(j["mismatches"][0] ==
        Json{{"comm", "7"},
             {"seq", 10},
             {"shapes",
              {{{"ranks", {0, 1}}, {"op", "allreduce"}, {"dtype", "float32"}, {"count", 4}},
               {{"ranks", {2}}, {"op", "allreduce"}, {"dtype", "float32"}, {"count", 7}}}}});
}

TEST_CASE("an FSDP hang names its unit and phase, in the terminal and in JSON") {
  Rendered f("fsdp-hang");
  analysis::Hang h;
  h.comm_id = 9, h.nranks = 2, h.seq = 36, h.op = Op::allgather, h.dtype = Dtype::bits32;
  h.bytes = 526336, h.iteration = 3, h.state = "running";
  h.fsdp = analysis::FsdpCallLabel{"blocks.2", FsdpRegionKind::forward_all_gather, 3};
  h.waiting_ranks = {0}, h.missing_ranks = {1};
  analysis::MissingRank m;
  m.rank = 1, m.last_seq = 35, m.last_op = Op::allgather, m.last_bytes = 526336;
  m.last_fsdp = analysis::FsdpCallLabel{"", FsdpRegionKind::reduce_scatter, 2};
  m.ended = "killed by signal 15 (SIGTERM)";
  h.missing = {m};
  f.run.hangs = {h};
  std::ostringstream text;
  reports::print_hangs(f.run, text);
  CHECK_THAT(text.str(),
             Catch::Matchers::Contains("allgather #36, bits32, 526336 bytes, FSDP blocks.2 "
                                       "forward_all_gather of iteration 3\n"));
  CHECK_THAT(text.str(), Catch::Matchers::Contains(
                             "last completed allgather #35 ((root) reduce_scatter); killed"));
  auto json = reports::make_json_renderer();
  f.write(*json, f.dir + "/report.json");
  Json j = Json::parse(read_text(f.dir + "/report.json"));
  CHECK(j["hangs"][0]["fsdp"] == Json{{"unit", "blocks.2"}, {"phase", "forward_all_gather"}});
  CHECK(j["hangs"][0]["bucket"] == nullptr);
  CHECK(j["hangs"][0]["missing"][0]["last_completed"]["fsdp"] ==
        Json{{"unit", ""}, {"phase", "reduce_scatter"}});
}

TEST_CASE("JSON: the public contract, with null for undefined figures") {
  Rendered f("json");
  auto json = reports::make_json_renderer();
  f.write(*json, f.dir + "/report.json");
  std::string text = read_text(f.dir + "/report.json");
  CHECK(text.rfind("{\n \"", 0) == 0);  // pretty-printed, 1-space indent
  Json j = Json::parse(text);

  for (const char* key : {"world_size", "backend", "timing", "ranks_recorded", "command",
                          "iterations", "buckets", "collectives", "ops", "ranks", "recommendations",
                          "iteration_list", "lateness", "ddp", "roles", "hangs", "mismatches"})
    CHECK(j.contains(key));
  CHECK((j["hangs"] == Json::array() && j["mismatches"] == Json::array()));
  CHECK(j["world_size"] == 2);
  CHECK(j["backend"] == "nccl");
  CHECK(j["timing"] == "event");
  CHECK(j["ranks_recorded"] == 2);
  CHECK(j["command"] == "python train.py --tag \"a,b\"");
  CHECK(j["iterations"] == Json{{"count", 10},
                                {"warmup", 2},
                                {"shadow", 0},
                                {"median_ms", 101.5},
                                {"p95_ms", 120.25},
                                {"mean_ms", 103.0},
                                {"comm_median_ms", 40.5},
                                {"exposed_median_ms", 12.75},
                                {"busy_median_ms", 38.0}});

  CHECK(j["ddp"][0] == Json{{"instance", 0},
                            {"buckets_from", "ddp"},
                            {"module", "Net"},
                            {"bucket_cap_bytes", 26214400},
                            {"first_bucket_bytes", 1048576},
                            {"explicit_cap_sets_first_bucket", false},
                            {"find_unused_parameters", false},
                            {"static_graph", false},
                            {"gradient_as_bucket_view", false},
                            {"comm_hook", "fp16_compress_hook"},
                            {"rebuilt", false},
                            {"bucket_bytes", {26214400, 1048576}},
                            {"parameters", 4},
                            {"parameter_bytes", 27262976}});
  CHECK(j["roles"][1] == Json{{"role", "user"}, {"calls", 10}, {"bytes", 40}, {"total_ms", 0.25}});

  REQUIRE(j["buckets"].size() == 2);
  CHECK(j["buckets"][0] == Json{{"instance", 0},
                                {"index", 0},
                                {"bytes", 26214400},
                                {"calls", 16},
                                {"median_us", 2500.5},
                                {"p95_us", 3100.0},
                                {"algbw_gbps", 10.48576},
                                {"busbw_gbps", 10.48576},
                                {"overlap_pct", 80.0},
                                {"exposed_us", 500.0},
                                {"launch_gap_us", 120.0},
                                {"nccl_choice", ""}});
  CHECK(j["buckets"][1]["algbw_gbps"].is_null());
  CHECK(j["buckets"][1]["busbw_gbps"].is_null());

  CHECK(j["collectives"][0] == Json{{"op", "allreduce"},
                                    {"bytes", 26214400},
                                    {"nranks", 2},
                                    {"calls", 16},
                                    {"median_us", 2500.5},
                                    {"p95_us", 3100.0},
                                    {"algbw_gbps", 10.48576},
                                    {"busbw_gbps", 10.48576}});
  CHECK(j["ops"][0] == Json{{"op", "allreduce"},
                            {"ranks", 2},
                            {"calls", 32},
                            {"bytes", 436207616},
                            {"total_ms", 41.5},
                            {"median_us", 1234.5},
                            {"p95_us", 3000.0},
                            {"algbw_gbps", 10.5},
                            {"busbw_gbps", 10.5},
                            {"timing", "event"}});
  CHECK(j["ranks"][1] == Json{{"rank", 1},
                              {"host", "node,1"},
                              {"late_ms_median", 1.5},
                              {"late_ms_p95", 2.5},
                              {"late_ms_max", 3.75},
                              {"iteration_late_ms_median", 4.25},
                              {"last_share_pct", 75.0},
                              {"clock_correction_us", -12.5},
                              {"iter_ms_median", 101.0},
                              {"comm_ms_median", 41.0},
                              {"collectives", 16},
                              {"dropped_events", 7},
                              {"iterations", 0},
                              {"shadow_iterations", 0},
                              {"clock_drift_ppm", 0.0},
                              {"clock_residual_us", 0.0},
                              {"kernel_overlap_pct", 62.5},
                              {"exit_code", nullptr},
                              {"signal", nullptr},
                              {"finalized", false}});
  CHECK(j["ranks"][0]["kernel_overlap_pct"].is_null());
  CHECK(j["recommendations"][0] ==
        Json{{"setting", "bucket_cap_mb"}, {"value", "100"}, {"reason", kAwkwardReason}});
  CHECK(j["iteration_list"][1] == Json{{"rank", 1},
                                       {"index", 3},
                                       {"warmup", false},
                                       {"shadow", false},
                                       {"start_ns", 1'700'000'000'123'456'789},
                                       {"end_ns", 1'700'000'000'223'456'789},
                                       {"iter_ms", 100.0},
                                       {"comm_ms", 40.0},
                                       {"comm_busy_ms", 38.0},
                                       {"exposed_ms", 12.5},
                                       {"buckets", 4}});
  CHECK(j["lateness"] == Json::parse("[[0.0, 0.5], [1.25, null]]"));
  CHECK(files_in(f.dir) ==
        std::vector<std::string>{"rank-0.db", "rank-1.db", "report.json", "run.db"});
}

TEST_CASE("JSON: text that is not UTF-8 is replaced, not fatal") {
  Rendered f("json-bytes");
  f.run.ranks[0].host = "node\xff";
  auto json = reports::make_json_renderer();
  f.write(*json, f.dir + "/report.json");
  CHECK(Json::parse(read_text(f.dir + "/report.json"))["ranks"][0]["host"] == "node\xEF\xBF\xBD");
}

TEST_CASE("Renderers: an unwritable target throws one line naming it, leaves nothing") {
  Rendered f("errors");
  std::vector<std::unique_ptr<reports::Renderer>> all;
  all.push_back(reports::make_csv_renderer());
  all.push_back(reports::make_json_renderer());
  all.push_back(reports::make_trace_renderer());
  for (auto& r : all) {
    std::string msg = error_of(*r, f, "/proc/x/report.json");
    CHECK(msg.rfind("/proc/x/report.json", 0) == 0);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(!fs::exists("/proc/x"));
  }
  // A directory in the way: the rename fails after the content was written,
  // and the temporary file must go.
  fs::create_directories(f.dir + "/out/busy/inner");
  for (size_t i = 1; i < all.size(); ++i) {
    CHECK(error_of(*all[i], f, f.dir + "/out/busy").rfind(f.dir + "/out/busy:", 0) == 0);
    CHECK(files_in(f.dir + "/out") == std::vector<std::string>{"busy"});
    CHECK(files_in(f.dir + "/out/busy") == std::vector<std::string>{"inner"});
  }
  // CSV into an existing file: it needs a directory.
  std::ofstream(f.dir + "/out/plain") << "x";
  CHECK(error_of(*all[0], f, f.dir + "/out/plain").rfind(f.dir + "/out/plain:", 0) == 0);
  CHECK(read_text(f.dir + "/out/plain") == "x");
}

// `report` writes the formats that read only the analysis beside those that
// read the run (reports::write_reports): each file as its renderer alone
// writes it, the targets listed in format order, and a failure on either
// side rethrown (the first in format order) after the other side finished.
TEST_CASE("Renderers: every format asked for, written side by side as each alone writes it") {
  Rendered f("write-reports");
  const auto& formats = reports::report_formats();
  auto targets_in = [&](const std::string& out) {
    fs::create_directories(out);
    std::vector<std::string> targets;
    for (const auto& format : formats) {
      std::string flag = format.flag;
      targets.push_back(out + "/" + flag.substr(2) +
                        (flag == "--csv" || flag == "--kineto" ? "" : ".out"));
    }
    return targets;
  };
  store::RunReader reader(f.db.path);
  const auto together = targets_in(f.dir + "/together");
  const auto written = reports::write_reports({f.run, reader}, together);
  std::vector<std::string> expected = together;
  expected[3] += " (Chrome trace-event JSON)";  // --trace
  expected[4] += " (Kineto JSON, 2 ranks)";     // --kineto
  CHECK(written == expected);
  const auto alone = targets_in(f.dir + "/alone");
  for (size_t i = 0; i < formats.size(); ++i) {
    INFO(formats[i].flag);
    f.write(*formats[i].make(), alone[i]);
    if (fs::is_directory(alone[i])) {
      CHECK(files_in(alone[i]) == files_in(together[i]));
      for (const auto& name : files_in(alone[i]))
        CHECK(read_text(alone[i] + "/" + name) == read_text(together[i] + "/" + name));
    } else {
      CHECK(read_text(alone[i]).size() > 100);
      CHECK(read_text(alone[i]) == read_text(together[i]));
    }
  }
  // A failure on each side: the CSV (beside) and the trace; what comes after
  // it on its side is not written, the rest is.
  for (const size_t bad : {size_t(1), size_t(3)}) {
    INFO(formats[bad].flag);
    auto targets = targets_in(f.dir + "/failing");
    targets[bad] = "/proc/x/report.out";
    std::string error;
    try {
      reports::write_reports({f.run, reader}, targets);
    } catch (const std::exception& e) {
      error = e.what();
    }
    CHECK(error.rfind("/proc/x/report.out", 0) == 0);
    for (size_t i = 0; i < formats.size(); ++i)
      if (i != bad && formats[i].reads_run == formats[bad].reads_run && i > bad)
        CHECK(!fs::exists(targets[i]));  // after the failure on its side
      else if (i != bad)
        CHECK(fs::exists(targets[i]));
    fs::remove_all(f.dir + "/failing");
  }
}
