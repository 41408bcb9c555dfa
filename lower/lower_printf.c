/* lower/lower_printf.c: device printf and assert into records of the
 * runtime's printf buffer (docs/lowering.md, "Device printf and assert").
 *
 * CUDA's device runtime provides vprintf and __assertfail; PTX only
 * declares them (PTX ISA 9.1, "System calls").  An AMD code object has no
 * such functions, so each call becomes plain IR that leaves a record in a
 * buffer in device memory, which the host formats after the kernel
 * (runtime/rt_printf.c), as CUDA's own runtime does with its FIFO.
 *
 *   vprintf(fmt, args) -> (i32)   args: each argument at the next offset
 *                                 aligned to its size (util/pw_printf.h)
 *     pv   = &__ptxwave_printf            {u64 buffer, u32 capacity, u32 dropped}
 *     buf  = pv->buffer;  cap = pv->capacity
 *     has  = buf != 0
 *     @has  old = atom.global.add.u32 [buf], size       (the write offset)
 *     fits = has && old <= cap && cap - old >= size
 *     @fits st.global [buf + 16 + old]: size, kind, fmt, then the argument
 *           bytes copied from args, argument by argument
 *     @!fits red.global.add.u32 [pv->dropped], 1
 *     result = fits ? nargs : -1
 *
 *   __assertfail(msg, file, line, func, charsize) -> the same with an
 *     assert record (msg, file, func, line, %ctaid, %tid), then exit: the
 *     thread ends, and the host, finding the record at the next
 *     synchronising call, prints CUDA's message and returns
 *     CUDA_ERROR_ASSERT.  Not a trap: on ROCm an s_trap is a queue error
 *     whose handler aborts the process before the host can read the
 *     buffer (HSA_STATUS_ERROR_EXCEPTION 0x1016; ROCm/legacy-rocm-build
 *     issue 6245 shows a printf before __builtin_trap lost that way), so
 *     the message would never be printed.  The cost: the grid's other
 *     threads run on, where CUDA stops the grid (docs/lowering.md).
 *
 * One atomic per record reserves its bytes, so records of all threads of
 * all kernels of a context stay whole and in the order they were
 * reserved.  A record that does not fit is dropped and counted (as CUDA
 * drops output past its FIFO's end), never written in part.
 *
 * The size of the argument buffer is not an operand of vprintf: it follows
 * from the format (pw_printf_layout), which nvcc always makes a constant
 * string of the module ($str).  A call whose format cannot be traced to
 * such a string is an error naming the call.  vprintf returns the number
 * of arguments (PTX ISA: "returns the number of arguments"); that is known
 * here too.
 *
 * Call operands are .param variables written by st.param just before the
 * call (nvcc's call sequence); a register operand is taken as it is.
 * Runs first in lower_module: it reads %tid/%ctaid, which lower_sregs then
 * lowers.  The buffer layout is util/pw_printf.h's.
 */
#include <string.h>

#include "lower_internal.h"
#include "util/pw_printf.h"

typedef struct printf_state {
  const lower_printf_options *opt;
  ir_global *var;      /* __ptxwave_printf, created on first need */
} printf_state;

static const ir_func *callee_of(const ir_instr *i) {
  if (i->op != ir_op_call || !i->nsrc) return NULL;
  const ir_value *c = i->src[0];
  if (c->kind != IR_VAL_SYMBOL || c->symref.sym.kind != IR_SYM_FUNC) return NULL;
  const ir_func *f = c->symref.sym.func;
  return f && f->is_decl ? f : NULL;
}

static bool is_vprintf(const ir_func *f) { return f && !strcmp(f->name, "vprintf"); }
static bool is_assertfail(const ir_func *f) { return f && !strcmp(f->name, "__assertfail"); }

static bool want(const ir_instr *i, void *data) {
  (void)data;
  const ir_func *f = callee_of(i);
  return is_vprintf(f) || is_assertfail(f);
}

/* Eliminates the calls of vprintf and __assertfail (the form: want). */
const lower_contract lower_printf_contract = {
    .pass = "lower_printf",
    .ops = (const ir_op[]){ir_op_call, ir_op_count},
    .form = want,
    .preserves = 0,
};

static const ir_call_info *call_info(const ir_instr *i) { return (const ir_call_info *)i->aux; }

static bool same_symbol(const ir_value *a, const ir_value *b) {
  return a->kind == IR_VAL_SYMBOL && b->kind == IR_VAL_SYMBOL && a->symref.sym.kind == b->symref.sym.kind &&
         a->symref.sym.global == b->symref.sym.global && a->symref.offset == b->symref.offset;
}

/* The value of argument k of call i: a register operand, or what the last
 * st.param before the call in its block wrote to the .param operand. */
static ir_value *arg_value(const ir_instr *i, unsigned k) {
  const ir_call_info *ci = call_info(i);
  if (!ci || k >= ci->narg) return NULL;
  ir_value *a = i->src[1 + ci->nret + k];
  if (a->kind != IR_VAL_SYMBOL) return a;
  for (const ir_instr *s = i->prev; s; s = s->prev) {
    if (s->op != ir_op_st || !same_symbol(s->src[0], a)) continue;
    /* a guarded or partial store: the value is not known here */
    return s->nsrc == 2 && !s->guard && s->offset == 0 ? s->src[1] : NULL;
  }
  return NULL;
}

/* Follows copies, cvta to generic and constant adds back to a symbol. */
static const ir_global *trace_global(const ir_value *v, int64_t *off) {
  for (int depth = 0; v && depth < 16; depth++) {
    if (v->kind == IR_VAL_SYMBOL) {
      if (v->symref.sym.kind != IR_SYM_GLOBAL) return NULL;
      *off += v->symref.offset;
      return v->symref.sym.global;
    }
    if (v->kind != IR_VAL_INSTR) return NULL;
    const ir_instr *d = v->def;
    uint64_t c;
    if (d->guard) return NULL;
    if (d->op == ir_op_copy || d->op == ir_op_symaddr || (d->op == ir_op_cvta && !d->mods.cvta_to)) {
      v = d->src[0];
    } else if (d->op == ir_op_add && lower_const(d->src[1], &c)) {
      *off += (int64_t)c;
      v = d->src[0];
    } else {
      return NULL;
    }
  }
  return NULL;
}

/* The format string, when it is an initialised variable's bytes. */
static const char *const_string(const ir_value *v) {
  int64_t off = 0;
  const ir_global *g = trace_global(v, &off);
  if (!g || !g->init || off < 0 || (uint64_t)off >= g->size) return NULL;
  if (g->space != IR_SPACE_GLOBAL && g->space != IR_SPACE_CONST) return NULL;
  const char *s = (const char *)g->init + off;
  return memchr(s, 0, g->size - (uint64_t)off) ? s : NULL;
}

static ir_global *printf_var(printf_state *s, ir_module *m) {
  if (!s->var) s->var = ir_module_find_global(m, PW_PRINTF_VAR);
  if (!s->var) {
    s->var = ir_global_create(m, NULL, PW_PRINTF_VAR, IR_SPACE_GLOBAL, ir_type_b64, PW_PRINTF_VAR_BYTES / 8, 8);
    /* visible: the runtime finds it by name (hipModuleGetGlobal) */
    s->var->linkage = IR_LINK_VISIBLE;
  }
  return s->var;
}

static ir_instr *st_global(ir_builder *b, ir_type t, ir_value *addr, int64_t off, ir_value *v, ir_value *guard) {
  ir_instr *st = ir_build_mem(b, ir_op_st, t, addr, off, 1, (ir_value *[]){v}, 0, IR_MODS(.space = IR_SPACE_GLOBAL));
  ir_instr_set_guard(b, st, guard, false, NULL);
  return st;
}

/* A record of `size` bytes: reserves it and returns its address; *fits
 * says whether it was reserved (every store of the record is guarded by
 * it); the drop is counted. */
static ir_value *reserve(ir_builder *b, printf_state *s, ir_module *m, uint32_t size, uint32_t kind,
                         ir_value **fits) {
  ir_value *pv = ir_alu1(b, ir_op_symaddr, ir_type_u64, ir_symref(b, ir_sym_global(printf_var(s, m)), 0, ir_type_u64));
  ir_value *buf = ir_build_mem(b, ir_op_ld, ir_type_u64, pv, PW_PRINTF_VAR_BUFFER, 0, NULL, 1,
                               IR_MODS(.space = IR_SPACE_GLOBAL))->dst[0];
  ir_value *cap = ir_build_mem(b, ir_op_ld, ir_type_u32, pv, PW_PRINTF_VAR_CAPACITY, 0, NULL, 1,
                               IR_MODS(.space = IR_SPACE_GLOBAL))->dst[0];
  ir_value *has = lower_setp(b, IR_CMP_NE, ir_type_u64, buf, ir_imm(b, ir_type_u64, 0));
  ir_instr *add = ir_build_mem(b, ir_op_atom, ir_type_u32, buf, PW_PRINTF_BUF_OFFSET, 1,
                               (ir_value *[]){lower_imm32(b, size)}, 1,
                               IR_MODS(.space = IR_SPACE_GLOBAL, .atomop = IR_ATOM_ADD));
  ir_instr_set_guard(b, add, has, false, (ir_value *[]){ir_imm(b, ir_type_u32, 0)});
  ir_value *old = add->dst[0];
  /* old <= cap && cap - old >= size: no wrap-around for any old */
  ir_value *in = lower_setp(b, IR_CMP_LE, ir_type_u32, old, cap);
  ir_value *room = lower_setp(b, IR_CMP_GE, ir_type_u32, ir_sub(b, ir_type_u32, cap, old), lower_imm32(b, size));
  *fits = ir_and(b, ir_type_pred, has, ir_and(b, ir_type_pred, in, room));
  ir_instr *drop = ir_build_mem(b, ir_op_red, ir_type_u32, pv, PW_PRINTF_VAR_DROPPED, 1,
                                (ir_value *[]){lower_imm32(b, 1)}, 0,
                                IR_MODS(.space = IR_SPACE_GLOBAL, .atomop = IR_ATOM_ADD));
  ir_instr_set_guard(b, drop, *fits, true, NULL);
  ir_value *old64 = lower_zext64(b, old);
  ir_value *rec = ir_add(b, ir_type_u64, ir_add(b, ir_type_u64, buf, old64), ir_imm(b, ir_type_u64, PW_PRINTF_BUF_HEADER));
  st_global(b, ir_type_u32, rec, PW_PRINTF_REC_SIZE, lower_imm32(b, size), *fits);
  st_global(b, ir_type_u32, rec, PW_PRINTF_REC_KIND, lower_imm32(b, kind), *fits);
  return rec;
}

/* Writes the call's result: into its .param return variable (read back by
 * the ld.param after the call), or as the call's register result. */
static void set_result(ir_builder *b, ir_instr *i, ir_value *r, ir_value **out) {
  const ir_call_info *ci = call_info(i);
  if (i->ndst) out[0] = r;
  if (!ci || !ci->nret) return;
  ir_value *rv = i->src[1];
  if (rv->kind == IR_VAL_SYMBOL)
    ir_build_mem(b, ir_op_st, ir_type_b32, ir_symref(b, rv->symref.sym, rv->symref.offset, ir_type_u64), 0, 1,
                 (ir_value *[]){r}, 0, IR_MODS(.space = IR_SPACE_PARAM));
}

static bool lower_vprintf(ir_builder *b, printf_state *s, ir_instr *i, ir_value **out) {
  ir_func *f = i->block->func;
  ir_value *fmtv = arg_value(i, 0), *args = arg_value(i, 1);
  const char *fmt = fmtv ? const_string(fmtv) : NULL;
  if (!fmt || !args) {
    lower_error(s->opt->diag, i,
                "vprintf in '%s': the format is not a constant string of the module; device printf on AMD GPUs "
                "(%s) needs it at compile time to know the size of the argument buffer",
                f->name, f->module->facts.target ? f->module->facts.target->name : "any target");
    return false;
  }
  uint64_t args_bytes;
  unsigned nargs;
  pw_printf_layout(fmt, &args_bytes, &nargs);
  uint64_t size = (PW_PRINTF_REC_ARGS + args_bytes + 7) / 8 * 8;
  if (size > PW_PRINTF_REC_MAX) {
    lower_error(s->opt->diag, i, "vprintf in '%s': %u arguments (%llu bytes) exceed a device printf record of %u bytes",
                f->name, nargs, (unsigned long long)args_bytes, (unsigned)PW_PRINTF_REC_MAX);
    return false;
  }
  ir_value *fits;
  ir_value *rec = reserve(b, s, f->module, (uint32_t)size, PW_PRINTF_KIND_PRINTF, &fits);
  st_global(b, ir_type_u64, rec, PW_PRINTF_REC_FORMAT, fmtv, fits);
  /* the argument bytes, one argument at a time at its own alignment */
  uint64_t off = 0;
  for (const char *p = fmt;;) {
    pw_printf_piece pc = pw_printf_next(&p);
    if (pc.kind == PW_PRINTF_END) break;
    if (!pc.arg_size) continue;
    off = (off + pc.arg_size - 1) / pc.arg_size * pc.arg_size;
    ir_type t = pc.arg_size == 8 ? ir_type_b64 : ir_type_b32;
    ir_value *v = ir_build_mem(b, ir_op_ld, t, args, (int64_t)off, 0, NULL, 1, NULL)->dst[0];
    st_global(b, t, rec, PW_PRINTF_REC_ARGS + (int64_t)off, v, fits);
    off += pc.arg_size;
  }
  set_result(b, i, lower_selp(b, ir_type_b32, lower_imm32(b, nargs), lower_imm32(b, UINT32_MAX), fits), out);
  return true;
}

static bool lower_assertfail(ir_builder *b, printf_state *s, ir_instr *i, ir_value **out) {
  (void)out;
  ir_func *f = i->block->func;
  ir_value *msg = arg_value(i, 0), *file = arg_value(i, 1), *line = arg_value(i, 2), *func = arg_value(i, 3);
  if (!msg || !file || !line || !func) {
    lower_error(s->opt->diag, i, "__assertfail in '%s': an argument is not set before the call", f->name);
    return false;
  }
  ir_value *fits;
  ir_value *rec = reserve(b, s, f->module, PW_ASSERT_REC_BYTES, PW_PRINTF_KIND_ASSERT, &fits);
  st_global(b, ir_type_b64, rec, PW_ASSERT_REC_MSG, msg, fits);
  st_global(b, ir_type_b64, rec, PW_ASSERT_REC_FILE, file, fits);
  st_global(b, ir_type_b64, rec, PW_ASSERT_REC_FUNC, func, fits);
  st_global(b, ir_type_b32, rec, PW_ASSERT_REC_LINE, line, fits);
  for (unsigned d = 0; d < 3; d++) {
    st_global(b, ir_type_u32, rec, PW_ASSERT_REC_CTAID + 4 * d, ir_read_sreg(b, ir_sreg_ctaid, d), fits);
    st_global(b, ir_type_u32, rec, PW_ASSERT_REC_TID + 4 * d, ir_read_sreg(b, ir_sreg_tid, d), fits);
  }
  /* the record is written; the thread ends here (what follows the call
   * moves to a block nothing reaches) */
  ir_block *cur = b->block;
  ir_block_split_before(i, NULL);
  ir_builder e = ir_builder_at_end(cur);
  e.loc = i->loc;
  ir_exit(&e);
  return true;
}

static bool lower_instr(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  printf_state *s = data;
  const ir_func *f = callee_of(i);
  if (is_vprintf(f)) return lower_vprintf(b, s, i, out);
  if (is_assertfail(f)) return lower_assertfail(b, s, i, out);
  return false;
}

bool lower_printf(ir_module *m, const lower_printf_options *opt) {
  printf_state s = {opt, NULL};
  return lower_walk(m, want, lower_instr, &s);
}
