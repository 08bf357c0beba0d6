// Names the schema stores, and nccl-tests' bus-bandwidth factors.
#include <catch2/catch.hpp>

#include "profiler/analysis/op_summary.h"
#include "profiler/core/clock.h"
#include "profiler/core/vocab.h"

using namespace ddpscope;

TEST_CASE("every enum name parses back to itself") {
  for (int i = 0; i < int(Op::kCount); ++i) CHECK(parse_op(name_of(Op(i))) == Op(i));
  for (int i = 0; i < int(Dtype::kCount); ++i) CHECK(parse_dtype(name_of(Dtype(i))) == Dtype(i));
  for (int i = 0; i < int(Timing::kCount); ++i)
    CHECK(parse_timing(name_of(Timing(i))) == Timing(i));
  CHECK(name_of(Op::reduce_scatter) == "reduce_scatter");
  CHECK_FALSE(parse_op("allreduce2"));
}

TEST_CASE("busbw factors follow nccl-tests") {
  CHECK(busbw_factor(Op::allreduce, 8) == Approx(2.0 * 7 / 8));
  CHECK(busbw_factor(Op::allgather, 4) == Approx(0.75));
  CHECK(busbw_factor(Op::reduce_scatter, 2) == Approx(0.5));
  CHECK(busbw_factor(Op::alltoall, 16) == Approx(15.0 / 16));
  CHECK(busbw_factor(Op::broadcast, 8) == 1.0);
  CHECK(busbw_factor(Op::send, 2) == 1.0);
  CHECK(dtype_bytes(Dtype::bfloat16) == 2);
  CHECK(dtype_of_width(4) == Dtype::bits32);
}

TEST_CASE("the op table: numbers, names and rules the files and reports rely on") {
  // Stored in fixed-size events and the schema: an op's number and name never change.
  const char* names[] = {"allreduce",      "broadcast", "reduce", "allgather",
                         "reduce_scatter", "alltoall",  "send",   "recv",
                         "barrier",        "gather",    "scatter"};
  REQUIRE(std::size(names) == size_t(Op::kCount));
  for (size_t i = 0; i < std::size(names); ++i) CHECK(name_of(Op(i)) == names[i]);
  CHECK(name_of(Dtype::bfloat16) == "bfloat16");
  CHECK(int(Dtype::bits64) == 16);
  CHECK(message_bytes(Op::allreduce, 10, 4, 8) == 40);
  CHECK(message_bytes(Op::allgather, 10, 4, 8) == 320);
  CHECK(message_bytes(Op::scatter, 10, 4, 0) == 40);
  CHECK(message_bytes(Op::alltoall, 10, 4, 2) == 80);
  // One rank: an unrooted ring op moves nothing, a rooted or one-factor op counts as 1.
  CHECK(busbw_factor(Op::allreduce, 1) == 0.0);
  CHECK(busbw_factor(Op::allgather, 1) == 0.0);
  CHECK(busbw_factor(Op::gather, 1) == 1.0);
  CHECK(busbw_factor(Op::barrier, 1) == 1.0);
  CHECK(busbw_factor(Op::scatter, 4) == Approx(0.75));
  CHECK(op_is(Op::send, kPointToPoint));
  CHECK_FALSE(op_is(Op::allgather, kSameCount));
  CHECK(op_is(Op::barrier, kSynchronising));
  CHECK_FALSE(op_is(Op::gather, kSynchronising));
}

TEST_CASE("op summary: medians, totals and bandwidth") {
  std::vector<CollectiveRecord> cs;
  for (int rank = 0; rank < 2; ++rank)
    for (int i = 0; i < 3; ++i) {
      CollectiveRecord c;
      c.rank = rank;
      c.op = Op::allreduce;
      c.nranks = 2;
      c.bytes = 1'000'000;
      c.start_ns = 0;
      c.end_ns = 1000 * (i + 1);  // 1, 2, 3 us
      c.timing = Timing::host;
      cs.push_back(c);
    }
  auto s = analysis::summarize_ops(cs);
  REQUIRE(s.size() == 1);
  CHECK(s[0].ranks == 2);
  CHECK(s[0].calls == 6);
  CHECK(s[0].median_us == Approx(2.0));
  CHECK(s[0].total_ms == Approx(0.012));
  CHECK(s[0].algbw_gbps == Approx(6e6 / 12000.0));
  CHECK(s[0].busbw_gbps == Approx(s[0].algbw_gbps * 1.0));
}

TEST_CASE("ticks convert to monotonic nanoseconds") {
  clock::TickConverter conv;
  int64_t before = clock::monotonic_ns();
  uint64_t t = clock::ticks();
  int64_t after = clock::monotonic_ns();
  conv.calibrate();
  int64_t ns = conv.to_ns(t);
  CHECK(ns >= before - 2000);
  CHECK(ns <= after + 2000);
}
