/* benchmarks/native/include/cuda_runtime.h: just enough of CUDA's runtime
 * API for the host code of tests/cuda/ *.cu to parse in a device-only
 * compile (quality_bench.py: the host side is never compiled to code, so
 * every call is a catch-all template that returns success). */
#ifndef PW_NATIVE_CUDA_RUNTIME_H
#define PW_NATIVE_CUDA_RUNTIME_H
#include <stddef.h>

typedef int cudaError_t;
typedef int CUresult;
enum { cudaSuccess = 0, CUDA_SUCCESS = 0 };
typedef struct pw_stream *cudaStream_t;
typedef struct pw_event *cudaEvent_t;
typedef struct pw_stream *CUstream;
typedef struct pw_module *CUmodule;
typedef struct pw_function *CUfunction;
typedef struct pw_ctx *CUcontext;
typedef unsigned long long CUdeviceptr;
typedef int CUdevice;
struct cudaDeviceProp { char name[256]; int major, minor, multiProcessorCount, warpSize, maxThreadsPerBlock;
  size_t sharedMemPerBlock, totalGlobalMem; int clockRate; };
struct cudaFuncAttributes { size_t sharedSizeBytes, constSizeBytes, localSizeBytes;
  int maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion, maxDynamicSharedSizeBytes; };
enum pw_enums { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
  cudaMemcpyDeviceToDevice, cudaMemcpyDefault, cudaStreamNonBlocking, cudaHostAllocDefault,
  cudaEventDisableTiming, cudaFuncAttributeMaxDynamicSharedMemorySize,
  cudaDevAttrMaxSharedMemoryPerBlock, cudaDevAttrMaxSharedMemoryPerBlockOptin,
  CU_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, CU_LAUNCH_PARAM_END_AS_INT,
  CU_LAUNCH_ATTRIBUTE_COOPERATIVE, CU_DEVICE_ATTRIBUTE_WARP_SIZE, CUDA_ERROR_NOT_FOUND = 500 };
#define CUDART_CB
/* cuLaunchKernel's `extra` markers are pointers (cuda.h) */
#define CU_LAUNCH_PARAM_END ((void *)0x00)
#define CU_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define CU_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
typedef struct CUlaunchAttribute { int id; int pad; union { int cooperative; char bytes[64]; } value; } CUlaunchAttribute;
typedef struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  CUstream hStream; CUlaunchAttribute *attrs; unsigned numAttrs;
} CUlaunchConfig;

/* the <<<...>>> launch syntax of clang's HIP mode needs this declared */
extern "C" int __hipPushCallConfiguration(dim3 grid, dim3 block, size_t shmem = 0, cudaStream_t s = 0);

#define PW_STUB(name) template <class... A> static inline int name(A &&...) { return 0; }
#define PW_STR_STUB(name) template <class... A> static inline const char *name(A &&...) { return ""; }
PW_STUB(cudaMalloc) PW_STUB(cudaFree) PW_STUB(cudaMemcpy) PW_STUB(cudaMemset) PW_STUB(cudaGetLastError)
PW_STUB(cudaMemcpyFromSymbol) PW_STUB(cudaMemcpyToSymbol) PW_STUB(cudaMemcpyAsync) PW_STUB(cudaEventRecord)
PW_STUB(cudaEventDestroy) PW_STUB(cudaDeviceSynchronize) PW_STUB(cudaStreamWaitEvent) PW_STUB(cudaStreamQuery)
PW_STUB(cudaStreamDestroy) PW_STUB(cudaMemcpy2D) PW_STUB(cudaMemGetInfo) PW_STUB(cudaMallocHost)
PW_STUB(cudaLaunchHostFunc) PW_STUB(cudaGetSymbolAddress) PW_STUB(cudaGetDeviceCount) PW_STUB(cudaFreeHost)
PW_STUB(cudaEventQuery) PW_STUB(cudaEventElapsedTime) PW_STUB(cudaEventCreate) PW_STUB(cudaStreamSynchronize)
PW_STUB(cudaStreamCreate) PW_STUB(cudaOccupancyMaxActiveBlocksPerMultiprocessor) PW_STUB(cudaMemsetAsync)
PW_STUB(cudaMallocPitch) PW_STUB(cudaHostAlloc) PW_STUB(cudaGetDeviceProperties) PW_STUB(cudaFuncSetAttribute)
PW_STUB(cudaFuncGetAttributes) PW_STUB(cudaEventSynchronize) PW_STUB(cudaDeviceGetAttribute)
PW_STUB(cudaStreamCreateWithFlags) PW_STUB(cudaSetDevice) PW_STUB(cudaEventCreateWithFlags)
PW_STUB(cudaLaunchKernel) PW_STUB(cudaLaunchCooperativeKernel) PW_STUB(cudaPeekAtLastError)
PW_STR_STUB(cudaGetErrorString) PW_STR_STUB(cudaGetErrorName)
PW_STUB(cuModuleGetFunction) PW_STUB(cuMemcpyDtoH) PW_STUB(cuMemAlloc) PW_STUB(cuLaunchKernelEx)
PW_STUB(cuMemcpyHtoD) PW_STUB(cuMemFree) PW_STUB(cuLaunchKernel) PW_STUB(cuGetErrorName) PW_STUB(cuCtxSynchronize)
PW_STUB(cuModuleUnload) PW_STUB(cuModuleLoadDataEx) PW_STUB(cuModuleLoadData) PW_STUB(cuModuleGetGlobal)
PW_STUB(cuMemsetD32) PW_STUB(cuFuncGetAttribute) PW_STUB(cuDeviceGetCount) PW_STUB(cuInit)
PW_STUB(cuDevicePrimaryCtxRetain) PW_STUB(cuDevicePrimaryCtxRelease) PW_STUB(cuDeviceGetAttribute)
PW_STUB(cuDeviceGet) PW_STUB(cuCtxSetCurrent)
/* textures and surfaces (tests/cuda/texture.cu's host code; the device side
 * is in cuda_on_hip.h) */
typedef struct pw_array *cudaArray_t;
enum cudaTextureAddressMode { cudaAddressModeWrap, cudaAddressModeClamp, cudaAddressModeMirror, cudaAddressModeBorder };
enum cudaTextureFilterMode { cudaFilterModePoint, cudaFilterModeLinear };
enum cudaTextureReadMode { cudaReadModeElementType, cudaReadModeNormalizedFloat };
enum cudaResourceType { cudaResourceTypeArray, cudaResourceTypeMipmappedArray, cudaResourceTypeLinear, cudaResourceTypePitch2D };
enum cudaChannelFormatKind { cudaChannelFormatKindSigned, cudaChannelFormatKindUnsigned, cudaChannelFormatKindFloat };
enum { cudaArrayDefault = 0, cudaArraySurfaceLoadStore = 2, cudaArrayTextureGather = 8 };
struct cudaChannelFormatDesc { int x, y, z, w; cudaChannelFormatKind f; };
template <class T> static inline cudaChannelFormatDesc cudaCreateChannelDesc(void) { return cudaChannelFormatDesc(); }
static inline cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f) {
  return cudaChannelFormatDesc{x, y, z, w, f};
}
struct cudaResourceDesc {
  cudaResourceType resType;
  union {
    struct { cudaArray_t array; } array;
    struct { void *devPtr; cudaChannelFormatDesc desc; size_t sizeInBytes; } linear;
    struct { void *devPtr; cudaChannelFormatDesc desc; size_t width, height, pitchInBytes; } pitch2D;
  } res;
};
struct cudaTextureDesc {
  cudaTextureAddressMode addressMode[3];
  cudaTextureFilterMode filterMode;
  cudaTextureReadMode readMode;
  int sRGB;
  float borderColor[4];
  int normalizedCoords;
  unsigned maxAnisotropy;
};
PW_STUB(cudaCreateTextureObject) PW_STUB(cudaDestroyTextureObject) PW_STUB(cudaCreateSurfaceObject)
PW_STUB(cudaDestroySurfaceObject) PW_STUB(cudaMallocArray) PW_STUB(cudaFreeArray) PW_STUB(cudaMemcpy2DToArray)
PW_STUB(cudaMemcpy2DFromArray)
#endif