#!/usr/bin/env python3
"""benchmarks/cg_ab.py: two or more codegen settings, module by module.

    python3 benchmarks/cg_ab.py [--reps 4] [--cg-bench build/benchmarks/cg_bench]
        [--corpus DIR] LIST NAME=OPTIONS NAME=OPTIONS...

LIST names PTX modules, one per line (relative to --corpus, default
/work/corpus, or absolute).  Each NAME=OPTIONS is a setting: OPTIONS are
words given to cg_bench, each an LLVM option (`--llvm WORD`), written
P:TEXT a pass pipeline (`--pipeline TEXT`), or written E:VAR=VALUE an
environment variable of cg_bench (LD_PRELOAD, GLIBC_TUNABLES); an empty OPTIONS is
ptxwave's default.  Example, the backend IR passes ptxwave turns off
against its default (docs/codegen.md "Backend IR passes"):

    cg_ab.py LIST "llvm=-amdgpu-scalar-ir-passes=1 -disable-lsr=0" ptxwave=

Why module by module: on a shared machine the load moves for minutes at a
time, and two whole runs of the same binary differ by 5-10%.  So every
module is compiled under each setting one right after the other (one
cg_bench process each: CPU time of the compile alone), the setting that
goes first rotates between modules and repetitions (a first run tends to
be slower), and each setting's time for a module is the fastest of its
repetitions (noise only ever adds).  After each repetition the sums so far
and their ratios to the first setting are printed; at the end, the ratio
per module.  Nothing is asserted.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--cg-bench", default=os.path.join(ROOT, "build", "benchmarks", "cg_bench"))
    ap.add_argument("--corpus", default="/work/corpus")
    ap.add_argument("--ptxas", action="store_true",
                    help="also time ptxas -O3 -arch=sm_90 on each module (cg_bench --ptxas, "
                    "with every setting's run: its fastest) and print each setting's ratio to it")
    ap.add_argument("list")
    ap.add_argument("settings", nargs="+", metavar="NAME=OPTIONS")
    a = ap.parse_args()
    if len(a.settings) < 2:
        sys.exit("cg_ab: at least two settings")
    mods = []
    for line in open(a.list):
        line = line.strip()
        if line and not line.startswith("#"):
            mods.append(line if os.path.isabs(line) else os.path.join(a.corpus, line))
    settings = []
    for s in a.settings:
        name, _, words = s.partition("=")
        args = []
        env = dict(os.environ)
        for w in words.split():
            if w.startswith("E:"):
                var, _, val = w[2:].partition("=")
                env[var] = val
            else:
                args += ["--pipeline", w[2:]] if w.startswith("P:") else ["--llvm", w]
        settings.append((name, args, env))
    best = {name: {} for name, _, _ in settings}
    ptxas = {}
    for rep in range(a.reps):
        for mi, m in enumerate(mods):
            k = (rep + mi) % len(settings)
            for name, args, env in settings[k:] + settings[:k]:
                extra = ["--ptxas", "--each"] if a.ptxas else []
                r = subprocess.run([a.cg_bench] + extra + args + [m], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, env=env)
                t = re.search(r"^pipeline \S+\s+([\d.]+) s", r.stdout, re.M)
                if r.returncode != 0 or not t:
                    sys.exit("cg_ab: %s with %s failed:\n%s" % (m, name, r.stderr[-2000:]))
                best[name][m] = min(best[name].get(m, float("inf")), float(t.group(1)))
                p = re.search(r"^module .*, ptxas ([\d.]+) s", r.stdout, re.M)
                if a.ptxas and p:
                    ptxas[m] = min(ptxas.get(m, float("inf")), float(p.group(1)))
        base = sum(best[settings[0][0]].values())
        print("after %d: " % (rep + 1) + "  ".join(
            "%s %.2f s (%.3f)" % (n, sum(best[n].values()), sum(best[n].values()) / base)
            for n, _, _ in settings), flush=True)
        if a.ptxas:
            both = [m for m in mods if m in ptxas]
            tp = sum(ptxas[m] for m in both)
            print("  on the %d modules ptxas compiles: ptxas %.2f s; " % (len(both), tp) + "  ".join(
                "%s/ptxas %.3f" % (n, sum(best[n][m] for m in both) / tp) for n, _, _ in settings), flush=True)
    print("per module, time / %s's:" % settings[0][0])
    for m in mods:
        b = best[settings[0][0]][m]
        print("  %-50s %s  (%s %.2f s%s)" % (os.path.basename(m)[:50], " ".join(
            "%6.3f" % (best[n][m] / b if b else 0) for n, _, _ in settings), settings[0][0], b,
            ", ptxas %.2f s" % ptxas[m] if m in ptxas else ""))


if __name__ == "__main__":
    main()
