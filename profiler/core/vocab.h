// The vocabulary every part of ddpscope shares: collective ops, datatypes,
// backends and timing sources as small enums (fixed-size events carry these,
// never strings), with the names the SQLite schema stores.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ddpscope {

enum class Op : uint8_t {
  allreduce,
  broadcast,
  reduce,
  allgather,
  reduce_scatter,
  alltoall,
  send,
  recv,
  barrier,
  gather,
  scatter,
  kCount
};

// NCCL's datatypes by name; Gloo only knows an element size, hence the bitsN
// entries for "N-bit elements of a type we cannot see".
enum class Dtype : uint8_t {
  unknown,
  int8,
  uint8,
  int32,
  uint32,
  int64,
  uint64,
  float16,
  float32,
  float64,
  bfloat16,
  fp8e4m3,
  fp8e5m2,
  bits8,
  bits16,
  bits32,
  bits64,
  kCount
};

enum class RedOp : uint8_t { none, sum, prod, max, min, avg, custom, kCount };

enum class Backend : uint8_t { unknown, nccl, gloo, mpi, kCount };

// Which source filled collectives.start_ns/end_ns (see docs/schema.md).
// Ordered worst to best (the analysis keeps the best a run has).
// ce_events: a copy-engine collective's span as NCCL's profiler (v6) reports
// it, start to stop of its ceColl event: host times around the copies NCCL
// enqueued, the closest a run without device timers has to when they ran.
// kernel_channels: NCCL's profiler plugin's per-channel GPU timer (first
// channel start to last channel stop), put on the host clock by the merge.
enum class Timing : uint8_t { none, host, ce_events, kernel_channels, event, cupti, kCount };

std::string_view name_of(Op op);
std::string_view name_of(Dtype dtype);
std::string_view name_of(RedOp redop);
std::string_view name_of(Backend backend);
std::string_view name_of(Timing timing);

std::optional<Op> parse_op(std::string_view name);
std::optional<Dtype> parse_dtype(std::string_view name);
std::optional<RedOp> parse_redop(std::string_view name);
std::optional<Backend> parse_backend(std::string_view name);
std::optional<Timing> parse_timing(std::string_view name);

// Size in bytes of one element; 0 when unknown.
unsigned dtype_bytes(Dtype dtype);
// The Gloo-style dtype for an element size we know only by its width.
Dtype dtype_of_width(unsigned bytes);

// nccl-tests' bus-bandwidth factor: busbw = algbw * factor for a collective of
// `nranks` ranks (2(n-1)/n for all-reduce, (n-1)/n for the gathers, scatters and
// all-to-all, 1 for rooted and point-to-point ops).
double busbw_factor(Op op, int nranks);

// nccl-tests' message size S of `count` elements of `elem_bytes` each: the
// whole message for the ops whose count is per rank (gathers, scatters,
// all-to-all), the buffer for the others.
uint64_t message_bytes(Op op, uint64_t count, uint64_t elem_bytes, int nranks);

}  // namespace ddpscope
