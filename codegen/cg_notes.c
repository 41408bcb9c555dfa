/* codegen/cg_notes.c: one AMDGPU metadata note for a code object linked
 * from several objects (the partitions of a split compile, cg_compile.c).
 *
 * Each object LLVM writes carries an NT_AMDGPU_METADATA note (AMDGPUUsage
 * "Code Object V3 and Above Note Records": name "AMDGPU", type 32, a
 * MessagePack map) listing its own kernels under "amdhsa.kernels".  lld
 * concatenates the .note sections, so a link of n objects would hold n
 * metadata notes.  Comgr merges such notes (LLVM's --lto-partitions makes
 * them too), but a loader or tool that reads the first note only would miss
 * kernels, and the unsplit code object has one note: before the link, the
 * first object's note gets the kernels of every object (the other keys,
 * amdhsa.version and amdhsa.target, are the same in all) and the other
 * objects' note sections are marked SHF_EXCLUDE, which a final link drops
 * (ELF gABI).  The relocatable objects are edited in place: the new note
 * section is appended at the end of the file and its section header points
 * there (a section's offset is free in a relocatable ELF file).
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_priv.h"

#ifndef NT_AMDGPU_METADATA
#define NT_AMDGPU_METADATA 32
#endif

/* ---- MessagePack (msgpack spec "formats"), just enough to walk a map ---- */

static uint64_t be(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++) v = v << 8 | p[i];
  return v;
}

/* The end of the object at p, or NULL if it runs past end. */
static const uint8_t *mp_skip(const uint8_t *p, const uint8_t *end, unsigned depth) {
  if (p >= end || depth > 64) return NULL;
  uint8_t t = *p++;
  uint64_t n = 0, items = 0; /* payload bytes, nested objects */
  if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3) return p;
  if (t >= 0x80 && t <= 0x8f) items = 2u * (t & 15);
  else if (t >= 0x90 && t <= 0x9f) items = t & 15;
  else if (t >= 0xa0 && t <= 0xbf) n = t & 31;
  else {
    switch (t) {
    case 0xc4: case 0xd9: if (end - p < 1) return NULL; n = be(p, 1); p += 1; break;
    case 0xc5: case 0xda: if (end - p < 2) return NULL; n = be(p, 2); p += 2; break;
    case 0xc6: case 0xdb: if (end - p < 4) return NULL; n = be(p, 4); p += 4; break;
    case 0xc7: if (end - p < 2) return NULL; n = be(p, 1) + 1; p += 1; break;
    case 0xc8: if (end - p < 3) return NULL; n = be(p, 2) + 1; p += 2; break;
    case 0xc9: if (end - p < 5) return NULL; n = be(p, 4) + 1; p += 4; break;
    case 0xca: n = 4; break;
    case 0xcb: n = 8; break;
    case 0xcc: case 0xd0: n = 1; break;
    case 0xcd: case 0xd1: n = 2; break;
    case 0xce: case 0xd2: n = 4; break;
    case 0xcf: case 0xd3: n = 8; break;
    case 0xd4: n = 2; break;
    case 0xd5: n = 3; break;
    case 0xd6: n = 5; break;
    case 0xd7: n = 9; break;
    case 0xd8: n = 17; break;
    case 0xdc: if (end - p < 2) return NULL; items = be(p, 2); p += 2; break;
    case 0xdd: if (end - p < 4) return NULL; items = be(p, 4); p += 4; break;
    case 0xde: if (end - p < 2) return NULL; items = 2 * be(p, 2); p += 2; break;
    case 0xdf: if (end - p < 4) return NULL; items = 2 * be(p, 4); p += 4; break;
    default: return NULL; /* 0xc1: never used */
    }
  }
  if ((uint64_t)(end - p) < n) return NULL;
  p += n;
  for (uint64_t i = 0; i < items && p; i++) p = mp_skip(p, end, depth + 1);
  return p;
}

/* A map's or array's element count and the end of its header; false if p
 * is neither (want_map selects which). */
static bool mp_header(const uint8_t *p, const uint8_t *end, bool want_map, uint64_t *count,
                      const uint8_t **body) {
  if (p >= end) return false;
  uint8_t t = *p;
  uint8_t fix = want_map ? 0x80 : 0x90, b16 = want_map ? 0xde : 0xdc, b32 = want_map ? 0xdf : 0xdd;
  if ((t & 0xf0) == fix) {
    *count = t & 15;
    *body = p + 1;
  } else if (t == b16 && end - p >= 3) {
    *count = be(p + 1, 2);
    *body = p + 3;
  } else if (t == b32 && end - p >= 5) {
    *count = be(p + 1, 4);
    *body = p + 5;
  } else {
    return false;
  }
  return true;
}

/* Whether the string object at p is s. */
static bool mp_str_is(const uint8_t *p, const uint8_t *end, const char *s) {
  size_t n = strlen(s);
  uint64_t len;
  const uint8_t *q;
  if (p >= end) return false;
  if ((*p & 0xe0) == 0xa0) len = *p & 31, q = p + 1;
  else if (*p == 0xd9 && end - p >= 2) len = p[1], q = p + 2;
  else if (*p == 0xda && end - p >= 3) len = be(p + 1, 2), q = p + 3;
  else return false;
  return len == n && (uint64_t)(end - q) >= len && !memcmp(q, s, n);
}

/* ---- ELF notes ---------------------------------------------------------- */

typedef struct note_loc {
  size_t shdr_off;              /* file offset of the note section's header */
  Elf64_Shdr sh;
  size_t note_off, note_len;    /* the metadata note within the file */
  const uint8_t *desc;          /* its MessagePack payload */
  size_t desc_len;
  const uint8_t *kernels;       /* the elements of amdhsa.kernels */
  size_t kernels_len;
  uint64_t nkernels;
} note_loc;

static size_t align4(size_t n) { return (n + 3) & ~(size_t)3; }

/* Finds obj's metadata note and its kernel array. */
static bool find_note(const uint8_t *obj, size_t size, note_loc *L, char *err, size_t cap) {
  Elf64_Ehdr eh;
  if (size < sizeof eh || memcmp(obj, ELFMAG, SELFMAG) || obj[EI_CLASS] != ELFCLASS64 ||
      obj[EI_DATA] != ELFDATA2LSB) {
    snprintf(err, cap, "not a 64-bit little-endian ELF object");
    return false;
  }
  memcpy(&eh, obj, sizeof eh);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
      (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum) {
    snprintf(err, cap, "bad section header table");
    return false;
  }
  for (unsigned i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr sh;
    size_t at = eh.e_shoff + (size_t)i * sizeof sh;
    memcpy(&sh, obj + at, sizeof sh);
    if (sh.sh_type != SHT_NOTE || sh.sh_offset > size || sh.sh_size > size - sh.sh_offset) continue;
    size_t off = sh.sh_offset, end = sh.sh_offset + sh.sh_size;
    while (end - off >= sizeof(Elf64_Nhdr)) {
      Elf64_Nhdr nh;
      memcpy(&nh, obj + off, sizeof nh);
      size_t name_off = off + sizeof nh, desc_off = name_off + align4(nh.n_namesz);
      if (nh.n_namesz > end - name_off || desc_off > end || nh.n_descsz > end - desc_off) break;
      size_t next = desc_off + align4(nh.n_descsz);
      if (nh.n_type == NT_AMDGPU_METADATA && nh.n_namesz == 7 && !memcmp(obj + name_off, "AMDGPU", 7)) {
        L->shdr_off = at;
        L->sh = sh;
        L->note_off = off;
        L->note_len = (next < end ? next : end) - off;
        L->desc = obj + desc_off;
        L->desc_len = nh.n_descsz;
        const uint8_t *p, *e = L->desc + L->desc_len;
        uint64_t npairs;
        if (!mp_header(L->desc, e, true, &npairs, &p)) break;
        for (uint64_t k = 0; k < npairs && p; k++) {
          const uint8_t *v = mp_skip(p, e, 0);
          if (v && mp_str_is(p, e, "amdhsa.kernels")) {
            const uint8_t *body, *vend = mp_skip(v, e, 0);
            if (!vend || !mp_header(v, e, false, &L->nkernels, &body)) break;
            L->kernels = body;
            L->kernels_len = (size_t)(vend - body);
            return true;
          }
          p = v ? mp_skip(v, e, 0) : NULL;
        }
        break;
      }
      off = next;
    }
  }
  snprintf(err, cap, "no AMDGPU metadata note with amdhsa.kernels");
  return false;
}

typedef struct buf {
  uint8_t *p;
  size_t n, cap;
} buf;

static void put(buf *b, const void *p, size_t n) {
  if (!n) return; /* memcpy with a null buffer is undefined even for 0 bytes */
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
    if (!b->p) PW_DIE("out of memory");
  }
  memcpy(b->p + b->n, p, n);
  b->n += n;
}

static void put_be32(buf *b, uint8_t tag, uint32_t v) {
  uint8_t h[5] = {tag, (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  put(b, h, 5);
}

bool cg_merge_notes(uint8_t **objs, size_t *sizes, unsigned n, char *err, size_t cap) {
  if (n < 2) return true;
  note_loc *L = calloc(n, sizeof *L);
  if (!L) PW_DIE("out of memory");
  bool ok = true;
  uint64_t total = 0;
  for (unsigned i = 0; i < n && ok; i++) {
    char e[128];
    if (!find_note(objs[i], sizes[i], &L[i], e, sizeof e)) {
      snprintf(err, cap, "partition %u: %s", i, e);
      ok = false;
    }
    total += L[i].nkernels;
  }
  if (ok && total > UINT32_MAX) {
    snprintf(err, cap, "too many kernels");
    ok = false;
  }
  if (!ok) {
    free(L);
    return false;
  }
  /* the merged MessagePack map: object 0's, with every object's kernels */
  buf desc = {0};
  const uint8_t *d0 = L[0].desc, *e0 = d0 + L[0].desc_len;
  uint64_t npairs;
  const uint8_t *p;
  mp_header(d0, e0, true, &npairs, &p);
  put(&desc, d0, (size_t)(p - d0));
  for (uint64_t k = 0; k < npairs; k++) {
    const uint8_t *v = mp_skip(p, e0, 0), *vend = mp_skip(v, e0, 0);
    put(&desc, p, (size_t)(v - p));
    if (mp_str_is(p, e0, "amdhsa.kernels")) {
      put_be32(&desc, 0xdd, (uint32_t)total);
      for (unsigned i = 0; i < n; i++) put(&desc, L[i].kernels, L[i].kernels_len);
    } else {
      put(&desc, v, (size_t)(vend - v));
    }
    p = vend;
  }
  /* the new note section: object 0's, its metadata note replaced */
  buf sec = {0};
  const uint8_t *o0 = objs[0];
  put(&sec, o0 + L[0].sh.sh_offset, L[0].note_off - L[0].sh.sh_offset);
  Elf64_Nhdr nh = {.n_namesz = 7, .n_descsz = (Elf64_Word)desc.n, .n_type = NT_AMDGPU_METADATA};
  static const uint8_t zeros[8] = {0};
  put(&sec, &nh, sizeof nh);
  put(&sec, "AMDGPU\0", 8); /* "AMDGPU\0" padded to 4 */
  put(&sec, desc.p, desc.n);
  put(&sec, zeros, align4(desc.n) - desc.n);
  size_t after = L[0].note_off + L[0].note_len, send = L[0].sh.sh_offset + L[0].sh.sh_size;
  put(&sec, o0 + after, send - after);
  /* appended to object 0, 8-aligned; its section header points there */
  size_t at = (sizes[0] + 7) & ~(size_t)7;
  uint8_t *grown = realloc(objs[0], at + sec.n);
  if (!grown) PW_DIE("out of memory");
  memset(grown + sizes[0], 0, at - sizes[0]);
  memcpy(grown + at, sec.p, sec.n);
  Elf64_Shdr sh = L[0].sh;
  sh.sh_offset = at;
  sh.sh_size = sec.n;
  memcpy(grown + L[0].shdr_off, &sh, sizeof sh);
  objs[0] = grown;
  sizes[0] = at + sec.n;
  /* the others' metadata notes: dropped by the link */
  for (unsigned i = 1; i < n; i++) {
    Elf64_Shdr s = L[i].sh;
    s.sh_flags |= SHF_EXCLUDE;
    memcpy(objs[i] + L[i].shdr_off, &s, sizeof s);
  }
  free(desc.p);
  free(sec.p);
  free(L);
  return true;
}
