/* emu/emu_mbarrier.c: the mbarrier family (PTX ISA 9.7.13.15) and
 * cp.async.mbarrier.arrive (9.7.9.25.3.3) on the object layout of
 * ir/ir_mbarrier.h.
 *
 * Every update is a compare-and-swap loop on the 8-byte word, lane by lane
 * in lane order, so a wave's lanes arrive one after another as the threads
 * of a warp do.  A workgroup's waves run on one host thread, but the word
 * may be in global memory too (generic addressing allows it), hence real
 * atomics.
 *
 * Waiting: test_wait and try_wait return at once.  try_wait may return
 * false when its time limit passes (9.7.13.15.16), and a limit of zero is
 * a legal choice, so both are a test; the program's loop around them
 * spins.  A wait that saw an incomplete phase marks the wave as spinning
 * (w->spins at the limit), so its next backward branch without a store in
 * between yields to the other waves of the workgroup, which are the ones
 * that can arrive (docs/emulator.md, "Workgroups on host threads").
 *
 * cp.async completes when it executes (emu_mem.c), so the arrive that
 * cp.async.mbarrier.arrive triggers "on completion of all prior cp.async
 * operations" happens at once: without .noinc the pending count is first
 * incremented and then decremented, which changes nothing (the phase was
 * not complete, so its pending count stays above zero); with .noinc it is
 * an arrive of count 1.
 *
 * cp.async.bulk (9.7.9.25.4.1), global -> shared::cta/cluster with the
 * mbarrier's complete-tx, shared::cta -> global in a bulk async-group: the
 * copy is done when the instruction runs (a legal schedule of an
 * asynchronous copy, as for cp.async), in 16-byte steps each checked like an
 * access (the ISA requires 16-byte alignment and a size that is a multiple
 * of 16), then complete-tx(size) on the mbarrier; .cp_mask (sm_100) copies
 * byte j of each 16-byte chunk only where bit j of its mask is set.  commit_group and
 * wait_group have nothing left to wait for.
 */
#include <string.h>

#include "emu_internal.h"
#include "ir/ir_mbarrier.h"
#include "ir/ir_tensormap.h"

#define S(k) EMU_U64(x, in->src[k])
#define D(k) EMU_U64(x, in->dst[k])

enum { MB_INIT, MB_INVAL, MB_EXPECT_TX, MB_COMPLETE_TX, MB_ARRIVE, MB_ARRIVE_DROP, MB_ASYNC_ARRIVE };

static uint64_t *word(emu_exec *x, const emu_inst *in, unsigned l, bool write) {
  uint64_t a = (S(0)[l] + (uint64_t)in->imm) & in->amask;
  return emu_addr(x, in, l, in->space, a, 8, write);
}

static void h_update(emu_exec *x, const emu_inst *in, emu_mask m) {
  x->stores++;
  bool has_count = in->nsrc >= 2;
  EMU_EACH(m, l, {
    uint64_t *p = word(x, in, l, true);
    if (!p) return;
    uint32_t v = has_count ? (uint32_t)S(1)[l] : 1;
    uint32_t arrive = 0, drop = 0;
    int32_t tx = 0;
    switch (in->sub) {
    case MB_INIT:
      if (v == 0 || v > IR_MBAR_COUNT_MASK) {
        emu_fault(x, in, (int)l, EMU_ERR_TRAP, "mbarrier.init with count %u (1 to 2^20-1)", v);
        return;
      }
      __atomic_store_n(p, ir_mbar_init(v), __ATOMIC_SEQ_CST);
      continue;
    case MB_INVAL:
      __atomic_store_n(p, 0, __ATOMIC_SEQ_CST);
      continue;
    case MB_EXPECT_TX: tx = (int32_t)v; break;
    case MB_COMPLETE_TX: tx = -(int32_t)v; break;
    case MB_ARRIVE:
      /* arrive.expect_tx: the tx-count operand, then an arrive of count 1
       * (9.7.13.15.13: the expect-tx operation happens before the arrive) */
      if (in->mods.mbar == IR_MBAR_EXPECT_TX) {
        tx = (int32_t)v;
        arrive = 1;
      } else {
        arrive = v;
      }
      break;
    case MB_ARRIVE_DROP:
      if (in->mods.mbar == IR_MBAR_EXPECT_TX) {
        tx = (int32_t)v;
        v = 1;
      }
      arrive = drop = v;
      break;
    case MB_ASYNC_ARRIVE:
      if (in->mods.mbar != IR_MBAR_NOINC) continue;  /* +1 then -1: nothing changes */
      arrive = 1;
      break;
    }
    uint64_t old = __atomic_load_n(p, __ATOMIC_SEQ_CST), state = 0, nw;
    do nw = ir_mbar_update(old, arrive, drop, tx, &state);
    while (!__atomic_compare_exchange_n(p, &old, nw, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    if (in->ndst) D(0)[l] = state;
  });
}

static void h_wait(emu_exec *x, const emu_inst *in, emu_mask m) {
  bool parity = in->mods.mbar == IR_MBAR_PARITY;
  emu_mask done = 0;
  EMU_EACH(m, l, {
    uint64_t *p = word(x, in, l, false);
    if (!p) return;
    uint64_t w = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    done |= (emu_mask)ir_mbar_phase_done(w, S(1)[l], parity) << l;
  });
  emu_pred_write(x, in->dst[0], m, done);
  if ((done & m) != m) x->w->spins = x->l->spin_limit;
}

/* Subtracts n bytes from the mbarrier's transaction count (complete_tx). */
static bool complete_tx(emu_exec *x, const emu_inst *in, unsigned l, uint64_t mbar, uint64_t n) {
  uint64_t *p = emu_addr(x, in, l, EMU_SP_SHARED, mbar, 8, true);
  if (!p) return false;
  uint64_t old = __atomic_load_n(p, __ATOMIC_SEQ_CST), nw;
  do nw = ir_mbar_update(old, 0, 0, -(int32_t)n, NULL);
  while (!__atomic_compare_exchange_n(p, &old, nw, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
  return true;
}

static void h_bulk(emu_exec *x, const emu_inst *in, emu_mask m) {
  x->stores++;
  bool to_global = in->mods.space == IR_SPACE_GLOBAL;
  unsigned from = to_global ? EMU_SP_SHARED : EMU_SP_GLOBAL;
  EMU_EACH(m, l, {
    uint64_t n = S(2)[l], da = (S(0)[l] + (uint64_t)in->imm) & in->amask, sa = S(1)[l];
    if (n % 16 || n >= (1ull << 32)) {
      emu_fault(x, in, (int)l, EMU_ERR_TRAP, "cp.async.bulk of %llu bytes (a multiple of 16)", (unsigned long long)n);
      return;
    }
    for (uint64_t k = 0; k < n; k += 16) {
      if (in->sub) {
        /* .cp_mask: byte j of each 16-byte chunk iff bit j of the mask;
         * the other bytes of the destination are not accessed */
        const uint8_t *s = emu_addr(x, in, l, from, sa + k, 16, false);
        if (!s) return;
        uint8_t c[16];
        memcpy(c, s, 16);
        uint16_t mask = (uint16_t)S(3)[l];
        for (unsigned j = 0; j < 16; j++) {
          if (!(mask >> j & 1)) continue;
          uint8_t *d = emu_addr(x, in, l, in->space, da + k + j, 1, true);
          if (!d) return;
          *d = c[j];
        }
        continue;
      }
      uint8_t *d = emu_addr(x, in, l, in->space, da + k, 16, true);
      const uint8_t *s = d ? emu_addr(x, in, l, from, sa + k, 16, false) : NULL;
      if (!s) return;
      memmove(d, s, 16);
    }
    if (in->mods.bulk == IR_BULK_COMPLETE_TX && !complete_tx(x, in, (unsigned)l, S(3)[l], n)) return;
  });
}

/* cp.async.bulk.tensor.Nd ... .tile (PTX ISA 9.7.9.25.5.1), both ways:
 *   load:  [dst], [tmap, {c0..cN-1}], [mbar]   global -> shared, complete_tx
 *   store: [tmap, {c0..cN-1}], [src]           shared -> global, bulk group
 * The tensor map's layout and the tile mode's rules: ir/ir_tensormap.h.
 * The copy completes when the instruction executes (a legal schedule of an
 * asynchronous copy), as cp.async.bulk's does. */
static void h_bulk_tensor(emu_exec *x, const emu_inst *in, emu_mask m) {
  x->stores++;
  bool load = in->mods.bulk == IR_BULK_COMPLETE_TX;
  unsigned rank = in->mods.tdim, t0 = load ? 1u : 0u, smem = load ? 0u : 1u + rank;
  EMU_EACH(m, l, {
    uint64_t ta = load ? S(1)[l] : (S(0)[l] + (uint64_t)in->imm) & in->amask;
    const uint8_t *tb = emu_addr(x, in, (unsigned)l, EMU_SP_GENERIC, ta, IR_TMAP_BYTES, false);
    if (!tb) return;
    ir_tensormap t;
    if (!ir_tmap_read(tb, &t) || t.rank != rank) {
      emu_fault(x, in, (int)l, EMU_ERR_TRAP, "cp.async.bulk.tensor.%ud: the operand at 0x%llx is not a %u-d "
                "tensor map made by cuTensorMapEncodeTiled", rank, (unsigned long long)ta, rank);
      return;
    }
    int64_t c[IR_TMAP_MAX_RANK] = {0};
    uint32_t n[IR_TMAP_MAX_RANK] = {1, 1, 1, 1, 1};
    for (unsigned d = 0; d < rank; d++) {
      c[d] = (int32_t)(uint32_t)S(t0 + 1 + d)[l];
      n[d] = ir_tmap_count(&t, d);
    }
    uint64_t sbase = load ? (S(0)[l] + (uint64_t)in->imm) & in->amask : S(smem)[l];
    unsigned eb = t.elem_bytes;
    uint64_t k = 0;   /* the element's index in the dense box */
    for (uint32_t i4 = 0; i4 < n[4]; i4++)
      for (uint32_t i3 = 0; i3 < n[3]; i3++)
        for (uint32_t i2 = 0; i2 < n[2]; i2++)
          for (uint32_t i1 = 0; i1 < n[1]; i1++)
            for (uint32_t i0 = 0; i0 < n[0]; i0++, k++) {
              const uint32_t i[IR_TMAP_MAX_RANK] = {i0, i1, i2, i3, i4};
              bool in_bounds = true;
              uint64_t ga = t.addr;
              for (unsigned d = 0; d < rank; d++) {
                int64_t g = c[d] + (int64_t)i[d] * (d ? t.elem_stride[d] : 1);
                if (g < 0 || (uint64_t)g > t.dim_minus1[d]) in_bounds = false;
                else ga += (uint64_t)g * (d ? t.stride[d - 1] : eb);
              }
              uint64_t sa = ir_tmap_swizzle(t.swizzle, sbase + k * eb);
              if (load) {
                uint8_t *dp = emu_addr(x, in, (unsigned)l, EMU_SP_SHARED, sa, eb, true);
                if (!dp) return;
                if (!in_bounds) {
                  memset(dp, t.nan_fill ? 0xff : 0, eb);
                  continue;
                }
                const uint8_t *sp = emu_addr(x, in, (unsigned)l, EMU_SP_GLOBAL, ga, eb, false);
                if (!sp) return;
                memcpy(dp, sp, eb);
              } else if (in_bounds) {
                const uint8_t *sp = emu_addr(x, in, (unsigned)l, EMU_SP_SHARED, sa, eb, false);
                uint8_t *dp = sp ? emu_addr(x, in, (unsigned)l, EMU_SP_GLOBAL, ga, eb, true) : NULL;
                if (!dp) return;
                memcpy(dp, sp, eb);
              }
            }
    if (load && !complete_tx(x, in, (unsigned)l, S(2 + rank)[l], ir_tmap_box_bytes(&t))) return;
  });
}

static void h_nop(emu_exec *x, const emu_inst *in, emu_mask m) {
  (void)x;
  (void)in;
  (void)m;
}

static void h_pending_count(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *s = S(0);
  uint64_t *d = D(0);
  EMU_LANES(x, m, l, d[l] = ir_mbar_pending(s[l]));
}

const char *emu_sel_mbarrier(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  switch ((ir_op)i->op) {
  case ir_op_mbarrier_init: in->sub = MB_INIT; break;
  case ir_op_mbarrier_inval: in->sub = MB_INVAL; break;
  case ir_op_mbarrier_expect_tx: in->sub = MB_EXPECT_TX; break;
  case ir_op_mbarrier_complete_tx: in->sub = MB_COMPLETE_TX; break;
  case ir_op_mbarrier_arrive: in->sub = MB_ARRIVE; break;
  case ir_op_mbarrier_arrive_drop: in->sub = MB_ARRIVE_DROP; break;
  case ir_op_cp_async_mbarrier_arrive: in->sub = MB_ASYNC_ARRIVE; break;
  case ir_op_mbarrier_test_wait:
  case ir_op_mbarrier_try_wait:
    if (i->nsrc < 2 || i->ndst != 1) return emu_dfmt(d, "'%s' with %u operands", ir_op_infos[i->op].ptx, i->nsrc);
    in->fn = h_wait;
    return NULL;
  case ir_op_mbarrier_pending_count:
    in->fn = h_pending_count;
    return NULL;
  case ir_op_cp_async_bulk: {
    unsigned nval = i->nsrc - (i->mods.has_cache_hint ? 1u : 0u);
    bool tx = i->mods.bulk == IR_BULK_COMPLETE_TX;
    /* .cp_mask (shared -> global, sm_100): the byte mask is a fourth operand */
    bool masked = !tx && i->mods.space == IR_SPACE_GLOBAL && nval == 4 && !i->mods.has_cache_hint;
    if (nval != (tx ? 4u : 3u) + masked || (i->mods.space == IR_SPACE_GLOBAL) == tx)
      return "cp.async.bulk other than global -> shared with an mbarrier or shared -> global in a bulk group";
    in->sub = masked;
    in->fn = h_bulk;
    return NULL;
  }
  case ir_op_cp_async_bulk_tensor: {
    /* .tile only (the IR has no other load mode: im2col stays opaque);
     * global -> shared with an mbarrier, or shared::cta -> global */
    unsigned r = i->mods.tdim, nval = i->nsrc - (i->mods.has_cache_hint ? 1u : 0u);
    bool tx = i->mods.bulk == IR_BULK_COMPLETE_TX;
    if (!i->mods.tile || r < 1 || r > 5 || nval != (tx ? 3u + r : 2u + r) ||
        (i->mods.space == IR_SPACE_GLOBAL) == tx || (!tx && i->mods.bulk != IR_BULK_GROUP))
      return "cp.async.bulk.tensor other than a .tile copy global -> shared with an mbarrier or shared -> "
             "global in a bulk group";
    in->fn = h_bulk_tensor;
    return NULL;
  }
  case ir_op_cp_async_bulk_commit_group:
  case ir_op_cp_async_bulk_wait_group:
    in->fn = h_nop;
    return NULL;
  default:
    return emu_dfmt(d, "unsupported instruction '%s'", ir_op_infos[i->op].ptx);
  }
  if ((in->sub == MB_INIT || in->sub == MB_EXPECT_TX || in->sub == MB_COMPLETE_TX) && i->nsrc != 2)
    return emu_dfmt(d, "'%s' with %u operands", ir_op_infos[i->op].ptx, i->nsrc);
  if (in->mods.mbar == IR_MBAR_EXPECT_TX && i->nsrc != 2)
    return emu_dfmt(d, "'%s.expect_tx' without its tx-count", ir_op_infos[i->op].ptx);
  in->fn = h_update;
  return NULL;
}
