#!/usr/bin/env bash
# fuzz/make_seeds.sh: regenerates the saved seed corpus of fuzz_container
# (fuzz/corpus/container/) with nvcc and binutils.  The seeds are committed;
# this script documents where they come from.  A few KB each:
#   zstd.fatbin    nvcc -fatbin, PTX and cubin both zstd (-Xfatbin -compress-all)
#   lz4.fatbin     nvcc -fatbin --compress-mode=speed: PTX as a raw LZ4 block
#   nv_fatbin.o    a relocatable ELF whose .nv_fatbin section is zstd.fatbin
#   rdc.a          an ar archive (GNU long-name table) of an nvcc -rdc object
#   k.ptx          PTX text;  k.cubin  a device ELF
set -euo pipefail
cd "$(dirname "$0")"
out=corpus/container
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/k.cu" <<'CU'
__global__ void k(float *p) { p[threadIdx.x] += 1.0f; }
CU
nvcc=/usr/local/cuda/bin/nvcc
gc=(-gencode 'arch=compute_75,code=[sm_75,compute_75]')
$nvcc -fatbin "${gc[@]}" -Xfatbin -compress-all -o "$out/zstd.fatbin" "$tmp/k.cu"
$nvcc -fatbin "${gc[@]}" --compress-mode=speed -o "$out/lz4.fatbin" "$tmp/k.cu"
objcopy -I binary -O elf64-x86-64 --rename-section .data=.nv_fatbin,alloc,load,readonly,data,contents \
  "$out/zstd.fatbin" "$out/nv_fatbin.o"
$nvcc -c -rdc=true "${gc[@]}" -Xfatbin -compress-all -o "$tmp/a_long_member_name_for_the_table.o" "$tmp/k.cu"
strip --strip-unneeded -R .comment -R .note.GNU-stack "$tmp/a_long_member_name_for_the_table.o"
rm -f "$out/rdc.a"
ar rcS "$out/rdc.a" "$tmp/a_long_member_name_for_the_table.o"
$nvcc -ptx -arch=compute_75 -o "$out/k.ptx" "$tmp/k.cu"
$nvcc -cubin -arch=sm_75 -o "$out/k.cubin" "$tmp/k.cu"
ls -l "$out"
