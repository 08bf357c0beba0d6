#include "profiler/store/table.h"

#include <string_view>

#include "profiler/store/kernel_blocks.h"
#include "profiler/store/rows.h"

namespace ddpscope::store {
namespace {

bool is_time(std::string_view name) {
  return name.size() > 3 && name.substr(name.size() - 3) == "_ns" && name != "clock_offset_ns";
}

bool is_collective_id(const TableSpec& t, const Column& c) {
  return c.collective_ref ||
         (std::string_view(t.name) == "collectives" && std::string_view(c.name) == "id");
}

}  // namespace

std::span<const TableSpec* const> tables() {
  static const TableSpec* const all[] = {
      &Row<ProcessRecord>::table(),
      &Row<CommRecord>::table(),
      &Row<CollectiveRecord>::table(),
      &Row<InflightRecord>::table(),
      &Row<RankExitRecord>::table(),
      &Row<StackRecord>::table(),
      &Row<KernelRecord>::table(),
      &kernel_blocks_table(),
      &Row<RangeRecord>::table(),
      &Row<SyncRecord>::table(),
      &Row<DdpInfoRecord>::table(),
      &Row<DdpRegionRecord>::table(),
      &Row<FsdpInfoRecord>::table(),
      &Row<FsdpRegionRecord>::table(),
      &Row<NcclPluginCommRecord>::table(),
      &Row<NcclPluginCollectiveRecord>::table(),
      &Row<NcclProxyOpRecord>::table(),
      &Row<NcclProxyStepRecord>::table(),
      &Row<NcclKernelChannelRecord>::table(),
      &Row<NcclCeOpRecord>::table(),
      &tune_runs_table(),
      &tune_results_table(),
  };
  return all;
}

std::string column_list(const TableSpec& t) {
  std::string s;
  for (const auto& c : t.columns) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

std::string create_sql(const TableSpec& t) {
  std::string sql = std::string("CREATE TABLE ") + t.name + "(";
  bool first = true;
  for (const auto& c : t.columns) {
    sql += (first ? "" : ", ") + std::string(c.name) + " " + c.type;
    first = false;
  }
  if (*t.constraints) sql += std::string(", ") + t.constraints;
  return sql + ");";
}

std::string insert_sql(const TableSpec& t, int rows) {
  std::string row = "(";
  for (size_t i = 0; i < t.columns.size(); ++i) row += i ? ",?" : "?";
  row += ")";
  std::string sql =
      std::string(t.insert_verb) + " INTO " + t.name + "(" + column_list(t) + ") VALUES";
  for (int r = 0; r < rows; ++r) sql += (r ? "," : "") + row;
  return sql;
}

std::string select_sql(const TableSpec& t, int version) {
  std::string exprs;
  for (const auto& c : t.columns)
    exprs += (exprs.empty() ? "" : ", ") + std::string(c.since_version > version ? "NULL" : c.name);
  return "SELECT " + exprs + " FROM " + t.name;
}

std::string placed_columns(const TableSpec& t, int version, const std::string& offset,
                           const std::string& base) {
  std::string exprs;
  for (const auto& c : t.columns) {
    std::string e = c.since_version > version ? "NULL" : c.name;
    if (c.since_version <= version && is_time(c.name)) e += " + " + offset;
    if (c.since_version <= version && is_collective_id(t, c)) e += " + " + base;
    exprs += (exprs.empty() ? "" : ", ") + e + " AS " + c.name;
  }
  return exprs;
}

std::string merge_sql(const TableSpec& t, int version, const std::string& where) {
  return std::string("INSERT INTO ") + t.name + "(" + column_list(t) + ") SELECT " +
         placed_columns(t, version, "?1", "?2") + " FROM src." + t.name +
         (where.empty() ? "" : " WHERE " + where) + " ORDER BY rowid";
}

const char* event_time_column(const TableSpec& t) {
  if (std::string_view(t.name) == "processes") return nullptr;
  const char* time = nullptr;
  for (const auto& c : t.columns) {
    if (std::string_view(c.name) == "host_start_ns") return c.name;
    if (!time && std::string_view(c.name) == "start_ns") time = c.name;
  }
  return time;
}

bool has_rank_time_index(const TableSpec& t) {
  const char* time = event_time_column(t);
  return time && std::string_view(t.indexes).find("(rank, " + std::string(time) + ")") !=
                     std::string_view::npos;
}

}  // namespace ddpscope::store
