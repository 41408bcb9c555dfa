/* tests/runtime/nvml_client.c: ptxwave's libnvidia-ml.so.1 (runtime/nvml.c)
 * against the driver API it is built on, on the emulator: the device count,
 * name, UUID, PCI bus id and total memory must be the driver's; handles by
 * index, bus id (NVML's and the driver's spelling) and UUID name the same
 * device; NVLink answers NOT_SUPPORTED, a device's topology with itself is
 * NVML_TOPOLOGY_INTERNAL (0); calls before nvmlInit answer UNINITIALIZED.
 * The NVML prototypes are declared here (no nvml.h in the toolkit), with
 * the return codes of NVML's API reference.  Prints "nvml_client: ok". */
#include <stdio.h>
#include <string.h>

#include "client.h"

typedef void *nvmlDevice_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned *);
int nvmlDeviceGetHandleByIndex_v2(unsigned, nvmlDevice_t *);
int nvmlDeviceGetHandleByPciBusId_v2(const char *, nvmlDevice_t *);
int nvmlDeviceGetHandleByUUID(const char *, nvmlDevice_t *);
int nvmlDeviceGetName(nvmlDevice_t, char *, unsigned);
int nvmlDeviceGetUUID(nvmlDevice_t, char *, unsigned);
int nvmlDeviceGetMemoryInfo(nvmlDevice_t, nvmlMemory_t *);
int nvmlDeviceGetPciInfo_v3(nvmlDevice_t, nvmlPciInfo_t *);
int nvmlDeviceGetIndex(nvmlDevice_t, unsigned *);
int nvmlDeviceGetNvLinkState(nvmlDevice_t, unsigned, int *);
int nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t, nvmlDevice_t, int *);
int nvmlDeviceGetCudaComputeCapability(nvmlDevice_t, int *, int *);

int main(void) {
  unsigned n = 0;
  EXPECT(nvmlDeviceGetCount_v2(&n) == 1);      /* NVML_ERROR_UNINITIALIZED */
  EXPECT(nvmlInit_v2() == 0);
  CK(cuInit(0));
  int cn = 0;
  CK(cuDeviceGetCount(&cn));
  EXPECT(nvmlDeviceGetCount_v2(&n) == 0 && n == (unsigned)cn && n >= 1);
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  nvmlDevice_t d, d2;
  EXPECT(nvmlDeviceGetHandleByIndex_v2(0, &d) == 0);
  EXPECT(nvmlDeviceGetHandleByIndex_v2(n, &d2) == 2);
  unsigned idx = 9;
  EXPECT(nvmlDeviceGetIndex(d, &idx) == 0 && idx == 0);
  char name[256], cname[256];
  CK(cuDeviceGetName(cname, sizeof cname, dev));
  EXPECT(nvmlDeviceGetName(d, name, sizeof name) == 0 && !strcmp(name, cname));
  EXPECT(nvmlDeviceGetName(d, name, 3) == 7);  /* NVML_ERROR_INSUFFICIENT_SIZE */
  /* UUID: "GPU-" and the driver's 16 bytes as 8-4-4-4-12 hex */
  CUuuid u;
  CK(cuDeviceGetUuid(&u, dev));
  const unsigned char *b = (const unsigned char *)u.bytes;
  char want[96], uuid[96];
  snprintf(want, sizeof want,
           "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
           b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  EXPECT(nvmlDeviceGetUUID(d, uuid, sizeof uuid) == 0 && !strcmp(uuid, want));
  EXPECT(nvmlDeviceGetHandleByUUID(uuid, &d2) == 0 && d2 == d);
  EXPECT(nvmlDeviceGetHandleByUUID("GPU-nope", &d2) == 6);   /* NVML_ERROR_NOT_FOUND */
  /* bus id: the driver's spelling and NVML's both find the device */
  char bus[32];
  CK(cuDeviceGetPCIBusId(bus, sizeof bus, dev));
  EXPECT(nvmlDeviceGetHandleByPciBusId_v2(bus, &d2) == 0 && d2 == d);
  nvmlPciInfo_t pci;
  EXPECT(nvmlDeviceGetPciInfo_v3(d, &pci) == 0);
  EXPECT(nvmlDeviceGetHandleByPciBusId_v2(pci.busId, &d2) == 0 && d2 == d);
  int dom, pbus, pdev;
  CK(cuDeviceGetAttribute(&dom, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev));
  CK(cuDeviceGetAttribute(&pbus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev));
  CK(cuDeviceGetAttribute(&pdev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev));
  EXPECT(pci.domain == (unsigned)dom && pci.bus == (unsigned)pbus && pci.device == (unsigned)pdev);
  /* memory: the driver's total */
  size_t total = 0;
  CK(cuDeviceTotalMem(&total, dev));
  nvmlMemory_t m;
  EXPECT(nvmlDeviceGetMemoryInfo(d, &m) == 0 && m.total == total && m.used + m.free == m.total);
  int maj, min, dmaj, dmin;
  CK(cuDeviceGetAttribute(&dmaj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CK(cuDeviceGetAttribute(&dmin, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  EXPECT(nvmlDeviceGetCudaComputeCapability(d, &maj, &min) == 0 && maj == dmaj && min == dmin);
  /* no NVLink; the device with itself */
  int active = 0, level = -1;
  EXPECT(nvmlDeviceGetNvLinkState(d, 0, &active) == 3);    /* NVML_ERROR_NOT_SUPPORTED */
  EXPECT(nvmlDeviceGetTopologyCommonAncestor(d, d, &level) == 0 && level == 0);
  EXPECT(nvmlShutdown() == 0);
  EXPECT(nvmlDeviceGetCount_v2(&n) == 1);
  printf("nvml_client: ok (%s, %s, %s)\n", name, uuid, pci.busId);
  return 0;
}
