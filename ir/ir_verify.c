/* ir/ir_verify.c: checks the IR's invariants (NIR's nir_validate, QBE's
 * ssacheck).  Every failed condition is recorded with the instruction (or
 * block, or function) it is about; at the end each function with errors is
 * printed with its errors inline, under the thing they concern:
 *
 *   ir.pwir: error: IR verification failed in @k (1 error):
 *   kernel @k() {
 *   bb0:
 *     %0 = add.u32 %1, 1
 *     ; error: operand 0 (%1) is not dominated by its definition (at 3:3)
 *     ...
 *
 * The checks (docs/ir.md, "Invariants"):
 *   structure   every block is in its function's layout once, ends in
 *               exactly one terminator, has no terminator before its end and
 *               its phis at the top; the entry block has no predecessors;
 *               branch targets are blocks of the function; block preds
 *               equal (as a multiset) the edges of the terminators.
 *   counts      operand, result and target counts follow the opcode table,
 *               and for variable ones the modifiers (.cc adds the carry,
 *               .v4 four values, setp's boolean op a third source, a phi
 *               one operand per predecessor, a call 1 + nret + narg).
 *   types       results have the type the table's rule gives (up to PTX's
 *               compatibility: same width and one side a bit type or both
 *               integers; ld/cvt results may be wider than a <=16-bit type);
 *               predicate operands (setp/set/selp/cbr/addc carry-in/vote
 *               and guards) are pred, and the other operands of fixed-arity
 *               arithmetic are not.
 *   values      each operand belongs to the function (its definition is in
 *               the function's layout, a parameter of it, or a constant,
 *               undef or symbol; symbols name module variables, this
 *               function's variables or parameters, or functions); each
 *               result is defined once.
 *   SSA         each use is dominated by its definition (earlier in the same
 *               block, or in a dominating block); a phi operand's definition
 *               dominates the end of the corresponding predecessor.  Uses in
 *               unreachable blocks are not checked: nvcc leaves dead code
 *               after ret, and a dominance relation is undefined there.
 *   guards      a guard is pred, never on a phi or terminator; a guarded
 *               instruction has one keep value per result, of a compatible
 *               type; keep values only with a guard.
 *   modifiers   a field of ir_mods is set only on ops that document it
 *               (ir_ops.def's mods column), with a value that has a
 *               spelling (ir_names.c).
 *   lowering    with require_lowered, nothing ir_instr_is_unlowered names
 *               remains (an op of level PTX, a warp-level special register).
 * The verifier never changes the IR and computes its own dominators.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir_amd_matrix.h"
#include "ir_priv.h"
#include "util/diag.h"

typedef struct verr {
  char *msg;
  struct verr *next;
} verr;

/* Dumps of functions above BIG_FUNC instructions show only the errors and
 * CONTEXT instructions before each; at most MAX_SHOWN errors are printed. */
enum { BIG_FUNC = 400, CONTEXT = 3, MAX_SHOWN = 100 };

typedef struct verifier {
  const ir_module *m;
  const ir_func *f;
  const ir_verify_options *opt;
  pw_arena a;
  pw_map errs;             /* instr / block / func -> first verr */
  uint32_t nerr;
  ir_printer pr;           /* numbering for messages and the dump */
  /* the function's blocks */
  uint32_t nb;
  const ir_block **blocks; /* by layout index */
  pw_map bidx;             /* block -> index + 1 */
  uint32_t *soff, *succ, *poff, *pred;
  uint32_t *idom, *pre, *post;
  /* values */
  uint32_t *defpos;        /* value id -> position of its definition + 1 */
  uint32_t *defblk;        /* value id -> block index of its definition */
  const ir_value **byid;   /* value id -> the value seen with that id */
  pw_map shown;            /* big functions: the instructions the dump shows */
  uint32_t nshown;         /* errors printed so far */
} verifier;

/* ---- recording -------------------------------------------------------- */

static void err(verifier *V, const void *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void err(verifier *V, const void *where, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  verr *e = IR_NEW(&V->a, verr);
  e->msg = pw_arena_strdup(&V->a, buf);
  bool found;
  void **slot = pw_map_ptr_slot(&V->errs, where, &found);
  verr **tail = (verr **)slot;
  while (*tail) tail = &(*tail)->next;
  *tail = e;
  V->nerr++;
}

/* "%3", "bb2", type names: short renderings for messages. */
static const char *vname(verifier *V, const ir_value *v, char *buf, size_t n) {
  if (!v) return "null";
  uint32_t num = v->id < V->f->nvalues ? V->pr.num[v->id] : 0;
  switch (v->kind) {
  case IR_VAL_INSTR:
  case IR_VAL_PARAM:
    if (num) snprintf(buf, n, "%%%u", num - 1);
    else snprintf(buf, n, "value #%u", v->id);
    return buf;
  case IR_VAL_CONST: return "a constant";
  case IR_VAL_UNDEF: return "undef";
  case IR_VAL_SYMBOL: return "a symbol";
  default: return "a bad value";
  }
}

static const char *tname(unsigned t) {
  return t == ir_type_none ? "none" : t < ir_type_count ? ir_type_name((ir_type)t) : "?";
}

static uint32_t bindex(const verifier *V, const ir_block *b) {
  uintptr_t k = b ? (uintptr_t)pw_map_ptr_get(&V->bidx, b) : 0;
  return k ? (uint32_t)(k - 1) : UINT32_MAX;
}

static bool dominates(const verifier *V, uint32_t a, uint32_t b) {
  if (a == b) return true;
  return V->pre[a] && V->pre[b] && V->pre[a] <= V->pre[b] && V->post[b] <= V->post[a];
}

/* ---- types ------------------------------------------------------------ */

/* PTX's operand type compatibility: ir_type_compatible (ir.h). */
static bool compatible(unsigned actual, unsigned expect, bool may_widen) {
  return ir_type_compatible(actual, expect, may_widen);
}

/* ---- values ----------------------------------------------------------- */

static bool param_of(const ir_func *f, const ir_param *p) {
  return (f->nparams && p >= f->params && p < f->params + f->nparams) ||
         (f->nrets && p >= f->rets && p < f->rets + f->nrets);
}

/* Checks that v may be used in V->f; returns false if the value is too
 * broken for dominance checks. */
static bool check_value(verifier *V, const ir_instr *i, const char *what, unsigned k,
                        const ir_value *v) {
  const ir_func *f = V->f;
  char b1[32];
  if (!v) {
    err(V, i, "%s %u is missing", what, k);
    return false;
  }
  if (v->type >= ir_type_count) err(V, i, "%s %u has a bad type (%u)", what, k, v->type);
  if (v->id >= f->nvalues) {
    err(V, i, "%s %u is a value of another function (id %u, the function has %u)", what, k,
        v->id, f->nvalues);
    return false;
  }
  if (V->byid[v->id] && V->byid[v->id] != v) {
    err(V, i, "%s %u shares its id %u with another value", what, k, v->id);
    return false;
  }
  V->byid[v->id] = v;
  switch (v->kind) {
  case IR_VAL_INSTR:
    if (!v->def) {
      err(V, i, "%s %u (%s) has no defining instruction", what, k, vname(V, v, b1, sizeof b1));
      return false;
    }
    if (!v->def->block) {
      err(V, i, "%s %u (%s) is the result of a removed instruction", what, k, vname(V, v, b1, sizeof b1));
      return false;
    }
    if (v->def->block->func != f) {
      err(V, i, "%s %u is defined in another function", what, k);
      return false;
    }
    if (v->index >= v->def->ndst || v->def->dst[v->index] != v) {
      err(V, i, "%s %u (%s) is not result %u of its defining instruction", what, k,
          vname(V, v, b1, sizeof b1), v->index);
      return false;
    }
    if (!V->defpos[v->id]) {
      err(V, i, "%s %u (%s) is defined in a block outside the function's layout", what, k,
          vname(V, v, b1, sizeof b1));
      return false;
    }
    return true;
  case IR_VAL_PARAM:
    if (v->index >= f->nparams || f->params[v->index].value != v) {
      err(V, i, "%s %u is not a parameter of this function", what, k);
      return false;
    }
    return true;
  case IR_VAL_CONST:
  case IR_VAL_UNDEF:
    return true;
  case IR_VAL_SYMBOL: {
    const ir_symbol *s = &v->symref.sym;
    switch (s->kind) {
    case IR_SYM_GLOBAL:
      if (!s->global) err(V, i, "%s %u names no variable", what, k);
      else if (s->global->owner && s->global->owner != f)
        err(V, i, "%s %u names a variable of another function (@%s)", what, k, s->global->name);
      return true;
    case IR_SYM_FUNC:
      if (!s->func) err(V, i, "%s %u names no function", what, k);
      else if (s->func->module != V->m) err(V, i, "%s %u names a function of another module", what, k);
      return true;
    case IR_SYM_PARAM:
      if (!s->param || !param_of(f, s->param))
        err(V, i, "%s %u names a parameter of another function", what, k);
      return true;
    }
    err(V, i, "%s %u is a symbol of unknown kind", what, k);
    return true;
  }
  }
  err(V, i, "%s %u has a bad kind (%u)", what, k, v->kind);
  return false;
}

/* A use of v by i (in block ub at position up) must be dominated by v's
 * definition. */
static void check_use(verifier *V, const ir_instr *i, uint32_t ub, uint32_t up, const char *what,
                      unsigned k, const ir_value *v) {
  if (!check_value(V, i, what, k, v) || v->kind != IR_VAL_INSTR) return;
  if (!V->pre[ub]) return;  /* unreachable use: not checked */
  uint32_t db = V->defblk[v->id], dp = V->defpos[v->id] - 1;
  bool ok = db == ub ? dp < up : dominates(V, db, ub);
  if (!ok) {
    char b1[32];
    err(V, i, "%s %u (%s) is not dominated by its definition", what, k, vname(V, v, b1, sizeof b1));
  }
}

/* ---- instructions ----------------------------------------------------- */

static void count_is(verifier *V, const ir_instr *i, const char *what, unsigned have, unsigned want) {
  if (have != want)
    err(V, i, "'%s' has %u %s, expected %u", ir_op_infos[i->op].name, have, what, want);
}

/* Operand, result and branch-target counts: nsrc and ndst, then the rule
 * of ir_ops.def's count column for the IR_VAR ops whose modifiers fix them. */
static void check_counts(verifier *V, const ir_instr *i) {
  const ir_op_info *info = &ir_op_infos[i->op];
  unsigned want_src, want_dst;
  ir_op_counts((ir_op)i->op, &i->mods, &want_src, &want_dst);
  if (want_src != IR_VAR) count_is(V, i, "operands", i->nsrc, want_src);
  if (want_dst != IR_VAR) count_is(V, i, "results", i->ndst, want_dst);
  unsigned ntargets = 0;   /* the branch targets the rule wants */
  switch ((ir_count_rule)info->count) {
  case IR_COUNT_FIXED: case IR_COUNT_CC: case IR_COUNT_BOOLOP: case IR_COUNT_LD: case IR_COUNT_LDU:
  case IR_COUNT_ST: case IR_COUNT_VOTE:
    break;
  case IR_COUNT_PAIR:
  case IR_COUNT_SETP:
  case IR_COUNT_SHFL:
    if (i->ndst < 1 || i->ndst > 2) err(V, i, "'%s' has %u results, expected 1 or 2", info->name, i->ndst);
    break;
  case IR_COUNT_ATOM:
  case IR_COUNT_RED:
    if (i->nsrc < 2) err(V, i, "'%s' has %u operands, expected at least 2", info->name, i->nsrc);
    break;
  case IR_COUNT_CALL: {
    const ir_call_info *ci = i->aux;
    if (!ci) err(V, i, "'%s' has no call info", info->name);
    else count_is(V, i, "operands", i->nsrc, 1u + ci->nret + ci->narg);
    break;
  }
  case IR_COUNT_SWIZZLE:
    /* the pattern is an instruction field (ds_swizzle_b32's offset), in
     * bitmask mode (bit 15 clear) */
    if (i->nsrc == 2 && i->src[1] && (i->src[1]->kind != IR_VAL_CONST || i->src[1]->imm >= 0x8000))
      err(V, i, "the pattern of '%s' must be an immediate below 0x8000", info->name);
    break;
  case IR_COUNT_WAVE_MMA: {
    /* the row is an immediate of the table; the register counts are the row's */
    const ir_value *row = i->nsrc ? i->src[0] : NULL;
    const ir_amx_info *r = row && row->kind == IR_VAL_CONST ? ir_amx_info_of((unsigned)row->imm) : NULL;
    if (!r) {
      err(V, i, "the first operand of '%s' must be an immediate row of ir_amd_matrix.def (0..%u)", info->name,
          (unsigned)IR_AMX_COUNT - 1);
      break;
    }
    count_is(V, i, "operands", i->nsrc, 1u + r->na + r->nb + r->nc);
    count_is(V, i, "results", i->ndst, r->nc);
    for (unsigned k = 1; k < i->nsrc; k++)
      if (i->src[k] && ir_type_bits((ir_type)i->src[k]->type) != 32)
        err(V, i, "operand %u of '%s' (%s) is not a 32-bit register", k, info->name, r->name);
    for (unsigned k = 0; k < i->ndst; k++)
      if (i->dst[k] && ir_type_bits((ir_type)i->dst[k]->type) != 32)
        err(V, i, "result %u of '%s' (%s) is not a 32-bit register", k, info->name, r->name);
    break;
  }
  case IR_COUNT_SYMADDR:
    if (i->nsrc == 1 && i->src[0] && i->src[0]->kind != IR_VAL_SYMBOL)
      err(V, i, "the operand of '%s' must be a symbol", info->name);
    break;
  case IR_COUNT_BR: ntargets = 1; break;
  case IR_COUNT_CBR: ntargets = 2; break;
  case IR_COUNT_BRX:
    if (!i->ntargets) err(V, i, "'%s' has no targets", info->name);
    return;
  }
  if (ntargets) count_is(V, i, "targets", i->ntargets, ntargets);
  else if (i->ntargets) err(V, i, "'%s' has branch targets", info->name);
}

static void check_types(verifier *V, const ir_instr *i) {
  const ir_op_info *info = &ir_op_infos[i->op];
  char b1[48];
  if (i->type >= ir_type_count || i->type2 >= ir_type_count || i->type3 >= ir_type_count ||
      i->type4 >= ir_type_count) {
    err(V, i, "bad type number");
    return;
  }
  if (info->result == RES_TYPE && i->ndst && i->type == ir_type_none)
    err(V, i, "'%s' needs a type", info->name);
  bool widen = (info->flags & IR_F_LOAD) || i->op == ir_op_cvt;
  for (unsigned k = 0; k < i->ndst; k++) {
    const ir_value *d = i->dst[k];
    if (!d) {
      err(V, i, "result %u is missing", k);
      continue;
    }
    if (d->kind != IR_VAL_INSTR || d->def != i || d->index != k) {
      err(V, i, "result %u does not point back to this instruction", k);
      continue;
    }
    ir_type want = ir_expected_dst_type(i, k);
    if (want != ir_type_none && !compatible(d->type, want, widen))
      err(V, i, "result %u (%s) of '%s' has type %s, expected %s", k, vname(V, d, b1, sizeof b1),
          info->name, tname(d->type), tname(want));
  }
  /* Fixed-arity arithmetic: operands other than the predicate positions
   * are not predicates (unless the op itself works on pred). */
  bool arith = info->nsrc != IR_VAR && info->result == RES_TYPE && i->type != ir_type_pred &&
               i->op != ir_op_copy;
  for (unsigned k = 0; k < i->nsrc; k++) {
    const ir_value *s = i->src[k];
    if (!s) continue;
    if (ir_src_is_pred(i, k)) {
      if (s->type != ir_type_pred)
        err(V, i, "operand %u of '%s' must be pred, found %s", k, info->name, tname(s->type));
    } else if (arith && s->type == ir_type_pred) {
      err(V, i, "operand %u of '%s.%s' is a predicate", k, info->name, tname(i->type));
    }
  }
}

static void check_mods(verifier *V, const ir_instr *i) {
  uint64_t set = ir_mods_nonzero(&i->mods);
  for (unsigned f = 0; f < ir_mod_count && set >> f; f++) {   /* >> 64 is undefined */
    if (!((set >> f) & 1)) continue;
    unsigned v = ir_mods_get(&i->mods, (ir_mod_field)f);
    const char *s = ir_mod_spelling((ir_mod_field)f, v);
    if (!s) err(V, i, "modifier field '%s' has the bad value %u", ir_mod_field_infos[f].name, v);
    else if (!ir_op_uses_mod((ir_op)i->op, (ir_mod_field)f))
      err(V, i, "modifier .%s is not valid on '%s'", s, ir_op_infos[i->op].name);
  }
}

static void check_instr(verifier *V, const ir_instr *i, uint32_t bi, uint32_t pos) {
  if (i->op >= ir_op_count) {
    err(V, i, "bad opcode %u", i->op);
    return;
  }
  const ir_op_info *info = &ir_op_infos[i->op];
  const ir_block *b = V->blocks[bi];
  char b1[48];
  check_counts(V, i);
  check_types(V, i);
  check_mods(V, i);

  /* Operands and their dominance. */
  if (i->op == ir_op_phi) {
    if (i->nsrc != b->npreds)
      err(V, i, "phi has %u operands but block bb%u has %u predecessors", i->nsrc, bi, b->npreds);
    for (unsigned k = 0; k < i->nsrc; k++) {
      const ir_value *v = i->src[k];
      if (!check_value(V, i, "phi operand", k, v)) continue;
      if (v->type != i->type && !compatible(v->type, i->type, false))
        err(V, i, "phi operand %u has type %s, expected %s", k, tname(v->type), tname(i->type));
      if (v->kind != IR_VAL_INSTR || k >= b->npreds) continue;
      uint32_t pb = bindex(V, b->preds[k]);
      if (pb == UINT32_MAX || !V->pre[pb]) continue;  /* reported, or unreachable */
      if (!dominates(V, V->defblk[v->id], pb))
        err(V, i, "phi operand %u (%s) does not dominate the end of predecessor bb%u", k,
            vname(V, v, b1, sizeof b1), pb);
    }
  } else {
    for (unsigned k = 0; k < i->nsrc; k++) check_use(V, i, bi, pos, "operand", k, i->src[k]);
  }

  /* Guards and keep values. */
  if (i->guard) {
    check_use(V, i, bi, pos, "guard", 0, i->guard);
    if (i->guard->type != ir_type_pred) err(V, i, "the guard must be pred, found %s", tname(i->guard->type));
    if (info->flags & IR_F_TERM) err(V, i, "a terminator cannot be guarded (split the block: ir_block_split_before)");
    if (i->op == ir_op_phi) err(V, i, "a phi cannot be guarded");
    if (i->ndst && !i->keep) err(V, i, "a guarded instruction needs a keep value per result");
  } else if (i->keep) {
    err(V, i, "keep values without a guard");
  }
  if (i->keep)
    for (unsigned k = 0; k < i->ndst; k++) {
      check_use(V, i, bi, pos, "keep value", k, i->keep[k]);
      const ir_value *kv = i->keep[k], *d = i->dst[k];
      if (kv && d && !compatible(kv->type, d->type, false))
        err(V, i, "keep value %u has type %s, result %u has type %s", k, tname(kv->type), k, tname(d->type));
    }

  /* Special registers. */
  if (i->op == ir_op_sreg) {
    if (i->sreg >= ir_sreg_count) {
      err(V, i, "bad special register %u", i->sreg);
    } else {
      const ir_sreg_info *si = &ir_sreg_infos[i->sreg];
      if (i->sreg_comp >= si->ncomp)
        err(V, i, "special register %%%s has %u component%s, not %u", si->name, si->ncomp,
            si->ncomp == 1 ? "" : "s", i->sreg_comp + 1);
      if (V->opt && V->opt->require_lowered && ir_instr_is_unlowered(i))
        err(V, i, "warp-level special register %%%s in lowered IR", si->name);
    }
  } else if (i->sreg || i->sreg_comp) {
    err(V, i, "'%s' is not a special register read but has one set", info->name);
  }
  if (i->offset && !ir_op_has_address((ir_op)i->op) && i->op != ir_op_opaque)
    err(V, i, "'%s' has no address but an offset", info->name);
  if (i->op == ir_op_opaque && !i->opaque) err(V, i, "an opaque instruction needs its PTX spelling");
  if (V->opt && V->opt->require_lowered && i->op != ir_op_sreg && ir_instr_is_unlowered(i))
    err(V, i, "%s op '%s' in lowered IR", info->flags & IR_F_WARP ? "warp-level" : "PTX-level", info->name);
  for (uint32_t k = 0; k < i->ntargets; k++) {
    const ir_block *t = i->targets ? i->targets[k] : NULL;
    if (bindex(V, t) == UINT32_MAX) err(V, i, "target %u is not a block of this function", k);
  }
}

/* ---- blocks and the CFG ----------------------------------------------- */

static void build_cfg(verifier *V) {
  uint32_t n = V->nb;
  pw_arena *a = &V->a;
  V->soff = IR_NEW_ARRAY(a, uint32_t, n + 1);
  V->poff = IR_NEW_ARRAY(a, uint32_t, n + 1);
  uint32_t ne = 0;
  for (uint32_t v = 0; v < n; v++) {
    const ir_block *b = V->blocks[v];
    const ir_instr *t = ir_block_terminator(b);
    for (uint32_t k = 0; t && t->targets && k < t->ntargets; k++) {
      uint32_t s = bindex(V, t->targets[k]);
      if (s == UINT32_MAX) continue;
      V->soff[v + 1]++;
      V->poff[s + 1]++;
      ne++;
    }
  }
  for (uint32_t v = 0; v < n; v++) {
    V->soff[v + 1] += V->soff[v];
    V->poff[v + 1] += V->poff[v];
  }
  V->succ = IR_NEW_ARRAY(a, uint32_t, ne ? ne : 1);
  V->pred = IR_NEW_ARRAY(a, uint32_t, ne ? ne : 1);
  uint32_t *sf = IR_NEW_ARRAY(a, uint32_t, n + 1), *pf = IR_NEW_ARRAY(a, uint32_t, n + 1);
  memcpy(sf, V->soff, (n + 1) * sizeof(uint32_t));
  memcpy(pf, V->poff, (n + 1) * sizeof(uint32_t));
  for (uint32_t v = 0; v < n; v++) {
    const ir_instr *t = ir_block_terminator(V->blocks[v]);
    for (uint32_t k = 0; t && t->targets && k < t->ntargets; k++) {
      uint32_t s = bindex(V, t->targets[k]);
      if (s == UINT32_MAX) continue;
      V->succ[sf[v]++] = s;
      V->pred[pf[s]++] = v;
    }
  }
  V->idom = IR_NEW_ARRAY(a, uint32_t, n ? n : 1);
  V->pre = IR_NEW_ARRAY(a, uint32_t, n ? n : 1);
  V->post = IR_NEW_ARRAY(a, uint32_t, n ? n : 1);
  if (n) ir_dom_solve(n, 0, V->soff, V->succ, V->poff, V->pred, V->idom, V->pre, V->post);
}

/* Block preds must be the multiset of the terminators' edges into it. */
static void check_preds(verifier *V) {
  uint32_t n = V->nb;
  int64_t *cnt = IR_NEW_ARRAY(&V->a, int64_t, n ? n : 1);
  for (uint32_t v = 0; v < n; v++) {
    const ir_block *b = V->blocks[v];
    bool bad = false;
    for (uint32_t k = 0; k < b->npreds; k++) {
      uint32_t p = bindex(V, b->preds[k]);
      if (p == UINT32_MAX) {
        err(V, b, "predecessor %u of bb%u is not a block of this function", k, v);
        bad = true;
      } else {
        cnt[p]++;
      }
    }
    for (uint32_t e = V->poff[v]; e < V->poff[v + 1]; e++) cnt[V->pred[e]]--;
    for (uint32_t k = 0; k < b->npreds; k++) {
      uint32_t p = bindex(V, b->preds[k]);
      if (p != UINT32_MAX && cnt[p]) bad = true;
    }
    for (uint32_t e = V->poff[v]; e < V->poff[v + 1]; e++)
      if (cnt[V->pred[e]]) bad = true;
    if (bad) {
      char buf[256];
      size_t o = 0;
      for (uint32_t e = V->poff[v]; e < V->poff[v + 1] && o < sizeof buf - 16; e++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%sbb%u", e > V->poff[v] ? ", " : "", V->pred[e]);
      buf[o] = 0;
      err(V, b, "the predecessors of bb%u do not match the branches to it (from: %s)", v,
          o ? buf : "none");
    }
    for (uint32_t k = 0; k < b->npreds; k++) {
      uint32_t p = bindex(V, b->preds[k]);
      if (p != UINT32_MAX) cnt[p] = 0;
    }
    for (uint32_t e = V->poff[v]; e < V->poff[v + 1]; e++) cnt[V->pred[e]] = 0;
  }
  if (n && V->blocks[0]->npreds) err(V, V->blocks[0], "the entry block has predecessors");
}

static void check_block(verifier *V, uint32_t bi, uint32_t *pos) {
  const ir_block *b = V->blocks[bi];
  if (!b->first) {
    err(V, b, "block bb%u is empty: it needs a terminator", bi);
    return;
  }
  bool phis = true;
  const ir_instr *prev = NULL;
  for (const ir_instr *i = b->first; i; prev = i, i = i->next) {
    if (i->block != b) err(V, i, "the instruction's block is not bb%u", bi);
    if (i->prev != prev) err(V, i, "broken instruction list (prev)");
    if (i->op < ir_op_count) {
      if (i->op == ir_op_phi) {
        if (!phis) err(V, i, "phi after a non-phi instruction in bb%u", bi);
      } else {
        phis = false;
      }
      if (ir_is_terminator(i) && i->next)
        err(V, i, "terminator '%s' in the middle of block bb%u", ir_op_infos[i->op].name, bi);
    }
    check_instr(V, i, bi, (*pos)++);
  }
  if (b->last != prev) err(V, b, "broken instruction list (last)");
  if (prev && (prev->op >= ir_op_count || !ir_is_terminator(prev)))
    err(V, b, "block bb%u does not end in a terminator", bi);
}

/* ---- functions -------------------------------------------------------- */

/* Numbers definitions in layout order (params first, at position 0). */
static void number_defs(verifier *V) {
  const ir_func *f = V->f;
  uint32_t pos = 1;
  for (uint32_t bi = 0; bi < V->nb; bi++) {
    for (const ir_instr *i = V->blocks[bi]->first; i; i = i->next, pos++) {
      for (unsigned k = 0; k < i->ndst; k++) {
        const ir_value *d = i->dst[k];
        if (!d || d->id >= f->nvalues) {
          if (d) err(V, i, "result %u has an id outside the function (%u)", k, d->id);
          continue;
        }
        if (V->defpos[d->id]) err(V, i, "result %u is defined twice", k);
        V->defpos[d->id] = pos + 1;
        V->defblk[d->id] = bi;
      }
    }
  }
}

static void check_func_decl(verifier *V) {
  const ir_func *f = V->f;
  if (f->is_kernel && f->nrets) err(V, f, "a kernel has no return parameters");
  if (f->is_decl && f->entry) err(V, f, "a declaration has a body");
  if (!f->is_decl && !f->entry) err(V, f, "a function definition needs an entry block");
  for (uint32_t k = 0; k < f->nparams; k++) {
    const ir_param *p = &f->params[k];
    if (p->space == IR_SPACE_REG) {
      const ir_value *v = p->value;
      if (!v || v->kind != IR_VAL_PARAM || v->index != k || v->id >= f->nvalues)
        err(V, f, "register parameter @%s has no proper value", p->name ? p->name : "?");
    } else if (p->value) {
      err(V, f, "parameter @%s is not a register but has a value", p->name ? p->name : "?");
    }
    if (p->type >= ir_type_count || p->space > IR_SPACE_REG)
      err(V, f, "parameter @%s has a bad type or space", p->name ? p->name : "?");
  }
}

static void inline_errors(ir_printer *p, ir_print_at at, const void *what, void *ctx) {
  verifier *V = ctx;
  for (verr *e = pw_map_ptr_get(&V->errs, what); e; e = e->next) {
    V->nshown++;
    fputs("  ; error: ", p->out);
    fputs(e->msg, p->out);
    /* Instruction errors say where the instruction came from (the PTX, or
     * the .pwir line). */
    const ir_instr *i = at == IR_PRINT_AT_INSTR ? what : NULL;
    if (i && i->loc.line) fprintf(p->out, " (at %u:%u)", i->loc.line, i->loc.col);
    fputc('\n', p->out);
  }
}

static bool show(ir_printer *p, ir_print_at at, const void *what, void *ctx) {
  verifier *V = ctx;
  return pw_map_ptr_get(&V->shown, what) != NULL;
}

static void mark(verifier *V, const void *what) {
  bool found;
  *pw_map_ptr_slot(&V->shown, what, &found) = (void *)what;
}

static uint32_t nerrs(verifier *V, const void *what) {
  uint32_t n = 0;
  for (verr *e = pw_map_ptr_get(&V->errs, what); e; e = e->next) n++;
  return n;
}

/* For big functions: mark the first MAX_SHOWN errors' instructions, the
 * CONTEXT ones before each and their blocks, so the dump shows them and
 * elides the rest. */
static void choose_shown(verifier *V) {
  uint32_t count = 0;
  for (uint32_t bi = 0; bi < V->nb; bi++)
    for (const ir_instr *i = V->blocks[bi]->first; i; i = i->next) count++;
  if (count <= BIG_FUNC) {
    V->pr.show = NULL;
    return;
  }
  V->pr.show = show;
  pw_map_init(&V->shown, &V->a, 64);
  uint32_t n = 0;
  for (uint32_t bi = 0; bi < V->nb && n < MAX_SHOWN; bi++) {
    const ir_block *b = V->blocks[bi];
    uint32_t be = nerrs(V, b);
    if (be) {
      mark(V, b);
      n += be;
    }
    for (const ir_instr *i = b->first; i && n < MAX_SHOWN; i = i->next) {
      uint32_t ie = nerrs(V, i);
      if (!ie) continue;
      n += ie;
      mark(V, b);
      const ir_instr *c = i;
      for (int k = 0; k <= CONTEXT && c; k++, c = c->prev) mark(V, c);
    }
  }
}

static bool verify_func(verifier *V, const ir_func *f, pw_diag *d) {
  V->f = f;
  V->nerr = 0;
  pw_arena_init(&V->a);
  pw_map_init(&V->errs, &V->a, 16);
  ir_printer_begin(&V->pr, NULL, f);
  /* Blocks: the layout, each once. */
  pw_map_init(&V->bidx, &V->a, f->nblocks);
  uint32_t n = 0;
  for (const ir_block *b = f->entry; b; b = b->next) {
    bool found;
    void **slot = pw_map_ptr_slot(&V->bidx, b, &found);
    if (found) {
      err(V, f, "block layout visits a block twice");
      break;
    }
    *slot = (void *)(uintptr_t)++n;
    if (b->func != f) err(V, b, "bb%u belongs to another function", n - 1);
  }
  V->nb = n;
  V->blocks = IR_NEW_ARRAY(&V->a, const ir_block *, n ? n : 1);
  n = 0;
  for (const ir_block *b = f->entry; b && n < V->nb; b = b->next) V->blocks[n++] = b;
  V->defpos = IR_NEW_ARRAY(&V->a, uint32_t, f->nvalues ? f->nvalues : 1);
  V->defblk = IR_NEW_ARRAY(&V->a, uint32_t, f->nvalues ? f->nvalues : 1);
  V->byid = IR_NEW_ARRAY(&V->a, const ir_value *, f->nvalues ? f->nvalues : 1);

  check_func_decl(V);
  build_cfg(V);
  check_preds(V);
  number_defs(V);
  uint32_t pos = 1;
  for (uint32_t bi = 0; bi < V->nb; bi++) check_block(V, bi, &pos);

  bool ok = V->nerr == 0;
  if (!ok && d) {
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (mem) {
      V->pr.out = mem;
      V->pr.hook = inline_errors;
      V->pr.hook_ctx = V;
      V->nshown = 0;
      choose_shown(V);
      ir_printer_func(&V->pr);
      if (V->nshown < V->nerr) fprintf(mem, "; %u more errors not shown\n", V->nerr - V->nshown);
      fclose(mem);
      if (len && buf[len - 1] == '\n') buf[len - 1] = 0;
      pw_error(d, V->m->source_name, "IR verification failed in @%s (%u error%s):\n%s", f->name,
               V->nerr, V->nerr == 1 ? "" : "s", buf ? buf : "");
      free(buf);
    }
  }
  ir_printer_end(&V->pr);
  pw_arena_free(&V->a);
  return ok;
}

static bool verify_global(const ir_module *m, const ir_global *g, pw_diag *d) {
  const char *why = NULL;
  char buf[160];
  if (g->type >= ir_type_count || g->space > IR_SPACE_REG) why = "bad type or state space";
  for (uint32_t k = 0; k < g->nrelocs && !why; k++) {
    const ir_reloc *r = &g->relocs[k];
    if (r->size != 4 && r->size != 8) why = "a relocation is not 4 or 8 bytes";
    else if (!g->init || r->offset > g->size || g->size - r->offset < r->size)
      why = "a relocation lies outside the initializer";
    else if ((r->sym.kind == IR_SYM_GLOBAL && !r->sym.global) ||
             (r->sym.kind == IR_SYM_FUNC && !r->sym.func) || r->sym.kind == IR_SYM_PARAM)
      why = "a relocation names no variable or function";
  }
  if (!why && g->owner && g->owner->module != m) why = "owned by a function of another module";
  if (!why && !g->vec) why = "vector width 0";
  if (!why && g->init && g->count && ir_type_bits((ir_type)g->type) >= 8 &&
      g->size / g->vec / ((ir_type_bits((ir_type)g->type) + 7) / 8) > g->count)
    why = "the initializer is larger than the variable";
  if (!why) return true;
  snprintf(buf, sizeof buf, "variable @%s: %s", g->name ? g->name : "?", why);
  if (d) pw_error(d, m->source_name, "IR verification failed: %s", buf);
  return false;
}

bool ir_verify(const ir_module *m, const ir_verify_options *opt, pw_diag *d) {
  verifier V;
  memset(&V, 0, sizeof V);
  V.m = m;
  V.opt = opt;
  bool ok = true;
  for (uint32_t k = 0; k < m->nglobals; k++) ok &= verify_global(m, m->globals[k], d);
  ir_foreach_func(m, f) ok &= verify_func(&V, f, d);
  return ok;
}
