/*
 * printf: device printf (vprintf), with an output in a fixed order.
 *
 * Only one thread of each launch prints, and every launch is followed by
 * cudaDeviceSynchronize() (which flushes the device printf buffer), so the
 * order of the lines is fixed.  The program checks nothing but the CUDA
 * errors and exits 0; a harness compares stdout with the text below.
 * Arguments cover the vprintf argument buffer: 4- and 8-byte integers,
 * floats promoted to double, chars, strings from the format's module and
 * from a __device__ array, a call from a __noinline__ function, and a line
 * with eight mixed arguments.
 *
 * Expected stdout, exactly (between the lines of dashes; the same text is
 * in printf.expected, which harnesses compare with):
 * ----
 * int -42 7 4000000000 beef BEEF 10
 * wide -1234567890123 9876543210987 18446744073709551615 123456789abcdef0
 * float 1.500000 3.142 1.234568e+04 0.0001     2.5000|42    |+7
 * char A string ptxwave %
 * global: from a device array
 * mix 1 2.000000 3 4 5 6.500000 z 8
 * block sum 2016
 * func: block 0 value 0.250
 * launch 0: block 0 of 1, 96 threads
 * func: block 0 value 0.250
 * launch 1: block 0 of 1, 96 threads
 * func: block 0 value 1.250
 * launch 2: block 0 of 1, 96 threads
 * func: block 0 value 2.250
 * printf: PASS
 * ----
 */
#include "check.h"

__device__ const char g_msg[] = "from a device array";

__device__ __noinline__ void print_from_function(int block, float v)
{
    printf("func: block %d value %.3f\n", block, v);
}

__global__ void formats(void)
{
    __shared__ int sum;
    if (threadIdx.x == 0)
        sum = 0;
    __syncthreads();
    atomicAdd(&sum, (int)threadIdx.x);
    __syncthreads();
    if (threadIdx.x != 0)
        return;
    printf("int %d %i %u %x %X %o\n", -42, 7, 4000000000u, 0xbeefu, 0xBEEFu, 8u);
    printf("wide %ld %lld %llu %llx\n", -1234567890123L, 9876543210987LL, 18446744073709551615ULL,
           0x123456789abcdef0ULL);
    printf("float %f %.3f %e %g %10.4f|%-6d|%+d\n", 1.5f, 3.14159f, 12345.678, 0.0001, 2.5, 42, 7);
    printf("char %c string %s %%\n", 'A', "ptxwave");
    printf("global: %s\n", g_msg);
    printf("mix %d %f %d %lld %d %f %c %d\n", 1, 2.0, 3, 4LL, 5, 6.5, 'z', 8);
    printf("block sum %d\n", sum);
    print_from_function(blockIdx.x, 0.25f);
}

__global__ void hello(int launch)
{
    if (threadIdx.x == 0) {
        printf("launch %d: block %d of %d, %d threads\n", launch, blockIdx.x, gridDim.x, blockDim.x);
        print_from_function(blockIdx.x, 0.25f + (float)launch);
    }
}

int main(void)
{
    formats<<<1, 64>>>();
    CHECK_LAUNCH();
    for (int launch = 0; launch < 3; launch++) {
        hello<<<1, 96>>>(launch);
        CHECK_LAUNCH();
    }
    fflush(stdout);
    printf("printf: PASS\n");
    return 0;
}
