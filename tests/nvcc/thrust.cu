// tests/nvcc/thrust.cu: thrust::transform, thrust::reduce and thrust::sort, checked
// against plain host C (run_cccl.py builds it with nvcc at test time).
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/sort.h>
#include <thrust/reduce.h>
#include <thrust/transform.h>
#include <thrust/functional.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

struct saxpy {
  int a;
  __host__ __device__ int operator()(int x, int y) const { return a * x + y; }
};

int main() {
  const int n = 5000;
  std::vector<int> h(n), g(n);
  unsigned s = 12345;
  for (int i = 0; i < n; i++) {
    s = s * 1103515245u + 12345u;
    h[i] = (int)((s >> 8) % 100000) - 50000;
    g[i] = i % 7;
  }
  thrust::device_vector<int> d(h.begin(), h.end()), e(g.begin(), g.end()), r(n);
  // transform: r = 3*d + e
  thrust::transform(d.begin(), d.end(), e.begin(), r.begin(), saxpy{3});
  thrust::host_vector<int> hr = r;
  int bad = 0;
  for (int i = 0; i < n; i++)
    if (hr[i] != 3 * h[i] + g[i]) bad++;
  // reduce
  long long ref = 0;
  for (int i = 0; i < n; i++) ref += h[i];
  long long sum = thrust::reduce(d.begin(), d.end(), 0LL, thrust::plus<long long>());
  if (sum != ref) { printf("reduce: %lld != %lld\n", sum, ref); bad++; }
  // sort
  thrust::sort(d.begin(), d.end());
  std::vector<int> sorted = h;
  std::sort(sorted.begin(), sorted.end());
  thrust::host_vector<int> hd = d;
  for (int i = 0; i < n; i++)
    if (hd[i] != sorted[i]) { bad++; if (bad < 5) printf("sort[%d] = %d, expected %d\n", i, hd[i], sorted[i]); }
  if (bad) { printf("thrust: FAIL (%d)\n", bad); return 1; }
  printf("thrust: PASS\n");
  return 0;
}
