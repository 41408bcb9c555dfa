#!/usr/bin/env bash
# benchmarks/user_corpus.sh: a second PTX corpus, of users' code (issue 20).
#
#   benchmarks/user_corpus.sh SRC OUT [ARCH...]
#
# SRC holds checkouts of public CUDA code bases, each in the folder named
# here (those missing are skipped): ggml (ggml-org/ggml: ggml-cuda's
# kernels and template instances, what llama.cpp runs), cccl (NVIDIA/cccl:
# Thrust's examples and CUB's block and device examples) and cutlass
# (NVIDIA/cutlass: the examples listed below, with tools/util/include).
# Every source is compiled by the toolkit's nvcc with -ptx for each ARCH
# (default: sm_80 sm_90 sm_90a sm_100a sm_120a) into OUT/ARCH/, named
# BASE.SOURCE.ptx; a source that does not compile for an ARCH (an example
# written for another generation) is listed in OUT/failed.txt with its first
# error line.  Then
#
#   ./build/benchmarks/emu_survey --dir OUT/ARCH --list <(ls OUT/ARCH)
#
# counts the kernels the emulator can run and why not the others (the
# counts are in docs/emulator.md, "Coverage of real PTX").  The corpus is
# other projects' code: it stays out of this repository, and nothing in
# the tests needs it.  Existing outputs are kept (rerun to fill gaps).
# Environment: NVCC (default /usr/local/cuda/bin/nvcc), JOBS (parallel
# compiles, default the number of CPUs), INSTANCES (ggml's template
# instances per family, e.g. fattn-vec or mmq, in name order; default all:
# they are the same kernels at other template parameters, so a sample of
# each family keeps every kind of kernel at a fraction of nvcc's time).
set -uo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,24p' "$0"
  exit 2
fi
src=$(cd "$1" && pwd) || exit 2
out=$2
shift 2
archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(sm_80 sm_90 sm_90a sm_100a sm_120a)
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
jobs=${JOBS:-$(nproc)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
: > "$out/failed.txt"

# CUTLASS examples: one .cu each, chosen to cover SIMT, Turing/Ampere tensor
# ops (mma.sync, ldmatrix, cp.async), tf32/fp64/int8, stream-K, and the
# Hopper and Blackwell collective builders (wgmma/TMA, tcgen05).
cutlass_examples=(
  00_basic_gemm/basic_gemm.cu
  05_batched_gemm/batched_gemm.cu
  06_splitK_gemm/splitk_gemm.cu
  08_turing_tensorop_gemm/turing_tensorop_gemm.cu
  12_gemm_bias_relu/gemm_bias_relu.cu
  14_ampere_tf32_tensorop_gemm/ampere_tf32_tensorop_gemm.cu
  18_ampere_fp64_tensorop_affine2_gemm/ampere_fp64_tensorop_affine2_gemm.cu
  20_simt_canonical/simt_canonical.cu
  21_quaternion_gemm/quaternion_gemm.cu
  35_gemm_softmax/gemm_softmax.cu
  47_ampere_gemm_universal_streamk/ampere_gemm_universal_streamk.cu
  48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu
  49_hopper_gemm_with_collective_builder/49_collective_builder.cu
  54_hopper_fp8_warp_specialized_gemm/54_hopper_fp8_warp_specialized_gemm.cu
  58_ada_fp8_gemm/ada_fp8_gemm.cu
  70_blackwell_gemm/70_blackwell_fp16_gemm.cu
  71_blackwell_gemm_with_collective_builder/71_blackwell_gemm_with_collective_builder.cu
)

# one job: ARCH PREFIX SOURCE INCLUDE-FLAGS...
compile() {
  local arch=$1 prefix=$2 file=$3
  shift 3
  local base
  base=$(basename "$file" .cu)
  local dst="$out/$arch/$prefix.$base.ptx"
  [ -s "$dst" ] && return 0
  local log
  if ! log=$("$nvcc" -ptx -std=c++17 -arch="$arch" --expt-relaxed-constexpr --extended-lambda "$@" "$file" -o "$dst.tmp" 2>&1); then
    rm -f "$dst.tmp"
    printf '%s %s.%s: %s\n' "$arch" "$prefix" "$base" "$(grep -m1 -E 'error' <<<"$log" | cut -c1-200)" >> "$out/failed.txt"
    return 0
  fi
  mv "$dst.tmp" "$dst"
}
export -f compile
export out nvcc

# the compile jobs for ARCH, one shell command line each
jobs_for() {
  local arch=$1 f e
  if [ -d "$src/ggml/src/ggml-cuda" ]; then
    local g="$src/ggml"
    local n=${INSTANCES:-0} fam prev="" k=0
    for f in "$g"/src/ggml-cuda/*.cu "$g"/src/ggml-cuda/template-instances/*.cu; do
      if [ "$n" -gt 0 ] && [[ $f == */template-instances/* ]]; then
        fam=$(basename "$f"); fam=${fam%%-instance*}
        [ "$fam" = "$prev" ] || { prev=$fam; k=0; }
        k=$((k + 1))
        [ "$k" -le "$n" ] || continue
      fi
      printf '%q ' compile "$arch" ggml "$f" "-I$g/include" "-I$g/src" "-I$g/src/ggml-cuda"; echo
    done
  fi
  if [ -d "$src/cccl" ]; then
    local c="$src/cccl" inc
    inc=("-I$c/thrust" "-I$c/cub" "-I$c/libcudacxx/include")
    for f in "$c"/thrust/examples/*.cu; do
      printf '%q ' compile "$arch" thrust "$f" "${inc[@]}"; echo
    done
    for f in "$c"/cub/examples/block/*.cu "$c"/cub/examples/device/*.cu; do
      printf '%q ' compile "$arch" cub "$f" "${inc[@]}" "-I$c/cub/test"; echo
    done
  fi
  if [ -d "$src/cutlass/include" ]; then
    local u="$src/cutlass"
    for e in "${cutlass_examples[@]}"; do
      [ -f "$u/examples/$e" ] || continue
      printf '%q ' compile "$arch" cutlass "$u/examples/$e" "-I$u/include" "-I$u/tools/util/include" \
        "-I$u/examples/common" "-I$u/examples/$(dirname "$e")"; echo
    done
  fi
}

for arch in "${archs[@]}"; do
  mkdir -p "$out/$arch"
  jobs_for "$arch" | xargs -P "$jobs" -d '\n' -n 1 bash -c
  echo "$arch: $(ls "$out/$arch" | grep -c '\.ptx$') modules"
done
echo "failed: $(wc -l < "$out/failed.txt") (see $out/failed.txt)"
