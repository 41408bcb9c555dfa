/* tools/cmd_emulate.c: `ptxwave emulate FILE --kernel NAME --grid X,Y,Z
 * --block X,Y,Z [--shared BYTES] [--memcheck] [--threads N] [--wave N]
 * [--stats] [--no-verify] [--cooperative] ARGS...`
 *
 * Runs one kernel of a PTX (or .pwir) file in the emulator, so a kernel can
 * be run and checked from a shell script.  Each ARG is one kernel
 * parameter, in order:
 *   u8:V u16:V u32:V u64:V s8:V s16:V s32:V s64:V f32:V f64:V
 *                       a scalar (integers in C syntax: 5, -1, 0x10)
 *   in:FILE             a device buffer holding FILE's bytes
 *   out:FILE:BYTES      a zeroed device buffer of BYTES, written to FILE after
 *   inout:FILE          a buffer holding FILE's bytes, written back after
 *   zero:BYTES          a zeroed device buffer, not written anywhere
 * Buffers are passed as 64-bit device pointers.
 * Exit status: 0 success, 1 the module or the launch failed (the message
 * says why, where), 2 bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/emu.h"
#include "ir/ir.h"
#include "lower/lower.h"
#include "ptx/ptx_parse.h"
#include "tools.h"
#include "util/diag.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ptxwave emulate FILE --kernel NAME --grid X[,Y[,Z]] --block X[,Y[,Z]]\n"
          "                       [--shared BYTES] [--memcheck] [--threads N] [--wave 32|64]\n"
          "                       [--stats] [--no-verify] [--cooperative] ARGS...\n"
          "\n"
          "Runs a kernel of a PTX file (or IR text, .pwir) in ptxwave's emulator.\n"
          "Each ARG gives one kernel parameter, in order:\n"
          "  u8:V u16:V u32:V u64:V s8:V s16:V s32:V s64:V f32:V f64:V   a scalar\n"
          "  in:FILE          a device buffer with FILE's bytes\n"
          "  out:FILE:BYTES   a zeroed buffer of BYTES, written to FILE after the run\n"
          "  inout:FILE       a buffer with FILE's bytes, written back after the run\n"
          "  zero:BYTES       a zeroed buffer\n"
          "Options:\n"
          "  --shared BYTES   dynamic shared memory per block\n"
          "  --memcheck       report use after free (bounds are always checked)\n"
          "  --threads N      host threads (default: number of cores)\n"
          "  --wave N         wave size (default: the module's, 32 for PTX)\n"
          "  --stats          print instructions and lane operations executed\n"
          "  --no-verify      run the IR even if the verifier rejects it\n"
          "  --cooperative    a cooperative launch: every block resident, grid.sync() works\n"
          "Exit status: 0 success, 1 failure (with a message), 2 bad usage.\n");
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    size_t r = fread(buf + n, 1, cap - n, f);
    n += r;
    if (n < cap) break;
    cap *= 2;
    char *nb = realloc(buf, cap + 1);
    if (!nb) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
  }
  if (buf && ferror(f)) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) buf[n] = 0;
  *len = n;
  return buf;
}

static bool parse_dim(const char *s, emu_dim3 *d) {
  unsigned long v[3] = {1, 1, 1};
  char *end;
  for (int i = 0; i < 3; i++) {
    errno = 0;
    v[i] = strtoul(s, &end, 0);
    if (end == s || errno || v[i] == 0 || v[i] > 0xffffffffu) return false;
    if (!*end) break;
    if (*end != ',' || i == 2) return false;
    s = end + 1;
  }
  d->x = (uint32_t)v[0];
  d->y = (uint32_t)v[1];
  d->z = (uint32_t)v[2];
  return true;
}

typedef struct arg {
  enum { A_SCALAR, A_BUF } kind;
  uint8_t bytes[8];
  unsigned size;
  uint64_t dptr;
  size_t buf_len;
  const char *write_back;  /* file, or NULL */
} arg;

static bool parse_scalar(const char *type, const char *val, arg *a) {
  char *end;
  errno = 0;
  if (!strcmp(type, "f32") || !strcmp(type, "f64")) {
    double d = strtod(val, &end);
    if (end == val || *end) return false;
    if (type[1] == '3') {
      float f = (float)d;
      memcpy(a->bytes, &f, 4);
      a->size = 4;
    } else {
      memcpy(a->bytes, &d, 8);
      a->size = 8;
    }
    return true;
  }
  unsigned bits;
  if (type[0] != 'u' && type[0] != 's' && type[0] != 'b') return false;
  bits = (unsigned)strtoul(type + 1, &end, 10);
  if (*end || (bits != 8 && bits != 16 && bits != 32 && bits != 64)) return false;
  uint64_t v;
  if (val[0] == '-') v = (uint64_t)strtoll(val, &end, 0);
  else v = strtoull(val, &end, 0);
  if (end == val || *end || errno) return false;
  a->size = bits / 8;
  memcpy(a->bytes, &v, a->size);
  return true;
}

static ir_module *load_ir(const char *path, pw_diag *d, bool verify) {
  size_t len;
  char *text = slurp(path, &len);
  if (!text) {
    fprintf(stderr, "ptxwave emulate: cannot read %s: %s\n", path, strerror(errno));
    return NULL;
  }
  size_t pl = strlen(path);
  ir_module *m;
  if (pl > 5 && !strcmp(path + pl - 5, ".pwir")) m = ir_parse(path, text, len, d);
  else m = ptx_parse(path, text, len, d, NULL);
  /* multimem.* is plain ld/st/red on one device (lower/lower_multimem.c). */
  if (m) lower_multimem(m, &(lower_multimem_options){.diag = d});
  /* tex/suld/... become descriptor loads and global loads (lower_tex);
   * the emulator runs the rest of the IR unlowered */
  if (m) {
    int e0 = d->nerrors;
    lower_tex(m, &(lower_tex_options){.diag = d});
    if (d->nerrors > e0) {
      ir_module_destroy(m);
      m = NULL;
    }
  }
  if (m && verify && !ir_verify(m, &(ir_verify_options){0}, d)) {
    ir_module_destroy(m);
    m = NULL;
  }
  free(text);
  return m;
}

int cmd_emulate(int argc, char **argv) {
  const char *file = NULL, *kernel = NULL;
  emu_dim3 grid = {0, 0, 0}, block = {0, 0, 0};
  unsigned long shared = 0;
  emu_options opt = {0};
  bool stats = false, verify = true, coop = false;
  int nargs = 0;
  char **args = calloc((size_t)argc + 1, sizeof *args);
  if (!args) return 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has_val = i + 1 < argc;
    if (cmd_is_help(a)) {
      usage(stdout);
      free(args);
      return 0;
    } else if (!strcmp(a, "--kernel") && has_val) {
      kernel = argv[++i];
    } else if (!strcmp(a, "--grid") && has_val) {
      if (!parse_dim(argv[++i], &grid)) goto bad;
    } else if (!strcmp(a, "--block") && has_val) {
      if (!parse_dim(argv[++i], &block)) goto bad;
    } else if (!strcmp(a, "--shared") && has_val) {
      shared = strtoul(argv[++i], NULL, 0);
    } else if (!strcmp(a, "--threads") && has_val) {
      opt.threads = (unsigned)strtoul(argv[++i], NULL, 0);
    } else if (!strcmp(a, "--wave") && has_val) {
      opt.wave_size = (unsigned)strtoul(argv[++i], NULL, 0);
    } else if (!strcmp(a, "--memcheck")) {
      opt.memcheck = true;
    } else if (!strcmp(a, "--stats")) {
      stats = true;
    } else if (!strcmp(a, "--no-verify")) {
      verify = false;
    } else if (!strcmp(a, "--cooperative")) {
      coop = true;
    } else if (a[0] == '-' && a[1] == '-') {
      fprintf(stderr, "ptxwave emulate: unknown option '%s'\n", a);
      goto usage_err;
    } else if (!file) {
      file = a;
    } else {
      args[nargs++] = argv[i];
    }
  }
  if (!file || !kernel || !grid.x || !block.x) goto usage_err;

  pw_diag d;
  pw_diag_init(&d, stderr);
  ir_module *m = load_ir(file, &d, verify);
  pw_diag_fini(&d);
  if (!m) {
    free(args);
    return 1;
  }
  int rc = 1;
  emu_context *ctx = NULL;
  emu_module *em = NULL;
  arg *av = calloc((size_t)nargs + 1, sizeof *av);
  void **params = calloc((size_t)nargs + 1, sizeof *params);
  if (!av || !params) goto done;
  emu_status st = emu_context_create(&opt, &ctx);
  if (st != EMU_OK) {
    fprintf(stderr, "ptxwave emulate: cannot create a context: %s\n", emu_status_name(st));
    goto done;
  }
  st = emu_module_load(ctx, m, &em);
  if (st != EMU_OK) {
    fprintf(stderr, "ptxwave emulate: %s\n", emu_error_message(ctx));
    goto done;
  }
  unsigned np = 0;
  const emu_param_info *pinfo = NULL;
  uint32_t psize = 0;
  if (emu_kernel_params(em, kernel, &np, &pinfo, &psize) != EMU_OK) {
    fprintf(stderr, "ptxwave emulate: %s\n", emu_error_message(ctx));
    goto done;
  }
  if ((unsigned)nargs != np) {
    fprintf(stderr, "ptxwave emulate: kernel '%s' takes %u parameters, %d given\n", kernel, np, nargs);
    goto done;
  }
  for (int k = 0; k < nargs; k++) {
    char *spec = args[k], *colon = strchr(spec, ':');
    if (!colon) {
      fprintf(stderr, "ptxwave emulate: argument %d '%s' has no TYPE: prefix\n", k, spec);
      goto done;
    }
    *colon = 0;
    const char *kind = spec, *rest = colon + 1;
    arg *a = &av[k];
    if (!strcmp(kind, "in") || !strcmp(kind, "inout")) {
      size_t len;
      char *data = slurp(rest, &len);
      if (!data) {
        fprintf(stderr, "ptxwave emulate: cannot read %s: %s\n", rest, strerror(errno));
        goto done;
      }
      a->kind = A_BUF;
      a->buf_len = len;
      if (emu_malloc(ctx, len, &a->dptr) != EMU_OK || emu_memcpy_htod(ctx, a->dptr, data, len) != EMU_OK) {
        free(data);
        fprintf(stderr, "ptxwave emulate: %s\n", emu_error_message(ctx));
        goto done;
      }
      free(data);
      if (kind[2] == 'o') a->write_back = rest;
    } else if (!strcmp(kind, "out") || !strcmp(kind, "zero")) {
      const char *sz = rest;
      if (kind[0] == 'o') {
        char *c2 = strrchr(rest, ':');
        if (!c2) {
          fprintf(stderr, "ptxwave emulate: out:FILE:BYTES expected, got 'out:%s'\n", rest);
          goto done;
        }
        *c2 = 0;
        sz = c2 + 1;
        a->write_back = rest;
      }
      char *end;
      unsigned long long n = strtoull(sz, &end, 0);
      if (end == sz || *end) {
        fprintf(stderr, "ptxwave emulate: bad byte count '%s'\n", sz);
        goto done;
      }
      a->kind = A_BUF;
      a->buf_len = (size_t)n;
      if (emu_malloc(ctx, (size_t)n, &a->dptr) != EMU_OK) {
        fprintf(stderr, "ptxwave emulate: %s\n", emu_error_message(ctx));
        goto done;
      }
    } else if (!parse_scalar(kind, rest, a)) {
      fprintf(stderr, "ptxwave emulate: argument %d: cannot read '%s:%s'\n", k, kind, rest);
      goto done;
    }
    if (a->kind == A_BUF) {
      memcpy(a->bytes, &a->dptr, 8);
      a->size = 8;
    }
    if (a->size != pinfo[k].size) {
      fprintf(stderr, "ptxwave emulate: argument %d is %u bytes, parameter %d of '%s' is %u bytes\n", k, a->size, k,
              kernel, pinfo[k].size);
      goto done;
    }
    params[k] = a->bytes;
  }
  if (coop) {
    /* the parameters packed in CUDA's layout for the launch with options */
    uint8_t *buf = calloc(1, psize ? psize : 1);
    if (!buf) goto done;
    for (int k = 0; k < nargs; k++) memcpy(buf + pinfo[k].offset, params[k], pinfo[k].size);
    const emu_launch_opts o = {.cooperative = true};
    st = emu_launch_buffer_opts(em, kernel, grid, block, (uint32_t)shared, buf, psize, &o);
    free(buf);
  } else {
    st = emu_launch(em, kernel, grid, block, (uint32_t)shared, params);
  }
  if (st != EMU_OK) {
    fprintf(stderr, "ptxwave emulate: %s: %s\n", emu_status_name(st), emu_error_message(ctx));
    goto done;
  }
  rc = 0;
  for (int k = 0; k < nargs; k++) {
    arg *a = &av[k];
    if (a->kind != A_BUF || !a->write_back) continue;
    char *data = malloc(a->buf_len ? a->buf_len : 1);
    FILE *f = data ? fopen(a->write_back, "wb") : NULL;
    if (!f || emu_memcpy_dtoh(ctx, data, a->dptr, a->buf_len) != EMU_OK ||
        fwrite(data, 1, a->buf_len, f) != a->buf_len) {
      fprintf(stderr, "ptxwave emulate: cannot write %s\n", a->write_back);
      rc = 1;
    }
    if (f) fclose(f);
    free(data);
  }
  if (stats) {
    emu_stats s;
    emu_last_stats(ctx, &s);
    fprintf(stderr, "ptxwave emulate: %llu wave instructions, %llu lane operations, %llu blocks, %llu yields\n",
            (unsigned long long)s.instructions, (unsigned long long)s.lane_ops, (unsigned long long)s.workgroups,
            (unsigned long long)s.wg_yields);
  }
done:
  emu_context_destroy(ctx);
  ir_module_destroy(m);
  free(av);
  free(params);
  free(args);
  return rc;
bad:
  fprintf(stderr, "ptxwave emulate: bad dimensions\n");
usage_err:
  usage(stderr);
  free(args);
  return 2;
}
