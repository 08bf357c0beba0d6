// The vocabulary every part of ddpscope shares: collective ops, datatypes,
// backends and timing sources as small enums (fixed-size events carry these,
// never strings), with the names the SQLite schema stores.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace ddpscope {

// What an op is or does, beside its name: bits of its row's traits below.
enum OpTrait : unsigned {
  kPointToPoint = 1u << 0,   // send, recv: a sequence number pairs two ranks, not the communicator
  kSameCount = 1u << 1,      // every rank passes the same element count (Gloo's v-variants let a
                             // gather's differ per rank)
  kSynchronising = 1u << 2,  // no rank leaves before the last one entered (lateness is read here)
  kReduces = 1u << 3,        // combines the ranks' data with a reduction op
  kRooted = 1u << 4,         // one rank (the root) is its source or destination
  kNcclAsBytes = 1u << 5,    // NCCL moves its data as bytes: its profiler plugin reports that
                             // many ncclInt8 elements (docs/nccl_plugin.md)
};

// What the API's element count counts (docs/schema.md, collectives.count).
enum class OpCount : uint8_t {
  buffer,    // the whole buffer
  input,     // each rank's input; the output holds nranks of them (the gathers)
  output,    // each rank's output; the input holds nranks of them (the scatters)
  per_peer,  // what goes to each peer (all-to-all)
};

// nccl-tests' bus-bandwidth factor (busbw = algbw * factor) on n ranks:
// `one` 1, `all_reduce` 2(n-1)/n, `ring` (n-1)/n. On one rank the last two
// give 0 for an unrooted op, 1 for a rooted one.
enum class BusBw : uint8_t { one, all_reduce, ring };

// The op table: one row per collective op, every fact about it the code uses;
// the Op enum, the names and every rule below come from these rows.
// The position is the op's number, carried in fixed-size events: append only.
// nccl_func: NCCL's name of it in its profiler plugin, "" for none.
// clang-format off
#define DDPSCOPE_OPS(X)                                                                            \
  /* name           traits                                  count     busbw       nccl_func */     \
  X(allreduce,      kSameCount | kSynchronising | kReduces, buffer,   all_reduce, "AllReduce")     \
  X(broadcast,      kSameCount | kRooted | kNcclAsBytes,    buffer,   one,        "Broadcast")     \
  X(reduce,         kSameCount | kRooted | kReduces,        buffer,   one,        "Reduce")        \
  X(allgather,      kSynchronising | kNcclAsBytes,          input,    ring,       "AllGather")     \
  X(reduce_scatter, kSameCount | kSynchronising | kReduces, output,   ring,       "ReduceScatter") \
  X(alltoall,       kSynchronising,                         per_peer, ring,       "AlltoAll")      \
  X(send,           kPointToPoint,                          buffer,   one,        "")              \
  X(recv,           kPointToPoint,                          buffer,   one,        "")              \
  X(barrier,        kSynchronising,                         buffer,   one,        "")              \
  X(gather,         kRooted,                                input,    ring,       "Gather")        \
  X(scatter,        kRooted,                                output,   ring,       "Scatter")

enum class Op : uint8_t {
#define DDPSCOPE_OP_ENUM(name, traits, count, busbw, nccl_func) name,
  DDPSCOPE_OPS(DDPSCOPE_OP_ENUM)
#undef DDPSCOPE_OP_ENUM
  kCount
};
// clang-format on

struct OpFacts {
  std::string_view name;
  unsigned traits;
  OpCount count;
  BusBw busbw;
  std::string_view nccl_func;
};

inline constexpr OpFacts kOps[] = {
#define DDPSCOPE_OP_FACTS(op, op_traits, op_count, op_busbw, op_nccl_func) \
  {.name = #op,                                                            \
   .traits = op_traits,                                                    \
   .count = OpCount::op_count,                                             \
   .busbw = BusBw::op_busbw,                                               \
   .nccl_func = op_nccl_func},
    DDPSCOPE_OPS(DDPSCOPE_OP_FACTS)
#undef DDPSCOPE_OP_FACTS
};
static_assert(std::size(kOps) == size_t(Op::kCount));

// The row of an op (of allreduce for a number past the table's end).
constexpr const OpFacts& facts_of(Op op) {
  return size_t(op) < std::size(kOps) ? kOps[size_t(op)] : kOps[0];
}
constexpr bool op_is(Op op, OpTrait trait) { return (facts_of(op).traits & trait) != 0; }

// NCCL's datatypes by name; Gloo only knows an element size, hence the bitsN
// entries for "N-bit elements of a type we cannot see". The position is the
// dtype's number: append only.
// clang-format off
#define DDPSCOPE_DTYPES(X)               \
  /* name    bytes of one; 0: unknown */ \
  X(unknown,  0)                         \
  X(int8,     1)                         \
  X(uint8,    1)                         \
  X(int32,    4)                         \
  X(uint32,   4)                         \
  X(int64,    8)                         \
  X(uint64,   8)                         \
  X(float16,  2)                         \
  X(float32,  4)                         \
  X(float64,  8)                         \
  X(bfloat16, 2)                         \
  X(fp8e4m3,  1)                         \
  X(fp8e5m2,  1)                         \
  X(bits8,    1)                         \
  X(bits16,   2)                         \
  X(bits32,   4)                         \
  X(bits64,   8)

enum class Dtype : uint8_t {
#define DDPSCOPE_DTYPE_ENUM(name, bytes) name,
  DDPSCOPE_DTYPES(DDPSCOPE_DTYPE_ENUM)
#undef DDPSCOPE_DTYPE_ENUM
  kCount
};
// clang-format on

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
// `nranks` ranks, by its row's BusBw rule (2(n-1)/n for all-reduce, (n-1)/n
// for the gathers, scatters and all-to-all, 1 for the others).
double busbw_factor(Op op, int nranks);

// nccl-tests' message size S of `count` elements of `elem_bytes` each: the
// whole message for the ops whose count is per rank or per peer (OpCount:
// gathers, scatters, all-to-all), the buffer for the others.
uint64_t message_bytes(Op op, uint64_t count, uint64_t elem_bytes, int nranks);

}  // namespace ddpscope
