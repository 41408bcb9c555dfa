#!/usr/bin/env python3
"""tests/forward/test_forward.py PTXWAVE FW_CLIENT: the forwarding layer
around a stand-in cuBLAS (fw_client.c, fake_blas.c), under `ptxwave run` on
the emulator.  The client checks the values; this checks the layer's log:
three dgemm calls and the outer sgemv taken over, the dgemm whose earlier
work wrote the output it reads not taken over, the inner dgemm (inside
sgemv) left to the outer call, the refusals inside covered calls logged at
info rather than error; and with PTXWAVE_FORWARD=off, nothing taken over."""
import os, subprocess, sys

ptxwave, client = sys.argv[1], sys.argv[2]
env = {k: v for k, v in os.environ.items() if not k.startswith('PTXWAVE_')}
env.update(PTXWAVE_BACKEND='emu', PTXWAVE_LOG='info')
fails = []

def run(extra_env, args):
    e = dict(env, **extra_env)
    p = subprocess.run([ptxwave, 'run', '--', client] + args, env=e, capture_output=True,
                       text=True, timeout=300)
    print(p.stdout)
    print(p.stderr)
    if p.returncode != 0 or 'fw_client: ok' not in p.stdout:
        fails.append(f'client {args} failed ({p.returncode})')
    return p.stderr.splitlines()

log = run({}, [])
taken = [l for l in log if 'forward:' in l and ': taken over' in l]
dgemm = [l for l in taken if 'cublasDgemm_v2: taken over' in l]
sgemv = [l for l in taken if 'cublasSgemv_v2: taken over' in l]
kept = [l for l in log if 'cublasDgemm_v2: not taken over' in l and 'may have changed' in l]
if len(dgemm) != 3:
    fails.append(f'{len(dgemm)} dgemm calls taken over, want 3 (host, device scalars, beta 0)')
if len(sgemv) != 1:
    fails.append(f'{len(sgemv)} sgemv calls taken over, want 1')
if len(kept) != 1:
    fails.append(f'{len(kept)} dgemm calls kept for earlier work, want 1')
if any('error:' in l and 'SASS only' in l for l in log):
    fails.append('a refusal inside a covered call logged as an error')
if not any('info:' in l and 'sass_k' in l and 'SASS only' in l for l in log):
    fails.append('the refusal of sass_k is not in the log at info')

log = run({'PTXWAVE_FORWARD': 'off'}, ['off'])
if any(': taken over' in l for l in log):
    fails.append('PTXWAVE_FORWARD=off: a call was taken over')
for f in fails:
    print('FAIL', f)
sys.exit(1 if fails else 0)
