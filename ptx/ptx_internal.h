/* ptx/ptx_internal.h: what the files of the PTX parser share.
 *
 *   ptx_parse.c   module, directives, declarations, initializers, functions
 *   ptx_ssa.c     SSA construction: block summaries while parsing, phis and
 *                 renaming at the end of each function (Cytron et al.)
 *   ptx_instr.c   instructions: the statement, mnemonics and families
 *   ptx_operand.c operands and their values      (ptx_instr.h has these three)
 *   ptx_modifier.c modifier words and their meaning per op
 *
 * The parser reads tokens one at a time (ptx_lex.h) with one token of
 * lookahead and builds IR through the builder; it sets by hand only the
 * instruction fields the builder has no parameter for (offset, aux,
 * type2..type4, opaque, the .uni of branches) and moves a label's block to
 * where the label is defined.  Its own tables live in scratch arenas freed
 * at the end of each function and of the parse; the module's arena holds
 * only what the IR keeps.
 */
#ifndef PW_PTX_INTERNAL_H
#define PW_PTX_INTERNAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"
#include "ir/ir_builder.h"
#include "ptx_lex.h"
#include "ptx_parse.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/pw_map.h"

/* ---- registers ------------------------------------------------------------ */

/* A .reg declaration: one name, or a range %r<N> naming %r0..%r(N-1).
 * Variables are numbered densely per function: var = base + index. */
typedef struct ptx_regdecl {
  uint32_t base, count;
  uint8_t type;        /* ir_type */
  uint8_t vec;         /* .reg .v2/.v4: components per name (its registers
                        * are consecutive); 0 for a scalar register */
  bool range;
  uint32_t scope;      /* the scope declaring it (see ptx_parser.scope) */
  /* A range: how many plain registers of inner scopes now hide one of its
   * elements (%r1 in { } under %r<8>); while 0, an element needs no second
   * lookup.  A plain register: the range whose element it hides. */
  uint32_t shadowed;
  struct ptx_regdecl *shadows;
} ptx_regdecl;

/* ---- SSA construction state (ptx_ssa.c) ------------------------------------ */

typedef struct ptx_blockinfo {
  ir_block *block;
  bool labeled;        /* a branch target */
  bool defined;        /* label seen (for labels referenced before definition) */
  uint32_t pred;       /* unlabeled: the index of the one predecessor, or NONE */
  ptx_tok first_ref;   /* where the label was first used (for "undefined label") */
} ptx_blockinfo;

#define PTX_NONE 0xffffffffu

/* A variable read before any write in its region: ph stands for the value
 * entering block blk until renaming knows it. */
typedef struct ptx_upread {
  uint32_t blk, var;
  ir_value *ph;
} ptx_upread;

/* A variable's value at the end of a block that writes it. */
typedef struct ptx_def {
  uint32_t blk, var;
  ir_value *v;
} ptx_def;

typedef struct ptx_ssa {
  /* variables */
  uint8_t *var_type;
  const char **var_name;    /* for value names */
  uint32_t nvars, vars_cap;
  uint32_t cc_var;          /* the carry flag of add.cc/addc */
  /* the block being filled */
  uint32_t cur;             /* block index, or PTX_NONE after a terminator */
  ir_value **cur_val;       /* per var: its value in the current region */
  uint32_t *cur_stamp;      /* per var: region when cur_val is valid */
  uint32_t *wstamp;         /* per var: cur + 1 when written in the current block */
  uint32_t *cur_defs;       /* vars written in the current block */
  uint32_t ncur_defs, cur_defs_cap;
  /* A region is a run of blocks each entered right after its only
   * predecessor was left: they share cur_val (what holds at the end of one
   * holds at the start of the next), so reads need no lookups. */
  uint32_t region, region_head;
  uint32_t last_left;       /* the block left last, or NONE */
  bool last_left_clean;     /* ... and it wrote nothing */
  /* blocks */
  ptx_blockinfo *blocks;
  uint32_t nblocks, blocks_cap;
  /* what renaming needs */
  ptx_upread *up;
  uint32_t nup, up_cap;
  ptx_def *defs;
  uint32_t ndefs, defs_cap;
} ptx_ssa;

/* ---- the parser ------------------------------------------------------------ */

typedef struct ptx_parser {
  ptx_lexer lx;
  ptx_tok tok;             /* the current token */
  ptx_tok ahead;           /* one token of lookahead, valid when has_ahead */
  bool has_ahead;
  pw_src src;
  pw_diag *diag;
  ptx_parse_stats stats;
  int errors;
  jmp_buf *recover;        /* where a statement-level error unwinds to */
  jmp_buf *oom;            /* where out of memory in the module's or the
                            * parser's arenas unwinds to (ptx_parse) */

  ir_module *m;
  pw_arena scratch;        /* parser tables; freed at the end */
  pw_arena fscratch;       /* per-function tables; freed at each function's end */
  pw_map words;              /* type and modifier spellings, no dot -> ir_mod_word chain */
  /* Direct-mapped cache in front of words for dotwords of up to 16 bytes,
   * compared as two words: most instructions have two to four modifiers. */
  struct { uint64_t k0, k1; uint32_t len; const ir_mod_word *w; } modcache[512];
  /* The range declarations last used (%r, %rd, %f ...), compared as one
   * word; cleared when a declaration or a scope's end could change them. */
  struct { uint64_t key; uint32_t len; struct ptx_regdecl *decl; } rcache[8];
  uint32_t nrcache;
  /* Mnemonic words (ptx_instr.c), cached like the modifiers. */
  struct { uint64_t k0, k1; uint32_t len; struct opent *e; } opcache[64];
  pw_map ops;              /* mnemonic -> opcode entry */
  pw_map syms;             /* module scope: name -> ptx_sym */
  pw_map sregs;            /* "%tid" -> ir_sreg + 1 */
  struct ins *ins_buf;     /* the instruction being read (ptx_instr.c) */

  /* the function being parsed */
  ir_func *fn;
  ir_builder b;
  /* Names of the function and its '{ }' scopes: params, regs, variables,
   * labels, prototypes and target lists share one namespace per scope
   * (ptxas 13 reports a label and a register of one name in one scope as a
   * duplicate).  A name maps to its innermost declaration; the one it
   * hides is kept in scope_ents and restored when the scope ends. */
  pw_map fsyms;
  pw_map fvars;            /* names of function-scope variables made so far */
  pw_map plainmin;         /* "%r< S" -> 1 + least N of a plain %rN of scope S */
  struct ptx_scope_ent *scope_ents; /* every fsyms declaration, in order */
  uint32_t nscope_ents, scope_ents_cap;
  uint32_t scope;          /* the current scope: 0 the function's, then one per '{' */
  uint32_t nscopes;        /* scopes opened so far in the function */
  struct { uint32_t mark, id; } scope_stack[260];
  ptx_ssa ssa;
  uint32_t ret_var_base;   /* variables of the .reg return parameters */
  int depth;               /* '{' scopes open inside the body */
  int expr_depth;          /* constant-expression nesting */
} ptx_parser;

/* What a name at module or function scope denotes. */
typedef enum ptx_sym_kind {
  PTX_SYM_GLOBAL, PTX_SYM_FUNC, PTX_SYM_PARAM, PTX_SYM_REG, PTX_SYM_PROTO,
  PTX_SYM_TARGETS, PTX_SYM_LABEL,
} ptx_sym_kind;

/* The shapes of a function's register parameters as declared, where one
 * is a vector (.reg .v2/.v4: PTX ISA "Parameterized variable names" and
 * "Vectors"; ptxas 13 takes them in .func signatures).  A vector
 * parameter is its components as consecutive scalar IR parameters; a call
 * must pass a whole vector register of the same shape for it (ptxas:
 * "Type of argument does not match formal parameter"). */
typedef struct ptx_fshape {
  const uint8_t *ret, *arg;  /* per declared parameter: .vN's N, 0 for a scalar */
  uint32_t nret, narg;
} ptx_fshape;

typedef struct ptx_sym {
  ptx_sym_kind kind;
  uint32_t scope;          /* function names: the declaring scope */
  const ptx_fshape *shape; /* functions with vector parameters, else NULL */
  union {
    uint32_t blk;          /* a label's block index */
    ir_global *global;
    ir_func *func;
    ir_param *param;
    ptx_regdecl *reg;
    struct ptx_proto *proto;
    struct ptx_targets *targets;
  };
} ptx_sym;

/* A declaration in fsyms, for the end of its scope: the name, what it
 * denotes, and what the name denoted before (NULL: nothing). */
typedef struct ptx_scope_ent {
  const char *key;
  uint32_t len;
  ptx_sym *sym, *outer;
} ptx_scope_ent;

/* .callprototype: the parameter shapes of an indirect call. */
typedef struct ptx_proto {
  const char *name;
  uint32_t nret, narg;
} ptx_proto;

/* .branchtargets / .calltargets lists (label -> list). */
typedef struct ptx_targets {
  bool calls;
  uint32_t n;
  const ptx_tok *names;
  uint32_t *blks;          /* .branchtargets: the labels' blocks, bound where declared */
} ptx_targets;

/* ---- ptx_parse.c: tokens and errors ---------------------------------------- */

void ptx_next(ptx_parser *p);
const ptx_tok *ptx_peek(ptx_parser *p);
/* Reports at t; returns so the caller can go on (several errors per run). */
void ptx_error_at(ptx_parser *p, const ptx_tok *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Reports "expected WHAT, found TOKEN" and unwinds to the statement's
 * recovery point (skip to ';'). */
_Noreturn void ptx_expected(ptx_parser *p, const char *what);
_Noreturn void ptx_fail(ptx_parser *p, const ptx_tok *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool ptx_accept(ptx_parser *p, ptx_tok_kind k);
void ptx_expect(ptx_parser *p, ptx_tok_kind k, const char *what);
int64_t ptx_const_expr(ptx_parser *p);   /* integer constant expression */
const char *ptx_strdup_tok(ptx_parser *p, const ptx_tok *t);
/* The meanings of a dotword's spelling (ir_mod_words_init), or NULL. */
const ir_mod_word *ptx_word_of(ptx_parser *p, const ptx_tok *t);

/* ---- ptx_ssa.c ------------------------------------------------------------ */

void ptx_ssa_begin_func(ptx_parser *p);
uint32_t ptx_ssa_new_vars(ptx_parser *p, uint32_t n, ir_type t);
/* A new block; labeled ones get their predecessors from branches. */
uint32_t ptx_ssa_new_block(ptx_parser *p, const char *name, bool labeled, uint32_t pred);
/* Makes blk the block that instructions go to. */
void ptx_ssa_enter(ptx_parser *p, uint32_t blk);
/* Opens an (unreachable) block if the last instruction was a terminator. */
void ptx_ssa_ensure_block(ptx_parser *p);
/* The current block was terminated: flush its definitions. */
void ptx_ssa_leave(ptx_parser *p);
/* Enters a label's block, the current one falling through into it. */
void ptx_ssa_label(ptx_parser *p, uint32_t blk, const char *name);

ir_value *ptx_ssa_read(ptx_parser *p, uint32_t var);
void ptx_ssa_write(ptx_parser *p, uint32_t var, ir_value *v);
/* Reports labels branched to but never defined. */
void ptx_ssa_check_labels(ptx_parser *p);
/* Places phis and renames (the CFG is complete): the function is SSA. */
void ptx_ssa_end_func(ptx_parser *p);

/* ---- ptx_instr.c ------------------------------------------------------------ */

void ptx_instr_init(ptx_parser *p);   /* fills p->ops */
/* statement: [@[!]pred] opcode[.mod]* operands ';'   (the current token is
 * the '@' or the opcode). */
void ptx_parse_instruction(ptx_parser *p);
/* ret, returning the .reg return parameters' values if any. */
ir_instr *ptx_build_ret(ptx_parser *p, bool uni);
/* The block index for a label of the current scope, created (undefined)
 * on first reference; an undefined one binds to the enclosing scope's label
 * when its scope ends (ptx_parse.c, scope_close). */
uint32_t ptx_label_block(ptx_parser *p, const ptx_tok *name);
/* A new function-scope name in the current scope; an error if the scope
 * already declares it. */
void ptx_declare(ptx_parser *p, const ptx_tok *at, const char *key, size_t len, ptx_sym *s);

/* Out of memory: unwinds to ptx_parse's recovery point (a diagnostic and
 * no module, issue 20); without one, the process stops. */
_Noreturn static inline void ptx_oom(ptx_parser *p) {
  if (p && p->oom) longjmp(*p->oom, 1);
  PW_DIE("out of memory");
}

#endif
