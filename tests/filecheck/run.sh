#!/usr/bin/env bash
# tests/filecheck/run.sh FILE: runs the RUN: lines of one test file, the way
# LLVM's lit does, for any kind of file (.pwir, .ptx, ...).
#
#   ; RUN: %ptxwave ir %s --verify --print | FileCheck-22 %s
#   ; RUN: not %ptxwave ir %s --verify 2>&1 | FileCheck-22 %s --check-prefix=ERR
#
# A RUN: line is everything after "RUN:" on a line; a line ending in '\'
# continues on the next RUN: line.  Substitutions: %ptxwave (the binary:
# $PTXWAVE, else build/tools/ptxwave), %s (the file), %S (its directory),
# %t (a scratch path, removed afterwards), %% (a literal %).  Each line runs
# in `bash -o pipefail`, with `not CMD` inverting CMD's status (a crash, a
# status of 128 or more, still fails).  The first failing line fails the
# test; a file with no RUN: line fails too.
set -uo pipefail

if [ $# -ne 1 ] || [ ! -f "$1" ]; then
  echo "usage: $0 FILE" >&2
  exit 2
fi
file=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$(dirname "$file")
root=$(cd "$(dirname "$0")/../.." && pwd)
ptxwave=${PTXWAVE:-$root/build/tools/ptxwave}
if [ ! -x "$ptxwave" ]; then
  echo "run.sh: no ptxwave binary at $ptxwave (set PTXWAVE)" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

prelude='not() {
  "$@"; local rc=$?
  if [ $rc -eq 0 ]; then echo "not: \"$*\" succeeded" >&2; return 1; fi
  if [ $rc -ge 128 ]; then echo "not: \"$*\" crashed (status $rc)" >&2; return 1; fi
  return 0
}'

q() { printf '%q' "$1"; }

runs=()
cmd=
while IFS= read -r line; do
  case $line in
    *RUN:*) ;;
    *) continue ;;
  esac
  part=${line#*RUN:}
  if [[ $part == *\\ ]]; then
    cmd+="${part%\\} "
    continue
  fi
  runs+=("$cmd$part")
  cmd=
done <"$file"
if [ ${#runs[@]} -eq 0 ]; then
  echo "run.sh: $file has no RUN: lines" >&2
  exit 1
fi

n=0
for r in "${runs[@]}"; do
  n=$((n + 1))
  c=${r//%%/$'\x01'}
  c=${c//%ptxwave/$(q "$ptxwave")}
  c=${c//%s/$(q "$file")}
  c=${c//%S/$(q "$dir")}
  c=${c//%t/$(q "$tmp/t")}
  c=${c//$'\x01'/%}
  if ! (cd "$dir" && bash -o pipefail -c "$prelude
$c"); then
    echo "run.sh: RUN line $n of $file failed:" >&2
    echo "  $c" >&2
    exit 1
  fi
done
