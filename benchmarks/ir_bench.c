/* benchmarks/ir_bench.c: throughput of the IR's builder, verifier,
 * dominators, printer and parser on a synthetic module the size of the
 * largest real PTX module (859k instructions).
 *
 *   ir_bench [INSTRUCTIONS [FUNCTIONS]]
 *
 * Each function is a chain of blocks, each a loop-free body of address
 * arithmetic, loads, FMAs, stores and a carry chain, ending in a cbr to the
 * next block or the exit, so every analysis sees realistic shapes.  Prints
 * seconds (CPU time of this thread) and rates, and the arena bytes per
 * instruction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ir/ir.h"
#include "ir/ir_builder.h"
#include "util/diag.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void build_func(ir_module *m, int k, long ninstr) {
  char name[32];
  snprintf(name, sizeof name, "k%d", k);
  ir_func *f = ir_func_create(m, name, true);
  ir_param *pp = ir_func_add_param(f, "p", ir_type_u64, IR_SPACE_PARAM_ENTRY, 0, 1);
  ir_func_layout_params(f);
  ir_block *entry = ir_block_create(f, NULL);
  ir_builder b = ir_builder_at_end(entry);
  ir_value *base = ir_build_mem(&b, ir_op_ld, ir_type_u64, ir_symref(&b, ir_sym_param(pp), 0, ir_type_u64),
                                0, 0, NULL, 1, IR_MODS(.space = IR_SPACE_PARAM_ENTRY))->dst[0];
  ir_value *tid = ir_read_sreg(&b, ir_sreg_tid, 0);
  ir_block *exit = NULL;
  const int per = 400;
  long nblocks = ninstr / per + 1;
  ir_block *cur = ir_block_create(f, NULL);
  ir_br(&b, cur);
  exit = ir_block_create(f, NULL);
  for (long n = 0; n < nblocks; n++) {
    ir_block *next = n + 1 < nblocks ? ir_block_create_after(f, cur, NULL) : exit;
    b = ir_builder_at_end(cur);
    ir_value *acc = tid;
    for (int i = 0; i < per; i += 8) {
      ir_value *x = ir_add(&b, ir_type_u32, acc, ir_imm(&b, ir_type_u32, (uint64_t)i));
      ir_value *w = ir_build_value(&b, ir_op_mul, ir_type_u32, 2, (ir_value *[]){x, tid},
                                   IR_MODS(.mulmode = IR_MUL_WIDE));
      ir_value *a = ir_add(&b, ir_type_u64, base, w);
      ir_value *v = ir_build_mem(&b, ir_op_ld, ir_type_f32, a, 16, 0, NULL, 1,
                                 IR_MODS(.space = IR_SPACE_GLOBAL, .nc = 1))->dst[0];
      ir_value *y = ir_alu3(&b, ir_op_fma, ir_type_f32, v, v, ir_imm_f32(&b, 1.0f), .rnd = IR_RND_RN);
      ir_build_mem(&b, ir_op_st, ir_type_f32, a, 0, 1, &y, 0, IR_MODS(.space = IR_SPACE_GLOBAL));
      ir_value *lo = ir_add(&b, ir_type_u32, x, tid, .cc = 1);
      acc = ir_alu3(&b, ir_op_addc, ir_type_u32, lo, ir_imm(&b, ir_type_u32, 0), lo->def->dst[1]);
    }
    ir_value *c = ir_setp(&b, ir_type_u32, acc, tid, .cmp = IR_CMP_LT);
    ir_cbr(&b, c, next, exit);
    cur = next;
  }
  b = ir_builder_at_end(exit);
  ir_ret(&b);
}

int main(int argc, char **argv) {
  long ninstr = argc > 1 ? atol(argv[1]) : 860000;
  int nfuncs = argc > 2 ? atoi(argv[2]) : 4;
  double t0 = now();
  ir_module *m = ir_module_create("bench");
  for (int k = 0; k < nfuncs; k++) build_func(m, k, ninstr / nfuncs);
  double t1 = now();
  long count = 0;
  ir_foreach_func(m, f) ir_foreach_block(f, b) ir_foreach_instr(b, i) count++;
  pw_diag d;
  pw_diag_init(&d, stderr);
  if (!ir_verify(m, NULL, &d)) return 1;
  double t2 = now();
  ir_foreach_func(m, f) {
    ir_compute_dominators(f);
    ir_compute_post_dominators(f);
  }
  double t3 = now();
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  ir_print_module(mem, m);
  fclose(mem);
  double t4 = now();
  ir_module *m2 = ir_parse("bench.pwir", text, len, &d);
  double t5 = now();
  if (!m2) return 1;
  printf("instructions     %ld in %d functions\n", count, nfuncs);
  printf("arena            %.1f MB, %.0f bytes/instruction\n", m->arena.total / 1e6,
         (double)m->arena.total / (double)count);
  printf("build            %.3f s  %.1f M instr/s\n", t1 - t0, count / (t1 - t0) / 1e6);
  printf("verify           %.3f s  %.1f M instr/s\n", t2 - t1, count / (t2 - t1) / 1e6);
  printf("dom + postdom    %.3f s\n", t3 - t2);
  printf("print            %.3f s  %.1f MB/s (%.1f MB)\n", t4 - t3, len / (t4 - t3) / 1e6, len / 1e6);
  printf("parse            %.3f s  %.1f MB/s, %.1f M instr/s\n", t5 - t4, len / (t5 - t4) / 1e6,
         count / (t5 - t4) / 1e6);
  free(text);
  ir_module_destroy(m2);
  ir_module_destroy(m);
  pw_diag_fini(&d);
  return 0;
}
