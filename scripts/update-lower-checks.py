#!/usr/bin/env python3
"""scripts/update-lower-checks.py [FILE...]: regenerates the CHECK lines of
the lowering FileCheck tests (tests/filecheck/lower/*.ptx), LLVM's
update_test_checks.py way (style.md #11): runs `ptxwave lower` for gfx942
(W64) and gfx1100 (W32), and writes, per kernel, CHECK-LABEL plus
CHECK-NEXT lines where both wave sizes print the same body, else W64- and
W32- lines.  Old generated lines (// CHECK, // W64, // W32) are replaced.
Review the diff before committing it.  Needs build/tools/ptxwave.

Value numbers are not written literally: the first occurrence of %N in a
function becomes a FileCheck capture [[VN:%[0-9]+]] and later ones [[VN]],
as update_test_checks.py does, so a change that renumbers values (one
more instruction early in a kernel) leaves the checks valid while what
they say about each value still holds.  A '[' in front of a value (an
address, a phi's incoming pair) is written {{\[}}: FileCheck would read
'[[[' as the start of a variable.  Files whose checks were written by hand
carry a "NOGEN" line and are skipped."""
import os, re, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ptxwave = os.environ.get('PTXWAVE', os.path.join(root, 'build', 'tools', 'ptxwave'))

def lower(path, target):
    out = subprocess.run([ptxwave, 'lower', path, '--target', target, '--print-ir'],
                         capture_output=True, text=True, check=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = re.match(r'.*kernel @(\S+)\(', line) or re.match(r'func @(\S+)\(', line)
        if m:
            cur = m.group(1)
            funcs[cur] = [line]
        elif cur is not None:
            funcs[cur].append(line)
            if line == '}':
                cur = None
    return funcs

VALUE = re.compile(r'(\[?)%([0-9]+)\b')

def capture(lines):
    """The function's lines with each %N a FileCheck variable VN, defined
    where it first appears (a phi may name a value defined further down)."""
    seen = set()
    def sub(m):
        bracket = '{{\\[}}' if m.group(1) else ''
        n = m.group(2)
        if n in seen:
            return f'{bracket}[[V{n}]]'
        seen.add(n)
        return f'{bracket}[[V{n}:%[0-9]+]]'
    return [VALUE.sub(sub, l) for l in lines]

def checks(prefix, lines):
    # CHECK-LABEL may not define variables: the signature stays literal
    lines = lines[:1] + capture(lines[1:])
    out = [f'// {prefix}-LABEL: {lines[0].rstrip(" {")}']
    out += [f'// {prefix}-NEXT: {l.strip()}' if l.strip() else f'// {prefix}-EMPTY:' for l in lines[1:]]
    return out

def update(path):
    src = [l for l in open(path).read().splitlines() if not re.match(r'// (CHECK|W64|W32)', l)]
    while src and not src[-1].strip():
        src.pop()
    f64, f32 = lower(path, 'gfx942'), lower(path, 'gfx1100')
    gen = []
    for name in f64:
        a, b = f64[name], f32.get(name, [])
        gen.append('')
        if a == b:
            gen += checks('CHECK', a)
        else:
            gen += checks('W64', a) + [''] + checks('W32', b)
    open(path, 'w').write('\n'.join(src + gen) + '\n')

files = sys.argv[1:] or sorted(
    os.path.join(root, 'tests/filecheck/lower', f) for f in os.listdir(os.path.join(root, 'tests/filecheck/lower'))
    if f.endswith('.ptx') and 'NOGEN' not in open(os.path.join(root, 'tests/filecheck/lower', f)).read())
for f in files:
    update(f)
