/* runtime/rt_device.c: cuInit and versions, devices and their attributes,
 * primary and explicit contexts.
 *
 * cuInit picks the backend (PTXWAVE_BACKEND=auto|hip|emu; auto tries HIP,
 * which fails fast without an AMD GPU, then the emulator) and logs which
 * one runs.  The compute capability reported is PTXWAVE_CC (e.g. "12.0" or
 * "120"), default 12.0, chosen by measurement (docs/runtime.md "The
 * reported compute capability"): with it NVIDIA's libraries pick the
 * kernels they carry PTX for (CUDA 13's: compute_120/121), and sm_120 asks
 * for no clusters, TMA or tensor memory, which 9.0 and 10.0 make cuBLAS
 * and cuSOLVER require; 12.1 makes cuFFT's runtime refuse the device.
 * The warp size is always 32: lower/ maps warps onto waves.  Limits come
 * from the backend's device.
 *
 * Contexts: one primary context per device (retain counted) and explicit
 * ones (cuCtxCreate); a per-thread stack of current contexts.  A context
 * carries no device state of its own: every backend has one address space.
 * Whenever a thread's current context changes, the backend is told the
 * device it now works on (set_device: HIP's hipSetDevice, the emulator's
 * accounting), so allocations belong to the current context's device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt.h"

rt_state rt_driver = {.lock = PTHREAD_MUTEX_INITIALIZER};

static __thread CUcontext ctx_stack[32];
static __thread int ctx_depth;

/* The backend works on the current context's device (device 0 with none,
 * where work_ctx falls back to the primary context of device 0). */
static void device_follows(void) {
  if (!rt_driver.backend || !rt_driver.backend->set_device) return;
  CUcontext c = ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
  rt_driver.backend->set_device(rt_driver.backend, c ? c->device : 0);
}

static void parse_cc(void) {
  rt_driver.cc_major = RT_DEFAULT_CC / 10;
  rt_driver.cc_minor = RT_DEFAULT_CC % 10;
  const char *v = getenv("PTXWAVE_CC");
  if (!v || !*v) return;
  int maj = 0, min = 0;
  if (strchr(v, '.')) {
    if (sscanf(v, "%d.%d", &maj, &min) != 2) return;
  } else {
    int n = atoi(v);
    maj = n / 10;
    min = n % 10;
  }
  if (maj >= 3 && maj <= 12 && min >= 0 && min <= 9) {
    rt_driver.cc_major = maj;
    rt_driver.cc_minor = min;
  } else {
    RT_LOG(rt_warn, "PTXWAVE_CC=%s is not a compute capability; using %d.%d", v,
           RT_DEFAULT_CC / 10, RT_DEFAULT_CC % 10);
  }
}

static CUresult init_locked(void) {
  parse_cc();
  const char *want = getenv("PTXWAVE_BACKEND");
  if (!want || !*want) want = "auto";
  rt_backend *b = NULL;
  if (!strcmp(want, "hip") || !strcmp(want, "auto")) {
    b = rt_backend_hip_create();
    if (!b && !strcmp(want, "hip")) {
      RT_LOG(rt_error, "PTXWAVE_BACKEND=hip: no HIP device (see the messages above)");
      return CUDA_ERROR_NO_DEVICE;
    }
  }
  if (!b && (!strcmp(want, "emu") || !strcmp(want, "auto"))) b = rt_backend_emu_create();
  if (!b) {
    RT_LOG(rt_error, "PTXWAVE_BACKEND=%s: no such backend (auto, hip, emu)", want);
    return CUDA_ERROR_NO_DEVICE;
  }
  rt_driver.backend = b;
  int n = b->device_count(b);
  if (n > 16) n = 16;
  for (int i = 0; i < n; i++) {
    CUresult r = b->device_props(b, i, &rt_driver.props[i]);
    if (r != CUDA_SUCCESS) return r;
    rt_driver.primary[i] = (struct CUctx_st){.magic = RT_CTX_MAGIC, .device = i, .primary = true};
    if (!rt_handle_add(rt_h_context, &rt_driver.primary[i])) return CUDA_ERROR_OUT_OF_MEMORY;
  }
  rt_driver.ndev = n;
  RT_LOG(rt_info, "backend %s: %d device(s), %s, compute capability %d.%d reported", b->name, n,
         n ? rt_driver.props[0].name : "-", rt_driver.cc_major, rt_driver.cc_minor);
  return n ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

RT_EXPORT CUresult cuInit(unsigned int flags) {
  RT_TRACE("%u", flags);
  if (flags != 0) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  pthread_mutex_lock(&rt_driver.lock);
  if (!rt_driver.initialized) {
    rt_driver.init_result = init_locked();
    rt_driver.initialized = true;
  }
  CUresult r = rt_driver.init_result;
  pthread_mutex_unlock(&rt_driver.lock);
  return rt_ret(r);
}

CUresult rt_check_init(void) {
  if (!rt_driver.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  return rt_driver.init_result;
}

/* The errors after which CUDA documents the context as unusable ("the
 * context cannot be used ... must be destroyed"): cuda.h's comments on
 * CUDA_ERROR_ILLEGAL_ADDRESS, _ASSERT, _LAUNCH_FAILED, _LAUNCH_TIMEOUT,
 * _HARDWARE_STACK_ERROR, _ILLEGAL_INSTRUCTION, _MISALIGNED_ADDRESS,
 * _INVALID_ADDRESS_SPACE, _INVALID_PC. */
bool rt_is_fault(CUresult r) {
  switch (r) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
    return true;
  default:
    return false;
  }
}

static struct CUctx_st *work_ctx(void) {
  CUcontext c = rt_current_ctx();
  return c ? c : &rt_driver.primary[0];
}

CUresult rt_check_ctx(void) {
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return r;
  return __atomic_load_n(&work_ctx()->sticky, __ATOMIC_ACQUIRE);
}

CUresult rt_fault(CUresult r) {
  if (rt_is_fault(r) && rt_driver.initialized && rt_driver.init_result == CUDA_SUCCESS) {
    CUresult none = CUDA_SUCCESS;
    if (__atomic_compare_exchange_n(&work_ctx()->sticky, &none, r, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
      RT_LOG(rt_error, "kernel fault %s: the context is unusable until it is destroyed or reset",
             rt_error_name(r));
  }
  return r;
}

CUresult rt_check_device(CUdevice d) {
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return r;
  return d >= 0 && d < rt_driver.ndev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

RT_EXPORT CUresult cuDriverGetVersion(int *v) {
  RT_TRACE("%p", (void *)v);
  if (!v) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *v = CUDA_VERSION;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuDeviceGetCount(int *count) {
  RT_TRACE("%p", (void *)count);
  if (!count) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_init();
  *count = r == CUDA_SUCCESS ? rt_driver.ndev : 0;
  return rt_ret(r);
}

RT_EXPORT CUresult cuDeviceGet(CUdevice *dev, int ordinal) {
  RT_TRACE("%p, %d", (void *)dev, ordinal);
  if (!dev) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(ordinal);
  if (r == CUDA_SUCCESS) *dev = ordinal;
  return rt_ret(r);
}

RT_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
  RT_TRACE("%p, %d, %d", (void *)name, len, dev);
  if (!name || len <= 0) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  snprintf(name, (size_t)len, "%s", rt_driver.props[dev].name);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuDeviceTotalMem(size_t *bytes, CUdevice dev) {
  RT_TRACE("%p, %d", (void *)bytes, dev);
  if (!bytes) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r == CUDA_SUCCESS) *bytes = rt_driver.props[dev].total_mem;
  return rt_ret(r);
}

/* A stable UUID per device: "ptxwave" and the backend's arch and ordinal. */
RT_EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) {
  RT_TRACE("%p, %d", (void *)uuid, dev);
  if (!uuid) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  memset(uuid, 0, sizeof *uuid);
  char id[16] = "ptxwave";
  snprintf(id + 7, 9, "%.6s%02u", rt_driver.props[dev].arch, (unsigned)dev % 100u);
  memcpy(uuid->bytes, id, 16);
  return rt_ret(CUDA_SUCCESS);
}

/* cuda.h names the _v2 symbol cuDeviceGetUuid; the 9.2 one has the same
 * signature. */
RT_EXPORT CUresult rt_cuDeviceGetUuid_v1(CUuuid *uuid, CUdevice dev) __asm__("cuDeviceGetUuid");
RT_EXPORT CUresult rt_cuDeviceGetUuid_v1(CUuuid *uuid, CUdevice dev) { return cuDeviceGetUuid(uuid, dev); }

RT_EXPORT CUresult cuDeviceGetLuid(char *luid, unsigned int *mask, CUdevice dev) {
  RT_TRACE("%p, %p, %d", (void *)luid, (void *)mask, dev);
  return rt_ret(CUDA_ERROR_NOT_SUPPORTED);  /* Windows only, as in CUDA */
}

RT_EXPORT CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev) {
  RT_TRACE("%p, %p, %d", (void *)major, (void *)minor, dev);
  if (!major || !minor) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  *major = rt_driver.cc_major;
  *minor = rt_driver.cc_minor;
  return rt_ret(CUDA_SUCCESS);
}

static int attribute(const rt_device_props *p, CUdevice_attribute a, bool *known) {
  *known = true;
  switch ((int)a) {
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return p->max_threads_per_block;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return p->max_block[0];
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return p->max_block[1];
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return p->max_block[2];
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return p->max_grid[0];
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return p->max_grid[1];
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return p->max_grid[2];
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return p->shared_per_block;
  case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
  case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 0x7fffffff;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return p->regs_per_block;
  case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return p->clock_khz;
  case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
  case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return p->sm_count;
  case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT: return 0;
  case CU_DEVICE_ATTRIBUTE_INTEGRATED: return p->integrated;
  case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: return CU_COMPUTEMODE_DEFAULT;
  case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: return 512;
  case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
  case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return 0;
  case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return p->pci_bus;
  case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: return p->pci_device;
  case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: return p->pci_domain;
  case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID: return 0;
  case CU_DEVICE_ATTRIBUTE_TCC_DRIVER: return 0;
  case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return p->mem_clock_khz;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return p->mem_bus_width;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return p->l2_bytes;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return p->max_threads_per_sm;
  case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 1;
  case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
  case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: return 32;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return rt_driver.cc_major;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return rt_driver.cc_minor;
  case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
  case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return p->shared_per_sm;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return p->regs_per_sm;
  /* managed memory (rt_umem.c) and its relatives, as the backend has
   * them: on the emulator host and device share memory, so managed memory
   * is device memory the host reads in place, concurrently, coherently */
  case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return p->managed;
  case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return p->managed && p->concurrent_managed;
  case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: return p->managed && p->direct_managed_host;
  case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: return p->pageable_access;
  case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED: return p->host_native_atomics;
  /* virtual memory management with POSIX file descriptors as shareable
   * handles (rt_umem.c); IPC of memory and events */
  case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return p->vmm;
  case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: return p->vmm;
  case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED:   /* the emulator makes its own (rt_memory.c) */
    return rt_driver.backend->event_create ? rt_driver.backend->ipc_event_get != NULL : 1;
  case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD: return 0;
  /* No multicast objects (cuMulticast* are not done, even with several
   * emulated devices), so none binds a second device's memory, which is
   * what lets lower/lower_multimem.c make multimem.* plain ld/st/red.
   * Keep 0. */
  case CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED: return 0;
  case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: return 2;
  /* grid.sync needs the grid workspace in %envreg1/2 and every block of
   * the grid running at once: the emulator gives both (emu_launch_opts);
   * the HIP backend has no grid barrier for AMD yet (docs/runtime.md
   * "Cooperative launch") */
  case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return rt_driver.backend->launch_cooperative != NULL;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return p->shared_per_block_optin;
  case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
  case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: return 1;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return p->max_blocks_per_sm;
  case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 0;
  /* rt_pool.c: pools of device memory, no shareable handle types */
  case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;
  case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: return 0;
  case CU_DEVICE_ATTRIBUTE_NUMA_CONFIG: return 0;
  case CU_DEVICE_ATTRIBUTE_NUMA_ID: return -1;
  case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID: return -1;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH: return 131072;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH: return 131072;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT: return 65536;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH: return 16384;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT: return 16384;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH: return 16384;
  }
  /* Everything else is a feature flag or limit we do not have: 0. */
  *known = false;
  return 0;
}

RT_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute a, CUdevice dev) {
  if (!pi) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if ((int)a <= 0 || (int)a >= CU_DEVICE_ATTRIBUTE_MAX) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  bool known;
  *pi = attribute(&rt_driver.props[dev], a, &known);
  RT_LOG(rt_trace, "cuDeviceGetAttribute(%d, dev %d) = %d%s", (int)a, dev, *pi,
         known ? "" : " (not modelled)");
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuDeviceGetProperties(CUdevprop *p, CUdevice dev) {
  RT_TRACE("%p, %d", (void *)p, dev);
  if (!p) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  const rt_device_props *d = &rt_driver.props[dev];
  *p = (CUdevprop){.maxThreadsPerBlock = d->max_threads_per_block,
                   .sharedMemPerBlock = d->shared_per_block,
                   .totalConstantMemory = 65536,
                   .SIMDWidth = 32,
                   .memPitch = 0x7fffffff,
                   .regsPerBlock = d->regs_per_block,
                   .clockRate = d->clock_khz,
                   .textureAlign = 512};
  for (int i = 0; i < 3; i++) {
    p->maxThreadsDim[i] = d->max_block[i];
    p->maxGridSize[i] = d->max_grid[i];
  }
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice dev) {
  RT_TRACE("%p, %d, %d", (void *)id, len, dev);
  if (!id || len <= 0) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  snprintf(id, (size_t)len, "%04x:%02x:%02x.0", rt_driver.props[dev].pci_domain, rt_driver.props[dev].pci_bus,
           rt_driver.props[dev].pci_device);
  return rt_ret(CUDA_SUCCESS);
}

/* ---- contexts ---------------------------------------------------------- */
static bool ctx_valid(CUcontext c) { return rt_handle_valid(rt_h_context, c); }

CUcontext rt_current_ctx(void) { return ctx_depth ? ctx_stack[ctx_depth - 1] : NULL; }

static void set_current(CUcontext c) {
  if (ctx_depth == 0) {
    if (c) ctx_stack[ctx_depth++] = c;
  } else if (c) {
    ctx_stack[ctx_depth - 1] = c;
  } else {
    ctx_depth--;
  }
  device_follows();
}

RT_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
  RT_TRACE("%p, %d", (void *)pctx, dev);
  if (!pctx) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  pthread_mutex_lock(&rt_driver.lock);
  rt_driver.primary[dev].refs++;
  pthread_mutex_unlock(&rt_driver.lock);
  *pctx = &rt_driver.primary[dev];
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  RT_TRACE("%d", dev);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  pthread_mutex_lock(&rt_driver.lock);
  if (rt_driver.primary[dev].refs > 0) rt_driver.primary[dev].refs--;
  pthread_mutex_unlock(&rt_driver.lock);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
  RT_TRACE("%d, %u", dev, flags);
  CUresult r = rt_check_device(dev);
  if (r == CUDA_SUCCESS) rt_driver.primary[dev].flags = flags;
  return rt_ret(r);
}

RT_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active) {
  RT_TRACE("%d, %p, %p", dev, (void *)flags, (void *)active);
  if (!flags || !active) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  *flags = rt_driver.primary[dev].flags;
  *active = rt_driver.primary[dev].refs > 0;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev) {
  RT_TRACE("%d", dev);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  struct CUctx_st *c = &rt_driver.primary[dev];
  /* the old context's work finishes first (a reset synchronises the
   * device), and a fault it leaves goes with it */
  CUcontext cur = rt_current_ctx();
  if (rt_driver.backend && cur && cur->device == dev) rt_driver.backend->device_sync(rt_driver.backend);
  /* context-local storage destructors, as cudart expects on reset */
  for (int i = 0; i < c->ncls; i++)
    if (c->cls[i].dtor) c->cls[i].dtor(c, c->cls[i].key, c->cls[i].value);
  c->ncls = 0;
  c->refs = 0;
  c->sticky = CUDA_SUCCESS;   /* a new context: the fault is gone with the old one, */
  c->peers = 0;               /* and so is its peer access */
  return rt_ret(CUDA_SUCCESS);
}

/* cuda.h names the CUDA 11 symbols (_v2) cuDevicePrimaryCtxRelease, _SetFlags
 * and _Reset; cudart still resolves the older ones, which have the same
 * signatures. */
RT_EXPORT CUresult rt_primary_release_v1(CUdevice dev) __asm__("cuDevicePrimaryCtxRelease");
RT_EXPORT CUresult rt_primary_release_v1(CUdevice dev) { return cuDevicePrimaryCtxRelease(dev); }
RT_EXPORT CUresult rt_primary_reset_v1(CUdevice dev) __asm__("cuDevicePrimaryCtxReset");
RT_EXPORT CUresult rt_primary_reset_v1(CUdevice dev) { return cuDevicePrimaryCtxReset(dev); }
RT_EXPORT CUresult rt_primary_flags_v1(CUdevice dev, unsigned flags) __asm__("cuDevicePrimaryCtxSetFlags");
RT_EXPORT CUresult rt_primary_flags_v1(CUdevice dev, unsigned flags) {
  return cuDevicePrimaryCtxSetFlags(dev, flags);
}

static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return r;
  struct CUctx_st *c = calloc(1, sizeof *c);
  if (!c) return CUDA_ERROR_OUT_OF_MEMORY;
  *c = (struct CUctx_st){.magic = RT_CTX_MAGIC, .device = dev, .flags = flags, .refs = 1};
  if (!rt_handle_add(rt_h_context, c)) {
    free(c);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (ctx_depth < 32) ctx_stack[ctx_depth++] = c;
  device_follows();
  *pctx = c;
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
RT_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev) {
  RT_TRACE("%p, %u, %d", (void *)pctx, flags, dev);
  return rt_ret(ctx_create(pctx, flags, dev));
}

RT_EXPORT CUresult cuCtxCreate(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags,
                               CUdevice dev) {
  RT_TRACE("%p, %p, %u, %d", (void *)pctx, (void *)params, flags, dev);
  if (params && (params->execAffinityParams || params->cigParams))
    return rt_ret(CUDA_ERROR_NOT_SUPPORTED);
  return rt_ret(ctx_create(pctx, flags, dev));
}

RT_EXPORT CUresult cuCtxDestroy(CUcontext ctx) {
  RT_TRACE("%p", (void *)ctx);
  if (!ctx_valid(ctx)) return rt_ret(CUDA_ERROR_INVALID_CONTEXT);
  for (int i = 0; i < ctx_depth; i++)
    if (ctx_stack[i] == ctx) {
      memmove(&ctx_stack[i], &ctx_stack[i + 1], (size_t)(ctx_depth - i - 1) * sizeof ctx);
      ctx_depth--;
      i--;
    }
  device_follows();
  if (!ctx->primary) {
    rt_handle_remove(rt_h_context, ctx);
    ctx->magic = 0;
    free(ctx);
  }
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx) {
  RT_TRACE("%p", (void *)pctx);
  if (!pctx) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_init();
  *pctx = r == CUDA_SUCCESS ? rt_current_ctx() : NULL;
  return rt_ret(r);
}

RT_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  RT_TRACE("%p", (void *)ctx);
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (ctx && !ctx_valid(ctx)) return rt_ret(CUDA_ERROR_INVALID_CONTEXT);
  set_current(ctx);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuCtxPushCurrent(CUcontext ctx) {
  RT_TRACE("%p", (void *)ctx);
  if (!ctx_valid(ctx)) return rt_ret(CUDA_ERROR_INVALID_CONTEXT);
  if (ctx_depth >= 32) return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  ctx_stack[ctx_depth++] = ctx;
  device_follows();
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuCtxPopCurrent(CUcontext *pctx) {
  RT_TRACE("%p", (void *)pctx);
  if (!ctx_depth) return rt_ret(CUDA_ERROR_INVALID_CONTEXT);
  CUcontext c = ctx_stack[--ctx_depth];
  device_follows();
  if (pctx) *pctx = c;
  return rt_ret(CUDA_SUCCESS);
}

static CUresult current_device(CUdevice *dev) {
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return r;
  CUcontext c = rt_current_ctx();
  if (!c) return CUDA_ERROR_INVALID_CONTEXT;
  *dev = c->device;
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuCtxGetDevice(CUdevice *dev) {
  RT_TRACE("%p", (void *)dev);
  if (!dev) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(current_device(dev));
}

RT_EXPORT CUresult cuCtxGetDevice_v2(CUdevice *dev, CUcontext ctx) {
  RT_TRACE("%p, %p", (void *)dev, (void *)ctx);
  if (!dev) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!ctx) return rt_ret(current_device(dev));
  if (!ctx_valid(ctx)) return rt_ret(CUDA_ERROR_INVALID_CONTEXT);
  *dev = ctx->device;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuCtxGetFlags(unsigned int *flags) {
  RT_TRACE("%p", (void *)flags);
  if (!flags) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUcontext c = rt_current_ctx();
  if (!c) return rt_ret(CUDA_ERROR_INVALID_CONTEXT);
  *flags = c->flags;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuCtxSetFlags(unsigned int flags) {
  RT_TRACE("%u", flags);
  CUcontext c = rt_current_ctx();
  if (!c) return rt_ret(CUDA_ERROR_INVALID_CONTEXT);
  c->flags = flags;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version) {
  RT_TRACE("%p, %p", (void *)ctx, (void *)version);
  if (!version) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *version = 3020;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuCtxSynchronize(void) {
  RT_TRACE("");
  CUresult r = rt_check_ctx();
  if (r == CUDA_SUCCESS) r = rt_capture_unsafe();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  return rt_ret(rt_fault(rt_driver.backend->device_sync(rt_driver.backend)));
}

RT_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx) {
  RT_TRACE("%p", (void *)ctx);
  return cuCtxSynchronize();
}

static size_t limits[CU_LIMIT_MAX];
static bool limits_set[CU_LIMIT_MAX];

RT_EXPORT CUresult cuCtxGetLimit(size_t *value, CUlimit limit) {
  RT_TRACE("%p, %d", (void *)value, (int)limit);
  if (!value || (unsigned)limit >= CU_LIMIT_MAX) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  static const size_t defaults[] = {
      [CU_LIMIT_STACK_SIZE] = 1024, [CU_LIMIT_PRINTF_FIFO_SIZE] = 1 << 20,
      [CU_LIMIT_MALLOC_HEAP_SIZE] = 8 << 20, [CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH] = 2,
      [CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048, [CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 32};
  *value = limits_set[limit] ? limits[limit]
                             : (limit < sizeof defaults / sizeof defaults[0] ? defaults[limit] : 0);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value) {
  RT_TRACE("%d, %zu", (int)limit, value);
  if ((unsigned)limit >= CU_LIMIT_MAX) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  limits[limit] = value;
  limits_set[limit] = true;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuCtxGetCacheConfig(CUfunc_cache *c) {
  RT_TRACE("%p", (void *)c);
  if (!c) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *c = CU_FUNC_CACHE_PREFER_NONE;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuCtxSetCacheConfig(CUfunc_cache c) {
  RT_TRACE("%d", (int)c);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuCtxGetSharedMemConfig(CUsharedconfig *c) {
  RT_TRACE("%p", (void *)c);
  if (!c) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *c = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest) {
  RT_TRACE("%p, %p", (void *)least, (void *)greatest);
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long *id) {
  RT_TRACE("%p, %p", (void *)ctx, (void *)id);
  if (!id) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!ctx) ctx = rt_current_ctx();
  if (!ctx_valid(ctx)) return rt_ret(CUDA_ERROR_INVALID_CONTEXT);
  *id = (unsigned long long)(uintptr_t)ctx;
  return rt_ret(CUDA_SUCCESS);
}
