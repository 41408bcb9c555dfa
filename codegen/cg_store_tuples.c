/* codegen/cg_store_tuples.c: vector stores of long-lived values in huge
 * functions take a copy of each element next to the store.
 *
 * Why.  A vector store (`st.shared.v4.b32`, `st.global.v4.f32`) needs its
 * data in one register tuple (VReg_128 for four dwords).  Instruction
 * selection builds the tuple with a REG_SEQUENCE of the four values, and
 * LLVM's register coalescer then joins each value into the tuple when their
 * live ranges allow it: the values become subregisters of one virtual
 * register that is live wherever any of them is.  For a GEMM's accumulators
 * (loop-carried phis) stored as vectors in the epilogue, that register spans
 * the kernel, and with subregister liveness on (AMDGPU's default) every
 * further join shrinks its subranges again (LiveIntervals::shrinkToUses,
 * extendSegmentsToUses): work proportional to the range's length per join,
 * quadratic in the end.  In cuBLASLt's SYRK kernels (2,093 blocks, 128 vector
 * stores of accumulators, 388 VGPRs) the coalescer took 40% of the compile.
 *
 * What.  In a function of at least `min_blocks` basic blocks, each 32-bit
 * element of a stored vector that is defined in another block (a phi, a
 * value computed earlier, an argument) is copied right before the store
 * with a DPP move of quad_perm [0,1,2,3] (`llvm.amdgcn.update.dpp`: every
 * lane reads itself, so the copy is exact for the lanes that run it), which
 * the coalescer cannot join away.  The tuple then lives from the copies to
 * the store.  Elements computed in the store's own block (a value loaded
 * and stored again) are left alone: their ranges are already short.  The
 * price is one move per copied dword; measured on the corpus, see
 * docs/codegen.md "Vector stores in huge functions". */
#include "codegen/cg_priv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Walk an insertelement chain that builds every lane of `v` from poison or
 * undef; NULL-filled `lanes` on any other shape (a loaded vector, a
 * shuffle, a partially built one). */
static bool chain_lanes(LLVMValueRef v, unsigned n, LLVMValueRef *lanes) {
  memset(lanes, 0, n * sizeof *lanes);
  unsigned seen = 0;
  while (LLVMIsAInsertElementInst(v)) {
    LLVMValueRef ix = LLVMGetOperand(v, 2);
    if (!LLVMIsAConstantInt(ix)) return false;
    unsigned long long k = LLVMConstIntGetZExtValue(ix);
    if (k >= n) return false;
    if (!lanes[k]) {
      lanes[k] = LLVMGetOperand(v, 1);
      seen++;
    }
    v = LLVMGetOperand(v, 0);
  }
  return seen == n && (LLVMIsAPoisonValue(v) || LLVMIsAUndefValue(v));
}

static bool defined_elsewhere(LLVMValueRef x, LLVMBasicBlockRef bb) {
  if (LLVMIsAArgument(x)) return true;
  return LLVMIsAInstruction(x) && LLVMGetInstructionParent(x) != bb;
}

/* The blocks of fn, sorted by address for lookup, and which of them lie on
 * a cycle of the CFG (a nontrivial strongly connected component or a self
 * loop): Tarjan's algorithm, iterative. */
typedef struct {
  LLVMBasicBlockRef bb;
  unsigned idx;
} bb_key;

static int bb_key_cmp(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const bb_key *)a)->bb, y = (uintptr_t)((const bb_key *)b)->bb;
  return x < y ? -1 : x > y;
}

static unsigned block_index(const bb_key *keys, unsigned n, LLVMBasicBlockRef bb) {
  bb_key k = {bb, 0};
  const bb_key *f = bsearch(&k, keys, n, sizeof k, bb_key_cmp);
  return f ? f->idx : n;
}

static bool *cyclic_blocks(LLVMBasicBlockRef *bbs, unsigned n) {
  bb_key *keys = malloc(n * sizeof *keys);
  unsigned *index = malloc(n * sizeof *index), *low = malloc(n * sizeof *low), *stack = malloc(n * sizeof *stack);
  unsigned *cs_node = malloc(n * sizeof *cs_node), *cs_succ = malloc(n * sizeof *cs_succ);
  bool *on = calloc(n, 1), *cyc = calloc(n ? n : 1, 1);
  if (!keys || !index || !low || !stack || !cs_node || !cs_succ || !on || !cyc) {
    free(cyc);
    cyc = NULL;
    goto out;
  }
  for (unsigned i = 0; i < n; i++) keys[i] = (bb_key){bbs[i], i}, index[i] = UINT32_MAX;
  qsort(keys, n, sizeof *keys, bb_key_cmp);
  unsigned next = 0, sp = 0;
  for (unsigned root = 0; root < n; root++) {
    if (index[root] != UINT32_MAX) continue;
    unsigned csp = 0;
    cs_node[csp] = root, cs_succ[csp++] = 0;
    index[root] = low[root] = next++, stack[sp++] = root, on[root] = true;
    while (csp) {
      unsigned v = cs_node[csp - 1];
      LLVMValueRef t = LLVMGetBasicBlockTerminator(bbs[v]);
      unsigned ns = t ? LLVMGetNumSuccessors(t) : 0;
      if (cs_succ[csp - 1] < ns) {
        LLVMBasicBlockRef sb = LLVMGetSuccessor(t, cs_succ[csp - 1]++);
        unsigned w = block_index(keys, n, sb);
        if (w == n) continue;
        if (w == v) cyc[v] = true; /* self loop */
        if (index[w] == UINT32_MAX) {
          index[w] = low[w] = next++, stack[sp++] = w, on[w] = true;
          cs_node[csp] = w, cs_succ[csp++] = 0;
        } else if (on[w] && index[w] < low[v]) {
          low[v] = index[w];
        }
        continue;
      }
      if (low[v] == index[v]) { /* v roots a component: pop it */
        unsigned first = sp;
        do first--; while (stack[first] != v);
        bool big = sp - first > 1;
        for (unsigned i = first; i < sp; i++) {
          on[stack[i]] = false;
          if (big) cyc[stack[i]] = true;
        }
        sp = first;
      }
      csp--;
      if (csp && low[v] < low[cs_node[csp - 1]]) low[cs_node[csp - 1]] = low[v];
    }
  }
out:
  free(keys), free(index), free(low), free(stack), free(cs_node), free(cs_succ), free(on);
  return cyc;
}

void cg_copy_store_tuples(LLVMModuleRef mod, unsigned min_blocks) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx), i1 = LLVMInt1TypeInContext(ctx);
  LLVMBuilderRef b = NULL;
  LLVMValueRef dpp = NULL;
  LLVMTypeRef dpp_ty = NULL;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    unsigned nbb = LLVMIsDeclaration(fn) ? 0 : LLVMCountBasicBlocks(fn);
    if (!nbb || nbb < min_blocks) continue;
    LLVMBasicBlockRef *bbs = malloc(nbb * sizeof *bbs);
    if (!bbs) continue;
    LLVMGetBasicBlocks(fn, bbs);
    bool *cyc = cyclic_blocks(bbs, nbb);
    for (unsigned bi = 0; cyc && bi < nbb; bi++) {
      LLVMBasicBlockRef bb = bbs[bi];
      if (cyc[bi]) continue; /* a loop: the copies would run on every trip */
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
        if (!LLVMIsAStoreInst(in)) continue;
        LLVMValueRef v = LLVMGetOperand(in, 0);
        LLVMTypeRef vt = LLVMTypeOf(v);
        if (LLVMGetTypeKind(vt) != LLVMVectorTypeKind) continue;
        LLVMTypeRef et = LLVMGetElementType(vt);
        LLVMTypeKind ek = LLVMGetTypeKind(et);
        if (!(ek == LLVMFloatTypeKind || (ek == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(et) == 32))) continue;
        unsigned n = LLVMGetVectorSize(vt);
        LLVMValueRef lanes[16];
        if (n < 2 || n > 16 || !chain_lanes(v, n, lanes)) continue;
        bool any = false;
        for (unsigned k = 0; k < n; k++) any |= defined_elsewhere(lanes[k], bb);
        if (!any) continue;
        if (!b) {
          b = LLVMCreateBuilderInContext(ctx);
          unsigned id = LLVMLookupIntrinsicID("llvm.amdgcn.update.dpp", 22);
          dpp = LLVMGetIntrinsicDeclaration(mod, id, &i32, 1);
          dpp_ty = LLVMIntrinsicGetType(ctx, id, &i32, 1);
        }
        LLVMPositionBuilderBefore(b, in);
        LLVMValueRef nv = LLVMGetPoison(vt);
        for (unsigned k = 0; k < n; k++) {
          LLVMValueRef x = lanes[k];
          if (defined_elsewhere(x, bb)) {
            /* update.dpp(old, src, dpp_ctrl, row_mask, bank_mask, bound_ctrl):
             * dpp_ctrl 0xE4 is quad_perm [0,1,2,3], the identity. */
            LLVMValueRef xi = ek == LLVMFloatTypeKind ? LLVMBuildBitCast(b, x, i32, "") : x;
            LLVMValueRef args[6] = {LLVMGetPoison(i32), xi, LLVMConstInt(i32, 0xE4, 0), LLVMConstInt(i32, 0xF, 0),
                                    LLVMConstInt(i32, 0xF, 0), LLVMConstInt(i1, 0, 0)};
            LLVMValueRef c = LLVMBuildCall2(b, dpp_ty, dpp, args, 6, "");
            x = ek == LLVMFloatTypeKind ? LLVMBuildBitCast(b, c, et, "") : c;
          }
          nv = LLVMBuildInsertElement(b, nv, x, LLVMConstInt(i32, k, 0), "");
        }
        LLVMSetOperand(in, 0, nv);
        /* the old chain, now dead (its lanes live on in the new one) */
        while (LLVMIsAInsertElementInst(v) && !LLVMGetFirstUse(v)) {
          LLVMValueRef up = LLVMGetOperand(v, 0);
          LLVMInstructionEraseFromParent(v);
          v = up;
        }
      }
    }
    free(cyc);
    free(bbs);
  }
  if (b) LLVMDisposeBuilder(b);
}
