#!/usr/bin/env python3
"""tests/runtime/test_hip.py FAKE_HIP HIP_CLIENT: the HIP backend against a
recording stand-in for libamdhip64 (fake_hip.c).

Checks, from hand-computed expectations: the backend is chosen and named;
copy directions (hipMemcpyKind 1 H2D, 3 D2D, 2 D2H) and sizes; memsets;
launch dimensions, dynamic shared memory, stream, and the kernarg bytes
(CUDA's .param layout, identical through kernelParams and through
CU_LAUNCH_PARAM_BUFFER_POINTER); the kernel cache (first run compiles one
module, the second compiles none); device printf and assert (records the
stand-in leaves in the runtime's printf buffer, formatted at the stream
synchronise; an assert makes it fail with CUDA_ERROR_ASSERT); and that a
machine with no GPU falls back to the emulator.  These run twice: with PTXWAVE_HIP_PASSTHROUGH=1 (the
PTX text goes to hipModuleLoadData), and compiling for real, where the image
hipModuleLoadData receives must be an AMDGPU code object (ELF64, e_machine
EM_AMDGPU = 224, a defined symbol k.kd for the client's kernel k), parsed
here from the ELF specification, and the second run must compile nothing.

The device (fake_hip.c answers hipDeviceGetAttribute and
hipGetDevicePropertiesR0600 with values unlike the runtime's defaults): the
CUDA attributes come from HIP (104 SMs, clock 1700000 kHz, 64 KiB opt-in
shared memory, warp 32 as always), and the code object is for the device's
arch, gfx90a from gcnArchName "gfx90a:sramecc+:xnack-" (ELF e_flags
EF_AMDGPU_MACH 0x3f), or gfx1100 (0x41) when PTXWAVE_HIP_ARCH overrides it
(AMDGPU ELF e_flags values: LLVM's AMDGPUUsage).  A HIP that does not know
the shared memory and warp size attributes (PW_FAKE_HIP_NO_ATTRS) gets the
device arch's wave size and LDS (gfx950: 64, 160 KiB; gfx1100: 32, 64 KiB).

Events: records go to hipEventRecord on the user stream without
synchronising it (one hipStreamSynchronize in the log: the client's own);
the stand-in keeps an event pending for one query (PW_FAKE_HIP_PENDING=1),
so cuEventQuery answers CUDA_ERROR_NOT_READY (600) and, after
cuEventSynchronize, 0; cuEventElapsedTime is the stand-in's 1.5 ms.

JIT in a helper process (the default): a crash injected in the helper
(PTXWAVE_JIT_TEST_CRASH=1, it aborts) fails cuModuleLoadData with
CUDA_ERROR_INVALID_PTX (218) and a message naming the signal, and the client
process itself exits normally; a helper that hangs (PTXWAVE_JIT_TEST_CRASH=hang)
is stopped at PTXWAVE_JIT_TIMEOUT=1 with the same error and a message naming
the limit; PTXWAVE_JIT=inprocess compiles in the client
(the helper's crash switch then has no effect); a helper of another ptxwave
version refuses and the client compiles in process, with a warning.
"""
import os, subprocess, sys, tempfile

fake, client = sys.argv[1], sys.argv[2]
fails = []
tmp = tempfile.mkdtemp()
log = os.path.join(tmp, 'hip.log')
import struct

def elf_symbols(b):
    """(e_machine, names of the defined symbols of .symtab/.dynsym) of ELF64 LE bytes."""
    if b[:4] != b'\x7fELF' or b[4] != 2 or b[5] != 1:
        return None, set()
    machine = struct.unpack_from('<H', b, 0x12)[0]
    shoff, = struct.unpack_from('<Q', b, 0x28)
    shentsize, shnum = struct.unpack_from('<HH', b, 0x3a)
    secs = [struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize) for i in range(shnum)]
    names = set()
    for (_, typ, _, _, off, size, link, _, _, entsize) in secs:
        if typ not in (2, 11):  # SHT_SYMTAB, SHT_DYNSYM
            continue
        stroff = secs[link][4]
        for j in range(size // entsize):
            st_name, _, _, st_shndx = struct.unpack_from('<IBBH', b, off + j * entsize)
            if st_shndx:
                end = b.index(b'\0', stroff + st_name)
                names.add(b[stroff + st_name:end].decode())
    return machine, names

base = dict(os.environ, PTXWAVE_HIP_LIBRARY=fake, PW_FAKE_HIP_LOG=log, PTXWAVE_BACKEND='hip',
            PTXWAVE_LOG='info', PW_FAKE_HIP_PENDING='1')
for k in ('PTXWAVE_HIP_ARCH', 'PTXWAVE_JIT', 'PTXWAVE_JIT_HELPER', 'PTXWAVE_JIT_TEST_CRASH', 'PTXWAVE_JIT_TIMEOUT',
          'PW_FAKE_HIP_ARCH'):
    base.pop(k, None)
MACH = {'gfx90a': 0x3f, 'gfx942': 0x4c, 'gfx1100': 0x41}


def elf_mach(b):
    return struct.unpack_from('<I', b, 0x30)[0] & 0xff if b[:4] == b'\x7fELF' else None


def run(e):
    if os.path.exists(log):
        os.remove(log)
    p = subprocess.run([client], env=e, capture_output=True, text=True, timeout=300)
    lines = open(log).read().splitlines() if os.path.exists(log) else []
    return p, lines

for mode in ('passthrough', 'compile'):
  env = dict(base, PTXWAVE_CACHE_DIR=os.path.join(tmp, 'cache-' + mode))
  if mode == 'passthrough':
    env['PTXWAVE_HIP_PASSTHROUGH'] = '1'
  else:
    env.pop('PTXWAVE_HIP_PASSTHROUGH', None)

  p, lines = run(env)
  if p.returncode != 0 or 'hip_client: ok' not in p.stdout:
      fails.append(f'{mode}: client failed: {p.returncode} {p.stdout} {p.stderr}')
  if 'device: Fake AMD GPU' not in p.stdout:
      fails.append('device name not from HIP')
  if 'backend hip:' not in p.stderr:
      fails.append('backend choice not logged as hip')
  # CUDA_ERROR_NOT_SUPPORTED (801), the backend named in the log
  if 'cooperative: attribute 0, launch 801' not in p.stdout:
      fails.append(f'{mode}: cooperative launch not refused: {p.stdout}')
  if 'cooperative launch (grid.sync) is not supported on the hip backend' not in p.stderr:
      fails.append(f'{mode}: cooperative refusal not logged')

  def expect(line):
      if line not in lines:
          fails.append(f'missing: {line!r}')

  expect('hipMalloc 64')
  expect('hipMemcpy kind=1 bytes=16')
  expect('hipMemcpy kind=3 bytes=16')
  expect('hipMemcpy kind=2 bytes=16')
  expect(f'hipMemsetD32 {0x01020304} 4')
  expect('hipMemcpyAsync kind=1 bytes=8 stream=user')
  kernarg = ('8877665544332211' + 'd4c3b2a1' + '0000803f' + '5a' + '00' * 7 +
             '0102030405060708090a0b0c')
  expect(f'hipModuleLaunchKernel k grid=3,2,1 block=64,1,1 shared=128 stream=user '
         f'kernelParams=null kernarg={kernarg}')
  expect(f'hipModuleLaunchKernel k grid=1,1,1 block=32,2,1 shared=0 stream=null '
         f'kernelParams=null kernarg={kernarg}')
  expect('hipStreamSynchronize user')
  if 'attributes: sms 104, clock 1700000, smem optin 65536, warp 32' not in p.stdout:
      fails.append(f'{mode}: device attributes not from HIP: {p.stdout}')
  if 'events: query 600, after sync 0, elapsed 1.500 ms' not in p.stdout:
      fails.append(f'{mode}: events not asynchronous through HIP: {p.stdout}')
  for l in ('hipEventCreateWithFlags 0', 'hipEventCreateWithFlags 1', 'hipEventRecord stream=user',
            'hipStreamWaitEvent stream=null 0', 'hipEventSynchronize', 'hipEventElapsedTime'):
      expect(l)
  if lines.count('hipEventRecord stream=user') != 2 or lines.count('hipStreamSynchronize user') != 1:
      fails.append(f'{mode}: expected 2 records and only the client\'s own stream sync: {lines}')
  objpath = log + '.obj'
  if mode == 'compile':
      if not os.path.exists(objpath):
          fails.append(f'compile: no code object reached hipModuleLoadData: {p.stderr[-1500:]}')
      else:
          machine, syms = elf_symbols(open(objpath, 'rb').read())
          if machine != 224:
              fails.append(f'compile: e_machine {machine}, expected EM_AMDGPU 224')
          mach = elf_mach(open(objpath, 'rb').read())
          if mach != MACH['gfx90a']:
              fails.append(f'compile: EF_AMDGPU_MACH {mach:#x}, expected gfx90a (the device) 0x3f')
          if 'k.kd' not in syms or 'k' not in syms:
              fails.append(f'compile: symbols k and k.kd expected, got {sorted(syms)}')
          os.remove(objpath)
  elif os.path.exists(objpath):
      fails.append('passthrough: an ELF image reached hipModuleLoadData')
  if 'modules compiled 1, cache hits 0' not in p.stderr:
      fails.append(f'{mode}: first run: one module compiled, no cache hit expected')

  p, lines = run(dict(env, PTXWAVE_LOG='debug'))
  # a hit takes the parameter layouts from the code object's metadata (the
  # PTX is not parsed); passthrough images have none: parsed at the lookup.
  # Either way the kernarg bytes are the hand-computed ones.
  how = 'from the code object' if mode == 'compile' else 'from the PTX at the first kernel lookup'
  if f'parameter layouts {how}' not in p.stderr:
      fails.append(f'{mode}: second run: layouts expected {how}: {p.stderr[-800:]}')
  expect(f'hipModuleLaunchKernel k grid=3,2,1 block=64,1,1 shared=128 stream=user '
         f'kernelParams=null kernarg={kernarg}')
  expect(f'hipModuleLaunchKernel k grid=1,1,1 block=32,2,1 shared=0 stream=null '
         f'kernelParams=null kernarg={kernarg}')
  if os.path.exists(log + '.obj') != (mode == 'compile'):
      fails.append(f'{mode}: second run: the cached image must reach hipModuleLoadData')
  if 'modules compiled 0, cache hits 1' not in p.stderr:
      fails.append(f'{mode}: second run: the module must come from the cache: {p.stderr[-800:]}')

# Device printf (rt_printf.c): the stand-in's modules have __ptxwave_printf
# and each of the client's two launches leaves one record (fake_hip.c), so
# the stream synchronise prints two lines, formatted as C's printf would:
# printf("fake %d %s %5.2f %llx|%c%%\n", 42, "from hip", 3.14159, 0xabcdef, 'Z').
penv = dict(base, PTXWAVE_CACHE_DIR=os.path.join(tmp, 'cache-printf'), PTXWAVE_HIP_PASSTHROUGH='1',
            PW_FAKE_HIP_PRINTF='1')
p, lines = run(penv)
line = 'fake 42 from hip  3.14 abcdef|Z%\n'
if p.returncode != 0 or p.stdout.count(line) != 2 or 'hip_client: ok' not in p.stdout:
    fails.append(f'printf: two formatted lines expected: {p.returncode} {p.stdout!r} {p.stderr[-800:]}')
if 'hipModuleGetGlobal __ptxwave_printf' not in lines or f'hipMalloc {16 + (1 << 20)}' not in lines:
    fails.append('printf: the module variable must get a buffer of 16 + 1 MiB')
# ... and an assert record after it: the synchronise fails with
# CUDA_ERROR_ASSERT (710) and CUDA's message goes to stderr.
p, lines = run(dict(penv, PW_FAKE_HIP_PRINTF='assert'))
msg = 'k.cu:7: void k(): block: [2,0,0], thread: [3,1,0] Assertion `n < 4` failed.'
if p.returncode == 0 or '= 710' not in p.stderr or p.stderr.count(msg) != 2 or p.stdout.count(line) != 2:
    fails.append(f'assert: 710 and the message expected: {p.returncode} {p.stdout!r} {p.stderr[-800:]}')
# a HIP that does not know the shared memory and warp size attributes: the
# defaults are the device arch's row of the target table; expected values
# from AMDGPUUsage (gfx950: wave64, 160 KiB of LDS; gfx1100: wave32, 64 KiB)
for arch, wave, lds in (('gfx950', 64, 160), ('gfx1100', 32, 64)):
    p, lines = run(dict(base, PTXWAVE_HIP_PASSTHROUGH='1', PTXWAVE_CACHE_DIR=os.path.join(tmp, 'cache-noattr'),
                        PW_FAKE_HIP_ARCH=arch + ':xnack-', PW_FAKE_HIP_NO_ATTRS='74,76,87'))
    if (p.returncode != 0 or f'smem optin {lds * 1024}, warp 32' not in p.stdout or
            f'{arch} ({arch}:xnack-), 104 compute units, wave {wave}, LDS {lds} KiB' not in p.stderr):
        fails.append(f'{arch} defaults: expected wave {wave}, LDS {lds} KiB from the target table: '
                     f'{p.stdout} {p.stderr[-800:]}')
# the arch override, the JIT helper and a crash in it
cdir = os.path.join(tmp, 'cache-jit')
envc = dict(base, PTXWAVE_CACHE_DIR=cdir)
p, lines = run(dict(envc, PTXWAVE_HIP_ARCH='gfx1100'))
obj = open(log + '.obj', 'rb').read() if os.path.exists(log + '.obj') else b''
if elf_mach(obj) != MACH['gfx1100'] or 'modules compiled 1' not in p.stderr:
    fails.append(f'PTXWAVE_HIP_ARCH=gfx1100: expected a gfx1100 code object: {p.stderr[-800:]}')
if 'JIT in a helper process' not in p.stderr:
    fails.append(f'the JIT must run in a helper process by default: {p.stderr[-800:]}')
# a helper that dies fails the load with 218 and the client goes on; so does one
# that never finishes, stopped at PTXWAVE_JIT_TIMEOUT (alarm in the helper)
for what, extra, needle in (
        ('crash', {'PTXWAVE_JIT_TEST_CRASH': '1'}, 'JIT helper died (signal 6'),
        ('hang', {'PTXWAVE_JIT_TEST_CRASH': 'hang', 'PTXWAVE_JIT_TIMEOUT': '1'},
         'ran past its time limit (PTXWAVE_JIT_TIMEOUT=1 seconds)')):
    p, lines = run(dict(envc, PTXWAVE_CACHE_DIR=cdir + '-' + what, **extra))
    if p.returncode != 1 or 'cuModuleLoadData(&m, ptx) = 218' not in p.stderr or needle not in p.stderr:
        fails.append(f'helper {what}: expected CUDA_ERROR_INVALID_PTX and the client alive: exit '
                     f'{p.returncode} {p.stderr[-1200:]}')
    else:
        print(f'helper {what}: cuModuleLoadData = 218, the client went on and exited 1')
# the application killed mid-compile: its helper ends with it (PR_SET_PDEATHSIG)
# and removes its temporary directory, instead of compiling on to its limit
import glob, signal, time
jtmp = os.path.join(tmp, 'jit-tmp')
os.makedirs(jtmp, exist_ok=True)
cp = subprocess.Popen([client], env=dict(envc, PTXWAVE_CACHE_DIR=cdir + '-killed', TMPDIR=jtmp,
                                         PTXWAVE_JIT_TEST_CRASH='hang', PTXWAVE_JIT_TIMEOUT='0'),
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def children(pid):
    out = []
    for d in os.listdir('/proc'):
        try:
            st = open(f'/proc/{d}/stat').read() if d.isdigit() else ''
        except OSError:
            continue
        if st and int(st.rsplit(')', 1)[1].split()[1]) == pid:
            out.append(int(d))
    return out

def alive(pid):
    try:
        return open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False

helpers, t0 = [], time.time()
while not helpers and time.time() - t0 < 60 and cp.poll() is None:
    helpers = children(cp.pid)
    time.sleep(0.05)
time.sleep(0.5)   # into its wait
cp.kill()
cp.wait()
t0 = time.time()
while any(alive(h) for h in helpers) and time.time() - t0 < 10:
    time.sleep(0.05)
left = [h for h in helpers if alive(h)]
dirs = glob.glob(os.path.join(jtmp, 'ptxwave-jit.*'))
if not helpers or left or dirs:
    fails.append(f'application killed mid-compile: helpers {helpers}, still running {left}, '
                 f'directories left {dirs}')
    for h in left:
        os.kill(h, signal.SIGKILL)
else:
    print(f'application killed mid-compile: its helper ended in {time.time() - t0:.2f} s, '
          'its directory removed')

p, lines = run(dict(envc, PTXWAVE_JIT_TEST_CRASH='1', PTXWAVE_JIT='inprocess',
                    PTXWAVE_CACHE_DIR=cdir + '-inprocess'))
if p.returncode != 0 or 'modules compiled 1' not in p.stderr or 'JIT in process' not in p.stderr:
    fails.append(f'PTXWAVE_JIT=inprocess: expected the compile here: {p.stderr[-800:]}')

# a helper of another ptxwave version refuses (exit 3: the runtime would cache
# its output under its own version); the runtime then compiles in process
ptxwave = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(client))), 'tools', 'ptxwave')
old_helper = os.path.join(tmp, 'old-helper')
with open(old_helper, 'w') as f:
    f.write(f'#!/bin/sh\nexec {ptxwave} jit "$2" "$3" "$4" "$5" ptxwave-0.0-older\n')
os.chmod(old_helper, 0o755)
p, lines = run(dict(envc, PTXWAVE_JIT_HELPER=old_helper, PTXWAVE_CACHE_DIR=cdir + '-old'))
if (p.returncode != 0 or 'modules compiled 1' not in p.stderr or
        'another ptxwave version' not in p.stderr or 'compiling in this process' not in p.stderr):
    fails.append(f'helper of another version: expected a warning and an in-process compile: '
                 f'{p.stderr[-1000:]}')

# a captured graph replayed on HIP (hip_graph_client.c): nothing reaches HIP
# while capturing, then each cuGraphLaunch replays the four operations in order
gclient = os.path.join(os.path.dirname(os.path.abspath(client)), 'hip_graph_client')
if os.path.exists(log):
    os.remove(log)
p = subprocess.run([gclient], env=dict(base, PTXWAVE_HIP_PASSTHROUGH='1', PTXWAVE_CACHE_DIR=cdir + '-graph'),
                   capture_output=True, text=True, timeout=120)
glines = open(log).read().splitlines() if os.path.exists(log) else []
def ops(ls):
    return [l for l in ls if l.startswith(('hipModuleLaunchKernel', 'hipMemsetD32Async', 'hipMemsetD32 ',
                                           'hipMemsetD8 '))]
seq = ops(glines)
one = ['hipModuleLaunchKernel k grid=1,1,1', 'hipModuleLaunchKernel k grid=2,1,1', 'hipMemsetD32',
       'hipModuleLaunchKernel k grid=3,1,1']
want = ['hipMemsetD8 0 7'] + one + one + ['hipMemsetD8 0 9']
args = ['0a000000', '14000000', None, '1e000000'] * 2
got_ok = p.returncode == 0 and len(seq) >= len(want) and seq[-len(want):] and all(
    g.startswith(w) for g, w in zip(seq[-len(want):], want))
if got_ok:
    tail = seq[-len(want):][1:-1]
    got_ok = all(a is None or ('kernarg=' + a) in t for t, a in zip(tail, args)) and \
        all('stream=user' in t for t in tail if t.startswith('hipModule')) and \
        len([l for l in ops(glines) if l.startswith('hipModuleLaunchKernel')]) == 6
if not got_ok:
    fails.append(f'graph replay on HIP: exit {p.returncode}, saw {seq} {p.stderr[-600:]}')
else:
    print('graph replay on HIP: two launches replayed the captured 3 kernels and memset in order')

# managed memory, two devices, IPC and VMM mapped to HIP (hip_memory_client.c)
mclient = os.path.join(os.path.dirname(os.path.abspath(client)), 'hip_memory_client')
if os.path.exists(log):
    os.remove(log)
p = subprocess.run([mclient], env=dict(base, PW_FAKE_HIP_DEVICES='2', PTXWAVE_CACHE_DIR=cdir + '-umem'),
                   capture_output=True, text=True, timeout=120)
mlines = open(log).read().splitlines() if os.path.exists(log) else []
if p.returncode != 0 or 'hip_memory_client: ok' not in p.stdout:
    fails.append(f'memory families on HIP: client failed: {p.returncode} {p.stdout} {p.stderr[-800:]}')
want_in_order = [
    'hipMemGetAllocationGranularity 0',              # once, at start: the backend's granularity
    'hipSetDevice 1',                                # device 1's context made current
    'hipMallocManaged 4096 flags=1 dev=1',
    'hipMemPrefetchAsync 4096 dev=1 stream=user',
    'hipMemAdvise 4096 advice=1 dev=0',              # read mostly: no device
    'hipMemAdvise 4096 advice=3 dev=1',              # preferred location
    'hipMemPrefetchAsync 4096 dev=-1 stream=user',   # the host: hipCpuDeviceId
    'hipMalloc 256',                                 # on device 1
    'hipSetDevice 0',
    'hipMalloc 256',                                 # on device 0
    'hipDeviceGetP2PAttribute 1 0 1',                # ACCESS_SUPPORTED (CUDA 2) is HIP's 1
    'hipDeviceEnablePeerAccess 1 from 0',
    'hipMemcpyPeer 256 0<-1',
    'hipDeviceDisablePeerAccess 1 from 0',
    'hipIpcGetMemHandle',
    'hipIpcGetEventHandle',
    'hipIpcOpenMemHandle flags=1',
    'hipIpcCloseMemHandle',
    'hipIpcOpenEventHandle',
    'hipMemCreate 131072 type=1 handles=1 loc=1,1',  # 2 x the stand-in's 64 KiB, fd-exportable, device 1
    'hipMemAddressReserve 131072',
    'hipMemMap 131072 offset=0',
    'hipMemSetAccess 131072 loc=1,1 flags=3 count=1',
    'hipMemExportToShareableHandle type=1',
    'hipMemImportFromShareableHandle type=1',
    'hipMemUnmap 131072',
    'hipMemRelease',
    'hipMemAddressFree 131072',
]
at = 0
for w in want_in_order:
    while at < len(mlines) and mlines[at] != w:
        at += 1
    if at == len(mlines):
        fails.append(f'memory families on HIP: {w!r} missing or out of order: {mlines}')
        break
    at += 1
if 'vmm: granularity 65536' not in p.stdout:
    fails.append(f'memory families on HIP: the granularity is not HIP\'s: {p.stdout}')
if not any(f.startswith('memory families') for f in fails):
    print('memory families on HIP: managed, peers, IPC and VMM reached their hip* calls in order')

env0 = dict(base, PW_FAKE_HIP_DEVICES='0', PTXWAVE_CACHE_DIR=os.path.join(tmp, 'cache0'), PTXWAVE_BACKEND='auto')
p, lines = run(env0)
if 'backend emu:' not in p.stderr:
    fails.append(f'no GPU: the emulator must take over: {p.stderr[-800:]}')
p = subprocess.run([client], env=dict(env0, PTXWAVE_BACKEND='hip'), capture_output=True,
                   text=True, timeout=60)
if p.returncode == 0:
    fails.append('PTXWAVE_BACKEND=hip with no GPU must fail cuInit')

for f in fails:
    print('FAIL', f)
print('test_hip:', 'ok' if not fails else f'{len(fails)} failures')
sys.exit(1 if fails else 0)
