/* lower/tex_desc.h: ptxwave's texture/surface descriptor (tex_desc.def),
 * shared by the lowering that reads it (lower_tex.c) and the runtime that
 * writes it (runtime/rt_tex.c). */
#ifndef PW_TEX_DESC_H
#define PW_TEX_DESC_H

#include <stdint.h>

#define TEX_DESC_BYTES 128

enum {
#define TEX_FIELD(name, off, ctype, irtype, meaning) TEX_OFF_##name = off,
#include "tex_desc.def"
#undef TEX_FIELD
};

/* What the resource is (CUDA_RESOURCE_DESC's resType, plus the array's
 * geometry). */
typedef enum tex_kind {
  TEX_KIND_LINEAR = 0,   /* a 1D buffer (cuTexObjectCreate of linear memory) */
  TEX_KIND_PITCH2D = 1,  /* a pitched 2D buffer */
  TEX_KIND_ARRAY = 2,    /* a CUDA array (1D, 2D, 3D or layered) */
} tex_kind;

/* CUaddress_mode's values (cuda.h), so the runtime copies them. */
typedef enum tex_addr { TEX_ADDR_WRAP = 0, TEX_ADDR_CLAMP = 1, TEX_ADDR_MIRROR = 2, TEX_ADDR_BORDER = 3 } tex_addr;
/* CUfilter_mode's values. */
typedef enum tex_filter { TEX_FILTER_POINT = 0, TEX_FILTER_LINEAR = 1 } tex_filter;
typedef enum tex_chan { TEX_CHAN_UINT = 0, TEX_CHAN_SINT = 1, TEX_CHAN_FLOAT = 2 } tex_chan;

typedef struct tex_desc {
#define TEX_FIELD(name, off, ctype, irtype, meaning) ctype name;
#include "tex_desc.def"
#undef TEX_FIELD
  uint8_t reserved[TEX_DESC_BYTES - 108];
} tex_desc;

#define TEX_FIELD(name, off, ctype, irtype, meaning) \
  _Static_assert(__builtin_offsetof(tex_desc, name) == off, "tex_desc." #name " offset");
#include "tex_desc.def"
#undef TEX_FIELD
_Static_assert(sizeof(tex_desc) == TEX_DESC_BYTES, "tex_desc size");

#endif
