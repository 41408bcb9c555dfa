/* tests/unit/emu_test.h: what the emulator's unit tests share.
 *
 *   et_load(ptx)      parse PTX text, load it in a fresh emulator context
 *   et_alloc/et_get   device buffers
 *   et_launch(...)    run a kernel with CUDA-style parameters
 *   et_op(body, ...)  run one instruction sequence over n inputs: a kernel
 *                     whose prologue loads a, b, c (64-bit each) for thread
 *                     g and gives them as %rda %ra %fa %da %ha %pa (64-bit,
 *                     low 32 bits, f32 view, f64 view, low 16 bits, a != 0),
 *                     and whose epilogue stores %rdd and %rde: the body
 *                     leaves its results there (the ET_R* macros convert).
 *
 * Expected values always come from C code in the tests, never from the
 * emulator.
 */
#ifndef PW_EMU_TEST_H
#define PW_EMU_TEST_H

#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/emu.h"
#include "ir/ir.h"
#include "ptx/ptx_parse.h"
#include "util/diag.h"

typedef struct et {
  emu_context *ctx;
  ir_module *ir;
  emu_module *mod;
} et;

#define ET_HEADER ".version 8.5\n.target sm_90\n.address_size 64\n"

static inline et *et_load_opts(const char *ptx, const emu_options *opt) {
  et *t = calloc(1, sizeof *t);
  pw_diag d;
  pw_diag_init(&d, NULL);
  t->ir = ptx_parse("test.ptx", ptx, strlen(ptx), &d, NULL);
  if (!t->ir) fprintf(stderr, "%s\n---\n%s\n", pw_diag_text(&d), ptx);
  ck_assert_msg(t->ir != NULL, "the test PTX does not parse");
  pw_diag_fini(&d);
  emu_options o = opt ? *opt : (emu_options){0};
  if (!o.threads) o.threads = 2;
  ck_assert_int_eq(emu_context_create(&o, &t->ctx), EMU_OK);
  emu_status st = emu_module_load(t->ctx, t->ir, &t->mod);
  ck_assert_msg(st == EMU_OK, "module load: %s", emu_error_message(t->ctx));
  return t;
}

static inline et *et_load(const char *ptx) { return et_load_opts(ptx, NULL); }

static inline void et_free(et *t) {
  emu_context_destroy(t->ctx);
  ir_module_destroy(t->ir);
  free(t);
}

static inline uint64_t et_alloc(et *t, size_t bytes, const void *init) {
  uint64_t d;
  ck_assert_int_eq(emu_malloc(t->ctx, bytes, &d), EMU_OK);
  if (init) ck_assert_int_eq(emu_memcpy_htod(t->ctx, d, init, bytes), EMU_OK);
  return d;
}

static inline void et_get(et *t, void *dst, uint64_t d, size_t bytes) {
  ck_assert_int_eq(emu_memcpy_dtoh(t->ctx, dst, d, bytes), EMU_OK);
}

/* Runs kernel with nparams 64-bit parameters. */
static inline emu_status et_launch(et *t, const char *kernel, emu_dim3 grid, emu_dim3 block, unsigned shared,
                                   int nparams, ...) {
  uint64_t vals[16];
  void *ptrs[16];
  va_list ap;
  va_start(ap, nparams);
  for (int i = 0; i < nparams && i < 16; i++) {
    vals[i] = va_arg(ap, uint64_t);
    ptrs[i] = &vals[i];
  }
  va_end(ap);
  return emu_launch(t->mod, kernel, grid, block, shared, ptrs);
}

static inline void et_ok(et *t, emu_status st) {
  ck_assert_msg(st == EMU_OK, "launch failed: %s: %s", emu_status_name(st), emu_error_message(t->ctx));
}

/* ---- one instruction sequence over many inputs ----------------------------- */
#define ET_REGS \
  "  .reg .b64 %rda, %rdb, %rdc, %rdd, %rde, %g64, %pp;\n" \
  "  .reg .b32 %ra, %rb, %rc, %rd32, %re32, %tx, %cx, %nx, %g, %r<16>;\n" \
  "  .reg .f32 %fa, %fb, %fc, %fd, %fe, %f<16>;\n" \
  "  .reg .f64 %da, %db, %dc, %dd, %de, %fd<8>;\n" \
  "  .reg .b16 %ha, %hb, %hc, %hd, %he, %h<8>;\n" \
  "  .reg .pred %pa, %pb, %pc, %pd, %pe, %p<8>;\n" \
  "  .reg .b64 %x<8>;\n"

#define ET_PROLOGUE \
  "  mov.u32 %tx, %tid.x;\n  mov.u32 %cx, %ctaid.x;\n  mov.u32 %nx, %ntid.x;\n" \
  "  mad.lo.u32 %g, %cx, %nx, %tx;\n  mul.wide.u32 %g64, %g, 8;\n" \
  "  ld.param.u64 %pp, [A];\n  add.u64 %pp, %pp, %g64;\n  ld.global.u64 %rda, [%pp];\n" \
  "  ld.param.u64 %pp, [B];\n  add.u64 %pp, %pp, %g64;\n  ld.global.u64 %rdb, [%pp];\n" \
  "  ld.param.u64 %pp, [C];\n  add.u64 %pp, %pp, %g64;\n  ld.global.u64 %rdc, [%pp];\n" \
  "  cvt.u32.u64 %ra, %rda;\n  cvt.u32.u64 %rb, %rdb;\n  cvt.u32.u64 %rc, %rdc;\n" \
  "  mov.b32 %fa, %ra;\n  mov.b32 %fb, %rb;\n  mov.b32 %fc, %rc;\n" \
  "  mov.b64 %da, %rda;\n  mov.b64 %db, %rdb;\n  mov.b64 %dc, %rdc;\n" \
  "  cvt.u16.u64 %ha, %rda;\n  cvt.u16.u64 %hb, %rdb;\n  cvt.u16.u64 %hc, %rdc;\n" \
  "  setp.ne.u64 %pa, %rda, 0;\n  setp.ne.u64 %pb, %rdb, 0;\n  setp.ne.u64 %pc, %rdc, 0;\n" \
  "  mov.u64 %rdd, 0;\n  mov.u64 %rde, 0;\n"

#define ET_EPILOGUE \
  "  ld.param.u64 %pp, [D];\n  add.u64 %pp, %pp, %g64;\n  st.global.u64 [%pp], %rdd;\n" \
  "  ld.param.u64 %pp, [E];\n  add.u64 %pp, %pp, %g64;\n  st.global.u64 [%pp], %rde;\n  ret;\n}\n"

/* Result conversions for bodies. */
#define ET_R32 "  cvt.u64.u32 %rdd, %rd32;\n"
#define ET_RF "  mov.b32 %rd32, %fd;\n  cvt.u64.u32 %rdd, %rd32;\n"
#define ET_RD "  mov.b64 %rdd, %dd;\n"
#define ET_RH "  cvt.u64.u16 %rdd, %hd;\n"
#define ET_RP "  selp.u64 %rdd, 1, 0, %pd;\n"
#define ET_RE32 "  cvt.u64.u32 %rde, %re32;\n"
#define ET_REP "  selp.u64 %rde, 1, 0, %pe;\n"

static inline char *et_op_ptx(const char *body) {
  const char *head = ET_HEADER ".visible .entry k(.param .u64 A, .param .u64 B, .param .u64 C, .param .u64 D, .param .u64 E)\n{\n";
  size_t n = strlen(head) + strlen(ET_REGS) + strlen(ET_PROLOGUE) + strlen(body) + strlen(ET_EPILOGUE) + 1;
  char *s = malloc(n);
  snprintf(s, n, "%s%s%s%s%s", head, ET_REGS, ET_PROLOGUE, body, ET_EPILOGUE);
  return s;
}

/* Runs body over n inputs (a, b, c may be NULL: zeros); d and e receive the
 * results (e may be NULL).  block: threads per block (n rounded up). */
static inline void et_op_block(const char *body, size_t n, unsigned block, const uint64_t *a, const uint64_t *b,
                               const uint64_t *c, uint64_t *d, uint64_t *e) {
  char *ptx = et_op_ptx(body);
  et *t = et_load(ptx);
  unsigned nb = (unsigned)((n + block - 1) / block);
  size_t total = (size_t)nb * block;
  uint64_t *z = calloc(total, 8);
  uint64_t *tmp = calloc(total, 8);
  memcpy(tmp, a ? a : z, n * 8);
  uint64_t da = et_alloc(t, total * 8, tmp);
  memcpy(tmp, b ? b : z, n * 8);
  uint64_t db = et_alloc(t, total * 8, tmp);
  memcpy(tmp, c ? c : z, n * 8);
  uint64_t dc = et_alloc(t, total * 8, tmp);
  uint64_t dd = et_alloc(t, total * 8, NULL), de = et_alloc(t, total * 8, NULL);
  et_ok(t, et_launch(t, "k", (emu_dim3){nb, 1, 1}, (emu_dim3){block, 1, 1}, 0, 5, da, db, dc, dd, de));
  et_get(t, tmp, dd, total * 8);
  memcpy(d, tmp, n * 8);
  if (e) {
    et_get(t, tmp, de, total * 8);
    memcpy(e, tmp, n * 8);
  }
  free(z);
  free(tmp);
  free(ptx);
  et_free(t);
}

static inline void et_op(const char *body, size_t n, const uint64_t *a, const uint64_t *b, const uint64_t *c,
                         uint64_t *d, uint64_t *e) {
  et_op_block(body, n, 64, a, b, c, d, e);
}

/* Deterministic test data (xorshift64*). */
static inline uint64_t et_rand(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1Dull;
}

static inline float et_f32(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline uint32_t et_f32b(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static inline double et_f64(uint64_t b) { double f; memcpy(&f, &b, 8); return f; }
static inline uint64_t et_f64b(double f) { uint64_t b; memcpy(&b, &f, 8); return b; }

/* Checks d[i] == want[i] for all i, reporting the first mismatches. */
#define ET_CHECK_ARRAY(what, n, got, want, a, b, c)                                                        \
  do {                                                                                                     \
    int bad_ = 0;                                                                                          \
    for (size_t i_ = 0; i_ < (n); i_++)                                                                    \
      if ((got)[i_] != (want)[i_]) {                                                                       \
        if (bad_ < 8)                                                                                      \
          fprintf(stderr, "%s [%zu]: a=%llx b=%llx c=%llx got %llx want %llx\n", what, i_,                 \
                  (unsigned long long)(a)[i_], (unsigned long long)(b)[i_],        \
                  (unsigned long long)(c)[i_], (unsigned long long)(got)[i_],                  \
                  (unsigned long long)(want)[i_]);                                                         \
        bad_++;                                                                                            \
      }                                                                                                    \
    ck_assert_msg(bad_ == 0, "%s: %d of %zu results wrong", what, bad_, (size_t)(n));                      \
  } while (0)

#endif
