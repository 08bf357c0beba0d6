// Writing one CSV table (csv.cpp and the sections' tables): RFC 4180, columns
// declared once as (header, cell) pairs so a header can never disagree with
// its rows, the file written all-or-nothing.
#pragma once

#include <charconv>
#include <cmath>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/core/atomic_file.h"
#include "profiler/core/units.h"

namespace ddpscope::reports::csv {

// Numbers through to_chars: locale-independent, and for doubles the shortest
// text that reads back to the same value, in plain decimal (no exponent, which
// some spreadsheet imports turn into text). Non-finite values are left empty.
inline std::string num(double v) {
  if (!std::isfinite(v)) return "";
  char buf[400];  // fixed notation of DBL_MAX needs 309 digits
  auto r = std::to_chars(buf, buf + sizeof buf, round_significant(v), std::chars_format::fixed);
  return std::string(buf, r.ptr);
}
inline std::string num(int64_t v) { return std::to_string(v); }
inline std::string num(uint64_t v) { return std::to_string(v); }
inline std::string num(int v) { return std::to_string(v); }
inline std::string text(std::string_view v) { return std::string(v); }
inline std::string flag(bool v) { return v ? "true" : "false"; }

// RFC 4180: a field with a comma, quote, CR or LF is quoted, quotes doubled.
inline void put_field(std::string& out, const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) {
    out += field;
    return;
  }
  out += '"';
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

template <class Row>
struct Column {
  const char* name;
  std::function<std::string(const Row&)> cell;
};

template <class Row>
void put_line(std::string& out, const std::vector<Column<Row>>& cols, const Row* row) {
  for (size_t i = 0; i < cols.size(); ++i) {
    if (i) out += ',';
    put_field(out, row ? cols[i].cell(*row) : std::string(cols[i].name));
  }
  out += "\r\n";
}

// The whole file is formatted first (tables are small: one row per iteration,
// bucket, size class, op, rank or advice), then written all-or-nothing.
template <class Row>
void write_table(const std::string& path, const std::vector<Column<Row>>& cols,
                 const std::vector<Row>& rows) {
  std::string out;
  put_line<Row>(out, cols, nullptr);
  for (const auto& row : rows) put_line(out, cols, &row);
  core::write_atomically(
      path, [&](std::ostream& os) { os.write(out.data(), std::streamsize(out.size())); });
}

// -1 (not reported) becomes an empty cell.
inline std::string known(double v) { return v < 0 ? "" : num(v); }

}  // namespace ddpscope::reports::csv
