/* tools/cmd_jit.c: `ptxwave jit IN.ptx OUT.hsaco ARCH [NAME [COMPILER]]`, the helper
 * process of the runtime's just-in-time compiles (runtime/rt_backend_hip.c,
 * docs/runtime.md "JIT"): one PTX module to one code object through
 * cg_compile_ptx, the entry `ptxwave compile` and `ptxwave convert` use.
 *
 * Running the compile here rather than in the application means an LLVM
 * fatal error ends this process only; the runtime turns that into a failed
 * module load.  COMPILER is the runtime's RT_CODE_OBJECT_COMPILER: a helper
 * of another ptxwave version (an install next to an older build) refuses,
 * since the runtime caches what it returns under its own version.  Exit
 * status: 0 written, 1 the module does not compile (the messages on
 * stderr), 2 usage or I/O, 3 another version.
 *
 * PTXWAVE_JIT_TIMEOUT=S (seconds, default 600, 0 none) bounds the compile:
 * a helper still running after S seconds ends on SIGALRM (alarm(2)), and
 * the runtime fails the module load naming the limit, instead of the
 * application waiting forever on a compile that never ends.
 *
 * PTXWAVE_JIT_PARENT=PID (set by the runtime): the helper dies with the
 * application.  PR_SET_PDEATHSIG sends it SIGTERM when the process that
 * started it ends (then its parent is no longer PID: checked once after
 * the prctl, for a parent that died before it), and the SIGTERM handler
 * removes the runtime's temporary directory (IN's directory: in.ptx,
 * out.hsaco, log.txt) before it exits, since nobody else is left to.
 * Without it an application killed mid-compile left the helper compiling
 * up to its time limit and the directory behind.
 *
 * PTXWAVE_JIT_TEST_CRASH=1 (tests only) aborts once the PTX is read, as an
 * LLVM fatal error would: the runtime's tests check the application
 * survives it.  PTXWAVE_JIT_TEST_CRASH=hang waits forever instead (the
 * time limit's test).
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "pw_config.h"
#include "runtime/rt_cache.h"
#include "tools.h"
#include "util/pw_file.h"

/* The runtime's temporary directory and its files, for the SIGTERM
 * handler (async-signal-safe: unlink, rmdir, _exit only).  A process-wide
 * table is what a signal handler can reach; the helper is one compile. */
static char tmp_files[3][PATH_MAX + 16], tmp_dir[PATH_MAX];

static void parent_gone(int sig) {
  for (int i = 0; i < 3; i++)
    if (tmp_files[i][0]) unlink(tmp_files[i]);
  if (tmp_dir[0]) rmdir(tmp_dir);
  _exit(128 + sig);
}

static void die_with_parent(const char *in) {
  const char *p = getenv("PTXWAVE_JIT_PARENT");
  if (!p || !*p) return;
  const char *slash = strrchr(in, '/');
  size_t n = slash ? (size_t)(slash - in) : 0;
  if (n && n < sizeof tmp_dir) {
    memcpy(tmp_dir, in, n);
    tmp_dir[n] = 0;
    static const char *names[3] = {"in.ptx", "out.hsaco", "log.txt"};
    for (int i = 0; i < 3; i++) snprintf(tmp_files[i], sizeof tmp_files[i], "%s/%s", tmp_dir, names[i]);
  }
  struct sigaction sa = {.sa_handler = parent_gone};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if ((long)getppid() != atol(p)) parent_gone(SIGTERM);   /* it died before the prctl */
}

int cmd_jit(int argc, char **argv) {
  if (argc < 4 || argc > 6 || cmd_is_help(argv[1])) {
    fprintf(argc > 1 && cmd_is_help(argv[1]) ? stdout : stderr,
            "usage: ptxwave jit IN.ptx OUT.hsaco ARCH [NAME [COMPILER]]\n"
            "The runtime's just-in-time compile helper: PTX to a code object for ARCH\n"
            "(NAME, the module's name, in messages; COMPILER, the version the runtime\n"
            "expects).  Exit 0 written, 1 does not compile, 3 another version.\n");
    return argc > 1 && cmd_is_help(argv[1]) ? 0 : 2;
  }
  if (argc > 5 && strcmp(argv[5], RT_CODE_OBJECT_COMPILER)) {
    fprintf(stderr, "ptxwave jit: this helper is %s, the runtime expects %s\n",
            RT_CODE_OBJECT_COMPILER, argv[5]);
    return 3;
  }
  const char *in = argv[1], *out = argv[2], *arch = argv[3], *name = argc > 4 ? argv[4] : in;
  die_with_parent(in);
  const ir_target *t = cg_target_find(arch);
  if (!t) {
    fprintf(stderr, "ptxwave jit: no code generator for %s\n", arch);
    return 1;
  }
  size_t len = 0;
  char *ptx = pw_read_file(in, &len);
  if (!ptx) {
    fprintf(stderr, "ptxwave jit: cannot read %s\n", in);
    return 2;
  }
  const char *lim = getenv("PTXWAVE_JIT_TIMEOUT");
  char *end = NULL;
  unsigned long secs = lim && *lim ? strtoul(lim, &end, 10) : 600;
  if (lim && *lim && (*end || secs > 86400)) {
    fprintf(stderr, "ptxwave jit: PTXWAVE_JIT_TIMEOUT=%s: expected seconds (0 to 86400)\n", lim);
    return 2;
  }
  if (secs) alarm((unsigned)secs);
  const char *crash = getenv("PTXWAVE_JIT_TEST_CRASH");
  if (crash && !strcmp(crash, "hang"))
    for (;;) pause();
  if (crash && *crash == '1') {
    fprintf(stderr, "LLVM ERROR: injected by PTXWAVE_JIT_TEST_CRASH (tests only)\n");
    fflush(stderr);
    abort();
  }
  pw_diag d;
  pw_diag_init(&d, stderr);
  cg_output o;
  bool ok = cg_compile_ptx(name, ptx, len, &(cg_options){.target = t}, CG_EMIT_HSACO, &o, &d);
  pw_diag_fini(&d);
  free(ptx);
  if (!ok) return 1;
  FILE *f = fopen(out, "wb");
  bool wrote = f && fwrite(o.data, 1, o.size, f) == o.size;
  if (f && fclose(f)) wrote = false;
  free(o.data);
  if (!wrote) {
    fprintf(stderr, "ptxwave jit: cannot write %s\n", out);
    return 2;
  }
  return 0;
}
