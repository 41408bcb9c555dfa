/* runtime/rt_api.c: the entry-point table (rt_api.def) turned into
 * cuGetProcAddress/_v2, the "not supported" stubs, the per-thread-stream
 * aliases, and cuGetErrorName/cuGetErrorString (rt_errors.def).
 *
 * cuGetProcAddress(name, version, flags): among the rows of `name`, those of
 * the stream kind that flags ask for (CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM:
 * the _ptds/_ptsz rows when the name has them; otherwise the plain rows),
 * the newest whose version <= the requested one.  A name whose rows are
 * all newer answers CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT; an unknown
 * name CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND (both CUDA_ERROR_NOT_FOUND), as
 * NVIDIA's driver does.
 */
#include <stdatomic.h>
#include <string.h>

#include "runtime/rt.h"

#define PTDS 1
#define PTSZ 2

/* ---- stubs: one per unimplemented symbol ------------------------------- */
static void not_supported(const char *name, atomic_flag *once) {
  if (!atomic_flag_test_and_set(once))
    RT_LOG(rt_warn, "%s is not supported (CUDA_ERROR_NOT_SUPPORTED)", name);
}

/* A stub takes no arguments: the x86-64 and AArch64 C ABIs let a callee
 * ignore the arguments its caller passed. */
#define RT_API(name, version, pt, symbol, impl) RT_STUB_##impl(symbol)
#define RT_STUB_0(symbol)                                                     \
  RT_EXPORT int rt_stub_##symbol(void) __asm__(#symbol);                      \
  int rt_stub_##symbol(void) {                                                \
    static atomic_flag once = ATOMIC_FLAG_INIT;                               \
    not_supported(#symbol, &once);                                            \
    return CUDA_ERROR_NOT_SUPPORTED;                                          \
  }
#define RT_STUB_1(symbol)
#define RT_STUB_2(symbol)
/* cuda.h renames many of these names to their newest symbol; the stubs and
 * the table use the symbols themselves. */
#include "runtime/rt_api_undef.h"
#undef cuGetProcAddress_v2
#include "runtime/rt_api.def"
#undef RT_API

/* Per-thread default stream variants of implemented symbols jump to the
 * implementation: every backend stream operation already orders work as the
 * per-thread default stream requires (docs/runtime.md, "Streams"). */
#if defined(__x86_64__)
#define RT_JUMP(sym, target)                                                  \
  __asm__(".globl " #sym "\n.type " #sym ", @function\n" #sym ":\n"           \
          "  jmp " #target "@PLT\n.size " #sym ", .-" #sym "\n");
#elif defined(__aarch64__)
#define RT_JUMP(sym, target)                                                  \
  __asm__(".globl " #sym "\n.type " #sym ", @function\n" #sym ":\n"           \
          "  b " #target "\n.size " #sym ", .-" #sym "\n");
#else
#error "per-thread aliases: add this architecture's tail jump"
#endif
#define RT_API(name, version, pt, symbol, impl) RT_ALIAS_##impl##_##pt(symbol)
#define RT_ALIAS_0_0(s)
#define RT_ALIAS_0_PTDS(s)
#define RT_ALIAS_0_PTSZ(s)
#define RT_ALIAS_1_0(s)
#define RT_ALIAS_1_PTDS(s)
#define RT_ALIAS_1_PTSZ(s)
#define RT_ALIAS_2_0(s)
#define RT_ALIAS_2_PTDS(s) RT_JUMP_X(s, RT_BASE_OF_##s)
#define RT_ALIAS_2_PTSZ(s) RT_JUMP_X(s, RT_BASE_OF_##s)
#define RT_JUMP_X(s, t) RT_JUMP(s, t)
#include "runtime/rt_api_alias.h"
#include "runtime/rt_api.def"
#undef RT_API

/* ---- the table -------------------------------------------------------- */
#define RT_API(name, version, pt, symbol, impl) extern char rt_sym_##symbol[] __asm__(#symbol);
#include "runtime/rt_api.def"
#undef RT_API

typedef struct rt_api_row {
  const char *name;
  int version;
  int pt;
  void *fn;
  int impl;
} rt_api_row;

static const rt_api_row rows[] = {
#define RT_API(name, version, pt, symbol, impl) {#name, version, pt, (void *)rt_sym_##symbol, impl},
#include "runtime/rt_api.def"
#undef RT_API
};
#define NROWS (sizeof rows / sizeof rows[0])

/* Rows of one name are adjacent (the .def is sorted by name). */
static CUresult lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status) {
  if (pfn) *pfn = NULL;
  if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
  int want_pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const rt_api_row *best = NULL, *best_plain = NULL;
  bool found = false;
  for (size_t i = 0; i < NROWS; i++) {
    if (strcmp(rows[i].name, symbol)) continue;
    found = true;
    if (rows[i].version > version) continue;
    if (rows[i].pt == 0) {
      if (!best_plain || rows[i].version >= best_plain->version) best_plain = &rows[i];
    } else if (want_pt) {
      if (!best || rows[i].version >= best->version) best = &rows[i];
    }
  }
  if (!best) best = best_plain;
  if (!best) {
    if (status)
      *status = found ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                      : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    RT_LOG(rt_debug, "cuGetProcAddress(%s, %d): %s", symbol, version,
           found ? "version not sufficient" : "no such symbol");
    return CUDA_ERROR_NOT_FOUND;
  }
  *pfn = best->fn;
  if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  RT_LOG(rt_trace, "cuGetProcAddress(%s, %d, flags %llu) -> %p%s", symbol, version,
         (unsigned long long)flags, best->fn, best->impl ? "" : " (not supported)");
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags) {
  return lookup(symbol, pfn, cudaVersion, flags, NULL);
}

RT_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                       cuuint64_t flags, CUdriverProcAddressQueryResult *status) {
  return lookup(symbol, pfn, cudaVersion, flags, status);
}

/* ---- errors ----------------------------------------------------------- */
static const struct {
  CUresult r;
  const char *name, *msg;
} errors[] = {
#define RT_ERROR(name, value, msg) {name, #name, msg},
#include "runtime/rt_errors.def"
#undef RT_ERROR
};

const char *rt_error_name(CUresult r) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].r == r) return errors[i].name;
  return "CUDA_ERROR_UNKNOWN";
}

CUresult rt_ret_(const char *fn, CUresult r) {
  if (r != CUDA_SUCCESS)
    RT_LOG(rt_trace <= rt_log_level ? rt_trace : rt_debug, "%s -> %s", fn, rt_error_name(r));
  else
    RT_LOG(rt_trace, "%s -> CUDA_SUCCESS", fn);
  return r;
}

RT_EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].r == error) {
      *pStr = errors[i].name;
      return CUDA_SUCCESS;
    }
  *pStr = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

RT_EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].r == error) {
      *pStr = errors[i].msg;
      return CUDA_SUCCESS;
    }
  *pStr = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}
