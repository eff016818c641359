#include "engine/model/attention_kernel.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace lmk {

namespace {

// Column-major C = alpha op(A) op(B) + beta C, op = transpose when trans_a / trans_b.
// LibTorch's own BLAS provides sgemm_ (the PyPI wheel: MKL inside libtorch_cpu.so, which exports
// it; the one BLAS of the process, engine/util/torch_runtime.h). LibTorch does not export its own
// wrapper (at::native::cpublas::gemm), so the symbol is looked up at run time. Called inside the
// kernels' parallel regions, MKL's GNU-OpenMP build runs each product on the calling thread.
using SgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const float*,
                         const float*, const int*, const float*, const int*, const float*, float*,
                         const int*);

void gemm_plain(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      float total = 0;
      for (int l = 0; l < k; ++l) {
        const float x = trans_a ? a[l + i * lda] : a[i + l * lda];
        const float y = trans_b ? b[j + l * ldb] : b[l + j * ldb];
        total += x * y;
      }
      c[i + j * ldc] = alpha * total + (beta == 0.0f ? 0.0f : beta * c[i + j * ldc]);
    }
  }
}

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  static const auto sgemm = reinterpret_cast<SgemmFn>(dlsym(RTLD_DEFAULT, "sgemm_"));
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k),
            ldai = static_cast<int>(lda), ldbi = static_cast<int>(ldb),
            ldci = static_cast<int>(ldc);
  if (sgemm == nullptr) {
    gemm_plain(trans_a, trans_b, mi, ni, ki, alpha, a, ldai, b, ldbi, beta, c, ldci);
    return;
  }
  const char ta = trans_a ? 'T' : 'N', tb = trans_b ? 'T' : 'N';
  sgemm(&ta, &tb, &mi, &ni, &ki, &alpha, a, &ldai, b, &ldbi, &beta, c, &ldci);
}

// Row-major C [m, n] = alpha op(A) op(B) + beta C (op: transposed when trans_*), through the
// column-major gemm: row-major C is column-major Cᵀ = op(B)ᵀ op(A)ᵀ.
void gemm_rows(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
               int64_t ldc) {
  gemm(trans_b, trans_a, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
}

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// set_attention_products
std::atomic<AttentionProducts> chosen_products{AttentionProducts::MicroKernel};

#if defined(__x86_64__)
// exp(x) for x <= 0 (Cephes' range reduction and polynomial); x below -87, minus infinity or
// NaN gives 0. Relative error about 2e-7.
__attribute__((target("avx2,fma"))) inline __m256 exp_nonpositive(__m256 x) {
  const __m256 lowest = _mm256_set1_ps(-87.0f);
  const __m256 keep = _mm256_cmp_ps(x, lowest, _CMP_GE_OQ);
  x = _mm256_max_ps(x, lowest);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i exponent =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(exponent)), keep);
}

bool cpu_has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}

// The head-sized products without a BLAS call: C [m, n] (+)= A B with n a multiple of 16, A read
// element by element through its strides (a_row between rows, a_depth along the sum) and
// broadcast, B's rows (16 columns at a time) loaded as vectors. Each panel keeps its MR × 16
// block of C in 2·MR registers for the whole sum (the register blocking of a BLAS micro-kernel),
// so nothing is packed per call: the one operand that needs a layout of its own (the query
// tile, transposed) is packed once per tile for all its key tiles.
template <int MR>
__attribute__((target("avx2,fma"))) void panel_16(int64_t depth, const float* a, int64_t a_row,
                                                  int64_t a_depth, const float* b, int64_t ldb,
                                                  float* c, int64_t ldc, bool accumulate) {
  __m256 low[MR], high[MR];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    low[r] = accumulate ? _mm256_loadu_ps(c + r * ldc) : _mm256_setzero_ps();
    high[r] = accumulate ? _mm256_loadu_ps(c + r * ldc + 8) : _mm256_setzero_ps();
  }
  for (int64_t l = 0; l < depth; ++l) {
    const __m256 b_low = _mm256_loadu_ps(b + l * ldb), b_high = _mm256_loadu_ps(b + l * ldb + 8);
    const float* a_l = a + l * a_depth;
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256 x = _mm256_broadcast_ss(a_l + r * a_row);
      low[r] = _mm256_fmadd_ps(x, b_low, low[r]);
      high[r] = _mm256_fmadd_ps(x, b_high, high[r]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    _mm256_storeu_ps(c + r * ldc, low[r]);
    _mm256_storeu_ps(c + r * ldc + 8, high[r]);
  }
}

void gemm_16(int64_t m, int64_t n, int64_t depth, const float* a, int64_t a_row, int64_t a_depth,
             const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  for (int64_t c0 = 0; c0 < n; c0 += 16) {
    for (int64_t r0 = 0; r0 < m; r0 += 6) {
      const float* a_r = a + r0 * a_row;
      float* c_r = c + r0 * ldc + c0;
      switch (std::min<int64_t>(6, m - r0)) {
        case 6:
          panel_16<6>(depth, a_r, a_row, a_depth, b + c0, ldb, c_r, ldc, accumulate);
          break;
        case 5:
          panel_16<5>(depth, a_r, a_row, a_depth, b + c0, ldb, c_r, ldc, accumulate);
          break;
        case 4:
          panel_16<4>(depth, a_r, a_row, a_depth, b + c0, ldb, c_r, ldc, accumulate);
          break;
        case 3:
          panel_16<3>(depth, a_r, a_row, a_depth, b + c0, ldb, c_r, ldc, accumulate);
          break;
        case 2:
          panel_16<2>(depth, a_r, a_row, a_depth, b + c0, ldb, c_r, ldc, accumulate);
          break;
        default:
          panel_16<1>(depth, a_r, a_row, a_depth, b + c0, ldb, c_r, ldc, accumulate);
      }
    }
  }
}

// The online softmax over a transposed score tile st [n keys, width queries] (width a multiple
// of 8; each lane one query): per query the tile's maximum, the new running maximum, the
// factor the accumulated output is rescaled by (into `rescale`), st <- exp(st - new maximum) in
// place, and the running sum. A query that has seen only masked keys keeps a maximum of minus
// infinity and gets exp(NaN) = 0 everywhere (exp_nonpositive's NaN rule), so it adds nothing.
__attribute__((target("avx2,fma"))) void softmax_columns(float* st, int64_t n, int64_t width,
                                                         float* max, float* sum, float* rescale) {
  for (int64_t g = 0; g < width; g += 8) {
    const __m256 old_max = _mm256_loadu_ps(max + g);
    __m256 tile_max = _mm256_set1_ps(kMinusInfinity);
    for (int64_t j = 0; j < n; ++j)
      tile_max = _mm256_max_ps(tile_max, _mm256_loadu_ps(st + j * width + g));
    const __m256 new_max = _mm256_max_ps(old_max, tile_max);
    const __m256 factor = exp_nonpositive(_mm256_sub_ps(old_max, new_max));
    __m256 tile_sum = _mm256_setzero_ps();
    for (int64_t j = 0; j < n; ++j) {
      float* at = st + j * width + g;
      const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(at), new_max));
      _mm256_storeu_ps(at, e);
      tile_sum = _mm256_add_ps(tile_sum, e);
    }
    _mm256_storeu_ps(sum + g, _mm256_fmadd_ps(_mm256_loadu_ps(sum + g), factor, tile_sum));
    _mm256_storeu_ps(max + g, new_max);
    _mm256_storeu_ps(rescale + g, factor);
  }
}
// p[j][r] <- exp(st[j][r] - lse[r]) across the lanes of a transposed tile (width a multiple of
// 8); a query that saw no key (lse minus infinity) gets zeros.
__attribute__((target("avx2,fma"))) void probabilities_columns(float* st, int64_t n, int64_t width,
                                                               const float* lse) {
  const __m256 minus_infinity = _mm256_set1_ps(kMinusInfinity);
  const __m256 plus_infinity = _mm256_set1_ps(-kMinusInfinity);
  for (int64_t g = 0; g < width; g += 8) {
    const __m256 l = _mm256_loadu_ps(lse + g);
    const __m256 shift =
        _mm256_blendv_ps(l, plus_infinity, _mm256_cmp_ps(l, minus_infinity, _CMP_EQ_OQ));
    for (int64_t j = 0; j < n; ++j) {
      float* at = st + j * width + g;
      _mm256_storeu_ps(at, exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(at), shift)));
    }
  }
}

#endif

// C [m, n] (row-major, ldc) = A B, or += with `accumulate`, A read through its strides (a_row
// between its rows, a_depth along the sum; one of them is 1), B row-major (ldb). With `micro`
// (AVX2, n a multiple of 16) the kernel's own gemm_16, else the machine's sgemm.
void product(bool micro, int64_t m, int64_t n, int64_t depth, const float* a, int64_t a_row,
             int64_t a_depth, const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate) {
#if defined(__x86_64__)
  if (micro) {
    gemm_16(m, n, depth, a, a_row, a_depth, b, ldb, c, ldc, accumulate);
    return;
  }
#endif
  (void)micro;
  const float beta = accumulate ? 1.0f : 0.0f;
  if (a_depth == 1) {
    gemm_rows(false, false, m, n, depth, 1.0f, a, a_row, b, ldb, beta, c, ldc);
  } else {
    gemm_rows(true, false, m, n, depth, 1.0f, a, a_depth, b, ldb, beta, c, ldc);
  }
}

// The online softmax over a transposed tile without AVX2: softmax_columns lane by lane.
void softmax_columns_plain(float* st, int64_t n, int64_t width, float* max, float* sum,
                           float* rescale) {
  for (int64_t r = 0; r < width; ++r) {
    float tile_max = kMinusInfinity;
    for (int64_t j = 0; j < n; ++j) tile_max = std::max(tile_max, st[j * width + r]);
    const float new_max = std::max(max[r], tile_max);
    const float factor =
        new_max == kMinusInfinity || max[r] == kMinusInfinity ? 0.0f : std::exp(max[r] - new_max);
    float tile_sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      float& x = st[j * width + r];
      x = new_max == kMinusInfinity ? 0.0f : std::exp(x - new_max);
      tile_sum += x;
    }
    sum[r] = sum[r] * factor + tile_sum;
    max[r] = new_max;
    rescale[r] = factor;
  }
}

// probabilities_columns without AVX2.
void probabilities_columns_plain(float* st, int64_t n, int64_t width, const float* lse) {
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t r = 0; r < width; ++r) {
      float& x = st[j * width + r];
      x = lse[r] == kMinusInfinity ? 0.0f : std::exp(x - lse[r]);
    }
  }
}

// The per-lane passes of the two kernels, in AVX2 when the CPU has it (and Portable is not
// chosen).
void softmax_lanes(float* st, int64_t n, int64_t width, float* max, float* sum, float* rescale) {
#if defined(__x86_64__)
  if (chosen_products != AttentionProducts::Portable && cpu_has_avx2())
    return softmax_columns(st, n, width, max, sum, rescale);
#endif
  softmax_columns_plain(st, n, width, max, sum, rescale);
}

void probability_lanes(float* st, int64_t n, int64_t width, const float* lse) {
#if defined(__x86_64__)
  if (chosen_products != AttentionProducts::Portable && cpu_has_avx2())
    return probabilities_columns(st, n, width, lse);
#endif
  probabilities_columns_plain(st, n, width, lse);
}

// Query tiles are padded to a multiple of 16 lanes (the micro-kernel's width).
int64_t lanes_of(int64_t rows) {
  return (rows + 15) / 16 * 16;
}

// Packs `rows` rows of a head from row `i0` on, transposed, into out [d, width] (× scale), zeros
// in the padded lanes.
void pack_transposed(const HeadsView& view, int64_t b, int64_t h, int64_t i0, int64_t rows,
                     int64_t d, int64_t width, float scale, float* out) {
  for (int64_t r = 0; r < width; ++r) {
    const float* row = r < rows ? view.row(b, h, i0 + r) : nullptr;
    for (int64_t c = 0; c < d; ++c) out[c * width + r] = row ? scale * row[c] : 0.0f;
  }
}

// One thread's buffers for the forward: the query tile transposed and scaled, a transposed score
// tile, the output accumulator, and per query (lane) the running maximum, sum and rescale
// factor.
struct Scratch {
  std::vector<float> qt, st, acc, max, sum, rescale;
  Scratch(int64_t query_tile, int64_t key_tile, int64_t head_dim)
      : qt(static_cast<size_t>(head_dim * lanes_of(query_tile))),
        st(static_cast<size_t>(key_tile * lanes_of(query_tile))),
        acc(static_cast<size_t>(lanes_of(query_tile) * head_dim)),
        max(static_cast<size_t>(lanes_of(query_tile))),
        sum(static_cast<size_t>(lanes_of(query_tile))),
        rescale(static_cast<size_t>(lanes_of(query_tile))) {}
};

// Query i sees key j when i - j <= before and j - i <= after (-1: unbounded): a local layer's
// band is (w, w), causal attention's (w or unbounded, 0).
struct Band {
  int64_t before, after;
  explicit Band(const FusedAttentionProblem& p)
      : before(p.half_window), after(p.causal ? 0 : p.half_window) {}
};

// Masks the scores of a transposed tile st [n keys, width lanes] (keys [j0, j0 + n) against
// queries from i0 on, `rows` of them real) that a query may not see (padding keys, keys outside
// the band) with minus infinity.
void mask_scores(const FusedAttentionProblem& p, int64_t b, int64_t i0, int64_t rows, int64_t j0,
                 int64_t n, bool every_key_valid, float* st, int64_t width) {
  const Band band(p);
  const bool inside_band = (band.after < 0 || (j0 + n - 1) - i0 <= band.after) &&
                           (band.before < 0 || (i0 + rows - 1) - j0 <= band.before);
  if (every_key_valid && inside_band) return;
  const bool* mask = p.key_mask + b * p.length;
  for (int64_t j = 0; j < n; ++j) {
    float* row = st + j * width;
    if (!mask[j0 + j]) {
      std::fill(row, row + width, kMinusInfinity);
      continue;
    }
    if (!inside_band) {  // key j0 + j is seen by queries [j0 + j - after, j0 + j + before]
      const int64_t first =
          band.after < 0 ? 0 : std::clamp<int64_t>(j0 + j - band.after - i0, 0, width);
      const int64_t last =
          band.before < 0 ? width : std::clamp<int64_t>(j0 + j + band.before + 1 - i0, 0, width);
      std::fill(row, row + first, kMinusInfinity);
      std::fill(row + std::max(first, last), row + width, kMinusInfinity);
    }
  }
}

// Queries [i0, i1) of (b, h). valid_prefix[j] = number of attendable keys before j in row b;
// keys past key_end (the last attendable key + 1) are never visited. The scores of a key tile are
// computed transposed, st = K Qᵀ, so that the softmax runs across queries in vector lanes and the
// query tile, packed once, is the vector operand of every key tile's product.
void attend_tile(const FusedAttentionProblem& p, int64_t b, int64_t h, int64_t i0, int64_t i1,
                 int64_t key_tile, const int32_t* valid_prefix, int64_t key_end, bool micro,
                 Scratch& s) {
  const int64_t rows = i1 - i0, d = p.head_dim, width = lanes_of(rows);
  const Band band(p);
  const int64_t lo = band.before >= 0 ? std::max<int64_t>(0, i0 - band.before) : 0;
  const int64_t hi = band.after >= 0 ? std::min<int64_t>(key_end, i1 + band.after) : key_end;
  float* qt = s.qt.data();
  pack_transposed(p.q, b, h, i0, rows, d, width, p.scale, qt);
  float* acc = s.acc.data();
  std::fill(acc, acc + width * d, 0.0f);
  std::fill(s.max.begin(), s.max.begin() + width, kMinusInfinity);
  std::fill(s.sum.begin(), s.sum.begin() + width, 0.0f);
  for (int64_t j0 = lo; j0 < hi; j0 += key_tile) {
    const int64_t j1 = std::min(hi, j0 + key_tile), n = j1 - j0;
    const int32_t valid = valid_prefix[j1] - valid_prefix[j0];
    if (valid == 0) continue;
    float* st = s.st.data();
    // st [n, width] = K [n, d] · Qᵀ [d, width] (the scale is in Qᵀ).
    product(micro, n, width, d, p.k.row(b, h, j0), p.k.row_stride, 1, qt, width, st, width, false);
    mask_scores(p, b, i0, rows, j0, n, valid == n, st, width);
    softmax_lanes(st, n, width, s.max.data(), s.sum.data(), s.rescale.data());
    for (int64_t r = 0; r < width; ++r) {
      const float factor = s.rescale[static_cast<size_t>(r)];
      if (factor == 1.0f) continue;
      float* acc_r = acc + r * d;
      for (int64_t c = 0; c < d; ++c) acc_r[c] *= factor;
    }
    // acc [width, d] += stᵀ V: acc[r][c] += Σ_j st[j][r] · V[j][c].
    product(micro, width, d, n, st, 1, width, p.v.row(b, h, j0), p.v.row_stride, acc, d, true);
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* out = p.out.row(b, h, i0 + r);
    const float* acc_r = acc + r * d;
    const float sum = s.sum[static_cast<size_t>(r)], max = s.max[static_cast<size_t>(r)];
    const float inverse = sum > 0 ? 1.0f / sum : 0.0f;
    for (int64_t c = 0; c < d; ++c) out[c] = acc_r[c] * inverse;
    if (p.lse)
      p.lse[(b * p.heads + h) * p.length + i0 + r] = sum > 0 ? max + std::log(sum) : kMinusInfinity;
  }
}
// The backward's buffers of one thread: the query tile and its output gradient, each
// transposed; the transposed probabilities and score gradients of a tile pair; the key tile's
// dK and dV; the query tile's lse and delta (padded to its lanes).
struct BackwardScratch {
  std::vector<float> qt, dot, pt, dst, dk, dv, lse, delta;
  BackwardScratch(int64_t query_tile, int64_t key_tile, int64_t head_dim)
      : qt(static_cast<size_t>(head_dim * lanes_of(query_tile))),
        dot(static_cast<size_t>(head_dim * lanes_of(query_tile))),
        pt(static_cast<size_t>(key_tile * lanes_of(query_tile))),
        dst(static_cast<size_t>(key_tile * lanes_of(query_tile))),
        dk(static_cast<size_t>(key_tile * head_dim)),
        dv(static_cast<size_t>(key_tile * head_dim)),
        lse(static_cast<size_t>(lanes_of(query_tile))),
        delta(static_cast<size_t>(lanes_of(query_tile))) {}
};

// The gradients of one (b, h): key tiles outer (their dK, dV accumulate in the scratch and are
// written once), the query tiles that may see them inner (dQ accumulates in place), on
// transposed tiles as the forward: pt = exp(K Qᵀ − lse), dV += pt dO, dpt = V dOᵀ,
// dst = scale · pt ∘ (dpt − delta), dK += dst Q, dQ += dstᵀ K.
void backward_head(const FusedAttentionProblem& p, const FusedAttentionGradients& g, int64_t b,
                   int64_t h, int64_t query_tile, int64_t key_tile, const int32_t* valid_prefix,
                   int64_t key_end, bool micro, BackwardScratch& s) {
  const int64_t L = p.length, d = p.head_dim;
  const Band band(p);
  const float* lse = g.lse + (b * p.heads + h) * L;
  const float* delta = g.delta + (b * p.heads + h) * L;
  for (int64_t j0 = 0; j0 < key_end; j0 += key_tile) {
    const int64_t j1 = std::min(key_end, j0 + key_tile), n = j1 - j0;
    const int32_t valid = valid_prefix[j1] - valid_prefix[j0];
    if (valid == 0) continue;  // no query sees these keys: their gradients stay zero
    std::fill(s.dk.begin(), s.dk.begin() + n * d, 0.0f);
    std::fill(s.dv.begin(), s.dv.begin() + n * d, 0.0f);
    // The queries that see a key of the tile: [j0 - after, j1 - 1 + before].
    const int64_t first_query = band.after >= 0 ? std::max<int64_t>(0, j0 - band.after) : 0;
    const int64_t last_query = band.before >= 0 ? std::min<int64_t>(L, j1 + band.before) : L;
    for (int64_t i0 = first_query; i0 < last_query; i0 += query_tile) {
      const int64_t rows = std::min(last_query, i0 + query_tile) - i0, width = lanes_of(rows);
      float* qt = s.qt.data();
      float* dot = s.dot.data();
      pack_transposed(p.q, b, h, i0, rows, d, width, p.scale, qt);
      pack_transposed(g.grad_out, b, h, i0, rows, d, width, 1.0f, dot);
      for (int64_t r = 0; r < width; ++r) {
        s.lse[static_cast<size_t>(r)] = r < rows ? lse[i0 + r] : kMinusInfinity;
        s.delta[static_cast<size_t>(r)] = r < rows ? delta[i0 + r] : 0.0f;
      }
      float* pt = s.pt.data();
      float* dst = s.dst.data();
      product(micro, n, width, d, p.k.row(b, h, j0), p.k.row_stride, 1, qt, width, pt, width,
              false);
      mask_scores(p, b, i0, rows, j0, n, valid == n, pt, width);
      probability_lanes(pt, n, width, s.lse.data());
      // dV [n, d] += pt dO (the sum runs over the real rows only).
      product(micro, n, d, rows, pt, width, 1, g.grad_out.row(b, h, i0), g.grad_out.row_stride,
              s.dv.data(), d, true);
      // dpt [n, width] = V dOᵀ; dst = scale · pt ∘ (dpt − delta).
      product(micro, n, width, d, p.v.row(b, h, j0), p.v.row_stride, 1, dot, width, dst, width,
              false);
      for (int64_t j = 0; j < n; ++j) {
        const float* prow = pt + j * width;
        float* drow = dst + j * width;
        for (int64_t r = 0; r < width; ++r)
          drow[r] = p.scale * prow[r] * (drow[r] - s.delta[static_cast<size_t>(r)]);
      }
      // dK [n, d] += dst Q; dQ [rows, d] += dstᵀ K.
      product(micro, n, d, rows, dst, width, 1, p.q.row(b, h, i0), p.q.row_stride, s.dk.data(), d,
              true);
      product(micro, rows, d, n, dst, 1, width, p.k.row(b, h, j0), p.k.row_stride,
              g.grad_q.row(b, h, i0), g.grad_q.row_stride, true);
    }
    for (int64_t j = 0; j < n; ++j) {
      std::copy_n(s.dk.data() + j * d, d, g.grad_k.row(b, h, j0 + j));
      std::copy_n(s.dv.data() + j * d, d, g.grad_v.row(b, h, j0 + j));
    }
  }
}
// Per batch row: prefix counts of attendable keys (L + 1 each), and where the last one ends.
struct KeyCounts {
  std::vector<int32_t> prefix;
  std::vector<int64_t> end;
};

KeyCounts count_keys(const FusedAttentionProblem& p) {
  const int64_t L = p.length;
  KeyCounts counts{std::vector<int32_t>(static_cast<size_t>(p.batch * (L + 1))),
                   std::vector<int64_t>(static_cast<size_t>(p.batch), 0)};
  for (int64_t b = 0; b < p.batch; ++b) {
    int32_t* row = counts.prefix.data() + b * (L + 1);
    row[0] = 0;
    for (int64_t j = 0; j < L; ++j) {
      const bool valid = p.key_mask[b * L + j];
      row[j + 1] = row[j] + (valid ? 1 : 0);
      if (valid) counts.end[static_cast<size_t>(b)] = j + 1;
    }
  }
  return counts;
}

}  // namespace

void set_attention_products(AttentionProducts products) {
  chosen_products = products;
}

AttentionProducts attention_products(int64_t head_dim) {
#if defined(__x86_64__)
  if (chosen_products == AttentionProducts::MicroKernel && cpu_has_avx2() && head_dim % 16 == 0)
    return AttentionProducts::MicroKernel;
#endif
  (void)head_dim;
  return AttentionProducts::Blas;
}

void fused_attention(const FusedAttentionProblem& p, int64_t query_tile, int64_t key_tile) {
  const int64_t L = p.length;
  if (p.batch == 0 || p.heads == 0 || L == 0) return;
  query_tile = std::clamp<int64_t>(query_tile, 1, L);
  key_tile = std::clamp<int64_t>(key_tile, 1, L);
  const KeyCounts counts = count_keys(p);
  const std::vector<int32_t>& prefix = counts.prefix;
  const std::vector<int64_t>& key_end = counts.end;
  const int64_t tiles = (L + query_tile - 1) / query_tile;
  const bool micro = attention_products(p.head_dim) == AttentionProducts::MicroKernel;
  at::parallel_for(0, p.batch * p.heads * tiles, 1, [&](int64_t begin, int64_t end) {
    Scratch scratch(query_tile, key_tile, p.head_dim);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t tile = item % tiles, bh = item / tiles;
      const int64_t b = bh / p.heads, h = bh % p.heads;
      const int64_t i0 = tile * query_tile, i1 = std::min(L, i0 + query_tile);
      attend_tile(p, b, h, i0, i1, key_tile, prefix.data() + b * (L + 1),
                  key_end[static_cast<size_t>(b)], micro, scratch);
    }
  });
}

void fused_attention_backward(const FusedAttentionProblem& p, const FusedAttentionGradients& g,
                              int64_t query_tile, int64_t key_tile) {
  const int64_t L = p.length;
  if (p.batch == 0 || p.heads == 0 || L == 0) return;
  query_tile = std::clamp<int64_t>(query_tile, 1, L);
  key_tile = std::clamp<int64_t>(key_tile, 1, L);
  const KeyCounts counts = count_keys(p);
  const bool micro = attention_products(p.head_dim) == AttentionProducts::MicroKernel;
  at::parallel_for(0, p.batch * p.heads, 1, [&](int64_t begin, int64_t end) {
    BackwardScratch scratch(query_tile, key_tile, p.head_dim);
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / p.heads, h = bh % p.heads;
      backward_head(p, g, b, h, query_tile, key_tile, counts.prefix.data() + b * (L + 1),
                    counts.end[static_cast<size_t>(b)], micro, scratch);
    }
  });
}

}  // namespace lmk
