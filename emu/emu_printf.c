/* emu/emu_printf.c: the functions CUDA's device runtime provides and PTX
 * only declares: vprintf (device printf), __assertfail (assert), malloc and
 * free.
 *
 * vprintf(fmt, args): fmt is a generic address of the format string, args
 * a generic address of the argument buffer nvcc builds in local memory:
 * each argument at the next offset aligned to its size, integers of 32 or
 * 64 bits per the length modifier, every floating-point argument as a
 * double, strings and pointers as 64-bit addresses.  Each lane's output is
 * formatted on the host by util/pw_printf.c (the formatter the runtime's
 * printf buffer uses too) and written as one piece, lanes in order, under
 * the context's print lock.
 *
 * __assertfail(message, file, line, function, charSize) prints CUDA's
 * assertion message and fails the launch with EMU_ERR_ASSERT.
 *
 * malloc/free: a device heap of 8 MiB per launch context, bump-allocated
 * under the launch lock; free does not reuse memory (documented).
 *
 * Dynamic parallelism: libcudadevrt's cudaGetParameterBufferV2 and
 * cudaLaunchDeviceV2 (what <<<>>> in device code compiles to, linked from
 * the program's relocatable fatbins) call the driver through
 * __cuda_syscall_cnpv2GetParameterBufferV2(kernel, grid, block, shared)
 * -> buffer and __cuda_syscall_cnpv2LaunchDeviceV2(buffer, stream) -> 0.
 * The buffer is carved from the grid's launch arena (device memory); the
 * launch queues the child, and the children run when the parent grid has
 * finished, in launch order (emu_sched.c): every write the parent made is
 * visible to them, as CUDA guarantees for writes before the launch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"
#include "util/pw_printf.h"

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

/* The formatter (util/pw_printf.c) reads lane l's argument buffer and
 * strings through these. */
typedef struct lane_io {
  emu_exec *x;
  const emu_inst *in;
  unsigned l;
  uint64_t args;
} lane_io;

static bool lane_arg(void *ctx, uint64_t off, unsigned size, uint64_t *out) {
  lane_io *io = ctx;
  const uint8_t *p = emu_addr(io->x, io->in, io->l, EMU_SP_GENERIC, io->args + off, size, false);
  if (!p) return false;
  *out = 0;
  memcpy(out, p, size);
  return true;
}

static bool lane_str(void *ctx, uint64_t addr, char *buf, size_t cap) {
  lane_io *io = ctx;
  return emu_read_string(io->x, io->in, io->l, addr, buf, cap);
}

static void do_vprintf(emu_exec *x, const emu_inst *in, const emu_call *c, emu_mask m) {
  emu_context *ctx = x->l->ctx;
  FILE *out = ctx->opt.printf_out ? ctx->opt.printf_out : stdout;
  char *all = NULL;
  size_t all_len = 0;
  EMU_EACH(m, l, {
    char fmt[4096];
    uint64_t fa = arg_value(x, c, 0, l), aa = arg_value(x, c, 1, l);
    if (!emu_read_string(x, in, l, fa, fmt, sizeof fmt)) break;
    lane_io lio = {x, in, l, aa};
    char *one = NULL;
    size_t one_len = 0;
    int n = pw_printf_format(fmt, &(pw_printf_io){lane_arg, lane_str, &lio}, &one, &one_len);
    if (n >= 0 && one_len) {
      char *np = realloc(all, all_len + one_len + 1);
      if (np) {
        memcpy(np + all_len, one, one_len + 1);
        all = np;
        all_len += one_len;
      }
    }
    free(one);
    if (n < 0) break;
    set_ret(x, c, l, (uint32_t)n);
  });
  if (all_len) {
    pthread_mutex_lock(&ctx->print_lock);
    fwrite(all, 1, all_len, out);
    fflush(out);
    pthread_mutex_unlock(&ctx->print_lock);
  }
  free(all);
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
  snprintf(text, sizeof text, PW_ASSERT_FORMAT, file,
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
    pthread_mutex_lock(&ctx->lock);   /* the heap is the context's: launches on other host threads */
    size = (size + 15) & ~15ull;
    if (!size) size = 16;
    if (ctx->heap && size <= ctx->heap_size - ctx->heap_used) {
      r = ctx->heap + ctx->heap_used;
      ctx->heap_used += size;
    }
    pthread_mutex_unlock(&ctx->lock);
    set_ret(x, c, l, r);
  });
  (void)in;
}

/* ---- dynamic parallelism ------------------------------------------------------ */
/* Argument k of lane l, n bytes (an aggregate .param such as a dim3). */
static bool arg_bytes(emu_exec *x, const emu_call *c, unsigned k, unsigned l, void *out, uint32_t n) {
  if (k >= c->narg) return false;
  if (c->arg_is_local[k]) {
    if (c->arg_size[k] < n) return false;
    memcpy(out, emu_lane_local(x, l) + x->f->local_base + c->arg_local[k], n);
    return true;
  }
  if (n > 8) return false;
  uint64_t v = EMU_U64(x, c->arg_slot[k])[l];
  memcpy(out, &v, n);
  return true;
}

static void do_cdp_param_buffer(emu_exec *x, const emu_inst *in, const emu_call *c, emu_mask m) {
  emu_grid *L = x->l;
  emu_module *em = L->mod;
  EMU_EACH(m, l, {
    uint64_t fa = arg_value(x, c, 0, l);
    uint32_t g[3] = {0}, b[3] = {0};
    uint32_t shared = (uint32_t)arg_value(x, c, 3, l);
    emu_func *k = NULL;
    uint64_t off = fa & EMU_WIN_OFFMASK;
    if ((fa & ~EMU_WIN_OFFMASK) == EMU_WIN_FUNC && off % 16 == 0 && off / 16 < em->nfuncs) k = em->funcs[off / 16];
    if (!k || !k->ir->is_kernel || !arg_bytes(x, c, 1, l, g, 12) || !arg_bytes(x, c, 2, l, b, 12)) {
      emu_fault(x, in, (int)l, EMU_ERR_ILLEGAL_ADDRESS, "device-side launch of 0x%llx, which is not a kernel",
                (unsigned long long)fa);
      return;
    }
    uint32_t size = (k->kparam_size + 15) & ~15u;
    if (!size) size = 16;
    uint64_t buf = 0;
    bool room = false;
    pthread_mutex_lock(&L->lock);
    if (L->cdp_arena && size <= L->cdp_arena_size - L->cdp_arena_used) {
      if (L->nchildren == L->children_cap) {
        uint32_t nc = L->children_cap ? L->children_cap * 2 : 16;
        emu_child *nch = realloc(L->children, nc * sizeof *nch);
        if (nch) {
          L->children = nch;
          L->children_cap = nc;
        }
      }
      if (L->nchildren < L->children_cap) {
        buf = L->cdp_arena + L->cdp_arena_used;
        L->cdp_arena_used += size;
        L->children[L->nchildren++] = (emu_child){.k = k, .grid = {g[0], g[1], g[2]}, .block = {b[0], b[1], b[2]},
                                                  .shared = shared, .buf = buf, .size = k->kparam_size};
        room = true;
      }
    }
    pthread_mutex_unlock(&L->lock);
    if (!room) {
      emu_fault(x, in, (int)l, EMU_ERR_LAUNCH, "device-side launch of '%s': more than %llu bytes of pending launches",
                k->ir->name, (unsigned long long)L->cdp_arena_size);
      return;
    }
    set_ret(x, c, l, buf);
  });
}

static void do_cdp_launch(emu_exec *x, const emu_inst *in, const emu_call *c, emu_mask m) {
  emu_grid *L = x->l;
  EMU_EACH(m, l, {
    uint64_t buf = arg_value(x, c, 0, l);
    uint32_t r = 1;   /* not a buffer of this grid that is waiting for its launch */
    pthread_mutex_lock(&L->lock);
    for (uint32_t i = 0; i < L->nchildren; i++)
      if (L->children[i].buf == buf && !L->children[i].order) {
        L->children[i].order = ++L->nlaunched;
        r = 0;
        break;
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
  case EMU_BI_CDP_PARAM_BUFFER: do_cdp_param_buffer(x, in, c, m); break;
  case EMU_BI_CDP_LAUNCH: do_cdp_launch(x, in, c, m); break;
  case EMU_BI_CDP_GET_ERROR: /* no device-side launch fails without faulting the grid */
  case EMU_BI_CDP_SET_ERROR:
    EMU_EACH(m, l, set_ret(x, c, l, 0));
    break;
  case EMU_BI_NONE: break;
  }
}
