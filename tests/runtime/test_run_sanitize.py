#!/usr/bin/env python3
"""tests/runtime/test_run_sanitize.py PTXWAVE B_SANITIZE [forward|noforward]: the environment
`ptxwave run` gives its program (tools/cmd_run.c, docs/runtime.md
"Sanitizer builds").  In a sanitized build LD_PRELOAD starts with the
sanitizer runtimes (libasan first: it must be the first library of the
process), then the forwarding layer (libptxwave_forward.so, in every build),
then the user's LD_PRELOAD, and LSAN_OPTIONS names runtime/nvidia.lsan.supp
unless the user named suppressions; in a normal build LD_PRELOAD holds only
the layer and LSAN_OPTIONS is left as it was.  Then a program that loads libcuda.so.1
only by dlopen (as cudart does) must load it and not die with "ASan runtime
does not come first in initial library list"."""
import os, subprocess, sys

ptxwave, sanitize = sys.argv[1], sys.argv[2]
has_fwd = len(sys.argv) < 4 or sys.argv[3] == 'forward'   # the layer is built
san = sanitize not in ('', 'none')
probe = 'printf "%s|%s" "$LD_PRELOAD" "$LSAN_OPTIONS"'
fails = []

def env_of(extra):
    env = {k: v for k, v in os.environ.items() if k not in ('LD_PRELOAD', 'LSAN_OPTIONS')}
    env.update(extra)
    p = subprocess.run([ptxwave, 'run', '--', '/bin/sh', '-c', probe], env=env,
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        fails.append(f'{extra}: exit {p.returncode}: {p.stderr}')
        return ['', '']
    return p.stdout.split('|', 1)

FWD = 'libptxwave_forward.so'

def layer_ok(entries):
    """the forwarding layer, once, an existing file (absent where not built)"""
    f = [e for e in entries if os.path.basename(e) == FWD]
    return len(f) == 1 and os.path.isfile(f[0]) if has_fwd else not f

pre, lsan = env_of({})
if not layer_ok(pre.split(':')):
    fails.append(f'LD_PRELOAD {pre!r}: want the forwarding layer ({FWD}) once')
if san:
    first = os.path.basename(pre.split(':')[0])
    want = 'libasan' if 'address' in sanitize else 'lib'
    if not first.startswith(want) or not all(os.path.isfile(f) for f in pre.split(':')) or \
            (has_fwd and os.path.basename(pre.split(':')[-1]) != FWD):
        fails.append(f'LD_PRELOAD {pre!r}: want existing sanitizer runtimes, {want}* first, '
                     f'then {FWD}')
    if not lsan.startswith('suppressions=') or not lsan.endswith('runtime/nvidia.lsan.supp') or not os.path.isfile(lsan.split('=', 1)[1]):
        fails.append(f'LSAN_OPTIONS {lsan!r}: want suppressions=<source>/runtime/nvidia.lsan.supp')
    pre2, lsan2 = env_of({'LD_PRELOAD': '/nonexistent/user.so', 'LSAN_OPTIONS': 'report_objects=1'})
    if not pre2.endswith(':/nonexistent/user.so') or pre2.split(':')[0] != pre.split(':')[0]:
        fails.append(f'user LD_PRELOAD: got {pre2!r}, want the runtimes then the user\'s')
    if lsan2 != 'report_objects=1:' + lsan:
        fails.append(f'user LSAN_OPTIONS: got {lsan2!r}, want theirs then ours')
    _, lsan3 = env_of({'LSAN_OPTIONS': 'suppressions=/my.supp'})
    if lsan3 != 'suppressions=/my.supp':
        fails.append(f'user suppressions: got {lsan3!r}, want them untouched')
else:
    if (pre.split(':') != [pre] if has_fwd else pre) or lsan:
        fails.append(f'normal build: LD_PRELOAD {pre!r}, LSAN_OPTIONS {lsan!r}: want the layer '
                     f'alone, LSAN_OPTIONS unset')
    pre2, _ = env_of({'LD_PRELOAD': '/nonexistent/user.so'})
    if pre2 != (pre + ':' if pre else '') + '/nonexistent/user.so':
        fails.append(f'user LD_PRELOAD: got {pre2!r}, want the layer then the user\'s')

# dlopen("libcuda.so.1") from a program that links no sanitizer (python3):
# cuInit must answer 0 on the emulator.
code = ('import ctypes; l = ctypes.CDLL("libcuda.so.1"); '
        'print("cuInit", l.cuInit(0))')
env = dict(os.environ, PTXWAVE_BACKEND='emu', PTXWAVE_LOG='error')
env.pop('LD_PRELOAD', None)
# the interpreter's own allocations at exit are not ours: loading is tested
env['ASAN_OPTIONS'] = os.environ.get('ASAN_OPTIONS', '') + ':detect_leaks=0'
p = subprocess.run([ptxwave, 'run', '--', sys.executable, '-c', code], env=env,
                   capture_output=True, text=True, timeout=120)
if p.returncode != 0 or 'cuInit 0' not in p.stdout:
    fails.append(f'dlopen of libcuda.so.1: exit {p.returncode}: {p.stdout} {p.stderr[-1500:]}')

for f in fails:
    print('FAIL', f)
print('ok' if not fails else f'{len(fails)} failures')
sys.exit(1 if fails else 0)
