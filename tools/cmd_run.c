/* tools/cmd_run.c: ptxwave run [--backend B] [--log LEVEL] -- PROGRAM ARGS...
 *
 * Runs an unmodified CUDA program with ptxwave's libcuda.so.1 first on its
 * library path: NVIDIA's cudart (static or shared) dlopens "libcuda.so.1",
 * and the dynamic loader finds ours.  The library is looked for in
 * $PTXWAVE_LIBDIR, then next to this executable in the build tree
 * (../runtime) and in an installed tree (../lib/ptxwave, ../lib).
 *
 * It also preloads ptxwave's forwarding layer (libptxwave_forward.so, next
 * to libcuda.so.1 or in the build tree's forward/), which stands in front of
 * NVIDIA's libraries and runs, with kernels of its own, the calls for which
 * they pick a kernel they ship as SASS only (docs/runtime.md "The
 * forwarding layer"; docs/decisions.md for why a preload).
 *
 * In a sanitized build (meson -Db_sanitize=...) libcuda.so.1 links the
 * sanitizer runtimes, and ASan must be the first library of a process
 * ("ASan runtime does not come first in initial library list" otherwise:
 * cudart dlopens libcuda.so.1 long after startup).  Only the loader's
 * LD_PRELOAD can put it there in a program we do not build, so this build
 * preloads the runtimes its compiler links (PW_SANITIZER_PRELOAD, set by
 * tools/meson.build) and, unless LSAN_OPTIONS already names suppressions,
 * the leak suppressions for NVIDIA's closed libraries (runtime/
 * nvidia.lsan.supp): their leaks are theirs, ours are still reported.
 * docs/runtime.md "Sanitizer builds" has why here and not in the tests.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ptxwave run [--backend auto|hip|emu] [--log LEVEL] [--] PROGRAM [ARGS...]\n"
          "  runs PROGRAM with ptxwave's libcuda.so.1 (the CUDA driver on AMD GPUs or\n"
          "  the emulator); LEVEL is error, warn, info, debug or trace (PTXWAVE_LOG).\n");
}

static bool has_lib(const char *dir) {
  char p[2 * PATH_MAX];
  snprintf(p, sizeof p, "%s/libcuda.so.1", dir);
  return access(p, R_OK) == 0;
}

/* The directory holding libcuda.so.1, or NULL. */
static const char *find_libdir(char *buf, size_t cap) {
  const char *env = getenv("PTXWAVE_LIBDIR");
  if (env && *env) return has_lib(env) ? env : NULL;
  char exe[PATH_MAX];  /* the directory of this executable */
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return NULL;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash) return NULL;
  *slash = 0;
  static const char *const rel[] = {"../runtime", "../lib/ptxwave", "../lib"};
  for (unsigned i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    char d[PATH_MAX + 32];
    snprintf(d, sizeof d, "%s/%s", exe, rel[i]);
    if (has_lib(d) && realpath(d, buf)) return buf;
  }
  (void)cap;
  return NULL;
}

/* Sets NAME to FIRST, then SEP and the old value if there is one; false
 * when out of memory. */
static bool prepend_env(const char *name, const char *first, const char *sep) {
  const char *old = getenv(name);
  size_t len = strlen(first) + (old ? strlen(old) : 0) + strlen(sep) + 1;
  char *v = malloc(len);
  if (!v) return false;
  snprintf(v, len, "%s%s%s", first, old && *old ? sep : "", old && *old ? old : "");
  setenv(name, v, 1);
  free(v);
  return true;
}

/* The forwarding layer: next to libcuda.so.1 (installed, $PTXWAVE_LIBDIR),
 * else in the build tree beside runtime/ (forward/); NULL without one. */
static const char *find_forward(const char *libdir, char *buf, size_t cap) {
  static const char *const rel[] = {"", "/../forward"};
  for (unsigned i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    char p[2 * PATH_MAX];
    snprintf(p, sizeof p, "%s%s/libptxwave_forward.so", libdir, rel[i]);
    if (access(p, R_OK) == 0 && realpath(p, buf)) return buf;
  }
  (void)cap;
  return NULL;
}

#ifdef PW_SANITIZER_PRELOAD
static bool sanitizer_env(void) {
  const char *pre = getenv("LD_PRELOAD");
  if (!pre || !strstr(pre, PW_SANITIZER_PRELOAD))
    if (!prepend_env("LD_PRELOAD", PW_SANITIZER_PRELOAD, ":")) return false;
  const char *lsan = getenv("LSAN_OPTIONS");
  if (lsan && strstr(lsan, "suppressions=")) return true;
  /* the sanitizer runtimes take the last of repeated options: ours last */
  const char *opt = "suppressions=" PW_LSAN_SUPPRESSIONS;
  if (!lsan || !*lsan) return setenv("LSAN_OPTIONS", opt, 1) == 0;
  size_t len = strlen(lsan) + strlen(opt) + 2;
  char *v = malloc(len);
  if (!v) return false;
  snprintf(v, len, "%s:%s", lsan, opt);
  setenv("LSAN_OPTIONS", v, 1);
  free(v);
  return true;
}
#else
static bool sanitizer_env(void) { return true; }
#endif

int cmd_run(int argc, char **argv) {
  const char *backend = NULL, *log = NULL;
  int i = 1;
  for (; i < argc; i++) {
    if (cmd_is_help(argv[i])) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
      backend = argv[++i];
    } else if (!strcmp(argv[i], "--log") && i + 1 < argc) {
      log = argv[++i];
    } else if (!strcmp(argv[i], "--")) {
      i++;
      break;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "ptxwave run: unknown option %s\n", argv[i]);
      usage(stderr);
      return 2;
    } else {
      break;
    }
  }
  if (i >= argc) {
    usage(stderr);
    return 2;
  }
  if (backend && strcmp(backend, "auto") && strcmp(backend, "hip") && strcmp(backend, "emu")) {
    fprintf(stderr, "ptxwave run: --backend must be auto, hip or emu\n");
    return 2;
  }
  char buf[PATH_MAX];
  const char *dir = find_libdir(buf, sizeof buf);
  if (!dir) {
    fprintf(stderr, "ptxwave run: libcuda.so.1 not found (set PTXWAVE_LIBDIR)\n");
    return 1;
  }
  char fwd_buf[PATH_MAX];
  const char *fwd = find_forward(dir, fwd_buf, sizeof fwd_buf);
  const char *pre = getenv("LD_PRELOAD");
  bool fwd_ok = !fwd || (pre && strstr(pre, fwd)) || prepend_env("LD_PRELOAD", fwd, ":");
  /* the sanitizer runtimes go first, before the layer (sanitizer_env) */
  if (!prepend_env("LD_LIBRARY_PATH", dir, ":") || !fwd_ok || !sanitizer_env()) {
    fprintf(stderr, "ptxwave run: out of memory\n");
    return 1;
  }
  if (backend) setenv("PTXWAVE_BACKEND", backend, 1);
  if (log) setenv("PTXWAVE_LOG", log, 1);
  execvp(argv[i], argv + i);
  fprintf(stderr, "ptxwave run: %s: %s\n", argv[i], strerror(errno));
  return 127;
}
