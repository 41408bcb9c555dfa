/* lower/lower_internal.h: what the passes share (lower_util.c): the
 * instruction walker every pass is built on, IR helpers that fold
 * constants, the wave-mask arithmetic of two warps per wave, and a loop
 * over the active lanes of a wave.  Not a public header. */
#ifndef PW_LOWER_INTERNAL_H
#define PW_LOWER_INTERNAL_H

#include "ir/ir_builder.h"
#include "lower.h"

/* ---- the walker --------------------------------------------------------- */
/* want() picks the instructions; lower() builds the replacement at b (which
 * it may move into new blocks) and writes one value per result into out[]
 * (out has i->ndst entries, NULL-initialised).  It returns false to leave
 * the instruction as it is.  A guarded instruction (@p) is first turned
 * into control flow (if p then i; phi of the result and its keep value),
 * so lower() never sees a guard.  The walker then replaces every use of
 * i's results, removes i, and recomputes the block predecessors. */
typedef bool (*lower_want_fn)(const ir_instr *i, void *data);
typedef bool (*lower_instr_fn)(ir_builder *b, ir_instr *i, ir_value **out, void *data);
bool lower_walk(ir_module *m, lower_want_fn want, lower_instr_fn lower, void *data);

/* ---- wmma webs (lower_wmma_web.c) ----------------------------------------- */
/* The wmma instructions of m whose fragments may be kept in the layout of
 * AMD's matrix instruction: every fragment register of their web (the
 * registers joined through wmma, element-wise instructions and phis) goes
 * only there, and fits(i, data) holds for every wmma instruction of the
 * web.  amd[] is sorted, in the scratch arena a. */
typedef struct lower_wmma_web { ir_instr **amd; size_t n; } lower_wmma_web;
void lower_wmma_webs(ir_module *m, pw_arena *a, bool (*fits)(const ir_instr *, void *), void *data,
                     lower_wmma_web *out);
bool lower_wmma_web_amd(const lower_wmma_web *w, const ir_instr *i);

/* ---- scratch memory ------------------------------------------------------ */
/* A pass's scratch memory (style.md #5: QBE's per-function pool): an arena
 * the pass owns for its run, freed in one call (pw_arena_free) at its end;
 * nothing in it outlives the pass, and no piece of it is freed on its own.
 * Allocation dies on exhaustion, as the IR's own does (ir_alloc): running
 * out of memory is not an error in the input.  What they return aliases
 * nothing else (attribute malloc: loops over it vectorize as they did over
 * malloc's). */
void *lower_scratch_array(pw_arena *a, size_t n, size_t elem) __attribute__((malloc));   /* zeroed */
/* A copy of old (n elements) with room for want (the old one stays in a). */
void *lower_scratch_grow(pw_arena *a, void *old, size_t n, size_t want, size_t elem) __attribute__((malloc));
#define LOWER_SCRATCH(a, T, n) ((T *)lower_scratch_array((a), (n), sizeof(T)))
/* An array a pass uses for each function in turn: LOWER_RESERVE makes room
 * for n elements, reusing the memory of the functions before (contents
 * not kept, not cleared: the arena zeroes memory only when it is new, so
 * reusing it costs no zeroing and a pass allocates about what its largest
 * function needs, not the sum over functions). */
#define LOWER_SCRATCH_BUF(T) struct { T *p; size_t cap; }
#define LOWER_RESERVE(a, buf, n) \
  ((buf).p = lower_scratch_reserve((a), (buf).p, &(buf).cap, (n), sizeof *(buf).p))
void *lower_scratch_reserve(pw_arena *a, void *old, size_t *cap, size_t n, size_t elem);

/* ---- pass contracts (lower_contract.c) ------------------------------------ */
/* What a pass promises (style.md #7; NIR's nir_metadata): the operations
 * it eliminates, none of which remains after it (those it reports with
 * lower_error aside: their function is marked failed), and the analyses
 * (IR_ANALYSIS_*) whose results it keeps current.  The eliminated set is
 * the instructions whose op is in ops or has one of op_flags, or that read
 * a special register in sregs or with one of sreg_flags; of those, only
 * the ones form accepts when form is set (called with data NULL: a pass
 * passes its walker's want, for passes that lower some forms of an op). */
typedef struct lower_contract {
  const char *pass;
  const ir_op *ops;        /* ir_op_count ends the list; NULL: none */
  uint16_t op_flags;       /* IR_F_* */
  const ir_sreg *sregs;    /* ir_sreg_count ends the list; NULL: none */
  uint8_t sreg_flags;      /* IR_SR_* */
  lower_want_fn form;
  unsigned preserves;      /* IR_ANALYSIS_* */
} lower_contract;

/* One per pass, next to the pass. */
extern const lower_contract lower_async_contract, lower_cluster_contract, lower_mbarrier_contract, lower_video_contract,
    lower_multimem_contract, lower_tex_contract, lower_printf_contract, lower_wmma_contract, lower_mma_contract,
    lower_warps_contract, lower_barriers_contract, lower_sregs_contract, lower_math_contract, opt_addrspace_contract, opt_dce_contract;

/* Whether i is in c's eliminated set. */
bool lower_contract_covers(const lower_contract *c, const ir_instr *i);
/* After a pass that returned progress (NIR_PASS): when it made progress,
 * invalidates the analyses it does not preserve, prints the IR when asked
 * (opt->print_after) and verifies the module in verifying builds; in
 * verifying builds, with or without progress, checks that nothing it
 * eliminates remains, naming the pass and the instruction.  False (with
 * the error in opt->diag) when the module does not verify or the contract
 * does not hold. */
bool lower_pass_done(ir_module *m, const lower_contract *c, bool progress, const lower_pipeline_options *opt);

/* Reports "cannot lower" for an instruction (to d, if set). */
void lower_error(pw_diag *d, const ir_instr *i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void lower_warn(pw_diag *d, const ir_instr *i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* lower_mma.c: byte e of w, an e4m3 or e5m2, as the bits of the f32 of the
 * same value (exact; NaN the f32 canonical NaN), in a dozen integer ops. */
ir_value *lower_f8_to_f32(ir_builder *b, ir_type t, ir_value *w, unsigned e);

/* lower_mma.c: the scaled term of block j of a block-scaled mma i (PTX ISA
 * 9.7.14.3) for the thread's D element e (m16n8: row g + 8 (e >> 1), column
 * 2t + (e & 1)): round_f32(p * SF_A * SF_B), the scales shuffled from the
 * lanes that hold them (ir/ir_mma.h), the products taken in f64 (exact).
 * The shuffled scale words and the scales' products are kept in *sw
 * (zeroed by the caller, one per mma: A's words of rows g and g + 8, B's of
 * columns 2t and 2t + 1), so every block and element after the first
 * reuses them. */
typedef struct lower_mma_scale_words {
  ir_value *lane, *a[2], *b[2];
  ir_value *sab[2][2][4];   /* SF_A * SF_B as f64, by row half, column, block */
} lower_mma_scale_words;
ir_value *lower_mma_scale_term(ir_builder *b, const ir_instr *i, lower_mma_scale_words *sw, ir_value *p, unsigned e,
                               unsigned j);

/* lower_mma_amd.c: mma i as wave_mma instructions of target (its MFMA or
 * WMMA rows of ir/ir_amd_matrix.def) and the shuffles between NVIDIA's and
 * AMD's layouts; false (nothing built) where target has no such scheme. */
bool lower_mma_amd(ir_builder *b, ir_instr *i, ir_value **out, const char *target);
struct ir_mma_form;
/* Whether lower_mma_amd has a scheme for form f with A/B elements of type ta on target. */
bool lower_mma_amd_fits(const struct ir_mma_form *f, ir_type ta, const char *target);

/* lower_mma_amd_chained: the same, remembering in chain (one per walk, the
 * caller's, zeroed) the accumulators it left in AMD's layout, so that an
 * mma whose C is an earlier mma's D in the same block takes that
 * accumulator as it is instead of shuffling D out and C back in. */
#define LOWER_MMA_CHAIN_N 128   /* 32 tiles x 2 entries each (lower_mma_web.c pushes one per mma) x 2 */
typedef struct lower_mma_chain {
  struct lower_mma_acc {
    const ir_value *d[4];   /* the earlier mma's D registers (its dst) */
    ir_value *acc[8];       /* its accumulator in AMD's C layout */
    const ir_block *block;
    unsigned layout, wave, nc;
  } e[LOWER_MMA_CHAIN_N];
  unsigned next;            /* ring: the oldest entry is replaced */
  const struct lower_ldm_plan *ldm;   /* ldmatrix results loaded in AMD's layout (NULL: none) */
} lower_mma_chain;
bool lower_mma_amd_chained(ir_builder *b, ir_instr *i, ir_value **out, const char *target, lower_mma_chain *chain);
/* lower_mma_amd.c's lane machinery, for lower_mma_volta.c.  For each lane L of
 * the warp (0..31), src[L] the lane to read and val[L] the index into vals of
 * the value to read there (LOWER_AMD_ANY: any value will do): the gathered
 * value (shuffles in the warp, selects), or NULL when a lane function is not
 * made of %laneid bits.  dry: nothing is built (laneid any non-NULL value,
 * vals may be placeholders), only checked and counted (shuffles, selects
 * added to *counts[0], [1]). */
#define LOWER_AMD_ANY 0xff
ir_value *lower_mma_amd_gather(ir_builder *b, ir_value *laneid, bool dry, const uint8_t *src, const uint8_t *val,
                               ir_value *const *vals, unsigned counts[2]);
/* f(L) for the lanes L whose entry is not LOWER_AMD_ANY, as %laneid bits
 * (permuted, complemented, constant), or NULL. */
ir_value *lower_mma_amd_lane_fn(ir_builder *b, ir_value *laneid, bool dry, const uint8_t *f);
/* lower_mma_volta.c: Volta's m8n8k4 .f16 mma i on target's MFMA / WMMA;
 * false (nothing built) where the target has none or no scheme fits.
 * cache (the caller's, zeroed; may be NULL) keeps the scheme chosen for
 * each form, so that a module's many mma of one form cost one search. */
typedef struct lower_mma_volta_cache {
  unsigned n;
  struct { unsigned key; uint8_t t, v, ok; } e[32];
} lower_mma_volta_cache;
bool lower_mma_volta(ir_builder *b, ir_instr *i, ir_value **out, const char *target, lower_mma_volta_cache *cache);

/* lower_mma_f64.c: m8n8k4 .f64 mma i on target's f64 MFMA where the wave's
 * EXEC is all 64 lanes at run time, expand(b, i, out, data) (lower_mma.c's
 * per-thread expansion) where it is not: i's block is split around a
 * wave-uniform branch, *b left before i in the join block, out[] the join's
 * phis.  False where the target has no f64 MFMA or the form is another (the
 * IR unchanged), or where expand failed. */
typedef bool (*lower_mma_expand_fn)(ir_builder *b, ir_instr *i, ir_value **out, void *data);
/* Per walk (lower_mma_f64_begin, before it, in the pass's scratch arena a:
 * the dominance analyses and loops of the functions with f64 mma): the f64
 * mma lowered so far, so that one whose C is an earlier one's D where EXEC
 * is the same takes its accumulator in AMD's layout, and
 * lower_mma_f64_finish (after the walk) drops the D moves nothing else
 * reads.  c may be NULL (no chains). */
typedef struct lower_mma_f64_cache lower_mma_f64_cache;
lower_mma_f64_cache *lower_mma_f64_begin(ir_module *m, pw_arena *a, const char *target);
bool lower_mma_f64(ir_builder *b, ir_instr *i, ir_value **out, const char *target, lower_mma_f64_cache *c,
                   lower_mma_expand_fn expand, void *data);
void lower_mma_f64_finish(ir_module *m, lower_mma_f64_cache *c);

/* Accumulators kept in AMD's layout across phis (lower_mma_web.c, the
 * helpers in lower_mma_amd.c).  lower_mma_amd_acc_row: the wave_mma row
 * whose C layout mma i's accumulator would have under
 * lower_mma_amd_chained, and the index of its first C register (false: no
 * chain for i); lower_mma_amd_same_acc: whether two rows put C's elements
 * alike; lower_mma_amd_acc_in / _out: NVIDIA's four C elements into row's
 * layout (acc[0..nc)), and element e back (NULL: not built). */
bool lower_mma_amd_acc_row(const ir_instr *i, const char *target, unsigned *row, unsigned *c_first);
bool lower_mma_amd_same_acc(unsigned row1, unsigned row2);
unsigned lower_mma_amd_acc_regs(unsigned row);
bool lower_mma_amd_acc_in(ir_builder *b, unsigned row, ir_value *const *cv, ir_value **acc);
ir_value *lower_mma_amd_acc_out(ir_builder *b, unsigned row, ir_value *const *acc, unsigned e);
bool lower_mma_amd_acc_maps(unsigned row);   /* whether both conversions build (dry) */

/* The webs of one module (lower_mma_web.c): groups of four f32 phis that
 * carry an mma accumulator (C of a chained mma, or fed by one's D) get a
 * twin group of phis in AMD's layout.  lower_mma_webs_begin (before the
 * walk: analysis, the twin phis), lower_mma_web_before (each mma, before it
 * is lowered: puts the AMD accumulator its C stands for into chain),
 * lower_mma_web_after (after: remembers its AMD accumulator),
 * lower_mma_webs_finish (after the walk: the twin phis' operands, the
 * readers of the old phis converted once, the old phis removed). */
typedef struct lower_mma_webs lower_mma_webs;
lower_mma_webs *lower_mma_webs_begin(ir_module *m, pw_arena *a, const char *target);
void lower_mma_web_before(lower_mma_webs *w, ir_builder *b, const ir_instr *i, lower_mma_chain *chain);
void lower_mma_web_after(lower_mma_webs *w, const ir_instr *i, ir_value *const *out, const lower_mma_chain *chain,
                         unsigned chain_next_before);
void lower_mma_webs_finish(lower_mma_webs *w);

/* ---- ldmatrix loaded straight into AMD's A/B layout (lower_ldm_plan.c decides,
 * lower_mma_amd.c builds; docs/lowering.md "ldmatrix in AMD's layout") ---- */
/* Per walk, in the pass's scratch arena: the ldmatrix whose every result is
 * an A or B operand of mma that lower_mma_amd puts on one scheme (use[]:
 * each pair of an accepted ldmatrix and one of its mma, sorted by
 * ldmatrix), and per such mma the AMD A/B registers the ldmatrix built
 * (pre[], LOWER_LDM_NPRE entries, sorted by mma; NULL entries: gathered
 * from NVIDIA's registers as before; for tf32/fp8 the words the registers
 * are made from, converted at the mma). */
#define LOWER_LDM_NPRE 128   /* 2 chained steps (tf32, fp8) x 4 instructions x {A, B} x 8 registers */
typedef struct lower_ldm_plan {
  struct lower_ldm_use { const ir_instr *ldm, *mma; } *use;
  size_t nuse;
  struct lower_ldm_mma { const ir_instr *mma; ir_value **pre; } *mma;
  size_t nmma;
} lower_ldm_plan;
void lower_ldm_plan_build(ir_module *m, pw_arena *a, const char *target, lower_ldm_plan *out);
/* The ldmatrix result v is made from in its own thread: v itself, or the
 * result of a few unguarded per-thread instructions (no memory, side
 * effect, warp operation or special register; at most 4 operands) whose
 * operands are immediates and values made from that same result; NULL
 * otherwise. */
const ir_value *lower_ldm_root(const ir_value *v);
/* The ldmatrix v is made from in its thread (lower_ldm_root), or NULL. */
const ir_instr *lower_ldm_of(const ir_value *v);
/* An unguarded phi each of whose operands is made from an ldmatrix result (a
 * software-pipelined K loop's fragments: the prologue's and the next
 * iteration's), or NULL. */
const ir_instr *lower_ldm_phi(const ir_value *v);
/* The mma users of ldm when it was accepted (use[*first .. *first + n)), else 0. */
size_t lower_ldm_users(const lower_ldm_plan *p, const ir_instr *ldm, size_t *first);
/* The A/B registers ldmatrix built for mma (LOWER_LDM_NPRE), or NULL. */
ir_value **lower_ldm_pre(const lower_ldm_plan *p, const ir_instr *mma);
/* lower_mma_amd.c: whether mma goes on a scheme of target and every AMD A/B
 * register of it that reads ldmatrix results (directly, or through phis of
 * one block with one ldmatrix per edge) reads only those, with row addresses
 * that are lane functions (nothing built; tf32/fp8 only where a lane loads
 * fewer than twice the words a thread holds); and the loads of the registers
 * that read ldm, at b, for every mma of ldm in p, into their pre[] (false:
 * ldm was not accepted, or, an internal error, the plan's check was wrong). */
bool lower_mma_amd_ldm_fits(const ir_instr *mma, const char *target);
bool lower_mma_amd_ldm_load(ir_builder *b, const ir_instr *ldm, const lower_ldm_plan *p, const char *target);
/* For mma's AMD registers read through phis of ldmatrix results: a phi of
 * b32 in the phis' block, operands undefined until each ldmatrix sets its
 * edges' (lower_mma_amd_ldm_load), into pre[]. */
void lower_mma_amd_ldm_phis(ir_builder *b, const ir_instr *mma, const char *target, ir_value **pre);

/* lower_mma.c: why a matrix op (mma ldmatrix stmatrix movmatrix, wmma.*,
 * mma.sp, wgmma.*) is not expanded (NULL: it is), and the error that says
 * so with the instruction, the kernel, its position and the target. */
const char *lower_matrix_why(const ir_instr *i);
void lower_matrix_error(pw_diag *d, const ir_instr *i, const char *target, const char *why);

/* ---- folding constructors ---------------------------------------------- */
bool lower_const(const ir_value *v, uint64_t *out);
/* The same through unguarded copies (mov of an immediate into a register). */
bool lower_const_through_copies(const ir_value *v, uint64_t *out);
/* Union-find over value ids (p[x] == x: a root; path halving). */
uint32_t lower_uf_find(uint32_t *p, uint32_t x);
void lower_uf_unite(uint32_t *p, uint32_t x, uint32_t y);
ir_value *lower_imm32(ir_builder *b, uint32_t v);
/* and or xor add sub shl shr mul(.lo) of type t, folded when both operands are
 * constants or one is an identity (x & ~0, x | 0, x + 0, x << 0 ...). */
ir_value *lower_alu(ir_builder *b, ir_op op, ir_type t, ir_value *x, ir_value *y);
ir_value *lower_not(ir_builder *b, ir_type t, ir_value *x);
ir_value *lower_setp(ir_builder *b, ir_cmp c, ir_type t, ir_value *x, ir_value *y);
ir_value *lower_selp(ir_builder *b, ir_type t, ir_value *x, ir_value *y, ir_value *p);
ir_value *lower_lo32(ir_builder *b, ir_value *x64);     /* low half of a b64 */
ir_value *lower_zext64(ir_builder *b, ir_value *x32);   /* {x, 0} as b64 */

/* ---- waves -------------------------------------------------------------- */
/* Values of one lowering site: the lane of the wave and, on wave64, the base
 * of the lane's half (lane & 32) and %laneid (lane & 31).  On wave32 base is
 * the constant 0 and laneid the lane. */
typedef struct lower_wave {
  unsigned w;              /* wave size */
  ir_type mask_type;       /* b32 or b64 */
  ir_value *lane, *laneid, *base;
} lower_wave;
void lower_wave_init(ir_builder *b, unsigned wave_size, lower_wave *lw);
/* The 32-bit warp mask of the lane's half of a wave mask: (m >> base). */
ir_value *lower_warp_bits(ir_builder *b, const lower_wave *lw, ir_value *wave_mask);

/* A loop over the lanes of a uniform wave mask, lowest first:
 *   lower_lane_loop_begin(b, lw, mask, n, init, types, &L)   b -> loop body
 *     L.k: the lane (u32, uniform), L.rem: lanes still to visit,
 *     L.acc[j]: the loop-carried values
 *   lower_lane_loop_end(b, &L, rem_next, next)               b -> after the loop
 *     L.acc[j] then hold the values at the exit.
 * rem_next must clear at least lane k (NULL: rem & (rem - 1)). */
#define LOWER_LOOP_MAX_ACC 4
typedef struct lower_lane_loop {
  ir_block *pre, *header, *body, *exit;
  ir_instr *phi_rem, *phi_acc[LOWER_LOOP_MAX_ACC];
  unsigned nacc;
  ir_type mask_type;
  ir_value *k, *rem, *acc[LOWER_LOOP_MAX_ACC];
} lower_lane_loop;
void lower_lane_loop_begin(ir_builder *b, const lower_wave *lw, ir_value *mask, unsigned nacc,
                           ir_value *const *init, lower_lane_loop *L);
void lower_lane_loop_end(ir_builder *b, lower_lane_loop *L, ir_value *rem_next, ir_value *const *next);

#endif
