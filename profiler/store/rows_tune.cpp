// The tuner's tables (written and read by tune_store.cpp): declared with the
// others so every database, a rank file too, has the same schema.
#include "profiler/store/rows.h"

namespace ddpscope::store {

namespace {

constexpr Column kTuneRunColumns[] = {
    {"id", "INTEGER PRIMARY KEY"}, {"started", "TEXT"},       {"workload", "TEXT"},
    {"workload_bytes", "INTEGER"}, {"params", "INTEGER"},     {"host", "TEXT"},
    {"command_line", "TEXT"},      {"warmup", "INTEGER"},     {"iters", "INTEGER"},
    {"first_bucket_mb", "REAL"},   {"recommendation", "TEXT"}};

constexpr Column kTuneResultColumns[] = {
    {"run_id", "INTEGER"},  {"backend", "TEXT"},      {"topology", "TEXT"},
    {"nranks", "INTEGER"},  {"bucket_mb", "REAL"},    {"first_bucket_mb", "REAL"},
    {"buckets", "INTEGER"}, {"iteration", "INTEGER"}, {"iter_ms", "REAL"},
    {"comm_ms", "REAL"},    {"exposed_ms", "REAL"}};

}  // namespace

// The tuner's tables live in the same databases but are not per rank.
const TableSpec& tune_runs_table() {
  static const TableSpec t{.name = "tune_runs", .columns = kTuneRunColumns, .per_rank = false};
  return t;
}

const TableSpec& tune_results_table() {
  static const TableSpec t{
      .name = "tune_results", .columns = kTuneResultColumns, .per_rank = false};
  return t;
}

}  // namespace ddpscope::store
