/* runtime/rt_tensormap.c: tensor maps for the Tensor Memory Accelerator's
 * copies (cp.async.bulk.tensor, PTX ISA 9.7.9.25.5): cuTensorMapEncodeTiled
 * and cuTensorMapReplaceAddress.
 *
 * A CUtensorMap is 128 opaque bytes that only the driver that made it and
 * the kernels it is passed to read; ptxwave's layout is ir/ir_tensormap.h,
 * which the emulator reads.  The encoder checks every requirement cuda.h
 * lists for cuTensorMapEncodeTiled and answers CUDA_ERROR_INVALID_VALUE
 * where one fails, as the driver does.  Not supported
 * (CUDA_ERROR_NOT_SUPPORTED, logged): the packed sub-byte types (16U4,
 * 16U6), interleaved layouts (16B, 32B), the 128B swizzles with 32B/64B
 * atoms, and the im2col encoders (cuTensorMapEncodeIm2col/Im2colWide: the
 * IR keeps their copies opaque).  L2 promotion is a hint with no
 * counterpart here: accepted and dropped.
 */
#include <stdint.h>
#include <string.h>

#include "ir/ir_tensormap.h"
#include "runtime/rt.h"
#include "runtime/rt_log.h"

/* Bytes per element of each CUtensorMapDataType (cuda.h), 0: not supported. */
static unsigned elem_bytes(CUtensorMapDataType t) {
  switch (t) {
  case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
  case CU_TENSOR_MAP_DATA_TYPE_UINT16: case CU_TENSOR_MAP_DATA_TYPE_FLOAT16: case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
    return 2;
  case CU_TENSOR_MAP_DATA_TYPE_UINT32: case CU_TENSOR_MAP_DATA_TYPE_INT32: case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
  case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ: case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
  case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ:
    return 4;
  case CU_TENSOR_MAP_DATA_TYPE_UINT64: case CU_TENSOR_MAP_DATA_TYPE_INT64: case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
    return 8;
  default: return 0;
  }
}

static bool is_float(CUtensorMapDataType t) {
  return t == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 || t == CU_TENSOR_MAP_DATA_TYPE_FLOAT32 ||
         t == CU_TENSOR_MAP_DATA_TYPE_FLOAT64 || t == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 ||
         t == CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ || t == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 ||
         t == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ;
}

static CUresult unsupported(const char *what) {
  RT_LOG(rt_warn, "cuTensorMapEncodeTiled: %s is not supported", what);
  return CUDA_ERROR_NOT_SUPPORTED;
}

/* The requirements of cuda.h's cuTensorMapEncodeTiled, in its order. */
static CUresult encode_tiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *addr,
                             const cuuint64_t *dim, const cuuint64_t *stride, const cuuint32_t *box,
                             const cuuint32_t *estride, CUtensorMapInterleave interleave,
                             CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill fill) {
  if (!map || ((uintptr_t)map & 63)) return CUDA_ERROR_INVALID_VALUE;
  if ((unsigned)type > CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B) return CUDA_ERROR_INVALID_VALUE;
  unsigned eb = elem_bytes(type);
  if (!eb) return unsupported("a packed sub-byte data type (16U4, 16U6)");
  if ((unsigned)interleave > CU_TENSOR_MAP_INTERLEAVE_32B || (unsigned)swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B ||
      (unsigned)l2 > CU_TENSOR_MAP_L2_PROMOTION_L2_256B || (unsigned)fill > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
    return CUDA_ERROR_INVALID_VALUE;
  if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE) return unsupported("an interleaved layout");
  if (rank < 1 || rank > IR_TMAP_MAX_RANK) return CUDA_ERROR_INVALID_VALUE;
  if (!addr || ((uintptr_t)addr & 15) || !dim || !box || !estride || (rank > 1 && !stride))
    return CUDA_ERROR_INVALID_VALUE;
  ir_tensormap t;
  memset(&t, 0, sizeof t);
  t.addr = (uint64_t)(uintptr_t)addr;
  t.magic = IR_TMAP_MAGIC;
  t.rank = (uint8_t)rank;
  t.elem_bytes = (uint8_t)eb;
  t.dtype = (uint8_t)type;
  for (unsigned d = 0; d < rank; d++) {
    if (dim[d] == 0 || dim[d] > (1ull << 32)) return CUDA_ERROR_INVALID_VALUE;
    t.dim_minus1[d] = (uint32_t)(dim[d] - 1);
    if (box[d] == 0 || box[d] > 256 || estride[d] == 0 || estride[d] > 8) return CUDA_ERROR_INVALID_VALUE;
    t.box[d] = (uint16_t)box[d];
    t.elem_stride[d] = (uint8_t)estride[d];
  }
  for (unsigned d = 0; d + 1 < rank; d++) {
    if (stride[d] % 16 || stride[d] >= (1ull << 40)) return CUDA_ERROR_INVALID_VALUE;
    t.stride[d] = stride[d];
  }
  /* without interleave the box's inner row is a whole number of 16-byte
   * chunks, and with a swizzle it fits in the swizzle's span */
  uint64_t inner = (uint64_t)box[0] * eb;
  if (inner % 16) return CUDA_ERROR_INVALID_VALUE;
  switch (swizzle) {
  case CU_TENSOR_MAP_SWIZZLE_NONE: break;
  case CU_TENSOR_MAP_SWIZZLE_32B: if (inner > 32) return CUDA_ERROR_INVALID_VALUE; break;
  case CU_TENSOR_MAP_SWIZZLE_64B: if (inner > 64) return CUDA_ERROR_INVALID_VALUE; break;
  case CU_TENSOR_MAP_SWIZZLE_128B: if (inner > 128) return CUDA_ERROR_INVALID_VALUE; break;
  default: return unsupported("a 128B swizzle with 32B or 64B atoms");
  }
  t.swizzle = (uint8_t)swizzle;
  if (fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA) {
    if (!is_float(type)) return CUDA_ERROR_INVALID_VALUE;
    t.nan_fill = 1;
  }
  memcpy(map, &t, sizeof t);
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *addr,
                                          const cuuint64_t *dim, const cuuint64_t *stride, const cuuint32_t *box,
                                          const cuuint32_t *estride, CUtensorMapInterleave interleave,
                                          CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                          CUtensorMapFloatOOBfill fill) {
  RT_TRACE("%p, %d, %u, %p", (void *)map, (int)type, rank, addr);
  CUresult e = rt_check_init();
  if (e != CUDA_SUCCESS) return rt_ret(e);
  return rt_ret(encode_tiled(map, type, rank, addr, dim, stride, box, estride, interleave, swizzle, l2, fill));
}

/* A new global address in a tensor map this runtime made (cuda.h: the
 * same alignment as at encoding). */
RT_EXPORT CUresult cuTensorMapReplaceAddress(CUtensorMap *map, void *addr) {
  RT_TRACE("%p, %p", (void *)map, addr);
  ir_tensormap t;
  if (!map || ((uintptr_t)map & 63) || !addr || ((uintptr_t)addr & 15) || !ir_tmap_read(map, &t))
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  t.addr = (uint64_t)(uintptr_t)addr;
  memcpy(map, &t, sizeof t);
  return rt_ret(CUDA_SUCCESS);
}
