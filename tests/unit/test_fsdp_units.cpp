// The FSDP analysis (profiler/analysis/fsdp_account.cpp, fsdp_units.cpp,
// fsdp_hang.cpp) on a
// hand-built rank whose every figure is computed by hand below: three steps
// of two units (the root, unit 0, and blocks.0, unit 1), each step
//
//   [0, 10]     step mark (the root's pre-forward)
//   [10, 60]    unit 0 forward all-gather, synchronous; runs [12, 50]
//   [60, 61]    unit 0 waits for its parameters
//   [61, 62]    unit 1 forward all-gather, prefetched by unit 0, async_op; runs [62, 100]
//   [90, 101]   unit 1 waits for its parameters
//   [200, 260]  unit 1 reduce-scatter, synchronous; runs [210, 250] (Gloo: an all-reduce)
//   [300, 400]  backward ends (the root's post-backward callback)
//   [310, 330]  unit 0 reduce-scatter, async_op; runs [320, 360]
//
// in µs from the step's start, steps 1 ms apart. The process group's
// sequence numbers run 3 behind the communicator's native ones, and a
// collective on another communicator starts inside one region (a decoy).
#include <catch2/catch.hpp>

#include "profiler/analysis/fsdp_account.h"
#include "profiler/analysis/fsdp_hang.h"
#include "profiler/analysis/fsdp_units.h"

using namespace ddpscope;
using namespace ddpscope::analysis;

namespace {

constexpr int64_t kUs = 1000, kStep = 1000 * kUs;
constexpr int64_t kPg = 77;
constexpr uint64_t kComm = 5, kDecoyComm = 9;

struct Rank {
  std::vector<Call> calls;
  std::vector<FsdpRegionRecord> regions;
  std::vector<FsdpInfoRecord> info;
};

void fact(Rank& r, int unit, const char* key, const std::string& value) {
  r.info.push_back({0, unit, key, value, 0});
}

void unit_facts(Rank& r, int unit, const char* fqn) {
  fact(r, unit, "root", "0");
  fact(r, unit, "fqn", fqn);
  fact(r, unit, "padded_unsharded_numel", "1000");
  fact(r, unit, "all_gather_dtype", "float32");
  fact(r, unit, "reduce_dtype", "float32");
  fact(r, unit, "all_gather_size", "2");
  fact(r, unit, "all_gather_pg", std::to_string(kPg));
}

void mark(Rank& r, FsdpRegionKind kind, int unit, int64_t b, int64_t e) {
  r.regions.push_back({.unit = unit, .kind = kind, .start_ns = b, .end_ns = e});
}

// A region that issued group seq `seq`, and its collective.
void issue(Rank& r, FsdpRegionKind kind, int unit, uint32_t flags, int64_t seq, int64_t b,
           int64_t e, int64_t run_b, int64_t run_e, Op op) {
  r.regions.push_back({.unit = unit,
                       .kind = kind,
                       .pg_key = kPg,
                       .seq_begin = seq,
                       .seq_end = seq + 1,
                       .flags = flags,
                       .start_ns = b,
                       .end_ns = e});
  Call c;
  c.id = int64_t(r.calls.size()) + 1;
  c.host_start = b + kUs / 2;
  c.start = run_b;
  c.end = run_e;
  c.bytes = 4000;
  c.seq = uint64_t(seq + 3);
  c.comm_id = kComm;
  c.nranks = 2;
  c.op = op;
  r.calls.push_back(c);
}

Rank three_steps() {
  Rank r;
  unit_facts(r, 0, "");
  unit_facts(r, 1, "blocks.0");
  using K = FsdpRegionKind;
  for (int64_t k = 0; k < 3; ++k) {
    const int64_t t = k * kStep, s = 4 * k;
    auto at = [&](int64_t us) { return t + us * kUs; };
    mark(r, K::step, 0, at(0), at(10));
    issue(r, K::forward_all_gather, 0, 0, s, at(10), at(60), at(12), at(50), Op::allgather);
    mark(r, K::wait, 0, at(60), at(61));
    issue(r, K::forward_all_gather, 1, kFsdpPrefetch | kFsdpAsync, s + 1, at(61), at(62), at(62),
          at(100), Op::allgather);
    mark(r, K::wait, 1, at(90), at(101));
    issue(r, K::reduce_scatter, 1, 0, s + 2, at(200), at(260), at(210), at(250), Op::allreduce);
    mark(r, K::backward_end, 0, at(300), at(400));
    issue(r, K::reduce_scatter, 0, kFsdpAsync, s + 3, at(310), at(330), at(320), at(360),
          Op::allreduce);
  }
  Call decoy;
  decoy.id = 100;
  decoy.host_start = kStep + 20 * kUs;  // inside step 1's first region
  decoy.start = decoy.host_start;
  decoy.end = decoy.start + kUs;
  decoy.seq = 100;
  decoy.comm_id = kDecoyComm;
  decoy.op = Op::allreduce;
  r.calls.push_back(decoy);
  return r;
}

const FsdpPhaseStats& phase(const FsdpAnalysis& a, int unit, FsdpRegionKind kind) {
  for (const auto& u : a.roots.at(0).units)
    if (u.unit == unit)
      for (const auto& p : u.phases)
        if (p.phase == kind) return p;
  FAIL("no such phase");
  throw;
}

FsdpAnalysis analyzed(Rank& r, FsdpRankAccount& acc, const std::vector<Interval>* compute) {
  acc = classify_fsdp_rank(r.calls, r.regions, r.info);
  return analyze_fsdp({{0, r.calls, &acc, compute}});
}

}  // namespace

TEST_CASE("fsdp: collectives take their unit's role through the group's tie, decoys do not") {
  Rank r = three_steps();
  auto acc = classify_fsdp_rank(r.calls, r.regions, r.info);
  REQUIRE(acc.region_of.size() == 12);
  for (const auto& c : r.calls) {
    if (c.comm_id == kDecoyComm) {
      CHECK(c.role == CollectiveRole::unknown);
      continue;
    }
    CHECK((c.op == Op::allgather ? c.role == CollectiveRole::fsdp_all_gather
                                 : c.role == CollectiveRole::fsdp_reduce_scatter));
    const uint64_t j = (c.seq - 3) % 4;  // the group's numbering: u0, u1, u1, u0 per step
    CHECK(c.instance == (j == 0 || j == 3 ? 0 : 1));
  }
}

TEST_CASE("fsdp on CPU: exposed while the thread was blocked, slack from the need") {
  Rank r = three_steps();
  FsdpRankAccount acc;
  auto a = analyzed(r, acc, nullptr);
  using K = FsdpRegionKind;
  const auto& ag0 = phase(a, 0, K::forward_all_gather);
  CHECK(ag0.calls == 2);  // steps 1 and 2; step 0 is warm-up
  CHECK(ag0.per_iteration == 1.0);
  CHECK(ag0.median_us == Approx(38));
  CHECK(ag0.exposed_us == Approx(38));      // inside its own synchronous call
  CHECK(*ag0.slack_us == Approx(10 - 50));  // needed when it was issued
  CHECK(ag0.prefetched == 0);
  CHECK(ag0.bytes == 4000);
  CHECK_FALSE(ag0.carried_as);
  CHECK(ag0.busbw_gbps == Approx(4000.0 / 38e3 * 0.5));
  const auto& ag1 = phase(a, 1, K::forward_all_gather);
  CHECK(ag1.exposed_us == Approx(10));  // async: only its wait, [90, 100]
  CHECK(*ag1.slack_us == Approx(90 - 100));
  CHECK(ag1.prefetched == 2);
  CHECK(ag1.exposed_steps_pct == Approx(0));  // 10 of 38: not mostly
  const auto& rs1 = phase(a, 1, K::reduce_scatter);
  CHECK(rs1.exposed_us == Approx(40));
  CHECK(*rs1.tail_us == Approx(0));
  CHECK(*rs1.carried_as == Op::allreduce);
  CHECK_FALSE(rs1.slack_us);
  const auto& rs0 = phase(a, 0, K::reduce_scatter);
  CHECK(rs0.exposed_us == Approx(40));  // async, but after backward ended
  CHECK(*rs0.tail_us == Approx(40));
  CHECK(a.roots[0].shared_comm);
  CHECK_FALSE(a.roots[0].overlapped);
}

TEST_CASE("fsdp: steps from the root's pre-forward, the first warm-up") {
  Rank r = three_steps();
  FsdpRankAccount acc;
  auto a = analyzed(r, acc, nullptr);
  const auto& steps = a.steps.at(0);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].warmup);
  CHECK_FALSE(steps[1].warmup);
  CHECK(steps[1].iter_ms == Approx(1.0));
  CHECK(steps[1].fsdp_comm_ms == Approx(0.156));     // 38 + 38 + 40 + 40 us
  CHECK(steps[1].fsdp_exposed_ms == Approx(0.128));  // 38 + 10 + 40 + 40 us
}

TEST_CASE("fsdp with compute kernels: exposed is what no compute kernel covered") {
  Rank r = three_steps();
  std::vector<Interval> compute;
  for (int64_t k = 0; k < 3; ++k) compute.push_back({k * kStep + 20 * kUs, k * kStep + 40 * kUs});
  FsdpRankAccount acc;
  auto a = analyzed(r, acc, &compute);
  CHECK(phase(a, 0, FsdpRegionKind::forward_all_gather).exposed_us == Approx(38 - 20));
  CHECK(phase(a, 1, FsdpRegionKind::forward_all_gather).exposed_us == Approx(38));
}

// --- a hang: the unit and phase of the collective a rank waits in ---------

namespace {

// Step 3 begun: its step mark, the regions of its first `done` collectives
// (as in the steps before), and the next one in flight, returned.
Call stuck_in_step_3(Rank& r, int done) {
  using K = FsdpRegionKind;
  const int64_t t = 3 * kStep, s = 12;
  auto at = [&](int64_t us) { return t + us * kUs; };
  mark(r, K::step, 0, at(0), at(10));
  if (done >= 1)
    issue(r, K::forward_all_gather, 0, 0, s, at(10), at(60), at(12), at(50), Op::allgather);
  Call asked;  // an in-flight row: no collectives.id yet
  asked.host_start = at(done >= 1 ? 61 : 10) + kUs / 2;
  asked.seq = uint64_t(s + done + 3);
  asked.comm_id = kComm;
  asked.op = Op::allgather;
  r.calls.push_back(asked);
  return asked;
}

}  // namespace

TEST_CASE("fsdp hang: the collective waited in is the one at its place in the step before") {
  Rank first = three_steps();
  Call asked = stuck_in_step_3(first, 0);
  auto label = fsdp_call_label(first.calls, asked, first.regions, first.info);
  REQUIRE(label);
  CHECK((label->fqn == "" && label->phase == FsdpRegionKind::forward_all_gather));
  CHECK(label->iteration == 3);
  Rank second = three_steps();
  asked = stuck_in_step_3(second, 1);
  label = fsdp_call_label(second.calls, asked, second.regions, second.info);
  REQUIRE(label);
  CHECK((label->fqn == "blocks.0" && label->phase == FsdpRegionKind::forward_all_gather));
  CHECK(label->iteration == 3);
}

TEST_CASE("fsdp hang: where the step before does not match, nothing is said") {
  Rank r = three_steps();
  Call asked = stuck_in_step_3(r, 1);
  r.regions.back().unit = 1;  // this step's first all-gather was another unit's
  CHECK_FALSE(fsdp_call_label(r.calls, asked, r.regions, r.info));
  Rank other_op = three_steps();
  asked = stuck_in_step_3(other_op, 0);
  asked.op = other_op.calls.back().op = Op::allreduce;  // not what the step before ran there
  CHECK_FALSE(fsdp_call_label(other_op.calls, asked, other_op.regions, other_op.info));
  Rank no_facts = three_steps();
  asked = stuck_in_step_3(no_facts, 0);
  CHECK_FALSE(fsdp_call_label(no_facts.calls, asked, no_facts.regions, {}));
}

TEST_CASE("fsdp hang: a completed collective is named by its own region") {
  Rank r = three_steps();
  const Call done = r.calls[6];  // step 1's reduce-scatter of blocks.0
  auto label = fsdp_call_label(r.calls, done, r.regions, r.info);
  REQUIRE(label);
  CHECK((label->fqn == "blocks.0" && label->phase == FsdpRegionKind::reduce_scatter));
  CHECK(label->iteration == 1);
}
