/* tests/runtime/rt_probe.c: a driver API client for the log tests
 * (test_log.py): cuInit, a device query, a call with a bad argument, and an
 * unimplemented entry point called from two threads at once (its "not
 * supported" warning must appear once per process). */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>

static void *call_stub(void *arg) {
  /* graphics interop: no graphics API on either backend, never implemented */
  for (int i = 0; i < 100; i++)
    if (cuGraphicsUnregisterResource(NULL) != CUDA_ERROR_NOT_SUPPORTED) return (void *)1;
  return NULL;
}

int main(void) {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  int n = 0;
  if (cuDeviceGetCount(&n) != CUDA_SUCCESS || n < 1) return 2;
  if (cuDeviceGetCount(NULL) != CUDA_ERROR_INVALID_VALUE) return 3;
  pthread_t t[2];
  void *r[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, call_stub, NULL);
  for (int i = 0; i < 2; i++) pthread_join(t[i], &r[i]);
  if (r[0] || r[1]) return 4;
  puts("rt_probe: ok");
  return 0;
}
