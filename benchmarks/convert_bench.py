#!/usr/bin/env python3
"""benchmarks/convert_bench.py PTXWAVE [--modules N] [--lib PATH] [--all [DIR]]
                                    [--arch gfx942] [--jobs 2] [--cc 12.1]

Conversion throughput (docs/convert.md), measured in one run:
  the first N modules (default 40; 0 for all) of a library (default libcurand.so.10)
  converted for --arch with -j 1 and with -j JOBS, each into a fresh cache:
  PTX instructions compiled per second, wall time, and the ratio.  No
  assertions: it prints what it measured.

--all [DIR]: the whole toolkit (default /usr/local/cuda/lib64), one
  `ptxwave convert` per library into a scratch bundle with -j JOBS, then per
  library: modules, kernels, converted / modules (success rate), seconds, and
  the most common reasons for failures.  Hours on 2 cores; not in CI.
"""
import argparse, glob, json, os, resource, shutil, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument('ptxwave')
ap.add_argument('--modules', type=int, default=40)
ap.add_argument('--lib', default='/usr/local/cuda/lib64/libcurand.so.10')
ap.add_argument('--arch', default='gfx942')
ap.add_argument('--jobs', type=int, default=2)
ap.add_argument('--cc', default='12.1')  # the libraries' PTX is sm_120/sm_121
ap.add_argument('--all', nargs='?', const='/usr/local/cuda/lib64', default=None)
a = ap.parse_args()
tmp = tempfile.mkdtemp(prefix='pw-convert-bench-')


def convert(args, cache):
    t = time.time()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    c0 = ru.ru_utime + ru.ru_stime
    p = subprocess.run([a.ptxwave, 'convert', '--json', '--quiet', '--arch', a.arch, '--cc', a.cc] + args,
                       env=dict(os.environ, PTXWAVE_CACHE_DIR=cache), capture_output=True, text=True)
    try:
        j = json.loads(p.stdout)
    except ValueError:
        sys.exit(f'convert failed (exit {p.returncode}): {p.stderr[-2000:]}')
    j['wall'] = time.time() - t
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    j['cpu'] = ru.ru_utime + ru.ru_stime - c0
    return j


if a.all is None:
    if not os.path.exists(a.lib):
        print(f'skipped: {a.lib} not found')
        sys.exit(0)
    res = {}
    for jobs in (1, a.jobs):
        cache = os.path.join(tmp, f'cache-j{jobs}')
        sub = ['--max-modules', str(a.modules)] if a.modules else []
        j = convert(['-j', str(jobs)] + sub + [a.lib], cache)
        res[jobs] = j
        print(f'-j {jobs}: {j["jobs"]} modules ({j["converted"]} converted, {j["unsupported"]} unsupported), '
              f'{j["instructions_compiled"]} PTX instructions in {j["seconds"]:.2f} s: '
              f'{j["instructions_per_second"]:.0f} instructions/s '
              f'({1000 * j["seconds"] / max(1, j["instructions_compiled"]) * 1000:.1f} ms per 1,000); '
              f'CPU {j["cpu"]:.1f} s: {j["instructions_compiled"] / max(1e-9, j["cpu"]):.0f} instructions per CPU second')
    r = res[a.jobs]['instructions_per_second'] / max(1e-9, res[1]['instructions_per_second'])
    print(f'ratio -j {a.jobs} / -j 1: {r:.2f} ({os.cpu_count()} CPUs online, load average '
          f'{os.getloadavg()[0]:.1f}: other work on the machine lowers it; so does one module much '
          f'larger than the rest, which one worker compiles alone)')
else:
    libs = sorted(p for p in glob.glob(os.path.join(a.all, '*.so*'))
                  if os.path.isfile(p) and not os.path.islink(p))
    total = {'modules': 0, 'converted': 0}
    print(f'{"library":36} {"modules":>7} {"kernels":>7} {"converted":>9} {"rate":>6} {"seconds":>8}  reasons')
    for lib in libs:
        bundle = os.path.join(tmp, os.path.basename(lib) + '.ptxwave')
        j = convert(['-j', str(a.jobs), '-o', bundle, lib], os.path.join(tmp, 'cache'))
        for inp in j['inputs']:
            n = inp['converted'] + inp['unsupported'] + inp['skipped']
            ok = inp['converted'] + inp['skipped']
            total['modules'] += n
            total['converted'] += ok
            reasons = ', '.join(f'{r["what"]} ({r["count"]})'
                                for r in sorted(inp['reasons'], key=lambda r: -r['count'])[:5])
            print(f'{os.path.basename(inp["path"]):36} {inp["modules"]:7} {inp["kernels"]:7} {ok:9} '
                  f'{100.0 * ok / max(1, n):5.1f}% {j["seconds"]:8.1f}  {reasons}', flush=True)
        os.remove(bundle) if os.path.exists(bundle) else None
    print(f'toolkit: {total["converted"]}/{total["modules"]} modules converted '
          f'({100.0 * total["converted"] / max(1, total["modules"]):.1f}%)')
shutil.rmtree(tmp, ignore_errors=True)
