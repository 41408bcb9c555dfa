#!/usr/bin/env bash
# scripts/cmp-codegen.sh: are two builds' code objects byte-identical?
#
#   scripts/cmp-codegen.sh [--arch gfx942[,gfx1100...]] [--quick] [--a-objects DIR] BUILD_A BUILD_B
#
# For a refactoring that must not change codegen (issue 22): each build's
# benchmarks/cg_bench compiles the same modules with its own parser, lowering
# and codegen, writing every code object (cg_bench --out), and the two sets
# are compared file by file.  The modules: the corpus sample
# (tests/corpus/sample.txt, read from the toolkit's libraries) and the
# tests/cuda programs' PTX (BUILD_A/tests/cuda/*.ptx, the same files for
# both builds); --quick takes only the latter.  Prints the modules that
# differ or that only one build compiled, and a summary line per target;
# exits 1 if anything differs, 0 if every object is identical.
# --a-objects DIR: BUILD_A's objects were written before, DIR/<target>/
# (what this script compiles for side A, kept): only BUILD_B compiles.  The
# full sample costs about 15 CPU-minutes per build and target, so on a
# shared machine the baseline is compiled once and reused.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
arches=gfx942
quick=false
a_objects=
while [ $# -gt 0 ]; do
  case $1 in
    --arch) arches=$2; shift 2 ;;
    --quick) quick=true; shift ;;
    --a-objects) a_objects=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "cmp-codegen: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ $# -ne 2 ]; then
  echo "usage: scripts/cmp-codegen.sh [--arch LIST] [--quick] BUILD_A BUILD_B" >&2
  exit 2
fi
a=$1 b=$2
if $quick && [ -n "$a_objects" ]; then
  echo "cmp-codegen: --quick compiles little; give it without --a-objects" >&2; exit 2
fi
for d in "$a" "$b"; do
  [ -x "$d/benchmarks/cg_bench" ] || { echo "cmp-codegen: no $d/benchmarks/cg_bench (ninja -C $d)" >&2; exit 2; }
done
libdir=/usr/local/cuda/lib64
ptx=("$a"/tests/cuda/*.ptx)
[ -e "${ptx[0]}" ] || ptx=()
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

status=0
IFS=, read -ra targets <<< "$arches"
for t in "${targets[@]}"; do
  for side in a b; do
    dir=$a; [ $side = b ] && dir=$b
    out=$work/$side/$t
    if [ $side = a ] && [ -n "$a_objects" ]; then
      [ -d "$a_objects/$t" ] || { echo "cmp-codegen: no $a_objects/$t" >&2; exit 2; }
      mkdir -p "$work/a"; cp -r "$a_objects/$t" "$out"
      continue
    fi
    mkdir -p "$out"
    # cg_bench exits 77 where the libraries are missing: the sample is skipped
    if ! $quick && [ -d "$libdir" ]; then
      "$dir/benchmarks/cg_bench" --arch "$t" --out "$out" --libdir "$libdir" \
        --list tests/corpus/sample.txt >"$work/$side-$t-sample.log" 2>&1
      [ $? -le 1 ] || { echo "cmp-codegen: $dir's cg_bench failed on the sample" >&2; tail -5 "$work/$side-$t-sample.log" >&2; exit 2; }
    fi
    if [ ${#ptx[@]} -gt 0 ]; then
      "$dir/benchmarks/cg_bench" --arch "$t" --out "$out" "${ptx[@]}" >"$work/$side-$t-cuda.log" 2>&1
      [ $? -le 1 ] || { echo "cmp-codegen: $dir's cg_bench failed on tests/cuda" >&2; exit 2; }
    fi
  done
  same=0 differ=0 only=0
  while IFS= read -r f; do
    if [ ! -e "$work/a/$t/$f" ] || [ ! -e "$work/b/$t/$f" ]; then
      only=$((only + 1))
      echo "$t: only in $([ -e "$work/a/$t/$f" ] && echo "$a" || echo "$b"): $f"
    elif cmp -s "$work/a/$t/$f" "$work/b/$t/$f"; then
      same=$((same + 1))
    else
      differ=$((differ + 1))
      echo "$t: differs: $f"
    fi
  done < <( (ls "$work/a/$t"; ls "$work/b/$t") | sort -u)
  echo "$t: $same identical, $differ differ, $only compiled by one build only"
  [ $((differ + only)) -eq 0 ] || status=1
  [ $((same + differ + only)) -gt 0 ] || { echo "$t: nothing was compiled" >&2; status=1; }
done
exit $status
