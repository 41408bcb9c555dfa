/* tests/lower/lower_diff.h: differential testing of lower/ on the emulator
 * (issue 5's acceptance; docs/lowering.md, "Testing").
 *
 * lower_diff_launch() runs a kernel as given (unlowered IR: waves of 32 =
 * warps, CUDA semantics), then the same module lowered for wave 64 and for
 * wave 32, each from the same memory state, and compares every byte of
 * device memory (every allocation of the context, and the module's .global
 * and .const variables by name) and the device printf lines with the
 * unlowered run's (a lowered module prints through the runtime's printf
 * buffer, drained after its run by rt_printf_drain).  A difference,
 * a lowering failure or a different launch status is reported (with the
 * kernel, wave size and first differing address) and counted.  Memory is
 * left as the unlowered run left it, so a test built on the emulator goes
 * on unchanged.
 */
#ifndef PW_LOWER_DIFF_H
#define PW_LOWER_DIFF_H

#include "emu/emu.h"

typedef emu_status (*lower_diff_launch_fn)(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block,
                                           uint32_t shared_bytes, const void *buffer, size_t buffer_size);

typedef struct lower_diff_stats {
  unsigned launches;       /* unlowered launches seen */
  unsigned compared;       /* (launch, wave size) pairs compared */
  unsigned skipped;        /* unlowered launch failed (error tests): nothing to compare */
  unsigned schedule;       /* differed, but equal to the unlowered run by waves of the same
                              size: the kernel depends on scheduling (lower_diff.c) */
  unsigned failures;       /* mismatches, lowering failures, status differences */
  char first_failure[1024];
} lower_diff_stats;

/* real: the launch that runs a module (emu_launch_buffer, or the real one
 * behind a --wrap).  Returns the unlowered launch's status. */
emu_status lower_diff_launch(lower_diff_launch_fn real, emu_module *m, const char *kernel, emu_dim3 grid,
                             emu_dim3 block, uint32_t shared_bytes, const void *buffer, size_t buffer_size,
                             lower_diff_stats *st);

/* Lower for these targets (ir_target_find names) instead of wave64 and
 * wave32; n = 0 restores those.  The names must outlive the calls. */
void lower_diff_set_targets(const char *const *names, unsigned n);

#endif
