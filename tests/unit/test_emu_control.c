/* tests/unit/test_emu_control.c: divergence and reconvergence on
 * unstructured control flow, exit inside divergent code, brx.idx, calls
 * (parameters, recursion, indirect calls with different targets per lane),
 * barriers (named, counted, bar.arrive, bar.red), deadlock reports, and
 * forward progress (spinning waves, workgroups and lanes).  Expected values
 * come from C simulations of the same programs. */
#include "emu_test.h"

/* thread index and in/out pointers: %r4 = global thread, %r5 = in[g],
 * %rd6 = &out[g * 4 words] */
#define PRO \
  "  .reg .b32 %r<60>;\n  .reg .b64 %rd<16>;\n  .reg .pred %p<16>;\n" \
  "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mad.lo.u32 %r4, %r2, %r3, %r1;\n" \
  "  ld.param.u64 %rd1, [IN];\n  mul.wide.u32 %rd2, %r4, 4;\n  add.u64 %rd3, %rd1, %rd2;\n  ld.global.u32 %r5, [%rd3];\n" \
  "  ld.param.u64 %rd4, [OUT];\n  mul.wide.u32 %rd5, %r4, 16;\n  add.u64 %rd6, %rd4, %rd5;\n"

#define ENTRY ".visible .entry k(.param .u64 IN, .param .u64 OUT)\n{\n" PRO

static uint32_t *run(const char *ptx, unsigned grid, unsigned bs, const uint32_t *in, unsigned wave, emu_status *st,
                     char *msg, size_t msgn) {
  emu_options o = {.threads = 2, .wave_size = wave};
  et *t = et_load_opts(ptx, &o);
  unsigned n = grid * bs;
  uint64_t din = et_alloc(t, n * 4, in), dout = et_alloc(t, (size_t)n * 16, NULL);
  emu_status s = et_launch(t, "k", (emu_dim3){grid, 1, 1}, (emu_dim3){bs, 1, 1}, 0, 2, din, dout);
  if (st) *st = s;
  else et_ok(t, s);
  if (msg) snprintf(msg, msgn, "%s", emu_error_message(t->ctx));
  uint32_t *out = calloc((size_t)n * 4, 4);
  if (s == EMU_OK) et_get(t, out, dout, (size_t)n * 16);
  et_free(t);
  return out;
}

/* The line of the first occurrence of needle in text, as "test.ptx:N". */
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

static uint32_t *rand_in(unsigned n, uint64_t seed) {
  uint32_t *in = malloc(n * 4);
  uint64_t s = seed;
  for (unsigned i = 0; i < n; i++) in[i] = (uint32_t)et_rand(&s);
  return in;
}

static uint32_t warp_mask_of(unsigned bs, unsigned tid) {
  unsigned nl = bs - (tid & ~31u) >= 32 ? 32 : bs - (tid & ~31u);
  return nl == 32 ? 0xffffffffu : (1u << nl) - 1;
}

/* ---- a loop with two exits, reconverging after it ------------------------------- */
static const char *loop_exits_ptx = ET_HEADER ENTRY
    "  mov.u32 %r10, 0;\n"
    "LOOP:\n"
    "  shr.u32 %r11, %r5, %r10;\n  and.b32 %r12, %r11, 3;\n  setp.eq.u32 %p1, %r12, 3;\n  @%p1 bra EXIT1;\n"
    "  add.u32 %r10, %r10, 1;\n  setp.eq.u32 %p2, %r10, 20;\n  @%p2 bra EXIT2;\n"
    "  and.b32 %r13, %r11, 8;\n  setp.ne.u32 %p3, %r13, 0;\n  @%p3 bra LOOP;\n"
    "  mov.u32 %r20, 300;\n  bra.uni JOIN;\n"
    "EXIT1:\n  add.u32 %r20, %r10, 100;\n  bra.uni JOIN;\n"
    "EXIT2:\n  mov.u32 %r20, 200;\n"
    "JOIN:\n  activemask.b32 %r21;\n"
    "  st.global.u32 [%rd6], %r20;\n  st.global.u32 [%rd6+4], %r21;\n  ret;\n}\n";

START_TEST(loop_with_several_exits) {
  for (unsigned wave = 32; wave <= 64; wave += 32) {
    unsigned bs = 96, n = 192;
    uint32_t *in = rand_in(n, 3);
    uint32_t *out = run(loop_exits_ptx, 2, bs, in, wave, NULL, NULL, 0);
    for (unsigned g = 0; g < n; g++) {
      uint32_t v = in[g], i = 0, r;
      for (;;) {
        uint32_t sh = i < 32 ? v >> i : 0;
        if ((sh & 3) == 3) { r = 100 + i; break; }
        if (++i == 20) { r = 200; break; }
        if (!(sh & 8)) { r = 300; break; }
      }
      ck_assert_msg(out[4 * g] == r, "thread %u: %u want %u", g, out[4 * g], r);
      /* every lane meets again at the join: the immediate post-dominator */
      ck_assert_msg(out[4 * g + 1] == warp_mask_of(bs, g % bs), "wave %u thread %u: active %08x at the join", wave, g,
                    out[4 * g + 1]);
    }
    free(in);
    free(out);
  }
}
END_TEST

/* ---- exit in divergent code; the halves meet again; a barrier after ------------ */
/* if (v & 1) { if (v & 2) exit; a = 1 } else a = 2; JOIN: activemask;
 * bar.sync 0 (exited threads do not hold it); then the sum of a over the
 * block through shared memory. */
static const char *exit_join_ptx = ET_HEADER ".shared .align 4 .b32 acc;\n" ENTRY
    "  setp.ne.u32 %p9, %r1, 0;\n  @%p9 bra START;\n  mov.u32 %r30, 0;\n  st.shared.u32 [acc], %r30;\n"
    "START:\n  bar.sync 0;\n"
    "  and.b32 %r10, %r5, 1;\n  setp.eq.u32 %p1, %r10, 0;\n  @%p1 bra ELSE;\n"
    "  and.b32 %r11, %r5, 2;\n  setp.ne.u32 %p2, %r11, 0;\n  @%p2 bra FIN;\n"
    "  mov.u32 %r12, 1;\n  bra.uni JOIN;\n"
    "ELSE:\n  mov.u32 %r12, 2;\n"
    "JOIN:\n  activemask.b32 %r13;\n  atom.shared.add.u32 %r14, [acc], %r12;\n"
    "  bar.sync 0;\n  ld.shared.u32 %r15, [acc];\n"
    "  st.global.u32 [%rd6], %r13;\n  st.global.u32 [%rd6+4], %r15;\n  st.global.u32 [%rd6+8], %r12;\n"
    "FIN:\n  exit;\n}\n";

START_TEST(exit_in_divergent_code) {
  for (unsigned wave = 32; wave <= 64; wave += 32)
    for (unsigned bs = 32; bs <= 96; bs += 32) {
      unsigned n = 2 * bs;
      uint32_t *in = rand_in(n, 11 + bs);
      uint32_t *out = run(exit_join_ptx, 2, bs, in, wave, NULL, NULL, 0);
      for (unsigned g = 0; g < n; g++) {
        uint32_t v = in[g];
        if ((v & 3) == 3) {
          ck_assert_uint_eq(out[4 * g], 0);   /* exited: wrote nothing */
          continue;
        }
        unsigned tid = g % bs, base = g - (tid & 31), nl = bs - (tid & ~31u) >= 32 ? 32 : bs - (tid & ~31u);
        uint32_t act = 0, sum = 0;
        for (unsigned j = 0; j < nl; j++)
          if ((in[base + j] & 3) != 3) act |= 1u << j;
        for (unsigned j = g - tid; j < g - tid + bs; j++)
          if ((in[j] & 3) != 3) sum += (in[j] & 1) ? 1 : 2;
        ck_assert_msg(out[4 * g] == act, "wave %u bs %u thread %u: active %08x want %08x", wave, bs, g, out[4 * g], act);
        ck_assert_msg(out[4 * g + 1] == sum, "bs %u thread %u: block sum %u want %u", bs, g, out[4 * g + 1], sum);
      }
      free(in);
      free(out);
    }
}
END_TEST

/* ---- brx.idx: a jump table with a different target per lane -------------------- */
static const char *brx_ptx = ET_HEADER ENTRY
    "  and.b32 %r10, %r5, 3;\n"
    "  TAB: .branchtargets T0, T1, T2, T3;\n"
    "  brx.idx %r10, TAB;\n"
    "T0:\n  mov.u32 %r11, 10;\n  bra.uni J;\n"
    "T1:\n  mov.u32 %r11, 11;\n  bra.uni J;\n"
    "T2:\n  mul.lo.u32 %r11, %r5, 3;\n  bra.uni J;\n"
    "T3:\n  mov.u32 %r11, 13;\n"
    "J:\n  activemask.b32 %r12;\n  st.global.u32 [%rd6], %r11;\n  st.global.u32 [%rd6+4], %r12;\n  ret;\n}\n";

START_TEST(brx_idx) {
  unsigned n = 128;
  uint32_t *in = rand_in(n, 5);
  uint32_t *out = run(brx_ptx, 2, 64, in, 32, NULL, NULL, 0);
  for (unsigned g = 0; g < n; g++) {
    uint32_t v = in[g], want;
    switch (v & 3) {
    case 0: want = 10; break;
    case 1: want = 11; break;
    case 2: want = v * 3; break;
    default: want = 13; break;
    }
    ck_assert_uint_eq(out[4 * g], want);
    ck_assert_uint_eq(out[4 * g + 1], 0xffffffffu);
  }
  free(in);
  free(out);
}
END_TEST

/* ---- calls: .param passing, recursion, indirect calls, ret in divergent code ---- */
static const char *calls_ptx = ET_HEADER
    ".func (.param .b32 r) fib(.param .b32 n)\n{\n"
    "  .reg .b32 %r<8>;\n  .reg .pred %p<2>;\n"
    "  ld.param.u32 %r1, [n];\n  setp.lt.u32 %p1, %r1, 2;\n  @%p1 bra BASE;\n"
    "  sub.u32 %r2, %r1, 1;\n"
    "  { .param .b32 a0; .param .b32 r0;\n  st.param.b32 [a0], %r2;\n  call.uni (r0), fib, (a0);\n  ld.param.b32 %r3, [r0]; }\n"
    "  sub.u32 %r2, %r1, 2;\n"
    "  { .param .b32 a1; .param .b32 r1;\n  st.param.b32 [a1], %r2;\n  call.uni (r1), fib, (a1);\n  ld.param.b32 %r4, [r1]; }\n"
    "  add.u32 %r5, %r3, %r4;\n  st.param.b32 [r], %r5;\n  ret;\n"
    "BASE:\n  st.param.b32 [r], %r1;\n  ret;\n}\n"
    /* two functions of the same prototype for indirect calls; the second
     * returns early (ret in divergent code) for odd x */
    ".func (.param .b32 r) twice(.param .b32 x)\n{\n  .reg .b32 %r<4>;\n"
    "  ld.param.u32 %r1, [x];\n  shl.b32 %r2, %r1, 1;\n  st.param.b32 [r], %r2;\n  ret;\n}\n"
    ".func (.param .b32 r) odd_or_square(.param .b32 x)\n{\n  .reg .b32 %r<4>;\n  .reg .pred %p<2>;\n"
    "  ld.param.u32 %r1, [x];\n  and.b32 %r2, %r1, 1;\n  setp.ne.u32 %p1, %r2, 0;\n"
    "  st.param.b32 [r], 7;\n  @%p1 bra DONE;\n"
    "  mul.lo.u32 %r3, %r1, %r1;\n  st.param.b32 [r], %r3;\n"
    "DONE:\n  ret;\n}\n"
    ENTRY
    "  and.b32 %r10, %r5, 15;\n"
    "  { .param .b32 a; .param .b32 rr;\n  st.param.b32 [a], %r10;\n  call.uni (rr), fib, (a);\n  ld.param.b32 %r11, [rr]; }\n"
    "  mov.u64 %rd10, twice;\n  mov.u64 %rd11, odd_or_square;\n"
    "  and.b32 %r12, %r5, 16;\n  setp.ne.u32 %p1, %r12, 0;\n  selp.b64 %rd12, %rd10, %rd11, %p1;\n"
    "  and.b32 %r13, %r5, 255;\n"
    "  PROTO: .callprototype (.param .b32 _) _ (.param .b32 _);\n"
    "  { .param .b32 b; .param .b32 rb;\n  st.param.b32 [b], %r13;\n  call (rb), %rd12, (b), PROTO;\n  ld.param.b32 %r14, [rb]; }\n"
    "  activemask.b32 %r15;\n"
    "  st.global.u32 [%rd6], %r11;\n  st.global.u32 [%rd6+4], %r14;\n  st.global.u32 [%rd6+8], %r15;\n  ret;\n}\n";

static uint32_t fibr(uint32_t n) { return n < 2 ? n : fibr(n - 1) + fibr(n - 2); }

START_TEST(calls_recursion_indirect) {
  for (unsigned wave = 32; wave <= 64; wave += 32) {
    unsigned n = 192;
    uint32_t *in = rand_in(n, 17);
    uint32_t *out = run(calls_ptx, 2, 96, in, wave, NULL, NULL, 0);
    for (unsigned g = 0; g < n; g++) {
      uint32_t v = in[g], x = v & 255;
      ck_assert_msg(out[4 * g] == fibr(v & 15), "fib(%u) = %u", v & 15, out[4 * g]);
      uint32_t want = (v & 16) ? 2 * x : ((x & 1) ? 7 : x * x);
      ck_assert_msg(out[4 * g + 1] == want, "indirect call thread %u: %u want %u", g, out[4 * g + 1], want);
      ck_assert_uint_eq(out[4 * g + 2], warp_mask_of(96, g % 96));
    }
    free(in);
    free(out);
  }
}
END_TEST

/* ---- named barriers, counts, arrive, bar.red ------------------------------------ */
/* 128 threads: warps 0-1 produce into shared memory and bar.arrive 1, 128;
 * warps 2-3 wait with bar.sync 1, 128 and read it.  Then bar.red over the
 * block: popc(v & 1), and(v != 0), or(v == 5). */
static const char *named_ptx = ET_HEADER ENTRY
    "  .shared .align 4 .b32 buf[64];\n"
    "  setp.lt.u32 %p1, %r1, 64;\n  @%p1 bra PROD;\n"
    "  bar.sync 1, 128;\n"
    "  sub.u32 %r10, %r1, 64;\n  shl.b32 %r11, %r10, 2;\n  mov.u32 %r12, buf;\n  add.u32 %r13, %r12, %r11;\n"
    "  ld.shared.u32 %r14, [%r13];\n  bra.uni RED;\n"
    "PROD:\n  shl.b32 %r11, %r1, 2;\n  mov.u32 %r12, buf;\n  add.u32 %r13, %r12, %r11;\n"
    "  mul.lo.u32 %r15, %r5, 3;\n  st.shared.u32 [%r13], %r15;\n  bar.arrive 1, 128;\n  mov.u32 %r14, 0;\n"
    "RED:\n  and.b32 %r20, %r5, 1;\n  setp.ne.u32 %p2, %r20, 0;\n  bar.red.popc.u32 %r21, 2, %p2;\n"
    "  setp.ne.u32 %p3, %r5, 0;\n  bar.red.and.pred %p4, 3, %p3;\n  selp.u32 %r22, 1, 0, %p4;\n"
    "  setp.eq.u32 %p5, %r20, 1;\n  bar.red.or.pred %p6, 4, !%p5;\n  selp.u32 %r23, 1, 0, %p6;\n"
    "  st.global.u32 [%rd6], %r14;\n  st.global.u32 [%rd6+4], %r21;\n  st.global.u32 [%rd6+8], %r22;\n"
    "  st.global.u32 [%rd6+12], %r23;\n  ret;\n}\n";

START_TEST(named_barriers_and_red) {
  for (unsigned wave = 32; wave <= 64; wave += 32) {
    unsigned n = 256;
    uint32_t *in = rand_in(n, 23);
    in[3] = 0;
    for (unsigned j = 128; j < 256; j++) in[j] |= 1;   /* block 1: every v odd */
    uint32_t *out = run(named_ptx, 2, 128, in, wave, NULL, NULL, 0);
    for (unsigned b = 0; b < 2; b++) {
      uint32_t popc = 0, all = 1, any_even = 0;
      for (unsigned j = 0; j < 128; j++) {
        uint32_t v = in[b * 128 + j];
        popc += v & 1;
        all &= v != 0;
        any_even |= (v & 1) == 0;
      }
      for (unsigned j = 0; j < 128; j++) {
        unsigned g = b * 128 + j;
        if (j >= 64) ck_assert_uint_eq(out[4 * g], in[b * 128 + j - 64] * 3);
        ck_assert_uint_eq(out[4 * g + 1], popc);
        ck_assert_uint_eq(out[4 * g + 2], all);
        ck_assert_uint_eq(out[4 * g + 3], any_even);
      }
    }
    free(in);
    free(out);
  }
}
END_TEST

/* ---- deadlocks are reported, with where each wave waits --------------------------- */
static const char *deadlock_ptx = ET_HEADER ENTRY
    "  setp.lt.u32 %p1, %r1, 32;\n  @%p1 bra A;\n"
    "  bar.sync 2, 64;\n  ret;\n"
    "A:\n  bar.sync 1, 64;\n  ret;\n}\n";

static const char *warp_deadlock_ptx = ET_HEADER ENTRY
    "  setp.lt.u32 %p1, %r1, 16;\n  @%p1 bra A;\n"
    "  shfl.sync.idx.b32 %r10, %r5, 0, 31, -1;\n  ret;\n"
    "A:\n  shfl.sync.idx.b32 %r11, %r5, 1, 31, -1;\n  ret;\n}\n";

START_TEST(deadlock_report) {
  uint32_t in[64] = {0};
  emu_status st;
  char msg[2048];
  uint32_t *out = run(deadlock_ptx, 1, 64, in, 32, &st, msg, sizeof msg);
  ck_assert_int_eq(st, EMU_ERR_DEADLOCK);
  ck_assert_msg(strstr(msg, "barrier 1") && strstr(msg, "barrier 2"), "message: %s", msg);
  ck_assert_msg(strstr(msg, line_of(deadlock_ptx, "bar.sync 1, 64")) && strstr(msg, line_of(deadlock_ptx, "bar.sync 2, 64")),
                "message names the PTX lines: %s", msg);
  ck_assert_msg(strstr(msg, "block (0,0,0)"), "message: %s", msg);
  free(out);
  out = run(warp_deadlock_ptx, 1, 32, in, 32, &st, msg, sizeof msg);
  ck_assert_int_eq(st, EMU_ERR_DEADLOCK);
  ck_assert_msg(strstr(msg, "warp-synchronous") && strstr(msg, "shfl"), "message: %s", msg);
  free(out);
}
END_TEST

/* ---- forward progress ---------------------------------------------------------------- */
/* Block b (thread 0) waits until flag[b-1] is set, then sets flag[b]
 * (decoupled look-back's chain); block 0 instead waits for block 1's first
 * flag (a later block: on one host thread this needs block 0 to yield). */
static const char *chain_ptx = ET_HEADER
    ".visible .entry k(.param .u64 IN, .param .u64 OUT)\n{\n"
    "  .reg .b32 %r<20>;\n  .reg .b64 %rd<10>;\n  .reg .pred %p<6>;\n"
    "  mov.u32 %r1, %tid.x;\n  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra DONE;\n"
    "  mov.u32 %r2, %ctaid.x;\n  ld.param.u64 %rd1, [OUT];\n  ld.param.u64 %rd9, [IN];\n"
    "  setp.ne.u32 %p2, %r2, 0;\n  @%p2 bra WAITPREV;\n"
    /* block 0: wait for early[1] */
    "W0:\n  ld.volatile.global.u32 %r3, [%rd9+4];\n  setp.eq.u32 %p3, %r3, 0;\n  @%p3 bra W0;\n"
    "  mov.u32 %r4, 1;\n  st.volatile.global.u32 [%rd1], %r4;\n  bra.uni DONE;\n"
    "WAITPREV:\n"
    "  mul.wide.u32 %rd2, %r2, 4;\n  add.u64 %rd3, %rd9, %rd2;\n  mov.u32 %r8, 1;\n  st.volatile.global.u32 [%rd3], %r8;\n"
    "  add.u64 %rd4, %rd1, %rd2;\n  sub.u64 %rd5, %rd4, 4;\n"
    "W1:\n  ld.volatile.global.u32 %r5, [%rd5];\n  setp.eq.u32 %p4, %r5, 0;\n  @%p4 bra W1;\n"
    "  add.u32 %r6, %r5, 1;\n  st.volatile.global.u32 [%rd4], %r6;\n"
    "DONE:\n  ret;\n}\n";

START_TEST(forward_progress_between_blocks) {
  for (unsigned threads = 1; threads <= 2; threads++) {
    emu_options o = {.threads = threads, .spin_limit = 64};
    et *t = et_load_opts(chain_ptx, &o);
    unsigned nb = 40;
    uint64_t early = et_alloc(t, nb * 4, NULL), flags = et_alloc(t, nb * 4, NULL);
    et_ok(t, et_launch(t, "k", (emu_dim3){nb, 1, 1}, (emu_dim3){64, 1, 1}, 0, 2, early, flags));
    uint32_t f[40];
    et_get(t, f, flags, sizeof f);
    for (unsigned b = 0; b < nb; b++) ck_assert_uint_eq(f[b], b + 1);
    emu_stats s;
    emu_last_stats(t->ctx, &s);
    if (threads == 1) ck_assert_msg(s.wg_yields > 0, "block 0 had to yield to let block 1 start");
    et_free(t);
  }
}
END_TEST

/* Wave 0 spins on a shared flag that wave 1 sets; and the lanes of one warp
 * take turns through a spin lock (a lane must not starve the lock holder of
 * its own warp). */
static const char *spin_ptx = ET_HEADER
    ".visible .entry k(.param .u64 IN, .param .u64 OUT)\n{\n"
    "  .reg .b32 %r<20>;\n  .reg .b64 %rd<10>;\n  .reg .pred %p<6>;\n"
    "  .shared .align 4 .b32 flag;\n  .shared .align 4 .b32 lock;\n  .shared .align 4 .b32 count;\n"
    "  mov.u32 %r1, %tid.x;\n  ld.param.u64 %rd1, [OUT];\n"
    "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra INIT;\n  mov.u32 %r0, 0;\n  st.shared.u32 [flag], %r0;\n"
    "  st.shared.u32 [lock], %r0;\n  st.shared.u32 [count], %r0;\n"
    "INIT:\n  bar.sync 0;\n"
    "  setp.lt.u32 %p2, %r1, 32;\n  @%p2 bra WAITER;\n"
    "  mov.u32 %r2, 1;\n  st.volatile.shared.u32 [flag], %r2;\n  bra.uni LOCK;\n"
    "WAITER:\n  ld.volatile.shared.u32 %r3, [flag];\n  setp.eq.u32 %p3, %r3, 0;\n  @%p3 bra WAITER;\n"
    "LOCK:\n  atom.shared.cas.b32 %r4, [lock], 0, 1;\n  setp.ne.u32 %p4, %r4, 0;\n  @%p4 bra LOCK;\n"
    "  ld.volatile.shared.u32 %r5, [count];\n  add.u32 %r5, %r5, 1;\n  st.volatile.shared.u32 [count], %r5;\n"
    "  mov.u32 %r6, 0;\n  atom.shared.exch.b32 %r7, [lock], %r6;\n"
    "  bar.sync 0;\n  setp.ne.u32 %p5, %r1, 0;\n  @%p5 bra DONE;\n"
    "  ld.shared.u32 %r8, [count];\n  st.global.u32 [%rd1], %r8;\n"
    "DONE:\n  ret;\n}\n";

START_TEST(forward_progress_in_block) {
  for (unsigned wave = 32; wave <= 64; wave += 32) {
    emu_options o = {.threads = 1, .spin_limit = 64, .wave_size = wave};
    et *t = et_load_opts(spin_ptx, &o);
    uint64_t out = et_alloc(t, 4, NULL);
    et_ok(t, et_launch(t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){64, 1, 1}, 0, 2, (uint64_t)0, out));
    uint32_t c;
    et_get(t, &c, out, 4);
    ck_assert_uint_eq(c, 64);
    et_free(t);
  }
}
END_TEST

/* ---- phis that swap: a parallel copy on the back edge ----------------------------------- */
/* a, b = b, a + b, n times (n = v & 31, per lane: the lanes leave the loop at
 * different iterations); and a three-way rotation x, y, z = y, z, x */
static const char *swap_ptx = ET_HEADER ENTRY
    "  and.b32 %r10, %r5, 31;\n  mov.u32 %r11, 0;\n  mov.u32 %r12, 1;\n  mov.u32 %r20, 1;\n  mov.u32 %r21, 2;\n"
    "  mov.u32 %r22, 3;\n  mov.u32 %r13, 0;\n"
    "  setp.eq.u32 %p1, %r10, 0;\n  @%p1 bra DONE;\n"
    "LOOP:\n  add.u32 %r14, %r11, %r12;\n  mov.u32 %r11, %r12;\n  mov.u32 %r12, %r14;\n"
    "  mov.u32 %r23, %r20;\n  mov.u32 %r20, %r21;\n  mov.u32 %r21, %r22;\n  mov.u32 %r22, %r23;\n"
    "  add.u32 %r13, %r13, 1;\n  setp.lt.u32 %p2, %r13, %r10;\n  @%p2 bra LOOP;\n"
    "DONE:\n  mad.lo.u32 %r24, %r20, 100, %r21;\n  mad.lo.u32 %r24, %r24, 10, %r22;\n"
    "  st.global.u32 [%rd6], %r11;\n  st.global.u32 [%rd6+4], %r24;\n  ret;\n}\n";

START_TEST(phi_swaps) {
  unsigned n = 64;
  uint32_t *in = rand_in(n, 31);
  uint32_t *out = run(swap_ptx, 1, 64, in, 32, NULL, NULL, 0);
  for (unsigned g = 0; g < n; g++) {
    uint32_t k = in[g] & 31, a = 0, b = 1, x = 1, y = 2, z = 3;
    for (uint32_t i = 0; i < k; i++) {
      uint32_t t = a + b;
      a = b, b = t;
      uint32_t r = x;
      x = y, y = z, z = r;
    }
    ck_assert_msg(out[4 * g] == a, "fib swap n=%u: %u want %u", k, out[4 * g], a);
    ck_assert_uint_eq(out[4 * g + 1], x * 1000 + y * 10 + z);
  }
  free(in);
  free(out);
}
END_TEST

/* The same from IR text, where a phi reads another phi of its block: the
 * back edge's copies (a <- b, b <- a + b) must read before they write. */
static const char *swap_pwir =
    "module ptx 8.5 sm_90 addr64\n\n"
    "visible kernel @k(param::entry u64 @out align 8 offset 0) {\n"
    "bb0:\n  %0 = sreg tid.x\n  %1:b32 = copy.u32 0\n  %2:b32 = copy.u32 1\n  %3:b32 = copy.u32 0\n"
    "  %20:b32 = copy.u32 1\n  %21:b32 = copy.u32 2\n  %22:b32 = copy.u32 3\n  br bb1\n"
    "bb1:  ; preds bb0, bb1\n"
    "  %4 = phi.b32 [%1, bb0], [%5, bb1]\n  %5 = phi.b32 [%2, bb0], [%7, bb1]\n  %6 = phi.b32 [%3, bb0], [%8, bb1]\n"
    /* x, y, z = y, z, x: a cycle no order of plain copies can do */
    "  %23 = phi.b32 [%20, bb0], [%24, bb1]\n  %24 = phi.b32 [%21, bb0], [%25, bb1]\n"
    "  %25 = phi.b32 [%22, bb0], [%23, bb1]\n"
    "  %7:b32 = add.u32 %4, %5\n  %8:b32 = add.u32 %6, 1\n  %9 = setp.lt.u32 %8, %0\n  cbr %9, bb1, bb2\n"
    "bb2:  ; preds bb1\n  %10:b64 = ld.param.u64 [@out]\n  %11:b64 = mul.wide.u32 %0, 8\n"
    "  %12:b64 = add.u64 %10, %11\n  st.global.u32 [%12], %4\n"
    "  %26:b32 = mad.lo.u32 %23, 100, %25\n  %27:b32 = mad.lo.u32 %24, 10, %26\n  st.global.u32 [%12+4], %27\n"
    "  ret\n}\n";

START_TEST(phi_reads_phi) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ir_parse("swap.pwir", swap_pwir, strlen(swap_pwir), &d);
  ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  emu_context *ctx;
  emu_module *em;
  ck_assert_int_eq(emu_context_create(&(emu_options){.threads = 1}, &ctx), EMU_OK);
  ck_assert_int_eq(emu_module_load(ctx, m, &em), EMU_OK);
  uint64_t out;
  ck_assert_int_eq(emu_malloc(ctx, 256, &out), EMU_OK);
  void *params[] = {&out};
  ck_assert_int_eq(emu_launch(em, "k", (emu_dim3){1, 1, 1}, (emu_dim3){32, 1, 1}, 0, params), EMU_OK);
  uint32_t o[64];
  ck_assert_int_eq(emu_memcpy_dtoh(ctx, o, out, sizeof o), EMU_OK);
  for (uint32_t t = 0; t < 32; t++) {
    /* the loop body runs max(1, t) times; the stored values are those that
     * entered the last iteration: fib(max(1, t) - 1), and the rotation */
    uint32_t iters = t > 1 ? t : 1, a = 0, b = 1, x = 1, y = 2, z = 3;
    for (uint32_t i = 1; i < iters; i++) {
      uint32_t s2 = a + b, r = x;
      a = b, b = s2;
      x = y, y = z, z = r;
    }
    ck_assert_msg(o[2 * t] == a, "lane %u: %u want %u", t, o[2 * t], a);
    ck_assert_msg(o[2 * t + 1] == x * 100 + z + y * 10, "lane %u: rotation %u", t, o[2 * t + 1]);
  }
  emu_context_destroy(ctx);
  ir_module_destroy(m);
}
END_TEST

/* ---- traps and asserts fail the launch with where --------------------------------------- */
static const char *trap_ptx = ET_HEADER ENTRY
    "  setp.eq.u32 %p1, %r4, 37;\n  @%p1 bra T;\n  ret;\nT:\n  trap;\n}\n";

START_TEST(trap_reports) {
  uint32_t in[64] = {0};
  emu_status st;
  char msg[2048];
  uint32_t *out = run(trap_ptx, 1, 64, in, 32, &st, msg, sizeof msg);
  ck_assert_int_eq(st, EMU_ERR_TRAP);
  ck_assert_msg(strstr(msg, "trap") && strstr(msg, "thread (37,0,0)") && strstr(msg, line_of(trap_ptx, "trap;")),
                "message: %s", msg);
  free(out);
}
END_TEST

Suite *emu_control_suite(void) {
  Suite *s = suite_create("emu_control");
  TCase *tc = tcase_create("control");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, loop_with_several_exits);
  tcase_add_test(tc, exit_in_divergent_code);
  tcase_add_test(tc, brx_idx);
  tcase_add_test(tc, calls_recursion_indirect);
  tcase_add_test(tc, named_barriers_and_red);
  tcase_add_test(tc, deadlock_report);
  tcase_add_test(tc, forward_progress_between_blocks);
  tcase_add_test(tc, forward_progress_in_block);
  tcase_add_test(tc, trap_reports);
  tcase_add_test(tc, phi_swaps);
  tcase_add_test(tc, phi_reads_phi);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(emu_control_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
