/* tests/unit/test_emu_mem.c: state spaces and memory instructions (PTX ISA
 * 5.1, 9.7.9.8-18, 9.7.13.4-6): global, shared (static and dynamic), local,
 * const, param and generic addressing, cvta/isspacep, vector accesses,
 * atomics of every operation and width, module variables with initializers
 * and addresses in them, device printf, assert, and the error reports of
 * bad accesses (out of bounds, use after free under memcheck, misaligned)
 * with kernel, PTX line and lane. */
#include "emu_test.h"

#define PRO \
  "  .reg .b32 %r<60>;\n  .reg .b64 %rd<30>;\n  .reg .pred %p<16>;\n  .reg .f32 %f<8>;\n" \
  "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mad.lo.u32 %r4, %r2, %r3, %r1;\n" \
  "  ld.param.u64 %rd1, [IN];\n  mul.wide.u32 %rd2, %r4, 4;\n  add.u64 %rd3, %rd1, %rd2;\n" \
  "  ld.param.u64 %rd4, [OUT];\n  mul.wide.u32 %rd5, %r4, 32;\n  add.u64 %rd6, %rd4, %rd5;\n"
#define ENTRY ".visible .entry k(.param .u64 IN, .param .u64 OUT)\n{\n" PRO

static const char *line_of(const char *text, const char *needle) {
  static char buf[8][32];
  static int k;
  const char *p = strstr(text, needle);
  ck_assert_ptr_nonnull(p);
  int line = 1;
  for (const char *q = text; q < p; q++) line += *q == '\n';
  char *b = buf[k++ % 8];
  snprintf(b, 32, "test.ptx:%d:", line);
  return b;
}

/* ---- spaces, generic addresses, cvta, isspacep, vectors ---------------------------- */
static const char *spaces_ptx = ET_HEADER
    ".global .align 8 .u32 gtab[4] = {10, 20, 30, 40};\n"
    ".const .align 8 .u32 ctab[4] = {1, 2, 3, 4};\n"
    ".global .align 8 .u64 gptr = gtab;\n"            /* an address in an initializer */
    ".extern .shared .align 16 .b8 dyn[];\n"
    ".visible .entry k(.param .u64 IN, .param .u64 OUT, .param .align 8 .b8 S[12])\n{\n" PRO
    "  .shared .align 16 .b32 sh[128];\n  .local .align 16 .b32 loc[4];\n"
    "  ld.global.u32 %r5, [%rd3];\n"
    /* shared through a 32-bit address, and through a generic one */
    "  mov.u32 %r6, sh;\n  shl.b32 %r7, %r1, 2;\n  add.u32 %r8, %r6, %r7;\n  st.shared.u32 [%r8], %r5;\n"
    "  cvta.shared.u64 %rd7, sh;\n  cvt.u64.u32 %rd8, %r7;\n  add.u64 %rd9, %rd7, %rd8;\n"
    "  bar.sync 0;\n  xor.b32 %r9, %r1, 1;\n  shl.b32 %r10, %r9, 2;\n  cvt.u64.u32 %rd10, %r10;\n"
    "  add.u64 %rd11, %rd7, %rd10;\n  ld.u32 %r11, [%rd11];\n"          /* generic load of the neighbour */
    "  isspacep.shared %p1, %rd11;\n  isspacep.global %p2, %rd11;\n  isspacep.global %p3, %rd3;\n"
    "  cvta.to.shared.u64 %rd12, %rd11;\n  cvt.u32.u64 %r12, %rd12;\n  sub.u32 %r13, %r12, %r6;\n"
    /* local: a vector store, a generic pointer to it, a scalar load back */
    "  mov.u32 %r14, 7;\n  st.local.v4.u32 [loc], {%r5, %r14, %r1, %r4};\n"
    "  mov.u64 %rd13, loc;\n  cvta.local.u64 %rd14, %rd13;\n  ld.u32 %r15, [%rd14+8];\n  isspacep.local %p4, %rd14;\n"
    /* const and global variables; a pointer read from an initializer */
    "  and.b32 %r16, %r1, 3;\n  mul.wide.u32 %rd15, %r16, 4;\n  mov.u64 %rd16, ctab;\n  add.u64 %rd17, %rd16, %rd15;\n"
    "  ld.const.u32 %r17, [%rd17];\n  ld.global.u64 %rd18, [gptr];\n  add.u64 %rd19, %rd18, %rd15;\n"
    "  ld.global.u32 %r18, [%rd19];\n  isspacep.const %p5, %rd17;\n"
    /* a by-value struct parameter, through ld.param and through a generic pointer */
    "  ld.param.u32 %r19, [S+4];\n  mov.u64 %rd20, S;\n  cvta.param.u64 %rd21, %rd20;\n  ld.u32 %r20, [%rd21+8];\n"
    /* dynamic shared memory: after the static part */
    "  mov.u32 %r21, dyn;\n  add.u32 %r22, %r21, %r7;\n  st.shared.u32 [%r22], %r4;\n  bar.sync 0;\n"
    "  ld.shared.u32 %r23, [%r22];\n  mov.u32 %r24, %dynamic_smem_size;\n"
    /* a 64-bit vector load from global */
    "  ld.global.v2.u32 {%r25, %r26}, [gtab+8];\n"
    "  selp.u32 %r30, 1, 0, %p1;\n  selp.u32 %r31, 2, 0, %p2;\n  selp.u32 %r32, 4, 0, %p3;\n  selp.u32 %r33, 8, 0, %p4;\n"
    "  selp.u32 %r34, 16, 0, %p5;\n  or.b32 %r35, %r30, %r31;\n  or.b32 %r35, %r35, %r32;\n  or.b32 %r35, %r35, %r33;\n"
    "  or.b32 %r35, %r35, %r34;\n"
    "  st.global.v4.u32 [%rd6], {%r11, %r13, %r15, %r17};\n"
    "  st.global.v4.u32 [%rd6+16], {%r18, %r19, %r20, %r35};\n"
    "  ret;\n}\n";

START_TEST(spaces_and_generic) {
  et *t = et_load(spaces_ptx);
  unsigned bs = 128, n = 256;
  uint32_t in[256], out[256 * 8];
  for (unsigned i = 0; i < n; i++) in[i] = i * 2654435761u;
  uint64_t din = et_alloc(t, sizeof in, in), dout = et_alloc(t, sizeof out, NULL);
  struct { uint32_t a, b, c; } sv = {5, 6, 7};
  void *params[3] = {&din, &dout, &sv};
  et_ok(t, emu_launch(t->mod, "k", (emu_dim3){2, 1, 1}, (emu_dim3){bs, 1, 1}, 512, params));
  et_get(t, out, dout, sizeof out);
  for (unsigned g = 0; g < n; g++) {
    unsigned tid = g % bs;
    const uint32_t *o = &out[g * 8];
    ck_assert_uint_eq(o[0], in[g - tid + (tid ^ 1)]);   /* the neighbour via a generic shared pointer */
    ck_assert_uint_eq(o[1], (tid ^ 1) * 4);             /* cvta.to.shared gives the shared offset back */
    ck_assert_uint_eq(o[2], tid);                        /* local vector store, generic load */
    ck_assert_uint_eq(o[3], (tid & 3) + 1);              /* const */
    ck_assert_uint_eq(o[4], 10 * ((tid & 3) + 1));       /* through a pointer in an initializer */
    ck_assert_uint_eq(o[5], 6);                          /* ld.param of a struct member */
    ck_assert_uint_eq(o[6], 7);                          /* the same through cvta.param */
    /* isspacep: shared yes, global no for the shared pointer; global yes
     * for a buffer; local yes; const yes */
    ck_assert_msg(o[7] == (1 | 4 | 8 | 16), "isspacep bits %x", o[7]);
  }
  et_free(t);
}
END_TEST

/* ---- atomics: every operation and width, order-independent checks -------------------- */
static const char *atom_ptx = ET_HEADER ENTRY
    "  ld.global.u32 %r5, [%rd3];\n  ld.param.u64 %rd7, [OUT];\n"
    "  atom.global.add.u32 %r10, [%rd7], 1;\n"                   /* [0] counter: old values are a permutation */
    "  atom.global.add.u64 %rd8, [%rd7+8], 4294967296;\n"        /* [8] 64-bit */
    "  atom.global.min.s32 %r11, [%rd7+16], %r5;\n"
    "  atom.global.max.u32 %r12, [%rd7+20], %r5;\n"
    "  atom.global.and.b32 %r13, [%rd7+24], %r5;\n"
    "  atom.global.or.b32 %r14, [%rd7+28], %r5;\n"
    "  atom.global.xor.b32 %r15, [%rd7+32], %r5;\n"
    "  atom.global.inc.u32 %r16, [%rd7+36], 9;\n"                /* wraps at 9 -> 0 */
    "  atom.global.dec.u32 %r17, [%rd7+40], 6;\n"                /* 0 or > 6 -> 6 */
    "  mov.f32 %f1, 0f3F000000;\n  atom.global.add.f32 %f2, [%rd7+44], %f1;\n"
    "  cvt.rn.f64.u32 %fd1_, %r1;\n"
    "  mov.b32 %r18, 0x3C003800;\n  atom.global.add.noftz.f16x2 %r19, [%rd7+48], %r18;\n"   /* (0.5, 1.0) */
    /* vector atomics (sm_90): each element its own atomic (PTX ISA 9.7.13.5) */
    "  mov.f32 %fv1, 0f3F800000;\n  mov.f32 %fv2, 0f40000000;\n  mov.f32 %fv3, 0f3E800000;\n"
    "  atom.global.v4.f32.add {%fv4, %fv5, %fv6, %fv7}, [%rd7+64], {%f1, %fv1, %fv2, %fv3};\n"
    "  red.global.v2.f32.add [%rd7+80], {%fv1, %fv2};\n"
    "  atom.global.add.noftz.v2.f16x2 {%r23, %r24}, [%rd7+88], {%r18, %r18};\n"
    /* cas.b16: each thread of block 0 swaps its own slot from 0 to tid+1 */
    "  setp.ne.u32 %p1, %r2, 0;\n  @%p1 bra CAS32;\n"
    "  mul.wide.u32 %rd9, %r1, 2;\n  add.u64 %rd10, %rd7, 256;\n  add.u64 %rd11, %rd10, %rd9;\n"
    "  cvt.u16.u32 %rs1, %r1;\n  add.u16 %rs2, %rs1, 1;\n  atom.global.cas.b16 %rs3, [%rd11], 0, %rs2;\n"
    "CAS32:\n"
    "  atom.global.exch.b32 %r20, [%rd7+52], %r4;\n"
    "  red.global.add.u32 [%rd7+56], 3;\n"
    "  atom.shared.add.u32 %r21, [sh], 1;\n  bar.sync 0;\n  ld.shared.u32 %r22, [sh];\n"
    "  st.global.u32 [%rd6+1024], %r10;\n  st.global.u32 [%rd6+1028], %r16;\n  st.global.u32 [%rd6+1032], %r22;\n"
    "  st.global.f32 [%rd6+1036], %fv7;\n"
    "  ret;\n}\n";

START_TEST(atomics) {
  /* the kernel text needs a few registers the prologue lacks */
  const char *extra = "  .reg .b16 %rs<4>;\n  .reg .f64 %fd1_;\n  .reg .f32 %fv<8>;\n"
                      "  .shared .align 4 .b32 sh;\n";
  char *ptx = malloc(strlen(atom_ptx) + strlen(extra) + 1);
  const char *cut = strstr(atom_ptx, "  mov.u32 %r1, %tid.x;");
  size_t head = (size_t)(cut - atom_ptx);
  memcpy(ptx, atom_ptx, head);
  strcpy(ptx + head, extra);
  strcat(ptx, cut);
  et *t = et_load(ptx);
  enum { NB = 4, BS = 96, NT = NB * BS };
  uint32_t in[NT];
  uint64_t s = 1;
  for (unsigned i = 0; i < NT; i++) in[i] = (uint32_t)et_rand(&s);
  uint8_t *init = calloc(1, 1024 + NT * 32);
  uint32_t *w = (uint32_t *)init;
  w[4] = 0x7fffffff;   /* min starts high */
  w[6] = 0xffffffff;   /* and starts all ones */
  w[10] = 3;           /* dec starts at 3 */
  uint64_t din = et_alloc(t, sizeof in, in), dout = et_alloc(t, 1024 + NT * 32, init);
  et_ok(t, et_launch(t, "k", (emu_dim3){NB, 1, 1}, (emu_dim3){BS, 1, 1}, 0, 2, din, dout));
  uint8_t *res = malloc(1024 + NT * 32);
  et_get(t, res, dout, 1024 + NT * 32);
  uint32_t *r = (uint32_t *)res;
  int32_t mn = 0x7fffffff;
  uint32_t mx = 0, an = 0xffffffff, orv = 0, x = 0;
  for (unsigned i = 0; i < NT; i++) {
    mn = (int32_t)in[i] < mn ? (int32_t)in[i] : mn;
    mx = in[i] > mx ? in[i] : mx;
    an &= in[i], orv |= in[i], x ^= in[i];
  }
  ck_assert_uint_eq(r[0], NT);
  ck_assert_uint_eq(*(uint64_t *)(res + 8), (uint64_t)NT << 32);
  ck_assert_uint_eq(r[4], (uint32_t)mn);
  ck_assert_uint_eq(r[5], mx);
  ck_assert_uint_eq(r[6], an);
  ck_assert_uint_eq(r[7], orv);
  ck_assert_uint_eq(r[8], x);
  ck_assert_uint_eq(r[9], NT % 10);                 /* inc: 0,1,..,9,0,... */
  /* dec from 3 with limit 6: 3,2,1,0,6,5,...,0,6 ... */
  uint32_t dv = 3;
  for (unsigned i = 0; i < NT; i++) dv = (dv == 0 || dv > 6) ? 6 : dv - 1;
  ck_assert_uint_eq(r[10], dv);
  ck_assert_uint_eq(r[11], 0x43400000);            /* 384 * 0.5 = 192.0 exactly */
  ck_assert_uint_eq(r[12], 0x5e005a00);            /* f16x2: 384.0 high, 192.0 low */
  ck_assert_uint_eq(r[14], 3 * NT);
  /* the vector atomics: 384 x (0.5, 1, 2, 0.25) and 384 x (1, 2), exact */
  ck_assert_uint_eq(r[16], 0x43400000);            /* 192.0 */
  ck_assert_uint_eq(r[17], 0x43c00000);            /* 384.0 */
  ck_assert_uint_eq(r[18], 0x44400000);            /* 768.0 */
  ck_assert_uint_eq(r[19], 0x42c00000);            /* 96.0 */
  ck_assert_uint_eq(r[20], 0x43c00000);            /* 384.0 */
  ck_assert_uint_eq(r[21], 0x44400000);            /* 768.0 */
  ck_assert_uint_eq(r[22], 0x5e005a00);            /* f16x2 (192, 384) twice */
  ck_assert_uint_eq(r[23], 0x5e005a00);
  /* the old values of the counter are a permutation of 0..NT-1; inc's old
   * values hold each of 0..9 the right number of times; shared counter */
  uint8_t *seen = calloc(NT, 1);
  unsigned hist[10] = {0};
  for (unsigned i = 0; i < NT; i++) {
    uint32_t old = r[256 + i * 8];
    ck_assert_uint_lt(old, NT);
    ck_assert_uint_eq(seen[old], 0);
    seen[old] = 1;
    hist[r[256 + i * 8 + 1]]++;
    ck_assert_uint_eq(r[256 + i * 8 + 2], BS);
    /* the old value of the 4th element: a multiple of 0.25 below 96 */
    float o4;
    memcpy(&o4, &r[256 + i * 8 + 3], 4);
    ck_assert(o4 >= 0 && o4 < 96.0f && o4 * 4 == (float)(int)(o4 * 4));
  }
  for (unsigned k = 0; k < 10; k++) ck_assert_uint_eq(hist[k], NT / 10 + (k < NT % 10));
  uint16_t *h16 = (uint16_t *)(res + 256);
  for (unsigned i = 0; i < BS && 256 + 2 * i < 1024; i++) ck_assert_uint_eq(h16[i], i + 1);
  free(seen);
  free(res);
  free(init);
  free(ptx);
  et_free(t);
}
END_TEST

/* ---- errors with where: out of bounds, use after free, misaligned --------------------- */
static const char *oob_ptx = ET_HEADER ENTRY
    "  ld.global.u32 %r5, [%rd3];\n  st.global.u32 [%rd6], %r5;\n  ret;\n}\n";

START_TEST(memcheck_reports) {
  for (int mc = 0; mc < 2; mc++) {
    emu_options o = {.threads = 2, .memcheck = mc};
    et *t = et_load_opts(oob_ptx, &o);
    /* in has 100 elements, 128 threads read: thread 100 is 0 bytes past the end */
    uint64_t din = et_alloc(t, 400, NULL), dout = et_alloc(t, 128 * 32, NULL);
    emu_status st = et_launch(t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){128, 1, 1}, 0, 2, din, dout);
    ck_assert_int_eq(st, EMU_ERR_ILLEGAL_ADDRESS);
    const char *msg = emu_error_message(t->ctx);
    ck_assert_msg(strstr(msg, "past the end of the 400-byte allocation") && strstr(msg, line_of(oob_ptx, "ld.global.u32 %r5")) &&
                      strstr(msg, "in kernel 'k'") && strstr(msg, "lane "),
                  "message: %s", msg);
    et_free(t);
  }
  /* use after free: only memcheck keeps the freed block to say so */
  emu_options o = {.threads = 1, .memcheck = true};
  et *t = et_load_opts(oob_ptx, &o);
  uint64_t din = et_alloc(t, 1024, NULL), dout = et_alloc(t, 32 * 32, NULL);
  ck_assert_int_eq(emu_free(t->ctx, din), EMU_OK);
  emu_status st = et_launch(t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){32, 1, 1}, 0, 2, din, dout);
  ck_assert_int_eq(st, EMU_ERR_ILLEGAL_ADDRESS);
  ck_assert_msg(strstr(emu_error_message(t->ctx), "use after free"), "message: %s", emu_error_message(t->ctx));
  /* a host memcpy from freed memory is an error, not a crash */
  char buf[16];
  ck_assert_int_ne(emu_memcpy_dtoh(t->ctx, buf, din, 16), EMU_OK);
  et_free(t);
}
END_TEST

static const char *misaligned_ptx = ET_HEADER ENTRY
    "  add.u64 %rd7, %rd3, 2;\n  ld.global.u32 %r5, [%rd7];\n  ret;\n}\n";
static const char *shared_oob_ptx = ET_HEADER ENTRY
    "  .shared .align 4 .b32 sh[8];\n  mov.u32 %r6, sh;\n  shl.b32 %r7, %r1, 2;\n  add.u32 %r8, %r6, %r7;\n"
    "  st.shared.u32 [%r8], %r1;\n  ret;\n}\n";

START_TEST(bad_accesses) {
  et *t = et_load(misaligned_ptx);
  uint64_t din = et_alloc(t, 1024, NULL), dout = et_alloc(t, 1024, NULL);
  ck_assert_int_eq(et_launch(t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){4, 1, 1}, 0, 2, din, dout), EMU_ERR_ILLEGAL_ADDRESS);
  ck_assert_msg(strstr(emu_error_message(t->ctx), "misaligned"), "message: %s", emu_error_message(t->ctx));
  et_free(t);
  t = et_load(shared_oob_ptx);
  din = et_alloc(t, 1024, NULL), dout = et_alloc(t, 1024, NULL);
  ck_assert_int_eq(et_launch(t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){9, 1, 1}, 0, 2, din, dout), EMU_ERR_ILLEGAL_ADDRESS);
  ck_assert_msg(strstr(emu_error_message(t->ctx), "thread (8,0,0)") && strstr(emu_error_message(t->ctx), "32 bytes of shared"),
                "message: %s", emu_error_message(t->ctx));
  et_free(t);
}
END_TEST

/* ---- device printf and assert ------------------------------------------------------------ */
static const char *printf_ptx = ET_HEADER
    ".extern .func (.param .b32 func_retval0) vprintf (.param .b64 p0, .param .b64 p1);\n"
    ".extern .func __assertfail (.param .b64 a0, .param .b64 a1, .param .b32 a2, .param .b64 a3, .param .b64 a4);\n"
    ".global .align 1 .b8 fmt[32] = {37, 100, 32, 37, 53, 46, 50, 102, 32, 37, 115, 32, 37, 108, 108, 120, 32, 37, 99, 10, 0};\n"
    ".global .align 1 .b8 str[3] = {104, 105, 0};\n"
    ".global .align 1 .b8 msg[4] = {120, 62, 48, 0};\n"
    ".visible .entry k(.param .u64 IN, .param .u64 OUT)\n{\n"
    "  .local .align 8 .b8 buf[40];\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<12>;\n  .reg .f64 %fd1;\n  .reg .pred %p<2>;\n"
    "  mov.u32 %r1, %tid.x;\n  mov.u64 %rd1, buf;\n"
    "  st.local.u32 [%rd1], %r1;\n  cvt.rn.f64.u32 %fd1, %r1;\n  st.local.f64 [%rd1+8], %fd1;\n"
    "  mov.u64 %rd2, str;\n  cvta.global.u64 %rd3, %rd2;\n  st.local.u64 [%rd1+16], %rd3;\n"
    "  mov.u64 %rd4, 0x123456789a;\n  st.local.u64 [%rd1+24], %rd4;\n  add.u32 %r2, %r1, 65;\n  st.local.u32 [%rd1+32], %r2;\n"
    "  cvta.local.u64 %rd5, %rd1;\n  mov.u64 %rd6, fmt;\n  cvta.global.u64 %rd7, %rd6;\n"
    "  { .param .b64 p0; .param .b64 p1; .param .b32 rv;\n  st.param.b64 [p0], %rd7;\n  st.param.b64 [p1], %rd5;\n"
    "  call.uni (rv), vprintf, (p0, p1);\n  ld.param.b32 %r3, [rv]; }\n"
    "  ld.param.u64 %rd8, [OUT];\n  mul.wide.u32 %rd9, %r1, 4;\n  add.u64 %rd10, %rd8, %rd9;\n  st.global.u32 [%rd10], %r3;\n"
    "  ld.param.u64 %rd11, [IN];\n  setp.eq.u64 %p1, %rd11, 0;\n  @%p1 bra END;\n"
    "  setp.eq.u32 %p1, %r1, 2;\n  @!%p1 bra END;\n"
    "  mov.u64 %rd2, msg;\n  cvta.global.u64 %rd3, %rd2;\n"
    "  { .param .b64 a0; .param .b64 a1; .param .b32 a2; .param .b64 a3; .param .b64 a4;\n"
    "  st.param.b64 [a0], %rd3;\n  st.param.b64 [a1], %rd3;\n  st.param.b32 [a2], 42;\n  st.param.b64 [a3], %rd3;\n"
    "  st.param.b64 [a4], 1;\n  call.uni __assertfail, (a0, a1, a2, a3, a4); }\n"
    "END:\n  ret;\n}\n";

START_TEST(printf_and_assert) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  emu_options o = {.threads = 1, .printf_out = f};
  et *t = et_load_opts(printf_ptx, &o);
  uint64_t dout = et_alloc(t, 16, NULL);
  et_ok(t, et_launch(t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){3, 1, 1}, 0, 2, (uint64_t)0, dout));
  fflush(f);
  ck_assert_str_eq(text, "0  0.00 hi 123456789a A\n1  1.00 hi 123456789a B\n2  2.00 hi 123456789a C\n");
  uint32_t rv[3];
  et_get(t, rv, dout, sizeof rv);
  ck_assert_uint_eq(rv[0], 5);   /* vprintf returns the number of arguments */
  /* assert: the launch fails, CUDA's message is printed */
  emu_status st = et_launch(t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){3, 1, 1}, 0, 2, (uint64_t)1, dout);
  fflush(f);
  ck_assert_int_eq(st, EMU_ERR_ASSERT);
  ck_assert_msg(strstr(text, "x>0:42: x>0: block: [0,0,0], thread: [2,0,0] Assertion `x>0` failed."), "printed: %s", text);
  ck_assert_msg(strstr(emu_error_message(t->ctx), "thread (2,0,0)"), "%s", emu_error_message(t->ctx));
  et_free(t);
  fclose(f);
  free(text);
}
END_TEST

/* ---- cp.async: copies global -> shared, zero-fills past src-size ------------------------- */
static const char *cp_async_ptx = ET_HEADER ENTRY
    "  .shared .align 16 .b8 sh[4096];\n"
    "  mov.u32 %r6, sh;\n  shl.b32 %r7, %r1, 5;\n  add.u32 %r8, %r6, %r7;\n"   /* 32 bytes per thread */
    "  ld.param.u64 %rd7, [IN];\n  mul.wide.u32 %rd8, %r1, 32;\n  add.u64 %rd9, %rd7, %rd8;\n"
    "  and.b32 %r9, %r1, 15;\n"                                                /* src-size 0..15 */
    "  cp.async.cg.shared.global [%r8], [%rd9], 16, %r9;\n"
    "  add.u64 %rd10, %rd9, 16;\n  cp.async.ca.shared.global [%r8+16], [%rd10], 8;\n"
    "  add.u64 %rd11, %rd9, 24;\n  cp.async.ca.shared.global [%r8+24], [%rd11], 4;\n"
    /* the same with src-sizes: 8 bytes of 0..15 (past cp-size: all 8), 4 bytes of 0..7 */
    "  shr.u32 %r18, %r1, 2;\n  and.b32 %r19, %r18, 15;\n  and.b32 %r20, %r1, 7;\n"
    "  mov.u32 %r21, sh;\n  add.u32 %r22, %r21, 2048;\n  add.u32 %r23, %r22, %r7;\n"   /* second half of sh */
    "  cp.async.ca.shared.global [%r23], [%rd10], 8, %r19;\n"
    "  cp.async.ca.shared.global [%r23+8], [%rd11], 4, %r20;\n"
    /* guarded (odd threads): 16 bytes of src-size 0..15 again */
    "  and.b32 %r24, %r1, 1;\n  setp.ne.u32 %p2, %r24, 0;\n"
    "  @%p2 cp.async.cg.shared.global [%r23+16], [%rd9], 16, %r9;\n"
    "  cp.async.commit_group;\n  cp.async.wait_group 0;\n  bar.sync 0;\n"
    "  ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r8];\n  ld.shared.v4.u32 {%r14, %r15, %r16, %r17}, [%r8+16];\n"
    "  st.global.v4.u32 [%rd6], {%r10, %r11, %r12, %r13};\n  st.global.v4.u32 [%rd6+16], {%r14, %r15, %r16, %r17};\n"
    "  ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r23];\n  st.global.v4.u32 [%rd6+2048], {%r10, %r11, %r12, %r13};\n"
    "  ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r23+16];\n  st.global.v4.u32 [%rd6+2064], {%r10, %r11, %r12, %r13};\n"
    "  ret;\n}\n";

START_TEST(cp_async) {
  et *t = et_load(cp_async_ptx);
  enum { NT = 64 };
  uint8_t in[NT * 32], out[NT * 32 + NT * 16 * 2];
  for (unsigned i = 0; i < sizeof in; i++) in[i] = (uint8_t)(i * 7 + 1);
  uint8_t poison[sizeof out];
  memset(poison, 0xee, sizeof poison);
  uint64_t din = et_alloc(t, sizeof in, in), dout = et_alloc(t, sizeof out, poison);
  et_ok(t, et_launch(t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){NT, 1, 1}, 0, 2, din, dout));
  et_get(t, out, dout, sizeof out);
  for (unsigned tid = 0; tid < NT; tid++)
    for (unsigned b = 0; b < 32; b++) {
      uint8_t want;
      if (b < 16) want = b < (tid & 15) ? in[tid * 32 + b] : 0;   /* zero past src-size */
      else if (b < 28) want = in[tid * 32 + b];
      else want = 0;                                             /* never written: shared starts zeroed */
      ck_assert_msg(out[tid * 32 + b] == want, "thread %u byte %u: %02x want %02x", tid, b, out[tid * 32 + b], want);
    }
  /* the src-size copies: thread t's 16 bytes at out[2048 + 32 t], then the
   * guarded copy's 16 (odd threads only) */
  for (unsigned tid = 0; tid < NT; tid++)
    for (unsigned b = 16; b < 32; b++) {
      uint8_t want = (tid & 1) && b - 16 < (tid & 15) ? in[tid * 32 + b - 16] : 0;
      ck_assert_msg(out[2048 + tid * 32 + b] == want, "guarded copy: thread %u byte %u: %02x want %02x", tid, b,
                    out[2048 + tid * 32 + b], want);
    }
  for (unsigned tid = 0; tid < NT; tid++)
    for (unsigned b = 0; b < 16; b++) {
      unsigned s8 = (tid >> 2) & 15, s4 = tid & 7;
      uint8_t want;
      if (b < 8) want = b < (s8 < 8 ? s8 : 8) ? in[tid * 32 + 16 + b] : 0;
      else if (b < 12) want = b - 8 < (s4 < 4 ? s4 : 4) ? in[tid * 32 + 24 + b - 8] : 0;
      else want = 0;                                             /* never written */
      ck_assert_msg(out[2048 + tid * 32 + b] == want, "src-size copies: thread %u byte %u: %02x want %02x", tid, b,
                    out[2048 + tid * 32 + b], want);
    }
  et_free(t);
}
END_TEST

/* ---- unsupported instructions fail the launch by name, never a crash --------------------- */
static const char *unsupported_ptx = ET_HEADER
    ".visible .entry ok(.param .u64 IN)\n{\n  ret;\n}\n"
    ".visible .entry bad(.param .u64 IN)\n{\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [IN];\n  mov.u32 %r1, 0;\n"
    "  tex.1d.v4.s32.s32 {%r1, %r2, %r3, %r3}, [%rd1, {%r1}];\n  ret;\n}\n";

START_TEST(unsupported_named) {
  et *t = et_load(unsupported_ptx);
  et_ok(t, et_launch(t, "ok", (emu_dim3){1, 1, 1}, (emu_dim3){32, 1, 1}, 0, 1, (uint64_t)0));
  emu_status st = et_launch(t, "bad", (emu_dim3){1, 1, 1}, (emu_dim3){32, 1, 1}, 0, 1, (uint64_t)0);
  ck_assert_int_eq(st, EMU_ERR_UNSUPPORTED);
  const char *msg = emu_error_message(t->ctx);
  ck_assert_msg(strstr(msg, "tex") && strstr(msg, "'bad'") && strstr(msg, "test.ptx:"), "message: %s", msg);
  ck_assert_int_eq(et_launch(t, "nope", (emu_dim3){1, 1, 1}, (emu_dim3){1, 1, 1}, 0, 1, (uint64_t)0), EMU_ERR_NOT_FOUND);
  et_free(t);
}
END_TEST


/* ---- the shared heap (emu/emu_heap.c) ------------------------------------- */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu/emu_heap.h"

/* Random allocations and frees against a list of what is live: every block
 * 256-byte aligned, zeroed, inside the heap, disjoint from every live one
 * (each is filled with its own byte and checked at free). */
START_TEST(heap_random) {
  emu_heap *h = emu_heap_create((uint64_t)64 << 20);
  ck_assert_ptr_nonnull(h);
  enum { N = 600 };
  struct { uint8_t *p; size_t n; } live[N] = {{0}};
  static uint8_t zeros[1 << 20], pattern[1 << 20];
  uint32_t seed = 12345;
  for (int step = 0; step < 20000; step++) {
    seed = seed * 1103515245u + 12345u;
    int k = (int)((seed >> 8) % N);
    if (live[k].p) {
      memset(pattern, k, live[k].n);
      ck_assert_msg(!memcmp(live[k].p, pattern, live[k].n), "block %d overwritten", k);
      ck_assert(emu_heap_free(h, live[k].p, true));
      live[k].p = NULL;
      continue;
    }
    seed = seed * 1103515245u + 12345u;
    /* mostly small, sometimes up to 1 MiB */
    size_t n = (seed >> 4) % 8 ? 1 + (seed >> 12) % 3000 : 1 + (seed >> 12) % (1u << 20);
    uint8_t *p = emu_heap_alloc(h, n);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % 256, 0);
    ck_assert(emu_heap_owns(h, p) && emu_heap_owns(h, p + n - 1));
    ck_assert_msg(!memcmp(p, zeros, n), "%zu bytes not zeroed", n);
    memset(p, k, n);
    live[k].p = p;
    live[k].n = n;
  }
  for (int k = 0; k < N; k++)
    if (live[k].p) ck_assert(emu_heap_free(h, live[k].p, true));
  /* everything merged back: the whole heap is one block again */
  uint8_t *all = emu_heap_alloc(h, (size_t)64 << 20);
  ck_assert_ptr_nonnull(all);
  ck_assert_ptr_null(emu_heap_alloc(h, 1));
  ck_assert(emu_heap_free(h, all, true));
  ck_assert(!emu_heap_free(h, all, true));          /* twice */
  int x;
  ck_assert(!emu_heap_free(h, &x, true));           /* not its memory */
  emu_heap_destroy(h);
}
END_TEST

/* The memfd is what another process maps (IPC): a second mapping of the
 * same file through /proc/self/fd sees the allocation's bytes at its offset,
 * and writes through it are seen through the heap.  A block freed without
 * reuse (memcheck) is never handed out again. */
START_TEST(heap_shared) {
  emu_heap *h = emu_heap_create((uint64_t)16 << 20);
  ck_assert_ptr_nonnull(h);
  uint8_t *a = emu_heap_alloc(h, 1000), *b = emu_heap_alloc(h, 5000);
  memcpy(b, "device bytes", 13);
  int fd;
  uint64_t off;
  ck_assert(emu_heap_share(h, b, &fd, &off));
  ck_assert_uint_eq(off, (uint64_t)(b - a));   /* the first blocks come in address order */
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  int fd2 = open(path, O_RDWR);
  ck_assert_int_ge(fd2, 0);
  long pg = sysconf(_SC_PAGESIZE);
  uint64_t start = off & ~(uint64_t)(pg - 1);
  uint8_t *m = mmap(NULL, (size_t)(off - start) + 5000, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, (off_t)start);
  ck_assert_ptr_ne(m, MAP_FAILED);
  ck_assert_str_eq((char *)m + (off - start), "device bytes");
  memcpy(m + (off - start), "written there", 14);
  ck_assert_str_eq((char *)b, "written there");
  munmap(m, (size_t)(off - start) + 5000);
  close(fd2);
  ck_assert(emu_heap_free(h, b, false));
  uint8_t *c = emu_heap_alloc(h, 5000);
  ck_assert_ptr_nonnull(c);
  ck_assert_ptr_ne(c, b);
  emu_heap_destroy(h);
}
END_TEST

/* Under ASan the heap marks what is not allocated, as malloc did: the
 * bytes past an allocation's size and a freed block are poisoned. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
START_TEST(heap_asan) {
  emu_heap *h = emu_heap_create((uint64_t)16 << 20);
  ck_assert_ptr_nonnull(h);
  uint8_t *p = emu_heap_alloc(h, 1000);
  ck_assert(!__asan_address_is_poisoned(p) && !__asan_address_is_poisoned(p + 999));
  ck_assert(__asan_address_is_poisoned(p + 1000));
  ck_assert(emu_heap_free(h, p, true));
  ck_assert(__asan_address_is_poisoned(p));
  uint8_t *q = emu_heap_alloc(h, 2048);   /* the same block again: usable */
  ck_assert_ptr_eq(q, p);
  ck_assert(!__asan_address_is_poisoned(q + 2047));
  emu_heap_destroy(h);
}
END_TEST
#endif

/* emu_malloc's memory is shareable and tagged; registered memory is not
 * shareable. */
START_TEST(malloc_query) {
  emu_context *c;
  ck_assert_int_eq(emu_context_create(NULL, &c), EMU_OK);
  uint64_t d;
  ck_assert_int_eq(emu_malloc_tagged(c, 3000, 7, &d), EMU_OK);
  emu_mem_desc md;
  ck_assert_int_eq(emu_mem_query(c, d + 100, &md), EMU_OK);
  ck_assert_uint_eq(md.base, d);
  ck_assert_uint_eq(md.bytes, 3000);
  ck_assert_uint_eq(md.tag, 7);
  ck_assert(md.owned);
  ck_assert_int_ge(md.fd, 0);
  static char host[64];
  ck_assert_int_eq(emu_register_tagged(c, host, sizeof host, 3), EMU_OK);
  ck_assert_int_eq(emu_mem_query(c, (uint64_t)(uintptr_t)host, &md), EMU_OK);
  ck_assert_int_eq(md.fd, -1);
  ck_assert_uint_eq(md.tag, 3);
  ck_assert_int_eq(emu_free(c, d), EMU_OK);
  ck_assert_int_eq(emu_mem_query(c, d, &md), EMU_ERR_NOT_FOUND);
  emu_context_destroy(c);
}
END_TEST

Suite *emu_mem_suite(void) {
  Suite *s = suite_create("emu_mem");
  TCase *tc = tcase_create("memory");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, spaces_and_generic);
  tcase_add_test(tc, atomics);
  tcase_add_test(tc, memcheck_reports);
  tcase_add_test(tc, bad_accesses);
  tcase_add_test(tc, printf_and_assert);
  tcase_add_test(tc, cp_async);
  tcase_add_test(tc, unsupported_named);
  tcase_add_test(tc, heap_random);
  tcase_add_test(tc, heap_shared);
  tcase_add_test(tc, malloc_query);
#if defined(__SANITIZE_ADDRESS__)
  tcase_add_test(tc, heap_asan);
#endif
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(emu_mem_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
