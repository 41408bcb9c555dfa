#!/usr/bin/env python3
"""benchmarks/zluda_cases.py: ZLUDA's data-driven PTX cases through ptxwave
in four modes (issue 20, "What was measured").

    python3 benchmarks/zluda_cases.py ZLUDA_DIR [--ptxwave build/tools/ptxwave]
        [--jobs N] [--timeout S] [--keep DIR] [--modes emu,gfx942,gfx1100,compile] [CASE...]

ZLUDA_DIR is a checkout of github.com/vosen/ZLUDA (or an exported copy: only
ptx/src/test/spirv_run/ is read; the folder spirv_run itself works too).
ZLUDA's cases are the `test_ptx!`, `test_ptx_with_32!` and `test_ptx_warp!`
invocations of spirv_run/mod.rs that carry data: a kernel NAME in NAME.ptx,
an input array and the expected output array.  Cases without data (ZLUDA's
LLVM-text comparisons only) are not run; the `_with_32` cases' 32-bit-pointer
twins (spirv_run/32/) do not apply to ptxwave (64-bit addresses only).

Each case is launched as ZLUDA's own harness launches it: one block of 1
thread (64 for the warp cases), 1024 bytes of dynamic shared memory, the
parameters (input, output) -- or (output, output) when the case has no input
-- where input is a buffer holding exactly the input array and output a
zeroed buffer of exactly the output array's size.  Kernels with one
parameter get the first of those.  Modes:

  emu       the PTX in the emulator, unlowered (warps of 32)
  gfx942    lowered for gfx942 (`ptxwave lower --print-ir`), the lowered IR
            in the emulator at wave 64
  gfx1100   the same for gfx1100, wave 32
  compile   `ptxwave compile --arch gfx942,gfx1100` (a code object bundle;
            no AMD GPU runs it, so only the compile is checked)

The output buffer is compared with ZLUDA's expected values as ZLUDA does
(element by element; floats by value).  Prints the pass count per mode and,
per failing case, each failing mode with its first error, tagged when
ptxas 13 (--ptxas, the grammar oracle) rejects the file too or when the
case indexes past its buffers at ZLUDA's launch size (--pad runs those
with larger buffers).  The cases without data (ZLUDA compares their LLVM
text only) are compiled; a case ptxas rejects and ptxwave accepts is
listed too.  With ptxas, ZLUDA's spirv_build (should build) and spirv_fail
(should fail) files are parsed by both, and the ones they disagree on
listed.  Exit status 0
whatever fails: this is a measurement, registered in no test suite (the
data is another project's and CI has no copy).
"""
import argparse
import concurrent.futures
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = ["emu", "gfx942", "gfx1100", "compile"]

# Rust scalar types: struct format, byte size, float?
TYPES = {
    "u8": ("<B", False), "u16": ("<H", False), "u32": ("<I", False), "u64": ("<Q", False),
    "i8": ("<b", False), "i16": ("<h", False), "i32": ("<i", False), "i64": ("<q", False),
    "f16": ("<e", True), "f32": ("<f", True), "f64": ("<d", True),
}
INT_BITS = {"u8": 8, "u16": 16, "u32": 32, "u64": 64, "i8": 8, "i16": 16, "i32": 32, "i64": 64}


def f32_round(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f16_round(x):
    return struct.unpack("<e", struct.pack("<e", x))[0]


class Lit:
    """A Rust literal or constant expression: its value and its type (None
    when the literal has no suffix: the array's other elements decide, as
    Rust's inference does)."""

    def __init__(self, value, ty, is_float):
        self.value, self.ty, self.is_float = value, ty, is_float


def parse_elem(text):
    s = text.strip()
    m = re.fullmatch(r"(.+?)\s*/\s*(.+)", s)
    if m and "::from" not in s:
        a, b = parse_elem(m.group(1)), parse_elem(m.group(2))
        ty = a.ty or b.ty
        v = a.value / b.value
        return Lit(f32_round(v) if ty == "f32" else v, ty, True)
    neg = s.startswith("-")
    body = s[1:].strip() if neg else s
    sign = -1 if neg else 1
    if body.endswith(".to_bits()"):
        f = parse_elem(body[:-len(".to_bits()")])
        width = {"f16": ("<e", "<H", "u16"), "f32": ("<f", "<I", "u32"), "f64": ("<d", "<Q", "u64")}[f.ty]
        return Lit(struct.unpack(width[1], struct.pack(width[0], sign * f.value))[0], width[2], False)
    consts = {
        "f32::NAN": (math.nan, "f32"), "f32::INFINITY": (math.inf, "f32"),
        "f32::NEG_INFINITY": (-math.inf, "f32"), "std::f32::consts::PI": (f32_round(math.pi), "f32"),
        "half::f16::NAN": (math.nan, "f16"), "half::f16::NEG_INFINITY": (-math.inf, "f16"),
        "half::f16::INFINITY": (math.inf, "f16"),
    }
    if body in consts:
        v, ty = consts[body]
        return Lit(sign * v, ty, True)
    m = re.fullmatch(r"(u8|u16|u32|u64|i8|i16|i32|i64)::(MAX|MIN|max_value\(\)|min_value\(\))", body)
    if m:
        ty, which = m.group(1), m.group(2)
        bits = INT_BITS[ty]
        signed = ty[0] == "i"
        if which.startswith("MAX") or which.startswith("max"):
            v = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        else:
            v = -(1 << (bits - 1)) if signed else 0
        return Lit(sign * v, ty, False)
    m = re.fullmatch(r"(half::f16|f32|f64)::(from_f32|from_f64|from_bits)\((.*)\)", body)
    if m:
        ty = {"half::f16": "f16", "f32": "f32", "f64": "f64"}[m.group(1)]
        arg = parse_elem(m.group(3))
        if m.group(2) == "from_bits":
            fmt = TYPES[ty][0]
            width = {"f16": "<H", "f32": "<I", "f64": "<Q"}[ty]
            v = struct.unpack(fmt, struct.pack(width, arg.value))[0]
        else:
            v = arg.value
            if m.group(2) == "from_f32":
                v = f32_round(v)
            v = f16_round(v) if ty == "f16" else v
        return Lit(sign * v, ty, True)
    m = re.fullmatch(r"(0x[0-9a-fA-F_]+|0b[01_]+|[0-9][0-9_]*)(u8|u16|u32|u64|i8|i16|i32|i64)?", body)
    if m:
        digits = m.group(1).replace("_", "")
        v = int(digits, 0)
        return Lit(sign * v, m.group(2), False)
    m = re.fullmatch(r"([0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9]+)?)(f32|f64)?", body)
    if m:
        v = float(m.group(1).replace("_", ""))
        return Lit(sign * v, m.group(2), True)
    raise ValueError("cannot read the Rust literal %r" % text)


def split_top(s):
    """Split at commas outside brackets and parentheses."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur))
    return [x.strip() for x in out if x.strip()]


class Array:
    def __init__(self, text):
        inner = text.strip()
        assert inner[0] == "[" and inner[-1] == "]", text
        self.elems = [parse_elem(e) for e in split_top(inner[1:-1])]
        tys = [e.ty for e in self.elems if e.ty]
        if tys:
            self.ty = tys[0]
        else:
            self.ty = "f64" if any(e.is_float for e in self.elems) else "i32"
        self.fmt, self.is_float = TYPES[self.ty]
        self.size = struct.calcsize(self.fmt)

    def pack(self):
        out = b""
        for e in self.elems:
            v = e.value
            if not self.is_float:
                bits = INT_BITS[self.ty]
                v = int(v) & ((1 << bits) - 1)
                out += struct.pack({8: "<B", 16: "<H", 32: "<I", 64: "<Q"}[bits], v)
            else:
                out += struct.pack(self.fmt, v)
        return out

    def nbytes(self):
        return self.size * len(self.elems)

    def unpack(self, data):
        return [struct.unpack_from(self.fmt, data, i * self.size)[0] for i in range(len(self.elems))]

    def expected(self):
        return self.unpack(self.pack())


def read_cases(mod_rs):
    text = open(mod_rs, encoding="utf-8").read()
    text = "\n".join(re.sub(r"//.*", "", line) for line in text.splitlines())
    cases = []
    for m in re.finditer(r"^(test_ptx|test_ptx_with_32|test_ptx_warp)!\(", text, re.M):
        i, depth = m.end(), 1
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        args = split_top(text[m.end():i - 1])
        kind = m.group(1)
        if kind == "test_ptx_warp":
            if len(args) != 2:
                continue
            cases.append((args[0], None, Array(args[1]), 64, kind))
        elif len(args) == 3:
            cases.append((args[0], Array(args[1]), Array(args[2]), 1, kind))
        elif len(args) == 1 and kind == "test_ptx":
            cases.append((args[0], None, None, 0, "nodata"))
    return cases


def entry_params(ptx, name):
    m = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\((.*?)\)", ptx, re.S)
    if not m:
        return 0
    return len(re.findall(r"\.param\b", m.group(1)))


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, "timed out after %d s" % timeout
    except OSError as e:
        return 126, "cannot run %s: %s" % (cmd[0], e)
    err = (p.stderr or "").strip().splitlines()
    first = next((l for l in err if "error" in l.lower()), err[0] if err else "exit status %d" % p.returncode)
    return p.returncode, first


def compare(out_arr, data):
    got = out_arr.unpack(data)
    want = out_arr.expected()
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            def show(v):
                if out_arr.is_float:
                    return repr(v)
                return "%d (0x%x)" % (v, v & ((1 << (8 * out_arr.size)) - 1))
            return "output[%d] (%s) is %s, expected %s" % (i, out_arr.ty, show(g), show(w))
    return None


def agreement(args, src):
    """ZLUDA's spirv_build (should build) and spirv_fail (should fail)
    files: ptxas 13 (-c: externs allowed) and `ptxwave parse` on each,
    the files where the two disagree."""
    out = []
    for sub in ("spirv_build", "spirv_fail"):
        d = os.path.join(os.path.dirname(src), sub)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if not f.endswith(".ptx"):
                continue
            path = os.path.join(d, f)
            a = ptxas_verdict(args.ptxas, path, args.timeout, ["-c"])
            rc, first = run([args.ptxwave, "parse", path], args.timeout)
            w = None if rc == 0 else first
            out.append((sub + "/" + f, a, w))
    return out


def ptxas_verdict(ptxas, ptx, timeout, extra=()):
    """None when ptxas accepts the file (for its .target, at least sm_75:
    ptxas 13's oldest), else its first error."""
    text = open(ptx, encoding="utf-8", errors="replace").read()
    m = re.search(r"^\s*\.target\s+sm_(\d+)([a-z]?)", text, re.M)
    arch = "sm_75"
    if m and int(m.group(1)) >= 75:
        arch = "sm_%s%s" % (m.group(1), m.group(2))
    rc, first = run([ptxas, "-arch=" + arch] + list(extra) + [ptx, "-o", os.devnull], timeout)
    return None if rc == 0 else first


def run_case(case, args, src, work):
    name, inp, out, block, kind = case
    ptx = os.path.join(src, name + ".ptx")
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    results = {}
    if args.ptxas:
        results["ptxas"] = ptxas_verdict(args.ptxas, ptx, args.timeout)
    if kind == "nodata":
        rc, first = run([args.ptxwave, "compile", ptx, "--arch", "gfx942,gfx1100",
                         "-o", os.path.join(d, "bundle.hsaco")], args.timeout)
        results["compile"] = None if rc == 0 else first
        return name, results
    nparams = entry_params(open(ptx, encoding="utf-8", errors="replace").read(), name)
    in_path = os.path.join(d, "in.bin")
    if inp:
        open(in_path, "wb").write(inp.pack() + bytes(args.pad))

    def emulate(module, mode):
        out_path = os.path.join(d, "out_%s.bin" % mode)
        if os.path.exists(out_path):
            os.remove(out_path)
        nout = out.nbytes() + args.pad
        if inp:
            params = ["in:" + in_path, "out:%s:%d" % (out_path, nout)]
        elif nparams >= 2:
            # ZLUDA passes the output buffer twice; a second, zeroed buffer
            # of the same size reads the same (no case writes through both)
            params = ["zero:%d" % nout, "out:%s:%d" % (out_path, nout)]
        else:
            params = ["out:%s:%d" % (out_path, nout)]
        params = params[:nparams]
        cmd = [args.ptxwave, "emulate", module, "--kernel", name, "--grid", "1",
               "--block", str(block), "--shared", "1024", "--threads", "1"] + params
        rc, first = run(cmd, args.timeout)
        if rc != 0:
            return first
        if not os.path.exists(out_path):
            return "the kernel has no output parameter"
        return compare(out, open(out_path, "rb").read())

    if "emu" in args.modes:
        results["emu"] = emulate(ptx, "emu")
    for target in ("gfx942", "gfx1100"):
        if target not in args.modes:
            continue
        pwir = os.path.join(d, target + ".pwir")
        try:
            with open(pwir, "w") as f:
                p = subprocess.run([args.ptxwave, "lower", ptx, "--target", target, "--print-ir"],
                                   stdout=f, stderr=subprocess.PIPE, text=True, timeout=args.timeout)
            if p.returncode != 0:
                err = p.stderr.strip().splitlines()
                results[target] = "lower: " + (err[0] if err else "exit status %d" % p.returncode)
                continue
        except subprocess.TimeoutExpired:
            results[target] = "lower: timed out"
            continue
        except OSError as e:
            results[target] = "lower: cannot run %s: %s" % (args.ptxwave, e)
            continue
        results[target] = emulate(pwir, target)
    if "compile" in args.modes:
        rc, first = run([args.ptxwave, "compile", ptx, "--arch", "gfx942,gfx1100",
                         "-o", os.path.join(d, "bundle.hsaco")], args.timeout)
        results["compile"] = None if rc == 0 else first
    return name, results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("zluda", help="ZLUDA checkout (or its ptx/src/test/spirv_run folder)")
    ap.add_argument("cases", nargs="*", help="run only these cases")
    ap.add_argument("--ptxwave", default=os.path.join(ROOT, "build", "tools", "ptxwave"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--keep", help="keep inputs, outputs and lowered IR here")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas",
                    help="ptxas to tell which cases are valid PTX ('' for none)")
    ap.add_argument("--pad", type=int, default=0,
                    help="bytes added to each buffer (zeros; outputs compared on their first elements):"
                         " runs the cases that index past ZLUDA's buffers")
    args = ap.parse_args()
    args.modes = args.modes.split(",")
    src = args.zluda
    if not os.path.exists(os.path.join(src, "mod.rs")):
        src = os.path.join(src, "ptx", "src", "test", "spirv_run")
    if not os.path.exists(os.path.join(src, "mod.rs")):
        sys.exit("zluda_cases: no ptx/src/test/spirv_run/mod.rs under %s" % args.zluda)
    cases = read_cases(os.path.join(src, "mod.rs"))
    twins = sum(1 for c in cases if c[4] == "test_ptx_with_32")
    if args.cases:
        cases = [c for c in cases if c[0] in args.cases]
    if args.ptxas and not os.path.exists(args.ptxas):
        args.ptxas = ""
    work = args.keep or tempfile.mkdtemp(prefix="zluda_cases.")
    res = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for name, r in ex.map(lambda c: run_case(c, args, src, work), cases):
            res[name] = r
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    data = [c[0] for c in cases if c[4] != "nodata"]
    nodata = [c[0] for c in cases if c[4] == "nodata"]
    print("zluda_cases: %d cases with data in %s (%d more are 32-bit-pointer twins: not applicable)"
          % (len(data), src, twins))
    if args.ptxas:
        rejected = [n for n in data if res[n].get("ptxas")]
        print("  ptxas    %3d / %d accepted (%s)" % (len(data) - len(rejected), len(data), args.ptxas))
    for mode in args.modes:
        ok = sum(1 for n in data if res[n].get(mode) is None)
        print("  %-8s %3d / %d pass" % (mode, ok, len(data)))
    if nodata and "compile" in args.modes:
        ok = sum(1 for n in nodata if res[n].get("compile") is None)
        print("  %d cases without data (ZLUDA compares their LLVM text only): %d compile" % (len(nodata), ok))

    def tag(name, err):
        if res[name].get("ptxas"):
            return " [ptxas 13 rejects the file too: %s]" % res[name]["ptxas"]
        if "illegal address" in err:
            return " [indexes past its buffers at ZLUDA's launch: try --pad]"
        return ""
    for name in sorted(res):
        bad = [(m, res[name][m]) for m in args.modes if res[name].get(m) is not None]
        if bad:
            print("FAIL %s%s" % (name, tag(name, bad[0][1])))
            for m, e in bad:
                print("    %-8s %s" % (m, e))
        elif res[name].get("ptxas"):
            print("ACCEPTED %s [ptxas 13 rejects it: %s]" % (name, res[name]["ptxas"]))
    if args.ptxas and not args.cases:
        files = agreement(args, src)
        same = sum(1 for _, a, w in files if (a is None) == (w is None))
        print("  spirv_build + spirv_fail: ptxas 13 and ptxwave parse agree on %d of %d files" % (same, len(files)))
        for f, a, w in files:
            if (a is None) != (w is None):
                print("DISAGREE %s: ptxas %s; ptxwave %s" % (f, a or "accepts", w or "accepts"))


if __name__ == "__main__":
    main()
