#!/bin/sh
# scripts/gen_forward_ptx.sh: rebuilds forward/fw_gemm.ptx, the PTX of the
# forwarding layer's kernels, from forward/fw_gemm.cu with the toolkit's
# nvcc.  The PTX is checked in beside its source, so building ptxwave needs
# no nvcc; rerun this after editing fw_gemm.cu or fw_gemm.h and commit both.
# compute_80: f16 and bf16 conversions as single instructions (ptxwave
# translates PTX of any target; the layer loads it at whatever capability
# the device reports).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
"$nvcc" -ptx -arch=compute_80 -o "$root/forward/fw_gemm.ptx" "$root/forward/fw_gemm.cu"
echo "wrote forward/fw_gemm.ptx"
