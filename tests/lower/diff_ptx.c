/* tests/lower/diff_ptx.c: `lower_diff_ptx [--seeds N] [--targets T,T...] FILE.ptx...`: every
 * kernel of each PTX file, on random inputs, run unlowered and lowered for
 * wave 64 and 32 (lower_diff.c), with blocks of 33, 48, 96 (not multiples
 * of 64) and 64, 128, 256, 1024 threads, two blocks each.
 *
 * Inputs (from the seed): each 64-bit parameter is a pointer to its own
 * 1 MiB buffer whose words are small integers (0..511) or floats in [0,1);
 * each 32-bit integer parameter is the number of threads launched, so
 * kernels guarded by `if (i < n)` run fully; float parameters are 0.5;
 * other parameters (structs, arrays) are zero.  A launch that faults
 * unlowered (a kernel that needs inputs this cannot guess) is skipped and
 * counted; every other one must leave bit-identical memory.  Exit status 1
 * on any difference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/emu.h"
#include "ir/ir.h"
#include "lower_diff.h"
#include "ptx/ptx_parse.h"
#include "util/diag.h"
#include "util/pw_file.h"

#define BUF_BYTES (1u << 20)

static uint64_t rng(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1Dull;
}

/* Values that differ between any two runs: not comparable. */
static bool reads_time(const ir_func *f) {
  ir_foreach_block(f, b) ir_foreach_instr(b, i) {
    if (i->op != ir_op_sreg) continue;
    switch ((ir_sreg)i->sreg) {
    case ir_sreg_clock: case ir_sreg_clock_hi: case ir_sreg_clock64: case ir_sreg_globaltimer:
    case ir_sreg_globaltimer_lo: case ir_sreg_globaltimer_hi: case ir_sreg_smid:
      return true;
    default: break;
    }
  }
  return false;
}

static int run_file(const char *path, unsigned nseeds, lower_diff_stats *st) {
  size_t len;
  char *text = pw_read_file(path, &len);
  if (!text) {
    fprintf(stderr, "%s: cannot read\n", path);
    return 1;
  }
  pw_diag d;
  pw_diag_init(&d, stderr);
  ir_module *m = ptx_parse(path, text, len, &d, NULL);
  pw_diag_fini(&d);
  free(text);
  if (!m) return 1;
  emu_context *c;
  emu_options o = {.threads = 1};   /* one host thread: runs repeat exactly */
  if (emu_context_create(&o, &c) != EMU_OK) return 1;
  emu_module *em;
  if (emu_module_load(c, m, &em) != EMU_OK) {
    fprintf(stderr, "%s: load: %s\n", path, emu_error_message(c));
    return 1;
  }
  static const unsigned blocks[] = {33, 48, 96, 64, 128, 256, 1024};
  uint32_t *host = malloc(BUF_BYTES);
  ir_foreach_func(m, f) {
    if (!f->is_kernel || f->is_decl) continue;
    if (reads_time(f)) {
      printf("%s: %s: not compared (it reads a clock, timer or %%smid)\n", path, f->name);
      continue;
    }
    unsigned before = st->failures, cmp0 = st->compared, skip0 = st->skipped, sch0 = st->schedule;
    for (unsigned seed = 1; seed <= nseeds; seed++) {
      for (size_t bi = 0; bi < sizeof blocks / sizeof *blocks; bi++) {
        unsigned bs = blocks[bi], grid = 2;
        uint64_t s = seed * 0x9E3779B97F4A7C15ull + bi;
        unsigned np = 0;
        const emu_param_info *pi;
        uint32_t psize;
        emu_kernel_params(em, f->name, &np, &pi, &psize);
        uint8_t *pbuf = calloc(1, psize + 8);
        uint64_t *bufs = calloc(np + 1, sizeof *bufs);
        for (unsigned k = 0; k < np; k++) {
          const ir_param *p = &f->params[k];
          unsigned bits = ir_type_bits((ir_type)p->type);
          if (p->count == 1 && bits == 64 && ir_type_kind_of((ir_type)p->type) != IR_TK_FLOAT) {
            for (unsigned w = 0; w < BUF_BYTES / 4; w++) {
              uint64_t r = rng(&s);
              if ((r & 3) == 0) {
                float fv = (float)((r >> 8) & 0xffff) / 65536.0f;
                memcpy(&host[w], &fv, 4);
              } else {
                host[w] = (uint32_t)(r >> 40) & 511;
              }
            }
            emu_malloc(c, BUF_BYTES, &bufs[k]);
            emu_memcpy_htod(c, bufs[k], host, BUF_BYTES);
            memcpy(pbuf + pi[k].offset, &bufs[k], 8);
          } else if (p->count == 1 && bits == 32 && ir_type_kind_of((ir_type)p->type) == IR_TK_FLOAT) {
            float h = 0.5f;
            memcpy(pbuf + pi[k].offset, &h, 4);
          } else if (p->count == 1 && bits == 32) {
            uint32_t n = grid * bs;
            memcpy(pbuf + pi[k].offset, &n, 4);
          }
        }
        lower_diff_launch(emu_launch_buffer, em, f->name, (emu_dim3){grid, 1, 1}, (emu_dim3){bs, 1, 1}, 8192, pbuf,
                          psize, st);
        for (unsigned k = 0; k < np; k++)
          if (bufs[k]) emu_free(c, bufs[k]);
        free(bufs);
        free(pbuf);
      }
    }
    printf("%s: %s: %u compared, %u skipped (faults on random inputs), %u schedule-dependent, %u different\n", path,
           f->name, st->compared - cmp0, st->skipped - skip0, st->schedule - sch0, st->failures - before);
  }
  free(host);
  emu_module_unload(em);
  emu_context_destroy(c);
  ir_module_destroy(m);
  return 0;
}

int main(int argc, char **argv) {
  unsigned nseeds = 3;
  int bad = 0;
  lower_diff_stats st = {0};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--seeds") && i + 1 < argc) {
      nseeds = (unsigned)atoi(argv[++i]);
      continue;
    }
    if (!strcmp(argv[i], "--targets") && i + 1 < argc) {
      /* comma-separated target names instead of wave64,wave32 */
      static const char *names[16];
      static char buf[256];
      unsigned n = 0;
      snprintf(buf, sizeof buf, "%s", argv[++i]);
      for (char *p = strtok(buf, ","); p && n < 16; p = strtok(NULL, ",")) names[n++] = p;
      lower_diff_set_targets(names, n);
      continue;
    }
    bad |= run_file(argv[i], nseeds, &st);
  }
  printf("lower-diff-ptx: %u launches, %u lowered runs compared, %u launches skipped (unlowered run faults), "
         "%u schedule-dependent (equal to the unlowered run at the same wave size), %u failures\n",
         st.launches, st.compared, st.skipped, st.schedule, st.failures);
  return bad || st.failures ? 1 : 0;
}
