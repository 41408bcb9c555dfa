/* tests/lower/lower_contract.c: pass contracts (lower/lower_contract.c).
 *
 * A deliberately incomplete pass: its contract says it eliminates vote,
 * but it lowers only vote.ballot.  In a verifying run lower_pass_done must
 * name the pass and the vote.any it left (with its line and column in the
 * .pwir below), and fail.  The complete pass passes; a pass that reports
 * what it leaves (lower_error) is not blamed for it.  Progress as NIR_PASS
 * uses it: after no progress nothing is invalidated or printed; after
 * progress the analyses the pass does not preserve are invalidated and
 * the IR is printed when asked.  (The real passes' contracts: ptxwave
 * lower verifies each pass, so every lowering test of the filecheck suite
 * checks them.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir_builder.h"
#include "lower/lower_internal.h"
#include "pw_config.h"
#include "util/diag.h"

static int fails;
#define CHECK(c)                                                                                   \
  do {                                                                                             \
    if (!(c)) {                                                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                        \
      fails++;                                                                                     \
    }                                                                                              \
  } while (0)

static const char *votes =
    "kernel @k(param::entry u64 @p) {\n"
    "bb0:\n"
    "  %p = ld.param::entry.u64 [@p]\n"
    "  %t = sreg tid.x\n"
    "  %q = setp.eq.u32 %t, 0\n"
    "  %b = vote.sync.ballot.b32 %q, 0xffffffff\n"
    "  %a = vote.sync.any.pred %q, 0xffffffff\n"
    "  %s = selp.u32 %b, 0, %a\n"
    "  st.global.u32 [%p], %s\n"
    "  ret\n"
    "}\n";

static ir_module *parse(const char *text) {
  pw_diag d;
  pw_diag_init(&d, stderr);
  ir_module *m = ir_parse("votes.pwir", text, strlen(text), &d);
  pw_diag_fini(&d);
  return m;
}

/* ---- the test passes: lower_walk with their own want ---------------------- */
typedef struct test_pass {
  bool ballot_only;    /* the incomplete one */
  bool report_rest;    /* reports what it leaves */
  pw_diag *diag;
} test_pass;

static bool want_vote(const ir_instr *i, void *data) {
  (void)data;
  return i->op == ir_op_vote;
}

/* Replaces a vote by a constant (the test looks at what remains, not at
 * the meaning). */
static bool lower_vote(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  const test_pass *t = data;
  if (t->ballot_only && i->mods.vote != IR_VOTE_BALLOT) {
    if (t->report_rest) lower_error(t->diag, i, "test_votes does not lower this vote");
    return false;
  }
  out[0] = ir_imm(b, (ir_type)i->dst[0]->type, 0);
  return true;
}

static const lower_contract test_votes_contract = {
    .pass = "test_votes",
    .ops = (const ir_op[]){ir_op_vote, ir_op_count},
    .preserves = IR_ANALYSIS_POST_DOMINANCE,
};

/* Runs the test pass on a fresh module; returns lower_pass_done's answer
 * and its messages (caller frees). */
static bool run(test_pass t, bool verify, char **msgs, ir_module **keep) {
  ir_module *m = parse(votes);
  CHECK(m != NULL);
  if (!m) return false;
  ir_foreach_func(m, f) ir_compute_dominators(f), ir_compute_post_dominators(f);
  pw_diag d;
  pw_diag_init(&d, NULL);
  t.diag = &d;
  bool progress = lower_walk(m, want_vote, lower_vote, &t);
  CHECK(progress);
  bool ok = lower_pass_done(m, &test_votes_contract, progress,
                            &(lower_pipeline_options){.verify_each = verify, .diag = &d});
  *msgs = strdup(pw_diag_text(&d) ? pw_diag_text(&d) : "");
  pw_diag_fini(&d);
  if (keep) *keep = m;
  else ir_module_destroy(m);
  return ok;
}

static void incomplete_pass(void) {
  char *msgs;
  /* line 7, column 3: the vote.any the pass left */
  CHECK(!run((test_pass){.ballot_only = true}, true, &msgs, NULL));
  CHECK(strstr(msgs, "votes.pwir:7:3: error:") != NULL);
  CHECK(strstr(msgs, "remains after test_votes") != NULL);
  CHECK(strstr(msgs, "vote.sync.any.pred") != NULL);
  CHECK(strstr(msgs, "'k'") != NULL);
  if (fails) fprintf(stderr, "%s", msgs);
  free(msgs);
  /* without verify_each the contract is checked only in a build
   * configured with -Dlower_verify_each=true (the fast path otherwise) */
  CHECK(run((test_pass){.ballot_only = true}, false, &msgs, NULL) == !PW_LOWER_VERIFY_EACH);
  CHECK(!*msgs == !PW_LOWER_VERIFY_EACH);
  free(msgs);
  /* the complete pass */
  CHECK(run((test_pass){.ballot_only = false}, true, &msgs, NULL));
  CHECK(!*msgs);
  free(msgs);
  /* reported, not blamed: the pass's own error only */
  CHECK(run((test_pass){.ballot_only = true, .report_rest = true}, true, &msgs, NULL));
  CHECK(strstr(msgs, "test_votes does not lower this vote") != NULL);
  CHECK(!strstr(msgs, "remains after"));
  free(msgs);
}

/* ---- progress --------------------------------------------------------------- */
static void progress_rules(void) {
  ir_module *m;
  char *msgs;
  CHECK(run((test_pass){.ballot_only = false}, true, &msgs, &m));
  free(msgs);
  /* progress: dominance invalidated, post-dominance preserved */
  CHECK(m->funcs->analyses == IR_ANALYSIS_POST_DOMINANCE);
  ir_compute_dominators(m->funcs);
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  /* no progress: nothing invalidated, one line printed instead of the IR */
  CHECK(lower_pass_done(m, &test_votes_contract, false,
                        &(lower_pipeline_options){.verify_each = true, .print_after = "test_votes", .print_out = f}));
  CHECK(m->funcs->analyses == (IR_ANALYSIS_DOMINANCE | IR_ANALYSIS_POST_DOMINANCE));
  fflush(f);
  CHECK(!strcmp(out, "; IR after test_votes: unchanged\n"));
  /* progress: the IR printed, the analyses not preserved invalidated */
  CHECK(lower_pass_done(m, &test_votes_contract, true,
                        &(lower_pipeline_options){.verify_each = true, .print_after = "all", .print_out = f}));
  fclose(f);
  CHECK(strstr(out, "; IR after test_votes\n") && strstr(out, "kernel @k"));
  CHECK(m->funcs->analyses == IR_ANALYSIS_POST_DOMINANCE);
  free(out);
  ir_module_destroy(m);
}

int main(void) {
  incomplete_pass();
  progress_rules();
  if (fails) fprintf(stderr, "lower_contract: %d checks failed\n", fails);
  else printf("lower_contract: ok\n");
  return fails ? 1 : 0;
}
