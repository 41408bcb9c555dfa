/* ptx/elf.c: opening an input, telling what it is by its bytes, and
 * walking ELF64 files and ar archives down to the regions fatbin.c scans.
 *
 * Inputs (by content, never by name):
 *   "\x7fELF", class 64, little endian, e_machine EM_CUDA  a cubin
 *   "\x7fELF", class 64, little endian, another machine   a host ELF
 *   "!<arch>\n"                                            an ar archive
 *   u32 0xBA55ED50                                         a raw fatbin
 *   text with a `.version` directive                       PTX
 *
 * ELF (System V gABI, "Sections"): every section with file bytes is handed
 * to fatbin.c; sections are visited in file-offset order and a section's
 * bytes already covered by an earlier one are skipped, so a hostile section
 * table (65,535 sections over the same megabytes) costs one pass over the
 * file, not one per section.  `.nvFatBinSegment` holds __fatBinC_Wrapper_t
 * records (CUDA's fatbinary_section.h); each wrapper's data pointer is
 * matched to the container it names, by address in executables and shared
 * objects, through its R_X86_64_64 relocation in relocatable objects.
 *
 * ar (the GNU/SysV format that binutils writes, with the BSD variant for
 * long names): 60-byte member headers; "/" and "/SYM64/" are symbol tables,
 * "//" is the long-name table that "/N" names index; each ELF member is
 * scanned like a file of its own.
 *
 * Invariants: every offset read from the input is checked against the
 * bytes that hold it (the file, the member, the section) before use; counts
 * are bounded by the input size; nothing is allocated in proportion to a
 * number the input merely claims.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container_impl.h"

#define EM_CUDA 190
#define SHT_RELA 4
#define SHT_NOBITS 8
#define SHF_COMPRESSED 0x800
#define R_X86_64_64 1
#define R_X86_64_RELATIVE 8
#define WRAPPER_SIZE 24 /* sizeof(__fatBinC_Wrapper_t): int, int, pointer, pointer */

typedef struct elf_shdr {
  uint32_t name, type, link, info;
  uint64_t flags, addr, offset, size, entsize;
  const char *sname;
} elf_shdr;

/* One ELF being scanned: the bytes [base, base + size) of the file. */
typedef struct elf_ctx {
  ptx_scan *s;
  uint64_t base, size;
  const char *member;
  uint16_t type;        /* ET_REL 1, ET_EXEC 2, ET_DYN 3 */
  uint32_t nsec;
  elf_shdr *sec;        /* malloc'd */
  uint32_t first_container, first_wrapper;
} elf_ctx;

static const uint8_t *at(const elf_ctx *e, uint64_t off) { return e->s->f->data + e->base + off; }

static int cmp_by_offset(const void *a, const void *b, void *secs) {
  const elf_shdr *s = secs;
  uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
  if (s[i].offset != s[j].offset) return s[i].offset < s[j].offset ? -1 : 1;
  return i < j ? -1 : i > j;
}

/* Reads the section header table.  False when there is none to read. */
static bool read_sections(elf_ctx *e) {
  ptx_scan *s = e->s;
  const uint8_t *h = at(e, 0);
  uint64_t shoff = ptx_le64(h + 0x28);
  uint16_t shentsize = ptx_le16(h + 0x3A);
  uint64_t shnum = ptx_le16(h + 0x3C);
  uint32_t shstrndx = ptx_le16(h + 0x3E);
  if (shoff == 0) return false; /* no section table: nothing to scan */
  if (shentsize != 64) {
    ptx_scan_error(s, e->base + 0x3A, "ELF section header size %u, expected 64", shentsize);
    return false;
  }
  if (!ptx_in_bounds(shoff, 64, e->size)) {
    ptx_scan_error(s, e->base + 0x28, "ELF section table at %#llx lies outside the %llu-byte file",
                   (unsigned long long)shoff, (unsigned long long)e->size);
    return false;
  }
  /* gABI extended numbering: counts too big for the header live in
   * section 0's sh_size and sh_link. */
  if (shnum == 0) shnum = ptx_le64(at(e, shoff) + 0x20);
  if (shstrndx == 0xFFFF) shstrndx = ptx_le32(at(e, shoff) + 0x28);
  if (shnum > (e->size - shoff) / 64) {
    ptx_scan_error(s, e->base + 0x3C, "ELF claims %llu sections; only %llu fit in the file after %#llx",
                   (unsigned long long)shnum, (unsigned long long)((e->size - shoff) / 64),
                   (unsigned long long)shoff);
    shnum = (e->size - shoff) / 64;
  }
  e->nsec = (uint32_t)shnum;
  e->sec = calloc(shnum ? shnum : 1, sizeof(elf_shdr));
  if (!e->sec) {
    ptx_scan_error(s, e->base + shoff, "out of memory for %llu section headers", (unsigned long long)shnum);
    return false;
  }
  for (uint32_t i = 0; i < e->nsec; i++) {
    const uint8_t *p = at(e, shoff + (uint64_t)i * 64);
    elf_shdr *sh = &e->sec[i];
    sh->name = ptx_le32(p);
    sh->type = ptx_le32(p + 4);
    sh->flags = ptx_le64(p + 8);
    sh->addr = ptx_le64(p + 0x10);
    sh->offset = ptx_le64(p + 0x18);
    sh->size = ptx_le64(p + 0x20);
    sh->link = ptx_le32(p + 0x28);
    sh->info = ptx_le32(p + 0x2C);
    sh->entsize = ptx_le64(p + 0x38);
    sh->sname = "";
  }
  /* Names, from the section-name string table. */
  if (shstrndx >= e->nsec || e->nsec == 0) {
    if (e->nsec) ptx_scan_error(s, e->base + 0x3E, "ELF section-name table index %u out of range", shstrndx);
    return true;
  }
  elf_shdr *st = &e->sec[shstrndx];
  if (st->type == SHT_NOBITS || !ptx_in_bounds(st->offset, st->size, e->size)) {
    ptx_scan_error(s, e->base + shoff + (uint64_t)shstrndx * 64 + 0x18,
                   "ELF section-name table lies outside the file");
    return true;
  }
  const char *strs = (const char *)at(e, st->offset);
  for (uint32_t i = 0; i < e->nsec; i++) {
    uint32_t n = e->sec[i].name;
    if (n >= st->size) continue;
    const char *nul = memchr(strs + n, 0, st->size - n);
    if (!nul) continue;
    e->sec[i].sname = pw_arena_strndup(&s->f->arena, strs + n, (size_t)(nul - (strs + n)));
    if (!e->sec[i].sname) e->sec[i].sname = "";
  }
  return true;
}

static bool section_has_bytes(const elf_ctx *e, uint32_t i) {
  const elf_shdr *sh = &e->sec[i];
  return i != 0 && sh->type != SHT_NOBITS && sh->size != 0 && !(sh->flags & SHF_COMPRESSED);
}

/* Scans every section with bytes for containers, in file order, each byte
 * once. */
static void scan_sections(elf_ctx *e) {
  ptx_scan *s = e->s;
  uint32_t *order = malloc((size_t)(e->nsec ? e->nsec : 1) * sizeof(uint32_t));
  if (!order) {
    ptx_scan_error(s, e->base, "out of memory for %u sections", e->nsec);
    return;
  }
  uint32_t n = 0;
  for (uint32_t i = 0; i < e->nsec; i++) {
    if (!section_has_bytes(e, i)) continue;
    const elf_shdr *sh = &e->sec[i];
    if (!ptx_in_bounds(sh->offset, sh->size, e->size)) {
      ptx_scan_error(s, e->base + sh->offset,
                     "section %u (%s) of %llu bytes at %#llx runs past the end of the %llu-byte ELF", i,
                     sh->sname, (unsigned long long)sh->size, (unsigned long long)sh->offset,
                     (unsigned long long)e->size);
      continue;
    }
    order[n++] = i;
  }
  qsort_r(order, n, sizeof *order, cmp_by_offset, e->sec);
  uint64_t covered = 0; /* ELF-relative offset up to which bytes were scanned */
  for (uint32_t k = 0; k < n; k++) {
    const elf_shdr *sh = &e->sec[order[k]];
    uint64_t end = sh->offset + sh->size;
    if (end <= covered) continue;
    uint64_t skip = covered > sh->offset ? covered - sh->offset : 0;
    bool strict = !strcmp(sh->sname, ".nv_fatbin") || !strcmp(sh->sname, "__nv_relfatbin");
    /* In relocatable objects sh_addr is 0 and alignment counts from the
     * section start, which the linker keeps at sh_addralign (8). */
    ptx_region r = {
        .start = e->base + sh->offset + skip,
        .end = e->base + end,
        .vaddr = sh->addr + skip,
        .section = sh->sname,
        .section_start = e->base + sh->offset,
        .member = e->member,
        .shndx = order[k],
        .strict = strict && skip == 0,
    };
    ptx_scan_fatbins(s, &r);
    covered = end;
  }
  free(order);
}

/* Container lookup for wrappers: sorted (key1, key2) -> container index,
 * where the key is (0, vaddr) in linked files and (section, offset) in
 * relocatable objects. */
typedef struct cont_key {
  uint64_t k1, k2;
  uint32_t index;
} cont_key;

static int cmp_key(const void *a, const void *b) {
  const cont_key *x = a, *y = b;
  if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
  if (x->k2 != y->k2) return x->k2 < y->k2 ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static int32_t find_container(const cont_key *keys, uint32_t n, uint64_t k1, uint64_t k2) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (keys[mid].k1 < k1 || (keys[mid].k1 == k1 && keys[mid].k2 < k2))
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < n && keys[lo].k1 == k1 && keys[lo].k2 == k2) return (int32_t)keys[lo].index;
  return -1;
}

/* Where each wrapper's data field lies, for relocation matching: its
 * section and offset within it. */
typedef struct wrap_pos {
  uint32_t shndx;
  uint64_t secoff; /* of the wrapper record */
  uint64_t vaddr;
  int32_t data_shndx; /* relocatable: section the data pointer's relocation names; -1 none */
} wrap_pos;

/* Resolves wrapper data pointers that relocations supply instead of the
 * section bytes (always in relocatable objects; in linked files only when
 * the linker left the in-place value 0).  For each RELA section that
 * applies, each relocation landing on a wrapper's data field gives the
 * value.  Wrappers are in (section, offset) order, so a binary search finds
 * the one a relocation hits. */
static void apply_relocations(elf_ctx *e, wrap_pos *pos, uint32_t nw) {
  ptx_scan *s = e->s;
  ptx_file *f = s->f;
  for (uint32_t i = 1; i < e->nsec; i++) {
    const elf_shdr *rs = &e->sec[i];
    if (rs->type != SHT_RELA || rs->entsize != 24) continue;
    if (!ptx_in_bounds(rs->offset, rs->size, e->size)) continue; /* reported by scan_sections */
    bool rel = e->type == 1;
    uint32_t target = rs->info;
    if (rel && (target >= e->nsec || strcmp(e->sec[target].sname, ".nvFatBinSegment"))) continue;
    /* The symbol table, for relocatable objects. */
    const elf_shdr *sym = NULL;
    if (rel) {
      if (rs->link >= e->nsec) continue;
      sym = &e->sec[rs->link];
      if (!ptx_in_bounds(sym->offset, sym->size, e->size)) continue;
    }
    uint64_t nrel = rs->size / 24;
    for (uint64_t k = 0; k < nrel; k++) {
      const uint8_t *r = at(e, rs->offset + k * 24);
      uint64_t where = ptx_le64(r), info = ptx_le64(r + 8);
      int64_t addend = (int64_t)ptx_le64(r + 16);
      uint32_t type = (uint32_t)info, symi = (uint32_t)(info >> 32);
      /* Find the wrapper whose data field (+8) is at `where`. */
      uint32_t lo = 0, hi = nw;
      while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        bool less = rel ? (pos[mid].shndx < target ||
                           (pos[mid].shndx == target && pos[mid].secoff + 8 < where))
                        : pos[mid].vaddr + 8 < where;
        if (less)
          lo = mid + 1;
        else
          hi = mid;
      }
      if (lo >= nw) continue;
      if (rel ? (pos[lo].shndx != target || pos[lo].secoff + 8 != where) : pos[lo].vaddr + 8 != where)
        continue;
      ptx_wrapper *w = &f->wrappers[e->first_wrapper + lo];
      if (!rel) {
        if (type == R_X86_64_RELATIVE && w->data == 0) w->data = (uint64_t)addend;
        continue;
      }
      if (type != R_X86_64_64) continue;
      if (!ptx_in_bounds((uint64_t)symi * 24, 24, sym->size)) {
        ptx_scan_error(s, e->base + rs->offset + k * 24 + 8,
                       "relocation names symbol %u, past the end of the symbol table", symi);
        continue;
      }
      const uint8_t *sy = at(e, sym->offset + (uint64_t)symi * 24);
      uint16_t shndx = ptx_le16(sy + 6);
      uint64_t value = ptx_le64(sy + 8);
      /* Relocatable: the pointer is "offset value + addend in section
       * shndx" (the symbol is .nv_fatbin's section symbol or a local
       * symbol in it). */
      w->data = value + (uint64_t)addend;
      pos[lo].data_shndx = shndx;
    }
  }
}

/* Reads the wrappers of .nvFatBinSegment and points them at containers. */
static void scan_wrappers(elf_ctx *e) {
  ptx_scan *s = e->s;
  ptx_file *f = s->f;
  e->first_wrapper = f->nwrappers;
  /* Count the records first, to size the position table. */
  uint64_t total = 0;
  for (uint32_t i = 1; i < e->nsec; i++) {
    const elf_shdr *sh = &e->sec[i];
    if (!section_has_bytes(e, i) || strcmp(sh->sname, ".nvFatBinSegment")) continue;
    if (!ptx_in_bounds(sh->offset, sh->size, e->size)) continue;
    total += sh->size / WRAPPER_SIZE;
  }
  if (total == 0) return;
  wrap_pos *pos = malloc((size_t)total * sizeof *pos);
  if (!pos) {
    ptx_scan_error(s, e->base, "out of memory for %llu wrappers", (unsigned long long)total);
    return;
  }
  uint32_t nw = 0;
  for (uint32_t i = 1; i < e->nsec; i++) {
    const elf_shdr *sh = &e->sec[i];
    if (!section_has_bytes(e, i) || strcmp(sh->sname, ".nvFatBinSegment")) continue;
    if (!ptx_in_bounds(sh->offset, sh->size, e->size)) continue;
    if (sh->size % WRAPPER_SIZE)
      ptx_scan_error(s, e->base + sh->offset,
                     ".nvFatBinSegment of %llu bytes is not a whole number of %d-byte wrappers",
                     (unsigned long long)sh->size, WRAPPER_SIZE);
    for (uint64_t o = 0; o + WRAPPER_SIZE <= sh->size; o += WRAPPER_SIZE) {
      const uint8_t *p = at(e, sh->offset + o);
      uint64_t fo = e->base + sh->offset + o;
      if (ptx_le32(p) != PTX_WRAPPER_MAGIC) {
        ptx_scan_error(s, fo, "expected a fatbin wrapper (magic 0x466243b1), found %#x", ptx_le32(p));
        continue;
      }
      ptx_wrapper *w = ptx_add_wrapper(s);
      if (!w) {
        ptx_scan_error(s, fo, "out of memory for wrappers");
        free(pos);
        return;
      }
      w->offset = fo;
      w->version = ptx_le32(p + 4);
      w->data = ptx_le64(p + 8);
      w->list = ptx_le64(p + 16);
      w->member = e->member;
      if (w->version != 1 && w->version != 2)
        ptx_scan_error(s, fo + 4, "fatbin wrapper version %u; 1 and 2 are known", w->version);
      pos[nw++] = (wrap_pos){i, o, sh->addr + o, -1};
    }
  }
  /* Linked files normally carry the pointers in place; only look through
   * their (possibly millions of) dynamic relocations when one is missing. */
  bool need_relocs = e->type == 1;
  for (uint32_t k = 0; k < nw && !need_relocs; k++) need_relocs = f->wrappers[e->first_wrapper + k].data == 0;
  if (need_relocs) apply_relocations(e, pos, nw);

  /* Match data pointers with the containers of this ELF. */
  uint32_t nc = f->ncontainers - e->first_container;
  cont_key *keys = malloc((size_t)(nc ? nc : 1) * sizeof *keys);
  if (!keys) {
    ptx_scan_error(s, e->base, "out of memory for %u containers", nc);
    free(pos);
    return;
  }
  bool rel = e->type == 1;
  for (uint32_t k = 0; k < nc; k++) {
    const ptx_container *c = &f->containers[e->first_container + k];
    keys[k] = rel ? (cont_key){c->shndx, c->section_offset, e->first_container + k}
                  : (cont_key){0, c->vaddr, e->first_container + k};
  }
  qsort(keys, nc, sizeof *keys, cmp_key);
  for (uint32_t k = 0; k < nw; k++) {
    ptx_wrapper *w = &f->wrappers[e->first_wrapper + k];
    int32_t ci;
    if (rel)
      ci = pos[k].data_shndx >= 0 ? find_container(keys, nc, (uint64_t)pos[k].data_shndx, w->data) : -1;
    else
      ci = find_container(keys, nc, 0, w->data);
    w->container = ci;
    if (ci >= 0 && f->containers[ci].wrapper < 0) f->containers[ci].wrapper = (int32_t)(e->first_wrapper + k);
  }
  free(keys);
  free(pos);
}

void ptx_scan_elf(ptx_scan *s, uint64_t base, uint64_t size, const char *member) {
  const uint8_t *h = s->f->data + base;
  if (size < 64) {
    ptx_scan_error(s, base, "ELF header truncated: %llu bytes, 64 needed", (unsigned long long)size);
    return;
  }
  if (h[4] != 2 || h[5] != 1) {
    ptx_scan_error(s, base + 4, "ELF class %u, data %u: only 64-bit little-endian ELF is supported", h[4], h[5]);
    return;
  }
  elf_ctx e = {.s = s, .base = base, .size = size, .member = member, .type = ptx_le16(h + 0x10)};
  e.first_container = s->f->ncontainers;
  if (read_sections(&e)) {
    scan_sections(&e);
    scan_wrappers(&e);
  }
  free(e.sec);
}

/* ---- ar archives ---- */

/* A decimal field of an ar header; false if it holds anything else. */
static bool ar_number(const uint8_t *p, int n, uint64_t *out) {
  uint64_t v = 0;
  int i = 0;
  while (i < n && p[i] == ' ') i++;
  if (i == n || p[i] < '0' || p[i] > '9') return false;
  for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) v = v * 10 + (uint64_t)(p[i] - '0'); /* <= 10 digits */
  for (; i < n; i++)
    if (p[i] != ' ') return false;
  *out = v;
  return true;
}

static void scan_ar(ptx_scan *s) {
  ptx_file *f = s->f;
  const uint8_t *d = f->data;
  uint64_t p = 8;
  const char *longnames = NULL;
  uint64_t longnames_len = 0;
  while (p < f->size) {
    if (f->size - p < 60) {
      ptx_scan_error(s, p, "ar member header truncated: %llu bytes left, 60 needed",
                     (unsigned long long)(f->size - p));
      return;
    }
    const uint8_t *h = d + p;
    uint64_t size;
    if (h[58] != '`' || h[59] != '\n') {
      ptx_scan_error(s, p + 58, "ar member header does not end in \"`\\n\"");
      return;
    }
    if (!ar_number(h + 48, 10, &size)) {
      ptx_scan_error(s, p + 48, "ar member size is not a decimal number");
      return;
    }
    uint64_t data = p + 60;
    if (size > f->size - data) {
      ptx_scan_error(s, p + 48, "ar member of %llu bytes runs past the end of the archive (%llu bytes left)",
                     (unsigned long long)size, (unsigned long long)(f->size - data));
      return;
    }
    /* The member's name. */
    char namebuf[17];
    const char *name = NULL;
    size_t namelen = 0;
    uint64_t body = data, body_size = size;
    if (!memcmp(h, "/               ", 16) || !memcmp(h, "/SYM64/         ", 16)) {
      name = NULL; /* symbol table */
    } else if (!memcmp(h, "//              ", 16)) {
      longnames = (const char *)d + data;
      longnames_len = size;
    } else if (h[0] == '/' && h[1] >= '0' && h[1] <= '9') {
      uint64_t off;
      if (!ar_number(h + 1, 15, &off) || !longnames || off >= longnames_len) {
        ptx_scan_error(s, p, "ar member's long name /%.15s is not in the long-name table", (const char *)h + 1);
        name = "?";
        namelen = 1;
      } else {
        name = longnames + off;
        const char *e = memchr(name, '\n', longnames_len - off);
        namelen = e ? (size_t)(e - name) : (size_t)(longnames_len - off);
        if (namelen && name[namelen - 1] == '/') namelen--;
      }
    } else if (!memcmp(h, "#1/", 3)) {
      /* BSD: the name is the first N bytes of the member. */
      uint64_t n;
      if (!ar_number(h + 3, 13, &n) || n > size) {
        ptx_scan_error(s, p, "BSD ar member name length is invalid");
      } else {
        name = (const char *)d + data;
        namelen = (size_t)n;
        while (namelen && name[namelen - 1] == 0) namelen--;
        body += n;
        body_size -= n;
      }
    } else {
      memcpy(namebuf, h, 16);
      namebuf[16] = 0;
      size_t n = 16;
      while (n && namebuf[n - 1] == ' ') n--;
      if (n && namebuf[n - 1] == '/') n--;
      name = namebuf;
      namelen = n;
    }
    if (name) {
      f->nmembers++;
      const char *mname = pw_arena_strndup(&f->arena, name, namelen);
      if (body_size >= 4 && !memcmp(d + body, "\x7f" "ELF", 4)) {
        bool cuda = body_size >= 20 && ptx_le16(d + body + 18) == EM_CUDA;
        if (!cuda) ptx_scan_elf(s, body, body_size, mname ? mname : "?");
      }
    }
    p = data + size;
    p += p & 1; /* members start on even offsets */
  }
}

/* ---- detection ---- */

/* PTX text: no NUL in the first 4 KiB, and a `.version` directive at the
 * start of a line there (nvcc and NVRTC open with comments, then
 * `.version`). */
static bool looks_like_ptx(const uint8_t *d, uint64_t size) {
  uint64_t n = size < 4096 ? size : 4096;
  if (memchr(d, 0, n)) {
    /* A PTX file may end in NULs; only a NUL before the text ends counts. */
    uint64_t k = 0;
    while (k < n && d[k]) k++;
    for (uint64_t j = k; j < size; j++)
      if (d[j]) return false;
    n = k;
  }
  for (uint64_t i = 0; i + 8 <= n; i++) {
    if (i && d[i - 1] != '\n') continue;
    uint64_t j = i;
    while (j < n && (d[j] == ' ' || d[j] == '\t')) j++;
    if (n - j >= 9 && !memcmp(d + j, ".version", 8) && (d[j + 8] == ' ' || d[j + 8] == '\t')) return true;
  }
  return false;
}

static void parse_ptx_header(ptx_file *f) {
  const char *t = (const char *)f->data;
  size_t n = f->size < 4096 ? (size_t)f->size : 4096;
  for (size_t i = 0; i + 8 < n; i++) {
    if (i && t[i - 1] != '\n') continue;
    size_t j = i;
    while (j < n && (t[j] == ' ' || t[j] == '\t')) j++;
    if (n - j > 9 && !memcmp(t + j, ".version", 8)) {
      unsigned ma = 0, mi = 0;
      j += 8;
      while (j < n && (t[j] == ' ' || t[j] == '\t')) j++;
      while (j < n && t[j] >= '0' && t[j] <= '9' && ma < 1000) ma = ma * 10 + (unsigned)(t[j++] - '0');
      if (j < n && t[j] == '.') j++;
      while (j < n && t[j] >= '0' && t[j] <= '9' && mi < 1000) mi = mi * 10 + (unsigned)(t[j++] - '0');
      f->version_major = (uint16_t)ma;
      f->version_minor = (uint16_t)mi;
    } else if (n - j > 10 && !memcmp(t + j, ".target", 7)) {
      j += 7;
      while (j < n && (t[j] == ' ' || t[j] == '\t')) j++;
      if (n - j > 3 && !memcmp(t + j, "sm_", 3)) {
        unsigned sm = 0;
        j += 3;
        while (j < n && t[j] >= '0' && t[j] <= '9' && sm < 100000) sm = sm * 10 + (unsigned)(t[j++] - '0');
        f->arch = sm;
        if (j < n && (t[j] == 'a' || t[j] == 'f')) f->arch_suffix = t[j];
      }
    }
  }
}

const char *ptx_input_name(ptx_input in) {
  switch (in) {
  case ptx_input_unknown: return "unknown";
  case ptx_input_elf: return "ELF";
  case ptx_input_ar: return "ar archive";
  case ptx_input_fatbin: return "fatbin";
  case ptx_input_ptx: return "PTX text";
  case ptx_input_cubin: return "cubin";
  }
  return "?";
}

static const char *base_name(const char *path) {
  const char *b = strrchr(path, '/');
  return b ? b + 1 : path;
}

static void scan(ptx_file *f, pw_diag *d) {
  ptx_scan s = {.f = f, .d = d};
  const uint8_t *p = f->data;
  uint64_t n = f->size;
  if (n >= 4 && ptx_le32(p) == PTX_FATBIN_MAGIC) {
    f->input = ptx_input_fatbin;
    ptx_region r = {.start = 0, .end = n, .strict = true};
    ptx_scan_fatbins(&s, &r);
  } else if (n >= 4 && !memcmp(p, "\x7f" "ELF", 4)) {
    if (n >= 20 && p[4] == 2 && p[5] == 1 && ptx_le16(p + 18) == EM_CUDA) {
      /* A device ELF.  Its arch is in e_flags: bits 8-15 for the ELF ABI
       * version 8 that CUDA 12.8+ writes (sm_80 -> 0x5004, sm_90a ->
       * 0x5a04), bits 0-7 before it. */
      f->input = ptx_input_cubin;
      if (n >= 64) {
        uint32_t fl = ptx_le32(p + 0x30);
        f->arch = p[8] >= 8 ? (fl >> 8) & 0xff : fl & 0xff;
        f->version_major = p[8];
      } else {
        ptx_scan_error(&s, 0, "cubin ELF header truncated: %llu bytes, 64 needed", (unsigned long long)n);
      }
    } else {
      f->input = ptx_input_elf;
      ptx_scan_elf(&s, 0, n, NULL);
    }
  } else if (n >= 8 && !memcmp(p, "!<arch>\n", 8)) {
    f->input = ptx_input_ar;
    scan_ar(&s);
  } else if (n >= 8 && !memcmp(p, "!<thin>\n", 8)) {
    f->input = ptx_input_ar;
    ptx_scan_error(&s, 0, "thin ar archives hold no member contents; give the members themselves");
  } else if (looks_like_ptx(p, n)) {
    f->input = ptx_input_ptx;
    parse_ptx_header(f);
  } else {
    f->input = ptx_input_unknown;
    ptx_scan_error(&s, 0, "not an ELF file, ar archive, fatbin or PTX text");
  }
}

ptx_file *ptx_file_from_memory(const char *path, const void *data, size_t size, pw_diag *d) {
  ptx_file *f = calloc(1, sizeof *f);
  if (!f) {
    pw_error(d, path, "out of memory");
    return NULL;
  }
  pw_arena_init(&f->arena);
  f->path = pw_arena_strdup(&f->arena, path ? path : "<input>");
  if (!f->path) f->path = "<input>";
  f->name = base_name(f->path);
  f->data = data;
  f->size = size;
  f->decompress_budget = ptx_default_budget(size);
  f->decompressed = PW_NEW(&f->arena, uint64_t);
  scan(f, d);
  return f;
}

ptx_file *ptx_file_open(const char *path, pw_diag *d) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    pw_error(d, path, "cannot open: %s", strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    pw_error(d, path, "not a regular file");
    close(fd);
    return NULL;
  }
  void *map = NULL;
  size_t len = (size_t)st.st_size;
  if (len) {
    map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      pw_error(d, path, "cannot map %zu bytes: %s", len, strerror(errno));
      close(fd);
      return NULL;
    }
  }
  close(fd);
  static const uint8_t empty[1];
  ptx_file *f = ptx_file_from_memory(path, map ? map : empty, len, d);
  if (!f) {
    if (map) munmap(map, len);
    return NULL;
  }
  f->map = map;
  f->map_len = len;
  return f;
}

void ptx_file_close(ptx_file *f) {
  if (!f) return;
  if (f->map) munmap(f->map, f->map_len);
  free(f->containers);
  free(f->wrappers);
  pw_arena_free(&f->arena);
  free(f);
}
