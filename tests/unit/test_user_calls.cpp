// The user's own collectives in a job without DDP (classify_rank,
// profiler/analysis/collective_roles.cpp): the hook's user regions tie their
// process group to a communicator by vote, and name its calls the user's;
// nothing else is named.
#include <catch2/catch.hpp>

#include "profiler/analysis/ddp_account.h"

using namespace ddpscope;
using namespace ddpscope::analysis;

namespace {

constexpr int64_t kPg = 77;
constexpr uint64_t kComm = 5, kOther = 9;

Call native(int64_t id, uint64_t comm, uint64_t seq, int64_t host_start) {
  Call c;
  c.id = id;
  c.comm_id = comm;
  c.seq = seq;
  c.host_start = host_start;
  c.op = Op::allreduce;
  return c;
}

DdpRegionRecord user_region(int64_t seq, int64_t begin, int64_t end) {
  DdpRegionRecord r;
  r.kind = DdpRegionKind::user;
  r.pg_key = kPg;
  r.seq_begin = seq;
  r.seq_end = seq + 1;
  r.start_ns = begin;
  r.end_ns = end;
  return r;
}

}  // namespace

TEST_CASE("user calls: tied by their regions' vote, named the user's, with no DDP") {
  // The group's seq runs 10 behind the communicator's. Region 1 also holds a
  // call of another thread's communicator: one vote for it, three for kComm.
  std::vector<Call> calls = {native(1, kComm, 10, 100), native(2, kComm, 11, 200),
                             native(3, kOther, 40, 205), native(4, kComm, 12, 300),
                             native(5, kComm, 13, 400)};  // no region: not the user's
  std::vector<DdpRegionRecord> regions = {user_region(0, 90, 110), user_region(1, 190, 210),
                                          user_region(2, 290, 310)};
  RankAccount acc = classify_rank(calls, regions, {});
  CHECK(acc.instances.empty());
  CHECK(acc.primary == -1);
  CHECK(calls[0].role == CollectiveRole::user);
  CHECK(calls[1].role == CollectiveRole::user);
  CHECK(calls[3].role == CollectiveRole::user);
  CHECK(calls[2].role == CollectiveRole::unknown);
  CHECK(calls[4].role == CollectiveRole::unknown);
}

TEST_CASE("user calls: no region, nothing named") {
  std::vector<Call> calls = {native(1, kComm, 0, 100)};
  RankAccount acc = classify_rank(calls, {}, {});
  CHECK(acc.instances.empty());
  CHECK(calls[0].role == CollectiveRole::unknown);
}
