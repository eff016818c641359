#pragma once

// LibTorch's process-wide settings: its threads and the BLAS its matrix products run on.

#include <string>
#include <vector>

namespace lmk {

// The BLAS that LibTorch's matrix products and the attention kernel's sgemm run on.
struct BlasInfo {
  std::string library;     // resolved path of the library that defines sgemm_ ("" when none)
  std::string name;        // "MKL" (the PyPI wheel links it into libtorch_cpu.so), else the file
  bool optimized = false;  // false without a BLAS, or with the reference BLAS (~25x slower here)
};

// Finds the BLAS of this process: the library the dynamic linker resolves sgemm_ to.
BlasInfo detect_blas();

// The BLAS libraries mapped into this process besides the one LibTorch links (libblas,
// libopenblas, liblapack, BLIS, FlexiBLAS, a separate MKL): there should be none. A second BLAS
// can take LibTorch's own calls and crash it (pytorch issue #182263).
std::vector<std::string> other_blas_libraries();

// A warning to print at start-up when a second BLAS is mapped or answers LibTorch's sgemm_, or
// when matrix products run on no or a slow BLAS; "" otherwise.
std::string slow_blas_warning(const BlasInfo& blas, const std::vector<std::string>& others);

// Calls each of LibTorch's element-wise functions that run on MKL's vector math (VML: cos, sin,
// exp, log, sqrt, tanh, erf, ...) once, on one element, in float and in double, so that MKL
// chooses their kernels before two threads call them at once. oneMKL 2024.2 (the PyPI wheel's)
// chooses a function's kernel at its first call, and when that first call runs on several
// threads at once one thread's share can come from the low-accuracy kernel (pytorch issue
// #188792): here RoPE's cos table was off by 1.5e-4 in about one process in 40, and the
// decoders' parity with transformers failed now and then. Idempotent and cheap (microseconds).
void prepare_vector_math();

// Sets LibTorch's intra-op thread count: `threads` when > 0, else $LMK_THREADS when set, else
// all cores, divided by $LOCAL_WORLD_SIZE when a launcher (torchrun) started several processes
// on this machine; prepares the vector math first (prepare_vector_math). Returns the count in
// effect.
int configure_threads(int threads = 0);

}  // namespace lmk
