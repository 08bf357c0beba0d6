#include "reduce.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "minifloat.h"

namespace ddpscope::testnccl {
namespace {

// A codec says how an element is stored and in which type it is reduced. Narrow floats
// are reduced in float and rounded once at the end.
template <typename T>
struct Native {
  using Storage = T;
  using Acc = T;
  static Acc load(Storage s) { return s; }
  static Storage store(Acc a) { return a; }
};

template <const MiniFormat& F, typename S>
struct Mini {
  using Storage = S;
  using Acc = float;
  static Acc load(Storage s) { return mini_to_float(s, F); }
  static Storage store(Acc a) { return static_cast<Storage>(float_to_mini(a, F)); }
};

struct BFloat16 {
  using Storage = uint16_t;
  using Acc = float;
  static Acc load(Storage s) { return bf16_to_float(s); }
  static Storage store(Acc a) { return float_to_bf16(a); }
};

// Integer sums and products wrap like the GPU does; doing them in the unsigned type
// keeps that well defined for signed types too.
template <typename A>
A add(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <typename A>
A mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

template <int Op, typename A>
A combine(A a, A b) {
  if constexpr (Op == ncclSum || Op == ncclAvg) return add(a, b);
  if constexpr (Op == ncclProd) return mul(a, b);
  if constexpr (Op == ncclMax) return b > a ? b : a;
  if constexpr (Op == ncclMin) return b < a ? b : a;
}

// Buffers come from users and need not be aligned to the element size: memcpy access.
template <typename S>
S load_at(const void* base, size_t i) {
  S s;
  std::memcpy(&s, static_cast<const unsigned char*>(base) + i * sizeof(S), sizeof(S));
  return s;
}

template <class C, int Op>
void reduce_loop(const std::vector<const void*>& inputs, void* out, size_t count) {
  using S = typename C::Storage;
  using A = typename C::Acc;
  std::vector<A> acc(count);
  for (size_t i = 0; i < count; ++i) acc[i] = C::load(load_at<S>(inputs[0], i));
  for (size_t r = 1; r < inputs.size(); ++r) {
    for (size_t i = 0; i < count; ++i)
      acc[i] = combine<Op>(acc[i], C::load(load_at<S>(inputs[r], i)));
  }
  if constexpr (Op == ncclAvg) {
    for (auto& a : acc) a = static_cast<A>(a / static_cast<A>(inputs.size()));
  }
  auto* dst = static_cast<unsigned char*>(out);
  for (size_t i = 0; i < count; ++i) {
    const S s = C::store(acc[i]);
    std::memcpy(dst + i * sizeof(S), &s, sizeof(S));
  }
}

template <class C>
ncclResult_t reduce_with(const std::vector<const void*>& inputs, void* out, size_t count, int op) {
  switch (op) {
    case ncclSum:
      reduce_loop<C, ncclSum>(inputs, out, count);
      break;
    case ncclProd:
      reduce_loop<C, ncclProd>(inputs, out, count);
      break;
    case ncclMax:
      reduce_loop<C, ncclMax>(inputs, out, count);
      break;
    case ncclMin:
      reduce_loop<C, ncclMin>(inputs, out, count);
      break;
    case ncclAvg:
      reduce_loop<C, ncclAvg>(inputs, out, count);
      break;
    default:
      return ncclInvalidArgument;
  }
  return ncclSuccess;
}

}  // namespace

bool valid_op(int op) { return op >= ncclSum && op <= ncclAvg; }

ncclResult_t reduce_arrays(const std::vector<const void*>& inputs, void* out, size_t count,
                           int dtype, int op) {
  if (inputs.empty()) return ncclInvalidArgument;
  switch (dtype) {
    case ncclInt8:
      return reduce_with<Native<int8_t>>(inputs, out, count, op);
    case ncclUint8:
      return reduce_with<Native<uint8_t>>(inputs, out, count, op);
    case ncclInt32:
      return reduce_with<Native<int32_t>>(inputs, out, count, op);
    case ncclUint32:
      return reduce_with<Native<uint32_t>>(inputs, out, count, op);
    case ncclInt64:
      return reduce_with<Native<int64_t>>(inputs, out, count, op);
    case ncclUint64:
      return reduce_with<Native<uint64_t>>(inputs, out, count, op);
    case ncclFloat16:
      return reduce_with<Mini<kFp16, uint16_t>>(inputs, out, count, op);
    case ncclFloat32:
      return reduce_with<Native<float>>(inputs, out, count, op);
    case ncclFloat64:
      return reduce_with<Native<double>>(inputs, out, count, op);
    case ncclBfloat16:
      return reduce_with<BFloat16>(inputs, out, count, op);
    case ncclFloat8e4m3:
      return reduce_with<Mini<kFp8E4M3, uint8_t>>(inputs, out, count, op);
    case ncclFloat8e5m2:
      return reduce_with<Mini<kFp8E5M2, uint8_t>>(inputs, out, count, op);
  }
  return ncclInvalidArgument;
}

}  // namespace ddpscope::testnccl
