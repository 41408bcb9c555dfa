/* emu/emu_heap.h: device memory in one shared mapping (emu_heap.c): a
 * memfd, so that another process can map any allocation (CUDA IPC). */
#ifndef PW_EMU_HEAP_H
#define PW_EMU_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct emu_heap emu_heap;

/* A heap of `bytes` of address space (reserved, not committed); NULL where
 * the system refuses a memfd or the mapping. */
emu_heap *emu_heap_create(uint64_t bytes);
void emu_heap_destroy(emu_heap *h);
/* 256-byte aligned and zeroed; NULL when no free block is large enough. */
void *emu_heap_alloc(emu_heap *h, size_t bytes);
/* False if p is not an allocation of h.  reuse false (memcheck): the
 * memory goes back to the kernel but its addresses are never reused. */
bool emu_heap_free(emu_heap *h, void *p, bool reuse);
bool emu_heap_owns(const emu_heap *h, const void *p);
/* The memfd and p's offset in it. */
bool emu_heap_share(const emu_heap *h, const void *p, int *fd, uint64_t *offset);

#endif
