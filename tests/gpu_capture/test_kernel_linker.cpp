// Linking GPU activities to the collectives that launched them, across
// flushes and in any arrival order: single calls, groups covering several
// collectives, copy-engine collectives, and collectives that never ran. A
// collective stays in flight until its completion is known: by its own
// records, however late, or by a later collective on its stream.
#include <algorithm>
#include <catch2/catch.hpp>

#include "injector/runtime/counters.h"
#include "injector/runtime/kernel_linker.h"

using namespace ddpscope;
using namespace ddpscope::inject;

namespace {

constexpr uint64_t kStream = 0x5000;  // the job's NCCL stream

// An all-reduce of a 2-rank communicator, called on thread 1.
CollectiveRecord collective(uint64_t seq, int64_t host_start, uint64_t stream = kStream) {
  CollectiveRecord c;
  c.seq = seq;
  c.nranks = 2;
  c.count = 4;
  c.stream = stream;
  c.tid = 1;
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

ActivityBatch linked(uint32_t cupti_corr, uint64_t ours, int64_t start, int64_t end) {
  ActivityBatch b;
  b.links = {{cupti_corr, ours}};
  b.kernels = {activity(KernelKind::comm, cupti_corr, start, end)};
  return b;
}

std::vector<uint64_t> pending_seqs(const KernelLinker& l) {
  std::vector<uint64_t> seqs;
  l.for_each_pending([&](const CollectiveRecord& c) { seqs.push_back(c.seq); });
  std::sort(seqs.begin(), seqs.end());
  return seqs;
}

// The seqs a flush found done, and how each was timed.
std::vector<std::pair<uint64_t, Timing>> done_of(const Flush& f) {
  std::vector<std::pair<uint64_t, Timing>> out;
  for (const auto& g : f.done)
    for (const auto& c : g.collectives) out.emplace_back(c.seq, c.timing);
  return out;
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

// Seen on an H100 (docs/gpu-runs/2026-11-26-h100-1rank.log): an AVG all-reduce on a one-rank communicator
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

// NCCL runs a one-rank communicator's in-place reduction as nothing at all:
// no record will come, and no other rank can be waiting on it.
TEST_CASE("a one-rank collective without GPU work is written host-timed after a bounded wait") {
  KernelLinker l;
  CollectiveRecord alone = collective(0, 100);
  alone.nranks = 1;
  l.add_collective(alone, 13);
  for (int i = 0; i < KernelLinker::kMaxWaitFlushes; ++i) CHECK(take(l).done.empty());
  Flush f = take(l);
  REQUIRE(f.done.size() == 1);
  CHECK(f.done[0].collectives[0].timing == Timing::host);
  CHECK(f.done[0].collectives[0].start_ns == 100);
}

// docs/hangs.md: a real NCCL hang lasts minutes; the collective must still be
// in flight when the user interrupts the job, or --hang-after 60 fires.
TEST_CASE("a collective on a stuck stream stays in flight for 60 s of flushes, and at the end") {
  KernelLinker l;
  l.add_collective(collective(7, 100), 30);
  for (int i = 0; i < 300; ++i) {  // 60 s at the default 200 ms
    Flush f = take(l);
    REQUIRE(f.done.empty());
  }
  CHECK(pending_seqs(l) == std::vector<uint64_t>{7});
  Flush last = take(l, true);  // the process ends: completion still unknown
  CHECK(last.done.empty());
  CHECK(pending_seqs(l) == std::vector<uint64_t>{7});
}

TEST_CASE("a collective whose record is merely late is timed by its record") {
  KernelLinker l;
  l.add_collective(collective(0, 100), 31);
  ActivityBatch link_now;  // the API record comes at once; the kernel's once it ends
  link_now.links = {{90, 31}};
  l.add_activities(link_now);
  for (int i = 0; i < 60; ++i) REQUIRE(take(l).done.empty());
  ActivityBatch kernel_late;
  kernel_late.kernels = {activity(KernelKind::comm, 90, 5000, 7000)};
  l.add_activities(kernel_late);
  Flush arrived = take(l);
  CHECK(arrived.done.empty());
  CHECK(arrived.unlinked.empty());
  Flush f = take(l);
  REQUIRE(done_of(f) == std::vector<std::pair<uint64_t, Timing>>{{0, Timing::cupti}});
  CHECK(f.done[0].collectives[0].start_ns == 5000);
  CHECK(f.done[0].collectives[0].end_ns == 7000);
  REQUIRE(f.done[0].kernels.size() == 1);
  CHECK(l.pending() == 0);
}

TEST_CASE("a later collective completed on the same stream resolves one whose record never came") {
  uint64_t before = counter_value(Counter::stream_ordered_collectives);
  KernelLinker l;
  l.add_collective(collective(0, 100), 40);               // its record is lost
  l.add_collective(collective(5, 90, kStream + 16), 39);  // another stream: no order known
  l.add_collective(collective(1, 200), 41);
  ActivityBatch b = linked(95, 41, 1000, 1200);
  l.add_activities(b);
  CHECK(take(l).done.empty());  // the later one waits a flush for late copies
  Flush f = take(l);
  auto done = done_of(f);
  CHECK(done == std::vector<std::pair<uint64_t, Timing>>{{0, Timing::host}, {1, Timing::cupti}});
  CHECK(f.done[0].collectives[0].start_ns == 100);  // the best known: host
  CHECK(pending_seqs(l) == std::vector<uint64_t>{5});
  CHECK(counter_value(Counter::stream_ordered_collectives) - before == 1);
}

// Another thread's call is placed only when it returned before the completed
// one was called; a grouped call launches at its group's end, unrecorded.
TEST_CASE("stream order resolves only what the host can be sure of") {
  KernelLinker l;
  CollectiveRecord other_thread = collective(0, 100);
  other_thread.tid = 2;
  CollectiveRecord grouped = collective(1, 120);
  grouped.tid = 2;
  grouped.group_id = 3;
  CollectiveRecord overlapping = collective(2, 150);
  overlapping.tid = 2;
  overlapping.host_end_ns = 260;  // still in its call when the completed one began
  CollectiveRecord legacy_elsewhere = collective(3, 110, 0);  // legacy stream, other comm
  legacy_elsewhere.comm_id = 99;
  l.add_collective(other_thread, 50);
  l.add_collective(grouped, 51);
  l.add_collective(overlapping, 52);
  l.add_collective(legacy_elsewhere, 53);
  CollectiveRecord later = collective(4, 250);
  l.add_collective(later, 49);  // an id taken before the others': another thread's
  CollectiveRecord legacy_later = collective(5, 260, 0);
  l.add_collective(legacy_later, 54);
  ActivityBatch b;
  b.links = {{96, 49}, {97, 54}};
  b.kernels = {activity(KernelKind::comm, 96, 1000, 1200),
               activity(KernelKind::comm, 97, 1300, 1400)};
  l.add_activities(b);
  take(l);
  Flush f = take(l);
  CHECK(done_of(f) == std::vector<std::pair<uint64_t, Timing>>{
                          {0, Timing::host}, {4, Timing::cupti}, {5, Timing::cupti}});
  CHECK(pending_seqs(l) == std::vector<uint64_t>{1, 2, 3});
}

// CUPTI that delivers nothing at all (its buffers lost): stream order has
// nothing to go by, so a cap bounds what is held; the oldest leave, counted.
TEST_CASE("collectives in flight are capped: the oldest leave host-timed, counted") {
  uint64_t before = counter_value(Counter::unconfirmed_collectives);
  KernelLinker l;
  size_t n = KernelLinker::kMaxPendingLaunches + 3;
  for (size_t i = 0; i < n; ++i)
    l.add_collective(collective(i, int64_t(1000 + i)), uint32_t(i + 1));
  Flush f = take(l);
  CHECK(done_of(f) == std::vector<std::pair<uint64_t, Timing>>{
                          {0, Timing::host}, {1, Timing::host}, {2, Timing::host}});
  CHECK(l.pending() == KernelLinker::kMaxPendingLaunches);
  CHECK(counter_value(Counter::unconfirmed_collectives) - before == 3);
}

TEST_CASE("the final flush lets go what is known done, in launch order, and keeps the rest") {
  KernelLinker l;
  l.add_collective(collective(2, 400), 22);
  l.add_collective(collective(1, 300), 21);
  l.add_collective(collective(0, 200, kStream + 16), 20);
  ActivityBatch b;
  b.links = {{80, 21}, {82, 22}};
  b.kernels = {activity(KernelKind::comm, 80, 900, 950), activity(KernelKind::comm, 81, 1, 2),
               activity(KernelKind::comm, 82, 960, 990)};
  l.add_activities(b);
  Flush f = take(l, true);
  CHECK(done_of(f) ==
        std::vector<std::pair<uint64_t, Timing>>{{1, Timing::cupti}, {2, Timing::cupti}});
  REQUIRE(f.unlinked.size() == 1);  // an NCCL kernel whose link never came
  CHECK(f.unlinked[0].correlation == 81);
  CHECK(pending_seqs(l) == std::vector<uint64_t>{0});  // no record: completion unknown
}
