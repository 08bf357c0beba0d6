// Capture sources as modules (injector/runtime/source.h): a source registers
// a conversion and stamps its id into its events; the runtime dispatches each
// event to its source, and the rows it adds land in their declared tables,
// written and read back with nothing in the store or the runtime knowing the
// source. Here a stand-in source turns its own event body into NVTX-style
// ranges and collectives.
#include <catch2/catch.hpp>

#include "injector/runtime/comm_events.h"
#include "injector/runtime/source.h"
#include "profiler/store/reader.h"
#include "profiler/store/writer.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;
using namespace ddpscope::inject;

namespace {

// The stand-in source's own event body.
struct MarkEvent {
  uint64_t t_start, t_end;
  uint32_t tid;
  char label[16];
};

void convert_mark(const Event& e, Rows& rows) {
  const auto& m = e.as<MarkEvent>();
  rows.add(RangeRecord{0, m.tid, "marks", m.label, rows.to_ns(m.t_start), rows.to_ns(m.t_end)});
}

// A runtime stand-in: ticks are ns * 2, collectives are collected.
struct TestRows : Rows {
  std::vector<CollectiveRecord> collectives;
  std::vector<CommRecord> comms;
  std::vector<CollectiveRecord> entered;
  void collective(const CollectiveRecord& r, uint32_t, uint32_t) override {
    collectives.push_back(r);
  }
  void collective_begin(const CollectiveRecord& r) override { entered.push_back(r); }
  void comm_begin(const CommRecord& r) override { comms.push_back(r); }
  void comm_end(const CommEndEvent&) override {}
  int64_t to_ns(uint64_t ticks) const override { return int64_t(ticks / 2); }
};

void dispatch(const Event& e, Rows& rows) {
  const Source* s = find_source(e.source);
  REQUIRE(s != nullptr);
  s->convert(e, rows);
}

}  // namespace

TEST_CASE("a source's events reach its conversion, and its rows their table") {
  SourceId marks = register_source({"marks", convert_mark});
  SourceId comm = register_source({"comm-test", convert_comm_event});
  REQUIRE(marks != 0);
  REQUIRE(comm != marks);
  CHECK(std::string(find_source(marks)->name) == "marks");
  CHECK(find_source(0) == nullptr);
  CHECK(find_source(SourceId(250)) == nullptr);

  TestRows rows;
  Event e{};
  e.source = marks;
  e.as<MarkEvent>() = MarkEvent{200, 600, 7, "step 3"};
  dispatch(e, rows);
  Event c{};
  c.source = comm;
  c.kind = uint8_t(CommEventKind::collective);
  auto& ce = c.as<CollectiveEvent>();
  ce = CollectiveEvent{};
  ce.t_start = 1000;
  ce.t_end = 3000;
  ce.bytes = 4096;
  ce.op = Op::allreduce;
  dispatch(c, rows);
  REQUIRE(rows.collectives.size() == 1);
  CHECK(rows.collectives[0].host_start_ns == 500);
  CHECK(rows.collectives[0].bytes == 4096);
  CHECK_FALSE(rows.staged_empty());

  auto dir = testing::temp_dir("sources");
  {
    store::RankWriter w(dir + "/rank-3.db", {{"tool", "ddpscope"}, {"kind", "rank"}});
    w.begin();
    rows.write_staged(w, 3);
    w.commit();
    w.close();
  }
  CHECK(rows.staged_empty());
  store::RunReader db(dir + "/rank-3.db");
  auto ranges = db.rows<RangeRecord>();
  REQUIRE(ranges.size() == 1);
  CHECK(ranges[0].rank == 3);
  CHECK(ranges[0].domain == "marks");
  CHECK(ranges[0].name == "step 3");
  CHECK(ranges[0].start_ns == 100);
  CHECK(ranges[0].end_ns == 300);
}
