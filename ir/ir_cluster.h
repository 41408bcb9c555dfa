/* ir/ir_cluster.h: the 16-byte response of clusterlaunchcontrol.try_cancel
 * (PTX ISA 9.7.12, sm_100) as ptxwave lays it out, shared by the emulator
 * (emu/emu_cluster.c) and the lowering (lower/lower_cluster.c), so that
 * query_cancel decodes in both what try_cancel wrote in either.
 *
 * The ISA keeps the response opaque: query_cancel.is_canceled says whether
 * the request succeeded, get_first_ctaid gives the first CTA of the
 * canceled cluster (undefined when the request failed).  ptxwave's layout,
 * as two little-endian 64-bit halves of the .b128 value:
 *   lo bit  0       canceled
 *   lo bits 32..63  first ctaid.x
 *   hi bits  0..31  first ctaid.y
 *   hi bits 32..63  first ctaid.z
 * A launch without cluster dimensions is a grid of one-CTA clusters, and
 * ptxwave never cancels one: a request may fail (the ISA: "the request may
 * fail"), and it always does here, so every response it writes is 16 zero
 * bytes (not canceled, first ctaid 0,0,0).
 *
 * Header only: no link dependency between emu/ and lower/.
 */
#ifndef PW_IR_CLUSTER_H
#define PW_IR_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#define IR_CLC_RESPONSE_BYTES 16u

/* The response a failed try_cancel writes: both halves. */
#define IR_CLC_FAILED_LO 0ull
#define IR_CLC_FAILED_HI 0ull

static inline bool ir_clc_is_canceled(uint64_t lo, uint64_t hi) {
  (void)hi;
  return (lo & 1) != 0;
}

/* Component d (0 x, 1 y, 2 z) of the first ctaid. */
static inline uint32_t ir_clc_first_ctaid(uint64_t lo, uint64_t hi, unsigned d) {
  return d == 0 ? (uint32_t)(lo >> 32) : d == 1 ? (uint32_t)hi : (uint32_t)(hi >> 32);
}

#endif
