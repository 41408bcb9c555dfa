#!/usr/bin/env python3
"""tests/runtime/test_lazy.py LAZY_CLIENT: runs lazy_client on the emulator
(its own checks: docs/runtime.md "Loading") and checks the log: the two
launches of the SASS-only kernel give one line naming the kernel and
"SASS only, no PTX"; the PTX that does not parse is reported when it is
first used."""
import os, subprocess, sys

env = {k: v for k, v in os.environ.items() if not k.startswith('PTXWAVE_')}
env.update(PTXWAVE_BACKEND='emu', PTXWAVE_LOG='error')
p = subprocess.run([sys.argv[1]], env=env, capture_output=True, text=True, timeout=120)
fails = []
if p.returncode != 0 or 'lazy_client: ok' not in p.stdout:
    fails.append(f'client failed ({p.returncode}): {p.stdout[-1000:]} {p.stderr[-2000:]}')
sass = [l for l in p.stderr.splitlines() if 'SASS only, no PTX' in l and 'sass_k' in l]
if len(sass) != 3:  # once per module: the mixed fatbin's, the cubin-only one's, the cubin's
    fails.append(f'{len(sass)} "SASS only" lines for sass_k, want 3 (one per module)')
if 'does not parse' not in p.stderr or 'bad_k( {' not in p.stderr:
    fails.append('the PTX that does not parse is not reported with its source line')
for f in fails:
    print('FAIL', f)
print(p.stdout)
print(p.stderr)
sys.exit(1 if fails else 0)
