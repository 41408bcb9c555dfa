#!/usr/bin/env bash
# scripts/demo.sh: README's first command.  Installs what ptxwave needs,
# builds it, and runs the main job on the bundled example, examples/vecadd
# (built by nvcc 13 from examples/vecadd.cu with its static cudart): the
# unmodified binary runs on ptxwave's libcuda.so.1, on an AMD GPU through HIP
# where one answers, else on the emulator (the log line says which).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
[ -f build/build.ninja ] || meson setup build
ninja -C build
echo
echo "\$ ptxwave inspect examples/vecadd"
./build/tools/ptxwave inspect examples/vecadd
echo
echo "\$ ptxwave run --log info -- examples/vecadd"
./build/tools/ptxwave run --log info -- examples/vecadd
echo
echo "\$ ptxwave compile examples/vecadd --arch gfx942 -o build/vecadd.hsaco"
./build/tools/ptxwave compile examples/vecadd --arch gfx942 -o build/vecadd.hsaco
for f in build/vecadd.hsaco*; do
  echo "$f: $(llvm-readelf-22 --notes "$f" | grep -E '^ +\.(name|wavefront_size|kernarg_segment_size):' | tr -s ' ' | tr '\n' ' ')"
done
