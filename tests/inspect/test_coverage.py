#!/usr/bin/env python3
"""tests/inspect/test_coverage.py PTXWAVE: `ptxwave inspect --coverage` on a
raw fatbin file built here byte by byte (layout: ptx/fatbin.c; cubins:
ELF64 for EM_CUDA with a .symtab, kernels STT_FUNC with st_other 0x10).

Container 0: a cubin defining k_both and k_sass1 (and a device function
dev_f, not a kernel), PTX defining k_both and k_ptx.  Container 1: a cubin
only, defining k_sass1 again and k_sass2.  By hand: kernels {k_both, k_ptx,
k_sass1, k_sass2} = 4, with PTX {k_both, k_ptx} = 2 (50.0%), SASS only
{k_sass1, k_sass2} = 2; 2 containers, 1 with PTX, 1 cubins only."""
import json, os, struct, subprocess, sys, tempfile

def cubin(syms):  # syms: [(name, info, other)]
    strtab = b'\0' + b''.join(n.encode() + b'\0' for n, _, _ in syms)
    offs, o = [], 1
    for n, _, _ in syms:
        offs.append(o)
        o += len(n) + 1
    symtab = b'\0' * 24 + b''.join(struct.pack('<IBBHQQ', offs[i], s[1], s[2], 0, 0, 0)
                                   for i, s in enumerate(syms))
    str_off = 64
    sym_off = (str_off + len(strtab) + 7) & ~7
    sh_off = (sym_off + len(symtab) + 7) & ~7
    ehdr = b'\x7fELF' + bytes([2, 1, 1]) + b'\0' * 9 + struct.pack(
        '<HHIQQQIHHHHHH', 1, 190, 1, 0, 0, sh_off, 0, 64, 0, 0, 64, 3, 0)
    sh = b'\0' * 64
    sh += struct.pack('<IIQQQQIIQQ', 0, 3, 0, 0, str_off, len(strtab), 0, 0, 1, 0)
    sh += struct.pack('<IIQQQQIIQQ', 0, 2, 0, 0, sym_off, len(symtab), 1, 1, 8, 24)
    img = bytearray(sh_off + len(sh))
    img[0:64] = ehdr
    img[str_off:str_off + len(strtab)] = strtab
    img[sym_off:sym_off + len(symtab)] = symtab
    img[sh_off:] = sh
    return bytes(img)

def entry(kind, arch, payload):
    payload += b'\0' * (-len(payload) % 8)
    vmaj, vmin = (8, 0) if kind == 1 else (1, 8)
    h = struct.pack('<HHIQIIHHIIIQQQ', kind, 0x0101, 0x40, len(payload), 0, 0, vmin, vmaj, arch,
                    0, 0, 0x11, 0, 0)
    return h + payload

def container(entries):
    body = b''.join(entries)
    return struct.pack('<IHHQ', 0xBA55ED50, 1, 16, len(body)) + body

K, D = (0x12, 0x10), (0x12, 0x00)
ptx = (b'.version 8.0\n.target sm_80\n.address_size 64\n'
       b'.visible .entry k_both() { ret; }\n.visible .entry k_ptx() { ret; }\n')
c0 = container([entry(2, 80, cubin([('k_both',) + K, ('k_sass1',) + K, ('dev_f',) + D])),
                entry(1, 80, ptx)])
c1 = container([entry(2, 80, cubin([('k_sass1',) + K, ('k_sass2',) + K]))])
fails = []
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, 'lib.fatbin')
    with open(path, 'wb') as f:
        f.write(c0 + c1)
    p = subprocess.run([sys.argv[1], 'inspect', '--coverage', path], capture_output=True, text=True)
    want = (f'{path}: 4 kernels, 2 with PTX (50.0%), 2 SASS only; 2 containers, 1 with PTX, '
            f'1 cubins only')
    if p.returncode != 0 or p.stdout.strip() != want:
        fails.append(f'text: exit {p.returncode}\n got: {p.stdout.strip()}\nwant: {want}\n{p.stderr}')
    p = subprocess.run([sys.argv[1], 'inspect', '--coverage', '--json', path], capture_output=True,
                       text=True)
    try:
        j = json.loads(p.stdout)['files'][0]
        got = (j['kernels'], j['with_ptx'], j['sass_only'], j['containers'],
               j['containers_with_ptx'], j['containers_cubin_only'], j['errors'])
        if got != (4, 2, 2, 2, 1, 1, 0):
            fails.append(f'json: {got}')
    except (ValueError, KeyError, IndexError) as e:
        fails.append(f'json: {e}: {p.stdout[:500]} {p.stderr[:500]}')
for f in fails:
    print('FAIL', f)
print('test_coverage:', 'ok' if not fails else f'{len(fails)} failures')
sys.exit(1 if fails else 0)
