#!/usr/bin/env bash
# scripts/demo.sh: README's first command.  Installs what ptxwave needs,
# builds it, and runs the main job on the bundled example, examples/vecadd
# (built by nvcc 13 from examples/vecadd.cu).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
[ -f build/build.ninja ] || meson setup build
ninja -C build
echo
echo "\$ ptxwave inspect examples/vecadd"
./build/tools/ptxwave inspect examples/vecadd
