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
 * nothing left to wait for (removed).  The tensor and reduction forms and
 * cp.async.mbarrier.arrive are not expanded here.
 */
#include "ir/ir_tensormap.h"
#include "lower_internal.h"

static bool want(const ir_instr *i, void *data) {
  (void)data;
  return i->op == ir_op_cp_async || i->op == ir_op_cp_async_commit_group || i->op == ir_op_cp_async_wait_group ||
         i->op == ir_op_cp_async_bulk || i->op == ir_op_cp_async_bulk_commit_group ||
         i->op == ir_op_cp_async_bulk_wait_group || i->op == ir_op_cp_async_bulk_tensor;
}

/* Eliminates the cp.async family (the tensor, reduction and mbarrier forms
 * are not lowered here: codegen reports them); builds blocks. */
const lower_contract lower_async_contract = {
    .pass = "lower_async",
    .ops = (const ir_op[]){ir_op_cp_async, ir_op_cp_async_commit_group, ir_op_cp_async_wait_group, ir_op_cp_async_bulk,
                           ir_op_cp_async_bulk_commit_group, ir_op_cp_async_bulk_wait_group,
                           ir_op_cp_async_bulk_tensor, ir_op_count},
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

/* cp.async.bulk [dst], [src], size{, [mbar] | , byteMask}:
 *   pre:  br head
 *   head: k = phi(0, k + 16); cbr k < size, body, exit
 *   body: v = ld.v4.b32 [src + k]; st.v4.b32 [dst + k], v; br head
 *         (.cp_mask: byte j of v stored to [dst + k + j] iff mask bit j)
 *   exit: mbarrier.complete_tx [mbar], size       (the mbarrier form) */
static bool bulk_copy(ir_builder *b, ir_instr *i, const lower_async_options *o) {
  unsigned nval = i->nsrc - (i->mods.has_cache_hint ? 1u : 0u);
  bool tx = i->mods.bulk == IR_BULK_COMPLETE_TX, to_global = i->mods.space == IR_SPACE_GLOBAL;
  /* .cp_mask (shared -> global, sm_100): a fourth operand, the byte mask */
  bool masked = !tx && to_global && nval == 4 && !i->mods.has_cache_hint;
  if (nval != (tx ? 4u : 3u) + masked || to_global == tx) {
    lower_error(o->diag, i, "cp.async.bulk other than global -> shared with an mbarrier or shared -> global "
                "in a bulk group");
    return false;
  }
  ir_mods dm = {.space = to_global ? IR_SPACE_GLOBAL : IR_SPACE_SHARED, .vec = 4};
  ir_mods sm = {.space = to_global ? IR_SPACE_SHARED : IR_SPACE_GLOBAL, .vec = 4};
  ir_value *dst = i->src[0], *src = i->src[1];
  ir_type dt = (ir_type)dst->type, st = (ir_type)src->type;
  if (ir_type_bits(dt) != 32) dt = ir_type_u64;
  else dt = ir_type_u32;
  if (ir_type_bits(st) != 32) st = ir_type_u64;
  else st = ir_type_u32;
  ir_value *n = i->src[2];
  if (ir_type_bits((ir_type)n->type) == 64) n = lower_lo32(b, n);
  counted_loop lp;
  loop_open(b, n, &lp);
  ir_builder *y = &lp.body;
  ir_value *kd = dt == ir_type_u32 ? lp.k : lower_zext64(y, lp.k);
  ir_value *ks = st == ir_type_u32 ? lp.k : lower_zext64(y, lp.k);
  ir_value *sa = ir_alu2(y, ir_op_add, st, src, ks);
  ir_value *da = ir_alu2(y, ir_op_add, dt, dst, kd);
  ir_instr *ld = ir_build_mem(y, ir_op_ld, ir_type_b32, sa, 0, 0, NULL, 4, &sm);
  if (masked) {
    /* byte j of each 16-byte chunk is stored iff bit j of the mask is set:
     * 16 guarded byte stores */
    ir_value *mask = i->src[3];
    if (ir_type_bits((ir_type)mask->type) != 32) mask = ir_convert(y, ir_type_u32, (ir_type)mask->type, mask);
    for (unsigned j = 0; j < 16; j++) {
      ir_value *byte = lower_alu(y, ir_op_shr, ir_type_b32, ld->dst[j / 4], lower_imm32(y, 8 * (j % 4)));
      ir_value *bit = lower_alu(y, ir_op_and, ir_type_b32, mask, lower_imm32(y, 1u << j));
      ir_value *p = lower_setp(y, IR_CMP_NE, ir_type_b32, bit, lower_imm32(y, 0));
      ir_instr *stb = ir_build_mem(y, ir_op_st, ir_type_b8, da, i->offset + j, 1, (ir_value *[]){byte}, 0,
                                   IR_MODS(.space = IR_SPACE_GLOBAL));
      ir_instr_set_guard(y, stb, p, false, NULL);
    }
  } else {
    ir_build_mem(y, ir_op_st, ir_type_b32, da, i->offset, 4, ld->dst, 0, &dm);
  }
  loop_close(b, &lp, y->block, 16);
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
  bool load = i->mods.bulk == IR_BULK_COMPLETE_TX;
  if (!i->mods.tile || r < 1 || r > IR_TMAP_MAX_RANK || nval != (load ? 3u + r : 2u + r) ||
      (i->mods.space == IR_SPACE_GLOBAL) == load || (!load && i->mods.bulk != IR_BULK_GROUP)) {
    lower_error(o->diag, i, "cp.async.bulk.tensor other than a .tile copy global -> shared with an mbarrier or "
                "shared -> global in a bulk group");
    return false;
  }
  /* the operands (the address operand, src[0], carries the offset) */
  ir_value *tm = load ? i->src[1] : i->src[0], *smem = load ? i->src[0] : i->src[1 + r];
  int64_t tm_off = load ? 0 : i->offset, smem_off = load ? i->offset : 0;
  if (ir_type_bits((ir_type)tm->type) == 32) tm = lower_zext64(b, tm);
  if (ir_type_bits((ir_type)smem->type) == 64) smem = lower_lo32(b, smem);
  if (smem_off) smem = ir_alu2(b, ir_op_add, ir_type_u32, smem, lower_imm32(b, (uint32_t)smem_off));
  if (tm_off) tm = ir_alu2(b, ir_op_add, ir_type_u64, tm, ir_imm(b, ir_type_s64, (uint64_t)tm_off));
  /* the map's fields, read once */
  ir_value *addr = tmap_field(b, tm, TM_OFF(addr), ir_type_u64);
  ir_value *eb = tmap_field(b, tm, TM_OFF(elem_bytes), ir_type_u8), *sw = tmap_field(b, tm, TM_OFF(swizzle), ir_type_u8);
  ir_value *nan = tmap_field(b, tm, TM_OFF(nan_fill), ir_type_u8);
  ir_value *dimm1[IR_TMAP_MAX_RANK], *es[IR_TMAP_MAX_RANK], *n[IR_TMAP_MAX_RANK], *stride[IR_TMAP_MAX_RANK];
  ir_value *total = eb;
  for (unsigned d = 0; d < r; d++) {
    dimm1[d] = tmap_field(b, tm, TM_OFF(dim_minus1[d]), ir_type_u32);
    es[d] = d ? tmap_field(b, tm, TM_OFF(elem_stride[d]), ir_type_u8) : lower_imm32(b, 1);
    ir_value *box = tmap_field(b, tm, TM_OFF(box[d]), ir_type_u16);
    /* n = ceil(box / es) */
    ir_value *up = ir_alu2(b, ir_op_add, ir_type_u32, box, ir_alu2(b, ir_op_sub, ir_type_u32, es[d], lower_imm32(b, 1)));
    n[d] = d ? ir_alu2(b, ir_op_div, ir_type_u32, up, es[d]) : box;
    stride[d] = d ? tmap_field(b, tm, TM_OFF(stride[d - 1]), ir_type_u64) : lower_zext64(b, eb);
    total = ir_alu2(b, ir_op_mul, ir_type_u32, total, n[d]);
  }
  ir_value *swmask = ir_alu2(b, ir_op_sub, ir_type_u32, ir_alu2(b, ir_op_shl, ir_type_b32, lower_imm32(b, 1), sw),
                             lower_imm32(b, 1));
  ir_value *fill = ir_alu2(b, ir_op_and, ir_type_b32, ir_alu2(b, ir_op_sub, ir_type_u32, lower_imm32(b, 0), nan),
                           lower_imm32(b, 0xff));
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
    ir_build_mem(b, ir_op_mbarrier_complete_tx, ir_type_b64, i->src[2 + r], 0, 1, (ir_value *[]){total}, 0,
                 IR_MODS(.space = IR_SPACE_SHARED));
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
  if (i->op == ir_op_cp_async_bulk_tensor) return bulk_tensor(b, i, o);
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
