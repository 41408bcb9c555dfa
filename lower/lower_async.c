/* lower/lower_async.c: cp.async (PTX ISA 9.7.9.25 "Data Movement and
 * Conversion Instructions: cp.async") as a synchronous copy
 * (docs/lowering.md, "cp.async").
 *
 *   cp.async.ca/.cg.shared{::cta}.global [dst], [src], cp-size{, src-size | , ignore-src}{, cache-policy}
 *   cp.async.commit_group   cp.async.wait_group N   cp.async.wait_all
 *
 * cp.async starts a copy of cp-size (4, 8 or 16) bytes from global to
 * shared memory, the bytes past src-size (or all of them under a true
 * ignore-src) zero.  The ISA makes the copy's completion observable only
 * through cp.async.wait_group / wait_all (or an mbarrier tracking it), and
 * leaves unspecified when before that it happens; completing it as it is
 * issued is one allowed execution.  So each cp.async becomes ld.global +
 * st.shared at once, and commit_group / wait_group / wait_all have nothing
 * left to wait for (removed).  This gives up the overlap of the copy with
 * the instructions before the wait (a performance note, not a correctness
 * one).  The same semantics as the emulator's (emu_mem.c, h_cp_async), which
 * runs cp.async itself: the lowered-vs-unlowered differential
 * (lower_diff_emu_mem) compares the two.
 *
 * Without src-size / ignore-src: one ld.global of cp-size bytes (b32 x1, x2
 * or x4; the ISA requires both addresses aligned to cp-size) and one
 * st.shared.  With ignore-src p: that load guarded by !p, zeros kept
 * otherwise.  With a src-size s: the whole copy when min(s, cp-size) is
 * cp-size, zeros when it is 0, and in between the bytes below it in a block
 * of their own (src_size_copy; the bytes past s may lie outside any
 * allocation, so they are never read).  .ca/.cg and the
 * cache policy are cache hints with no meaning for the result (dropped).
 * The offset of [dst+off] is the instruction's (the parser folds a [src+k]
 * into an add).
 *
 * cp.async.bulk (9.7.9.25.4.1) the same way: global -> shared::cta/cluster
 * completing on an mbarrier, or shared::cta -> global in a bulk
 * async-group, done by the issuing thread as a loop of 16-byte ld.v4 +
 * st.v4 (the ISA requires 16-byte alignment and a multiple of 16 bytes),
 * then mbarrier.complete_tx(size) on the mbarrier, which lower_mbarrier
 * (next) expands; cp.async.bulk.commit_group / wait_group{.read} have
 * nothing left to wait for (removed).  The tensor copies, the reductions
 * (cp.reduce.async.bulk{.tensor}) and tensormap.replace below;
 * cp.async.mbarrier.arrive is lower_mbarrier's.
 */
#include "ir/ir_bulk_reduce.h"
#include "ir/ir_tensormap.h"
#include "lower_internal.h"

static bool want(const ir_instr *i, void *data) {
  (void)data;
  return i->op == ir_op_cp_async || i->op == ir_op_cp_async_commit_group || i->op == ir_op_cp_async_wait_group ||
         i->op == ir_op_cp_async_bulk || i->op == ir_op_cp_async_bulk_commit_group ||
         i->op == ir_op_cp_async_bulk_wait_group || i->op == ir_op_cp_async_bulk_tensor ||
         i->op == ir_op_cp_reduce_async_bulk || i->op == ir_op_cp_reduce_async_bulk_tensor ||
         i->op == ir_op_tensormap_replace || i->op == ir_op_tensormap_cp_fenceproxy;
}

/* Eliminates the cp.async family (the tensor, reduction and mbarrier forms
 * are not lowered here: codegen reports them); builds blocks. */
const lower_contract lower_async_contract = {
    .pass = "lower_async",
    .ops = (const ir_op[]){ir_op_cp_async, ir_op_cp_async_commit_group, ir_op_cp_async_wait_group, ir_op_cp_async_bulk,
                           ir_op_cp_async_bulk_commit_group, ir_op_cp_async_bulk_wait_group,
                           ir_op_cp_async_bulk_tensor, ir_op_cp_reduce_async_bulk,
                           ir_op_cp_reduce_async_bulk_tensor, ir_op_tensormap_replace,
                           ir_op_tensormap_cp_fenceproxy, ir_op_count},
    .preserves = 0,
};

/* A counted loop at the cursor: for (k = 0; k < n; k += step) BODY, the
 * instruction at the cursor and what follows it moved to the exit block.
 * loop_open leaves the body's builder at the top of the body; the body may
 * add blocks, and loop_close ends the block `last` (the body's, or one the
 * body added) with the step and the branch back, and puts b before the
 * exit's first instruction. */
typedef struct counted_loop {
  ir_block *head, *exit;
  ir_instr *phi;
  ir_value *k;
  ir_builder body;
} counted_loop;

static void loop_open(ir_builder *b, ir_value *n, counted_loop *lp) {
  ir_func *f = b->block->func;
  ir_block *pre = b->block;
  lp->exit = ir_block_split_before(b->before, NULL);
  lp->head = ir_block_create_after(f, pre, NULL);
  ir_block *body = ir_block_create_after(f, lp->head, NULL);
  ir_builder p = ir_builder_at_end(pre);
  p.loc = b->loc;
  ir_br(&p, lp->head);
  ir_builder h = ir_builder_at_end(lp->head);
  h.loc = b->loc;
  lp->phi = ir_phi(&h, lp->head, ir_type_u32, 1);
  ir_phi_set_src(lp->phi, 0, lower_imm32(&h, 0));
  lp->k = lp->phi->dst[0];
  ir_cbr(&h, lower_setp(&h, IR_CMP_LT, ir_type_u32, lp->k, n), body, lp->exit);
  lp->body = ir_builder_at_end(body);
  lp->body.loc = b->loc;
}

static void loop_close(ir_builder *b, counted_loop *lp, ir_block *last, uint32_t step) {
  ir_builder y = ir_builder_at_end(last);
  y.loc = b->loc;
  ir_value *k2 = ir_alu2(&y, ir_op_add, ir_type_u32, lp->k, lower_imm32(&y, step));
  ir_br(&y, lp->head);
  ir_phi_add_src(lp->phi, k2);
  ir_loc loc = b->loc;
  *b = ir_builder_before(lp->exit->first);
  b->loc = loc;
}

/* .multicast::cluster's ctaMask (9.7.9.25.4.1): the copy lands in each CTA
 * of the cluster whose bit is set, with complete-tx on that CTA's
 * mbarrier.  A cluster is one CTA here (rank 0), so the bytes this CTA
 * copies and completes are n when bit 0 is set, 0 (nothing) otherwise. */
static ir_value *multicast_bytes(ir_builder *b, ir_value *mask, ir_value *n) {
  if (ir_type_bits((ir_type)mask->type) == 64) mask = lower_lo32(b, mask);
  else if (ir_type_bits((ir_type)mask->type) < 32) mask = ir_convert(b, ir_type_u32, (ir_type)mask->type, mask);
  ir_value *bit0 = ir_alu2(b, ir_op_and, ir_type_b32, mask, lower_imm32(b, 1));
  ir_value *in = lower_setp(b, IR_CMP_NE, ir_type_u32, bit0, lower_imm32(b, 0));
  return lower_selp(b, ir_type_u32, n, lower_imm32(b, 0), in);
}

/* cp.async.bulk [dst], [src], size{, [mbar]}:
 *   pre:  br head
 *   head: k = phi(0, k + 16); cbr k < size, body, exit
 *   body: v = ld.v4.b32 [src + k]; st.v4.b32 [dst + k], v; br head
 *   exit: mbarrier.complete_tx [mbar], size       (the mbarrier form) */
static bool bulk_copy(ir_builder *b, ir_instr *i, const lower_async_options *o) {
  unsigned nval = i->nsrc - (i->mods.has_cache_hint ? 1u : 0u);
  bool tx = i->mods.bulk == IR_BULK_COMPLETE_TX, to_global = i->mods.space == IR_SPACE_GLOBAL;
  bool mc = tx && nval == 5;   /* .multicast::cluster: the ctaMask */
  if (nval != (tx ? 4u : 3u) + mc || to_global == tx) {
    lower_error(o->diag, i, "cp.async.bulk other than global -> shared with an mbarrier or shared -> global "
                "in a bulk group");
    return false;
  }
  ir_mods dm = {.space = to_global ? IR_SPACE_GLOBAL : IR_SPACE_SHARED, .vec = 4};
  ir_mods sm = {.space = to_global ? IR_SPACE_SHARED : IR_SPACE_GLOBAL, .vec = 4};
  ir_value *dst = i->src[0], *src = i->src[1];
  /* the shared::cta -> shared::cluster form: the front end's cvta of the
   * shared source (ptx_instr.c), read as shared again */
  if (!to_global && src->kind == IR_VAL_INSTR && src->def->op == ir_op_cvta && !src->def->mods.cvta_to &&
      (src->def->mods.space == IR_SPACE_SHARED || src->def->mods.space == IR_SPACE_SHARED_CTA) && !src->def->guard) {
    src = src->def->src[0];
    sm.space = IR_SPACE_SHARED;
  }
  ir_type dt = (ir_type)dst->type, st = (ir_type)src->type;
  if (ir_type_bits(dt) != 32) dt = ir_type_u64;
  else dt = ir_type_u32;
  if (ir_type_bits(st) != 32) st = ir_type_u64;
  else st = ir_type_u32;
  ir_value *n = i->src[2];
  if (ir_type_bits((ir_type)n->type) == 64) n = lower_lo32(b, n);
  if (mc) n = multicast_bytes(b, i->src[4], n);
  counted_loop lp;
  loop_open(b, n, &lp);
  ir_builder *y = &lp.body;
  ir_value *kd = dt == ir_type_u32 ? lp.k : lower_zext64(y, lp.k);
  ir_value *ks = st == ir_type_u32 ? lp.k : lower_zext64(y, lp.k);
  ir_value *sa = ir_alu2(y, ir_op_add, st, src, ks);
  ir_value *da = ir_alu2(y, ir_op_add, dt, dst, kd);
  ir_instr *ld = ir_build_mem(y, ir_op_ld, ir_type_b32, sa, 0, 0, NULL, 4, &sm);
  ir_build_mem(y, ir_op_st, ir_type_b32, da, i->offset, 4, ld->dst, 0, &dm);
  loop_close(b, &lp, y->block, 16);
  if (tx)
    ir_build_mem(b, ir_op_mbarrier_complete_tx, ir_type_b64, i->src[3], 0, 1, (ir_value *[]){n}, 0,
                 IR_MODS(.space = IR_SPACE_SHARED));
  return true;
}

/* cp.reduce.async.bulk [dst], [src], size{, [mbar]} (9.7.9.25.4.2): one
 * relaxed atomic per element, the ISA's semantics (each element's
 * reduction is .relaxed.gpu, .cluster for the shared::cluster form; the
 * copy as a whole is not atomic), in the issuing thread:
 *   head: k = phi(0, k + esize); cbr k < size, body, exit
 *   body: v = ld.shared.T [src + k]; red.relaxed.gpu.global.op.T [dst + k], v
 *   exit: mbarrier.complete_tx [mbar], size    (the shared::cluster form)
 * A cluster is one CTA (docs/lowering.md "Scope .cluster"), so the
 * shared::cluster destination is this CTA's shared memory. */
static bool bulk_reduce(ir_builder *b, ir_instr *i, const lower_async_options *o) {
  unsigned nval = i->nsrc - (i->mods.has_cache_hint ? 1u : 0u);
  bool tx = i->mods.bulk == IR_BULK_COMPLETE_TX, cluster = i->mods.space == IR_SPACE_SHARED_CLUSTER;
  ir_type t = (ir_type)i->type;
  if (nval != (tx ? 4u : 3u) || (cluster ? !tx : i->mods.space != IR_SPACE_GLOBAL || i->mods.bulk != IR_BULK_GROUP)) {
    lower_error(o->diag, i, "cp.reduce.async.bulk other than shared::cta -> global in a bulk group or shared::cta "
                "-> shared::cluster with an mbarrier");
    return false;
  }
  if (!ir_bulk_red_ok((ir_atomop)i->mods.atomop, t, i->mods.noftz_f16,
                      cluster ? IR_BULK_RED_CLUSTER : IR_BULK_RED_GLOBAL)) {
    lower_error(o->diag, i, "cp.reduce.async.bulk.%s%s.%s is not a reduction the PTX ISA has",
                ir_atomop_name((ir_atomop)i->mods.atomop), i->mods.noftz_f16 ? ".noftz" : "", ir_type_name(t));
    return false;
  }
  ir_value *dst = i->src[0], *src = i->src[1], *n = i->src[2];
  if (ir_type_bits((ir_type)n->type) == 64) n = lower_lo32(b, n);
  ir_type dt = ir_type_bits((ir_type)dst->type) == 32 ? ir_type_u32 : ir_type_u64;
  ir_type st = ir_type_bits((ir_type)src->type) == 32 ? ir_type_u32 : ir_type_u64;
  ir_mods rm = {.space = cluster ? IR_SPACE_SHARED : IR_SPACE_GLOBAL, .sem = IR_SEM_RELAXED,
                .scope = cluster ? IR_SCOPE_CLUSTER : IR_SCOPE_GPU, .atomop = i->mods.atomop,
                .noftz_f16 = i->mods.noftz_f16};
  counted_loop lp;
  loop_open(b, n, &lp);
  ir_builder *y = &lp.body;
  ir_value *kd = dt == ir_type_u32 ? lp.k : lower_zext64(y, lp.k);
  ir_value *ks = st == ir_type_u32 ? lp.k : lower_zext64(y, lp.k);
  ir_value *sa = ir_alu2(y, ir_op_add, st, src, ks);
  ir_value *da = ir_alu2(y, ir_op_add, dt, dst, kd);
  ir_instr *ld = ir_build_mem(y, ir_op_ld, t, sa, 0, 0, NULL, 1, IR_MODS(.space = IR_SPACE_SHARED));
  ir_build_mem(y, ir_op_red, t, da, i->offset, 1, ld->dst, 0, &rm);
  loop_close(b, &lp, y->block, ir_type_bits(t) / 8);
  if (tx)
    ir_build_mem(b, ir_op_mbarrier_complete_tx, ir_type_b64, i->src[3], 0, 1, (ir_value *[]){n}, 0,
                 IR_MODS(.space = IR_SPACE_SHARED));
  return true;
}

/* A field of the tensor map at tm (generic address) + off; offsets from
 * ir_tensormap's own layout, the one the runtime writes and the emulator reads. */
#define TM_OFF(field) ((unsigned)__builtin_offsetof(ir_tensormap, field))
static ir_value *tmap_field(ir_builder *b, ir_value *tm, unsigned off, ir_type t) {
  ir_instr *ld = ir_build_mem(b, ir_op_ld, t, tm, off, 0, NULL, 1, IR_MODS(.space = IR_SPACE_GENERIC));
  ir_value *v = ld->dst[0];
  return ir_type_bits(t) < 32 ? ir_convert(b, ir_type_u32, t, v) : v;
}

/* cp.reduce.async.bulk.tensor's element (9.7.9.25.5.2), inside bulk_tensor's
 * byte loop at the byte `byte` of an element whose global address is ga
 * and shared address sa: at its first byte, in bounds, one relaxed atomic
 * of the map's element type (the instruction has none: the tensor map's
 * CUtensorMapDataType decides, read at run time), as the emulator does:
 *     cbr in && byte == 0, sel, last
 *   sel:  cbr dtype == D0, red0, sel1 ...     (each data type the op takes)
 *   redK: v = ld.shared.T [sa]; red.relaxed.gpu.global.op.T [ga], v; br last
 *   selN: trap                                (a type the reduction lacks)
 * *last becomes the block the loop's step goes in. */
static void tensor_reduce(ir_builder *y, ir_instr *i, ir_value *dtype, ir_value *in, ir_value *byte, ir_value *ga,
                          ir_value *sa, ir_block **last) {
  ir_func *f = y->block->func;
  ir_block *sel = ir_block_create_after(f, y->block, NULL);
  ir_block *step = ir_block_create_after(f, sel, NULL);
  ir_value *first = lower_setp(y, IR_CMP_EQ, ir_type_u32, byte, lower_imm32(y, 0));
  ir_cbr(y, ir_alu2(y, ir_op_and, ir_type_pred, in, first), sel, step);
  ir_mods rm = {.space = IR_SPACE_GLOBAL, .sem = IR_SEM_RELAXED, .scope = IR_SCOPE_GPU, .atomop = i->mods.atomop};
  ir_block *at = sel;
  for (unsigned code = 0; code < 16; code++) {
    ir_type t = ir_tmap_dtype_red_type(code);
    if (t == ir_type_none || !ir_bulk_red_ok((ir_atomop)i->mods.atomop, t, false, IR_BULK_RED_TENSOR)) continue;
    ir_block *red = ir_block_create_after(f, at, NULL), *next = ir_block_create_after(f, red, NULL);
    ir_builder s = ir_builder_at_end(at);
    s.loc = y->loc;
    ir_cbr(&s, lower_setp(&s, IR_CMP_EQ, ir_type_u32, dtype, lower_imm32(&s, code)), red, next);
    ir_builder w = ir_builder_at_end(red);
    w.loc = y->loc;
    ir_instr *ld = ir_build_mem(&w, ir_op_ld, t, sa, 0, 0, NULL, 1, IR_MODS(.space = IR_SPACE_SHARED));
    ir_build_mem(&w, ir_op_red, t, ga, 0, 1, ld->dst, 0, &rm);
    ir_br(&w, step);
    at = next;
  }
  ir_builder e = ir_builder_at_end(at);
  e.loc = y->loc;
  ir_build(&e, ir_op_trap, ir_type_none, 0, NULL, 0, NULL, NULL);
  *last = step;
}

/* cp.async.bulk.tensor.Nd .tile (PTX ISA 9.7.9.25.5.1), both ways, as the
 * emulator runs it (ir/ir_tensormap.h: the map's layout and the tile
 * mode's rules), one byte per iteration of one loop over the box:
 *
 *     j = 0 .. total * esize:   k = j / esize (the element), i[d] from k
 *       g[d] = c[d] + i[d] * estride[d]     in = every 0 <= g[d] <= dim-1
 *       global  = addr + g[0] * esize + sum g[d] * stride[d-1] + j % esize
 *       shared  = swizzle(smem + j)          (16-byte chunks: bits 4.. ^= 7..)
 *       load:   shared = in ? global : fill   (the map's base when out of bounds)
 *       store:  if in: global = shared
 *     load: complete_tx(mbar, total * esize)
 *
 * Correct, not fast: one lane copies byte by byte (the ISA's copy is one
 * thread's too); AMD has no tensor engine, and the kernels that use TMA
 * (Hopper GEMMs) also use wgmma, which nothing lowers yet. */
static bool bulk_tensor(ir_builder *b, ir_instr *i, const lower_async_options *o) {
  unsigned r = i->mods.tdim, nval = i->nsrc - (i->mods.has_cache_hint ? 1u : 0u);
  bool load = i->mods.bulk == IR_BULK_COMPLETE_TX, reduce = i->op == ir_op_cp_reduce_async_bulk_tensor;
  /* .tile::gather4 / .tile::scatter4 (2-d): a column and four rows, each
   * row box[0] elements (the map's box[1] is 1), in place of the tile's
   * second dimension */
  bool four = !reduce && (i->mods.tile == IR_TMODE_GATHER4 || i->mods.tile == IR_TMODE_SCATTER4);
  unsigned nc = four ? 5u : r;   /* the coordinates */
  bool mc = load && nval == 4u + nc;   /* .multicast::cluster: the ctaMask */
  bool mode_ok = i->mods.tile == IR_TMODE_TILE ||
                 (four && r == 2 && i->mods.tile == (load ? IR_TMODE_GATHER4 : IR_TMODE_SCATTER4));
  if (!mode_ok || r < 1 || r > IR_TMAP_MAX_RANK || nval != (load ? 3u + nc : 2u + nc) + mc ||
      (i->mods.space == IR_SPACE_GLOBAL) == load || (!load && i->mods.bulk != IR_BULK_GROUP)) {
    lower_error(o->diag, i, reduce ? "cp.reduce.async.bulk.tensor other than a .tile reduction shared::cta -> "
                "global in a bulk group" : "cp.async.bulk.tensor other than a .tile (or 2-d .tile::gather4/"
                ".tile::scatter4) copy global -> shared with an mbarrier or shared -> global in a bulk group");
    return false;
  }
  /* the operands (the address operand, src[0], carries the offset) */
  ir_value *tm = load ? i->src[1] : i->src[0], *smem = load ? i->src[0] : i->src[1 + nc];
  int64_t tm_off = load ? 0 : i->offset, smem_off = load ? i->offset : 0;
  if (ir_type_bits((ir_type)tm->type) == 32) tm = lower_zext64(b, tm);
  if (ir_type_bits((ir_type)smem->type) == 64) smem = lower_lo32(b, smem);
  if (smem_off) smem = ir_alu2(b, ir_op_add, ir_type_u32, smem, lower_imm32(b, (uint32_t)smem_off));
  if (tm_off) tm = ir_alu2(b, ir_op_add, ir_type_u64, tm, ir_imm(b, ir_type_s64, (uint64_t)tm_off));
  /* the map's fields, read once */
  ir_value *addr = tmap_field(b, tm, TM_OFF(addr), ir_type_u64);
  ir_value *eb = tmap_field(b, tm, TM_OFF(elem_bytes), ir_type_u8), *sw = tmap_field(b, tm, TM_OFF(swizzle), ir_type_u8);
  ir_value *nan = tmap_field(b, tm, TM_OFF(nan_fill), ir_type_u8);
  ir_value *dtype = reduce ? tmap_field(b, tm, TM_OFF(dtype), ir_type_u8) : NULL;
  ir_value *dimm1[IR_TMAP_MAX_RANK], *es[IR_TMAP_MAX_RANK], *n[IR_TMAP_MAX_RANK], *stride[IR_TMAP_MAX_RANK];
  ir_value *total = eb;
  for (unsigned d = 0; d < r; d++) {
    dimm1[d] = tmap_field(b, tm, TM_OFF(dim_minus1[d]), ir_type_u32);
    es[d] = d ? tmap_field(b, tm, TM_OFF(elem_stride[d]), ir_type_u8) : lower_imm32(b, 1);
    ir_value *box = tmap_field(b, tm, TM_OFF(box[d]), ir_type_u16);
    /* n = ceil(box / es) */
    ir_value *up = ir_alu2(b, ir_op_add, ir_type_u32, box, ir_alu2(b, ir_op_sub, ir_type_u32, es[d], lower_imm32(b, 1)));
    n[d] = d ? ir_alu2(b, ir_op_div, ir_type_u32, up, es[d]) : box;
    if (four && d == 1) n[d] = lower_imm32(b, 4);
    stride[d] = d ? tmap_field(b, tm, TM_OFF(stride[d - 1]), ir_type_u64) : lower_zext64(b, eb);
    total = ir_alu2(b, ir_op_mul, ir_type_u32, total, n[d]);
  }
  ir_value *swmask = ir_alu2(b, ir_op_sub, ir_type_u32, ir_alu2(b, ir_op_shl, ir_type_b32, lower_imm32(b, 1), sw),
                             lower_imm32(b, 1));
  ir_value *fill = ir_alu2(b, ir_op_and, ir_type_b32, ir_alu2(b, ir_op_sub, ir_type_u32, lower_imm32(b, 0), nan),
                           lower_imm32(b, 0xff));
  if (mc) total = multicast_bytes(b, i->src[3 + nc], total);
  /* the loop: head (j < total), body, and for a store the guarded write */
  counted_loop lp;
  loop_open(b, total, &lp);
  ir_builder y = lp.body;
  ir_value *j = lp.k;
  ir_value *k = ir_alu2(&y, ir_op_div, ir_type_u32, j, eb), *byte = ir_alu2(&y, ir_op_rem, ir_type_u32, j, eb);
  ir_value *in = NULL, *ga = ir_alu2(&y, ir_op_add, ir_type_u64, addr, lower_zext64(&y, byte));
  for (unsigned d = 0; d < r; d++) {
    ir_value *id = d + 1 < r ? ir_alu2(&y, ir_op_rem, ir_type_u32, k, n[d]) : k;
    if (d + 1 < r) k = ir_alu2(&y, ir_op_div, ir_type_u32, k, n[d]);
    /* g = c + i * es in 64 bits: c is signed, the product at most 255 * 8 */
    ir_value *c = ir_convert(&y, ir_type_s64, ir_type_s32, i->src[(load ? 2 : 1) + d]);
    ir_value *g = ir_alu2(&y, ir_op_add, ir_type_s64, c,
                          lower_zext64(&y, ir_alu2(&y, ir_op_mul, ir_type_u32, id, es[d])));
    if (four && d == 1) {   /* row id of the four: the coordinate operand of that row */
      ir_value *row = i->src[(load ? 2 : 1) + 4];
      for (unsigned k = 3; k-- > 0;)
        row = lower_selp(&y, ir_type_b32, i->src[(load ? 2 : 1) + 1 + k], row,
                         lower_setp(&y, IR_CMP_EQ, ir_type_u32, id, lower_imm32(&y, k)));
      g = ir_convert(&y, ir_type_s64, ir_type_s32, row);
    }
    /* 0 <= g <= dim-1 as one unsigned compare (a negative g is huge) */
    ir_value *ok = lower_setp(&y, IR_CMP_LE, ir_type_u64, g, lower_zext64(&y, dimm1[d]));
    in = in ? ir_alu2(&y, ir_op_and, ir_type_pred, in, ok) : ok;
    ga = ir_alu2(&y, ir_op_add, ir_type_u64, ga, ir_alu2(&y, ir_op_mul, ir_type_u64, g, stride[d]));
  }
  ir_value *sa = ir_alu2(&y, ir_op_add, ir_type_u32, smem, j);
  ir_value *rot = ir_alu2(&y, ir_op_shl, ir_type_b32,
                          ir_alu2(&y, ir_op_and, ir_type_b32, ir_alu2(&y, ir_op_shr, ir_type_u32, sa, lower_imm32(&y, 7)),
                                  swmask),
                          lower_imm32(&y, 4));
  sa = ir_alu2(&y, ir_op_xor, ir_type_b32, sa, rot);
  ir_mods gm = {.space = IR_SPACE_GLOBAL}, shm = {.space = IR_SPACE_SHARED};
  ir_block *last = y.block;
  if (load) {
    /* out of bounds reads the map's base (valid: dimension sizes are >= 1) */
    ir_value *at = lower_selp(&y, ir_type_u64, ga, addr, in);
    ir_value *v = ir_build_mem(&y, ir_op_ld, ir_type_u8, at, 0, 0, NULL, 1, &gm)->dst[0];
    v = ir_convert(&y, ir_type_u32, ir_type_u8, v);
    v = lower_selp(&y, ir_type_u32, v, fill, in);
    ir_build_mem(&y, ir_op_st, ir_type_u8, sa, 0, 1, (ir_value *[]){ir_convert(&y, ir_type_u8, ir_type_u32, v)}, 0,
                 &shm);
  } else if (reduce) {
    tensor_reduce(&y, i, dtype, in, byte, ga, sa, &last);
  } else {
    /* the store's own block, skipped out of bounds; the step in a block of its own */
    ir_func *f = y.block->func;
    ir_block *put = ir_block_create_after(f, y.block, NULL);
    last = ir_block_create_after(f, put, NULL);
    ir_value *v = ir_build_mem(&y, ir_op_ld, ir_type_u8, sa, 0, 0, NULL, 1, &shm)->dst[0];
    ir_cbr(&y, in, put, last);
    ir_builder w = ir_builder_at_end(put);
    w.loc = b->loc;
    ir_build_mem(&w, ir_op_st, ir_type_u8, ga, 0, 1, (ir_value *[]){v}, 0, &gm);
    ir_br(&w, last);
  }
  loop_close(b, &lp, last, 1);
  if (load)
    ir_build_mem(b, ir_op_mbarrier_complete_tx, ir_type_b64, i->src[2 + nc], 0, 1, (ir_value *[]){total}, 0,
                 IR_MODS(.space = IR_SPACE_SHARED));
  return true;
}

/* tensormap.replace.tile.field{.space}.b1024.type [addr], {ord,} new_val
 * (PTX ISA 9.7.9.26) as the store of that field in ptxwave's layout
 * (ir/ir_tensormap.h), the emulator's rules (emu_mbarrier.c,
 * h_tmap_replace): .rank stores new_val + 1, .global_dim new_val - 1,
 * .global_stride's ord indexes the encoder's globalStrides, .elemtype's
 * immediate becomes the CUtensorMapDataType and the element size
 * (ir_tmap_isa_elemtypes); .interleave_layout and .swizzle_atomicity store
 * nothing for the one value this layout has (0: none, 16B) and other
 * immediates are reported, as the 96B swizzle and the packed types are.
 * The ordinal and the .field3 values are immediates (the ISA's syntax).
 * Values the ISA leaves undefined (a box past 256) are stored as given. */
static bool tmap_replace(ir_builder *b, ir_instr *i, const lower_async_options *o) {
  unsigned f = i->mods.query;
  bool has_ord = f == IR_TMF_BOX_DIM || f == IR_TMF_GLOBAL_DIM || f == IR_TMF_GLOBAL_STRIDE ||
                 f == IR_TMF_ELEMENT_STRIDE;
  bool field3 = f >= IR_TMF_ELEMTYPE && f <= IR_TMF_FILL_MODE;
  uint64_t ord = 0, k = 0;
  if (i->mods.tile != IR_TMODE_TILE || f < IR_TMF_GLOBAL_ADDRESS || f > IR_TMF_FILL_MODE || i->nsrc != (has_ord ? 3u : 2u) ||
      (has_ord && (!lower_const(i->src[1], &ord) || ord >= (f == IR_TMF_GLOBAL_STRIDE ? 4u : 5u))) ||
      (field3 && !lower_const(i->src[i->nsrc - 1], &k))) {
    lower_error(o->diag, i, "tensormap.replace other than a .tile field with an immediate ordinal below the rank "
                "(and an immediate value for .elemtype, .interleave_layout, .swizzle_mode, .swizzle_atomicity, "
                ".fill_mode)");
    return false;
  }
  const char *bad = NULL;
  if (f == IR_TMF_ELEMTYPE && (k > 15 || !ir_tmap_isa_elemtypes[k].bytes)) bad = "packed sub-byte element types";
  if (f == IR_TMF_INTERLEAVE_LAYOUT && k) bad = "interleaved layouts";
  if (f == IR_TMF_SWIZZLE_MODE && k > 3) bad = "96B swizzle";
  if (f == IR_TMF_SWIZZLE_ATOMICITY && k) bad = "swizzle atomicities other than 16B";
  if (f == IR_TMF_FILL_MODE && k > 1) bad = "fill modes other than zero and NaN";
  if (bad) {
    lower_error(o->diag, i, "tensormap.replace with %llu: ptxwave's tensor maps have no %s", (unsigned long long)k,
                bad);
    return false;
  }
  ir_space sp = i->mods.space == IR_SPACE_GLOBAL ? IR_SPACE_GLOBAL
                : i->mods.space ? IR_SPACE_SHARED : IR_SPACE_GENERIC;
  ir_mods sm = {.space = (uint8_t)sp};
  ir_value *base = i->src[0], *v = i->src[i->nsrc - 1];
  int64_t off = i->offset;
  ir_type vt = ir_type_bits((ir_type)v->type) == 64 ? ir_type_u64 : ir_type_u32;
  ir_value *v32 = vt == ir_type_u64 ? lower_lo32(b, v) : v;
#define PUT(field, t, val) \
  ir_build_mem(b, ir_op_st, t, base, off + TM_OFF(field), 1, (ir_value *[]){val}, 0, &sm)
#define NARROW(t, val) ir_convert(b, t, ir_type_u32, val)
  switch (f) {
  case IR_TMF_GLOBAL_ADDRESS: PUT(addr, ir_type_u64, vt == ir_type_u64 ? v : lower_zext64(b, v)); break;
  case IR_TMF_RANK: PUT(rank, ir_type_u8, NARROW(ir_type_u8, ir_alu2(b, ir_op_add, ir_type_u32, v32, lower_imm32(b, 1)))); break;
  case IR_TMF_BOX_DIM: PUT(box[ord], ir_type_u16, NARROW(ir_type_u16, v32)); break;
  case IR_TMF_GLOBAL_DIM: PUT(dim_minus1[ord], ir_type_u32, ir_alu2(b, ir_op_sub, ir_type_u32, v32, lower_imm32(b, 1))); break;
  case IR_TMF_GLOBAL_STRIDE: PUT(stride[ord], ir_type_u64, vt == ir_type_u64 ? v : lower_zext64(b, v)); break;
  case IR_TMF_ELEMENT_STRIDE: PUT(elem_stride[ord], ir_type_u8, NARROW(ir_type_u8, v32)); break;
  case IR_TMF_ELEMTYPE:
    PUT(dtype, ir_type_u8, ir_imm(b, ir_type_u8, ir_tmap_isa_elemtypes[k].dtype));
    PUT(elem_bytes, ir_type_u8, ir_imm(b, ir_type_u8, ir_tmap_isa_elemtypes[k].bytes));
    break;
  case IR_TMF_SWIZZLE_MODE: PUT(swizzle, ir_type_u8, ir_imm(b, ir_type_u8, k)); break;
  case IR_TMF_FILL_MODE: PUT(nan_fill, ir_type_u8, ir_imm(b, ir_type_u8, k)); break;
  default: break;   /* interleave none, swizzle atomicity 16B: nothing to store */
  }
#undef PUT
#undef NARROW
  return true;
}

/* tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope
 * [dst], [src], 128 (9.7.13.4.1): the map's 128 bytes as eight 16-byte
 * ld.shared + st.global, then fence.release at the scope (AMD GPUs have
 * one proxy: the tensormap proxy's ordering is the generic one's). */
static bool tmap_cp_fenceproxy(ir_builder *b, ir_instr *i, const lower_async_options *o) {
  uint64_t n = 0;
  if (i->mods.space != IR_SPACE_GLOBAL || i->mods.proxy != IR_PROXY_TENSORMAP || i->mods.sem != IR_SEM_RELEASE ||
      !lower_const(i->src[2], &n) || n != IR_TMAP_BYTES) {
    lower_error(o->diag, i, "tensormap.cp_fenceproxy other than .global.shared::cta.tensormap::generic.release "
                "of 128 bytes");
    return false;
  }
  ir_mods gm = {.space = IR_SPACE_GLOBAL, .vec = 4}, sm = {.space = IR_SPACE_SHARED, .vec = 4};
  for (unsigned k = 0; k < IR_TMAP_BYTES; k += 16) {
    ir_instr *ld = ir_build_mem(b, ir_op_ld, ir_type_b32, i->src[1], k, 0, NULL, 4, &sm);
    ir_build_mem(b, ir_op_st, ir_type_b32, i->src[0], i->offset + k, 4, ld->dst, 0, &gm);
  }
  ir_build(b, ir_op_fence, ir_type_none, 0, NULL, 0, NULL,
           IR_MODS(.sem = IR_SEM_RELEASE, .scope = i->mods.scope ? i->mods.scope : IR_SCOPE_GPU));
  return true;
}

/* cp.async with a src-size: from = min(src-size, n) bytes copied, the rest
 * zero.  nvcc's kernels use src-size as a bounds check (0 or cp-size), so
 * the common cases are whole:
 *
 *     full = from == n
 *     v = @full ld.global.v [src] keep 0       (one guarded vector load)
 *     st.shared.v [dst], v                     (the data, or zeros)
 *     part = from - 1 < n - 1                  (0 < from < n, unsigned)
 *     cbr part, B, C
 *   B: byte j = ld.global.b8 [j < from ? src + j : src]; st.shared.b8 [dst + j], j < from ? byte j : 0
 *     br C
 *   C: ...
 *
 * Only the bytes below from are ever read (the bytes past src-size may lie
 * outside any allocation; byte 0 is readable when from > 0, so it stands in
 * for the others), and B's loads share one branch.  It was a guarded byte
 * load per byte: 16 branches per copy, the blocks the backend's register
 * coalescer and CodeGenPrepare take superlinear time over (cuBLASLt's
 * pipelined GEMM kernels: 64-252 such copies per module; docs/codegen.md). */
static bool src_size_copy(ir_builder *b, ir_instr *i, ir_value *dst, ir_value *src, unsigned n, ir_value *from) {
  ir_mods gm = {.space = IR_SPACE_GLOBAL}, sm = {.space = IR_SPACE_SHARED};
  unsigned nw = n / 4;
  if (nw > 1) gm.vec = sm.vec = (uint8_t)nw;
  ir_value *full = lower_setp(b, IR_CMP_EQ, ir_type_u32, from, lower_imm32(b, n));
  ir_instr *ld = ir_build_mem(b, ir_op_ld, ir_type_b32, src, 0, 0, NULL, nw, &gm);
  ir_value *z[4];
  for (unsigned k = 0; k < nw; k++) z[k] = lower_imm32(b, 0);
  ir_instr_set_guard(b, ld, full, false, z);
  ir_build_mem(b, ir_op_st, ir_type_b32, dst, i->offset, nw, ld->dst, 0, &sm);
  ir_value *less1 = ir_alu2(b, ir_op_sub, ir_type_u32, from, lower_imm32(b, 1));
  ir_value *part = lower_setp(b, IR_CMP_LT, ir_type_u32, less1, lower_imm32(b, n - 1));
  /* split: the partial copy in a block of its own */
  ir_func *f = b->block->func;
  ir_block *pre = b->block;
  ir_block *join = ir_block_split_before(b->before, NULL);
  ir_block *body = ir_block_create_after(f, pre, NULL);
  ir_builder p = ir_builder_at_end(pre);
  p.loc = b->loc;
  ir_cbr(&p, part, body, join);
  ir_builder y = ir_builder_at_end(body);
  y.loc = b->loc;
  gm.vec = sm.vec = 0;
  for (unsigned j = 0; j < n; j++) {
    if (!j) {   /* from > 0 here: byte 0 is always copied */
      ir_instr *lb = ir_build_mem(&y, ir_op_ld, ir_type_b8, src, 0, 0, NULL, 1, &gm);
      ir_build_mem(&y, ir_op_st, ir_type_b8, dst, i->offset, 1, lb->dst, 0, &sm);
      continue;
    }
    ir_value *take = lower_setp(&y, IR_CMP_LT, ir_type_u32, lower_imm32(&y, j), from);
    ir_value *sj = ir_alu2(&y, ir_op_add, ir_type_u64, src, ir_imm(&y, ir_type_u64, j));
    ir_value *at = lower_selp(&y, ir_type_b64, sj, src, take);
    ir_instr *lb = ir_build_mem(&y, ir_op_ld, ir_type_b8, at, 0, 0, NULL, 1, &gm);
    ir_value *v = lower_selp(&y, ir_type_b8, lb->dst[0], ir_imm(&y, ir_type_b8, 0), take);
    ir_build_mem(&y, ir_op_st, ir_type_b8, dst, i->offset + j, 1, (ir_value *[]){v}, 0, &sm);
  }
  ir_br(&y, join);
  ir_loc loc = b->loc;
  *b = ir_builder_before(join->first);
  b->loc = loc;
  return true;
}

static bool lower_instr(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  const lower_async_options *o = data;
  (void)out;
  if (i->op == ir_op_cp_async_bulk) return bulk_copy(b, i, o);
  if (i->op == ir_op_cp_async_bulk_tensor || i->op == ir_op_cp_reduce_async_bulk_tensor) return bulk_tensor(b, i, o);
  if (i->op == ir_op_cp_reduce_async_bulk) return bulk_reduce(b, i, o);
  if (i->op == ir_op_tensormap_replace) return tmap_replace(b, i, o);
  if (i->op == ir_op_tensormap_cp_fenceproxy) return tmap_cp_fenceproxy(b, i, o);
  if (i->op != ir_op_cp_async) return true;   /* every copy is complete already */
  unsigned nval = i->nsrc - (i->mods.has_cache_hint ? 1u : 0u);
  uint64_t n = 0;
  if (nval < 3 || nval > 4 || !lower_const(i->src[2], &n) || (n != 4 && n != 8 && n != 16)) {
    lower_error(o->diag, i, "cp.async needs a constant cp-size of 4, 8 or 16 bytes");
    return false;
  }
  ir_value *dst = i->src[0], *src = i->src[1];
  ir_value *extra = nval == 4 ? i->src[3] : NULL;
  bool ignore = extra && extra->type == ir_type_pred;
  ir_mods gm = {.space = IR_SPACE_GLOBAL}, sm = {.space = IR_SPACE_SHARED};
  if (!extra || ignore) {
    unsigned nw = (unsigned)n / 4;
    if (nw > 1) gm.vec = sm.vec = (uint8_t)nw;
    ir_instr *ld = ir_build_mem(b, ir_op_ld, ir_type_b32, src, 0, 0, NULL, nw, &gm);
    if (ignore) {
      ir_value *z[4];
      for (unsigned k = 0; k < nw; k++) z[k] = lower_imm32(b, 0);
      ir_instr_set_guard(b, ld, extra, true, z);
    }
    ir_build_mem(b, ir_op_st, ir_type_b32, dst, i->offset, nw, ld->dst, 0, &sm);
    return true;
  }
  /* src-size: from = min(s, n) as u32 (src-size is a u32 operand) */
  ir_value *s = extra;
  if (ir_type_bits((ir_type)s->type) == 64) s = lower_lo32(b, s);
  ir_value *from = ir_alu2(b, ir_op_min, ir_type_u32, s, lower_imm32(b, (uint32_t)n));
  return src_size_copy(b, i, dst, src, (unsigned)n, from);
}

bool lower_async(ir_module *m, const lower_async_options *opt) {
  lower_async_options o = opt ? *opt : (lower_async_options){0};
  return lower_walk(m, want, lower_instr, &o);
}
