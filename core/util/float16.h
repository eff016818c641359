#pragma once

// IEEE 754 half precision (binary16) and float, for files that store float16 numbers and are
// read or written without LibTorch (the workbench, lmkcore).

#include <cstdint>
#include <cstring>

namespace lmk {

// The float of a binary16 value: normals, subnormals, zeros, infinities and NaNs exactly.
inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  uint32_t bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // inf, NaN (payload kept)
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);  // 127 - 15 = 112
  } else if (mantissa == 0) {
    bits = sign;  // ±0
  } else {
    // Subnormal: shift the mantissa up until its leading 1 is the implicit bit.
    uint32_t e = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mantissa & 0x3FFu) << 13);
  }
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// The binary16 nearest to f (ties to even); beyond the largest half, infinity; NaN stays NaN.
inline uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);   // NaN
  if (abs >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7C00u);  // inf, or too large
  auto rounded = [](uint32_t kept, uint32_t rest, uint32_t halfway) {
    return kept + ((rest > halfway || (rest == halfway && (kept & 1u))) ? 1u : 0u);
  };
  if (abs >= 0x38800000u) {  // a normal half (a carry may round up to the next exponent, or inf)
    const uint32_t kept = (((abs >> 23) - 112u) << 10) | ((abs & 0x7FFFFFu) >> 13);
    return static_cast<uint16_t>(sign | rounded(kept, abs & 0x1FFFu, 0x1000u));
  }
  if (abs < 0x33000000u) return sign;  // below half the smallest subnormal: zero
  // A subnormal half: the value in units of 2^-24.
  const uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126u - (abs >> 23);  // 14..24
  const uint32_t kept = mantissa >> shift;
  return static_cast<uint16_t>(sign |
                               rounded(kept, mantissa & ((1u << shift) - 1u), 1u << (shift - 1u)));
}

}  // namespace lmk
