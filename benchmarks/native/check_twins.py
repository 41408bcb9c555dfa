#!/usr/bin/env python3
"""benchmarks/native/check_twins.py: checks the native twins of the inline
PTX in tests/cuda/*.cu (the `#ifdef PTXWAVE_NATIVE` branches that
quality_bench.py's native compile uses) against the PTX they replace.

    python3 benchmarks/native/check_twins.py [BUILD_DIR]     (default build)

The twins are C; the checks run them and the original asm side by side in
one CUDA program, compiled by nvcc and run on ptxwave's emulator through
tests/cuda/run_emu.sh (no GPU needed; nvcc and the build's
libpw_emu_cudart.so are), on 4096 threads of inputs from check.h's
generator with zeros, all-ones and shifted values mixed in:
  int_bitops  every asm site of bitops() (bfe bfi bmsk szext bfind dp4a
              mul24.hi mad24 shl/shr lop3) and prmt in its seven modes;
  bigint      add256, sub256, add256_u64, mul128 (clang's __builtin_addc /
              subc / addcll replaced by their definition in 64-bit
              arithmetic: nvcc has no such builtins);
  warp_shfl   shfl_raw_one's value and predicate for every mode and a grid
              of b and c values (the twin's ds_bpermute read replaced by
              __shfl_sync from the lane it computes);
  warp_vote   %laneid, %lanemask_*, vote.sync.uni.
The text of each twin is taken from the .cu file itself, so the check
follows the file.  Not checked here: the twins built on AMD-only builtins
(float_math's MODE setreg, grid3d's hardware ids, bar_red's named
barriers, const_local's switch, atomics' red): their semantics are argued
in their comments.  Exit status 0 when every result matches.
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CUDA = os.path.join(ROOT, "tests", "cuda")


def blocks(text):
    """[(native, asm)] of every #ifdef PTXWAVE_NATIVE ... #else ... #endif"""
    return re.findall(r"#ifdef PTXWAVE_NATIVE\n(.*?)#else\n(.*?)#endif\n", text, re.S)


def read(name):
    with open(os.path.join(CUDA, name + ".cu")) as f:
        return f.read()


def rename(text, names):
    for n in names:
        text = re.sub(r"\b%s\(" % n, "nat_" + n + "(", text)
    return text


HEAD = r'''#include "check.h"
#define FULL 0xffffffffu
'''

PRELUDE = r'''__device__ __forceinline__ unsigned pw_laneid(void) { unsigned r; asm volatile("mov.u32 %0, %%laneid;" : "=r"(r)); return r; }
static __device__ unsigned __builtin_addc_(unsigned a, unsigned b, unsigned c, unsigned *co) { unsigned long long s = (unsigned long long)a + b + c; *co = (unsigned)(s >> 32); return (unsigned)s; }
static __device__ unsigned __builtin_subc_(unsigned a, unsigned b, unsigned c, unsigned *co) { unsigned long long s = (unsigned long long)a - b - c; *co = (unsigned)(s >> 63); return (unsigned)s; }
static __device__ unsigned long long __builtin_addcll_(unsigned long long a, unsigned long long b, unsigned long long c, unsigned long long *co) { unsigned long long s = a + b; unsigned long long c1 = s < a; unsigned long long s2 = s + c; *co = c1 | (s2 < s); return s2; }
#define __builtin_addc __builtin_addc_
#define __builtin_subc __builtin_subc_
#define __builtin_addcll __builtin_addcll_
'''

KERNEL_BITS = r'''__global__ void bits(const unsigned *in32, const unsigned long long *in64, unsigned *bad, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    unsigned x = in32[4 * t], y = in32[4 * t + 1], z = in32[4 * t + 2], s = in32[4 * t + 3];
    unsigned long long X = in64[2 * t], Y = in64[2 * t + 1];
    unsigned p = s % 40, l = (s >> 8) % 40;
    unsigned p64 = s % 72, l64 = (s >> 8) % 72;
    int sx24 = (int)(x << 8) >> 8, sy24 = (int)(y << 8) >> 8;
    unsigned xs = x >> (s & 31);
    unsigned amt = (s & 0x100) ? s : s % 40;
    (void)p; (void)l; (void)p64; (void)l64; (void)sx24; (void)sy24; (void)xs; (void)amt; (void)X; (void)Y; (void)z;
'''

TAIL = r'''    unsigned a[8], b[8], r1[8], r2[8], c1, c2;
    for (int k = 0; k < 8; k++) { a[k] = in32[(4 * t + k) % (4 * n)] ^ (k & 1 ? 0xffffffffu * (s & 1) : 0); b[k] = in32[(4 * t + 8 + k) % (4 * n)]; }
    add256(a, b, r1, &c1); nat_add256(a, b, r2, &c2);
    for (int k = 0; k < 8; k++) if (r1[k] != r2[k]) bad[t]++;
    if (c1 != c2) bad[t]++;
    sub256(a, b, r1, &c1); nat_sub256(a, b, r2, &c2);
    for (int k = 0; k < 8; k++) if (r1[k] != r2[k]) bad[t]++;
    if (c1 != c2) bad[t]++;
    mul128(a, b, r1); nat_mul128(a, b, r2);
    for (int k = 0; k < 8; k++) if (r1[k] != r2[k]) bad[t] += 100;
    unsigned long long A4[4], B4[4], R1[4], R2[4], C1, C2;
    for (int k = 0; k < 4; k++) { A4[k] = (unsigned long long)a[2*k] | (unsigned long long)a[2*k+1] << 32; B4[k] = (unsigned long long)b[2*k] | (unsigned long long)b[2*k+1] << 32; }
    add256_u64(A4, B4, R1, &C1); nat_add256_u64(A4, B4, R2, &C2);
    for (int k = 0; k < 4; k++) if (R1[k] != R2[k]) bad[t]++;
    if (C1 != C2) bad[t]++;
}
__global__ void warp(const unsigned *in, unsigned *bad)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[g];
    for (int mode = 0; mode < 4; mode++)
        for (unsigned b = 0; b < 40; b += 3)
            for (unsigned c = 0; c < 0x2000; c += 0x1a3) {
                unsigned p1, p2;
                unsigned r1 = shfl_raw_one(mode, v, b, c, &p1), r2 = nat_shfl_raw_one(mode, v, b, c, &p2);
                if (r1 != r2 || p1 != p2) bad[g]++;
            }
    if (sreg_laneid() != nat_sreg_laneid() || sreg_eq() != nat_sreg_eq() || sreg_lt() != nat_sreg_lt() ||
        sreg_le() != nat_sreg_le() || sreg_gt() != nat_sreg_gt() || sreg_ge() != nat_sreg_ge()) bad[g] += 1000;
    for (int k = 0; k < 3; k++) {
        int pred = k == 0 ? 1 : k == 1 ? 0 : (v & 3) != 0;
        if (vote_uni(FULL, pred) != nat_vote_uni(FULL, pred)) bad[g] += 10000;
    }
}
int main(void)
{
    pw_report rep = pw_report_start("twincheck");
    pw_rng rng = pw_rng_seed(5);
    const int n = 4096;
    unsigned *h32 = (unsigned *)malloc(4 * n * 4), *hb = (unsigned *)malloc(n * 4);
    unsigned long long *h64 = (unsigned long long *)malloc(2 * n * 8);
    for (int i = 0; i < 4 * n; i++) { h32[i] = pw_rng_u32(&rng); if (i % 7 == 0) h32[i] = 0; if (i % 11 == 0) h32[i] = 0xffffffffu; if (i % 13 == 0) h32[i] >>= (i % 32); }
    for (int i = 0; i < 2 * n; i++) { h64[i] = (unsigned long long)pw_rng_u32(&rng) << 32 | pw_rng_u32(&rng); if (i % 5 == 0) h64[i] >>= (i % 64); }
    unsigned *d32, *db; unsigned long long *d64;
    CHECK(cudaMalloc(&d32, 4 * n * 4)); CHECK(cudaMalloc(&d64, 2 * n * 8)); CHECK(cudaMalloc(&db, n * 4));
    CHECK(cudaMemcpy(d32, h32, 4 * n * 4, cudaMemcpyHostToDevice)); CHECK(cudaMemcpy(d64, h64, 2 * n * 8, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(db, 0, n * 4));
    bits<<<n / 128, 128>>>(d32, d64, db, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(hb, db, n * 4, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) pw_expect(&rep, hb[i] == 0, "bits thread %d: %u mismatches (in %08x %08x %08x %08x)", i, hb[i], h32[4*i], h32[4*i+1], h32[4*i+2], h32[4*i+3]);
    CHECK(cudaMemset(db, 0, n * 4));
    warp<<<2, 64>>>(d32, db);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(hb, db, 128 * 4, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 128; i++) pw_expect(&rep, hb[i] == 0, "warp thread %d: %u", i, hb[i]);
    return pw_finish(&rep);
}
'''


def program():
    ib = blocks(read("int_bitops"))
    helpers_nat, helpers_asm = ib[0]
    helpers_nat = rename(helpers_nat, ["prmt_asm"]).replace("nat_prmt_asm(", "nat_prmt(")
    sites = ib[1:]
    bn, ba = blocks(read("bigint"))[0]
    bn = rename(bn, ["add256", "sub256", "add256_u64", "mul128"])
    wn, wa = blocks(read("warp_shfl"))[0]
    wn = rename(wn, ["shfl_raw_one"])
    wn = wn.replace("return (unsigned)pw_bperm((pw_lane64() & 32) + (unsigned)j, (int)v);",
                    "return __shfl_sync(0xffffffffu, v, j);")
    vn, va = blocks(read("warp_vote"))[0]
    vn = rename(vn, ["sreg_laneid", "sreg_eq", "sreg_lt", "sreg_le", "sreg_gt", "sreg_ge", "vote_uni"])
    body = []
    for n, a in sites:
        body.append("    { unsigned r = 0; unsigned long long R = 0;\n" + a +
                    "        unsigned r_a = r; unsigned long long R_a = R; r = 0; R = 0;\n" + n +
                    "        if (r != r_a || R != R_a) { bad[t]++; } }\n")
    return (HEAD + PRELUDE + helpers_nat + helpers_asm + bn + ba + wn + wa + vn + va + KERNEL_BITS +
            "    for (int m = 0; m < 7; m++)\n        if (nat_prmt(x, y, s, m) != prmt_asm(x, y, s, m)) bad[t]++;\n" +
            "".join(body) + TAIL)


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
    with tempfile.TemporaryDirectory(prefix="check_twins-") as tmp:
        d = os.path.join(tmp, "tests", "cuda")
        os.makedirs(d)
        with open(os.path.join(CUDA, "check.h")) as f, open(os.path.join(d, "check.h"), "w") as g:
            g.write(f.read())
        with open(os.path.join(d, "twincheck.cu"), "w") as f:
            f.write(program())
        env = dict(os.environ, PTXWAVE_SOURCE_ROOT=tmp, PW_CUDART_DIR=os.path.join(build, "tests"))
        r = subprocess.run(["sh", os.path.join(CUDA, "run_emu.sh"), "twincheck", "sm_80"], env=env)
        sys.exit(r.returncode)


if __name__ == "__main__":
    main()
