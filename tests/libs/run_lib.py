#!/usr/bin/env python3
"""tests/libs/run_lib.py PTXWAVE NAME [LIB...]: builds tests/libs/NAME.cu with
nvcc (default flags: static cudart, sm_75) linked to the toolkit's own
libraries (-lLIB each), runs it unmodified under `ptxwave run` on the
emulator with none of ptxwave's variables set (the defaults are under test;
EMU_ENV below gives a program the emulated machine it needs),
and judges it by its own checks against plain C on the host:

  pass  it exits 0 and prints "NAME: PASS"; or every operation it reports
        as failed ("NAME: op OP failed") is listed for NAME in
        sass_only.txt, and every kernel the runtime refused as "SASS only,
        no PTX" matches that list (the library chose a kernel it ships
        without PTX: a known gap, printed with how often it was hit);
  fail  anything else: a wrong result, a crash, an unlisted failure.

Exit 77 (skipped) without nvcc or one of the libraries.  In a sanitized
build it runs the same way: `ptxwave run` preloads the sanitizer runtimes
and NVIDIA's leak suppressions (tools/cmd_run.c), so ASan and UBSan watch
our libcuda.so.1 and emulator under NVIDIA's libraries, with the options
the harness set (scripts/test.sh).
"""
import os, re, subprocess, sys, tempfile

ptxwave, name, libs = sys.argv[1], sys.argv[2], sys.argv[3:]
cuda = os.environ.get('PW_CUDA_DIR', '/usr/local/cuda')
nvcc = os.path.join(cuda, 'bin', 'nvcc')
here = os.path.dirname(os.path.abspath(__file__))
if not os.access(nvcc, os.X_OK):
    print(f'nvcc not found at {nvcc}: skipped')
    sys.exit(77)
lib64 = os.path.join(cuda, 'lib64')
for l in libs:
    if not any(f.startswith(f'lib{l}.so') for f in os.listdir(lib64)):
        print(f'lib{l}.so not in {lib64}: skipped')
        sys.exit(77)

# what a program needs of the emulated machine (not a ptxwave default
# under test): nccl2's two ranks are two devices
EMU_ENV = {'nccl2': {'PTXWAVE_EMU_DEVICES': '2'}}

gaps = []  # (operation, kernel substring)
for line in open(os.path.join(here, 'sass_only.txt')):
    f = [x.strip() for x in line.split('|')]
    if len(f) >= 3 and not f[0].startswith('#') and f[0] == name:
        gaps.append((f[1], f[2]))

with tempfile.TemporaryDirectory() as tmp:
    exe = os.path.join(tmp, name)
    b = subprocess.run([nvcc, '-o', exe, os.path.join(here, name + '.cu'), '-L' + lib64] +
                       ['-l' + l for l in libs] + ['-Xlinker', '-rpath=' + lib64],
                       capture_output=True, text=True)
    if b.returncode != 0:
        print(b.stdout, b.stderr)
        print(f'{name}: nvcc failed')
        sys.exit(1)
    env = {k: v for k, v in os.environ.items() if not k.startswith('PTXWAVE_')}
    env.update(EMU_ENV.get(name, {}))
    try:
        p = subprocess.run([ptxwave, 'run', '--', exe], env=env, capture_output=True, text=True,
                           timeout=600)
    except subprocess.TimeoutExpired:
        print(f'{name}: timed out')
        sys.exit(1)
print(p.stdout)
print(p.stderr, file=sys.stderr)
# A sanitizer's report fails the run whatever the program's own verdict (an
# exit status of 1 could otherwise pass as the known SASS-only failures).
san = re.search(r'ERROR: (Address|Leak)Sanitizer|runtime error: ', p.stderr)
if san:
    print(f'{name}: FAIL: sanitizer report ({san.group(0).strip()})')
    sys.exit(1)
if p.returncode == 0 and f'{name}: PASS' in p.stdout.splitlines():
    for op, k in gaps:
        print(f'note: {name}: {op} passes now: remove it from sass_only.txt')
    sys.exit(0)
failed = re.findall(rf'^{re.escape(name)}: op (.+) failed$', p.stdout, re.M)
sass = re.findall(r'kernel (\S+) of (.+?): SASS only, no PTX', p.stderr)
known_ops = {op for op, _ in gaps}
bad = [op for op in failed if op not in known_ops]
unmatched = [k for k, _ in sass if not any(g in k for _, g in gaps)]
if p.returncode < 0 or not failed or bad or unmatched:
    print(f'{name}: FAIL (exit {p.returncode}; unlisted failures {bad}; '
          f'SASS-only kernels not in sass_only.txt {unmatched})')
    sys.exit(1)
counts = {}
for k, lib in sass:
    counts[(k, lib)] = counts.get((k, lib), 0) + 1
for (k, lib), c in sorted(counts.items()):
    print(f'known gap: {lib}: {k} (SASS only), {c} module(s)')
print(f'{name}: ok: {len(failed)} operations refused for SASS-only kernels '
      f'(sass_only.txt), the rest pass')
sys.exit(0)
