// A rank file read where the merge (merge.h) would put its rows, without
// writing the merge: on the file's own read-only connection, a TEMP view
// over each table (temp objects hide main's of the same name) shifts its
// times onto the wall timeline and its collective ids past the files before
// it, table.h's convention. Every query, the reader's and raw SQL alike,
// then reads the rows as the merged run holds them.
//
// A file with NCCL profiler plugin rows is joined as the merge joins it
// (nccl_join.h), which writes: the four tables the join changes are TEMP
// tables in memory instead, filled from the file and joined there.
#pragma once

#include <cstdint>

#include "profiler/store/sqlite.h"

namespace ddpscope::store {

struct Placement {
  int rank = 0;                 // the file's one process
  int64_t clock_offset_ns = 0;  // its monotonic clock onto the wall timeline
  int64_t id_base = 0;          // the highest collective id of the files placed before
};

// Whether placing the file joins NCCL's plugin rows, which may add
// collectives: its highest id is then known only once it is placed.
bool joins_plugin_rows(Connection& conn, int version);
// The highest collective id of a file that joins none, placed at `base`.
int64_t highest_id_at(Connection& conn, int64_t base);

// Places the rank file open on `conn` (schema `version`, checked), every
// table then reading as of kSchemaVersion. Returns the highest collective
// id it holds once placed (id_base when none): the next file's base.
int64_t place_rank_file(Connection& conn, int version, const Placement& p);

}  // namespace ddpscope::store
