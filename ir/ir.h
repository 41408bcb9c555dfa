/* ir/ir.h: the SSA IR of ptxwave (design.md, "The IR is the spine").
 *
 * A module holds globals (module-scope variables), functions (kernels and
 * device functions) and the target facts.  A function is a list of blocks in
 * SSA form; each block a doubly linked list of instructions ending in one
 * terminator.  Every instruction is an ir_instr: one opcode from
 * ir_ops.def, its type suffix in `type` (and `type2`), its modifiers as
 * fields of `mods` (never as name suffixes), value operands in `src`,
 * results in `dst`, and its PTX source position.
 *
 * Values are SSA values: instruction results, function parameters,
 * constants, undef, or the address of a symbol.  Each value of a function
 * has a dense id (0..func->nvalues-1), so analyses and the emulator keep
 * side tables and register files as arrays.
 *
 * Ownership: everything of a module lives in the module's arena and is
 * freed by ir_module_destroy(); no node is freed on its own.  No global
 * mutable state: several modules can be built on several threads.
 *
 * Build IR only through the builder (ir_builder.h).
 */
#ifndef PW_IR_H
#define PW_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir_target.h"
#include "util/arena.h"

/* ---- types ------------------------------------------------------------ */

typedef enum ir_type_kind {
  IR_TK_NONE, IR_TK_PRED, IR_TK_BITS, IR_TK_UINT, IR_TK_SINT,
  IR_TK_FLOAT, IR_TK_PACKED_FLOAT, IR_TK_OPAQUE,
} ir_type_kind;

typedef enum ir_type {
#define IR_TYPE(name, ptx, bits, kind) ir_type_##name,
#include "ir_types.def"
#undef IR_TYPE
  ir_type_count
} ir_type;

typedef struct ir_type_info {
  const char *name;      /* PTX spelling, "" for none */
  uint16_t bits;
  ir_type_kind kind;
} ir_type_info;

extern const ir_type_info ir_type_infos[ir_type_count];  /* const: not mutable state */
static inline unsigned ir_type_bits(ir_type t) { return ir_type_infos[t].bits; }
static inline ir_type_kind ir_type_kind_of(ir_type t) { return ir_type_infos[t].kind; }
static inline const char *ir_type_name(ir_type t) { return ir_type_infos[t].name; }
/* PTX's operand type compatibility (PTX ISA 9.1 section 6.4.3, relaxed
 * type-checking): same width with one side a bit type or both integers;
 * never .pred with another type.  may_widen: ld/cvt-like ops may write an
 * 8/16-bit integer into a wider register.  The verifier checks operands by
 * it and the PTX front end results (ptxas 13: "Arguments mismatch"). */
static inline bool ir_type_compatible(unsigned actual, unsigned expect, bool may_widen) {
  if (actual == expect) return true;
  if (actual >= ir_type_count || expect >= ir_type_count) return false;
  if (actual == ir_type_pred || expect == ir_type_pred) return false;
  if (actual == ir_type_none || expect == ir_type_none) return false;
  ir_type_kind ka = ir_type_kind_of((ir_type)actual), ke = ir_type_kind_of((ir_type)expect);
  bool ia = ka == IR_TK_BITS || ka == IR_TK_UINT || ka == IR_TK_SINT;
  bool ie = ke == IR_TK_BITS || ke == IR_TK_UINT || ke == IR_TK_SINT;
  unsigned wa = ir_type_bits((ir_type)actual), we = ir_type_bits((ir_type)expect);
  if (wa == we) return ka == ke || ka == IR_TK_BITS || ke == IR_TK_BITS || (ia && ie);
  return may_widen && wa > we && we <= 16 && ia && ie;
}
/* Looks up a PTX type spelling ("u32", "f16x2"); ir_type_none if unknown. */
ir_type ir_type_from_name(const char *s, size_t len);

/* ---- opcodes ---------------------------------------------------------- */

#define IR_VAR 0xff          /* operand or result count given per instruction */

typedef enum ir_op {
#define IR_OP(name, nsrc, ndst, res, flags, ptx, sec, level, addr, pred, srcs, count, div, mods) ir_op_##name,
#include "ir_ops.def"
#undef IR_OP
  ir_op_count
} ir_op;

typedef enum ir_result_rule {
  RES_NONE, RES_TYPE, RES_PRED, RES_U32, RES_U64, RES_B32, RES_B64, RES_ANY,
} ir_result_rule;

enum {
  IR_F_SIDE = 1 << 0,    /* side effects: never removed, never reordered freely */
  IR_F_LOAD = 1 << 1,    /* reads memory */
  IR_F_STORE = 1 << 2,   /* writes memory */
  IR_F_CONV = 1 << 3,    /* convergent: not made control dependent on more values */
  IR_F_TERM = 1 << 4,    /* ends a block */
  IR_F_WARP = 1 << 5,    /* warp-level (32 lanes): lower_warps replaces it */
  IR_F_TRAP = 1 << 6,    /* may fault: not speculated past its guard */
  IR_F_MATRIX = 1 << 7,  /* warp-level matrix family (9.7.14, 9.7.15): lower_mma's */
};

/* The columns of ir_ops.def after the flags; the legend there says what
 * each value means. */
typedef enum ir_op_level { IR_OPLEVEL_PTX, IR_OPLEVEL_ANY, IR_OPLEVEL_TGT } ir_op_level;
typedef enum ir_src_kind {
  IR_SRC_TYPE, IR_SRC_TYPE2, IR_SRC_WIDE, IR_SRC_HINT, IR_SRC_U32, IR_SRC_B32, IR_SRC_U64,
} ir_src_kind;
typedef enum ir_count_rule {
  IR_COUNT_FIXED, IR_COUNT_CC, IR_COUNT_BOOLOP, IR_COUNT_PAIR, IR_COUNT_SETP, IR_COUNT_LD, IR_COUNT_LDU,
  IR_COUNT_ST, IR_COUNT_ATOM, IR_COUNT_RED, IR_COUNT_SHFL, IR_COUNT_VOTE, IR_COUNT_CALL,
  IR_COUNT_SWIZZLE, IR_COUNT_WAVE_MMA, IR_COUNT_SYMADDR, IR_COUNT_BR, IR_COUNT_CBR, IR_COUNT_BRX,
} ir_count_rule;
typedef enum ir_div_rule {
  IR_DIV_DATA, IR_DIV_LANE, IR_DIV_VALUE, IR_DIV_WARP, IR_DIV_UNIFORM, IR_DIV_OWN,
} ir_div_rule;
#define IR_PRED_LAST 0x8000u /* pred column: the last operand */

typedef struct ir_op_info {
  const char *name;       /* printed name */
  uint8_t nsrc, ndst;     /* or IR_VAR */
  ir_result_rule result;
  uint16_t flags;
  const char *ptx;        /* PTX mnemonic */
  const char *section;    /* PTX ISA section */
  uint8_t level;          /* ir_op_level */
  int8_t addr;            /* the address operand, or -1 */
  uint16_t pred;          /* bit k: operand k is a predicate; IR_PRED_LAST */
  uint8_t src_from, src_kind; /* operands from src_from on: ir_src_kind */
  uint8_t count;          /* ir_count_rule */
  uint8_t div;            /* ir_div_rule */
  uint64_t mods;          /* bit f: the op takes ir_mods field f (ir_priv.h) */
} ir_op_info;

extern const ir_op_info ir_op_infos[ir_op_count];
static inline const ir_op_info *ir_op_info_of(ir_op op) { return &ir_op_infos[op]; }

/* The SIMD video ops (PTX ISA 9.7.18.2): how many elements they work on, 2
 * half-words (vadd2 ... vset2) or 4 bytes (vadd4 ... vset4); 0 for any
 * other op. */
static inline unsigned ir_video_simd_elems(ir_op op) {
  switch (op) {
  case ir_op_vadd2: case ir_op_vsub2: case ir_op_vavrg2: case ir_op_vabsdiff2: case ir_op_vmin2: case ir_op_vmax2:
  case ir_op_vset2:
    return 2;
  case ir_op_vadd4: case ir_op_vsub4: case ir_op_vavrg4: case ir_op_vabsdiff4: case ir_op_vmin4: case ir_op_vmax4:
  case ir_op_vset4:
    return 4;
  default:
    return 0;
  }
}
ir_op ir_op_from_name(const char *s, size_t len);  /* ir_op_count if unknown */

/* ---- special registers ------------------------------------------------ */

enum { IR_SR_WARP = 1, IR_SR_VOLATILE = 2, IR_SR_UNIFORM = 4 };

typedef enum ir_sreg {
#define IR_SREG(name, ptx, type, ncomp, flags) ir_sreg_##name,
#include "ir_sregs.def"
#undef IR_SREG
  ir_sreg_count
} ir_sreg;

typedef struct ir_sreg_info {
  const char *name;
  ir_type type;
  uint8_t ncomp;
  uint8_t flags;
} ir_sreg_info;

extern const ir_sreg_info ir_sreg_infos[ir_sreg_count];

/* ---- modifiers -------------------------------------------------------- */
/* Each enum's value 0 means "not given".  Spellings are in ir_names.c. */

typedef enum ir_rnd {   /* 9.7.3 rounding; cvt 9.7.9.21 */
  IR_RND_NONE, IR_RND_RN, IR_RND_RZ, IR_RND_RM, IR_RND_RP, IR_RND_RNA, IR_RND_RS,
  IR_RND_RNI, IR_RND_RZI, IR_RND_RMI, IR_RND_RPI,
} ir_rnd;

typedef enum ir_cmp {   /* 9.7.6.1 comparison operators */
  IR_CMP_NONE, IR_CMP_EQ, IR_CMP_NE, IR_CMP_LT, IR_CMP_LE, IR_CMP_GT, IR_CMP_GE,
  IR_CMP_LO, IR_CMP_LS, IR_CMP_HI, IR_CMP_HS,
  IR_CMP_EQU, IR_CMP_NEU, IR_CMP_LTU, IR_CMP_LEU, IR_CMP_GTU, IR_CMP_GEU,
  IR_CMP_NUM, IR_CMP_NAN,
} ir_cmp;

typedef enum ir_boolop { IR_BOOL_NONE, IR_BOOL_AND, IR_BOOL_OR, IR_BOOL_XOR } ir_boolop;

typedef enum ir_mulmode { IR_MUL_NONE, IR_MUL_LO, IR_MUL_HI, IR_MUL_WIDE } ir_mulmode;

typedef enum ir_space {   /* 5.1 state spaces */
  IR_SPACE_GENERIC, IR_SPACE_GLOBAL, IR_SPACE_SHARED, IR_SPACE_SHARED_CTA,
  IR_SPACE_SHARED_CLUSTER, IR_SPACE_LOCAL, IR_SPACE_CONST, IR_SPACE_PARAM,
  IR_SPACE_PARAM_ENTRY, IR_SPACE_PARAM_FUNC, IR_SPACE_TEX, IR_SPACE_REG,
} ir_space;

typedef enum ir_sem {     /* 8 memory consistency model */
  IR_SEM_NONE, IR_SEM_WEAK, IR_SEM_VOLATILE, IR_SEM_RELAXED, IR_SEM_ACQUIRE,
  IR_SEM_RELEASE, IR_SEM_ACQ_REL, IR_SEM_SC, IR_SEM_MMIO,
} ir_sem;

typedef enum ir_scope { IR_SCOPE_NONE, IR_SCOPE_CTA, IR_SCOPE_CLUSTER, IR_SCOPE_GPU, IR_SCOPE_SYS } ir_scope;

typedef enum ir_cacheop {  /* 9.7.9.1 cache operators */
  IR_CACHE_NONE, IR_CACHE_CA, IR_CACHE_CG, IR_CACHE_CS, IR_CACHE_LU, IR_CACHE_CV,
  IR_CACHE_WB, IR_CACHE_WT,
} ir_cacheop;

typedef enum ir_evict {    /* L1::evict_* / L2::evict_* */
  IR_EVICT_NONE, IR_EVICT_NORMAL, IR_EVICT_UNCHANGED, IR_EVICT_FIRST, IR_EVICT_LAST,
  IR_EVICT_NO_ALLOCATE,
} ir_evict;

typedef enum ir_atomop {   /* atom/red 9.7.13.5; redux 9.7.13.11; bar.red */
  IR_ATOM_NONE, IR_ATOM_ADD, IR_ATOM_MIN, IR_ATOM_MAX, IR_ATOM_INC, IR_ATOM_DEC,
  IR_ATOM_AND, IR_ATOM_OR, IR_ATOM_XOR, IR_ATOM_EXCH, IR_ATOM_CAS, IR_ATOM_POPC,
} ir_atomop;

typedef enum ir_shflmode { IR_SHFL_NONE, IR_SHFL_UP, IR_SHFL_DOWN, IR_SHFL_BFLY, IR_SHFL_IDX } ir_shflmode;
typedef enum ir_votemode { IR_VOTE_NONE, IR_VOTE_ALL, IR_VOTE_ANY, IR_VOTE_UNI, IR_VOTE_BALLOT } ir_votemode;
typedef enum ir_matchmode { IR_MATCH_NONE, IR_MATCH_ANY, IR_MATCH_ALL } ir_matchmode;
typedef enum ir_barmode { IR_BAR_SYNC, IR_BAR_ARRIVE, IR_BAR_RED, IR_BAR_WAIT } ir_barmode;
typedef enum ir_prmtmode {
  IR_PRMT_NONE, IR_PRMT_F4E, IR_PRMT_B4E, IR_PRMT_RC8, IR_PRMT_ECL, IR_PRMT_ECR, IR_PRMT_RC16,
} ir_prmtmode;
typedef enum ir_testp {
  IR_TESTP_NONE, IR_TESTP_FINITE, IR_TESTP_INFINITE, IR_TESTP_NUMBER, IR_TESTP_NOTANUMBER,
  IR_TESTP_NORMAL, IR_TESTP_SUBNORMAL,
} ir_testp;
typedef enum ir_proxy {   /* fence.proxy.* 9.7.13.4 */
  IR_PROXY_NONE, IR_PROXY_ALIAS, IR_PROXY_ASYNC, IR_PROXY_ASYNC_GLOBAL,
  IR_PROXY_ASYNC_SHARED_CTA, IR_PROXY_ASYNC_SHARED_CLUSTER, IR_PROXY_TENSORMAP,
  IR_PROXY_GENERIC,
} ir_proxy;

/* Warp-level matrix shapes (9.7.14.2 wmma, 9.7.14.5.1 mma, 9.7.14.5.15
 * ldmatrix): .mMnNkK, or .mMnN for the matrix loads and stores. */
typedef enum ir_shape {
  IR_SHAPE_NONE, IR_SHAPE_M8N8K4, IR_SHAPE_M8N8K16, IR_SHAPE_M8N8K32, IR_SHAPE_M8N8K128,
  IR_SHAPE_M16N8K4, IR_SHAPE_M16N8K8, IR_SHAPE_M16N8K16, IR_SHAPE_M16N8K32, IR_SHAPE_M16N8K64,
  IR_SHAPE_M16N8K128, IR_SHAPE_M16N8K256, IR_SHAPE_M16N16K8, IR_SHAPE_M16N16K16,
  IR_SHAPE_M32N8K16, IR_SHAPE_M8N32K16, IR_SHAPE_M8N8, IR_SHAPE_M16N16, IR_SHAPE_M8N16,
  IR_SHAPE_M16N8,
} ir_shape;

/* Matrix layouts: wmma.load/store one (.row/.col), mma and wmma.mma two
 * (A's then B's). */
typedef enum ir_layout {
  IR_LAYOUT_NONE, IR_LAYOUT_ROW, IR_LAYOUT_COL, IR_LAYOUT_ROW_ROW, IR_LAYOUT_ROW_COL,
  IR_LAYOUT_COL_ROW, IR_LAYOUT_COL_COL,
} ir_layout;

/* mma's .kind (PTX ISA 9.7.14.5.14, sm_120a/sm_100a): kind::f8f6f4, and
 * the block-scaled kinds with their .block_scale.scale_vec::NX (9.7.14.3),
 * one value each: the scale vector size and the scale type (.stype, the
 * instruction's fifth type) follow from it (ptxas 13 takes ue8m0 with 1X
 * and 2X, ue4m3 only with mxf4nvf4's 4X). */
typedef enum ir_mmakind {
  IR_MMAKIND_NONE, IR_MMAKIND_F8F6F4, IR_MMAKIND_MXF8F6F4_1X, IR_MMAKIND_MXF4_2X,
  IR_MMAKIND_MXF4NVF4_2X, IR_MMAKIND_MXF4NVF4_4X,
} ir_mmakind;

typedef enum ir_frag { IR_FRAG_NONE, IR_FRAG_A, IR_FRAG_B, IR_FRAG_C, IR_FRAG_D } ir_frag;

/* Texture and surface geometry (9.7.10.3) and lookup mode. */
typedef enum ir_geom {
  IR_GEOM_NONE, IR_GEOM_1D, IR_GEOM_2D, IR_GEOM_3D, IR_GEOM_A1D, IR_GEOM_A2D, IR_GEOM_CUBE,
  IR_GEOM_ACUBE, IR_GEOM_2DMS, IR_GEOM_A2DMS,
} ir_geom;
typedef enum ir_texlod { IR_TEXLOD_NONE, IR_TEXLOD_BASE, IR_TEXLOD_LEVEL, IR_TEXLOD_GRAD } ir_texlod;
/* tld4's component (.r .g .b .a); suld/sust/sured's out-of-bounds mode. */
typedef enum ir_texcomp { IR_TEXCOMP_NONE, IR_TEXCOMP_R, IR_TEXCOMP_G, IR_TEXCOMP_B, IR_TEXCOMP_A } ir_texcomp;
typedef enum ir_clampmode { IR_CLAMP_NONE, IR_CLAMP_TRAP, IR_CLAMP_CLAMP, IR_CLAMP_ZERO } ir_clampmode;
/* suld.b / suld.p: formatted or raw bits (9.7.11.1) */
typedef enum ir_surfmode { IR_SURF_NONE, IR_SURF_B, IR_SURF_P } ir_surfmode;
/* txq/suq attribute (9.7.10.5, 9.7.11.4), and the tensor-map field
 * tensormap.replace writes (9.7.9.26: .field1 .global_address .rank;
 * .field2, with an ordinal, .box_dim .global_dim .global_stride
 * .element_stride; .field3, an immediate from the ISA's "Tensormap new_val
 * validity" table, .elemtype .interleave_layout .swizzle_mode
 * .swizzle_atomicity .fill_mode): one field of a descriptor either way
 * (ir_ops.def's mods column has no room for a field of its own). */
typedef enum ir_query {
  IR_QUERY_NONE, IR_QUERY_WIDTH, IR_QUERY_HEIGHT, IR_QUERY_DEPTH, IR_QUERY_CHANNEL_DATA_TYPE,
  IR_QUERY_CHANNEL_ORDER, IR_QUERY_NORMALIZED_COORDS, IR_QUERY_FILTER_MODE,
  IR_QUERY_ADDR_MODE_0, IR_QUERY_ADDR_MODE_1, IR_QUERY_ADDR_MODE_2, IR_QUERY_ARRAY_SIZE,
  IR_QUERY_NUM_MIPMAP_LEVELS, IR_QUERY_NUM_SAMPLES, IR_QUERY_FORCE_UNNORMALIZED_COORDS,
  IR_TMF_GLOBAL_ADDRESS, IR_TMF_RANK, IR_TMF_BOX_DIM, IR_TMF_GLOBAL_DIM, IR_TMF_GLOBAL_STRIDE,
  IR_TMF_ELEMENT_STRIDE, IR_TMF_ELEMTYPE, IR_TMF_INTERLEAVE_LAYOUT, IR_TMF_SWIZZLE_MODE,
  IR_TMF_SWIZZLE_ATOMICITY, IR_TMF_FILL_MODE,
  /* clusterlaunchcontrol.query_cancel's queries of a try_cancel response
   * (PTX ISA 9.7.12): is_canceled, the first CTA's id (.v4) or one of its
   * components */
  IR_QUERY_IS_CANCELED, IR_QUERY_FIRST_CTAID, IR_QUERY_FIRST_CTAID_X, IR_QUERY_FIRST_CTAID_Y,
  IR_QUERY_FIRST_CTAID_Z,
} ir_query;
/* griddepcontrol (9.7.13.13) */
typedef enum ir_gdc { IR_GDC_NONE, IR_GDC_LAUNCH_DEPENDENTS, IR_GDC_WAIT } ir_gdc;
/* The variants of the mbarrier family (9.7.13.15): test_wait/try_wait
 * .parity (the operand is a phase parity, not a state), arrive/arrive_drop
 * .expect_tx (src[1] is a tx-count) and .noComplete, cp.async.mbarrier.arrive
 * .noinc. */
/* The cache level of prefetch, prefetchu, discard, cp.async.bulk.prefetch
 * and createpolicy.cvt (.L1 .L2), or prefetch's .tensormap (9.7.9.15). */
typedef enum ir_level { IR_LEVEL_NONE, IR_LEVEL_L1, IR_LEVEL_L2, IR_LEVEL_TENSORMAP } ir_level;
/* createpolicy's form (9.7.9.16); its primary priority is mods.l2evict, the
 * secondary one mods.l2evict2 (evict_first or evict_unchanged). */
typedef enum ir_policy { IR_POLICY_NONE, IR_POLICY_FRACTIONAL, IR_POLICY_RANGE, IR_POLICY_CVT } ir_policy;
/* cp.async.bulk's completion mechanism (9.7.9.25.4.1): an mbarrier's
 * complete-tx (src[3]) or the bulk async-group; cp.async.bulk.wait_group's
 * .read (wait for the reads only). */
typedef enum ir_bulkmode { IR_BULK_NONE, IR_BULK_COMPLETE_TX, IR_BULK_GROUP, IR_BULK_READ } ir_bulkmode;
/* cp.async.bulk.tensor's load mode (9.7.9.25.5.1): .tile, and the 2-d
 * .tile::gather4 (load four rows) / .tile::scatter4 (store four rows) */
typedef enum ir_tmode { IR_TMODE_NONE, IR_TMODE_TILE, IR_TMODE_GATHER4, IR_TMODE_SCATTER4 } ir_tmode;
typedef enum ir_mbarmode {
  IR_MBAR_NONE, IR_MBAR_PARITY, IR_MBAR_EXPECT_TX, IR_MBAR_NOCOMPLETE, IR_MBAR_NOINC,
} ir_mbarmode;

/* The modifiers of one instruction.  Small enum fields, 0 = not given.  A
 * field is meaningful only for the ops that document it in ir_ops.def; the
 * verifier rejects a field set on an op that has no use for it. */
typedef struct ir_mods {
  uint8_t rnd;        /* ir_rnd */
  uint8_t cmp;        /* ir_cmp: set, setp, slct */
  uint8_t boolop;     /* ir_boolop: set/setp combination with src c */
  uint8_t mulmode;    /* ir_mulmode: mul, mad, mul24, mad24 */
  uint8_t space;      /* ir_space: ld st atom red cvta isspacep prefetch ... */
  uint8_t sem;        /* ir_sem */
  uint8_t scope;      /* ir_scope */
  uint8_t cache;      /* ir_cacheop */
  uint8_t l1evict;    /* ir_evict */
  uint8_t l2evict;    /* ir_evict */
  uint8_t l2prefetch; /* L2::64B/128B/256B: size in units of 64 B (1, 2, 4) */
  uint8_t vec;        /* vector width of ld/st/atom/tex: 1 (0 = scalar), 2, 4, 8 */
  uint8_t atomop;     /* ir_atomop */
  uint8_t shfl;       /* ir_shflmode */
  uint8_t vote;       /* ir_votemode */
  uint8_t match;      /* ir_matchmode */
  uint8_t barmode;    /* ir_barmode */
  uint8_t prmt;       /* ir_prmtmode */
  uint8_t testp;      /* ir_testp */
  uint8_t proxy;      /* ir_proxy */
  uint8_t ftz : 1;    /* flush subnormals to sign-preserving zero */
  uint8_t sat : 1;    /* clamp to [0,1] (float) or the type's range (int) */
  uint8_t approx : 1;
  uint8_t full : 1;   /* div.full */
  uint8_t nan : 1;    /* min/max .NaN */
  uint8_t xorsign : 1;
  uint8_t absmod : 1; /* min/max .abs */
  uint8_t relu : 1;
  uint8_t satfinite : 1;
  uint8_t cc : 1;     /* writes the carry flag: last dst is the carry (pred) */
  uint8_t uni : 1;    /* bra.uni, call.uni, ret.uni */
  uint8_t sync : 1;   /* .sync forms of shfl/vote/bar (the member mask is src) */
  uint8_t aligned : 1;/* bar.sync/barrier.sync .aligned */
  uint8_t nc : 1;     /* ld.global.nc */
  uint8_t cvta_to : 1;/* cvta.to.<space> (else generic from <space>) */
  uint8_t shf_left : 1;  /* shf.l (else .r) */
  uint8_t shf_clamp : 1; /* shf .clamp (else .wrap) */
  uint8_t bfind_shiftamt : 1;
  uint8_t dp_hi : 1;     /* dp2a.hi */
  uint8_t signed_a : 1;  /* dp4a/dp2a: type of a is .s32 */
  uint8_t signed_b : 1;
  uint8_t noftz_f16 : 1; /* reserved */
  uint8_t has_cache_hint : 1; /* L2::cache_hint: the policy is the last src */
  uint8_t unified : 1;   /* tex/txq unified mode (texref+sampler combined) */
  uint8_t trans : 1;     /* ldmatrix/stmatrix .trans */
  uint8_t acc_f32 : 1;   /* multimem.ld_reduce .acc::f32 */
  uint8_t shape;      /* ir_shape: wmma, mma, ldmatrix, stmatrix, movmatrix */
  uint8_t layout;     /* ir_layout */
  uint8_t mmakind;    /* ir_mmakind: mma */
  uint8_t frag;       /* ir_frag: wmma.load/store */
  uint8_t geom;       /* ir_geom: tex tld4 suld sust sured */
  uint8_t texlod;     /* ir_texlod: tex */
  uint8_t texcomp;    /* ir_texcomp: tld4 */
  uint8_t clampmode;  /* ir_clampmode: suld sust sured */
  uint8_t surfmode;   /* ir_surfmode: suld sust */
  uint8_t query;      /* ir_query: txq suq clusterlaunchcontrol.query_cancel */
  uint8_t gdc;        /* ir_gdc: griddepcontrol */
  uint8_t mbar;       /* ir_mbarmode: mbarrier.*, cp.async.mbarrier.arrive */
  uint8_t level;      /* ir_level: prefetch prefetchu discard cp.async.bulk.prefetch createpolicy */
  uint8_t policy;     /* ir_policy: createpolicy */
  uint8_t l2evict2;   /* ir_evict: createpolicy's secondary priority */
  uint8_t bulk;       /* ir_bulkmode: cp.async.bulk, cp.async.bulk.wait_group */
  uint8_t tdim;       /* cp.async.bulk.tensor's .1d ... .5d (9.7.9.25.5.1): the dimensions, 1-5 */
  uint8_t tile;       /* ir_tmode: cp.async.bulk.tensor's load mode (im2col stays opaque), tensormap.replace's .tile */
} ir_mods;

/* Every field of ir_mods, in the order the printer writes them (close to
 * PTX's own order: ld.relaxed.gpu.global.nc.L1::evict_last.v4.f32). */
#define IR_MOD_FIELDS(X)                                                             \
  X(uni) X(sync) X(sem) X(scope) X(cvta_to) X(policy) X(space) X(level) X(nc) X(cache) X(l1evict)       \
  X(l2evict) X(has_cache_hint) X(l2prefetch) X(atomop) X(shfl) X(vote) X(match)      \
  X(barmode) X(aligned) X(mulmode) X(cmp) X(boolop) X(testp) X(prmt) X(rnd)          \
  X(shf_left) X(shf_clamp) X(bfind_shiftamt) X(dp_hi) X(signed_a) X(signed_b)        \
  X(approx) X(full) X(ftz) X(sat) X(nan) X(xorsign) X(absmod) X(relu) X(satfinite)   \
  X(noftz_f16) X(cc) X(unified) X(vec) X(proxy) X(shape) X(layout) X(mmakind) X(frag) X(trans)  \
  X(geom) X(texlod) X(texcomp) X(clampmode) X(surfmode) X(query) X(gdc) X(acc_f32)  \
  X(mbar) X(l2evict2) X(bulk) X(tdim) X(tile)

typedef enum ir_mod_field {
#define X(f) ir_mod_##f,
  IR_MOD_FIELDS(X)
#undef X
  ir_mod_count
} ir_mod_field;

unsigned ir_mods_get(const ir_mods *m, ir_mod_field f);
void ir_mods_set(ir_mods *m, ir_mod_field f, unsigned v);
/* Whether op takes field f (ir_ops.def's mods column). */
bool ir_op_uses_mod(ir_op op, ir_mod_field f);

/* The spellings of types and modifier values (ir_types.def, ir_names.c),
 * shared by the .pwir parser and the PTX decoder: a map from a spelling
 * as written after the dot ("u32", "rn", "shared::cta", "L2::evict_last")
 * to its meanings, chained in table order.  One spelling can mean several
 * things ("lo": mul.lo or the unsigned compare of setp; "b": a wmma
 * fragment, a tld4 component, suld's raw mode): ir_mod_word_for picks the
 * one the op takes. */
typedef struct ir_mod_word {
  int16_t field;                   /* ir_mod_field, or -1: a type */
  uint8_t value;                   /* the field's value, or the ir_type */
  const struct ir_mod_word *next;  /* the spelling's other meanings */
} ir_mod_word;
typedef struct pw_map pw_map;
/* Fills words (initialised here, in arena a) with every type and modifier
 * spelling, each field's value-0 spelling (shf's "r", dp2a's "lo")
 * included. */
void ir_mod_words_init(pw_map *words, pw_arena *a);
/* Adds one more meaning of s (after those already there). */
void ir_mod_words_add(pw_map *words, pw_arena *a, const char *s, int field, unsigned value);
/* The meanings of s (len bytes), or NULL. */
const ir_mod_word *ir_mod_words_get(const pw_map *words, const char *s, size_t len);
/* Of the meanings in chain w: the first type or field op takes, else (any
 * set) the first field at all, so the verifier or ir_mods_fit_op can name
 * it; NULL if w is NULL. */
const ir_mod_word *ir_mod_word_for(const ir_mod_word *w, ir_op op, bool any);

/* ---- values ----------------------------------------------------------- */

typedef struct ir_instr ir_instr;
typedef struct ir_block ir_block;
typedef struct ir_func ir_func;
typedef struct ir_global ir_global;
typedef struct ir_module ir_module;

typedef enum ir_value_kind {
  IR_VAL_INSTR,   /* result number `index` of instruction `def` */
  IR_VAL_PARAM,   /* register parameter `index` of a device function */
  IR_VAL_CONST,   /* immediate: bits in imm (floats as their bit pattern) */
  IR_VAL_UNDEF,   /* read of a register never written */
  IR_VAL_SYMBOL,  /* address of a global, function or parameter, + offset */
} ir_value_kind;

typedef enum ir_symbol_kind { IR_SYM_GLOBAL, IR_SYM_FUNC, IR_SYM_PARAM } ir_symbol_kind;

/* A named thing whose address can be taken: a variable in some state space
 * (module scope or function scope), a function, or a .param of a kernel or
 * function. */
typedef struct ir_symbol {
  ir_symbol_kind kind;
  union {
    ir_global *global;
    ir_func *func;
    struct ir_param *param;
  };
} ir_symbol;

typedef struct ir_value {
  uint32_t id;             /* dense per function */
  uint8_t kind;            /* ir_value_kind */
  uint8_t type;            /* ir_type */
  uint8_t divergent : 1;   /* may differ between the lanes of a wave: ir_compute_divergence */
  uint16_t index;          /* result or parameter number */
  union {
    ir_instr *def;         /* IR_VAL_INSTR */
    uint64_t imm;          /* IR_VAL_CONST (b128 constants do not occur in PTX) */
    struct { ir_symbol sym; int64_t offset; } symref; /* IR_VAL_SYMBOL */
  };
  const char *name;        /* PTX register name for messages, or NULL */
} ir_value;

/* ---- instructions ----------------------------------------------------- */

typedef struct ir_loc { uint32_t line, col; } ir_loc;

struct ir_instr {
  uint16_t op;             /* ir_op */
  uint8_t type;            /* ir_type: the instruction's (first) type suffix */
  uint8_t type2;           /* second type: cvt source, dp4a b, mma ... */
  uint16_t nsrc, ndst;     /* 16 bits: a phi at a merge of 300 branches, wgmma's 128 results */
  uint8_t sreg_comp;       /* ir_op_sreg: component .x/.y/.z or index (%pm3) */
  uint8_t sreg;            /* ir_op_sreg: ir_sreg */
  uint8_t type3, type4;    /* third and fourth types: mma's b and c, cvt.pack's c,
                              the video ops' b (type: d, type2: a) */
  uint8_t guard_neg : 1;   /* @!p */
  ir_mods mods;
  ir_value **src;
  ir_value **dst;
  /* @p guard: when the guard is false the instruction does nothing and each
   * dst[i] takes the value keep[i] (the register's previous SSA value), so a
   * guarded load or atomic stays guarded and SSA stays explicit.  keep is
   * NULL when there is no guard. */
  ir_value *guard;
  ir_value **keep;
  int64_t offset;          /* address offset of [base+offset] memory operands */
  ir_block **targets;      /* br/cbr/brx targets */
  uint32_t ntargets;
  const char *opaque;      /* ir_op_opaque: the PTX spelling; call: prototype name */
  void *aux;               /* family data: ir_call_info (calls); tex and matrix forms are mods */
  ir_block *block;
  ir_instr *prev, *next;
  ir_loc loc;              /* PTX source position */
};

/* Call details (9.7.12.4): `call (ret...), callee, (arg...) [, proto|targets]`.
 * src[0] is the callee (a symbol value for direct calls, a register for
 * indirect ones), then nret return operands, then the arguments.  Operands
 * that name .param variables are symbol values. */
typedef struct ir_call_info {
  uint16_t nret, narg;
  const char *proto;       /* .callprototype label for indirect calls, or NULL */
  ir_func **targets;       /* .calltargets list, or NULL */
  uint32_t ntargets;
} ir_call_info;

/* ---- blocks, functions, module ---------------------------------------- */

struct ir_block {
  uint32_t id;             /* dense per function, in layout order */
  const char *name;        /* PTX label, or NULL */
  ir_instr *first, *last;  /* last is the terminator once the block is sealed */
  ir_block **preds;
  uint32_t npreds, preds_cap;
  ir_func *func;
  ir_block *prev, *next;   /* layout order */
  /* analyses (ir_compute_*) */
  ir_block *idom, *ipdom;
  uint32_t dom_pre, dom_post;  /* dominator-tree DFS numbers */
};

typedef struct ir_param {  /* a .param of a kernel or device function */
  const char *name;
  uint8_t type;            /* element type (b8 for byte arrays) */
  uint8_t space;           /* IR_SPACE_PARAM_ENTRY / _FUNC, or IR_SPACE_REG for register params */
  uint8_t ptr_space;       /* .ptr.global/.shared/.const/.local attribute, or 0 */
  uint32_t ptr_align;      /* .ptr .align N */
  uint32_t align;          /* .align, or the natural alignment */
  uint64_t count;          /* array elements (1 for scalars) */
  uint64_t offset;         /* byte offset in the parameter buffer (CUDA layout) */
  ir_value *value;         /* for IR_SPACE_REG params: the SSA value */
} ir_param;

/* Initializer of a variable (5.4.4): raw bytes plus relocations for the
 * words that hold addresses of other symbols ({ foo, bar+8, generic(baz) }). */
typedef struct ir_reloc {
  uint64_t offset;         /* byte offset in the variable */
  uint8_t size;            /* 4 or 8 */
  uint8_t generic : 1;     /* generic(sym) */
  ir_symbol sym;
  int64_t addend;
} ir_reloc;

typedef enum ir_linkage {
  IR_LINK_INTERNAL,        /* no directive: visible in this module only */
  IR_LINK_VISIBLE, IR_LINK_EXTERN, IR_LINK_WEAK, IR_LINK_COMMON,
} ir_linkage;

struct ir_global {         /* a variable of module or function scope */
  const char *name;
  uint8_t space;           /* ir_space: global, shared, const, local, tex ... */
  uint8_t type;            /* element type */
  uint8_t linkage;         /* ir_linkage */
  uint8_t is_extern_shared : 1;  /* .extern .shared array of unknown size: dynamic LDS */
  uint8_t ptr_space;       /* .ptr attributes, as for params */
  uint32_t align;
  uint32_t vec;            /* .v2/.v4 element vector width, 1 if scalar */
  uint64_t count;          /* elements (flattened array dims); 0 for [] */
  uint8_t *init;           /* size bytes, or NULL when not initialized */
  uint64_t size;
  ir_reloc *relocs;
  uint32_t nrelocs;
  ir_func *owner;          /* function-scope variables: the function, else NULL */
  ir_loc loc;
};

struct ir_func {
  const char *name;
  uint8_t is_kernel : 1;   /* .entry */
  uint8_t noreturn : 1;
  uint8_t is_decl : 1;     /* no body (.extern or prototype only) */
  uint8_t linkage;         /* ir_linkage */
  ir_param *params;        /* in order */
  uint32_t nparams;
  ir_param *rets;          /* .func return parameters */
  uint32_t nrets;
  /* performance-tuning directives (11.4) */
  uint32_t maxntid[3], reqntid[3], minnctapersm, maxnreg, maxclusterrank;
  uint32_t reqnctapercluster[3];
  uint8_t explicitcluster : 1;
  const char **pragmas;    /* .pragma strings, e.g. "nounroll" */
  uint32_t npragmas;
  ir_block *entry, *last_block;
  uint32_t nblocks;
  uint32_t nvalues;        /* next value id */
  ir_module *module;
  ir_func *next;
  /* The first instruction of this function that a later stage could not
   * translate (set by lower_error, codegen's unsupported report, and for
   * opaque instructions by cg_compile_ptx), or NULL: an annotation like a
   * value's divergence.  cg_compile_ptx leaves out the kernels that reach
   * such a function (docs/codegen.md "Per-kernel failure"). */
  const ir_instr *failed_at;
  uint8_t analyses;        /* IR_ANALYSIS_*: the analyses whose results are current */
  uint8_t divergence_wave; /* the wave size ir_compute_divergence assumed */
  ir_loc loc;
};

/* What lowering is for (ir_target.h): set by ir_module_set_target when
 * lowering starts, and read by the passes, codegen and the emulator.  The
 * generation is the row's (ir_target_gen(m->facts.target)). */
typedef struct ir_target_facts {
  const ir_target *target; /* the row of ir_targets.def, or NULL for CUDA semantics */
  uint8_t wave_size;       /* 32 for unlowered IR (a wave is a warp), else the target's */
  uint8_t lowered : 1;     /* lower/ has run: no ir_instr_is_unlowered instruction */
} ir_target_facts;

struct ir_module {
  pw_arena arena;
  uint16_t ptx_version;    /* major*10 + minor: 91 for PTX ISA 9.1 */
  uint16_t sm;             /* .target sm_XX number */
  char sm_suffix;          /* 'a' or 'f' or 0 */
  uint8_t address_size;    /* 64 */
  uint8_t texmode_independent : 1;
  uint8_t map_f64_to_f32 : 1;
  uint8_t debug : 1;
  ir_target_facts facts;
  ir_global **globals;     /* in declaration order */
  uint32_t nglobals, globals_cap;
  ir_func *funcs, *last_func;
  uint32_t nfuncs;
  const char *source_name; /* file or "lib.so:c12:e3" for messages */
  struct ir_symtab *symtab;/* name -> module-scope global / func (ir_module.c) */
};

ir_module *ir_module_create(const char *source_name);
void ir_module_destroy(ir_module *m);
ir_func *ir_module_find_func(const ir_module *m, const char *name);
ir_global *ir_module_find_global(const ir_module *m, const char *name);

/* ---- walking ---------------------------------------------------------- */

#define ir_foreach_func(m, f) for (ir_func *f = (m)->funcs; f; f = f->next)
#define ir_foreach_block(fn, b) for (ir_block *b = (fn)->entry; b; b = b->next)
#define ir_foreach_instr(b, i) for (ir_instr *i = (b)->first; i; i = i->next)
#define ir_foreach_instr_safe(b, i) \
  for (ir_instr *i = (b)->first, *i##_next = i ? i->next : NULL; i; \
       i = i##_next, i##_next = i ? i->next : NULL)

static inline bool ir_is_terminator(const ir_instr *i) { return ir_op_infos[i->op].flags & IR_F_TERM; }
/* Whether src[0] of op is a memory address printed as [base+offset] (the
 * ops that use ir_instr.offset: ir_ops.def's addr column). */
static inline bool ir_op_has_address(ir_op op) { return op < ir_op_count && ir_op_infos[op].addr == 0; }
/* Whether operand k of an op with nsrc operands must be a predicate
 * (ir_ops.def's pred column; guards aside). */
bool ir_op_src_is_pred(ir_op op, unsigned k, unsigned nsrc);
/* The operand and result counts op has with modifiers m: nsrc and ndst,
 * then the count column's rule where the modifiers fix them (.cc, .vN,
 * L2::cache_hint, a boolean op, .sync); IR_VAR where neither does.  The
 * verifier and the PTX parser check them. */
void ir_op_counts(ir_op op, const ir_mods *m, unsigned *nsrc, unsigned *ndst);
/* Whether i may not remain in lowered IR: an op of level PTX or a read of
 * a warp-level special register (IR_SR_WARP).  The one definition of
 * "lowered", read by the verifier's require_lowered and by
 * lower_first_unlowered. */
bool ir_instr_is_unlowered(const ir_instr *i);
ir_instr *ir_block_terminator(const ir_block *b);  /* NULL if the block is open */
/* Successors of a block: its terminator's targets. */
static inline uint32_t ir_block_nsuccs(const ir_block *b) { return b->last && ir_is_terminator(b->last) ? b->last->ntargets : 0; }
static inline ir_block *ir_block_succ(const ir_block *b, uint32_t i) { return b->last->targets[i]; }

/* ---- analyses (ir_dom.c, ir_divergence.c) ------------------------------ */
/* The analyses whose results live in the IR.  ir_func.analyses says which
 * are current: each ir_compute_* sets its bit; whoever changes what one
 * depends on clears it (lower_module does, after each pass, for the analyses
 * the pass does not preserve: lower/lower_contract.c; NIR's nir_metadata). */
enum {
  IR_ANALYSIS_DOMINANCE = 1 << 0,      /* block idom, dom_pre, dom_post */
  IR_ANALYSIS_POST_DOMINANCE = 1 << 1, /* block ipdom */
  IR_ANALYSIS_DIVERGENCE = 1 << 2,     /* ir_value.divergent */
  IR_ANALYSIS_ALL = (1 << 3) - 1,
};
/* Clears every analysis of f but those in keep. */
static inline void ir_invalidate_analyses(ir_func *f, unsigned keep) { f->analyses &= (uint8_t)keep; }
/* Computes the dominance analyses of which (IR_ANALYSIS_DOMINANCE,
 * _POST_DOMINANCE) that are not current. */
void ir_require_analyses(ir_func *f, unsigned which);
/* Recomputes block preds from terminators and numbers blocks in layout order. */
void ir_compute_preds(ir_func *f);
/* Dominator and post-dominator trees (Cooper, Harvey, Kennedy).  The
 * post-dominator tree has a virtual exit joining every ret/exit/trap block;
 * ipdom is NULL for blocks whose immediate post-dominator is that exit. */
void ir_compute_dominators(ir_func *f);
void ir_compute_post_dominators(ir_func *f);
bool ir_block_dominates(const ir_block *a, const ir_block *b);
/* Uniformity (ir_divergence.c): sets ir_value.divergent on every result
 * and register parameter of f that may differ between the lanes of one
 * wave of wave_size lanes (a warp is 32 of them: on wave64 a warp-level
 * result differs between the wave's two warps).  Sources: lane-varying
 * special registers and target ops (%tid, %laneid, wave_lane_id ...),
 * atomics, calls, per-lane memory, lane-dependent warp ops; then whatever
 * reads a divergent value or is guarded by one; then sync dependence: the
 * phis where the paths of a divergent branch meet, and the values that
 * leave a loop with a divergent exit.  Register parameters and constants
 * are uniform (per function: a callee does not see its callers' values).
 * Computes the post-dominators it needs. */
void ir_compute_divergence(ir_func *f, unsigned wave_size);

/* ---- printing, parsing, verifying ------------------------------------- */
#include <stdio.h>
typedef struct pw_diag pw_diag;

/* Prints the module in the textual form (.pwir) that ir_parse reads back.
 * Values are renumbered in order of definition so the output is stable. */
void ir_print_module(FILE *out, const ir_module *m);
typedef struct ir_print_options {
  bool locs;               /* append "; line:col" (the PTX position) to instructions */
} ir_print_options;
void ir_print_module_opts(FILE *out, const ir_module *m, const ir_print_options *opt);
void ir_print_func(FILE *out, const ir_func *f);
void ir_print_instr(FILE *out, const ir_instr *i);
/* Parses .pwir text; NULL with errors in d on failure. */
ir_module *ir_parse(const char *path, const char *text, size_t len, pw_diag *d);

/* Collects every broken invariant, prints the IR with the errors inline to
 * d, and returns false if there was any (style.md #9). */
typedef struct ir_verify_options {
  bool require_lowered;    /* reject what ir_instr_is_unlowered names (after lower/) */
} ir_verify_options;
bool ir_verify(const ir_module *m, const ir_verify_options *opt, pw_diag *d);
/* Whether every modifier field set in m is one op documents (the
 * verifier's table): front ends keep an instruction whose modifiers its op
 * does not take as ir_op_opaque instead of building IR that fails. */
bool ir_mods_fit_op(ir_op op, const ir_mods *m);

/* Spellings of modifier values (ir_names.c), for printers and messages. */
const char *ir_rnd_name(ir_rnd r);
const char *ir_cmp_name(ir_cmp c);
const char *ir_space_name(ir_space s);
const char *ir_sem_name(ir_sem s);
const char *ir_scope_name(ir_scope s);
const char *ir_atomop_name(ir_atomop a);

#endif
