/* runtime/rt_forward.h: ptxwave's private export table for its forwarding
 * layer (forward/, docs/runtime.md "The forwarding layer").
 *
 * The forwarding layer sits in front of NVIDIA's libraries and takes over a
 * call when the library chose a kernel it ships as SASS only.  Only the
 * driver knows that a launch was refused for that reason, so it keeps, per
 * host thread, counts of what the thread asked of the device, and hands
 * them out through cuGetExportTable with the UUID below (the way NVIDIA's
 * own private interfaces are reached: no symbol outside the driver API's
 * names leaves libcuda.so.1).  A driver without the table (NVIDIA's)
 * answers CUDA_ERROR_INVALID_VALUE, and the layer then forwards every call
 * untouched.
 *
 * The table: slot 0 its size in bytes; slot 1 counts(out, size): copies the
 * calling thread's counts into *out (size: sizeof(rt_fwd_counts), checked);
 * slot 2 vlog(level, fmt, ap): a line in the driver's log (PTXWAVE_LOG,
 * PTXWAVE_LOG_FILE) at level 0 error .. 4 trace; slot 3 covered(on): the
 * calling thread is (1) or is no longer (0) inside a call the layer may
 * take over, so a SASS-only refusal there is logged at info, not error (the
 * layer says at warn when it does not take over).
 */
#ifndef PW_RT_FORWARD_H
#define PW_RT_FORWARD_H

#include <cuda.h>
#include <stdarg.h>
#include <stdint.h>

/* {d0821a48-98c3-4c34-b23e-99cd05741268} */
#define RT_FORWARD_UUID                                                                   \
  {0xd0, 0x82, 0x1a, 0x48, 0x98, 0xc3, 0x4c, 0x34, 0xb2, 0x3e, 0x99, 0xcd, 0x05, 0x74, 0x12, \
   0x68}

/* Monotonic counts of the calling thread: the layer reads them before and
 * after a call into a library and compares. */
typedef struct rt_fwd_counts {
  uint64_t launches;       /* kernel launches that ran or were captured */
  uint64_t sass_refused;   /* launches refused: the kernel is SASS only */
  uint64_t mem_ops;        /* memsets and copies (1-D and 2-D) that ran or were captured */
  char last_refused[256];  /* the last refused kernel's name, truncated */
} rt_fwd_counts;

enum { rt_fwd_slot_size, rt_fwd_slot_counts, rt_fwd_slot_vlog, rt_fwd_slot_covered, rt_fwd_slots };

typedef CUresult (*rt_fwd_counts_fn)(rt_fwd_counts *out, size_t size);
typedef void (*rt_fwd_vlog_fn)(int level, const char *fmt, va_list ap);
typedef void (*rt_fwd_covered_fn)(int on);

#endif
