#!/usr/bin/env bash
# fuzz/make_emu_seeds.sh: regenerates fuzz/corpus/emu/, the seeds of
# fuzz_emu: nvcc's PTX of a few programs of tests/cuda and of the
# emulator's benchmark kernels.  The seeds are committed; this documents
# where they come from.
set -euo pipefail
cd "$(dirname "$0")"
out=corpus/emu
mkdir -p "$out"
nvcc=/usr/local/cuda/bin/nvcc
for p in vector_add bar_red recursion warp_vote reduce_warp; do
  $nvcc -ptx -arch=sm_80 -I ../tests/cuda -o "$out/$p.ptx" "../tests/cuda/$p.cu"
done
cp ../benchmarks/emu_bench.ptx "$out/emu_bench.ptx"
