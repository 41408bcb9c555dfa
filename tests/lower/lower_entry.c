/* tests/lower/lower_entry.c: lower_barriers on a kernel whose entry block
 * is a loop header (IR built by hand: the PTX front end never makes one,
 * and ir_verify rejects it).  The named-barrier array must be zeroed once,
 * in a block outside the loop: the pass splits a fresh entry, every back
 * edge targets the old contents, and the result verifies.  Without the
 * split the zeroing would sit in the loop and the entry would keep its
 * predecessors (ir_verify: "the entry block has predecessors").
 */
#include <stdio.h>

#include "ir/ir_builder.h"
#include "lower/lower.h"
#include "util/diag.h"

static int fails;
#define CHECK(c)                                                                                   \
  do {                                                                                             \
    if (!(c)) {                                                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                        \
      fails++;                                                                                     \
    }                                                                                              \
  } while (0)

static unsigned count_shared_stores(const ir_block *b) {
  unsigned n = 0;
  for (const ir_instr *i = b->first; i; i = i->next)
    if (i->op == ir_op_st && i->mods.space == IR_SPACE_SHARED && i->mods.vec >= 2) n++;   /* the zeroing's */
  return n;
}

static bool in_loop_header(const ir_func *f, const ir_block *b) {
  (void)f;
  return b->npreds != 0;
}

int main(void) {
  for (unsigned w = 32; w <= 64; w += 32) {
    ir_module *m = ir_module_create("entry-loop");
    ir_func *f = ir_func_create(m, "k", true);
    ir_block *head = ir_block_create(f, NULL), *done = ir_block_create(f, NULL);
    ir_builder b = ir_builder_at_end(head);
    /* head: bar.sync 1, 64; @(tid.x < 5) bra head; done: ret */
    ir_build(&b, ir_op_bar, ir_type_none, 2, (ir_value *[]){ir_imm(&b, ir_type_u32, 1), ir_imm(&b, ir_type_u32, 64)},
             0, NULL, IR_MODS(.barmode = IR_BAR_SYNC, .aligned = 1));
    ir_value *t = ir_read_sreg(&b, ir_sreg_tid, 0);
    ir_value *p = ir_setp(&b, ir_type_u32, t, ir_imm(&b, ir_type_u32, 5), .cmp = IR_CMP_LT);
    ir_cbr(&b, p, head, done);
    b = ir_builder_at_end(done);
    ir_ret(&b);
    ir_compute_preds(f);
    CHECK(f->entry == head && head->npreds == 1);

    pw_diag d;
    pw_diag_init(&d, stderr);
    ir_module_set_target(m, ir_target_for_wave(w));   /* as lower_module does first */
    CHECK(lower_barriers(m, &(lower_barriers_options){.diag = &d}));
    CHECK(d.nerrors == 0);
    /* the zeroing (barrier 1: ids 0..1, 4 words, one v4 store) in an entry
     * without predecessors */
    CHECK(f->entry->npreds == 0);
    CHECK(count_shared_stores(f->entry) == 1);
    unsigned in_loops = 0;
    ir_foreach_block(f, blk) if (blk != f->entry && in_loop_header(f, blk)) in_loops += count_shared_stores(blk) >= 1;
    CHECK(in_loops == 0);
    CHECK(ir_verify(m, NULL, &d));
    pw_diag_fini(&d);
    ir_module_destroy(m);
  }
  if (fails) fprintf(stderr, "lower_entry: %d checks failed\n", fails);
  else printf("lower_entry: ok\n");
  return fails ? 1 : 0;
}
