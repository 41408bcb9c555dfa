/* ptx/fatbin.c: finding and walking fatbin containers.
 *
 * Layout (little endian; docs/containers.md has the evidence):
 *
 *   container  +0x00 u32 magic 0xBA55ED50   +0x04 u16 version (1)
 *              +0x06 u16 header size (16)   +0x08 u64 bytes of entries
 *   entry      +0x00 u16 kind   +0x02 u16 (0x0101)   +0x04 u32 header size
 *              +0x08 u64 payload size (padded to 8)
 *              +0x10 u32 compressed size (0: stored)
 *              +0x14 u32 offset of the options descriptor in the header (0: none)
 *              +0x18 u16 minor   +0x1A u16 major version (PTX ISA for PTX)
 *              +0x1C u32 arch (SM number)
 *              +0x20 u32 offset, +0x24 u32 length of the identifier (-G: file name)
 *              +0x28 u64 flags  +0x30 u64 (0)  +0x38 u64 uncompressed size
 *              options descriptor: u32 offset, u32 length of the option bytes
 *   entries follow each other: next = entry + header size + payload size,
 *   and the last one ends exactly at the container's end.
 *
 * Algorithm: a container may sit in any section (the libraries load some
 * themselves from .rodata, .ldata or .cask_resource), so every section is
 * scanned for the magic at addresses that are multiples of 8, the alignment
 * the CUDA driver needs for the u64 fields.  A candidate is a container when
 * its version is 1 and its header size 16 (what every NVIDIA tool writes);
 * then its size must fit the region and its entries must tile it exactly,
 * or it is reported as malformed.  The scan resumes after a container, so
 * bytes inside one are never read as another.  In the sections that hold
 * only containers (.nv_fatbin, __nv_relfatbin, a raw .fatbin file), any
 * other non-zero byte is an error too.
 *
 * Invariants: every read is preceded by a bounds check against the region
 * end; sizes are compared by subtraction so no sum can wrap; the work is
 * linear in the region's size.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "container_impl.h"

#define CONTAINER_HEADER 16u
#define ENTRY_MIN_HEADER 0x40u

void ptx_scan_error(ptx_scan *s, uint64_t off, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  s->f->nerrors++;
  pw_error_off(s->d, s->f->path, off, "%s", msg);
}

/* Grows a malloc'd array; the count is bounded by the input size (each
 * element stands for at least 16 bytes of it), so this cannot run away. */
static bool grow(void **arr, uint32_t *cap, uint32_t n, size_t elem) {
  if (n < *cap) return true;
  uint32_t ncap = *cap ? *cap * 2 : 16;
  if (ncap <= *cap || (size_t)ncap > SIZE_MAX / elem) return false;
  void *p = realloc(*arr, (size_t)ncap * elem);
  if (!p) return false;
  *arr = p;
  *cap = ncap;
  return true;
}

static ptx_container *add_container(ptx_scan *s) {
  ptx_file *f = s->f;
  if (!grow((void **)&f->containers, &s->cont_cap, f->ncontainers, sizeof(ptx_container)))
    return NULL;
  ptx_container *c = &f->containers[f->ncontainers++];
  memset(c, 0, sizeof *c);
  c->wrapper = -1;
  return c;
}

ptx_wrapper *ptx_add_wrapper(ptx_scan *s) {
  ptx_file *f = s->f;
  if (!grow((void **)&f->wrappers, &s->wrap_cap, f->nwrappers, sizeof(ptx_wrapper))) return NULL;
  ptx_wrapper *w = &f->wrappers[f->nwrappers++];
  memset(w, 0, sizeof *w);
  w->container = -1;
  return w;
}

/* Option bytes are text for PTX and LTO entries ("-maxrregcount=96  ")
 * and a binary blob for sm_100+ cubins; tell them apart by content. */
static bool is_text(const uint8_t *p, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (p[i] < 0x20 || p[i] > 0x7e) return false;
  return true;
}

/* Reads the (offset, length) pair at `at` inside an entry header of `hs`
 * bytes and checks that it points inside the header, after the fixed part. */
static bool header_span(const uint8_t *h, uint32_t hs, uint32_t at, uint32_t *off, uint32_t *len) {
  *off = ptx_le32(h + at);
  *len = ptx_le32(h + at + 4);
  if (*len == 0) return true;
  return *off >= ENTRY_MIN_HEADER && ptx_in_bounds(*off, *len, hs);
}

/* Decodes the entry header at file offset q (bounds checked by the caller:
 * hs bytes of header are readable).  Returns false, with an error, when an
 * inner descriptor points outside the header; the entry is still usable
 * then, only its options or identifier are dropped. */
static void decode_entry(ptx_scan *s, uint64_t q, uint32_t hs, uint64_t psz, ptx_entry *e) {
  const uint8_t *h = s->f->data + q;
  memset(e, 0, sizeof *e);
  e->offset = q;
  e->header_size = hs;
  e->kind = ptx_le16(h);
  e->payload_offset = q + hs;
  e->payload_size = psz;
  e->compressed_size = ptx_le32(h + 0x10);
  e->version_minor = ptx_le16(h + 0x18);
  e->version_major = ptx_le16(h + 0x1A);
  e->arch = ptx_le32(h + 0x1C);
  e->flags = ptx_le64(h + 0x28);
  /* The 'a' and 'f' bits were found by building sm_90a, sm_100a and
   * sm_100f with nvcc 13 (docs/containers.md). */
  e->arch_suffix = (e->flags & PTX_FLAG_ARCH_A) ? 'a' : (e->flags & PTX_FLAG_ARCH_F) ? 'f' : 0;

  bool lz4 = e->flags & PTX_FLAG_LZ4, zstd = e->flags & PTX_FLAG_ZSTD;
  if ((e->flags & PTX_FLAG_COMPRESS_OLD) || (lz4 && zstd))
    e->compression = ptx_comp_unsupported;
  else if (lz4)
    e->compression = ptx_comp_lz4;
  else if (zstd)
    e->compression = ptx_comp_zstd;
  else
    e->compression = ptx_comp_none;
  e->uncompressed_size = e->compression == ptx_comp_none ? psz : ptx_le64(h + 0x38);

  pw_arena *a = &s->f->arena;
  uint32_t optdesc = ptx_le32(h + 0x14);
  if (optdesc) {
    uint32_t off, len;
    if (optdesc < ENTRY_MIN_HEADER || !ptx_in_bounds(optdesc, 8, hs) ||
        !header_span(h, hs, optdesc, &off, &len)) {
      ptx_scan_error(s, q + 0x14, "entry's options descriptor (at +%#x) points outside its %u-byte header",
                     optdesc, hs);
    } else if (len) {
      const uint8_t *o = h + off;
      /* Trim the NULs and blanks nvcc pads with: "-maxrregcount=96  ". */
      uint32_t b = 0, n = len;
      while (n && (o[n - 1] == 0 || o[n - 1] == ' ')) n--;
      while (b < n && o[b] == ' ') b++;
      if (is_text(o + b, n - b)) {
        if (n > b) e->options = pw_arena_strndup(a, (const char *)o + b, n - b);
      } else {
        e->options_bin = o;
        e->options_bin_len = len;
      }
    }
  }
  uint32_t ioff, ilen;
  if (!header_span(h, hs, 0x20, &ioff, &ilen)) {
    ptx_scan_error(s, q + 0x20, "entry's identifier (%u bytes at +%#x) lies outside its %u-byte header",
                   ilen, ioff, hs);
  } else if (ilen) {
    const uint8_t *o = h + ioff;
    uint32_t n = ilen;
    while (n && o[n - 1] == 0) n--;
    if (is_text(o, n)) e->ident = pw_arena_strndup(a, (const char *)o, n);
  }
}

/* Walks the entries of the container whose entries occupy [q, end).  Two
 * passes: the first validates and counts, the second fills the arena array,
 * so the count is known before anything is allocated. */
static void walk_entries(ptx_scan *s, ptx_container *c, uint64_t q0, uint64_t end) {
  const uint8_t *d = s->f->data;
  uint32_t n = 0;
  uint64_t q = q0;
  while (q < end) {
    uint64_t room = end - q;
    if (room < ENTRY_MIN_HEADER) {
      ptx_scan_error(s, q, "entry header truncated: %llu bytes left in the container, a header needs %u",
                     (unsigned long long)room, ENTRY_MIN_HEADER);
      c->malformed = true;
      break;
    }
    uint32_t hs = ptx_le32(d + q + 4);
    uint64_t psz = ptx_le64(d + q + 8);
    if (hs < ENTRY_MIN_HEADER || hs > room) {
      ptx_scan_error(s, q + 4, "entry header size %u is %s", hs,
                     hs < ENTRY_MIN_HEADER ? "smaller than the 64-byte fixed part"
                                           : "past the end of the container");
      c->malformed = true;
      break;
    }
    if (psz > room - hs) {
      ptx_scan_error(s, q + 8, "entry payload of %llu bytes runs past the end of the container (%llu bytes left)",
                     (unsigned long long)psz, (unsigned long long)(room - hs));
      c->malformed = true;
      break;
    }
    n++;
    q += hs + psz;
  }
  c->entries = n ? PW_NEW_ARRAY(&s->f->arena, ptx_entry, n) : NULL;
  if (n && !c->entries) {
    ptx_scan_error(s, q0, "out of memory for %u entries", n);
    return;
  }
  q = q0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t hs = ptx_le32(d + q + 4);
    uint64_t psz = ptx_le64(d + q + 8);
    decode_entry(s, q, hs, psz, &c->entries[i]);
    q += hs + psz;
  }
  c->nentries = n;
}

uint32_t ptx_scan_fatbins(ptx_scan *s, const ptx_region *r) {
  const uint8_t *d = s->f->data;
  uint32_t found = 0;
  /* First position whose address is a multiple of 8. */
  uint64_t mis = r->vaddr & 7;
  uint64_t p = r->start + (mis ? 8 - mis : 0);
  uint64_t gap = UINT64_MAX; /* strict: start of the current run of stray bytes */
  bool quiet = false;        /* strict: stray bytes after a reported bad header */

  /* Bytes before the first aligned position can only be padding. */
  if (r->strict)
    for (uint64_t i = r->start; i < p && i < r->end; i++)
      if (d[i]) {
        gap = i;
        break;
      }

  while (p < r->end && r->end - p >= 8) {
    if (r->strict && !quiet && r->end - p < CONTAINER_HEADER && ptx_le32(d + p) == PTX_FATBIN_MAGIC) {
      ptx_scan_error(s, p, "fatbin container header truncated: %llu bytes left, 16 needed",
                     (unsigned long long)(r->end - p));
      return found;
    }
    bool magic = r->end - p >= CONTAINER_HEADER && ptx_le32(d + p) == PTX_FATBIN_MAGIC;
    uint16_t ver = magic ? ptx_le16(d + p + 4) : 0;
    uint16_t hs = magic ? ptx_le16(d + p + 6) : 0;
    if (magic && !(ver == 1 && hs == CONTAINER_HEADER) && r->strict) {
      ptx_scan_error(s, p, "fatbin container with version %u and header size %u; only version 1 with a 16-byte header is known",
                     ver, hs);
      gap = UINT64_MAX;
      quiet = true; /* what follows belongs to the bad container */
      p += 8;
      continue;
    }
    if (!magic || ver != 1 || hs != CONTAINER_HEADER) {
      if (r->strict && !quiet && gap == UINT64_MAX && ptx_le64(d + p) != 0) gap = p;
      p += 8;
      continue;
    }
    if (gap != UINT64_MAX) {
      ptx_scan_error(s, gap, "%llu bytes that are neither a fatbin container nor padding in %s",
                     (unsigned long long)(p - gap), r->section ? r->section : "the fatbin");
      gap = UINT64_MAX;
    }
    uint64_t size = ptx_le64(d + p + 8);
    uint64_t room = r->end - p - CONTAINER_HEADER;
    if (size > room) {
      ptx_scan_error(s, p + 8, "fatbin container of %llu bytes runs past the end of %s (%llu bytes left)",
                     (unsigned long long)size, r->section ? r->section : "the file",
                     (unsigned long long)room);
      gap = UINT64_MAX;
      quiet = true;
      p += 8;
      continue;
    }
    ptx_container *c = add_container(s);
    if (!c) {
      ptx_scan_error(s, p, "out of memory for containers");
      return found;
    }
    quiet = false;
    c->offset = p;
    c->size = CONTAINER_HEADER + size;
    c->section = r->section;
    c->section_offset = p - r->section_start;
    c->shndx = r->shndx;
    c->vaddr = r->vaddr + (p - r->start);
    c->member = r->member;
    walk_entries(s, c, p + CONTAINER_HEADER, p + CONTAINER_HEADER + size);
    found++;
    /* Resume after the container, at the next multiple of 8. */
    uint64_t next = p + CONTAINER_HEADER + size;
    uint64_t m = (r->vaddr + (next - r->start)) & 7;
    if (m && r->end - next >= 8 - m) {
      if (r->strict)
        for (uint64_t i = next; i < next + (8 - m); i++)
          if (d[i] && gap == UINT64_MAX) gap = i;
      next += 8 - m;
    } else if (m) {
      next = r->end;
    }
    p = next;
  }
  if (r->strict && !quiet) {
    for (uint64_t i = p; i < r->end && gap == UINT64_MAX; i++)
      if (d[i]) gap = i;
    if (gap != UINT64_MAX)
      ptx_scan_error(s, gap, "%llu bytes that are neither a fatbin container nor padding in %s",
                     (unsigned long long)(r->end - gap), r->section ? r->section : "the fatbin");
  }
  return found;
}
