/*
 * check.h: what every program in tests/cuda/ shares.
 *
 *   CHECK(call)       abort the program (exit 1) on any CUDA runtime error,
 *                     naming the call, file and line.
 *   CHECK_LAUNCH()    after a kernel launch: the launch error, then the
 *                     error of the kernel itself (cudaDeviceSynchronize).
 *   pw_rng            xorshift64* with a fixed seed: the same inputs on every
 *                     machine, never rand().
 *   pw_report         counts mismatches, prints the first PW_MAX_REPORT of
 *                     them, and ends the program with "<name>: PASS" (exit 0)
 *                     or "<name>: FAIL (N mismatches)" (exit 1).
 *   h_mul/h_add       float operations that the host compiler may not fuse:
 *                     GCC contracts a*b+c into an fma by default where the
 *                     target has one (aarch64, x86 with -mfma), which would
 *                     change the bits of a reference written as an
 *                     expression.  A volatile store forces the rounding.
 *
 * Host code here is plain C in style (nvcc compiles .cu files as C++).
 */
#ifndef PW_CUDA_CHECK_H
#define PW_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                          \
    do {                                                                     \
        cudaError_t pw_err_ = (call);                                        \
        if (pw_err_ != cudaSuccess) {                                        \
            fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__,          \
                    __LINE__, #call, cudaGetErrorName(pw_err_),              \
                    cudaGetErrorString(pw_err_));                            \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

#define CHECK_LAUNCH()                                                       \
    do {                                                                     \
        CHECK(cudaGetLastError());                                           \
        CHECK(cudaDeviceSynchronize());                                      \
    } while (0)

#define PW_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define PW_DIV_UP(a, b) (((a) + (b) - 1) / (b))

/* ---- deterministic inputs ------------------------------------------------ */

typedef struct pw_rng {
    uint64_t s;
} pw_rng;

static inline pw_rng pw_rng_seed(uint64_t seed)
{
    pw_rng r;
    r.s = seed ? seed : 0x9E3779B97F4A7C15ull; /* xorshift state must not be 0 */
    return r;
}

/* xorshift64* (Vigna 2016): full period 2^64-1, good enough for test data. */
static inline uint64_t pw_rng_u64(pw_rng *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static inline uint32_t pw_rng_u32(pw_rng *r)
{
    return (uint32_t)(pw_rng_u64(r) >> 32);
}

/* Uniform integer in [lo, hi] (inclusive); the modulo bias is irrelevant here. */
static inline int pw_rng_int(pw_rng *r, int lo, int hi)
{
    return lo + (int)(pw_rng_u64(r) % (uint64_t)((int64_t)hi - lo + 1));
}

/* Float in [lo, hi) built from 24 random bits: every operation below is exact
 * or correctly rounded, so the value is the same on every IEEE host. */
static inline float pw_rng_float(pw_rng *r, float lo, float hi)
{
    float u = (float)(pw_rng_u64(r) >> 40) * (1.0f / 16777216.0f);
    volatile float t = (hi - lo) * u;
    return lo + t;
}

/* ---- bit views ----------------------------------------------------------- */

static inline uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t d2u(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static inline double u2d(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }

static inline float h_mul(float a, float b) { volatile float r = a * b; return r; }
static inline float h_add(float a, float b) { volatile float r = a + b; return r; }
static inline float h_sub(float a, float b) { volatile float r = a - b; return r; }

/* ---- reporting ----------------------------------------------------------- */

#define PW_MAX_REPORT 10

typedef struct pw_report {
    const char *name;
    long fails;
} pw_report;

static inline pw_report pw_report_start(const char *name)
{
    pw_report r;
    r.name = name;
    r.fails = 0;
    return r;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline void pw_fail(pw_report *r, const char *fmt, ...)
{
    if (r->fails < PW_MAX_REPORT) {
        va_list ap;
        va_start(ap, fmt);
        printf("%s: mismatch: ", r->name);
        vprintf(fmt, ap);
        printf("\n");
        va_end(ap);
    }
    r->fails++;
}

/* Record a failure when !ok; returns ok so callers can chain. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline int pw_expect(pw_report *r, int ok, const char *fmt, ...)
{
    if (!ok) {
        if (r->fails < PW_MAX_REPORT) {
            va_list ap;
            va_start(ap, fmt);
            printf("%s: mismatch: ", r->name);
            vprintf(fmt, ap);
            printf("\n");
            va_end(ap);
        }
        r->fails++;
    }
    return ok;
}

static inline int pw_finish(pw_report *r)
{
    fflush(stdout);
    if (r->fails) {
        printf("%s: FAIL (%ld mismatches)\n", r->name, r->fails);
        return 1;
    }
    printf("%s: PASS\n", r->name);
    return 0;
}

#endif /* PW_CUDA_CHECK_H */
