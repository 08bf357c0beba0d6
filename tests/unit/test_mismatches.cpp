// The mismatch finder (profiler/analysis/mismatches.h) on hand-built calls:
// which instance has more than one shape, how its shapes are ordered and
// merged, and what it leaves out.
#include <catch2/catch.hpp>

#include "profiler/analysis/mismatches.h"

using namespace ddpscope;
using namespace ddpscope::analysis;

namespace {

struct Calls {
  ShapeTable shapes;
  std::vector<Call> calls;
  std::vector<InflightRecord> inflight;

  void call(int rank, uint64_t comm, uint64_t seq, Op op, Dtype dtype, uint64_t count) {
    Call c;
    c.rank = rank;
    c.comm_id = comm;
    c.seq = seq;
    c.op = op;
    c.shape = shapes.id(op, dtype, count);
    calls.push_back(c);
  }
  void entered(int rank, uint64_t comm, uint64_t seq, Op op, Dtype dtype, uint64_t count) {
    InflightRecord r;
    r.rank = rank;
    r.comm_id = comm;
    r.seq = seq;
    r.op = op;
    r.dtype = dtype;
    r.count = count;
    inflight.push_back(r);
  }
  std::vector<Mismatch> find() { return find_mismatches(calls, shapes, inflight); }
};

}  // namespace

TEST_CASE("a shape table numbers each distinct op, dtype and count once") {
  ShapeTable t;
  CHECK(t.id(Op::allreduce, Dtype::float32, 10) == 0);
  CHECK(t.id(Op::allreduce, Dtype::float32, 11) == 1);
  CHECK(t.id(Op::allreduce, Dtype::float16, 10) == 2);
  CHECK(t.id(Op::allreduce, Dtype::float32, 10) == 0);
  CHECK(t[1].count == 11);
  CHECK(t[2].dtype == Dtype::float16);
}

TEST_CASE("mismatches: another op, dtype or count on some ranks, completed or in flight") {
  Calls j;
  // comm 7 seq 1: all alike.
  for (int r = 0; r < 3; ++r) j.call(r, 7, 1, Op::allreduce, Dtype::float32, 10);
  // comm 7 seq 2: rank 1 broadcasts while 0 and 2 all-reduce.
  j.call(2, 7, 2, Op::allreduce, Dtype::float32, 10);
  j.call(1, 7, 2, Op::broadcast, Dtype::float32, 10);
  j.call(0, 7, 2, Op::allreduce, Dtype::float32, 10);
  // comm 7 seq 3: all-gather's v-variant counts differ: one shape.
  j.call(0, 7, 3, Op::allgather, Dtype::float32, 4);
  j.call(1, 7, 3, Op::allgather, Dtype::float32, 6);
  // comm 7 seq 4: point-to-point numbers pair no ranks up.
  j.call(0, 7, 4, Op::send, Dtype::float32, 1);
  j.call(1, 7, 4, Op::recv, Dtype::float32, 2);
  // comm 3 seq 5: rank 0 still in it as float32, rank 1 completed it as float16;
  // rank 0's row seen twice (completed and in flight) counts once.
  j.entered(0, 3, 5, Op::allreduce, Dtype::float32, 4);
  j.call(0, 3, 5, Op::allreduce, Dtype::float32, 4);
  j.call(1, 3, 5, Op::allreduce, Dtype::float16, 4);
  // comm 3 seq 6: counts differ where they must not; three shapes, by name.
  j.call(2, 3, 6, Op::reduce_scatter, Dtype::float32, 8);
  j.call(0, 3, 6, Op::allreduce, Dtype::float32, 9);
  j.call(1, 3, 6, Op::allreduce, Dtype::float32, 8);

  auto m = j.find();
  REQUIRE(m.size() == 3);
  // Ordered by communicator, then sequence number.
  CHECK((m[0].comm_id == 3 && m[0].seq == 5));
  CHECK((m[1].comm_id == 3 && m[1].seq == 6));
  CHECK((m[2].comm_id == 7 && m[2].seq == 2));
  // Shapes by op, dtype and count names: float16 before float32.
  REQUIRE(m[0].shapes.size() == 2);
  CHECK(m[0].shapes[0].dtype == Dtype::float16);
  CHECK(m[0].shapes[0].ranks == std::vector<int>{1});
  CHECK(m[0].shapes[1].dtype == Dtype::float32);
  CHECK(m[0].shapes[1].ranks == std::vector<int>{0});
  REQUIRE(m[1].shapes.size() == 3);
  CHECK((m[1].shapes[0].op == Op::allreduce && m[1].shapes[0].count == 8));
  CHECK(m[1].shapes[0].ranks == std::vector<int>{1});
  CHECK((m[1].shapes[1].op == Op::allreduce && m[1].shapes[1].count == 9));
  CHECK((m[1].shapes[2].op == Op::reduce_scatter && m[1].shapes[2].ranks == std::vector<int>{2}));
  REQUIRE(m[2].shapes.size() == 2);
  CHECK((m[2].shapes[0].op == Op::allreduce && m[2].shapes[0].ranks == std::vector<int>{0, 2}));
  CHECK((m[2].shapes[1].op == Op::broadcast && m[2].shapes[1].ranks == std::vector<int>{1}));
}

TEST_CASE("mismatches: a v-variant's counts merge into the first shape, ranks ascending") {
  Calls j;
  j.call(3, 1, 1, Op::allgather, Dtype::float32, 6);
  j.call(0, 1, 1, Op::allgather, Dtype::float32, 4);
  j.call(1, 1, 1, Op::alltoall, Dtype::float32, 4);
  j.call(2, 1, 1, Op::allgather, Dtype::float32, 5);
  auto m = j.find();
  REQUIRE(m.size() == 1);
  REQUIRE(m[0].shapes.size() == 2);
  CHECK(m[0].shapes[0].op == Op::allgather);
  CHECK(m[0].shapes[0].count == 4);  // the smallest count stands for the merged ones
  CHECK(m[0].shapes[0].ranks == std::vector<int>{0, 2, 3});
  CHECK(m[0].shapes[1].ranks == std::vector<int>{1});
  CHECK(Calls{}.find().empty());
}
