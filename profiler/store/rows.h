// The tables of the capture's records (profiler/core/records.h): each one's
// declaration and binding, specialising Row<Record> (table.h).
#pragma once

#include "profiler/core/records.h"
#include "profiler/store/table.h"

namespace ddpscope::store {

#define DDPSCOPE_ROW(Record)                                    \
  template <>                                                   \
  struct Row<Record> {                                          \
    static const TableSpec& table();                            \
    static void bind(Statement& s, int first, const Record& r); \
    static Record read(const Statement& s);                     \
  }

DDPSCOPE_ROW(ProcessRecord);               // rows_run.cpp
DDPSCOPE_ROW(CommRecord);                  // rows_run.cpp
DDPSCOPE_ROW(CollectiveRecord);            // rows_run.cpp
DDPSCOPE_ROW(InflightRecord);              // rows_inflight.cpp
DDPSCOPE_ROW(RankExitRecord);              // rows_run.cpp
DDPSCOPE_ROW(StackRecord);                 // rows_run.cpp
DDPSCOPE_ROW(KernelRecord);                // rows_gpu.cpp
DDPSCOPE_ROW(RangeRecord);                 // rows_gpu.cpp
DDPSCOPE_ROW(SyncRecord);                  // rows_gpu.cpp
DDPSCOPE_ROW(DdpInfoRecord);               // rows_ddp.cpp
DDPSCOPE_ROW(DdpRegionRecord);             // rows_ddp.cpp
DDPSCOPE_ROW(FsdpInfoRecord);              // rows_fsdp.cpp
DDPSCOPE_ROW(FsdpRegionRecord);            // rows_fsdp.cpp
DDPSCOPE_ROW(NcclPluginCommRecord);        // rows_nccl_plugin.cpp
DDPSCOPE_ROW(NcclPluginCollectiveRecord);  // rows_nccl_plugin.cpp
DDPSCOPE_ROW(NcclProxyOpRecord);           // rows_nccl_plugin.cpp
DDPSCOPE_ROW(NcclProxyStepRecord);         // rows_nccl_plugin.cpp
DDPSCOPE_ROW(NcclKernelChannelRecord);     // rows_nccl_plugin.cpp
DDPSCOPE_ROW(NcclCeOpRecord);              // rows_nccl_ce.cpp

#undef DDPSCOPE_ROW

// The tuner's tables (tune_store.cpp): declared here so the schema has them.
const TableSpec& tune_runs_table();
const TableSpec& tune_results_table();

}  // namespace ddpscope::store
