#!/usr/bin/env python3
"""tests/runtime/test_hip.py FAKE_HIP HIP_CLIENT: the HIP backend against a
recording stand-in for libamdhip64 (fake_hip.c).

Checks, from hand-computed expectations: the backend is chosen and named;
copy directions (hipMemcpyKind 1 H2D, 3 D2D, 2 D2H) and sizes; memsets;
launch dimensions, dynamic shared memory, stream, and the kernarg bytes
(CUDA's .param layout, identical through kernelParams and through
CU_LAUNCH_PARAM_BUFFER_POINTER); the kernel cache (first run compiles one
module, the second compiles none); and that a machine with no GPU falls
back to the emulator.
"""
import os, subprocess, sys, tempfile

fake, client = sys.argv[1], sys.argv[2]
fails = []
tmp = tempfile.mkdtemp()
log = os.path.join(tmp, 'hip.log')
env = dict(os.environ, PTXWAVE_HIP_LIBRARY=fake, PW_FAKE_HIP_LOG=log, PTXWAVE_BACKEND='hip',
           PTXWAVE_HIP_PASSTHROUGH='1', PTXWAVE_CACHE_DIR=os.path.join(tmp, 'cache'),
           PTXWAVE_LOG='info')

def run(e):
    if os.path.exists(log):
        os.remove(log)
    p = subprocess.run([client], env=e, capture_output=True, text=True, timeout=60)
    lines = open(log).read().splitlines() if os.path.exists(log) else []
    return p, lines

p, lines = run(env)
if p.returncode != 0 or 'hip_client: ok' not in p.stdout:
    fails.append(f'client failed: {p.returncode} {p.stdout} {p.stderr}')
if 'device: Fake AMD GPU' not in p.stdout:
    fails.append('device name not from HIP')
if 'backend hip:' not in p.stderr:
    fails.append('backend choice not logged as hip')

def expect(line):
    if line not in lines:
        fails.append(f'missing: {line!r}')

expect('hipMalloc 64')
expect('hipMemcpy kind=1 bytes=16')
expect('hipMemcpy kind=3 bytes=16')
expect('hipMemcpy kind=2 bytes=16')
expect(f'hipMemsetD32 {0x01020304} 4')
expect('hipMemcpyAsync kind=1 bytes=8 stream=user')
kernarg = ('8877665544332211' + 'd4c3b2a1' + '0000803f' + '5a' + '00' * 7 +
           '0102030405060708090a0b0c')
expect(f'hipModuleLaunchKernel k grid=3,2,1 block=64,1,1 shared=128 stream=user '
       f'kernelParams=null kernarg={kernarg}')
expect(f'hipModuleLaunchKernel k grid=1,1,1 block=32,2,1 shared=0 stream=null '
       f'kernelParams=null kernarg={kernarg}')
expect('hipStreamSynchronize user')
if 'modules compiled 1, cache hits 0' not in p.stderr:
    fails.append('first run: one module compiled, no cache hit expected')

p, lines = run(env)
if 'modules compiled 0, cache hits 1' not in p.stderr:
    fails.append(f'second run: the module must come from the cache: {p.stderr[-800:]}')

env0 = dict(env, PW_FAKE_HIP_DEVICES='0', PTXWAVE_BACKEND='auto')
p, lines = run(env0)
if 'backend emu:' not in p.stderr:
    fails.append(f'no GPU: the emulator must take over: {p.stderr[-800:]}')
p = subprocess.run([client], env=dict(env0, PTXWAVE_BACKEND='hip'), capture_output=True,
                   text=True, timeout=60)
if p.returncode == 0:
    fails.append('PTXWAVE_BACKEND=hip with no GPU must fail cuInit')

for f in fails:
    print('FAIL', f)
print('test_hip:', 'ok' if not fails else f'{len(fails)} failures')
sys.exit(1 if fails else 0)
