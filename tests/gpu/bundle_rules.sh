# Sourced by tests/gpu/make_bundle.sh and tests/gpu/device_check.sh: which libraries the GPU
# device bundle carries, and which the GPU machine brings itself. One list, both scripts.

# The folder of LibTorch's libraries of the torch that PYTHON imports.
torch_lib() {
  "$1" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))'
}

# "NAME PATH" per library ELF loads (ldd, transitively); PATH is "not" when none is found.
needed_libraries() {
  ldd "$1" | awk '$2 == "=>" { print $1, ($3 == "not" ? "not" : $3) }'
}

# What a library is to the bundle: base (the system's C and C++ runtime), torch (LibTorch's
# folder), cuda (the CUDA runtime libraries, which the GPU machine's torch brings through its
# nvidia-* packages and this machine's CUDA toolkit provides), bundle (already in the bundle),
# carried (to copy into it), or missing.
library_kind() {
  local name=$1 path=$2 torch=$3 bundle=$4
  if [ "$path" = not ]; then echo missing; return; fi
  case "$name" in
    libc.so.* | libm.so.* | libdl.so.* | librt.so.* | libpthread.so.* | libutil.so.* | \
      libstdc++.so.* | libgcc_s.so.* | ld-linux-x86-64.so.*)
      echo base
      return
      ;;
  esac
  case "$path" in "$torch"/*) echo torch; return ;; esac
  case "$name" in
    libcuda.so.* | libcudart.so.* | libcupti.so.* | libcublas*.so.* | libcudnn*.so.* | \
      libnccl.so.* | libnvrtc*.so.* | libnvJitLink.so.* | libnvToolsExt.so.* | libcufft*.so.* | \
      libcurand.so.* | libcusolver*.so.* | libcusparse*.so.* | libcufile*.so.* | \
      libnvshmem*.so.* | libnvidia-*.so.*)
      echo cuda
      return
      ;;
  esac
  case "$path" in "$bundle"/*) echo bundle; return ;; esac
  echo carried
}

# The newest GLIBC_ and GLIBCXX_ symbol versions the bundle's ELFs ask for: "GLIBC_2.34 GLIBCXX_3.4.30".
abi_needed() {
  local bundle=$1 f
  for f in "$bundle"/lmk "$bundle"/lmk-engine "$bundle"/*.so*; do
    [ -f "$f" ] && objdump -T "$f" 2> /dev/null
  done | grep -oE '\b(GLIBC|GLIBCXX)_[0-9.]+' | sort -u -V |
    awk -F_ '{ newest[$1] = $0 } END { print newest["GLIBC"], newest["GLIBCXX"] }'
}

# Whether this machine's C and C++ runtimes provide the versions abi_needed printed: "ok ..." or
# "missing ...", naming the libraries read.
abi_provided() {
  local needed=$1 libc libstdcxx version missing=""
  libc=$(ldconfig -p 2> /dev/null | awk '/libc\.so\.6 .*x86-64/ { print $NF; exit }')
  libstdcxx=$(ldconfig -p 2> /dev/null | awk '/libstdc\+\+\.so\.6 .*x86-64/ { print $NF; exit }')
  for version in $needed; do
    case "$version" in
      GLIBCXX_*) grep -qa "$version" "${libstdcxx:-/nonexistent}" 2> /dev/null || missing+=" $version" ;;
      GLIBC_*) grep -qa "$version" "${libc:-/nonexistent}" 2> /dev/null || missing+=" $version" ;;
    esac
  done
  if [ -z "$missing" ]; then
    echo "ok: $needed in ${libc:-?} and ${libstdcxx:-?}"
  else
    echo "missing:$missing (of $needed; ${libc:-no libc.so.6}, ${libstdcxx:-no libstdc++.so.6})"
  fi
}
