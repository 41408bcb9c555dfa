/* ptx/cubin.c: the kernels of an SASS cubin, from its ELF symbol table.
 *
 * ptxwave does not translate SASS, but the runtime must know which names a
 * fatbin's cubins define: a library asks for a kernel that only a cubin
 * has, and the answer is a handle whose launch fails with a message naming
 * it ("SASS only, no PTX"), not CUDA_ERROR_NOT_FOUND.
 *
 * A cubin is an ELF64 (e_machine EM_CUDA, 190).  Its kernels are the
 * symbols of .symtab (SHT_SYMTAB, linked to its string table by sh_link)
 * with type STT_FUNC and bit 0x10 of st_other set (STO_CUDA_ENTRY: seen
 * with readelf on nvcc 13's cubins, where `__global__` functions carry
 * st_other 0x10 and `__device__` functions, local `$kernel$callee`
 * symbols, have 0).  Every offset and size is checked against the bytes
 * given; a malformed cubin lists no kernels (returns 0).
 */
#include <string.h>

#include "container.h"

#define EM_CUDA 190
#define SHT_SYMTAB 2
#define STT_FUNC 2
#define STO_CUDA_ENTRY 0x10

static uint64_t rd(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  memcpy(&v, p, n);   /* little endian hosts only, as everywhere in ptx/ */
  return v;
}

/* [off, off + len) inside [0, size) without overflow. */
static bool inside(uint64_t off, uint64_t len, uint64_t size) {
  return off <= size && len <= size - off;
}

uint32_t ptx_cubin_kernels(const uint8_t *elf, size_t size, pw_arena *a, const char **names,
                           uint32_t cap) {
  /* ELF64 header: e_ident[16], e_type u16, e_machine u16 at 18, e_shoff u64
   * at 40, e_shentsize u16 at 58, e_shnum u16 at 60. */
  if (size < 64 || memcmp(elf, "\177ELF", 4) || elf[4] != 2 || elf[5] != 1) return 0;
  if (rd(elf + 18, 2) != EM_CUDA) return 0;
  uint64_t shoff = rd(elf + 40, 8), shentsize = rd(elf + 58, 2), shnum = rd(elf + 60, 2);
  if (shentsize < 64 || !inside(shoff, shnum * shentsize, size)) return 0;
  uint32_t n = 0;
  for (uint64_t i = 0; i < shnum; i++) {
    /* Section header: sh_type u32 at 4, sh_offset u64 at 24, sh_size at 32,
     * sh_link u32 at 40, sh_entsize u64 at 56. */
    const uint8_t *sh = elf + shoff + i * shentsize;
    if (rd(sh + 4, 4) != SHT_SYMTAB) continue;
    uint64_t off = rd(sh + 24, 8), len = rd(sh + 32, 8), link = rd(sh + 40, 4),
             ent = rd(sh + 56, 8);
    if (ent < 24 || link >= shnum || !inside(off, len, size)) continue;
    const uint8_t *st = elf + shoff + link * shentsize;
    uint64_t soff = rd(st + 24, 8), slen = rd(st + 32, 8);
    if (!inside(soff, slen, size)) continue;
    const char *strtab = (const char *)elf + soff;
    for (uint64_t k = 0; k + ent <= len; k += ent) {
      /* Elf64_Sym: st_name u32, st_info u8, st_other u8, ... */
      const uint8_t *sym = elf + off + k;
      uint64_t name = rd(sym, 4);
      if ((sym[4] & 0xf) != STT_FUNC || !(sym[5] & STO_CUDA_ENTRY) || name >= slen) continue;
      const char *s = strtab + name;
      size_t sl = strnlen(s, slen - name);
      if (sl == 0 || sl == slen - name) continue;   /* empty or not terminated */
      if (names && n < cap) names[n] = pw_arena_strndup(a, s, sl);
      n++;
    }
  }
  return n;
}
