/* fuzz/fuzz_emu.c: the emulator on whatever PTX parses.
 *
 * Each kernel of the module is launched on a small grid (2 blocks of 40
 * threads: a partial warp, two waves) with every parameter word pointing at
 * one 4 KiB device buffer, a 4 KiB stack and a watchdog of 20,000
 * instructions per wave.  Launches may fail (bad addresses, deadlocks,
 * unsupported forms, the watchdog): they must never crash, hang, leak or
 * trip a sanitizer. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/emu.h"
#include "ir/ir.h"
#include "ptx/ptx_parse.h"
#include "util/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  d.max_errors = 4;
  ir_module *m = ptx_parse("fuzz.ptx", (const char *)data, size, &d, NULL);
  pw_diag_fini(&d);
  if (!m) return 0;
  FILE *devnull = fopen("/dev/null", "w");
  emu_options o = {.threads = 1, .stack_size = 4096, .max_instructions = 20000, .printf_out = devnull,
                   .spin_limit = 64};
  emu_context *ctx;
  emu_module *em;
  if (emu_context_create(&o, &ctx) == EMU_OK) {
    if (emu_module_load(ctx, m, &em) == EMU_OK) {
      uint64_t buf;
      if (emu_malloc(ctx, 4096, &buf) == EMU_OK) {
        ir_foreach_func(m, f) {
          if (!f->is_kernel) continue;
          unsigned np;
          const emu_param_info *pi;
          uint32_t psize;
          if (emu_kernel_params(em, f->name, &np, &pi, &psize) != EMU_OK || psize > 4096) continue;
          uint8_t params[4096 + 8];
          for (uint32_t k = 0; k + 8 <= sizeof params; k += 8) memcpy(params + k, &buf, 8);
          emu_launch_buffer(em, f->name, (emu_dim3){2, 1, 1}, (emu_dim3){40, 1, 1}, 64, params, psize);
        }
      }
    }
    emu_context_destroy(ctx);
  }
  fclose(devnull);
  ir_module_destroy(m);
  return 0;
}
