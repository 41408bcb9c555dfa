/* tests/lower/printf_drain.c: device assert and the printf buffer's limits,
 * lowered (lower_printf.c) and run on the emulator at wave 64 and 32, the
 * buffer drained by the runtime's host side (rt_printf_drain).
 *
 * The differential (lower_diff.c) cannot compare these: an unlowered
 * assert fails the launch, and a full buffer is the runtime's business.
 * Expected values are written here by hand:
 *   - assert: thread (5,0,0) of block (1,0,0) fails `x>0` at a.cu:12 in
 *     "void k()": exactly CUDA's message on the error stream, one assert
 *     counted, nothing else printed;
 *   - a full buffer: 64 threads print a 24-byte record ("t %d\n": 16 of
 *     header, 4 of argument, rounded up to 8) into 8*24 bytes: 8 lines
 *     printed, 56 records counted as dropped, 56*24 bytes reported over;
 *   - no buffer: 64 dropped, nothing printed;
 *   - %s of a string in the thread's local memory: gone when the host
 *     drains, so each of the 64 lines says it is unreadable;
 *   - vprintf's result: 1 (the number of arguments) when it fits, -1 when
 *     dropped, stored by each thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/emu.h"
#include "ir/ir.h"
#include "lower/lower.h"
#include "ptx/ptx_parse.h"
#include "runtime/rt_printf.h"
#include "util/diag.h"
#include "util/pw_printf.h"

static const char assert_ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".extern .func __assertfail(.param .b64 p0, .param .b64 p1, .param .b32 p2, .param .b64 p3, .param .b64 p4);\n"
    ".global .align 1 .b8 $str[4] = {120, 62, 48, 0};\n"
    ".global .align 1 .b8 $str$1[5] = {97, 46, 99, 117, 0};\n"
    ".global .align 1 .b8 $str$2[9] = {118, 111, 105, 100, 32, 107, 40, 41, 0};\n"
    ".visible .entry k()\n{\n"
    "  .reg .pred %p<3>;\n  .reg .b32 %r<3>;\n  .reg .b64 %rd<8>;\n"
    "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n"
    "  setp.ne.u32 %p1, %r1, 5;\n  setp.ne.u32 %p2, %r2, 1;\n  or.pred %p1, %p1, %p2;\n"
    "  @%p1 bra $L_ok;\n"
    "  mov.u64 %rd1, $str;\n  cvta.global.u64 %rd2, %rd1;\n"
    "  mov.u64 %rd3, $str$1;\n  cvta.global.u64 %rd4, %rd3;\n"
    "  mov.u64 %rd5, $str$2;\n  cvta.global.u64 %rd6, %rd5;\n"
    "  {\n  .param .b64 param0;\n  st.param.b64 [param0+0], %rd2;\n"
    "  .param .b64 param1;\n  st.param.b64 [param1+0], %rd4;\n"
    "  .param .b32 param2;\n  st.param.b32 [param2+0], 12;\n"
    "  .param .b64 param3;\n  st.param.b64 [param3+0], %rd6;\n"
    "  .param .b64 param4;\n  st.param.b64 [param4+0], 1;\n"
    "  call.uni __assertfail, (param0, param1, param2, param3, param4);\n  }\n"
    "$L_ok:\n  ret;\n}\n";

/* every thread: ret[tid] = printf("t %d\n", tid) */
static const char print_ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);\n"
    ".global .align 1 .b8 $str[6] = {116, 32, 37, 100, 10, 0};\n"
    ".visible .entry k(.param .u64 ret)\n{\n"
    "  .local .align 8 .b8 __local_depot0[8];\n"
    "  .reg .b32 %r<4>;\n  .reg .b64 %rd<9>;\n"
    "  mov.u64 %rd1, __local_depot0;\n  cvta.local.u64 %rd2, %rd1;\n"
    "  mov.u32 %r1, %tid.x;\n  st.local.u32 [%rd1], %r1;\n"
    "  mov.u64 %rd3, $str;\n  cvta.global.u64 %rd4, %rd3;\n"
    "  {\n  .param .b64 param0;\n  st.param.b64 [param0+0], %rd4;\n"
    "  .param .b64 param1;\n  st.param.b64 [param1+0], %rd2;\n"
    "  .param .b32 retval0;\n"
    "  call.uni (retval0), vprintf, (param0, param1);\n"
    "  ld.param.b32 %r2, [retval0+0];\n  }\n"
    "  ld.param.u64 %rd5, [ret];\n  cvta.to.global.u64 %rd6, %rd5;\n"
    "  mul.wide.u32 %rd7, %r1, 4;\n  add.s64 %rd8, %rd6, %rd7;\n"
    "  st.global.u32 [%rd8], %r2;\n  ret;\n}\n";

/* every thread: printf("s %s\n", local string "loc") */
static const char local_str_ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);\n"
    ".global .align 1 .b8 $str[6] = {115, 32, 37, 115, 10, 0};\n"
    ".visible .entry k(.param .u64 ret)\n{\n"
    "  .local .align 8 .b8 __local_depot0[16];\n"
    "  .reg .b32 %r<3>;\n  .reg .b64 %rd<6>;\n"
    "  mov.u64 %rd1, __local_depot0;\n  cvta.local.u64 %rd2, %rd1;\n"
    "  st.local.u32 [%rd1+8], 6516588;\n"   /* "loc\0" */
    "  add.u64 %rd3, %rd2, 8;\n  st.local.u64 [%rd1], %rd3;\n"
    "  mov.u64 %rd4, $str;\n  cvta.global.u64 %rd5, %rd4;\n"
    "  {\n  .param .b64 param0;\n  st.param.b64 [param0+0], %rd5;\n"
    "  .param .b64 param1;\n  st.param.b64 [param1+0], %rd2;\n"
    "  .param .b32 retval0;\n"
    "  call.uni (retval0), vprintf, (param0, param1);\n"
    "  ld.param.b32 %r1, [retval0+0];\n  }\n"
    "  ret;\n}\n";

static int failures;
#define EXPECT(cond, ...)                                  \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
      failures++;                                          \
    }                                                      \
  } while (0)

static bool emu_read(void *ctx, uint64_t addr, void *dst, size_t n) {
  return emu_memcpy_dtoh(ctx, dst, addr, n) == EMU_OK;
}
static bool emu_write(void *ctx, uint64_t addr, const void *src, size_t n) {
  return emu_memcpy_htod(ctx, addr, src, n) == EMU_OK;
}

typedef struct run {
  emu_status st;
  rt_printf_result res;
  char *out, *err;         /* what the drain printed */
  uint32_t dropped;        /* the module's counter */
  int32_t ret[64];
} run;

/* Lowers ptx for wave, runs k on grid x 64 threads with a buffer of
 * `capacity` bytes (0: none), drains it. */
static void run_lowered(const char *ptx, unsigned wave, unsigned grid, uint32_t capacity, run *r) {
  memset(r, 0, sizeof *r);
  pw_diag d;
  pw_diag_init(&d, stderr);
  ir_module *m = ptx_parse("printf_drain.ptx", ptx, strlen(ptx), &d, NULL);
  bool ok = m && lower_module(m, ir_target_for_wave(wave), &(lower_pipeline_options){.diag = &d});
  pw_diag_fini(&d);
  EXPECT(ok, "wave%u: lowering failed", wave);
  if (!ok) {
    if (m) ir_module_destroy(m);
    r->st = EMU_ERR_INVALID_VALUE;
    return;
  }
  emu_context *c;
  emu_module *em;
  emu_context_create(&(emu_options){.threads = 1}, &c);
  EXPECT(emu_module_load(c, m, &em) == EMU_OK, "wave%u: load: %s", wave, emu_error_message(c));
  uint64_t var = 0, buf = 0, retp = 0;
  size_t bytes = 0;
  EXPECT(emu_module_global(em, PW_PRINTF_VAR, &var, &bytes) == EMU_OK && bytes == PW_PRINTF_VAR_BYTES,
         "wave%u: no %s of %u bytes", wave, PW_PRINTF_VAR, (unsigned)PW_PRINTF_VAR_BYTES);
  if (capacity) {
    emu_malloc(c, PW_PRINTF_BUF_HEADER + capacity, &buf);
    emu_memset(c, buf, 0, 1, PW_PRINTF_BUF_HEADER + capacity);
    uint8_t v[PW_PRINTF_VAR_BYTES] = {0};
    memcpy(v + PW_PRINTF_VAR_BUFFER, &buf, 8);
    memcpy(v + PW_PRINTF_VAR_CAPACITY, &capacity, 4);
    emu_memcpy_htod(c, var, v, sizeof v);
  }
  emu_malloc(c, sizeof r->ret, &retp);
  emu_memset(c, retp, 0x55, 1, sizeof r->ret);
  r->st = emu_launch_buffer(em, "k", (emu_dim3){grid, 1, 1}, (emu_dim3){64, 1, 1}, 0, &retp, sizeof retp);
  size_t on = 0, en = 0;
  FILE *out = open_memstream(&r->out, &on), *err = open_memstream(&r->err, &en);
  if (buf) {
    bool drained = rt_printf_drain(&(rt_printf_mem){emu_read, emu_write, c}, buf, capacity, out, err, &r->res);
    EXPECT(drained, "wave%u: drain failed", wave);
    uint32_t offset = 1;
    emu_memcpy_dtoh(c, &offset, buf + PW_PRINTF_BUF_OFFSET, 4);
    EXPECT(offset == 0, "wave%u: the drain must reset the write offset, it is %u", wave, offset);
  }
  fclose(out);
  fclose(err);
  emu_memcpy_dtoh(c, &r->dropped, var + PW_PRINTF_VAR_DROPPED, 4);
  emu_memcpy_dtoh(c, r->ret, retp, sizeof r->ret);
  emu_module_unload(em);
  emu_context_destroy(c);
  ir_module_destroy(m);
}

static void free_run(run *r) {
  free(r->out);
  free(r->err);
}

int main(void) {
  for (unsigned wave = 64; wave >= 32; wave /= 2) {
    run r;
    /* assert */
    run_lowered(assert_ptx, wave, 2, 4096, &r);
    EXPECT(r.st == EMU_OK, "wave%u: assert: the launch ends (the thread exits): %s", wave, emu_status_name(r.st));
    EXPECT(r.res.asserts == 1 && r.res.records == 0, "wave%u: assert: %u asserts, %u records", wave, r.res.asserts,
           r.res.records);
    EXPECT(r.err && !strcmp(r.err, "a.cu:12: void k(): block: [1,0,0], thread: [5,0,0] Assertion `x>0` failed.\n"),
           "wave%u: assert message: '%s'", wave, r.err ? r.err : "");
    EXPECT(r.out && !*r.out, "wave%u: assert: nothing on stdout: '%s'", wave, r.out ? r.out : "");
    EXPECT(!strcmp(r.res.first_assert, "a.cu:12: void k(): block: [1,0,0], thread: [5,0,0] Assertion `x>0` failed."),
           "wave%u: first assert: '%s'", wave, r.res.first_assert);
    free_run(&r);

    /* a buffer with room for 8 of 64 records */
    run_lowered(print_ptx, wave, 1, 8 * 24, &r);
    EXPECT(r.st == EMU_OK, "wave%u: full: launch %s", wave, emu_status_name(r.st));
    EXPECT(r.res.records == 8, "wave%u: full: %u records printed, 8 expected", wave, r.res.records);
    EXPECT(r.dropped == 56, "wave%u: full: %u dropped, 56 expected", wave, r.dropped);
    EXPECT(r.res.dropped_bytes == 56 * 24, "wave%u: full: %llu bytes over", wave,
           (unsigned long long)r.res.dropped_bytes);
    unsigned lines = 0, ones = 0, minus = 0;
    for (const char *p = r.out; p && *p; p++) lines += *p == '\n';
    for (unsigned t = 0; t < 64; t++) {
      ones += r.ret[t] == 1;
      minus += r.ret[t] == -1;
      if (r.ret[t] == 1) {
        char line[32];
        snprintf(line, sizeof line, "t %u\n", t);
        EXPECT(r.out && strstr(r.out, line), "wave%u: full: thread %u's line is missing", wave, t);
      }
    }
    EXPECT(lines == 8 && ones == 8 && minus == 56, "wave%u: full: %u lines, %u results 1, %u results -1", wave, lines,
           ones, minus);
    EXPECT(r.err && strstr(r.err, "device printf buffer full"), "wave%u: full: no message: '%s'", wave,
           r.err ? r.err : "");
    free_run(&r);

    /* %s of a local string */
    run_lowered(local_str_ptx, wave, 1, 4096, &r);
    lines = 0;
    for (const char *p = r.out; p && *p;) {
      EXPECT(!strncmp(p, "s <ptxwave: device printf: a %s argument is not readable from the host>\n", 72),
             "wave%u: local %%s: line '%.80s'", wave, p);
      lines++;
      p = strchr(p, '\n');
      if (p) p++;
    }
    EXPECT(r.st == EMU_OK && lines == 64 && r.res.records == 64, "wave%u: local %%s: %s, %u lines, %u records", wave,
           emu_status_name(r.st), lines, r.res.records);
    free_run(&r);

    /* no buffer */
    run_lowered(print_ptx, wave, 1, 0, &r);
    EXPECT(r.st == EMU_OK && r.dropped == 64, "wave%u: no buffer: %s, %u dropped", wave, emu_status_name(r.st),
           r.dropped);
    minus = 0;
    for (unsigned t = 0; t < 64; t++) minus += r.ret[t] == -1;
    EXPECT(minus == 64, "wave%u: no buffer: %u results -1", wave, minus);
    free_run(&r);
  }
  printf("printf_drain: %s\n", failures ? "FAIL" : "ok");
  return failures ? 1 : 0;
}
