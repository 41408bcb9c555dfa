/*
 * int_bitops: integer and bit-manipulation instructions, bit-exact.
 *
 * Each thread applies 95 operations to random operands (with zeros, all
 * ones, INT_MIN-like values and shift amounts / positions / lengths at and
 * beyond the register width mixed in) and the host recomputes each from the
 * PTX ISA's definition:
 *   popc clz bfind(ffs) brev prmt (default mode with sign replication, and
 *   the f4e b4e rc8 ecl ecr rc16 modes) shf.l/r.wrap/clamp (funnel shifts)
 *   dp4a dp2a.lo/hi (signed/unsigned/mixed) bfe bfi (32/64) mul.hi
 *   (32/64, signed/unsigned) mul24 sad hadd/rhadd bmsk szext bfind
 *   (.shiftamt, signed) shl/shr with amounts >= 32 (clamped to 32) lop3
 *   (from C boolean expressions and as inline PTX with immLut) div/rem
 *   (32/64, signed/unsigned, truncating) min/max/abs mul.wide and the
 *   sign/zero extensions of cvt between 8/16/32/64-bit integers.
 *
 * Inline PTX is used where no CUDA intrinsic gives the instruction, or where
 * the intrinsic is defined only for part of the operand range: __byte_perm
 * documents 3-bit selectors, so the full 4-bit prmt selectors go through
 * asm; __mul24 inputs are proper 24-bit values (the ISA does not say what
 * the upper 8 bits of a mul24 operand mean).
 *
 * The prmt mode table (PTX ISA, prmt, "modes") used by the reference, byte
 * sources for d.b3 d.b2 d.b1 d.b0 by c[1:0]:
 *   f4e: 3210 4321 5432 6543      b4e: 5670 6701 7012 0123
 *   rc8: 0000 1111 2222 3333      ecl: 3210 3211 3222 3333
 *   ecr: 0000 1110 2210 3210      rc16: 1010 3232 1010 3232
 */
#include "check.h"

#define K 95

#ifdef PTXWAVE_NATIVE
/* Native twins of the inline PTX below, for benchmarks/quality_bench.py (the
 * macro is only defined by benchmarks/native/cuda_on_hip.h): each computes
 * the PTX ISA's definition of the instruction in C, which clang maps to
 * AMDGPU instructions as it would for any HIP program. */

/* prmt (PTX ISA "prmt"): bytes of {b, a}; the default mode takes a selector
 * nibble per result byte (bit 3: replicate the byte's sign), the others
 * derive the four selectors from c[1:0] (the table in the file comment) */
__device__ __forceinline__ unsigned prmt_asm(unsigned a, unsigned b, unsigned c, int mode)
{
    unsigned long long v = (unsigned long long)b << 32 | a;
    unsigned r = 0, cc = c & 3;
    for (unsigned i = 0; i < 4; i++) {
        unsigned n, sel;
        switch (mode) {
        case 0: n = (c >> (4 * i)) & 15; sel = n & 7; break;
        case 1: n = 0; sel = (cc + i) & 7; break;
        case 2: n = 0; sel = (cc - i) & 7; break;
        case 3: n = 0; sel = cc; break;
        case 4: n = 0; sel = i > cc ? i : cc; break;
        case 5: n = 0; sel = i < cc ? i : cc; break;
        default: n = 0; sel = (i & 1) | (cc & 1) << 1; break;
        }
        unsigned byte = (unsigned)(v >> (8 * sel)) & 0xff;
        if (n & 8)
            byte = (byte & 0x80) ? 0xff : 0;
        r |= byte << (8 * i);
    }
    return r;
}
/* dp4a.u32.s32: unsigned bytes of a times signed bytes of b, plus c */
__device__ __forceinline__ unsigned nat_dp4a_us(unsigned a, unsigned b, unsigned c)
{
    int s = (int)c;
    for (int i = 0; i < 4; i++)
        s += (int)((a >> (8 * i)) & 0xff) * (int)(signed char)(b >> (8 * i));
    return (unsigned)s;
}
/* bfe: len bits from pos (both b, c & 0xff); bits past the msb, and all
 * bits for a signed type past the field, are the field's top bit */
template <typename T, bool S> __device__ __forceinline__ T nat_bfe(T a, unsigned b, unsigned c)
{
    const unsigned w = 8 * sizeof(T);
    unsigned pos = b & 0xff, len = c & 0xff;
    if (len == 0)
        return 0;
    unsigned top = pos + len - 1 < w - 1 ? pos + len - 1 : w - 1;
    bool sbit = S && ((a >> top) & 1);
    if (pos >= w)
        return sbit ? ~(T)0 : 0;
    unsigned n = len < w - pos ? len : w - pos;
    T f = a >> pos;
    if (n >= w)
        return f;
    T m = ((T)1 << n) - 1;
    return sbit ? (f | ~m) : (f & m);
}
/* bfi: a's low len bits into b at pos (bits past the msb dropped) */
template <typename T> __device__ __forceinline__ T nat_bfi(T a, T b, unsigned c, unsigned d)
{
    const unsigned w = 8 * sizeof(T);
    unsigned pos = c & 0xff, len = d & 0xff;
    if (len == 0 || pos >= w)
        return b;
    unsigned n = len < w - pos ? len : w - pos;
    T m = (n >= w ? ~(T)0 : ((T)1 << n) - 1) << pos;
    return (b & ~m) | ((a << pos) & m);
}
/* bmsk.clamp/.wrap (PTX ISA "bmsk"): ones from bit a for b bits */
__device__ __forceinline__ unsigned nat_bmsk(unsigned a, unsigned b, bool clamp)
{
    unsigned a1 = a & 0x1f, b1 = b & 0x1f, sum = a1 + b1;
    unsigned mask0 = ~0u << a1, mask1 = sum >= 32 ? 0 : ~0u << sum;
    bool ovf = sum >= 32;
    if (clamp) {
        if (a >= 32) {
            ovf = true;
            mask0 = 0;
        }
        if (b >= 32)
            ovf = true;
    }
    if (ovf)
        mask1 = 0;
    else if (b1 == 0)
        mask1 = ~0u;
    return mask0 & ~mask1;
}
/* szext.clamp/.wrap (PTX ISA "szext"): the low b bits of a, sign- or
 * zero-extended */
__device__ __forceinline__ unsigned nat_szext(unsigned a, unsigned b, bool clamp, bool sgn)
{
    unsigned b1 = b & 0x1f;
    bool big = b >= 32 && clamp;
    unsigned mask = big ? 0 : ~0u << b1;
    bool sbit = (b1 == 0 || big || !sgn) ? false : (a >> ((b1 - 1) & 0x1f)) & 1;
    return (a & ~mask) | (sbit ? mask : 0);
}
/* bfind (PTX ISA "bfind"): the position of the most significant non-sign
 * bit, 0xffffffff when none; .shiftamt: the left shift that normalises */
__device__ __forceinline__ unsigned nat_bfind32(unsigned v, bool sgn, bool shamt)
{
    if (sgn && (int)v < 0)
        v = ~v;
    if (!v)
        return 0xffffffffu;
    unsigned r = 31 - __builtin_clz(v);
    return shamt ? 31 - r : r;
}
__device__ __forceinline__ unsigned nat_bfind64(unsigned long long v)
{
    return v ? 63 - __builtin_clzll(v) : 0xffffffffu;
}
#else
__device__ __forceinline__ unsigned prmt_asm(unsigned a, unsigned b, unsigned c, int mode)
{
    unsigned d;
    switch (mode) {
    case 0: asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c)); break;
    case 1: asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c)); break;
    case 2: asm("prmt.b32.b4e %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c)); break;
    case 3: asm("prmt.b32.rc8 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c)); break;
    case 4: asm("prmt.b32.ecl %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c)); break;
    case 5: asm("prmt.b32.ecr %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c)); break;
    default: asm("prmt.b32.rc16 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c)); break;
    }
    return d;
}
#endif

__global__ void bitops(const unsigned *in32, const unsigned long long *in64, unsigned *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    unsigned x = in32[4 * t], y = in32[4 * t + 1], z = in32[4 * t + 2], s = in32[4 * t + 3];
    unsigned long long X = in64[2 * t], Y = in64[2 * t + 1];
    unsigned p = s % 40, l = (s >> 8) % 40;          /* positions and lengths around 32 */
    unsigned p64 = s % 72, l64 = (s >> 8) % 72;
    unsigned *o = out + (size_t)t * K;
    unsigned r;
    unsigned long long R;
    int k = 0;

    o[k++] = __popc(x);
    o[k++] = __popcll(X);
    o[k++] = __clz((int)x);
    o[k++] = __clzll((long long)X);
    o[k++] = __ffs((int)x);
    o[k++] = __ffsll((long long)X);
    o[k++] = __brev(x);
    R = __brevll(X);
    o[k++] = (unsigned)R;
    o[k++] = (unsigned)(R >> 32);
    o[k++] = __byte_perm(x, y, s & 0x7777u);
    for (int m = 0; m < 7; m++)
        o[k++] = prmt_asm(x, y, s, m);
    o[k++] = __funnelshift_l(x, y, s & 63);
    o[k++] = __funnelshift_lc(x, y, s & 63);
    o[k++] = __funnelshift_r(x, y, s & 63);
    o[k++] = __funnelshift_rc(x, y, s & 63);
    o[k++] = (unsigned)__dp4a((int)x, (int)y, (int)z);
    o[k++] = __dp4a(x, y, z);
#ifdef PTXWAVE_NATIVE
    r = nat_dp4a_us(x, y, z);
#else
    asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(z));
#endif
    o[k++] = r;
    o[k++] = (unsigned)__dp2a_lo((int)x, (int)y, (int)z);
    o[k++] = (unsigned)__dp2a_hi((int)x, (int)y, (int)z);
    o[k++] = __dp2a_lo(x, y, z);
    o[k++] = __dp2a_hi(x, y, z);
#ifdef PTXWAVE_NATIVE
    r = nat_bfe<unsigned, false>(x, p, l);
#else
    asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(p), "r"(l));
#endif
    o[k++] = r;
#ifdef PTXWAVE_NATIVE
    r = nat_bfe<unsigned, true>(x, p, l);
#else
    asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(p), "r"(l));
#endif
    o[k++] = r;
#ifdef PTXWAVE_NATIVE
    R = nat_bfe<unsigned long long, false>(X, p64, l64);
#else
    asm("bfe.u64 %0, %1, %2, %3;" : "=l"(R) : "l"(X), "r"(p64), "r"(l64));
#endif
    o[k++] = (unsigned)R;
    o[k++] = (unsigned)(R >> 32);
#ifdef PTXWAVE_NATIVE
    R = nat_bfe<unsigned long long, true>(X, p64, l64);
#else
    asm("bfe.s64 %0, %1, %2, %3;" : "=l"(R) : "l"(X), "r"(p64), "r"(l64));
#endif
    o[k++] = (unsigned)R;
    o[k++] = (unsigned)(R >> 32);
#ifdef PTXWAVE_NATIVE
    r = nat_bfi<unsigned>(x, y, p, l);
#else
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(x), "r"(y), "r"(p), "r"(l));
#endif
    o[k++] = r;
#ifdef PTXWAVE_NATIVE
    R = nat_bfi<unsigned long long>(X, Y, p64, l64);
#else
    asm("bfi.b64 %0, %1, %2, %3, %4;" : "=l"(R) : "l"(X), "l"(Y), "r"(p64), "r"(l64));
#endif
    o[k++] = (unsigned)R;
    o[k++] = (unsigned)(R >> 32);
    o[k++] = __umulhi(x, y);
    o[k++] = (unsigned)__mulhi((int)x, (int)y);
    R = __umul64hi(X, Y);
    o[k++] = (unsigned)R;
    o[k++] = (unsigned)(R >> 32);
    R = (unsigned long long)__mul64hi((long long)X, (long long)Y);
    o[k++] = (unsigned)R;
    o[k++] = (unsigned)(R >> 32);
    int sx24 = (int)(x << 8) >> 8, sy24 = (int)(y << 8) >> 8; /* proper signed 24-bit values */
    o[k++] = (unsigned)__mul24(sx24, sy24);
    o[k++] = __umul24(x & 0xffffffu, y & 0xffffffu);
    /* nvcc turns __mul24 on known 24-bit values into mul.lo: the PTX forms directly */
#ifdef PTXWAVE_NATIVE
    r = (unsigned)(int)(((long long)sx24 * sy24) >> 16); /* bits 47..16 of the 48-bit product */
#else
    asm("mul24.hi.s32 %0, %1, %2;" : "=r"(r) : "r"(sx24), "r"(sy24));
#endif
    o[k++] = r;
#ifdef PTXWAVE_NATIVE
    r = (x & 0xffffffu) * (y & 0xffffffu) + z;
#else
    asm("mad24.lo.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x & 0xffffffu), "r"(y & 0xffffffu), "r"(z));
#endif
    o[k++] = r;
    o[k++] = __sad((int)x, (int)y, z);
    o[k++] = __usad(x, y, z);
    o[k++] = (unsigned)__hadd((int)x, (int)y);
    o[k++] = (unsigned)__rhadd((int)x, (int)y);
    o[k++] = __uhadd(x, y);
    o[k++] = __urhadd(x, y);
#ifdef PTXWAVE_NATIVE
    r = nat_bmsk(p, l, true);
#else
    asm("bmsk.clamp.b32 %0, %1, %2;" : "=r"(r) : "r"(p), "r"(l));
#endif
    o[k++] = r;
#ifdef PTXWAVE_NATIVE
    r = nat_bmsk(p, l, false);
#else
    asm("bmsk.wrap.b32 %0, %1, %2;" : "=r"(r) : "r"(p), "r"(l));
#endif
    o[k++] = r;
#ifdef PTXWAVE_NATIVE
    r = nat_szext(x, l, true, true);
#else
    asm("szext.clamp.s32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(l));
#endif
    o[k++] = r;
#ifdef PTXWAVE_NATIVE
    r = nat_szext(x, l, false, false);
#else
    asm("szext.wrap.u32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(l));
#endif
    o[k++] = r;
    unsigned xs = x >> (s & 31);
#ifdef PTXWAVE_NATIVE
    r = nat_bfind32(xs, false, false);
#else
    asm("bfind.u32 %0, %1;" : "=r"(r) : "r"(xs));
#endif
    o[k++] = r;
#ifdef PTXWAVE_NATIVE
    r = nat_bfind32((unsigned)((int)x >> (s & 31)), true, false);
#else
    asm("bfind.s32 %0, %1;" : "=r"(r) : "r"((int)x >> (s & 31)));
#endif
    o[k++] = r;
#ifdef PTXWAVE_NATIVE
    r = nat_bfind32(xs, false, true);
#else
    asm("bfind.shiftamt.u32 %0, %1;" : "=r"(r) : "r"(xs));
#endif
    o[k++] = r;
#ifdef PTXWAVE_NATIVE
    r = nat_bfind64(X >> (s & 63));
#else
    asm("bfind.u64 %0, %1;" : "=r"(r) : "l"(X >> (s & 63)));
#endif
    o[k++] = r;
    unsigned amt = (s & 0x100) ? s : s % 40; /* sometimes huge */
#ifdef PTXWAVE_NATIVE
    r = amt >= 32 ? 0 : x << amt; /* PTX shifts clamp at the width */
#else
    asm("shl.b32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(amt));
#endif
    o[k++] = r;
#ifdef PTXWAVE_NATIVE
    r = amt >= 32 ? 0 : x >> amt;
#else
    asm("shr.u32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(amt));
#endif
    o[k++] = r;
#ifdef PTXWAVE_NATIVE
    r = (unsigned)((int)x >> (amt >= 32 ? 31 : amt));
#else
    asm("shr.s32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(amt));
#endif
    o[k++] = r;
    o[k++] = (x & y) ^ (~z | x);
    o[k++] = (x | y) & ~(z ^ y);
#ifdef PTXWAVE_NATIVE
    r = x ^ y ^ z; /* lop3 immLut 0x96 over a = 0xf0, b = 0xcc, c = 0xaa */
#else
    asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(r) : "r"(x), "r"(y), "r"(z));
#endif
    o[k++] = r;
#ifdef PTXWAVE_NATIVE
    r = (x & y) | (x & z) | (y & z); /* 0xe8: majority */
#else
    asm("lop3.b32 %0, %1, %2, %3, 0xe8;" : "=r"(r) : "r"(x), "r"(y), "r"(z));
#endif
    o[k++] = r;
#ifdef PTXWAVE_NATIVE
    r = (x & y) | (~x & z); /* 0xca: a ? b : c */
#else
    asm("lop3.b32 %0, %1, %2, %3, 0xca;" : "=r"(r) : "r"(x), "r"(y), "r"(z));
#endif
    o[k++] = r;
#ifdef PTXWAVE_NATIVE
    r = x ^ (y | z); /* 0x1e */
#else
    asm("lop3.b32 %0, %1, %2, %3, 0x1e;" : "=r"(r) : "r"(x), "r"(y), "r"(z));
#endif
    o[k++] = r;
    int ix = (int)x, id = (int)(y >> 20) | 1; /* odd, non-zero, possibly negative via the sign */
    id = (int)y < 0 ? -id : id;
    if (ix == (int)0x80000000 && id == -1)
        id = 3;
    o[k++] = (unsigned)(ix / id);
    o[k++] = (unsigned)(ix % id);
    unsigned ud = (y >> (s % 32)) | 1u;
    o[k++] = x / ud;
    o[k++] = x % ud;
    long long lx = (long long)X, ld = (long long)(Y >> 40) | 1;
    ld = (long long)Y < 0 ? -ld : ld;
    R = (unsigned long long)(lx / ld);
    o[k++] = (unsigned)R;
    o[k++] = (unsigned)(R >> 32);
    R = (unsigned long long)(lx % ld);
    o[k++] = (unsigned)R;
    o[k++] = (unsigned)(R >> 32);
    unsigned long long uld = (Y >> (s % 64)) | 1ull;
    R = X / uld;
    o[k++] = (unsigned)R;
    o[k++] = (unsigned)(R >> 32);
    R = X % uld;
    o[k++] = (unsigned)R;
    o[k++] = (unsigned)(R >> 32);
    o[k++] = (unsigned)min((int)x, (int)y);
    o[k++] = (unsigned)max((int)x, (int)y);
    o[k++] = min(x, y);
    o[k++] = max(x, y);
    o[k++] = (unsigned)abs(ix == (int)0x80000000 ? 0 : ix);
    R = (unsigned long long)((long long)(int)x * (int)y);
    o[k++] = (unsigned)R;
    o[k++] = (unsigned)(R >> 32);
    o[k++] = (unsigned)(int)(signed char)x;
    o[k++] = (unsigned)(int)(short)x;
    o[k++] = (unsigned)(unsigned short)x;
    R = (unsigned long long)(long long)(int)x;
    o[k++] = (unsigned)R;
    o[k++] = (unsigned)(R >> 32);
    o[k++] = (unsigned)(int)(short)((unsigned short)x * (unsigned short)y);
}

/* ---- host reference ---------------------------------------------------------- */

static unsigned h_brev(unsigned x)
{
    unsigned r = 0;
    for (int i = 0; i < 32; i++)
        r |= ((x >> i) & 1u) << (31 - i);
    return r;
}

static unsigned h_prmt(unsigned a, unsigned b, unsigned c, int mode)
{
    static const unsigned char tab[6][4][4] = {
        /* [mode-1][c&3][result byte 0..3] = source byte */
        {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}}, /* f4e */
        {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}}, /* b4e */
        {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}}, /* rc8 */
        {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}}, /* ecl */
        {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}}, /* ecr */
        {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}}, /* rc16 */
    };
    uint64_t src = ((uint64_t)b << 32) | a;
    unsigned d = 0;
    for (int i = 0; i < 4; i++) {
        unsigned byte;
        if (mode == 0) {
            unsigned sel = (c >> (4 * i)) & 0xf;
            byte = (unsigned)(src >> ((sel & 7) * 8)) & 0xff;
            if (sel & 8)
                byte = (byte & 0x80) ? 0xff : 0;
        } else {
            byte = (unsigned)(src >> (tab[mode - 1][c & 3][i] * 8)) & 0xff;
        }
        d |= byte << (8 * i);
    }
    return d;
}

static unsigned h_shf(unsigned lo, unsigned hi, unsigned c, int left, int clamp)
{
    unsigned nsh = clamp ? (c < 32 ? c : 32) : c & 31;
    uint64_t v = ((uint64_t)hi << 32) | lo;
    return left ? (unsigned)((v << nsh) >> 32) : (unsigned)(v >> nsh);
}

static int32_t sext(uint64_t v, int bits) { return (int32_t)((int64_t)(v << (64 - bits)) >> (64 - bits)); }

static unsigned h_dp4a(unsigned a, unsigned b, unsigned c, int as, int bs)
{
    unsigned d = c;
    for (int i = 0; i < 4; i++) {
        unsigned ab = (a >> (8 * i)) & 0xff, bb = (b >> (8 * i)) & 0xff;
        int va = as ? sext(ab, 8) : (int)ab, vb = bs ? sext(bb, 8) : (int)bb;
        d += (unsigned)(va * vb);
    }
    return d;
}

static unsigned h_dp2a(unsigned a, unsigned b, unsigned c, int hi, int sgn)
{
    unsigned d = c;
    for (int i = 0; i < 2; i++) {
        unsigned ah = (a >> (16 * i)) & 0xffff, bb = (b >> (8 * (i + (hi ? 2 : 0)))) & 0xff;
        int va = sgn ? sext(ah, 16) : (int)ah, vb = sgn ? sext(bb, 8) : (int)bb;
        d += (unsigned)(va * vb);
    }
    return d;
}

static uint64_t h_bfe(uint64_t a, unsigned b, unsigned c, int msb, int is_signed)
{
    unsigned pos = b & 0xff, len = c & 0xff;
    unsigned sbit = 0;
    if (is_signed && len != 0) {
        unsigned sp = pos + len - 1 < (unsigned)msb ? pos + len - 1 : (unsigned)msb;
        sbit = (unsigned)(a >> sp) & 1;
    }
    uint64_t d = 0;
    for (int i = 0; i <= msb; i++) {
        unsigned bit = ((unsigned)i < len && pos + i <= (unsigned)msb) ? (unsigned)(a >> (pos + i)) & 1 : sbit;
        d |= (uint64_t)bit << i;
    }
    return d;
}

static uint64_t h_bfi(uint64_t a, uint64_t b, unsigned c, unsigned dd, int msb)
{
    unsigned pos = c & 0xff, len = dd & 0xff;
    uint64_t f = b;
    for (unsigned i = 0; i < len && pos + i <= (unsigned)msb; i++)
        f = (f & ~(1ull << (pos + i))) | (((a >> i) & 1) << (pos + i));
    return f;
}

static unsigned h_bmsk(unsigned a, unsigned b, int clamp)
{
    unsigned a1 = a & 0x1f, b1 = b & 0x1f, sum = a1 + b1;
    unsigned mask0 = ~0u << a1;
    int pos_ovf = 0, width_ovf = 0;
    if (clamp) {
        if (a >= 32) {
            pos_ovf = 1;
            mask0 = 0;
        }
        if (b >= 32)
            width_ovf = 1;
    }
    unsigned mask1;
    if (sum >= 32 || pos_ovf || width_ovf)
        mask1 = 0;
    else if (b1 == 0)
        mask1 = ~0u;
    else
        mask1 = ~0u << sum;
    return mask0 & ~mask1;
}

static unsigned h_szext(unsigned a, unsigned b, int clamp, int is_signed)
{
    unsigned b1 = b & 0x1f;
    int too_large = b >= 32 && clamp;
    unsigned mask = too_large ? 0 : ~0u << b1;
    unsigned sign_pos = (b1 - 1) & 0x1f;
    unsigned sign_bit = (b1 == 0 || too_large || !is_signed) ? 0 : (a >> sign_pos) & 1;
    return (a & ~mask) | (sign_bit ? mask : 0);
}

static unsigned h_bfind(uint64_t a, int msb, int is_signed, int shiftamt)
{
    if (is_signed && ((a >> msb) & 1))
        a = ~a;
    unsigned d = 0xffffffffu;
    for (int i = msb; i >= 0; i--)
        if ((a >> i) & 1) {
            d = (unsigned)i;
            break;
        }
    if (shiftamt && d != 0xffffffffu)
        d = (unsigned)msb - d;
    return d;
}

static unsigned h_lop3(unsigned a, unsigned b, unsigned c, unsigned lut)
{
    unsigned d = 0;
    for (int i = 0; i < 32; i++) {
        unsigned idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
        d |= ((lut >> idx) & 1) << i;
    }
    return d;
}

static void put64(unsigned *w, int *k, uint64_t v)
{
    w[(*k)++] = (unsigned)v;
    w[(*k)++] = (unsigned)(v >> 32);
}

static void reference(unsigned x, unsigned y, unsigned z, unsigned s, uint64_t X, uint64_t Y, unsigned *w)
{
    unsigned p = s % 40, l = (s >> 8) % 40, p64 = s % 72, l64 = (s >> 8) % 72;
    int k = 0;
    w[k++] = (unsigned)__builtin_popcount(x);
    w[k++] = (unsigned)__builtin_popcountll(X);
    w[k++] = x ? (unsigned)__builtin_clz(x) : 32u;
    w[k++] = X ? (unsigned)__builtin_clzll(X) : 64u;
    w[k++] = (unsigned)__builtin_ffs((int)x);
    w[k++] = (unsigned)__builtin_ffsll((long long)X);
    w[k++] = h_brev(x);
    put64(w, &k, ((uint64_t)h_brev((unsigned)X) << 32) | h_brev((unsigned)(X >> 32)));
    w[k++] = h_prmt(x, y, s & 0x7777u, 0);
    for (int m = 0; m < 7; m++)
        w[k++] = h_prmt(x, y, s, m);
    w[k++] = h_shf(x, y, s & 63, 1, 0);
    w[k++] = h_shf(x, y, s & 63, 1, 1);
    w[k++] = h_shf(x, y, s & 63, 0, 0);
    w[k++] = h_shf(x, y, s & 63, 0, 1);
    w[k++] = h_dp4a(x, y, z, 1, 1);
    w[k++] = h_dp4a(x, y, z, 0, 0);
    w[k++] = h_dp4a(x, y, z, 0, 1);
    w[k++] = h_dp2a(x, y, z, 0, 1);
    w[k++] = h_dp2a(x, y, z, 1, 1);
    w[k++] = h_dp2a(x, y, z, 0, 0);
    w[k++] = h_dp2a(x, y, z, 1, 0);
    w[k++] = (unsigned)h_bfe(x, p, l, 31, 0);
    w[k++] = (unsigned)h_bfe(x, p, l, 31, 1);
    put64(w, &k, h_bfe(X, p64, l64, 63, 0));
    put64(w, &k, h_bfe(X, p64, l64, 63, 1));
    w[k++] = (unsigned)h_bfi(x, y, p, l, 31);
    put64(w, &k, h_bfi(X, Y, p64, l64, 63));
    w[k++] = (unsigned)(((uint64_t)x * y) >> 32);
    w[k++] = (unsigned)(uint64_t)(((int64_t)(int32_t)x * (int32_t)y) >> 32);
    put64(w, &k, (uint64_t)(((unsigned __int128)X * Y) >> 64));
    put64(w, &k, (uint64_t)(((__int128)(int64_t)X * (int64_t)Y) >> 64));
    w[k++] = (unsigned)((int64_t)sext(x, 24) * sext(y, 24));
    w[k++] = (unsigned)((uint64_t)(x & 0xffffff) * (y & 0xffffff));
    w[k++] = (unsigned)(((int64_t)sext(x, 24) * sext(y, 24)) >> 16);   /* bits 47..16 of the 48-bit product */
    w[k++] = (unsigned)((uint64_t)(x & 0xffffff) * (y & 0xffffff)) + z;
    w[k++] = (unsigned)((int32_t)x > (int32_t)y ? (int64_t)(int32_t)x - (int32_t)y : (int64_t)(int32_t)y - (int32_t)x) + z;
    w[k++] = (x > y ? x - y : y - x) + z;
    w[k++] = (unsigned)(int32_t)(((int64_t)(int32_t)x + (int32_t)y) >> 1);
    w[k++] = (unsigned)(int32_t)(((int64_t)(int32_t)x + (int32_t)y + 1) >> 1);
    w[k++] = (unsigned)(((uint64_t)x + y) >> 1);
    w[k++] = (unsigned)(((uint64_t)x + y + 1) >> 1);
    w[k++] = h_bmsk(p, l, 1);
    w[k++] = h_bmsk(p, l, 0);
    w[k++] = h_szext(x, l, 1, 1);
    w[k++] = h_szext(x, l, 0, 0);
    unsigned xs = x >> (s & 31);
    w[k++] = h_bfind(xs, 31, 0, 0);
    w[k++] = h_bfind((uint32_t)((int32_t)x >> (s & 31)), 31, 1, 0);
    w[k++] = h_bfind(xs, 31, 0, 1);
    w[k++] = h_bfind(X >> (s & 63), 63, 0, 0);
    unsigned amt = (s & 0x100) ? s : s % 40;
    w[k++] = amt >= 32 ? 0u : x << amt;
    w[k++] = amt >= 32 ? 0u : x >> amt;
    w[k++] = (unsigned)((int32_t)x >> (amt >= 32 ? 31 : amt));
    w[k++] = (x & y) ^ (~z | x);
    w[k++] = (x | y) & ~(z ^ y);
    w[k++] = h_lop3(x, y, z, 0x96);
    w[k++] = h_lop3(x, y, z, 0xe8);
    w[k++] = h_lop3(x, y, z, 0xca);
    w[k++] = h_lop3(x, y, z, 0x1e);
    int32_t ix = (int32_t)x, id = (int32_t)(y >> 20) | 1;
    id = (int32_t)y < 0 ? -id : id;
    if (ix == INT32_MIN && id == -1)
        id = 3;
    w[k++] = (unsigned)(ix / id);
    w[k++] = (unsigned)(ix % id);
    unsigned ud = (y >> (s % 32)) | 1u;
    w[k++] = x / ud;
    w[k++] = x % ud;
    int64_t lx = (int64_t)X, ld = (int64_t)(Y >> 40) | 1;
    ld = (int64_t)Y < 0 ? -ld : ld;
    put64(w, &k, (uint64_t)(lx / ld));
    put64(w, &k, (uint64_t)(lx % ld));
    uint64_t uld = (Y >> (s % 64)) | 1ull;
    put64(w, &k, X / uld);
    put64(w, &k, X % uld);
    w[k++] = (unsigned)((int32_t)x < (int32_t)y ? (int32_t)x : (int32_t)y);
    w[k++] = (unsigned)((int32_t)x > (int32_t)y ? (int32_t)x : (int32_t)y);
    w[k++] = x < y ? x : y;
    w[k++] = x > y ? x : y;
    int32_t ax = ix == INT32_MIN ? 0 : ix;
    w[k++] = (unsigned)(ax < 0 ? -ax : ax);
    put64(w, &k, (uint64_t)((int64_t)(int32_t)x * (int32_t)y));
    w[k++] = (unsigned)(int32_t)(int8_t)x;
    w[k++] = (unsigned)(int32_t)(int16_t)x;
    w[k++] = x & 0xffff;
    put64(w, &k, (uint64_t)(int64_t)(int32_t)x);
    w[k++] = (unsigned)(int32_t)(int16_t)(uint16_t)((x & 0xffff) * (y & 0xffff));
    if (k != K) {
        printf("int_bitops: reference produced %d values, expected %d\n", k, K);
        exit(1);
    }
}

int main(void)
{
    pw_report rep = pw_report_start("int_bitops");
    pw_rng rng = pw_rng_seed(19);
    const int n = 2048, bs = 96;
    unsigned *in32 = (unsigned *)malloc(n * 4 * sizeof(unsigned));
    uint64_t *in64 = (uint64_t *)malloc(n * 2 * sizeof(uint64_t));
    static const unsigned special[] = {0u, 1u, 0xffffffffu, 0x80000000u, 0x7fffffffu, 0x00ff00ffu, 0x80808080u};
    for (int t = 0; t < n; t++) {
        for (int j = 0; j < 4; j++) {
            unsigned r = pw_rng_u32(&rng);
            if (j < 3 && (pw_rng_u32(&rng) & 7) == 0)
                r = special[pw_rng_u32(&rng) % PW_ARRAY_SIZE(special)];
            in32[4 * t + j] = r;
        }
        for (int j = 0; j < 2; j++) {
            uint64_t r = pw_rng_u64(&rng);
            unsigned sel = pw_rng_u32(&rng) & 15;
            if (sel == 0) r = 0;
            if (sel == 1) r = ~0ull;
            if (sel == 2) r = 1ull << 63;
            if (sel == 3) r >>= 37;
            in64[2 * t + j] = r;
        }
    }
    unsigned *d32, *dout;
    unsigned long long *d64;
    CHECK(cudaMalloc(&d32, n * 4 * sizeof(unsigned)));
    CHECK(cudaMalloc(&d64, n * 2 * sizeof(uint64_t)));
    CHECK(cudaMalloc(&dout, (size_t)n * K * sizeof(unsigned)));
    CHECK(cudaMemcpy(d32, in32, n * 4 * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d64, in64, n * 2 * sizeof(uint64_t), cudaMemcpyHostToDevice));
    bitops<<<PW_DIV_UP(n, bs), bs>>>(d32, d64, dout, n);
    CHECK_LAUNCH();
    unsigned *out = (unsigned *)malloc((size_t)n * K * sizeof(unsigned));
    CHECK(cudaMemcpy(out, dout, (size_t)n * K * sizeof(unsigned), cudaMemcpyDeviceToHost));
    static const char *names[K] = {
        "popc", "popc64", "clz", "clz64", "ffs", "ffs64", "brev", "brev64.lo", "brev64.hi", "byte_perm",
        "prmt", "prmt.f4e", "prmt.b4e", "prmt.rc8", "prmt.ecl", "prmt.ecr", "prmt.rc16",
        "shf.l.wrap", "shf.l.clamp", "shf.r.wrap", "shf.r.clamp",
        "dp4a.s32.s32", "dp4a.u32.u32", "dp4a.u32.s32", "dp2a.lo.s32", "dp2a.hi.s32", "dp2a.lo.u32", "dp2a.hi.u32",
        "bfe.u32", "bfe.s32", "bfe.u64.lo", "bfe.u64.hi", "bfe.s64.lo", "bfe.s64.hi", "bfi.b32", "bfi.b64.lo",
        "bfi.b64.hi", "mul.hi.u32", "mul.hi.s32", "mul.hi.u64.lo", "mul.hi.u64.hi", "mul.hi.s64.lo", "mul.hi.s64.hi",
        "mul24.s32", "mul24.u32", "mul24.hi.s32", "mad24.lo.u32", "sad.s32", "sad.u32", "hadd.s32", "rhadd.s32", "hadd.u32", "rhadd.u32",
        "bmsk.clamp", "bmsk.wrap", "szext.clamp.s32", "szext.wrap.u32", "bfind.u32", "bfind.s32",
        "bfind.shiftamt.u32", "bfind.u64", "shl.b32", "shr.u32", "shr.s32", "lop3(expr1)", "lop3(expr2)",
        "lop3 0x96", "lop3 0xe8", "lop3 0xca", "lop3 0x1e", "div.s32", "rem.s32", "div.u32", "rem.u32",
        "div.s64.lo", "div.s64.hi", "rem.s64.lo", "rem.s64.hi", "div.u64.lo", "div.u64.hi", "rem.u64.lo",
        "rem.u64.hi", "min.s32", "max.s32", "min.u32", "max.u32", "abs.s32", "mul.wide.s32.lo", "mul.wide.s32.hi",
        "cvt.s8", "cvt.s16", "cvt.u16", "cvt.s64.s32.lo", "cvt.s64.s32.hi", "mul.lo.s16"};
    for (int t = 0; t < n; t++) {
        unsigned w[K];
        unsigned x = in32[4 * t], y = in32[4 * t + 1], z = in32[4 * t + 2], s = in32[4 * t + 3];
        reference(x, y, z, s, in64[2 * t], in64[2 * t + 1], w);
        for (int k = 0; k < K; k++)
            pw_expect(&rep, out[(size_t)t * K + k] == w[k],
                      "%s [%d] x=%08x y=%08x z=%08x s=%08x X=%016llx Y=%016llx: %08x want %08x", names[k], t, x, y, z,
                      s, (unsigned long long)in64[2 * t], (unsigned long long)in64[2 * t + 1], out[(size_t)t * K + k],
                      w[k]);
    }
    free(in32);
    free(in64);
    free(out);
    CHECK(cudaFree(d32));
    CHECK(cudaFree(d64));
    CHECK(cudaFree(dout));
    return pw_finish(&rep);
}
