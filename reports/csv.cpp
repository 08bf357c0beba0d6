// CSV output: one RFC 4180 file per table of the analysis, for spreadsheets and
// pandas. Columns are the struct fields in snake_case; each table is declared
// once as (header, cell) pairs so a header can never disagree with its rows.
#include <filesystem>
#include <string>
#include <vector>

#include "profiler/core/input_error.h"
#include "reports/csv_table.h"
#include "reports/formats.h"
#include "reports/renderer.h"
#include "reports/sections/section.h"

namespace ddpscope::reports {
namespace {

using namespace ddpscope::analysis;
using namespace ddpscope::reports::csv;

void write_iterations(const std::string& dir, const std::vector<IterationStats>& rows) {
  using R = IterationStats;
  write_table<R>(dir + "/iterations.csv",
                 {{"rank", [](const R& r) { return num(r.rank); }},
                  {"index", [](const R& r) { return num(r.index); }},
                  {"warmup", [](const R& r) { return flag(r.warmup); }},
                  {"start_ns", [](const R& r) { return num(r.start_ns); }},
                  {"end_ns", [](const R& r) { return num(r.end_ns); }},
                  {"iter_ms", [](const R& r) { return num(r.iter_ms); }},
                  {"comm_ms", [](const R& r) { return num(r.comm_ms); }},
                  {"comm_busy_ms", [](const R& r) { return num(r.comm_busy_ms); }},
                  {"exposed_ms", [](const R& r) { return num(r.exposed_ms); }},
                  {"buckets", [](const R& r) { return num(r.buckets); }}},
                 rows);
}

void write_buckets(const std::string& dir, const std::vector<BucketStats>& rows) {
  using R = BucketStats;
  write_table<R>(dir + "/buckets.csv",
                 {{"index", [](const R& r) { return num(r.index); }},
                  {"bytes", [](const R& r) { return num(r.bytes); }},
                  {"calls", [](const R& r) { return num(r.calls); }},
                  {"median_us", [](const R& r) { return num(r.median_us); }},
                  {"p95_us", [](const R& r) { return num(r.p95_us); }},
                  {"algbw_gbps", [](const R& r) { return num(r.algbw_gbps); }},
                  {"busbw_gbps", [](const R& r) { return num(r.busbw_gbps); }},
                  {"overlap_pct", [](const R& r) { return num(r.overlap_pct); }},
                  {"exposed_us", [](const R& r) { return num(r.exposed_us); }},
                  {"launch_gap_us", [](const R& r) { return num(r.launch_gap_us); }},
                  {"nccl_choice", [](const R& r) { return text(r.nccl_choice); }}},
                 rows);
}

void write_nccl_choices(const std::string& dir, const std::vector<NcclChoiceStats>& rows) {
  using R = NcclChoiceStats;
  write_table<R>(dir + "/nccl_choices.csv",
                 {{"op", [](const R& r) { return text(name_of(r.op)); }},
                  {"bytes", [](const R& r) { return num(r.bytes); }},
                  {"nranks", [](const R& r) { return num(r.nranks); }},
                  {"algo", [](const R& r) { return text(r.algo); }},
                  {"proto", [](const R& r) { return text(r.proto); }},
                  {"nchannels", [](const R& r) { return num(r.nchannels); }},
                  {"calls", [](const R& r) { return num(r.calls); }},
                  {"median_us", [](const R& r) { return num(r.median_us); }},
                  {"busbw_gbps", [](const R& r) { return num(r.busbw_gbps); }},
                  {"kernel_us", [](const R& r) { return known(r.kernel_us); }},
                  {"network_us", [](const R& r) { return known(r.network_us); }}},
                 rows);
}

void write_collectives(const std::string& dir, const std::vector<SizeClassStats>& rows) {
  using R = SizeClassStats;
  write_table<R>(dir + "/collectives.csv",
                 {{"op", [](const R& r) { return text(name_of(r.op)); }},
                  {"bytes", [](const R& r) { return num(r.bytes); }},
                  {"nranks", [](const R& r) { return num(r.nranks); }},
                  {"calls", [](const R& r) { return num(r.calls); }},
                  {"median_us", [](const R& r) { return num(r.median_us); }},
                  {"p95_us", [](const R& r) { return num(r.p95_us); }},
                  {"algbw_gbps", [](const R& r) { return num(r.algbw_gbps); }},
                  {"busbw_gbps", [](const R& r) { return num(r.busbw_gbps); }}},
                 rows);
}

void write_ops(const std::string& dir, const std::vector<OpSummary>& rows) {
  using R = OpSummary;
  write_table<R>(dir + "/ops.csv",
                 {{"op", [](const R& r) { return text(name_of(r.op)); }},
                  {"ranks", [](const R& r) { return num(r.ranks); }},
                  {"calls", [](const R& r) { return num(r.calls); }},
                  {"bytes", [](const R& r) { return num(r.bytes); }},
                  {"total_ms", [](const R& r) { return num(r.total_ms); }},
                  {"median_us", [](const R& r) { return num(r.median_us); }},
                  {"p95_us", [](const R& r) { return num(r.p95_us); }},
                  {"algbw_gbps", [](const R& r) { return num(r.algbw_gbps); }},
                  {"busbw_gbps", [](const R& r) { return num(r.busbw_gbps); }},
                  {"timing", [](const R& r) { return text(name_of(r.timing)); }}},
                 rows);
}

void write_recommendations(const std::string& dir, const std::vector<Recommendation>& rows) {
  using R = Recommendation;
  write_table<R>(dir + "/recommendations.csv",
                 {{"setting", [](const R& r) { return r.setting; }},
                  {"value", [](const R& r) { return r.value; }},
                  {"reason", [](const R& r) { return r.reason; }}},
                 rows);
}

class CsvRenderer : public Renderer {
 public:
  void write(const ReportInput& input, const std::string& target) override {
    check_csv_dir(target);
    std::error_code ec;
    bool created = std::filesystem::create_directories(target, ec);
    if (ec) throw InputError(target, "cannot create the directory (" + ec.message() + ")");
    try {
      write_tables(input.run, target);
    } catch (...) {
      // Each table is written all-or-nothing; a directory made for them goes
      // with them.
      if (created) std::filesystem::remove_all(target, ec);
      throw;
    }
  }

 private:
  static void write_tables(const RunAnalysis& run, const std::string& target) {
    write_iterations(target, run.iteration_list);
    write_buckets(target, run.buckets);
    write_collectives(target, run.collectives);
    if (!run.nccl_choices.empty()) write_nccl_choices(target, run.nccl_choices);
    write_ops(target, run.ops);
    write_recommendations(target, run.recommendations);
    for (const auto& section : sections())
      if (section.csv) section.csv(run, target);
  }
};

}  // namespace

void check_csv_dir(const std::string& dir) {
  check_output_dir(dir, "CSV output is one file per table", /*parents=*/true);
}

std::unique_ptr<Renderer> make_csv_renderer() { return std::make_unique<CsvRenderer>(); }

}  // namespace ddpscope::reports
