#!/bin/sh
# ptxas_check.sh: NVIDIA's own assembler as an independent check that PTX is
# valid, for the meson suite `cuda`.
#
#   ptxas_check.sh ARCH FILE.ptx           assemble one PTX file for sm_ARCH
#   ptxas_check.sh --embedded ARCH FILE.cu  assemble every PTX text embedded in
#                                           FILE.cu between the marker lines
#                                           "/* PTX-BEGIN name */" and
#                                           "/* PTX-END */" (the PTX itself is a
#                                           C++ raw string R"PTX( ... )PTX")
#   ptxas_check.sh --toolkit                 only report whether ptxas exists
#
# Exits 77 (meson's "skipped") when ptxas is not found: $PTXAS, then
# /usr/local/cuda/bin/ptxas, then PATH.
set -eu

ptxas=${PTXAS:-}
if [ -z "$ptxas" ]; then
    if [ -x /usr/local/cuda/bin/ptxas ]; then
        ptxas=/usr/local/cuda/bin/ptxas
    else
        ptxas=$(command -v ptxas 2>/dev/null || true)
    fi
fi
if [ -z "$ptxas" ] || [ ! -x "$ptxas" ]; then
    echo "ptxas not found: CUDA toolkit absent, skipping" >&2
    exit 77
fi

case "${1:-}" in
--toolkit)
    echo "ptxas: $ptxas"
    exit 0
    ;;
--embedded)
    arch=$2
    src=$3
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    names=$(sed -n 's|^/\* PTX-BEGIN \([A-Za-z0-9_]*\) \*/$|\1|p' "$src")
    if [ -z "$names" ]; then
        echo "$src: no PTX-BEGIN markers" >&2
        exit 1
    fi
    for name in $names; do
        sed -n "\|^/\* PTX-BEGIN $name \*/\$|,\|^/\* PTX-END \*/\$|{
            /PTX-BEGIN/d
            /PTX-END/d
            /R\"PTX(/d
            /^)PTX\";/d
            p
        }" "$src" >"$tmp/$name.ptx"
        "$ptxas" -arch="sm_$arch" "$tmp/$name.ptx" -o "$tmp/$name.cubin"
        echo "$src:$name: accepted by ptxas -arch=sm_$arch"
    done
    ;;
*)
    arch=$1
    ptx=$2
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # relocatable device code (nvcc -rdc=true) refers to functions and
    # variables of other files: assemble it as ptxas does there, -c
    rel=
    if grep -q '^\.extern' "$ptx"; then rel=-c; fi
    "$ptxas" $rel -arch="sm_$arch" "$ptx" -o "$tmp/out.cubin"
    echo "$ptx: accepted by ptxas $rel -arch=sm_$arch"
    ;;
esac
