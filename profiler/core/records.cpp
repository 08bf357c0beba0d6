#include "profiler/core/records.h"

namespace ddpscope {

const char* name_of(CommOrigin origin) {
  switch (origin) {
    case CommOrigin::init_rank:
      return "init_rank";
    case CommOrigin::init_rank_config:
      return "init_rank_config";
    case CommOrigin::init_all:
      return "init_all";
    case CommOrigin::split:
      return "split";
    case CommOrigin::first_use:
      return "first_use";
    case CommOrigin::nccl_plugin:
      return "nccl_plugin";
  }
  return "first_use";
}

const char* name_of(CommEnd end) {
  switch (end) {
    case CommEnd::none:
      return "none";
    case CommEnd::destroy:
      return "destroy";
    case CommEnd::abort:
      return "abort";
    case CommEnd::finalize:
      return "finalize";
  }
  return "none";
}

const char* name_of(KernelKind kind) {
  switch (kind) {
    case KernelKind::comm:
      return "comm";
    case KernelKind::compute:
      return "compute";
    case KernelKind::memcpy:
      return "memcpy";
    case KernelKind::memset:
      return "memset";
  }
  return "compute";
}

const char* name_of(SyncCall call) {
  switch (call) {
    case SyncCall::stream_synchronize:
      return "cudaStreamSynchronize";
    case SyncCall::device_synchronize:
      return "cudaDeviceSynchronize";
    case SyncCall::event_synchronize:
      return "cudaEventSynchronize";
    case SyncCall::stream_wait_event:
      return "cudaStreamWaitEvent";
  }
  return "cudaDeviceSynchronize";
}

std::optional<KernelKind> parse_kernel_kind(std::string_view n) {
  for (auto k : {KernelKind::comm, KernelKind::compute, KernelKind::memcpy, KernelKind::memset})
    if (n == name_of(k)) return k;
  return std::nullopt;
}

std::optional<SyncCall> parse_sync_call(std::string_view n) {
  for (auto c : {SyncCall::stream_synchronize, SyncCall::device_synchronize,
                 SyncCall::event_synchronize, SyncCall::stream_wait_event})
    if (n == name_of(c)) return c;
  return std::nullopt;
}

CommOrigin parse_comm_origin(std::string_view n) {
  for (auto o : {CommOrigin::init_rank, CommOrigin::init_rank_config, CommOrigin::init_all,
                 CommOrigin::split, CommOrigin::nccl_plugin})
    if (n == name_of(o)) return o;
  return CommOrigin::first_use;
}

CommEnd parse_comm_end(std::string_view n) {
  for (auto e : {CommEnd::destroy, CommEnd::abort, CommEnd::finalize})
    if (n == name_of(e)) return e;
  return CommEnd::none;
}

namespace {
constexpr DdpRegionKind kRegionKinds[] = {DdpRegionKind::init,       DdpRegionKind::forward,
                                          DdpRegionKind::comm_hook,  DdpRegionKind::join_shadow,
                                          DdpRegionKind::join_final, DdpRegionKind::join_control,
                                          DdpRegionKind::user};
}  // namespace

const char* name_of(DdpRegionKind kind) {
  switch (kind) {
    case DdpRegionKind::init:
      return "init";
    case DdpRegionKind::forward:
      return "forward";
    case DdpRegionKind::comm_hook:
      return "comm_hook";
    case DdpRegionKind::join_shadow:
      return "join_shadow";
    case DdpRegionKind::join_final:
      return "join_final";
    case DdpRegionKind::join_control:
      return "join_control";
    case DdpRegionKind::user:
      return "user";
  }
  return "user";
}

std::optional<DdpRegionKind> parse_ddp_region_kind(std::string_view n) {
  for (auto k : kRegionKinds)
    if (n == name_of(k)) return k;
  return std::nullopt;
}

namespace {
constexpr FsdpRegionKind kFsdpKinds[] = {FsdpRegionKind::forward_all_gather,
                                         FsdpRegionKind::backward_all_gather,
                                         FsdpRegionKind::reduce_scatter,
                                         FsdpRegionKind::all_reduce,
                                         FsdpRegionKind::wait,
                                         FsdpRegionKind::step,
                                         FsdpRegionKind::backward_end};
}  // namespace

const char* name_of(FsdpRegionKind kind) {
  switch (kind) {
    case FsdpRegionKind::forward_all_gather:
      return "forward_all_gather";
    case FsdpRegionKind::backward_all_gather:
      return "backward_all_gather";
    case FsdpRegionKind::reduce_scatter:
      return "reduce_scatter";
    case FsdpRegionKind::all_reduce:
      return "all_reduce";
    case FsdpRegionKind::wait:
      return "wait";
    case FsdpRegionKind::step:
      return "step";
    case FsdpRegionKind::backward_end:
      return "backward_end";
  }
  return "wait";
}

std::optional<FsdpRegionKind> parse_fsdp_region_kind(std::string_view n) {
  for (auto k : kFsdpKinds)
    if (n == name_of(k)) return k;
  return std::nullopt;
}

}  // namespace ddpscope
