#!/usr/bin/env bash
# Installs every system package ptxwave needs on a fresh Debian 12 machine.
# Used by both README set-up commands and by .ci/run, so the three can never
# disagree about what a clean machine lacks.  Idempotent: a second run only
# checks.
set -euo pipefail

pkgs=(
  build-essential pkg-config meson ninja-build   # the build (meson 1.0.1)
  check                                          # unit tests
  liblz4-dev libzstd-dev libxxhash-dev           # fatbin decompression, hashing
  clang-22 libclang-rt-22-dev libfuzzer-22-dev   # sanitizers and libFuzzer targets
  llvm-22-tools                                  # FileCheck-22
  llvm-22 llvm-22-dev                            # codegen: LLVM-C, AMDGPU backend, llvm-readelf-22
  liblld-22-dev lld-22 zlib1g-dev                # codegen: in-process lld (lldELF, lldCommon)
  g++                                            # codegen/cg_lld.cpp (lld has no C API)
  python3-yaml                                   # codegen test: code object metadata
  binutils file                                  # test helpers (readelf, ar)
  python3                                        # nvcc test (also needed by meson)
  zstd lz4                                       # benchmarks: the reference decompressors
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
