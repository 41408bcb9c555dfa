#!/usr/bin/env python3
"""tests/convert/test_convert.py PTXWAVE FAKE_HIP PROGRAM_DIR [CURAND_MODULES [CUBLAS_MODULES]]

Offline conversion end to end (issue 8, docs/convert.md):

1. tests/cuda executables are converted for gfx942 into a fresh kernel
   cache; then each runs under `ptxwave run --backend hip` against the
   recording stand-in for libamdhip64 (tests/runtime/fake_hip.c; it runs no
   kernel, so the programs' own checks are not the verdict here) and the
   runtime's log must show every module loaded and none compiled just in
   time ("modules compiled 0", "cache hits N>0", no "compile failed").
   Control: the same run on an empty cache must try to compile (so the
   check can fail).  Every launch the stand-in records (kernel, dimensions,
   kernarg bytes) must be the same as in a run that compiles the module:
   parameter layouts from the code object's metadata against layouts from
   the parsed PTX (the stand-in's device pointers do not vary by run).
2. The same through bundles next to the binaries (`--bundle-next-to-binary`,
   DIR/prog.ptxwave next to a copy of the program), an empty cache, "bundle
   hits" in the log; with the cache of step 1, which holds the same module,
   still bundle hits and no cache hit (the bundle is asked first).  Then a program whose kernel lives in a shared library
   (built here with nvcc: libpwk.so with static cudart, and a main without
   kernels linked to it): the library's bundle DIR/libpwk.so.ptxwave is
   opened (logged) and the module comes from it, nothing compiled.
3. libcurand.so.10 from the toolkit (its first CURAND_MODULES modules; 0,
   the default, for all 10; its PTX is sm_121, hence --cc 12.1), converted with -j 2
   on a fresh cache and interrupted with SIGINT once two modules are done:
   exit 130, work left; the rerun keeps what was done (skipped >= what the
   first run converted) and finishes; a third run skips everything.
4. libcublas.so.13: its first CUBLAS_MODULES modules (default 3; the whole
   library is a benchmark, too slow for CI).

Skipped (77) without the toolkit's libcurand or the programs, and under
sanitizers (NVIDIA's host code cannot load an ASan build of libcuda.so.1).
"""
import json, os, re, shutil, signal, subprocess, sys, tempfile, time

ptxwave, fake_hip, pdir = sys.argv[1], sys.argv[2], sys.argv[3]
curand_modules = int(sys.argv[4]) if len(sys.argv) > 4 else 0
cublas_modules = int(sys.argv[5]) if len(sys.argv) > 5 else 3
CURAND = '/usr/local/cuda/lib64/libcurand.so.10'
PROGRAMS = ['vector_add', 'reduce_warp', 'scan', 'histogram', 'transpose', 'warp_vote']

if os.environ.get('PW_SANITIZE', 'none') not in ('', 'none'):
    print('skipped: sanitizer build')
    sys.exit(77)
if not os.path.exists(CURAND):
    print(f'skipped: {CURAND} not found (no CUDA toolkit)')
    sys.exit(77)
missing = [p for p in PROGRAMS if not os.path.exists(os.path.join(pdir, p))]
if missing:
    print(f'skipped: tests/cuda programs not built ({", ".join(missing)}): ninja cuda-programs')
    sys.exit(77)

fails = []
tmp = tempfile.mkdtemp(prefix='pw-convert-')


def convert(args, cache=None, timeout=900):
    env = dict(os.environ)
    if cache:
        env['PTXWAVE_CACHE_DIR'] = cache
    t = time.time()
    p = subprocess.run([ptxwave, 'convert', '--json', '--arch', 'gfx942'] + args, env=env,
                       capture_output=True, text=True, timeout=timeout)
    try:
        j = json.loads(p.stdout)
    except ValueError:
        fails.append(f'convert {args}: no JSON (exit {p.returncode}): {p.stdout[-500:]} {p.stderr[-1500:]}')
        j = None
    print(f'convert {" ".join(args)}: exit {p.returncode}, {time.time() - t:.1f}s')
    return p, j


def run_hip(exe, cache, launches=None):
    # the stand-in's device reports gfx942 (gcnArchName), the conversions' target
    hlog = os.path.join(tmp, 'hip.log')
    if os.path.exists(hlog):
        os.remove(hlog)
    env = dict(os.environ, PTXWAVE_HIP_LIBRARY=fake_hip, PW_FAKE_HIP_LOG=hlog,
               PTXWAVE_CACHE_DIR=cache, PTXWAVE_LOG='info', PTXWAVE_CC='80',
               PW_FAKE_HIP_ARCH='gfx942:sramecc+:xnack-')
    env.pop('PTXWAVE_HIP_PASSTHROUGH', None)
    env.pop('PTXWAVE_HIP_ARCH', None)
    env.pop('PTXWAVE_BUNDLES', None)
    p = subprocess.run([ptxwave, 'run', '--backend', 'hip', '--', exe], env=env,
                       capture_output=True, text=True, timeout=300)
    if launches is not None and os.path.exists(hlog):
        launches.extend(l for l in open(hlog).read().splitlines()
                        if l.startswith('hipModuleLaunchKernel'))
    return p.stderr


def last_counts(log):
    m = re.findall(r'modules compiled (\d+), cache hits (\d+), bundle hits (\d+)', log)
    return tuple(map(int, m[-1])) if m else None


# 1. programs into the cache, then run with nothing to compile
cache = os.path.join(tmp, 'cache')
exes = [os.path.join(pdir, p) for p in PROGRAMS]
p, j = convert(['-j', '2'] + exes, cache)
if j:
    if p.returncode != 0:
        fails.append(f'programs: exit {p.returncode}: {p.stderr[-1000:]}')
    if j['converted'] == 0 or j['unsupported'] != 0:
        fails.append(f'programs: expected every module converted: {json.dumps(j)[:1500]}')
    print(f'programs: {j["jobs"]} modules, {j["converted"]} converted, {j["unsupported"]} unsupported')
for exe in exes:
    warm = []
    log = run_hip(exe, cache, warm)
    c = last_counts(log)
    name = os.path.basename(exe)
    # the same program compiling its module (parameter layouts from the
    # parsed PTX) must launch with the same kernarg bytes as when its module
    # comes from the cache (layouts from the code object's metadata); the
    # stand-in's device pointers are the same in both runs
    cold = []
    clog = run_hip(exe, os.path.join(tmp, 'cold-' + name), cold)
    if not cold or cold != warm or (last_counts(clog) or (0,))[0] == 0:
        fails.append(f'{name}: launches from a compiled module and from the cache differ: '
                     f'{len(cold)} / {len(warm)} launches, {cold[:2]} {warm[:2]} {clog[-600:]}')
    else:
        print(f'{name}: {len(warm)} launches, the same kernarg bytes compiled and cached')
    if not c:
        fails.append(f'{name}: no module was loaded on the HIP backend: {log[-1500:]}')
    elif c[0] != 0 or c[1] == 0 or 'compile failed' in log:
        fails.append(f'{name}: compiled just in time: {c} {log[-1500:]}')
    else:
        print(f'{name}: modules compiled {c[0]}, cache hits {c[1]}')
# control: without the conversion the runtime has to compile (and the seam fails)
log = run_hip(exes[0], os.path.join(tmp, 'empty-cache'))
if 'compile failed' not in log and (last_counts(log) or (0,))[0] == 0:
    fails.append(f'control: an empty cache must make the runtime compile: {log[-1000:]}')

# 2. a bundle next to a copy of the program
bdir = os.path.join(tmp, 'bundle')
os.makedirs(bdir)
exe = os.path.join(bdir, PROGRAMS[1])
shutil.copy(exes[1], exe)
p, j = convert(['--bundle-next-to-binary', exe], os.path.join(tmp, 'unused-cache'))
if j and (j['converted'] == 0 or not os.path.exists(exe + '.ptxwave')):
    fails.append(f'bundle: nothing written: {p.stderr[-1000:]}')
if os.path.exists(exe + '.ptxwave.parts'):
    fails.append('bundle: the staging directory was left behind')
log = run_hip(exe, os.path.join(tmp, 'empty-cache-2'))
c = last_counts(log)
if not c or c[0] != 0 or c[2] == 0 or 'compile failed' in log:
    fails.append(f'bundle: modules must come from the bundle: {c} {log[-1500:]}')
else:
    print(f'bundle: modules compiled {c[0]}, bundle hits {c[2]}')
# the bundle comes before the cache: with both holding the module, the bundle serves
log = run_hip(exe, cache)
c = last_counts(log)
if not c or c[0] != 0 or c[1] != 0 or c[2] == 0:
    fails.append(f'bundle and cache: the bundle must be asked first: {c} {log[-1500:]}')
else:
    print(f'bundle before cache: cache hits {c[1]}, bundle hits {c[2]}')

# 2b. a kernel in a shared library: its bundle next to the library
NVCC = '/usr/local/cuda/bin/nvcc'
if os.path.exists(NVCC):
    ldir = os.path.join(tmp, 'shlib')
    os.makedirs(ldir)
    open(os.path.join(ldir, 'lib.cu'), 'w').write(
        '__global__ void pwk_scale(float *x, float a, int n) {\n'
        '  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] *= a;\n}\n'
        'extern "C" int pwk_run(float *h, int n) {\n  float *d;\n'
        '  cudaMalloc(&d, n * sizeof(float));\n'
        '  cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);\n'
        '  pwk_scale<<<(n + 63) / 64, 64>>>(d, 2.0f, n);\n'
        '  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);\n'
        '  cudaFree(d);\n  return (int)cudaGetLastError();\n}\n')
    open(os.path.join(ldir, 'main.cu'), 'w').write(
        '#include <stdio.h>\nextern "C" int pwk_run(float *h, int n);\n'
        'int main(void) {\n  float h[100] = {0};\n  int e = pwk_run(h, 100);\n'
        '  printf("pwk: %d\\n", e);\n  return 0;\n}\n')
    gen = ['-gencode', 'arch=compute_80,code=[sm_80,compute_80]']
    lib = os.path.join(ldir, 'libpwk.so')
    main = os.path.join(ldir, 'pwk_main')
    b1 = subprocess.run([NVCC, '-shared', '-Xcompiler', '-fPIC'] + gen +
                        [os.path.join(ldir, 'lib.cu'), '-o', lib], capture_output=True, text=True)
    b2 = b1.returncode == 0 and subprocess.run(
        [NVCC, os.path.join(ldir, 'main.cu'), '-o', main, '-L' + ldir, '-lpwk',
         '-Xlinker', '-rpath,' + ldir], capture_output=True, text=True)
    if b1.returncode != 0 or not b2 or b2.returncode != 0:
        fails.append(f'shared library: nvcc failed: {b1.stderr[-800:]} {b2.stderr[-800:] if b2 else ""}')
    else:
        p, j = convert(['--bundle-next-to-binary', main, lib], os.path.join(tmp, 'unused-cache-3'))
        if not os.path.exists(lib + '.ptxwave'):
            fails.append(f'shared library: no bundle next to it: {p.stderr[-800:]}')
        log = run_hip(main, os.path.join(tmp, 'empty-cache-3'))
        c = last_counts(log)
        if (not c or c[0] != 0 or c[2] == 0 or 'compile failed' in log or
                f'bundle {lib}.ptxwave: ' not in log):
            fails.append(f'shared library: the module must come from {lib}.ptxwave: {c} {log[-1500:]}')
        else:
            print(f'shared library: {lib}.ptxwave opened, modules compiled {c[0]}, bundle hits {c[2]}')

# 3. libcurand: interrupted by SIGINT once some modules are done, resumed,
#    then a rerun that skips everything.  Its PTX is sm_121 only, so the
#    runtime (and the converter) must report compute capability 12.1.
cache2 = os.path.join(tmp, 'cache2')
sub = ['--cc', '12.1'] + (['--max-modules', str(curand_modules)] if curand_modules else [])
args = [ptxwave, 'convert', '--json', '--arch', 'gfx942', '-j', '2'] + sub + [CURAND]
pr = subprocess.Popen(args, env=dict(os.environ, PTXWAVE_CACHE_DIR=cache2), stdout=subprocess.PIPE,
                      stderr=subprocess.PIPE, text=True)
deadline = time.time() + 600
for line in pr.stderr:  # plain progress lines (stderr is not a terminal)
    m = re.match(r'convert: (\d+)/(\d+) modules, (\d+) converted', line)
    if (m and int(m.group(3)) >= 2) or time.time() > deadline:
        pr.send_signal(signal.SIGINT)
        break
out, err = pr.communicate(timeout=900)
try:
    j1 = json.loads(out)
except ValueError:
    j1 = None
if pr.returncode != 130 or not j1 or not j1['interrupted'] or j1['done'] >= j1['jobs']:
    fails.append(f'SIGINT: expected exit 130 with work left: exit {pr.returncode} {out[-600:]} {err[-600:]}')
else:
    print(f'interrupted: {j1["done"]}/{j1["jobs"]} done, {j1["converted"]} converted')
    p, j = convert(['-j', '2'] + sub + [CURAND], cache2)
    if j and (j['skipped'] < j1['converted'] or j['done'] != j['jobs'] or
              j['converted'] + j['skipped'] + j['unsupported'] != j['jobs']):
        fails.append(f'resume: expected at least {j1["converted"]} skipped and the rest done: '
                     f'{json.dumps(j)[:800]}')
    elif j:
        inp = j['inputs'][0]
        print(f'resumed: {j["skipped"]} skipped, {j["converted"]} converted; libcurand: '
              f'{inp["modules"]} modules, {inp["kernels"]} kernels, '
              f'{j1["converted"] + j["converted"]} converted in the two runs, '
              f'{j["unsupported"]} unsupported {inp["reasons"]}; '
              f'{j["instructions_per_second"]:.0f} PTX instructions/s')
        if j1['converted'] + j['converted'] == 0:
            fails.append('libcurand: nothing converted')
        p, j2 = convert(['-j', '2'] + sub + [CURAND], cache2)
        if j2 and (j2['converted'] != 0 or j2['skipped'] != j['jobs'] - j['unsupported']):
            fails.append(f'rerun: expected {j["jobs"] - j["unsupported"]} skipped and none converted: '
                         f'{j2["converted"]} converted, {j2["skipped"]} skipped')
        elif j2:
            print(f'rerun: {j2["skipped"]} skipped, {j2["converted"]} converted')

# 4. libcublas.so.13: its whole conversion takes tens of minutes on 2 cores
#    (benchmarks/convert_bench.py --lib .../libcublas.so.13 --modules 0),
#    so CI converts its first CUBLAS_MODULES modules (PTX sm_120).
CUBLAS = '/usr/local/cuda/lib64/libcublas.so.13'
if os.path.exists(CUBLAS) and cublas_modules:
    p, j = convert(['-j', '2', '--cc', '12.1', '--max-modules', str(cublas_modules), CUBLAS],
                   os.path.join(tmp, 'cache4'))
    if j:
        print(f'libcublas (first {cublas_modules} modules): {j["converted"]} converted, '
              f'{j["unsupported"]} unsupported {j["inputs"][0]["reasons"]}')
        if j['converted'] == 0 or j['done'] != j['jobs']:
            fails.append(f'libcublas: nothing converted: {json.dumps(j)[:800]}')

shutil.rmtree(tmp, ignore_errors=True)
for f in fails:
    print('FAIL', f)
print('test_convert:', 'ok' if not fails else f'{len(fails)} failures')
sys.exit(1 if fails else 0)
