#!/usr/bin/env python3
"""benchmarks/mma_coverage.py: which matrix instructions each mma form becomes, per target.

    benchmarks/mma_coverage.py [--ptxwave BIN] [--targets T,T...] PATH...

Issue 21's acceptance asks that every `mma.sync` and `wmma.mma` form in the
corpus and in CUDA 13's mma.h reach the matrix instructions of every target
that has them.  This collects the distinct opcode spellings (modifiers and
types) of `mma.*` and `wmma.mma.*` in the PTX files under PATH (the library
corpus, the user-code corpus of benchmarks/user_corpus.sh, tests/cuda's
PTX, which is mma.h's forms), and for each builds a one-instruction kernel
from a real instance of it (its operands loaded from memory, its results
stored), compiles it with `ptxwave compile --emit asm` for each target and
counts the `v_mfma_*` / `v_wmma_*` instructions: 0 means the per-thread
expansion (docs/lowering.md says which forms stay there and why).  It
prints one row per form with its number of instances; nothing is asserted.

Register types are read from nvcc's register names (%f f32, %fd f64, %r
b32, %rd b64, %rs and %h b16, %p pred); other names are taken as b32.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

LINE = re.compile(r'^\s*(?:@!?%?\w+\s+)?((?:mma|wmma\.mma)\.\S+)\s+([^;]*);', re.M)
TYPES = {'f': 'f32', 'fd': 'f64', 'r': 'b32', 'rd': 'b64', 'rs': 'b16', 'h': 'b16', 'p': 'pred'}


def ptx_files(paths):
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for dp, _, fn in os.walk(p):
            for f in sorted(fn):
                if f.endswith('.ptx'):
                    yield os.path.join(dp, f)


def collect(paths):
    example, count = {}, collections.Counter()
    for path in ptx_files(paths):
        try:
            text = open(path, errors='replace').read()
        except OSError:
            continue
        if 'mma.' not in text:
            continue
        for m in LINE.finditer(text):
            op = m.group(1)
            count[op] += 1
            example.setdefault(op, m.group(2))
    return example, count


def kernel(op, operands):
    """A module with one kernel: every source register loaded, op, every result stored."""
    regs = sorted(set(re.findall(r'%([a-z]+)(\d+)', operands)))
    need = collections.defaultdict(int)
    for p, n in regs:
        need[p] = max(need[p], int(n) + 1)
    first = re.match(r'\s*\{([^}]*)\}', operands)
    dst = [d.strip() for d in (first.group(1) if first else operands.split(',')[0]).split(',')]
    body = ['.reg .%s %%%s<%d>;' % (TYPES.get(p, 'b32'), p, n) for p, n in sorted(need.items())]
    body += ['.reg .b64 %cov_p;', '.reg .b32 %cov_w;', 'ld.param.u64 %cov_p, [p];']
    # every register the instruction reads is loaded, also one it writes
    # again (nvcc gives C and D the same registers): an undefined C lets
    # LLVM fold an integer mma's C + product away, matrix instruction and all
    rest = operands[first.end():] if first else operands.split(',', 1)[-1]
    reads = set(re.findall(r'%[a-z]+\d+', rest))
    off = 0
    for p, n in regs:
        name = '%%%s%s' % (p, n)
        if name not in reads:
            continue
        t = TYPES.get(p, 'b32')
        if t == 'pred':
            body += ['ld.global.u32 %%cov_w, [%%cov_p+%d];' % off, 'setp.ne.u32 %s, %%cov_w, 0;' % name]
        else:
            body.append('ld.global.%s %s, [%%cov_p+%d];' % (t.replace('b', 'u'), name, off))
        off += 8
    body.append('%s %s;' % (op, operands))
    for d in dst:
        m = re.match(r'%([a-z]+)', d)
        t = TYPES.get(m.group(1), 'b32') if m else 'b32'
        body.append('st.global.%s [%%cov_p+%d], %s;' % (t.replace('b', 'u'), off, d))
        off += 8
    arch, version = ('sm_120a', '8.7') if 'kind::' in op else ('sm_90', '8.0') if '.f64' in op and 'm16n8' in op \
        else ('sm_89', '8.1') if 'e4m3' in op or 'e5m2' in op else ('sm_80', '8.0')
    return ('.version %s\n.target %s\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n%s\nret;\n}\n'
            % (version, arch, '\n'.join(body)))


def matrix_insts(ptxwave, path, target, tmp):
    out = os.path.join(tmp, 'k.s')
    r = subprocess.run([ptxwave, 'compile', path, '--arch', target, '--emit', 'asm', '-o', out],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return 'error: ' + (r.stderr.strip().splitlines() or ['?'])[-1][:60]
    n = sum(1 for line in open(out) if re.match(r'\s*v_(mfma|wmma|smfmac)_', line))
    return str(n) if n else 'expansion'


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--ptxwave', default=os.path.join(os.path.dirname(__file__), '..', 'build', 'tools', 'ptxwave'))
    ap.add_argument('--targets', default='gfx90a,gfx942,gfx950,gfx1100,gfx1201')
    ap.add_argument('paths', nargs='+')
    a = ap.parse_args()
    targets = a.targets.split(',')
    example, count = collect(a.paths)
    if not example:
        print('no mma or wmma.mma instruction under', ' '.join(a.paths))
        return 1
    print('| form | instances | %s |' % ' | '.join(targets))
    print('|---|---:|%s|' % '|'.join('---' for _ in targets))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'k.ptx')
        for op in sorted(example, key=lambda o: (-count[o], o)):
            with open(path, 'w') as f:
                f.write(kernel(op, example[op]))
            cells = [matrix_insts(a.ptxwave, path, t, tmp) for t in targets]
            print('| `%s` | %d | %s |' % (op, count[op], ' | '.join(cells)))
            sys.stdout.flush()
    return 0


if __name__ == '__main__':
    sys.exit(main())
