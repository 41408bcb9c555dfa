/* tests/cuda/emu_cudart.c: the CUDA runtime API subset the programs of
 * tests/cuda use, implemented on the emulator's C API (emu/emu.h).  Test
 * harness only; the real runtime is runtime/ (issue 7).
 *
 * A program of tests/cuda is compiled by nvcc with `-cudart none` and
 * linked with this library instead of NVIDIA's cudart: its host code, its
 * inputs and its C references run unchanged, while every kernel runs in the
 * emulator.  The PTX comes from the file named by $PW_PTX (nvcc writes it
 * for the same compilation with -keep), so no fatbin decoding is needed:
 * __cudaRegisterFunction gives, for each host stub, the kernel's name.
 *
 * Everything is synchronous: a launch returns when the grid has run, and
 * streams and events only keep order and timestamps.  Kernel faults are
 * sticky, as in CUDA: the next synchronising call returns the error, and
 * the emulator's message (kernel, PTX line, block, thread) goes to stderr.
 *
 * Environment: PW_PTX (required), PW_EMU_THREADS (host threads),
 * PW_EMU_MEMCHECK=1.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/emu.h"
#include "ptx/ptx_parse.h"
#include "util/diag.h"
#include "util/pw_file.h"

/* ---- state -------------------------------------------------------------- */
typedef struct kentry {
  const void *host;
  const char *name;
} kentry;

typedef struct ventry {
  const void *host;
  const char *name;
} ventry;

static struct {
  bool init, failed;
  emu_context *ctx;
  ir_module *ir;
  emu_module *mod;
  kentry *k;
  int nk, capk;
  ventry *v;
  int nv, capv;
  cudaError_t last, sticky;
  dim3 cfg_grid, cfg_block;
  size_t cfg_shared;
  int cfg_depth;
} S;

static void die(const char *msg) {
  fprintf(stderr, "emu_cudart: %s\n", msg);
  exit(1);
}

static void init(void) {
  if (S.init) return;
  S.init = true;
  const char *path = getenv("PW_PTX");
  if (!path) die("PW_PTX is not set (the PTX of this program)");
  size_t len;
  char *text = pw_read_file(path, &len);
  if (!text) die("cannot read $PW_PTX");
  pw_diag d;
  pw_diag_init(&d, stderr);
  S.ir = ptx_parse(path, text, len, &d, NULL);
  free(text);
  pw_diag_fini(&d);
  if (!S.ir) die("the PTX does not parse");
  /* the verifier's verdict is reported, but the emulator runs what parsed
   * (it copes with forms the verifier is stricter about) */
  pw_diag_init(&d, NULL);
  if (!ir_verify(S.ir, &(ir_verify_options){0}, &d))
    fprintf(stderr, "emu_cudart: warning: the IR of %s does not verify (%d errors); running it anyway\n", path,
            d.nerrors);
  pw_diag_fini(&d);
  emu_options opt = {0};
  const char *th = getenv("PW_EMU_THREADS");
  if (th) opt.threads = (unsigned)atoi(th);
  const char *mc = getenv("PW_EMU_MEMCHECK");
  opt.memcheck = mc && *mc == '1';
  if (emu_context_create(&opt, &S.ctx) != EMU_OK) die("cannot create an emulator context");
  if (emu_module_load(S.ctx, S.ir, &S.mod) != EMU_OK) {
    fprintf(stderr, "emu_cudart: %s\n", emu_error_message(S.ctx));
    die("cannot load the module");
  }
}

static cudaError_t ret(cudaError_t e) {
  if (e != cudaSuccess) S.last = e;
  return e;
}

static cudaError_t from_emu(emu_status st) {
  switch (st) {
  case EMU_OK: return cudaSuccess;
  case EMU_ERR_INVALID_VALUE: return cudaErrorInvalidValue;
  case EMU_ERR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
  case EMU_ERR_NOT_FOUND: return cudaErrorInvalidDeviceFunction;
  case EMU_ERR_UNSUPPORTED: return cudaErrorNotSupported;
  case EMU_ERR_ILLEGAL_ADDRESS: return cudaErrorIllegalAddress;
  case EMU_ERR_ASSERT: return cudaErrorAssert;
  case EMU_ERR_TRAP: return cudaErrorLaunchFailure;
  case EMU_ERR_DEADLOCK: return cudaErrorLaunchTimeout;
  case EMU_ERR_LAUNCH: return cudaErrorLaunchOutOfResources;
  }
  return cudaErrorUnknown;
}

/* ---- registration ------------------------------------------------------- */
void **__cudaRegisterFatBinary(void *fatCubin) {
  (void)fatCubin;
  static void *handle;
  return &handle;
}

void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
void __cudaUnregisterFatBinary(void **h) { (void)h; }
char __cudaInitModule(void **h) {
  (void)h;
  return 1;
}

void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun, const char *deviceName, int tl,
                            uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize) {
  (void)h, (void)deviceFun, (void)tl, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
  if (S.nk == S.capk) {
    S.capk = S.capk ? S.capk * 2 : 16;
    S.k = realloc(S.k, (size_t)S.capk * sizeof *S.k);
    if (!S.k) die("out of memory");
  }
  S.k[S.nk++] = (kentry){hostFun, deviceName};
}

void __cudaRegisterVar(void **h, char *hostVar, char *deviceAddress, const char *deviceName, int ext, size_t size,
                       int constant, int global) {
  (void)h, (void)deviceAddress, (void)ext, (void)size, (void)constant, (void)global;
  if (S.nv == S.capv) {
    S.capv = S.capv ? S.capv * 2 : 16;
    S.v = realloc(S.v, (size_t)S.capv * sizeof *S.v);
    if (!S.v) die("out of memory");
  }
  S.v[S.nv++] = (ventry){hostVar, deviceName};
}

void __cudaRegisterManagedVar(void **h, void **hostVarPtrAddress, char *deviceAddress, const char *deviceName,
                              int ext, size_t size, int constant, int global) {
  (void)h, (void)hostVarPtrAddress, (void)deviceAddress, (void)deviceName, (void)ext, (void)size, (void)constant,
      (void)global;
}

static const char *kernel_name(const void *fun) {
  for (int i = 0; i < S.nk; i++)
    if (S.k[i].host == fun) return S.k[i].name;
  return NULL;
}

unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem, struct CUstream_st *stream) {
  (void)stream;
  S.cfg_grid = grid;
  S.cfg_block = block;
  S.cfg_shared = shmem;
  S.cfg_depth++;
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *g, dim3 *b, size_t *shmem, void *stream) {
  if (!S.cfg_depth) return cudaErrorMissingConfiguration;
  S.cfg_depth--;
  *g = S.cfg_grid;
  *b = S.cfg_block;
  *shmem = S.cfg_shared;
  if (stream) *(cudaStream_t *)stream = 0;
  return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t *k, const void *fun) {
  *k = (cudaKernel_t)fun;
  return cudaSuccess;
}

static cudaError_t launch(const void *fun, dim3 g, dim3 b, void **args, size_t shmem) {
  init();
  if (S.sticky) return ret(S.sticky);
  const char *name = kernel_name(fun);
  if (!name) return ret(cudaErrorInvalidDeviceFunction);
  emu_status st = emu_launch(S.mod, name, (emu_dim3){g.x, g.y, g.z}, (emu_dim3){b.x, b.y, b.z}, (uint32_t)shmem,
                             args);
  if (st == EMU_OK) return cudaSuccess;
  fprintf(stderr, "emu_cudart: launch of %s failed: %s\n", name, emu_error_message(S.ctx));
  cudaError_t e = from_emu(st);
  if (st == EMU_ERR_INVALID_VALUE || st == EMU_ERR_LAUNCH || st == EMU_ERR_NOT_FOUND) return ret(e);
  S.sticky = e;
  return ret(e);
}

cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s) {
  (void)s;
  return launch((const void *)k, g, b, args, shmem);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s) {
  return __cudaLaunchKernel(k, g, b, args, shmem, s);
}

cudaError_t cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s) {
  (void)s;
  return launch(f, g, b, args, shmem);
}

cudaError_t cudaLaunchCooperativeKernel(const void *f, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s) {
  (void)s;
  return launch(f, g, b, args, shmem);
}

/* ---- errors ------------------------------------------------------------- */
cudaError_t cudaGetLastError(void) {
  cudaError_t e = S.last;
  S.last = S.sticky;
  return e;
}

cudaError_t cudaPeekAtLastError(void) { return S.last; }

cudaError_t cudaDeviceSynchronize(void) { return S.sticky; }

const char *cudaGetErrorName(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "cudaSuccess";
  case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
  case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
  case cudaErrorNotSupported: return "cudaErrorNotSupported";
  case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
  case cudaErrorAssert: return "cudaErrorAssert";
  case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
  case cudaErrorLaunchTimeout: return "cudaErrorLaunchTimeout";
  case cudaErrorLaunchOutOfResources: return "cudaErrorLaunchOutOfResources";
  default: return "cudaErrorUnknown";
  }
}

const char *cudaGetErrorString(cudaError_t e) { return cudaGetErrorName(e); }

/* ---- memory ------------------------------------------------------------- */
cudaError_t cudaMalloc(void **p, size_t n) {
  init();
  uint64_t d;
  emu_status st = emu_malloc(S.ctx, n, &d);
  if (st != EMU_OK) return ret(from_emu(st));
  *p = (void *)(uintptr_t)d;
  return cudaSuccess;
}

cudaError_t cudaFree(void *p) {
  init();
  return ret(from_emu(emu_free(S.ctx, (uint64_t)(uintptr_t)p)));
}

cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h) {
  *pitch = (w + 255) & ~(size_t)255;
  return cudaMalloc(p, *pitch * h);
}

cudaError_t cudaMallocHost(void **p, size_t n) {
  init();
  *p = calloc(1, n ? n : 1);
  if (!*p) return ret(cudaErrorMemoryAllocation);
  return ret(from_emu(emu_register(S.ctx, *p, n ? n : 1)));
}

cudaError_t cudaHostAlloc(void **p, size_t n, unsigned flags) {
  (void)flags;
  return cudaMallocHost(p, n);
}

cudaError_t cudaFreeHost(void *p) {
  init();
  emu_unregister(S.ctx, p);
  free(p);
  return cudaSuccess;
}

static bool is_device(const void *p) {
  return emu_mem_range(S.ctx, (uint64_t)(uintptr_t)p, NULL, NULL) == EMU_OK;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
  init();
  if (S.sticky) return ret(S.sticky);
  if (kind == cudaMemcpyDefault)
    kind = is_device(src) ? (is_device(dst) ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost)
                          : (is_device(dst) ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost);
  emu_status st = EMU_OK;
  switch (kind) {
  case cudaMemcpyHostToDevice: st = emu_memcpy_htod(S.ctx, (uint64_t)(uintptr_t)dst, src, n); break;
  case cudaMemcpyDeviceToHost: st = emu_memcpy_dtoh(S.ctx, dst, (uint64_t)(uintptr_t)src, n); break;
  case cudaMemcpyDeviceToDevice: st = emu_memcpy_dtod(S.ctx, (uint64_t)(uintptr_t)dst, (uint64_t)(uintptr_t)src, n); break;
  default: memmove(dst, src, n); break;
  }
  return ret(from_emu(st));
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s) {
  (void)s;
  return cudaMemcpy(dst, src, n, kind);
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                         enum cudaMemcpyKind kind) {
  if (width > dpitch || width > spitch) return ret(cudaErrorInvalidPitchValue);
  for (size_t r = 0; r < height; r++) {
    cudaError_t e = cudaMemcpy((char *)dst + r * dpitch, (const char *)src + r * spitch, width, kind);
    if (e) return e;
  }
  return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t s) {
  (void)s;
  return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}

cudaError_t cudaMemset(void *p, int v, size_t n) {
  init();
  if (S.sticky) return ret(S.sticky);
  return ret(from_emu(emu_memset(S.ctx, (uint64_t)(uintptr_t)p, (uint32_t)v, 1, n)));
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s) {
  (void)s;
  return cudaMemset(p, v, n);
}

cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total) {
  *free_b = (size_t)8 << 30;
  *total = (size_t)16 << 30;
  return cudaSuccess;
}

static const char *var_name(const void *sym) {
  for (int i = 0; i < S.nv; i++)
    if (S.v[i].host == sym) return S.v[i].name;
  return NULL;
}

cudaError_t cudaGetSymbolAddress(void **p, const void *sym) {
  init();
  const char *name = var_name(sym);
  uint64_t d;
  if (!name || emu_module_global(S.mod, name, &d, NULL) != EMU_OK) return ret(cudaErrorInvalidSymbol);
  *p = (void *)(uintptr_t)d;
  return cudaSuccess;
}

cudaError_t cudaGetSymbolSize(size_t *n, const void *sym) {
  init();
  const char *name = var_name(sym);
  if (!name || emu_module_global(S.mod, name, NULL, n) != EMU_OK) return ret(cudaErrorInvalidSymbol);
  return cudaSuccess;
}

cudaError_t cudaMemcpyToSymbol(const void *sym, const void *src, size_t n, size_t off, enum cudaMemcpyKind kind) {
  void *p;
  cudaError_t e = cudaGetSymbolAddress(&p, sym);
  if (e) return e;
  return cudaMemcpy((char *)p + off, src, n, kind == cudaMemcpyDefault ? cudaMemcpyHostToDevice : kind);
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *sym, size_t n, size_t off, enum cudaMemcpyKind kind) {
  void *p;
  cudaError_t e = cudaGetSymbolAddress(&p, sym);
  if (e) return e;
  return cudaMemcpy(dst, (char *)p + off, n, kind == cudaMemcpyDefault ? cudaMemcpyDeviceToHost : kind);
}

/* ---- device ------------------------------------------------------------- */
cudaError_t cudaGetDeviceCount(int *n) {
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : ret(cudaErrorInvalidDevice); }
cudaError_t cudaGetDevice(int *d) {
  *d = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int dev) {
  (void)dev;
  switch (a) {
  case cudaDevAttrMaxThreadsPerBlock: *v = 1024; break;
  case cudaDevAttrMaxSharedMemoryPerBlock: *v = 48 * 1024; break;
  case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = 227 * 1024; break;
  case cudaDevAttrWarpSize: *v = 32; break;
  case cudaDevAttrMultiProcessorCount: *v = 8; break;
  case cudaDevAttrComputeCapabilityMajor: *v = 8; break;
  case cudaDevAttrComputeCapabilityMinor: *v = 0; break;
  case cudaDevAttrCooperativeLaunch: *v = 1; break;
  default: *v = 0; break;
  }
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev) {
  (void)dev;
  memset(p, 0, sizeof *p);
  strcpy(p->name, "ptxwave emulator");
  p->totalGlobalMem = (size_t)16 << 30;
  p->sharedMemPerBlock = 48 * 1024;
  p->sharedMemPerBlockOptin = 227 * 1024;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 0x7fffffff;
  p->maxGridSize[1] = p->maxGridSize[2] = 65535;
  p->major = 8;
  p->minor = 0;
  p->multiProcessorCount = 8;
  p->maxThreadsPerMultiProcessor = 2048;
  p->cooperativeLaunch = 1;
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void *f, enum cudaFuncAttribute a, int v) {
  (void)f, (void)a, (void)v;
  return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *a, const void *f) {
  memset(a, 0, sizeof *a);
  a->maxThreadsPerBlock = 1024;
  a->ptxVersion = 80;
  a->binaryVersion = 80;
  return kernel_name(f) ? cudaSuccess : ret(cudaErrorInvalidDeviceFunction);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *f, int bs, size_t sh) {
  (void)f, (void)sh;
  *n = bs > 0 ? 2048 / bs : 0;
  if (*n > 32) *n = 32;
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *f, int bs, size_t sh,
                                                                   unsigned flags) {
  (void)flags;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, f, bs, sh);
}

/* ---- streams and events (synchronous) ------------------------------------ */
struct CUstream_st {
  int dummy;
};
struct CUevent_st {
  double ms;
  int recorded;
};

cudaError_t cudaStreamCreate(cudaStream_t *s) {
  *s = calloc(1, sizeof **s);
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned f) {
  (void)f;
  return cudaStreamCreate(s);
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  free(s);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  (void)s;
  return S.sticky;
}
cudaError_t cudaStreamQuery(cudaStream_t s) {
  (void)s;
  return S.sticky;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned f) {
  (void)s, (void)e, (void)f;
  return cudaSuccess;
}
cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void *data) {
  (void)s;
  fn(data);
  return cudaSuccess;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

cudaError_t cudaEventCreate(cudaEvent_t *e) {
  *e = calloc(1, sizeof **e);
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned f) {
  (void)f;
  return cudaEventCreate(e);
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  free(e);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  (void)s;
  e->ms = now_ms();
  e->recorded = 1;
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  (void)e;
  return S.sticky;
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
  (void)e;
  return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
  if (!a->recorded || !b->recorded) return ret(cudaErrorInvalidResourceHandle);
  *ms = (float)(b->ms - a->ms);
  return cudaSuccess;
}
