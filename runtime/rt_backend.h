/* runtime/rt_backend.h: what the driver API needs from a device backend.
 *
 * Two backends implement it: the emulator (rt_backend_emu.c, on emu/emu.h;
 * the default where no AMD GPU answers) and HIP (rt_backend_hip.c, dlopen of
 * libamdhip64).  The driver API layer (rt_*.c) owns every CUDA handle and
 * its checks; a backend sees only device pointers, its own module and stream
 * handles, and parameter buffers already packed in CUDA's layout (the kernel
 * ABI keeps CUDA's .param layout as the kernarg layout, design.md "Code
 * generation"), so kernelParams and CU_LAUNCH_PARAM_BUFFER_POINTER both
 * arrive as one buffer.
 *
 * Every operation returns a CUresult; a failing one leaves a message in
 * rt_backend.error (shown by the log and by module-load errors).
 */
#ifndef PW_RT_BACKEND_H
#define PW_RT_BACKEND_H

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What CUDA reports about a device (cuDeviceGetAttribute and friends). */
typedef struct rt_device_props {
  char name[256];
  char arch[64];                /* "emu", "gfx942" ... */
  size_t total_mem;
  int sm_count;                 /* multiprocessors (AMD: compute units) */
  int max_threads_per_block;
  int max_block[3], max_grid[3];
  int shared_per_block;         /* static limit (48 KiB in CUDA) */
  int shared_per_block_optin;   /* cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) bound */
  int shared_per_sm;
  int regs_per_block, regs_per_sm;
  int max_threads_per_sm, max_blocks_per_sm;
  int clock_khz, mem_clock_khz, mem_bus_width, l2_bytes;
  int pci_domain, pci_bus, pci_device;
  int wave_size;                /* the backend's wave (the runtime always reports warp 32) */
  bool integrated;
  /* managed memory and its relatives (CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY,
   * CONCURRENT_MANAGED_ACCESS, DIRECT_MANAGED_MEM_ACCESS_FROM_HOST,
   * PAGEABLE_MEMORY_ACCESS, HOST_NATIVE_ATOMIC_SUPPORTED), virtual memory
   * management (VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) */
  bool managed, concurrent_managed, direct_managed_host, pageable_access, host_native_atomics;
  bool vmm;
} rt_device_props;

typedef struct rt_bmodule rt_bmodule;  /* a backend's loaded module */
typedef void *rt_bstream;              /* a backend's stream; NULL: the default stream */

typedef struct rt_param_layout {
  unsigned nparams;
  struct { uint32_t offset, size; } *params; /* owned by the backend module */
  uint32_t size;                              /* the packed buffer's bytes */
} rt_param_layout;

typedef struct rt_backend rt_backend;
struct rt_backend {
  const char *name;                   /* "emu", "hip" */
  char error[1024];                   /* message of the last failure */
  void *priv;

  int (*device_count)(rt_backend *b);
  CUresult (*device_props)(rt_backend *b, int dev, rt_device_props *out);
  CUresult (*mem_info)(rt_backend *b, int dev, size_t *free_bytes, size_t *total_bytes);

  CUresult (*mem_alloc)(rt_backend *b, size_t bytes, uint64_t *dptr);
  CUresult (*mem_free)(rt_backend *b, uint64_t dptr);
  /* host memory the device can address (cuMemHostAlloc/Register) */
  CUresult (*host_register)(rt_backend *b, void *p, size_t bytes);
  CUresult (*host_unregister)(rt_backend *b, void *p);
  CUresult (*mem_range)(rt_backend *b, uint64_t dptr, uint64_t *base, size_t *bytes);
  /* kind: CU_MEMORYTYPE_HOST or _DEVICE for each side; stream NULL and
   * async false: synchronous. */
  CUresult (*memcpy)(rt_backend *b, void *dst, CUmemorytype dkind, const void *src,
                     CUmemorytype skind, size_t bytes, rt_bstream s, bool async);
  CUresult (*memset)(rt_backend *b, uint64_t dptr, uint32_t value, unsigned elem_bytes,
                     size_t count, rt_bstream s, bool async);

  /* PTX text -> a loaded module.  len excludes any NUL.  On failure the
   * message names the instruction and kernel where that is the cause. */
  CUresult (*module_load_ptx)(rt_backend *b, const char *name, const char *ptx, size_t len,
                              rt_bmodule **out);
  void (*module_unload)(rt_backend *b, rt_bmodule *m);
  CUresult (*module_global)(rt_backend *b, rt_bmodule *m, const char *name, uint64_t *dptr,
                            size_t *bytes);
  /* CUDA_ERROR_NOT_FOUND when there is no such kernel */
  CUresult (*kernel_params)(rt_backend *b, rt_bmodule *m, const char *kernel,
                            rt_param_layout *out);
  CUresult (*launch)(rt_backend *b, rt_bmodule *m, const char *kernel, const unsigned grid[3],
                     const unsigned block[3], unsigned shared_bytes, rt_bstream s,
                     const void *params, size_t params_size);
  /* A cooperative launch (cuLaunchCooperativeKernel, the COOPERATIVE
   * launch attribute): every block of the grid resident at once and
   * cooperative groups' grid workspace passed, so that grid.sync() works.
   * The API layer has bounded the grid by occupancy.  NULL where the
   * backend cannot (the HIP backend: docs/runtime.md "Cooperative
   * launch"): the device attribute then says 0 and the launch is refused. */
  CUresult (*launch_cooperative)(rt_backend *b, rt_bmodule *m, const char *kernel,
                                 const unsigned grid[3], const unsigned block[3],
                                 unsigned shared_bytes, rt_bstream s, const void *params,
                                 size_t params_size);

  CUresult (*stream_create)(rt_backend *b, rt_bstream *out);
  CUresult (*stream_destroy)(rt_backend *b, rt_bstream s);
  CUresult (*stream_sync)(rt_backend *b, rt_bstream s);
  CUresult (*device_sync)(rt_backend *b);
  /* Optional (NULL: the API layer does without).  stream_create_flags:
   * stream_create with CU_STREAM_* flags (CU_STREAM_NON_BLOCKING: no
   * implicit synchronisation with the legacy default stream).
   * stream_query: CUDA_SUCCESS when all of s's work is done, else
   * CUDA_ERROR_NOT_READY, never waiting (without it cuStreamQuery
   * synchronises).  host_fn: fn(user) run in s's order, off the calling
   * thread (cuLaunchHostFunc; without it the API layer synchronises s and
   * calls fn itself). */
  CUresult (*stream_create_flags)(rt_backend *b, unsigned flags, rt_bstream *out);
  CUresult (*stream_query)(rt_backend *b, rt_bstream s);
  CUresult (*host_fn)(rt_backend *b, rt_bstream s, void (*fn)(void *), void *user);

  /* Events, asynchronous (optional: NULL in a backend whose operations all
   * complete before they return; the API layer then records the host's
   * clock after synchronising the stream; both backends have them).  flags are
   * CU_EVENT_* (HIP's hipEvent* flags have the same values); event_query
   * answers CUDA_SUCCESS or CUDA_ERROR_NOT_READY. */
  CUresult (*event_create)(rt_backend *b, unsigned flags, void **out);
  CUresult (*event_destroy)(rt_backend *b, void *e);
  CUresult (*event_record)(rt_backend *b, void *e, rt_bstream s);
  CUresult (*event_query)(rt_backend *b, void *e);
  CUresult (*event_sync)(rt_backend *b, void *e);
  CUresult (*event_elapsed)(rt_backend *b, float *ms, void *start, void *end);
  CUresult (*stream_wait_event)(rt_backend *b, rt_bstream s, void *e);

  /* ---- several devices (rt_umem.c) -----------------------------------
   * set_device: the device the calling thread works on.  CUDA's current
   * context is per thread, and so is HIP's device (hipSetDevice); the API
   * layer calls it whenever a thread's current context changes, and the
   * thread's allocations (mem_alloc, mem_alloc_managed, vmm_create's
   * accounting) belong to that device.  mem_device: the device of the
   * allocation holding p, -1 when p is not device memory. */
  CUresult (*set_device)(rt_backend *b, int dev);
  int (*mem_device)(rt_backend *b, uint64_t p);
  CUresult (*can_access_peer)(rt_backend *b, int dev, int peer, int *can);
  /* the calling thread's device's access to peer's memory */
  CUresult (*peer_access)(rt_backend *b, int peer, bool enable);
  CUresult (*p2p_attribute)(rt_backend *b, CUdevice_P2PAttribute a, int src, int dst, int *value);
  CUresult (*memcpy_peer)(rt_backend *b, uint64_t dst, int ddev, uint64_t src, int sdev, size_t n,
                          rt_bstream s, bool async);

  /* ---- managed memory: flags CU_MEM_ATTACH_*; dev -1 is the host --- */
  CUresult (*mem_alloc_managed)(rt_backend *b, size_t n, unsigned flags, uint64_t *p);
  CUresult (*mem_prefetch)(rt_backend *b, uint64_t p, size_t n, int dev, rt_bstream s);
  CUresult (*mem_advise)(rt_backend *b, uint64_t p, size_t n, CUmem_advise a, int dev);

  /* ---- IPC between processes: CUDA's 64-byte handles --------------- */
  CUresult (*ipc_mem_get)(rt_backend *b, uint64_t p, CUipcMemHandle *h);
  CUresult (*ipc_mem_open)(rt_backend *b, const CUipcMemHandle *h, uint64_t *p);
  CUresult (*ipc_mem_close)(rt_backend *b, uint64_t p);
  /* events of a backend with events (event_create); without, rt_memory.c
   * makes the handle itself */
  CUresult (*ipc_event_get)(rt_backend *b, void *e, CUipcEventHandle *h);
  CUresult (*ipc_event_open)(rt_backend *b, const CUipcEventHandle *h, void **e);

  /* ---- virtual memory management (rt_umem.c checks CUDA's rules
   * first): address ranges reserved, physical allocations (void *), a
   * mapping of one into a range, access per device, POSIX file
   * descriptors as shareable handles.  vmm_granularity 0: none. */
  size_t vmm_granularity;
  CUresult (*vmm_reserve)(rt_backend *b, size_t size, size_t align, uint64_t hint, uint64_t *out);
  CUresult (*vmm_free)(rt_backend *b, uint64_t p, size_t size);
  CUresult (*vmm_create)(rt_backend *b, size_t size, int dev, bool fd_handle, void **out);
  CUresult (*vmm_release)(rt_backend *b, void *h);
  CUresult (*vmm_map)(rt_backend *b, uint64_t p, size_t size, size_t offset, void *h);
  CUresult (*vmm_unmap)(rt_backend *b, uint64_t p, size_t size);
  /* flags CU_MEM_ACCESS_FLAGS_PROT_*, for device dev, over whole mappings */
  CUresult (*vmm_set_access)(rt_backend *b, uint64_t p, size_t size, int dev, unsigned flags);
  CUresult (*vmm_export_fd)(rt_backend *b, void *h, int *fd);
  CUresult (*vmm_import_fd)(rt_backend *b, int fd, void **h, size_t *size);
};

/* rt_backend_emu.c, rt_backend_hip.c: NULL when unavailable (hip: no
 * library, no device); why goes to the log. */
rt_backend *rt_backend_emu_create(void);
rt_backend *rt_backend_hip_create(void);

#endif
