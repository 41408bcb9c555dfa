#!/bin/sh
# tests/cuda/run_emu.sh NAME ARCH: compiles tests/cuda/NAME.cu with nvcc for
# ARCH against emu_cudart (the CUDA runtime subset on the emulator), runs it
# with its kernels' PTX in the emulator, and passes when the program reports
# PASS (and, where tests/cuda/NAME.expected exists, prints exactly that).
# Exit 77 (skipped) without nvcc.
set -u
name=$1
arch=$2
root=${PTXWAVE_SOURCE_ROOT:?}
cuda=${PW_CUDA_DIR:-/usr/local/cuda}
nvcc=$cuda/bin/nvcc
[ -x "$nvcc" ] || { echo "nvcc not found at $nvcc: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$root/tests/cuda/$name.cu
# an arch-specific target (sm_120a): -arch would add the generic compute_120
# PTX, which has not its instructions; one -gencode, as meson builds it
case $arch in
  *a) v=${arch#sm_}; archflag="-gencode=arch=compute_$v,code=[sm_$v,compute_$v]" ;;
  *) archflag="-arch=$arch" ;;
esac
# one compilation: -keep leaves the PTX of the same build next to the binary
if ! "$nvcc" "$archflag" -cudart none -keep -keep-dir "$tmp" -I"$root/tests/cuda" "$src" \
     -o "$tmp/$name" -L"$PW_CUDART_DIR" -lpw_emu_cudart -Xlinker -rpath="$PW_CUDART_DIR" \
     >"$tmp/nvcc.log" 2>&1; then
  cat "$tmp/nvcc.log"
  echo "$name: nvcc failed"
  exit 1
fi
ptx=$(ls "$tmp"/*.ptx 2>/dev/null | head -1)
[ -n "$ptx" ] || { echo "$name: nvcc left no PTX"; exit 1; }
# the harness library may be built with sanitizers; the nvcc-built program is not
case "${PW_SANITIZE:-none}" in
  *address*)
    LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
    export LD_PRELOAD
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0:detect_leaks=0"
    export ASAN_OPTIONS ;;
esac
PW_PTX=$ptx "$tmp/$name" >"$tmp/out.txt" 2>"$tmp/err.txt"
rc=$?
cat "$tmp/out.txt"
cat "$tmp/err.txt" >&2
if [ $rc -ne 0 ]; then echo "$name: exit status $rc"; exit 1; fi
grep -q "^$name: PASS" "$tmp/out.txt" || grep -q ": PASS\$" "$tmp/out.txt" || { echo "$name: no PASS line"; exit 1; }
if [ -f "$root/tests/cuda/$name.expected" ]; then
  diff -u "$root/tests/cuda/$name.expected" "$tmp/out.txt" || { echo "$name: output differs"; exit 1; }
fi
exit 0
