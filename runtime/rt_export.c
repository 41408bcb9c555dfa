/* runtime/rt_export.c: cuGetExportTable, the driver's private tables that
 * NVIDIA's cudart reaches it through.  Each table is an array of pointers,
 * looked up by UUID; most start with their own size in bytes.  The layout
 * and meaning of each slot are as ZLUDA's dark_api sources record them and
 * as traced here (docs/runtime.md, "Export tables"):
 *
 *   6bd5fb6c-5bf4-e74a-8987-d93912fd9df9  CUDART_INTERFACE (10 slots)
 *       1 module from a fatbin wrapper, 2 retain the primary context,
 *       6 and 8 module from a wrapper / fatbin header with extra arguments,
 *       7 a notification (ignored)
 *   42d85a81-23f6-cb47-8298-f6e78a3aecdc  TOOLS_TLS (4): size only
 *   a094798c-2e74-2e74-93f2-0800200c0a66  TOOLS_RUNTIME_CALLBACK_HOOKS (7):
 *       2 and 6 hand cudart two buffers for tool callbacks
 *   c693336e-1121-df11-a8c3-68f355d89593  CONTEXT_LOCAL_STORAGE (4, no size):
 *       0 put(ctx, key, value, dtor), 1 delete(ctx, key), 2 get(&value, ctx, key)
 *   263e8860-7cd2-6143-92f6-bbd5006dfa7e  CONTEXT_CHECKS (4): 2 reports that a
 *       context is not a wrapped one, 3 returns 0
 *   d4082055-bde6-704b-8d34-ba123c66e1f2  INTEGRITY_CHECK (3): 1 answers the
 *       runtime's check of the driver with an HMAC-MD2 (below)
 *   d0821a48-98c3-4c34-b23e-99cd05741268  PTXWAVE_FORWARD (4): ptxwave's own,
 *       for its forwarding layer (rt_forward.h)
 *
 * Unknown UUIDs (f8cff951-... among them, asked before cuInit) answer
 * CUDA_ERROR_INVALID_VALUE; cudart goes on without them.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/rt.h"
#include "runtime/rt_forward.h"

/* ---- MD2 (RFC 1319) and the integrity check ---------------------------- */
/* S: the RFC's permutation of 0..255 built from the digits of pi. */
static const uint8_t md2_s[256] = {
    41,  46,  67,  201, 162, 216, 124, 1,   61,  54,  84,  161, 236, 240, 6,   19,  98,  167, 5,
    243, 192, 199, 115, 140, 152, 147, 43,  217, 188, 76,  130, 202, 30,  155, 87,  60,  253, 212,
    224, 22,  103, 66,  111, 24,  138, 23,  229, 18,  190, 78,  196, 214, 218, 158, 222, 73,  160,
    251, 245, 142, 187, 47,  238, 122, 169, 104, 121, 145, 21,  178, 7,   63,  148, 194, 16,  137,
    11,  34,  95,  33,  128, 127, 93,  154, 90,  144, 50,  39,  53,  62,  204, 231, 191, 247, 151,
    3,   255, 25,  48,  179, 72,  165, 181, 209, 215, 94,  146, 42,  172, 86,  170, 198, 79,  184,
    56,  210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4,   241, 69,  157, 112, 89,  100,
    113, 135, 32,  134, 91,  207, 101, 230, 45,  168, 2,   27,  96,  37,  173, 174, 176, 185, 246,
    28,  70,  97,  105, 52,  64,  126, 15,  85,  71,  163, 35,  221, 81,  175, 58,  195, 92,  249,
    206, 186, 197, 234, 38,  44,  83,  13,  110, 133, 40,  132, 9,   211, 223, 205, 244, 65,  129,
    77,  82,  106, 220, 55,  200, 108, 193, 171, 250, 36,  225, 123, 8,   12,  189, 177, 74,  120,
    136, 149, 139, 227, 99,  232, 109, 233, 203, 213, 254, 59,  0,   29,  57,  242, 239, 183, 14,
    102, 88,  208, 228, 166, 119, 114, 248, 235, 117, 75,  10,  49,  68,  80,  180, 143, 237, 31,
    26,  219, 153, 141, 51,  159, 17,  131, 20};

typedef struct md2 {
  uint8_t x[48], c[16], buf[16];
  unsigned n;
} md2;

static void md2_block(md2 *m) {
  for (int j = 0; j < 16; j++) {
    m->x[16 + j] = m->buf[j];
    m->x[32 + j] = m->buf[j] ^ m->x[j];
  }
  uint8_t l = m->c[15];
  for (int j = 0; j < 16; j++) l = m->c[j] ^= md2_s[m->buf[j] ^ l];
  uint8_t t = 0;
  for (int j = 0; j < 18; j++) {
    for (int k = 0; k < 48; k++) t = m->x[k] ^= md2_s[t];
    t = (uint8_t)(t + j);
  }
}

static void md2_update(md2 *m, const void *p, size_t len) {
  const uint8_t *b = p;
  for (size_t i = 0; i < len; i++) {
    m->buf[m->n++] = b[i];
    if (m->n == 16) {
      md2_block(m);
      m->n = 0;
    }
  }
}

static void md2_final(md2 *m, uint8_t out[16]) {
  uint8_t pad = (uint8_t)(16 - m->n);
  for (unsigned i = 0; i < pad; i++) md2_update(m, &pad, 1);
  uint8_t c[16];
  memcpy(c, m->c, 16);
  md2_update(m, c, 16);
  memcpy(out, m->x, 16);
}

void rt_md2(const uint8_t *data, size_t len, uint8_t out[16]) {
  md2 m = {0};
  md2_update(&m, data, len);
  md2_final(&m, out);
}

/* The 16-byte key of the check's HMAC (ZLUDA: the first pass's constant). */
static const uint8_t integrity_key[16] = {0x14, 0x6A, 0xDD, 0xAE, 0x53, 0xA9, 0xA7, 0x52,
                                          0xAA, 0x08, 0x41, 0x36, 0x0B, 0xF5, 0x5A, 0x9F};

static void *cudart_interface[10];
static void *integrity_table[3];

typedef struct integrity_msg {  /* hashed as laid out in memory */
  uint32_t driver_version, version, pid, tid;
  const void *cudart_table, *integrity_table, *fn;
  uint64_t unix_seconds;
} integrity_msg;

typedef struct device_msg {
  CUuuid uuid;
  int32_t pci_domain, pci_bus, pci_device;
} device_msg;

static CUresult integrity_check(uint32_t version, uint64_t unix_seconds, uint64_t result[2]) {
  RT_TRACE("%u, %llu, %p", version, (unsigned long long)unix_seconds, (void *)result);
  if (!result) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (version % 10 == 0) {
    result[0] = 0x3341181C03CB675Cull;
    result[1] = 0x8ED383AA1F4CD1E8ull;
    return rt_ret(CUDA_SUCCESS);
  }
  if (version % 10 == 1) {
    result[0] = 0x1841181C03CB675Cull;
    result[1] = 0x8ED383AA1F4CD1E8ull;
    return rt_ret(CUDA_SUCCESS);
  }
  /* HMAC-MD2(key, message || device records), MD2's block being 16 bytes */
  uint8_t pad[16], inner[16];
  md2 m = {0};
  for (int i = 0; i < 16; i++) pad[i] = integrity_key[i] ^ 0x36;
  md2_update(&m, pad, 16);
  integrity_msg msg = {.driver_version = CUDA_VERSION,
                       .version = version,
                       .pid = (uint32_t)getpid(),
                       .tid = (uint32_t)pthread_self(),
                       .cudart_table = cudart_interface,
                       .integrity_table = integrity_table,
                       .fn = integrity_table[1],
                       .unix_seconds = unix_seconds};
  md2_update(&m, &msg, sizeof msg);
  int n = 0;
  cuDeviceGetCount(&n);
  for (int d = 0; d < n; d++) {
    device_msg dm;
    memset(&dm, 0, sizeof dm);
    cuDeviceGetUuid(&dm.uuid, d);
    cuDeviceGetAttribute(&dm.pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d);
    cuDeviceGetAttribute(&dm.pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d);
    cuDeviceGetAttribute(&dm.pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d);
    md2_update(&m, &dm, sizeof dm);
  }
  md2_final(&m, inner);
  md2 o = {0};
  for (int i = 0; i < 16; i++) pad[i] = integrity_key[i] ^ 0x5c;
  md2_update(&o, pad, 16);
  md2_update(&o, inner, 16);
  uint8_t out[16];
  md2_final(&o, out);
  memcpy(result, out, 16);
  return rt_ret(CUDA_SUCCESS);
}

_Static_assert(sizeof(integrity_msg) == 48, "integrity message layout");
_Static_assert(sizeof(device_msg) == 28, "device record layout");

/* ---- CUDART_INTERFACE ---------------------------------------------------- */
/* A fatbin wrapper (__fatBinC_Wrapper_t) or a container: the module API
 * takes both. */
static CUresult module_from_wrapper(CUmodule *out, const void *wrapper) {
  RT_TRACE("%p, %p", (void *)out, wrapper);
  if (!out || !wrapper) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(rt_module_load_image(wrapper, out));
}

static CUresult module_from_wrapper_ext(CUmodule *out, const void *wrapper, void *a3, void *a4,
                                        unsigned a5) {
  RT_TRACE("%p, %p, %p, %p, %u", (void *)out, wrapper, a3, a4, a5);
  if (!out || !wrapper) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(rt_module_load_image(wrapper, out));
}

static CUresult module_from_header_ext(const void *header, CUmodule *out, void *a3, void *a4,
                                       unsigned a5) {
  RT_TRACE("%p, %p, %p, %p, %u", header, (void *)out, a3, a4, a5);
  if (!out || !header) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(rt_module_load_image(header, out));
}

static CUresult primary_ctx(CUcontext *pctx, CUdevice dev) {
  return cuDevicePrimaryCtxRetain(pctx, dev);
}

static CUresult cudart_notify(uintptr_t a) {
  RT_TRACE("%#lx", (unsigned long)a);
  return rt_ret(CUDA_SUCCESS);
}

/* ---- TOOLS_RUNTIME_CALLBACK_HOOKS ---------------------------------------- */
static uint32_t hooks_buf1[1024], hooks_buf2[14];

static void hooks_fn2(void **p, size_t *n) {
  RT_TRACE("%p, %p", (void *)p, (void *)n);
  if (p) *p = hooks_buf1;
  if (n) *n = sizeof hooks_buf1 / sizeof hooks_buf1[0];
}

static void hooks_fn6(void **p, size_t *n) {
  RT_TRACE("%p, %p", (void *)p, (void *)n);
  if (p) *p = hooks_buf2;
  if (n) *n = sizeof hooks_buf2 / sizeof hooks_buf2[0];
}

/* ---- TOOLS_TLS ----------------------------------------------------------- */
/* Slot 2: fn2(CUcontext *out): the calling thread's current context.
 * Observed in cuBLAS 13 (libcublas.so.13+0x2183ab, its per-stream
 * workspace lookup before every dot, nrm2 and GEMM): it passes the address
 * of a local, fails with CUBLAS_STATUS_INTERNAL_ERROR unless the answer is
 * 0, and hands the value only back to STREAM_INFO's slots 51 and 39 as
 * their first argument, so the value is ours to define. */
static CUresult tools_tls_current_ctx(CUcontext *out) {
  RT_TRACE("%p", (void *)out);
  if (!out) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUcontext c = rt_current_ctx();
  if (!c && rt_driver.ndev > 0) c = &rt_driver.primary[0];
  *out = c;
  return rt_ret(c ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT);
}

/* ---- STREAM_INFO {21318c60-9714-3248-8ca6-41ff7324c8f2} ------------------ */
/* What cuBLAS 13 and cuBLASLt call, each answering 0 or making the call
 * fail (CUBLAS_STATUS_INTERNAL_ERROR, CUBLAS_STATUS_NOT_SUPPORTED):
 *    4 ctx_id(ctx, uint64_t *out): a key for the context; cuBLASLt
 *      (libcublasLt.so.13+0x194091b, before every matmul) looks its
 *      per-context state up by it in a map: cuCtxGetId's answer;
 *   51 resolve(ctx, CUstream s, void **out, int per_thread) (cuBLAS's
 *      per-stream workspace lookup, libcublas.so.13+0x2183de): the stream a
 *      handle stands for in ctx (per_thread is s == CU_STREAM_PER_THREAD);
 *   39 stream_id(ctx, void *stream, uint64_t *out): a key for it, which
 *      cuBLAS compares with the keys of the workspaces it made before.
 * Here the handle is its own stream (NULL, CU_STREAM_LEGACY and
 * CU_STREAM_PER_THREAD all being the one default stream, docs/runtime.md
 * "Streams") and the key is the handle's value, the default stream's 0.
 * The table's size and its other slots are unknown: 64 slots, size first
 * as in most tables, the rest UNKNOWN_SLOT. */
static CUresult stream_info_resolve(CUcontext c, CUstream s, void **out, int per_thread) {
  RT_TRACE("%p, %p, %p, %d", (void *)c, (void *)s, (void *)out, per_thread);
  if (!out) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r;
  rt_stream_backend(s, &r);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  bool dflt = !s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
  *out = dflt ? NULL : (void *)s;
  return rt_ret(CUDA_SUCCESS);
}

static CUresult stream_info_ctx_id(CUcontext c, uint64_t *out) {
  RT_TRACE("%p, %p", (void *)c, (void *)out);
  return rt_ret(cuCtxGetId(c, (unsigned long long *)out));
}

static CUresult stream_info_id(CUcontext c, void *stream, uint64_t *out) {
  RT_TRACE("%p, %p, %p", (void *)c, stream, (void *)out);
  if (!out) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *out = (uint64_t)(uintptr_t)stream;
  return rt_ret(CUDA_SUCCESS);
}

/* ---- TOOLS_MODULE {6e163fbe-b958-444d-835c-e182aff1991e} ----------------- */
/* cuFFT 12 asks for it right after cuInit and refuses to plan without it;
 * it checks that the size word is above 0x37 (at least 7 slots).  Slot 7,
 * seen from libcufft.so.12+0x350fde after each cuModuleLoadData of one of
 * its kernels: functions(ctx, module, cb, user) calls cb(user, f) for each
 * function of the module and returns their number, which cuFFT requires to
 * be 1; the CUfunction its callback stores is what it launches. */
static unsigned tools_module_functions(CUcontext c, CUmodule m, void (*cb)(void *, CUfunction),
                                       void *user) {
  RT_TRACE("%p, %p, %p, %p", (void *)c, (void *)m, (void *)(uintptr_t)cb, user);
  CUfunction fs[64];
  unsigned n = 0;
  CUresult r = rt_module_functions(m, fs, 64, &n);
  if (r != CUDA_SUCCESS) {
    RT_LOG(rt_debug, "TOOLS_MODULE functions(%p): %s", (void *)m, rt_error_name(r));
    return 0;
  }
  for (unsigned i = 0; i < n && i < 64 && cb; i++) cb(user, fs[i]);
  RT_LOG(rt_trace, "TOOLS_MODULE functions -> %u", n);
  return n;
}

/* ---- CONTEXT_LOCAL_STORAGE ----------------------------------------------- */
static struct CUctx_st *cls_ctx(CUcontext c) {
  if (!c) c = rt_current_ctx();
  return c && c->magic == RT_CTX_MAGIC ? c : NULL;
}

static CUresult cls_put(CUcontext c, void *key, void *value,
                        void (*dtor)(CUcontext, void *, void *)) {
  RT_TRACE("%p, %p, %p, %p", (void *)c, key, value, (void *)(uintptr_t)dtor);
  pthread_mutex_lock(&rt_driver.lock);
  struct CUctx_st *x = cls_ctx(c);
  CUresult r = CUDA_ERROR_INVALID_CONTEXT;
  if (x) {
    int i = 0;
    while (i < x->ncls && x->cls[i].key != key) i++;
    if (i < 16) {
      x->cls[i] = (rt_cls){key, value, dtor};
      if (i == x->ncls) x->ncls++;
      r = CUDA_SUCCESS;
    } else {
      r = CUDA_ERROR_OUT_OF_MEMORY;
    }
  }
  pthread_mutex_unlock(&rt_driver.lock);
  return rt_ret(r);
}

static CUresult cls_delete(CUcontext c, void *key) {
  RT_TRACE("%p, %p", (void *)c, key);
  pthread_mutex_lock(&rt_driver.lock);
  struct CUctx_st *x = cls_ctx(c);
  if (x)
    for (int i = 0; i < x->ncls; i++)
      if (x->cls[i].key == key) x->cls[i] = x->cls[--x->ncls];
  pthread_mutex_unlock(&rt_driver.lock);
  return rt_ret(x ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT);
}

static CUresult cls_get(void **value, CUcontext c, void *key) {
  RT_TRACE("%p, %p, %p", (void *)value, (void *)c, key);
  if (!value) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  pthread_mutex_lock(&rt_driver.lock);
  struct CUctx_st *x = cls_ctx(c);
  CUresult r = x ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_CONTEXT;
  if (x)
    for (int i = 0; i < x->ncls; i++)
      if (x->cls[i].key == key) {
        *value = x->cls[i].value;
        r = CUDA_SUCCESS;
      }
  pthread_mutex_unlock(&rt_driver.lock);
  return rt_ret(r);
}

/* ---- CONTEXT_CHECKS -------------------------------------------------------- */
static CUresult ctx_check(CUcontext c, uint32_t *wrapped, void **unwrapped) {
  RT_TRACE("%p, %p, %p", (void *)c, (void *)wrapped, (void *)unwrapped);
  if (wrapped) *wrapped = 0;
  return rt_ret(CUDA_SUCCESS);
}

static uint32_t check_fn3(void) { return 0; }

/* ---- slots whose meaning is unknown --------------------------------------- */
/* No table handed out has a NULL slot: a caller that jumps through one
 * would crash the application.  A slot we have not seen used is a function
 * that logs its table and index once and answers an error (whatever its
 * real signature: the System V ABI lets a callee ignore its arguments, and
 * the CUresult it leaves in rax is what a caller expecting one reads). */
static void unknown_slot(const char *table, int i, void *caller) {
  Dl_info di;
  bool named = dladdr(caller, &di) && di.dli_fname;
  RT_LOG(rt_warn, "export table %s: slot %d called from %s+%#lx; its meaning is unknown, "
         "answering CUDA_ERROR_NOT_SUPPORTED", table, i, named ? di.dli_fname : "?",
         named ? (unsigned long)((char *)caller - (char *)di.dli_fbase) : 0ul);
}
#define UNKNOWN_SLOT(table, i)                                                \
  static CUresult unknown_##table##_##i(void) {                               \
    static atomic_flag once = ATOMIC_FLAG_INIT;                               \
    if (!atomic_flag_test_and_set(&once))                                     \
      unknown_slot(#table, i, __builtin_return_address(0));                   \
    return CUDA_ERROR_NOT_SUPPORTED;                                          \
  }
UNKNOWN_SLOT(CUDART_INTERFACE, 3)
UNKNOWN_SLOT(CUDART_INTERFACE, 4)
UNKNOWN_SLOT(CUDART_INTERFACE, 5)
UNKNOWN_SLOT(CUDART_INTERFACE, 9)
UNKNOWN_SLOT(TOOLS_TLS, 1)
UNKNOWN_SLOT(TOOLS_TLS, 3)
UNKNOWN_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 1)
UNKNOWN_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 3)
UNKNOWN_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 4)
UNKNOWN_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 5)
UNKNOWN_SLOT(CONTEXT_LOCAL_STORAGE, 3)
UNKNOWN_SLOT(CONTEXT_CHECKS, 1)
UNKNOWN_SLOT(INTEGRITY_CHECK, 2)
UNKNOWN_SLOT(TOOLS_MODULE, 1)
UNKNOWN_SLOT(TOOLS_MODULE, 2)
UNKNOWN_SLOT(TOOLS_MODULE, 3)
UNKNOWN_SLOT(TOOLS_MODULE, 4)
UNKNOWN_SLOT(TOOLS_MODULE, 5)
UNKNOWN_SLOT(TOOLS_MODULE, 6)
UNKNOWN_SLOT(TOOLS_MODULE, 8)
UNKNOWN_SLOT(TOOLS_MODULE, 9)
UNKNOWN_SLOT(TOOLS_MODULE, 10)
UNKNOWN_SLOT(TOOLS_MODULE, 11)
UNKNOWN_SLOT(TOOLS_MODULE, 12)
UNKNOWN_SLOT(TOOLS_MODULE, 13)
UNKNOWN_SLOT(TOOLS_MODULE, 14)
UNKNOWN_SLOT(TOOLS_MODULE, 15)
UNKNOWN_SLOT(TOOLS_MODULE, 16)
UNKNOWN_SLOT(TOOLS_MODULE, 17)
UNKNOWN_SLOT(TOOLS_MODULE, 18)
UNKNOWN_SLOT(TOOLS_MODULE, 19)
UNKNOWN_SLOT(TOOLS_MODULE, 20)
UNKNOWN_SLOT(TOOLS_MODULE, 21)
UNKNOWN_SLOT(TOOLS_MODULE, 22)
UNKNOWN_SLOT(TOOLS_MODULE, 23)
UNKNOWN_SLOT(TOOLS_MODULE, 24)
UNKNOWN_SLOT(TOOLS_MODULE, 25)
UNKNOWN_SLOT(TOOLS_MODULE, 26)
UNKNOWN_SLOT(TOOLS_MODULE, 27)
UNKNOWN_SLOT(TOOLS_MODULE, 28)
UNKNOWN_SLOT(TOOLS_MODULE, 29)
UNKNOWN_SLOT(TOOLS_MODULE, 30)
UNKNOWN_SLOT(TOOLS_MODULE, 31)
UNKNOWN_SLOT(TOOLS_MODULE, 32)
UNKNOWN_SLOT(TOOLS_MODULE, 33)
UNKNOWN_SLOT(TOOLS_MODULE, 34)
UNKNOWN_SLOT(TOOLS_MODULE, 35)
UNKNOWN_SLOT(TOOLS_MODULE, 36)
UNKNOWN_SLOT(TOOLS_MODULE, 37)
UNKNOWN_SLOT(TOOLS_MODULE, 38)
UNKNOWN_SLOT(TOOLS_MODULE, 39)
UNKNOWN_SLOT(TOOLS_MODULE, 40)
UNKNOWN_SLOT(TOOLS_MODULE, 41)
UNKNOWN_SLOT(TOOLS_MODULE, 42)
UNKNOWN_SLOT(TOOLS_MODULE, 43)
UNKNOWN_SLOT(TOOLS_MODULE, 44)
UNKNOWN_SLOT(TOOLS_MODULE, 45)
UNKNOWN_SLOT(TOOLS_MODULE, 46)
UNKNOWN_SLOT(TOOLS_MODULE, 47)
UNKNOWN_SLOT(TOOLS_MODULE, 48)
UNKNOWN_SLOT(TOOLS_MODULE, 49)
UNKNOWN_SLOT(TOOLS_MODULE, 50)
UNKNOWN_SLOT(TOOLS_MODULE, 51)
UNKNOWN_SLOT(TOOLS_MODULE, 52)
UNKNOWN_SLOT(TOOLS_MODULE, 53)
UNKNOWN_SLOT(TOOLS_MODULE, 54)
UNKNOWN_SLOT(TOOLS_MODULE, 55)
UNKNOWN_SLOT(TOOLS_MODULE, 56)
UNKNOWN_SLOT(TOOLS_MODULE, 57)
UNKNOWN_SLOT(TOOLS_MODULE, 58)
UNKNOWN_SLOT(TOOLS_MODULE, 59)
UNKNOWN_SLOT(TOOLS_MODULE, 60)
UNKNOWN_SLOT(TOOLS_MODULE, 61)
UNKNOWN_SLOT(TOOLS_MODULE, 62)
UNKNOWN_SLOT(TOOLS_MODULE, 63)
UNKNOWN_SLOT(STREAM_INFO, 1)
UNKNOWN_SLOT(STREAM_INFO, 2)
UNKNOWN_SLOT(STREAM_INFO, 3)
UNKNOWN_SLOT(STREAM_INFO, 5)
UNKNOWN_SLOT(STREAM_INFO, 6)
UNKNOWN_SLOT(STREAM_INFO, 7)
UNKNOWN_SLOT(STREAM_INFO, 8)
UNKNOWN_SLOT(STREAM_INFO, 9)
UNKNOWN_SLOT(STREAM_INFO, 10)
UNKNOWN_SLOT(STREAM_INFO, 11)
UNKNOWN_SLOT(STREAM_INFO, 12)
UNKNOWN_SLOT(STREAM_INFO, 13)
UNKNOWN_SLOT(STREAM_INFO, 14)
UNKNOWN_SLOT(STREAM_INFO, 15)
UNKNOWN_SLOT(STREAM_INFO, 16)
UNKNOWN_SLOT(STREAM_INFO, 17)
UNKNOWN_SLOT(STREAM_INFO, 18)
UNKNOWN_SLOT(STREAM_INFO, 19)
UNKNOWN_SLOT(STREAM_INFO, 20)
UNKNOWN_SLOT(STREAM_INFO, 21)
UNKNOWN_SLOT(STREAM_INFO, 22)
UNKNOWN_SLOT(STREAM_INFO, 23)
UNKNOWN_SLOT(STREAM_INFO, 24)
UNKNOWN_SLOT(STREAM_INFO, 25)
UNKNOWN_SLOT(STREAM_INFO, 26)
UNKNOWN_SLOT(STREAM_INFO, 27)
UNKNOWN_SLOT(STREAM_INFO, 28)
UNKNOWN_SLOT(STREAM_INFO, 29)
UNKNOWN_SLOT(STREAM_INFO, 30)
UNKNOWN_SLOT(STREAM_INFO, 31)
UNKNOWN_SLOT(STREAM_INFO, 32)
UNKNOWN_SLOT(STREAM_INFO, 33)
UNKNOWN_SLOT(STREAM_INFO, 34)
UNKNOWN_SLOT(STREAM_INFO, 35)
UNKNOWN_SLOT(STREAM_INFO, 36)
UNKNOWN_SLOT(STREAM_INFO, 37)
UNKNOWN_SLOT(STREAM_INFO, 38)
UNKNOWN_SLOT(STREAM_INFO, 40)
UNKNOWN_SLOT(STREAM_INFO, 41)
UNKNOWN_SLOT(STREAM_INFO, 42)
UNKNOWN_SLOT(STREAM_INFO, 43)
UNKNOWN_SLOT(STREAM_INFO, 44)
UNKNOWN_SLOT(STREAM_INFO, 45)
UNKNOWN_SLOT(STREAM_INFO, 46)
UNKNOWN_SLOT(STREAM_INFO, 47)
UNKNOWN_SLOT(STREAM_INFO, 48)
UNKNOWN_SLOT(STREAM_INFO, 49)
UNKNOWN_SLOT(STREAM_INFO, 50)
UNKNOWN_SLOT(STREAM_INFO, 52)
UNKNOWN_SLOT(STREAM_INFO, 53)
UNKNOWN_SLOT(STREAM_INFO, 54)
UNKNOWN_SLOT(STREAM_INFO, 55)
UNKNOWN_SLOT(STREAM_INFO, 56)
UNKNOWN_SLOT(STREAM_INFO, 57)
UNKNOWN_SLOT(STREAM_INFO, 58)
UNKNOWN_SLOT(STREAM_INFO, 59)
UNKNOWN_SLOT(STREAM_INFO, 60)
UNKNOWN_SLOT(STREAM_INFO, 61)
UNKNOWN_SLOT(STREAM_INFO, 62)
UNKNOWN_SLOT(STREAM_INFO, 63)
#define UNKNOWN(table, i) ((void *)unknown_##table##_##i)

/* ---- the tables -------------------------------------------------------- */
static void *tools_tls[4] = {(void *)(4 * sizeof(void *)), UNKNOWN(TOOLS_TLS, 1),
                             (void *)tools_tls_current_ctx, UNKNOWN(TOOLS_TLS, 3)};
static void *stream_info[64] = {
    (void *)(64 * sizeof(void *)),
#define S(i) [i] = UNKNOWN(STREAM_INFO, i)
    S(1),  S(2),  S(3),  S(5),  S(6),  S(7),  S(8),  S(9),  S(10), S(11), S(12), S(13),
    S(14), S(15), S(16), S(17), S(18), S(19), S(20), S(21), S(22), S(23), S(24), S(25), S(26),
    S(27), S(28), S(29), S(30), S(31), S(32), S(33), S(34), S(35), S(36), S(37), S(38), S(40),
    S(41), S(42), S(43), S(44), S(45), S(46), S(47), S(48), S(49), S(50), S(52), S(53), S(54),
    S(55), S(56), S(57), S(58), S(59), S(60), S(61), S(62), S(63),
#undef S
    [4] = (void *)stream_info_ctx_id,
    [39] = (void *)stream_info_id,
    [51] = (void *)stream_info_resolve};
static void *hooks[7] = {(void *)(7 * sizeof(void *)),
                         UNKNOWN(TOOLS_RUNTIME_CALLBACK_HOOKS, 1),
                         (void *)hooks_fn2,
                         UNKNOWN(TOOLS_RUNTIME_CALLBACK_HOOKS, 3),
                         UNKNOWN(TOOLS_RUNTIME_CALLBACK_HOOKS, 4),
                         UNKNOWN(TOOLS_RUNTIME_CALLBACK_HOOKS, 5),
                         (void *)hooks_fn6};
static void *cls_table[4] = {(void *)cls_put, (void *)cls_delete, (void *)cls_get,
                             UNKNOWN(CONTEXT_LOCAL_STORAGE, 3)};
static void *ctx_checks[4] = {(void *)(4 * sizeof(void *)), UNKNOWN(CONTEXT_CHECKS, 1),
                              (void *)ctx_check, (void *)check_fn3};
static void *cudart_interface[10] = {(void *)(10 * sizeof(void *)),
                                     (void *)module_from_wrapper,
                                     (void *)primary_ctx,
                                     UNKNOWN(CUDART_INTERFACE, 3),
                                     UNKNOWN(CUDART_INTERFACE, 4),
                                     UNKNOWN(CUDART_INTERFACE, 5),
                                     (void *)module_from_wrapper_ext,
                                     (void *)cudart_notify,
                                     (void *)module_from_header_ext,
                                     UNKNOWN(CUDART_INTERFACE, 9)};
static void *integrity_table[3] = {(void *)(3 * sizeof(void *)), (void *)integrity_check,
                                   UNKNOWN(INTEGRITY_CHECK, 2)};

/* TOOLS_MODULE: 64 slots as far as is known (cuFFT reads slot 7). */
static void *tools_module[64] = {
    (void *)(64 * sizeof(void *)),
    UNKNOWN(TOOLS_MODULE, 1),
    UNKNOWN(TOOLS_MODULE, 2),
    UNKNOWN(TOOLS_MODULE, 3),
    UNKNOWN(TOOLS_MODULE, 4),
    UNKNOWN(TOOLS_MODULE, 5),
    UNKNOWN(TOOLS_MODULE, 6),
    [7] = (void *)tools_module_functions,
    UNKNOWN(TOOLS_MODULE, 8),
    UNKNOWN(TOOLS_MODULE, 9),
    UNKNOWN(TOOLS_MODULE, 10),
    UNKNOWN(TOOLS_MODULE, 11),
    UNKNOWN(TOOLS_MODULE, 12),
    UNKNOWN(TOOLS_MODULE, 13),
    UNKNOWN(TOOLS_MODULE, 14),
    UNKNOWN(TOOLS_MODULE, 15),
    UNKNOWN(TOOLS_MODULE, 16),
    UNKNOWN(TOOLS_MODULE, 17),
    UNKNOWN(TOOLS_MODULE, 18),
    UNKNOWN(TOOLS_MODULE, 19),
    UNKNOWN(TOOLS_MODULE, 20),
    UNKNOWN(TOOLS_MODULE, 21),
    UNKNOWN(TOOLS_MODULE, 22),
    UNKNOWN(TOOLS_MODULE, 23),
    UNKNOWN(TOOLS_MODULE, 24),
    UNKNOWN(TOOLS_MODULE, 25),
    UNKNOWN(TOOLS_MODULE, 26),
    UNKNOWN(TOOLS_MODULE, 27),
    UNKNOWN(TOOLS_MODULE, 28),
    UNKNOWN(TOOLS_MODULE, 29),
    UNKNOWN(TOOLS_MODULE, 30),
    UNKNOWN(TOOLS_MODULE, 31),
    UNKNOWN(TOOLS_MODULE, 32),
    UNKNOWN(TOOLS_MODULE, 33),
    UNKNOWN(TOOLS_MODULE, 34),
    UNKNOWN(TOOLS_MODULE, 35),
    UNKNOWN(TOOLS_MODULE, 36),
    UNKNOWN(TOOLS_MODULE, 37),
    UNKNOWN(TOOLS_MODULE, 38),
    UNKNOWN(TOOLS_MODULE, 39),
    UNKNOWN(TOOLS_MODULE, 40),
    UNKNOWN(TOOLS_MODULE, 41),
    UNKNOWN(TOOLS_MODULE, 42),
    UNKNOWN(TOOLS_MODULE, 43),
    UNKNOWN(TOOLS_MODULE, 44),
    UNKNOWN(TOOLS_MODULE, 45),
    UNKNOWN(TOOLS_MODULE, 46),
    UNKNOWN(TOOLS_MODULE, 47),
    UNKNOWN(TOOLS_MODULE, 48),
    UNKNOWN(TOOLS_MODULE, 49),
    UNKNOWN(TOOLS_MODULE, 50),
    UNKNOWN(TOOLS_MODULE, 51),
    UNKNOWN(TOOLS_MODULE, 52),
    UNKNOWN(TOOLS_MODULE, 53),
    UNKNOWN(TOOLS_MODULE, 54),
    UNKNOWN(TOOLS_MODULE, 55),
    UNKNOWN(TOOLS_MODULE, 56),
    UNKNOWN(TOOLS_MODULE, 57),
    UNKNOWN(TOOLS_MODULE, 58),
    UNKNOWN(TOOLS_MODULE, 59),
    UNKNOWN(TOOLS_MODULE, 60),
    UNKNOWN(TOOLS_MODULE, 61),
    UNKNOWN(TOOLS_MODULE, 62),
    UNKNOWN(TOOLS_MODULE, 63),
};

static const struct {
  uint8_t uuid[16];
  const char *name;
  void **table;
} tables[] = {
    {{0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9},
     "CUDART_INTERFACE", cudart_interface},
    {{0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc},
     "TOOLS_TLS", tools_tls},
    {{0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66},
     "TOOLS_RUNTIME_CALLBACK_HOOKS", hooks},
    {{0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93},
     "CONTEXT_LOCAL_STORAGE", cls_table},
    {{0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e},
     "CONTEXT_CHECKS", ctx_checks},
    {{0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2},
     "INTEGRITY_CHECK", integrity_table},
    {{0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2},
     "STREAM_INFO", stream_info},
    {{0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d, 0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e},
     "TOOLS_MODULE", tools_module},
    /* ptxwave's own, for its forwarding layer (rt_forward.h) */
    {RT_FORWARD_UUID, "PTXWAVE_FORWARD", rt_fwd_table},
};

RT_EXPORT CUresult cuGetExportTable(const void **pp, const CUuuid *id) {
  if (!pp || !id) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  const uint8_t *b = (const uint8_t *)id->bytes;
  char u[40];
  snprintf(u, sizeof u, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
           b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
           b[14], b[15]);
  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
    if (!memcmp(tables[i].uuid, b, 16)) {
      *pp = tables[i].table;
      RT_LOG(rt_debug, "cuGetExportTable({%s}) -> %s", u, tables[i].name);
      return CUDA_SUCCESS;
    }
  *pp = NULL;
  RT_LOG(rt_debug, "cuGetExportTable({%s}) -> unknown table", u);
  return CUDA_ERROR_INVALID_VALUE;
}
