#pragma once

// SplitMix64 (Steele, Lea & Flood, OOPSLA 2014): the mixing function behind every seeded draw
// in lmk (data order, generated tasks, variable landmark granularity, masking, resampling in
// statistics), and FNV-1a for hashing names. Their output is the same on every platform and
// standard library, where the std distributions are implementation-defined, so a seed names one
// result.

#include <cstdint>
#include <string_view>

namespace lmk {

// One SplitMix64 step: a well-mixed 64-bit function of x.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// FNV-1a, 64 bits: a stable hash of a text (step identities, seeds keyed by names).
inline uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 1469598103934665603ULL;
  for (const unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  return h;
}

// A double in [0, 1) from the top 53 bits.
inline double unit_interval(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

// A seed derived from a seed and a salt (a length, a document's hash): one SplitMix64 draw of
// their mix, so that datasets keyed by (seed, salt) are independent streams.
inline uint64_t mix_seed(uint64_t seed, uint64_t salt) {
  return splitmix64(seed ^ (salt * 0xD6E8FEB86659FD93ULL));
}

// The SplitMix64 stream of a seed.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    const uint64_t out = splitmix64(state_);
    state_ += 0x9E3779B97F4A7C15ULL;
    return out;
  }
  // Uniform in [0, n) (0 when n is 0); the modulo bias is below n / 2^64.
  uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }
  // Uniform in [0, 1).
  double uniform() { return unit_interval(next()); }

 private:
  uint64_t state_;
};

}  // namespace lmk
