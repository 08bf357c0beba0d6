#include "profiler/core/vocab.h"

#include <array>

namespace ddpscope {
namespace {

constexpr std::array<std::string_view, size_t(Op::kCount)> kOpNames = {
    "allreduce", "broadcast", "reduce",  "allgather", "reduce_scatter", "alltoall",
    "send",      "recv",      "barrier", "gather",    "scatter"};

constexpr std::array<std::string_view, size_t(Dtype::kCount)> kDtypeNames = {
    "unknown", "int8",     "uint8",   "int32",   "uint32", "int64",  "uint64", "float16", "float32",
    "float64", "bfloat16", "fp8e4m3", "fp8e5m2", "bits8",  "bits16", "bits32", "bits64"};

constexpr std::array<unsigned, size_t(Dtype::kCount)> kDtypeBytes = {0, 1, 1, 4, 4, 8, 8, 2, 4,
                                                                     8, 2, 1, 1, 1, 2, 4, 8};

constexpr std::array<std::string_view, size_t(RedOp::kCount)> kRedOpNames = {
    "none", "sum", "prod", "max", "min", "avg", "custom"};

constexpr std::array<std::string_view, size_t(Backend::kCount)> kBackendNames = {"unknown", "nccl",
                                                                                 "gloo", "mpi"};

constexpr std::array<std::string_view, size_t(Timing::kCount)> kTimingNames = {
    "none", "host", "ce_events", "kernel_channels", "event", "cupti"};

template <typename Enum, size_t N>
std::string_view lookup(const std::array<std::string_view, N>& names, Enum value) {
  auto i = size_t(value);
  return i < N ? names[i] : std::string_view("invalid");
}

template <typename Enum, size_t N>
std::optional<Enum> parse(const std::array<std::string_view, N>& names, std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name) return Enum(i);
  return std::nullopt;
}

}  // namespace

std::string_view name_of(Op op) { return lookup(kOpNames, op); }
std::string_view name_of(Dtype dtype) { return lookup(kDtypeNames, dtype); }
std::string_view name_of(RedOp redop) { return lookup(kRedOpNames, redop); }
std::string_view name_of(Backend backend) { return lookup(kBackendNames, backend); }
std::string_view name_of(Timing timing) { return lookup(kTimingNames, timing); }

std::optional<Op> parse_op(std::string_view n) { return parse<Op>(kOpNames, n); }
std::optional<Dtype> parse_dtype(std::string_view n) { return parse<Dtype>(kDtypeNames, n); }
std::optional<RedOp> parse_redop(std::string_view n) { return parse<RedOp>(kRedOpNames, n); }
std::optional<Backend> parse_backend(std::string_view n) {
  return parse<Backend>(kBackendNames, n);
}
std::optional<Timing> parse_timing(std::string_view n) { return parse<Timing>(kTimingNames, n); }

unsigned dtype_bytes(Dtype dtype) {
  auto i = size_t(dtype);
  return i < kDtypeBytes.size() ? kDtypeBytes[i] : 0;
}

Dtype dtype_of_width(unsigned bytes) {
  switch (bytes) {
    case 1:
      return Dtype::bits8;
    case 2:
      return Dtype::bits16;
    case 4:
      return Dtype::bits32;
    case 8:
      return Dtype::bits64;
    default:
      return Dtype::unknown;
  }
}

uint64_t message_bytes(Op op, uint64_t count, uint64_t elem_bytes, int nranks) {
  uint64_t b = count * elem_bytes;
  switch (op) {
    case Op::allgather:
    case Op::reduce_scatter:
    case Op::alltoall:
    case Op::gather:
    case Op::scatter:
      return b * uint64_t(nranks > 0 ? nranks : 1);
    default:
      return b;
  }
}

double busbw_factor(Op op, int nranks) {
  if (nranks <= 1)
    return op == Op::allreduce || op == Op::allgather || op == Op::reduce_scatter ||
                   op == Op::alltoall
               ? 0.0
               : 1.0;
  const double n = nranks;
  switch (op) {
    case Op::allreduce:
      return 2.0 * (n - 1) / n;
    case Op::allgather:
    case Op::reduce_scatter:
    case Op::alltoall:
    case Op::gather:
    case Op::scatter:
      return (n - 1) / n;
    default:
      return 1.0;
  }
}

}  // namespace ddpscope
