/* runtime/nvml.c: libnvidia-ml.so.1, the part of NVML that NCCL and common
 * tools ask for, answered from the same device facts as the driver: it is
 * built on ptxwave's own libcuda.so.1 (cuInit, cuDeviceGet*, cuMemGetInfo),
 * so HIP's device properties on AMD GPUs and the emulator's otherwise.
 * `ptxwave run` finds it next to libcuda.so.1 (the same directory).
 *
 * NVML's header is not in the CUDA toolkit; the types below are those of
 * NVML's public API reference (nvml.h as documented: return codes, the
 * v3 nvmlPciInfo_t, nvmlMemory_t, nvmlFieldValue_t), written here for the
 * calls we answer.  One device per CUDA device, a handle being the address
 * of its record.  NVLink: none (every link query answers
 * NVML_ERROR_NOT_SUPPORTED, as a PCIe-only GPU does); P2P: not supported;
 * topology: a device with itself is NVML_TOPOLOGY_INTERNAL.  Fabric,
 * platform and confidential-computing queries: NOT_SUPPORTED.
 */
#include <cuda.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>

#define NVML_EXPORT __attribute__((visibility("default")))

typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_UNKNOWN = 999,
} nvmlReturn_t;

typedef struct nvml_dev {
  int index;
  CUdevice cu;
  char name[96];
  char uuid[96];                /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
  char bus_id[32];              /* "00000000:BB:DD.0" */
  unsigned domain, bus, device;
  int cc_major, cc_minor;
} nvml_dev;
typedef nvml_dev *nvmlDevice_t;

typedef struct nvmlPciInfo_st {   /* v3 */
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {
  unsigned long long total, free, used;
} nvmlMemory_t;

typedef union nvmlValue_st {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
  unsigned int fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;

enum { NVML_TOPOLOGY_INTERNAL = 0 };
enum { NVML_P2P_STATUS_NOT_SUPPORTED = 5 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int refs;                 /* nvmlInit minus nvmlShutdown */
static int ndev;
static nvml_dev devs[16];

/* The device facts, once, from the driver API. */
static nvmlReturn_t load_devices(void) {
  if (cuInit(0) != CUDA_SUCCESS) return NVML_ERROR_DRIVER_NOT_LOADED;
  int n = 0;
  if (cuDeviceGetCount(&n) != CUDA_SUCCESS) return NVML_ERROR_UNKNOWN;
  if (n > 16) n = 16;
  for (int i = 0; i < n; i++) {
    nvml_dev *d = &devs[i];
    memset(d, 0, sizeof *d);
    d->index = i;
    if (cuDeviceGet(&d->cu, i) != CUDA_SUCCESS) return NVML_ERROR_UNKNOWN;
    cuDeviceGetName(d->name, sizeof d->name, d->cu);
    CUuuid u;
    memset(&u, 0, sizeof u);
    cuDeviceGetUuid(&u, d->cu);
    const unsigned char *b = (const unsigned char *)u.bytes;
    snprintf(d->uuid, sizeof d->uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    int v = 0;
    cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d->cu);
    d->domain = (unsigned)v;
    cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d->cu);
    d->bus = (unsigned)v;
    cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d->cu);
    d->device = (unsigned)v;
    snprintf(d->bus_id, sizeof d->bus_id, "%08x:%02x:%02x.0", d->domain, d->bus, d->device);
    cuDeviceGetAttribute(&d->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->cu);
    cuDeviceGetAttribute(&d->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->cu);
  }
  ndev = n;
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  pthread_mutex_lock(&lock);
  nvmlReturn_t r = refs ? NVML_SUCCESS : load_devices();
  if (r == NVML_SUCCESS) refs++;
  pthread_mutex_unlock(&lock);
  return r;
}
NVML_EXPORT nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }
NVML_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { return nvmlInit_v2(); }

NVML_EXPORT nvmlReturn_t nvmlShutdown(void) {
  pthread_mutex_lock(&lock);
  nvmlReturn_t r = refs ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
  if (refs) refs--;
  pthread_mutex_unlock(&lock);
  return r;
}

NVML_EXPORT const char *nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
  case NVML_SUCCESS: return "Success";
  case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
  case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
  case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
  case NVML_ERROR_NOT_FOUND: return "Not Found";
  case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
  case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
  default: return "Unknown Error";
  }
}

static nvmlReturn_t check(nvmlDevice_t d) {
  if (!refs) return NVML_ERROR_UNINITIALIZED;
  if (!d || d < devs || d >= devs + ndev) return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

static nvmlReturn_t copy_str(char *out, unsigned len, const char *s) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (strlen(s) + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
  memcpy(out, s, strlen(s) + 1);
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) {
  if (!refs) return NVML_ERROR_UNINITIALIZED;
  if (!n) return NVML_ERROR_INVALID_ARGUMENT;
  *n = (unsigned)ndev;
  return NVML_SUCCESS;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int *n) { return nvmlDeviceGetCount_v2(n); }

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) {
  if (!refs) return NVML_ERROR_UNINITIALIZED;
  if (!d || i >= (unsigned)ndev) return NVML_ERROR_INVALID_ARGUMENT;
  *d = &devs[i];
  return NVML_SUCCESS;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d) {
  return nvmlDeviceGetHandleByIndex_v2(i, d);
}

/* Bus ids compare by value: "0000:00:00.0" (the driver's cuDeviceGetPCIBusId
 * form) and "00000000:00:00.0" (NVML's) name the same device. */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *id, nvmlDevice_t *d) {
  if (!refs) return NVML_ERROR_UNINITIALIZED;
  unsigned dom, bus, dev, fn;
  if (!id || !d || sscanf(id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
    return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < ndev; i++)
    if (devs[i].domain == dom && devs[i].bus == bus && devs[i].device == dev && fn == 0) {
      *d = &devs[i];
      return NVML_SUCCESS;
    }
  return NVML_ERROR_NOT_FOUND;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *id, nvmlDevice_t *d) {
  return nvmlDeviceGetHandleByPciBusId_v2(id, d);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d) {
  if (!refs) return NVML_ERROR_UNINITIALIZED;
  if (!uuid || !d) return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < ndev; i++)
    if (!strcmp(devs[i].uuid, uuid)) {
      *d = &devs[i];
      return NVML_SUCCESS;
    }
  return NVML_ERROR_NOT_FOUND;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *i) {
  nvmlReturn_t r = check(d);
  if (r == NVML_SUCCESS && !i) r = NVML_ERROR_INVALID_ARGUMENT;
  if (r == NVML_SUCCESS) *i = (unsigned)d->index;
  return r;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len) {
  nvmlReturn_t r = check(d);
  return r == NVML_SUCCESS ? copy_str(name, len, d->name) : r;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int len) {
  nvmlReturn_t r = check(d);
  return r == NVML_SUCCESS ? copy_str(uuid, len, d->uuid) : r;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) {
  nvmlReturn_t r = check(d);
  if (r == NVML_SUCCESS && !p) r = NVML_ERROR_INVALID_ARGUMENT;
  if (r != NVML_SUCCESS) return r;
  memset(p, 0, sizeof *p);
  snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%04x:%02x:%02x.0", d->domain, d->bus,
           d->device);
  snprintf(p->busId, sizeof p->busId, "%s", d->bus_id);
  p->domain = d->domain;
  p->bus = d->bus;
  p->device = d->device;
  return NVML_SUCCESS;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *p) {
  return nvmlDeviceGetPciInfo_v3(d, p);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t d, nvmlPciInfo_t *p) {
  return nvmlDeviceGetPciInfo_v3(d, p);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
  nvmlReturn_t r = check(d);
  if (r == NVML_SUCCESS && !m) r = NVML_ERROR_INVALID_ARGUMENT;
  if (r != NVML_SUCCESS) return r;
  size_t total = 0, free_b = 0;
  if (cuDeviceTotalMem(&total, d->cu) != CUDA_SUCCESS) return NVML_ERROR_UNKNOWN;
  /* cuMemGetInfo needs a context: the device's primary one */
  CUcontext c, prev = NULL;
  cuCtxGetCurrent(&prev);
  if (cuDevicePrimaryCtxRetain(&c, d->cu) == CUDA_SUCCESS) {
    cuCtxPushCurrent(c);
    size_t t2;
    if (cuMemGetInfo(&free_b, &t2) != CUDA_SUCCESS) free_b = total;
    cuCtxPopCurrent(&c);
    cuDevicePrimaryCtxRelease(d->cu);
  }
  m->total = total;
  m->free = free_b < total ? free_b : total;
  m->used = total - m->free;
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor) {
  nvmlReturn_t r = check(d);
  if (r == NVML_SUCCESS && (!major || !minor)) r = NVML_ERROR_INVALID_ARGUMENT;
  if (r != NVML_SUCCESS) return r;
  *major = d->cc_major;
  *minor = d->cc_minor;
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) {
  if (!v) return NVML_ERROR_INVALID_ARGUMENT;
  return cuDriverGetVersion(v) == CUDA_SUCCESS ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}
NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) {
  return nvmlSystemGetCudaDriverVersion(v);
}
NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len) {
  int cv = 0;
  cuDriverGetVersion(&cv);
  char s[32];
  snprintf(s, sizeof s, "%d.%d.ptxwave", cv / 1000, cv % 1000 / 10);
  return copy_str(v, len, s);
}

/* ---- NVLink, P2P, topology: a lone PCIe device ------------------------ */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int *active) {
  nvmlReturn_t r = check(d);
  return r == NVML_SUCCESS ? NVML_ERROR_NOT_SUPPORTED : r;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkCapability(nvmlDevice_t d, unsigned int link, int cap,
                                                       unsigned int *result) {
  nvmlReturn_t r = check(d);
  return r == NVML_SUCCESS ? NVML_ERROR_NOT_SUPPORTED : r;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link,
                                                             nvmlPciInfo_t *p) {
  nvmlReturn_t r = check(d);
  return r == NVML_SUCCESS ? NVML_ERROR_NOT_SUPPORTED : r;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t d, unsigned int link,
                                                          nvmlPciInfo_t *p) {
  return nvmlDeviceGetNvLinkRemotePciInfo_v2(d, link, p);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, int index,
                                                int *status) {
  nvmlReturn_t r = check(a);
  if (r == NVML_SUCCESS) r = check(b);
  if (r == NVML_SUCCESS && !status) r = NVML_ERROR_INVALID_ARGUMENT;
  if (r == NVML_SUCCESS) *status = NVML_P2P_STATUS_NOT_SUPPORTED;
  return r;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
                                                             int *level) {
  nvmlReturn_t r = check(a);
  if (r == NVML_SUCCESS) r = check(b);
  if (r == NVML_SUCCESS && !level) r = NVML_ERROR_INVALID_ARGUMENT;
  if (r != NVML_SUCCESS) return r;
  if (a != b) return NVML_ERROR_NOT_SUPPORTED;   /* several devices: no topology known */
  *level = NVML_TOPOLOGY_INTERNAL;
  return NVML_SUCCESS;
}
/* Each field answers NOT_SUPPORTED (NCCL reads NVLink bandwidth fields). */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t *v) {
  nvmlReturn_t r = check(d);
  if (r == NVML_SUCCESS && (n < 0 || (n && !v))) r = NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; r == NVML_SUCCESS && i < n; i++) v[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
  return r;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t d, void *info) {
  nvmlReturn_t r = check(d);
  return r == NVML_SUCCESS ? NVML_ERROR_NOT_SUPPORTED : r;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPlatformInfo(nvmlDevice_t d, void *info) {
  nvmlReturn_t r = check(d);
  return r == NVML_SUCCESS ? NVML_ERROR_NOT_SUPPORTED : r;
}
NVML_EXPORT nvmlReturn_t nvmlSystemGetConfComputeState(void *state) {
  return NVML_ERROR_NOT_SUPPORTED;
}
NVML_EXPORT nvmlReturn_t nvmlSystemGetConfComputeSettings(void *settings) {
  return NVML_ERROR_NOT_SUPPORTED;
}
