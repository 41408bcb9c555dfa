/* tests/unit/test_runtime.c: libcuda.so.1's entry-point table, error names,
 * the integrity check's MD2, and the kernel cache.
 *
 * The table tests dlopen the built library ($PTXWAVE_LIBCUDA) and read the
 * toolkit's own headers ($PW_CUDA_INCLUDE): every PFN_<name>_v<version> of
 * cudaTypedefs.h must resolve through cuGetProcAddress_v2, and the symbols
 * expected for a few names are written here by hand from cuda.h.  Expected
 * MD2 digests are RFC 1319's test suite.
 */
#include <check.h>
#include <cuda.h>
#include <dlfcn.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptx/container.h"
#include "runtime/rt.h"
#include "runtime/rt_cache.h"
#include "util/pw_file.h"

static void *lib;
static CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static void open_lib(void) {
  const char *p = getenv("PTXWAVE_LIBCUDA");
  ck_assert_msg(p != NULL, "PTXWAVE_LIBCUDA is not set");
  lib = dlopen(p, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(lib != NULL, "dlopen: %s", dlerror());
  gpa = (CUresult(*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *))
      dlsym(lib, "cuGetProcAddress_v2");
  ck_assert_ptr_nonnull(gpa);
}

static const char *include_dir(void) {
  const char *d = getenv("PW_CUDA_INCLUDE");
  return d ? d : "/usr/local/cuda/include";
}

START_TEST(every_pfn_resolves) {
  open_lib();
  char path[512];
  snprintf(path, sizeof path, "%s/cudaTypedefs.h", include_dir());
  char *text = pw_read_file(path, &(size_t){0});
  ck_assert_ptr_nonnull(text);
  regex_t re;
  ck_assert_int_eq(regcomp(&re, "PFN_(cu[A-Za-z0-9_]+)_v([0-9]+)(_ptds|_ptsz)?\\)", REG_EXTENDED), 0);
  int n = 0;
  for (const char *p = text; ; n++) {
    regmatch_t m[4];
    if (regexec(&re, p, 4, m, 0)) break;
    char name[128];
    int len = (int)(m[1].rm_eo - m[1].rm_so);
    snprintf(name, sizeof name, "%.*s", len, p + m[1].rm_so);
    int version = atoi(p + m[2].rm_so);
    bool pt = m[3].rm_so >= 0;
    void *fn = NULL;
    CUdriverProcAddressQueryResult st = -1;
    CUresult r = gpa(name, &fn, version, pt ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0, &st);
    ck_assert_msg(r == CUDA_SUCCESS && fn && st == CU_GET_PROC_ADDRESS_SUCCESS,
                  "%s v%d%s does not resolve", name, version, pt ? " per-thread" : "");
    p += m[0].rm_eo;
  }
  regfree(&re);
  free(text);
  ck_assert_int_gt(n, 600);  /* CUDA 13.0's header has 634 */
}
END_TEST

static void *sym(const char *s) {
  void *p = dlsym(lib, s);
  ck_assert_msg(p != NULL, "%s is not exported", s);
  return p;
}

static void *resolve(const char *name, int version, cuuint64_t flags, CUresult want) {
  void *fn = (void *)1;
  CUdriverProcAddressQueryResult st;
  ck_assert_int_eq(gpa(name, &fn, version, flags, &st), want);
  return fn;
}

START_TEST(versions_and_per_thread_variants) {
  open_lib();
  /* cuda.h: #define cuMemAlloc cuMemAlloc_v2 (3.2); the 2.0 symbol is cuMemAlloc */
  ck_assert_ptr_eq(resolve("cuMemAlloc", 13000, 0, CUDA_SUCCESS), sym("cuMemAlloc_v2"));
  ck_assert_ptr_eq(resolve("cuMemAlloc", 3010, 0, CUDA_SUCCESS), sym("cuMemAlloc"));
  ck_assert_ptr_eq(resolve("cuCtxCreate", 12080, 0, CUDA_SUCCESS), sym("cuCtxCreate_v4"));
  ck_assert_ptr_eq(resolve("cuCtxCreate", 11040, 0, CUDA_SUCCESS), sym("cuCtxCreate_v3"));
  ck_assert_ptr_eq(resolve("cuGetProcAddress", 12000, 0, CUDA_SUCCESS), sym("cuGetProcAddress_v2"));
  /* flags 2: __CUDA_API_PTDS / PTSZ symbols; flags 0 and 1: the legacy ones */
  ck_assert_ptr_eq(resolve("cuMemcpyHtoD", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                           CUDA_SUCCESS), sym("cuMemcpyHtoD_v2_ptds"));
  ck_assert_ptr_eq(resolve("cuMemcpyHtoDAsync", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                           CUDA_SUCCESS), sym("cuMemcpyHtoDAsync_v2_ptsz"));
  ck_assert_ptr_eq(resolve("cuMemcpyHtoD", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, CUDA_SUCCESS),
                   sym("cuMemcpyHtoD_v2"));
  ck_assert_ptr_eq(resolve("cuInit", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                           CUDA_SUCCESS), sym("cuInit"));
  /* too old a version; no such name */
  CUdriverProcAddressQueryResult st;
  void *fn = (void *)1;
  ck_assert_int_eq(gpa("cuLaunchKernelEx", &fn, 11000, 0, &st), CUDA_ERROR_NOT_FOUND);
  ck_assert_int_eq(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  ck_assert_ptr_null(fn);
  ck_assert_int_eq(gpa("cuNoSuchThing", &fn, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
  ck_assert_int_eq(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
}
END_TEST

START_TEST(stub_answers_not_supported) {
  open_lib();
  /* cuGraphicsUnregisterResource (graphics interop) is not implemented:
   * the stub answers NOT_SUPPORTED */
  CUresult (*f)(CUgraphicsResource) = (CUresult(*)(CUgraphicsResource))sym("cuGraphicsUnregisterResource");
  ck_assert_int_eq(f(NULL), CUDA_ERROR_NOT_SUPPORTED);
  ck_assert_int_eq(f(NULL), CUDA_ERROR_NOT_SUPPORTED);
}
END_TEST

/* Every table cuGetExportTable hands out is full: its size word (where it
 * has one) is the slot count docs/runtime.md gives, and no slot is NULL
 * (a caller jumping through one would crash the application).  The slots
 * the libraries were seen to call answer as docs/runtime.md says; a slot of
 * unknown meaning answers NOT_SUPPORTED. */
START_TEST(export_tables_full) {
  open_lib();
  static const struct { const char *uuid; unsigned slots; bool sized; } want[] = {
      {"6bd5fb6c5bf4e74a8987d93912fd9df9", 10, true},   /* CUDART_INTERFACE */
      {"a094798c2e742e7493f20800200c0a66", 7, true},    /* TOOLS_RUNTIME_CALLBACK_HOOKS */
      {"42d85a8123f6cb478298f6e78a3aecdc", 4, true},    /* TOOLS_TLS */
      {"c693336e1121df11a8c368f355d89593", 4, false},   /* CONTEXT_LOCAL_STORAGE */
      {"263e88607cd2614392f6bbd5006dfa7e", 4, true},    /* CONTEXT_CHECKS */
      {"d4082055bde6704b8d34ba123c66e1f2", 3, true},    /* INTEGRITY_CHECK */
      {"21318c6097143248 8ca641ff7324c8f2", 64, true},  /* STREAM_INFO */
      {"6e163fbeb958444d835ce182aff1991e", 64, true},   /* TOOLS_MODULE */
  };
  CUresult (*get)(const void **, const CUuuid *) =
      (CUresult(*)(const void **, const CUuuid *))sym("cuGetExportTable");
  void *const *tab[8];
  for (unsigned t = 0; t < 8; t++) {
    CUuuid id;
    const char *h = want[t].uuid;
    for (int i = 0; i < 16; i++) {
      while (*h == ' ') h++;
      unsigned b;
      sscanf(h, "%2x", &b);
      id.bytes[i] = (char)b;
      h += 2;
    }
    const void *p = NULL;
    ck_assert_int_eq(get(&p, &id), CUDA_SUCCESS);
    void *const *slot = p;
    tab[t] = slot;
    if (want[t].sized) ck_assert_uint_eq((uintptr_t)slot[0], want[t].slots * sizeof(void *));
    for (unsigned i = want[t].sized; i < want[t].slots; i++)
      ck_assert_msg(slot[i] != NULL, "table %u slot %u is NULL", t, i);
  }
  setenv("PTXWAVE_BACKEND", "emu", 1);
  CUresult (*init)(unsigned) = (CUresult(*)(unsigned))sym("cuInit");
  ck_assert_int_eq(init(0), CUDA_SUCCESS);
  /* TOOLS_TLS 2: the current context (the primary one when none is) */
  CUcontext ctx = NULL;
  ck_assert_int_eq(((CUresult(*)(CUcontext *))tab[2][2])(&ctx), CUDA_SUCCESS);
  ck_assert_ptr_nonnull(ctx);
  /* STREAM_INFO 4: cuCtxGetId's key; 51: the default stream; 39: its key */
  unsigned long long want_id = 0;
  uint64_t id = 1;
  ck_assert_int_eq(((CUresult(*)(CUcontext, unsigned long long *))sym("cuCtxGetId"))(ctx, &want_id),
                   CUDA_SUCCESS);
  ck_assert_int_eq(((CUresult(*)(CUcontext, uint64_t *))tab[6][4])(ctx, &id), CUDA_SUCCESS);
  ck_assert_uint_eq(id, want_id);
  void *st = (void *)1;
  ck_assert_int_eq(((CUresult(*)(CUcontext, CUstream, void **, int))tab[6][51])(
                       ctx, CU_STREAM_PER_THREAD, &st, 1), CUDA_SUCCESS);
  ck_assert_ptr_null(st);
  id = 1;
  ck_assert_int_eq(((CUresult(*)(CUcontext, void *, uint64_t *))tab[6][39])(ctx, st, &id),
                   CUDA_SUCCESS);
  ck_assert_uint_eq(id, 0);
  /* slots of unknown meaning */
  ck_assert_int_eq(((CUresult(*)(void))tab[6][5])(), CUDA_ERROR_NOT_SUPPORTED);
  ck_assert_int_eq(((CUresult(*)(void))tab[2][1])(), CUDA_ERROR_NOT_SUPPORTED);
  ck_assert_int_eq(((CUresult(*)(void))tab[0][9])(), CUDA_ERROR_NOT_SUPPORTED);
}
END_TEST

/* Every CUresult in cuda.h has its own name back from cuGetErrorName. */
START_TEST(error_names_and_strings) {
  open_lib();
  CUresult (*name)(CUresult, const char **) = (CUresult(*)(CUresult, const char **))sym("cuGetErrorName");
  CUresult (*str)(CUresult, const char **) = (CUresult(*)(CUresult, const char **))sym("cuGetErrorString");
  char path[512];
  snprintf(path, sizeof path, "%s/cuda.h", include_dir());
  char *text = pw_read_file(path, &(size_t){0});
  ck_assert_ptr_nonnull(text);
  char *start = strstr(text, "typedef enum cudaError_enum {");
  char *end = start ? strstr(start, "} CUresult;") : NULL;
  ck_assert_ptr_nonnull(end);
  *end = 0;
  regex_t re;
  ck_assert_int_eq(regcomp(&re, "\n[ \t]*(CUDA_[A-Z0-9_]+)[ \t]*=[ \t]*([0-9]+)", REG_EXTENDED), 0);
  int n = 0;
  for (const char *p = start;; n++) {
    regmatch_t m[3];
    if (regexec(&re, p, 3, m, 0)) break;
    char want[128];
    snprintf(want, sizeof want, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), p + m[1].rm_so);
    CUresult v = (CUresult)atoi(p + m[2].rm_so);
    const char *got = NULL, *msg = NULL;
    ck_assert_int_eq(name(v, &got), CUDA_SUCCESS);
    ck_assert_str_eq(got, want);
    ck_assert_int_eq(str(v, &msg), CUDA_SUCCESS);
    ck_assert_msg(msg && *msg, "%s has no message", want);
    p += m[0].rm_eo;
  }
  regfree(&re);
  free(text);
  ck_assert_int_gt(n, 90);
  const char *got = (const char *)1;
  ck_assert_int_eq(name((CUresult)12345, &got), CUDA_ERROR_INVALID_VALUE);
  ck_assert_ptr_null(got);
  ck_assert_int_eq(name(CUDA_SUCCESS, NULL), CUDA_ERROR_INVALID_VALUE);
}
END_TEST

/* RFC 1319, A.5 */
/* The runtime's decompression budget (docs/runtime.md): ptx/'s default for
 * the input's size, PTXWAVE_DECOMPRESS_BUDGET_MB in MiB when set (0: no
 * budget), the default again (with a warning) when it is not a number. */
START_TEST(decompress_budget_from_environment) {
  static const char text[] = ".version 8.5\n.target sm_90\n.address_size 64\n";
  pw_diag d;
  pw_diag_init(&d, NULL);
  unsetenv("PTXWAVE_DECOMPRESS_BUDGET_MB");
  ptx_file *f = rt_ptx_file("t", text, sizeof text - 1, &d);
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(f->decompress_budget, (uint64_t)256 << 20);  /* the floor: a tiny input */
  ptx_file_close(f);
  setenv("PTXWAVE_DECOMPRESS_BUDGET_MB", "3", 1);
  f = rt_ptx_file("t", text, sizeof text - 1, &d);
  ck_assert_uint_eq(f->decompress_budget, (uint64_t)3 << 20);
  ptx_file_close(f);
  setenv("PTXWAVE_DECOMPRESS_BUDGET_MB", "0", 1);
  f = rt_ptx_file("t", text, sizeof text - 1, &d);
  ck_assert_uint_eq(f->decompress_budget, 0);
  ptx_file_close(f);
  setenv("PTXWAVE_DECOMPRESS_BUDGET_MB", "12x", 1);
  f = rt_ptx_file("t", text, sizeof text - 1, &d);
  ck_assert_uint_eq(f->decompress_budget, (uint64_t)256 << 20);
  ptx_file_close(f);
  unsetenv("PTXWAVE_DECOMPRESS_BUDGET_MB");
  pw_diag_fini(&d);
}
END_TEST

START_TEST(md2_rfc1319) {
  static const struct { const char *in, *hex; } v[] = {
      {"", "8350e5a3e24c153df2275c9f80692773"},
      {"a", "32ec01ec4a6dac72c0ab96fb34c0b5d1"},
      {"abc", "da853b0d3f88d99b30283a69e6ded6bb"},
      {"message digest", "ab4f496bfb2a530b219ff33031fe06b0"},
      {"abcdefghijklmnopqrstuvwxyz", "4e8ddff3650292ab5a4108c3aa47940b"},
      {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
       "d5976f79d83d3a0dc9806c3c66f3efd8"},
  };
  for (unsigned i = 0; i < sizeof v / sizeof v[0]; i++) {
    uint8_t d[16];
    char hex[33];
    rt_md2((const uint8_t *)v[i].in, strlen(v[i].in), d);
    for (int j = 0; j < 16; j++) snprintf(hex + 2 * j, 3, "%02x", d[j]);
    ck_assert_str_eq(hex, v[i].hex);
  }
}
END_TEST

/* ---- cache ---------------------------------------------------------------- */
static char cache_root[256];

static void fresh_dir(void) {
  snprintf(cache_root, sizeof cache_root, "/tmp/pw_cache_test.%d/sub/ptxwave", (int)getpid());
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf /tmp/pw_cache_test.%d", (int)getpid());
  ck_assert_int_eq(system(cmd), 0);
}

static rt_cache_key key_n(int i, char *buf) {
  sprintf(buf, ".version 8.0\n// kernel %d\n", i);
  return (rt_cache_key){.ptx = buf, .ptx_len = strlen(buf), .target = "gfx942",
                        .compiler = "llvm-22", .options = "-O3"};
}

START_TEST(cache_write_hit_and_private_dir) {
  fresh_dir();
  rt_cache *c = rt_cache_open(cache_root, 1 << 20);
  ck_assert_ptr_nonnull(c);
  struct stat sb;
  ck_assert_int_eq(stat(cache_root, &sb), 0);
  ck_assert_int_eq(sb.st_mode & 0777, 0700);
  char b[64];
  rt_cache_key k = key_n(1, b);
  void *data;
  size_t len;
  ck_assert(!rt_cache_get(c, &k, &data, &len));
  ck_assert(rt_cache_put(c, &k, "hsaco-bytes", 11));
  ck_assert(rt_cache_get(c, &k, &data, &len));
  ck_assert_uint_eq(len, 11);
  ck_assert(!memcmp(data, "hsaco-bytes", 11));
  free(data);
  /* each key part matters */
  rt_cache_key k2 = k;
  k2.target = "gfx90a";
  ck_assert(!rt_cache_get(c, &k2, &data, &len));
  k2 = k;
  k2.options = "-O2";
  ck_assert(!rt_cache_get(c, &k2, &data, &len));
  rt_cache_stats st;
  rt_cache_get_stats(c, &st);
  ck_assert_uint_eq(st.hits, 1);
  ck_assert_uint_eq(st.misses, 3);
  ck_assert_uint_eq(st.stores, 1);
  rt_cache_close(c);
}
END_TEST

/* The code object key names codegen's defaults (pipeline, backend
 * options): a build that changes them must not load what an older build
 * cached under the same version. */
START_TEST(code_object_key_names_codegen_defaults) {
  const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n";
  rt_cache_key k = rt_code_object_key(ptx, strlen(ptx), "gfx942");
  ck_assert_ptr_nonnull(strstr(k.options, "-amdgpu-scalar-ir-passes=0"));
  ck_assert_ptr_nonnull(strstr(k.options, "-disable-lsr"));
  ck_assert_ptr_nonnull(strstr(k.options, "-cgpp-huge-func=500"));
  ck_assert_ptr_nonnull(strstr(k.options, "-disable-postra-machine-licm"));
  ck_assert_ptr_nonnull(strstr(k.options, "amdgpu-attributor"));
  ck_assert_ptr_nonnull(strstr(k.options, "store-copies:300"));
  rt_cache_key old = k;
  old.options = "";
  char a[33], b[33];
  rt_cache_key_hex(&k, a);
  rt_cache_key_hex(&old, b);
  ck_assert_str_ne(a, b);
}
END_TEST

static void entry_file(const rt_cache_key *k, char *path, size_t cap) {
  char hex[33];
  rt_cache_key_hex(k, hex);
  snprintf(path, cap, "%s/%s.pwc", cache_root, hex);
}

START_TEST(cache_truncated_or_altered_is_rebuilt) {
  fresh_dir();
  rt_cache *c = rt_cache_open(cache_root, 1 << 20);
  ck_assert_ptr_nonnull(c);
  char b[64], path[512];
  rt_cache_key k = key_n(2, b);
  const char payload[] = "0123456789abcdef0123456789abcdef";
  void *data;
  size_t len;
  entry_file(&k, path, sizeof path);
  /* truncated */
  ck_assert(rt_cache_put(c, &k, payload, sizeof payload));
  ck_assert_int_eq(truncate(path, 60), 0);
  ck_assert(!rt_cache_get(c, &k, &data, &len));
  ck_assert_int_ne(access(path, F_OK), 0);  /* removed */
  /* altered payload byte */
  ck_assert(rt_cache_put(c, &k, payload, sizeof payload));
  FILE *f = fopen(path, "r+b");
  ck_assert_ptr_nonnull(f);
  fseek(f, 48 + 5, SEEK_SET);
  fputc('X', f);
  fclose(f);
  ck_assert(!rt_cache_get(c, &k, &data, &len));
  /* rebuilt: stored again and read back */
  ck_assert(rt_cache_put(c, &k, payload, sizeof payload));
  ck_assert(rt_cache_get(c, &k, &data, &len));
  ck_assert(!memcmp(data, payload, sizeof payload));
  free(data);
  rt_cache_stats st;
  rt_cache_get_stats(c, &st);
  ck_assert_uint_eq(st.corrupt, 2);
  rt_cache_close(c);
}
END_TEST

START_TEST(cache_evicts_least_recently_used) {
  fresh_dir();
  rt_cache *c = rt_cache_open(cache_root, 10 * 1100);  /* room for ~10 entries of 1 KiB */
  ck_assert_ptr_nonnull(c);
  char payload[1024];
  memset(payload, 7, sizeof payload);
  char b[64];
  for (int i = 0; i < 30; i++) {
    rt_cache_key k = key_n(100 + i, b);
    ck_assert(rt_cache_put(c, &k, payload, sizeof payload));
    /* keep entry 100 in use */
    rt_cache_key k0 = key_n(100, b);
    void *d;
    size_t n;
    ck_assert_msg(rt_cache_get(c, &k0, &d, &n), "the entry in use was evicted at %d", i);
    free(d);
    usleep(2000);
  }
  rt_cache_stats st;
  rt_cache_get_stats(c, &st);
  ck_assert_uint_ge(st.evicted, 19);
  rt_cache_key k1 = key_n(101, b);
  void *d;
  size_t n;
  ck_assert(!rt_cache_get(c, &k1, &d, &n));  /* an old, unused one is gone */
  rt_cache_close(c);
}
END_TEST

/* One entry bigger than what eviction keeps (90% of the bound) empties the
 * cache of the others but stays: the entry just written is never evicted
 * (with coarse mtimes it may sort among the oldest). */
START_TEST(cache_spares_the_entry_just_written) {
  fresh_dir();
  setenv("PTXWAVE_CACHE_MAX_ENTRY_MB", "1", 1);  /* the size limit out of the way */
  rt_cache *c = rt_cache_open(cache_root, 8000);
  unsetenv("PTXWAVE_CACHE_MAX_ENTRY_MB");
  ck_assert_ptr_nonnull(c);
  static char payload[7500];
  memset(payload, 3, sizeof payload);
  char b[64];
  for (int i = 0; i < 3; i++) {
    rt_cache_key k = key_n(200 + i, b);
    ck_assert(rt_cache_put(c, &k, payload, 1000));
  }
  rt_cache_key big = key_n(300, b);
  ck_assert(rt_cache_put(c, &big, payload, sizeof payload));   /* 7548 bytes > 7200 */
  void *d;
  size_t n;
  ck_assert_msg(rt_cache_get(c, &big, &d, &n), "the entry just written was evicted");
  ck_assert_uint_eq(n, sizeof payload);
  free(d);
  rt_cache_stats st;
  rt_cache_get_stats(c, &st);
  ck_assert_uint_eq(st.evicted, 3);
  rt_cache_close(c);
}
END_TEST

/* An entry above the limit (a quarter of the bound by default) is refused
 * and counted; one below it is stored. */
START_TEST(cache_refuses_oversized_entries) {
  fresh_dir();
  unsetenv("PTXWAVE_CACHE_MAX_ENTRY_MB");
  rt_cache *c = rt_cache_open(cache_root, 8000);  /* entries up to 2000 bytes */
  ck_assert_ptr_nonnull(c);
  static char payload[2500];
  char b[64];
  rt_cache_key k = key_n(400, b);
  ck_assert(!rt_cache_put(c, &k, payload, 2000));  /* 2048 with the header */
  void *d;
  size_t n;
  ck_assert(!rt_cache_get(c, &k, &d, &n));
  ck_assert(rt_cache_put(c, &k, payload, 1900));
  ck_assert(rt_cache_get(c, &k, &d, &n));
  free(d);
  rt_cache_stats st;
  rt_cache_get_stats(c, &st);
  ck_assert_uint_eq(st.refused, 1);
  ck_assert_uint_eq(st.stores, 1);
  rt_cache_close(c);
}
END_TEST

/* A write that cannot happen (here the temporary file's name is taken by a
 * directory, which fails even for root) fails the put and is counted. */
START_TEST(cache_write_failure_is_counted) {
  fresh_dir();
  rt_cache *c = rt_cache_open(cache_root, 1 << 20);
  ck_assert_ptr_nonnull(c);
  char tmp[PATH_MAX + 96];
  snprintf(tmp, sizeof tmp, "%s/.tmp.%ld.%lx", cache_root, (long)getpid(), (unsigned long)pthread_self());
  ck_assert_int_eq(mkdir(tmp, 0700), 0);
  char b[64], payload[100] = {0};
  rt_cache_key k = key_n(500, b);
  ck_assert(!rt_cache_put(c, &k, payload, sizeof payload));
  ck_assert(!rt_cache_put(c, &k, payload, sizeof payload));
  rt_cache_stats st;
  rt_cache_get_stats(c, &st);
  ck_assert_uint_eq(st.write_failures, 2);
  ck_assert_uint_eq(st.stores, 0);
  rmdir(tmp);
  ck_assert(rt_cache_put(c, &k, payload, sizeof payload));
  rt_cache_close(c);
}
END_TEST

/* Two processes store and read the same keys at once; every entry read is
 * whole, and afterwards every entry verifies. */
START_TEST(cache_two_processes) {
  fresh_dir();
  rt_cache *c0 = rt_cache_open(cache_root, 1 << 24);
  ck_assert_ptr_nonnull(c0);
  pid_t kids[2];
  for (int p = 0; p < 2; p++) {
    kids[p] = fork();
    if (kids[p] == 0) {
      rt_cache *c = rt_cache_open(cache_root, 1 << 24);
      int bad = !c;
      char b[64], payload[4096];
      for (int round = 0; round < 200 && !bad; round++) {
        int i = round % 20;
        rt_cache_key k = key_n(i, b);
        memset(payload, 'a' + i, sizeof payload);
        void *d;
        size_t n;
        if (rt_cache_get(c, &k, &d, &n)) {
          bad |= n != sizeof payload || memcmp(d, payload, n);
          free(d);
        } else {
          bad |= !rt_cache_put(c, &k, payload, sizeof payload);
        }
      }
      rt_cache_stats st;
      rt_cache_get_stats(c, &st);
      bad |= st.corrupt != 0;
      _exit(bad);
    }
  }
  for (int p = 0; p < 2; p++) {
    int status;
    ck_assert_int_eq(waitpid(kids[p], &status, 0), kids[p]);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  char b[64], payload[4096];
  for (int i = 0; i < 20; i++) {
    rt_cache_key k = key_n(i, b);
    memset(payload, 'a' + i, sizeof payload);
    void *d;
    size_t n;
    ck_assert(rt_cache_get(c0, &k, &d, &n));
    ck_assert(n == sizeof payload && !memcmp(d, payload, n));
    free(d);
  }
  rt_cache_close(c0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("runtime");
  TCase *t = tcase_create("table");
  tcase_add_test(t, every_pfn_resolves);
  tcase_add_test(t, versions_and_per_thread_variants);
  tcase_add_test(t, stub_answers_not_supported);
  tcase_add_test(t, export_tables_full);
  tcase_add_test(t, error_names_and_strings);
  tcase_add_test(t, decompress_budget_from_environment);
  tcase_add_test(t, md2_rfc1319);
  suite_add_tcase(s, t);
  TCase *tc = tcase_create("cache");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, cache_write_hit_and_private_dir);
  tcase_add_test(tc, code_object_key_names_codegen_defaults);
  tcase_add_test(tc, cache_truncated_or_altered_is_rebuilt);
  tcase_add_test(tc, cache_evicts_least_recently_used);
  tcase_add_test(tc, cache_spares_the_entry_just_written);
  tcase_add_test(tc, cache_refuses_oversized_entries);
  tcase_add_test(tc, cache_write_failure_is_counted);
  tcase_add_test(tc, cache_two_processes);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? 1 : 0;
}
