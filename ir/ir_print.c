/* ir/ir_print.c: the textual form of the IR (.pwir), which ir_parse.c
 * reads back (style.md #10; QBE's printfn, LLVM's .ll).  docs/ir.md has
 * the grammar.  A sample:
 *
 *   module ptx 8.5 sm_90a addr64
 *
 *   var shared b8 @sdata[1024] align 4
 *
 *   visible kernel @vecadd(param::entry u64 @a align 8 offset 0) maxntid 256,1,1 {
 *   bb0:
 *     %0 = sreg tid.x
 *     %1 = ld.param::entry.u64 [@a]
 *     %2 = setp.lt.u32 %0, 100
 *     cbr %2, bb1, bb2
 *   bb1:  ; preds bb0
 *     %3, %4:pred = add.cc.u32 %0, 1
 *     %5 = @!%2 ld.global.nc.f32 [%1+16] keep 0f00000000
 *     ...
 *
 * Stability: values are numbered %0, %1, ... in order of definition
 * (register parameters, then results in layout order) and blocks bb0, bb1,
 * ... in layout order, whatever their ids; so print -> parse -> print is
 * byte-identical.  Things that can be derived are left out: a result's type
 * when the opcode table's rule gives it (ir_expected_dst_type), a literal's
 * type when the operand position gives it (ir_default_src_type), modifier
 * fields at 0.  Anything else is written, so nothing is lost.
 *
 * Output goes through stdio with the unlocked calls; printing never
 * allocates per instruction (scratch numbering arrays per function only).
 * Broken IR still prints (the verifier shows it): a value from nowhere is
 * %!<id>, a missing one <null>.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ir_priv.h"

/* ---- output ----------------------------------------------------------- */

static void ps(ir_printer *p, const char *s) { fputs_unlocked(s, p->out); }
static void pc(ir_printer *p, char c) { putc_unlocked(c, p->out); }

static void pu(ir_printer *p, uint64_t v) {
  char buf[24];
  int n = 0;
  do buf[n++] = (char)('0' + v % 10); while ((v /= 10));
  while (n) pc(p, buf[--n]);
}

static void pi(ir_printer *p, int64_t v) {
  if (v < 0) {
    pc(p, '-');
    pu(p, (uint64_t)0 - (uint64_t)v);
  } else {
    pu(p, (uint64_t)v);
  }
}

static void phex(ir_printer *p, uint64_t v, int digits) {
  static const char hx[] = "0123456789abcdef", HX[] = "0123456789ABCDEF";
  char buf[17];
  int n = 0;
  do buf[n++] = (digits ? HX : hx)[v & 15]; while ((v >>= 4));
  while (n < digits) buf[n++] = '0';
  while (n) pc(p, buf[--n]);
}

static bool plain_name(const char *s) {
  if (!s || !*s) return false;
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' || *s == '$'))
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_' || *s == '$'))
      return false;
  return true;
}

/* "..." with \" \\ and \xx (two hex digits) for anything unprintable. */
static void pstr(ir_printer *p, const char *s) {
  pc(p, '"');
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      pc(p, '\\');
      pc(p, (char)c);
    } else if (c < 0x20 || c >= 0x7f) {
      pc(p, '\\');
      phex(p, c, 2);
    } else {
      pc(p, (char)c);
    }
  }
  pc(p, '"');
}

static void pname(ir_printer *p, const char *s) {
  if (plain_name(s)) ps(p, s);
  else pstr(p, s);
}

static void ptype(ir_printer *p, ir_type t) {
  ps(p, t == ir_type_none ? "none" : t < ir_type_count ? ir_type_name(t) : "?");
}

/* ---- numbering -------------------------------------------------------- */

void ir_printer_begin(ir_printer *p, FILE *out, const ir_func *f) {
  memset(p, 0, sizeof(*p));
  p->out = out;
  p->f = f;
  p->addr_size = f && f->module ? f->module->address_size : 64;
  pw_arena_init(&p->scratch);
  if (!f) return;
  p->num = IR_NEW_ARRAY(&p->scratch, uint32_t, f->nvalues ? f->nvalues : 1);
  pw_map_init(&p->blocks, &p->scratch, f->nblocks);
  uint32_t n = 0;
  for (uint32_t k = 0; k < f->nparams; k++) {
    const ir_value *v = f->params[k].value;
    if (v && v->id < f->nvalues && !p->num[v->id]) p->num[v->id] = ++n;
  }
  uint32_t nb = 0;
  ir_foreach_block(f, b) {
    bool found;
    void **slot = pw_map_ptr_slot(&p->blocks, b, &found);
    if (!found) *slot = (void *)(uintptr_t)++nb;
    ir_foreach_instr(b, i) {
      for (unsigned k = 0; k < i->ndst; k++) {
        const ir_value *v = i->dst[k];
        if (v && v->id < f->nvalues && !p->num[v->id]) p->num[v->id] = ++n;
      }
    }
  }
}

void ir_printer_end(ir_printer *p) { pw_arena_free(&p->scratch); }

void ir_printer_block_name(ir_printer *p, const ir_block *b) {
  uintptr_t n = b ? (uintptr_t)pw_map_ptr_get(&p->blocks, b) : 0;
  if (!n) {
    ps(p, b ? "bb?" : "<null>");
    return;
  }
  ps(p, "bb");
  pu(p, n - 1);
}

/* ---- operands --------------------------------------------------------- */

static void pconst(ir_printer *p, ir_type t, uint64_t bits) {
  bits = ir_mask_bits(t, bits);
  unsigned w = ir_type_bits(t);
  switch (ir_type_kind_of(t)) {
  case IR_TK_SINT: {
    int64_t v = (int64_t)bits;
    if (w > 0 && w < 64 && (bits >> (w - 1)) & 1) v = (int64_t)(bits | ~((UINT64_C(1) << w) - 1));
    pi(p, v);
    return;
  }
  case IR_TK_BITS:
    ps(p, "0x");
    phex(p, bits, 0);
    return;
  case IR_TK_FLOAT:
  case IR_TK_PACKED_FLOAT:
    if (t == ir_type_f32 || t == ir_type_tf32) {
      ps(p, "0f");
      phex(p, bits, 8);
    } else if (t == ir_type_f64) {
      ps(p, "0d");
      phex(p, bits, 16);
    } else {
      ps(p, "0x");
      phex(p, bits, 0);
    }
    return;
  default:
    pu(p, bits);
    return;
  }
}

static const char *sym_name(const ir_symbol *s) {
  switch (s->kind) {
  case IR_SYM_GLOBAL: return s->global ? s->global->name : NULL;
  case IR_SYM_FUNC: return s->func ? s->func->name : NULL;
  case IR_SYM_PARAM: return s->param ? s->param->name : NULL;
  }
  return NULL;
}

static void poffset(ir_printer *p, int64_t off) {
  if (off > 0) {
    pc(p, '+');
    pi(p, off);
  } else if (off < 0) {
    pi(p, off);
  }
}

static void psym(ir_printer *p, const ir_symbol *s, int64_t off) {
  const char *n = sym_name(s);
  pc(p, '@');
  if (n) pname(p, n);
  else ps(p, "<null>");
  poffset(p, off);
}

void ir_printer_value(ir_printer *p, const ir_value *v) {
  if (!v) {
    ps(p, "<null>");
    return;
  }
  uint32_t n = p->f && v->id < p->f->nvalues ? p->num[v->id] : 0;
  if (n && (v->kind == IR_VAL_INSTR || v->kind == IR_VAL_PARAM)) {
    pc(p, '%');
    pu(p, n - 1);
    return;
  }
  switch (v->kind) {
  case IR_VAL_CONST: pconst(p, (ir_type)v->type, v->imm); return;
  case IR_VAL_UNDEF: ps(p, "undef"); return;
  case IR_VAL_SYMBOL: psym(p, &v->symref.sym, v->symref.offset); return;
  default:
    ps(p, "%!");  /* defined outside this function, or removed */
    pu(p, v->id);
    return;
  }
}

/* An operand whose literal type is implied by `expect` unless stated. */
static void poperand(ir_printer *p, const ir_value *v, ir_type expect) {
  if (v && (v->kind == IR_VAL_CONST || v->kind == IR_VAL_UNDEF || v->kind == IR_VAL_SYMBOL) &&
      v->type != expect) {
    ptype(p, (ir_type)v->type);
    pc(p, ' ');
  }
  ir_printer_value(p, v);
}

/* ---- instructions ----------------------------------------------------- */

static void pmnemonic(ir_printer *p, const ir_instr *i) {
  ir_op op = (ir_op)i->op;
  ps(p, ir_op_infos[op].name);
  uint64_t fields = ir_mods_nonzero(&i->mods) | (ir_op_mod_mask(op) & ir_mod_zero_spelled);
  for (unsigned f = 0; f < ir_mod_count && fields >> f; f++) {   /* >> 64 is undefined: all 64 fields are used */
    if (!((fields >> f) & 1)) continue;
    unsigned v = ir_mods_get(&i->mods, (ir_mod_field)f);
    const char *s = ir_mod_spelling((ir_mod_field)f, v);
    if (!s && !v) continue;
    pc(p, '.');
    if (s) {
      ps(p, s);
    } else {  /* a value with no spelling: only in broken IR */
      ps(p, ir_mod_field_infos[f].name);
      pc(p, '=');
      pu(p, v);
    }
  }
  if (i->type || i->type2 || i->type3 || i->type4) {
    pc(p, '.');
    ptype(p, (ir_type)i->type);
  }
  if (i->type2 || i->type3 || i->type4) {
    pc(p, '.');
    ptype(p, (ir_type)i->type2);
  }
  if (i->type3 || i->type4) {
    pc(p, '.');
    ptype(p, (ir_type)i->type3);
  }
  if (i->type4) {
    pc(p, '.');
    ptype(p, (ir_type)i->type4);
  }
  if (i->opaque) {
    pc(p, ' ');
    pstr(p, i->opaque);
  }
}

static void psreg(ir_printer *p, const ir_instr *i) {
  ps(p, ir_sreg_name((ir_sreg)i->sreg));
  unsigned nc = i->sreg < ir_sreg_count ? ir_sreg_infos[i->sreg].ncomp : 1;
  if (nc == 3 && i->sreg_comp < 3) {
    pc(p, '.');
    pc(p, "xyz"[i->sreg_comp]);
  } else if (nc != 1 || i->sreg_comp) {
    pc(p, '.');
    pu(p, i->sreg_comp);
  }
}

static void plist(ir_printer *p, const ir_instr *i, unsigned from, unsigned n) {
  pc(p, '(');
  for (unsigned k = from; k < from + n && k < i->nsrc; k++) {
    if (k > from) ps(p, ", ");
    poperand(p, i->src[k], ir_default_src_type(i, k));
  }
  pc(p, ')');
}

static void pcall(ir_printer *p, const ir_instr *i, const ir_call_info *ci) {
  if (ci->nret) {
    plist(p, i, 1, ci->nret);
    ps(p, ", ");
  }
  poperand(p, i->nsrc ? i->src[0] : NULL, ir_default_src_type(i, 0));
  ps(p, ", ");
  plist(p, i, 1u + ci->nret, ci->narg);
  if (ci->proto) {
    ps(p, " proto ");
    pstr(p, ci->proto);
  }
  if (ci->targets) {
    ps(p, " targets ");
    for (uint32_t k = 0; k < ci->ntargets; k++) {
      if (k) ps(p, ", ");
      pc(p, '@');
      pname(p, ci->targets[k] ? ci->targets[k]->name : "<null>");
    }
  }
}

static void pinstr(ir_printer *p, const ir_instr *i) {
  if (i->op >= ir_op_count) {
    ps(p, "<bad op ");
    pu(p, i->op);
    pc(p, '>');
    return;
  }
  for (unsigned k = 0; k < i->ndst; k++) {
    if (k) ps(p, ", ");
    const ir_value *d = i->dst[k];
    ir_printer_value(p, d);
    if (d && d->type != ir_expected_dst_type(i, k)) {
      pc(p, ':');
      ptype(p, (ir_type)d->type);
    }
  }
  if (i->ndst) ps(p, " = ");
  if (i->guard) {
    pc(p, '@');
    if (i->guard_neg) pc(p, '!');
    if (i->guard->kind == IR_VAL_INSTR || i->guard->kind == IR_VAL_PARAM) {
      ir_printer_value(p, i->guard);
    } else {
      pc(p, '(');
      poperand(p, i->guard, ir_type_pred);
      pc(p, ')');
    }
    pc(p, ' ');
  }
  pmnemonic(p, i);

  const ir_call_info *ci = i->op == ir_op_call ? i->aux : NULL;
  bool any = false;
  if (i->op == ir_op_phi) {
    const ir_block *b = i->block;
    for (unsigned k = 0; k < i->nsrc; k++) {
      ps(p, k ? ", [" : " [");
      poperand(p, i->src[k], (ir_type)i->type);
      ps(p, ", ");
      ir_printer_block_name(p, b && k < b->npreds ? b->preds[k] : NULL);
      pc(p, ']');
    }
  } else if (i->op == ir_op_sreg) {
    pc(p, ' ');
    psreg(p, i);
    any = true;
  } else if (ci) {
    pc(p, ' ');
    pcall(p, i, ci);
  } else {
    bool addr = ir_op_has_address((ir_op)i->op);
    for (unsigned k = 0; k < i->nsrc; k++) {
      ps(p, any ? ", " : " ");
      any = true;
      if (k == 0 && addr) {
        pc(p, '[');
        poperand(p, i->src[0], ir_default_src_type(i, 0));
        poffset(p, i->offset);
        pc(p, ']');
      } else {
        poperand(p, i->src[k], ir_default_src_type(i, k));
      }
    }
    for (uint32_t k = 0; k < i->ntargets; k++) {
      ps(p, any ? ", " : " ");
      any = true;
      ir_printer_block_name(p, i->targets ? i->targets[k] : NULL);
    }
    if (i->offset && !(addr && i->nsrc)) {
      ps(p, " offset ");
      pi(p, i->offset);
    }
  }
  if (i->sreg && i->op != ir_op_sreg) {  /* only in broken IR */
    ps(p, " sreg ");
    psreg(p, i);
  }
  if (i->keep) {
    ps(p, " keep ");
    for (unsigned k = 0; k < i->ndst; k++) {
      if (k) ps(p, ", ");
      poperand(p, i->keep[k], i->dst[k] ? (ir_type)i->dst[k]->type : ir_type_none);
    }
  }
  if (p->locs && i->loc.line) {
    ps(p, "  ; ");
    pu(p, i->loc.line);
    pc(p, ':');
    pu(p, i->loc.col);
  }
}

/* ---- declarations ----------------------------------------------------- */

static const char *linkage_word(unsigned l) {
  switch (l) {
  case IR_LINK_VISIBLE: return "visible ";
  case IR_LINK_EXTERN: return "extern ";
  case IR_LINK_WEAK: return "weak ";
  case IR_LINK_COMMON: return "common ";
  default: return "";
  }
}

static unsigned elem_bytes(ir_type t) {
  unsigned b = (ir_type_bits(t) + 7) / 8;
  return b ? b : 1;
}

static void pspace(ir_printer *p, unsigned s) {
  const char *n = ir_space_name((ir_space)s);
  if (*n) {
    ps(p, n);
  } else {
    ps(p, "space");
    pu(p, s);
  }
}

static void pcount(ir_printer *p, uint64_t count) {
  if (count == 1) return;
  pc(p, '[');
  if (count) pu(p, count);
  pc(p, ']');
}

static int cmp_reloc(const void *a, const void *b) {
  const ir_reloc *x = *(const ir_reloc *const *)a, *y = *(const ir_reloc *const *)b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static uint64_t load_le(const uint8_t *b, unsigned n) {
  uint64_t v = 0;
  for (unsigned k = n; k--;) v = v << 8 | b[k];
  return v;
}

/* Initializer items: elements of the variable's type, relocations as
 * symbols (generic(@x) for generic addresses); an item whose width is not
 * the element's says its type (u64 @fn in a b8 array, b8 0x1 bytes around
 * a misaligned relocation). */
static void pinit(ir_printer *p, const ir_global *g) {
  ir_type et;
  unsigned eb = ir_init_elem((ir_type)g->type, &et);
  const ir_reloc **rs = NULL;
  if (g->nrelocs) {
    rs = IR_NEW_ARRAY(&p->scratch, const ir_reloc *, g->nrelocs);
    for (uint32_t k = 0; k < g->nrelocs; k++) rs[k] = &g->relocs[k];
    qsort(rs, g->nrelocs, sizeof(*rs), cmp_reloc);
  }
  ps(p, " = {");
  uint64_t off = 0, items = 0;
  uint32_t r = 0;
  while (off < g->size) {
    while (r < g->nrelocs && rs[r]->offset < off) r++;  /* overlapping: dropped */
    if (items) ps(p, items % 16 ? ", " : ",\n    ");
    items++;
    if (r < g->nrelocs && rs[r]->offset == off) {
      const ir_reloc *rl = rs[r++];
      if (rl->size != eb) {
        ptype(p, rl->size == 4 ? ir_type_b32 : rl->size == 8 ? ir_type_b64 : ir_type_b8);
        pc(p, ' ');
      }
      if (rl->generic) ps(p, "generic(");
      psym(p, &rl->sym, rl->addend);
      if (rl->generic) pc(p, ')');
      off += rl->size ? rl->size : 1;
      continue;
    }
    uint64_t next = r < g->nrelocs ? rs[r]->offset : UINT64_MAX;
    if (off + eb <= g->size && off + eb <= next) {
      pconst(p, et, load_le(g->init + off, eb));
      off += eb;
    } else {
      ps(p, "b8 ");
      pconst(p, ir_type_b8, g->init[off]);
      off += 1;
    }
  }
  pc(p, '}');
}

static void pvar(ir_printer *p, const ir_global *g, const char *indent) {
  ps(p, indent);
  ps(p, linkage_word(g->linkage));
  ps(p, "var ");
  pspace(p, g->space);
  pc(p, ' ');
  if (g->vec != 1) {
    pc(p, 'v');
    pu(p, g->vec);
    pc(p, ' ');
  }
  ptype(p, (ir_type)g->type);
  ps(p, " @");
  pname(p, g->name);
  pcount(p, g->count);
  ps(p, " align ");
  pu(p, g->align);
  if (g->ptr_space) {
    ps(p, " ptr ");
    pspace(p, g->ptr_space);
  }
  if (!g->init && g->size != g->count * g->vec * elem_bytes((ir_type)g->type)) {
    ps(p, " size ");
    pu(p, g->size);
  }
  if (g->is_extern_shared) ps(p, " extern_shared");
  if (g->init) pinit(p, g);
  pc(p, '\n');
}

static void pparam(ir_printer *p, const ir_param *q) {
  pspace(p, q->space);
  pc(p, ' ');
  ptype(p, (ir_type)q->type);
  ps(p, " @");
  pname(p, q->name);
  pcount(p, q->count);
  ps(p, " align ");
  pu(p, q->align);
  if (q->space != IR_SPACE_REG || q->offset) {
    ps(p, " offset ");
    pu(p, q->offset);
  }
  if (q->ptr_space || q->ptr_align) {
    ps(p, " ptr ");
    pspace(p, q->ptr_space);
    if (q->ptr_align) {
      ps(p, " align ");
      pu(p, q->ptr_align);
    }
  }
  if (q->value) {
    ps(p, " = ");
    ir_printer_value(p, q->value);
  }
}

static void p3(ir_printer *p, const char *what, const uint32_t v[3]) {
  if (!v[0] && !v[1] && !v[2]) return;
  pc(p, ' ');
  ps(p, what);
  pc(p, ' ');
  for (int k = 0; k < 3; k++) {
    if (k) pc(p, ',');
    pu(p, v[k]);
  }
}

static void p1(ir_printer *p, const char *what, uint32_t v) {
  if (!v) return;
  pc(p, ' ');
  ps(p, what);
  pc(p, ' ');
  pu(p, v);
}

static void pheader(ir_printer *p, const ir_func *f) {
  ps(p, linkage_word(f->linkage));
  ps(p, f->is_kernel ? "kernel @" : "func @");
  pname(p, f->name);
  pc(p, '(');
  for (uint32_t k = 0; k < f->nparams; k++) {
    if (k) ps(p, ", ");
    pparam(p, &f->params[k]);
  }
  pc(p, ')');
  if (f->nrets) {
    ps(p, " -> (");
    for (uint32_t k = 0; k < f->nrets; k++) {
      if (k) ps(p, ", ");
      pparam(p, &f->rets[k]);
    }
    pc(p, ')');
  }
  if (f->noreturn) ps(p, " noreturn");
  p3(p, "maxntid", f->maxntid);
  p3(p, "reqntid", f->reqntid);
  p1(p, "minnctapersm", f->minnctapersm);
  p1(p, "maxnreg", f->maxnreg);
  p1(p, "maxclusterrank", f->maxclusterrank);
  p3(p, "reqnctapercluster", f->reqnctapercluster);
  if (f->explicitcluster) ps(p, " explicitcluster");
  for (uint32_t k = 0; k < f->npragmas; k++) {
    ps(p, " pragma ");
    pstr(p, f->pragmas[k]);
  }
}

static void hook(ir_printer *p, ir_print_at at, const void *what) {
  if (p->hook) p->hook(p, at, what, p->hook_ctx);
}

/* The function with its variables; vars == NULL: find them in m->globals. */
static void pfunc(ir_printer *p, const ir_global *const *vars, uint32_t nvars) {
  const ir_func *f = p->f;
  pheader(p, f);
  if (f->is_decl) {
    pc(p, '\n');
    hook(p, IR_PRINT_AT_FUNC, f);
    return;
  }
  ps(p, " {\n");
  hook(p, IR_PRINT_AT_FUNC, f);
  if (vars) {
    for (uint32_t k = 0; k < nvars; k++) pvar(p, vars[k], "  ");
  } else if (f->module) {
    for (uint32_t k = 0; k < f->module->nglobals; k++)
      if (f->module->globals[k]->owner == f) pvar(p, f->module->globals[k], "  ");
  }
  bool elided = false;
  ir_foreach_block(f, b) {
    if (p->show && !p->show(p, IR_PRINT_AT_BLOCK, b, p->hook_ctx)) {
      if (!elided) ps(p, "  ; ...\n");
      elided = true;
      continue;
    }
    elided = false;
    ir_printer_block_name(p, b);
    if (b->name) {
      pc(p, ' ');
      pstr(p, b->name);
    }
    pc(p, ':');
    if (b->npreds) {
      ps(p, "  ; preds ");
      for (uint32_t k = 0; k < b->npreds; k++) {
        if (k) ps(p, ", ");
        ir_printer_block_name(p, b->preds[k]);
      }
    }
    pc(p, '\n');
    hook(p, IR_PRINT_AT_BLOCK, b);
    ir_foreach_instr(b, i) {
      if (p->show && !p->show(p, IR_PRINT_AT_INSTR, i, p->hook_ctx)) {
        if (!elided) ps(p, "  ; ...\n");
        elided = true;
        continue;
      }
      elided = false;
      ps(p, "  ");
      pinstr(p, i);
      pc(p, '\n');
      hook(p, IR_PRINT_AT_INSTR, i);
    }
  }
  ps(p, "}\n");
}

void ir_printer_func(ir_printer *p) { pfunc(p, NULL, 0); }

/* ---- entry points ----------------------------------------------------- */

void ir_print_instr(FILE *out, const ir_instr *i) {
  ir_printer p;
  ir_printer_begin(&p, out, i->block ? i->block->func : NULL);
  pinstr(&p, i);
  pc(&p, '\n');
  ir_printer_end(&p);
}

void ir_print_func(FILE *out, const ir_func *f) {
  ir_printer p;
  ir_printer_begin(&p, out, f);
  pfunc(&p, NULL, 0);
  ir_printer_end(&p);
}

static void pmodule_line(ir_printer *p, const ir_module *m) {
  ps(p, "module");
  if (m->ptx_version) {
    ps(p, " ptx ");
    pu(p, m->ptx_version / 10);
    pc(p, '.');
    pu(p, m->ptx_version % 10);
  }
  if (m->sm) {
    ps(p, " sm_");
    pu(p, m->sm);
    if (m->sm_suffix) pc(p, m->sm_suffix);
  }
  ps(p, " addr");
  pu(p, m->address_size);
  if (m->texmode_independent) ps(p, " texmode_independent");
  if (m->map_f64_to_f32) ps(p, " map_f64_to_f32");
  if (m->debug) ps(p, " debug");
  if (m->facts.wave_size != 32) {
    ps(p, " wave ");
    pu(p, m->facts.wave_size);
  }
  if (m->facts.lowered) ps(p, " lowered");
  if (m->facts.target) {
    ps(p, " target ");
    pstr(p, m->facts.target->name);
  }
  pc(p, '\n');
}

void ir_print_module_opts(FILE *out, const ir_module *m, const ir_print_options *opt) {
  ir_printer top;
  ir_printer_begin(&top, out, NULL);
  pmodule_line(&top, m);
  /* Function-scope variables grouped by owner in one pass. */
  pw_map owned;
  pw_map_init(&owned, &top.scratch, m->nfuncs);
  uint32_t *cnt = IR_NEW_ARRAY(&top.scratch, uint32_t, m->nfuncs + 1);
  uint32_t nf = 0;
  ir_foreach_func(m, f) {
    bool found;
    void **slot = pw_map_ptr_slot(&owned, f, &found);
    if (!found) *slot = (void *)(uintptr_t)++nf;
  }
  bool first = true;
  for (uint32_t k = 0; k < m->nglobals; k++) {
    const ir_global *g = m->globals[k];
    uintptr_t fi = g->owner ? (uintptr_t)pw_map_ptr_get(&owned, g->owner) : 0;
    if (fi) {
      cnt[fi]++;
      continue;
    }
    if (first) pc(&top, '\n');
    first = false;
    pvar(&top, g, "");  /* module scope, or owned by a function not in m */
  }
  uint32_t *start = IR_NEW_ARRAY(&top.scratch, uint32_t, nf + 2);
  for (uint32_t k = 1; k <= nf; k++) start[k + 1] = start[k] + cnt[k];
  const ir_global **vars = IR_NEW_ARRAY(&top.scratch, const ir_global *, m->nglobals + 1);
  uint32_t *fill = IR_NEW_ARRAY(&top.scratch, uint32_t, nf + 2);
  memcpy(fill, start, (nf + 2) * sizeof(uint32_t));
  for (uint32_t k = 0; k < m->nglobals; k++) {
    const ir_global *g = m->globals[k];
    uintptr_t fi = g->owner ? (uintptr_t)pw_map_ptr_get(&owned, g->owner) : 0;
    if (fi) vars[fill[fi]++] = g;
  }
  uint32_t fi = 0;
  ir_foreach_func(m, f) {
    fi++;
    ir_printer p;
    ir_printer_begin(&p, out, f);
    p.locs = opt && opt->locs;
    pc(&p, '\n');
    pfunc(&p, vars + start[fi], cnt[fi]);
    ir_printer_end(&p);
  }
  ir_printer_end(&top);
}

void ir_print_module(FILE *out, const ir_module *m) { ir_print_module_opts(out, m, NULL); }
