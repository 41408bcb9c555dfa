// Thread-block clusters of one CTA (sm_90): cooperative_groups' cluster API
// (this_cluster().sync() = barrier.cluster.arrive + wait, map_shared_rank =
// mapa, block_rank = %cluster_ctarank, num_blocks = %cluster_nctarank,
// dim_blocks = %cluster_nctaid) in kernels launched with <<<>>> (a grid of
// 1x1x1 clusters), with cudaLaunchKernelEx and a 1x1x1 cluster attribute,
// and with __cluster_dims__(1,1,1); a cluster of more than one CTA, asked
// at launch or by __cluster_dims__, is cudaErrorInvalidClusterSize
// (docs/runtime.md "Clusters"), the function attributes report the
// required cluster shape, and the cluster occupancy queries answer for
// one-CTA clusters (the block occupancy times the multiprocessors; size 1).  Expected values: a host reference of the same
// rotation (each thread reads its neighbour's shared slot after the
// cluster barrier), the rank 0 and size 1 of a one-CTA cluster.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <stdio.h>

namespace cg = cooperative_groups;

#define CK(x)                                                                   \
  do {                                                                          \
    cudaError_t e_ = (x);                                                       \
    if (e_ != cudaSuccess) {                                                    \
      printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

static int fails;
#define EXPECT(c, ...)           \
  do {                           \
    if (!(c)) {                  \
      if (fails++ < 12) {        \
        printf(__VA_ARGS__);     \
        printf("\n");            \
      }                          \
    }                            \
  } while (0)

enum { N = 256, BLOCKS = 3 };

// out[b*N + t] = in[b*N + (t+1)%N] * 3 (through rank 0's shared memory after
// cluster.sync) + 1000 * block_rank + 10000 * num_blocks + 100000 * dim_blocks.x;
// then a second round on the same buffer (the barrier's second phase):
// out2[b*N + t] = out value of (t+5)%N.
__device__ void body(const int *in, int *out, int *out2) {
  __shared__ int buf[N];
  cg::cluster_group cl = cg::this_cluster();
  unsigned t = threadIdx.x, b = blockIdx.x;
  buf[t] = in[b * N + t] * 3;
  cl.sync();
  int *r0 = cl.map_shared_rank(buf, 0);
  int v = r0[(t + 1) % N] + 1000 * (int)cl.block_rank() + 10000 * (int)cl.num_blocks() +
          100000 * (int)cl.dim_blocks().x;
  out[b * N + t] = v;
  cl.sync();
  buf[t] = v;
  cl.sync();
  out2[b * N + t] = r0[(t + 5) % N];
}

__global__ void plain(const int *in, int *out, int *out2) { body(in, out, out2); }
__global__ void __cluster_dims__(1, 1, 1) dims1(const int *in, int *out, int *out2) { body(in, out, out2); }
__global__ void __cluster_dims__(2, 1, 1) dims2(const int *in, int *out, int *out2) { body(in, out, out2); }

static int check(const char *what, const int *in, const int *out, const int *out2) {
  for (int b = 0; b < BLOCKS; b++)
    for (int t = 0; t < N; t++) {
      int want = in[b * N + (t + 1) % N] * 3 + 0 + 10000 * 1 + 100000 * 1;
      int want2 = in[b * N + (t + 6) % N] * 3 + 110000;
      EXPECT(out[b * N + t] == want, "%s: block %d thread %d: %d, want %d", what, b, t, out[b * N + t], want);
      EXPECT(out2[b * N + t] == want2, "%s: block %d thread %d (second round): %d, want %d", what, b, t,
             out2[b * N + t], want2);
    }
  return 0;
}

int main() {
  int h_in[BLOCKS * N], h_out[BLOCKS * N], h_out2[BLOCKS * N];
  for (int i = 0; i < BLOCKS * N; i++) h_in[i] = (i * 7919) % 1000 - 300;
  int *in, *out, *out2;
  CK(cudaMalloc(&in, sizeof h_in));
  CK(cudaMalloc(&out, sizeof h_out));
  CK(cudaMalloc(&out2, sizeof h_out2));
  CK(cudaMemcpy(in, h_in, sizeof h_in, cudaMemcpyHostToDevice));

  /* <<<>>>: a grid of 1x1x1 clusters */
  CK(cudaMemset(out, 0, sizeof h_out));
  plain<<<BLOCKS, N>>>(in, out, out2);
  CK(cudaGetLastError());
  CK(cudaMemcpy(h_out, out, sizeof h_out, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h_out2, out2, sizeof h_out2, cudaMemcpyDeviceToHost));
  check("<<<>>>", h_in, h_out, h_out2);

  /* cudaLaunchKernelEx with a 1x1x1 cluster */
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 1;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.gridDim = dim3(BLOCKS);
  cfg.blockDim = dim3(N);
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CK(cudaMemset(out, 0, sizeof h_out));
  CK(cudaLaunchKernelEx(&cfg, plain, (const int *)in, out, out2));
  CK(cudaMemcpy(h_out, out, sizeof h_out, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h_out2, out2, sizeof h_out2, cudaMemcpyDeviceToHost));
  check("cudaLaunchKernelEx 1x1x1", h_in, h_out, h_out2);

  /* __cluster_dims__(1,1,1) */
  CK(cudaMemset(out, 0, sizeof h_out));
  dims1<<<BLOCKS, N>>>(in, out, out2);
  CK(cudaGetLastError());
  CK(cudaMemcpy(h_out, out, sizeof h_out, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h_out2, out2, sizeof h_out2, cudaMemcpyDeviceToHost));
  check("__cluster_dims__(1,1,1)", h_in, h_out, h_out2);

  /* clusters of two CTAs: refused at launch, not sticky */
  attr[0].val.clusterDim.x = 2;
  cfg.gridDim = dim3(2);
  cudaError_t e = cudaLaunchKernelEx(&cfg, plain, (const int *)in, out, out2);
  EXPECT(e == cudaErrorInvalidClusterSize, "cudaLaunchKernelEx 2x1x1: %s", cudaGetErrorString(e));
  cudaGetLastError();
  dims2<<<2, N>>>(in, out, out2);
  e = cudaGetLastError();
  EXPECT(e == cudaErrorInvalidClusterSize, "__cluster_dims__(2,1,1): %s", cudaGetErrorString(e));
  CK(cudaDeviceSynchronize());

  /* the required cluster shapes */
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, dims2));
  EXPECT(fa.requiredClusterWidth == 2 && fa.requiredClusterHeight == 1 && fa.requiredClusterDepth == 1 &&
         fa.clusterDimMustBeSet == 1, "dims2: required cluster %dx%dx%d, must be set %d", fa.requiredClusterWidth,
         fa.requiredClusterHeight, fa.requiredClusterDepth, fa.clusterDimMustBeSet);
  CK(cudaFuncGetAttributes(&fa, plain));
  EXPECT(fa.requiredClusterWidth == 0 && fa.clusterDimMustBeSet == 0, "plain: required cluster width %d, must be "
         "set %d", fa.requiredClusterWidth, fa.clusterDimMustBeSet);

  /* occupancy: clusters of one CTA are blocks; a larger cluster is refused
   * as its launch is */
  cfg.gridDim = dim3(BLOCKS);
  attr[0].val.clusterDim.x = 1;
  int nb = 0, nc = 0, cs = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, plain, N, 0));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveClusters(&nc, plain, &cfg));
  EXPECT(nc == nb * sms && nc > 0, "cudaOccupancyMaxActiveClusters 1x1x1: %d, want %d x %d", nc, nb, sms);
  CK(cudaOccupancyMaxPotentialClusterSize(&cs, plain, &cfg));
  EXPECT(cs == 1, "cudaOccupancyMaxPotentialClusterSize: %d, want 1", cs);
  attr[0].val.clusterDim.x = 2;
  e = cudaOccupancyMaxActiveClusters(&nc, plain, &cfg);
  EXPECT(e == cudaErrorInvalidClusterSize, "cudaOccupancyMaxActiveClusters 2x1x1: %s", cudaGetErrorString(e));
  cudaGetLastError();

  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(out2));
  if (fails) {
    printf("cluster: %d FAILED\n", fails);
    return 1;
  }
  printf("cluster: PASS\n");
  return 0;
}
