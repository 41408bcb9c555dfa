/* tests/runtime/link_client.c: the JIT linker (cuLink*, runtime/rt_link.c)
 * on the emulator backend, driven through the driver API as a program
 * would: two PTX modules, one calling a function and reading a variable the
 * other defines (relocatable device code as cuDNN's runtime-compiled engines
 * ship it), linked (PTX text, a file, a fatbin, an image given back),
 * loaded with cuModuleLoadData and cuLibraryLoadData, and launched; then the errors (undefined and multiply defined symbols, a
 * cubin input) with their messages in CU_JIT_ERROR_LOG_BUFFER; and a
 * multimem kernel with multicast reported unsupported.  Expected values are
 * computed here by hand: out[i] = (i + 0.5) * 2 + 1 = 2i + 2. */
#include <cuda.h>

#include <stdio.h>
#include <string.h>

#include "client.h"

/* The engine: calls _Z6mul_opff and reads g_bias, both defined elsewhere. */
static const char engine[] = HEAD
    ".extern .func (.param .b32 func_retval0) _Z6mul_opff (.param .b32 a, .param .b32 b);\n"
    ".extern .global .align 4 .f32 g_bias;\n"
    ".visible .entry engine(.param .u64 x, .param .u64 out)\n{\n"
    "  .reg .b32 %r<4>;\n  .reg .f32 %f<6>;\n  .reg .b64 %rd<6>;\n"
    "  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd1, %r1, 4;\n"
    "  ld.param.u64 %rd2, [x];\n  add.u64 %rd3, %rd2, %rd1;\n  ld.global.f32 %f1, [%rd3];\n"
    "  { .param .b32 pa; .param .b32 pb; .param .b32 pr;\n"
    "    st.param.f32 [pa], %f1;\n    st.param.f32 [pb], 0f40000000;\n"
    "    call.uni (pr), _Z6mul_opff, (pa, pb);\n    ld.param.f32 %f2, [pr]; }\n"
    "  ld.global.f32 %f3, [g_bias];\n  add.f32 %f4, %f2, %f3;\n"
    "  ld.param.u64 %rd4, [out];\n  add.u64 %rd5, %rd4, %rd1;\n  st.global.f32 [%rd5], %f4;\n"
    "  ret;\n}\n";

/* The library: the definitions. */
static const char ops[] = HEAD
    ".visible .global .align 4 .f32 g_bias = 0f3F800000;\n"   /* 1.0 */
    ".visible .func (.param .b32 func_retval0) _Z6mul_opff (.param .b32 a, .param .b32 b)\n{\n"
    "  .reg .f32 %f<4>;\n  ld.param.f32 %f1, [a];\n  ld.param.f32 %f2, [b];\n"
    "  mul.rn.f32 %f3, %f1, %f2;\n  st.param.f32 [func_retval0], %f3;\n  ret;\n}\n";

/* multimem on one device: ld_reduce of the one copy, red on it. */
static const char mm[] = ".version 8.1\n.target sm_90\n.address_size 64\n"
    ".visible .entry mm(.param .u64 p)\n{\n  .reg .b32 %r<3>;\n  .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [p];\n"
    "  multimem.ld_reduce.relaxed.sys.global.add.u32 %r1, [%rd1];\n"
    "  multimem.red.relaxed.sys.global.add.u32 [%rd1+4], %r1;\n"
    "  multimem.st.relaxed.sys.global.u32 [%rd1+8], %r1;\n  ret;\n}\n";

enum { N = 64 };

/* A fatbin container with one stored PTX entry for sm_80, laid out as
 * design.md "Fatbin layout" gives it (the fields this parser reads). */
static size_t fatbin(unsigned char *b, size_t cap, const char *ptx) {
  size_t len = strlen(ptx), padded = (len + 8) & ~(size_t)7;
  if (16 + 64 + padded > cap) return 0;
  memset(b, 0, 16 + 64 + padded);
  unsigned u32;
  unsigned short u16;
  unsigned long long u64;
  u32 = 0xBA55ED50u; memcpy(b, &u32, 4);          /* container magic */
  u16 = 1; memcpy(b + 4, &u16, 2);                 /* version */
  u16 = 16; memcpy(b + 6, &u16, 2);                /* header size */
  u64 = 64 + padded; memcpy(b + 8, &u64, 8);       /* bytes after the header */
  unsigned char *e = b + 16;
  u16 = 1; memcpy(e, &u16, 2);                     /* kind: PTX */
  u16 = 0x0101; memcpy(e + 2, &u16, 2);
  u32 = 64; memcpy(e + 4, &u32, 4);                /* entry header size */
  u64 = padded; memcpy(e + 8, &u64, 8);            /* payload size */
  u16 = 0; memcpy(e + 0x18, &u16, 2);              /* ISA minor, major: 8.0 */
  u16 = 8; memcpy(e + 0x1a, &u16, 2);
  u32 = 80; memcpy(e + 0x1c, &u32, 4);             /* arch: sm_80 */
  u64 = 0x11; memcpy(e + 0x28, &u64, 8);           /* flags: stored, 64-bit */
  memcpy(e + 64, ptx, len);
  return 16 + 64 + padded;
}

static int run_engine(CUfunction f, CUdeviceptr dx, CUdeviceptr dout) {
  void *params[] = {&dx, &dout};
  CK(cuLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, NULL, params, NULL));
  CK(cuCtxSynchronize());
  float out[N];
  CK(cuMemcpyDtoH(out, dout, sizeof out));
  for (unsigned i = 0; i < N; i++)
    if (out[i] != 2.0f * (float)i + 2.0f) {
      fprintf(stderr, "element %u: %g, want %g\n", i, out[i], 2.0f * (float)i + 2.0f);
      return 1;
    }
  CK(cuMemsetD32(dout, 0, N));
  return 0;
}

/* A link of the given inputs that must fail at cuLinkComplete with r and a
 * log containing what. */
static int link_fails(const char *a, const char *b, CUresult want, const char *what) {
  char log[4096] = "";
  CUjit_option o[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *v[] = {log, (void *)(size_t)sizeof log};
  CUlinkState s;
  CK(cuLinkCreate(2, o, v, &s));
  CK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)a, strlen(a) + 1, "a.ptx", 0, NULL, NULL));
  if (b) CK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)b, strlen(b) + 1, "b.ptx", 0, NULL, NULL));
  void *cubin;
  size_t size;
  WANT(cuLinkComplete(s, &cubin, &size), want);
  if (!strstr(log, what)) {
    fprintf(stderr, "error log lacks \"%s\":\n%s\n", what, log);
    return 1;
  }
  CK(cuLinkDestroy(s));
  return 0;
}

int main(void) {
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuCtxCreate(&ctx, NULL, 0, dev));
  int multicast = -1;
  CK(cuDeviceGetAttribute(&multicast, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, dev));
  EXPECT(multicast == 0);

  float x[N];
  for (unsigned i = 0; i < N; i++) x[i] = (float)i + 0.5f;
  CUdeviceptr dx, dout;
  CK(cuMemAlloc(&dx, sizeof x));
  CK(cuMemAlloc(&dout, sizeof x));
  CK(cuMemcpyHtoD(dx, x, sizeof x));

  /* alone, the engine does not load: its symbols are undefined */
  CUmodule m;
  WANT(cuModuleLoadData(&m, engine), CUDA_ERROR_INVALID_PTX);

  /* link, load as a module, run */
  char info[256] = "";
  CUjit_option o[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_OPTIMIZATION_LEVEL};
  void *v[] = {info, (void *)(size_t)sizeof info, (void *)(size_t)3};
  CUlinkState s;
  CK(cuLinkCreate(3, o, v, &s));
  CK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)engine, sizeof engine, "engine.ptx", 0, NULL, NULL));
  CK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)ops, strlen(ops), "ops.ptx", 0, NULL, NULL));
  void *cubin;
  size_t size;
  CK(cuLinkComplete(s, &cubin, &size));
  EXPECT(size > sizeof engine + sizeof ops);
  EXPECT(strstr(info, "linked 2 PTX modules") != NULL);
  CK(cuModuleLoadData(&m, cubin));
  CUfunction f;
  CK(cuModuleGetFunction(&f, m, "engine"));
  if (run_engine(f, dx, dout)) return 1;
  /* the variable the engine declared is the library's, one object */
  CUdeviceptr g;
  size_t gsize;
  CK(cuModuleGetGlobal(&g, &gsize, m, "g_bias"));
  EXPECT(gsize == 4);
  float two = 2.0f;   /* now out[i] = 2i + 1 + 2 */
  CK(cuMemcpyHtoD(g, &two, 4));
  void *params[] = {&dx, &dout};
  CK(cuLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, NULL, params, NULL));
  float out[N];
  CK(cuMemcpyDtoH(out, dout, sizeof out));
  for (unsigned i = 0; i < N; i++) EXPECT(out[i] == 2.0f * (float)i + 3.0f);
  CK(cuModuleUnload(m));

  /* the same image through cuLibraryLoadData, after the state is gone */
  char copy[8192];
  EXPECT(size <= sizeof copy);
  memcpy(copy, cubin, size);
  CK(cuLinkDestroy(s));
  CUlibrary lib;
  CK(cuLibraryLoadData(&lib, copy, NULL, NULL, 0, NULL, NULL, 0));
  CUkernel k;
  CK(cuLibraryGetKernel(&k, lib, "engine"));
  CK(cuKernelGetFunction(&f, k));
  if (run_engine(f, dx, dout)) return 1;
  CK(cuLibraryUnload(lib));

  /* the image given back as an input, in the other order, from a file */
  const char *path = "link_client_ops.ptx";
  FILE *fp = fopen(path, "w");
  EXPECT(fp != NULL);
  fputs(ops, fp);
  fclose(fp);
  CK(cuLinkCreate(0, NULL, NULL, &s));
  CK(cuLinkAddFile(s, CU_JIT_INPUT_PTX, path, 0, NULL, NULL));
  CK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)engine, sizeof engine, "engine.ptx", 0, NULL, NULL));
  CK(cuLinkComplete(s, &cubin, &size));
  CUlinkState s2;
  CK(cuLinkCreate(0, NULL, NULL, &s2));
  CK(cuLinkAddData(s2, CU_JIT_INPUT_CUBIN, cubin, size, "linked", 0, NULL, NULL));
  CK(cuLinkComplete(s2, &cubin, &size));
  CK(cuModuleLoadData(&m, cubin));
  CK(cuModuleGetFunction(&f, m, "engine"));
  if (run_engine(f, dx, dout)) return 1;
  CK(cuModuleUnload(m));
  CK(cuLinkDestroy(s2));
  CK(cuLinkDestroy(s));
  remove(path);

  /* the library as a fatbin with its PTX */
  static unsigned char fb[4096];
  size_t fbn = fatbin(fb, sizeof fb, ops);
  EXPECT(fbn > 0);
  CK(cuLinkCreate(0, NULL, NULL, &s));
  CK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)engine, sizeof engine, "engine.ptx", 0, NULL, NULL));
  CK(cuLinkAddData(s, CU_JIT_INPUT_FATBINARY, fb, fbn, "ops.fatbin", 0, NULL, NULL));
  CK(cuLinkComplete(s, &cubin, &size));
  CK(cuModuleLoadData(&m, cubin));
  CK(cuModuleGetFunction(&f, m, "engine"));
  if (run_engine(f, dx, dout)) return 1;
  CK(cuModuleUnload(m));
  CK(cuLinkDestroy(s));

  /* errors: named in the log, the program goes on */
  if (link_fails(engine, NULL, CUDA_ERROR_INVALID_IMAGE, "undefined symbol '_Z6mul_opff'")) return 1;
  if (link_fails(ops, ops, CUDA_ERROR_INVALID_IMAGE, "symbol '_Z6mul_opff' is multiply defined")) return 1;
  if (link_fails(engine, "garbage", CUDA_ERROR_INVALID_PTX, "b.ptx")) return 1;
  CK(cuLinkCreate(0, NULL, NULL, &s));
  static const char elf[64] = "\177ELF";
  WANT(cuLinkAddData(s, CU_JIT_INPUT_CUBIN, (void *)elf, sizeof elf, "x.cubin", 0, NULL, NULL),
       CUDA_ERROR_NOT_SUPPORTED);
  WANT(cuLinkComplete(s, &cubin, &size), CUDA_ERROR_INVALID_VALUE);  /* nothing added */
  CK(cuLinkDestroy(s));
  WANT(cuLinkDestroy(NULL), CUDA_ERROR_INVALID_HANDLE);

  /* multimem: the one copy */
  CK(cuModuleLoadData(&m, mm));
  CK(cuModuleGetFunction(&f, m, "mm"));
  unsigned w[3] = {7, 5, 0};
  CK(cuMemcpyHtoD(dout, w, sizeof w));
  void *mp[] = {&dout};
  CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, mp, NULL));
  CK(cuMemcpyDtoH(w, dout, sizeof w));
  EXPECT(w[0] == 7 && w[1] == 12 && w[2] == 7);
  CK(cuModuleUnload(m));

  CK(cuMemFree(dx));
  CK(cuMemFree(dout));
  CK(cuCtxDestroy(ctx));
  puts("link_client: ok");
  return 0;
}
