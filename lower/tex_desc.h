/* lower/tex_desc.h: ptxwave's texture/surface descriptor (tex_desc.def),
 * shared by the lowering that reads it (lower_tex.c) and the runtime that
 * writes it (runtime/rt_tex.c).  The names carry lower's prefix: they are
 * the lowering's contract, included by a layer above it. */
#ifndef PW_TEX_DESC_H
#define PW_TEX_DESC_H

#include <stdint.h>

#define LOWER_TEX_DESC_BYTES 128

enum {
#define LOWER_TEX_FIELD(name, off, ctype, irtype, meaning) LOWER_TEX_OFF_##name = off,
#include "tex_desc.def"
#undef LOWER_TEX_FIELD
};

/* What the resource is (CUDA_RESOURCE_DESC's resType, plus the array's
 * geometry). */
typedef enum lower_tex_kind {
  LOWER_TEX_KIND_LINEAR = 0,   /* a 1D buffer (cuTexObjectCreate of linear memory) */
  LOWER_TEX_KIND_PITCH2D = 1,  /* a pitched 2D buffer */
  LOWER_TEX_KIND_ARRAY = 2,    /* a CUDA array (1D, 2D, 3D or layered) */
} lower_tex_kind;

/* CUaddress_mode's values (cuda.h), so the runtime copies them. */
typedef enum lower_tex_addr {
  LOWER_TEX_ADDR_WRAP = 0, LOWER_TEX_ADDR_CLAMP = 1, LOWER_TEX_ADDR_MIRROR = 2, LOWER_TEX_ADDR_BORDER = 3
} lower_tex_addr;
/* CUfilter_mode's values. */
typedef enum lower_tex_filter { LOWER_TEX_FILTER_POINT = 0, LOWER_TEX_FILTER_LINEAR = 1 } lower_tex_filter;
typedef enum lower_tex_chan {
  LOWER_TEX_CHAN_UINT = 0, LOWER_TEX_CHAN_SINT = 1, LOWER_TEX_CHAN_FLOAT = 2
} lower_tex_chan;

typedef struct lower_tex_desc {
#define LOWER_TEX_FIELD(name, off, ctype, irtype, meaning) ctype name;
#include "tex_desc.def"
#undef LOWER_TEX_FIELD
  uint8_t reserved[LOWER_TEX_DESC_BYTES - 116];
} lower_tex_desc;

#define LOWER_TEX_FIELD(name, off, ctype, irtype, meaning) \
  _Static_assert(__builtin_offsetof(lower_tex_desc, name) == off, "lower_tex_desc." #name " offset");
#include "tex_desc.def"
#undef LOWER_TEX_FIELD
_Static_assert(sizeof(lower_tex_desc) == LOWER_TEX_DESC_BYTES, "lower_tex_desc size");

#endif
