/* emu/emu_mem.c: state spaces, loads, stores, atomics (PTX ISA 5.1,
 * 9.7.9.8-18, 9.7.13.4-6).
 *
 * Address representation (decided here, docs/emulator.md "Memory"):
 *   global, const   host addresses (below 2^48), checked against the
 *                   launch's snapshot of the allocation table
 *   shared          offset in the workgroup's shared memory; generic form
 *                   EMU_WIN_SHARED + offset
 *   local           offset in the thread's local memory; generic form
 *                   EMU_WIN_LOCAL + offset (per thread, like the hardware)
 *   param           kernel parameters: EMU_WIN_PARAM + offset (the param
 *                   space address and its generic form are the same)
 * cvta adds or strips the window; isspacep tests it.  Every access is
 * bounds-checked and naturally aligned (a misaligned access is an error, as
 * on the GPU); the check of a global access is a compare against the last
 * allocation this wave touched, a binary search on a miss.
 *
 * Atomics are host atomics on the same bytes, of the instruction's width,
 * sequentially consistent; operations the host has no instruction for
 * (float add, min/max, inc/dec, f16x2 add ...) are compare-and-swap loops.
 * Lanes of a wave perform their atomics in lane order.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "emu_internal.h"

#define S(k) EMU_U64(x, in->src[k])
#define D(k) EMU_U64(x, in->dst[k])

static pthread_mutex_t wide_atomic_lock = PTHREAD_MUTEX_INITIALIZER;

const emu_alloc *emu_find_alloc(const emu_alloc *a, uint32_t n, uint64_t addr) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (a[mid].base <= addr) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return NULL;
  const emu_alloc *r = &a[lo - 1];
  return addr < r->base + (r->size ? r->size : 1) ? r : NULL;
}

uint8_t *emu_lane_local(const emu_exec *x, unsigned lane) {
  return x->wg->local + (size_t)(x->w->first_thread + lane) * x->l->stack_size;
}

static const char *space_name(unsigned sp) {
  switch (sp) {
  case EMU_SP_GLOBAL: return "global";
  case EMU_SP_SHARED: return "shared";
  case EMU_SP_LOCAL: return "local";
  case EMU_SP_CONST: return "const";
  case EMU_SP_PARAM: return "param";
  default: return "generic";
  }
}

static void *bad(emu_exec *x, const emu_inst *in, unsigned lane, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void *bad(emu_exec *x, const emu_inst *in, unsigned lane, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  emu_fault(x, in, (int)lane, EMU_ERR_ILLEGAL_ADDRESS, "%s", buf);
  return NULL;
}

static void *global_ptr(emu_exec *x, const emu_inst *in, unsigned lane, uint64_t a, unsigned bytes,
                        bool write, const char *what) {
  if (a >= x->gc_base && a + bytes <= x->gc_end && a + bytes >= a) {
    if (write && x->gc_readonly) goto readonly;
    return (void *)(uintptr_t)a;
  }
  const emu_alloc *al = emu_find_alloc(x->l->allocs, x->l->nallocs, a);
  if (!al) {
    /* say where it is relative to the nearest allocation below it */
    const emu_alloc *below = NULL;
    for (uint32_t lo = 0, hi = x->l->nallocs; lo < hi;) {
      uint32_t mid = (lo + hi) / 2;
      if (x->l->allocs[mid].base <= a) {
        below = &x->l->allocs[mid];
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (below && a - (below->base + below->size) < (1u << 20))
      return bad(x, in, lane,
                 "invalid %s %s of %u bytes at address 0x%llx: %llu bytes past the end of the %llu-byte "
                 "allocation at 0x%llx%s",
                 what, write ? "write" : "read", bytes, (unsigned long long)a,
                 (unsigned long long)(a + bytes - (below->base + below->size)), (unsigned long long)below->size,
                 (unsigned long long)below->base, below->freed ? " (freed)" : "");
    return bad(x, in, lane, "invalid %s %s of %u bytes at address 0x%llx: not in any allocation%s",
               what, write ? "write" : "read", bytes, (unsigned long long)a,
               a == 0 ? " (null pointer)" : "");
  }
  if (al->freed)
    return bad(x, in, lane,
               "invalid %s %s of %u bytes at address 0x%llx: use after free of the %llu-byte "
               "allocation at 0x%llx",
               what, write ? "write" : "read", bytes, (unsigned long long)a, (unsigned long long)al->size,
               (unsigned long long)al->base);
  if (a + bytes > al->base + al->size || a + bytes < a)
    return bad(x, in, lane,
               "invalid %s %s of %u bytes at address 0x%llx: %llu bytes past the end of the "
               "%llu-byte allocation at 0x%llx",
               what, write ? "write" : "read", bytes, (unsigned long long)a,
               (unsigned long long)(a + bytes - (al->base + al->size)), (unsigned long long)al->size,
               (unsigned long long)al->base);
  x->gc_base = al->base;
  x->gc_end = al->base + al->size;
  x->gc_readonly = al->readonly;
  if (write && al->readonly) goto readonly;
  return (void *)(uintptr_t)a;
readonly:
  return bad(x, in, lane, "invalid %s write of %u bytes at address 0x%llx: constant memory is read-only",
             what, bytes, (unsigned long long)a);
}

void *emu_addr(emu_exec *x, const emu_inst *in, unsigned lane, unsigned space, uint64_t a, unsigned bytes,
               bool write) {
  if (bytes > 1 && (a & (bytes - 1)) && (bytes & (bytes - 1)) == 0)
    return bad(x, in, lane, "misaligned %s %s of %u bytes at address 0x%llx", space_name(space),
               write ? "write" : "read", bytes, (unsigned long long)a);
  unsigned sp = space;
  uint64_t off = a;
  if (sp == EMU_SP_GENERIC) {
    switch (a >> EMU_WIN_SHIFT) {
    case 0: sp = EMU_SP_GLOBAL; break;
    case 1: sp = EMU_SP_SHARED; off = a & EMU_WIN_OFFMASK; break;
    case 2: sp = EMU_SP_LOCAL; off = a & EMU_WIN_OFFMASK; break;
    case 3: sp = EMU_SP_PARAM; off = a & EMU_WIN_OFFMASK; break;
    default:
      return bad(x, in, lane, "invalid generic %s of %u bytes at address 0x%llx: not in any state space",
                 write ? "write" : "read", bytes, (unsigned long long)a);
    }
  } else if (sp == EMU_SP_SHARED || sp == EMU_SP_LOCAL || sp == EMU_SP_PARAM) {
    /* a space address given in its generic form is still understood */
    if ((a >> EMU_WIN_SHIFT) == (sp == EMU_SP_SHARED ? 1u : sp == EMU_SP_LOCAL ? 2u : 3u)) off = a & EMU_WIN_OFFMASK;
  }
  switch (sp) {
  case EMU_SP_GLOBAL:
  case EMU_SP_CONST:
    return global_ptr(x, in, lane, off, bytes, write, space_name(space));
  case EMU_SP_SHARED:
    if (off + bytes > x->l->shared_total || off + bytes < off)
      return bad(x, in, lane, "invalid shared %s of %u bytes at offset 0x%llx: the workgroup has %u bytes of shared memory",
                 write ? "write" : "read", bytes, (unsigned long long)off, x->l->shared_total);
    return x->wg->shared + off;
  case EMU_SP_LOCAL:
    if (off + bytes > x->l->stack_size || off + bytes < off)
      return bad(x, in, lane, "invalid local %s of %u bytes at offset 0x%llx: a thread has %u bytes of local memory",
                 write ? "write" : "read", bytes, (unsigned long long)off, x->l->stack_size);
    return emu_lane_local(x, lane) + off;
  case EMU_SP_PARAM:
    if (write) return bad(x, in, lane, "write to kernel parameter memory");
    if (off + bytes > x->l->params_size || off + bytes < off)
      return bad(x, in, lane, "invalid param read of %u bytes at offset 0x%llx: the kernel has %u bytes of parameters",
                 bytes, (unsigned long long)off, x->l->params_size);
    return (void *)(x->l->params + off);
  default:
    return bad(x, in, lane, "access to an unknown state space");
  }
}

bool emu_read_string(emu_exec *x, const emu_inst *in, unsigned lane, uint64_t a, char *buf, size_t n) {
  for (size_t i = 0; i + 1 < n; i++) {
    const char *p = emu_addr(x, in, lane, EMU_SP_GENERIC, a + i, 1, false);
    if (!p) return false;
    buf[i] = *p;
    if (!*p) return true;
  }
  buf[n - 1] = 0;
  return true;
}

/* ---- loads and stores ------------------------------------------------------ */
static inline uint64_t load_bytes(const void *p, unsigned bytes, int order) {
  switch (bytes) {
  case 1: return __atomic_load_n((const uint8_t *)p, order);
  case 2: return __atomic_load_n((const uint16_t *)p, order);
  case 4: return __atomic_load_n((const uint32_t *)p, order);
  case 8: return __atomic_load_n((const uint64_t *)p, order);
  default: {
    uint64_t v = 0;
    memcpy(&v, p, bytes < 8 ? bytes : 8);
    return v;
  }
  }
}

static inline void store_bytes(void *p, unsigned bytes, uint64_t v, int order) {
  switch (bytes) {
  case 1: __atomic_store_n((uint8_t *)p, (uint8_t)v, order); break;
  case 2: __atomic_store_n((uint16_t *)p, (uint16_t)v, order); break;
  case 4: __atomic_store_n((uint32_t *)p, (uint32_t)v, order); break;
  case 8: __atomic_store_n((uint64_t *)p, v, order); break;
  default: memcpy(p, &v, bytes < 8 ? bytes : 8); break;
  }
}

static int load_order(const emu_inst *in) {
  switch (in->mods.sem) {
  case IR_SEM_ACQUIRE: case IR_SEM_ACQ_REL: return __ATOMIC_ACQUIRE;
  case IR_SEM_SC: return __ATOMIC_SEQ_CST;
  default: return __ATOMIC_RELAXED;
  }
}

static int store_order(const emu_inst *in) {
  switch (in->mods.sem) {
  case IR_SEM_RELEASE: case IR_SEM_ACQ_REL: return __ATOMIC_RELEASE;
  case IR_SEM_SC: return __ATOMIC_SEQ_CST;
  default: return __ATOMIC_RELAXED;
  }
}

/* Value loaded into a register: extended per the instruction type, masked
 * to the register's width. */
static inline uint64_t ld_extend(const emu_inst *in, uint64_t v, unsigned k) {
  unsigned eb = in->elem * 8, rb = ir_type_bits((ir_type)in->dtype[k]);
  if (rb > 64) rb = 64;
  if (ir_type_kind_of((ir_type)in->type) == IR_TK_SINT && rb > eb) return (uint64_t)emu_sext(v, eb) & emu_type_mask(rb);
  return v & emu_type_mask(eb < rb ? eb : rb);
}

static void h_ld(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  unsigned eb = in->elem, n = in->vec, total = eb * n;
  int order = load_order(in);
  bool global = in->space == EMU_SP_GLOBAL;
  EMU_EACH(m, l, {
    uint64_t ad = (a[l] + (uint64_t)in->imm) & in->amask;
    uint8_t *p;
    /* a global access inside the allocation this wave last touched */
    if (global && ad >= x->gc_base && ad + total <= x->gc_end && !(ad & (total - 1))) p = (uint8_t *)(uintptr_t)ad;
    else if (!(p = emu_addr(x, in, l, in->space, ad, total, false))) return;
    for (unsigned k = 0; k < n; k++) {
      if (eb == 16) {
        uint64_t *d = D(k);
        d[2 * l] = load_bytes(p + 16 * k, 8, order);
        d[2 * l + 1] = load_bytes(p + 16 * k + 8, 8, order);
      } else {
        D(k)[l] = ld_extend(in, load_bytes(p + eb * k, eb, order), k);
      }
    }
  });
}

/* ld.global.{u32,f32,b32} and .{u64,b64,f64} with no vector: the most common loads */
static void h_ld_global_scalar(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  unsigned eb = in->elem;
  int64_t off = in->imm;
  EMU_EACH(m, l, {
    uint64_t ad = (a[l] + (uint64_t)off) & in->amask;
    const void *p;
    if (ad >= x->gc_base && ad + eb <= x->gc_end && !(ad & (eb - 1))) p = (const void *)(uintptr_t)ad;
    else if (!(p = emu_addr(x, in, l, in->space, ad, eb, false))) return;
    d[l] = eb == 4 ? __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED)
                   : __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
  });
}

/* ld.shared / ld.local of one 4- or 8-byte element: the common cases of
 * tiled kernels and spilled locals, checked inline */
static void h_ld_shared_scalar(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  unsigned eb = in->elem;
  uint64_t lim = x->l->shared_total;
  const uint8_t *base = x->wg->shared;
  EMU_EACH(m, l, {
    uint64_t off = (a[l] + (uint64_t)in->imm) & in->amask;
    const void *p;
    if (off + eb <= lim && !(off & (eb - 1))) p = base + off;
    else if (!(p = emu_addr(x, in, l, in->space, off, eb, false))) return;
    d[l] = eb == 4 ? *(const uint32_t *)p : *(const uint64_t *)p;
  });
}

static void h_st_shared_scalar(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *v = S(1);
  unsigned eb = in->elem;
  uint64_t lim = x->l->shared_total;
  uint8_t *base = x->wg->shared;
  x->stores++;
  EMU_EACH(m, l, {
    uint64_t off = (a[l] + (uint64_t)in->imm) & in->amask;
    void *p;
    if (off + eb <= lim && !(off & (eb - 1))) p = base + off;
    else if (!(p = emu_addr(x, in, l, in->space, off, eb, true))) return;
    if (eb == 4) *(uint32_t *)p = (uint32_t)v[l];
    else *(uint64_t *)p = v[l];
  });
}

static void h_ld_local_scalar(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  unsigned eb = in->elem;
  uint64_t lim = x->l->stack_size;
  EMU_EACH(m, l, {
    uint64_t off = (a[l] + (uint64_t)in->imm) & in->amask;
    const void *p;
    if (off + eb <= lim && !(off & (eb - 1))) p = emu_lane_local(x, l) + off;
    else if (!(p = emu_addr(x, in, l, in->space, off, eb, false))) return;
    d[l] = eb == 4 ? *(const uint32_t *)p : *(const uint64_t *)p;
  });
}

static void h_st(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  unsigned eb = in->elem, n = in->vec, total = eb * n;
  int order = store_order(in);
  x->stores++;
  EMU_EACH(m, l, {
    uint8_t *p = emu_addr(x, in, l, in->space, ((a[l] + (uint64_t)in->imm) & in->amask), total, true);
    if (!p) return;
    for (unsigned k = 0; k < n; k++) {
      const uint64_t *v = S(1 + k);
      if (eb == 16) {
        store_bytes(p + 16 * k, 8, v[2 * l], order);
        store_bytes(p + 16 * k + 8, 8, v[2 * l + 1], order);
      } else {
        store_bytes(p + eb * k, eb, v[l], order);
      }
    }
  });
}

static void h_st_global_scalar(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *v = S(1);
  unsigned eb = in->elem;
  int64_t off = in->imm;
  x->stores++;
  EMU_EACH(m, l, {
    uint64_t ad = (a[l] + (uint64_t)off) & in->amask;
    void *p;
    if (ad >= x->gc_base && ad + eb <= x->gc_end && !(ad & (eb - 1)) && !x->gc_readonly) p = (void *)(uintptr_t)ad;
    else if (!(p = emu_addr(x, in, l, in->space, ad, eb, true))) return;
    if (eb == 4) __atomic_store_n((uint32_t *)p, (uint32_t)v[l], __ATOMIC_RELAXED);
    else __atomic_store_n((uint64_t *)p, v[l], __ATOMIC_RELAXED);
  });
}

/* ---- atomics ---------------------------------------------------------------- */
static inline float f32b(uint32_t b) { return emu_f32(b); }

/* f32 atomic add: round to nearest even, subnormal inputs and results
 * flushed (PTX ISA: atom.add.f32). */
static uint32_t f32_add_ftz(uint32_t a, uint32_t b) {
  float r = f32b(emu_f32_ftz(a)) + f32b(emu_f32_ftz(b));
  uint32_t rb = emu_f32_bits(r);
  return r != r ? EMU_F32_CANON_NAN : emu_f32_ftz(rb);
}

static uint16_t half_add(uint16_t a, uint16_t b, bool bf) {
  const emu_fpfmt *f = bf ? &emu_fmt_bf16 : &emu_fmt_f16;
  double r = emu_fp_to_double(f, a) + emu_fp_to_double(f, b);
  if (r != r) return 0x7fff;
  return (uint16_t)emu_fp_from_double(f, r, EMU_RN, 0);
}

static double fpminmax(bool mx, double a, double b) {
  if (a != a) return b;
  if (b != b) return a;
  if (a == b) return mx ? (signbit(a) ? b : a) : (signbit(a) ? a : b);
  return mx ? (a > b ? a : b) : (a < b ? a : b);
}

/* The new value an atomic op stores, given the old one (for the CAS loops). */
static uint64_t atom_new(const emu_inst *in, uint64_t old, uint64_t b, unsigned bits) {
  ir_type t = (ir_type)in->type;
  uint64_t mk = emu_type_mask(bits);
  bool sgn = ir_type_kind_of(t) == IR_TK_SINT;
  switch ((ir_atomop)in->mods.atomop) {
  case IR_ATOM_ADD:
    switch (t) {
    case ir_type_f32: return f32_add_ftz((uint32_t)old, (uint32_t)b);
    case ir_type_f64: {
      double r = emu_f64(old) + emu_f64(b);
      return r != r ? EMU_F64_CANON_NAN : emu_f64_bits(r);
    }
    case ir_type_f16: return half_add((uint16_t)old, (uint16_t)b, false);
    case ir_type_bf16: return half_add((uint16_t)old, (uint16_t)b, true);
    case ir_type_f16x2:
    case ir_type_bf16x2: {
      bool bf = t == ir_type_bf16x2;
      return half_add((uint16_t)old, (uint16_t)b, bf) | (uint64_t)half_add((uint16_t)(old >> 16), (uint16_t)(b >> 16), bf) << 16;
    }
    default: return (old + b) & mk;
    }
  case IR_ATOM_MIN:
  case IR_ATOM_MAX: {
    bool mx = in->mods.atomop == IR_ATOM_MAX;
    switch (t) {
    case ir_type_f32: return emu_f32_bits((float)fpminmax(mx, f32b((uint32_t)old), f32b((uint32_t)b)));
    case ir_type_f64: return emu_f64_bits(fpminmax(mx, emu_f64(old), emu_f64(b)));
    case ir_type_f16: case ir_type_bf16: {
      const emu_fpfmt *f = t == ir_type_bf16 ? &emu_fmt_bf16 : &emu_fmt_f16;
      double r = fpminmax(mx, emu_fp_to_double(f, old & 0xffff), emu_fp_to_double(f, b & 0xffff));
      return r != r ? 0x7fff : emu_fp_from_double(f, r, EMU_RN, 0);
    }
    default: break;
    }
    if (sgn) {
      int64_t o = emu_sext(old, bits), v = emu_sext(b, bits);
      return (uint64_t)(mx ? (o > v ? o : v) : (o < v ? o : v)) & mk;
    }
    return mx ? (old > b ? old : b) : (old < b ? old : b);
  }
  case IR_ATOM_INC: return old >= b ? 0 : (old + 1) & mk;
  case IR_ATOM_DEC: return (old == 0 || old > b) ? b : (old - 1) & mk;
  case IR_ATOM_AND: return old & b;
  case IR_ATOM_OR: return old | b;
  case IR_ATOM_XOR: return old ^ b;
  case IR_ATOM_EXCH: return b;
  default: return old;
  }
}

/* One atomic on one element; returns the old value. */
static uint64_t atom_one(const emu_inst *in, void *p, unsigned bytes, uint64_t b, uint64_t c) {
  unsigned op = in->mods.atomop;
  ir_type t = (ir_type)in->type;
  bool is_int = !emu_type_is_float(t);
  if (bytes == 4) {
    uint32_t *q = p;
    if (is_int) switch (op) {
      case IR_ATOM_ADD: return __atomic_fetch_add(q, (uint32_t)b, __ATOMIC_SEQ_CST);
      case IR_ATOM_AND: return __atomic_fetch_and(q, (uint32_t)b, __ATOMIC_SEQ_CST);
      case IR_ATOM_OR: return __atomic_fetch_or(q, (uint32_t)b, __ATOMIC_SEQ_CST);
      case IR_ATOM_XOR: return __atomic_fetch_xor(q, (uint32_t)b, __ATOMIC_SEQ_CST);
      case IR_ATOM_EXCH: return __atomic_exchange_n(q, (uint32_t)b, __ATOMIC_SEQ_CST);
      default: break;
      }
    if (op == IR_ATOM_CAS) {
      uint32_t exp = (uint32_t)b;
      __atomic_compare_exchange_n(q, &exp, (uint32_t)c, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
      return exp;
    }
    if (op == IR_ATOM_EXCH) return __atomic_exchange_n(q, (uint32_t)b, __ATOMIC_SEQ_CST);
    uint32_t old = __atomic_load_n(q, __ATOMIC_SEQ_CST);
    for (;;) {
      uint32_t nv = (uint32_t)atom_new(in, old, b & 0xffffffffu, 32);
      if (__atomic_compare_exchange_n(q, &old, nv, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return old;
    }
  }
  if (bytes == 8) {
    uint64_t *q = p;
    if (is_int) switch (op) {
      case IR_ATOM_ADD: return __atomic_fetch_add(q, b, __ATOMIC_SEQ_CST);
      case IR_ATOM_AND: return __atomic_fetch_and(q, b, __ATOMIC_SEQ_CST);
      case IR_ATOM_OR: return __atomic_fetch_or(q, b, __ATOMIC_SEQ_CST);
      case IR_ATOM_XOR: return __atomic_fetch_xor(q, b, __ATOMIC_SEQ_CST);
      default: break;
      }
    if (op == IR_ATOM_CAS) {
      uint64_t exp = b;
      __atomic_compare_exchange_n(q, &exp, c, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
      return exp;
    }
    if (op == IR_ATOM_EXCH) return __atomic_exchange_n(q, b, __ATOMIC_SEQ_CST);
    uint64_t old = __atomic_load_n(q, __ATOMIC_SEQ_CST);
    for (;;) {
      uint64_t nv = atom_new(in, old, b, 64);
      if (__atomic_compare_exchange_n(q, &old, nv, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return old;
    }
  }
  if (bytes == 2) {
    uint16_t *q = p;
    if (op == IR_ATOM_CAS) {
      uint16_t exp = (uint16_t)b;
      __atomic_compare_exchange_n(q, &exp, (uint16_t)c, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
      return exp;
    }
    uint16_t old = __atomic_load_n(q, __ATOMIC_SEQ_CST);
    for (;;) {
      uint16_t nv = (uint16_t)atom_new(in, old, b & 0xffff, 16);
      if (__atomic_compare_exchange_n(q, &old, nv, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return old;
    }
  }
  return 0;
}

/* One element's atomic reduction for cp.reduce.async.bulk{.tensor}
 * (emu_mbarrier.c): in's atomop on in's type, as atom/red do it. */
uint64_t emu_atom_one(const emu_inst *in, void *p, unsigned bytes, uint64_t b) {
  return atom_one(in, p, bytes, b, 0);
}

/* 128-bit exch/cas: under one lock (the host has no portable 16-byte CAS) */
static void atom_wide(const emu_inst *in, void *p, const uint64_t *b, const uint64_t *c, uint64_t *old) {
  pthread_mutex_lock(&wide_atomic_lock);
  memcpy(old, p, 16);
  if (in->mods.atomop == IR_ATOM_EXCH) memcpy(p, b, 16);
  else if (old[0] == b[0] && old[1] == b[1]) memcpy(p, c, 16);
  pthread_mutex_unlock(&wide_atomic_lock);
}

/* atom: d = old, [a] op= b (cas: c); red: no result.  Vector forms run one
 * atomic per element. */
static void h_atom(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  bool is_red = in->op == ir_op_red;
  unsigned eb = in->elem, n = in->vec;
  bool cas = in->mods.atomop == IR_ATOM_CAS;
  x->stores++;
  EMU_EACH(m, l, {
    uint8_t *p = emu_addr(x, in, l, in->space, ((a[l] + (uint64_t)in->imm) & in->amask), eb * n, true);
    if (!p) return;
    for (unsigned k = 0; k < n; k++) {
      if (eb == 16) {
        const uint64_t *bv = S(1), *cv = cas ? S(2) : bv;
        uint64_t old[2];
        atom_wide(in, p, &bv[2 * l], &cv[2 * l], old);
        if (!is_red) {
          D(0)[2 * l] = old[0];
          D(0)[2 * l + 1] = old[1];
        }
        continue;
      }
      uint64_t bv = S(1 + k)[l], cv = cas ? S(2)[l] : 0;
      uint64_t old = atom_one(in, p + eb * k, eb, bv, cv);
      if (!is_red) D(k)[l] = old & emu_type_mask(ir_type_bits((ir_type)in->dtype[k]));
    }
  });
}

/* ---- cp.async: done at once ------------------------------------------------------
 * cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size | ignore-src}:
 * the copy completes when the instruction runs (a legal schedule of an
 * asynchronous copy), so commit_group and wait_group have nothing to wait for.
 * Bytes past src-size (or all of them with ignore-src) are zero-filled. */
static void h_cp_async(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *dst = S(0), *src = S(1), *sz = S(2);
  bool has_src_size = in->sub & 1, ignore_pred = in->sub & 2;
  const uint64_t *ss = has_src_size ? S(3) : NULL;
  emu_mask ign = ignore_pred ? EMU_PRED(x, in->src[3]) : 0;
  x->stores++;
  EMU_EACH(m, l, {
    unsigned n = (unsigned)sz[l];
    if (n != 4 && n != 8 && n != 16) {
      emu_fault(x, in, (int)l, EMU_ERR_TRAP, "cp.async of %u bytes (4, 8 or 16)", n);
      return;
    }
    unsigned from = n;
    if (has_src_size) from = ss[l] < n ? (unsigned)ss[l] : n;
    if ((ign >> l) & 1) from = 0;
    uint8_t *d = emu_addr(x, in, l, EMU_SP_SHARED, (dst[l] + (uint64_t)in->imm) & in->amask, n, true);
    if (!d) return;
    uint8_t tmp[16] = {0};
    if (from) {
      const uint8_t *s = emu_addr(x, in, l, EMU_SP_GLOBAL, src[l], from, false);
      if (!s) return;
      memcpy(tmp, s, from);
    }
    memcpy(d, tmp, n);
  });
}

/* ---- cvta, isspacep, fences, hints -------------------------------------------- */
static uint64_t window_of(unsigned space) {
  switch (space) {
  case IR_SPACE_SHARED: case IR_SPACE_SHARED_CTA: case IR_SPACE_SHARED_CLUSTER: return EMU_WIN_SHARED;
  case IR_SPACE_LOCAL: return EMU_WIN_LOCAL;
  case IR_SPACE_PARAM: case IR_SPACE_PARAM_ENTRY: case IR_SPACE_PARAM_FUNC: return EMU_WIN_PARAM;
  default: return 0;
  }
}

static void h_cvta(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0), mk = in->tmask;
  uint64_t win = window_of(in->mods.space);
  bool to = in->mods.cvta_to;
  EMU_LANES(x, m, l, {
    uint64_t v = a[l];
    if (win) v = to ? v & EMU_WIN_OFFMASK : win | (v & EMU_WIN_OFFMASK);
    d[l] = v & mk;
  });
}

static void h_isspacep(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  emu_mask r = 0;
  unsigned sp = in->mods.space;
  EMU_EACH(m, l, {
    uint64_t v = a[l], w = v >> EMU_WIN_SHIFT, off = v & EMU_WIN_OFFMASK;
    bool res;
    switch (sp) {
    case IR_SPACE_GLOBAL: {
      const emu_alloc *al = w == 0 ? emu_find_alloc(x->l->allocs, x->l->nallocs, v) : NULL;
      res = w == 0 && !(al && al->readonly);
      break;
    }
    case IR_SPACE_SHARED: case IR_SPACE_SHARED_CTA: case IR_SPACE_SHARED_CLUSTER:
      res = w == 1 && off < x->l->shared_total;
      break;
    case IR_SPACE_LOCAL: res = w == 2 && off < x->l->stack_size; break;
    case IR_SPACE_CONST: {
      const emu_alloc *al = w == 0 ? emu_find_alloc(x->l->allocs, x->l->nallocs, v) : NULL;
      res = al && al->readonly;
      break;
    }
    case IR_SPACE_PARAM: case IR_SPACE_PARAM_ENTRY: res = w == 3; break;
    default: res = false; break;
    }
    r |= (emu_mask)res << l;
  });
  emu_pred_write(x, in->dst[0], m, r);
}

static void h_fence(emu_exec *x, const emu_inst *in, emu_mask m) {
  (void)x;
  (void)in;
  (void)m;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* ---- the per-thread dynamic stack (PTX ISA 9.7.17) ----------------------
 * alloca.type ptr, size{, immAlign}: "a = max(immAlign, frame_align)",
 * size bytes aligned to a, at the lane's stack top (emu_frame.sp), which
 * moves past them; ptr is a .local address.  The stack grows upward here
 * (the ISA fixes no direction); memory past the thread's local limit is a
 * launch error ("stack overflow", as the call of a too-large frame is)
 * rather than the ISA's undefined behaviour.  stacksave reads the top,
 * stackrestore sets it; a value outside this frame's stack is an error. */
enum { EMU_ALLOCA_MIN_ALIGN = 8 };  /* "the minimum guaranteed alignment" */

static void h_alloca(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *size = S(0), *align = in->nsrc > 1 ? S(1) : NULL;
  uint64_t *d = D(0);
  emu_frame *f = x->f;
  EMU_EACH(m, l, {
    uint64_t a = align && align[l] > EMU_ALLOCA_MIN_ALIGN ? align[l] : EMU_ALLOCA_MIN_ALIGN;
    uint64_t sz = in->stype[0] == ir_type_u32 ? (uint32_t)size[l] : size[l];
    uint64_t at = ((uint64_t)f->sp[l] + a - 1) & ~(a - 1);
    if (at + sz > x->l->stack_size || at + sz < at) {
      emu_fault(x, in, (int)l, EMU_ERR_LAUNCH,
                "stack overflow: alloca of %llu bytes (aligned to %llu) above %u, the thread has %u bytes of local memory",
                (unsigned long long)sz, (unsigned long long)a, f->sp[l], x->l->stack_size);
      return;
    }
    f->sp[l] = (uint32_t)(at + sz);
    if (f->sp[l] > x->wg->local_hwm) x->wg->local_hwm = f->sp[l];
    d[l] = at;
  });
}

static void h_stacksave(emu_exec *x, const emu_inst *in, emu_mask m) {
  uint64_t *d = D(0);
  EMU_EACH(m, l, d[l] = x->f->sp[l]);
}

static void h_stackrestore(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  emu_frame *f = x->f;
  uint32_t lo = f->local_base + f->fn->frame_local;
  EMU_EACH(m, l, {
    if (a[l] < lo || a[l] > x->l->stack_size) {
      emu_fault(x, in, (int)l, EMU_ERR_LAUNCH,
                "stackrestore to 0x%llx: not a stack pointer of this frame (its stack is [0x%x, 0x%x])",
                (unsigned long long)a[l], lo, x->l->stack_size);
      return;
    }
    f->sp[l] = (uint32_t)a[l];
  });
}

static void h_nop(emu_exec *x, const emu_inst *in, emu_mask m) {
  (void)x;
  (void)in;
  (void)m;
}

static void h_zero(emu_exec *x, const emu_inst *in, emu_mask m) {
  uint64_t *d = D(0);
  EMU_LANES(x, m, l, d[l] = 0);
}

static unsigned elem_bytes(ir_type t) {
  unsigned b = ir_type_bits(t);
  return b < 8 ? 1 : b / 8;
}

const char *emu_sel_mem(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  ir_type t = (ir_type)i->type;
  switch ((ir_op)i->op) {
  case ir_op_ld:
  case ir_op_ldu: {
    in->elem = (uint8_t)elem_bytes(t);
    if (i->ndst != in->vec) return emu_dfmt(d, "ld.v%u with %u results", in->vec, i->ndst);
    if (i->mods.has_cache_hint && i->nsrc > 2) return "ld with operands after the cache policy";
    in->fn = h_ld;
    bool scalar = in->vec == 1 && (in->elem == 4 || in->elem == 8) &&
                  ir_type_bits((ir_type)in->dtype[0]) == in->elem * 8 && load_order(in) == __ATOMIC_RELAXED;
    if (scalar && in->space == EMU_SP_GLOBAL) in->fn = h_ld_global_scalar;
    if (scalar && in->space == EMU_SP_SHARED) in->fn = h_ld_shared_scalar;
    if (scalar && in->space == EMU_SP_LOCAL) in->fn = h_ld_local_scalar;
    return NULL;
  }
  case ir_op_st: {
    in->elem = (uint8_t)elem_bytes(t);
    unsigned nval = i->nsrc - 1 - (i->mods.has_cache_hint ? 1 : 0);
    if (nval != in->vec) return emu_dfmt(d, "st.v%u with %u values", in->vec, nval);
    in->fn = h_st;
    bool scalar = in->vec == 1 && (in->elem == 4 || in->elem == 8) && store_order(in) == __ATOMIC_RELAXED;
    if (scalar && in->space == EMU_SP_GLOBAL) in->fn = h_st_global_scalar;
    if (scalar && in->space == EMU_SP_SHARED) in->fn = h_st_shared_scalar;
    return NULL;
  }
  case ir_op_atom:
  case ir_op_red: {
    in->elem = (uint8_t)elem_bytes(t);
    unsigned op = i->mods.atomop;
    if (op == IR_ATOM_NONE || op == IR_ATOM_POPC) return "atom with no operation";
    if (in->elem == 16 && op != IR_ATOM_EXCH && op != IR_ATOM_CAS) return "128-bit atom other than exch/cas";
    if (in->elem == 1) return "8-bit atom";
    if (in->elem == 2 && op != IR_ATOM_CAS && !emu_type_is_float(t) && op != IR_ATOM_EXCH)
      return emu_dfmt(d, "16-bit integer atom.%s", ir_atomop_name((ir_atomop)op));
    if (op == IR_ATOM_CAS && i->nsrc < 3) return "atom.cas with fewer than three operands";
    if (in->vec > 1 && (op == IR_ATOM_CAS || in->elem == 16)) return "vector atom.cas";
    in->fn = h_atom;
    return NULL;
  }
  case ir_op_cvta:
    in->fn = h_cvta;
    return NULL;
  case ir_op_isspacep:
    in->fn = h_isspacep;
    return NULL;
  case ir_op_membar:
  case ir_op_fence:
    in->fn = h_fence;
    return NULL;
  case ir_op_createpolicy:
    in->fn = h_zero;
    return NULL;
  case ir_op_alloca:
    if (i->nsrc > 1 && (i->src[1]->kind != IR_VAL_CONST || !i->src[1]->imm || (i->src[1]->imm & (i->src[1]->imm - 1)) ||
                        i->src[1]->imm > (1u << 23)))
      return "alloca whose alignment is not a power of 2 up to 2^23";
    in->fn = h_alloca;
    return NULL;
  case ir_op_stacksave:
    in->fn = h_stacksave;
    return NULL;
  case ir_op_stackrestore:
    in->fn = h_stackrestore;
    return NULL;
  case ir_op_cp_async: {
    unsigned nval = i->nsrc - (i->mods.has_cache_hint ? 1 : 0);
    if (nval < 3 || nval > 4) return "cp.async with an unexpected operand count";
    if (nval == 4) in->sub = in->stype[3] == ir_type_pred ? 2 : 1;
    in->fn = h_cp_async;
    return NULL;
  }
  case ir_op_cp_async_commit_group:
  case ir_op_cp_async_wait_group:
    in->fn = h_nop;
    return NULL;
  case ir_op_prefetch: case ir_op_prefetchu: case ir_op_nanosleep: case ir_op_pmevent:
  case ir_op_brkpt: case ir_op_griddepcontrol: case ir_op_applypriority: case ir_op_discard:
  case ir_op_cp_async_bulk_prefetch: case ir_op_cp_async_bulk_prefetch_tensor:
  case ir_op_setmaxnreg:
    /* hints: caches are not modelled (docs/emulator.md); discard leaves
     * the bytes undefined, which keeping them is; setmaxnreg changes how
     * many registers a warp may hold, and a thread's registers here are
     * not counted */
    in->fn = h_nop;
    return NULL;
  default:
    break;
  }
  return emu_dfmt(d, "unsupported instruction '%s'", ir_op_infos[i->op].ptx);
}
