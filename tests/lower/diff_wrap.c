/* tests/lower/diff_wrap.c: the emulator's own test suites, differential.
 *
 * Linked into a copy of each emulator test (tests/unit/test_emu_*.c) with
 * -Wl,--wrap=emu_launch,--wrap=emu_launch_buffer: every launch a test makes
 * runs unlowered (the test checks that result, as usual) and lowered for
 * wave 64 and wave 32 (lower_diff.c), and a difference fails the test that
 * launched it.  So each kernel of the instruction-conformance, warp,
 * control-flow and memory suites, with the inputs and block sizes the tests
 * choose, is a differential test of lower/.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/emu_internal.h"
#include "lower_diff.h"

emu_status __real_emu_launch_buffer(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block,
                                    uint32_t shared_bytes, const void *buffer, size_t buffer_size);
emu_status __wrap_emu_launch_buffer(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block,
                                    uint32_t shared_bytes, const void *buffer, size_t buffer_size);
emu_status __wrap_emu_launch(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block,
                             uint32_t shared_bytes, void **params);

static lower_diff_stats stats;

emu_status __real_emu_context_create(const emu_options *opt, emu_context **out);
emu_status __wrap_emu_context_create(const emu_options *opt, emu_context **out);

emu_status __wrap_emu_context_create(const emu_options *opt, emu_context **out) {
  emu_options o = opt ? *opt : (emu_options){0};
  o.threads = 1;
  return __real_emu_context_create(&o, out);
}

emu_status __wrap_emu_launch_buffer(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block,
                                    uint32_t shared_bytes, const void *buffer, size_t buffer_size) {
  unsigned before = stats.failures;
  emu_status s = lower_diff_launch(__real_emu_launch_buffer, m, kernel, grid, block, shared_bytes, buffer,
                                   buffer_size, &stats);
  ck_assert_msg(stats.failures == before, "lowering changed the result: %s", stats.first_failure);
  return s;
}

emu_status __wrap_emu_launch(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block,
                             uint32_t shared_bytes, void **params) {
  unsigned n = 0;
  const emu_param_info *pi = NULL;
  uint32_t size = 0;
  emu_status st = emu_kernel_params(m, kernel, &n, &pi, &size);
  if (st != EMU_OK) return st;
  uint8_t *buf = calloc(1, size ? size : 1);
  for (unsigned i = 0; i < n; i++) {
    if (!params || !params[i]) {
      free(buf);
      return EMU_ERR_INVALID_VALUE;
    }
    memcpy(buf + pi[i].offset, params[i], pi[i].size);
  }
  st = __wrap_emu_launch_buffer(m, kernel, grid, block, shared_bytes, buf, size);
  free(buf);
  return st;
}

/* One line per test process (check forks one per test): what was compared. */
__attribute__((destructor)) static void report(void) {
  if (stats.launches)
    fprintf(stderr, "lower-diff: %u launches, %u lowered runs compared, %u error launches skipped, "
            "%u schedule-dependent, %u failures\n", stats.launches, stats.compared, stats.skipped, stats.schedule,
            stats.failures);
}
