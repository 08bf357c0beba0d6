// One collective, one row. The hooks and NCCL's profiler plugin both see a
// collective: the hooks its call (arguments, stream, host and device times),
// the plugin what NCCL chose for it (algorithm, protocol, channels) and its
// network and kernel-channel progress. The merge joins them: each plugin
// collective names the `collectives` row it is, each plugin communicator the
// `comms` id. Where only the plugin saw a communicator (NCCL linked
// statically, no hook could interpose), the merge writes its `comms` and
// `collectives` rows from the plugin alone.
//
// The key is (communicator, sequence): NCCL numbers a communicator's
// collectives per function (AllReduce #0, #1, ...; `seqNumber`), counting
// from the communicator's creation, so the plugin's k-th AllReduce on a
// communicator is the hooks' k-th ncclAllReduce call on it (with the
// collectives NCCL ran on copy engines, which it numbers apart, counted in). Which hook
// communicator a plugin communicator is (NCCL's commHash and our comm_id are
// different hashes) is read from the collectives themselves: the one whose
// calls agree in count and datatype, position by position.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "profiler/core/records.h"
#include "profiler/store/sqlite.h"

namespace ddpscope::store {

// NCCL's names ("AllReduce", "ncclFloat32") in our vocabulary.
std::optional<Op> op_of_nccl_func(std::string_view func);
Dtype dtype_of_nccl_name(std::string_view name);

// What one process's plugin rows are in its hook rows.
struct PluginLinks {
  // (comm_hash, comm_rank) of a plugin communicator -> the hooks' comm_id.
  std::map<std::pair<int64_t, int32_t>, uint64_t> comms;
  // coll_key of a plugin collective -> the hooks' collectives.id.
  std::map<int64_t, int64_t> collectives;
};

// A collective NCCL ran on copy engines (profiler v6), not as a kernel.
bool is_copy_engine(const NcclPluginCollectiveRecord& p);

// Pure: where each of one plugin communicator's collectives (by coll_key)
// sits among the hooks' calls of its function on that communicator, counting
// from 0. A kernel collective is placed by NCCL's seqNumber, shifted past the
// copy-engine collectives of its function that started before it (NCCL does
// not count those); a copy-engine collective by start order.
std::map<int64_t, int64_t> call_positions(
    const std::vector<const NcclPluginCollectiveRecord*>& comm_collectives);

// Pure: links one process's plugin communicators and collectives to its hook
// communicators and collectives (every argument holds that process's rows).
PluginLinks link_plugin_rows(const std::vector<CommRecord>& comms,
                             const std::vector<CollectiveRecord>& collectives,
                             const std::vector<NcclPluginCommRecord>& plugin_comms,
                             const std::vector<NcclPluginCollectiveRecord>& plugin_collectives);

// In a merged database (profiler/store/merge.cpp), after `rank`'s rows were
// copied: links that rank's plugin rows, and writes the rows only the plugin
// saw. Returns the number of collectives written from the plugin alone.
int64_t join_nccl_plugin(Connection& db, int rank);

}  // namespace ddpscope::store
