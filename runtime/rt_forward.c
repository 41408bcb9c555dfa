/* runtime/rt_forward.c: the driver's side of the forwarding layer's private
 * table (rt_forward.h): per-thread counts of launches, refusals of SASS-only
 * kernels and memory operations, bumped by rt_module.c and rt_memory.c,
 * and whether the thread is inside a call the layer covers. */
#include <stdio.h>
#include <string.h>

#include "runtime/rt.h"
#include "runtime/rt_forward.h"

static __thread rt_fwd_counts counts;
static __thread bool covered;

void rt_fwd_launched(void) { counts.launches++; }
void rt_fwd_mem_op(void) { counts.mem_ops++; }
bool rt_fwd_covered(void) { return covered; }
void rt_fwd_refused(const char *kernel) {
  counts.sass_refused++;
  snprintf(counts.last_refused, sizeof counts.last_refused, "%s", kernel);
}

static CUresult fwd_counts(rt_fwd_counts *out, size_t size) {
  if (!out || size != sizeof *out) return CUDA_ERROR_INVALID_VALUE;
  *out = counts;
  return CUDA_SUCCESS;
}

static void fwd_vlog(int level, const char *fmt, va_list ap) {
  if (level < rt_error || level > rt_trace || level > rt_log_level) return;
  char buf[1536];
  vsnprintf(buf, sizeof buf, fmt, ap);
  rt_log((rt_level)level, "%s", buf);
}

static void fwd_covered(int on) { covered = on != 0; }

void *rt_fwd_table[rt_fwd_slots] = {
    [rt_fwd_slot_size] = (void *)(uintptr_t)sizeof rt_fwd_table,
    [rt_fwd_slot_counts] = (void *)fwd_counts,
    [rt_fwd_slot_vlog] = (void *)fwd_vlog,
    [rt_fwd_slot_covered] = (void *)fwd_covered,
};
