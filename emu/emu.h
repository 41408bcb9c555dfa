/* emu/emu.h: the SIMT emulator of the IR, the executable reference of
 * ptxwave (design.md, "The emulator is the executable reference").
 *
 * A context owns device memory (an allocation table of real host
 * allocations: a device pointer is the host address of its bytes), the
 * loaded modules and the host threads that run workgroups.  A module is an
 * ir_module decoded once into the emulator's compact form.  A launch runs a
 * kernel over a grid of workgroups, each workgroup as waves of 32 (unlowered
 * IR: a wave is a CUDA warp) or 64 lanes (lowered IR), and returns when the
 * grid has finished: launches are synchronous.
 *
 * Errors are status codes; the message of the last failure (what, where:
 * kernel, PTX line, block, thread) is kept by the context and read with
 * emu_error_message().  Nothing here exits or aborts the host program.
 *
 * How it works, what it guarantees and what it does not support:
 * docs/emulator.md.
 */
#ifndef PW_EMU_H
#define PW_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/ir.h"

typedef struct emu_context emu_context;
typedef struct emu_module emu_module;

typedef enum emu_status {
  EMU_OK = 0,
  EMU_ERR_INVALID_VALUE,    /* bad argument: null pointer, bad size, zero grid ... */
  EMU_ERR_OUT_OF_MEMORY,
  EMU_ERR_NOT_FOUND,        /* no kernel or symbol of that name */
  EMU_ERR_UNSUPPORTED,      /* an instruction or form the emulator does not run */
  EMU_ERR_ILLEGAL_ADDRESS,  /* out of bounds, freed, misaligned or wild access */
  EMU_ERR_ASSERT,           /* __assertfail called by device code */
  EMU_ERR_TRAP,             /* trap executed, or unreachable code reached */
  EMU_ERR_DEADLOCK,         /* every wave of a workgroup waits and none can release it */
  EMU_ERR_LAUNCH,           /* invalid launch configuration, stack overflow */
} emu_status;

const char *emu_status_name(emu_status s);

typedef struct emu_options {
  unsigned threads;         /* host threads running workgroups; 0: number of cores */
  bool memcheck;            /* quarantine freed memory and report use after free */
  unsigned wave_size;       /* 0: the module's facts (32 for unlowered IR); else 32 or 64 */
  uint32_t stack_size;      /* per-thread local memory in bytes; 0: 64 KiB */
  FILE *printf_out;         /* device printf output; NULL: stdout */
  uint32_t spin_limit;      /* backward branches without a store before a wave yields; 0: 4096 */
  uint64_t max_instructions;/* watchdog: a wave executing more fails the launch; 0: no limit */
} emu_options;

/* ---- context ---------------------------------------------------------- */
emu_status emu_context_create(const emu_options *opt, emu_context **out);
void emu_context_destroy(emu_context *c);
/* The message of the last failed call on this context ("" if none). */
const char *emu_error_message(const emu_context *c);
/* The same, copied into buf (cap bytes, NUL-terminated) under the lock
 * its writers take: for a caller whose other host threads may fail at the
 * same time. */
void emu_error_copy(emu_context *c, char *buf, size_t cap);

/* ---- memory ----------------------------------------------------------- */
/* Device pointers are host addresses; bytes == 0 allocates a 1-byte block.
 * The memory lives in one shared mapping of a memfd (emu_heap.c), so that
 * another process can map an allocation (emu_mem_query's fd and offset);
 * where the system refuses one, in private memory. */
emu_status emu_malloc(emu_context *c, size_t bytes, uint64_t *dptr);
/* The same with a tag the caller reads back (emu_mem_query): the runtime
 * keeps there the device an allocation belongs to. */
emu_status emu_malloc_tagged(emu_context *c, size_t bytes, uint16_t tag, uint64_t *dptr);
emu_status emu_free(emu_context *c, uint64_t dptr);
/* Makes host memory the caller owns addressable by device code (mapped or
 * registered host memory, mappings the caller made); emu_unregister forgets
 * it. */
emu_status emu_register(emu_context *c, void *host, size_t bytes);
emu_status emu_register_tagged(emu_context *c, void *host, size_t bytes, uint16_t tag);
emu_status emu_unregister(emu_context *c, void *host);
emu_status emu_memcpy_htod(emu_context *c, uint64_t dst, const void *src, size_t bytes);
emu_status emu_memcpy_dtoh(emu_context *c, void *dst, uint64_t src, size_t bytes);
emu_status emu_memcpy_dtod(emu_context *c, uint64_t dst, uint64_t src, size_t bytes);
/* Fills count elements of 1, 2 or 4 bytes (cuMemsetD8/D16/D32). */
emu_status emu_memset(emu_context *c, uint64_t dst, uint32_t value, unsigned elem_bytes, size_t count);
/* The allocation holding dptr: its base and size (cuMemGetAddressRange). */
emu_status emu_mem_range(emu_context *c, uint64_t dptr, uint64_t *base, size_t *bytes);
typedef struct emu_mem_desc {
  uint64_t base;
  size_t bytes;
  uint16_t tag;
  bool owned;               /* emu_malloc'ed (else registered or a module variable) */
  int fd;                   /* owned and shareable: the memfd holding it, */
  uint64_t offset;          /* and the allocation's offset in it; else fd -1 */
} emu_mem_desc;
/* The live allocation holding dptr; EMU_ERR_NOT_FOUND if none. */
emu_status emu_mem_query(emu_context *c, uint64_t dptr, emu_mem_desc *out);

/* ---- modules ---------------------------------------------------------- */
/* Decodes every function of m (which must stay alive while the module is
 * loaded) and allocates its global and constant variables.  A function that
 * uses an instruction the emulator does not run still loads: launching a
 * kernel that can reach it fails with EMU_ERR_UNSUPPORTED and a message
 * naming the instruction, the kernel and the PTX line. */
emu_status emu_module_load(emu_context *c, ir_module *m, emu_module **out);
void emu_module_unload(emu_module *m);
/* Address and size of a module-scope .global or .const variable. */
emu_status emu_module_global(emu_module *m, const char *name, uint64_t *dptr, size_t *bytes);

typedef struct emu_param_info {
  uint32_t offset, size, align;
} emu_param_info;
/* The kernel's .param layout (CUDA's: offsets from ir_param.offset). */
emu_status emu_kernel_params(emu_module *m, const char *kernel, unsigned *nparams,
                             const emu_param_info **params, uint32_t *buffer_size);

/* ---- launch ----------------------------------------------------------- */
typedef struct emu_dim3 {
  uint32_t x, y, z;
} emu_dim3;

/* Runs kernel over grid x block with shared_bytes of dynamic shared memory;
 * params is CUDA's kernelParams: one pointer per .param, each to its value. */
emu_status emu_launch(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block,
                      uint32_t shared_bytes, void **params);
/* The same with the parameter buffer already packed in CUDA's layout
 * (CU_LAUNCH_PARAM_BUFFER_POINTER). */
emu_status emu_launch_buffer(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block,
                             uint32_t shared_bytes, const void *buffer, size_t buffer_size);
/* Launch options beyond CUDA's plain launch. */
typedef struct emu_launch_opts {
  /* cuLaunchCooperativeKernel: every workgroup of the grid is resident at
   * once (the grid must fit the device: the caller checks occupancy), and
   * the grid workspace cooperative groups' grid.sync() counts arrivals in
   * is passed as CUDA's driver passes it, its address in %envreg1 (high
   * half) and %envreg2 (low half); a plain launch reads 0 there, and
   * grid.sync() traps as on a GPU (docs/emulator.md "Cooperative grids"). */
  bool cooperative;
  /* where the launch's own error message goes (besides the context's,
   * which concurrent launches share): a fault's message, for a caller
   * that runs launches on several host threads at once */
  char *msg;
  size_t msg_cap;
} emu_launch_opts;
/* The checks a launch makes before it runs anything (the kernel exists and
 * can run, the grid, block, shared memory and parameter sizes): the errors
 * emu_launch_buffer_opts would return at once, so that a caller that runs
 * the launch later, on another host thread, can return them now. */
emu_status emu_launch_check(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block,
                            uint32_t shared_bytes, size_t buffer_size);
/* emu_launch_buffer with options; opts NULL: a plain launch. */
emu_status emu_launch_buffer_opts(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block,
                                  uint32_t shared_bytes, const void *buffer, size_t buffer_size,
                                  const emu_launch_opts *opts);
/* Launches are synchronous (each runs on the calling thread and host
 * threads of its own, and returns when done); several host threads may
 * launch at once, also while others copy, allocate or register memory.
 * Freeing or unloading what a running launch uses is the caller's to
 * order (the runtime waits for the work first).  This returns EMU_OK (the
 * runtime's streams build on it). */
emu_status emu_synchronize(emu_context *c);

/* Counters of the last launch, for benchmarks. */
typedef struct emu_stats {
  uint64_t instructions;    /* wave instructions dispatched */
  uint64_t lane_ops;        /* sum over dispatches of the active lanes */
  uint64_t workgroups;
  uint64_t wg_yields;       /* workgroups parked by spin detection */
} emu_stats;
void emu_last_stats(const emu_context *c, emu_stats *out);

#endif
