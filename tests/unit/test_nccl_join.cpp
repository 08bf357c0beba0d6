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
