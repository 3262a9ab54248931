// 16-bit floating-point types for the CPU target: iris::half (IEEE binary16)
// and iris::bfloat16. They store 16 bits and compute through float, which is
// what GPUs do for scalar 16-bit arithmetic; conversions round to nearest even.
#pragma once

#include "iris/target.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace iris {

namespace detail {
IRIS_HD inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
IRIS_HD inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Rounding float to half and to bfloat16 (to nearest even) in plain integer
// code: what the CPU target runs, and what a constant folds through on every
// target, so that T(0), the `other` generated code passes to a copy, is a
// known zero (copy_async then zero-fills masked-off runs without a branch).
IRIS_HD inline uint16_t round_to_half(float f) {
  uint32_t x = float_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));  // inf, nan
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
  if (e <= 0) {                                                 // subnormal or zero
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half_mant = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half_mant & 1))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  uint32_t h = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) ++h;  // may carry into the exponent: correct
  return static_cast<uint16_t>(h);
}

IRIS_HD inline uint16_t round_to_bfloat16(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // nan
  x += 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

IRIS_HD inline float half_to_float(uint16_t h) {
#if defined(__CUDA_ARCH__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#else
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return bits_float(sign);
    float f = static_cast<float>(mant) / 16777216.0f;  // mant * 2^-24
    return sign ? -f : f;
  }
  return bits_float(sign | ((exp - 15 + 127) << 23) | (mant << 13));
#endif
}

// A float computed at run time: on an NVIDIA GPU one cvt instruction each,
// where round_to_half and round_to_bfloat16 are a dozen integer operations
// and branches that a GEMM's epilogue would pay for every element of its tile
// (the compiler cannot see through the instruction, which is why constants
// take the integer code).
IRIS_HD inline uint16_t float_to_half(float f) {
#if defined(__CUDA_ARCH__)
  uint16_t bits;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f));
  return bits;
#else
  return round_to_half(f);
#endif
}
IRIS_HD inline uint16_t float_to_bfloat16(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint16_t bits;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(f));
  return bits;
#else
  return round_to_bfloat16(f);
#endif
}
IRIS_HD inline float bfloat16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }
}  // namespace detail

// A 16-bit float that converts to and from float; arithmetic happens in float
// and the result converts back when it is stored in a 16-bit variable. A float
// (or another 16-bit float, through float) converts with ToBits; an integer or
// a double, which is what a literal in generated code is (T(0), T(1.5)),
// with RoundBits, so that a constant folds.
template <uint16_t (*ToBits)(float), uint16_t (*RoundBits)(float), float (*FromBits)(uint16_t)>
struct Float16Like {
  uint16_t bits = 0;
  IRIS_HD Float16Like() {}
  template <class T>
  IRIS_HD Float16Like(T value) : bits(to_bits(value)) {}     // NOLINT: implicit by design
  IRIS_HD operator float() const { return FromBits(bits); }  // NOLINT

 private:
  template <class T>
  IRIS_HD static uint16_t to_bits(T value) {
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, float>)
      return RoundBits(static_cast<float>(value));
    else
      return ToBits(static_cast<float>(value));
  }
};

using half = Float16Like<detail::float_to_half, detail::round_to_half, detail::half_to_float>;
using bfloat16 = Float16Like<detail::float_to_bfloat16, detail::round_to_bfloat16, detail::bfloat16_to_float>;

}  // namespace iris
