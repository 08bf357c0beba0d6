#include "profiler/core/vocab.h"

#include <array>

namespace ddpscope {
namespace {

constexpr auto kOpNames = [] {
  std::array<std::string_view, size_t(Op::kCount)> names;
  for (size_t i = 0; i < names.size(); ++i) names[i] = kOps[i].name;
  return names;
}();

constexpr std::array<std::string_view, size_t(Dtype::kCount)> kDtypeNames = {
#define DDPSCOPE_DTYPE_NAME(name, bytes) #name,
    DDPSCOPE_DTYPES(DDPSCOPE_DTYPE_NAME)
#undef DDPSCOPE_DTYPE_NAME
};

constexpr std::array<unsigned, size_t(Dtype::kCount)> kDtypeBytes = {
#define DDPSCOPE_DTYPE_BYTES(name, bytes) bytes,
    DDPSCOPE_DTYPES(DDPSCOPE_DTYPE_BYTES)
#undef DDPSCOPE_DTYPE_BYTES
};

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
  if (facts_of(op).count == OpCount::buffer) return b;
  return b * uint64_t(nranks > 0 ? nranks : 1);
}

double busbw_factor(Op op, int nranks) {
  const OpFacts& f = facts_of(op);
  if (f.busbw == BusBw::one) return 1.0;
  if (nranks <= 1) return op_is(op, kRooted) ? 1.0 : 0.0;
  const double n = nranks;
  return (f.busbw == BusBw::all_reduce ? 2.0 : 1.0) * (n - 1) / n;
}

}  // namespace ddpscope
