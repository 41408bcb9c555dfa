/* runtime/rt_tools.c: the profiler and tools entry points.
 *
 * Benchmarks bracket their timed region with cudaProfilerStart/Stop
 * (cuProfilerStart/Stop); older tools set up counters with
 * cuProfilerInitialize.  Without a profiler attached, NVIDIA's driver
 * accepts these and does nothing (CUDA Driver API, "Profiler Control":
 * "If profiling is already enabled, then cuProfilerStart() has no
 * effect"); no profiler can attach to ptxwave, so each succeeds and does
 * nothing, where a NOT_SUPPORTED stub would stop the program before its
 * first kernel.
 */
#include "runtime/rt.h"

#include <cudaProfiler.h>

RT_EXPORT CUresult cuProfilerStart(void) {
  RT_TRACE("");
  return rt_ret(rt_check_init());
}

RT_EXPORT CUresult cuProfilerStop(void) {
  RT_TRACE("");
  return rt_ret(rt_check_init());
}

/* Deprecated since CUDA 11 and a no-op in CUDA 12's driver for every
 * output mode; the configuration file is not read. */
RT_EXPORT CUresult cuProfilerInitialize(const char *config, const char *output,
                                        CUoutput_mode mode) {
  RT_TRACE("%s, %s, %d", config ? config : "(null)", output ? output : "(null)", (int)mode);
  if (mode != CU_OUT_KEY_VALUE_PAIR && mode != CU_OUT_CSV) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(rt_check_init());
}
