/* tests/runtime/client.h: the checks the driver-API test clients share.
 * Each returns 1 from the calling function (main) with the file, line and
 * the expression when it does not hold. */
#ifndef PW_TEST_CLIENT_H
#define PW_TEST_CLIENT_H

#include <cuda.h>
#include <stdio.h>

/* x must succeed */
#define CK(x)                                                              \
  do {                                                                     \
    CUresult r_ = (x);                                                     \
    if (r_ != CUDA_SUCCESS) {                                              \
      fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_);     \
      return 1;                                                            \
    }                                                                      \
  } while (0)
/* x must return r */
#define WANT(x, r)                                                         \
  do {                                                                     \
    CUresult r_ = (x);                                                     \
    if (r_ != (r)) {                                                       \
      fprintf(stderr, "%s:%d: %s = %d, want %d\n", __FILE__, __LINE__, #x, r_, (int)(r)); \
      return 1;                                                            \
    }                                                                      \
  } while (0)
/* c must hold */
#define EXPECT(c)                                                          \
  do {                                                                     \
    if (!(c)) {                                                            \
      fprintf(stderr, "%s:%d: %s does not hold\n", __FILE__, __LINE__, #c); \
      return 1;                                                            \
    }                                                                      \
  } while (0)
/* the header of the PTX texts the clients build */
#define HEAD ".version 8.0\n.target sm_80\n.address_size 64\n"

#endif
