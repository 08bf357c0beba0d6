#include "profiler/store/kernel_blocks.h"

#include "profiler/store/schema.h"

namespace ddpscope::store {
namespace {

constexpr uint64_t kFormat = 1;  // the block layout below; another is a damaged block

constexpr Column kColumns[] = {
    {"rank", "INTEGER"},
    {"rows", "INTEGER"},
    {"time_shift_ns", "INTEGER"},
    {.name = "collective_base", .type = "INTEGER", .collective_ref = true},
    {"data", "BLOB"}};

// Integers as LEB128 varints (7 bits a byte, low first); signed deltas
// zigzagged so that small negative ones stay small. Differences wrap
// (unsigned arithmetic), so any int64 round-trips, kNoTime included.
void put(std::string& out, uint64_t v) {
  for (; v >= 0x80; v >>= 7) out.push_back(char(uint8_t(v) | 0x80));
  out.push_back(char(v));
}
void put_delta(std::string& out, uint64_t value, uint64_t from) {
  const uint64_t d = value - from;
  put(out, (d << 1) ^ uint64_t(int64_t(d) >> 63));
}

// Reads what put() wrote, refusing bytes past the end and varints past 64 bits.
struct Cursor {
  const uint8_t *at, *end;
  bool ok = true;
  uint64_t next() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at == end) break;
      const uint8_t b = *at++;
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    ok = false;
    return 0;
  }
  uint64_t delta(uint64_t from) {
    const uint64_t z = next();
    return from + ((z >> 1) ^ (0 - (z & 1)));
  }
};

}  // namespace

// A row of kernels changed or deleted (by SQL: the writer only inserts)
// leaves the blocks saying otherwise: they are emptied, so readers take the
// table (kernel_blocks_whole), which is what the SQL changed. Rows inserted
// alone change the count, which readers compare.
constexpr const char* kStaleTriggers =
    "CREATE TRIGGER kernel_blocks_on_update AFTER UPDATE ON kernels "
    "WHEN EXISTS (SELECT 1 FROM kernel_blocks) BEGIN DELETE FROM kernel_blocks; END; "
    "CREATE TRIGGER kernel_blocks_on_delete AFTER DELETE ON kernels "
    "WHEN EXISTS (SELECT 1 FROM kernel_blocks) BEGIN DELETE FROM kernel_blocks; END;";

const TableSpec& kernel_blocks_table() {
  static const TableSpec t{.name = "kernel_blocks",
                           .columns = kColumns,
                           .triggers = kStaleTriggers,
                           .since_version = kKernelBlocksSince};
  return t;
}

void KernelBlockEncoder::add(const KernelRecord& k) {
  const int64_t id = k.collective_id > 0 ? k.collective_id : 0;  // as its row stores it
  auto [it, fresh] = name_ids_.try_emplace(k.name, uint32_t(names_.size()));
  if (fresh) names_.push_back(it->first);
  put_delta(body_, uint64_t(int64_t(k.device)), uint64_t(int64_t(last_.device)));
  put_delta(body_, k.stream, last_.stream);
  put(body_, it->second);
  put_delta(body_, uint64_t(k.start_ns), uint64_t(last_.start_ns));
  put_delta(body_, uint64_t(k.end_ns), uint64_t(k.start_ns));
  put_delta(body_, k.correlation, last_.correlation);
  put_delta(body_, uint64_t(id), uint64_t(last_.collective_id));
  body_.push_back(char(k.kind));
  last_.device = k.device;
  last_.stream = k.stream;
  last_.start_ns = k.start_ns;
  last_.correlation = k.correlation;
  last_.collective_id = id;
  ++rows_;
}

std::string KernelBlockEncoder::take() {
  std::string out;
  put(out, kFormat);
  put(out, rows_);
  put(out, names_.size());
  for (std::string_view n : names_) {
    put(out, n.size());
    out.append(n);
  }
  out += body_;
  body_.clear();
  names_.clear();
  name_ids_.clear();
  rows_ = 0;
  last_ = KernelRecord{};
  return out;
}

namespace {

bool decode_rows(Cursor& c, int64_t time_shift_ns, int64_t collective_base, KernelBlock& out) {
  const KernelRecord first;  // the encoder's "last" before its first row
  uint64_t device = uint64_t(int64_t(first.device)), stream = first.stream,
           start = uint64_t(first.start_ns), correlation = first.correlation,
           id = uint64_t(first.collective_id);
  for (auto& r : out.rows) {
    device = c.delta(device);
    stream = c.delta(stream);
    r.name = uint32_t(c.next());
    start = c.delta(start);
    const uint64_t end = c.delta(start);
    correlation = c.delta(correlation);
    id = c.delta(id);
    if (c.at == c.end || r.name >= out.names.size() || *c.at > uint8_t(KernelKind::memset))
      return false;
    r.kind = KernelKind(*c.at++);
    r.device = int32_t(int64_t(device));
    r.stream = stream;
    r.correlation = correlation;
    r.start_ns = int64_t(start) == kNoTime ? kNoTime : int64_t(start) + time_shift_ns;
    r.end_ns = int64_t(end) == kNoTime ? kNoTime : int64_t(end) + time_shift_ns;
    r.collective_id = id == 0 ? 0 : int64_t(id) + collective_base;
  }
  return c.ok;
}

}  // namespace

bool decode_kernel_block(std::string_view data, int64_t rows, int64_t time_shift_ns,
                         int64_t collective_base, KernelBlock& out) {
  Cursor c{reinterpret_cast<const uint8_t*>(data.data()),
           reinterpret_cast<const uint8_t*>(data.data() + data.size())};
  out.names.clear();
  out.rows.clear();
  // Every count is bounded by the bytes left: a damaged one allocates nothing.
  if (c.next() != kFormat || rows < 0 || c.next() != uint64_t(rows) ||
      uint64_t(rows) > uint64_t(c.end - c.at))
    return false;
  const uint64_t names = c.next();
  if (!c.ok || names > uint64_t(c.end - c.at)) return false;
  for (uint64_t i = 0; i < names; ++i) {
    const uint64_t size = c.next();
    if (!c.ok || size > uint64_t(c.end - c.at)) return false;
    out.names.emplace_back(reinterpret_cast<const char*>(c.at), size);
    c.at += size;
  }
  out.rows.resize(size_t(rows));
  return decode_rows(c, time_shift_ns, collective_base, out) && c.at == c.end;
}

KernelBlockWriter::KernelBlockWriter(Connection& conn)
    : insert_(conn,
              "INSERT INTO kernel_blocks(rank, rows, time_shift_ns, collective_base, data) "
              "VALUES(?, ?, 0, 0, ?)") {}

void KernelBlockWriter::add(const KernelRecord& k) {
  if (encoder_.rows() && (k.rank != rank_ || encoder_.rows() == kRowsPerBlock)) flush();
  rank_ = k.rank;
  encoder_.add(k);
}

void KernelBlockWriter::flush() {
  if (!encoder_.rows()) return;
  const int64_t rows = int64_t(encoder_.rows());
  const std::string data = encoder_.take();
  insert_.bind(1, int64_t(rank_));
  insert_.bind(2, rows);
  insert_.bind_blob(3, data);
  insert_.run();
}

}  // namespace ddpscope::store
