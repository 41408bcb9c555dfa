/* emu/emu_heap.c: device memory in one shared mapping (docs/emulator.md
 * "Memory").
 *
 * Why: CUDA's IPC (cuIpcGetMemHandle) hands another process a handle to
 * any cudaMalloc'ed buffer, and the emulator's device memory is host
 * memory.  For a second process to map a buffer, its bytes must live in a
 * file both can map: a memfd (memfd_create(2)), mapped MAP_SHARED.  One
 * memfd with one mapping serves every allocation, so an allocation costs
 * what malloc costs (no system call, no file descriptor per buffer: a
 * program with thousands of buffers would run out of descriptors), and
 * the handle is (process, descriptor, offset, size): the other process
 * opens /proc/PID/fd/FD and maps the pages holding the buffer.
 *
 * The mapping is reserved once at its full size (sparse: a memfd's pages
 * exist when touched; MAP_NORESERVE); the allocator hands out offsets in
 * it.  Algorithm: two-level segregated fit (TLSF, Masmano et al., "TLSF:
 * a New Dynamic Memory Allocator for Real-Time Systems", ECRTS 2004) over
 * 256-byte units (CUDA's allocation alignment), with the block records
 * kept apart from the memory they describe (the memory is the device's
 * and another process may map it): free blocks sit in size-class lists
 * found through two bitmaps, allocation and free are O(1), a freed block
 * merges with free neighbours (each block knows its neighbours by
 * address).  A hash table maps an allocated offset to its record.
 *
 * Memory given back: a freed block's whole pages are punched out of the
 * memfd (MADV_REMOVE) when it spans at least HEAP_PUNCH bytes, as glibc
 * unmaps large chunks, so the process's resident memory falls with
 * cudaFree.  Allocations are zeroed (as emu_malloc always did) except
 * where the memory was never handed out (above the high-water mark, still
 * the memfd's zero pages: big first allocations cost no memset).
 *
 * A fork()ed child does not inherit the mapping (MADV_DONTFORK): the
 * child's copy of the allocator would otherwise hand out memory the
 * parent is using; CUDA's device memory is not the child's either.
 *
 * Under AddressSanitizer the heap tells ASan what is allocated, as malloc
 * did for the memory it replaced: a freed block is poisoned (a host-side
 * use after free of device memory is reported), an allocation's bytes past
 * the size asked for too.  Memory never handed out stays unpoisoned
 * (poisoning the whole reservation would write gigabytes of shadow).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu_heap.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define HEAP_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define HEAP_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define HEAP_POISON(p, n) ((void)(p), (void)(n))
#define HEAP_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define UNIT_SHIFT 8                  /* 256-byte units */
#define SL_SHIFT 4                    /* 16 second-level classes per power of two */
#define SL_COUNT (1u << SL_SHIFT)
#define FL_COUNT 48
#define NONE UINT32_MAX
#define HEAP_PUNCH ((size_t)64 << 10)

typedef struct heap_block {
  uint64_t off, units;                /* in units */
  uint32_t prev_phys, next_phys;      /* neighbours by address, NONE at the ends */
  uint32_t prev_free, next_free;      /* its size class's list, when free */
  bool free;
} heap_block;

struct emu_heap {
  pthread_mutex_t lock;
  int fd;
  uint8_t *base;
  uint64_t bytes;                     /* the mapping */
  uint64_t hwm;                       /* units below this were handed out at some time */
  heap_block *blk;
  uint32_t nblk, capblk, free_rec;    /* free_rec: unused records, chained by next_free */
  uint64_t fl_map;
  uint32_t sl_map[FL_COUNT];
  uint32_t heads[FL_COUNT][SL_COUNT];
  /* allocated blocks by offset: open addressing, linear probing */
  uint64_t *hkeys;                    /* offset + 1 (0: empty) */
  uint32_t *hvals;
  uint32_t hcap, hcount;
};

static unsigned msb64(uint64_t v) { return 63u - (unsigned)__builtin_clzll(v); }

/* The size class holding blocks of u units. */
static void mapping(uint64_t u, unsigned *fl, unsigned *sl) {
  if (u < SL_COUNT) {
    *fl = 0;
    *sl = (unsigned)u;
    return;
  }
  unsigned f = msb64(u);
  *fl = f - SL_SHIFT + 1;
  *sl = (unsigned)(u >> (f - SL_SHIFT)) ^ SL_COUNT;
}

/* ---- block records ----------------------------------------------------- */
static uint32_t rec_new(emu_heap *h) {
  if (h->free_rec != NONE) {
    uint32_t i = h->free_rec;
    h->free_rec = h->blk[i].next_free;
    return i;
  }
  if (h->nblk == h->capblk) {
    uint32_t nc = h->capblk ? h->capblk * 2 : 256;
    heap_block *nb = realloc(h->blk, nc * sizeof *nb);
    if (!nb) return NONE;
    h->blk = nb;
    h->capblk = nc;
  }
  return h->nblk++;
}

static void rec_drop(emu_heap *h, uint32_t i) {
  h->blk[i].next_free = h->free_rec;
  h->free_rec = i;
}

static void list_insert(emu_heap *h, uint32_t i) {
  heap_block *b = &h->blk[i];
  unsigned fl, sl;
  mapping(b->units, &fl, &sl);
  b->free = true;
  b->prev_free = NONE;
  b->next_free = h->heads[fl][sl];
  if (b->next_free != NONE) h->blk[b->next_free].prev_free = i;
  h->heads[fl][sl] = i;
  h->fl_map |= 1ull << fl;
  h->sl_map[fl] |= 1u << sl;
}

static void list_remove(emu_heap *h, uint32_t i) {
  heap_block *b = &h->blk[i];
  unsigned fl, sl;
  mapping(b->units, &fl, &sl);
  if (b->prev_free != NONE) h->blk[b->prev_free].next_free = b->next_free;
  else h->heads[fl][sl] = b->next_free;
  if (b->next_free != NONE) h->blk[b->next_free].prev_free = b->prev_free;
  if (h->heads[fl][sl] == NONE) {
    h->sl_map[fl] &= ~(1u << sl);
    if (!h->sl_map[fl]) h->fl_map &= ~(1ull << fl);
  }
  b->free = false;
}

/* A free block of at least u units: the first non-empty class whose every
 * block is large enough (u rounded up to its class's next boundary). */
static uint32_t find_free(emu_heap *h, uint64_t u) {
  if (u >= SL_COUNT) {
    uint64_t r = u + (1ull << (msb64(u) - SL_SHIFT)) - 1;
    if (r < u) return NONE;
    u = r;
  }
  unsigned fl, sl;
  mapping(u, &fl, &sl);
  if (fl >= FL_COUNT) return NONE;
  uint32_t sm = sl < 32 ? h->sl_map[fl] & (~0u << sl) : 0;
  if (!sm) {
    uint64_t fm = fl + 1 < 64 ? h->fl_map & (~0ull << (fl + 1)) : 0;
    if (!fm) return NONE;
    fl = (unsigned)__builtin_ctzll(fm);
    sm = h->sl_map[fl];
  }
  return h->heads[fl][__builtin_ctz(sm)];
}

/* ---- the offset -> record table ----------------------------------------- */
static bool table_grow(emu_heap *h) {
  uint32_t nc = h->hcap ? h->hcap * 2 : 1024;
  uint64_t *nk = calloc(nc, sizeof *nk);
  uint32_t *nv = malloc(nc * sizeof *nv);
  if (!nk || !nv) {
    free(nk);
    free(nv);
    return false;
  }
  for (uint32_t i = 0; i < h->hcap; i++) {
    if (!h->hkeys[i]) continue;
    uint32_t j = (uint32_t)((h->hkeys[i] * 0x9e3779b97f4a7c15ull) >> 32) & (nc - 1);
    while (nk[j]) j = (j + 1) & (nc - 1);
    nk[j] = h->hkeys[i];
    nv[j] = h->hvals[i];
  }
  free(h->hkeys);
  free(h->hvals);
  h->hkeys = nk;
  h->hvals = nv;
  h->hcap = nc;
  return true;
}

static uint32_t slot_of(const emu_heap *h, uint64_t key) {
  return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (h->hcap - 1);
}

static bool table_put(emu_heap *h, uint64_t off, uint32_t rec) {
  if ((h->hcount + 1) * 4 > h->hcap * 3 && !table_grow(h)) return false;
  uint32_t j = slot_of(h, off + 1);
  while (h->hkeys[j]) j = (j + 1) & (h->hcap - 1);
  h->hkeys[j] = off + 1;
  h->hvals[j] = rec;
  h->hcount++;
  return true;
}

/* Removes off's entry; its record, or NONE. */
static uint32_t table_take(emu_heap *h, uint64_t off) {
  if (!h->hcap) return NONE;
  uint64_t key = off + 1;
  uint32_t j = slot_of(h, key);
  while (h->hkeys[j] && h->hkeys[j] != key) j = (j + 1) & (h->hcap - 1);
  if (!h->hkeys[j]) return NONE;
  uint32_t rec = h->hvals[j];
  /* backward-shift deletion: later entries of the run move up, so no
   * tombstones are needed */
  uint32_t i = j;
  for (;;) {
    h->hkeys[i] = 0;
    uint32_t k = i;
    for (;;) {
      k = (k + 1) & (h->hcap - 1);
      if (!h->hkeys[k]) {
        h->hcount--;
        return rec;
      }
      uint32_t home = slot_of(h, h->hkeys[k]);
      /* k's entry may fill the hole at i unless its home lies in (i, k] */
      bool stays = i <= k ? (home > i && home <= k) : (home > i || home <= k);
      if (!stays) break;
    }
    h->hkeys[i] = h->hkeys[k];
    h->hvals[i] = h->hvals[k];
    i = k;
  }
}

/* ---- create, allocate, free --------------------------------------------- */
emu_heap *emu_heap_create(uint64_t bytes) {
  long page = sysconf(_SC_PAGESIZE);
  bytes = (bytes + (uint64_t)page - 1) & ~((uint64_t)page - 1);
  if (!bytes) return NULL;
  int fd = memfd_create("ptxwave-device-memory", MFD_CLOEXEC);
  if (fd < 0) return NULL;
  if (ftruncate(fd, (off_t)bytes) != 0) {
    close(fd);
    return NULL;
  }
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return NULL;
  }
  madvise(p, bytes, MADV_DONTFORK);
  emu_heap *h = calloc(1, sizeof *h);
  if (!h) {
    munmap(p, bytes);
    close(fd);
    return NULL;
  }
  pthread_mutex_init(&h->lock, NULL);
  h->fd = fd;
  h->base = p;
  h->bytes = bytes;
  h->free_rec = NONE;
  memset(h->heads, 0xff, sizeof h->heads);
  uint32_t first = rec_new(h);
  if (first == NONE) {
    emu_heap_destroy(h);
    return NULL;
  }
  h->blk[first] = (heap_block){.off = 0, .units = bytes >> UNIT_SHIFT, .prev_phys = NONE, .next_phys = NONE};
  list_insert(h, first);
  return h;
}

void emu_heap_destroy(emu_heap *h) {
  if (!h) return;
  /* the addresses go back to the system: no poison may stay on them (only
   * memory handed out was ever poisoned) */
  HEAP_UNPOISON(h->base, (size_t)(h->hwm << UNIT_SHIFT));
  munmap(h->base, h->bytes);
  close(h->fd);
  free(h->blk);
  free(h->hkeys);
  free(h->hvals);
  pthread_mutex_destroy(&h->lock);
  free(h);
}

void *emu_heap_alloc(emu_heap *h, size_t bytes) {
  uint64_t u = ((uint64_t)(bytes ? bytes : 1) + (1u << UNIT_SHIFT) - 1) >> UNIT_SHIFT;
  if (!u || u > h->bytes >> UNIT_SHIFT) return NULL;
  pthread_mutex_lock(&h->lock);
  void *p = NULL;
  bool fresh = false;
  /* room in the table first, so nothing below can fail half way */
  if ((h->hcount + 1) * 4 > h->hcap * 3 && !table_grow(h)) goto out;
  uint32_t i = find_free(h, u);
  if (i == NONE) {
    /* the rounding up skips u's own class, whose blocks may still fit */
    unsigned fl, sl;
    mapping(u, &fl, &sl);
    if (fl < FL_COUNT)
      for (i = h->heads[fl][sl]; i != NONE && h->blk[i].units < u; i = h->blk[i].next_free) {}
    if (i == NONE) goto out;
  }
  if (h->blk[i].units > u) {
    /* split off the tail as a free block */
    uint32_t t = rec_new(h);
    if (t == NONE) goto out;
    list_remove(h, i);
    heap_block *b = &h->blk[i];
    h->blk[t] = (heap_block){.off = b->off + u, .units = b->units - u, .prev_phys = i,
                             .next_phys = b->next_phys};
    if (b->next_phys != NONE) h->blk[b->next_phys].prev_phys = t;
    b->next_phys = t;
    b->units = u;
    list_insert(h, t);
  } else {
    list_remove(h, i);
  }
  table_put(h, h->blk[i].off, i);
  uint64_t off = h->blk[i].off;
  fresh = off >= h->hwm;
  if (off + u > h->hwm) h->hwm = off + u;
  p = h->base + (off << UNIT_SHIFT);
out:
  pthread_mutex_unlock(&h->lock);
  if (p) {
    HEAP_UNPOISON(p, (size_t)(u << UNIT_SHIFT));
    if (!fresh) memset(p, 0, (size_t)(u << UNIT_SHIFT));
    HEAP_POISON((uint8_t *)p + (bytes ? bytes : 1), (size_t)(u << UNIT_SHIFT) - (bytes ? bytes : 1));
  }
  return p;
}

/* Whole pages of [p, p + n) back to the kernel (they read as zero after). */
static void punch(uint8_t *p, uint64_t n) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + n) & ~(page - 1);
  if (e > a) madvise((void *)a, e - a, MADV_REMOVE);
}

bool emu_heap_free(emu_heap *h, void *ptr, bool reuse) {
  if (!emu_heap_owns(h, ptr)) return false;
  uint64_t off = (uint64_t)((uint8_t *)ptr - h->base) >> UNIT_SHIFT;
  pthread_mutex_lock(&h->lock);
  uint32_t i = table_take(h, off);
  if (i == NONE) {
    pthread_mutex_unlock(&h->lock);
    return false;
  }
  uint64_t n = h->blk[i].units << UNIT_SHIFT;
  HEAP_POISON(ptr, (size_t)n);
  if (n >= HEAP_PUNCH || !reuse) punch(ptr, n);
  if (!reuse) {
    /* memcheck: the address range is never handed out again, so a stale
     * pointer keeps naming the freed allocation */
    pthread_mutex_unlock(&h->lock);
    return true;
  }
  /* merge with free neighbours */
  uint32_t nx = h->blk[i].next_phys;
  if (nx != NONE && h->blk[nx].free) {
    list_remove(h, nx);
    h->blk[i].units += h->blk[nx].units;
    h->blk[i].next_phys = h->blk[nx].next_phys;
    if (h->blk[nx].next_phys != NONE) h->blk[h->blk[nx].next_phys].prev_phys = i;
    rec_drop(h, nx);
  }
  uint32_t pv = h->blk[i].prev_phys;
  if (pv != NONE && h->blk[pv].free) {
    list_remove(h, pv);
    h->blk[pv].units += h->blk[i].units;
    h->blk[pv].next_phys = h->blk[i].next_phys;
    if (h->blk[i].next_phys != NONE) h->blk[h->blk[i].next_phys].prev_phys = pv;
    rec_drop(h, i);
    i = pv;
  }
  list_insert(h, i);
  pthread_mutex_unlock(&h->lock);
  return true;
}

bool emu_heap_owns(const emu_heap *h, const void *p) {
  return h && (const uint8_t *)p >= h->base && (const uint8_t *)p < h->base + h->bytes;
}

bool emu_heap_share(const emu_heap *h, const void *p, int *fd, uint64_t *offset) {
  if (!emu_heap_owns(h, p)) return false;
  *fd = h->fd;
  *offset = (uint64_t)((const uint8_t *)p - h->base);
  return true;
}
