/* emu/emu_alu.c: integer arithmetic, logic, comparison and selection,
 * moves and special registers (PTX ISA 9.7.1, 9.7.2, 9.7.6, 9.7.8, 9.7.9.1,
 * 9.7.9.7, chapter 10).
 *
 * Integers wrap around at the width of the instruction type: a handler
 * computes in 64 bits (128 for the high half of 64-bit products) and masks
 * its result with in->tmask.  Carries are predicate values: add.cc writes
 * its carry-out as a second result, addc reads its carry-in as src[2].
 * CC.CF after a subtraction is the carry-out of a + ~b + 1 (sub.cc) or
 * a + ~b + CC.CF (subc), 1 when nothing was borrowed, as on NVIDIA's
 * hardware: the PTX ISA's "subc: d = a - (b + CC.CF), borrow-out written
 * to CC.CF" reads the flag as a borrow, which gives the same results along
 * a sub.cc/subc chain but not when addc or madc read a subtraction's flag
 * or subc an addition's.  NVIDIA's own code needs the hardware reading:
 * nvcc 13's unsigned __int128 division ends a sub.cc/subc.cc chain with
 * `addc.u32 d, 0, 0` and adds the divisor back when d is 0; ZLUDA's
 * NVIDIA-verified subc_cc_s32 data (a < b: addc reads 0) agrees.  docs/
 * emulator.md, "Arithmetic".  Division by zero
 * is defined here (the PTX ISA leaves it unspecified): the quotient is all
 * ones and the remainder is the dividend; INT_MIN / -1 wraps to INT_MIN.
 */
#include <time.h>

#include "emu_internal.h"

#define S(k) EMU_U64(x, in->src[k])
#define D(k) EMU_U64(x, in->dst[k])
#define LANES(...) EMU_LANES(x, m, l, __VA_ARGS__)

static inline bool is_signed_type(ir_type t) { return ir_type_kind_of(t) == IR_TK_SINT; }

/* ---- moves -------------------------------------------------------------- */
static void h_copy(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  uint64_t mk = emu_type_mask(ir_type_bits((ir_type)in->dtype[0]));
  LANES(d[l] = a[l] & mk);
}

static void h_copy_wide(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  LANES(d[2 * l] = a[2 * l]; d[2 * l + 1] = a[2 * l + 1]);
}

static void h_copy_pred(emu_exec *x, const emu_inst *in, emu_mask m) {
  emu_pred_write(x, in->dst[0], m, EMU_PRED(x, in->src[0]));
}

/* mov.b64 d, {a, b}: src[0] is the least significant part. */
static void h_pack(emu_exec *x, const emu_inst *in, emu_mask m) {
  unsigned ew = ir_type_bits((ir_type)in->dtype[0]) / in->nsrc;   /* elements split the result evenly */
  bool wide = ir_type_bits((ir_type)in->dtype[0]) > 64;
  uint64_t *d = D(0);
  EMU_EACH(m, l, {
    uint64_t lo = 0, hi = 0;
    for (unsigned k = 0; k < in->nsrc; k++) {
      uint64_t v = EMU_U64(x, in->src[k])[l] & emu_type_mask(ew);
      unsigned pos = k * ew;
      if (pos < 64) {
        lo |= v << pos;
        if (pos + ew > 64 && pos) hi |= v >> (64 - pos);
      } else {
        hi |= v << (pos - 64);
      }
    }
    if (wide) {
      d[2 * l] = lo;
      d[2 * l + 1] = hi;
    } else {
      d[l] = lo & in->tmask;
    }
  });
}

static void h_unpack(emu_exec *x, const emu_inst *in, emu_mask m) {
  bool wide = ir_type_bits((ir_type)in->stype[0]) > 64;
  const uint64_t *a = S(0);
  EMU_EACH(m, l, {
    uint64_t lo = wide ? a[2 * l] : a[l], hi = wide ? a[2 * l + 1] : 0;
    unsigned pos = 0;
    for (unsigned k = 0; k < in->ndst; k++) {
      unsigned ew = ir_type_bits((ir_type)in->dtype[k]);
      uint64_t v;
      if (pos >= 64) v = hi >> (pos - 64);
      else v = (lo >> pos) | (pos && pos + ew > 64 ? hi << (64 - pos) : 0);
      EMU_U64(x, in->dst[k])[l] = v & emu_type_mask(ew);
      pos += ew;
    }
  });
}

/* ---- special registers (chapter 10) ------------------------------------- */
static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void h_sreg(emu_exec *x, const emu_inst *in, emu_mask m) {
  emu_wave *w = x->w;
  emu_wg *wg = x->wg;
  emu_grid *L = x->l;
  unsigned comp = (unsigned)in->imm;
  uint64_t *d = D(0);
  const uint32_t dims_b[3] = {L->block.x, L->block.y, L->block.z};
  const uint32_t dims_g[3] = {L->grid.x, L->grid.y, L->grid.z};
  uint64_t u = 0;   /* uniform value, when the register is the same for every lane */
  switch ((ir_sreg)in->sub) {
  case ir_sreg_tid:
    if (comp > 2) break;
    LANES(d[l] = w->tid[comp][l]);
    return;
  case ir_sreg_laneid:
    LANES(d[l] = (w->first_thread + l) & 31);
    return;
  case ir_sreg_warpid:
    LANES(d[l] = (w->first_thread + l) >> 5);
    return;
  case ir_sreg_lanemask_eq:
  case ir_sreg_lanemask_le:
  case ir_sreg_lanemask_lt:
  case ir_sreg_lanemask_ge:
  case ir_sreg_lanemask_gt:
    LANES({
      unsigned ln = (w->first_thread + l) & 31;
      uint32_t eq = 1u << ln, lt = eq - 1;
      uint32_t v;
      switch ((ir_sreg)in->sub) {
      case ir_sreg_lanemask_eq: v = eq; break;
      case ir_sreg_lanemask_le: v = lt | eq; break;
      case ir_sreg_lanemask_lt: v = lt; break;
      case ir_sreg_lanemask_ge: v = ~lt; break;
      default: v = ~(lt | eq); break;
      }
      d[l] = v;
    });
    return;
  case ir_sreg_ntid: u = comp < 3 ? dims_b[comp] : 0; break;
  case ir_sreg_nwarpid: u = (L->nthreads + 31) / 32; break;
  case ir_sreg_ctaid: u = comp < 3 ? wg->ctaid[comp] : 0; break;
  case ir_sreg_nctaid: u = comp < 3 ? dims_g[comp] : 0; break;
  case ir_sreg_smid: u = wg->smid; break;
  case ir_sreg_nsmid: u = L->nthreads_host; break;
  case ir_sreg_gridid: u = L->gridid; break;
  case ir_sreg_is_explicit_cluster:
    emu_pred_write(x, in->dst[0], m, 0);
    return;
  case ir_sreg_clusterid: u = comp < 3 ? wg->ctaid[comp] : 0; break;
  case ir_sreg_nclusterid: u = comp < 3 ? dims_g[comp] : 0; break;
  case ir_sreg_cluster_ctaid: u = 0; break;
  case ir_sreg_cluster_nctaid: u = comp < 3; break;
  case ir_sreg_cluster_ctarank: u = 0; break;
  case ir_sreg_cluster_nctarank: u = 1; break;
  case ir_sreg_clock: u = (uint32_t)w->clock; break;
  case ir_sreg_clock_hi: u = (uint32_t)(w->clock >> 32); break;
  case ir_sreg_clock64: u = w->clock; break;
  case ir_sreg_pm: case ir_sreg_pm_64: u = 0; break;
  /* CUDA's driver passes the cooperative grid's workspace (where
   * grid.sync() counts arrivals) split over %envreg1 (high) and %envreg2
   * (low), as the PTX nvcc emits for cg::this_grid() reads them; the other
   * environment registers read 0 */
  case ir_sreg_envreg:
    u = comp == 1 ? L->grid_workspace >> 32 : comp == 2 ? (uint32_t)L->grid_workspace : 0;
    break;
  case ir_sreg_globaltimer: u = now_ns(); break;
  case ir_sreg_globaltimer_lo: u = (uint32_t)now_ns(); break;
  case ir_sreg_globaltimer_hi: u = now_ns() >> 32; break;
  case ir_sreg_reserved_smem_offset_begin: case ir_sreg_reserved_smem_offset_end:
  case ir_sreg_reserved_smem_offset_cap: case ir_sreg_reserved_smem_offset_2:
    u = 0;
    break;
  case ir_sreg_total_smem_size: case ir_sreg_aggr_smem_size: u = L->shared_total; break;
  case ir_sreg_dynamic_smem_size: u = L->shared_dyn; break;
  case ir_sreg_current_graph_exec: u = 0; break;
  case ir_sreg_count: break;
  }
  u &= in->tmask;
  LANES(d[l] = u);
}

/* ---- add, sub and the carry chain --------------------------------------- */
static void h_add(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0), mk = in->tmask;
  LANES(d[l] = (a[l] + b[l]) & mk);
}

static void h_sub(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0), mk = in->tmask;
  LANES(d[l] = (a[l] - b[l]) & mk);
}

static int64_t sat_s32(int64_t v) { return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v; }

static void h_add_sat_s32(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  LANES(d[l] = (uint32_t)sat_s32((int64_t)(int32_t)a[l] + (int32_t)b[l]));
}

static void h_sub_sat_s32(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  LANES(d[l] = (uint32_t)sat_s32((int64_t)(int32_t)a[l] - (int32_t)b[l]));
}

/* add{.cc}, addc{.cc}, sub{.cc}, subc{.cc}: in->sub bit 0 = subtract, bit 1
 * = carry-in from src[2]; a carry-out is dst[1] when ndst == 2. */
static void h_addsub_cc(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0), mk = in->tmask;
  bool sub = in->sub & 1, cin = in->sub & 2;
  emu_mask ci = cin ? EMU_PRED(x, in->src[2]) : 0, co = 0;
  unsigned w = in->tbits;
  EMU_EACH(m, l, {
    uint64_t c = (ci >> l) & 1, av = a[l] & mk, bv = b[l] & mk, r;
    bool carry;
    if (!sub) {
      if (w < 64) {
        r = av + bv + c;
        carry = (r >> w) & 1;
      } else {
        unsigned __int128 t = (unsigned __int128)av + bv + c;
        r = (uint64_t)t;
        carry = (uint64_t)(t >> 64) & 1;
      }
    } else {
      /* sub.cc is a + ~b + 1 and subc a + ~b + CC.CF, CC.CF their
       * carry-out: 1 when nothing was borrowed (what NVIDIA's hardware
       * does; see the file's head).  The borrow-in is 1 - CC.CF. */
      uint64_t bin = cin ? 1 - c : 0;
      unsigned __int128 sb = (unsigned __int128)bv + bin;
      carry = !((unsigned __int128)av < sb);
      r = av - bv - bin;
    }
    d[l] = r & mk;
    co |= (emu_mask)carry << l;
  });
  if (in->ndst > 1) emu_pred_write(x, in->dst[1], m, co);
}

/* ---- multiply ------------------------------------------------------------ */
/* The full product of two w-bit values, as a 128-bit number. */
static inline unsigned __int128 mul_full(uint64_t a, uint64_t b, unsigned w, bool sgn) {
  if (sgn) return (unsigned __int128)((__int128)emu_sext(a, w) * (__int128)emu_sext(b, w));
  uint64_t mk = emu_type_mask(w);
  return (unsigned __int128)(a & mk) * (unsigned __int128)(b & mk);
}

/* part of the product selected by mulmode: lo, hi or wide */
static inline uint64_t mul_part(unsigned __int128 p, unsigned w, unsigned mode) {
  switch (mode) {
  case IR_MUL_HI: return (uint64_t)(p >> w) & emu_type_mask(w);
  case IR_MUL_WIDE: return (uint64_t)p & emu_type_mask(2 * w);
  default: return (uint64_t)p & emu_type_mask(w);
  }
}

static void h_mul_lo(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0), mk = in->tmask;
  LANES(d[l] = (a[l] * b[l]) & mk);
}

static void h_mul_wide_u32(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  LANES(d[l] = (uint64_t)(uint32_t)a[l] * (uint32_t)b[l]);
}

static void h_mul_wide_s32(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  LANES(d[l] = (uint64_t)((int64_t)(int32_t)a[l] * (int32_t)b[l]));
}

static void h_mul_hi_u32(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  LANES(d[l] = ((uint64_t)(uint32_t)a[l] * (uint32_t)b[l]) >> 32);
}

/* generic mul (hi/wide, any width) */
static void h_mul(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  unsigned w = in->tbits, mode = in->mods.mulmode;
  bool sgn = is_signed_type((ir_type)in->type);
  EMU_EACH(m, l, d[l] = mul_part(mul_full(a[l], b[l], w, sgn), w, mode));
}

static void h_mad_lo(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2);
  uint64_t *d = D(0), mk = in->tmask;
  LANES(d[l] = (a[l] * b[l] + c[l]) & mk);
}

static void h_mad_wide_s32(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2);
  uint64_t *d = D(0);
  LANES(d[l] = (uint64_t)((int64_t)(int32_t)a[l] * (int32_t)b[l]) + c[l]);
}

static void h_mad_wide_u32(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2);
  uint64_t *d = D(0);
  LANES(d[l] = (uint64_t)(uint32_t)a[l] * (uint32_t)b[l] + c[l]);
}

/* generic mad: lo/hi/wide, .sat (hi.s32), .cc carry-out, madc carry-in
 * (in->sub bit 1: carry-in operand is src[3]) */
static void h_mad(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2);
  uint64_t *d = D(0);
  unsigned w = in->tbits, mode = in->mods.mulmode;
  bool sgn = is_signed_type((ir_type)in->type);
  unsigned rw = mode == IR_MUL_WIDE ? 2 * w : w;
  uint64_t rmk = emu_type_mask(rw);
  emu_mask ci = (in->sub & 2) ? EMU_PRED(x, in->src[3]) : 0, co = 0;
  EMU_EACH(m, l, {
    uint64_t p = mul_part(mul_full(a[l], b[l], w, sgn), w, mode);
    uint64_t cv = c[l] & rmk, cin = (ci >> l) & 1;
    uint64_t r;
    if (in->mods.sat && sgn && rw == 32) {
      r = (uint32_t)sat_s32((int64_t)(int32_t)p + (int32_t)cv + (int64_t)cin);
    } else {
      unsigned __int128 t = (unsigned __int128)p + cv + cin;
      r = (uint64_t)t & rmk;
      bool carry = rw < 64 ? (uint64_t)(t >> rw) & 1 : (uint64_t)(t >> 64) & 1;
      co |= (emu_mask)carry << l;
    }
    d[l] = r;
  });
  if (in->ndst > 1) emu_pred_write(x, in->dst[1], m, co);
}

/* mul24/mad24: 24-bit operands, 48-bit product; .lo bits 31..0, .hi 47..16 */
static void h_mul24(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  const uint64_t *c = in->op == ir_op_mad24 ? S(2) : NULL;
  uint64_t *d = D(0);
  bool sgn = is_signed_type((ir_type)in->type), hi = in->mods.mulmode == IR_MUL_HI;
  EMU_EACH(m, l, {
    int64_t p = sgn ? emu_sext(a[l], 24) * emu_sext(b[l], 24)
                    : (int64_t)((a[l] & 0xffffff) * (b[l] & 0xffffff));
    uint64_t part = hi ? ((uint64_t)p >> 16) & 0xffffffff : (uint64_t)p & 0xffffffff;
    if (c) {
      if (in->mods.sat && sgn) part = (uint32_t)sat_s32((int64_t)(int32_t)part + (int32_t)c[l]);
      else part = (part + c[l]) & 0xffffffff;
    }
    d[l] = part;
  });
}

static void h_sad(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2);
  uint64_t *d = D(0), mk = in->tmask;
  unsigned w = in->tbits;
  bool sgn = is_signed_type((ir_type)in->type);
  EMU_EACH(m, l, {
    uint64_t diff;
    if (sgn) {
      int64_t av = emu_sext(a[l], w), bv = emu_sext(b[l], w);
      diff = av < bv ? (uint64_t)bv - (uint64_t)av : (uint64_t)av - (uint64_t)bv;
    } else {
      uint64_t av = a[l] & mk, bv = b[l] & mk;
      diff = av < bv ? bv - av : av - bv;
    }
    d[l] = (c[l] + diff) & mk;
  });
}

static void h_div(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0), mk = in->tmask;
  unsigned w = in->tbits;
  bool sgn = is_signed_type((ir_type)in->type), rem = in->op == ir_op_rem;
  EMU_EACH(m, l, {
    uint64_t r;
    if ((b[l] & mk) == 0) {
      r = rem ? a[l] : mk;
    } else if (sgn) {
      int64_t av = emu_sext(a[l], w), bv = emu_sext(b[l], w);
      if (bv == -1) r = rem ? 0 : (uint64_t)0 - (uint64_t)av;   /* no INT_MIN / -1 trap */
      else r = (uint64_t)(rem ? av % bv : av / bv);
    } else {
      r = rem ? (a[l] & mk) % (b[l] & mk) : (a[l] & mk) / (b[l] & mk);
    }
    d[l] = r & mk;
  });
}

static void h_abs(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0), mk = in->tmask;
  unsigned w = in->tbits;
  LANES({
    int64_t v = emu_sext(a[l], w);
    d[l] = (v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v) & mk;
  });
}

static void h_neg(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0), mk = in->tmask;
  LANES(d[l] = ((uint64_t)0 - a[l]) & mk);
}

static void h_minmax(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0), mk = in->tmask;
  unsigned w = in->tbits;
  bool sgn = is_signed_type((ir_type)in->type), mx = in->op == ir_op_max, relu = in->mods.relu;
  EMU_EACH(m, l, {
    uint64_t r;
    if (sgn) {
      int64_t av = emu_sext(a[l], w), bv = emu_sext(b[l], w);
      int64_t v = mx ? (av > bv ? av : bv) : (av < bv ? av : bv);
      if (relu && v < 0) v = 0;
      r = (uint64_t)v;
    } else {
      uint64_t av = a[l] & mk, bv = b[l] & mk;
      r = mx ? (av > bv ? av : bv) : (av < bv ? av : bv);
    }
    d[l] = r & mk;
  });
}

/* ---- bit manipulation ---------------------------------------------------- */
static void h_popc(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0), mk = in->tmask;
  LANES(d[l] = (uint64_t)__builtin_popcountll(a[l] & mk));
}

static void h_clz(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0), mk = in->tmask;
  unsigned w = in->tbits;
  LANES({
    uint64_t v = a[l] & mk;
    d[l] = v ? (uint64_t)(__builtin_clzll(v) - (64 - (int)w)) : w;
  });
}

static void h_bfind(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0), mk = in->tmask;
  unsigned w = in->tbits, msb = w - 1;
  bool sgn = is_signed_type((ir_type)in->type), shamt = in->mods.bfind_shiftamt;
  EMU_EACH(m, l, {
    uint64_t v = a[l] & mk;
    if (sgn && ((v >> msb) & 1)) v = ~v & mk;
    uint64_t r = 0xffffffffu;
    if (v) {
      r = 63u - (unsigned)__builtin_clzll(v);
      if (shamt) r = msb - r;
    }
    d[l] = r;
  });
}

static void h_fns(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *mask = S(0), *base = S(1), *off = S(2);
  uint64_t *d = D(0);
  EMU_EACH(m, l, {
    uint32_t mk = (uint32_t)mask[l];
    int32_t b = (int32_t)(uint32_t)base[l], o = (int32_t)(uint32_t)off[l];
    uint32_t r = 0xffffffffu;
    if (o == 0) {
      if (b >= 0 && b < 32 && ((mk >> b) & 1)) r = (uint32_t)b;
    } else {
      int pos = b, inc = o > 0 ? 1 : -1;
      int64_t count = (o > 0 ? (int64_t)o : -(int64_t)o) - 1;
      while (pos >= 0 && pos < 32) {
        if ((mk >> pos) & 1) {
          if (count == 0) {
            r = (uint32_t)pos;
            break;
          }
          count--;
        }
        pos += inc;
      }
    }
    d[l] = r;
  });
}

static void h_brev(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  unsigned w = in->tbits;
  LANES({
    uint64_t v = a[l], r = 0;
    for (unsigned k = 0; k < w; k++) r |= ((v >> k) & 1) << (w - 1 - k);
    d[l] = r;
  });
}

static void h_bfe(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2);
  uint64_t *d = D(0), mk = in->tmask;
  unsigned w = in->tbits, msb = w - 1;
  bool sgn = is_signed_type((ir_type)in->type);
  EMU_EACH(m, l, {
    unsigned pos = b[l] & 0xff, len = c[l] & 0xff;
    uint64_t v = a[l] & mk;
    uint64_t sbit = 0;
    if (sgn && len) {
      unsigned sp = pos + len - 1 < msb ? pos + len - 1 : msb;
      sbit = (v >> sp) & 1;
    }
    uint64_t r = 0;
    for (unsigned i = 0; i <= msb; i++) {
      uint64_t bit = (i < len && pos + i <= msb) ? (v >> (pos + i)) & 1 : sbit;
      r |= bit << i;
    }
    d[l] = r;
  });
}

static void h_bfi(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2), *e = S(3);
  uint64_t *d = D(0), mk = in->tmask;
  unsigned msb = in->tbits - 1;
  EMU_EACH(m, l, {
    unsigned pos = c[l] & 0xff, len = e[l] & 0xff;
    uint64_t r = b[l] & mk;
    for (unsigned i = 0; i < len && pos + i <= msb; i++)
      r = (r & ~(1ull << (pos + i))) | (((a[l] >> i) & 1) << (pos + i));
    d[l] = r;
  });
}

static void h_szext(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  bool clamp = in->mods.shf_clamp, sgn = is_signed_type((ir_type)in->type);
  EMU_EACH(m, l, {
    uint32_t av = (uint32_t)a[l], bv = (uint32_t)b[l], b1 = bv & 0x1f;
    bool too_large = bv >= 32 && clamp;
    uint32_t mask = too_large ? 0 : ~0u << b1;
    uint32_t sign_pos = (b1 - 1) & 0x1f;
    bool sbit = (b1 == 0 || too_large || !sgn) ? false : (av >> sign_pos) & 1;
    d[l] = (av & ~mask) | (sbit ? mask : 0);
  });
}

static void h_bmsk(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  bool clamp = in->mods.shf_clamp;
  EMU_EACH(m, l, {
    uint32_t av = (uint32_t)a[l], bv = (uint32_t)b[l];
    uint32_t a1 = av & 0x1f, b1 = bv & 0x1f, sum = a1 + b1;
    uint32_t mask0 = ~0u << a1, mask1 = sum >= 32 ? 0 : ~0u << sum;
    bool ovf = sum >= 32;
    if (clamp) {
      if (av >= 32) {
        ovf = true;
        mask0 = 0;
      }
      if (bv >= 32) ovf = true;
    }
    if (ovf) mask1 = 0;
    else if (b1 == 0) mask1 = ~0u;
    d[l] = mask0 & ~mask1;
  });
}

static void h_dp4a(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2);
  uint64_t *d = D(0);
  bool sa = in->mods.signed_a, sb = in->mods.signed_b;
  EMU_EACH(m, l, {
    uint32_t r = (uint32_t)c[l];
    for (unsigned i = 0; i < 4; i++) {
      uint32_t ab = (uint32_t)(a[l] >> (8 * i)) & 0xff, bb = (uint32_t)(b[l] >> (8 * i)) & 0xff;
      int32_t va = sa ? (int8_t)ab : (int32_t)ab, vb = sb ? (int8_t)bb : (int32_t)bb;
      r += (uint32_t)(va * vb);
    }
    d[l] = r;
  });
}

static void h_dp2a(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2);
  uint64_t *d = D(0);
  bool sa = in->mods.signed_a, sb = in->mods.signed_b;
  unsigned sel = in->mods.dp_hi ? 2 : 0;
  EMU_EACH(m, l, {
    uint32_t r = (uint32_t)c[l];
    for (unsigned i = 0; i < 2; i++) {
      uint32_t ah = (uint32_t)(a[l] >> (16 * i)) & 0xffff, bb = (uint32_t)(b[l] >> (8 * (sel + i))) & 0xff;
      int32_t va = sa ? (int16_t)ah : (int32_t)ah, vb = sb ? (int8_t)bb : (int32_t)bb;
      r += (uint32_t)(va * vb);
    }
    d[l] = r;
  });
}

/* ---- logic and shifts ----------------------------------------------------- */
static void h_and(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  LANES(d[l] = a[l] & b[l]);
}
static void h_or(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  LANES(d[l] = a[l] | b[l]);
}
static void h_xor(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  LANES(d[l] = a[l] ^ b[l]);
}
static void h_not(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0), mk = in->tmask;
  LANES(d[l] = ~a[l] & mk);
}
static void h_cnot(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0), mk = in->tmask;
  LANES(d[l] = (a[l] & mk) == 0);
}
static void h_and_pred(emu_exec *x, const emu_inst *in, emu_mask m) {
  emu_pred_write(x, in->dst[0], m, EMU_PRED(x, in->src[0]) & EMU_PRED(x, in->src[1]));
}
static void h_or_pred(emu_exec *x, const emu_inst *in, emu_mask m) {
  emu_pred_write(x, in->dst[0], m, EMU_PRED(x, in->src[0]) | EMU_PRED(x, in->src[1]));
}
static void h_xor_pred(emu_exec *x, const emu_inst *in, emu_mask m) {
  emu_pred_write(x, in->dst[0], m, EMU_PRED(x, in->src[0]) ^ EMU_PRED(x, in->src[1]));
}
static void h_not_pred(emu_exec *x, const emu_inst *in, emu_mask m) {
  emu_pred_write(x, in->dst[0], m, ~EMU_PRED(x, in->src[0]));
}

static void h_lop3(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2), *lut = S(3);
  uint64_t *d = D(0), mk = in->tmask;
  EMU_EACH(m, l, {
    uint64_t av = a[l], bv = b[l], cv = c[l], r = 0;
    unsigned t = (unsigned)lut[l] & 0xff;
    if (t & 0x01) r |= ~av & ~bv & ~cv;
    if (t & 0x02) r |= ~av & ~bv & cv;
    if (t & 0x04) r |= ~av & bv & ~cv;
    if (t & 0x08) r |= ~av & bv & cv;
    if (t & 0x10) r |= av & ~bv & ~cv;
    if (t & 0x20) r |= av & ~bv & cv;
    if (t & 0x40) r |= av & bv & ~cv;
    if (t & 0x80) r |= av & bv & cv;
    d[l] = r & mk;
  });
}

static void h_shl(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0), mk = in->tmask;
  unsigned w = in->tbits;
  LANES({
    uint64_t n = b[l] & 0xffffffff;
    d[l] = n >= w ? 0 : (a[l] << n) & mk;
  });
}

static void h_shr_u(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0), mk = in->tmask;
  unsigned w = in->tbits;
  LANES({
    uint64_t n = b[l] & 0xffffffff;
    d[l] = n >= w ? 0 : (a[l] & mk) >> n;
  });
}

static void h_shr_s(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0), mk = in->tmask;
  unsigned w = in->tbits;
  LANES({
    uint64_t n = b[l] & 0xffffffff;
    int64_t v = emu_sext(a[l], w);
    d[l] = (uint64_t)(v >> (n >= w ? w - 1 : n)) & mk;
  });
}

static void h_shf(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2);
  uint64_t *d = D(0);
  bool left = in->mods.shf_left, clamp = in->mods.shf_clamp;
  bool sgn = is_signed_type((ir_type)in->type);
  EMU_EACH(m, l, {
    uint32_t cv = (uint32_t)c[l];
    uint32_t n = clamp ? (cv < 32 ? cv : 32) : cv & 31;
    uint64_t cat = ((uint64_t)(uint32_t)b[l] << 32) | (uint32_t)a[l];
    uint32_t r;
    if (left) r = (uint32_t)((cat << n) >> 32);
    else if (sgn) r = (uint32_t)((int64_t)cat >> n);
    else r = (uint32_t)(cat >> n);
    d[l] = r;
  });
}

/* prmt modes (PTX ISA 9.7.9.7): byte selected for each result byte, by the
 * two low bits of c */
static const uint8_t prmt_table[6][4][4] = {
    /* f4e */ {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}},
    /* b4e */ {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}},
    /* rc8 */ {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}},
    /* ecl */ {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}},
    /* ecr */ {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}},
    /* rc16 */ {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}},
};

static void h_prmt(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2);
  uint64_t *d = D(0);
  unsigned mode = in->mods.prmt;
  EMU_EACH(m, l, {
    uint64_t t = ((uint64_t)(uint32_t)b[l] << 32) | (uint32_t)a[l];
    uint32_t cv = (uint32_t)c[l], r = 0;
    for (unsigned i = 0; i < 4; i++) {
      uint32_t byte;
      if (mode == IR_PRMT_NONE) {
        unsigned sel = (cv >> (4 * i)) & 0xf;
        byte = (uint32_t)(t >> (8 * (sel & 7))) & 0xff;
        if (sel & 8) byte = (byte & 0x80) ? 0xff : 0;
      } else {
        unsigned sel = prmt_table[mode - 1][cv & 3][i];
        byte = (uint32_t)(t >> (8 * sel)) & 0xff;
      }
      r |= byte << (8 * i);
    }
    d[l] = r;
  });
}

/* ---- comparison and selection ------------------------------------------- */
/* A comparison of two lanes' values; floats compare as IEEE with the
 * ordered (eq..ge) and unordered (equ..geu) forms. */
static inline bool cmp_u(unsigned op, uint64_t a, uint64_t b) {
  switch (op) {
  case IR_CMP_EQ: return a == b;
  case IR_CMP_NE: return a != b;
  case IR_CMP_LT: case IR_CMP_LO: return a < b;
  case IR_CMP_LE: case IR_CMP_LS: return a <= b;
  case IR_CMP_GT: case IR_CMP_HI: return a > b;
  case IR_CMP_GE: case IR_CMP_HS: return a >= b;
  default: return false;
  }
}

static inline bool cmp_s(unsigned op, int64_t a, int64_t b) {
  switch (op) {
  case IR_CMP_EQ: return a == b;
  case IR_CMP_NE: return a != b;
  case IR_CMP_LT: return a < b;
  case IR_CMP_LE: return a <= b;
  case IR_CMP_GT: return a > b;
  case IR_CMP_GE: return a >= b;
  case IR_CMP_LO: return (uint64_t)a < (uint64_t)b;
  case IR_CMP_LS: return (uint64_t)a <= (uint64_t)b;
  case IR_CMP_HI: return (uint64_t)a > (uint64_t)b;
  case IR_CMP_HS: return (uint64_t)a >= (uint64_t)b;
  default: return false;
  }
}

static inline bool cmp_f(unsigned op, double a, double b) {
  bool un = a != a || b != b;
  switch (op) {
  case IR_CMP_EQ: return !un && a == b;
  case IR_CMP_NE: return !un && a != b;
  case IR_CMP_LT: return !un && a < b;
  case IR_CMP_LE: return !un && a <= b;
  case IR_CMP_GT: return !un && a > b;
  case IR_CMP_GE: return !un && a >= b;
  case IR_CMP_EQU: return un || a == b;
  case IR_CMP_NEU: return un || a != b;
  case IR_CMP_LTU: return un || a < b;
  case IR_CMP_LEU: return un || a <= b;
  case IR_CMP_GTU: return un || a > b;
  case IR_CMP_GEU: return un || a >= b;
  case IR_CMP_NUM: return !un;
  case IR_CMP_NAN: return un;
  default: return false;
  }
}

/* The source as a double, for float compares: half = 0 low, 1 high part of a
 * packed pair. */
static inline double fval(ir_type t, uint64_t v, unsigned half, bool ftz) {
  switch (t) {
  case ir_type_f32: {
    uint32_t b = (uint32_t)v;
    if (ftz) b = emu_f32_ftz(b);
    return emu_f32(b);
  }
  case ir_type_f64: return emu_f64(v);
  case ir_type_f16: {
    uint16_t h = (uint16_t)v;
    if (ftz) h = emu_f16_ftz(h);
    return emu_f16_to_f32(h);
  }
  case ir_type_bf16: return emu_bf16_to_f32((uint16_t)v);
  case ir_type_f16x2: {
    uint16_t h = (uint16_t)(v >> (16 * half));
    if (ftz) h = emu_f16_ftz(h);
    return emu_f16_to_f32(h);
  }
  case ir_type_bf16x2: return emu_bf16_to_f32((uint16_t)(v >> (16 * half)));
  default: return 0;
  }
}

/* Compares a and b of one lane in the instruction's source type: for packed
 * types, bit 0 = low half, bit 1 = high half. */
static inline unsigned compare_lane(const emu_inst *in, ir_type st, uint64_t a, uint64_t b) {
  unsigned op = in->mods.cmp;
  if (emu_type_is_float(st)) {
    bool ftz = in->mods.ftz;
    if (st == ir_type_f16x2 || st == ir_type_bf16x2)
      return cmp_f(op, fval(st, a, 0, ftz), fval(st, b, 0, ftz)) |
             (unsigned)cmp_f(op, fval(st, a, 1, ftz), fval(st, b, 1, ftz)) << 1;
    return cmp_f(op, fval(st, a, 0, ftz), fval(st, b, 0, ftz));
  }
  unsigned w = ir_type_bits(st);
  if (is_signed_type(st)) return cmp_s(op, emu_sext(a, w), emu_sext(b, w));
  return cmp_u(op, a & emu_type_mask(w), b & emu_type_mask(w));
}

static inline bool boolop(unsigned op, bool a, bool c) {
  switch (op) {
  case IR_BOOL_AND: return a && c;
  case IR_BOOL_OR: return a || c;
  case IR_BOOL_XOR: return a != c;
  default: return a;
  }
}

/* setp.cmp.s32 / .u32 d, a, b: the common fast case */
#define SETP_FAST(name, T, OP) \
  static void name(emu_exec *x, const emu_inst *in, emu_mask m) { \
    const uint64_t *a = S(0), *b = S(1); \
    emu_mask r = 0; \
    EMU_EACH(m, l, r |= (emu_mask)((T)a[l] OP (T)b[l]) << l); \
    emu_pred_write(x, in->dst[0], m, r); \
  }
SETP_FAST(h_setp_lt_s32, int32_t, <)
SETP_FAST(h_setp_le_s32, int32_t, <=)
SETP_FAST(h_setp_gt_s32, int32_t, >)
SETP_FAST(h_setp_ge_s32, int32_t, >=)
SETP_FAST(h_setp_lt_u32, uint32_t, <)
SETP_FAST(h_setp_le_u32, uint32_t, <=)
SETP_FAST(h_setp_gt_u32, uint32_t, >)
SETP_FAST(h_setp_ge_u32, uint32_t, >=)
SETP_FAST(h_setp_eq_32, uint32_t, ==)
SETP_FAST(h_setp_ne_32, uint32_t, !=)
SETP_FAST(h_setp_lt_s64, int64_t, <)
SETP_FAST(h_setp_ge_s64, int64_t, >=)
SETP_FAST(h_setp_lt_u64, uint64_t, <)
SETP_FAST(h_setp_ge_u64, uint64_t, >=)
SETP_FAST(h_setp_eq_64, uint64_t, ==)
SETP_FAST(h_setp_ne_64, uint64_t, !=)

/* setp: p = cmp BOOL c, q = !cmp BOOL c; packed types: p low half, q high */
static void h_setp(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  ir_type st = (ir_type)in->type;   /* the comparison type, not the registers' */
  bool packed = st == ir_type_f16x2 || st == ir_type_bf16x2;
  bool has_c = in->nsrc > 2 && in->mods.boolop;
  emu_mask c = has_c ? EMU_PRED(x, in->src[2]) : 0, p = 0, q = 0;
  EMU_EACH(m, l, {
    unsigned r = compare_lane(in, st, a[l], b[l]);
    bool cl = (c >> l) & 1;
    bool pv, qv;
    if (packed) {
      pv = boolop(in->mods.boolop, r & 1, cl);
      qv = boolop(in->mods.boolop, (r >> 1) & 1, cl);
    } else {
      pv = boolop(in->mods.boolop, r & 1, cl);
      qv = boolop(in->mods.boolop, !(r & 1), cl);
    }
    p |= (emu_mask)pv << l;
    q |= (emu_mask)qv << l;
  });
  emu_pred_write(x, in->dst[0], m, p);
  if (in->ndst > 1) emu_pred_write(x, in->dst[1], m, q);
}

/* set: d = cmp BOOL c as all ones / 1.0.  A packed source compares per
 * half and gives a result per half (PTX ISA 9.1, "Half Precision
 * Comparison Instructions: set": d[i] = BoolOp(t[i], c) ? 1.0 : 0.0 for an .f16x2/.bf16x2
 * destination, ? 0xffff : 0 for .u32/.s32 -- NVIDIA-verified, ZLUDA's
 * set_f16 data: set.gtu.u32.f16x2 of {3.14, -inf} and {-0, 0} is
 * 0x0000ffff). */
static void h_set(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  ir_type dt = (ir_type)in->type, st = (ir_type)in->type2;
  if (st == ir_type_none) st = (ir_type)in->stype[0];
  bool packed = st == ir_type_f16x2 || st == ir_type_bf16x2;
  bool has_c = in->nsrc > 2 && in->mods.boolop;
  emu_mask c = has_c ? EMU_PRED(x, in->src[2]) : 0;
  EMU_EACH(m, l, {
    unsigned r = compare_lane(in, st, a[l], b[l]);
    bool cl = (c >> l) & 1;
    bool lo = boolop(in->mods.boolop, r & 1, cl);
    bool hi = boolop(in->mods.boolop, packed ? (r >> 1) & 1 : r & 1, cl);
    uint64_t v;
    if (packed && dt != ir_type_f16x2 && dt != ir_type_bf16x2) {
      d[l] = (lo ? 0xffffu : 0) | (hi ? 0xffff0000u : 0);
      continue;
    }
    switch (dt) {
    case ir_type_f32: v = lo ? 0x3f800000u : 0; break;
    case ir_type_f16: v = lo ? 0x3c00u : 0; break;
    case ir_type_bf16: v = lo ? 0x3f80u : 0; break;
    case ir_type_f16x2: v = (lo ? 0x3c00u : 0) | (hi ? 0x3c000000u : 0); break;
    case ir_type_bf16x2: v = (lo ? 0x3f80u : 0) | (hi ? 0x3f800000u : 0); break;
    default:
      v = lo ? (dt == ir_type_none ? 0xffffffffu : emu_type_mask(ir_type_bits(dt))) : 0;
      break;
    }
    d[l] = v;
  });
}

static void h_selp(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  emu_mask c = EMU_PRED(x, in->src[2]);
  LANES(d[l] = ((c >> l) & 1) ? a[l] : b[l]);
}

static void h_selp_wide(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  emu_mask c = EMU_PRED(x, in->src[2]);
  EMU_EACH(m, l, {
    const uint64_t *s = ((c >> l) & 1) ? a : b;
    d[2 * l] = s[2 * l];
    d[2 * l + 1] = s[2 * l + 1];
  });
}

static void h_selp_pred(emu_exec *x, const emu_inst *in, emu_mask m) {
  emu_mask c = EMU_PRED(x, in->src[2]);
  emu_pred_write(x, in->dst[0], m, (EMU_PRED(x, in->src[0]) & c) | (EMU_PRED(x, in->src[1]) & ~c));
}

static void h_slct(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2);
  uint64_t *d = D(0);
  bool fc = in->type2 == ir_type_f32;
  EMU_EACH(m, l, {
    bool ge;
    if (fc) {
      uint32_t cb = (uint32_t)c[l];
      if (in->mods.ftz) cb = emu_f32_ftz(cb);
      float cf = emu_f32(cb);
      ge = cf >= 0.0f;
    } else {
      ge = (int32_t)(uint32_t)c[l] >= 0;
    }
    d[l] = ge ? a[l] : b[l];
  });
}

/* ---- selection of handlers ------------------------------------------------ */
static unsigned dst_cls(const emu_inst *in) {
  ir_type t = (ir_type)in->dtype[0];
  return t == ir_type_pred ? EMU_CLS_PRED : ir_type_bits(t) > 64 ? EMU_CLS_WIDE : EMU_CLS_LANE;
}

/* The handler of an integer, logic or data-movement instruction, by op and
 * type.
 * Long: one case per op with its type checks, a table in code; the
 * handlers themselves are above. */
const char *emu_sel_alu(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  ir_type t = (ir_type)i->type;
  bool sgn = is_signed_type(t);
  unsigned w = in->tbits;
  bool is_pred = t == ir_type_pred;
  switch ((ir_op)i->op) {
  case ir_op_copy:
    if (i->nsrc != 1 || i->ndst != 1) return "mov with unexpected operands";
    switch (dst_cls(in)) {
    case EMU_CLS_PRED: in->fn = h_copy_pred; break;
    case EMU_CLS_WIDE: in->fn = h_copy_wide; break;
    default: in->fn = h_copy; break;
    }
    return NULL;
  case ir_op_pack:
    if (!i->nsrc || ir_type_bits((ir_type)in->dtype[0]) % i->nsrc || ir_type_bits((ir_type)in->dtype[0]) > 128)
      return "mov pack with an uneven split";
    in->fn = h_pack;
    return NULL;
  case ir_op_unpack:
    in->fn = h_unpack;
    return NULL;
  case ir_op_sreg:
    in->fn = h_sreg;
    in->sub = i->sreg;
    in->imm = i->sreg_comp;
    if (i->sreg == ir_sreg_is_explicit_cluster && dst_cls(in) != EMU_CLS_PRED) return "%is_explicit_cluster into a non-predicate";
    in->tmask = emu_type_mask(ir_type_bits((ir_type)in->dtype[0]));
    return NULL;
  case ir_op_symaddr:
    /* mov.u64 %rd, var: src[0] is the symbol; its value was resolved by the
     * decoder (a constant or a frame slot) */
    if (i->nsrc != 1) return "symaddr without its symbol operand";
    in->fn = h_copy;
    return NULL;
  case ir_op_add:
  case ir_op_sub:
    if (w == 0 || w > 64) return emu_dfmt(d, "%s.%s", ir_op_infos[i->op].ptx, ir_type_name(t));
    if (i->mods.cc) {
      in->fn = h_addsub_cc;
      in->sub = i->op == ir_op_sub;
    } else if (i->mods.sat) {
      if (t != ir_type_s32) return "add/sub .sat on a type other than s32";
      in->fn = i->op == ir_op_add ? h_add_sat_s32 : h_sub_sat_s32;
    } else {
      in->fn = i->op == ir_op_add ? h_add : h_sub;
    }
    return NULL;
  case ir_op_addc:
  case ir_op_subc:
    if (i->nsrc < 3) return "addc/subc without a carry-in operand";
    in->fn = h_addsub_cc;
    in->sub = (uint8_t)((i->op == ir_op_subc) | 2);
    return NULL;
  case ir_op_mul:
    if (w == 0 || w > 64) return "mul of this type";
    if (i->mods.mulmode == IR_MUL_WIDE) {
      if (w > 32) return "mul.wide of 64-bit operands";
      in->fn = w == 32 ? (sgn ? h_mul_wide_s32 : h_mul_wide_u32) : h_mul;
    } else if (i->mods.mulmode == IR_MUL_HI) {
      in->fn = (w == 32 && !sgn) ? h_mul_hi_u32 : h_mul;
    } else {
      in->fn = h_mul_lo;
    }
    return NULL;
  case ir_op_mad:
  case ir_op_madc:
    if (w == 0 || w > 64) return "mad of this type";
    if (i->mods.mulmode == IR_MUL_WIDE && w > 32) return "mad.wide of 64-bit operands";
    if (i->op == ir_op_madc) {
      if (i->nsrc < 4) return "madc without a carry-in operand";
      in->fn = h_mad;
      in->sub = 2;
    } else if (!i->mods.cc && !i->mods.sat && i->mods.mulmode != IR_MUL_HI) {
      if (i->mods.mulmode == IR_MUL_WIDE) in->fn = w == 32 ? (sgn ? h_mad_wide_s32 : h_mad_wide_u32) : h_mad;
      else in->fn = h_mad_lo;
    } else {
      in->fn = h_mad;
    }
    return NULL;
  case ir_op_mul24:
  case ir_op_mad24:
    in->fn = h_mul24;
    return NULL;
  case ir_op_sad:
    in->fn = h_sad;
    return NULL;
  case ir_op_div:
  case ir_op_rem:
    if (w == 0 || w > 64) return "integer div/rem of this type";
    in->fn = h_div;
    return NULL;
  case ir_op_abs:
    in->fn = h_abs;
    return NULL;
  case ir_op_neg:
    in->fn = h_neg;
    return NULL;
  case ir_op_min:
  case ir_op_max:
    if (i->nsrc != 2) return "integer min/max with three operands";
    if (w == 0 || w > 64) return emu_dfmt(d, "%s.%s", ir_op_infos[i->op].ptx, ir_type_name(t));
    in->fn = h_minmax;
    return NULL;
  case ir_op_popc: in->fn = h_popc; return NULL;
  case ir_op_clz: in->fn = h_clz; return NULL;
  case ir_op_bfind: in->fn = h_bfind; return NULL;
  case ir_op_fns: in->fn = h_fns; return NULL;
  case ir_op_brev: in->fn = h_brev; return NULL;
  case ir_op_bfe: in->fn = h_bfe; return NULL;
  case ir_op_bfi: in->fn = h_bfi; return NULL;
  case ir_op_szext: in->fn = h_szext; return NULL;
  case ir_op_bmsk: in->fn = h_bmsk; return NULL;
  case ir_op_dp4a: in->fn = h_dp4a; return NULL;
  case ir_op_dp2a: in->fn = h_dp2a; return NULL;
  case ir_op_and: in->fn = is_pred ? h_and_pred : h_and; return NULL;
  case ir_op_or: in->fn = is_pred ? h_or_pred : h_or; return NULL;
  case ir_op_xor: in->fn = is_pred ? h_xor_pred : h_xor; return NULL;
  case ir_op_not: in->fn = is_pred ? h_not_pred : h_not; return NULL;
  case ir_op_cnot: in->fn = h_cnot; return NULL;
  case ir_op_lop3:
    if (i->nsrc != 4 || i->ndst != 1) return "lop3 with a predicate result";
    in->fn = h_lop3;
    return NULL;
  case ir_op_shl: in->fn = h_shl; return NULL;
  case ir_op_shr: in->fn = sgn ? h_shr_s : h_shr_u; return NULL;
  case ir_op_shf: in->fn = h_shf; return NULL;
  case ir_op_prmt:
    if (i->mods.prmt > IR_PRMT_RC16) return "prmt mode";
    in->fn = h_prmt;
    return NULL;
  case ir_op_setp: {
    if (i->nsrc < 2) return "setp with fewer than two operands";
    ir_type st = t;
    in->fn = h_setp;
    if (i->ndst == 1 && !(i->nsrc > 2 && i->mods.boolop) && !emu_type_is_float(st)) {
      unsigned sw = ir_type_bits(st);
      bool ss = is_signed_type(st);
      unsigned c = i->mods.cmp;
      if (sw == 32) {
        if (c == IR_CMP_EQ) in->fn = h_setp_eq_32;
        else if (c == IR_CMP_NE) in->fn = h_setp_ne_32;
        else if ((c == IR_CMP_LT && ss)) in->fn = h_setp_lt_s32;
        else if ((c == IR_CMP_LE && ss)) in->fn = h_setp_le_s32;
        else if ((c == IR_CMP_GT && ss)) in->fn = h_setp_gt_s32;
        else if ((c == IR_CMP_GE && ss)) in->fn = h_setp_ge_s32;
        else if (c == IR_CMP_LO || (c == IR_CMP_LT && !ss)) in->fn = h_setp_lt_u32;
        else if (c == IR_CMP_LS || (c == IR_CMP_LE && !ss)) in->fn = h_setp_le_u32;
        else if (c == IR_CMP_HI || (c == IR_CMP_GT && !ss)) in->fn = h_setp_gt_u32;
        else if (c == IR_CMP_HS || (c == IR_CMP_GE && !ss)) in->fn = h_setp_ge_u32;
      } else if (sw == 64) {
        if (c == IR_CMP_EQ) in->fn = h_setp_eq_64;
        else if (c == IR_CMP_NE) in->fn = h_setp_ne_64;
        else if (c == IR_CMP_LT && ss) in->fn = h_setp_lt_s64;
        else if (c == IR_CMP_GE && ss) in->fn = h_setp_ge_s64;
        else if (c == IR_CMP_LO || (c == IR_CMP_LT && !ss)) in->fn = h_setp_lt_u64;
        else if (c == IR_CMP_HS || (c == IR_CMP_GE && !ss)) in->fn = h_setp_ge_u64;
      }
    }
    return NULL;
  }
  case ir_op_set:
    if (i->nsrc < 2) return "set with fewer than two operands";
    in->fn = h_set;
    return NULL;
  case ir_op_selp:
    switch (dst_cls(in)) {
    case EMU_CLS_PRED: in->fn = h_selp_pred; break;
    case EMU_CLS_WIDE: in->fn = h_selp_wide; break;
    default: in->fn = h_selp; break;
    }
    return NULL;
  case ir_op_slct:
    in->fn = h_slct;
    return NULL;
  default:
    break;
  }
  return emu_dfmt(d, "unsupported instruction '%s.%s'", ir_op_infos[i->op].ptx, ir_type_name(t));
}
