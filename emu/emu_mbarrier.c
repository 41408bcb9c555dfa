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
 * of 16), then complete-tx(size) on the mbarrier.  commit_group and
 * wait_group have nothing left to wait for.  The shared::cta ->
 * shared::cluster form arrives with its source made generic by the PTX
 * front end (a cluster is one CTA: the destination is this CTA's shared
 * memory); .multicast::cluster's ctaMask (an operand more) copies into this
 * CTA, rank 0 of its one-CTA cluster, when bit 0 is set, and does nothing
 * (no copy, no complete-tx) otherwise.
 */
#include <string.h>

#include "emu_internal.h"
#include "ir/ir_bulk_reduce.h"
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
  /* into shared memory the source is generic: a global address, or the
   * cvta of the shared::cta source of the shared::cta -> shared::cluster
   * form (ptx_instr.c) */
  unsigned from = to_global ? EMU_SP_SHARED : EMU_SP_GENERIC;
  bool multicast = in->sub;
  EMU_EACH(m, l, {
    uint64_t n = S(2)[l], da = (S(0)[l] + (uint64_t)in->imm) & in->amask, sa = S(1)[l];
    if (n % 16 || n >= (1ull << 32)) {
      emu_fault(x, in, (int)l, EMU_ERR_TRAP, "cp.async.bulk of %llu bytes (a multiple of 16)", (unsigned long long)n);
      return;
    }
    if (multicast && !(S(4)[l] & 1)) continue;   /* this CTA (rank 0) not in the ctaMask */
    for (uint64_t k = 0; k < n; k += 16) {
      uint8_t *d = emu_addr(x, in, l, in->space, da + k, 16, true);
      const uint8_t *s = d ? emu_addr(x, in, l, from, sa + k, 16, false) : NULL;
      if (!s) return;
      memmove(d, s, 16);
    }
    if (in->mods.bulk == IR_BULK_COMPLETE_TX && !complete_tx(x, in, (unsigned)l, S(3)[l], n)) return;
  });
}

/* cp.reduce.async.bulk (9.7.9.25.4.2): [dst] op= [src] element by element,
 * shared::cta -> global in a bulk group, or shared::cta -> shared::cluster
 * (this CTA's shared memory: a cluster is one CTA) completing on an
 * mbarrier.  Each element's reduction is an atomic of its own (the ISA
 * gives each one .relaxed.gpu semantics, .cluster for shared::cluster),
 * the same operation atom/red perform (emu_atom_one); done when the
 * instruction executes, like cp.async.bulk. */
static void h_bulk_reduce(emu_exec *x, const emu_inst *in, emu_mask m) {
  x->stores++;
  bool tx = in->mods.bulk == IR_BULK_COMPLETE_TX;
  unsigned eb = in->tbits / 8;
  EMU_EACH(m, l, {
    uint64_t n = S(2)[l], da = (S(0)[l] + (uint64_t)in->imm) & in->amask, sa = S(1)[l];
    if (n % 16 || n >= (1ull << 32)) {
      emu_fault(x, in, (int)l, EMU_ERR_TRAP, "cp.reduce.async.bulk of %llu bytes (a multiple of 16)",
                (unsigned long long)n);
      return;
    }
    for (uint64_t k = 0; k < n; k += 16) {
      uint8_t *d = emu_addr(x, in, l, in->space, da + k, 16, true);
      const uint8_t *s = d ? emu_addr(x, in, l, EMU_SP_SHARED, sa + k, 16, false) : NULL;
      if (!s) return;
      for (unsigned e = 0; e < 16; e += eb) {
        uint64_t v = 0;
        memcpy(&v, s + e, eb);
        emu_atom_one(in, d + e, eb, v);
      }
    }
    if (tx && !complete_tx(x, in, (unsigned)l, S(3)[l], n)) return;
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
  bool load = in->mods.bulk == IR_BULK_COMPLETE_TX, reduce = in->op == ir_op_cp_reduce_async_bulk_tensor;
  emu_inst red = *in;   /* a reduction's element type is the map's */
  bool four = in->mods.tile == IR_TMODE_GATHER4 || in->mods.tile == IR_TMODE_SCATTER4;
  unsigned rank = in->mods.tdim, nc = four ? 5u : rank, t0 = load ? 1u : 0u, smem = load ? 0u : 1u + nc;
  bool multicast = in->sub;
  EMU_EACH(m, l, {
    if (multicast && !(S(3 + nc)[l] & 1)) continue;   /* this CTA (rank 0) not in the ctaMask */
    uint64_t ta = load ? S(1)[l] : (S(0)[l] + (uint64_t)in->imm) & in->amask;
    const uint8_t *tb = emu_addr(x, in, (unsigned)l, EMU_SP_GENERIC, ta, IR_TMAP_BYTES, false);
    if (!tb) return;
    ir_tensormap t;
    if (!ir_tmap_read(tb, &t) || t.rank != rank) {
      emu_fault(x, in, (int)l, EMU_ERR_TRAP, "cp.async.bulk.tensor.%ud: the operand at 0x%llx is not a %u-d "
                "tensor map made by cuTensorMapEncodeTiled", rank, (unsigned long long)ta, rank);
      return;
    }
    if (reduce) {
      red.type = (uint8_t)ir_tmap_dtype_red_type(t.dtype);
      if (!ir_bulk_red_ok((ir_atomop)in->mods.atomop, (ir_type)red.type, false, IR_BULK_RED_TENSOR)) {
        emu_fault(x, in, (int)l, EMU_ERR_TRAP, "cp.reduce.async.bulk.tensor.%s on a tensor map of data type %u "
                  "(not a type this reduction takes)", ir_atomop_name((ir_atomop)in->mods.atomop), t.dtype);
        return;
      }
    }
    int64_t c[IR_TMAP_MAX_RANK] = {0};
    uint32_t n[IR_TMAP_MAX_RANK] = {1, 1, 1, 1, 1};
    int64_t rows[4] = {0};
    for (unsigned d = 0; d < rank; d++) {
      c[d] = (int32_t)(uint32_t)S(t0 + 1 + d)[l];
      n[d] = ir_tmap_count(&t, d);
    }
    if (four) {   /* a column, then four rows of box[0] elements each (the map's box[1] is 1) */
      for (unsigned k = 0; k < 4; k++) rows[k] = (int32_t)(uint32_t)S(t0 + 2 + k)[l];
      n[1] = 4;
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
                int64_t g = four && d == 1 ? rows[i[1]] : c[d] + (int64_t)i[d] * (d ? t.elem_stride[d] : 1);
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
                if (reduce) {
                  uint64_t v = 0;
                  memcpy(&v, sp, eb);
                  emu_atom_one(&red, dp, eb, v);
                } else {
                  memcpy(dp, sp, eb);
                }
              }
            }
    uint64_t bytes = four ? 4ull * n[0] * eb : ir_tmap_box_bytes(&t);
    if (load && !complete_tx(x, in, (unsigned)l, S(2 + nc)[l], bytes)) return;
  });
}

/* tensormap.replace.tile.field{.space}.b1024.type [addr], {ord,} new_val
 * (PTX ISA 9.7.9.26): one field of the 128-byte map at addr (global,
 * shared::cta or generic) in ptxwave's layout (ir/ir_tensormap.h), as
 * cuTensorMapEncodeTiled would have written it: .rank's new_val is the
 * rank minus one, .global_dim's the dimension (stored minus one),
 * .global_stride's ord the index into the encoder's globalStrides (the
 * stride of dimension ord+1, bytes), .elemtype's the ISA's code
 * (ir_tmap_isa_elemtypes: the CUtensorMapDataType and the element size).
 * What this runtime's maps cannot describe (interleave, the 96B swizzle,
 * swizzle atomicities other than 16B, the packed types) traps by name;
 * values the ISA leaves undefined (a box of 0 or past 256, an ordinal past
 * the rank) trap too. */
static void h_tmap_replace(emu_exec *x, const emu_inst *in, emu_mask m) {
  x->stores++;
  unsigned f = in->sub;
  bool has_ord = f == IR_TMF_BOX_DIM || f == IR_TMF_GLOBAL_DIM || f == IR_TMF_GLOBAL_STRIDE ||
                 f == IR_TMF_ELEMENT_STRIDE;
  EMU_EACH(m, l, {
    uint64_t a = (S(0)[l] + (uint64_t)in->imm) & in->amask;
    uint8_t *p = emu_addr(x, in, (unsigned)l, in->space, a, IR_TMAP_BYTES, true);
    if (!p) return;
    ir_tensormap t;
    memcpy(&t, p, sizeof t);
    uint64_t ord = has_ord ? S(1)[l] : 0, v = S(has_ord ? 2 : 1)[l];
    uint32_t v32 = (uint32_t)v;
    const char *bad = NULL;
    if (ord >= (f == IR_TMF_GLOBAL_STRIDE ? IR_TMAP_MAX_RANK - 1u : IR_TMAP_MAX_RANK)) bad = "ordinal";
    else switch (f) {
    case IR_TMF_GLOBAL_ADDRESS: t.addr = v; break;
    case IR_TMF_RANK: if (v32 >= IR_TMAP_MAX_RANK) bad = "rank"; else t.rank = (uint8_t)(v32 + 1); break;
    case IR_TMF_BOX_DIM: if (v32 < 1 || v32 > 256) bad = "box dimension"; else t.box[ord] = (uint16_t)v32; break;
    case IR_TMF_GLOBAL_DIM: if (v32 < 1) bad = "global dimension"; else t.dim_minus1[ord] = v32 - 1; break;
    case IR_TMF_GLOBAL_STRIDE: t.stride[ord] = v; break;
    case IR_TMF_ELEMENT_STRIDE:
      if (v32 < 1 || v32 > 8) bad = "element stride";
      else t.elem_stride[ord] = (uint8_t)v32;
      break;
    case IR_TMF_ELEMTYPE:
      if (v32 > 15 || !ir_tmap_isa_elemtypes[v32].bytes) bad = "element type (the packed sub-byte types)";
      else {
        t.dtype = ir_tmap_isa_elemtypes[v32].dtype;
        t.elem_bytes = ir_tmap_isa_elemtypes[v32].bytes;
      }
      break;
    case IR_TMF_INTERLEAVE_LAYOUT: if (v32) bad = "interleave layout (only none)"; break;
    case IR_TMF_SWIZZLE_MODE: if (v32 > 3) bad = "swizzle mode (the 96B swizzle)"; else t.swizzle = (uint8_t)v32; break;
    case IR_TMF_SWIZZLE_ATOMICITY: if (v32) bad = "swizzle atomicity (only 16B)"; break;
    case IR_TMF_FILL_MODE: if (v32 > 1) bad = "fill mode"; else t.nan_fill = (uint8_t)v32; break;
    default: bad = "field"; break;
    }
    if (bad) {
      emu_fault(x, in, (int)l, EMU_ERR_TRAP, "tensormap.replace of the %s with %llu (ordinal %llu): not a value "
                "this runtime's tensor maps take", bad, (unsigned long long)v, (unsigned long long)ord);
      return;
    }
    memcpy(p, &t, sizeof t);
  });
}

/* tensormap.cp_fenceproxy (9.7.13.4.1): the 128-byte map copied from
 * shared::cta to global memory, then the release fence (one proxy here:
 * a fence of the host's). */
static void h_tmap_cp_fenceproxy(emu_exec *x, const emu_inst *in, emu_mask m) {
  x->stores++;
  EMU_EACH(m, l, {
    if (S(2)[l] != IR_TMAP_BYTES) {
      emu_fault(x, in, (int)l, EMU_ERR_TRAP, "tensormap.cp_fenceproxy of %llu bytes (128)",
                (unsigned long long)S(2)[l]);
      return;
    }
    uint8_t *d = emu_addr(x, in, (unsigned)l, in->space, (S(0)[l] + (uint64_t)in->imm) & in->amask, IR_TMAP_BYTES,
                          true);
    const uint8_t *s = d ? emu_addr(x, in, (unsigned)l, EMU_SP_SHARED, S(1)[l], IR_TMAP_BYTES, false) : NULL;
    if (!s) return;
    memmove(d, s, IR_TMAP_BYTES);
  });
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
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
    if (nval != (tx ? 4u : 3u) + (tx && nval == 5) || (i->mods.space == IR_SPACE_GLOBAL) == tx)
      return "cp.async.bulk other than global -> shared with an mbarrier or shared -> global in a bulk group";
    in->sub = nval == 5;   /* .multicast::cluster: the ctaMask */
    in->fn = h_bulk;
    return NULL;
  }
  case ir_op_cp_async_bulk_tensor: {
    /* .tile, .tile::gather4 (a 2-d load: a column and four rows), .tile::scatter4
     * (the store); im2col stays opaque.  Global -> shared with an mbarrier,
     * or shared::cta -> global */
    unsigned r = i->mods.tdim, nval = i->nsrc - (i->mods.has_cache_hint ? 1u : 0u);
    bool tx = i->mods.bulk == IR_BULK_COMPLETE_TX;
    unsigned mode = i->mods.tile, nc = mode == IR_TMODE_TILE ? r : 5;   /* coordinates */
    bool mc = tx && nval == 4u + nc;   /* .multicast::cluster: the ctaMask */
    bool mode_ok = mode == IR_TMODE_TILE || (r == 2 && mode == (tx ? IR_TMODE_GATHER4 : IR_TMODE_SCATTER4));
    if (!mode_ok || r < 1 || r > 5 || nval != (tx ? 3u + nc : 2u + nc) + mc ||
        (i->mods.space == IR_SPACE_GLOBAL) == tx || (!tx && i->mods.bulk != IR_BULK_GROUP))
      return "cp.async.bulk.tensor other than a .tile (or 2-d .tile::gather4/.tile::scatter4) copy global -> "
             "shared with an mbarrier or shared -> global in a bulk group";
    in->sub = mc;
    in->fn = h_bulk_tensor;
    return NULL;
  }
  case ir_op_cp_reduce_async_bulk: {
    /* shared::cta -> global in a bulk group, or -> shared::cluster with an mbarrier */
    unsigned nval = i->nsrc - (i->mods.has_cache_hint ? 1u : 0u);
    bool tx = i->mods.bulk == IR_BULK_COMPLETE_TX, cluster = i->mods.space == IR_SPACE_SHARED_CLUSTER;
    if (nval != (tx ? 4u : 3u) || (cluster ? !tx : i->mods.space != IR_SPACE_GLOBAL || i->mods.bulk != IR_BULK_GROUP))
      return "cp.reduce.async.bulk other than shared::cta -> global in a bulk group or shared::cta -> "
             "shared::cluster with an mbarrier";
    if (!ir_bulk_red_ok((ir_atomop)i->mods.atomop, (ir_type)i->type, i->mods.noftz_f16,
                        cluster ? IR_BULK_RED_CLUSTER : IR_BULK_RED_GLOBAL))
      return emu_dfmt(d, "cp.reduce.async.bulk.%s%s.%s (not a reduction the PTX ISA has)",
                      ir_atomop_name((ir_atomop)i->mods.atomop), i->mods.noftz_f16 ? ".noftz" : "",
                      ir_type_name((ir_type)i->type));
    in->fn = h_bulk_reduce;
    return NULL;
  }
  case ir_op_cp_reduce_async_bulk_tensor: {
    /* .tile, shared::cta -> global in a bulk group: the store's operands */
    unsigned r = i->mods.tdim, nval = i->nsrc - (i->mods.has_cache_hint ? 1u : 0u);
    if (i->mods.tile != IR_TMODE_TILE || r < 1 || r > 5 || nval != 2u + r || i->mods.space != IR_SPACE_GLOBAL ||
        i->mods.bulk != IR_BULK_GROUP)
      return "cp.reduce.async.bulk.tensor other than a .tile reduction shared::cta -> global in a bulk group";
    in->fn = h_bulk_tensor;
    return NULL;
  }
  case ir_op_cp_async_bulk_commit_group:
  case ir_op_cp_async_bulk_wait_group:
    in->fn = h_nop;
    return NULL;
  case ir_op_tensormap_cp_fenceproxy:
    if (i->mods.space != IR_SPACE_GLOBAL || i->mods.proxy != IR_PROXY_TENSORMAP || i->mods.sem != IR_SEM_RELEASE)
      return "tensormap.cp_fenceproxy other than .global.shared::cta.tensormap::generic.release";
    in->fn = h_tmap_cp_fenceproxy;
    return NULL;
  case ir_op_tensormap_replace: {
    unsigned f = i->mods.query;
    bool has_ord = f == IR_TMF_BOX_DIM || f == IR_TMF_GLOBAL_DIM || f == IR_TMF_GLOBAL_STRIDE ||
                   f == IR_TMF_ELEMENT_STRIDE;
    if (i->mods.tile != IR_TMODE_TILE || f < IR_TMF_GLOBAL_ADDRESS || f > IR_TMF_FILL_MODE || i->nsrc != (has_ord ? 3u : 2u))
      return "tensormap.replace other than a .tile field with its operands";
    in->sub = (uint8_t)f;
    in->fn = h_tmap_replace;
    return NULL;
  }
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
