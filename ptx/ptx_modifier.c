/* ptx/ptx_modifier.c: what the modifier words of a PTX instruction mean.
 *
 * A word is looked up among the spellings of the IR's own tables (ir_names.c
 * for modifiers, ir_types.def for types: ir_mod_words_init), the same ones
 * the .pwir parser reads, and resolved among the fields its op takes
 * (ir_ops.def's mods column): ".lo" is mul's low half on mul and setp's
 * unsigned less-than on setp, ".b" a wmma fragment, a tld4 component or
 * suld's raw mode.  A word that means a field its op does not take is set
 * anyway (ld.ftz): ir_mods_fit_op then keeps the instruction opaque, as it
 * does an unknown word.
 *
 * What PTX spells otherwise than the IR's textual form is below, before the
 * table lookup:
 *   - words the IR spells as one ("fence.proxy.async.shared::cta" is one
 *     proxy kind, "row.col" one layout) or not at all (ldmatrix's .x4 is
 *     the vector width, membar.gl the GPU scope);
 *   - words whose meaning depends on what came before: a copy names the
 *     destination's space first, createpolicy's second priority;
 *   - spellings only the IR's text has (dp4a's a_s32, ld.v1, the .reg space).
 */
#include <string.h>

#include "ptx_instr.h"

/* ---- what PTX spells otherwise ------------------------------------------ */

static bool word_is(const ptx_tok *t, const char *s) {
  size_t n = strlen(s);
  return t->len == n + 1 && !memcmp(t->text + 1, s, n);
}

/* Spellings of the IR's text that PTX does not write: its own name for a
 * thing (dp4a's operand signedness comes from its types, createpolicy's
 * secondary priority is a second L2::evict_*), or values no PTX
 * instruction takes (.v1, the .reg space, L2::no_allocate, .unified). */
static bool ptx_spells(const ir_mod_word *w) {
  switch ((ir_mod_field)w->field) {
  case ir_mod_signed_a: case ir_mod_signed_b: case ir_mod_unified: case ir_mod_l2evict2:
    return false;
  case ir_mod_vec: return w->value != 1;
  case ir_mod_space: return w->value != IR_SPACE_REG;
  case ir_mod_l2evict: return w->value != IR_EVICT_NO_ALLOCATE;
  default: return true;
  }
}

/* fence.proxy.<kind> (9.7.13.4): the words after .proxy name the kind,
 * which the IR spells as one ("proxy.async.global"). */
static bool proxy_word(ir_op op, const ptx_tok *t, ir_mods *m) {
  static const struct { const char *s; uint8_t v; } kinds[] = {
    {"alias", IR_PROXY_ALIAS}, {"async", IR_PROXY_ASYNC}, {"async::global", IR_PROXY_ASYNC_GLOBAL},
    {"async::shared::cta", IR_PROXY_ASYNC_SHARED_CTA},
    {"async::shared::cluster", IR_PROXY_ASYNC_SHARED_CLUSTER},
    {"tensormap::generic", IR_PROXY_TENSORMAP},
  };
  if (word_is(t, "proxy")) {
    if (op != ir_op_fence) return false;
    if (!m->proxy) m->proxy = IR_PROXY_GENERIC;
    return true;
  }
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    if (word_is(t, kinds[k].s)) {
      m->proxy = kinds[k].v;
      return true;
    }
  return false;
}

/* mma's .kind::<k>.block_scale{.scale_vec::NX} (9.7.14.5.14, 9.7.14.3):
 * the IR spells the three words as one value (ir_mmakind).  The kind comes
 * first (as the ISA's syntax and CUTLASS write it) with its default vector
 * size (mxf8f6f4 1X, mxf4 2X; mxf4nvf4 needs one, ptxas 13 refuses it
 * without); .scale_vec then picks among the ones that kind takes. */
static bool mma_kind_word(ir_op op, const ptx_tok *t, ir_mods *m) {
  if (op != ir_op_mma) return false;
  if (word_is(t, "kind::mxf8f6f4")) m->mmakind = IR_MMAKIND_MXF8F6F4_1X;
  else if (word_is(t, "kind::mxf4")) m->mmakind = IR_MMAKIND_MXF4_2X;
  else if (word_is(t, "kind::mxf4nvf4")) m->mmakind = IR_MMAKIND_MXF4NVF4_2X;
  else if (word_is(t, "block_scale")) return m->mmakind > IR_MMAKIND_F8F6F4;
  else if (word_is(t, "scale_vec::1X")) return m->mmakind == IR_MMAKIND_MXF8F6F4_1X;
  else if (word_is(t, "scale_vec::2X"))
    return m->mmakind == IR_MMAKIND_MXF4_2X || m->mmakind == IR_MMAKIND_MXF4NVF4_2X;
  else if (word_is(t, "scale_vec::4X")) {
    if (m->mmakind != IR_MMAKIND_MXF4NVF4_2X) return false;
    m->mmakind = IR_MMAKIND_MXF4NVF4_4X;
  } else return false;
  return true;
}

/* Words the IR has no spelling for; false if t is not one of them (or
 * not valid on op). */
static bool ptx_only_word(ir_op op, const ptx_tok *t, ir_mods *m) {
  /* ldmatrix/stmatrix .num (9.7.14.5.15): the number of matrices */
  if (word_is(t, "x1")) m->vec = 1;
  else if (word_is(t, "x2")) m->vec = 2;
  else if (word_is(t, "x4")) m->vec = 4;
  /* membar.gl is membar at GPU scope (9.7.13.4) */
  else if (word_is(t, "gl")) {
    if (op != ir_op_membar) return false;
    m->scope = IR_SCOPE_GPU;
  }
  /* fence.mbarrier_init.release.cluster (9.7.13.4, sm_90): a lightweight
   * fence that orders only the thread's earlier mbarrier.init against
   * later accesses at cluster scope.  The IR keeps the full release fence
   * of the same scope, which orders a superset (CUTLASS's warp-specialized
   * kernels write it after initializing their pipeline barriers). */
  else if (word_is(t, "mbarrier_init")) {
    if (op != ir_op_fence) return false;
  }
  /* clusterlaunchcontrol.try_cancel.multicast::cluster::all (9.7.12): the
   * response goes to every CTA of the cluster, which is one CTA here
   * (clusters are 1x1x1, docs/runtime.md): the plain form (ir_ops.def) */
  else if (word_is(t, "multicast::cluster::all")) {
    if (op != ir_op_clc_try_cancel) return false;
  }
  /* cp.async.bulk.global.shared::cta.bulk_group.cp_mask (9.7.9.25.4.1,
   * sm_100): the byte mask is a fourth operand, which says it in the IR
   * (ir_ops.def); with .L2::cache_hint the operand order would clash with
   * the IR's (policy last): kept opaque */
  else if (word_is(t, "cp_mask")) {
    if (op != ir_op_cp_async_bulk || m->has_cache_hint) return false;
  }
  /* .multicast::cluster of cp.async.bulk{.tensor} into shared memory
   * (9.7.9.25.4.1, 9.7.9.25.5.1): the ctaMask operand it adds says so in
   * the IR (the operand count; ir_ops.def's mods column has no free bit) */
  else if (word_is(t, "multicast::cluster")) {
    if (op != ir_op_cp_async_bulk && op != ir_op_cp_async_bulk_tensor) return false;
  }
  /* .cta_group::1 (sm_100): the CTA's own shared memory and mbarrier, what
   * a copy without it does (::2, the peer CTA's, has no meaning here) */
  else if (word_is(t, "cta_group::1")) {
    if (op != ir_op_cp_async_bulk_tensor) return false;
  }
  /* tensormap.replace's .b1024 (9.7.9.26): the tensor map's size, the only
   * one there is; the IR's type is new_val's (.b32/.b64) */
  else if (word_is(t, "b1024")) {
    if (op != ir_op_tensormap_replace) return false;
  } else if (mma_kind_word(op, t, m)) {
    return true;
  } else return proxy_word(op, t, m);
  return true;
}

/* A state space word (5.1), where the op gives it another meaning.  True
 * when handled here. */
static bool space_word(ins *I, ir_op op, uint8_t sp, ir_mods *m, bool *ok) {
  /* fence.proxy.async.global / .shared::{cta,cluster} (9.7.13.4): the
   * space names the async proxy's state space */
  if (op == ir_op_fence && m->proxy == IR_PROXY_ASYNC &&
      (sp == IR_SPACE_GLOBAL || sp == IR_SPACE_SHARED_CTA || sp == IR_SPACE_SHARED_CLUSTER)) {
    m->proxy = sp == IR_SPACE_GLOBAL ? IR_PROXY_ASYNC_GLOBAL
               : sp == IR_SPACE_SHARED_CTA ? IR_PROXY_ASYNC_SHARED_CTA : IR_PROXY_ASYNC_SHARED_CLUSTER;
    return true;
  }
  /* cp.async.bulk: global <-> shared, and shared::cta -> shared::cluster
   * (9.7.9.25.4.1), whose source the builder turns into a generic address
   * (I->bulk_src_shared); nothing else */
  if (m->space && op == ir_op_cp_async_bulk && (m->space == IR_SPACE_GLOBAL) == (sp == IR_SPACE_GLOBAL)) {
    if (m->space != IR_SPACE_SHARED_CLUSTER || sp != IR_SPACE_SHARED_CTA || I->bulk_src_shared) *ok = false;
    else I->bulk_src_shared = true;
    return true;
  }
  /* Copies name the destination's space first (cp.async.shared.global):
   * the first is kept; the source's follows from the op. */
  if (m->space && (op == ir_op_cp_async || op == ir_op_cp_async_bulk || op == ir_op_cp_async_bulk_tensor ||
                   op == ir_op_cp_reduce_async_bulk || op == ir_op_cp_reduce_async_bulk_tensor ||
                   op == ir_op_tensormap_cp_fenceproxy))
    return true;
  return false;
}

/* mma's .alayout.blayout (9.7.14.5.14) and wmma.mma's: two words the IR
 * spells as one layout ("row.col"). */
static uint8_t compose_layout(uint8_t have, uint8_t next) {
  bool row = next == IR_LAYOUT_ROW;
  if (have == IR_LAYOUT_ROW) return row ? IR_LAYOUT_ROW_ROW : IR_LAYOUT_ROW_COL;
  if (have == IR_LAYOUT_COL) return row ? IR_LAYOUT_COL_ROW : IR_LAYOUT_COL_COL;
  return next;
}

/* ---- one instruction's words ------------------------------------------- */

/* Gives each modifier its meaning for this op.  False if one is unknown
 * (the instruction is then kept opaque). */
bool ptx_decode_mods(ptx_parser *p, ins *I) {
  ir_mods *m = &I->m;
  ir_op op = I->op;
  for (uint32_t i = 0; i < I->nmods; i++) {
    const ir_mod_word *w = ir_mod_word_for(I->mods[i], op, true);
    if (w && w->field < 0) {
      ir_type t = (ir_type)w->value;
      if (I->ntypes == 0) I->type = t;
      else if (I->ntypes == 1) I->type2 = t;
      else if (I->ntypes == 2) I->type3 = t;
      else if (I->ntypes == 3) I->type4 = t;
      /* a block-scaled mma's fifth type, the scale's: its kind implies it
       * (ir_mmakind): 4X takes ue4m3, the others ue8m0 */
      else if (I->ntypes == 4 && op == ir_op_mma && m->mmakind > IR_MMAKIND_F8F6F4 &&
               t == (m->mmakind == IR_MMAKIND_MXF4NVF4_4X ? ir_type_ue4m3 : ir_type_ue8m0))
        ;
      else return false;
      I->ntypes++;
      continue;
    }
    if (!w) {
      if (!ptx_only_word(op, &I->mtok[I->mfirst + i], m)) return false;
      continue;
    }
    if (!ptx_spells(w)) return false;
    /* a value-0 spelling (shf's .r, .wrap) of a field the op does not
     * take would set nothing for ir_mods_fit_op to refuse */
    if (w->value == 0 && !ir_op_uses_mod(op, (ir_mod_field)w->field)) return false;
    bool ok = true;
    switch ((ir_mod_field)w->field) {
    case ir_mod_space:
      if (space_word(I, op, w->value, m, &ok)) {
        if (!ok) return false;
        continue;
      }
      break;
    case ir_mod_layout:
      m->layout = compose_layout(m->layout, w->value);
      continue;
    case ir_mod_l2evict:
      /* createpolicy.L2::primary{.L2::secondary}: the second one is the
       * secondary priority (9.7.9.16) */
      if (op == ir_op_createpolicy && m->l2evict &&
          (w->value == IR_EVICT_FIRST || w->value == IR_EVICT_UNCHANGED)) {
        m->l2evict2 = w->value;
        continue;
      }
      break;
    case ir_mod_atomop:
      /* mma's and wmma.mma's .b1 .xor.popc / .and.popc (9.7.14.5.14,
       * 9.7.14.4.5): the .popc after the operation (mods.boolop) is the
       * only accumulation there is */
      if ((op == ir_op_mma || op == ir_op_wmma_mma) && w->value == IR_ATOM_POPC && m->boolop) continue;
      break;
    case ir_mod_barmode:
      /* bar.red is its own op: the word names it (and is no mode) */
      if (w->value == IR_BAR_RED) {
        if (op != ir_op_bar_red) return false;
        continue;
      }
      break;
    default:
      break;
    }
    ir_mods_set(m, (ir_mod_field)w->field, w->value);
  }
  /* cp{.reduce}.async.bulk.tensor without a mode word is a .tile copy
   * (9.7.9.25.5.1: .load_mode and the reduction's mode are optional, .tile
   * the default); CUTLASS's SM90/SM100 TMA copies spell it that way */
  if ((op == ir_op_cp_async_bulk_tensor || op == ir_op_cp_reduce_async_bulk_tensor) && m->tile == IR_TMODE_NONE)
    m->tile = IR_TMODE_TILE;
  if (op == ir_op_dp4a || op == ir_op_dp2a) {
    /* dp4a.atype.btype: the result is .s32 if either is signed (9.7.1.23) */
    if (I->ntypes != 2) return false;
    m->signed_a = ir_type_kind_of(I->type) == IR_TK_SINT;
    m->signed_b = ir_type_kind_of(I->type2) == IR_TK_SINT;
    I->type = (m->signed_a || m->signed_b) ? ir_type_s32 : ir_type_u32;
    I->type2 = ir_type_none;
  }
  (void)p;
  return true;
}
