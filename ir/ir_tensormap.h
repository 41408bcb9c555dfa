/* ir/ir_tensormap.h: the 128-byte tensor map (CUtensorMap, PTX ISA 5.5.8
 * "Tensor-map") as ptxwave lays it out, shared by the runtime, which
 * writes it (cuTensorMapEncodeTiled, runtime/rt_tensormap.c), and the
 * emulator, which reads it for cp.async.bulk.tensor (emu/emu_mbarrier.c).
 *
 * CUDA keeps the object opaque ("should only be accessed through CUDA APIs
 * and PTX", cuda.h): the driver that encodes it is the only one that reads
 * it, so the layout is ours.  Little-endian, 64-byte aligned:
 *
 *   0   u64  global address
 *   8   u32  IR_TMAP_MAGIC (a tensor map this runtime made)
 *   12  u8   rank, 1-5
 *   13  u8   element size in bytes: 1, 2, 4, 8
 *   14  u8   swizzle: 0 none, 1 32B, 2 64B, 3 128B (CUtensorMapSwizzle)
 *   15  u8   out-of-bounds fill: 0 zeros, 1 NaN (FLOAT_OOB_FILL_NAN_...)
 *   16  u32  global_dim[5] - 1 (elements; CUDA allows up to 2^32)
 *   36  u8   element_stride[5] (1-8; the first is ignored: 9.7.9.25.5.1)
 *   41  u8   CUtensorMapDataType
 *   42  u16  box_dim[5] (1-256 elements traversed along each dimension)
 *   56  u64  global_stride[4] (bytes between consecutive indices of
 *            dimension d+1; dimension 0's stride is the element size)
 *   88  zero to 128
 *
 * The tile mode (cuTensorMapEncodeTiled; PTX ISA 5.5.8.1 "Tiled mode"):
 * a copy at coordinates c[d] (signed) traverses n[d] = ceil(box[d] /
 * element_stride[d]) elements along dimension d (n[0] = box[0]), the
 * global coordinate of box index i[d] being c[d] + i[d] * element_stride[d].
 * The box is dense in shared memory, dimension 0 innermost; an element
 * whose global coordinate is outside [0, global_dim[d]) in any dimension
 * reads as the fill (zero, or all bits set: a NaN of every float type) and
 * is not written by a store.  The mbarrier's transaction count is the
 * box's bytes in shared memory, out-of-bounds elements included.
 *
 * Swizzle ("16B chunks within a 32B/64B/128B span", cuda.h's
 * CUtensorMapSwizzle): the 16-byte chunk index inside each span, bits
 * [4, 4+b) of the shared-memory byte address, is XORed with bits
 * [7, 7+b) (the 128-byte row modulo the span's chunk count), b = 1, 2, 3
 * for 32B, 64B, 128B: the pattern CUTLASS's Swizzle<b,4,3> models for
 * these modes (cute/atom/copy_traits_sm90_tma_swizzle.hpp).  It repeats
 * every 256, 512, 1024 bytes, so a buffer aligned to that sees the same
 * pattern whatever its address.
 *
 * Header only: no link dependency between runtime/ and emu/.
 */
#ifndef PW_IR_TENSORMAP_H
#define PW_IR_TENSORMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define IR_TMAP_BYTES 128
#define IR_TMAP_MAGIC 0x50414d54u   /* "TMAP" */
#define IR_TMAP_MAX_RANK 5

typedef struct ir_tensormap {
  uint64_t addr;
  uint32_t magic;
  uint8_t rank, elem_bytes, swizzle, nan_fill;
  uint32_t dim_minus1[IR_TMAP_MAX_RANK];
  uint8_t elem_stride[IR_TMAP_MAX_RANK];
  uint8_t dtype;
  uint16_t box[IR_TMAP_MAX_RANK];
  uint8_t pad[4];
  uint64_t stride[IR_TMAP_MAX_RANK - 1];
  uint8_t reserved[40];
} ir_tensormap;

_Static_assert(sizeof(ir_tensormap) == IR_TMAP_BYTES, "the tensor map is 128 bytes");
_Static_assert(__builtin_offsetof(ir_tensormap, dim_minus1) == 16, "layout above");
_Static_assert(__builtin_offsetof(ir_tensormap, box) == 42, "layout above");
_Static_assert(__builtin_offsetof(ir_tensormap, stride) == 56, "layout above");

/* Elements traversed along dimension d (n[d] above). */
static inline uint32_t ir_tmap_count(const ir_tensormap *t, unsigned d) {
  unsigned es = d == 0 || !t->elem_stride[d] ? 1u : t->elem_stride[d];
  return ((uint32_t)t->box[d] + es - 1) / es;
}

/* The box's bytes in shared memory (the transaction count). */
static inline uint64_t ir_tmap_box_bytes(const ir_tensormap *t) {
  uint64_t n = t->elem_bytes;
  for (unsigned d = 0; d < t->rank && d < IR_TMAP_MAX_RANK; d++) n *= ir_tmap_count(t, d);
  return n;
}

/* A shared-memory byte address as the swizzle places it. */
static inline uint64_t ir_tmap_swizzle(unsigned swizzle, uint64_t a) {
  if (swizzle == 0 || swizzle > 3) return a;
  uint64_t m = (1u << swizzle) - 1;
  return a ^ (((a >> 7) & m) << 4);
}

/* tensormap.replace.tile.elemtype's new_val (PTX ISA 9.7.9.26, "Tensormap
 * new_val validity": 0 .u8, 1 .u16, 2 .u32, 3 .s32, 4 .u64, 5 .s64, 6 .f16,
 * 7 .f32, 8 .f32.ftz, 9 .f64, 10 .bf16, 11 .tf32, 12 .tf32.ftz, 13-15 the
 * packed sub-byte types) as the map stores it: the CUtensorMapDataType
 * (cuda.h's order, which the ISA notes differs) and the element's bytes;
 * bytes 0 where this runtime's maps have no such type (the packed ones,
 * which cuTensorMapEncodeTiled refuses too). */
static const struct { uint8_t dtype, bytes; } ir_tmap_isa_elemtypes[16] = {
  {0, 1}, {1, 2}, {2, 4}, {3, 4}, {4, 8}, {5, 8}, {6, 2}, {7, 4},
  {10, 4}, {8, 8}, {9, 2}, {11, 4}, {12, 4}, {13, 0}, {14, 0}, {15, 0},
};

/* Byte offsets of the fields tensormap.replace writes. */
#define IR_TMAP_OFF(field) ((unsigned)__builtin_offsetof(ir_tensormap, field))

/* Reads a tensor map from its 128 bytes; false if this runtime did not
 * make it (the magic) or its fields are out of range. */
static inline bool ir_tmap_read(const void *bytes, ir_tensormap *t) {
  memcpy(t, bytes, sizeof *t);
  if (t->magic != IR_TMAP_MAGIC || t->rank < 1 || t->rank > IR_TMAP_MAX_RANK || t->swizzle > 3) return false;
  if (t->elem_bytes != 1 && t->elem_bytes != 2 && t->elem_bytes != 4 && t->elem_bytes != 8) return false;
  for (unsigned d = 0; d < t->rank; d++)
    if (t->box[d] < 1 || t->box[d] > 256 || t->elem_stride[d] < 1 || t->elem_stride[d] > 8) return false;
  return true;
}

#endif
