/* runtime/rt_backend_hip.c: the HIP backend (placeholder seam).
 *
 * dlopen of libamdhip64.so.7/.6/.5 (so the shim loads on machines without
 * ROCm); with no library, or hipInit/hipGetDeviceCount reporting no device
 * (101 / 100, in under a millisecond), it answers NULL and cuInit falls back
 * to the emulator.  Code generation (codegen/) is not merged yet, so even
 * with a device this backend declines: PTX cannot become a code object.
 */
#include <dlfcn.h>

#include "runtime/rt.h"

rt_backend *rt_backend_hip_create(void) {
  static const char *const libs[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
                                     "libamdhip64.so"};
  void *h = NULL;
  for (unsigned i = 0; i < sizeof libs / sizeof libs[0] && !h; i++)
    h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    RT_LOG(rt_info, "hip: no libamdhip64 (%s)", dlerror());
    return NULL;
  }
  int (*hip_init)(unsigned) = (int (*)(unsigned))dlsym(h, "hipInit");
  int (*hip_count)(int *) = (int (*)(int *))dlsym(h, "hipGetDeviceCount");
  int n = 0;
  if (!hip_init || !hip_count || hip_init(0) != 0 || hip_count(&n) != 0 || n == 0) {
    RT_LOG(rt_info, "hip: no AMD GPU answers");
    dlclose(h);
    return NULL;
  }
  RT_LOG(rt_warn, "hip: %d AMD GPU(s), but no code generator is built in: using the emulator", n);
  dlclose(h);
  return NULL;
}
