#!/usr/bin/env python3
"""tests/convert/test_bundle.py PTXWAVE PTX_DIR SOURCE_ROOT: `ptxwave convert -o`
on .ptx files, the bundle read back by a reader independent of
runtime/rt_bundle.c (the layout of docs/convert.md), in every build
(ASan+UBSan included: no NVIDIA code runs here).

- three tests/cuda .ptx files and tests/filecheck/codegen/unsupported.ptx
  for gfx942 and gfx1100: 3 x 2 converted, the unsupported module reported
  per target with the instruction that stops it ('fma'), exit 0;
- the bundle: magic, version, count = converted, file size, keys sorted
  and distinct, payloads inside the file, 16-byte aligned, ELF code objects
  for AMDGPU (e_machine 224), target names as asked;
- a rerun skips all six and rewrites an equal index; no staging directory
  is left behind;
- a truncated bundle is refused (warning), replaced, and everything is
  converted again.
"""
import json, os, struct, subprocess, sys, tempfile

ptxwave, ptx_dir, root = sys.argv[1], sys.argv[2], sys.argv[3]
names = ['vector_add.ptx', 'reduce_warp.ptx', 'scan.ptx']
inputs = [os.path.join(ptx_dir, n) for n in names]
inputs.append(os.path.join(root, 'tests', 'filecheck', 'codegen', 'unsupported.ptx'))
missing = [p for p in inputs if not os.path.exists(p)]
if missing:
    print('skipped: not built:', missing)
    sys.exit(77)
fails = []
tmp = tempfile.mkdtemp(prefix='pw-bundle-')
bundle = os.path.join(tmp, 'b.ptxwave')


def convert():
    p = subprocess.run([ptxwave, 'convert', '--json', '-j', '2', '--arch', 'gfx942,gfx1100',
                        '-o', bundle] + inputs, capture_output=True, text=True, timeout=600)
    try:
        return p, json.loads(p.stdout)
    except ValueError:
        fails.append(f'no JSON (exit {p.returncode}): {p.stdout[-500:]} {p.stderr[-1500:]}')
        return p, None


def read_bundle(path):
    if not os.path.exists(path):
        fails.append(f'{path} was not written')
        return []
    data = open(path, 'rb').read()
    if data[:8] != b'PTXWBND1':
        fails.append('bad magic')
        return []
    ver, count, size = struct.unpack_from('<IIQ', data, 8)
    if ver != 1 or size != len(data):
        fails.append(f'version {ver}, size {size} for a file of {len(data)}')
    rows = []
    for i in range(count):
        r = data[32 + 64 * i:32 + 64 * (i + 1)]
        key, off, n, target = r[:16], *struct.unpack_from('<QQ', r, 32), r[48:64].rstrip(b'\0').decode()
        if off % 16 or off + n > len(data) or off < 32 + 64 * count:
            fails.append(f'entry {i}: payload at {off}+{n} outside the data area')
            continue
        obj = data[off:off + n]
        if obj[:4] != b'\x7fELF' or struct.unpack_from('<H', obj, 18)[0] != 224:
            fails.append(f'entry {i}: not an AMDGPU ELF code object')
        rows.append((key, target))
    keys = [k for k, _ in rows]
    if keys != sorted(keys) or len(set(keys)) != len(keys):
        fails.append('index keys not sorted and distinct')
    return rows


p, j = convert()
if j:
    if p.returncode != 0:
        fails.append(f'first run: exit {p.returncode}: {p.stderr[-1500:]}')
    if (j['converted'], j['unsupported'], j['skipped']) != (6, 2, 0):
        fails.append(f'first run: expected 6 converted, 2 unsupported: {json.dumps(j)}')
    bad = [i for i in j['inputs'] if i['path'].endswith('unsupported.ptx')]
    if not bad or [r['what'] for r in bad[0]['reasons']] != ['fma']:
        fails.append(f'unsupported.ptx: expected the reason fma: {bad}')
rows = read_bundle(bundle)
if len(rows) != 6 or sorted({t for _, t in rows}) != ['gfx1100', 'gfx942']:
    fails.append(f'bundle: expected 6 entries for gfx942 and gfx1100: {rows}')
if os.path.exists(bundle + '.parts'):
    fails.append('staging directory left behind')

p, j = convert()
if j and (j['converted'], j['skipped']) != (0, 6):
    fails.append(f'rerun: expected all 6 skipped: {json.dumps(j)}')
if read_bundle(bundle) != rows:
    fails.append('rerun: the bundle changed')

if os.path.exists(bundle):
    with open(bundle, 'r+b') as f:
        f.truncate(os.path.getsize(bundle) - 100)
p, j = convert()
if j and (j['converted'], j['skipped']) != (6, 0):
    fails.append(f'truncated bundle: expected everything converted again: {json.dumps(j)}')
if 'not a valid bundle' not in p.stderr:
    fails.append(f'truncated bundle: no warning: {p.stderr[-800:]}')
if read_bundle(bundle) != rows:
    fails.append('truncated bundle: not rebuilt as before')

for f in fails:
    print('FAIL', f)
print('test_bundle:', 'ok' if not fails else f'{len(fails)} failures')
sys.exit(1 if fails else 0)
