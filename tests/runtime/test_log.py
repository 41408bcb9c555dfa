#!/usr/bin/env python3
"""tests/runtime/test_log.py RT_PROBE: PTXWAVE_LOG levels.

Runs rt_probe (linked against libcuda.so.1) at each level and checks what
each level shows: the backend choice at info, failing calls at debug, every
call with its arguments and result at trace, the unsupported entry point's
warning exactly once (two threads call it 200 times) from warn up, nothing
at error.  Expected counts come from what rt_probe does, not from the log.
"""
import os, subprocess, sys

probe = sys.argv[1]
fails = []

def run(level):
    env = dict(os.environ, PTXWAVE_LOG=level, PTXWAVE_BACKEND='emu')
    p = subprocess.run([probe], env=env, capture_output=True, text=True, timeout=60)
    if p.returncode != 0 or 'rt_probe: ok' not in p.stdout:
        fails.append(f'{level}: rt_probe failed ({p.returncode}): {p.stderr[-2000:]}')
    return p.stderr.splitlines()

def count(lines, s):
    return sum(1 for l in lines if s in l)

for level in ['error', 'warn', 'info', 'debug', 'trace']:
    lines = run(level)
    rank = ['error', 'warn', 'info', 'debug', 'trace'].index(level)
    warn = count(lines, 'cuGraphicsUnregisterResource is not supported')
    want = 1 if rank >= 1 else 0
    if warn != want:
        fails.append(f'{level}: "not supported" warning {warn} times, want {want}')
    backend = count(lines, 'backend emu:')
    if backend != (1 if rank >= 2 else 0):
        fails.append(f'{level}: backend choice logged {backend} times')
    bad = count(lines, 'cuDeviceGetCount -> CUDA_ERROR_INVALID_VALUE')
    if bad != (1 if rank >= 3 else 0):
        fails.append(f'{level}: failing cuDeviceGetCount logged {bad} times')
    traced = count(lines, 'cuInit(0)') + count(lines, 'cuInit -> CUDA_SUCCESS')
    if traced != (2 if rank >= 4 else 0):
        fails.append(f'{level}: cuInit traced {traced} lines, want {2 if rank >= 4 else 0}')
    if rank == 0 and lines:
        fails.append(f'error: unexpected output {lines[:3]}')

for f in fails:
    print('FAIL', f)
print('test_log:', 'ok' if not fails else f'{len(fails)} failures')
sys.exit(1 if fails else 0)
