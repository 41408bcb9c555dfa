/* tests/unit/test_emu_warp.c: warp-level instructions (PTX ISA 9.7.9.6 shfl,
 * 9.7.13.8-14 vote, match, activemask, redux, elect, bar.warp.sync), in
 * blocks of 32, 48, 64, 96 and 1024 threads, converged and under
 * divergence, at wave size 32 (a wave is a warp) and 64 (two warps per
 * wave: each half behaves as its own warp).  References follow the ISA's
 * definitions, written here in C. */
#include "emu/emu_internal.h"
#include "emu_test.h"

static const unsigned block_sizes[] = {32, 48, 64, 96, 1024};
#define NBS (sizeof block_sizes / sizeof block_sizes[0])

/* Runs kernel k(in, out, w) of a module over 2 blocks of bs threads with K
 * result words per thread. */
static uint32_t *run_warp(const char *ptx, unsigned wave, unsigned bs, unsigned K, const uint32_t *in, uint32_t w) {
  emu_options o = {.threads = 2, .wave_size = wave};
  et *t = et_load_opts(ptx, &o);
  unsigned n = 2 * bs;
  uint64_t din = et_alloc(t, n * 4, in);
  uint64_t dout = et_alloc(t, (size_t)n * K * 4, NULL);
  et_ok(t, et_launch(t, "k", (emu_dim3){2, 1, 1}, (emu_dim3){bs, 1, 1}, 0, 3, din, dout, (uint64_t)w));
  uint32_t *out = malloc((size_t)n * K * 4);
  et_get(t, out, dout, (size_t)n * K * 4);
  et_free(t);
  return out;
}

static uint32_t *inputs(unsigned n, uint64_t seed) {
  uint32_t *in = malloc(n * 4);
  uint64_t s = seed;
  for (unsigned i = 0; i < n; i++) in[i] = (uint32_t)et_rand(&s);
  return in;
}

/* Lanes that exist in the warp of thread g of a block of bs threads. */
static unsigned warp_lanes(unsigned bs, unsigned tid) {
  unsigned base = tid & ~31u;
  return bs - base >= 32 ? 32 : bs - base;
}

/* ---- shfl: every mode, widths 1..32, the predicate, and raw c operands --------- */
static const char *shfl_ptx =
    ET_HEADER
    ".visible .entry k(.param .u64 IN, .param .u64 OUT, .param .u32 W)\n{\n"
    "  .reg .b32 %r<40>;\n  .reg .b64 %rd<8>;\n  .reg .pred %p<8>;\n"
    "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mad.lo.u32 %r4, %r2, %r3, %r1;\n"
    "  ld.param.u64 %rd1, [IN];\n  mul.wide.u32 %rd2, %r4, 4;\n  add.u64 %rd3, %rd1, %rd2;\n  ld.global.u32 %r5, [%rd3];\n"
    "  ld.param.u64 %rd4, [OUT];\n  mul.wide.u32 %rd5, %r4, 40;\n  add.u64 %rd6, %rd4, %rd5;\n"
    "  ld.param.u32 %r6, [W];\n"
    /* c for width w: ((32 - w) << 8) | 31 for down/bfly/idx, (32 - w) << 8 for up */
    "  sub.u32 %r7, 32, %r6;\n  shl.b32 %r8, %r7, 8;\n  or.b32 %r9, %r8, 31;\n"
    "  and.b32 %r10, %r5, 31;\n"                        /* b: a lane or offset from the input */
    "  shfl.sync.idx.b32 %r11|%p1, %r5, %r10, %r9, -1;\n"
    "  shfl.sync.up.b32 %r12|%p2, %r5, %r10, %r8, -1;\n"
    "  shfl.sync.down.b32 %r13|%p3, %r5, %r10, %r9, -1;\n"
    "  shfl.sync.bfly.b32 %r14|%p4, %r5, %r10, %r9, -1;\n"
    /* a raw c with arbitrary clamp and segment mask, and b past 31 */
    "  shr.u32 %r15, %r5, 8;\n  and.b32 %r16, %r15, 7967;\n"    /* c = bits 12:8 and 4:0 */
    "  shr.u32 %r17, %r5, 3;\n  and.b32 %r18, %r17, 63;\n"
    "  shfl.sync.idx.b32 %r19|%p5, %r5, %r18, %r16, -1;\n"
    "  selp.u32 %r20, 1, 0, %p1;\n  selp.u32 %r21, 2, 0, %p2;\n  selp.u32 %r22, 4, 0, %p3;\n  selp.u32 %r23, 8, 0, %p4;\n"
    "  selp.u32 %r24, 16, 0, %p5;\n  or.b32 %r25, %r20, %r21;\n  or.b32 %r25, %r25, %r22;\n  or.b32 %r25, %r25, %r23;\n"
    "  or.b32 %r25, %r25, %r24;\n"
    "  st.global.u32 [%rd6], %r11;\n  st.global.u32 [%rd6+4], %r12;\n  st.global.u32 [%rd6+8], %r13;\n"
    "  st.global.u32 [%rd6+12], %r14;\n  st.global.u32 [%rd6+16], %r19;\n  st.global.u32 [%rd6+20], %r25;\n"
    "  ret;\n}\n";

/* The ISA's shfl: the source lane and the predicate. */
static unsigned shfl_src(int mode, unsigned lane, unsigned b, unsigned c, bool *p) {
  unsigned bval = b & 31, cval = c & 31, mask = (c >> 8) & 31;
  unsigned maxl = (lane & mask) | (cval & ~mask), minl = lane & mask;
  int j;
  switch (mode) {
  case 0: j = (int)(minl | (bval & ~mask)); *p = j <= (int)maxl; break;  /* idx */
  case 1: j = (int)lane - (int)bval; *p = j >= (int)maxl; break;         /* up */
  case 2: j = (int)(lane + bval); *p = j <= (int)maxl; break;             /* down */
  default: j = (int)(lane ^ bval); *p = j <= (int)maxl; break;           /* bfly */
  }
  return *p ? (unsigned)j : lane;
}

START_TEST(shfl_modes_widths) {
  for (unsigned wave = 32; wave <= 64; wave += 32)
    for (size_t k = 0; k < NBS; k++) {
      unsigned bs = block_sizes[k], n = 2 * bs;
      for (unsigned w = 1; w <= 32; w *= 2) {
        uint32_t *in = inputs(n, 100 + w + bs);
        uint32_t *out = run_warp(shfl_ptx, wave, bs, 10, in, w);
        for (unsigned g = 0; g < n; g++) {
          unsigned tid = g % bs, lane = tid & 31, base = g - lane, nl = warp_lanes(bs, tid);
          uint32_t v = in[g], b = v & 31;
          unsigned cs[4] = {((32 - w) << 8) | 31, (32 - w) << 8, ((32 - w) << 8) | 31, ((32 - w) << 8) | 31};
          unsigned preds = 0;
          for (int mode = 0; mode < 4; mode++) {
            bool p;
            unsigned j = shfl_src(mode, lane, b, cs[mode], &p);
            preds |= (unsigned)p << mode;
            if (j < nl)   /* a lane past the end of a partial warp holds no defined value */
              ck_assert_msg(out[g * 10 + mode] == in[base + j], "wave %u bs %u w %u mode %d thread %u: %08x want %08x",
                            wave, bs, w, mode, g, out[g * 10 + mode], in[base + j]);
          }
          bool p;
          unsigned j = shfl_src(0, lane, (v >> 3) & 63, (v >> 8) & 7967, &p);
          preds |= (unsigned)p << 4;
          if (j < nl) ck_assert_msg(out[g * 10 + 4] == in[base + j], "raw c: thread %u", g);
          ck_assert_msg(out[g * 10 + 5] == preds, "wave %u bs %u w %u thread %u: predicates %x want %x", wave, bs, w, g,
                        out[g * 10 + 5], preds);
        }
        free(in);
        free(out);
      }
    }
}
END_TEST

/* ---- shfl with immediate b and c --------------------------------------------------
 * The forms nvcc writes for __shfl_sync / __shfl_xor_sync with a constant
 * lane or mask (b and c immediates).  lower/ turns the idx and bfly ones
 * whose clamp is 31 into one ds_swizzle (wave_swizzle, a bit pattern of
 * the lane: lower_warps.c) where b allows it, and the others into the
 * general bpermute; the differential suite (lower_diff_emu_warp) runs this
 * kernel lowered at wave 64 and 32 too, and codegen_emu_warp compiles it.
 * Each case's result and predicate against the ISA's pseudocode. */
typedef struct shfl_case { int mode; unsigned b, c; } shfl_case;
static const shfl_case imm_cases[] = {
    /* bfly over the whole warp: every xor mask a reduction uses, and others */
    {3, 1, 0x1f}, {3, 2, 0x1f}, {3, 4, 0x1f}, {3, 8, 0x1f}, {3, 16, 0x1f}, {3, 3, 0x1f}, {3, 31, 0x1f}, {3, 0, 0x1f},
    /* bfly in segments of 8: b below the segment (a swizzle), b reaching into the segment bits (clamped lanes) */
    {3, 1, 0x181f}, {3, 4, 0x181f}, {3, 8, 0x181f}, {3, 24, 0x181f},
    /* idx: a broadcast of one lane, b past 31, segments of 4 and 16 (the lane within the segment) */
    {0, 0, 0x1f}, {0, 5, 0x1f}, {0, 31, 0x1f}, {0, 37, 0x1f}, {0, 3, 0x1c1f}, {0, 0, 0x1c1f}, {0, 9, 0x101f},
    {0, 13, 0x181f},
    /* a clamp below 31: the general path */
    {0, 7, 0x0f}, {3, 2, 0x07},
    /* down and up with immediates: the general path */
    {2, 1, 0x1f}, {2, 16, 0x1f}, {1, 4, 0},
};
#define NIMM (sizeof imm_cases / sizeof imm_cases[0])

static char *shfl_imm_ptx(void) {
  static const char *names[] = {"idx", "up", "down", "bfly"};
  size_t cap = 16384, n = 0;
  char *p = malloc(cap);
  n += (size_t)snprintf(p + n, cap - n, "%s",
                        ET_HEADER ".visible .entry k(.param .u64 IN, .param .u64 OUT, .param .u32 W)\n{\n"
                                  "  .reg .b32 %r<200>;\n  .reg .b64 %rd<8>;\n  .reg .pred %p<40>;\n"
                                  "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n"
                                  "  mad.lo.u32 %r4, %r2, %r3, %r1;\n  ld.param.u64 %rd1, [IN];\n"
                                  "  mul.wide.u32 %rd2, %r4, 4;\n  add.u64 %rd3, %rd1, %rd2;\n  ld.global.u32 %r5, [%rd3];\n"
                                  "  ld.param.u64 %rd4, [OUT];\n");
  n += (size_t)snprintf(p + n, cap - n, "  mul.wide.u32 %%rd5, %%r4, %u;\n  add.u64 %%rd6, %%rd4, %%rd5;\n",
                        (unsigned)(8 * NIMM));
  for (unsigned k = 0; k < NIMM; k++) {
    const shfl_case *c = &imm_cases[k];
    /* every other case as nvcc -O3 writes it: b and c moved into registers first */
    char bs[32], cs[32];
    if (k & 1) {
      n += (size_t)snprintf(p + n, cap - n, "  mov.u32 %%r%u, %u;\n  mov.u32 %%r%u, 0x%x;\n", 100 + 2 * k, c->b,
                            101 + 2 * k, c->c);
      snprintf(bs, sizeof bs, "%%r%u", 100 + 2 * k);
      snprintf(cs, sizeof cs, "%%r%u", 101 + 2 * k);
    } else {
      snprintf(bs, sizeof bs, "%u", c->b);
      snprintf(cs, sizeof cs, "0x%x", c->c);
    }
    n += (size_t)snprintf(p + n, cap - n,
                          "  shfl.sync.%s.b32 %%r%u|%%p%u, %%r5, %s, %s, -1;\n  selp.u32 %%r%u, 1, 0, %%p%u;\n"
                          "  st.global.u32 [%%rd6+%u], %%r%u;\n  st.global.u32 [%%rd6+%u], %%r%u;\n",
                          names[c->mode], 10 + 2 * k, 1 + k, bs, cs, 11 + 2 * k, 1 + k, 8 * k, 10 + 2 * k,
                          8 * k + 4, 11 + 2 * k);
  }
  n += (size_t)snprintf(p + n, cap - n, "  ret;\n}\n");
  ck_assert(n < cap);
  return p;
}

START_TEST(shfl_immediates) {
  char *ptx = shfl_imm_ptx();
  for (unsigned wave = 32; wave <= 64; wave += 32)
    for (size_t k = 0; k < NBS; k++) {
      unsigned bs = block_sizes[k], n = 2 * bs;
      uint32_t *in = inputs(n, 300 + bs);
      uint32_t *out = run_warp(ptx, wave, bs, 2 * NIMM, in, 0);
      for (unsigned g = 0; g < n; g++) {
        unsigned tid = g % bs, lane = tid & 31, base = g - lane, nl = warp_lanes(bs, tid);
        for (unsigned q = 0; q < NIMM; q++) {
          bool p;
          unsigned j = shfl_src(imm_cases[q].mode, lane, imm_cases[q].b, imm_cases[q].c, &p);
          ck_assert_msg(out[g * 2 * NIMM + 2 * q + 1] == (uint32_t)p, "wave %u bs %u case %u thread %u: predicate %u",
                        wave, bs, q, g, out[g * 2 * NIMM + 2 * q + 1]);
          if (j < nl)
            ck_assert_msg(out[g * 2 * NIMM + 2 * q] == in[base + j], "wave %u bs %u case %u thread %u: %08x want %08x",
                          wave, bs, q, g, out[g * 2 * NIMM + 2 * q], in[base + j]);
        }
      }
      free(in);
      free(out);
    }
  free(ptx);
}
END_TEST

/* ---- vote, ballot, activemask, match, redux, elect under divergence ----------------- */
/* Threads with v % 3 != 0 take part; they compute over the active set
 * (mask = activemask).  out[0] activemask, [1] ballot(v & 1), [2] all/any/
 * uni bits, [3] match.any(v % 4), [4] match.all(v % 2) | p << 31,
 * [5] redux.add, [6] redux.min.s32, [7] redux.max.u32, [8] redux.xor,
 * [9] elect: laneid | p << 8.  Converged forms in out[10..13]:
 * vote.sync.ballot and vote.sync.all over the warp's activemask,
 * bar.warp.sync then redux.or over the full warp, match.any.b64.  (The
 * forms without .sync are refused at .target sm_70+ from PTX ISA 6.4, as
 * ptxas 13 refuses them: legacy_vote_shfl tests them at sm_60.) */
static const char *vote_ptx =
    ET_HEADER
    ".visible .entry k(.param .u64 IN, .param .u64 OUT, .param .u32 W)\n{\n"
    "  .reg .b32 %r<60>;\n  .reg .b64 %rd<10>;\n  .reg .pred %p<10>;\n"
    "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mad.lo.u32 %r4, %r2, %r3, %r1;\n"
    "  ld.param.u64 %rd1, [IN];\n  mul.wide.u32 %rd2, %r4, 4;\n  add.u64 %rd3, %rd1, %rd2;\n  ld.global.u32 %r5, [%rd3];\n"
    "  ld.param.u64 %rd4, [OUT];\n  mul.wide.u32 %rd5, %r4, 56;\n  add.u64 %rd6, %rd4, %rd5;\n"
    /* converged part first */
    "  and.b32 %r40, %r5, 1;\n  setp.ne.u32 %p7, %r40, 0;\n"
    "  activemask.b32 %r45;\n"
    "  vote.sync.ballot.b32 %r41, %p7, %r45;\n  vote.sync.all.pred %p8, %p7, %r45;\n  selp.u32 %r42, 1, 0, %p8;\n"
    "  bar.warp.sync -1;\n  redux.sync.or.b32 %r43, %r5, %r45;\n"
    "  cvt.u64.u32 %rd7, %r40;\n  match.any.sync.b64 %r44, %rd7, %r45;\n"
    "  st.global.u32 [%rd6+40], %r41;\n  st.global.u32 [%rd6+44], %r42;\n  st.global.u32 [%rd6+48], %r43;\n"
    "  st.global.u32 [%rd6+52], %r44;\n"
    /* divergent part */
    "  rem.u32 %r6, %r5, 3;\n  setp.eq.u32 %p1, %r6, 0;\n  @%p1 bra DONE;\n"
    "  activemask.b32 %r7;\n"
    "  vote.sync.ballot.b32 %r8, %p7, %r7;\n"
    "  vote.sync.all.pred %p2, %p7, %r7;\n  vote.sync.any.pred %p3, %p7, %r7;\n  vote.sync.uni.pred %p4, %p7, %r7;\n"
    "  selp.u32 %r9, 1, 0, %p2;\n  selp.u32 %r10, 2, 0, %p3;\n  selp.u32 %r11, 4, 0, %p4;\n"
    "  or.b32 %r12, %r9, %r10;\n  or.b32 %r12, %r12, %r11;\n"
    "  and.b32 %r13, %r5, 3;\n  match.any.sync.b32 %r14, %r13, %r7;\n"
    "  and.b32 %r15, %r5, 1;\n  match.all.sync.b32 %r16|%p5, %r15, %r7;\n  selp.u32 %r17, 0x80000000, 0, %p5;\n"
    "  or.b32 %r16, %r16, %r17;\n"
    "  redux.sync.add.u32 %r18, %r5, %r7;\n  redux.sync.min.s32 %r19, %r5, %r7;\n"
    "  redux.sync.max.u32 %r20, %r5, %r7;\n  redux.sync.xor.b32 %r21, %r5, %r7;\n"
    "  elect.sync %r22|%p6, %r7;\n  selp.u32 %r23, 256, 0, %p6;\n  or.b32 %r22, %r22, %r23;\n"
    "  st.global.u32 [%rd6], %r7;\n  st.global.u32 [%rd6+4], %r8;\n  st.global.u32 [%rd6+8], %r12;\n"
    "  st.global.u32 [%rd6+12], %r14;\n  st.global.u32 [%rd6+16], %r16;\n  st.global.u32 [%rd6+20], %r18;\n"
    "  st.global.u32 [%rd6+24], %r19;\n  st.global.u32 [%rd6+28], %r20;\n  st.global.u32 [%rd6+32], %r21;\n"
    "  st.global.u32 [%rd6+36], %r22;\n"
    "DONE:\n  ret;\n}\n";

START_TEST(vote_match_redux_divergent) {
  for (unsigned wave = 32; wave <= 64; wave += 32)
    for (size_t k = 0; k < NBS; k++) {
      unsigned bs = block_sizes[k], n = 2 * bs;
      uint32_t *in = inputs(n, 7 + bs);
      for (unsigned i = 0; i < n; i += 7) in[i] = 0;   /* some lanes sit out */
      uint32_t *out = run_warp(vote_ptx, wave, bs, 14, in, 0);
      for (unsigned g = 0; g < n; g++) {
        unsigned tid = g % bs, lane = tid & 31, base = g - lane, nl = warp_lanes(bs, tid);
        uint32_t full = nl == 32 ? 0xffffffffu : (1u << nl) - 1;
        /* converged */
        uint32_t bal = 0, orv = 0, same = 0;
        for (unsigned j = 0; j < nl; j++) {
          bal |= (in[base + j] & 1) << j;
          orv |= in[base + j];
          if ((in[base + j] & 1) == (in[g] & 1)) same |= 1u << j;
        }
        const uint32_t *o = &out[g * 14];
        ck_assert_msg(o[10] == bal, "vote.ballot wave %u bs %u thread %u: %08x want %08x", wave, bs, g, o[10], bal);
        ck_assert_uint_eq(o[11], bal == full);
        ck_assert_uint_eq(o[12], orv);
        ck_assert_uint_eq(o[13], same);
        if (in[g] % 3 == 0) continue;
        uint32_t act = 0;
        for (unsigned j = 0; j < nl; j++)
          if (in[base + j] % 3) act |= 1u << j;
        uint32_t ballot = 0, m4 = 0, sum = 0, mx = 0, x = 0, allsame = 1;
        int32_t mn = INT32_MAX;
        for (unsigned j = 0; j < nl; j++) {
          if (!(act >> j & 1)) continue;
          uint32_t vj = in[base + j];
          ballot |= (vj & 1) << j;
          if ((vj & 3) == (in[g] & 3)) m4 |= 1u << j;
          if ((vj & 1) != (in[g] & 1)) allsame = 0;
          sum += vj;
          mn = (int32_t)vj < mn ? (int32_t)vj : mn;
          mx = vj > mx ? vj : mx;
          x ^= vj;
        }
        unsigned lowest = (unsigned)__builtin_ctz(act);
        uint32_t votes = (ballot == act) | (ballot != 0) << 1 | (ballot == act || ballot == 0) << 2;
        ck_assert_msg(o[0] == act, "activemask wave %u bs %u thread %u: %08x want %08x", wave, bs, g, o[0], act);
        ck_assert_msg(o[1] == ballot, "ballot thread %u: %08x want %08x", g, o[1], ballot);
        ck_assert_msg(o[2] == votes, "all/any/uni thread %u: %x want %x", g, o[2], votes);
        ck_assert_msg(o[3] == m4, "match.any thread %u: %08x want %08x", g, o[3], m4);
        ck_assert_msg(o[4] == (allsame ? act | 0x80000000u : 0), "match.all thread %u: %08x", g, o[4]);
        ck_assert_uint_eq(o[5], sum);
        ck_assert_uint_eq(o[6], (uint32_t)mn);
        ck_assert_uint_eq(o[7], mx);
        ck_assert_uint_eq(o[8], x);
        ck_assert_msg(o[9] == (lowest | (lane == lowest ? 256u : 0)), "elect thread %u: %x", g, o[9]);
      }
      free(in);
      free(out);
    }
}
END_TEST

/* The warp operations without .sync (PTX ISA 9.7.9.6 shfl, 9.7.13.8 vote:
 * deprecated from 6.0, refused at .target sm_70+ from 6.4, as ptxas 13
 * refuses them), at .version 6.0 .target sm_60 where they are legal:
 * converged, over the warp's existing lanes.  out[0] vote.ballot(v & 1),
 * [1] vote.all | .any << 1 | .uni << 2, [2] shfl.bfly 1, [3] shfl.up 1
 * and [4] its predicate (a source lane that does not exist is undefined:
 * every lane's source here exists, lane ^ 1 and lane - 1). */
static const char *legacy_ptx =
    ".version 6.0\n.target sm_60\n.address_size 64\n"
    ".visible .entry k(.param .u64 IN, .param .u64 OUT, .param .u32 W)\n{\n"
    "  .reg .b32 %r<40>;\n  .reg .b64 %rd<10>;\n  .reg .pred %p<10>;\n"
    "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mad.lo.u32 %r4, %r2, %r3, %r1;\n"
    "  ld.param.u64 %rd1, [IN];\n  mul.wide.u32 %rd2, %r4, 4;\n  add.u64 %rd3, %rd1, %rd2;\n  ld.global.u32 %r5, [%rd3];\n"
    "  ld.param.u64 %rd4, [OUT];\n  mul.wide.u32 %rd5, %r4, 20;\n  add.u64 %rd6, %rd4, %rd5;\n"
    "  and.b32 %r6, %r5, 1;\n  setp.ne.u32 %p1, %r6, 0;\n"
    "  vote.ballot.b32 %r7, %p1;\n"
    "  vote.all.pred %p2, %p1;\n  vote.any.pred %p3, %p1;\n  vote.uni.pred %p4, %p1;\n"
    "  selp.u32 %r8, 1, 0, %p2;\n  selp.u32 %r9, 2, 0, %p3;\n  selp.u32 %r10, 4, 0, %p4;\n"
    "  or.b32 %r11, %r8, %r9;\n  or.b32 %r11, %r11, %r10;\n"
    "  shfl.bfly.b32 %r12, %r5, 1, 31;\n"
    "  shfl.up.b32 %r13|%p5, %r5, 1, 0;\n  selp.u32 %r14, 1, 0, %p5;\n"
    "  st.global.u32 [%rd6], %r7;\n  st.global.u32 [%rd6+4], %r11;\n  st.global.u32 [%rd6+8], %r12;\n"
    "  st.global.u32 [%rd6+12], %r13;\n  st.global.u32 [%rd6+16], %r14;\n  ret;\n}\n";

START_TEST(legacy_vote_shfl) {
  for (unsigned wave = 32; wave <= 64; wave += 32)
    for (size_t k = 0; k < NBS; k++) {
      unsigned bs = block_sizes[k], n = 2 * bs;
      uint32_t *in = inputs(n, 91 + bs);
      uint32_t *out = run_warp(legacy_ptx, wave, bs, 5, in, 0);
      for (unsigned g = 0; g < n; g++) {
        unsigned tid = g % bs, lane = tid & 31, base = g - lane, nl = warp_lanes(bs, tid);
        uint32_t full = nl == 32 ? 0xffffffffu : (1u << nl) - 1, bal = 0;
        for (unsigned j = 0; j < nl; j++) bal |= (in[base + j] & 1) << j;
        uint32_t votes = (bal == full) | (bal != 0) << 1 | (bal == full || bal == 0) << 2;
        const uint32_t *o = &out[g * 5];
        ck_assert_msg(o[0] == bal, "vote.ballot wave %u bs %u thread %u: %08x want %08x", wave, bs, g, o[0], bal);
        ck_assert_msg(o[1] == votes, "vote.all/any/uni wave %u bs %u thread %u: %x want %x", wave, bs, g, o[1], votes);
        ck_assert_msg(o[2] == in[base + (lane ^ 1)], "shfl.bfly wave %u bs %u thread %u", wave, bs, g);
        ck_assert_msg(o[3] == in[lane ? g - 1 : g], "shfl.up wave %u bs %u thread %u", wave, bs, g);
        ck_assert_uint_eq(o[4], lane != 0);
      }
      free(in);
      free(out);
    }
}
END_TEST

/* Each half-warp names its own member mask (cooperative-groups tiles): a
 * ballot and a redux over 16 lanes, and a .sync op reached by the two
 * halves at different times (the second half first loops a while). */
static const char *tile_ptx =
    ET_HEADER
    ".visible .entry k(.param .u64 IN, .param .u64 OUT, .param .u32 W)\n{\n"
    "  .reg .b32 %r<40>;\n  .reg .b64 %rd<10>;\n  .reg .pred %p<10>;\n"
    "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mad.lo.u32 %r4, %r2, %r3, %r1;\n"
    "  ld.param.u64 %rd1, [IN];\n  mul.wide.u32 %rd2, %r4, 4;\n  add.u64 %rd3, %rd1, %rd2;\n  ld.global.u32 %r5, [%rd3];\n"
    "  ld.param.u64 %rd4, [OUT];\n  mul.wide.u32 %rd5, %r4, 8;\n  add.u64 %rd6, %rd4, %rd5;\n"
    "  mov.u32 %r6, %laneid;\n  and.b32 %r7, %r6, 16;\n  mov.u32 %r8, 65535;\n  shl.b32 %r9, %r8, %r7;\n"
    /* the upper half first counts down a few iterations: it arrives later */
    "  setp.eq.u32 %p1, %r7, 0;\n  mov.u32 %r10, 0;\n  @%p1 bra TILE;\n"
    "  and.b32 %r10, %r5, 15;\n"
    "LOOP:\n  setp.ne.u32 %p2, %r10, 0;\n  sub.u32 %r10, %r10, 1;\n  @%p2 bra LOOP;\n"
    "TILE:\n  and.b32 %r11, %r5, 1;\n  setp.ne.u32 %p3, %r11, 0;\n"
    "  vote.sync.ballot.b32 %r12, %p3, %r9;\n  shr.u32 %r12, %r12, %r7;\n"
    "  redux.sync.add.u32 %r13, %r5, %r9;\n"
    "  st.global.u32 [%rd6], %r12;\n  st.global.u32 [%rd6+4], %r13;\n  ret;\n}\n";

START_TEST(tiles_with_own_masks) {
  for (unsigned wave = 32; wave <= 64; wave += 32) {
    unsigned bs = 128, n = 256;
    uint32_t *in = inputs(n, 55);
    uint32_t *out = run_warp(tile_ptx, wave, bs, 2, in, 0);
    for (unsigned g = 0; g < n; g++) {
      unsigned base = g & ~15u;
      uint32_t bal = 0, sum = 0;
      for (unsigned j = 0; j < 16; j++) {
        bal |= (in[base + j] & 1) << j;
        sum += in[base + j];
      }
      ck_assert_msg(out[2 * g] == bal, "wave %u thread %u: tile ballot %x want %x", wave, g, out[2 * g], bal);
      ck_assert_uint_eq(out[2 * g + 1], sum);
    }
    free(in);
    free(out);
  }
}
END_TEST

/* hw_id (a target op, lowered IR) against the hardware id register's layout
 * in AMD's ISA guides, decoded here by hand, and against the emulator's
 * %smid (its host thread, what lower_sregs.c's decode of hw_id must give
 * back): CDNA3 ISA 3.12 Table 6 HW_ID (WAVE_ID 3:0, CU_ID 11:8, SE_ID
 * 15:13); RDNA3 ISA 3.4.8 HW_ID1 (WAVE_ID 4:0, WGP_ID 13:10, SA_ID 16,
 * SE_ID 20:18); RDNA4 ISA 3.4.9 HW_ID1 (no SE_ID).  Few host threads
 * start in time to run a workgroup (%smid 0 to ~10 here): hw_id_fields
 * below takes every %smid through the encoder itself. */
static const char hw_id_pwir[] =
    "module ptx 8.5 sm_90 addr64 target \"%s\" wave %u lowered\n\n"
    "visible kernel @k(param::entry u64 @out align 8 offset 0) {\n"
    "bb0:\n  %%0 = workitem_id.u32 0\n  %%1 = workgroup_id.u32 0\n  %%2 = workgroup_size.u32 0\n  br bb1\n"
    /* a few thousand instructions first, so that every host thread has
     * started before the workgroups run out */
    "bb1:  ; preds bb0, bb1\n  %%10 = phi.b32 [%%0, bb0], [%%11, bb1]\n  %%11:b32 = add.u32 %%10, 1\n"
    "  %%12:b32 = sub.u32 %%11, %%0\n  %%13 = setp.lt.u32 %%12, 300\n  cbr %%13, bb1, bb2\n"
    "bb2:  ; preds bb1\n  %%3 = hw_id.u32\n  %%4 = sreg smid\n"
    "  %%5:b32 = mad.lo.u32 %%1, %%2, %%0\n  %%6:b64 = ld.param.u64 [@out]\n"
    "  %%7:b64 = mul.wide.u32 %%5, 8\n  %%8:b64 = add.u64 %%6, %%7\n"
    "  st.global.u32 [%%8], %%3\n  st.global.u32 [%%8+4], %%4\n  ret\n}\n";

START_TEST(hw_id_layout) {
  static const struct { const char *target; unsigned wave; } tg[] = {
      {"gfx942", 64}, {"gfx1100", 32}, {"gfx1030", 32}, {"gfx1201", 32}};
  enum { NB = 96, BS = 128 };
  for (unsigned k = 0; k < 4; k++) {
    char text[1024];
    snprintf(text, sizeof text, hw_id_pwir, tg[k].target, tg[k].wave);
    pw_diag d;
    pw_diag_init(&d, NULL);
    ir_module *m = ir_parse("hw_id.pwir", text, strlen(text), &d);
    ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
    pw_diag_fini(&d);
    emu_context *ctx;
    emu_module *em;
    ck_assert_int_eq(emu_context_create(&(emu_options){.threads = 24}, &ctx), EMU_OK);
    ck_assert_int_eq(emu_module_load(ctx, m, &em), EMU_OK);
    uint64_t out;
    ck_assert_int_eq(emu_malloc(ctx, NB * BS * 8, &out), EMU_OK);
    void *params[] = {&out};
    ck_assert_int_eq(emu_launch(em, "k", (emu_dim3){NB, 1, 1}, (emu_dim3){BS, 1, 1}, 0, params), EMU_OK);
    static uint32_t o[NB * BS * 2];
    ck_assert_int_eq(emu_memcpy_dtoh(ctx, o, out, sizeof o), EMU_OK);
    for (unsigned i = 0; i < NB * BS; i++) {
      uint32_t h = o[2 * i], smid = o[2 * i + 1], wave = (i % BS) / tg[k].wave, want, used;
      if (tg[k].wave == 64) {
        ck_assert_uint_eq(h & 0xf, wave);
        want = ((h >> 8) & 0xf) | ((h >> 13) & 7) << 4;
        used = 0xf | 0xf00 | 0xe000;
        ck_assert_uint_eq(smid & 0x7f, want);
      } else {
        ck_assert_uint_eq(h & 0x1f, wave);
        bool se = strcmp(tg[k].target, "gfx1201") != 0;
        unsigned se_bits = !strcmp(tg[k].target, "gfx1030") ? 2 : 3;
        want = ((h >> 10) & 0xf) | ((h >> 16) & 1) << 4 | (se ? ((h >> 18) & ((1u << se_bits) - 1)) << 5 : 0);
        used = 0x1f | 0x3c00 | 0x10000 | (se ? ((1u << se_bits) - 1) << 18 : 0);
        ck_assert_uint_eq(smid & (se ? (1u << (5 + se_bits)) - 1 : 0x1f), want);
      }
      ck_assert_msg((h & ~used) == 0, "%s: hw_id %#x sets bits outside its fields", tg[k].target, h);
    }
    emu_context_destroy(ctx);
    ir_module_destroy(m);
  }
}
END_TEST

/* The emulator's encoder over every %smid below 256 and wave slot below
 * 16, decoded by hand as above: the fields the generation has carry smid
 * (low bits first), nothing else is set. */
START_TEST(hw_id_fields) {
  for (uint32_t smid = 0; smid < 256; smid++)
    for (uint32_t w = 0; w < 16; w++) {
      uint32_t h = emu_hw_id(&ir_gen_infos[ir_gen_gfx9], w, smid);
      ck_assert_uint_eq(h, w | (smid & 0xf) << 8 | ((smid >> 4) & 7) << 13);
      h = emu_hw_id(&ir_gen_infos[ir_gen_gfx11], w, smid);
      ck_assert_uint_eq(h, w | (smid & 0xf) << 10 | ((smid >> 4) & 1) << 16 | ((smid >> 5) & 7) << 18);
      h = emu_hw_id(&ir_gen_infos[ir_gen_gfx10], w, smid);
      ck_assert_uint_eq(h, w | (smid & 0xf) << 10 | ((smid >> 4) & 1) << 16 | ((smid >> 5) & 3) << 18);
      h = emu_hw_id(&ir_gen_infos[ir_gen_gfx12], w, smid);
      ck_assert_uint_eq(h, w | (smid & 0xf) << 10 | ((smid >> 4) & 1) << 16);
    }
}
END_TEST

Suite *emu_warp_suite(void) {
  Suite *s = suite_create("emu_warp");
  TCase *tc = tcase_create("warp");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, shfl_modes_widths);
  tcase_add_test(tc, shfl_immediates);
  tcase_add_test(tc, vote_match_redux_divergent);
  tcase_add_test(tc, legacy_vote_shfl);
  tcase_add_test(tc, tiles_with_own_masks);
  tcase_add_test(tc, hw_id_layout);
  tcase_add_test(tc, hw_id_fields);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(emu_warp_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
