#!/usr/bin/env python3
"""tests/convert/test_bundle.py PTXWAVE PTX_DIR SOURCE_ROOT: `ptxwave convert -o`
on .ptx files, the bundle read back by a reader independent of
runtime/rt_bundle.c (the layout of docs/convert.md), in every build
(ASan+UBSan included: no NVIDIA code runs here).

- three tests/cuda .ptx files and tests/convert/unsupported.ptx
  for gfx942 and gfx1100: 3 x 2 converted, the unsupported module reported
  per target with the reason that stops it ('undefined symbol'), exit 0;
- the bundle: magic, version, count = converted, file size, keys sorted
  and distinct, payloads inside the file, 16-byte aligned, ELF code objects
  for AMDGPU (e_machine 224), target names as asked;
- the two failures are recorded in the bundle too (payload "PTXWFAIL" then
  the reason, under the failure key): a rerun skips all six, reports the
  two unsupported from their records ('failed_before' 2, reason still
  'undefined symbol') without compiling them, and rewrites an equal index; no staging
  directory is left behind;
- --retry-unsupported compiles the two again (failed_before 0);
- a truncated bundle is refused (warning), replaced, and everything is
  converted again;
- the same records in the kernel cache (--into-cache --cache-dir): one
  module converted and one unsupported give 2 cache entries; the rerun
  skips one and knows the other failed.
"""
import json, os, struct, subprocess, sys, tempfile

ptxwave, ptx_dir, root = sys.argv[1], sys.argv[2], sys.argv[3]
names = ['vector_add.ptx', 'reduce_warp.ptx', 'scan.ptx']
inputs = [os.path.join(ptx_dir, n) for n in names]
inputs.append(os.path.join(root, 'tests', 'convert', 'unsupported.ptx'))
missing = [p for p in inputs if not os.path.exists(p)]
if missing:
    print('skipped: not built:', missing)
    sys.exit(77)
fails = []
tmp = tempfile.mkdtemp(prefix='pw-bundle-')
bundle = os.path.join(tmp, 'b.ptxwave')


def convert(extra=(), dest=None, files=None, arch='gfx942,gfx1100'):
    dest = ['-o', bundle] if dest is None else dest
    p = subprocess.run([ptxwave, 'convert', '--json', '-j', '2', '--arch', arch] +
                       list(extra) + dest + (files or inputs), capture_output=True, text=True,
                       timeout=600)
    try:
        return p, json.loads(p.stdout)
    except ValueError:
        fails.append(f'no JSON (exit {p.returncode}): {p.stdout[-500:]} {p.stderr[-1500:]}')
        return p, None


def read_bundle(path):
    """The code objects' (key, target); failure records go to failures[]."""
    del failures[:]
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
    rows, keys = [], []
    for i in range(count):
        r = data[32 + 64 * i:32 + 64 * (i + 1)]
        keys.append(r[:16])
        key, off, n, target = r[:16], *struct.unpack_from('<QQ', r, 32), r[48:64].rstrip(b'\0').decode()
        if off % 16 or off + n > len(data) or off < 32 + 64 * count:
            fails.append(f'entry {i}: payload at {off}+{n} outside the data area')
            continue
        obj = data[off:off + n]
        if obj.startswith(b'PTXWFAIL'):
            failures.append((key, target, obj[8:].decode()))
            continue
        if obj[:4] != b'\x7fELF' or struct.unpack_from('<H', obj, 18)[0] != 224:
            fails.append(f'entry {i}: not an AMDGPU ELF code object')
        rows.append((key, target))

    if keys != sorted(keys) or len(set(keys)) != len(keys):
        fails.append('index keys not sorted and distinct')
    return rows


failures = []
p, j = convert()
if j:
    if p.returncode != 0:
        fails.append(f'first run: exit {p.returncode}: {p.stderr[-1500:]}')
    if (j['converted'], j['unsupported'], j['skipped']) != (6, 2, 0):
        fails.append(f'first run: expected 6 converted, 2 unsupported: {json.dumps(j)}')
    bad = [i for i in j['inputs'] if i['path'].endswith('unsupported.ptx')]
    if not bad or [r['what'] for r in bad[0]['reasons']] != ['undefined symbol']:
        fails.append(f'unsupported.ptx: expected the reason undefined symbol: {bad}')
rows = read_bundle(bundle)
if len(rows) != 6 or sorted({t for _, t in rows}) != ['gfx1100', 'gfx942']:
    fails.append(f'bundle: expected 6 entries for gfx942 and gfx1100: {rows}')
if sorted((t, why) for _, t, why in failures) != [('gfx1100', 'undefined symbol'), ('gfx942', 'undefined symbol')]:
    fails.append(f'bundle: expected the failure records undefined symbol for both targets: {failures}')
if os.path.exists(bundle + '.parts'):
    fails.append('staging directory left behind')

def counts(j):
    return (j['converted'], j['skipped'], j['unsupported'], j['failed_before'])


def reasons(j):
    return [[r['what'] for r in i['reasons']] for i in j['inputs'] if i['unsupported']]


p, j = convert()
if j and (counts(j) != (0, 6, 2, 2) or reasons(j) != [['undefined symbol']]):
    fails.append(f'rerun: expected 6 skipped and 2 known unsupported (undefined symbol): {json.dumps(j)}')
if read_bundle(bundle) != rows or len(failures) != 2:
    fails.append('rerun: the bundle changed')
if j:
    print(f'rerun: {j["skipped"]} skipped, {j["failed_before"]} unsupported known from before')

p, j = convert(['--retry-unsupported'])
if j and counts(j) != (0, 6, 2, 0):
    fails.append(f'--retry-unsupported: expected the 2 unsupported compiled again: {json.dumps(j)}')

if os.path.exists(bundle):
    with open(bundle, 'r+b') as f:
        f.truncate(os.path.getsize(bundle) - 100)
p, j = convert()
if j and counts(j) != (6, 0, 2, 0):
    fails.append(f'truncated bundle: expected everything converted again: {json.dumps(j)}')
if 'not a valid bundle' not in p.stderr:
    fails.append(f'truncated bundle: no warning: {p.stderr[-800:]}')
if read_bundle(bundle) != rows:
    fails.append('truncated bundle: not rebuilt as before')

# the kernel cache keeps the failure records the same way
cache = os.path.join(tmp, 'cache')
two = [inputs[0], inputs[3]]  # vector_add.ptx, unsupported.ptx
for run, want in ((1, (1, 0, 1, 0)), (2, (0, 1, 1, 1))):
    p, j = convert(dest=['--into-cache', '--cache-dir', cache], files=two,
                   arch='gfx942')
    if j and counts(j) != want:
        fails.append(f'cache run {run}: expected (converted, skipped, unsupported, '
                     f'failed_before) {want}: {json.dumps(j)}')
entries = [f for f in os.listdir(cache) if f.endswith('.pwc')] if os.path.isdir(cache) else []
if len(entries) != 2:
    fails.append(f'cache: expected 2 entries (a code object, a failure record): {entries}')

for f in fails:
    print('FAIL', f)
print('test_bundle:', 'ok' if not fails else f'{len(fails)} failures')
sys.exit(1 if fails else 0)
