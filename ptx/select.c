/* ptx/select.c: which PTX of a container to compile.
 *
 * A container holds the PTX and cubins one nvcc command built for its
 * `-gencode` list (e.g. compute_75 and compute_90 PTX next to sm_80 and
 * sm_90 cubins).  The CUDA driver JIT-compiles the PTX with the highest
 * arch not above the device's; we do the same for our target, where "the
 * device" is what the translator implements:
 *
 *   usable     kind PTX, arch <= t->max_sm, ISA version <= t's highest,
 *              and no `a`/`f` suffix unless t->arch_specific;
 *   best first highest arch (PTX for a newer SM may use more of its
 *              instructions, and is what NVIDIA tuned last), then highest
 *              ISA version, then plain before `f` before `a` (a
 *              family- or arch-specific module may use instructions only
 *              that SM has: sm_90a's wgmma, sm_100a's tcgen05), then file
 *              order;
 *   fall-back  the rest of that order: when the first fails to translate
 *              (an instruction we lack), the caller tries the next;
 *   any_ptx    then, for a caller that takes any PTX it can parse (the
 *              runtime: a library built for compute_120 only must still
 *              load when the device reports 8.0), the PTX for newer SMs
 *              and the arch-specific PTX, nearest SM above first (the
 *              fewest features the target lacks), plain before `f`
 *              before `a`.
 *
 * Counterexample to "highest ISA version first": a container with
 * compute_90 PTX at ISA 8.0 and compute_75 PTX at ISA 9.0 (built by a newer
 * nvcc) serves an sm_90 target with the compute_90 module.
 */
#include <stdlib.h>

#include "container.h"

static bool usable(const ptx_entry *e, const ptx_target *t) {
  if (e->kind != ptx_kind_ptx) return false;
  if (e->arch > t->max_sm) return false;
  if (e->version_major > t->max_isa_major ||
      (e->version_major == t->max_isa_major && e->version_minor > t->max_isa_minor))
    return false;
  if (e->arch_suffix && !t->arch_specific) return false;
  return true;
}

static int suffix_rank(char s) { return s == 0 ? 0 : s == 'f' ? 1 : 2; }

/* <0 when entry a is preferred over b. */
static int prefer(const ptx_entry *a, uint32_t ia, const ptx_entry *b, uint32_t ib) {
  if (a->arch != b->arch) return a->arch > b->arch ? -1 : 1;
  if (a->version_major != b->version_major) return a->version_major > b->version_major ? -1 : 1;
  if (a->version_minor != b->version_minor) return a->version_minor > b->version_minor ? -1 : 1;
  int sa = suffix_rank(a->arch_suffix), sb = suffix_rank(b->arch_suffix);
  if (sa != sb) return sa < sb ? -1 : 1;
  return ia < ib ? -1 : ia > ib;
}

/* The second tier of t->any_ptx: PTX within t's ISA that usable() turned
 * down for its SM or its suffix. */
static bool newer(const ptx_entry *e, const ptx_target *t) {
  if (e->kind != ptx_kind_ptx || usable(e, t)) return false;
  return e->version_major < t->max_isa_major ||
         (e->version_major == t->max_isa_major && e->version_minor <= t->max_isa_minor);
}

/* <0 when a is preferred over b in the second tier: the SM nearest above
 * the target first (it needs the fewest features the target lacks), plain
 * before `f` before `a`, then highest ISA version, then file order. */
static int prefer_newer(const ptx_entry *a, uint32_t ia, const ptx_entry *b, uint32_t ib) {
  if (a->arch != b->arch) return a->arch < b->arch ? -1 : 1;
  int sa = suffix_rank(a->arch_suffix), sb = suffix_rank(b->arch_suffix);
  if (sa != sb) return sa < sb ? -1 : 1;
  if (a->version_major != b->version_major) return a->version_major > b->version_major ? -1 : 1;
  if (a->version_minor != b->version_minor) return a->version_minor > b->version_minor ? -1 : 1;
  return ia < ib ? -1 : ia > ib;
}

static uint32_t rank_tier(const ptx_container *c, const ptx_target *t, bool second,
                          uint32_t *order, uint32_t cap) {
  /* Insertion sort into order[0..cap): containers hold a handful of PTX
   * entries (at most 10 in CUDA 13's libraries). */
  uint32_t n = 0;
  for (uint32_t i = 0; i < c->nentries; i++) {
    const ptx_entry *e = &c->entries[i];
    if (second ? !newer(e, t) : !usable(e, t)) continue;
    if (order && cap) {
      uint32_t k = n < cap ? n : cap;
      /* Find where i goes among the kept ones; drop it if it falls past cap. */
      uint32_t pos = k;
      while (pos > 0 && (second ? prefer_newer : prefer)(e, i, &c->entries[order[pos - 1]],
                                                          order[pos - 1]) < 0)
        pos--;
      if (pos < cap) {
        uint32_t last = k < cap ? k : cap - 1;
        for (uint32_t j = last; j > pos; j--) order[j] = order[j - 1];
        order[pos] = i;
      }
    }
    n++;
  }
  return n;
}

uint32_t ptx_rank(const ptx_container *c, const ptx_target *t, uint32_t *order, uint32_t cap) {
  uint32_t n = rank_tier(c, t, false, order, cap);
  if (!t->any_ptx) return n;
  uint32_t k = n < cap ? n : cap;
  return n + rank_tier(c, t, true, order ? order + k : NULL, cap - k);
}

int ptx_select(const ptx_container *c, const ptx_target *t) {
  uint32_t best;
  return ptx_rank(c, t, &best, 1) ? (int)best : -1;
}
