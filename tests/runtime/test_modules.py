#!/usr/bin/env python3
"""tests/runtime/test_modules.py MODULES_CLIENT: runs modules_client on the
emulator and checks that the bad-input messages name the instruction and
the kernel (frobnicate in weird) and the parse error's position."""
import os, subprocess, sys

p = subprocess.run([sys.argv[1]], env=dict(os.environ, PTXWAVE_BACKEND='emu', PTXWAVE_LOG='error'),
                   capture_output=True, text=True, timeout=120)
fails = []
if p.returncode != 0 or 'modules_client: ok' not in p.stdout:
    fails.append(f'client failed ({p.returncode}): {p.stderr[-2000:]}')
if not any('frobnicate' in l and 'weird' in l for l in p.stderr.splitlines()):
    fails.append('the unsupported instruction and its kernel are not named')
if 'error' not in p.stderr or 'does not parse' not in p.stderr:
    fails.append('the parse error is not reported')
for f in fails:
    print('FAIL', f)
print(p.stderr)
sys.exit(1 if fails else 0)
