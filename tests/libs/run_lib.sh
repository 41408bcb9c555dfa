#!/bin/sh
# tests/libs/run_lib.sh PTXWAVE NAME LIB...: builds tests/libs/NAME.cu with
# nvcc (default flags: static cudart) linked to the toolkit's own libraries
# (-lLIB for each LIB), runs it unmodified under `ptxwave run` on the
# emulator with none of ptxwave's variables set (the defaults are what is
# tested), and passes when it exits 0 and prints "NAME: PASS".  The program
# checks itself against values computed on the host in plain C.
# Exit 77 (skipped) without nvcc or one of the libraries, and under
# sanitizers (NVIDIA's host code cannot load an ASan build of libcuda.so.1,
# as for tests/runtime/run_programs.py).
set -u
ptxwave=$1
name=$2
shift 2
root=${PTXWAVE_SOURCE_ROOT:?}
cuda=${PW_CUDA_DIR:-/usr/local/cuda}
nvcc=$cuda/bin/nvcc
[ -x "$nvcc" ] || { echo "nvcc not found at $nvcc: skipped"; exit 77; }
case "${PW_SANITIZE:-none}" in
  none|'') ;;
  *) echo "skipped: sanitizer build"; exit 77 ;;
esac
libs=
for l in "$@"; do
  if ! ls "$cuda"/lib64/lib"$l".so* >/dev/null 2>&1; then
    echo "lib$l.so not in $cuda/lib64: skipped"
    exit 77
  fi
  libs="$libs -l$l"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$nvcc" -o "$tmp/$name" "$root/tests/libs/$name.cu" -L"$cuda/lib64" $libs \
     -Xlinker -rpath="$cuda/lib64" >"$tmp/nvcc.log" 2>&1; then
  cat "$tmp/nvcc.log"
  echo "$name: nvcc failed"
  exit 1
fi
# none of ptxwave's variables: the defaults are under test
for v in $(env | sed -n 's/^\(PTXWAVE_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
"$ptxwave" run -- "$tmp/$name" >"$tmp/out.txt" 2>"$tmp/err.txt"
rc=$?
cat "$tmp/out.txt"
cat "$tmp/err.txt" >&2
if [ $rc -ne 0 ]; then echo "$name: exit status $rc"; exit 1; fi
grep -q "^$name: PASS\$" "$tmp/out.txt" || { echo "$name: no PASS line"; exit 1; }
exit 0
