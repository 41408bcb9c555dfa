// thrust::inclusive_scan and thrust::exclusive_scan, built for sm_100 PTX
// (-gencode arch=compute_100,code=compute_100): CCCL 3's sm_100 scan
// kernels take their tiles through clusterlaunchcontrol.try_cancel /
// query_cancel (work stealing over a grid of 1x1x1 clusters) and
// barrier.cluster; ptxwave's try_cancel always fails (a legal outcome), so
// each block scans the tiles it was launched for.  Checked against a host
// scan.
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/scan.h>

#include <stdio.h>

int main() {
  const int n[] = {1, 37, 1000, 25000};
  int fails = 0;
  for (int k = 0; k < 4; k++) {
    thrust::host_vector<int> h(n[k]);
    for (int i = 0; i < n[k]; i++) h[i] = (i * 37 + 11) % 101 - 50;
    thrust::device_vector<int> d = h, out(n[k]);
    thrust::inclusive_scan(d.begin(), d.end(), out.begin());
    thrust::host_vector<int> r = out;
    long long acc = 0;
    for (int i = 0; i < n[k]; i++) {
      acc += h[i];
      if (r[i] != (int)acc && fails++ < 10) printf("inclusive n=%d [%d]: %d, want %lld\n", n[k], i, r[i], acc);
    }
    thrust::exclusive_scan(d.begin(), d.end(), out.begin(), 5);
    r = out;
    acc = 5;
    for (int i = 0; i < n[k]; i++) {
      if (r[i] != (int)acc && fails++ < 10) printf("exclusive n=%d [%d]: %d, want %lld\n", n[k], i, r[i], acc);
      acc += h[i];
    }
  }
  if (fails) {
    printf("thrust_scan: %d FAILED\n", fails);
    return 1;
  }
  printf("thrust_scan: PASS\n");
  return 0;
}
