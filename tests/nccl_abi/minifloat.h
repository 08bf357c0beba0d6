// Conversions between float and the narrow float formats NCCL reduces: fp16, bf16 and
// the two fp8 formats. The library reduces these in float and rounds once per result,
// with round-to-nearest-even like the CUDA conversion intrinsics.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace ddpscope::testnccl {

// A binary float format narrower than float, described by its field widths.
struct MiniFormat {
  int exp_bits;
  int mant_bits;
  bool ieee_specials;  // all-ones exponent is inf/NaN (fp16, e5m2); else only S.1111.111 is NaN
  float max_finite;
  bool saturate;  // overflow gives max_finite (CUDA's __NV_SATFINITE for fp8) instead of inf
  uint32_t nan_bits;
};

inline constexpr MiniFormat kFp16{5, 10, true, 65504.0f, false, 0x7E00};
inline constexpr MiniFormat kFp8E4M3{4, 3, false, 448.0f, true, 0x7F};
inline constexpr MiniFormat kFp8E5M2{5, 2, true, 57344.0f, true, 0x7F};

inline float mini_to_float(uint32_t bits, const MiniFormat& f) {
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const uint32_t exp_all_ones = (1u << f.exp_bits) - 1;
  const uint32_t mant_all_ones = (1u << f.mant_bits) - 1;
  const bool negative = (bits >> (f.exp_bits + f.mant_bits)) & 1;
  const uint32_t exp = (bits >> f.mant_bits) & exp_all_ones;
  const uint32_t mant = bits & mant_all_ones;
  float v;
  if (exp == exp_all_ones && f.ieee_specials) {
    v = mant != 0 ? NAN : INFINITY;
  } else if (exp == exp_all_ones && mant == mant_all_ones) {
    v = NAN;  // e4m3fn: the only special value
  } else if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), 1 - bias - f.mant_bits);  // subnormal
  } else {
    v = std::ldexp(static_cast<float>(mant | (1u << f.mant_bits)),
                   static_cast<int>(exp) - bias - f.mant_bits);
  }
  return negative ? -v : v;
}

inline uint32_t float_to_mini(float x, const MiniFormat& f) {
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const int min_exp = 1 - bias;  // exponent of the smallest normal
  const uint32_t sign = std::signbit(x) ? 1u << (f.exp_bits + f.mant_bits) : 0;
  if (std::isnan(x)) return sign | f.nan_bits;
  float a = std::fabs(x);
  if (std::isfinite(a) && a != 0.0f) {
    // Scaling by a power of two is exact, so nearbyint (round-half-even in the default
    // rounding mode) rounds once, to the target's quantum at a's exponent.
    const int e = std::max(std::ilogb(a), min_exp);
    const float quantum = std::ldexp(1.0f, e - f.mant_bits);
    a = std::nearbyint(a / quantum) * quantum;
  }
  if (a > f.max_finite) {
    if (f.saturate) {
      a = f.max_finite;
    } else {
      return sign | (((1u << f.exp_bits) - 1) << f.mant_bits);  // inf
    }
  }
  if (a == 0.0f) return sign;
  const int e = std::ilogb(a);
  if (e < min_exp) return sign | static_cast<uint32_t>(std::ldexp(a, f.mant_bits - min_exp));
  const uint32_t mant = static_cast<uint32_t>(std::ldexp(a, f.mant_bits - e)) - (1u << f.mant_bits);
  return sign | (static_cast<uint32_t>(e + bias) << f.mant_bits) | mant;
}

// bfloat16 is the top half of a float, so rounding is integer arithmetic on the bits.
inline float bf16_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);  // keep it a quiet NaN
  u += 0x7FFF + ((u >> 16) & 1);  // round half to even; overflow carries into inf correctly
  return static_cast<uint16_t>(u >> 16);
}

}  // namespace ddpscope::testnccl
