// SQLite schema (now v8) of ddpscope databases (documented column by column in
// docs/schema.md). Rank files and merged run databases share it; the meta key
// `timeline` tells them apart.
#pragma once

#include <set>
#include <string>

#include "profiler/store/sqlite.h"

namespace ddpscope::store {

// PRAGMA application_id marks a file as ours ("DDPS"); PRAGMA user_version holds
// the schema version. A reader refuses a newer major version.
constexpr int kApplicationId = 0x44445053;
// v2 added ddp_info and ddp_regions (DDP's own account); v1 files still read,
// without them. v3 added nccl_plugin_comms, nccl_plugin_collectives,
// nccl_proxy_ops and nccl_proxy_steps (NCCL's profiler plugin); v1 and v2
// files still read, without them. v4 added nccl_kernel_channels and, to the
// plugin's tables, the keys that join them to `collectives` and `comms`
// (comm_rank, coll_key, collective_id, comm_id); older files read them as NULL.
// v5 added inflight (collectives entered and not completed); older files read
// as having none. v6 added nccl_ce_ops (copy-engine collectives' steps) and the
// timing `ce_events`; older files read as having none. v7 added fsdp_info and
// fsdp_regions (FSDP2's own account); older files read as having none. v8
// added kernel_blocks (the kernels packed, kernel_blocks.h); v9 the triggers
// that empty it when a row of kernels changes. Files before v9 read their
// kernels from the table (v8's blocks, without those triggers, may be stale).
constexpr int kSchemaVersion = 9;
constexpr int kKernelBlocksSince = 9;

// Creates every table of the current schema in an empty database and stamps it.
void create_schema(Connection& conn);
// Drops the schema's triggers, for a scratch copy (record's live window) that
// trims rows one by one and never holds what they keep true: each would run
// once a row.
void drop_triggers(Connection& conn);

// Indexes the analysis needs; built once after bulk writes (merge), never on the
// injector's write path.
void create_indexes(Connection& conn);

// Throws InputError with one clear line if `conn` is not a ddpscope database of a
// version this build can read.
// Returns the file's schema version.
int check_schema(Connection& conn);

// Whether `schema` ("main", or an attached name) of `conn` has table `name`.
bool has_table(Connection& conn, const std::string& name, const std::string& schema = "main");
// Every table of `schema`, by one look at it: for a reader that asks of many
// tables per file (merge, the live window), one query where has_table makes one each.
std::set<std::string> table_names(Connection& conn, const std::string& schema = "main");

}  // namespace ddpscope::store
