#!/usr/bin/env python3
"""benchmarks/libs_start_bench.py [--ptxwave PATH] [--runs N]

cuBLAS's start under `ptxwave run` on the emulator with an empty kernel
cache (issue 18's acceptance: cublasCreate under a second): builds
libs_start_bench.cu with nvcc, linked to the toolkit's libcublas, and runs it
N times each way, a fresh PTXWAVE_CACHE_DIR per run:

  base     the runtime's start only (cudaFree(0)), cuBLAS linked, not called
  cublas   the same, then cublasCreate + cublasDestroy

Prints the median wall time of each, their ratio, and the median time of
cublasCreate itself as the program measures it.  Asserts nothing.
"""
import os, statistics, subprocess, sys, tempfile, time

here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
ptxwave = os.path.join(here, '..', 'build', 'tools', 'ptxwave')
runs = 5
if '--ptxwave' in args:
    ptxwave = args[args.index('--ptxwave') + 1]
if '--runs' in args:
    runs = int(args[args.index('--runs') + 1])
cuda = '/usr/local/cuda'
with tempfile.TemporaryDirectory() as tmp:
    exe = os.path.join(tmp, 'start')
    subprocess.run([cuda + '/bin/nvcc', '-o', exe, os.path.join(here, 'libs_start_bench.cu'),
                    '-lcublas', '-Xlinker', '-rpath=' + cuda + '/lib64'], check=True)
    wall = {'base': [], 'cublas': []}
    create = []
    for i in range(runs):
        for mode in ('base', 'cublas'):
            cache = tempfile.mkdtemp(dir=tmp)
            env = {k: v for k, v in os.environ.items() if not k.startswith('PTXWAVE_')}
            env.update(PTXWAVE_CACHE_DIR=cache, PTXWAVE_BACKEND='emu')
            t = time.monotonic()
            p = subprocess.run([ptxwave, 'run', '--', exe] + ([mode] if mode == 'cublas' else []),
                               env=env, capture_output=True, text=True)
            wall[mode].append(time.monotonic() - t)
            if p.returncode != 0:
                sys.exit(f'{mode}: exit {p.returncode}: {p.stdout} {p.stderr[-2000:]}')
            for line in p.stdout.splitlines():
                if line.startswith('cublasCreate '):
                    create.append(float(line.split()[1]))
b, c = statistics.median(wall['base']), statistics.median(wall['cublas'])
print(f'start, runtime only:       {b:.3f} s (median of {runs})')
print(f'start with cublasCreate:   {c:.3f} s')
print(f'ratio:                     {c / b:.2f}x')
print(f'cublasCreate itself:       {statistics.median(create):.3f} s (median; min {min(create):.3f} s)')
