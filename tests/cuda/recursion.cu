/*
 * recursion: device functions that stay functions (__noinline__), real
 * recursion with per-thread depths (divergent call trees), mutual
 * recursion, indirect calls through a table of function pointers (PTX call
 * through a .callprototype), struct arguments and results by value, and a
 * recursive quicksort of a per-thread local array (local memory reached
 * through generic pointers, a stack frame per call).
 *
 * Thread t computes fib(t % 17), fact(t % 25) (wrapping mod 2^64 from 21!),
 * gcd of two random numbers, is_even(t) by mutual recursion, Ackermann
 * A(t % 3, t % 9), ops[t % 4](a, b), a cross product of two float3 (plain
 * multiplies and subtractions, compared with the host's h_mul/h_sub), and
 * sorts 16 local ints.  Two blocks of 96 threads.
 */
#include "check.h"

#define NSORT 16

__device__ __noinline__ unsigned long long fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__device__ __noinline__ unsigned long long fact(unsigned n)
{
    return n <= 1 ? 1ull : n * fact(n - 1);
}

__device__ __noinline__ unsigned gcd_rec(unsigned a, unsigned b)
{
    return b == 0 ? a : gcd_rec(b, a % b);
}

__device__ __noinline__ int is_odd(unsigned n);
__device__ __noinline__ int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
__device__ __noinline__ int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

__device__ __noinline__ unsigned ackermann(unsigned m, unsigned n)
{
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ackermann(m - 1, 1);
    return ackermann(m - 1, ackermann(m, n - 1));
}

/* wrapping arithmetic through unsigned: signed overflow would be undefined */
__device__ __noinline__ int op_add(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
__device__ __noinline__ int op_sub(int a, int b) { return (int)((unsigned)a - (unsigned)b); }
__device__ __noinline__ int op_mul(int a, int b) { return (int)((unsigned)a * (unsigned)b); }
__device__ __noinline__ int op_xor(int a, int b) { return a ^ b; }
typedef int (*binop)(int, int);
__device__ binop g_ops[4] = {op_add, op_sub, op_mul, op_xor};

struct vec3 {
    float x, y, z;
};

__device__ __noinline__ vec3 cross(vec3 a, vec3 b)
{
    vec3 r;
    r.x = __fsub_rn(__fmul_rn(a.y, b.z), __fmul_rn(a.z, b.y));
    r.y = __fsub_rn(__fmul_rn(a.z, b.x), __fmul_rn(a.x, b.z));
    r.z = __fsub_rn(__fmul_rn(a.x, b.y), __fmul_rn(a.y, b.x));
    return r;
}

__device__ __noinline__ void quicksort(int *a, int lo, int hi)
{
    if (lo >= hi)
        return;
    int pivot = a[(lo + hi) / 2];
    int i = lo, j = hi;
    while (i <= j) {
        while (a[i] < pivot)
            i++;
        while (a[j] > pivot)
            j--;
        if (i <= j) {
            int t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
            j--;
        }
    }
    quicksort(a, lo, j);
    quicksort(a, i, hi);
}

struct results {
    unsigned long long fib, fact;
    unsigned gcd, ack;
    int even, op;
    vec3 cr;
    int sorted[NSORT];
};

__global__ void recurse(const unsigned *in, const vec3 *vin, results *out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    results r;
    r.fib = fib(t % 17);
    r.fact = fact(t % 25);
    r.gcd = gcd_rec(in[2 * t], in[2 * t + 1]);
    r.even = is_even(t);
    r.ack = ackermann(t % 3, t % 9);
    r.op = g_ops[t % 4]((int)in[2 * t], (int)in[2 * t + 1]);
    r.cr = cross(vin[2 * t], vin[2 * t + 1]);
    int a[NSORT];
    for (int k = 0; k < NSORT; k++)
        a[k] = (int)(in[(2 * t + k) % (2 * gridDim.x * blockDim.x)] % 100) - 50;
    quicksort(a, 0, NSORT - 1);
    for (int k = 0; k < NSORT; k++)
        r.sorted[k] = a[k];
    out[t] = r;
}

static unsigned long long h_fib(unsigned n) { return n < 2 ? n : h_fib(n - 1) + h_fib(n - 2); }
static unsigned long long h_fact(unsigned n) { return n <= 1 ? 1ull : n * h_fact(n - 1); }
static unsigned h_gcd(unsigned a, unsigned b) { return b == 0 ? a : h_gcd(b, a % b); }
static unsigned h_ack(unsigned m, unsigned n)
{
    return m == 0 ? n + 1 : n == 0 ? h_ack(m - 1, 1) : h_ack(m - 1, h_ack(m, n - 1));
}
static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    pw_report rep = pw_report_start("recursion");
    pw_rng rng = pw_rng_seed(12);
    const int grid = 2, bs = 96, n = grid * bs;
    unsigned *in = (unsigned *)malloc(2 * n * sizeof(unsigned));
    vec3 *vin = (vec3 *)malloc(2 * n * sizeof(vec3));
    results *out = (results *)malloc(n * sizeof(results));
    for (int i = 0; i < 2 * n; i++) {
        in[i] = pw_rng_u32(&rng) % (i % 5 == 0 ? 1000u : 0xffffffffu);
        vin[i].x = pw_rng_float(&rng, -4.0f, 4.0f);
        vin[i].y = pw_rng_float(&rng, -4.0f, 4.0f);
        vin[i].z = pw_rng_float(&rng, -4.0f, 4.0f);
    }
    unsigned *d_in;
    vec3 *d_vin;
    results *d_out;
    CHECK(cudaMalloc(&d_in, 2 * n * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_vin, 2 * n * sizeof(vec3)));
    CHECK(cudaMalloc(&d_out, n * sizeof(results)));
    CHECK(cudaMemcpy(d_in, in, 2 * n * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_vin, vin, 2 * n * sizeof(vec3), cudaMemcpyHostToDevice));
    recurse<<<grid, bs>>>(d_in, d_vin, d_out);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out, d_out, n * sizeof(results), cudaMemcpyDeviceToHost));

    for (int t = 0; t < n; t++) {
        const results *r = &out[t];
        unsigned a = in[2 * t], b = in[2 * t + 1];
        pw_expect(&rep, r->fib == h_fib(t % 17), "t=%d fib(%d)=%llu", t, t % 17, r->fib);
        pw_expect(&rep, r->fact == h_fact(t % 25), "t=%d fact(%d)=%llu want %llu", t, t % 25, r->fact, h_fact(t % 25));
        pw_expect(&rep, r->gcd == h_gcd(a, b), "t=%d gcd(%u,%u)=%u want %u", t, a, b, r->gcd, h_gcd(a, b));
        pw_expect(&rep, r->even == (t % 2 == 0), "t=%d is_even=%d", t, r->even);
        pw_expect(&rep, r->ack == h_ack(t % 3, t % 9), "t=%d ack=%u want %u", t, r->ack, h_ack(t % 3, t % 9));
        unsigned op;
        switch (t % 4) {
        case 0: op = a + b; break;
        case 1: op = a - b; break;
        case 2: op = a * b; break;
        default: op = a ^ b; break;
        }
        pw_expect(&rep, (unsigned)r->op == op, "t=%d op%d(%u,%u)=%d want %d", t, t % 4, a, b, r->op, (int)op);
        vec3 u = vin[2 * t], v = vin[2 * t + 1];
        float cx = h_sub(h_mul(u.y, v.z), h_mul(u.z, v.y));
        float cy = h_sub(h_mul(u.z, v.x), h_mul(u.x, v.z));
        float cz = h_sub(h_mul(u.x, v.y), h_mul(u.y, v.x));
        pw_expect(&rep, f2u(r->cr.x) == f2u(cx) && f2u(r->cr.y) == f2u(cy) && f2u(r->cr.z) == f2u(cz),
                  "t=%d cross (%a %a %a) want (%a %a %a)", t, r->cr.x, r->cr.y, r->cr.z, cx, cy, cz);
        int s[NSORT];
        for (int k = 0; k < NSORT; k++)
            s[k] = (int)(in[(2 * t + k) % (2 * n)] % 100) - 50;
        qsort(s, NSORT, sizeof(int), cmp_int);
        for (int k = 0; k < NSORT; k++)
            pw_expect(&rep, r->sorted[k] == s[k], "t=%d sorted[%d]=%d want %d", t, k, r->sorted[k], s[k]);
    }
    free(in);
    free(vin);
    free(out);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_vin));
    CHECK(cudaFree(d_out));
    return pw_finish(&rep);
}
