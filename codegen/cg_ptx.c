/* codegen/cg_ptx.c: the one compile entry of `ptxwave compile`, `ptxwave
 * convert` and the runtime's HIP backend (docs/codegen.md "From PTX"):
 *
 *   PTX text --ptx_parse--> IR --leave out failing kernels--> --ir_verify-->
 *   --lower_module(target)--> lowered IR --cg_compile--> LLVM IR | asm |
 *   object | .hsaco
 *
 * Lowering is per target (a warp is a wave on wave32 and half of one on
 * wave64), and lower_module rewrites the module in place, so every target
 * gets its own parse: parsing costs a fraction of the LLVM compile
 * (docs/codegen.md "Measurements").  A .pwir text (the IR's textual form,
 * by the name's suffix) already marked lowered is compiled as it is.
 *
 * cg_ptx_info (optional) gives callers that report on thousands of modules
 * the count of PTX instructions and a short reason for a failure: the PTX
 * instruction of the first construct that stops the module.  All state is
 * local to the call: any number of threads may compile at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir_link.h"
#include "lower/lower.h"
#include "ptx/ptx_parse.h"

const ir_instr *cg_first_opaque(const ir_module *m, const ir_func **fn) {
  for (const ir_func *f = m->funcs; f; f = f->next)
    for (const ir_block *b = f->entry; b; b = b->next)
      for (const ir_instr *i = b->first; i; i = i->next)
        if (i->op == ir_op_opaque) {
          if (fn) *fn = f;
          return i;
        }
  return NULL;
}

/* The reason of a failure from the messages it left: "cannot compile
 * 'INSTR' in kernel ..." (cg_emit.c) gives INSTR, else the first error's
 * text up to the end of its line, else fallback. */
static void reason_from_text(const char *text, const char *fallback, char *reason, size_t cap) {
  const char *p = strstr(text, "cannot compile '");
  if (p) {
    p += strlen("cannot compile '");
    size_t n = strcspn(p, "'\n");
    snprintf(reason, cap, "%.*s", (int)n, p);
    return;
  }
  p = strstr(text, "error: ");
  if (!p) {
    snprintf(reason, cap, "%s", fallback);
    return;
  }
  p += strlen("error: ");
  snprintf(reason, cap, "%.*s", (int)strcspn(p, "\n"), p);
}

/* ---- per-kernel failure (docs/codegen.md "Per-kernel failure") ----------
 * A kernel that reaches an instruction no stage can translate (one the front
 * end kept opaque, or one lower/ or codegen/ reports) is left out of the
 * code object and the module's other kernels are compiled: a program's
 * plain kernels must run even when another kernel of the same module uses
 * something ptxwave lacks.  Lowering rewrites the module in place, so after
 * a failure the module is built again from the text with the failing
 * kernels (every one the failed attempt named: ir_func.failed_at and
 * ir_link_failure_causes) left out; an attempt that fails without naming a
 * new kernel fails the compile as before.  Each kernel left out is reported
 * as a warning at the instruction, naming it, the kernel and the target. */
typedef struct dropped {
  char *kernel;
  char *why;
  ir_loc loc;         /* of the instruction */
} dropped;

typedef struct drop_set {
  dropped *d;
  unsigned n, cap;
} drop_set;

static bool dropped_name(const drop_set *S, const char *name) {
  for (unsigned k = 0; k < S->n; k++)
    if (!strcmp(S->d[k].kernel, name)) return true;
  return false;
}

static void drop_set_free(drop_set *S) {
  for (unsigned k = 0; k < S->n; k++) {
    free(S->d[k].kernel);
    free(S->d[k].why);
  }
  free(S->d);
}

/* The messages of an attempt that left kernels out, kept as warnings: the
 * compile goes on, and every problem is still reported where it is. */
static void append_demoted(pw_diag *to, const pw_diag *from) {
  pw_diag tmp;
  pw_diag_init(&tmp, NULL);
  const char *t = pw_diag_text(from);
  while (*t) {
    size_t n = strcspn(t, "\n");
    const char *e = memmem(t, n, ": error: ", 9);
    if (e) pw_diag_append_text(&tmp, "%.*s: warning: %.*s\n", (int)(e - t), t, (int)(n - (size_t)(e + 9 - t)), e + 9);
    else pw_diag_append_text(&tmp, "%.*s\n", (int)n, t);
    t += n + (t[n] ? 1 : 0);
  }
  tmp.nwarnings = from->nerrors + from->nwarnings;
  pw_diag_append(to, &tmp);
  pw_diag_fini(&tmp);
}

/* Each function's first opaque instruction is its failure. */
static void mark_opaque(ir_module *m) {
  ir_foreach_func(m, f) {
    if (f->failed_at) continue;
    ir_foreach_block(f, b) ir_foreach_instr(b, i) if (i->op == ir_op_opaque && !f->failed_at) f->failed_at = i;
  }
}

/* Records every kernel that reaches a failed function, with its reason, and
 * leaves them out of m.  Returns how many it added. */
static unsigned drop_failed(ir_module *m, drop_set *S, bool opaque, const char *target) {
  unsigned n = m->nfuncs, added = 0;
  const ir_func **cause = calloc(n ? n : 1, sizeof *cause);
  uint8_t *drop = calloc(n ? n : 1, 1);
  if (!cause || !drop || !ir_link_failure_causes(m, cause)) goto out;
  unsigned k = 0;
  ir_foreach_func(m, f) {
    const ir_func *c = cause[k];
    if (f->is_kernel && c && !dropped_name(S, f->name)) {
      if (S->n == S->cap) {
        unsigned nc = S->cap ? S->cap * 2 : 8;
        dropped *nd = realloc(S->d, nc * sizeof *nd);
        if (!nd) break;
        S->d = nd;
        S->cap = nc;
      }
      const ir_instr *i = c->failed_at;
      const char *what = i->op == ir_op_opaque && i->opaque ? i->opaque : ir_op_infos[i->op].ptx;
      /* a call of libcudadevrt's driver entry points is a device-side
       * launch: named as such (docs/runtime.md "Dynamic parallelism") */
      bool cdp = i->op == ir_op_call && i->nsrc && i->src[0]->kind == IR_VAL_SYMBOL &&
                 i->src[0]->symref.sym.kind == IR_SYM_FUNC &&
                 !strncmp(i->src[0]->symref.sym.func->name, "__cuda_syscall_cnp", 18);
      if (cdp) what = i->src[0]->symref.sym.func->name;
      char why[1024];
      snprintf(why, sizeof why, "kernel '%s' is left out of the code object for %s: it %s '%s' "
               "(line %u%s%s%s), which ptxwave %s", f->name, target, opaque ? "uses" : "reaches", what,
               i->loc.line, c != f ? ", function '" : "", c != f ? c->name : "", c != f ? "'" : "",
               cdp ? "runs on the emulator only (a device-side launch: dynamic parallelism)"
               : opaque ? "does not support" : "cannot compile for this target");
      S->d[S->n].kernel = strdup(f->name);
      S->d[S->n].why = strdup(why);
      S->d[S->n].loc = i->loc;
      if (!S->d[S->n].kernel || !S->d[S->n].why) {
        free(S->d[S->n].kernel);
        free(S->d[S->n].why);
        break;
      }
      S->n++;
      added++;
    }
    drop[k++] = f->is_kernel && dropped_name(S, f->name);
  }
  ir_link_remove_funcs(m, drop);
out:
  free(cause);
  free(drop);
  return added;
}

/* What builds the module of an attempt: one text (PTX, or .pwir by its
 * name) or several linked. */
typedef struct cg_src_set {
  unsigned n;
  const char *const *names, *const *texts;
  const size_t *lens;
} cg_src_set;

static ir_module *build_module(const cg_src_set *in, cg_emit_kind kind, ptx_parse_stats *st, pw_diag *d) {
  if (in->n == 1) {
    const char *name = in->names[0];
    size_t nl = strlen(name);
    return nl > 5 && !strcmp(name + nl - 5, ".pwir") ? ir_parse(name, in->texts[0], in->lens[0], d)
                                                    : ptx_parse(name, in->texts[0], in->lens[0], d, st);
  }
  ir_module **mods = calloc(in->n, sizeof *mods);
  if (!mods) return NULL;
  bool ok = true;
  for (unsigned k = 0; k < in->n && ok; k++) {
    mods[k] = ptx_parse(in->names[k], in->texts[k], in->lens[k], d, NULL);
    ok = mods[k] != NULL;
  }
  ir_module *m = NULL;
  if (ok) {
    /* a code object's undefined symbols are checked below, once what no
     * kernel reaches is gone (an -rdc=true program's copy of libcudadevrt
     * calls driver entry points nothing defines, nvlink drops them too) */
    m = ir_link_modules(mods, in->n, true, d);
  } else {
    for (unsigned k = 0; k < in->n; k++) ir_module_destroy(mods[k]);
  }
  free(mods);
  if (m && !ir_verify(m, NULL, d)) {
    ir_module_destroy(m);
    m = NULL;
  }
  return m;
}

static bool compile_sources(const cg_src_set *in, const cg_options *opt, cg_emit_kind kind, cg_output *out,
                            pw_diag *d) {
  memset(out, 0, sizeof *out);
  const char *name = in->names[0] ? in->names[0] : "<ptx>";
  cg_ptx_info scratch, *info = opt->info ? opt->info : &scratch;
  memset(info, 0, sizeof *info);
  /* The reason is read back from the messages: they must be collected
   * here when the caller prints them (or wants none). */
  pw_diag local, *dd = d;
  bool collect = !d || (d->out && opt->info);
  if (collect) {
    pw_diag_init(&local, NULL);
    local.max_errors = d ? d->max_errors : 4;
    dd = &local;
  }
  /* single texts give source lines in messages; linked ones name the module */
  pw_src src1 = {name, in->n == 1 ? in->texts[0] : NULL, in->n == 1 ? in->lens[0] : 0};
  drop_set S = {0};
  pw_diag dropped_msgs;  /* what the attempts that left kernels out reported */
  pw_diag_init(&dropped_msgs, NULL);
  bool ok = false;
  for (unsigned attempt = 0;; attempt++) {
    /* the first parse reports to the caller; later ones parse the same text */
    pw_diag quiet, att;
    pw_diag_init(&quiet, NULL);
    pw_diag_init(&att, NULL);
    ptx_parse_stats st = {0};
    ir_module *m = NULL;
    ok = opt->target != NULL;
    if (!ok) {
      pw_error(dd, name, "no target");
      snprintf(info->reason, sizeof info->reason, "no target");
    } else {
      m = build_module(in, kind, &st, attempt ? &quiet : dd);
      if (!attempt) info->instrs = st.instrs;
      if (!(ok = m != NULL)) snprintf(info->reason, sizeof info->reason, "PTX does not parse");
    }
    pw_diag_fini(&quiet);
    bool retry = false;
    if (ok) {
      /* the kernels earlier attempts left out, and those reaching an
       * instruction the front end kept opaque */
      unsigned k = 0, nf = m->nfuncs;
      uint8_t *drop = calloc(nf ? nf : 1, 1);
      if (drop) {
        ir_foreach_func(m, f) drop[k++] = f->is_kernel && dropped_name(&S, f->name);
        ir_link_remove_funcs(m, drop);
        free(drop);
      }
      mark_opaque(m);
      drop_failed(m, &S, true, opt->target->name);
      /* a complete code object: what no kernel reaches can never run
       * (ir_link_drop_unreached; ptxas drops it too); in a relocatable one
       * the module-local functions only left-out kernels reached go */
      if (kind == CG_EMIT_HSACO && !opt->no_opt) ir_link_drop_unreached(m);
      else if (S.n) ir_link_drop_unreached_local(m);
      /* what is still opaque belongs to no kernel left out: a visible
       * function of a relocatable object */
      const ir_func *of = NULL;
      const ir_instr *oi = cg_first_opaque(m, &of);
      if (oi) {
        const char *what = oi->opaque ? oi->opaque : "unknown instruction";
        snprintf(info->reason, sizeof info->reason, "%s", what);
        pw_error_at(&att, &src1, oi->loc.line, oi->loc.col,
                    "%s '%s' uses '%s', which ptxwave does not support (target %s)",
                    of->is_kernel ? "kernel" : "function", of->name, what, opt->target->name);
        ok = false;
      }
    }
    if (ok && in->n == 1 && !ir_verify(m, NULL, &att)) {
      snprintf(info->reason, sizeof info->reason, "internal: the parsed IR does not verify");
      ok = false;
    }
    /* a complete code object: every used symbol defined here (relocatable
     * device code goes through --emit obj or a link, ir/ir_link.h) */
    if (ok && kind == CG_EMIT_HSACO && !(ok = ir_link_check_defined(m, &att)))
      snprintf(info->reason, sizeof info->reason, "undefined symbol");
    bool staged = false;  /* a failure lower/ or codegen/ may have pinned on functions */
    if (ok && !opt->no_lower && !m->facts.lowered) {
      /* the same row lowers and compiles (ir/ir_targets.def) */
      if (!(ok = lower_module(m, opt->target, &(lower_pipeline_options){.diag = &att, .expand_mma = opt->expand_mma}))) {
        staged = true;
        const char *what = NULL;
        const ir_instr *ui = lower_first_unlowered(m, &what);
        if (ui && what) snprintf(info->reason, sizeof info->reason, "%s", what);
        else reason_from_text(pw_diag_text(&att), "lowering failed", info->reason, sizeof info->reason);
        if (ui && ui->block && !ui->block->func->failed_at) ui->block->func->failed_at = ui;
      }
    }
    if (ok && !(ok = cg_compile(m, in->n == 1 ? &src1 : &(pw_src){.path = m->source_name}, opt, kind, out, &att))) {
      staged = true;
      reason_from_text(pw_diag_text(&att), "code generation failed", info->reason, sizeof info->reason);
    }
    if (!ok && staged && drop_failed(m, &S, false, opt->target->name)) retry = true;
    if (m) ir_module_destroy(m);
    if (retry) {
      pw_diag_append(&dropped_msgs, &att);
    } else {
      /* a compile that went on reports what it left out as warnings */
      if (ok) append_demoted(dd, &dropped_msgs);
      else pw_diag_append(dd, &dropped_msgs);
      pw_diag_append(dd, &att);
    }
    pw_diag_fini(&att);
    if (!retry) break;
    free(out->data);
    memset(out, 0, sizeof *out);
  }
  if (ok) {
    info->reason[0] = 0;
    for (unsigned k = 0; k < S.n; k++) pw_warn_at(dd, &src1, S.d[k].loc.line, S.d[k].loc.col, "%s", S.d[k].why);
    out->ndropped = S.n;
  }
  drop_set_free(&S);
  pw_diag_fini(&dropped_msgs);
  if (collect) {
    if (d) {  /* hand the messages to the caller's stream */
      fputs(pw_diag_text(&local), d->out);
      d->nerrors += local.nerrors;
      d->nwarnings += local.nwarnings;
    }
    pw_diag_fini(&local);
  }
  return ok;
}

bool cg_compile_ptx(const char *name, const char *text, size_t len, const cg_options *opt,
                    cg_emit_kind kind, cg_output *out, pw_diag *d) {
  if (!name) name = "<ptx>";
  return compile_sources(&(cg_src_set){1, &name, &text, &len}, opt, kind, out, d);
}

/* Several PTX texts linked into one module (ir_link: each .extern bound to
 * the definition another text holds), then as cg_compile_ptx.  A complete
 * code object (CG_EMIT_HSACO) needs every used symbol defined; a
 * relocatable object may leave some for a later link. */
bool cg_compile_ptx_linked(unsigned n, const char *const *names, const char *const *texts,
                           const size_t *lens, const cg_options *opt, cg_emit_kind kind, cg_output *out,
                           pw_diag *d) {
  memset(out, 0, sizeof *out);
  if (n == 1) return cg_compile_ptx(names[0], texts[0], lens[0], opt, kind, out, d);
  if (!opt->target || n == 0) {
    pw_error(d, n ? names[0] : "<ptx>", n ? "no target" : "nothing to link");
    return false;
  }
  return compile_sources(&(cg_src_set){n, names, texts, lens}, opt, kind, out, d);
}
