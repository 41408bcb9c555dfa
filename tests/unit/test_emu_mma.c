/* tests/unit/test_emu_mma.c: the emulator's mma.sync (emu/emu_matrix.c) in
 * the sm_75/sm_80 integer, sub-byte and .b1 forms, sm_90's .f64 m16n8
 * shapes and Volta's m8n8k4, against a C reference.
 *
 * The fragment layouts are written out here again from the PTX ISA's text
 * ("Matrix Fragments for mma.mMnNkK", 9.7.14.5.1-13: each row = / col =
 * formula as the ISA states it, one function per layout), independently of
 * ir/ir_mma.h's table: the test places random matrices A, B and C into the
 * 32 lanes' registers by these functions, runs one mma.sync from PTX text,
 * reads D back the same way and compares every element with D = A * B + C
 * computed here (exact integers; .satfinite clamps to the s32 range; .b1
 * counts the bits of A AND / XOR B; .f64 on small integers, exact in any
 * order; m8n8k4's f16 on small integers, exact in f32 and f16).  A wrong
 * row or column in the table moves elements and fails (a reordering of k
 * applied to A and B alike would not: D does not depend on it).
 */
#include <math.h>

#include "emu_test.h"

/* ---- the ISA's layouts: element i of the thread with %laneid L ---------- */
typedef void layout_fn(unsigned L, unsigned i, unsigned *row, unsigned *col);
#define G(L) ((L) >> 2)   /* groupID */
#define T(L) ((L) % 4)    /* threadID_in_group */

/* m8n8k16 .s8/.u8 (9.7.14.5.3) */
static void a_m8k16(unsigned L, unsigned i, unsigned *r, unsigned *c) { *r = G(L), *c = T(L) * 4 + i; }
static void b_k16_i8(unsigned L, unsigned i, unsigned *r, unsigned *c) { *r = T(L) * 4 + i, *c = G(L); }
/* the m8n8 accumulators (m8n8k16, m8n8k32, m8n8k128): row groupID, col threadID_in_group * 2 + i */
static void c_m8n8(unsigned L, unsigned i, unsigned *r, unsigned *c) { *r = G(L), *c = T(L) * 2 + i; }
/* m8n8k32 .s4/.u4 (9.7.14.5.4) */
static void a_m8k32(unsigned L, unsigned i, unsigned *r, unsigned *c) { *r = G(L), *c = T(L) * 8 + i; }
static void b_k32_i4(unsigned L, unsigned i, unsigned *r, unsigned *c) { *r = T(L) * 8 + i, *c = G(L); }
/* m16n8k32 .s4/.u4 (9.7.14.5.10): row groupID for i < 8, + 8 otherwise; col 8t + (i & 7) */
static void a_m16k32_i4(unsigned L, unsigned i, unsigned *r, unsigned *c) {
  *r = i < 8 ? G(L) : G(L) + 8, *c = T(L) * 8 + (i & 7);
}
/* m16n8k64 .s4/.u4 (9.7.14.5.11) */
static void a_m16k64(unsigned L, unsigned i, unsigned *r, unsigned *c) {
  *r = (i < 8 || (i >= 16 && i < 24)) ? G(L) : G(L) + 8;
  *c = i < 16 ? T(L) * 8 + (i & 7) : T(L) * 8 + (i & 7) + 32;
}
static void b_k64(unsigned L, unsigned i, unsigned *r, unsigned *c) {
  *r = i < 8 ? T(L) * 8 + (i & 7) : T(L) * 8 + (i & 7) + 32, *c = G(L);
}
/* m8n8k128 .b1 (9.7.14.5.5) */
static void a_m8k128(unsigned L, unsigned i, unsigned *r, unsigned *c) { *r = G(L), *c = T(L) * 32 + i; }
static void b_k128(unsigned L, unsigned i, unsigned *r, unsigned *c) { *r = T(L) * 32 + i, *c = G(L); }
/* m16n8k128 .b1 (9.7.14.5.12): row groupID for i < 32, + 8 otherwise */
static void a_m16k128(unsigned L, unsigned i, unsigned *r, unsigned *c) {
  *r = i < 32 ? G(L) : G(L) + 8, *c = T(L) * 32 + (i & 31);
}
/* m16n8k256 .b1 (9.7.14.5.13) */
static void a_m16k256(unsigned L, unsigned i, unsigned *r, unsigned *c) {
  *r = (i < 32 || (i >= 64 && i < 96)) ? G(L) : G(L) + 8;
  *c = i < 64 ? T(L) * 32 + (i & 31) : T(L) * 32 + (i & 31) + 128;
}
static void b_k256(unsigned L, unsigned i, unsigned *r, unsigned *c) {
  *r = i < 32 ? T(L) * 32 + (i & 31) : T(L) * 32 + (i & 31) + 128, *c = G(L);
}
/* the m16n8 accumulators: row groupID for c0, c1, + 8 for c2, c3; col threadID_in_group * 2 + (i & 1) */
static void c_m16n8(unsigned L, unsigned i, unsigned *r, unsigned *c) {
  *r = i < 2 ? G(L) : G(L) + 8, *c = T(L) * 2 + (i & 1);
}
/* .f64 m16n8k4 (9.7.14.5.6): a0 row groupID, a1 + 8, col threadID_in_group; b0 row t, col g */
static void a_f64_k4(unsigned L, unsigned i, unsigned *r, unsigned *c) { *r = i ? G(L) + 8 : G(L), *c = T(L); }
static void b_f64_k4(unsigned L, unsigned i, unsigned *r, unsigned *c) { (void)i, *r = T(L), *c = G(L); }
/* .f64 m16n8k8 (9.7.14.5.7): row g for a0, a2, + 8 for a1, a3; col t for a0, a1, + 4 for a2, a3 */
static void a_f64_k8(unsigned L, unsigned i, unsigned *r, unsigned *c) {
  *r = i % 2 ? G(L) + 8 : G(L), *c = i < 2 ? T(L) : T(L) + 4;
}
static void b_f64_k8(unsigned L, unsigned i, unsigned *r, unsigned *c) { *r = i ? T(L) + 4 : T(L), *c = G(L); }
/* .f64 m16n8k16 (9.7.14.5.8): row g for even i, + 8 odd; col i * 2 + t (even), i * 2 - 2 + t (odd) */
static void a_f64_k16(unsigned L, unsigned i, unsigned *r, unsigned *c) {
  *r = i % 2 ? G(L) + 8 : G(L), *c = i % 2 ? i * 2 - 2 + T(L) : i * 2 + T(L);
}
static void b_f64_k16(unsigned L, unsigned i, unsigned *r, unsigned *c) { *r = T(L) + 4 * i, *c = G(L); }

typedef struct form {
  const char *ptx;          /* the instruction, %A %B %C %D to be filled */
  unsigned m, n, k, ebits;  /* shape, bits of an A/B element */
  unsigned na, nb, nc;      /* elements per thread */
  layout_fn *a, *b, *c;
  char ta, tb;              /* 's' signed, 'u' unsigned, 'b' bit, 'f' f64 */
  bool sat, xor_;
} form;

static const form forms[] = {
    {"m8n8k16.row.col.s32.s8.s8.s32", 8, 8, 16, 8, 4, 4, 2, a_m8k16, b_k16_i8, c_m8n8, 's', 's', false, false},
    {"m8n8k16.row.col.s32.u8.s8.s32", 8, 8, 16, 8, 4, 4, 2, a_m8k16, b_k16_i8, c_m8n8, 'u', 's', false, false},
    {"m8n8k16.row.col.satfinite.s32.s8.u8.s32", 8, 8, 16, 8, 4, 4, 2, a_m8k16, b_k16_i8, c_m8n8, 's', 'u', true, false},
    {"m8n8k32.row.col.s32.s4.u4.s32", 8, 8, 32, 4, 8, 8, 2, a_m8k32, b_k32_i4, c_m8n8, 's', 'u', false, false},
    {"m8n8k32.row.col.satfinite.s32.s4.s4.s32", 8, 8, 32, 4, 8, 8, 2, a_m8k32, b_k32_i4, c_m8n8, 's', 's', true, false},
    {"m16n8k32.row.col.s32.u4.s4.s32", 16, 8, 32, 4, 16, 8, 4, a_m16k32_i4, b_k32_i4, c_m16n8, 'u', 's', false, false},
    {"m16n8k32.row.col.satfinite.s32.u4.u4.s32", 16, 8, 32, 4, 16, 8, 4, a_m16k32_i4, b_k32_i4, c_m16n8, 'u', 'u', true, false},
    {"m16n8k64.row.col.s32.s4.s4.s32", 16, 8, 64, 4, 32, 16, 4, a_m16k64, b_k64, c_m16n8, 's', 's', false, false},
    {"m16n8k64.row.col.satfinite.s32.u4.s4.s32", 16, 8, 64, 4, 32, 16, 4, a_m16k64, b_k64, c_m16n8, 'u', 's', true, false},
    {"m8n8k128.row.col.s32.b1.b1.s32.xor.popc", 8, 8, 128, 1, 32, 32, 2, a_m8k128, b_k128, c_m8n8, 'b', 'b', false, true},
    {"m8n8k128.row.col.s32.b1.b1.s32.and.popc", 8, 8, 128, 1, 32, 32, 2, a_m8k128, b_k128, c_m8n8, 'b', 'b', false, false},
    {"m16n8k128.row.col.s32.b1.b1.s32.xor.popc", 16, 8, 128, 1, 64, 32, 4, a_m16k128, b_k128, c_m16n8, 'b', 'b', false, true},
    {"m16n8k256.row.col.s32.b1.b1.s32.and.popc", 16, 8, 256, 1, 128, 64, 4, a_m16k256, b_k256, c_m16n8, 'b', 'b', false, false},
    {"m16n8k256.row.col.s32.b1.b1.s32.xor.popc", 16, 8, 256, 1, 128, 64, 4, a_m16k256, b_k256, c_m16n8, 'b', 'b', false, true},
    {"m16n8k4.row.col.f64.f64.f64.f64", 16, 8, 4, 64, 2, 1, 4, a_f64_k4, b_f64_k4, c_m16n8, 'f', 'f', false, false},
    {"m16n8k8.row.col.f64.f64.f64.f64", 16, 8, 8, 64, 4, 2, 4, a_f64_k8, b_f64_k8, c_m16n8, 'f', 'f', false, false},
    {"m16n8k16.row.col.rn.f64.f64.f64.f64", 16, 8, 16, 64, 8, 4, 4, a_f64_k16, b_f64_k16, c_m16n8, 'f', 'f', false, false},
};

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
  return rs;
}
/* A random element of kind t (ebits wide) as its value. */
static int64_t elem(char t, unsigned ebits) {
  uint64_t r = rnd();
  switch (t) {
  case 'b': return (int64_t)(r & 1);
  case 'u': return (int64_t)(r & ((1u << ebits) - 1));
  case 's': return (int64_t)(r & ((1u << ebits) - 1)) - ((r >> (ebits - 1)) & 1 ? (int64_t)1 << ebits : 0);
  default: return (int64_t)(r % 17) - 8;   /* f64: small integers */
  }
}

/* The kernel: register j of lane L at word (j * 32 + L) of in (of 8 bytes
 * for .f64), D likewise to out. */
static char *kernel(const form *f, unsigned ra, unsigned rb, unsigned rc) {
  bool f64 = f->ta == 'f';
  const char *ty = f64 ? "f64" : "b32";
  unsigned esz = f64 ? 8 : 4, nin = ra + rb + rc;
  size_t cap = 8192, n = 0;
  char *t = malloc(cap);
  n += (size_t)snprintf(t + n, cap - n,
                        ET_HEADER ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n"
                        "  .reg .b32 %%l;\n  .reg .b64 %%i, %%o, %%x;\n  .reg .%s %%v<32>;\n"
                        "  ld.param.u64 %%i, [in];\n  ld.param.u64 %%o, [out];\n  mov.u32 %%l, %%laneid;\n"
                        "  mul.wide.u32 %%x, %%l, %u;\n  add.u64 %%i, %%i, %%x;\n  add.u64 %%o, %%o, %%x;\n",
                        ty, esz);
  for (unsigned j = 0; j < nin; j++) n += (size_t)snprintf(t + n, cap - n, "  ld.global.%s %%v%u, [%%i+%u];\n", ty, j, j * 32 * esz);
  n += (size_t)snprintf(t + n, cap - n, "  mma.sync.aligned.%s {", f->ptx);
  for (unsigned j = 0; j < rc; j++) n += (size_t)snprintf(t + n, cap - n, "%s%%v%u", j ? ", " : "", 24 + j);
  const unsigned first[3] = {0, ra, ra + rb}, cnt[3] = {ra, rb, rc};
  for (unsigned o = 0; o < 3; o++) {
    n += (size_t)snprintf(t + n, cap - n, "}, {");
    for (unsigned j = 0; j < cnt[o]; j++) n += (size_t)snprintf(t + n, cap - n, "%s%%v%u", j ? ", " : "", first[o] + j);
  }
  n += (size_t)snprintf(t + n, cap - n, "};\n");
  for (unsigned j = 0; j < rc; j++)
    n += (size_t)snprintf(t + n, cap - n, "  st.global.%s [%%o+%u], %%v%u;\n", ty, j * 32 * esz, 24 + j);
  snprintf(t + n, cap - n, "  ret;\n}\n");
  return t;
}

static void run_form(const form *f) {
  bool f64 = f->ta == 'f';
  unsigned per = f64 ? 1 : 32 / f->ebits, ra = (f->na + per - 1) / per, rb = (f->nb + per - 1) / per, rc = f->nc;
  unsigned nin = ra + rb + rc, esz = f64 ? 8 : 4;
  static int64_t A[16][256], B[256][8], C[16][8];
  for (unsigned r = 0; r < f->m; r++)
    for (unsigned k = 0; k < f->k; k++) A[r][k] = elem(f->ta, f->ebits);
  for (unsigned k = 0; k < f->k; k++)
    for (unsigned c = 0; c < f->n; c++) B[k][c] = elem(f->tb, f->ebits);
  for (unsigned r = 0; r < f->m; r++)
    for (unsigned c = 0; c < f->n; c++) {
      uint64_t h = rnd();
      C[r][c] = f64 ? (int64_t)(h % 41) - 20 : (int64_t)(int32_t)(uint32_t)h;
      /* .satfinite: half the C near INT32_MAX or INT32_MIN, so that the clamp is reached */
      if (f->sat && (h >> 40) & 1) C[r][c] = (h >> 41) & 1 ? INT32_MAX - (int64_t)(h % 32) : INT32_MIN + (int64_t)(h % 32);
    }
  uint64_t *in = calloc(nin * 32, 8), *out = calloc(rc * 32, 8);
  uint32_t *in32 = (uint32_t *)in;
  for (unsigned L = 0; L < 32; L++) {
    unsigned r, c;
    for (unsigned i = 0; i < f->na; i++) {
      f->a(L, i, &r, &c);
      ck_assert(r < f->m && c < f->k);
      if (f64) in[(i)*32 + L] = et_f64b((double)A[r][c]);
      else in32[(i / per) * 32 + L] |= ((uint32_t)A[r][c] & ((1u << f->ebits) - 1)) << (f->ebits * (i % per));
    }
    for (unsigned i = 0; i < f->nb; i++) {
      f->b(L, i, &r, &c);
      ck_assert(r < f->k && c < f->n);
      if (f64) in[(ra + i) * 32 + L] = et_f64b((double)B[r][c]);
      else in32[(ra + i / per) * 32 + L] |= ((uint32_t)B[r][c] & ((1u << f->ebits) - 1)) << (f->ebits * (i % per));
    }
    for (unsigned i = 0; i < f->nc; i++) {
      f->c(L, i, &r, &c);
      if (f64) in[(ra + rb + i) * 32 + L] = et_f64b((double)C[r][c]);
      else in32[(ra + rb + i) * 32 + L] = (uint32_t)C[r][c];
    }
  }
  char *text = kernel(f, ra, rb, rc);
  et *t = et_load(text);
  uint64_t din = et_alloc(t, nin * 32 * esz, in), dout = et_alloc(t, rc * 32 * esz, NULL);
  et_ok(t, et_launch(t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){32, 1, 1}, 0, 2, din, dout));
  et_get(t, out, dout, rc * 32 * esz);
  uint32_t *out32 = (uint32_t *)out;
  unsigned clamped = 0;
  for (unsigned L = 0; L < 32; L++)
    for (unsigned i = 0; i < f->nc; i++) {
      unsigned r, c;
      f->c(L, i, &r, &c);
      int64_t s = 0;
      for (unsigned k = 0; k < f->k; k++)
        s += f->ta == 'b' ? (f->xor_ ? A[r][k] ^ B[k][c] : A[r][k] & B[k][c]) : A[r][k] * B[k][c];
      s += C[r][c];
      if (f64) {
        double got = et_f64(out[i * 32 + L]);
        ck_assert_msg(got == (double)s, "%s: D[%u][%u] = %g, expected %lld", f->ptx, r, c, got, (long long)s);
        continue;
      }
      int64_t want = s;
      if (f->sat && (s > INT32_MAX || s < INT32_MIN)) want = s > INT32_MAX ? INT32_MAX : INT32_MIN, clamped++;
      int32_t w32 = (int32_t)(uint32_t)(uint64_t)want, got = (int32_t)out32[i * 32 + L];
      ck_assert_msg(got == w32, "%s: D[%u][%u] = %d, expected %d", f->ptx, r, c, got, w32);
    }
  ck_assert_msg(!f->sat || clamped > 0, "%s: no element reached the clamp", f->ptx);
  et_free(t);
  free(text);
  free(in);
  free(out);
}

/* ---- Volta's m8n8k4 .f16 (9.7.14.5.1), per quad-pair ----------------------- */
/* f16 bits of a small integer (|v| < 2048), by hand */
static uint16_t f16_of(int v) {
  if (!v) return 0;
  unsigned s = v < 0, a = (unsigned)(v < 0 ? -v : v), e = 31 - (unsigned)__builtin_clz(a);
  return (uint16_t)(s << 15 | (e + 15) << 10 | ((a << (10 - e)) & 0x3ff));
}
static int f16_int(uint16_t h) {
  unsigned e = (h >> 10) & 31, mant = h & 0x3ff;
  if (!e) return 0;   /* only small integers come back */
  int v = (int)((mant | 0x400) >> (25 - e));   /* (1.mant) * 2^(e - 15), an integer here (e >= 15) */
  return h >> 15 ? -v : v;
}
/* The quad-pair of lane L and, within it, the ISA's formulas (written here again). */
static unsigned qp(unsigned L) { return (L % 16) / 4; }
static unsigned hi(unsigned L) { return L >= 16; }
static void v_a(bool row, unsigned L, unsigned i, unsigned *r, unsigned *c) {
  if (row) *r = L % 4 + 4 * hi(L), *c = i;          /* row = %laneid % 4 (+ 4 if %laneid >= 16), col = i */
  else *r = i % 4 + 4 * hi(L), *c = L % 4;          /* row = i % 4 (+ 4), col = %laneid % 4 */
}
static void v_b(bool row, unsigned L, unsigned i, unsigned *r, unsigned *c) {
  if (row) *r = L % 4, *c = i + 4 * hi(L);
  else *r = i, *c = L % 4 + 4 * hi(L);
}
static void v_c(bool f32, unsigned L, unsigned i, unsigned *r, unsigned *c) {
  if (!f32) *r = L % 4 + 4 * hi(L), *c = i;
  else {
    unsigned X = (L & 1) + (i & 2);   /* row = X (+ 4 if %laneid >= 16), col = (i & 4) + (L & 2) + (i & 1) */
    *r = X + 4 * hi(L), *c = (i & 4) + (L & 2) + (i & 1);
  }
}

static void run_volta(bool arow, bool brow, bool df32, bool cf32) {
  int A[4][8][4], B[4][4][8], C[4][8][8];
  for (unsigned q = 0; q < 4; q++)
    for (unsigned x = 0; x < 8; x++)
      for (unsigned k = 0; k < 4; k++) A[q][x][k] = (int)(rnd() % 9) - 4, B[q][k][x] = (int)(rnd() % 9) - 4;
  for (unsigned q = 0; q < 4; q++)
    for (unsigned r = 0; r < 8; r++)
      for (unsigned c = 0; c < 8; c++) C[q][r][c] = (int)(rnd() % 41) - 20;
  unsigned nc = cf32 ? 8 : 4, nd = df32 ? 8 : 4, nin = 4 + nc;
  uint32_t in[12 * 32] = {0}, out[8 * 32];
  for (unsigned L = 0; L < 32; L++) {
    unsigned q = qp(L), r, c;
    for (unsigned i = 0; i < 4; i++) {
      v_a(arow, L, i, &r, &c);
      in[(i / 2) * 32 + L] |= (uint32_t)f16_of(A[q][r][c]) << (16 * (i % 2));
      v_b(brow, L, i, &r, &c);
      in[(2 + i / 2) * 32 + L] |= (uint32_t)f16_of(B[q][r][c]) << (16 * (i % 2));
    }
    for (unsigned i = 0; i < 8; i++) {
      v_c(cf32, L, i, &r, &c);
      if (cf32) in[(4 + i) * 32 + L] = et_f32b((float)C[q][r][c]);
      else in[(4 + i / 2) * 32 + L] |= (uint32_t)f16_of(C[q][r][c]) << (16 * (i % 2));
    }
  }
  char ptx[2048], *p = ptx;
  p += sprintf(p, ET_HEADER ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n  .reg .b32 %%l;\n"
                  "  .reg .b64 %%i, %%o, %%x;\n  .reg .b32 %%v<32>;\n  ld.param.u64 %%i, [in];\n"
                  "  ld.param.u64 %%o, [out];\n  mov.u32 %%l, %%laneid;\n  mul.wide.u32 %%x, %%l, 4;\n"
                  "  add.u64 %%i, %%i, %%x;\n  add.u64 %%o, %%o, %%x;\n");
  for (unsigned j = 0; j < nin; j++) p += sprintf(p, "  ld.global.b32 %%v%u, [%%i+%u];\n", j, j * 128);
  p += sprintf(p, "  mma.sync.aligned.m8n8k4.%s.%s.%s.f16.f16.%s {", arow ? "row" : "col", brow ? "row" : "col",
               df32 ? "f32" : "f16", cf32 ? "f32" : "f16");
  for (unsigned j = 0; j < nd; j++) p += sprintf(p, "%s%%v%u", j ? ", " : "", 16 + j);
  p += sprintf(p, "}, {%%v0, %%v1}, {%%v2, %%v3}, {");
  for (unsigned j = 0; j < nc; j++) p += sprintf(p, "%s%%v%u", j ? ", " : "", 4 + j);
  p += sprintf(p, "};\n");
  for (unsigned j = 0; j < nd; j++) p += sprintf(p, "  st.global.b32 [%%o+%u], %%v%u;\n", j * 128, 16 + j);
  sprintf(p, "  ret;\n}\n");
  et *t = et_load(ptx);
  uint64_t din = et_alloc(t, nin * 128, in), dout = et_alloc(t, nd * 128, NULL);
  et_ok(t, et_launch(t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){32, 1, 1}, 0, 2, din, dout));
  et_get(t, out, dout, nd * 128);
  for (unsigned L = 0; L < 32; L++)
    for (unsigned i = 0; i < 8; i++) {
      unsigned q = qp(L), r, c;
      v_c(df32, L, i, &r, &c);
      int want = C[q][r][c];
      for (unsigned k = 0; k < 4; k++) want += A[q][r][k] * B[q][k][c];
      int got = df32 ? (int)et_f32(out[i * 32 + L]) : f16_int((uint16_t)(out[(i / 2) * 32 + L] >> (16 * (i % 2))));
      ck_assert_msg(got == want, "m8n8k4.%s.%s.%s..%s: lane %u D[%u][%u] of quad-pair %u = %d, expected %d",
                    arow ? "row" : "col", brow ? "row" : "col", df32 ? "f32" : "f16", cf32 ? "f32" : "f16", L, r, c,
                    q, got, want);
    }
  et_free(t);
}

START_TEST(test_m8n8k4_f16) {
  for (unsigned v = 0; v < 16; v++)
    if (!(v & 8) || (v & 4)) run_volta(v & 1, v & 2, v & 4, v & 8);   /* .f32 C needs .f32 D */
}
END_TEST

START_TEST(test_forms) {
  for (unsigned r = 0; r < 3; r++)
    for (unsigned k = 0; k < sizeof forms / sizeof forms[0]; k++) run_form(&forms[k]);
}
END_TEST

int main(void) {
  Suite *s = suite_create("emu_mma");
  TCase *tc = tcase_create("mma");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_forms);
  tcase_add_test(tc, test_m8n8k4_f16);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? 1 : 0;
}
