/* codegen/cg_emit.c: ptxwave IR -> LLVM IR for the AMDGPU backend: the
 * driver (module, functions, blocks, phis, guarded instructions, one
 * dispatch over the ops); each concern's handlers live in their own file
 * (cg_emit.h lists them).
 *
 * Algorithm: declare every function and variable first (calls and address
 * constants may point forward), then translate each body in reverse post-
 * order of its CFG, so every definition is emitted before its non-phi uses;
 * phis are created empty at the top of their block and filled once every
 * block is done, from the LLVM block that ends each IR predecessor (a guard
 * may have split it).
 *
 * Invariant: an instruction that cannot be translated reports an error naming
 * the PTX instruction, the function, the line and the target, and emission
 * goes on (to report more); the module is then discarded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_emit.h"

/* ---- one instruction ------------------------------------------------------- */

/* Branches (9.7.12.2-3); brx.idx past the list is undefined in PTX: the
 * last target. */
static void emit_branch(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  if (i->op == ir_op_br) {
    LLVMBuildBr(B, E->bbs[i->targets[0]->id]);
  } else if (i->op == ir_op_cbr) {
    LLVMBuildCondBr(B, cg_op_as(E, i, 0, c->i1), E->bbs[i->targets[0]->id], E->bbs[i->targets[1]->id]);
  } else {
    LLVMValueRef idx = cg_op_as(E, i, 0, c->i32);
    LLVMValueRef sw = LLVMBuildSwitch(B, idx, E->bbs[i->targets[i->ntargets - 1]->id], i->ntargets);
    for (uint32_t k = 0; k + 1 < i->ntargets; k++) LLVMAddCase(sw, kint(c->i32, k), E->bbs[i->targets[k]->id]);
  }
}

/* A special register.  Codegen translates none: lower/lower_sregs.c makes
 * every one ptxwave compiles target ops or constants (lower_warps.c the
 * warp ones), and in lowered IR only those no stage translates for AMD
 * GPUs remain (%envreg, %pm*, the cluster registers ...: lower_sregs.c's
 * head), which the emulator answers and codegen reports. */
static void emit_sreg(cg_emitter *E, const ir_instr *i) {
  const char *name = ir_sreg_infos[i->sreg].name;
  if (E->m->facts.lowered) cg_unsupported(E, i, "special register %%%s is not supported", name);
  else cg_unsupported(E, i, "special register %%%s needs lower/ (not run)", name);
}

/* One instruction: one switch over every op (no default: -Werror=switch
 * names a new op until it has a case), each op going to one handler in
 * the file of its concern (cg_emit.h).  An op with float and integer forms
 * goes to cg_float.c or cg_int.c by its type.  A handler that returns a
 * value gives the instruction's one result (NULL: none, or reported); the
 * others store their results themselves.
 * Long: one case per op, each a call; split, the dispatch would no longer
 * be one exhaustive switch. */
static void emit_instr(cg_emitter *E, const ir_instr *i) {
  ir_type t = (ir_type)i->type;
  bool fl = is_float(t) || is_fvec(t);
  LLVMValueRef v = NULL;
  switch ((ir_op)i->op) {
  /* SSA plumbing and moves */
  case ir_op_phi: return; /* created with the block */
  case ir_op_copy:
  case ir_op_symaddr: v = cg_op(E, i, 0); break;
  case ir_op_sreg: emit_sreg(E, i); return;
  case ir_op_pack: v = cg_int_pack(E, i); break;
  case ir_op_unpack: cg_int_unpack(E, i); return;

  /* integer arithmetic, and the float forms of add ... max (cg_float.c) */
  case ir_op_add:
  case ir_op_sub: v = fl ? cg_float_add(E, i) : cg_int_add(E, i); break;
  case ir_op_addc:
  case ir_op_subc:
  case ir_op_madc: cg_int_addc(E, i); return;
  case ir_op_mul: v = fl ? cg_float_mul(E, i) : cg_int_mul(E, i); break;
  case ir_op_mad:
  case ir_op_fma: v = fl ? cg_float_fma(E, i) : cg_int_mad(E, i); break;
  case ir_op_mul24:
  case ir_op_mad24: v = cg_int_mul24(E, i); break;
  case ir_op_sad: v = cg_int_sad(E, i); break;
  case ir_op_div:
  case ir_op_rem: v = fl ? cg_float_div(E, i) : cg_int_div(E, i); break;
  case ir_op_abs: v = fl ? cg_float_abs(E, i) : cg_int_abs(E, i); break;
  case ir_op_neg: v = fl ? cg_float_neg(E, i) : cg_int_neg(E, i); break;
  case ir_op_min:
  case ir_op_max: v = fl ? cg_float_minmax(E, i) : cg_int_minmax(E, i); break;
  case ir_op_popc: v = cg_int_popc(E, i); break;
  case ir_op_clz: v = cg_int_clz(E, i); break;
  case ir_op_bfind: v = cg_int_bfind(E, i); break;
  case ir_op_brev: v = cg_int_brev(E, i); break;
  case ir_op_bfe: v = cg_int_bfe(E, i); break;
  case ir_op_bfi: v = cg_int_bfi(E, i); break;
  case ir_op_szext:
  case ir_op_bmsk: v = cg_int_bmsk(E, i); break;
  case ir_op_dp4a: v = cg_int_dp4a(E, i); break;
  case ir_op_dp2a: v = cg_int_dp2a(E, i); break;

  /* floating point */
  case ir_op_rcp:
  case ir_op_sqrt:
  case ir_op_rsqrt: v = cg_float_rcp_sqrt(E, i); break;
  case ir_op_sin:
  case ir_op_cos: v = cg_float_sincos(E, i); break;
  case ir_op_lg2:
  case ir_op_ex2: v = cg_float_lg2_ex2(E, i); break;
  case ir_op_tanh: v = cg_float_tanh(E, i); break;
  case ir_op_copysign: v = cg_float_copysign(E, i); break;
  case ir_op_testp: v = cg_float_testp(E, i); break;

  /* comparison, selection, logic */
  case ir_op_set: v = cg_int_set(E, i); break;
  case ir_op_setp: cg_int_setp(E, i); return;
  case ir_op_selp: v = cg_int_selp(E, i); break;
  case ir_op_slct: v = cg_int_slct(E, i); break;
  case ir_op_and:
  case ir_op_or:
  case ir_op_xor:
  case ir_op_not:
  case ir_op_cnot: v = cg_int_logic(E, i); break;
  case ir_op_lop3: v = cg_int_lop3(E, i); break;
  case ir_op_shf: v = cg_int_shf(E, i); break;
  case ir_op_shl:
  case ir_op_shr: v = cg_int_shift(E, i); break;
  case ir_op_prmt: v = cg_int_prmt(E, i); break;

  /* conversions, memory and the memory model */
  case ir_op_cvt: v = cg_cvt(E, i); break;
  case ir_op_cvta: v = cg_mem_cvta(E, i); break;
  case ir_op_isspacep: v = cg_mem_isspacep(E, i); break;
  case ir_op_ld:
  case ir_op_ldu: cg_mem_load(E, i); return;
  case ir_op_st: cg_mem_store(E, i); return;
  case ir_op_atom:
  case ir_op_red: cg_mem_atomic(E, i); return;
  case ir_op_membar:
  case ir_op_fence: cg_mem_fence(E, i); return;
  case ir_op_createpolicy: v = cg_mem_createpolicy(E, i); break;
  case ir_op_alloca: v = cg_mem_alloca(E, i); break;
  case ir_op_stacksave: v = cg_mem_stacksave(E, i); break;
  case ir_op_stackrestore: cg_mem_stackrestore(E, i); return;
  case ir_op_prefetch:
  case ir_op_prefetchu:
  case ir_op_pmevent:
  case ir_op_nanosleep:
  case ir_op_applypriority:
  case ir_op_discard:
  case ir_op_cp_async_bulk_prefetch:
  case ir_op_cp_async_bulk_prefetch_tensor:
  case ir_op_setmaxnreg:
    /* Hints without a required effect (PTX ISA 9.7.9.14-15, 9.7.9.25.4.3:
     * discard leaves the lines' contents undefined, which keeping them is).
     * AMDGPU has no per-thread data prefetch: gfx12's s_prefetch_data (what
     * LLVM makes of llvm.prefetch there, AMDGPUUsage) takes a uniform
     * scalar address, gfx9-gfx11 have none, and a prefetch that never
     * faults cannot be a load.  Eviction priorities have no counterpart
     * either (the cache-policy bits of AMD loads are per instruction,
     * not per line), so these are no-ops.  setmaxnreg (9.7.19.8) moves
     * registers between the warpgroups of a CTA; an AMD kernel's VGPR count
     * is fixed for its whole launch (the code object's descriptor), and the
     * registers the code uses are the compiler's to allocate, so there is
     * nothing to release or claim. */
    return;

  /* control flow, calls */
  case ir_op_br:
  case ir_op_cbr:
  case ir_op_brx: emit_branch(E, i); return;
  case ir_op_unreachable: LLVMBuildUnreachable(E->b); return;
  case ir_op_call: cg_call(E, i); return;
  case ir_op_ret:
  case ir_op_exit: cg_ret(E, i); return;
  case ir_op_trap: cg_trap(E, i); return;
  case ir_op_brkpt: cg_brkpt(E, i); return;

  /* barriers and the wave-level target operations */
  case ir_op_bar: cg_wave_bar(E, i); return;
  case ir_op_workgroup_barrier: cg_workgroup_barrier(E); return;
  case ir_op_wave_sync: cg_wave_sync(E, i); return;
  case ir_op_wave_lane_id: v = cg_wave_lane_id(E, i); break;
  case ir_op_wave_ballot:
  case ir_op_wave_exec: v = cg_wave_ballot(E, i); break;
  case ir_op_wave_bpermute: v = cg_wave_bpermute(E, i); break;
  case ir_op_wave_swizzle: v = cg_wave_swizzle(E, i); break;
  case ir_op_wave_readlane: v = cg_wave_readlane(E, i); break;
  case ir_op_wave_readfirstlane: v = cg_wave_readfirstlane(E, i); break;
  case ir_op_wave_mma: cg_wave_mma(E, i); return;
  case ir_op_workitem_id:
  case ir_op_workgroup_id:
  case ir_op_workgroup_size:
  case ir_op_workgroup_count: v = cg_wave_dispatch_id(E, i); break;
  case ir_op_dyn_lds_size: v = cg_wave_dyn_lds_size(E, i); break;
  case ir_op_cycle_counter: v = cg_wave_cycle_counter(E, i); break;
  case ir_op_realtime_counter: v = cg_wave_realtime_counter(E, i); break;
  case ir_op_hw_id: v = cg_wave_hw_id(E, i); break;

  /* warp-level: lower/ replaces them before codegen */
  case ir_op_shfl:
  case ir_op_vote:
  case ir_op_match:
  case ir_op_activemask:
  case ir_op_redux:
  case ir_op_elect:
  case ir_op_bar_warp_sync:
    cg_unsupported(E, i, "warp-level operation: run lower/ first (wave size %u)", E->c->wave_size);
    return;
  /* math lower/lower_math.c expands into ops mapped here */
  case ir_op_fns:
  case ir_op_cvt_pack:
    cg_unsupported(E, i, "expanded by lower/ (lower_math.c): run lower/ first");
    return;
  /* not implemented by codegen (lowering or later work) */
  case ir_op_st_async: case ir_op_mapa: case ir_op_getctarank:
  case ir_op_cp_async: case ir_op_cp_async_commit_group: case ir_op_cp_async_wait_group:
  case ir_op_cp_async_mbarrier_arrive: case ir_op_cp_async_bulk: case ir_op_cp_reduce_async_bulk:
  case ir_op_cp_async_bulk_tensor: case ir_op_cp_reduce_async_bulk_tensor:
  case ir_op_cp_async_bulk_commit_group: case ir_op_cp_async_bulk_wait_group:
  case ir_op_multimem_ld_reduce: case ir_op_multimem_st: case ir_op_multimem_red:
  case ir_op_tensormap_replace: case ir_op_tensormap_cp_fenceproxy: case ir_op_tex: case ir_op_tld4:
  case ir_op_txq: case ir_op_istypep: case ir_op_suld: case ir_op_sust: case ir_op_sured:
  case ir_op_suq: case ir_op_bar_red: case ir_op_barrier_cluster: case ir_op_red_async:
  case ir_op_griddepcontrol: case ir_op_mbarrier_init: case ir_op_mbarrier_inval:
  case ir_op_mbarrier_expect_tx: case ir_op_mbarrier_complete_tx: case ir_op_mbarrier_arrive:
  case ir_op_mbarrier_arrive_drop: case ir_op_mbarrier_test_wait: case ir_op_mbarrier_try_wait:
  case ir_op_mbarrier_pending_count: case ir_op_wmma_load:
  case ir_op_wmma_store: case ir_op_wmma_mma: case ir_op_mma: case ir_op_mma_sp:
  case ir_op_ldmatrix: case ir_op_stmatrix: case ir_op_movmatrix: case ir_op_wgmma_fence:
  case ir_op_wgmma_commit_group: case ir_op_wgmma_wait_group: case ir_op_wgmma_mma_async:
  case ir_op_vadd: case ir_op_vsub: case ir_op_vabsdiff: case ir_op_vmin: case ir_op_vmax:
  case ir_op_vshl: case ir_op_vshr: case ir_op_vset:
  case ir_op_vadd2: case ir_op_vsub2: case ir_op_vavrg2: case ir_op_vabsdiff2: case ir_op_vmin2:
  case ir_op_vmax2: case ir_op_vset2: case ir_op_vadd4: case ir_op_vsub4: case ir_op_vavrg4:
  case ir_op_vabsdiff4: case ir_op_vmin4: case ir_op_vmax4: case ir_op_vset4:
  case ir_op_opaque:
    cg_unsupported(E, i, "not implemented by codegen");
    return;
  case ir_op_count: /* not an op */
    cg_no_form(E, i);
    return;
  }
  if (v) cg_set_dst(E, i, 0, v, is_signed(t));
}

/* A guarded instruction (@p): pure ops become a select against the keep
 * values; anything with an effect, a load or a possible fault is branched
 * around, with phis joining its results and the keep values. */
static void emit_guarded(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  const ir_op_info *info = &ir_op_infos[i->op];
  LLVMValueRef g = cg_val(E, i, i->guard);
  g = cg_coerce(E, g, c->i1);
  if (i->guard_neg) g = LLVMBuildNot(E->b, g, "");
  if (!(info->flags & (IR_F_SIDE | IR_F_LOAD | IR_F_STORE | IR_F_TRAP | IR_F_CONV))) {
    emit_instr(E, i);
    for (unsigned k = 0; k < i->ndst; k++) {
      if (!i->dst[k] || !E->vals[i->dst[k]->id]) continue;
      LLVMValueRef kv = cg_coerce(E, cg_val(E, i, i->keep[k]), LLVMTypeOf(E->vals[i->dst[k]->id]));
      E->vals[i->dst[k]->id] = LLVMBuildSelect(E->b, g, E->vals[i->dst[k]->id], kv, "");
    }
    return;
  }
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(E->b);
  LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(c->ctx, E->fn, "guarded");
  LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(c->ctx, E->fn, "join");
  LLVMValueRef *keep = calloc(i->ndst ? i->ndst : 1, sizeof *keep);
  for (unsigned k = 0; k < i->ndst; k++)
    if (i->dst[k]) keep[k] = cg_coerce(E, cg_val(E, i, i->keep[k]), cg_ltype(E, (ir_type)i->dst[k]->type));
  LLVMBuildCondBr(E->b, g, then, cont);
  LLVMPositionBuilderAtEnd(E->b, then);
  emit_instr(E, i);
  LLVMBasicBlockRef then_end = LLVMGetInsertBlock(E->b);
  LLVMBuildBr(E->b, cont);
  LLVMPositionBuilderAtEnd(E->b, cont);
  for (unsigned k = 0; k < i->ndst; k++) {
    if (!i->dst[k] || !E->vals[i->dst[k]->id]) continue;
    LLVMValueRef v = E->vals[i->dst[k]->id];
    LLVMValueRef phi = LLVMBuildPhi(E->b, LLVMTypeOf(v), "");
    LLVMValueRef in[2] = {v, keep[k]};
    LLVMBasicBlockRef bb[2] = {then_end, pre};
    LLVMAddIncoming(phi, in, bb, 2);
    E->vals[i->dst[k]->id] = phi;
  }
  free(keep);
}

/* ---- functions ---------------------------------------------------------------- */

/* Reverse post-order of the CFG from the entry, then the blocks no path
 * from the entry reaches: the number of blocks, *nreach of them
 * reachable. */
static uint32_t rpo(const ir_func *f, ir_block **blocks, ir_block **order, uint32_t *nreach) {
  uint32_t n = 0;
  ir_foreach_block(f, b) blocks[n++] = b;
  bool *seen = calloc(n ? n : 1, 1);
  ir_block **stack = calloc(n ? n : 1, sizeof *stack);
  uint32_t *next = calloc(n ? n : 1, sizeof *next);
  uint32_t sp = 0, pos = n;
  if (n) {
    stack[sp++] = f->entry;
    seen[f->entry->id] = 1;
  }
  while (sp) {
    ir_block *b = stack[sp - 1];
    uint32_t ns = ir_block_nsuccs(b);
    if (next[b->id] < ns) {
      ir_block *s = ir_block_succ(b, next[b->id]++);
      if (s && !seen[s->id]) {
        seen[s->id] = 1;
        stack[sp++] = s;
      }
    } else {
      order[--pos] = b;
      sp--;
    }
  }
  /* reachable blocks sit in order[pos..n); move them to the front */
  uint32_t nr = n - pos;
  memmove(order, order + pos, nr * sizeof *order);
  uint32_t k = nr;
  for (uint32_t j = 0; j < n; j++)
    if (!seen[blocks[j]->id]) order[k++] = blocks[j];
  free(seen);
  free(stack);
  free(next);
  *nreach = nr;
  return n;
}

/* The f32 ops whose .ftz decides a function's float mode */
static bool ftz_op(ir_op op) {
  return op == ir_op_add || op == ir_op_sub || op == ir_op_mul || op == ir_op_fma || op == ir_op_mad ||
         op == ir_op_div || op == ir_op_min || op == ir_op_max || op == ir_op_rcp || op == ir_op_sqrt ||
         op == ir_op_rsqrt || op == ir_op_setp;
}

/* Float modes of a function: denormal-fp-math-f32 "preserve-sign" when every
 * f32 arithmetic instruction of it has .ftz (nvcc's -ftz=true), else IEEE.
 * A mix keeps subnormals (the ftz ones then keep them too: documented). */
static void float_modes(cg_emitter *E, const ir_func *f, LLVMValueRef fn) {
  unsigned ftz = 0, noftz = 0;
  ir_foreach_block(f, b) ir_foreach_instr(b, i) {
    if (i->type != ir_type_f32 || !ftz_op((ir_op)i->op)) continue;
    if (i->mods.ftz) ftz++;
    else noftz++;
  }
  if (ftz && !noftz) cg_fn_attr(E->c, fn, "denormal-fp-math-f32", "preserve-sign,preserve-sign");
}

/* Function-scope .local and .param variables: allocas in the entry block.
 * A .param one is a call's argument or return buffer, scoped to its call
 * sequence (cg_compile.c gives it lifetime markers). */
static void declare_locals(cg_emitter *E, const ir_func *f) {
  cg_context *c = E->c;
  LLVMPositionBuilderAtEnd(E->b, E->alloca_bb);
  for (uint32_t g = 0; g < E->m->nglobals; g++) {
    const ir_global *v = E->m->globals[g];
    if (v->owner != f || (v->space != IR_SPACE_LOCAL && v->space != IR_SPACE_PARAM &&
                          v->space != IR_SPACE_PARAM_FUNC))
      continue;
    LLVMTypeRef at = LLVMArrayType2(c->i8, v->size ? v->size : 1);
    LLVMValueRef a = LLVMBuildAlloca(E->b, at, v->name);
    LLVMSetAlignment(a, v->align ? v->align : 4);
    if (v->space == IR_SPACE_PARAM) LLVMSetMetadata(a, c->kind_callbuf, LLVMMetadataAsValue(c->ctx, LLVMMDNodeInContext2(c->ctx, NULL, 0)));
    cg_map_put(&E->syms, v, a);
  }
}

/* Undefined values for the results an instruction did not give: a block
 * left unreachable, or an error (reported), which must not report again
 * at every use. */
static void fill_undefined(cg_emitter *E, const ir_instr *i) {
  for (unsigned k = 0; k < i->ndst; k++)
    if (i->dst[k] && !E->vals[i->dst[k]->id]) E->vals[i->dst[k]->id] = LLVMGetUndef(cg_ltype(E, (ir_type)i->dst[k]->type));
}

/* One block's instructions; bb_end records the LLVM block that ends it (a
 * guard splits blocks). */
static void emit_block(cg_emitter *E, const ir_block *b) {
  LLVMPositionBuilderAtEnd(E->b, E->bbs[b->id]);
  ir_foreach_instr(b, i) {
    if (i->guard) emit_guarded(E, i);
    else emit_instr(E, i);
    fill_undefined(E, i);
  }
  E->bb_end[b->id] = LLVMGetInsertBlock(E->b);
  if (!LLVMGetBasicBlockTerminator(E->bb_end[b->id])) LLVMBuildUnreachable(E->b);
}

/* The operands of b's phis, from the block that ends each predecessor;
 * reach: the blocks reachable from the entry (others end in unreachable:
 * no edge). */
static void fill_phis(cg_emitter *E, const ir_block *b, const bool *reach) {
  ir_foreach_instr(b, i) {
    if (i->op != ir_op_phi) break;
    LLVMValueRef phi = E->vals[i->dst[0]->id];
    for (uint32_t p = 0; p < i->nsrc && p < b->npreds; p++) {
      LLVMBasicBlockRef from = E->bb_end[b->preds[p]->id];
      if (!from) continue;
      if (!reach[b->preds[p]->id]) continue;
      LLVMBasicBlockRef cur = LLVMGetInsertBlock(E->b);
      /* coercions of the incoming value go at the end of the predecessor */
      LLVMPositionBuilderBefore(E->b, LLVMGetBasicBlockTerminator(from));
      LLVMValueRef v = cg_coerce(E, cg_val(E, i, i->src[p]), LLVMTypeOf(phi));
      LLVMPositionBuilderAtEnd(E->b, cur);
      LLVMAddIncoming(phi, &v, &from, 1);
    }
  }
}

/* A function's body, in reverse post-order (cg_emit.c's head).  Blocks no
 * path from the entry reaches are left empty (unreachable): their
 * instructions may use values of other unreachable blocks in any order,
 * and nothing observes them. */
static bool emit_body(cg_emitter *E, const ir_func *f, LLVMValueRef fn) {
  cg_context *c = E->c;
  ir_compute_preds((ir_func *)f);
  E->f = f;
  E->fn = fn;
  E->vals = calloc(f->nvalues ? f->nvalues : 1, sizeof *E->vals);
  E->bbs = calloc(f->nblocks + 1, sizeof *E->bbs);
  E->bb_end = calloc(f->nblocks + 1, sizeof *E->bb_end);
  ir_block **blocks = calloc(f->nblocks + 1, sizeof *blocks), **order = calloc(f->nblocks + 1, sizeof *order);
  bool *reach = calloc(f->nblocks + 1, 1);

  E->alloca_bb = LLVMAppendBasicBlockInContext(c->ctx, fn, "entry");
  ir_foreach_block(f, b) E->bbs[b->id] = LLVMAppendBasicBlockInContext(c->ctx, fn, b->name ? b->name : "");
  cg_bind_params(E, f, fn);
  declare_locals(E, f);
  LLVMBuildBr(E->b, E->bbs[f->entry->id]);

  uint32_t nreach, n = rpo(f, blocks, order, &nreach);
  for (uint32_t j = 0; j < nreach; j++) reach[order[j]->id] = true;
  /* Phis first, so back edges find them. */
  for (uint32_t j = 0; j < n; j++) {
    ir_block *b = order[j];
    LLVMPositionBuilderAtEnd(E->b, E->bbs[b->id]);
    ir_foreach_instr(b, i) {
      if (i->op != ir_op_phi) break;
      ir_type pt = (ir_type)i->dst[0]->type;
      E->vals[i->dst[0]->id] = reach[b->id] ? LLVMBuildPhi(E->b, cg_ltype(E, pt), "") : LLVMGetUndef(cg_ltype(E, pt));
    }
  }
  for (uint32_t j = 0; j < n; j++) {
    ir_block *b = order[j];
    if (reach[b->id]) {
      emit_block(E, b);
      continue;
    }
    LLVMPositionBuilderAtEnd(E->b, E->bbs[b->id]);
    ir_foreach_instr(b, i) fill_undefined(E, i);
    LLVMBuildUnreachable(E->b);
    E->bb_end[b->id] = E->bbs[b->id];
  }
  for (uint32_t j = 0; j < nreach; j++) fill_phis(E, order[j], reach);
  float_modes(E, f, fn);
  free(reach);
  free(blocks);
  free(order);
  free(E->vals);
  free(E->bbs);
  free(E->bb_end);
  E->vals = NULL;
  return !E->failed;
}

/* ---- module ------------------------------------------------------------------ */

static LLVMValueRef declare_global(cg_emitter *E, const ir_global *g) {
  cg_context *c = E->c;
  unsigned as;
  switch ((ir_space)g->space) {
  case IR_SPACE_GLOBAL: as = CG_AS_GLOBAL; break;
  case IR_SPACE_SHARED:
  case IR_SPACE_SHARED_CTA:
  case IR_SPACE_SHARED_CLUSTER: as = CG_AS_LDS; break;
  case IR_SPACE_CONST: as = CG_AS_CONST; break;
  default: return NULL;
  }
  char name[512];
  if (g->owner) snprintf(name, sizeof name, "%s.%s", g->owner->name, g->name);
  else snprintf(name, sizeof name, "%s", g->name);
  bool dyn = g->is_extern_shared || (as == CG_AS_LDS && g->linkage == IR_LINK_EXTERN && !g->size);
  uint64_t size = g->size;
  LLVMTypeRef t = LLVMArrayType2(c->i8, dyn ? 0 : size);
  LLVMValueRef v = LLVMAddGlobalInAddressSpace(c->mod, t, name, as);
  LLVMSetAlignment(v, g->align ? g->align : 1);
  if (dyn) {
    /* dynamic LDS: a zero-sized external LDS array; LLVM places it after
     * the static LDS of the kernel (AMDGPUUsage "Dynamic LDS") */
    LLVMSetLinkage(v, LLVMExternalLinkage);
    return v;
  }
  if (as == CG_AS_LDS) {
    /* Static LDS aligned to 16 bytes where its size allows (the largest
     * power of two dividing it, at most 16): the address of a shared
     * variable is the implementation's choice, and with it the backend
     * can merge a row of LDS reads into ds_read_b128 (cg_compile.c runs
     * infer-alignment and the load-store vectorizer after the pipeline):
     * PTX's .align 4 on a float array otherwise caps them at
     * ds_read2_b32. */
    unsigned a = g->align ? g->align : 1;
    uint64_t pow2 = size & (~size + 1);
    unsigned want = pow2 >= 16 || !size ? 16 : (unsigned)pow2;
    if (want > a) LLVMSetAlignment(v, want);
    LLVMSetInitializer(v, LLVMGetUndef(t));
    LLVMSetLinkage(v, LLVMInternalLinkage);
    return v;
  }
  if (g->linkage == IR_LINK_EXTERN && !g->init) {
    LLVMSetLinkage(v, LLVMExternalLinkage);
    return v;
  }
  if (!g->nrelocs) {
    LLVMSetInitializer(v, g->init ? LLVMConstStringInContext2(c->ctx, (const char *)g->init, size, 1)
                                  : LLVMConstNull(t));
  }
  if (g->owner) {
    LLVMSetLinkage(v, LLVMInternalLinkage);
  } else {
    /* Module scope, .visible or not: the runtime finds it by name
     * (cuModuleGetGlobal).  A file-static __constant__ or __device__
     * variable is not .visible in nvcc's PTX (5.4.6: internal linkage), yet
     * cudart registers it and cudaMemcpyToSymbol reaches it through
     * cuModuleGetGlobal, which CUDA answers from the cubin's local symbols.
     * A code object's loader only sees exported symbols, so every module
     * variable is exported (protected: one definition, no interposition).
     * It also keeps LLVM from folding loads of a variable the host writes
     * (an internal constant never stored to looks constant to globalopt). */
    LLVMSetLinkage(v, g->linkage == IR_LINK_WEAK || g->linkage == IR_LINK_COMMON ? LLVMWeakAnyLinkage : LLVMExternalLinkage);
    LLVMSetVisibility(v, LLVMProtectedVisibility);
  }
  if (as == CG_AS_CONST) LLVMSetGlobalConstant(v, 0);
  return v;
}

/* An initializer holding addresses ({ f, g+8, generic(s) }, 5.4.4): a
 * packed struct of byte runs and the 32/64-bit address constants. */
static bool reloc_init(cg_emitter *E, const ir_global *g) {
  cg_context *c = E->c;
  LLVMValueRef gv = cg_map_get(&E->syms, g);
  if (!gv) return true;
  uint32_t n = g->nrelocs;
  LLVMValueRef *parts = calloc(2 * n + 1, sizeof *parts);
  unsigned np = 0;
  uint64_t pos = 0;
  for (uint32_t k = 0; k < n; k++) {
    const ir_reloc *r = &g->relocs[k];
    if (r->offset < pos || r->offset + r->size > g->size) {
      free(parts);
      pw_error_at(E->d, E->src, g->loc.line, g->loc.col, "initializer of '%s': relocations overlap", g->name);
      return false;
    }
    if (r->offset > pos)
      parts[np++] = LLVMConstStringInContext2(c->ctx, (const char *)g->init + pos, r->offset - pos, 1);
    const void *key = r->sym.kind == IR_SYM_GLOBAL ? (const void *)r->sym.global
                      : r->sym.kind == IR_SYM_FUNC ? (const void *)r->sym.func
                                                   : (const void *)r->sym.param;
    LLVMValueRef p = cg_map_get(&E->syms, key);
    LLVMTypeRef it = r->size == 4 ? c->i32 : c->i64;
    if (!p) {
      free(parts);
      pw_error_at(E->d, E->src, g->loc.line, g->loc.col, "initializer of '%s': unknown symbol", g->name);
      return false;
    }
    if (r->generic && LLVMGetPointerAddressSpace(LLVMTypeOf(p)) != CG_AS_FLAT)
      p = LLVMConstAddrSpaceCast(p, c->ptr[CG_AS_FLAT]);
    LLVMValueRef a = LLVMConstPtrToInt(p, c->i64);
    if (r->addend) a = LLVMConstAdd(a, LLVMConstInt(c->i64, (uint64_t)r->addend, 1));
    if (r->size == 4) a = LLVMConstTrunc(a, it);
    parts[np++] = a;
    pos = r->offset + r->size;
  }
  if (pos < g->size)
    parts[np++] = LLVMConstStringInContext2(c->ctx, (const char *)g->init + pos, g->size - pos, 1);
  LLVMValueRef init = LLVMConstStructInContext(c->ctx, parts, np, 1);
  free(parts);
  /* the variable's type becomes the struct: replace it */
  LLVMValueRef nv = LLVMAddGlobalInAddressSpace(c->mod, LLVMTypeOf(init), "", LLVMGetPointerAddressSpace(LLVMTypeOf(gv)));
  LLVMSetInitializer(nv, init);
  LLVMSetLinkage(nv, LLVMGetLinkage(gv));
  LLVMSetVisibility(nv, LLVMGetVisibility(gv));
  LLVMSetAlignment(nv, LLVMGetAlignment(gv));
  LLVMReplaceAllUsesWith(gv, nv);
  size_t len;
  const char *name = LLVMGetValueName2(gv, &len);
  char *keep = strndup(name, len);
  LLVMDeleteGlobal(gv);
  LLVMSetValueName2(nv, keep, len);
  free(keep);
  cg_map_put(&E->syms, g, nv);
  return true;
}

bool cg_emit_module(cg_context *c, const ir_module *m, const pw_src *src, pw_diag *d) {
  cg_emitter E = {.c = c, .b = c->b, .m = m, .src = src, .d = d};
  bool ok = true;
  /* Variables.  LLVM's AMDGPU backend counts a kernel's LDS in 32 bits:
   * a .shared variable of 4 GiB or more, or static LDS adding up to that,
   * would wrap and alias (a 4 GiB array and a 64-byte one once compiled
   * to 48 bytes).  No target holds it: refuse it by name, in 64 bits;
   * below that, LLVM reports a kernel's LDS past the target's limit. */
  uint64_t lds_total = 0;
  for (uint32_t g = 0; g < m->nglobals; g++) {
    const ir_global *v = m->globals[g];
    if ((v->space == IR_SPACE_SHARED || v->space == IR_SPACE_SHARED_CTA || v->space == IR_SPACE_SHARED_CLUSTER) &&
        !v->is_extern_shared) {
      lds_total += v->size;
      if (v->size > UINT32_MAX || lds_total > UINT32_MAX) {
        pw_error_at(d, src, v->loc.line, v->loc.col,
                    "shared variable '%s' (%llu bytes) takes static shared memory to %llu bytes; %s has %u bytes of "
                    "LDS per workgroup",
                    v->name, (unsigned long long)v->size, (unsigned long long)lds_total, c->target->name,
                    c->target->lds_bytes);
        ok = false;
        break;
      }
    }
  }
  for (uint32_t g = 0; g < m->nglobals && ok; g++) {
    const ir_global *v = m->globals[g];
    LLVMValueRef gv = declare_global(&E, v);
    if (gv) cg_map_put(&E.syms, v, gv);
  }
  if (!ok) {
    cg_map_free(&E.syms);
    return false;
  }
  /* Functions. */
  ir_foreach_func(m, f) {
    LLVMValueRef fn = LLVMAddFunction(c->mod, f->name, cg_func_type(&E, f));
    cg_map_put(&E.syms, f, fn);
    if (f->is_kernel) {
      if (!cg_kernel_attrs(&E, f, fn)) ok = false;
    } else {
      LLVMSetLinkage(fn, f->is_decl ? LLVMExternalLinkage
                         : c->relocatable && f->linkage == IR_LINK_VISIBLE ? LLVMExternalLinkage
                         : c->relocatable && f->linkage == IR_LINK_WEAK ? LLVMWeakAnyLinkage
                         : LLVMInternalLinkage);
    }
  }
  for (uint32_t g = 0; g < m->nglobals; g++)
    if (m->globals[g]->nrelocs && !reloc_init(&E, m->globals[g])) ok = false;
  ir_foreach_func(m, f) {
    if (f->is_decl || !f->entry) continue;
    E.failed = false;
    if (!emit_body(&E, f, cg_map_get(&E.syms, f))) ok = false;
  }
  cg_map_free(&E.syms);
  return ok;
}
