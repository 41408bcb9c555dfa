/* runtime/rt.h: the driver API layer's internals (libcuda.so.1).
 *
 * Exports keep CUDA's names; everything internal is rt_.  The layer owns
 * every CUDA handle (contexts, modules, functions, streams, events) as a
 * struct of its own, checks them, and forwards device work to one backend
 * (rt_backend.h), chosen at cuInit: PTXWAVE_BACKEND=auto|hip|emu.
 *
 * Every entry point returns a CUresult and never aborts the host program.
 * With PTXWAVE_LOG=trace each implemented entry point logs its arguments
 * and its result (RT_TRACE / rt_ret).
 */
#ifndef PW_RT_H
#define PW_RT_H

#include <cuda.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/rt_backend.h"
#include "runtime/rt_log.h"

#define RT_EXPORT __attribute__((visibility("default")))

/* ---- rt_api.c: results (the log is rt_log.h) --------------------------- */
CUresult rt_ret_(const char *fn, CUresult r);
#define rt_ret(r) rt_ret_(__func__, (r))
const char *rt_error_name(CUresult r);

/* ---- rt_handle.c: the registry of live handles ---------------------- */
typedef enum rt_handle_kind {
  rt_h_context, rt_h_stream, rt_h_event, rt_h_module, rt_h_function, rt_h_library,
  rt_h_graph, rt_h_node, rt_h_exec, rt_h_pool, rt_h_user_object,
} rt_handle_kind;
/* Entered at creation, removed before the struct is freed; a handle that
 * is not in it (destroyed, made up) is CUDA_ERROR_INVALID_HANDLE. */
bool rt_handle_add(rt_handle_kind kind, const void *p);
bool rt_handle_remove(rt_handle_kind kind, const void *p);
bool rt_handle_valid(rt_handle_kind kind, const void *p);

/* ---- rt_device.c: devices, contexts ----------------------------------- */
typedef struct rt_cls {         /* context-local storage (export table) */
  void *key, *value;
  void (*dtor)(CUcontext, void *, void *);
} rt_cls;

struct CUctx_st {
  uint32_t magic;
  int device;
  bool primary;
  int refs;                     /* primary: retain count */
  unsigned flags;
  rt_cls cls[16];
  int ncls;
  /* A kernel fault (illegal address, assert, trap ...) poisons the
   * context: every later call that uses it returns the fault, until the
   * context is destroyed or (primary) reset.  CUDA Runtime API,
   * "Error Handling"; rt_fault. */
  CUresult sticky;
  uint32_t peers;               /* devices whose memory it may access (cuCtxEnablePeerAccess) */
};

/* The compute capability reported without PTXWAVE_CC, major * 10 + minor
 * (rt_device.c says why 12.0); `ptxwave convert` ranks PTX for the same. */
#define RT_DEFAULT_CC 120

typedef struct rt_state {
  pthread_mutex_t lock;
  bool initialized;
  CUresult init_result;
  rt_backend *backend;
  int ndev;
  rt_device_props props[16];
  struct CUctx_st primary[16];
  int cc_major, cc_minor;       /* PTXWAVE_CC, default RT_DEFAULT_CC */
} rt_state;
extern rt_state rt_driver;   /* the process's driver state (rt_device.c) */

#define RT_CTX_MAGIC 0x43747821u
/* CUDA_ERROR_NOT_INITIALIZED unless cuInit succeeded. */
CUresult rt_check_init(void);
/* The current context (pushing the primary context of device 0 if none
 * is current, as cudart expects after cuDevicePrimaryCtxRetain). */
CUcontext rt_current_ctx(void);
CUresult rt_check_device(CUdevice d);
/* rt_check_init, then the current context's sticky error: what every call
 * that does work in the context (memory, copies, launches, synchronisation,
 * module loads) checks first. */
CUresult rt_check_ctx(void);
/* r from a kernel or a synchronisation: a kernel fault becomes the current
 * context's sticky error.  Returns r. */
CUresult rt_fault(CUresult r);
bool rt_is_fault(CUresult r);

/* ---- rt_module.c ------------------------------------------------------ */
struct CUmod_st;
struct CUfunc_st;
/* Loads a fatbin container, fatbin wrapper, or PTX text (NUL-terminated).
 * A fatbin's PTX is translated when a kernel is first looked up. */
CUresult rt_module_load_image(const void *image, struct CUmod_st **out);
/* The PTX entries of a fatbin container the runtime takes, best first
 * (ptx_rank for the reported capability, any_ptx): every loader's rule. */
struct ptx_container;
/* The kernels of a module (translating it first), up to cap of them in
 * out, how many in *n; a module with no PTX lists its cubins' kernels
 * (SASS-only handles). */
CUresult rt_module_functions(struct CUmod_st *m, CUfunction *out, unsigned cap, unsigned *n);
uint32_t rt_ptx_rank(const struct ptx_container *c, uint32_t *order, uint32_t cap);

/* rt_link.c: */
/* The PTX of n relocatable fatbins (containers or wrappers: an -rdc=true
 * program's __nv_relfatbin containers), each chosen as a module load
 * chooses, as one linked image (malloc'd, NUL-terminated, *len without
 * the NUL) for module_load_ptx.  Errors are logged, naming the fatbin. */
CUresult rt_link_relocatable(const uint8_t *const *fatbins, unsigned n, const char *name,
                             char **image, size_t *len);

/* Launches for graphs (rt_graph.c): a kernel node keeps its parameters
 * packed once, in the kernel's .param layout, and replays them. */
CUresult rt_kernel_node_pack(CUfunction f, const unsigned grid[3], const unsigned block[3],
                             unsigned shared, void **params, void **extra, void **out,
                             size_t *size);
/* coop: a cooperative launch (grid.sync), already checked against the
 * device's occupancy */
CUresult rt_launch_packed(CUfunction f, const unsigned grid[3], const unsigned block[3],
                          unsigned shared, CUstream s, const void *buf, size_t size, bool coop);
const rt_param_layout *rt_func_layout(CUfunction f);
const char *rt_func_name(CUfunction f);
bool rt_func_valid(CUfunction f);

/* ---- rt_graph.c: graphs and stream capture ---------------------------- */
/* One stream operation, as a graph node holds it and a launch replays it. */
typedef struct rt_op {
  CUgraphNodeType type;
  union {
    struct {
      CUfunction f;
      unsigned grid[3], block[3], shared;
      bool coop;                /* captured from a cooperative launch */
      void *buf;                /* packed parameters */
      size_t size;
    } k;
    CUDA_MEMCPY3D cp;
    CUDA_MEMSET_NODE_PARAMS ms;
    CUDA_HOST_NODE_PARAMS host;
    CUevent ev;
    struct {
      CUdeviceptr ptr;
      size_t bytes;
    } mem;
  };
} rt_op;
/* True while any stream captures: the one test a stream operation makes
 * when nothing captures. */
bool rt_capturing(void);
/* A stream operation on s: *captured true when it became a node of s's
 * capture (op's buffers are copied); otherwise it is to run now.  An error
 * when s's capture was invalidated or the operation is illegal during the
 * captures in progress (the legacy stream's implicit synchronisation). */
CUresult rt_capture_op(CUstream s, const rt_op *op, bool *captured);
/* A call CUDA calls "potentially unsafe" during capture (synchronous
 * copies and sets, allocation, freeing, device synchronisation):
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED where the calling thread's capture
 * mode prohibits it (cuThreadExchangeStreamCaptureMode). */
CUresult rt_capture_unsafe(void);
/* Synchronising or querying s: illegal while s captures (the capture is
 * invalidated). */
CUresult rt_capture_sync(CUstream s);
/* cuEventRecord / cuStreamWaitEvent on a capturing stream, or of an event
 * recorded in a capture: *handled when the capture took it. */
CUresult rt_capture_event_record(CUevent e, CUstream s, unsigned flags, bool *handled);
CUresult rt_capture_wait_event(CUstream s, CUevent e, unsigned flags, bool *handled);
/* cuMemAllocAsync (alloc) / cuMemFreeAsync of *ptr on s: *captured when
 * s captures and it became a memory node (an allocation's address in *ptr). */
CUresult rt_capture_mem(CUstream s, bool alloc, size_t bytes, CUdeviceptr *ptr, bool *captured);
void rt_capture_stream_destroyed(CUstream s);
void rt_capture_event_destroyed(CUevent e);

/* ---- rt_umem.c: managed memory, peers, IPC, virtual memory ------------- */
/* p lies in a cuMemAllocManaged allocation: its base, size and device. */
bool rt_managed_find(CUdeviceptr p, CUdeviceptr *base, size_t *bytes, int *dev);
/* cuMemFree of a managed allocation: off the books. */
void rt_managed_forget(CUdeviceptr p);
/* p lies in a mapping of virtual memory management (cuMemMap). */
bool rt_vmm_mapped(CUdeviceptr p);

/* ---- rt_pool.c: the stream-ordered allocator ----------------------------- */
/* ptr is freed (cuMemFree): off its pool's books, if it came from one. */
void rt_pool_forget(CUdeviceptr ptr);
/* The pool the allocation starting at base came from, or NULL. */
CUmemoryPool rt_pool_of(CUdeviceptr base);

/* ---- rt_array.c: CUDA arrays ------------------------------------------ */
typedef struct rt_array_info {
  CUDA_ARRAY3D_DESCRIPTOR desc;
  uint64_t base;                /* device address of element (0,0,0) */
  size_t pitch, slice;          /* bytes per row, per slice (layer) */
} rt_array_info;
/* False if a is not an array. */
bool rt_array_get(CUarray a, rt_array_info *out);
/* Bytes per channel of a format, 0 for formats we do not support. */
unsigned rt_format_bytes(CUarray_format f);
/* cuMemcpy2D with an array on either side. */
rt_bstream rt_stream_backend(CUstream s, CUresult *r);   /* rt_memory.c */
CUresult rt_copy2d_array(const CUDA_MEMCPY2D *c, CUstream s, bool async);

/* ---- rt_ir.c ---------------------------------------------------------- */
#include "ir/ir.h"
/* A launch of a kernel the code object lacks: true when m (module `name`)
 * has that kernel, which the compile then left out (cg_compile_ptx), with a
 * message naming the instruction, the function, the line and the target
 * where an opaque instruction explains it. */
bool rt_ir_left_out(const ir_module *m, const char *name, const char *kernel, const char *target, char *err,
                    size_t cap);

/* ---- rt_forward.c: counts for the forwarding layer (rt_forward.h) ------ */
void rt_fwd_launched(void);
void rt_fwd_mem_op(void);
void rt_fwd_refused(const char *kernel);
bool rt_fwd_covered(void);
extern void *rt_fwd_table[];

/* ---- rt_export.c ------------------------------------------------------ */
/* The HMAC-MD2 of CUDA's integrity check (docs/runtime.md), exposed for
 * the unit test. */
void rt_md2(const uint8_t *data, size_t len, uint8_t out[16]);

#endif
