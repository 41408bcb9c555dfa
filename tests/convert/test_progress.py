#!/usr/bin/env python3
"""tests/convert/test_progress.py PTXWAVE PTX_DIR: `ptxwave convert`'s progress
output (docs/convert.md "Output"), in every build (no NVIDIA code runs).

Three tests/cuda .ptx files for gfx942 and gfx1100 (3 x 2 = 6 jobs, counted
by hand) into a bundle, twice each with a fresh bundle:

- stderr a terminal (a pseudo-terminal from Python's pty module, so isatty
  is true as for a user): a bar redrawn in place ('\\r', no newline per
  update), each update '[###...] D/6 modules  R/s  M:SS left', D never
  decreasing, the last one '6/6 modules' with a rate > 0 and '0:00 left',
  ended by one newline; no plain 'convert:' line;
- stderr a pipe: plain lines 'convert: D/6 modules, C converted, S
  skipped, U unsupported, R/s, M:SS left', no '\\r', the last '6/6' with 6
  converted.
"""
import os, pty, re, select, subprocess, sys, tempfile, time

ptxwave, ptx_dir = sys.argv[1], sys.argv[2]
inputs = [os.path.join(ptx_dir, n) for n in ('vector_add.ptx', 'reduce_warp.ptx', 'scan.ptx')]
if any(not os.path.exists(p) for p in inputs):
    print('skipped: tests/cuda .ptx files not built')
    sys.exit(77)
JOBS = 6
fails = []
tmp = tempfile.mkdtemp(prefix='pw-progress-')


def args(bundle):
    return [ptxwave, 'convert', '-j', '1', '--arch', 'gfx942,gfx1100', '-o', bundle] + inputs


# 1. a terminal: stdout and stderr on the pty's slave side
master, slave = pty.openpty()
p = subprocess.Popen(args(os.path.join(tmp, 'tty.ptxwave')), stdin=slave, stdout=slave,
                     stderr=slave, close_fds=True)
os.close(slave)
out = b''
deadline = time.time() + 600
while time.time() < deadline:
    r, _, _ = select.select([master], [], [], 1.0)
    if r:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    elif p.poll() is not None:
        break
p.wait(timeout=60)
os.close(master)
text = out.decode(errors='replace').replace('\r\n', '\n')  # the tty's ONLCR
if p.returncode != 0:
    fails.append(f'tty: exit {p.returncode}: {text[-800:]}')
bar = re.compile(r'\[([#.]{30})\] (\d+)/(\d+) modules  ([0-9.]+)/s  (\d+:\d\d|--:--) left')
updates = [m for m in bar.finditer(text)]
if not updates:
    fails.append(f'tty: no progress bar: {text[-800:]!r}')
else:
    done = [int(m.group(2)) for m in updates]
    if done != sorted(done):
        fails.append(f'tty: done went backwards: {done}')
    if any(int(m.group(3)) != JOBS for m in updates):
        fails.append(f'tty: total is not {JOBS}: {[m.group(3) for m in updates]}')
    last = updates[-1]
    if (int(last.group(2)), last.group(1).count('#')) != (JOBS, 30):
        fails.append(f'tty: the last update is not a full bar of {JOBS}/{JOBS}: {last.group(0)!r}')
    if float(last.group(4)) <= 0 or last.group(5) != '0:00':
        fails.append(f'tty: the last update needs a rate > 0 and 0:00 left: {last.group(0)!r}')
    for m in updates:  # the bar fills in proportion: floor(done / total * 30)
        if m.group(1).count('#') != int(m.group(2)) * 30 // JOBS:
            fails.append(f'tty: bar length wrong: {m.group(0)!r}')
            break
    # every update but the first starts with '\r' (redrawn in place), and
    # no newline comes between updates
    between = [text[a.end():b.start()] for a, b in zip(updates, updates[1:])]
    if any('\n' in s for s in between) or any(text[m.start() - 1] != '\r' for m in updates):
        fails.append(f'tty: updates are not redrawn in place: {text[:600]!r}')
    if 'convert: ' in text:
        fails.append('tty: plain progress lines on a terminal')
    print(f'tty: {len(updates)} bar updates, last {last.group(0)!r}')

# 2. not a terminal
p = subprocess.run(args(os.path.join(tmp, 'pipe.ptxwave')), capture_output=True, text=True,
                   timeout=600)
line = re.compile(r'^convert: (\d+)/(\d+) modules, (\d+) converted, (\d+) skipped, '
                  r'(\d+) unsupported, ([0-9.]+)/s, (\d+:\d\d|--:--) left$')
lines = p.stderr.splitlines()
got = [line.match(l) for l in lines if l.startswith('convert: ')]
if p.returncode != 0 or not got or not all(got):
    fails.append(f'pipe: expected plain progress lines (exit {p.returncode}): {p.stderr[-800:]!r}')
elif (int(got[-1].group(1)), int(got[-1].group(2)), int(got[-1].group(3))) != (JOBS, JOBS, JOBS):
    fails.append(f'pipe: the last line must be {JOBS}/{JOBS}, {JOBS} converted: {got[-1].group(0)}')
else:
    print(f'pipe: {len(got)} lines, last {got[-1].group(0)!r}')
if '\r' in p.stderr or '[#' in p.stderr or '[.' in p.stderr:
    fails.append('pipe: a progress bar where stderr is not a terminal')

for f in fails:
    print('FAIL', f)
print('test_progress:', 'ok' if not fails else f'{len(fails)} failures')
sys.exit(1 if fails else 0)
