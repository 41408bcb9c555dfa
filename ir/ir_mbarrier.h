/* ir/ir_mbarrier.h: the 64-bit mbarrier object (PTX ISA 9.7.13.15) as
 * ptxwave lays it out, shared by the emulator (emu/emu_mbarrier.c) and the
 * lowering to shared-memory atomics (lower/lower_mbarrier.c), so both agree
 * on the bits a kernel may copy around.
 *
 * The ISA keeps the object opaque; it has four parts (9.7.13.15.1):
 *   bit  63       the current phase's parity
 *   bits 40..61   tx-count, 22-bit two's complement (the ISA's range is
 *                 -(2^20-1) .. 2^20-1: complete_tx may run before expect_tx)
 *   bits 20..39   expected arrival count (init's count, less arrive_drop's)
 *   bits  0..19   pending arrival count of the current phase
 * counts are at most 2^20-1 (9.7.13.15.9).
 *
 * The phase completes when the pending count and the tx-count are both 0
 * (9.7.13.15.2): the parity flips, the pending count is reloaded with the
 * expected count, the tx-count is 0.  Every update below ends with that
 * check, so an expect_tx or complete_tx can complete a phase as well as an
 * arrive.
 *
 * The opaque state an arrive returns is the word after its own update but
 * before the completion it may cause: the phase it arrived in (bit 63) and
 * the pending count after its arrival (what pending_count reads).
 * test_wait(state) is true once the current parity differs from the
 * state's; test_wait.parity(p) once it differs from p (the ISA allows only
 * the current and the immediately preceding phase to be tested).
 *
 * Header only: no link dependency between emu/ and lower/.
 */
#ifndef PW_IR_MBARRIER_H
#define PW_IR_MBARRIER_H

#include <stdbool.h>
#include <stdint.h>

#define IR_MBAR_COUNT_BITS 20
#define IR_MBAR_COUNT_MASK ((1ull << IR_MBAR_COUNT_BITS) - 1)
#define IR_MBAR_EXPECTED_SHIFT 20
#define IR_MBAR_TX_SHIFT 40
#define IR_MBAR_TX_BITS 22
#define IR_MBAR_TX_MASK ((1ull << IR_MBAR_TX_BITS) - 1)
#define IR_MBAR_PHASE_SHIFT 63

static inline uint32_t ir_mbar_pending(uint64_t w) { return (uint32_t)(w & IR_MBAR_COUNT_MASK); }
static inline uint32_t ir_mbar_expected(uint64_t w) {
  return (uint32_t)((w >> IR_MBAR_EXPECTED_SHIFT) & IR_MBAR_COUNT_MASK);
}
static inline int32_t ir_mbar_tx(uint64_t w) {
  uint32_t t = (uint32_t)((w >> IR_MBAR_TX_SHIFT) & IR_MBAR_TX_MASK);
  return (int32_t)(t << (32 - IR_MBAR_TX_BITS)) >> (32 - IR_MBAR_TX_BITS);
}
static inline unsigned ir_mbar_phase(uint64_t w) { return (unsigned)(w >> IR_MBAR_PHASE_SHIFT); }

static inline uint64_t ir_mbar_make(unsigned phase, int32_t tx, uint32_t expected, uint32_t pending) {
  return (uint64_t)(phase & 1) << IR_MBAR_PHASE_SHIFT |
         ((uint64_t)(uint32_t)tx & IR_MBAR_TX_MASK) << IR_MBAR_TX_SHIFT |
         ((uint64_t)expected & IR_MBAR_COUNT_MASK) << IR_MBAR_EXPECTED_SHIFT |
         ((uint64_t)pending & IR_MBAR_COUNT_MASK);
}

/* mbarrier.init: phase 0, both counts `count`, tx-count 0. */
static inline uint64_t ir_mbar_init(uint32_t count) { return ir_mbar_make(0, 0, count, count); }

/* One update of word w: the expected count drops by `drop` (arrive_drop),
 * the tx-count grows by `tx` (expect_tx > 0, complete_tx < 0), the pending
 * count drops by `arrive`; then the completion check.  *state (optional)
 * gets the state an arrive returns. */
static inline uint64_t ir_mbar_update(uint64_t w, uint32_t arrive, uint32_t drop, int32_t tx,
                                      uint64_t *state) {
  unsigned phase = ir_mbar_phase(w);
  uint32_t expected = (ir_mbar_expected(w) - drop) & IR_MBAR_COUNT_MASK;
  uint32_t pending = (ir_mbar_pending(w) - arrive) & IR_MBAR_COUNT_MASK;
  int32_t t = ir_mbar_tx(w) + tx;
  uint64_t n = ir_mbar_make(phase, t, expected, pending);
  if (state) *state = n;
  if (pending == 0 && ir_mbar_tx(n) == 0) n = ir_mbar_make(phase ^ 1, 0, expected, expected);
  return n;
}

/* test_wait / try_wait: has the phase of `state` (or of parity `parity`,
 * with .parity) completed? */
static inline bool ir_mbar_phase_done(uint64_t w, uint64_t state_or_parity, bool parity) {
  unsigned p = parity ? (unsigned)(state_or_parity & 1) : ir_mbar_phase(state_or_parity);
  return ir_mbar_phase(w) != p;
}

#endif
