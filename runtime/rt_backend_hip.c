/* runtime/rt_backend_hip.c: the HIP backend.
 *
 * libamdhip64 is dlopen'ed (.so.7, .so.6, .so.5; PTXWAVE_HIP_LIBRARY names
 * another file, e.g. the tests' recording stand-in), so the shim loads on
 * machines without ROCm.  With no library, or hipInit / hipGetDeviceCount
 * reporting no device (101 / 100, in under a millisecond), it answers NULL
 * and cuInit falls back to the emulator.
 *
 * The mapping is one to one: device memory is hipMalloc'ed and a device
 * pointer is HIP's; copies keep their direction (hipMemcpyKind); streams
 * are hipStreams; a module is hipModuleLoadData of the code object compiled
 * from the PTX, and a launch is hipModuleLaunchKernel with the parameter
 * buffer passed as HIP_LAUNCH_PARAM_BUFFER_POINTER: the kernel ABI keeps
 * CUDA's .param layout as the kernarg layout (design.md), so the bytes
 * CUDA's caller packed are the kernarg segment.
 *
 * The code object: PTX -> IR (ptx/) -> lower/ -> codegen/ (.hsaco for the
 * device's gfx arch), looked up first in the bundles that `ptxwave convert`
 * writes next to binaries (rt_bundle.h), then in the kernel cache
 * (rt_cache.h), both under rt_code_object_key (PTX, arch, compiler version,
 * options).  The compile step (hip_compile) is cg_compile_ptx, the entry
 * `ptxwave compile` uses: parse, lower/ for the arch, codegen/ to a linked
 * .hsaco.  PTXWAVE_HIP_PASSTHROUGH=1 hands the PTX text itself to
 * hipModuleLoadData instead (cached under another compiler key): the
 * recording stand-in's tests of the launch paths use it where the code
 * object's content does not matter (docs/runtime.md).
 *
 * Device printf and assert (docs/runtime.md, "Device printf"): a code
 * object whose kernels print has the variable __ptxwave_printf
 * (lower/lower_printf.c); at load the backend points it at the context's
 * printf buffer (allocated on first need), and every synchronising call
 * (stream and device synchronise, synchronous copies, module unload)
 * drains the buffer to stdout (rt_printf.c); an assert record makes that
 * call return CUDA_ERROR_ASSERT.
 * The device: its limits from hipDeviceGetAttribute (attribute numbers of
 * hip_runtime_api.h's CUDA-compatible block, where new ones are appended;
 * hipDeviceProp_t's layout changed instead: R0000 in HIP 5, R0600 since),
 * its gfx arch from the gcnArchName of hipGetDeviceProperties
 * ("gfx942:sramecc+:xnack-"), found in the struct by its content rather
 * than at a version's offset; PTXWAVE_HIP_ARCH overrides it.  Events are HIP's, one to one
 * (hipEventCreateWithFlags, Record, Query, Synchronize, ElapsedTime,
 * hipStreamWaitEvent): a record does not wait for its stream.
 *
 * Just-in-time compiles run in a helper process by default
 * (PTXWAVE_JIT=subprocess|inprocess, docs/runtime.md "JIT"): `ptxwave
 * jit IN.ptx OUT.hsaco ARCH`, found next to libcuda.so.1, so that an LLVM
 * fatal error (which ends the process that meets it) fails the module
 * load with CUDA_ERROR_INVALID_PTX and the helper's message instead of
 * ending the application.
 *
 * HIP's declarations are written here from its documented C API (no HIP
 * headers are needed to build): hipError_t is an int, handles are pointers.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "ptx/ptx_parse.h"
#include "pw_config.h"
#include "runtime/rt.h"
#include "runtime/rt_bundle.h"
#include "runtime/rt_cache.h"
#include "runtime/rt_link.h"
#include "runtime/rt_printf.h"
#include "util/pw_printf.h"
#include "util/pw_file.h"

typedef int hip_err;
typedef void *hip_ptr;
enum { hip_h2h = 0, hip_h2d = 1, hip_d2h = 2, hip_d2d = 3 };
#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define HIP_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
#define HIP_LAUNCH_PARAM_END ((void *)0x03)

/* X(name, return, params) of every HIP entry point used */
#define HIP_FUNCS(X)                                                                        \
  X(hipInit, (unsigned))                                                                    \
  X(hipGetDeviceCount, (int *))                                                             \
  X(hipSetDevice, (int))                                                                    \
  X(hipDeviceGetName, (char *, int, int))                                                   \
  X(hipDeviceTotalMem, (size_t *, int))                                                     \
  X(hipMemGetInfo, (size_t *, size_t *))                                                    \
  X(hipMalloc, (void **, size_t))                                                           \
  X(hipFree, (void *))                                                                      \
  X(hipHostRegister, (void *, size_t, unsigned))                                            \
  X(hipHostUnregister, (void *))                                                            \
  X(hipMemGetAddressRange, (hip_ptr *, size_t *, hip_ptr))                                  \
  X(hipMemcpy, (void *, const void *, size_t, int))                                         \
  X(hipMemcpyAsync, (void *, const void *, size_t, int, void *))                            \
  X(hipMemsetD8, (hip_ptr, unsigned char, size_t))                                          \
  X(hipMemsetD16, (hip_ptr, unsigned short, size_t))                                        \
  X(hipMemsetD32, (hip_ptr, int, size_t))                                                   \
  X(hipMemsetD8Async, (hip_ptr, unsigned char, size_t, void *))                             \
  X(hipMemsetD16Async, (hip_ptr, unsigned short, size_t, void *))                           \
  X(hipMemsetD32Async, (hip_ptr, int, size_t, void *))                                      \
  X(hipModuleLoadData, (void **, const void *))                                             \
  X(hipModuleUnload, (void *))                                                              \
  X(hipModuleGetFunction, (void **, void *, const char *))                                  \
  X(hipModuleGetGlobal, (hip_ptr *, size_t *, void *, const char *))                        \
  X(hipModuleLaunchKernel, (void *, unsigned, unsigned, unsigned, unsigned, unsigned,       \
                            unsigned, unsigned, void *, void **, void **))                  \
  X(hipStreamCreate, (void **))                                                             \
  X(hipStreamDestroy, (void *))                                                             \
  X(hipStreamSynchronize, (void *))                                                         \
  X(hipDeviceSynchronize, (void))                                                           \
  X(hipDeviceGetAttribute, (int *, int, int))                                               \
  X(hipEventCreateWithFlags, (void **, unsigned))                                           \
  X(hipEventDestroy, (void *))                                                              \
  X(hipEventRecord, (void *, void *))                                                       \
  X(hipEventQuery, (void *))                                                                \
  X(hipEventSynchronize, (void *))                                                          \
  X(hipEventElapsedTime, (float *, void *, void *))                                         \
  X(hipStreamWaitEvent, (void *, void *, unsigned))

/* Optional entry points, X(name, params): managed memory, peers, IPC and
 * virtual memory (rt_umem.c).  A family whose functions the library lacks
 * answers CUDA_ERROR_NOT_SUPPORTED; the rest of the backend works.  HIP's
 * types here are CUDA's in layout (hipIpcMemHandle_t and
 * hipIpcEventHandle_t: 64 bytes; hipMemLocation, hipMemAccessDesc: two
 * ints and an int; hipMemAllocationProp: type, handle types, location,
 * a pointer, flags, as CUmemAllocationProp), and the enumerations used
 * have CUDA's values (hipMemoryAdvise 1-6, hipDeviceP2PAttr 0-3 as
 * CUdevice_P2PAttribute 1-4 minus one; hipMemAccessFlags 0, 1, 3). */
#define HIP_OPT_FUNCS(X)                                                                    \
  X(hipMallocManaged, (void **, size_t, unsigned))                                          \
  X(hipMemPrefetchAsync, (const void *, size_t, int, void *))                               \
  X(hipMemAdvise, (const void *, size_t, int, int))                                         \
  X(hipDeviceCanAccessPeer, (int *, int, int))                                              \
  X(hipDeviceEnablePeerAccess, (int, unsigned))                                             \
  X(hipDeviceDisablePeerAccess, (int))                                                      \
  X(hipDeviceGetP2PAttribute, (int *, int, int, int))                                       \
  X(hipMemcpyPeer, (void *, int, const void *, int, size_t))                                \
  X(hipMemcpyPeerAsync, (void *, int, const void *, int, size_t, void *))                   \
  X(hipPointerGetAttribute, (void *, int, hip_ptr))                                         \
  X(hipIpcGetMemHandle, (void *, void *))                                                   \
  X(hipIpcOpenMemHandle, (void **, CUipcMemHandle, unsigned))                               \
  X(hipIpcCloseMemHandle, (void *))                                                         \
  X(hipIpcGetEventHandle, (void *, void *))                                                 \
  X(hipIpcOpenEventHandle, (void **, CUipcEventHandle))                                     \
  X(hipMemAddressReserve, (void **, size_t, size_t, void *, unsigned long long))            \
  X(hipMemAddressFree, (void *, size_t))                                                    \
  X(hipMemCreate, (void **, size_t, const CUmemAllocationProp *, unsigned long long))       \
  X(hipMemRelease, (void *))                                                                \
  X(hipMemMap, (void *, size_t, size_t, void *, unsigned long long))                        \
  X(hipMemUnmap, (void *, size_t))                                                          \
  X(hipMemSetAccess, (void *, size_t, const CUmemAccessDesc *, size_t))                     \
  X(hipMemExportToShareableHandle, (void *, void *, int, unsigned long long))               \
  X(hipMemImportFromShareableHandle, (void **, void *, int))                                \
  X(hipMemGetAllocationGranularity, (size_t *, const CUmemAllocationProp *, int))

/* The numeric limits, X(field of rt_device_props, hipDeviceAttribute_t):
 * the values of hip_runtime_api.h's CUDA-compatible block (ROCm 6/7
 * headers; attributes are appended there; not yet checked on a real HIP,
 * docs/runtime.md "Not done yet"). */
#define HIP_ATTRS(X)                                                                        \
  X(clock_khz, 5)              /* hipDeviceAttributeClockRate (kHz) */                      \
  X(l2_bytes, 19)              /* L2CacheSize */                                            \
  X(max_blocks_per_sm, 25)     /* MaxBlocksPerMultiProcessor */                             \
  X(max_block[0], 26) X(max_block[1], 27) X(max_block[2], 28) /* MaxBlockDimX/Y/Z */        \
  X(max_grid[0], 29) X(max_grid[1], 30) X(max_grid[2], 31)    /* MaxGridDimX/Y/Z */         \
  X(max_threads_per_block, 56) /* MaxThreadsPerBlock */                                     \
  X(max_threads_per_sm, 57)    /* MaxThreadsPerMultiProcessor */                            \
  X(mem_bus_width, 59)         /* MemoryBusWidth (bits) */                                  \
  X(mem_clock_khz, 60)         /* MemoryClockRate (kHz) */                                  \
  X(sm_count, 63)              /* MultiprocessorCount: compute units */                     \
  X(pci_bus, 67) X(pci_device, 68) X(pci_domain, 69) /* PciBusId, PciDeviceId, PciDomainID */ \
  X(regs_per_block, 71)        /* MaxRegistersPerBlock */                                   \
  X(regs_per_sm, 72)           /* MaxRegistersPerMultiprocessor */                          \
  X(shared_per_block_optin, 74) /* MaxSharedMemoryPerBlock: the LDS a workgroup may have */ \
  X(shared_per_sm, 76)         /* SharedMemPerMultiprocessor */                             \
  X(wave_size, 87)             /* WarpSize: 64 (CDNA) or 32 (RDNA) */

typedef struct hip_be {
  rt_backend b;
  void *lib;
#define X(name, params) hip_err (*name) params;
  HIP_FUNCS(X)
  HIP_OPT_FUNCS(X)
#undef X
  /* optional: hipGetDeviceProperties(R0600) for gcnArchName */
  hip_err (*get_props)(void *, int);
  int ndev;
  rt_device_props props[16];  /* read once at creation */
  rt_cache *cache;
  uint64_t compiled, cache_hits, bundle_hits;
  uint64_t printf_buf;        /* the device printf buffer (0: none yet) */
  uint32_t printf_cap;
} hip_be;

struct rt_bmodule {
  void *hmod;
  struct kmeta *meta;         /* a hit: the layouts from the code object's metadata */
  unsigned nmeta;
  ir_module *ir;              /* else for parameter layouts (NULL after a hit, */
                              /* until the first kernel lookup) */
  char *ptx;                  /* the PTX, kept to parse then (no readable metadata) */
  size_t ptx_len;
  char name[128];
  rt_param_layout *layouts;
  unsigned nlayouts;
};

static hip_be *H(rt_backend *b) { return (hip_be *)b; }

static CUresult from_hip(rt_backend *b, const char *what, hip_err e) {
  if (e == 0) return CUDA_SUCCESS;
  snprintf(b->error, sizeof b->error, "%s failed: hipError_t %d", what, e);
  switch (e) {
  case 1: return CUDA_ERROR_INVALID_VALUE;
  case 2: return CUDA_ERROR_OUT_OF_MEMORY;
  case 100: return CUDA_ERROR_NO_DEVICE;
  case 101: return CUDA_ERROR_INVALID_DEVICE;
  case 200: return CUDA_ERROR_INVALID_IMAGE;
  case 400: return CUDA_ERROR_INVALID_HANDLE;
  case 500: return CUDA_ERROR_NOT_FOUND;
  case 600: return CUDA_ERROR_NOT_READY;
  case 700: return CUDA_ERROR_ILLEGAL_ADDRESS;
  default: return CUDA_ERROR_UNKNOWN;
  }
}

static int device_count(rt_backend *b) { return H(b)->ndev; }

/* The gfx arch in hipGetDeviceProperties' struct: gcnArchName ("gfx942",
 * "gfx90a:sramecc+:xnack-") is a char[256] whose offset differs between
 * HIP 5 (hipDeviceProp_t R0000) and 6/7 (R0600), so it is found by content:
 * the first NUL-preceded string past the name (char[256] at offset 0 in
 * every layout) that reads "gfx" and hex digits, then target features
 * (':' '+' '-' and letters) up to a NUL.  buf is larger than any layout. */
static bool arch_from_props(hip_be *h, int dev, char *arch, size_t cap) {
  enum { BUF = 16384 };
  if (!h->get_props) return false;
  unsigned char *buf = calloc(1, BUF);
  if (!buf) return false;
  bool found = false;
  if (h->get_props(buf, dev) == 0) {
    for (size_t o = 256; o + 8 < BUF && !found; o++) {
      if (buf[o - 1] || memcmp(buf + o, "gfx", 3)) continue;
      size_t n = 3;
      while (o + n < BUF && n < 255 && buf[o + n] &&
             (strchr("0123456789abcdef", buf[o + n]) || (n > 3 && strchr(":+-_", buf[o + n])) ||
              (n > 3 && buf[o + n] >= 'a' && buf[o + n] <= 'z')))
        n++;
      if (n > 3 && o + n < BUF && !buf[o + n]) {
        snprintf(arch, cap, "%.*s", (int)n, (const char *)buf + o);
        found = true;
      }
    }
  }
  free(buf);
  return found;
}

/* What CUDA reports about device dev, from HIP: the name, memory, limits
 * (HIP_ATTRS) and gfx arch.  Where HIP does not answer: the device's row of
 * the target table (ir/ir_targets.def: wave size, LDS), and for the
 * product's numbers (CUs, clocks, caches) an MI300X's. */
static void read_props(hip_be *h, int dev, rt_device_props *p) {
  char full[256] = "";
  const char *env = getenv("PTXWAVE_HIP_ARCH");
  if (env && *env) snprintf(full, sizeof full, "%s", env);
  else if (!arch_from_props(h, dev, full, sizeof full)) snprintf(full, sizeof full, "gfx942");
  /* the code object target is the processor; features (sramecc, xnack)
   * are left "any" by codegen, which loads in either mode */
  char arch[64];
  snprintf(arch, sizeof arch, "%.*s", (int)strcspn(full, ":"), full);
  const ir_target *t = ir_target_find(arch);
  if (!t) t = ir_target_find("gfx942");   /* a processor the table lacks: compiles fail, not this */
  size_t total = 0;
  h->hipDeviceTotalMem(&total, dev);
  *p = (rt_device_props){.sm_count = 304, .max_threads_per_block = 1024,
                         .max_block = {1024, 1024, 1024}, .max_grid = {0x7fffffff, 65535, 65535},
                         .shared_per_block_optin = (int)t->lds_bytes, .shared_per_sm = (int)t->lds_bytes,
                         .regs_per_block = 65536, .regs_per_sm = 65536,
                         .max_threads_per_sm = 2048, .max_blocks_per_sm = 32,
                         .clock_khz = 2100000, .mem_clock_khz = 1300000, .mem_bus_width = 8192,
                         .l2_bytes = 4 << 20, .pci_device = dev, .wave_size = t->wave_size,
                         .total_mem = total};
  snprintf(p->arch, sizeof p->arch, "%s", arch);
  if (h->hipDeviceGetName(p->name, (int)sizeof p->name, dev) != 0)
    snprintf(p->name, sizeof p->name, "AMD GPU %d", dev);
  int v;
#define X(field, attr) \
  if (h->hipDeviceGetAttribute(&v, attr, dev) == 0 && v > 0) p->field = v;
  HIP_ATTRS(X)
#undef X
  if (h->hipDeviceGetAttribute(&v, 16 /* Integrated */, dev) == 0) p->integrated = v != 0;
  /* managed memory and its relatives, as HIP reports them (ManagedMemory
   * 24, ConcurrentManagedAccess 9, DirectManagedMemAccessFromHost 13,
   * PageableMemoryAccess 65, HostNativeAtomicSupported 15,
   * VirtualMemoryManagementSupported 89) */
  if (h->hipMallocManaged && h->hipDeviceGetAttribute(&v, 24, dev) == 0) p->managed = v != 0;
  if (h->hipDeviceGetAttribute(&v, 9, dev) == 0) p->concurrent_managed = v != 0;
  if (h->hipDeviceGetAttribute(&v, 13, dev) == 0) p->direct_managed_host = v != 0;
  if (h->hipDeviceGetAttribute(&v, 65, dev) == 0) p->pageable_access = v != 0;
  if (h->hipDeviceGetAttribute(&v, 15, dev) == 0) p->host_native_atomics = v != 0;
  if (h->hipMemCreate && h->hipDeviceGetAttribute(&v, 89, dev) == 0) p->vmm = v != 0;
  /* CUDA's static __shared__ limit is 48 KiB whatever the device; more is
   * opt-in (cuFuncSetAttribute), up to the LDS a workgroup may have. */
  int optin = p->shared_per_block_optin;
  p->shared_per_block = optin < 48 * 1024 ? optin : 48 * 1024;
  RT_LOG(rt_info, "hip: device %d: %s, %s%s (%s), %d compute units, wave %d, LDS %d KiB", dev,
         p->name, p->arch, env && *env ? " (PTXWAVE_HIP_ARCH)" : "", full, p->sm_count,
         p->wave_size, p->shared_per_block_optin / 1024);
}

static CUresult device_props(rt_backend *b, int dev, rt_device_props *p) {
  hip_be *h = H(b);
  if (dev < 0 || dev >= h->ndev) return CUDA_ERROR_INVALID_DEVICE;
  *p = h->props[dev];
  return CUDA_SUCCESS;
}

static CUresult mem_info(rt_backend *b, int dev, size_t *f, size_t *t) {
  return from_hip(b, "hipMemGetInfo", H(b)->hipMemGetInfo(f, t));
}
static CUresult mem_alloc(rt_backend *b, size_t n, uint64_t *p) {
  void *q = NULL;
  CUresult r = from_hip(b, "hipMalloc", H(b)->hipMalloc(&q, n));
  *p = (uint64_t)(uintptr_t)q;
  return r;
}
static CUresult mem_free(rt_backend *b, uint64_t p) {
  return from_hip(b, "hipFree", H(b)->hipFree((void *)(uintptr_t)p));
}
static CUresult host_register(rt_backend *b, void *p, size_t n) {
  return from_hip(b, "hipHostRegister", H(b)->hipHostRegister(p, n, 0));
}
static CUresult host_unregister(rt_backend *b, void *p) {
  return from_hip(b, "hipHostUnregister", H(b)->hipHostUnregister(p));
}
static CUresult mem_range(rt_backend *b, uint64_t p, uint64_t *base, size_t *n) {
  hip_ptr bp = NULL;
  if (H(b)->hipMemGetAddressRange(&bp, n, (hip_ptr)(uintptr_t)p) != 0) return CUDA_ERROR_NOT_FOUND;
  *base = (uint64_t)(uintptr_t)bp;
  return CUDA_SUCCESS;
}

/* ---- device printf (rt_printf.h) ---------------------------------------- */
static bool printf_read(void *ctx, uint64_t addr, void *dst, size_t n) {
  hip_be *h = ctx;
  return h->hipMemcpy(dst, (const void *)(uintptr_t)addr, n, hip_d2h) == 0;
}
static bool printf_write(void *ctx, uint64_t addr, const void *src, size_t n) {
  hip_be *h = ctx;
  return h->hipMemcpy((void *)(uintptr_t)addr, src, n, hip_h2d) == 0;
}

/* Points the module's __ptxwave_printf at the buffer, if it has one. */
static void printf_attach(rt_backend *b, void *hmod) {
  hip_be *h = H(b);
  hip_ptr var = NULL;
  size_t n = 0;
  if (h->hipModuleGetGlobal(&var, &n, hmod, PW_PRINTF_VAR) != 0 || n < PW_PRINTF_VAR_BYTES) return;
  if (!h->printf_buf) {
    uint32_t cap = rt_printf_capacity();
    void *p = NULL;
    if (h->hipMalloc(&p, PW_PRINTF_BUF_HEADER + (size_t)cap) != 0 || !p) {
      RT_LOG(rt_warn, "hip: no memory for the device printf buffer (%u bytes): printf output is dropped", cap);
      return;
    }
    h->hipMemsetD8(p, 0, PW_PRINTF_BUF_HEADER + (size_t)cap);
    h->printf_buf = (uint64_t)(uintptr_t)p;
    h->printf_cap = cap;
  }
  uint8_t v[PW_PRINTF_VAR_BYTES] = {0};
  memcpy(v + PW_PRINTF_VAR_BUFFER, &h->printf_buf, 8);
  memcpy(v + PW_PRINTF_VAR_CAPACITY, &h->printf_cap, 4);
  h->hipMemcpy(var, v, sizeof v, hip_h2d);
}

/* After a synchronising call that returned r: prints what kernels left in
 * the buffer; an assert record turns r into CUDA_ERROR_ASSERT. */
static CUresult printf_drain(rt_backend *b, CUresult r) {
  hip_be *h = H(b);
  if (!h->printf_buf) return r;
  rt_printf_result res;
  if (!rt_printf_drain(&(rt_printf_mem){printf_read, printf_write, h}, h->printf_buf, h->printf_cap, stdout,
                       stderr, &res))
    RT_LOG(rt_warn, "hip: the device printf buffer cannot be read back");
  if (res.asserts) {
    snprintf(b->error, sizeof b->error, "device assertion failed: %.900s", res.first_assert);
    return CUDA_ERROR_ASSERT;
  }
  return r;
}

static CUresult do_memcpy(rt_backend *b, void *dst, CUmemorytype dk, const void *src,
                          CUmemorytype sk, size_t n, rt_bstream s, bool async) {
  int kind = dk == CU_MEMORYTYPE_DEVICE ? (sk == CU_MEMORYTYPE_DEVICE ? hip_d2d : hip_h2d)
                                        : (sk == CU_MEMORYTYPE_DEVICE ? hip_d2h : hip_h2h);
  if (async) return from_hip(b, "hipMemcpyAsync", H(b)->hipMemcpyAsync(dst, src, n, kind, s));
  return printf_drain(b, from_hip(b, "hipMemcpy", H(b)->hipMemcpy(dst, src, n, kind)));
}

static CUresult do_memset(rt_backend *b, uint64_t d, uint32_t v, unsigned elem, size_t count,
                          rt_bstream s, bool async) {
  hip_be *h = H(b);
  hip_ptr p = (hip_ptr)(uintptr_t)d;
  hip_err e;
  if (elem == 1) e = async ? h->hipMemsetD8Async(p, (unsigned char)v, count, s) : h->hipMemsetD8(p, (unsigned char)v, count);
  else if (elem == 2) e = async ? h->hipMemsetD16Async(p, (unsigned short)v, count, s) : h->hipMemsetD16(p, (unsigned short)v, count);
  else e = async ? h->hipMemsetD32Async(p, (int)v, count, s) : h->hipMemsetD32(p, (int)v, count);
  return from_hip(b, "hipMemset", e);
}

static bool hip_passthrough(void) {
  const char *pt = getenv("PTXWAVE_HIP_PASSTHROUGH");
  return pt && *pt == '1';
}

/* ---- just-in-time compiles ------------------------------------------------ */

/* PTXWAVE_JIT: subprocess (the default) or inprocess.  Why a helper by
 * default: LLVM reports some failures (instruction selection, "Cannot
 * select") by ending the process, which here is the user's application;
 * in a helper the same failure fails one module load.  The cost is a
 * process start per compile (a few ms next to compiles of 0.1-1 s), and
 * nothing on a cache or bundle hit. */
static bool jit_subprocess(void) {
  const char *m = getenv("PTXWAVE_JIT");
  return !(m && !strcmp(m, "inprocess"));
}

/* The helper: PTXWAVE_JIT_HELPER, else `ptxwave` where it sits relative to
 * this libcuda.so.1 (the build tree's tools/, an install's bin/). */
static bool find_helper(char *out, size_t cap) {
  const char *env = getenv("PTXWAVE_JIT_HELPER");
  if (env && *env) {
    snprintf(out, cap, "%s", env);
    return access(out, X_OK) == 0;
  }
  Dl_info di;
  if (!dladdr((void *)find_helper, &di) || !di.dli_fname) return false;
  char dir[PATH_MAX];
  if (!realpath(di.dli_fname, dir)) return false;
  char *slash = strrchr(dir, '/');
  if (!slash) return false;
  *slash = 0;
  static const char *const rel[] = {"ptxwave", "../tools/ptxwave", "../bin/ptxwave",
                                    "../../bin/ptxwave"};
  for (unsigned i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    snprintf(out, cap, "%s/%s", dir, rel[i]);
    if (access(out, X_OK) == 0) return true;
  }
  return false;
}

static bool write_whole(const char *path, const void *data, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const char *p = data;
  while (len) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    p += w;
    len -= (size_t)w;
  }
  return close(fd) == 0 && len == 0;
}

extern char **environ;

/* `HELPER jit IN OUT ARCH` in a private temporary directory; its output
 * (stdout and stderr) becomes the message.  A helper killed by a signal
 * fails this module only. */
static CUresult compile_in_helper(rt_backend *b, const char *helper, const char *name,
                                  const char *ptx, size_t len, const char *arch, void **obj,
                                  size_t *obj_len) {
  const char *tmp = getenv("TMPDIR");
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s/ptxwave-jit.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    snprintf(b->error, sizeof b->error, "JIT: cannot make a temporary directory in %s: %s",
             tmp && *tmp ? tmp : "/tmp", strerror(errno));
    return CUDA_ERROR_OPERATING_SYSTEM;
  }
  char in[PATH_MAX + 16], out[PATH_MAX + 16], log[PATH_MAX + 16];
  snprintf(in, sizeof in, "%s/in.ptx", dir);
  snprintf(out, sizeof out, "%s/out.hsaco", dir);
  snprintf(log, sizeof log, "%s/log.txt", dir);
  CUresult r = CUDA_SUCCESS;
  pid_t pid = -1;
  if (!write_whole(in, ptx, len)) {
    snprintf(b->error, sizeof b->error, "JIT: cannot write %.400s", in);
    r = CUDA_ERROR_OPERATING_SYSTEM;
  } else {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    char *argv[] = {(char *)helper, "jit", in, out, (char *)arch, (char *)name,
                    (char *)RT_CODE_OBJECT_COMPILER, NULL};
    /* PTXWAVE_JIT_PARENT: the helper ends (and removes this directory) when
     * this process does (tools/cmd_jit.c, PR_SET_PDEATHSIG) */
    size_t nenv = 0;
    while (environ[nenv]) nenv++;
    char **envp = malloc((nenv + 2) * sizeof *envp);
    char parent[48];
    snprintf(parent, sizeof parent, "PTXWAVE_JIT_PARENT=%ld", (long)getpid());
    size_t k = 0;
    for (size_t i = 0; envp && i < nenv; i++)
      if (strncmp(environ[i], "PTXWAVE_JIT_PARENT=", 19)) envp[k++] = environ[i];
    if (envp) {
      envp[k++] = parent;
      envp[k] = NULL;
    }
    int e = envp ? posix_spawn(&pid, helper, &fa, NULL, argv, envp) : ENOMEM;
    free(envp);
    posix_spawn_file_actions_destroy(&fa);
    if (e) {
      snprintf(b->error, sizeof b->error, "JIT: cannot start %.400s: %s", helper, strerror(e));
      r = CUDA_ERROR_JIT_COMPILER_NOT_FOUND;
      pid = -1;
    }
  }
  int st = 0;
  bool waited = false;
  while (pid > 0) {
    pid_t w = waitpid(pid, &st, 0);
    if (w == pid) {
      waited = true;
      break;
    }
    if (w < 0 && errno != EINTR) break;  /* ECHILD: the application reaps children itself */
  }
  size_t msg_len = 0;
  char *msg = pid > 0 ? pw_read_file(log, &msg_len) : NULL;
  while (msg && msg_len && (msg[msg_len - 1] == '\n' || msg[msg_len - 1] == ' '))
    msg[--msg_len] = 0;
  if (pid > 0) {
    void *data = NULL;
    size_t n = 0;
    bool exited_ok = waited ? WIFEXITED(st) && WEXITSTATUS(st) == 0 : true;
    if (exited_ok && (data = pw_read_file(out, &n)) && n > 0) {
      *obj = data;
      *obj_len = n;
    } else {
      free(data);
      if (waited && WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) {
        const char *lim = getenv("PTXWAVE_JIT_TIMEOUT");
        snprintf(b->error, sizeof b->error,
                 "compiling %s for %s: the JIT helper ran past its time limit (PTXWAVE_JIT_TIMEOUT=%s "
                 "seconds) and was stopped; this module is not loaded:\n%s",
                 name, arch, lim && *lim ? lim : "600", msg ? msg : "");
      } else if (waited && WIFSIGNALED(st))
        snprintf(b->error, sizeof b->error,
                 "compiling %s for %s: the JIT helper died (signal %d, %s); the application goes "
                 "on, this module is not loaded:\n%s",
                 name, arch, WTERMSIG(st), strsignal(WTERMSIG(st)), msg ? msg : "");
      else if (waited && WIFEXITED(st) && WEXITSTATUS(st) == 3)
        snprintf(b->error, sizeof b->error, "JIT: %.400s is another ptxwave version:\n%s",
                 helper, msg ? msg : "");
      else if (waited && WIFEXITED(st) && WEXITSTATUS(st) == 127)
        snprintf(b->error, sizeof b->error, "JIT: %.400s could not run:\n%s", helper,
                 msg ? msg : "");
      else
        snprintf(b->error, sizeof b->error, "compiling %s for %s:\n%s", name, arch,
                 msg ? msg : "");
      int code = waited && WIFEXITED(st) ? WEXITSTATUS(st) : 0;
      r = code == 127 || code == 3 ? CUDA_ERROR_JIT_COMPILER_NOT_FOUND : CUDA_ERROR_INVALID_PTX;
    }
  }
  free(msg);
  unlink(in);
  unlink(out);
  unlink(log);
  rmdir(dir);
  return r;
}

static CUresult compile_in_process(rt_backend *b, const char *name, const char *ptx, size_t len,
                                   const ir_target *t, void **obj, size_t *obj_len) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  cg_output out;
  bool ok = rt_link_is_image(ptx, len)  /* cuLinkComplete's image (rt_link.h) */
                ? rt_link_compile(name, ptx, len, &(cg_options){.target = t}, CG_EMIT_HSACO, &out, &d)
                : cg_compile_ptx(name, ptx, len, &(cg_options){.target = t}, CG_EMIT_HSACO, &out, &d);
  if (!ok) {
    snprintf(b->error, sizeof b->error, "compiling %s for %s:\n%s", name, t->name,
             pw_diag_text(&d));
    pw_diag_fini(&d);
    return CUDA_ERROR_INVALID_PTX;
  }
  if (out.ndropped) RT_LOG(rt_warn, "hip: %s: %u kernels left out:\n%s", name, out.ndropped, pw_diag_text(&d));
  pw_diag_fini(&d);
  *obj = out.data;
  *obj_len = out.size;
  return CUDA_SUCCESS;
}

/* PTX -> code object for arch: cg_compile_ptx, as `ptxwave compile --arch
 * ARCH --emit hsaco`, in a helper process or here (PTXWAVE_JIT). */
static CUresult hip_compile(rt_backend *b, const char *name, const char *ptx, size_t len, const char *arch,
                            void **obj, size_t *obj_len) {
  if (hip_passthrough()) {
    *obj = malloc(len + 1);
    if (!*obj) return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(*obj, ptx, len);
    ((char *)*obj)[len] = 0;
    *obj_len = len + 1;
    return CUDA_SUCCESS;
  }
  const ir_target *t = cg_target_find(arch);
  if (!t) {
    snprintf(b->error, sizeof b->error, "no code generator for %s (targets: see `ptxwave compile --help`)", arch);
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  /* cuLinkComplete's images compile here: the helper takes one PTX text */
  if (jit_subprocess() && !rt_link_is_image(ptx, len)) {
    char helper[PATH_MAX + 32];
    if (find_helper(helper, sizeof helper)) {
      CUresult r = compile_in_helper(b, helper, name, ptx, len, arch, obj, obj_len);
      if (r != CUDA_ERROR_JIT_COMPILER_NOT_FOUND) return r;
      /* a helper that cannot run, or of another version: compile here */
      RT_LOG(rt_warn, "hip: %s; compiling in this process", b->error);
      return compile_in_process(b, name, ptx, len, t, obj, obj_len);
    }
    static atomic_flag warned = ATOMIC_FLAG_INIT;  /* once per process */
    if (!atomic_flag_test_and_set(&warned)) {
      RT_LOG(rt_warn, "hip: no JIT helper (ptxwave) next to libcuda.so.1 and no "
             "PTXWAVE_JIT_HELPER: compiling in this process");
    }
  }
  return compile_in_process(b, name, ptx, len, t, obj, obj_len);
}

/* ---- parameter layouts from the code object ------------------------------- */

/* The kernel ABI keeps CUDA's .param layout as the kernarg layout
 * (design.md), and the code object's metadata note lists each kernel's
 * arguments with their offsets and sizes (AMDGPU code object v5: note
 * "AMDGPU", type NT_AMDGPU_METADATA 32, a MessagePack map whose
 * "amdhsa.kernels" array has per kernel ".name" and ".args" [{".offset",
 * ".size", ".value_kind"}]; LLVM's AMDGPUUsage).  A load served by a bundle
 * or the cache takes the layouts from there: no PTX to keep or parse.
 * Every read is bounds-checked; anything unexpected answers false and the
 * load keeps the PTX for a parse instead. */
typedef struct kmeta {
  char *name;
  rt_param_layout layout;
} kmeta;

typedef struct mp {
  const uint8_t *p, *end;
  bool bad;
} mp;

static uint64_t mp_be(mp *r, unsigned n) {
  if ((size_t)(r->end - r->p) < n) {
    r->bad = true;
    return 0;
  }
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++) v = v << 8 | r->p[i];
  r->p += n;
  return v;
}

static void mp_adv(mp *r, uint64_t n) {
  if (r->bad || n > (uint64_t)(r->end - r->p)) r->bad = true;
  else r->p += n;
}

/* The next value's kind: 'u' unsigned, 'i' negative, 's' string, 'a' array,
 * 'm' map, 'o' other (skipped by the caller), with its number, length or
 * count in *n; a string's bytes at *str. */
static char mp_next(mp *r, uint64_t *n, const char **str) {
  if (r->p >= r->end) {
    r->bad = true;
    return 'o';
  }
  uint8_t c = *r->p++;
  *n = 0;
  char k = 'o';
  if (c <= 0x7f) *n = c, k = 'u';
  else if (c >= 0xe0) k = 'i';
  else if ((c & 0xf0) == 0x80) *n = c & 15, k = 'm';
  else if ((c & 0xf0) == 0x90) *n = c & 15, k = 'a';
  else if ((c & 0xe0) == 0xa0) *n = c & 31, k = 's';
  else if (c >= 0xcc && c <= 0xcf) *n = mp_be(r, 1u << (c - 0xcc)), k = 'u';
  else if (c >= 0xd0 && c <= 0xd3) mp_be(r, 1u << (c - 0xd0)), k = 'i';
  else if (c >= 0xd9 && c <= 0xdb) *n = mp_be(r, 1u << (c - 0xd9)), k = 's';
  else if (c == 0xdc || c == 0xdd) *n = mp_be(r, c == 0xdc ? 2 : 4), k = 'a';
  else if (c == 0xde || c == 0xdf) *n = mp_be(r, c == 0xde ? 2 : 4), k = 'm';
  else if (c >= 0xc4 && c <= 0xc6) mp_adv(r, mp_be(r, 1u << (c - 0xc4)));          /* bin */
  else if (c >= 0xc7 && c <= 0xc9) mp_adv(r, mp_be(r, 1u << (c - 0xc7)) + 1);      /* ext */
  else if (c == 0xca || c == 0xcb) mp_be(r, c == 0xca ? 4 : 8);                    /* float */
  else if (c >= 0xd4 && c <= 0xd8) mp_adv(r, 1 + (1u << (c - 0xd4)));              /* fixext */
  else if (c != 0xc0 && c != 0xc2 && c != 0xc3) r->bad = true;               /* nil, bools */
  if (k == 's' && !r->bad) {
    *str = (const char *)r->p;
    mp_adv(r, *n);
  }
  return r->bad ? 'o' : k;
}

static void mp_skip(mp *r, int depth) {
  uint64_t n;
  const char *s;
  char k = mp_next(r, &n, &s);
  if (depth > 16 || r->bad) {
    r->bad = true;
    return;
  }
  if (k == 'a' || k == 'm')
    for (uint64_t i = 0; i < (k == 'm' ? 2 * n : n) && !r->bad; i++) mp_skip(r, depth + 1);
}

static bool mp_key(mp *r, const char *want) {
  uint64_t n;
  const char *s;
  return mp_next(r, &n, &s) == 's' && n == strlen(want) && !memcmp(s, want, n);
}

/* One kernel's map: its name and explicit arguments. */
static bool mp_kernel(mp *r, uint64_t nkeys, kmeta *k) {
  uint32_t cap = 0;
  for (uint64_t i = 0; i < nkeys && !r->bad; i++) {
    const uint8_t *at = r->p;
    uint64_t n;
    const char *s;
    if (mp_key(r, ".name")) {
      if (mp_next(r, &n, &s) != 's' || k->name) return false;
      if (!(k->name = strndup(s, n))) return false;
      continue;
    }
    r->p = at;
    if (!mp_key(r, ".args")) {
      r->p = at;
      mp_skip(r, 0);  /* the key */
      mp_skip(r, 0);  /* its value */
      continue;
    }
    if (mp_next(r, &n, &s) != 'a' || n > 4096) return false;
    for (uint64_t a = 0; a < n && !r->bad; a++) {
      uint64_t nf;
      if (mp_next(r, &nf, &s) != 'm') return false;
      uint64_t off = UINT64_MAX, size = UINT64_MAX;
      bool hidden = false;
      for (uint64_t f = 0; f < nf && !r->bad; f++) {
        uint64_t v;
        const char *vs;
        char fk = mp_next(r, &v, &vs);
        if (fk != 's') return false;
        bool is_off = v == 7 && !memcmp(vs, ".offset", 7);
        bool is_size = v == 5 && !memcmp(vs, ".size", 5);
        bool is_kind = v == 11 && !memcmp(vs, ".value_kind", 11);
        char vk = mp_next(r, &v, &vs);
        if (vk == 'a' || vk == 'm') return false;  /* no argument field is a container */
        if (is_off && vk == 'u') off = v;
        if (is_size && vk == 'u') size = v;
        if (is_kind && vk == 's') hidden = v >= 7 && !memcmp(vs, "hidden_", 7);
      }
      if (off > UINT32_MAX || size > UINT32_MAX) return false;
      if (hidden) continue;  /* implicit arguments: not CUDA's */
      rt_param_layout *L = &k->layout;
      if (L->nparams == cap) {
        cap = cap ? 2 * cap : 8;
        void *np = realloc(L->params, cap * sizeof *L->params);
        if (!np) return false;
        L->params = np;
      }
      L->params[L->nparams].offset = (uint32_t)off;
      L->params[L->nparams].size = (uint32_t)size;
      L->nparams++;
      if (off + size > L->size) L->size = (uint32_t)(off + size);
    }
  }
  return !r->bad && k->name;
}

static void kmeta_free(kmeta *k, unsigned n) {
  for (unsigned i = 0; k && i < n; i++) {
    free(k[i].name);
    free(k[i].layout.params);
  }
  free(k);
}

/* The layouts of every kernel in an ELF64 code object; false if they
 * cannot be read (not an ELF: passthrough; no or an unexpected note). */
static bool hsaco_layouts(const void *obj, size_t len, kmeta **out, unsigned *nout) {
  const uint8_t *b = obj;
  if (len < 64 || memcmp(b, "\177ELF", 4) || b[4] != 2 || b[5] != 1) return false;
  uint64_t shoff;
  uint16_t shentsize, shnum;
  memcpy(&shoff, b + 0x28, 8);
  memcpy(&shentsize, b + 0x3a, 2);
  memcpy(&shnum, b + 0x3c, 2);
  if (shentsize < 64 || shoff > len || (uint64_t)shnum * shentsize > len - shoff) return false;
  for (unsigned i = 0; i < shnum; i++) {
    const uint8_t *sh = b + shoff + (size_t)i * shentsize;
    uint32_t type;
    uint64_t off, size;
    memcpy(&type, sh + 4, 4);
    memcpy(&off, sh + 24, 8);
    memcpy(&size, sh + 32, 8);
    if (type != 7 || off > len || size > len - off) continue;  /* SHT_NOTE */
    for (uint64_t at = off; at + 12 <= off + size;) {
      uint32_t namesz, descsz, ntype;
      memcpy(&namesz, b + at, 4);
      memcpy(&descsz, b + at + 4, 4);
      memcpy(&ntype, b + at + 8, 4);
      uint64_t name = at + 12, desc = name + ((namesz + 3u) & ~3u);
      if (desc > off + size || descsz > off + size - desc) break;
      at = desc + ((descsz + 3u) & ~3u);
      if (ntype != 32 || namesz != 7 || memcmp(b + name, "AMDGPU", 7)) continue;
      mp r = {b + desc, b + desc + descsz, false};
      uint64_t n;
      const char *s;
      if (mp_next(&r, &n, &s) != 'm') return false;
      for (uint64_t kk = 0; kk < n && !r.bad; kk++) {
        const uint8_t *key_at = r.p;
        if (!mp_key(&r, "amdhsa.kernels")) {
          r.p = key_at;
          mp_skip(&r, 0);
          mp_skip(&r, 0);
          continue;
        }
        uint64_t nk;
        if (mp_next(&r, &nk, &s) != 'a' || nk > 1u << 20) return false;
        kmeta *k = calloc(nk ? nk : 1, sizeof *k);
        if (!k) return false;
        for (uint64_t j = 0; j < nk; j++) {
          uint64_t nkeys;
          if (mp_next(&r, &nkeys, &s) != 'm' || !mp_kernel(&r, nkeys, &k[j])) {
            kmeta_free(k, (unsigned)nk);
            return false;
          }
        }
        *out = k;
        *nout = (unsigned)nk;
        return true;
      }
      return false;
    }
  }
  return false;
}

/* The module's IR, parsed now.  An instruction no backend runs fails only
 * the kernels that reach it: the compile leaves them out, their launch
 * says why (rt_ir_left_out). */
static CUresult parse_checked(rt_backend *b, const char *name, const char *ptx, size_t len,
                              ir_module **out) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *ir = rt_parse_module(name, ptx, len, &d);  /* PTX or a linked image (rt_link.h) */
  if (!ir) {
    snprintf(b->error, sizeof b->error, "the PTX does not parse:\n%s", pw_diag_text(&d));
    pw_diag_fini(&d);
    return CUDA_ERROR_INVALID_PTX;
  }
  pw_diag_fini(&d);
  *out = ir;
  return CUDA_SUCCESS;
}

/* A load that finds its code object (bundle, cache) does not parse the
 * PTX: a code object exists only for PTX that compiled, which passed the
 * same checks (cg_compile_ptx).  Parsing a 1-2 MB module takes 20-30 ms
 * (benchmarks/README.md), the warm load's goal is under 1 ms; the IR is
 * needed only for parameter layouts, which the code object's metadata
 * gives (hsaco_layouts); where it cannot (passthrough images), the PTX is
 * kept and parsed at the module's first kernel lookup (kernel_params). */
static CUresult module_load_ptx(rt_backend *b, const char *name, const char *ptx, size_t len,
                                rt_bmodule **out) {
  hip_be *h = H(b);
  const char *arch = h->props[0].arch;
  rt_cache_key key = rt_code_object_key(ptx, len, arch);
  /* passthrough entries (PTX text, not code objects) never meet compiled ones */
  if (hip_passthrough()) key.compiler = RT_CODE_OBJECT_COMPILER "-passthrough";
  rt_cache_key_seal(&key);  /* one hash for the bundles and the cache */
  void *obj = NULL;
  size_t obj_len = 0;
  ir_module *ir = NULL;
  CUresult r = CUDA_SUCCESS;
  if (rt_bundles_get(&key, &obj, &obj_len)) {
    h->bundle_hits++;  /* converted ahead of time next to the binary (rt_bundle.h) */
  } else if (h->cache && rt_cache_get(h->cache, &key, &obj, &obj_len)) {
    h->cache_hits++;
  } else {
    /* parsed here first: an unsupported instruction fails fast, named */
    r = parse_checked(b, name, ptx, len, &ir);
    if (r != CUDA_SUCCESS) return r;
    r = hip_compile(b, name, ptx, len, arch, &obj, &obj_len);
    if (r == CUDA_SUCCESS) {
      h->compiled++;
      if (h->cache) rt_cache_put(h->cache, &key, obj, obj_len);
    }
  }
  RT_LOG(rt_info, "hip: %s: %s (modules compiled %llu, cache hits %llu, bundle hits %llu)", name,
         r != CUDA_SUCCESS ? "compile failed" : "loaded", (unsigned long long)h->compiled,
         (unsigned long long)h->cache_hits, (unsigned long long)h->bundle_hits);
  void *hmod = NULL;
  if (r == CUDA_SUCCESS) r = from_hip(b, "hipModuleLoadData", h->hipModuleLoadData(&hmod, obj));
  kmeta *meta = NULL;
  unsigned nmeta = 0;
  if (r == CUDA_SUCCESS && !ir && !hsaco_layouts(obj, obj_len, &meta, &nmeta)) meta = NULL;
  free(obj);
  rt_bmodule *m = r == CUDA_SUCCESS ? calloc(1, sizeof *m) : NULL;
  char *text = m && !ir && !meta ? malloc(len + 1) : NULL;
  if (!m || (!ir && !meta && !text)) {
    if (hmod) h->hipModuleUnload(hmod);
    ir_module_destroy(ir);
    kmeta_free(meta, nmeta);
    free(m);
    return r != CUDA_SUCCESS ? r : CUDA_ERROR_OUT_OF_MEMORY;
  }
  m->meta = meta;
  m->nmeta = nmeta;
  if (!ir)
    RT_LOG(rt_debug, "hip: %s: parameter layouts %s", name,
           meta ? "from the code object's metadata" : "from the PTX at the first kernel lookup");
  if (text) {
    memcpy(text, ptx, len);
    text[len] = 0;
  }
  snprintf(m->name, sizeof m->name, "%s", name);
  m->hmod = hmod;
  m->ir = ir;
  printf_attach(b, hmod);
  m->ptx = text;
  m->ptx_len = len;
  *out = m;
  return CUDA_SUCCESS;
}

static void module_unload(rt_backend *b, rt_bmodule *m) {
  if (!m) return;
  /* CUDA's cuModuleUnload waits for the work that may still run the
   * module's kernels; hipModuleUnload does not promise to (hipFree does
   * synchronise: mem_free needs nothing more) */
  H(b)->hipDeviceSynchronize();
  printf_drain(b, CUDA_SUCCESS);   /* its format strings go with it */
  H(b)->hipModuleUnload(m->hmod);
  for (unsigned i = 0; i < m->nlayouts; i++) free(m->layouts[i].params);
  free(m->layouts);
  ir_module_destroy(m->ir);
  free(m->ptx);
  kmeta_free(m->meta, m->nmeta);
  free(m);
}

static CUresult module_global(rt_backend *b, rt_bmodule *m, const char *name, uint64_t *p,
                              size_t *n) {
  hip_ptr q = NULL;
  hip_err e = H(b)->hipModuleGetGlobal(&q, n, m->hmod, name);
  if (e) return e == 500 ? CUDA_ERROR_NOT_FOUND : from_hip(b, "hipModuleGetGlobal", e);
  *p = (uint64_t)(uintptr_t)q;
  return CUDA_SUCCESS;
}

/* CUDA's .param layout: each parameter at its declared alignment, in
 * order (the offsets the parser recorded, when it recorded them). */
static CUresult kernel_params(rt_backend *b, rt_bmodule *m, const char *kernel,
                              rt_param_layout *out) {
  if (m->meta) {  /* from the code object (a hit) */
    for (unsigned i = 0; i < m->nmeta; i++)
      if (!strcmp(m->meta[i].name, kernel)) {
        rt_param_layout L = m->meta[i].layout;
        size_t n = L.nparams ? L.nparams : 1;
        L.params = malloc(n * sizeof *L.params);
        rt_param_layout *nl = realloc(m->layouts, (m->nlayouts + 1) * sizeof *nl);
        if (nl) m->layouts = nl;
        if (!L.params || !nl) {
          free(L.params);
          return CUDA_ERROR_OUT_OF_MEMORY;
        }
        if (L.nparams) memcpy(L.params, m->meta[i].layout.params, L.nparams * sizeof *L.params);
        m->layouts[m->nlayouts++] = L;
        *out = L;
        return CUDA_SUCCESS;
      }
    snprintf(b->error, sizeof b->error, "no kernel named %s", kernel);
    return CUDA_ERROR_NOT_FOUND;
  }
  if (!m->ir) {  /* a hit without readable metadata: parsed now (under the module's lock) */
    CUresult r = parse_checked(b, m->name, m->ptx, m->ptx_len, &m->ir);
    if (r != CUDA_SUCCESS) return r;
    free(m->ptx);
    m->ptx = NULL;
  }
  const ir_func *f = m->ir->funcs;
  while (f && (!f->is_kernel || strcmp(f->name, kernel))) f = f->next;
  if (!f) {
    snprintf(b->error, sizeof b->error, "no kernel named %s", kernel);
    return CUDA_ERROR_NOT_FOUND;
  }
  rt_param_layout L = {.nparams = f->nparams};
  L.params = calloc(f->nparams ? f->nparams : 1, sizeof *L.params);
  rt_param_layout *nl = realloc(m->layouts, (m->nlayouts + 1) * sizeof *nl);
  if (!L.params || !nl) {
    free(L.params);
    if (nl) m->layouts = nl;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  m->layouts = nl;
  bool have_offsets = false;
  for (uint32_t i = 0; i < f->nparams; i++) have_offsets |= f->params[i].offset != 0;
  uint32_t lay = 0, end = 0;
  for (uint32_t i = 0; i < f->nparams; i++) {
    const ir_param *p = &f->params[i];
    unsigned bits = ir_type_bits((ir_type)p->type);
    uint32_t elem = bits < 8 ? 1 : bits / 8;
    uint32_t size = elem * (uint32_t)(p->count ? p->count : 1);
    uint32_t a = p->align ? p->align : elem;
    lay = (lay + a - 1) / a * a;
    uint32_t o = have_offsets ? (uint32_t)p->offset : lay;
    L.params[i].offset = o;
    L.params[i].size = size;
    lay = o + size;
    if (lay > end) end = lay;
  }
  L.size = end;
  m->layouts[m->nlayouts++] = L;
  *out = L;
  return CUDA_SUCCESS;
}

static CUresult launch(rt_backend *b, rt_bmodule *m, const char *kernel, const unsigned g[3],
                       const unsigned bl[3], unsigned shared, rt_bstream s, const void *params,
                       size_t size) {
  hip_be *h = H(b);
  void *fn = NULL;
  hip_err he = h->hipModuleGetFunction(&fn, m->hmod, kernel);
  if (he) {
    /* a kernel of the PTX that the compile left out (cg_compile_ptx) */
    if (!m->ir && m->ptx) (void)parse_checked(b, m->name, m->ptx, m->ptx_len, &m->ir);
    if (m->ir && rt_ir_left_out(m->ir, m->name, kernel, h->props[0].arch, b->error, sizeof b->error))
      return CUDA_ERROR_NOT_SUPPORTED;
  }
  CUresult r = from_hip(b, "hipModuleGetFunction", he);
  if (r != CUDA_SUCCESS) return r;
  size_t sz = size;
  void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, (void *)params, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                   &sz, HIP_LAUNCH_PARAM_END};
  return from_hip(b, "hipModuleLaunchKernel",
                  h->hipModuleLaunchKernel(fn, g[0], g[1], g[2], bl[0], bl[1], bl[2], shared, s,
                                           NULL, extra));
}

static CUresult stream_create(rt_backend *b, rt_bstream *out) {
  return from_hip(b, "hipStreamCreate", H(b)->hipStreamCreate(out));
}
static CUresult stream_destroy(rt_backend *b, rt_bstream s) {
  return from_hip(b, "hipStreamDestroy", H(b)->hipStreamDestroy(s));
}
static CUresult stream_sync(rt_backend *b, rt_bstream s) {
  return printf_drain(b, from_hip(b, "hipStreamSynchronize", H(b)->hipStreamSynchronize(s)));
}
static CUresult device_sync(rt_backend *b) {
  return printf_drain(b, from_hip(b, "hipDeviceSynchronize", H(b)->hipDeviceSynchronize()));
}

/* ---- events: HIP's, one to one -------------------------------------------- */
static CUresult event_create(rt_backend *b, unsigned flags, void **out) {
  /* CU_EVENT_BLOCKING_SYNC 1, DISABLE_TIMING 2, INTERPROCESS 4: hipEvent*'s values */
  return from_hip(b, "hipEventCreateWithFlags", H(b)->hipEventCreateWithFlags(out, flags & 7u));
}
static CUresult event_destroy(rt_backend *b, void *e) {
  return from_hip(b, "hipEventDestroy", H(b)->hipEventDestroy(e));
}
static CUresult event_record(rt_backend *b, void *e, rt_bstream s) {
  return from_hip(b, "hipEventRecord", H(b)->hipEventRecord(e, s));
}
static CUresult event_query(rt_backend *b, void *e) {
  return from_hip(b, "hipEventQuery", H(b)->hipEventQuery(e));  /* 600: not ready */
}
static CUresult event_sync(rt_backend *b, void *e) {
  /* CUDA flushes device printf at an event synchronise too */
  return printf_drain(b, from_hip(b, "hipEventSynchronize", H(b)->hipEventSynchronize(e)));
}
static CUresult event_elapsed(rt_backend *b, float *ms, void *start, void *end) {
  return from_hip(b, "hipEventElapsedTime", H(b)->hipEventElapsedTime(ms, start, end));
}
static CUresult stream_wait_event(rt_backend *b, rt_bstream s, void *e) {
  return from_hip(b, "hipStreamWaitEvent", H(b)->hipStreamWaitEvent(s, e, 0));
}


/* ---- several devices, managed memory, IPC, VMM: HIP's, one to one ------- */
static __thread int hip_dev;   /* what hipSetDevice was last told on this thread */

static CUresult set_device(rt_backend *b, int dev) {
  if (dev == hip_dev) return CUDA_SUCCESS;
  CUresult r = from_hip(b, "hipSetDevice", H(b)->hipSetDevice(dev));
  if (r == CUDA_SUCCESS) hip_dev = dev;
  return r;
}

static int mem_device(rt_backend *b, uint64_t p) {
  int dev = -1;
  if (!H(b)->hipPointerGetAttribute ||
      H(b)->hipPointerGetAttribute(&dev, 9 /* HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL */, (hip_ptr)(uintptr_t)p) != 0)
    return -1;
  return dev;
}

static CUresult can_access_peer(rt_backend *b, int dev, int peer, int *can) {
  return from_hip(b, "hipDeviceCanAccessPeer", H(b)->hipDeviceCanAccessPeer(can, dev, peer));
}

static CUresult peer_access(rt_backend *b, int peer, bool enable) {
  hip_be *h = H(b);
  return enable ? from_hip(b, "hipDeviceEnablePeerAccess", h->hipDeviceEnablePeerAccess(peer, 0))
                : from_hip(b, "hipDeviceDisablePeerAccess", h->hipDeviceDisablePeerAccess(peer));
}

static CUresult p2p_attribute(rt_backend *b, CUdevice_P2PAttribute a, int src, int dst, int *v) {
  /* hipDevP2PAttrPerformanceRank 0 ... HipArrayAccessSupported 3: CUDA's 1-4 */
  if (a < CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK || a > CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED) {
    *v = 0;   /* ONLY_PARTIAL_NATIVE_ATOMIC: HIP has no such attribute; full or none */
    return CUDA_SUCCESS;
  }
  return from_hip(b, "hipDeviceGetP2PAttribute", H(b)->hipDeviceGetP2PAttribute(v, (int)a - 1, src, dst));
}

static CUresult memcpy_peer(rt_backend *b, uint64_t dst, int ddev, uint64_t src, int sdev, size_t n,
                            rt_bstream s, bool async) {
  hip_be *h = H(b);
  void *d = (void *)(uintptr_t)dst;
  const void *sp = (const void *)(uintptr_t)src;
  if (async) return from_hip(b, "hipMemcpyPeerAsync", h->hipMemcpyPeerAsync(d, ddev, sp, sdev, n, s));
  return from_hip(b, "hipMemcpyPeer", h->hipMemcpyPeer(d, ddev, sp, sdev, n));
}

static CUresult mem_alloc_managed(rt_backend *b, size_t n, unsigned flags, uint64_t *p) {
  void *q = NULL;
  /* hipMemAttachGlobal 1, Host 2: CUDA's CU_MEM_ATTACH_* */
  CUresult r = from_hip(b, "hipMallocManaged", H(b)->hipMallocManaged(&q, n, flags));
  *p = (uint64_t)(uintptr_t)q;
  return r;
}
static CUresult mem_prefetch(rt_backend *b, uint64_t p, size_t n, int dev, rt_bstream s) {
  /* dev -1: the host (hipCpuDeviceId, CU_DEVICE_CPU) */
  return from_hip(b, "hipMemPrefetchAsync", H(b)->hipMemPrefetchAsync((const void *)(uintptr_t)p, n, dev, s));
}
static CUresult mem_advise(rt_backend *b, uint64_t p, size_t n, CUmem_advise a, int dev) {
  return from_hip(b, "hipMemAdvise", H(b)->hipMemAdvise((const void *)(uintptr_t)p, n, (int)a, dev));
}

static CUresult ipc_mem_get(rt_backend *b, uint64_t p, CUipcMemHandle *out) {
  return from_hip(b, "hipIpcGetMemHandle", H(b)->hipIpcGetMemHandle(out, (void *)(uintptr_t)p));
}
static CUresult ipc_mem_open(rt_backend *b, const CUipcMemHandle *hd, uint64_t *p) {
  void *q = NULL;
  CUresult r = from_hip(b, "hipIpcOpenMemHandle", H(b)->hipIpcOpenMemHandle(&q, *hd, 1 /* lazy peer access */));
  *p = (uint64_t)(uintptr_t)q;
  return r;
}
static CUresult ipc_mem_close(rt_backend *b, uint64_t p) {
  return from_hip(b, "hipIpcCloseMemHandle", H(b)->hipIpcCloseMemHandle((void *)(uintptr_t)p));
}
static CUresult ipc_event_get(rt_backend *b, void *e, CUipcEventHandle *out) {
  return from_hip(b, "hipIpcGetEventHandle", H(b)->hipIpcGetEventHandle(out, e));
}
static CUresult ipc_event_open(rt_backend *b, const CUipcEventHandle *hd, void **e) {
  return from_hip(b, "hipIpcOpenEventHandle", H(b)->hipIpcOpenEventHandle(e, *hd));
}

static CUresult vmm_reserve(rt_backend *b, size_t size, size_t align, uint64_t hint, uint64_t *out) {
  void *p = NULL;
  CUresult r = from_hip(b, "hipMemAddressReserve",
                        H(b)->hipMemAddressReserve(&p, size, align, (void *)(uintptr_t)hint, 0));
  *out = (uint64_t)(uintptr_t)p;
  return r;
}
static CUresult vmm_free(rt_backend *b, uint64_t p, size_t size) {
  return from_hip(b, "hipMemAddressFree", H(b)->hipMemAddressFree((void *)(uintptr_t)p, size));
}
static CUresult vmm_create(rt_backend *b, size_t size, int dev, bool fd_handle, void **out) {
  CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                              .requestedHandleTypes = fd_handle ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
                                                                : CU_MEM_HANDLE_TYPE_NONE,
                              .location = {.type = dev >= 0 ? CU_MEM_LOCATION_TYPE_DEVICE
                                                            : CU_MEM_LOCATION_TYPE_HOST,
                                           .id = dev >= 0 ? dev : 0}};
  return from_hip(b, "hipMemCreate", H(b)->hipMemCreate(out, size, &prop, 0));
}
static CUresult vmm_release(rt_backend *b, void *hd) {
  return from_hip(b, "hipMemRelease", H(b)->hipMemRelease(hd));
}
static CUresult vmm_map(rt_backend *b, uint64_t p, size_t size, size_t off, void *hd) {
  return from_hip(b, "hipMemMap", H(b)->hipMemMap((void *)(uintptr_t)p, size, off, hd, 0));
}
static CUresult vmm_unmap(rt_backend *b, uint64_t p, size_t size) {
  return from_hip(b, "hipMemUnmap", H(b)->hipMemUnmap((void *)(uintptr_t)p, size));
}
static CUresult vmm_set_access(rt_backend *b, uint64_t p, size_t size, int dev, unsigned flags) {
  CUmemAccessDesc d = {.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev},
                       .flags = (CUmemAccess_flags)flags};
  return from_hip(b, "hipMemSetAccess", H(b)->hipMemSetAccess((void *)(uintptr_t)p, size, &d, 1));
}
static CUresult vmm_export_fd(rt_backend *b, void *hd, int *fd) {
  return from_hip(b, "hipMemExportToShareableHandle",
                  H(b)->hipMemExportToShareableHandle(fd, hd, 1 /* POSIX file descriptor */, 0));
}
static CUresult vmm_import_fd(rt_backend *b, int fd, void **out, size_t *size) {
  CUresult r = from_hip(b, "hipMemImportFromShareableHandle",
                        H(b)->hipMemImportFromShareableHandle(out, (void *)(intptr_t)fd, 1));
  /* the size is the exporter's: lseek of the descriptor where it is a
   * file, else unknown (0: the API layer then trusts the mappings) */
  off_t end = r == CUDA_SUCCESS ? lseek(fd, 0, SEEK_END) : -1;
  *size = end > 0 ? (size_t)end : 0;
  return r;
}

/* The optional families, where the library has every function of one. */
static void hip_optional(hip_be *h) {
  rt_backend *b = &h->b;
  b->set_device = set_device;
  if (h->hipPointerGetAttribute) b->mem_device = mem_device;
  if (h->hipDeviceCanAccessPeer && h->hipDeviceEnablePeerAccess && h->hipDeviceDisablePeerAccess &&
      h->hipDeviceGetP2PAttribute && h->hipMemcpyPeer && h->hipMemcpyPeerAsync) {
    b->can_access_peer = can_access_peer;
    b->peer_access = peer_access;
    b->p2p_attribute = p2p_attribute;
    b->memcpy_peer = memcpy_peer;
  }
  if (h->hipMallocManaged && h->hipMemPrefetchAsync && h->hipMemAdvise) {
    b->mem_alloc_managed = mem_alloc_managed;
    b->mem_prefetch = mem_prefetch;
    b->mem_advise = mem_advise;
  }
  if (h->hipIpcGetMemHandle && h->hipIpcOpenMemHandle && h->hipIpcCloseMemHandle) {
    b->ipc_mem_get = ipc_mem_get;
    b->ipc_mem_open = ipc_mem_open;
    b->ipc_mem_close = ipc_mem_close;
  }
  if (h->hipIpcGetEventHandle && h->hipIpcOpenEventHandle) {
    b->ipc_event_get = ipc_event_get;
    b->ipc_event_open = ipc_event_open;
  }
  size_t gran = 0;
  CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                              .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
  if (h->hipMemAddressReserve && h->hipMemAddressFree && h->hipMemCreate && h->hipMemRelease && h->hipMemMap &&
      h->hipMemUnmap && h->hipMemSetAccess && h->hipMemExportToShareableHandle &&
      h->hipMemImportFromShareableHandle && h->hipMemGetAllocationGranularity &&
      h->hipMemGetAllocationGranularity(&gran, &prop, 0) == 0 && gran) {
    b->vmm_granularity = gran;
    b->vmm_reserve = vmm_reserve;
    b->vmm_free = vmm_free;
    b->vmm_create = vmm_create;
    b->vmm_release = vmm_release;
    b->vmm_map = vmm_map;
    b->vmm_unmap = vmm_unmap;
    b->vmm_set_access = vmm_set_access;
    b->vmm_export_fd = vmm_export_fd;
    b->vmm_import_fd = vmm_import_fd;
  }
}

rt_backend *rt_backend_hip_create(void) {
  const char *want = getenv("PTXWAVE_HIP_LIBRARY");
  static const char *const libs[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"};
  void *lib = NULL;
  if (want && *want) lib = dlopen(want, RTLD_NOW | RTLD_LOCAL);
  for (unsigned i = 0; i < sizeof libs / sizeof libs[0] && !lib && !(want && *want); i++)
    lib = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    RT_LOG(rt_info, "hip: no libamdhip64 (%s)", dlerror());
    return NULL;
  }
  hip_be *h = calloc(1, sizeof *h);
  if (!h) {
    dlclose(lib);
    return NULL;
  }
  h->lib = lib;
#define X(name, params)                                                         \
  if (!(*(void **)&h->name = dlsym(lib, #name))) {                              \
    RT_LOG(rt_warn, "hip: %s is missing from the HIP library", #name);         \
    goto fail;                                                                  \
  }
  HIP_FUNCS(X)
#undef X
#define X(name, params) *(void **)&h->name = dlsym(lib, #name);
  HIP_OPT_FUNCS(X)
#undef X
  int n = 0;
  hip_err e = h->hipInit(0);
  if (e == 0) e = h->hipGetDeviceCount(&n);
  if (e != 0 || n <= 0) {
    RT_LOG(rt_info, "hip: no AMD GPU answers (hipError_t %d)", e);
    goto fail;
  }
  h->ndev = n > 16 ? 16 : n;
  h->hipSetDevice(0);
  /* HIP 6 and 7 export the R0600 layout under this name (hipGetDeviceProperties
   * is a macro for it in their headers); HIP 5 has only the plain name */
  if (!(*(void **)&h->get_props = dlsym(lib, "hipGetDevicePropertiesR0600")))
    *(void **)&h->get_props = dlsym(lib, "hipGetDeviceProperties");
  for (int i = 0; i < h->ndev; i++) read_props(h, i, &h->props[i]);
  h->cache = rt_cache_open(NULL, 0);
  h->b = (rt_backend){.name = "hip",
                      .device_count = device_count,
                      .device_props = device_props,
                      .mem_info = mem_info,
                      .mem_alloc = mem_alloc,
                      .mem_free = mem_free,
                      .host_register = host_register,
                      .host_unregister = host_unregister,
                      .mem_range = mem_range,
                      .memcpy = do_memcpy,
                      .memset = do_memset,
                      .module_load_ptx = module_load_ptx,
                      .module_unload = module_unload,
                      .module_global = module_global,
                      .kernel_params = kernel_params,
                      .launch = launch,
                      .stream_create = stream_create,
                      .stream_destroy = stream_destroy,
                      .stream_sync = stream_sync,
                      .device_sync = device_sync,
                      .event_create = event_create,
                      .event_destroy = event_destroy,
                      .event_record = event_record,
                      .event_query = event_query,
                      .event_sync = event_sync,
                      .event_elapsed = event_elapsed,
                      .stream_wait_event = stream_wait_event};
  hip_optional(h);
  RT_LOG(rt_info, "hip: %d device(s); kernel cache %s; JIT %s", n,
         h->cache ? rt_cache_dir(h->cache) : "disabled",
         jit_subprocess() ? "in a helper process" : "in process");
  return &h->b;
fail:
  dlclose(lib);
  free(h);
  return NULL;
}
