/* emu/emu_printf.c: the functions CUDA's device runtime provides and PTX
 * only declares: vprintf (device printf), __assertfail (assert), malloc and
 * free.
 *
 * vprintf(fmt, args): fmt is a generic address of the format string, args
 * a generic address of the argument buffer nvcc builds in local memory:
 * each argument at the next offset aligned to its size, integers of 32 or
 * 64 bits per the length modifier, every floating-point argument as a
 * double, strings and pointers as 64-bit addresses.  Each lane's output is
 * formatted on the host and written as one piece, lanes in order, under
 * the context's print lock.
 *
 * __assertfail(message, file, line, function, charSize) prints CUDA's
 * assertion message and fails the launch with EMU_ERR_ASSERT.
 *
 * malloc/free: a device heap of 8 MiB per launch context, bump-allocated
 * under the launch lock; free does not reuse memory (documented).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

/* The n-th argument of the call for lane l, as a 64-bit value. */
static uint64_t arg_value(emu_exec *x, const emu_call *c, unsigned k, unsigned l) {
  if (k >= c->narg) return 0;
  if (c->arg_is_local[k]) {
    uint64_t v = 0;
    uint32_t size = c->arg_size[k] < 8 ? c->arg_size[k] : 8;
    memcpy(&v, emu_lane_local(x, l) + x->f->local_base + c->arg_local[k], size);
    return v;
  }
  return EMU_U64(x, c->arg_slot[k])[l];
}

static void set_ret(emu_exec *x, const emu_call *c, unsigned l, uint64_t v) {
  if (!c->nret) return;
  if (c->ret_is_local[0]) {
    uint32_t size = c->ret_size[0] < 8 ? c->ret_size[0] : 8;
    memcpy(emu_lane_local(x, l) + x->f->local_base + c->ret_local[0], &v, size);
  } else if (c->ret_slot[0] != EMU_OPND_NONE) {
    EMU_U64(x, c->ret_slot[0])[l] = v;
  }
}

typedef struct strbuf {
  char *p;
  size_t len, cap;
} strbuf;

static void sb_add(strbuf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t nc = b->cap ? b->cap * 2 : 256;
    while (nc < b->len + n + 1) nc *= 2;
    char *np = realloc(b->p, nc);
    if (!np) return;
    b->p = np;
    b->cap = nc;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
}

/* Reads an argument of `size` bytes at the next aligned offset. */
static bool take_arg(emu_exec *x, const emu_inst *in, unsigned l, uint64_t args, uint64_t *off, unsigned size,
                     uint64_t *out) {
  *off = (*off + size - 1) / size * size;
  const uint8_t *p = emu_addr(x, in, l, EMU_SP_GENERIC, args + *off, size, false);
  if (!p) return false;
  *out = 0;
  memcpy(out, p, size);
  *off += size;
  return true;
}

/* Formats one lane's printf; returns the number of arguments or -1. */
static int format_lane(emu_exec *x, const emu_inst *in, unsigned l, const char *fmt, uint64_t args, strbuf *out) {
  uint64_t off = 0;
  int nargs = 0;
  for (const char *s = fmt; *s;) {
    if (*s != '%') {
      const char *e = strchr(s, '%');
      size_t n = e ? (size_t)(e - s) : strlen(s);
      sb_add(out, s, n);
      s += n;
      continue;
    }
    if (s[1] == '%') {
      sb_add(out, "%", 1);
      s += 2;
      continue;
    }
    /* %[flags][width][.precision][length]conversion */
    const char *start = s++;
    while (*s && strchr("-+ #0", *s)) s++;
    while (*s >= '0' && *s <= '9') s++;
    if (*s == '.') {
      s++;
      while (*s >= '0' && *s <= '9') s++;
    }
    int lng = 0;   /* 0 int, 1 long, 2 long long, -1 short, -2 char */
    for (;;) {
      if (*s == 'h') lng = lng == -1 ? -2 : -1;
      else if (*s == 'l') lng = lng == 1 ? 2 : 1;
      else if (*s == 'j' || *s == 'z' || *s == 't' || *s == 'L' || *s == 'q') lng = 2;
      else break;
      s++;
    }
    char conv = *s;
    if (!conv) break;
    s++;
    /* the spec without its length modifier, for the host's printf */
    char spec[64];
    size_t sl = 0;
    for (const char *q = start; q < s - 1 && sl < sizeof spec - 4; q++)
      if (!strchr("hljztLq", *q)) spec[sl++] = *q;
    char piece[512];
    uint64_t v;
    int n = 0;
    switch (conv) {
    case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'c': {
      unsigned size = lng >= 1 ? 8 : 4;
      if (!take_arg(x, in, l, args, &off, size, &v)) return -1;
      spec[sl++] = 'l';
      spec[sl++] = 'l';
      spec[sl++] = conv;
      spec[sl] = 0;
      bool sgn = conv == 'd' || conv == 'i';
      long long sv;
      if (size == 4) {
        if (lng == -1) sv = sgn ? (long long)(short)v : (long long)(unsigned short)v;
        else if (lng == -2) sv = sgn ? (long long)(signed char)v : (long long)(unsigned char)v;
        else sv = sgn ? (long long)(int32_t)v : (long long)(uint32_t)v;
      } else {
        sv = (long long)v;
      }
      if (conv == 'c') {
        spec[sl - 3] = 'c';
        spec[sl - 2] = 0;
        n = snprintf(piece, sizeof piece, spec, (int)(unsigned char)v);
      } else {
        n = snprintf(piece, sizeof piece, spec, sv);
      }
      break;
    }
    case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
      if (!take_arg(x, in, l, args, &off, 8, &v)) return -1;
      spec[sl++] = conv;
      spec[sl] = 0;
      n = snprintf(piece, sizeof piece, spec, emu_f64(v));
      break;
    case 's': {
      if (!take_arg(x, in, l, args, &off, 8, &v)) return -1;
      char str[1024];
      if (!v) strcpy(str, "(null)");
      else if (!emu_read_string(x, in, l, v, str, sizeof str)) return -1;
      spec[sl++] = 's';
      spec[sl] = 0;
      n = snprintf(piece, sizeof piece, spec, str);
      break;
    }
    case 'p':
      if (!take_arg(x, in, l, args, &off, 8, &v)) return -1;
      n = snprintf(piece, sizeof piece, "0x%llx", (unsigned long long)v);
      break;
    default:
      /* unknown conversion: print it as written */
      sb_add(out, start, (size_t)(s - start));
      continue;
    }
    nargs++;
    if (n > 0) sb_add(out, piece, (size_t)n < sizeof piece ? (size_t)n : sizeof piece - 1);
  }
  return nargs;
}

static void do_vprintf(emu_exec *x, const emu_inst *in, const emu_call *c, emu_mask m) {
  emu_context *ctx = x->l->ctx;
  FILE *out = ctx->opt.printf_out ? ctx->opt.printf_out : stdout;
  strbuf all = {0};
  EMU_EACH(m, l, {
    char fmt[4096];
    uint64_t fa = arg_value(x, c, 0, l), aa = arg_value(x, c, 1, l);
    if (!emu_read_string(x, in, l, fa, fmt, sizeof fmt)) break;
    strbuf one = {0};
    int n = format_lane(x, in, l, fmt, aa, &one);
    if (n < 0) {
      free(one.p);
      break;
    }
    if (one.len) sb_add(&all, one.p, one.len);
    free(one.p);
    set_ret(x, c, l, (uint32_t)n);
  });
  if (all.len) {
    pthread_mutex_lock(&ctx->print_lock);
    fwrite(all.p, 1, all.len, out);
    fflush(out);
    pthread_mutex_unlock(&ctx->print_lock);
  }
  free(all.p);
}

static void do_assertfail(emu_exec *x, const emu_inst *in, const emu_call *c, emu_mask m) {
  unsigned l = (unsigned)__builtin_ctzll(m);
  char msg[1024] = "?", file[1024] = "?", func[1024] = "?";
  emu_read_string(x, in, l, arg_value(x, c, 0, l), msg, sizeof msg);
  emu_read_string(x, in, l, arg_value(x, c, 1, l), file, sizeof file);
  emu_read_string(x, in, l, arg_value(x, c, 3, l), func, sizeof func);
  if (x->fault) return;
  unsigned line = (unsigned)arg_value(x, c, 2, l);
  emu_wg *wg = x->wg;
  emu_wave *w = x->w;
  char text[4096];
  snprintf(text, sizeof text, "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n", file,
           line, func, wg->ctaid[0], wg->ctaid[1], wg->ctaid[2], w->tid[0][l], w->tid[1][l], w->tid[2][l], msg);
  emu_context *ctx = x->l->ctx;
  FILE *out = ctx->opt.printf_out ? ctx->opt.printf_out : stderr;
  pthread_mutex_lock(&ctx->print_lock);
  fputs(text, out);
  fflush(out);
  pthread_mutex_unlock(&ctx->print_lock);
  text[strcspn(text, "\n")] = 0;
  emu_fault(x, in, (int)l, EMU_ERR_ASSERT, "device assertion failed: %s", text);
}

static void do_malloc(emu_exec *x, const emu_inst *in, const emu_call *c, emu_mask m) {
  emu_grid *L = x->l;
  EMU_EACH(m, l, {
    uint64_t size = arg_value(x, c, 0, l), r = 0;
    emu_context *ctx = L->ctx;
    pthread_mutex_lock(&L->lock);
    size = (size + 15) & ~15ull;
    if (!size) size = 16;
    if (ctx->heap && size <= ctx->heap_size - ctx->heap_used) {
      r = ctx->heap + ctx->heap_used;
      ctx->heap_used += size;
    }
    pthread_mutex_unlock(&L->lock);
    set_ret(x, c, l, r);
  });
  (void)in;
}

void emu_builtin_call(emu_exec *x, const emu_inst *in, const emu_call *c, emu_builtin bi, emu_mask m) {
  switch (bi) {
  case EMU_BI_VPRINTF: do_vprintf(x, in, c, m); break;
  case EMU_BI_ASSERTFAIL: do_assertfail(x, in, c, m); break;
  case EMU_BI_MALLOC: do_malloc(x, in, c, m); break;
  case EMU_BI_FREE: break;
  case EMU_BI_NONE: break;
  }
}
