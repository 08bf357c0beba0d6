// Which plugin communicator and collective is which hook one
// (profiler/store/nccl_join.h), on hand-made rows: the cases a real job
// makes that the DDP-like job of tests/nccl_plugin does not.
#include <catch2/catch.hpp>

#include "profiler/store/nccl_join.h"

using namespace ddpscope;
using store::link_plugin_rows;

namespace {

CommRecord hook_comm(uint64_t id, int64_t created_ns) {
  CommRecord c;
  c.comm_id = id;
  c.nranks = 2;
  c.comm_rank = 0;
  c.backend = Backend::nccl;
  c.origin = CommOrigin::init_rank;
  c.created_ns = created_ns;
  return c;
}

CollectiveRecord call(int64_t id, uint64_t comm, uint64_t seq, Op op, uint64_t count) {
  CollectiveRecord c;
  c.id = id;
  c.comm_id = comm;
  c.comm_rank = 0;
  c.nranks = 2;
  c.seq = seq;
  c.op = op;
  c.dtype = Dtype::float32;
  c.count = count;
  return c;
}

NcclPluginCommRecord plugin_comm(int64_t hash, int64_t recorded_ns) {
  NcclPluginCommRecord c;
  c.comm_hash = hash;
  c.nranks = 2;
  c.comm_rank = 0;
  c.recorded_ns = recorded_ns;
  return c;
}

NcclPluginCollectiveRecord plugin_call(int64_t hash, int64_t seq, const char* func, int64_t count,
                                       int64_t key) {
  NcclPluginCollectiveRecord p;
  p.comm_hash = hash;
  p.comm_rank = 0;
  p.seq = seq;
  p.func = func;
  p.count = count;
  p.dtype = "ncclFloat32";
  p.coll_key = key;
  return p;
}

}  // namespace

TEST_CASE("nccl join: NCCL numbers per function, the hooks per communicator") {
  // all-reduce, broadcast, all-reduce: NCCL's AllReduce #1 is the hooks' call #2.
  auto links = link_plugin_rows(
      {hook_comm(7, 100)},
      {call(1, 7, 0, Op::allreduce, 10), call(2, 7, 1, Op::broadcast, 20),
       call(3, 7, 2, Op::allreduce, 30)},
      {plugin_comm(-5, 90)},
      {plugin_call(-5, 0, "AllReduce", 10, 11), plugin_call(-5, 0, "Broadcast", 20, 12),
       plugin_call(-5, 1, "AllReduce", 30, 13)});
  CHECK(links.comms.at({-5, 0}) == 7);
  CHECK(links.collectives == std::map<int64_t, int64_t>{{11, 1}, {12, 2}, {13, 3}});
}

TEST_CASE("nccl join: two communicators told apart by their calls, not by when they were made") {
  // The plugin's communicators were initialised in the opposite order to the
  // hooks' (a non-blocking init): the calls decide.
  auto links = link_plugin_rows(
      {hook_comm(7, 100), hook_comm(8, 200)},
      {call(1, 7, 0, Op::allreduce, 10), call(2, 8, 0, Op::allreduce, 99)},
      {plugin_comm(-5, 195), plugin_comm(-6, 95)},
      {plugin_call(-5, 0, "AllReduce", 10, 11), plugin_call(-6, 0, "AllReduce", 99, 12)});
  CHECK(links.comms.at({-5, 0}) == 7);
  CHECK(links.comms.at({-6, 0}) == 8);
  CHECK(links.collectives == std::map<int64_t, int64_t>{{11, 1}, {12, 2}});
}

TEST_CASE("nccl join: alike communicators are told apart by creation time") {
  auto links = link_plugin_rows(
      {hook_comm(7, 100), hook_comm(8, 200)},
      {call(1, 7, 0, Op::allreduce, 10), call(2, 8, 0, Op::allreduce, 10)},
      {plugin_comm(-5, 190), plugin_comm(-6, 95)},
      {plugin_call(-5, 0, "AllReduce", 10, 11), plugin_call(-6, 0, "AllReduce", 10, 12)});
  CHECK(links.comms.at({-6, 0}) == 7);
  CHECK(links.comms.at({-5, 0}) == 8);
  CHECK(links.collectives == std::map<int64_t, int64_t>{{12, 1}, {11, 2}});
}

TEST_CASE("nccl join: a call the plugin never saw leaves no wrong link") {
  // The plugin's pool was full for AllReduce #0: #1 still finds call 2, and a
  // count that agrees with no call links nothing.
  auto links = link_plugin_rows(
      {hook_comm(7, 100)}, {call(1, 7, 0, Op::allreduce, 10), call(2, 7, 1, Op::allreduce, 20)},
      {plugin_comm(-5, 90)},
      {plugin_call(-5, 1, "AllReduce", 20, 12), plugin_call(-5, 2, "AllReduce", 30, 13)});
  CHECK(links.collectives == std::map<int64_t, int64_t>{{12, 2}});
}

TEST_CASE("nccl join: broadcasts and all-gathers are counted in bytes by NCCL") {
  // NCCL moves what it does not reduce as ncclInt8: DDP's 42-element int64
  // broadcast is its 336-byte Broadcast. A reduction keeps its type: 40
  // ncclInt8 is not the hooks' 10-float all-reduce.
  auto bytes = [](NcclPluginCollectiveRecord p) {
    p.dtype = "ncclInt8";
    return p;
  };
  auto wide = [](CollectiveRecord c) {
    c.dtype = Dtype::int64;
    return c;
  };
  auto links =
      link_plugin_rows({hook_comm(7, 100)},
                       {wide(call(1, 7, 0, Op::allgather, 1)),
                        wide(call(2, 7, 1, Op::broadcast, 42)), call(3, 7, 2, Op::allreduce, 10)},
                       {plugin_comm(-5, 90)},
                       {bytes(plugin_call(-5, 0, "AllGather", 8, 11)),
                        bytes(plugin_call(-5, 0, "Broadcast", 336, 12)),
                        bytes(plugin_call(-5, 0, "AllReduce", 40, 13))});
  CHECK(links.collectives == std::map<int64_t, int64_t>{{11, 1}, {12, 2}});
}

TEST_CASE("nccl join: NCCL's names in our vocabulary") {
  CHECK(store::op_of_nccl_func("ReduceScatter") == Op::reduce_scatter);
  CHECK_FALSE(store::op_of_nccl_func("SendRecv").has_value());
  CHECK(store::dtype_of_nccl_name("ncclBfloat16") == Dtype::bfloat16);
  CHECK(store::dtype_of_nccl_name("Unknown") == Dtype::unknown);
}

namespace {

NcclPluginCollectiveRecord copy_engine_call(int64_t hash, int64_t ce_seq, int64_t count,
                                            int64_t key) {
  NcclPluginCollectiveRecord p = plugin_call(hash, ce_seq, "AllGather", count, key);
  p.algo = kNcclCopyEngineAlgo;
  p.proto = "UC";
  return p;
}

}  // namespace

// NCCL 2.29+ runs some all-gathers on the copy engines: those are no kernel
// collective, so NCCL's seqNumber skips them, and their own sequence (NCCL's
// CE sequence, bumped per synchronisation) is no call count.
TEST_CASE("nccl join: copy-engine collectives take their place among the calls by start order") {
  auto k0 = plugin_call(7, 0, "AllGather", 10, 1);
  auto ce1 = copy_engine_call(7, 2, 11, 2);
  auto k1 = plugin_call(7, 1, "AllGather", 12, 3);
  auto ce2 = copy_engine_call(7, 6, 13, 4);
  auto ar = plugin_call(7, 0, "AllReduce", 14, 5);
  auto ce3 = copy_engine_call(7, 8, 15, 6);
  // Handed over in another order than they started: start order is coll_key's.
  auto pos = store::call_positions({&ce3, &k1, &ar, &ce1, &k0, &ce2});
  CHECK(pos == std::map<int64_t, int64_t>{{1, 0}, {2, 1}, {3, 2}, {4, 3}, {5, 0}, {6, 4}});
}

TEST_CASE("nccl join: kernel and copy-engine all-gathers each find their own call") {
  std::vector<CommRecord> comms = {hook_comm(100, 1000)};
  std::vector<CollectiveRecord> calls;
  for (int i = 0; i < 4; ++i) calls.push_back(call(i + 1, 100, i, Op::allgather, 10 + i));
  // Calls 0 and 2 ran as kernels (NCCL's seqNumber 0 and 1), 1 and 3 on the copy engines.
  std::vector<NcclPluginCollectiveRecord> plugin = {
      plugin_call(7, 0, "AllGather", 10, 1), copy_engine_call(7, 3, 11, 2),
      plugin_call(7, 1, "AllGather", 12, 3), copy_engine_call(7, 5, 13, 4)};
  auto links = link_plugin_rows(comms, calls, {plugin_comm(7, 1000)}, plugin);
  CHECK(links.collectives == std::map<int64_t, int64_t>{{1, 1}, {2, 2}, {3, 3}, {4, 4}});
}
