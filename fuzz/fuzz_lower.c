/* fuzz/fuzz_lower.c: the lowering passes on whatever PTX parses.
 *
 * For wave 64 and wave 32: lower_module either lowers the module (and the
 * result verifies with require_lowered: it checks that itself) or reports
 * an error naming what it could not lower -- never crash, hang, leak, or
 * fail without saying why.  The hazard analysis runs too. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ir/ir.h"
#include "lower/lower.h"
#include "ptx/ptx_parse.h"
#include "util/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *s = (const char *)data;
  for (unsigned wave = 64; wave >= 32; wave /= 2) {
    pw_diag d;
    pw_diag_init(&d, NULL);
    d.max_errors = 10;
    ir_module *m = ptx_parse("fuzz.ptx", s, size, &d, NULL);
    if (!m) {
      pw_diag_fini(&d);
      return 0;
    }
    lower_pipeline_options o = {.warn_hazards = true, .diag = &d, .verify_each = true};
    int before = d.nerrors;
    bool ok = lower_module(m, ir_target_for_wave(wave), &o);
    if (!ok && d.nerrors == before) { /* a failure always says why */
      fprintf(stderr, "fuzz_lower: lower_module failed at wave %u without a diagnostic\n", wave);
      abort();
    }
    ir_module_destroy(m);
    pw_diag_fini(&d);
  }
  return 0;
}
