/* ptx/container_impl.h: what elf.c and fatbin.c share while a file is
 * scanned.  Not a public header: the layers above use container.h. */
#ifndef PW_PTX_CONTAINER_IMPL_H
#define PW_PTX_CONTAINER_IMPL_H

#include <string.h>

#include "container.h"

/* Little-endian loads from the mapping.  Callers have checked the range;
 * memcpy keeps unaligned loads defined. */
static inline uint16_t ptx_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t ptx_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t ptx_le64(const uint8_t *p) {
  return (uint64_t)ptx_le32(p) | (uint64_t)ptx_le32(p + 4) << 32;
}

/* True when [off, off + len) lies inside [0, size), without overflow. */
static inline bool ptx_in_bounds(uint64_t off, uint64_t len, uint64_t size) {
  return off <= size && len <= size - off;
}

/* The state of one scan: the file being filled and the growable arrays
 * behind f->containers and f->wrappers. */
typedef struct ptx_scan {
  ptx_file *f;
  pw_diag *d;
  uint32_t cont_cap, wrap_cap;
} ptx_scan;

/* An input error at byte offset `off`: counted in the file, reported. */
void ptx_scan_error(ptx_scan *s, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* What fatbin.c needs to know about the bytes it scans. */
typedef struct ptx_region {
  uint64_t start, end;  /* file offsets */
  uint64_t vaddr;       /* address of `start` in the loaded image */
  const char *section;  /* NULL for a raw fatbin file */
  uint64_t section_start; /* file offset of the section (start may be later) */
  const char *member;   /* ar member, or NULL */
  uint32_t shndx;       /* ELF section index (0 for a raw fatbin) */
  /* Only containers may live here (.nv_fatbin, __nv_relfatbin, raw fatbin
   * files): bytes that are neither a container nor zero padding are errors. */
  bool strict;
} ptx_region;

/* fatbin.c: finds, validates and walks every container in the region
 * (8-byte aligned by address), appending them to s->f.  Returns how many
 * containers it added. */
uint32_t ptx_scan_fatbins(ptx_scan *s, const ptx_region *r);

/* fatbin.c: appends a wrapper. */
ptx_wrapper *ptx_add_wrapper(ptx_scan *s);

/* elf.c */
void ptx_scan_elf(ptx_scan *s, uint64_t start, uint64_t size, const char *member);

#endif
