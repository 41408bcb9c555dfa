/* ir/ir_amd_matrix.h: AMD's matrix instructions (the rows of
 * ir_amd_matrix.def) as the IR's wave-level op wave_mma uses them:
 *
 *   d0..d(nc-1) = wave_mma ROW, a0..a(na-1), b0..b(nb-1), c0..c(nc-1)
 *
 * ROW an immediate u32, the row of the table; every other operand and
 * result a 32-bit register of every lane of the wave.  The layouts below
 * say which element of A, B, C and D each (lane, register, half) holds, in
 * the ISA's "register to matrix element" form (AMD's Matrix Instruction
 * Calculator prints the same formulas):
 *
 *   MFMA_4X4_16B (v_mfma_f32_4x4x4_16b_*, v_mfma_i32_4x4x4_16b_i8, wave64)
 *     A: block lane/4, row i = lane%4, k = P reg + part (P = 32 / element
 *        bits: 2 halves of f16/bf16, 4 bytes of s8)
 *     B: block lane/4, col j = lane%4, k = P reg + part
 *     C/D: block lane/4, row i = reg, col j = lane%4
 *   WMMA_GFX11 (v_wmma_f32_16x16x16_*, v_wmma_i32_16x16x16_iu8 on RDNA3, wave32)
 *     A: row i = lane%16, k = P reg + part (lanes 16-31 repeat 0-15)
 *     B: col j = lane%16, k = P reg + part (likewise)
 *     C/D: row i = 2 reg + lane/16, col j = lane%16
 *   WMMA_GFX12 (v_wmma_f32_16x16x16_* on RDNA4, wave32)
 *     A: row i = lane%16, k = 8 (reg/2) + 4 (lane/16) + 2 (reg%2) + half
 *     B: col j = lane%16, k likewise
 *     C/D: row i = 8 (lane/16) + reg, col j = lane%16
 *   WMMA_GFX12_IU8 (v_wmma_i32_16x16x16_iu8 on RDNA4, wave32)
 *     A: row i = lane%16, k = 8 (lane/16) + 4 reg + byte
 *     B: col j = lane%16, k likewise
 *     C/D: as WMMA_GFX12
 *   MFMA_F64_16X16 (v_mfma_f64_16x16x4_f64, wave64): one f64 element in two
 *     registers, low word in the even one (reg, half: the register's word)
 *     A: row i = lane%16, k = lane/16 (both registers)
 *     B: col j = lane%16, k = lane/16
 *     C/D: row i = 4 (reg/2) + lane/16, col j = lane%16
 *
 * Header only (like ir_mma.h): emu/ and lower/ both read it.
 */
#ifndef PW_IR_AMD_MATRIX_H
#define PW_IR_AMD_MATRIX_H

#include <stdbool.h>
#include <string.h>

#include "ir/ir.h"

typedef enum ir_amx_layout {
  IR_AMX_L_MFMA_4X4_16B, IR_AMX_L_WMMA_GFX11, IR_AMX_L_WMMA_GFX12, IR_AMX_L_WMMA_GFX12_IU8,
  IR_AMX_L_MFMA_F64_16X16,
} ir_amx_layout;

typedef enum ir_amx_id {
#define IR_AMD_MATRIX(name, ...) IR_AMX_##name,
#define IR_AMD_MATRIX_AB(name, ...) IR_AMX_##name,
#include "ir_amd_matrix.def"
#undef IR_AMD_MATRIX
#undef IR_AMD_MATRIX_AB
  IR_AMX_COUNT
} ir_amx_id;

typedef struct ir_amx_info {
  const char *name, *llvm;
  uint8_t m, n, k, blocks;
  uint8_t ta, tb, tc;      /* ir_type: A's, B's, C/D's elements (tb = ta but in IR_AMD_MATRIX_AB rows) */
  uint8_t na, nb, nc;      /* registers per lane */
  uint8_t wave;
  uint8_t layout;          /* ir_amx_layout */
  const char *targets;
  uint8_t cyc_cdna2, cyc_cdna3, cyc_rdna3, cyc_rdna4;
} ir_amx_info;

static inline const ir_amx_info *ir_amx_info_of(unsigned id) {
  static const ir_amx_info rows[] = {
#define IR_AMD_MATRIX(nm, ll, M, N, K, bl, ta, tc, na, nb, nc, w, lay, tg, c2, c3, r3, r4) \
  {#nm, ll, M, N, K, bl, ir_type_##ta, ir_type_##ta, ir_type_##tc, na, nb, nc, w, IR_AMX_L_##lay, tg, c2, c3, r3, r4},
#define IR_AMD_MATRIX_AB(nm, ll, M, N, K, bl, ta, tb, tc, na, nb, nc, w, lay, tg, c2, c3, r3, r4) \
  {#nm, ll, M, N, K, bl, ir_type_##ta, ir_type_##tb, ir_type_##tc, na, nb, nc, w, IR_AMX_L_##lay, tg, c2, c3, r3, r4},
#include "ir_amd_matrix.def"
#undef IR_AMD_MATRIX
#undef IR_AMD_MATRIX_AB
  };
  return id < IR_AMX_COUNT ? &rows[id] : NULL;
}

/* Whether the processor `target` (its exact name) has row id. */
static inline bool ir_amx_on_target(unsigned id, const char *target) {
  const ir_amx_info *r = ir_amx_info_of(id);
  if (!r || !target) return false;
  size_t n = strlen(target);
  for (const char *p = r->targets; (p = strstr(p, target)) != NULL; p += n)
    if ((p == r->targets || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return true;
  return false;
}

/* The row of that kind (A type ta, B type tb, C/D type tc, M N K of one
 * block) on target, or -1. */
static inline int ir_amx_find_ab(const char *target, ir_type ta, ir_type tb, ir_type tc, unsigned m, unsigned n,
                                 unsigned k) {
  for (unsigned id = 0; id < IR_AMX_COUNT; id++) {
    const ir_amx_info *r = ir_amx_info_of(id);
    if (r->ta == ta && r->tb == tb && r->tc == tc && r->m == m && r->n == n && r->k == k &&
        ir_amx_on_target(id, target))
      return (int)id;
  }
  return -1;
}

/* The row of that kind with A and B both of type ta, or -1. */
static inline int ir_amx_find(const char *target, ir_type ta, ir_type tc, unsigned m, unsigned n, unsigned k) {
  return ir_amx_find_ab(target, ta, ta, tc, m, n, k);
}

/* Whether the row reads A's (b: B's) elements as signed integers: the iu8
 * WMMA's sign flag for that operand (ir_amd_matrix.def); true for the
 * signed-only i8 MFMA and the float rows, which have no such flag. */
static inline bool ir_amx_signed(const ir_amx_info *r, bool b) { return (b ? r->tb : r->ta) != ir_type_u8; }

/* The element of A (or B: idx is then the column j) that lane `lane`
 * holds in part `half` of its register `reg` (a half of f16/bf16, a byte
 * of s8): block, row i (column j) and k.  For WMMA_GFX11 lanes l and l + 16 give the same element. */
static inline void ir_amx_ab_elem(const ir_amx_info *r, unsigned lane, unsigned reg, unsigned half, unsigned *blk,
                                  unsigned *idx, unsigned *k) {
  switch ((ir_amx_layout)r->layout) {
  case IR_AMX_L_MFMA_4X4_16B:
    *blk = lane >> 2, *idx = lane & 3, *k = (32 / ir_type_bits((ir_type)r->ta)) * reg + half;
    return;
  case IR_AMX_L_WMMA_GFX11:
    *blk = 0, *idx = lane & 15, *k = (32 / ir_type_bits((ir_type)r->ta)) * reg + half;
    return;
  case IR_AMX_L_WMMA_GFX12:
    *blk = 0, *idx = lane & 15, *k = 8 * (reg >> 1) + 4 * ((lane >> 4) & 1) + 2 * (reg & 1) + half;
    return;
  case IR_AMX_L_WMMA_GFX12_IU8:
    *blk = 0, *idx = lane & 15, *k = 8 * ((lane >> 4) & 1) + 4 * reg + half;
    return;
  case IR_AMX_L_MFMA_F64_16X16:   /* both registers (words) of the one f64 element */
    (void)reg, (void)half;
    *blk = 0, *idx = lane & 15, *k = (lane >> 4) & 3;
    return;
  }
  *blk = *idx = *k = 0;
}

/* The element of C (and D) that lane `lane` holds in its register reg. */
static inline void ir_amx_cd_elem(const ir_amx_info *r, unsigned lane, unsigned reg, unsigned *blk, unsigned *i,
                                  unsigned *j) {
  switch ((ir_amx_layout)r->layout) {
  case IR_AMX_L_MFMA_4X4_16B:
    *blk = lane >> 2, *i = reg, *j = lane & 3;
    return;
  case IR_AMX_L_WMMA_GFX11:
    *blk = 0, *i = 2 * reg + ((lane >> 4) & 1), *j = lane & 15;
    return;
  case IR_AMX_L_WMMA_GFX12: case IR_AMX_L_WMMA_GFX12_IU8:
    *blk = 0, *i = 8 * ((lane >> 4) & 1) + reg, *j = lane & 15;
    return;
  case IR_AMX_L_MFMA_F64_16X16:   /* registers 2p, 2p + 1: the two words of one f64 */
    *blk = 0, *i = 4 * (reg >> 1) + ((lane >> 4) & 3), *j = lane & 15;
    return;
  }
  *blk = *i = *j = 0;
}

/* Bits of one A/B element (16: two per register, low half first; A and B
 * alike in every row). */
static inline unsigned ir_amx_ab_bits(const ir_amx_info *r) { return ir_type_bits((ir_type)r->ta); }

#endif
