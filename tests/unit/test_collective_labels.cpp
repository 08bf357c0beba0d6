// The labels the trace names collectives by (profiler/analysis/collective_labels.h):
// DDP's bucket and instance, FSDP's unit, phase and prefetch, the op a
// collective is rather than the op it was carried as, and lookups by rank
// and row id.
#include <catch2/catch.hpp>

#include "profiler/analysis/collective_labels.h"
#include "profiler/analysis/fsdp_account.h"

using namespace ddpscope;
using namespace ddpscope::analysis;

namespace {

Call call(int rank, int64_t id, Op op, CollectiveRole role, int instance = -1, int bucket = -1) {
  Call c;
  c.rank = rank;
  c.id = id;
  c.op = op;
  c.role = role;
  c.instance = instance;
  c.bucket = bucket;
  return c;
}

// Rank 1's FSDP account: the root (unit 0, fqn "") and blocks.0 (unit 1);
// row 11 its forward all-gather, 12 a backward one prefetched, 13 its
// reduce-scatter, 14 HSDP's all-reduce.
std::map<int, FsdpRankAccount> fsdp_rank1() {
  FsdpRankAccount acc;
  acc.units[0].fqn = "";
  acc.units[1].fqn = "blocks.0";
  using K = FsdpRegionKind;
  acc.regions = {{.unit = 1, .kind = K::forward_all_gather},
                 {.unit = 1, .kind = K::backward_all_gather, .flags = kFsdpPrefetch | kFsdpAsync},
                 {.unit = 0, .kind = K::reduce_scatter},
                 {.unit = 1, .kind = K::all_reduce}};
  acc.region_of = {{11, 0}, {12, 1}, {13, 2}, {14, 3}};
  return {{1, std::move(acc)}};
}

}  // namespace

TEST_CASE("labels: DDP buckets by index, other instances by number, control and user") {
  using R = CollectiveRole;
  std::vector<Call> calls = {
      call(0, 1, Op::broadcast, R::ddp_control, 0), call(0, 2, Op::allreduce, R::ddp_bucket, 0, 3),
      call(0, 3, Op::allreduce, R::ddp_bucket, 1, 0), call(0, 4, Op::allreduce, R::user),
      call(0, 5, Op::allgather, R::unknown)};
  CollectiveLabels labels(calls, {});
  REQUIRE(labels.find(0, 1) != nullptr);
  CHECK(labels.find(0, 1)->name == "broadcast DDP control");
  CHECK(labels.find(0, 2)->name == "allreduce bucket 3");
  CHECK(labels.find(0, 2)->bucket == 3);
  CHECK(labels.find(0, 2)->ddp_instance == 0);
  CHECK(labels.find(0, 3)->name == "allreduce DDP 1 bucket 0");
  CHECK(labels.find(0, 3)->ddp_instance == 1);
  CHECK(labels.find(0, 4)->name == "allreduce user");
  CHECK(labels.find(0, 4)->bucket == -1);
  CHECK(labels.find(0, 4)->phase == nullptr);
  // Who issued it is not known: no label, the trace names it by its op.
  CHECK(labels.find(0, 5) == nullptr);
  CHECK(labels.size() == 4);
}

TEST_CASE("labels: FSDP's unit, phase and prefetch, and the op it is") {
  using R = CollectiveRole;
  std::vector<Call> calls = {call(1, 11, Op::allgather, R::fsdp_all_gather, 1),
                             call(1, 12, Op::allgather, R::fsdp_all_gather, 1),
                             call(1, 13, Op::allreduce, R::fsdp_reduce_scatter, 0),
                             call(1, 14, Op::allreduce, R::fsdp_all_reduce, 1),
                             // an FSDP role on a rank with no account: not labelled
                             call(2, 11, Op::allgather, R::fsdp_all_gather, 1)};
  CollectiveLabels labels(calls, fsdp_rank1());
  const CollectiveLabel* forward = labels.find(1, 11);
  REQUIRE(forward != nullptr);
  CHECK(forward->name == "allgather blocks.0 forward");
  CHECK(forward->unit == "blocks.0");
  CHECK(std::string(forward->phase) == "forward_all_gather");
  CHECK_FALSE(forward->prefetch);
  CHECK(labels.find(1, 12)->name == "allgather blocks.0 backward (prefetch)");
  CHECK(labels.find(1, 12)->prefetch);
  // Gloo carries the reduce-scatter as an all-reduce: it is named what it is.
  const CollectiveLabel* rs = labels.find(1, 13);
  CHECK(rs->name == "reduce_scatter (root)");
  CHECK(rs->op == Op::reduce_scatter);
  CHECK(std::string(rs->phase) == "reduce_scatter");
  CHECK(labels.find(1, 14)->name == "allreduce blocks.0 HSDP");
  CHECK(labels.find(2, 11) == nullptr);
}

TEST_CASE("labels: of two FSDP roots, each unit named with its root, as the reports name it") {
  // Rank 0: root 0 (units 0, 1) and root 2 (units 2, 3), both with a
  // blocks.0: the same fqn, two units.
  FsdpRankAccount acc;
  for (int unit : {0, 1, 2, 3}) {
    acc.units[unit].root = unit < 2 ? 0 : 2;
    acc.units[unit].fqn = unit % 2 ? "blocks.0" : "";
  }
  using R = CollectiveRole;
  std::vector<Call> calls = {call(0, 1, Op::allgather, R::fsdp_all_gather, 1),
                             call(0, 2, Op::allgather, R::fsdp_all_gather, 3),
                             call(0, 3, Op::reduce_scatter, R::fsdp_reduce_scatter, 2)};
  std::map<int, FsdpRankAccount> fsdp;
  fsdp[0] = acc;
  CollectiveLabels labels(calls, fsdp);
  CHECK(labels.find(0, 1)->unit == "blocks.0 of root 0");
  CHECK(labels.find(0, 2)->unit == "blocks.0 of root 2");
  CHECK(labels.find(0, 3)->name == "reduce_scatter (root) of root 2");
  // One root: the names of the test above, with no root in them.
  acc.units.erase(2), acc.units.erase(3);
  fsdp[0] = acc;
  CollectiveLabels one(std::vector<Call>{calls[0]}, fsdp);
  CHECK(one.find(0, 1)->unit == "blocks.0");
}

TEST_CASE("labels: found by rank and row id, each distinct label held once") {
  using R = CollectiveRole;
  std::vector<Call> calls;
  for (int64_t step = 0; step < 1000; ++step)  // any order: found by (rank, id)
    for (int rank : {1, 0})
      calls.push_back(call(rank, 1000 - step, Op::allreduce, R::ddp_bucket, 0, int(step % 4)));
  CollectiveLabels labels(calls, {});
  CHECK(labels.size() == 2000);
  for (int rank : {0, 1})
    for (int64_t id : {1, 500, 1000}) {
      REQUIRE(labels.find(rank, id) != nullptr);
      CHECK(labels.find(rank, id)->bucket == int((1000 - id) % 4));
    }
  CHECK(labels.find(0, 1001) == nullptr);
  CHECK(labels.find(2, 1) == nullptr);
  // Four buckets: the same label object for every call of a bucket.
  CHECK(labels.find(0, 996) == labels.find(1, 1000));
}
