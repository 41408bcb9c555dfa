/* ptx/ptx_instr.h: what the instruction files of the parser share.
 *
 *   ptx_instr.c     the statement, the mnemonic table, the families
 *   ptx_operand.c   the operand grammar, registers and their values
 *   ptx_modifier.c  the modifier words and their meaning for each op
 *
 * One ins holds the statement being read; it lives in the parser (its
 * operand pool is large) and is reset per statement.
 */
#ifndef PW_PTX_INSTR_H
#define PW_PTX_INSTR_H

#include "ptx_internal.h"

typedef struct opent {
  uint16_t op;     /* ir_op, or ir_op_count for a word that is only a prefix */
  uint8_t flags;
} opent;

typedef enum okind {
  O_REG, O_SREG, O_IMM, O_SYM, O_LABEL, O_ADDR, O_VEC, O_SINK, O_LIST,
} okind;

enum { IMM_INT, IMM_F32, IMM_F64 };

/* The scalar video instructions' operand selectors (PTX ISA 9.7.18.1:
 * .asel = .bsel = .dsel = { .b0, .b1, .b2, .b3, .h0, .h1 }). */
enum { PTX_VSEL_NONE, PTX_VSEL_B0, PTX_VSEL_B1, PTX_VSEL_B2, PTX_VSEL_B3, PTX_VSEL_H0, PTX_VSEL_H1 };

typedef struct opnd {
  uint8_t kind;      /* okind */
  uint8_t neg;       /* !%p */
  uint8_t immk;      /* O_IMM: IMM_* */
  uint8_t reg_off;   /* O_REG written reg + constexpr: off is the constant */
  uint8_t vsel;      /* O_REG: a video operand selector, PTX_VSEL_* (0: none) */
  uint8_t minus;     /* O_REG written -%r: vmad's operand negation */
  uint8_t pair;      /* O_REG or O_SINK written d|p (either may be '_') */
  uint8_t vkind;     /* O_REG: any video selector as written: 'b' or 'h' (0: none) */
  uint8_t vndig;     /* its digits: how many (1-4), and each, first at bits 3:0 */
  uint16_t vdig;
  uint32_t var;      /* O_REG */
  uint32_t var2;     /* O_REG: the p of a d|p pair, or PTX_NONE */
  uint16_t sreg, comp;
  uint64_t imm;
  ptx_sym *sym;      /* O_SYM */
  int64_t off;       /* O_SYM, O_ADDR, O_REG with reg_off */
  uint32_t first, n; /* O_VEC, O_ADDR, O_LIST: children in the pool */
  ptx_tok tok;
} opnd;

#define MAX_MODS 24
#define MAX_TOP 24
#define MAX_POOL 512

struct ins {
  ptx_tok at;              /* the mnemonic */
  bool guarded, guard_neg;
  uint32_t guard_var;
  ir_op op;
  ptx_tok mtok[MAX_MODS];  /* modifiers as written */
  const ir_mod_word *mods[MAX_MODS]; /* their meanings (ptx_word_of) */
  uint32_t nmods;
  uint32_t mfirst;         /* mods[k] is mtok[mfirst + k]: after the mnemonic's own words */
  opnd top[MAX_TOP];
  uint32_t ntop;
  opnd pool[MAX_POOL];
  uint32_t npool;
  /* decoded */
  ir_mods m;
  ir_type type, type2, type3, type4;
  uint32_t ntypes;
  /* cp.async.bulk.shared::cluster.shared::cta: the source is shared::cta
   * (the IR reads it through a generic address, build_generic) */
  bool bulk_src_shared;
};
typedef struct ins ins;

static inline ir_type ptx_var_type(ptx_parser *p, uint32_t var) { return (ir_type)p->ssa.var_type[var]; }

/* ptx_operand.c */
/* A register by name (%r57 of %r<N>, or a plain .reg name); PTX_NONE if
 * none is declared in scope. */
uint32_t ptx_find_reg(ptx_parser *p, const ptx_tok *t);
uint32_t ptx_find_reg_decl(ptx_parser *p, const ptx_tok *t, const ptx_regdecl **decl);
/* operand := scalar | vector | address | '(' list ')', into *o (children
 * in I->pool). */
void ptx_operand(ptx_parser *p, ins *I, opnd *o);
/* The value of a scalar operand read as type t; an immediate of type t. */
ir_value *ptx_value(ptx_parser *p, const opnd *o, ir_type t);
ir_value *ptx_imm_value(ptx_parser *p, const opnd *o, ir_type t);

/* ptx_modifier.c */
/* Gives each of I's modifiers its meaning for I->op (fields of I->m, type
 * suffixes in I->type..type4).  False if one is unknown there. */
bool ptx_decode_mods(ptx_parser *p, ins *I);

#endif
