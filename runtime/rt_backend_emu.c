/* runtime/rt_backend_emu.c: the emulator backend (emu/emu.h).
 *
 * "ptxwave emulator": device pointers are host addresses of tracked
 * allocations, each stream's work runs in order on a host thread of its
 * own, concurrently with other streams' and devices' (the streams'
 * comment below), and a module is the PTX
 * parsed to IR (ptx/ptx_parse.h) and decoded by emu_module_load.  The IR is
 * run unlowered: waves of 32 lanes are CUDA warps.  There is no code object,
 * so nothing goes to the kernel cache.
 *
 * Limits reported are CUDA's for compute capability 8.0 (1024 threads per
 * block, 48 KiB static and 163 KiB opt-in shared memory), whatever
 * capability is reported (default 12.0, whose 99 KiB opt-in is less: a
 * kernel sized for sm_120 fits, and the emulator honours the larger limit);
 * the multiprocessor count is the number of host threads running
 * workgroups.
 *
 * Freeing memory, unregistering host memory and unloading a module wait
 * for the work already given to the streams, which may still use what
 * they free (ordered freeing).
 *
 * Several devices (PTXWAVE_EMU_DEVICES=N, default 1, at most 16): one
 * emulator context and one address space serve them all, as unified
 * addressing would; each device has its own accounting (an allocation is
 * tagged with the device of the thread that made it: set_device), a share
 * of the host's memory (RAM / N) as its total, and its own contexts (the
 * API layer's).  Every device can access every other's memory (peer
 * access is a permission the API layer keeps; the emulator does not
 * refuse an access without it).
 *
 * Device memory lives in a shared memfd mapping (emu_heap.c), so IPC
 * hands another process (descriptor, offset, size): it maps the pages
 * through /proc/PID/fd/FD.  Virtual memory management: a reservation is
 * PROT_NONE address space, a physical allocation a memfd of its own, a
 * mapping mmap(MAP_SHARED | MAP_FIXED) of it into the reservation, and a
 * run of adjacent mappings with access set is registered with the
 * emulator as one range of device memory (its checks then accept
 * accesses and copies across mapping boundaries, as a GPU's page tables
 * do).
 *
 * Environment: PTXWAVE_EMU_THREADS (host threads), PTXWAVE_EMU_MEMCHECK=1,
 * PTXWAVE_EMU_DEVICES.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "emu/emu.h"
#include "lower/lower.h"
#include "ptx/ptx_parse.h"
#include "runtime/rt.h"
#include "runtime/rt_link.h"
#include "runtime/rt_log.h"

struct rt_bmodule {
  ir_module *ir;
  emu_module *em;
  rt_param_layout *layouts;   /* one per kernel asked for */
  char **names;
  unsigned nlayouts;
};

#define EMU_MAX_DEVICES 16

/* A VMM physical allocation: a memfd of its own. */
typedef struct emu_phys {
  int fd;
  size_t size;
  int dev;
  bool counted;               /* made here (cuMemCreate), not imported: in dev's accounting */
} emu_phys;

/* A mapping of (part of) a physical allocation into a reservation. */
typedef struct emu_map {
  uint64_t va;
  size_t size;
  int dev;                    /* the physical allocation's device */
  uint32_t access;            /* the devices that may access it; any: registered with the emulator */
  uint64_t reg;               /* the start of the run it is registered in, 0 if none */
} emu_map;

/* An IPC mapping of another process's allocation. */
typedef struct emu_ipc {
  uint64_t ptr;               /* what cuIpcOpenMemHandle returned */
  void *map;
  size_t map_len;
  uint64_t key[3];            /* pid, inode, offset: the same handle opens once */
  int refs;
} emu_ipc;

typedef struct emu_be {
  rt_backend b;
  emu_context *ctx;
  unsigned threads;
  int ndev;
  size_t total;                          /* each device's memory: its share of the host's RAM */
  _Atomic size_t allocated[EMU_MAX_DEVICES]; /* bytes in live allocations (cuMemGetInfo) */
  pthread_mutex_t vlock;      /* maps, ipcs */
  pthread_mutex_t qlock;      /* streams, their queues and counters, events, faults */
  pthread_cond_t qdone;       /* broadcast when an operation completes */
  struct emu_stream *streams; /* every stream, the legacy ones too */
  struct emu_stream *legacy[EMU_MAX_DEVICES];
  CUresult fault[EMU_MAX_DEVICES];          /* a kernel fault not yet reported */
  char fault_msg[EMU_MAX_DEVICES][512];
  emu_map *maps;              /* sorted by va */
  size_t nmaps, capmaps;
  emu_ipc *ipcs;
  size_t nipcs, capipcs;
} emu_be;

/* The calling thread's device (set_device). */
static __thread int emu_dev;

static emu_context *C(rt_backend *b) { return ((emu_be *)b)->ctx; }

static CUresult emu_result(emu_status s);
static CUresult from_emu(rt_backend *b, emu_status s) {
  if (s != EMU_OK) emu_error_copy(C(b), b->error, sizeof b->error);
  return emu_result(s);
}

/* ---- streams: queues run by a host thread each ------------------------------
 * A stream is a queue of operations (launches, copies, sets, event records
 * and waits, host functions) and a worker thread that runs them in order,
 * so that work on different streams and devices runs concurrently and a
 * launch returns at once, as on a GPU (docs/runtime.md "Asynchronous
 * streams on the emulator", docs/decisions.md).  Each device has a legacy
 * default stream (rt_bstream NULL: the NULL stream, CU_STREAM_LEGACY and
 * CU_STREAM_PER_THREAD, which the API layer maps to it), made on first
 * use.
 *
 * Ordering between queues is by sequence numbers: each stream numbers the
 * operations submitted to it, and an operation may carry dependencies,
 * (stream, number) pairs that must be complete before it runs.  An event
 * is such a pair (its last record); a wait on it is an operation that
 * depends on it; an operation on the legacy stream depends on the last
 * operation of every blocking stream of its device, and one on a blocking
 * stream on the last of the legacy stream (CUDA Runtime API, "Stream
 * synchronization behavior": the legacy default stream's implicit
 * synchronisation).  One mutex (qlock) guards every queue and counter, and
 * one condition (qdone) is broadcast whenever an operation completes.
 *
 * A kernel fault is kept for its device and returned by the next
 * synchronising call on that device (the API layer makes it the context's
 * sticky error).  Streams are never freed: a destroyed one keeps running
 * what it was given and is reused by a later stream_create once idle, its
 * numbers continuing, so an event or dependency naming it stays valid. */
typedef enum op_kind { OP_LAUNCH, OP_COPY, OP_SET, OP_RECORD, OP_WAIT, OP_HOST } op_kind;

typedef struct emu_stream emu_stream;
typedef struct emu_event emu_event;
typedef struct op_dep {
  emu_stream *s;
  uint64_t seq;
} op_dep;

typedef struct emu_op {
  struct emu_op *next;
  op_kind kind;
  uint64_t seq;
  op_dep *deps;
  unsigned ndeps;
  CUresult *result;           /* a synchronous caller's: the operation's own result */
  union {
    struct {
      rt_bmodule *m;
      const char *kernel;
      emu_dim3 grid, block;
      unsigned shared;
      void *params;
      size_t size;
      bool coop;
    } k;
    struct {
      void *dst;
      const void *src;
      size_t n;
      CUmemorytype dk, sk;
    } cp;
    struct {
      uint64_t d;
      uint32_t v;
      unsigned elem;
      size_t count;
    } ms;
    emu_event *ev;
    struct {
      void (*fn)(void *);
      void *user;
    } host;
  };
} emu_op;

struct emu_stream {
  emu_be *e;
  int dev;
  bool legacy;                /* the device's default stream */
  bool blocking;              /* synchronises with the legacy stream (no CU_STREAM_NON_BLOCKING) */
  bool dead;                  /* destroyed: reusable once idle */
  bool running;               /* its worker thread started */
  emu_op *head, *tail;
  uint64_t submitted, completed;
  pthread_cond_t work;
  emu_stream *next;           /* every stream */
};

struct emu_event {
  emu_stream *s;              /* the last record, NULL: none (complete) */
  uint64_t seq;
  double ms;                  /* the host's clock when the record ran */
  int refs;                   /* the handle and each record in a queue */
};

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Under qlock. */
static bool deps_done(const emu_op *op) {
  for (unsigned i = 0; i < op->ndeps; i++)
    if (op->deps[i].s->completed < op->deps[i].seq) return false;
  return true;
}

static void event_unref(emu_event *ev) {   /* under qlock */
  if (--ev->refs == 0) free(ev);
}

static void fault_keep(emu_be *e, int dev, CUresult r, const char *msg) {   /* under qlock */
  if (e->fault[dev] != CUDA_SUCCESS) return;
  e->fault[dev] = r;
  snprintf(e->fault_msg[dev], sizeof e->fault_msg[dev], "%s", msg);
}

/* The device's pending fault, reported once (the API layer keeps it). */
static CUresult fault_take(emu_be *e, int dev) {
  pthread_mutex_lock(&e->qlock);
  CUresult r = e->fault[dev];
  if (r != CUDA_SUCCESS) snprintf(e->b.error, sizeof e->b.error, "%s", e->fault_msg[dev]);
  e->fault[dev] = CUDA_SUCCESS;
  pthread_mutex_unlock(&e->qlock);
  return r;
}

static CUresult emu_result(emu_status s);
static CUresult run_copy(emu_be *e, void *dst, CUmemorytype dk, const void *src, CUmemorytype sk, size_t n,
                         char *msg, size_t cap);

static CUresult run_op(emu_be *e, emu_op *op, char *msg, size_t cap) {
  switch (op->kind) {
  case OP_LAUNCH: {
    emu_launch_opts o = {.cooperative = op->k.coop, .msg = msg, .msg_cap = cap};
    emu_status st = emu_launch_buffer_opts(op->k.m->em, op->k.kernel, op->k.grid, op->k.block, op->k.shared,
                                           op->k.params, op->k.size, &o);
    if (st != EMU_OK && !msg[0]) emu_error_copy(e->ctx, msg, cap);
    return emu_result(st);
  }
  case OP_COPY: return run_copy(e, op->cp.dst, op->cp.dk, op->cp.src, op->cp.sk, op->cp.n, msg, cap);
  case OP_SET: {
    emu_status st = emu_memset(e->ctx, op->ms.d, op->ms.v, op->ms.elem, op->ms.count);
    if (st != EMU_OK) emu_error_copy(e->ctx, msg, cap);
    return emu_result(st);
  }
  case OP_RECORD: return CUDA_SUCCESS;   /* stamped under qlock (stream_main) */
  case OP_WAIT: return CUDA_SUCCESS;
  case OP_HOST: op->host.fn(op->host.user); return CUDA_SUCCESS;
  }
  return CUDA_ERROR_UNKNOWN;
}

static void op_free(emu_op *op) {
  if (op->kind == OP_LAUNCH) free(op->k.params);
  free(op->deps);
  free(op);
}

static void *stream_main(void *p) {
  emu_stream *s = p;
  emu_be *e = s->e;
  emu_dev = s->dev;
  char msg[1024];
  pthread_mutex_lock(&e->qlock);
  for (;;) {
    while (!s->head) pthread_cond_wait(&s->work, &e->qlock);
    emu_op *op = s->head;
    while (!deps_done(op)) pthread_cond_wait(&e->qdone, &e->qlock);
    pthread_mutex_unlock(&e->qlock);
    msg[0] = 0;
    CUresult r = run_op(e, op, msg, sizeof msg);
    double t = op->kind == OP_RECORD ? now_ms() : 0;
    pthread_mutex_lock(&e->qlock);
    if (op->result) *op->result = r;
    else if (r != CUDA_SUCCESS) fault_keep(e, s->dev, r, msg);
    if (op->kind == OP_RECORD) {
      /* the event's time is its last record's (a later record on another
       * stream may have run first) */
      if (op->ev->s == s && op->ev->seq == op->seq) op->ev->ms = t;
      event_unref(op->ev);
    }
    s->head = op->next;
    if (!s->head) s->tail = NULL;
    s->completed = op->seq;
    pthread_cond_broadcast(&e->qdone);
    op_free(op);
  }
  return NULL;
}

/* The device's legacy stream, made on first use.  Under qlock. */
static emu_stream *stream_new(emu_be *e, int dev, bool legacy, bool blocking);
static emu_stream *legacy_stream(emu_be *e, int dev) {
  if (!e->legacy[dev]) e->legacy[dev] = stream_new(e, dev, true, true);
  return e->legacy[dev];
}

static emu_stream *stream_of(emu_be *e, rt_bstream bs) {   /* under qlock */
  return bs ? (emu_stream *)bs : legacy_stream(e, emu_dev);
}

/* Adds a dependency to op.  Under qlock. */
static bool op_depend(emu_op *op, emu_stream *s, uint64_t seq) {
  if (!s || s->completed >= seq) return true;
  op_dep *nd = realloc(op->deps, (op->ndeps + 1) * sizeof *nd);
  if (!nd) return false;
  op->deps = nd;
  op->deps[op->ndeps++] = (op_dep){s, seq};
  return true;
}

/* Queues op on bs (its worker started if need be); with wait, returns once
 * it ran, with its result.  op is the queue's (freed there) either way. */
static CUresult submit(emu_be *e, rt_bstream bs, emu_op *op, bool wait) {
  CUresult result = CUDA_SUCCESS;
  pthread_mutex_lock(&e->qlock);
  emu_stream *s = stream_of(e, bs);
  bool ok = s != NULL;
  /* the legacy stream's implicit synchronisation */
  if (ok && s->legacy) {
    for (emu_stream *t = e->streams; t && ok; t = t->next)
      if (t != s && t->dev == s->dev && t->blocking && !t->legacy) ok = op_depend(op, t, t->submitted);
  } else if (ok && s->blocking && e->legacy[s->dev]) {
    ok = op_depend(op, e->legacy[s->dev], e->legacy[s->dev]->submitted);
  }
  if (ok && !s->running) {
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    ok = pthread_create(&th, &at, stream_main, s) == 0;
    pthread_attr_destroy(&at);
    s->running = ok;
  }
  if (!ok) {
    pthread_mutex_unlock(&e->qlock);
    op_free(op);
    snprintf(e->b.error, sizeof e->b.error, "no memory or thread for a stream's work");
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (wait) op->result = &result;
  op->seq = ++s->submitted;
  if (op->kind == OP_RECORD) {
    op->ev->s = s;
    op->ev->seq = op->seq;
    op->ev->refs++;   /* the queue's, until the record ran */
  }
  if (s->tail) s->tail->next = op;
  else s->head = op;
  s->tail = op;
  uint64_t seq = op->seq;
  pthread_cond_signal(&s->work);
  if (wait)
    while (s->completed < seq) pthread_cond_wait(&e->qdone, &e->qlock);
  pthread_mutex_unlock(&e->qlock);
  return result;
}

static emu_stream *stream_new(emu_be *e, int dev, bool legacy, bool blocking) {   /* under qlock */
  for (emu_stream *t = e->streams; t; t = t->next)
    if (t->dead && !t->head && t->dev == dev) {   /* idle and destroyed: reused */
      t->dead = false;
      t->legacy = legacy;
      t->blocking = blocking;
      return t;
    }
  emu_stream *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->e = e;
  s->dev = dev;
  s->legacy = legacy;
  s->blocking = blocking;
  pthread_cond_init(&s->work, NULL);
  s->next = e->streams;
  e->streams = s;
  return s;
}

/* Waits until every stream (of device dev; -1: all) has run what it was
 * given before this call (not what comes later).  Under qlock. */
static void drain_locked(emu_be *e, int dev) {
  size_t n = 0;
  for (emu_stream *t = e->streams; t; t = t->next) n++;
  op_dep *upto = calloc(n ? n : 1, sizeof *upto);
  size_t k = 0;
  for (emu_stream *t = e->streams; t && upto; t = t->next)
    if (dev < 0 || t->dev == dev) upto[k++] = (op_dep){t, t->submitted};
  for (;;) {
    bool done = true;
    if (upto) {
      for (size_t i = 0; i < k && done; i++) done = upto[i].s->completed >= upto[i].seq;
    } else {   /* no memory for the snapshot: all that is queued now, later work too */
      for (emu_stream *t = e->streams; t && done; t = t->next)
        done = (dev >= 0 && t->dev != dev) || t->completed >= t->submitted;
    }
    if (done) break;
    pthread_cond_wait(&e->qdone, &e->qlock);
  }
  free(upto);
}

static void drain(emu_be *e, int dev) {
  pthread_mutex_lock(&e->qlock);
  drain_locked(e, dev);
  pthread_mutex_unlock(&e->qlock);
}

static emu_op *op_new(op_kind k) {
  emu_op *op = calloc(1, sizeof *op);
  if (op) op->kind = k;
  return op;
}

static CUresult emu_result(emu_status s) {
  switch (s) {
  case EMU_OK: return CUDA_SUCCESS;
  case EMU_ERR_INVALID_VALUE: return CUDA_ERROR_INVALID_VALUE;
  case EMU_ERR_OUT_OF_MEMORY: return CUDA_ERROR_OUT_OF_MEMORY;
  case EMU_ERR_NOT_FOUND: return CUDA_ERROR_NOT_FOUND;
  case EMU_ERR_UNSUPPORTED: return CUDA_ERROR_NOT_SUPPORTED;
  case EMU_ERR_ILLEGAL_ADDRESS: return CUDA_ERROR_ILLEGAL_ADDRESS;
  case EMU_ERR_ASSERT: return CUDA_ERROR_ASSERT;
  case EMU_ERR_TRAP: return CUDA_ERROR_LAUNCH_FAILED;
  case EMU_ERR_DEADLOCK: return CUDA_ERROR_LAUNCH_TIMEOUT;
  case EMU_ERR_LAUNCH: return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  }
  return CUDA_ERROR_UNKNOWN;
}


static int device_count(rt_backend *b) { return ((emu_be *)b)->ndev; }

static CUresult device_props(rt_backend *b, int dev, rt_device_props *p) {
  emu_be *e = (emu_be *)b;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "ptxwave emulator");
  snprintf(p->arch, sizeof p->arch, "emu");
  p->total_mem = e->total;
  p->pci_device = dev;        /* distinct bus ids (NCCL tells devices apart by them) */
  p->sm_count = (int)((emu_be *)b)->threads;
  p->max_threads_per_block = 1024;
  p->max_block[0] = 1024;
  p->max_block[1] = 1024;
  p->max_block[2] = 64;
  p->max_grid[0] = 0x7fffffff;
  p->max_grid[1] = 65535;
  p->max_grid[2] = 65535;
  p->shared_per_block = 48 * 1024;
  p->shared_per_block_optin = 163 * 1024;
  p->shared_per_sm = 164 * 1024;
  p->regs_per_block = 65536;
  p->regs_per_sm = 65536;
  p->max_threads_per_sm = 2048;
  p->max_blocks_per_sm = 32;
  p->clock_khz = 1000000;
  p->mem_clock_khz = 1000000;
  p->mem_bus_width = 64;
  p->l2_bytes = 4 << 20;
  p->wave_size = 32;
  p->integrated = true;
  /* host and device share memory: managed memory is device memory the
   * host reads and writes in place, at any time, with the host's atomics
   * on the same bytes; pageable host memory is not device memory (the
   * emulator's checks refuse it unless registered) */
  p->managed = p->concurrent_managed = p->direct_managed_host = p->host_native_atomics = true;
  p->pageable_access = false;
  p->vmm = true;
  return CUDA_SUCCESS;
}

/* cuMemGetInfo: each device's memory is its share of the host's RAM, and
 * what is free is what the application has not allocated on it (not the
 * host's free RAM, which other processes move and which allocations touch
 * only when written). */
static CUresult mem_info(rt_backend *b, int dev, size_t *free_bytes, size_t *total) {
  emu_be *e = (emu_be *)b;
  if (dev < 0 || dev >= e->ndev) return CUDA_ERROR_INVALID_DEVICE;
  size_t used = atomic_load(&e->allocated[dev]);
  *total = e->total;
  *free_bytes = used < e->total ? e->total - used : 0;
  return CUDA_SUCCESS;
}

/* n more bytes on device dev, if they fit in its memory. */
static bool charge(emu_be *e, int dev, size_t n) {
  size_t cur = atomic_load(&e->allocated[dev]);
  do {
    if (n > e->total || cur > e->total - n) return false;
  } while (!atomic_compare_exchange_weak(&e->allocated[dev], &cur, cur + n));
  return true;
}

static CUresult mem_alloc(rt_backend *b, size_t n, uint64_t *p) {
  emu_be *e = (emu_be *)b;
  int dev = emu_dev;
  size_t bytes = n ? n : 1;
  if (!charge(e, dev, bytes)) {
    snprintf(b->error, sizeof b->error, "out of memory: %zu bytes asked of device %d, %zu of %zu in use", n,
             dev, atomic_load(&e->allocated[dev]), e->total);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  CUresult r = from_emu(b, emu_malloc_tagged(C(b), n, (uint16_t)dev, p));
  if (r != CUDA_SUCCESS) atomic_fetch_sub(&e->allocated[dev], bytes);
  return r;
}
/* Freeing is ordered (CUDA: cuMemFree, cuModuleUnload and cuMemHostUnregister
 * wait for the work that may still use what they free): they wait for
 * the work every stream of every device was given before the call (a
 * kernel may use a peer's memory), not for later work. */
static CUresult mem_free(rt_backend *b, uint64_t p) {
  emu_be *e = (emu_be *)b;
  emu_mem_desc md;
  bool found = emu_mem_query(C(b), p, &md) == EMU_OK && md.base == p && md.owned;
  drain(e, -1);
  CUresult r = from_emu(b, emu_free(C(b), p));
  if (r == CUDA_SUCCESS && found && md.tag < EMU_MAX_DEVICES) atomic_fetch_sub(&e->allocated[md.tag], md.bytes);
  return r;
}
static CUresult host_register(rt_backend *b, void *p, size_t n) {
  return from_emu(b, emu_register(C(b), p, n));
}
static CUresult host_unregister(rt_backend *b, void *p) {
  drain((emu_be *)b, -1);
  return from_emu(b, emu_unregister(C(b), p));
}
static CUresult mem_range(rt_backend *b, uint64_t p, uint64_t *base, size_t *n) {
  emu_status s = emu_mem_range(C(b), p, base, n);
  return s == EMU_OK ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

static CUresult run_copy(emu_be *e, void *dst, CUmemorytype dk, const void *src, CUmemorytype sk, size_t n,
                         char *msg, size_t cap) {
  uint64_t d = (uint64_t)(uintptr_t)dst, sp = (uint64_t)(uintptr_t)src;
  emu_status st = EMU_OK;
  if (dk == CU_MEMORYTYPE_DEVICE && sk == CU_MEMORYTYPE_DEVICE) st = emu_memcpy_dtod(e->ctx, d, sp, n);
  else if (dk == CU_MEMORYTYPE_DEVICE) st = emu_memcpy_htod(e->ctx, d, src, n);
  else if (sk == CU_MEMORYTYPE_DEVICE) st = emu_memcpy_dtoh(e->ctx, dst, sp, n);
  else memmove(dst, src, n);
  if (st != EMU_OK) emu_error_copy(e->ctx, msg, cap);
  return emu_result(st);
}

/* [p, p+n) lies in one allocation the emulator knows. */
static bool in_range(rt_backend *b, uint64_t p, size_t n) {
  uint64_t base;
  size_t size;
  return emu_mem_range(C(b), p, &base, &size) == EMU_OK && n <= size && p - base <= size - n;
}

/* A synchronous operation, or one touching pageable host memory (CUDA
 * returns from an asynchronous copy to or from pageable memory once the
 * host's side is done with), waits for its turn in the stream and for
 * itself; the synchronous ones return a kernel fault of the device too.
 * An asynchronous one is checked now (a bad range is the call's error,
 * as in CUDA) and queued. */
static CUresult queue_or_wait(rt_backend *b, emu_op *op, rt_bstream s, bool async, bool pageable) {
  emu_be *e = (emu_be *)b;
  if (async && !pageable) return submit(e, s, op, false);
  int dev = emu_dev;
  if (s) {
    pthread_mutex_lock(&e->qlock);
    dev = ((emu_stream *)s)->dev;
    pthread_mutex_unlock(&e->qlock);
  }
  CUresult r = submit(e, s, op, true);
  if (r != CUDA_SUCCESS) return r;
  return async ? CUDA_SUCCESS : fault_take(e, dev);
}

static CUresult do_memcpy(rt_backend *b, void *dst, CUmemorytype dk, const void *src,
                          CUmemorytype sk, size_t n, rt_bstream s, bool async) {
  uint64_t d = (uint64_t)(uintptr_t)dst, sp = (uint64_t)(uintptr_t)src;
  if ((dk == CU_MEMORYTYPE_DEVICE && !in_range(b, d, n)) || (sk == CU_MEMORYTYPE_DEVICE && !in_range(b, sp, n))) {
    char msg[1024] = "";
    CUresult r = run_copy((emu_be *)b, dst, dk, src, sk, n, msg, sizeof msg);   /* the emulator's own error */
    if (r != CUDA_SUCCESS) {
      snprintf(b->error, sizeof b->error, "%s", msg);
      return r;
    }
    return CUDA_ERROR_INVALID_VALUE;
  }
  emu_op *op = op_new(OP_COPY);
  if (!op) return CUDA_ERROR_OUT_OF_MEMORY;
  op->cp.dst = dst;
  op->cp.src = src;
  op->cp.n = n;
  op->cp.dk = dk;
  op->cp.sk = sk;
  /* host memory registered with the emulator (cuMemHostAlloc, cuMemHostRegister)
   * is pinned: copied asynchronously like device memory */
  bool pageable = (dk == CU_MEMORYTYPE_HOST && !in_range(b, d, n)) || (sk == CU_MEMORYTYPE_HOST && !in_range(b, sp, n));
  return queue_or_wait(b, op, s, async, pageable);
}

static CUresult do_memset(rt_backend *b, uint64_t d, uint32_t v, unsigned elem, size_t count,
                          rt_bstream s, bool async) {
  if (count > SIZE_MAX / elem || !in_range(b, d, count * elem)) return from_emu(b, emu_memset(C(b), d, v, elem, count));
  emu_op *op = op_new(OP_SET);
  if (!op) return CUDA_ERROR_OUT_OF_MEMORY;
  op->ms.d = d;
  op->ms.v = v;
  op->ms.elem = elem;
  op->ms.count = count;
  return queue_or_wait(b, op, s, async, false);
}

/* Did lower_tex attribute its errors to functions (lower_error marks the
 * function: ir_func.failed_at)? */
static bool tex_errors_per_kernel(const ir_module *ir) {
  ir_foreach_func(ir, f) if (f->failed_at) return true;
  return false;
}

static CUresult module_load_ptx(rt_backend *b, const char *name, const char *ptx, size_t len,
                                rt_bmodule **out) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *ir = rt_parse_module(name, ptx, len, &d);  /* PTX or a linked image (rt_link.h) */
  if (!ir) {
    snprintf(b->error, sizeof b->error, "the PTX does not parse:\n%s", pw_diag_text(&d));
    pw_diag_fini(&d);
    return CUDA_ERROR_INVALID_PTX;
  }
  pw_diag_fini(&d);
  /* an instruction the emulator cannot run fails the launch of a kernel
   * that reaches it (EMU_ERR_UNSUPPORTED, named), not the load */
  rt_bmodule *m = calloc(1, sizeof *m);
  if (!m) {
    ir_module_destroy(ir);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  /* Textures and surfaces are plain IR after lower_tex (descriptor loads
   * and global loads, docs/lowering.md "Textures"); the rest of the IR
   * stays unlowered, as the emulator runs it.  PTXWAVE_EMU_LOWER=TARGET
   * (tests: a whole program through lower/, e.g. mma.sync on MFMA/WMMA)
   * runs the module lowered for TARGET instead, at its wave size; device
   * printf then goes to a buffer nothing drains. */
  pw_diag_init(&d, NULL);
  const char *lt = getenv("PTXWAVE_EMU_LOWER");
  const ir_target *ltg = lt && *lt ? ir_target_find(lt) : NULL;
  if (lt && *lt && !ltg) pw_error(&d, name, "PTXWAVE_EMU_LOWER: no target '%s'", lt);
  else if (ltg) lower_module(ir, ltg, &(lower_pipeline_options){.diag = &d});
  else lower_tex(ir, &(lower_tex_options){.diag = &d});
  if (d.nerrors && !ltg && tex_errors_per_kernel(ir)) {
    /* Per-kernel failure (docs/runtime.md): lower_tex leaves a texture
     * instruction it refuses in place and marks its function, so the
     * emulator refuses it at the launch of a kernel that reaches it (named,
     * with its line) and the module's other kernels run.  Why it was
     * refused goes to the log. */
    RT_LOG(rt_warn, "%s", pw_diag_text(&d));
  } else if (d.nerrors) {
    snprintf(b->error, sizeof b->error, "%s", pw_diag_text(&d));
    pw_diag_fini(&d);
    ir_module_destroy(ir);
    free(m);
    return CUDA_ERROR_INVALID_PTX;
  }
  pw_diag_fini(&d);
  m->ir = ir;
  emu_be *e = (emu_be *)b;
  emu_status s = emu_module_load(e->ctx, ir, &m->em);
  if (s != EMU_OK) {
    CUresult r = from_emu(b, s);
    ir_module_destroy(ir);
    free(m);
    return r == CUDA_ERROR_NOT_SUPPORTED ? CUDA_ERROR_INVALID_PTX : r;
  }
  *out = m;
  return CUDA_SUCCESS;
}

static void module_unload(rt_backend *b, rt_bmodule *m) {
  if (!m) return;
  emu_be *e = (emu_be *)b;
  drain(e, -1);   /* after the launches from it (mem_free) */
  emu_module_unload(m->em);
  ir_module_destroy(m->ir);
  for (unsigned i = 0; i < m->nlayouts; i++) {
    free(m->layouts[i].params);
    free(m->names[i]);
  }
  free(m->layouts);
  free(m->names);
  free(m);
}

static CUresult module_global(rt_backend *b, rt_bmodule *m, const char *name, uint64_t *p,
                              size_t *n) {
  emu_status s = emu_module_global(m->em, name, p, n);
  if (s == EMU_ERR_NOT_FOUND) return CUDA_ERROR_NOT_FOUND;
  return from_emu(b, s);
}

static CUresult kernel_params(rt_backend *b, rt_bmodule *m, const char *kernel,
                              rt_param_layout *out) {
  unsigned n;
  const emu_param_info *pi;
  uint32_t size;
  emu_status s = emu_kernel_params(m->em, kernel, &n, &pi, &size);
  if (s == EMU_ERR_NOT_FOUND) {
    snprintf(b->error, sizeof b->error, "no kernel named %s", kernel);
    return CUDA_ERROR_NOT_FOUND;
  }
  if (s != EMU_OK) return from_emu(b, s);
  rt_param_layout L = {.nparams = n, .size = size};
  L.params = calloc(n ? n : 1, sizeof *L.params);
  char *nm = strdup(kernel);
  rt_param_layout *nl = realloc(m->layouts, (m->nlayouts + 1) * sizeof *nl);
  char **nn = nl ? realloc(m->names, (m->nlayouts + 1) * sizeof *nn) : NULL;
  if (!L.params || !nm || !nl || !nn) {
    free(L.params);
    free(nm);
    if (nl) m->layouts = nl;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  for (unsigned i = 0; i < n; i++) {
    L.params[i].offset = pi[i].offset;
    L.params[i].size = pi[i].size;
  }
  m->layouts = nl;
  m->names = nn;
  m->layouts[m->nlayouts] = L;
  m->names[m->nlayouts++] = nm;
  *out = L;
  return CUDA_SUCCESS;
}

/* A launch is checked now (the configuration errors are the call's) and
 * queued with a copy of its parameters; a fault in the kernel is kept for
 * the next synchronising call. */
static CUresult queue_launch(rt_backend *b, rt_bmodule *m, const char *kernel, const unsigned grid[3],
                             const unsigned block[3], unsigned shared, rt_bstream s, const void *params,
                             size_t size, bool coop) {
  emu_dim3 g = {grid[0], grid[1], grid[2]}, bl = {block[0], block[1], block[2]};
  emu_status st = emu_launch_check(m->em, kernel, g, bl, shared, params ? size : 0);
  if (st != EMU_OK) return from_emu(b, st);
  emu_op *op = op_new(OP_LAUNCH);
  if (!op || !(op->k.params = malloc(size ? size : 1))) {
    free(op);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (size) memcpy(op->k.params, params, size);
  op->k.m = m;
  op->k.kernel = kernel;   /* the API layer's function name: lives until the module is unloaded (drained) */
  op->k.grid = g;
  op->k.block = bl;
  op->k.shared = shared;
  op->k.size = size;
  op->k.coop = coop;
  return submit((emu_be *)b, s, op, false);
}

static CUresult launch(rt_backend *b, rt_bmodule *m, const char *kernel, const unsigned grid[3],
                       const unsigned block[3], unsigned shared, rt_bstream s, const void *params,
                       size_t size) {
  return queue_launch(b, m, kernel, grid, block, shared, s, params, size, false);
}

/* Every workgroup resident and the grid workspace in %envreg1/2
 * (emu_launch_opts): grid.sync() as on a GPU. */
static CUresult launch_cooperative(rt_backend *b, rt_bmodule *m, const char *kernel,
                                   const unsigned grid[3], const unsigned block[3], unsigned shared,
                                   rt_bstream s, const void *params, size_t size) {
  return queue_launch(b, m, kernel, grid, block, shared, s, params, size, true);
}

static CUresult stream_create_flags(rt_backend *b, unsigned flags, rt_bstream *out) {
  emu_be *e = (emu_be *)b;
  pthread_mutex_lock(&e->qlock);
  emu_stream *s = stream_new(e, emu_dev, false, !(flags & CU_STREAM_NON_BLOCKING));
  pthread_mutex_unlock(&e->qlock);
  *out = s;
  return s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult stream_create(rt_backend *b, rt_bstream *out) { return stream_create_flags(b, 0, out); }

/* CUDA: the stream's work still runs; its resources go when it is done
 * (here: the stream is reused once idle). */
static CUresult stream_destroy(rt_backend *b, rt_bstream bs) {
  emu_be *e = (emu_be *)b;
  if (!bs) return CUDA_SUCCESS;
  pthread_mutex_lock(&e->qlock);
  ((emu_stream *)bs)->dead = true;
  pthread_mutex_unlock(&e->qlock);
  return CUDA_SUCCESS;
}

static CUresult stream_sync(rt_backend *b, rt_bstream bs) {
  emu_be *e = (emu_be *)b;
  pthread_mutex_lock(&e->qlock);
  emu_stream *s = stream_of(e, bs);
  if (!s) {
    pthread_mutex_unlock(&e->qlock);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  uint64_t upto = s->submitted;
  while (s->completed < upto) pthread_cond_wait(&e->qdone, &e->qlock);
  int dev = s->dev;
  pthread_mutex_unlock(&e->qlock);
  return fault_take(e, dev);
}

static CUresult stream_query(rt_backend *b, rt_bstream bs) {
  emu_be *e = (emu_be *)b;
  pthread_mutex_lock(&e->qlock);
  emu_stream *s = stream_of(e, bs);
  bool done = !s || s->completed >= s->submitted;
  int dev = s ? s->dev : emu_dev;
  pthread_mutex_unlock(&e->qlock);
  return done ? fault_take(e, dev) : CUDA_ERROR_NOT_READY;
}

/* cuCtxSynchronize: the calling thread's device (its context's) */
static CUresult device_sync(rt_backend *b) {
  emu_be *e = (emu_be *)b;
  drain(e, emu_dev);
  return fault_take(e, emu_dev);
}

static CUresult host_fn(rt_backend *b, rt_bstream s, void (*fn)(void *), void *user) {
  emu_op *op = op_new(OP_HOST);
  if (!op) return CUDA_ERROR_OUT_OF_MEMORY;
  op->host.fn = fn;
  op->host.user = user;
  return submit((emu_be *)b, s, op, false);
}

/* ---- events: a stream and a sequence number (the streams' comment) ----- */
static CUresult event_create(rt_backend *b, unsigned flags, void **out) {
  emu_event *ev = calloc(1, sizeof *ev);
  if (!ev) return CUDA_ERROR_OUT_OF_MEMORY;
  ev->refs = 1;
  *out = ev;
  return CUDA_SUCCESS;
}

static CUresult event_destroy(rt_backend *b, void *p) {
  emu_be *e = (emu_be *)b;
  pthread_mutex_lock(&e->qlock);
  event_unref(p);   /* a record still queued keeps it */
  pthread_mutex_unlock(&e->qlock);
  return CUDA_SUCCESS;
}

static CUresult event_record(rt_backend *b, void *p, rt_bstream s) {
  emu_op *op = op_new(OP_RECORD);
  if (!op) return CUDA_ERROR_OUT_OF_MEMORY;
  op->ev = p;
  return submit((emu_be *)b, s, op, false);
}

static bool event_done(const emu_event *ev) { return !ev->s || ev->s->completed >= ev->seq; }   /* under qlock */

static CUresult event_query(rt_backend *b, void *p) {
  emu_be *e = (emu_be *)b;
  pthread_mutex_lock(&e->qlock);
  bool done = event_done(p);
  pthread_mutex_unlock(&e->qlock);
  return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

static CUresult event_sync(rt_backend *b, void *p) {
  emu_be *e = (emu_be *)b;
  emu_event *ev = p;
  pthread_mutex_lock(&e->qlock);
  while (!event_done(ev)) pthread_cond_wait(&e->qdone, &e->qlock);
  int dev = ev->s ? ev->s->dev : emu_dev;
  pthread_mutex_unlock(&e->qlock);
  return fault_take(e, dev);
}

static CUresult event_elapsed(rt_backend *b, float *ms, void *start, void *end) {
  emu_be *e = (emu_be *)b;
  emu_event *a = start, *z = end;
  pthread_mutex_lock(&e->qlock);
  bool done = event_done(a) && event_done(z);
  if (done) *ms = (float)(z->ms - a->ms);
  pthread_mutex_unlock(&e->qlock);
  return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

/* s's later work waits for the event's last record (as it is now). */
static CUresult stream_wait_event(rt_backend *b, rt_bstream s, void *p) {
  emu_be *e = (emu_be *)b;
  emu_event *ev = p;
  emu_op *op = op_new(OP_WAIT);
  if (!op) return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&e->qlock);
  bool ok = op_depend(op, ev->s, ev->seq);
  bool none = !op->ndeps;
  pthread_mutex_unlock(&e->qlock);
  if (!ok || none) {
    op_free(op);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  }
  return submit(e, s, op, false);
}

/* IPC of events: the handle names the event and its process (pid and
 * start time), so a made-up or stale one is refused.  An event opened in
 * another process is one that is always complete: waiting on it there
 * finds the exporter's work done only as far as the exporter synchronised
 * before passing the handle on (ptxwave's emulator shares no queues
 * between processes; docs/runtime.md). */
#define IPC_EVENT_MAGIC 0x50574945u   /* "PWIE" */
typedef struct ipc_event_wire {
  uint32_t magic, version;
  int32_t pid, pad;
  uint64_t event, start;
} ipc_event_wire;
_Static_assert(sizeof(ipc_event_wire) <= sizeof(CUipcEventHandle), "the handle holds it");
static uint64_t proc_start(pid_t pid);

static CUresult ipc_event_get(rt_backend *b, void *p, CUipcEventHandle *h) {
  ipc_event_wire w = {.magic = IPC_EVENT_MAGIC, .version = 1, .pid = getpid(), .event = (uint64_t)(uintptr_t)p,
                      .start = proc_start(getpid())};
  memset(h, 0, sizeof *h);
  memcpy(h->reserved, &w, sizeof w);
  return CUDA_SUCCESS;
}

static CUresult ipc_event_open(rt_backend *b, const CUipcEventHandle *h, void **out) {
  ipc_event_wire w;
  memcpy(&w, h->reserved, sizeof w);
  if (w.magic != IPC_EVENT_MAGIC || w.version != 1 || !w.event) return CUDA_ERROR_INVALID_VALUE;
  if (w.pid == getpid()) return CUDA_ERROR_INVALID_CONTEXT;   /* as for memory handles */
  if (proc_start(w.pid) != w.start) return CUDA_ERROR_INVALID_VALUE;   /* ended (or another process now) */
  return event_create(b, 0, out);
}

/* ---- several devices ------------------------------------------------------ */
static CUresult set_device(rt_backend *b, int dev) {
  if (dev < 0 || dev >= ((emu_be *)b)->ndev) return CUDA_ERROR_INVALID_DEVICE;
  emu_dev = dev;
  return CUDA_SUCCESS;
}

static int mem_device(rt_backend *b, uint64_t p) {
  emu_mem_desc md;
  if (emu_mem_query(C(b), p, &md) != EMU_OK) return -1;
  return md.tag < ((emu_be *)b)->ndev ? md.tag : 0;
}

/* One address space: every device reaches every other's memory. */
static CUresult can_access_peer(rt_backend *b, int dev, int peer, int *can) {
  *can = dev != peer;
  return CUDA_SUCCESS;
}
static CUresult peer_access(rt_backend *b, int peer, bool enable) { return CUDA_SUCCESS; }

static CUresult p2p_attribute(rt_backend *b, CUdevice_P2PAttribute a, int src, int dst, int *v) {
  switch (a) {
  case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *v = 0; return CUDA_SUCCESS;
  case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
  case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:   /* the host's atomics on the same bytes */
  case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: *v = 1; return CUDA_SUCCESS;
  case CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED: *v = 0; return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

static CUresult memcpy_peer(rt_backend *b, uint64_t dst, int ddev, uint64_t src, int sdev, size_t n,
                            rt_bstream s, bool async) {
  return do_memcpy(b, (void *)(uintptr_t)dst, CU_MEMORYTYPE_DEVICE, (const void *)(uintptr_t)src,
                   CU_MEMORYTYPE_DEVICE, n, s, async);
}

/* ---- managed memory: device memory the host reads and writes in place ---- */
static CUresult mem_alloc_managed(rt_backend *b, size_t n, unsigned flags, uint64_t *p) {
  return mem_alloc(b, n, p);
}
/* Nothing moves: every processor reads the same bytes. */
static CUresult mem_prefetch(rt_backend *b, uint64_t p, size_t n, int dev, rt_bstream s) { return CUDA_SUCCESS; }
static CUresult mem_advise(rt_backend *b, uint64_t p, size_t n, CUmem_advise a, int dev) { return CUDA_SUCCESS; }

/* ---- IPC -------------------------------------------------------------------
 * A handle names the exporting process's memfd and the allocation in it:
 * the process (pid and its start time, so a reused pid is refused), the
 * descriptor, the file's inode (checked after opening), the offset and
 * size.  The importer opens /proc/PID/fd/FD (same user: the kernel allows
 * it as it allows reading the process's /proc entries) and maps the pages
 * holding the allocation. */
#define IPC_MAGIC 0x50574950u   /* "PWIP" */
typedef struct ipc_wire {
  uint32_t magic, version;
  int32_t pid, fd;
  uint64_t start, inode, offset, size;
  uint32_t dev, pad;
} ipc_wire;
_Static_assert(sizeof(ipc_wire) <= sizeof(CUipcMemHandle), "the handle holds it");

/* A process's start time in clock ticks since boot (proc(5), field 22). */
static uint64_t proc_start(pid_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char *q = strrchr(buf, ')');   /* the command may hold spaces */
  if (!q) return 0;
  unsigned long long v = 0;
  /* fields 3..22 after the name: skip 19 */
  for (int f = 0; f < 20 && q; f++) q = strchr(q + 1, ' ');
  if (!q || sscanf(q + 1, "%llu", &v) != 1) return 0;
  return v;
}

static CUresult ipc_mem_get(rt_backend *b, uint64_t p, CUipcMemHandle *h) {
  emu_mem_desc md;
  if (emu_mem_query(C(b), p, &md) != EMU_OK || !md.owned) {
    snprintf(b->error, sizeof b->error, "cuIpcGetMemHandle: 0x%llx is not in a cuMemAlloc'ed allocation",
             (unsigned long long)p);
    return CUDA_ERROR_INVALID_VALUE;
  }
  struct stat st;
  if (md.fd < 0 || fstat(md.fd, &st) != 0) {
    snprintf(b->error, sizeof b->error, "cuIpcGetMemHandle: the emulator's device memory is not shareable here "
             "(no memfd mapping)");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  ipc_wire w = {.magic = IPC_MAGIC, .version = 1, .pid = getpid(), .fd = md.fd, .start = proc_start(getpid()),
                .inode = st.st_ino, .offset = md.offset, .size = md.bytes, .dev = md.tag};
  memset(h, 0, sizeof *h);
  memcpy(h->reserved, &w, sizeof w);
  return CUDA_SUCCESS;
}

static CUresult ipc_mem_open(rt_backend *b, const CUipcMemHandle *h, uint64_t *out) {
  emu_be *e = (emu_be *)b;
  ipc_wire w;
  memcpy(&w, h->reserved, sizeof w);
  if (w.magic != IPC_MAGIC || w.version != 1 || w.size == 0) {
    snprintf(b->error, sizeof b->error, "cuIpcOpenMemHandle: not a handle of ptxwave's emulator");
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (w.pid == getpid()) {
    /* CUDA: a handle is opened by another process (cudaErrorDeviceUninitialized,
     * "invalid device context", in the exporting one) */
    snprintf(b->error, sizeof b->error, "cuIpcOpenMemHandle: the handle was made in this process");
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  uint64_t key[3] = {(uint64_t)w.pid, w.inode, w.offset};
  pthread_mutex_lock(&e->vlock);
  for (size_t i = 0; i < e->nipcs; i++)
    if (!memcmp(e->ipcs[i].key, key, sizeof key)) {
      e->ipcs[i].refs++;   /* opened again: the same pointer, counted (CUDA) */
      *out = e->ipcs[i].ptr;
      pthread_mutex_unlock(&e->vlock);
      return CUDA_SUCCESS;
    }
  pthread_mutex_unlock(&e->vlock);
  if (proc_start(w.pid) != w.start) {
    snprintf(b->error, sizeof b->error, "cuIpcOpenMemHandle: process %d, which made the handle, has ended",
             (int)w.pid);
    return CUDA_ERROR_INVALID_VALUE;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)w.pid, (int)w.fd);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_ino != w.inode) {
    snprintf(b->error, sizeof b->error, "cuIpcOpenMemHandle: cannot open %s: %s", path,
             fd < 0 ? strerror(errno) : "another file");
    if (fd >= 0) close(fd);
    return CUDA_ERROR_INVALID_VALUE;
  }
  uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  uint64_t start = w.offset & ~(page - 1);
  size_t len = (size_t)(w.offset - start + w.size);
  void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)start);
  close(fd);
  if (m == MAP_FAILED) {
    snprintf(b->error, sizeof b->error, "cuIpcOpenMemHandle: mmap: %s", strerror(errno));
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  uint64_t ptr = (uint64_t)(uintptr_t)m + (w.offset - start);
  /* the exporter's device, if this process has it */
  int dev = (int)w.dev < e->ndev ? (int)w.dev : 0;
  CUresult r = from_emu(b, emu_register_tagged(C(b), (void *)(uintptr_t)ptr, (size_t)w.size, (uint16_t)dev));
  pthread_mutex_lock(&e->vlock);
  if (r == CUDA_SUCCESS && e->nipcs == e->capipcs) {
    size_t nc = e->capipcs ? e->capipcs * 2 : 8;
    emu_ipc *ni = realloc(e->ipcs, nc * sizeof *ni);
    if (ni) {
      e->ipcs = ni;
      e->capipcs = nc;
    } else {
      r = CUDA_ERROR_OUT_OF_MEMORY;
      emu_unregister(C(b), (void *)(uintptr_t)ptr);
    }
  }
  if (r == CUDA_SUCCESS) {
    e->ipcs[e->nipcs++] = (emu_ipc){.ptr = ptr, .map = m, .map_len = len, .key = {key[0], key[1], key[2]},
                                    .refs = 1};
    *out = ptr;
  }
  pthread_mutex_unlock(&e->vlock);
  if (r != CUDA_SUCCESS) munmap(m, len);
  return r;
}

static CUresult ipc_mem_close(rt_backend *b, uint64_t p) {
  emu_be *e = (emu_be *)b;
  pthread_mutex_lock(&e->vlock);
  for (size_t i = 0; i < e->nipcs; i++) {
    if (e->ipcs[i].ptr != p) continue;
    emu_ipc c = e->ipcs[i];
    if (--e->ipcs[i].refs > 0) {
      pthread_mutex_unlock(&e->vlock);
      return CUDA_SUCCESS;
    }
    e->ipcs[i] = e->ipcs[--e->nipcs];
    pthread_mutex_unlock(&e->vlock);
    drain(e, -1);   /* after the work that may use it (ordered freeing) */
    emu_unregister(C(b), (void *)(uintptr_t)p);
    munmap(c.map, c.map_len);
    return CUDA_SUCCESS;
  }
  pthread_mutex_unlock(&e->vlock);
  snprintf(b->error, sizeof b->error, "cuIpcCloseMemHandle: 0x%llx was not opened by cuIpcOpenMemHandle",
           (unsigned long long)p);
  return CUDA_ERROR_INVALID_VALUE;
}

/* ---- virtual memory management ------------------------------------------- */
#define VMM_GRANULARITY ((size_t)2 << 20)   /* CUDA's on current GPUs: 2 MiB */

static CUresult vmm_reserve(rt_backend *b, size_t size, size_t align, uint64_t hint, uint64_t *out) {
  if (align < VMM_GRANULARITY) align = VMM_GRANULARITY;
  size_t len = size + align;
  if (len < size) return CUDA_ERROR_OUT_OF_MEMORY;
  /* a hint is honoured where it is free and aligned, as CUDA takes it */
  if (hint && hint % align == 0) {
    void *p = mmap((void *)(uintptr_t)hint, size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != MAP_FAILED) {
      if ((uint64_t)(uintptr_t)p == hint) {
        *out = hint;
        return CUDA_SUCCESS;
      }
      munmap(p, size);
    }
  }
  uint8_t *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    snprintf(b->error, sizeof b->error, "cuMemAddressReserve: mmap of %zu bytes: %s", len, strerror(errno));
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  uintptr_t a = ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
  if (a > (uintptr_t)p) munmap(p, a - (uintptr_t)p);
  if ((uintptr_t)p + len > a + size) munmap((void *)(a + size), (uintptr_t)p + len - (a + size));
  if ((uint64_t)(a + size) > (1ull << 47)) {
    munmap((void *)a, size);
    snprintf(b->error, sizeof b->error, "cuMemAddressReserve: the range is above 2^47");
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *out = a;
  return CUDA_SUCCESS;
}

static CUresult vmm_free(rt_backend *b, uint64_t p, size_t size) {
  return munmap((void *)(uintptr_t)p, size) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* dev -1: host memory, in no device's accounting */
static CUresult vmm_create(rt_backend *b, size_t size, int dev, bool fd_handle, void **out) {
  emu_be *e = (emu_be *)b;
  if (dev < -1 || dev >= e->ndev) return CUDA_ERROR_INVALID_DEVICE;
  emu_phys *ph = calloc(1, sizeof *ph);
  if (!ph) return CUDA_ERROR_OUT_OF_MEMORY;
  if (dev >= 0 && !charge(e, dev, size)) {
    free(ph);
    snprintf(b->error, sizeof b->error, "cuMemCreate: %zu bytes do not fit in device %d's memory", size, dev);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  ph->fd = memfd_create("ptxwave-vmm", MFD_CLOEXEC);
  if (ph->fd < 0 || ftruncate(ph->fd, (off_t)size) != 0) {
    snprintf(b->error, sizeof b->error, "cuMemCreate: memfd of %zu bytes: %s", size, strerror(errno));
    if (ph->fd >= 0) close(ph->fd);
    free(ph);
    if (dev >= 0) atomic_fetch_sub(&e->allocated[dev], size);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  ph->size = size;
  ph->dev = dev >= 0 ? dev : 0;
  ph->counted = dev >= 0;
  *out = ph;
  return CUDA_SUCCESS;
}

static CUresult vmm_release(rt_backend *b, void *h) {
  emu_be *e = (emu_be *)b;
  emu_phys *ph = h;
  close(ph->fd);
  if (ph->counted) atomic_fetch_sub(&e->allocated[ph->dev], ph->size);
  free(ph);
  return CUDA_SUCCESS;
}

/* Re-registers the runs of accessible mappings around [lo, hi): the
 * emulator sees each maximal run of adjacent accessible mappings as one
 * range of device memory.  Under vlock. */
static void vmm_rerun(emu_be *e, uint64_t lo, uint64_t hi) {
  size_t i = 0;
  while (i < e->nmaps && e->maps[i].va + e->maps[i].size < lo) i++;
  /* widen to the adjacent mappings on either side */
  while (i > 0 && e->maps[i - 1].va + e->maps[i - 1].size == e->maps[i].va) i--;
  size_t j = i;
  while (j < e->nmaps && (e->maps[j].va < hi || (j > i && e->maps[j - 1].va + e->maps[j - 1].size == e->maps[j].va)))
    j++;
  drain(e, -1);   /* after the work that may use them */
  for (size_t k = i; k < j; k++)
    if (e->maps[k].reg) {
      uint64_t r = e->maps[k].reg;
      emu_unregister(e->ctx, (void *)(uintptr_t)r);
      for (size_t m = i; m < j; m++)
        if (e->maps[m].reg == r) e->maps[m].reg = 0;
    }
  for (size_t k = i; k < j;) {
    if (!e->maps[k].access) {
      k++;
      continue;
    }
    size_t end = k + 1;
    while (end < j && e->maps[end].access && e->maps[end - 1].va + e->maps[end - 1].size == e->maps[end].va) end++;
    uint64_t base = e->maps[k].va, top = e->maps[end - 1].va + e->maps[end - 1].size;
    if (emu_register_tagged(e->ctx, (void *)(uintptr_t)base, (size_t)(top - base), (uint16_t)e->maps[k].dev) == EMU_OK)
      for (size_t m = k; m < end; m++) e->maps[m].reg = base;
    k = end;
  }
}

static CUresult vmm_map(rt_backend *b, uint64_t p, size_t size, size_t off, void *h) {
  emu_be *e = (emu_be *)b;
  emu_phys *ph = h;
  void *m = mmap((void *)(uintptr_t)p, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, ph->fd, (off_t)off);
  if (m == MAP_FAILED) {
    snprintf(b->error, sizeof b->error, "cuMemMap: mmap: %s", strerror(errno));
    return CUDA_ERROR_INVALID_VALUE;
  }
  pthread_mutex_lock(&e->vlock);
  if (e->nmaps == e->capmaps) {
    size_t nc = e->capmaps ? e->capmaps * 2 : 16;
    emu_map *nm = realloc(e->maps, nc * sizeof *nm);
    if (!nm) {
      pthread_mutex_unlock(&e->vlock);
      mmap((void *)(uintptr_t)p, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    e->maps = nm;
    e->capmaps = nc;
  }
  size_t i = 0;
  while (i < e->nmaps && e->maps[i].va < p) i++;
  memmove(&e->maps[i + 1], &e->maps[i], (e->nmaps - i) * sizeof *e->maps);
  e->maps[i] = (emu_map){.va = p, .size = size, .dev = ph->dev};
  e->nmaps++;
  pthread_mutex_unlock(&e->vlock);
  return CUDA_SUCCESS;
}

static CUresult vmm_unmap(rt_backend *b, uint64_t p, size_t size) {
  emu_be *e = (emu_be *)b;
  pthread_mutex_lock(&e->vlock);
  for (size_t i = 0; i < e->nmaps;) {
    if (e->maps[i].va >= p && e->maps[i].va + e->maps[i].size <= p + size) {
      e->maps[i].access = 0;
      vmm_rerun(e, e->maps[i].va, e->maps[i].va + e->maps[i].size);
      memmove(&e->maps[i], &e->maps[i + 1], (e->nmaps - i - 1) * sizeof *e->maps);
      e->nmaps--;
    } else {
      i++;
    }
  }
  pthread_mutex_unlock(&e->vlock);
  /* back to reserved address space (the memfd keeps its pages while other
   * mappings or the handle hold it) */
  void *m = mmap((void *)(uintptr_t)p, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  return m == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

/* One address space for all devices: a range is device memory while any
 * device may access it. */
static CUresult vmm_set_access(rt_backend *b, uint64_t p, size_t size, int dev, unsigned flags) {
  emu_be *e = (emu_be *)b;
  pthread_mutex_lock(&e->vlock);
  bool any = false;
  for (size_t i = 0; i < e->nmaps; i++)
    if (e->maps[i].va >= p && e->maps[i].va + e->maps[i].size <= p + size) {
      if (flags != CU_MEM_ACCESS_FLAGS_PROT_NONE) e->maps[i].access |= 1u << dev;
      else e->maps[i].access &= ~(1u << dev);
      any = true;
    }
  if (any) vmm_rerun(e, p, p + size);
  pthread_mutex_unlock(&e->vlock);
  return CUDA_SUCCESS;
}

static CUresult vmm_export_fd(rt_backend *b, void *h, int *fd) {
  emu_phys *ph = h;
  *fd = fcntl(ph->fd, F_DUPFD_CLOEXEC, 0);
  return *fd >= 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* The descriptor stays the caller's: the allocation keeps a duplicate. */
static CUresult vmm_import_fd(rt_backend *b, int fd, void **out, size_t *size) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    snprintf(b->error, sizeof b->error, "cuMemImportFromShareableHandle: %d is not a memory file", fd);
    return CUDA_ERROR_INVALID_VALUE;
  }
  emu_phys *ph = calloc(1, sizeof *ph);
  if (!ph) return CUDA_ERROR_OUT_OF_MEMORY;
  ph->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (ph->fd < 0) {
    free(ph);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  ph->size = (size_t)st.st_size;
  ph->dev = emu_dev;
  /* the memory is the exporter's: not counted again here (as IPC) */
  *out = ph;
  *size = ph->size;
  return CUDA_SUCCESS;
}

rt_backend *rt_backend_emu_create(void) {
  emu_be *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  emu_options opt = {0};
  const char *th = getenv("PTXWAVE_EMU_THREADS");
  if (th) opt.threads = (unsigned)atoi(th);
  const char *mc = getenv("PTXWAVE_EMU_MEMCHECK");
  opt.memcheck = mc && *mc == '1';
  if (emu_context_create(&opt, &e->ctx) != EMU_OK) {
    free(e);
    return NULL;
  }
  const char *nd = getenv("PTXWAVE_EMU_DEVICES");
  e->ndev = nd && *nd ? atoi(nd) : 1;
  if (e->ndev < 1 || e->ndev > EMU_MAX_DEVICES) {
    RT_LOG(rt_warn, "PTXWAVE_EMU_DEVICES=%s: 1 to %d devices; using 1", nd, EMU_MAX_DEVICES);
    e->ndev = 1;
  }
  struct sysinfo si;
  sysinfo(&si);
  e->total = (size_t)si.totalram * si.mem_unit / (size_t)e->ndev;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  e->threads = opt.threads ? opt.threads : (unsigned)(cores > 0 ? cores : 1);
  pthread_mutex_init(&e->vlock, NULL);
  pthread_mutex_init(&e->qlock, NULL);
  pthread_cond_init(&e->qdone, NULL);
  e->b = (rt_backend){.name = "emu",
                      .device_count = device_count,
                      .device_props = device_props,
                      .mem_info = mem_info,
                      .mem_alloc = mem_alloc,
                      .mem_free = mem_free,
                      .host_register = host_register,
                      .host_unregister = host_unregister,
                      .mem_range = mem_range,
                      .memcpy = do_memcpy,
                      .memset = do_memset,
                      .module_load_ptx = module_load_ptx,
                      .module_unload = module_unload,
                      .module_global = module_global,
                      .kernel_params = kernel_params,
                      .launch = launch,
                      .launch_cooperative = launch_cooperative,
                      .stream_create = stream_create,
                      .stream_destroy = stream_destroy,
                      .stream_sync = stream_sync,
                      .device_sync = device_sync,
                      .stream_create_flags = stream_create_flags,
                      .stream_query = stream_query,
                      .host_fn = host_fn,
                      .event_create = event_create,
                      .event_destroy = event_destroy,
                      .event_record = event_record,
                      .event_query = event_query,
                      .event_sync = event_sync,
                      .event_elapsed = event_elapsed,
                      .stream_wait_event = stream_wait_event,
                      .ipc_event_get = ipc_event_get,
                      .ipc_event_open = ipc_event_open,
                      .set_device = set_device,
                      .mem_device = mem_device,
                      .can_access_peer = can_access_peer,
                      .peer_access = peer_access,
                      .p2p_attribute = p2p_attribute,
                      .memcpy_peer = memcpy_peer,
                      .mem_alloc_managed = mem_alloc_managed,
                      .mem_prefetch = mem_prefetch,
                      .mem_advise = mem_advise,
                      .ipc_mem_get = ipc_mem_get,
                      .ipc_mem_open = ipc_mem_open,
                      .ipc_mem_close = ipc_mem_close,
                      .vmm_granularity = VMM_GRANULARITY,
                      .vmm_reserve = vmm_reserve,
                      .vmm_free = vmm_free,
                      .vmm_create = vmm_create,
                      .vmm_release = vmm_release,
                      .vmm_map = vmm_map,
                      .vmm_unmap = vmm_unmap,
                      .vmm_set_access = vmm_set_access,
                      .vmm_export_fd = vmm_export_fd,
                      .vmm_import_fd = vmm_import_fd};
  return &e->b;
}
