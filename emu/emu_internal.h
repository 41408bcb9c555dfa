/* emu/emu_internal.h: the emulator's internal forms, shared by its files.
 *
 *   emu_decode.c   IR function -> emu_func: blocks in a weak topological
 *                  order, operands resolved to register-file offsets,
 *                  constants in a per-function pool, phis turned into
 *                  per-edge parallel copies, one handler per instruction
 *   emu_alu.c      integer, logic, compare/select, moves, special registers
 *   emu_float.c    floating point (f16 ... f64), in every rounding mode
 *   emu_cvt.c      cvt, cvt.pack
 *   emu_mem.c      ld st atom red cvta isspacep fences; address windows
 *   emu_warp.c     shfl vote match redux activemask elect
 *   emu_matrix.c   mma ldmatrix stmatrix movmatrix (whole-warp ops)
 *   emu_mbarrier.c mbarrier.* objects, cp.async.mbarrier.arrive, cp.async.bulk
 *   emu_video.c    vadd vsub vabsdiff vmin vmax vshl vshr (scalar video)
 *   emu_exec.c     one wave: dispatch, divergence (per-lane PCs, min-PC
 *                  scheduling), calls, barriers, exit
 *   emu_sched.c    workgroups on host threads, forward progress, launch
 *   emu_context.c  context, allocation table, modules
 *   emu_printf.c   vprintf, __assertfail
 *
 * Register file of a frame: one slot per SSA value.  A predicate slot is a
 * single 64-bit lane mask (bit i = lane i); any other value has one 8-byte
 * cell per lane (16 for b128), [value][lane], holding the value's bits
 * zero-extended: a u16 is stored as 0..65535 and an s8 -1 as 0xff.
 * Handlers keep that invariant (they mask their results to the width of
 * the destination's type).
 */
#ifndef PW_EMU_INTERNAL_H
#define PW_EMU_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "emu.h"
#include "emu_fp.h"
#include "ir/ir.h"
#include "util/arena.h"

#define EMU_MAX_LANES 64
#define EMU_NBARRIERS 16
#define EMU_MAX_DEPTH 256        /* call depth before "stack overflow" */

typedef uint64_t emu_mask;

/* An operand: byte offset into the frame's register file, or, with
 * EMU_OPND_CONST set, into the function's constant pool. */
typedef uint32_t emu_opnd;
#define EMU_OPND_CONST 0x80000000u
#define EMU_OPND_NONE 0xffffffffu

/* Address windows of generic addresses (design decision, docs/emulator.md):
 * host user-space addresses are below 2^48; shared, local and kernel-param
 * memory are given distinct windows above, so a generic pointer says which
 * space it points into and the same input always gives the same pointer
 * values (deterministic output, like AMD's apertures). */
#define EMU_WIN_SHIFT 48
#define EMU_WIN_OFFMASK ((1ull << EMU_WIN_SHIFT) - 1)
#define EMU_WIN_GLOBAL 0ull
#define EMU_WIN_SHARED (1ull << EMU_WIN_SHIFT)
#define EMU_WIN_LOCAL (2ull << EMU_WIN_SHIFT)
#define EMU_WIN_PARAM (3ull << EMU_WIN_SHIFT)
#define EMU_WIN_FUNC (4ull << EMU_WIN_SHIFT)   /* function "addresses" for indirect calls */

typedef struct emu_exec emu_exec;
typedef struct emu_inst emu_inst;
typedef struct emu_func emu_func;
typedef struct emu_wave emu_wave;
typedef struct emu_wg emu_wg;
typedef struct emu_grid emu_grid;

/* A handler runs one instruction for the lanes of m (never 0). */
typedef void (*emu_fn)(emu_exec *x, const emu_inst *in, emu_mask m);

typedef enum emu_kind {
  EMU_K_ALU,          /* fn, then the next instruction */
  EMU_K_SYNC,         /* .sync warp op: wait for the member lanes, then fn */
  EMU_K_BR, EMU_K_CBR, EMU_K_BRX,
  EMU_K_CALL, EMU_K_RET, EMU_K_EXIT,
  EMU_K_TRAP,         /* trap, unreachable: the launch fails */
  EMU_K_BAR,          /* bar / barrier: sync, arrive, red */
  EMU_K_UNSUPPORTED,  /* reaching it fails the launch (never: launches check first) */
} emu_kind;

/* A slot class: how a value is stored. */
enum { EMU_CLS_LANE = 0, EMU_CLS_WIDE = 1, EMU_CLS_PRED = 2 };

typedef struct emu_copy {
  emu_opnd dst, src;
  uint8_t cls;
} emu_copy;

/* One outgoing edge of a branch: the target's first instruction and the
 * phi copies of the target for this edge (a parallel copy). */
typedef struct emu_edge {
  uint32_t target;
  uint32_t ncopies;
  bool parallel;        /* some copy reads what another writes: go through a temporary */
  emu_copy *copies;
} emu_edge;

/* Resolved memory space of a decoded access. */
enum {
  EMU_SP_GENERIC, EMU_SP_GLOBAL, EMU_SP_SHARED, EMU_SP_LOCAL, EMU_SP_CONST, EMU_SP_PARAM,
};

#define EMU_MAXOPND 10

struct emu_inst {
  emu_fn fn;
  uint8_t kind;         /* emu_kind */
  uint8_t nsrc, ndst;
  uint8_t guard_neg;
  uint16_t op;          /* ir_op */
  uint8_t type, type2;  /* ir_type */
  emu_opnd guard;       /* predicate, or EMU_OPND_NONE */
  emu_opnd src[EMU_MAXOPND];
  emu_opnd dst[EMU_MAXOPND];
  uint8_t stype[EMU_MAXOPND];  /* ir_type of each operand and result */
  uint8_t dtype[EMU_MAXOPND];
  emu_opnd *keep;       /* guard false: dst[i] = keep[i]; NULL when unguarded */
  int64_t imm;          /* memory offset, immediates */
  uint8_t space;        /* EMU_SP_* for memory ops */
  uint8_t elem;         /* element bytes of memory ops */
  uint8_t vec;          /* vector width of memory ops (1 scalar) */
  uint8_t sub;          /* handler-specific selector (EMU_K_SYNC: the member-mask operand) */
  uint8_t tbits;        /* bits of the instruction type */
  uint64_t amask;       /* memory ops: 32-bit address registers wrap at 2^32 */
  uint64_t tmask;       /* mask of tbits */
  ir_mods mods;
  uint32_t nedges;
  emu_edge *edges;      /* branch targets */
  void *aux;            /* call: emu_call; bar: none */
  const ir_instr *ir;   /* for messages */
  uint32_t line;
};

/* A call site. */
typedef struct emu_call {
  emu_func *callee;     /* direct calls; NULL for indirect (src[0] holds the address) */
  uint32_t nret, narg;
  emu_opnd *ret_slot;   /* register returns, or NONE */
  uint32_t *ret_local;  /* frame-relative local offset of the caller's .param return variables */
  uint32_t *ret_size;
  emu_opnd *arg_slot;   /* register arguments, or NONE */
  uint32_t *arg_local;  /* frame-relative local offset of the caller's .param argument variables */
  uint32_t *arg_size;
  bool *arg_is_local;
  bool *ret_is_local;
} emu_call;

/* A frame-relative symbol value, written into its slot on frame entry. */
enum { EMU_SYM_LOCAL, EMU_SYM_LOCAL_GENERIC, EMU_SYM_SHARED };
typedef struct emu_symslot {
  emu_opnd slot;
  uint8_t kind;
  uint32_t index;       /* shared: module shared-variable index */
  int64_t offset;       /* local: offset in the frame; shared: offset added */
} emu_symslot;

/* Where a device function's parameter lives in its frame. */
typedef struct emu_fparam {
  bool is_reg;
  emu_opnd slot;        /* register parameter */
  uint32_t local;       /* .param parameter: offset in the frame's local area */
  uint32_t size;
} emu_fparam;

typedef enum emu_builtin {
  EMU_BI_NONE, EMU_BI_VPRINTF, EMU_BI_ASSERTFAIL, EMU_BI_MALLOC, EMU_BI_FREE,
  /* the device runtime's system calls under libcudadevrt (dynamic
   * parallelism, emu_printf.c) */
  EMU_BI_CDP_PARAM_BUFFER, EMU_BI_CDP_LAUNCH, EMU_BI_CDP_GET_ERROR, EMU_BI_CDP_SET_ERROR,
} emu_builtin;

/* A device-side launch (dynamic parallelism): its parameter buffer in the
 * grid's launch arena, and whether it was launched (after the buffer was
 * filled) and in which order. */
typedef struct emu_child {
  emu_func *k;
  emu_dim3 grid, block;
  uint32_t shared;
  uint64_t buf;
  uint32_t size;
  uint32_t order;               /* 0: not launched; else 1 + launch order */
} emu_child;

struct emu_func {
  const ir_func *ir;
  emu_module *mod;
  uint32_t index;
  emu_builtin builtin;
  emu_inst *code;
  uint32_t ncode;
  uint32_t entry;               /* first instruction (always 0) */
  uint32_t regs_size;           /* bytes of one frame's register file */
  uint8_t *consts;              /* constant pool, wave-size lanes per constant */
  uint32_t consts_size;
  uint32_t frame_local;         /* bytes of per-lane local memory of one frame */
  emu_fparam *params, *rets;
  uint32_t nparams, nrets;
  emu_symslot *symslots;
  uint32_t nsymslots;
  const char *error;            /* first unsupported form, with its line; NULL if none */
  bool has_indirect_calls;
  emu_func **callees;           /* direct callees */
  uint32_t ncallees;
  uint32_t *shared_used;        /* module shared-variable indexes referenced */
  uint32_t nshared_used;
  /* kernels: the shared layout of the kernel and everything it can call */
  uint32_t *shared_off;         /* per module shared variable; UINT32_MAX if unused */
  uint32_t shared_static;       /* bytes of static shared memory */
  uint32_t dyn_align;           /* alignment of extern (dynamic) shared memory */
  const char *closure_error;    /* error of the kernel or any function it may call */
  emu_param_info *kparams;
  uint32_t kparam_size;
};

typedef struct emu_gvar {
  const ir_global *ir;
  uint8_t *host;                /* .global/.const: the storage */
  uint64_t size;
  uint32_t shared_index;        /* .shared: index among the module's shared variables */
} emu_gvar;

struct emu_module {
  emu_context *ctx;
  ir_module *ir;
  pw_arena arena;
  unsigned wave;                /* wave size of this module's code */
  const ir_target *target;      /* what it was lowered for (else the wave's pseudo target): hw_id's layout */
  emu_func **funcs;             /* in module order */
  bool device_launches;         /* a function calls the device runtime's launch (dynamic parallelism) */
  uint32_t nfuncs;
  emu_gvar *gvars;              /* in module order (ir->globals) */
  uint32_t ngvars;
  const ir_global **shared;     /* the shared variables, module and function scope */
  uint32_t nshared;
  /* The largest .param variable a call passes (for a callee's parameter
   * array of unknown size, a[]: its frame holds this much) */
  uint64_t call_arg_max;
  emu_module *next;
};

typedef struct emu_alloc {
  uint64_t base, size;
  bool owned;                   /* malloc'd by emu_malloc (else module variable or registered) */
  bool freed;                   /* memcheck quarantine */
  bool readonly;                /* .const */
  uint16_t tag;                 /* the caller's (the runtime: the device it belongs to) */
} emu_alloc;

struct emu_context {
  emu_options opt;
  pthread_mutex_t lock;
  pthread_mutex_t print_lock;
  emu_alloc *allocs;            /* sorted by base */
  uint32_t nallocs, allocs_cap;
  emu_module *modules;
  char msg[4096];               /* under msg_lock: launches on several host threads */
  pthread_mutex_t msg_lock;
  emu_stats last;               /* under lock */
  _Atomic uint64_t launches;
  struct emu_heap *dmem;        /* emu_malloc's memory (emu_heap.c), made on first use */
  bool dmem_tried;
  uint64_t heap;                /* device malloc heap (registered allocation), 0 until needed */
  uint64_t heap_size, heap_used; /* under lock: launches on several host threads allocate */
};

/* ---- execution state -------------------------------------------------- */

typedef struct emu_frame {
  const emu_func *fn;
  uint8_t *regs;
  size_t regs_cap;
  emu_mask live;                /* lanes in this frame: not returned, not exited */
  emu_mask cur;                 /* lanes executing at ip */
  emu_mask blocked;             /* lanes waiting (warp sync: at their pc; barrier: after it) */
  emu_mask incall;              /* lanes inside the callee frame above */
  emu_mask returned;            /* lanes that executed ret */
  emu_mask syncwait;            /* lanes blocked at a .sync warp op (their pc is that op) */
  uint32_t ip;
  uint32_t local_base;          /* this frame's offset in each lane's local memory */
  /* Each lane's dynamic stack top (alloca, stacksave, stackrestore: PTX
   * ISA 9.7.17): local_base + fn->frame_local when the frame starts, grown
   * by alloca within the lane's local memory; a call's frame starts above
   * the highest of its lanes' tops, and returning frees what it allocated. */
  uint32_t sp[EMU_MAX_LANES];
  uint32_t call_ip;             /* frames above 0: the caller's call instruction */
  uint32_t backjumps;           /* backward branches by one group while others wait */
  uint32_t lane_pc[EMU_MAX_LANES];
} emu_frame;

typedef enum emu_wave_state { EMU_W_RUN, EMU_W_BLOCKED, EMU_W_DONE } emu_wave_state;

struct emu_wave {
  emu_wg *wg;
  uint32_t index;               /* in the workgroup */
  uint32_t first_thread;        /* linear thread index of lane 0 */
  emu_mask exists;              /* lanes that are threads of the block */
  emu_mask exited;
  emu_wave_state state;
  emu_frame *frames;
  uint32_t depth, frames_cap;
  /* barriers: per id, the lanes that arrived this phase, the lanes waiting
   * for completion, which warps (bit per 32 lanes) have been counted, the
   * frame and destination of a bar.red */
  emu_mask bar_arrived[EMU_NBARRIERS];
  emu_mask bar_wait[EMU_NBARRIERS];
  uint8_t bar_counted[EMU_NBARRIERS];
  uint32_t bar_depth[EMU_NBARRIERS];
  const emu_inst *bar_inst[EMU_NBARRIERS];
  uint32_t spins;               /* backward branches since the last store */
  uint64_t clock;               /* instructions executed: %clock */
  uint32_t tid[3][EMU_MAX_LANES];
};

typedef struct emu_bar {
  uint32_t arrived;             /* warps counted this phase */
  uint32_t expected;            /* warps; 0: every warp that has a live thread */
  uint32_t popc;
  bool red_and, red_or;
  uint8_t red;                  /* 0 none, else the ir_atomop of bar.red */
} emu_bar;

struct emu_wg {
  emu_grid *l;
  uint64_t linear;
  uint32_t ctaid[3];
  uint32_t smid;                /* host thread running it now */
  uint8_t *shared;
  uint8_t *local;               /* nthreads * stack_size */
  size_t local_bytes;
  uint32_t local_hwm;           /* local bytes per thread used so far (zeroed on reuse) */
  emu_wave *waves;
  uint32_t nwaves;
  uint32_t next_wave;           /* round-robin position */
  emu_bar bars[EMU_NBARRIERS];
  emu_wg *next_free;
  emu_wg *next_all;
};

struct emu_grid {
  emu_context *ctx;
  emu_module *mod;
  emu_func *kernel;
  emu_dim3 grid, block;
  uint32_t nthreads, nwaves, wave;
  uint64_t nwg;
  const uint8_t *params;
  uint32_t params_size;
  uint32_t shared_dyn, shared_total, dyn_off;
  uint32_t stack_size;
  uint32_t spin_limit;
  uint64_t max_inst;            /* per wave; 0: no limit */
  uint32_t nthreads_host;
  const emu_alloc *allocs;      /* snapshot, sorted */
  uint32_t nallocs;
  bool memcheck;
  _Atomic uint64_t next_wg;
  _Atomic bool abort;
  pthread_mutex_t lock;         /* error, parked list, free list, device malloc */
  emu_status status;
  char msg[2048];
  emu_wg **parked;              /* workgroups that yielded (spin), by linear index */
  uint32_t nparked, parked_cap;
  uint32_t nresident;
  emu_wg *free_wgs;
  emu_wg *all_wgs;
  _Atomic uint64_t stat_inst, stat_lanes, stat_yields;
  uint64_t gridid;
  bool cooperative;             /* every workgroup resident at once (emu_launch_opts) */
  /* dynamic parallelism: parameter buffers come from the arena (device
   * memory, made before the allocation snapshot when the module can
   * launch); the children run when the grid has finished, in launch order */
  unsigned depth;               /* 0 for a host launch, 1 + the parent's for a child */
  uint64_t cdp_arena, cdp_arena_size, cdp_arena_used;
  emu_child *children;
  uint32_t nchildren, children_cap, nlaunched;
  uint64_t grid_workspace;      /* cooperative: %envreg1:%envreg2, else 0 */
};

/* What a handler sees. */
struct emu_exec {
  uint8_t *regs;
  const uint8_t *consts;
  unsigned nlanes;
  emu_mask all;                 /* every lane of a wave (32 or 64 ones) */
  emu_mask full;                /* lanes that exist in this wave */
  emu_wave *w;
  emu_frame *f;
  emu_wg *wg;
  emu_grid *l;
  uint64_t gc_base, gc_end;     /* last global allocation hit */
  uint64_t *scratch;            /* parallel-copy temporaries: grown once, reused */
  size_t scratch_cap;           /* in 64-bit words */
  bool gc_readonly;
  bool fault;
  bool trace;                   /* PTXWAVE_EMU_TRACE */
  uint32_t stores;              /* stores and atomics since the wave last looked */
  uint64_t ninst, nlanes_ops;
};

/* ---- operand access ---------------------------------------------------- */
static inline void *emu_ptr(const emu_exec *x, emu_opnd o) {
  return (o & EMU_OPND_CONST) ? (void *)(x->consts + (o & ~EMU_OPND_CONST)) : (void *)(x->regs + o);
}
#define EMU_U64(x, o) ((uint64_t *)emu_ptr((x), (o)))
#define EMU_PRED(x, o) (*(emu_mask *)emu_ptr((x), (o)))

static inline uint64_t emu_type_mask(unsigned bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }
static inline int64_t emu_sext(uint64_t v, unsigned bits) {
  return bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}
/* Writes a predicate result for the lanes of m. */
static inline void emu_pred_write(emu_exec *x, emu_opnd o, emu_mask m, emu_mask v) {
  emu_mask *p = (emu_mask *)emu_ptr(x, o);
  *p = (*p & ~m) | (v & m);
}

/* Runs body for each lane l of m: a plain counted loop when every lane of
 * the wave is active (the common case, which compilers vectorise), else a
 * walk over the set bits. */
#define EMU_LANES(x, m, l, ...) \
  do { \
    if ((m) == (x)->all) { \
      const unsigned _n = (x)->nlanes; \
      for (unsigned l = 0; l < _n; l++) { __VA_ARGS__; } \
    } else { \
      for (emu_mask _mm = (m); _mm; _mm &= _mm - 1) { \
        unsigned l = (unsigned)__builtin_ctzll(_mm); \
        __VA_ARGS__; \
      } \
    } \
  } while (0)
#define EMU_EACH(m, l, ...) \
  do { \
    for (emu_mask _mm = (m); _mm; _mm &= _mm - 1) { \
      unsigned l = (unsigned)__builtin_ctzll(_mm); \
      __VA_ARGS__; \
    } \
  } while (0)

/* ---- faults ------------------------------------------------------------ */
/* Records the launch's first error (with kernel, PTX line, block, thread of
 * the lane) and stops the launch. */
void emu_fault(emu_exec *x, const emu_inst *in, int lane, emu_status st, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Same without an instruction (deadlock, workgroup-level errors). */
void emu_launch_fail(emu_grid *l, emu_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "kernel K, file:line" of an instruction, for messages. */
int emu_where(char *buf, size_t n, const emu_grid *l, const emu_inst *in);

/* ---- decode (emu_decode.c) and the handler selectors of each family ---- */
typedef struct emu_decoder emu_decoder;
emu_status emu_decode_module(emu_module *em, char *err, size_t errn);
/* A family selector fills in->fn (and in->sub, ...) or returns a message
 * saying what is unsupported. */
const char *emu_sel_alu(emu_decoder *d, const ir_instr *i, emu_inst *in);
const char *emu_sel_float(emu_decoder *d, const ir_instr *i, emu_inst *in);
const char *emu_sel_cvt(emu_decoder *d, const ir_instr *i, emu_inst *in);
const char *emu_sel_mem(emu_decoder *d, const ir_instr *i, emu_inst *in);
const char *emu_sel_warp(emu_decoder *d, const ir_instr *i, emu_inst *in);
const char *emu_sel_matrix(emu_decoder *d, const ir_instr *i, emu_inst *in);
const char *emu_sel_mbarrier(emu_decoder *d, const ir_instr *i, emu_inst *in);
const char *emu_sel_video(emu_decoder *d, const ir_instr *i, emu_inst *in);
const char *emu_sel_simd_video(emu_decoder *d, const ir_instr *i, emu_inst *in);
/* wave_mma: its operands (then results) in in->aux, an emu_opnd array */
const char *emu_sel_wave_mma(emu_decoder *d, const ir_instr *i, emu_inst *in);
const char *emu_sel_wmma(emu_decoder *d, const ir_instr *i, emu_inst *in);
/* emu_inst.sub of an EMU_K_SYNC op without a member-mask operand: the
 * .sync.aligned matrix ops wait for the whole warp. */
#define EMU_SYNC_WHOLE_WARP 0xffu
const char *emu_sel_wave(emu_decoder *d, const ir_instr *i, emu_inst *in);
/* hw_id of generation g for the wave with index `wave` of a workgroup on
 * host thread smid (emu_wave_ops.c): the layout lower_sregs.c decodes */
uint32_t emu_hw_id(const ir_gen_info *g, uint32_t wave, uint32_t smid);
bool emu_type_is_float(ir_type t);
/* A message in the decoder's arena. */
const char *emu_dfmt(emu_decoder *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- memory (emu_mem.c) ----------------------------------------------- */
/* Resolves a generic or space address of one lane to a host pointer for
 * `bytes` bytes, checking bounds; NULL after a fault. */
void *emu_addr(emu_exec *x, const emu_inst *in, unsigned lane, unsigned space, uint64_t addr,
               unsigned bytes, bool write);
uint8_t *emu_lane_local(const emu_exec *x, unsigned lane);
/* One atomic of in's atomop and type on `bytes` bytes at p, operand b;
 * returns the old value (cp.reduce.async.bulk's element reductions). */
uint64_t emu_atom_one(const emu_inst *in, void *p, unsigned bytes, uint64_t b);
const emu_alloc *emu_find_alloc(const emu_alloc *a, uint32_t n, uint64_t addr);
/* Reads a NUL-terminated string from device memory (printf formats). */
bool emu_read_string(emu_exec *x, const emu_inst *in, unsigned lane, uint64_t addr, char *buf, size_t n);

/* ---- exec (emu_exec.c) and sched (emu_sched.c) ------------------------- */
typedef enum emu_run_result { EMU_RUN_DONE, EMU_RUN_BLOCKED, EMU_RUN_YIELD, EMU_RUN_FAULT } emu_run_result;
emu_run_result emu_run_wave(emu_wave *w, emu_exec *x);
void emu_wave_start(emu_wave *w, const emu_func *kernel);
/* After lanes exit: completes the barriers whose count is reached. */
void emu_check_barriers(emu_wg *wg);
/* Describes where the lanes of a blocked wave wait (deadlock reports). */
int emu_describe_wait(char *buf, size_t n, const emu_wave *w);
emu_status emu_run_launch(emu_grid *l);

/* ---- builtins (emu_printf.c) ------------------------------------------ */
/* Runs a call of a declared-only function the emulator provides. */
void emu_builtin_call(emu_exec *x, const emu_inst *in, const emu_call *c, emu_builtin bi, emu_mask m);

/* ---- context (emu_context.c) ------------------------------------------- */
void emu_set_error(emu_context *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
emu_func *emu_module_find_func(emu_module *m, const char *name);

#endif
