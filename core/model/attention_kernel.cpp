#include "core/model/attention_kernel.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace lmk {

namespace {

// Column-major C = alpha op(A) op(B) + beta C, op = transpose when trans_a / trans_b.
// The BLAS LibTorch itself loaded (libblas.so.3: OpenBLAS once scripts/setup has run) provides
// sgemm_; LibTorch does not export its own wrapper, so the symbol is looked up at run time.
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

// The two row operations of the online softmax, plain and with AVX2.
float row_max_plain(const float* s, int64_t n) {
  float m = kMinusInfinity;
  for (int64_t j = 0; j < n; ++j) m = std::max(m, s[j]);
  return m;
}

// s[j] <- exp(s[j] - shift) (minus infinity gives 0); returns the sum.
float exp_sum_plain(float* s, int64_t n, float shift) {
  float sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    s[j] = std::exp(s[j] - shift);
    sum += s[j];
  }
  return sum;
}

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

__attribute__((target("avx2,fma"))) float row_max_avx2(const float* s, int64_t n) {
  __m256 m = _mm256_set1_ps(kMinusInfinity);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(s + j));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, m);
  float out = std::max(row_max_plain(lanes, 8), row_max_plain(s + j, n - j));
  return out;
}

__attribute__((target("avx2,fma"))) float exp_sum_avx2(float* s, int64_t n, float shift) {
  const __m256 shift8 = _mm256_set1_ps(shift);
  __m256 sum8 = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(s + j), shift8));
    _mm256_storeu_ps(s + j, e);
    sum8 = _mm256_add_ps(sum8, e);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum8);
  float sum = 0;
  for (float lane : lanes) sum += lane;
  return sum + exp_sum_plain(s + j, n - j, shift);
}

bool cpu_has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}
#endif

float row_max(const float* s, int64_t n) {
#if defined(__x86_64__)
  if (cpu_has_avx2()) return row_max_avx2(s, n);
#endif
  return row_max_plain(s, n);
}

float exp_sum(float* s, int64_t n, float shift) {
#if defined(__x86_64__)
  if (cpu_has_avx2()) return exp_sum_avx2(s, n, shift);
#endif
  return exp_sum_plain(s, n, shift);
}

// One thread's buffers: scores of a tile, the output accumulator, running max and sum.
struct Scratch {
  std::vector<float> scores, acc, max, sum;
  Scratch(int64_t query_tile, int64_t key_tile, int64_t head_dim)
      : scores(static_cast<size_t>(query_tile * key_tile)),
        acc(static_cast<size_t>(query_tile * head_dim)),
        max(static_cast<size_t>(query_tile)),
        sum(static_cast<size_t>(query_tile)) {}
};

// Masks the scores of queries [i0, i0 + rows) against keys [j0, j0 + n) that a query may not
// see (padding keys, keys outside the band) with minus infinity.
void mask_scores(const FusedAttentionProblem& p, int64_t b, int64_t i0, int64_t rows, int64_t j0,
                 int64_t n, bool every_key_valid, float* scores) {
  const int64_t w = p.half_window;
  const bool inside_band = w < 0 || ((j0 + n - 1) - i0 <= w && (i0 + rows - 1) - j0 <= w);
  if (every_key_valid && inside_band) return;
  const bool* mask = p.key_mask + b * p.length;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = scores + r * n;
    if (!every_key_valid) {
      for (int64_t j = 0; j < n; ++j)
        if (!mask[j0 + j]) row[j] = kMinusInfinity;
    }
    if (!inside_band) {
      const int64_t i = i0 + r;
      const int64_t first = std::clamp<int64_t>(i - w - j0, 0, n);
      const int64_t last = std::clamp<int64_t>(i + w + 1 - j0, 0, n);
      std::fill(row, row + first, kMinusInfinity);
      std::fill(row + std::max(first, last), row + n, kMinusInfinity);
    }
  }
}

// Queries [i0, i1) of (b, h). valid_prefix[j] = number of attendable keys before j in row b;
// keys past key_end (the last attendable key + 1) are never visited.
void attend_tile(const FusedAttentionProblem& p, int64_t b, int64_t h, int64_t i0, int64_t i1,
                 int64_t key_tile, const int32_t* valid_prefix, int64_t key_end, Scratch& s) {
  const int64_t rows = i1 - i0, d = p.head_dim, w = p.half_window;
  const bool local = w >= 0;
  int64_t lo = 0, hi = key_end;
  if (local) {
    lo = std::max<int64_t>(0, i0 - w);
    hi = std::min<int64_t>(hi, i1 - 1 + w + 1);
  }
  std::fill(s.acc.begin(), s.acc.begin() + rows * d, 0.0f);
  std::fill(s.max.begin(), s.max.begin() + rows, kMinusInfinity);
  std::fill(s.sum.begin(), s.sum.begin() + rows, 0.0f);
  const float* q = p.q.row(b, h, i0);
  for (int64_t j0 = lo; j0 < hi; j0 += key_tile) {
    const int64_t j1 = std::min(hi, j0 + key_tile), n = j1 - j0;
    const int32_t valid = valid_prefix[j1] - valid_prefix[j0];
    if (valid == 0) continue;
    float* scores = s.scores.data();
    // Column-major view: scoresᵀ [n, rows] = K [n, d] · Qᵀ [d, rows].
    gemm(true, false, n, rows, d, p.scale, p.k.row(b, h, j0), p.k.row_stride, q, p.q.row_stride,
         0.0f, scores, n);
    mask_scores(p, b, i0, rows, j0, n, valid == n, scores);
    for (int64_t r = 0; r < rows; ++r) {
      float* row = scores + r * n;
      const float tile_max = row_max(row, n);
      const float new_max = std::max(s.max[r], tile_max);
      if (new_max == kMinusInfinity) {
        std::fill(row, row + n, 0.0f);  // nothing seen yet: adds nothing below
        continue;
      }
      const float rescale = s.max[r] == kMinusInfinity ? 0.0f : std::exp(s.max[r] - new_max);
      const float tile_sum = exp_sum(row, n, new_max);
      if (rescale != 1.0f) {
        float* acc = s.acc.data() + r * d;
        for (int64_t c = 0; c < d; ++c) acc[c] *= rescale;
      }
      s.sum[r] = s.sum[r] * rescale + tile_sum;
      s.max[r] = new_max;
    }
    // accᵀ [d, rows] += Vᵀ [d, n] · Pᵀ [n, rows].
    gemm(false, false, d, rows, n, 1.0f, p.v.row(b, h, j0), p.v.row_stride, scores, n, 1.0f,
         s.acc.data(), d);
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* out = p.out.row(b, h, i0 + r);
    const float* acc = s.acc.data() + r * d;
    const float inverse = s.sum[r] > 0 ? 1.0f / s.sum[r] : 0.0f;
    for (int64_t c = 0; c < d; ++c) out[c] = acc[c] * inverse;
    if (p.lse)
      p.lse[(b * p.heads + h) * p.length + i0 + r] =
          s.sum[r] > 0 ? s.max[r] + std::log(s.sum[r]) : kMinusInfinity;
  }
}

// The backward's buffers of one thread: a tile of scores / probabilities, one of dP / dS, and
// the key tile's dK and dV.
struct BackwardScratch {
  std::vector<float> probs, dscores, dk, dv;
  BackwardScratch(int64_t query_tile, int64_t key_tile, int64_t head_dim)
      : probs(static_cast<size_t>(query_tile * key_tile)),
        dscores(static_cast<size_t>(query_tile * key_tile)),
        dk(static_cast<size_t>(key_tile * head_dim)),
        dv(static_cast<size_t>(key_tile * head_dim)) {}
};

// The gradients of one (b, h): key tiles outer (their dK, dV accumulate in the scratch and are
// written once), the query tiles that may see them inner (dQ accumulates in place).
void backward_head(const FusedAttentionProblem& p, const FusedAttentionGradients& g, int64_t b,
                   int64_t h, int64_t query_tile, int64_t key_tile, const int32_t* valid_prefix,
                   int64_t key_end, BackwardScratch& s) {
  const int64_t L = p.length, d = p.head_dim, w = p.half_window;
  const float* lse = g.lse + (b * p.heads + h) * L;
  const float* delta = g.delta + (b * p.heads + h) * L;
  for (int64_t j0 = 0; j0 < key_end; j0 += key_tile) {
    const int64_t j1 = std::min(key_end, j0 + key_tile), n = j1 - j0;
    const int32_t valid = valid_prefix[j1] - valid_prefix[j0];
    if (valid == 0) continue;  // no query sees these keys: their gradients stay zero
    std::fill(s.dk.begin(), s.dk.begin() + n * d, 0.0f);
    std::fill(s.dv.begin(), s.dv.begin() + n * d, 0.0f);
    const int64_t first_query = w >= 0 ? std::max<int64_t>(0, j0 - w) : 0;
    const int64_t last_query = w >= 0 ? std::min<int64_t>(L, j1 + w) : L;  // exclusive
    for (int64_t i0 = first_query; i0 < last_query; i0 += query_tile) {
      const int64_t rows = std::min(last_query, i0 + query_tile) - i0;
      float* P = s.probs.data();
      float* dS = s.dscores.data();
      // S [rows, n] = scale Q Kᵀ, masked; P = exp(S − lse) row by row.
      gemm_rows(false, true, rows, n, d, p.scale, p.q.row(b, h, i0), p.q.row_stride,
                p.k.row(b, h, j0), p.k.row_stride, 0.0f, P, n);
      mask_scores(p, b, i0, rows, j0, n, valid == n, P);
      for (int64_t r = 0; r < rows; ++r) {
        float* row = P + r * n;
        if (lse[i0 + r] == kMinusInfinity) {
          std::fill(row, row + n, 0.0f);  // the query saw no key: its output was zeros
        } else {
          exp_sum(row, n, lse[i0 + r]);
        }
      }
      const float* dO = g.grad_out.row(b, h, i0);
      // dV [n, d] += Pᵀ dO; dP [rows, n] = dO Vᵀ.
      gemm_rows(true, false, n, d, rows, 1.0f, P, n, dO, g.grad_out.row_stride, 1.0f, s.dv.data(),
                d);
      gemm_rows(false, true, rows, n, d, 1.0f, dO, g.grad_out.row_stride, p.v.row(b, h, j0),
                p.v.row_stride, 0.0f, dS, n);
      // dS = P ∘ (dP − delta).
      for (int64_t r = 0; r < rows; ++r) {
        const float* prow = P + r * n;
        float* drow = dS + r * n;
        const float dr = delta[i0 + r];
        for (int64_t j = 0; j < n; ++j) drow[j] = prow[j] * (drow[j] - dr);
      }
      // dK [n, d] += scale dSᵀ Q; dQ [rows, d] += scale dS K.
      gemm_rows(true, false, n, d, rows, p.scale, dS, n, p.q.row(b, h, i0), p.q.row_stride, 1.0f,
                s.dk.data(), d);
      gemm_rows(false, false, rows, d, n, p.scale, dS, n, p.k.row(b, h, j0), p.k.row_stride, 1.0f,
                g.grad_q.row(b, h, i0), g.grad_q.row_stride);
    }
    for (int64_t j = 0; j < n; ++j) {
      std::copy_n(s.dk.data() + j * d, d, g.grad_k.row(b, h, j0 + j));
      std::copy_n(s.dv.data() + j * d, d, g.grad_v.row(b, h, j0 + j));
    }
  }
}

// While alive, OpenBLAS's pthreads build runs each sgemm on the calling thread: the kernel
// already keeps every core busy with its own tiles, and OpenBLAS's threads, woken for every small
// product, would only spin (sched_yield) against them. Other BLAS libraries are left alone.
class SingleThreadedBlas {
 public:
  SingleThreadedBlas() {
    static const auto get_parallel =
        reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
    static const auto get_threads =
        reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    static const auto set_threads =
        reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    if (!get_parallel || !get_threads || !set_threads || get_parallel() != 1) return;
    set_threads_ = set_threads;
    previous_ = get_threads();
    if (previous_ > 1) set_threads_(1);
  }
  ~SingleThreadedBlas() {
    if (set_threads_ && previous_ > 1) set_threads_(previous_);
  }
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  void (*set_threads_)(int) = nullptr;
  int previous_ = 0;
};

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

void fused_attention(const FusedAttentionProblem& p, int64_t query_tile, int64_t key_tile) {
  const int64_t L = p.length;
  if (p.batch == 0 || p.heads == 0 || L == 0) return;
  query_tile = std::clamp<int64_t>(query_tile, 1, L);
  key_tile = std::clamp<int64_t>(key_tile, 1, L);
  const KeyCounts counts = count_keys(p);
  const std::vector<int32_t>& prefix = counts.prefix;
  const std::vector<int64_t>& key_end = counts.end;
  const int64_t tiles = (L + query_tile - 1) / query_tile;
  const SingleThreadedBlas single_threaded_blas;
  at::parallel_for(0, p.batch * p.heads * tiles, 1, [&](int64_t begin, int64_t end) {
    Scratch scratch(query_tile, key_tile, p.head_dim);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t tile = item % tiles, bh = item / tiles;
      const int64_t b = bh / p.heads, h = bh % p.heads;
      const int64_t i0 = tile * query_tile, i1 = std::min(L, i0 + query_tile);
      attend_tile(p, b, h, i0, i1, key_tile, prefix.data() + b * (L + 1),
                  key_end[static_cast<size_t>(b)], scratch);
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
  const SingleThreadedBlas single_threaded_blas;
  at::parallel_for(0, p.batch * p.heads, 1, [&](int64_t begin, int64_t end) {
    BackwardScratch scratch(query_tile, key_tile, p.head_dim);
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / p.heads, h = bh % p.heads;
      backward_head(p, g, b, h, query_tile, key_tile, counts.prefix.data() + b * (L + 1),
                    counts.end[static_cast<size_t>(b)], scratch);
    }
  });
}

}  // namespace lmk
