// The trace written from the collectives the analysis kept (`report
// --trace`: AnalysisOptions::keep_collectives, ReportInput::collectives)
// against the trace that reads them from the run again.
#include <catch2/catch.hpp>
#include <string_view>

#include "profiler/analysis/analyze.h"
#include "profiler/store/merge.h"
#include "profiler/store/sqlite.h"
#include "reports/renderer.h"
#include "tests/reports/fixtures.h"
#include "tests/reports/gpu_run.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;
using namespace ddpscope::testing;

namespace {

// The trace of `path` in both formats, written from the collectives the
// analysis kept and from the run: the pairs must be equal.
struct Traces {
  std::string kept_proto, read_proto, kept_json, read_json;
};

Traces traces_of(const std::string& path, const std::string& out, int64_t split_rows,
                 const store::RunFilter& filter = {}) {
  auto reader = store::open_run(path);
  reader->set_filter(filter);
  CollectiveRuns kept = {{CollectiveRecord{}}};  // cleared before use
  analysis::AnalysisOptions keep{.split_read_rows = split_rows, .keep_collectives = &kept};
  auto run = analysis::analyze_run(*reader, keep);
  size_t held = 0;
  for (const auto& k : kept) held += k.size();
  CHECK(held == size_t(reader->count("collectives")));
  Traces t;
  for (const auto& [name, text] : {std::pair{"kept.pftrace", &t.kept_proto},
                                   {"kept.json", &t.kept_json},
                                   {"read.pftrace", &t.read_proto},
                                   {"read.json", &t.read_json}}) {
    const bool from_kept = std::string_view(name).starts_with("kept");
    reports::make_trace_renderer()->write({run, *reader, from_kept ? &kept : nullptr}, out + name);
    *text = read_text(out + name);
  }
  // the analysis itself is the same as without keeping
  auto plain = analysis::analyze_run(*reader, {.split_read_rows = split_rows});
  reports::make_json_renderer()->write({run, *reader}, out + "kept-report.json");
  reports::make_json_renderer()->write({plain, *reader}, out + "report.json");
  CHECK(read_text(out + "kept-report.json") == read_text(out + "report.json"));
  return t;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

}  // namespace

// Whichever way the analysis read them (one thread, two halves, rank files
// thread by thread) and whatever part of the run it kept.
TEST_CASE("Trace: from the collectives the analysis kept, the trace read from the run") {
  const std::string dir = temp_dir("trace-kept-collectives");
  make_gpu_run(dir);
  const store::RunFilter some{.ranks = {1, 3}, .since_ns = 1'760'000'001'020'000'000};
  for (const bool together : {false, true})
    for (const int64_t split_rows : {int64_t(1), int64_t(1) << 40})
      for (const bool part : {false, true}) {
        INFO((together ? "rank files read together" : "the merged run")
             << (split_rows == 1 ? ", read in two halves" : ", read whole")
             << (part ? ", ranks 1 and 3 from a time on" : ""));
        auto t = traces_of(together ? dir : dir + "/run.db", dir + "/", split_rows,
                           part ? some : store::RunFilter{});
        CHECK(t.kept_proto.size() > 1000);
        CHECK(t.kept_proto == t.read_proto);
        CHECK(t.kept_json.size() > 1000);
        CHECK(t.kept_json == t.read_json);
      }
}

// The trace counts from the earliest event: here a collective's device
// start, earlier than every host call and kernel (a device clock behind).
TEST_CASE("Trace: from kept collectives, a device start before everything sets the origin") {
  const std::string dir = temp_dir("trace-kept-origin");
  make_gpu_run(dir);
  const std::string db = dir + "/run.db";
  store::Connection(db, store::Connection::Mode::read_write)
      .exec(
          "UPDATE collectives SET start_ns = (SELECT min(start_ns) FROM kernels) - 5000000 "
          "WHERE id = (SELECT max(id) FROM collectives)");
  auto t = traces_of(db, dir + "/", int64_t(1) << 40);
  CHECK(t.kept_json == t.read_json);
  CHECK(t.kept_proto == t.read_proto);
}

// Rank files read together find each file's earliest event on threads of
// their own, which share the files out in runs: an NVTX range earlier than
// anything else, in the first file and then in the last, sets the origin of
// the trace of the rank files read together as it does the merged run's.
TEST_CASE("Trace: of rank files read together, the earliest event of any file is the origin") {
  const std::string dir = temp_dir("trace-files-origin");
  make_gpu_run(dir);
  const auto files = store::find_rank_files(dir);
  REQUIRE(files.size() == 4);
  for (const std::string& file : {files.front(), files.back()}) {
    INFO(file);
    store::Connection(file, store::Connection::Mode::read_write)
        .exec(
            "INSERT INTO ranges(rank, tid, domain, name, start_ns, end_ns) SELECT rank, 1, '', "
            "'early', min(start_ns) - 10000000000, min(start_ns) - 9000000000 FROM kernels");
    store::merge_rank_files(files, dir + "/merged.db");
    auto together = traces_of(dir, dir + "/together-", int64_t(1) << 40);
    auto merged = traces_of(dir + "/merged.db", dir + "/merged-", int64_t(1) << 40);
    CHECK(together.read_json.find("\"early\"") != std::string::npos);
    // the same but for where the run is
    const std::string merged_json = replaced(merged.read_json, dir + "/merged.db", dir);
    CHECK(together.read_json == merged_json);
    CHECK(together.kept_json == merged_json);
    store::Connection(file, store::Connection::Mode::read_write)
        .exec("DELETE FROM ranges WHERE name = 'early'");
  }
}
