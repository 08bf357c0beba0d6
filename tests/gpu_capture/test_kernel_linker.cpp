// Linking GPU activities to the collectives that launched them, across
// flushes and in any arrival order: single calls, groups covering several
// collectives, copy-engine collectives, and collectives that never ran.
#include <catch2/catch.hpp>

#include "injector/runtime/kernel_linker.h"

using namespace ddpscope;
using namespace ddpscope::inject;

namespace {

CollectiveRecord collective(uint64_t seq, int64_t host_start) {
  CollectiveRecord c;
  c.seq = seq;
  c.host_start_ns = host_start;
  c.host_end_ns = host_start + 5;
  c.start_ns = c.host_start_ns;
  c.end_ns = c.host_end_ns;
  c.timing = Timing::host;
  return c;
}

KernelRecord activity(KernelKind kind, uint32_t corr, int64_t start, int64_t end) {
  KernelRecord k;
  k.kind = kind;
  k.correlation = corr;
  k.start_ns = start;
  k.end_ns = end;
  k.name = kind == KernelKind::comm ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL" : "gemm";
  return k;
}

struct Flush {
  std::vector<LinkedGroup> done;
  std::vector<KernelRecord> unlinked;
};

Flush take(KernelLinker& l, bool final = false) {
  Flush f;
  l.take(final, f.done, f.unlinked);
  return f;
}

}  // namespace

TEST_CASE("a collective gets its kernel's GPU interval one flush after the kernel arrives") {
  KernelLinker l;
  l.add_collective(collective(0, 100), 7);
  ActivityBatch b;
  b.links = {{42, 7}};
  b.kernels = {activity(KernelKind::comm, 42, 1000, 3000),
               activity(KernelKind::compute, 43, 900, 2000)};
  l.add_activities(b);
  Flush first = take(l);
  CHECK(first.done.empty());            // a later copy of a multi-part collective may still come
  REQUIRE(first.unlinked.size() == 1);  // the compute kernel goes at once
  CHECK(first.unlinked[0].kind == KernelKind::compute);
  Flush second = take(l);
  REQUIRE(second.done.size() == 1);
  const LinkedGroup& g = second.done[0];
  REQUIRE(g.collectives.size() == 1);
  CHECK(g.collectives[0].timing == Timing::cupti);
  CHECK(g.collectives[0].start_ns == 1000);
  CHECK(g.collectives[0].end_ns == 3000);
  CHECK(g.collectives[0].host_start_ns == 100);
  REQUIRE(g.kernels.size() == 1);
  CHECK(l.pending() == 0);
}

TEST_CASE("a group launch covers all its collectives with the span of its kernels") {
  KernelLinker l;
  for (int i = 0; i < 3; ++i) l.add_collective(collective(uint64_t(i), 100 + i), 9);
  ActivityBatch b;
  b.links = {{50, 9}, {51, 9}};  // e.g. one launch per device stream in the group
  b.kernels = {activity(KernelKind::comm, 50, 2000, 2600),
               activity(KernelKind::comm, 51, 2100, 2900)};
  l.add_activities(b);
  take(l);
  Flush f = take(l);
  REQUIRE(f.done.size() == 1);
  REQUIRE(f.done[0].collectives.size() == 3);
  for (const auto& c : f.done[0].collectives) {
    CHECK(c.start_ns == 2000);
    CHECK(c.end_ns == 2900);
    CHECK(c.timing == Timing::cupti);
  }
  CHECK(f.done[0].kernels.size() == 2);
}

TEST_CASE("an NCCL kernel that arrives before its link waits for it") {
  KernelLinker l;
  l.add_collective(collective(0, 100), 11);
  ActivityBatch kernels_first;
  kernels_first.kernels = {activity(KernelKind::comm, 60, 500, 800)};
  l.add_activities(kernels_first);
  Flush f1 = take(l);
  CHECK(f1.unlinked.empty());
  CHECK(f1.done.empty());
  ActivityBatch link_later;
  link_later.links = {{60, 11}};
  l.add_activities(link_later);
  take(l);
  Flush f3 = take(l);
  REQUIRE(f3.done.size() == 1);
  CHECK(f3.done[0].collectives[0].start_ns == 500);
  CHECK(f3.done[0].kernels.size() == 1);
}

TEST_CASE("copy-engine collectives are attributed through the correlation, not the name") {
  KernelLinker l;
  l.add_collective(collective(0, 100), 12);
  ActivityBatch b;
  b.links = {{70, 12}, {71, 12}};
  b.kernels = {activity(KernelKind::memcpy, 70, 300, 400),
               activity(KernelKind::memcpy, 71, 350, 480),
               activity(KernelKind::memcpy, 72, 10, 20)};  // the job's own copy
  l.add_activities(b);
  Flush f1 = take(l);
  REQUIRE(f1.unlinked.size() == 1);
  CHECK(f1.unlinked[0].correlation == 72);
  Flush f2 = take(l);
  REQUIRE(f2.done.size() == 1);
  CHECK(f2.done[0].collectives[0].start_ns == 300);
  CHECK(f2.done[0].collectives[0].end_ns == 480);
}

// Seen on an H100 (docs/gpu.md): an AVG all-reduce on a one-rank communicator
// runs NCCL's oneRankReduce kernel, whose name is no ncclDevKernel_*.
TEST_CASE("a kernel launched inside an NCCL call is communication whatever its name") {
  KernelLinker l;
  l.add_collective(collective(0, 100), 14);
  ActivityBatch b;
  b.links = {{80, 14}};
  b.kernels = {activity(KernelKind::compute, 80, 200, 260),
               activity(KernelKind::compute, 81, 300, 400)};  // the job's own kernel
  l.add_activities(b);
  Flush f1 = take(l);
  REQUIRE(f1.unlinked.size() == 1);
  CHECK(f1.unlinked[0].kind == KernelKind::compute);
  Flush f2 = take(l);
  REQUIRE(f2.done.size() == 1);
  REQUIRE(f2.done[0].kernels.size() == 1);
  CHECK(f2.done[0].kernels[0].kind == KernelKind::comm);
  CHECK(f2.done[0].collectives[0].timing == Timing::cupti);
}

TEST_CASE("a collective without GPU work is written host-timed after a bounded wait") {
  KernelLinker l;
  l.add_collective(collective(0, 100), 13);
  for (int i = 0; i < KernelLinker::kMaxWaitFlushes; ++i) CHECK(take(l).done.empty());
  Flush f = take(l);
  REQUIRE(f.done.size() == 1);
  CHECK(f.done[0].collectives[0].timing == Timing::host);
  CHECK(f.done[0].collectives[0].start_ns == 100);
}

TEST_CASE("the final flush lets everything go, in launch order") {
  KernelLinker l;
  l.add_collective(collective(1, 300), 21);
  l.add_collective(collective(0, 200), 20);
  ActivityBatch b;
  b.links = {{80, 21}};
  b.kernels = {activity(KernelKind::comm, 80, 900, 950), activity(KernelKind::comm, 81, 1, 2)};
  l.add_activities(b);
  Flush f = take(l, true);
  REQUIRE(f.done.size() == 2);
  CHECK(f.done[0].collectives[0].seq == 0);
  CHECK(f.done[0].collectives[0].timing == Timing::host);
  CHECK(f.done[1].collectives[0].timing == Timing::cupti);
  REQUIRE(f.unlinked.size() == 1);  // an NCCL kernel whose link never came
  CHECK(f.unlinked[0].correlation == 81);
  CHECK(l.pending() == 0);
}
