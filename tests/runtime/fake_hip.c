/* tests/runtime/fake_hip.c: a recording stand-in for libamdhip64 with the
 * HIP entry points the runtime's HIP backend uses.  Memory is host memory
 * (so copies really copy); every call is appended to $PW_FAKE_HIP_LOG as one
 * line; hipModuleLaunchKernel writes the kernarg bytes it received in hex.
 * PW_FAKE_HIP_DEVICES=0 makes it a machine with no GPU (hipInit 100).
 *
 * Device printf (util/pw_printf.h): modules have no __ptxwave_printf
 * (hipModuleGetGlobal: not found) unless PW_FAKE_HIP_PRINTF is set; then
 * they have one, and each launch "runs" a kernel that leaves a printf
 * record in the buffer the runtime pointed it at, as lowered code would
 * (PW_FAKE_HIP_PRINTF=assert: an assert record after it), so test_hip.py
 * checks the host side's formatting and CUDA_ERROR_ASSERT.
 * Device memory comes from a bump allocator in a reserved region at a fixed
 * address (0x200000000000, MAP_NORESERVE), so a program's device pointers,
 * and the kernarg bytes that carry them, are the same from run to run
 * whatever the runtime allocated on the host meanwhile (tests compare the
 * launches of a run that compiles with one served by the cache).
 *
 * The device: hipDeviceGetAttribute answers the limits below (an MI210-like
 * part with numbers chosen to differ from the runtime's defaults, so a
 * test sees they came from here), and hipGetDevicePropertiesR0600 writes
 * the name at offset 0 and gcnArchName at offset 1160, an arbitrary place
 * past the name (the runtime finds the string by content, whatever the
 * layout): PW_FAKE_HIP_ARCH, default "gfx90a:sramecc+:xnack-".
 * PW_FAKE_HIP_NO_ATTRS=74,76,87 makes it a HIP that does not know those
 * attributes (hipErrorInvalidValue), so the runtime's defaults show.
 *
 * Several devices: PW_FAKE_HIP_DEVICES=N (default 1); hipSetDevice selects
 * the calling thread's, and each hipMalloc/hipMallocManaged remembers it
 * (hipPointerGetAttribute's device ordinal).  Managed memory, peers, IPC
 * and virtual memory (runtime/rt_umem.c's HIP mapping) are recorded with
 * their arguments; their memory is host memory as above (VMM: a memfd per
 * hipMemCreate, mapped by hipMemMap, so copies through a mapping really
 * read the allocation); the granularity is 64 KiB, not the emulator's
 * 2 MiB, so a test sees it came from here.  hipDeviceGetAttribute answers
 * ManagedMemory 1, ConcurrentManagedAccess 1, DirectManagedMemAccessFromHost
 * 0, PageableMemoryAccess 0, HostNativeAtomicSupported 0,
 * VirtualMemoryManagementSupported 1.
 *
 * Events are recorded with a fake clock: each hipEventRecord is 1.5 ms
 * after the previous one, so ElapsedTime is known to the test; each
 * event stays "not ready" (hipErrorNotReady 600) for PW_FAKE_HIP_PENDING
 * queries after its record (default 0), then completes.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void rec(const char *fmt, ...) {
  const char *p = getenv("PW_FAKE_HIP_LOG");
  FILE *f = p ? fopen(p, "a") : NULL;
  if (!f) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fputc('\n', f);
  fclose(f);
}

static struct { char *p; size_t n; int dev; } allocs[256];
static __thread int cur_dev;

/* The kernel's strings, in one block as a code object's .rodata would be:
 * hipMemcpy fails for a copy that runs past its end, as HIP does past an
 * allocation's (the runtime then reads a string byte by byte). */
static const char dev_strings[] = "fake %d %s %5.2f %llx|%c%%\n\0from hip\0n < 4\0k.cu\0void k()";
#define fmt_fake (dev_strings)
#define str_fake (fmt_fake + sizeof "fake %d %s %5.2f %llx|%c%%\n")
#define as_msg (str_fake + sizeof "from hip")
#define as_file (as_msg + sizeof "n < 4")
#define as_func (as_file + sizeof "k.cu")

static int no_device(void) {
  const char *d = getenv("PW_FAKE_HIP_DEVICES");
  return d && !strcmp(d, "0");
}

int hipInit(unsigned f) { rec("hipInit %u", f); return no_device() ? 100 : 0; }
static int ndevices(void) {
  const char *d = getenv("PW_FAKE_HIP_DEVICES");
  return d && *d ? atoi(d) : 1;
}
int hipGetDeviceCount(int *n) { *n = no_device() ? 0 : ndevices(); return no_device() ? 100 : 0; }
int hipSetDevice(int d) {
  rec("hipSetDevice %d", d);
  if (d < 0 || d >= ndevices()) return 101;
  cur_dev = d;
  return 0;
}
int hipDeviceGetName(char *s, int n, int d) { snprintf(s, (size_t)n, "Fake AMD GPU"); return 0; }
int hipDeviceTotalMem(size_t *b, int d) { *b = (size_t)1 << 34; return 0; }
int hipMemGetInfo(size_t *f, size_t *t) { *f = (size_t)1 << 33; *t = (size_t)1 << 34; return 0; }
static char *arena, *arena_next;
static const size_t arena_size = (size_t)64 << 30;

int hipMalloc(void **p, size_t n) {
  if (!arena) {
    void *a = mmap((void *)0x200000000000ull, arena_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    arena = arena_next = a == MAP_FAILED ? NULL : a;
  }
  size_t rounded = (n + 255) & ~(size_t)255;
  if (arena && rounded <= arena_size - (size_t)(arena_next - arena)) {
    *p = arena_next;  /* zero: fresh anonymous pages, never reused */
    arena_next += rounded;
  } else {
    *p = calloc(1, n);
  }
  for (int i = 0; i < 256; i++)
    if (!allocs[i].p) { allocs[i].p = *p; allocs[i].n = n; allocs[i].dev = cur_dev; break; }
  rec("hipMalloc %zu", n);
  return 0;
}
int hipFree(void *p) {
  for (int i = 0; i < 256; i++)
    if (allocs[i].p == p) allocs[i].p = NULL;
  if (!arena || (char *)p < arena || (char *)p >= arena + arena_size) free(p);
  rec("hipFree");
  return 0;
}
int hipHostRegister(void *p, size_t n, unsigned f) { rec("hipHostRegister %zu", n); return 0; }
int hipHostUnregister(void *p) { rec("hipHostUnregister"); return 0; }
int hipMemGetAddressRange(void **base, size_t *n, void *p) {
  for (int i = 0; i < 256; i++)
    if (allocs[i].p && (char *)p >= allocs[i].p && (char *)p < allocs[i].p + allocs[i].n) {
      *base = allocs[i].p;
      *n = allocs[i].n;
      return 0;
    }
  return 1;
}
int hipMemcpy(void *d, const void *s, size_t n, int kind) {
  const char *src = s;
  if (src >= dev_strings && src < dev_strings + sizeof dev_strings && n > (size_t)(dev_strings + sizeof dev_strings - src))
    return 1;   /* hipErrorInvalidValue: past the end */
  memmove(d, s, n);
  rec("hipMemcpy kind=%d bytes=%zu", kind, n);
  return 0;
}
int hipMemcpyAsync(void *d, const void *s, size_t n, int kind, void *st) {
  memmove(d, s, n);
  rec("hipMemcpyAsync kind=%d bytes=%zu stream=%s", kind, n, st ? "user" : "null");
  return 0;
}
int hipMemsetD8(void *d, unsigned char v, size_t n) { memset(d, v, n); rec("hipMemsetD8 %u %zu", v, n); return 0; }
int hipMemsetD16(void *d, unsigned short v, size_t n) {
  for (size_t i = 0; i < n; i++) ((uint16_t *)d)[i] = v;
  rec("hipMemsetD16 %u %zu", v, n);
  return 0;
}
int hipMemsetD32(void *d, int v, size_t n) {
  for (size_t i = 0; i < n; i++) ((int32_t *)d)[i] = v;
  rec("hipMemsetD32 %d %zu", v, n);
  return 0;
}
int hipMemsetD8Async(void *d, unsigned char v, size_t n, void *s) { return hipMemsetD8(d, v, n); }
int hipMemsetD16Async(void *d, unsigned short v, size_t n, void *s) { return hipMemsetD16(d, v, n); }
int hipMemsetD32Async(void *d, int v, size_t n, void *s) { return hipMemsetD32(d, v, n); }
static int module_token;
/* An ELF image (a code object) is written whole to $PW_FAKE_HIP_LOG.obj for
 * the test to read; its size is where its section header table ends (the
 * last thing lld writes).  Anything else (passthrough PTX) is text. */
int hipModuleLoadData(void **m, const void *img) {
  *m = &module_token;
  const unsigned char *b = img;
  if (!memcmp(b, "\177ELF", 4) && b[4] == 2) {
    uint64_t shoff;
    uint16_t shentsize, shnum;
    memcpy(&shoff, b + 0x28, 8);
    memcpy(&shentsize, b + 0x3a, 2);
    memcpy(&shnum, b + 0x3c, 2);
    size_t n = (size_t)(shoff + (uint64_t)shentsize * shnum);
    rec("hipModuleLoadData elf bytes=%zu", n);
    const char *p = getenv("PW_FAKE_HIP_LOG");  /* no log (benchmarks): nothing written */
    char path[4096];
    snprintf(path, sizeof path, "%s.obj", p ? p : "");
    FILE *f = p ? fopen(path, "wb") : NULL;
    if (f) {
      fwrite(b, 1, n, f);
      fclose(f);
    }
    return 0;
  }
  rec("hipModuleLoadData bytes=%zu", strlen(img));
  return 0;
}
int hipModuleUnload(void *m) { rec("hipModuleUnload"); return 0; }
static char fname[256];
int hipModuleGetFunction(void **f, void *m, const char *name) {
  snprintf(fname, sizeof fname, "%s", name);
  *f = fname;
  return 0;
}
static char global[64];
static uint64_t printf_var[2];   /* {u64 buffer; u32 capacity; u32 dropped} */
int hipModuleGetGlobal(void **p, size_t *n, void *m, const char *name) {
  if (!strcmp(name, "__ptxwave_printf")) {
    if (!getenv("PW_FAKE_HIP_PRINTF")) return 500;
    rec("hipModuleGetGlobal %s", name);
    *p = printf_var;
    *n = sizeof printf_var;
    return 0;
  }
  *p = global;
  *n = sizeof global;
  return 0;
}
/* Appends a record of `size` bytes (header fields included) to the buffer. */
static void put_record(const unsigned char *r, uint32_t size) {
  unsigned char *buf = (unsigned char *)(uintptr_t)printf_var[0];
  uint32_t cap = (uint32_t)printf_var[1], off;
  if (!buf) return;
  memcpy(&off, buf, 4);
  uint32_t next = off + size;
  memcpy(buf, &next, 4);
  if (off <= cap && cap - off >= size) memcpy(buf + 16 + off, r, size);
}
static void put_u32(unsigned char *r, unsigned at, uint32_t v) { memcpy(r + at, &v, 4); }
static void put_u64(unsigned char *r, unsigned at, uint64_t v) { memcpy(r + at, &v, 8); }

static void kernel_prints(void) {
  const char *mode = getenv("PW_FAKE_HIP_PRINTF");
  if (!mode) return;
  unsigned char r[64] = {0};
  /* printf(fmt_fake, 42, str_fake, 3.14159, 0xabcdefULL, 'Z'): arguments at
   * 0 (int), 8 (pointer), 16 (double), 24 (u64), 32 (int): 36 bytes */
  double d = 3.14159;
  uint64_t db;
  memcpy(&db, &d, 8);
  put_u32(r, 0, 56);
  put_u32(r, 4, 1);
  put_u64(r, 8, (uint64_t)(uintptr_t)fmt_fake);
  put_u32(r, 16, 42);
  put_u64(r, 24, (uint64_t)(uintptr_t)str_fake);
  put_u64(r, 32, db);
  put_u64(r, 40, 0xabcdef);
  put_u32(r, 48, 'Z');
  put_record(r, 56);
  if (strcmp(mode, "assert")) return;
  memset(r, 0, sizeof r);
  put_u32(r, 0, 64);
  put_u32(r, 4, 2);
  put_u64(r, 8, (uint64_t)(uintptr_t)as_msg);
  put_u64(r, 16, (uint64_t)(uintptr_t)as_file);
  put_u64(r, 24, (uint64_t)(uintptr_t)as_func);
  put_u32(r, 32, 7);
  put_u32(r, 36, 2);   /* %ctaid (2,0,0) */
  put_u32(r, 48, 3);   /* %tid (3,1,0) */
  put_u32(r, 52, 1);
  put_record(r, 64);
}

int hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                          unsigned bz, unsigned shared, void *stream, void **kp, void **extra) {
  const unsigned char *buf = NULL;
  size_t n = 0;
  for (int i = 0; extra && extra[i] != (void *)0x03; i += 2) {
    if (extra[i] == (void *)0x01) buf = extra[i + 1];
    if (extra[i] == (void *)0x02) n = *(size_t *)extra[i + 1];
  }
  char hex[1024] = "";
  for (size_t i = 0; buf && i < n && i < 500; i++) snprintf(hex + 2 * i, 3, "%02x", buf[i]);
  rec("hipModuleLaunchKernel %s grid=%u,%u,%u block=%u,%u,%u shared=%u stream=%s kernelParams=%s "
      "kernarg=%s", (const char *)f, gx, gy, gz, bx, by, bz, shared, stream ? "user" : "null",
      kp ? "set" : "null", hex);
  kernel_prints();
  return 0;
}
static int stream_token;
int hipStreamCreate(void **s) { *s = &stream_token; rec("hipStreamCreate"); return 0; }
int hipStreamDestroy(void *s) { rec("hipStreamDestroy"); return 0; }
int hipStreamSynchronize(void *s) { rec("hipStreamSynchronize %s", s ? "user" : "null"); return 0; }
int hipDeviceSynchronize(void) { rec("hipDeviceSynchronize"); return 0; }

/* hipDeviceAttribute_t values of hip_runtime_api.h (CUDA-compatible block) */
int hipDeviceGetAttribute(int *v, int attr, int dev) {
  static const struct { int attr, value; } table[] = {
      {5, 1700000},    /* ClockRate kHz */
      {16, 0},         /* Integrated */
      {19, 8 << 20},   /* L2CacheSize */
      {25, 16},        /* MaxBlocksPerMultiProcessor */
      {26, 1024}, {27, 1024}, {28, 1024}, /* MaxBlockDimX/Y/Z */
      {29, 0x7fffffff}, {30, 65535}, {31, 65535}, /* MaxGridDimX/Y/Z */
      {56, 1024},      /* MaxThreadsPerBlock */
      {57, 2048},      /* MaxThreadsPerMultiProcessor */
      {59, 4096},      /* MemoryBusWidth */
      {60, 1600000},   /* MemoryClockRate kHz */
      {63, 104},       /* MultiprocessorCount */
      {67, 0x43}, {68, 0}, {69, 0}, /* PciBusId, PciDeviceId, PciDomainID */
      {71, 65536}, {72, 131072}, /* MaxRegistersPerBlock, ...PerMultiprocessor */
      {74, 65536},     /* MaxSharedMemoryPerBlock */
      {76, 65536},     /* SharedMemPerMultiprocessor */
      {87, 64},        /* WarpSize */
      {24, 1},         /* ManagedMemory */
      {9, 1},          /* ConcurrentManagedAccess */
      {13, 0},         /* DirectManagedMemAccessFromHost */
      {65, 0},         /* PageableMemoryAccess */
      {15, 0},         /* HostNativeAtomicSupported */
      {89, 1},         /* VirtualMemoryManagementSupported */
  };
  /* PW_FAKE_HIP_NO_ATTRS=74,87: a HIP that does not know these */
  const char *no = getenv("PW_FAKE_HIP_NO_ATTRS");
  for (const char *q = no; q && *q; q += strcspn(q, ",") + (q[strcspn(q, ",")] != 0))
    if (atoi(q) == attr) return 1;
  for (unsigned i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].attr == attr) {
      *v = table[i].value;
      return 0;
    }
  return 1;  /* hipErrorInvalidValue */
}

int hipGetDevicePropertiesR0600(void *props, int dev) {
  const char *arch = getenv("PW_FAKE_HIP_ARCH");
  snprintf((char *)props, 256, "Fake AMD GPU");
  snprintf((char *)props + 1160, 256, "%s", arch ? arch : "gfx90a:sramecc+:xnack-");
  rec("hipGetDevicePropertiesR0600 %d", dev);
  return 0;
}

typedef struct fake_event { double ms; int pending; unsigned flags; } fake_event;
static double fake_clock;

int hipEventCreateWithFlags(void **e, unsigned flags) {
  fake_event *f = calloc(1, sizeof *f);
  f->flags = flags;
  *e = f;
  rec("hipEventCreateWithFlags %u", flags);
  return 0;
}
int hipEventDestroy(void *e) { free(e); rec("hipEventDestroy"); return 0; }
int hipEventRecord(void *e, void *s) {
  fake_event *f = e;
  fake_clock += 1.5;
  f->ms = fake_clock;
  const char *p = getenv("PW_FAKE_HIP_PENDING");
  f->pending = p ? atoi(p) : 0;
  rec("hipEventRecord stream=%s", s ? "user" : "null");
  return 0;
}
int hipEventQuery(void *e) {
  fake_event *f = e;
  rec("hipEventQuery");
  if (f->pending > 0) {
    f->pending--;
    return 600;  /* hipErrorNotReady */
  }
  return 0;
}
int hipEventSynchronize(void *e) { ((fake_event *)e)->pending = 0; rec("hipEventSynchronize"); return 0; }
int hipEventElapsedTime(float *ms, void *a, void *b) {
  *ms = (float)(((fake_event *)b)->ms - ((fake_event *)a)->ms);
  rec("hipEventElapsedTime");
  return 0;
}
int hipStreamWaitEvent(void *s, void *e, unsigned flags) {
  rec("hipStreamWaitEvent stream=%s %u", s ? "user" : "null", flags);
  return 0;
}

/* ---- managed memory, peers, IPC, virtual memory ------------------------- */
int hipMallocManaged(void **p, size_t n, unsigned flags) {
  int r = hipMalloc(p, n);
  rec("hipMallocManaged %zu flags=%u dev=%d", n, flags, cur_dev);
  return r;
}
int hipMemPrefetchAsync(const void *p, size_t n, int dev, void *s) {
  rec("hipMemPrefetchAsync %zu dev=%d stream=%s", n, dev, s ? "user" : "null");
  return 0;
}
int hipMemAdvise(const void *p, size_t n, int advice, int dev) {
  rec("hipMemAdvise %zu advice=%d dev=%d", n, advice, dev);
  return 0;
}
int hipPointerGetAttribute(void *data, int attr, void *p) {
  if (attr != 9) return 1;
  for (int i = 0; i < 256; i++)
    if (allocs[i].p && (char *)p >= allocs[i].p && (char *)p < allocs[i].p + allocs[i].n) {
      *(int *)data = allocs[i].dev;
      return 0;
    }
  return 1;
}
int hipDeviceCanAccessPeer(int *can, int dev, int peer) {
  *can = dev != peer;
  rec("hipDeviceCanAccessPeer %d %d", dev, peer);
  return 0;
}
int hipDeviceEnablePeerAccess(int peer, unsigned flags) { rec("hipDeviceEnablePeerAccess %d from %d", peer, cur_dev); return 0; }
int hipDeviceDisablePeerAccess(int peer) { rec("hipDeviceDisablePeerAccess %d from %d", peer, cur_dev); return 0; }
int hipDeviceGetP2PAttribute(int *v, int attr, int src, int dst) {
  *v = attr == 0 ? 0 : 1;
  rec("hipDeviceGetP2PAttribute %d %d %d", attr, src, dst);
  return 0;
}
int hipMemcpyPeer(void *d, int dd, const void *s, int sd, size_t n) {
  memmove(d, s, n);
  rec("hipMemcpyPeer %zu %d<-%d", n, dd, sd);
  return 0;
}
int hipMemcpyPeerAsync(void *d, int dd, const void *s, int sd, size_t n, void *st) {
  memmove(d, s, n);
  rec("hipMemcpyPeerAsync %zu %d<-%d stream=%s", n, dd, sd, st ? "user" : "null");
  return 0;
}
/* IPC handles: the pointer and a marker; opening one maps nothing new (one
 * process plays both sides in the tests) */
typedef struct { char reserved[64]; } fake_ipc;
int hipIpcGetMemHandle(fake_ipc *h, void *p) {
  memset(h, 0, sizeof *h);
  memcpy(h->reserved, "fakeipc", 8);
  memcpy(h->reserved + 8, &p, sizeof p);
  rec("hipIpcGetMemHandle");
  return 0;
}
int hipIpcOpenMemHandle(void **p, fake_ipc h, unsigned flags) {
  if (memcmp(h.reserved, "fakeipc", 8)) return 400;
  memcpy(p, h.reserved + 8, sizeof *p);
  rec("hipIpcOpenMemHandle flags=%u", flags);
  return 0;
}
int hipIpcCloseMemHandle(void *p) { rec("hipIpcCloseMemHandle"); return 0; }
int hipIpcGetEventHandle(fake_ipc *h, void *e) {
  memset(h, 0, sizeof *h);
  memcpy(h->reserved, "fakeevt", 8);
  memcpy(h->reserved + 8, &e, sizeof e);
  rec("hipIpcGetEventHandle");
  return 0;
}
int hipIpcOpenEventHandle(void **e, fake_ipc h) {
  if (memcmp(h.reserved, "fakeevt", 8)) return 400;
  hipEventCreateWithFlags(e, 6);
  rec("hipIpcOpenEventHandle");
  return 0;
}
#define FAKE_GRAN ((size_t)64 << 10)
typedef struct fake_phys { int fd; size_t n; } fake_phys;
int hipMemGetAllocationGranularity(size_t *g, const void *prop, int option) {
  *g = FAKE_GRAN;
  rec("hipMemGetAllocationGranularity %d", option);
  return 0;
}
int hipMemAddressReserve(void **p, size_t n, size_t align, void *addr, unsigned long long flags) {
  /* aligned to the granularity, as HIP's reservations are */
  char *m = mmap(NULL, n + FAKE_GRAN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return 2;
  *p = (void *)(((uintptr_t)m + FAKE_GRAN - 1) & ~(uintptr_t)(FAKE_GRAN - 1));
  rec("hipMemAddressReserve %zu", n);
  return 0;
}
int hipMemAddressFree(void *p, size_t n) { munmap(p, n); rec("hipMemAddressFree %zu", n); return 0; }
/* hipMemAllocationProp: type, requestedHandleType, {location type, id}, ... */
int hipMemCreate(void **h, size_t n, const int *prop, unsigned long long flags) {
  fake_phys *f = calloc(1, sizeof *f);
  f->fd = memfd_create("fakehip", MFD_CLOEXEC);
  if (f->fd < 0 || ftruncate(f->fd, (off_t)n)) return 2;
  f->n = n;
  *h = f;
  rec("hipMemCreate %zu type=%d handles=%d loc=%d,%d", n, prop[0], prop[1], prop[2], prop[3]);
  return 0;
}
int hipMemRelease(void *h) {
  fake_phys *f = h;
  close(f->fd);
  free(f);
  rec("hipMemRelease");
  return 0;
}
int hipMemMap(void *p, size_t n, size_t off, void *h, unsigned long long flags) {
  fake_phys *f = h;
  if (mmap(p, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, f->fd, (off_t)off) == MAP_FAILED) return 1;
  for (int i = 0; i < 256; i++)   /* a range hipMemGetAddressRange knows, as HIP's */
    if (!allocs[i].p) { allocs[i].p = p; allocs[i].n = n; allocs[i].dev = cur_dev; break; }
  rec("hipMemMap %zu offset=%zu", n, off);
  return 0;
}
int hipMemUnmap(void *p, size_t n) {
  for (int i = 0; i < 256; i++)
    if (allocs[i].p == p) allocs[i].p = NULL;
  mmap(p, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  rec("hipMemUnmap %zu", n);
  return 0;
}
/* hipMemAccessDesc: {location type, id}, flags */
int hipMemSetAccess(void *p, size_t n, const int *desc, size_t count) {
  rec("hipMemSetAccess %zu loc=%d,%d flags=%d count=%zu", n, desc[0], desc[1], desc[2], count);
  return 0;
}
int hipMemExportToShareableHandle(void *out, void *h, int type, unsigned long long flags) {
  fake_phys *f = h;
  *(int *)out = dup(f->fd);
  rec("hipMemExportToShareableHandle type=%d", type);
  return 0;
}
int hipMemImportFromShareableHandle(void **h, void *os, int type) {
  fake_phys *f = calloc(1, sizeof *f);
  f->fd = dup((int)(intptr_t)os);
  struct stat st;
  fstat(f->fd, &st);
  f->n = (size_t)st.st_size;
  *h = f;
  rec("hipMemImportFromShareableHandle type=%d", type);
  return 0;
}
