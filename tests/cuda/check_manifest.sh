#!/bin/sh
# check_manifest.sh SRCDIR: every SRCDIR/*.cu is listed in SRCDIR/programs.txt
# and every listed program has its source, with a valid arch and libs column.
# A program's further source files (rdc programs: SRCDIR/parts/<name>_*.cu)
# are in parts/, not listed.
set -eu
dir=$1
manifest="$dir/programs.txt"
status=0
listed=$(grep -v '^[[:space:]]*#' "$manifest" | awk 'NF { print $1 }' | sort)
present=$(cd "$dir" && ls *.cu | sed 's/\.cu$//' | sort)
for p in $present; do
    echo "$listed" | grep -qx "$p" || { echo "$p.cu is not in programs.txt" >&2; status=1; }
done
for p in $listed; do
    [ -f "$dir/$p.cu" ] || { echo "programs.txt lists $p, but $p.cu is missing" >&2; status=1; }
done
grep -v '^[[:space:]]*#' "$manifest" | awk 'NF' | while read -r name arch libs rest; do
    case "$arch" in 70|75|80|86|89|90|90a|100a|120|120a) ;; *) echo "$name: bad arch '$arch'" >&2; exit 1 ;; esac
    [ "$libs" = - ] || for l in $(echo "$libs" | tr , ' '); do
        case "$l" in cuda|rdc|cudadevrt) ;; *) echo "$name: bad libs '$libs'" >&2; exit 1 ;; esac
    done
    [ -n "$rest" ] || { echo "$name: no description" >&2; exit 1; }
done || status=1
[ $status -eq 0 ] && echo "programs.txt: $(echo "$listed" | wc -l) programs, all present"
exit $status
