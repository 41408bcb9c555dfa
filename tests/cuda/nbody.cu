/*
 * nbody: all-pairs gravitational accelerations in float, with rsqrtf.
 *
 * nbody_accel: bodies staged through a tile in dynamic shared memory (one
 * body per thread per tile; padding bodies have mass 0), then for each j:
 *   r = p_j - p_i;  d2 = rx^2 + ry^2 + rz^2 + eps^2 (fmas);  inv = rsqrtf(d2);
 *   a += r * (m_j * inv^3).
 * Blocks of 96 (the last tile is partial: 512 = 5*96 + 32) and 128 threads,
 * 512 bodies.
 *
 * Reference: the same sum in double.  Tolerance, per component:
 *   |a - a_ref| <= 600 * 2^-24 * sum_j |term_j|
 * from (PTX ISA, rsqrt: "rsqrt.approx.f32 ... maximum relative error
 * 2^-22.9 over the full range") ~2.2 ulp-relative for inv, plus about 5 u of
 * rounding in d2 (halved by the square root), so inv^3 is within ~14 u,
 * each term within ~20 u, and a recursive sum of n = 512 terms adds at most
 * n*u*sum|term| (Higham, Accuracy and Stability of Numerical Algorithms,
 * §4.2): (512 + 20) u < 600 u.
 *
 * nbody_integrate: v += a*dt, p += v*dt with explicit fmas, checked
 * bit-exactly from the device's own accelerations.
 */
#include "check.h"

#include <math.h>

__global__ void nbody_accel(const float4 *pos, float4 *acc, int n, float eps2)
{
    extern __shared__ float4 tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 pi = i < n ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int base = 0; base < n; base += blockDim.x) {
        int j = base + threadIdx.x;
        tile[threadIdx.x] = j < n ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
        int cnt = min((int)blockDim.x, n - base);
        for (int k = 0; k < cnt; k++) {
            float4 pj = tile[k];
            float rx = pj.x - pi.x, ry = pj.y - pi.y, rz = pj.z - pi.z;
            float d2 = fmaf(rx, rx, fmaf(ry, ry, fmaf(rz, rz, eps2)));
            float inv = rsqrtf(d2);
            float s = pj.w * (inv * inv * inv);
            ax = fmaf(rx, s, ax);
            ay = fmaf(ry, s, ay);
            az = fmaf(rz, s, az);
        }
        __syncthreads();
    }
    if (i < n)
        acc[i] = make_float4(ax, ay, az, 0.0f);
}

__global__ void nbody_integrate(float4 *pos, float4 *vel, const float4 *acc, int n, float dt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float4 p = pos[i], v = vel[i], a = acc[i];
    v.x = fmaf(a.x, dt, v.x);
    v.y = fmaf(a.y, dt, v.y);
    v.z = fmaf(a.z, dt, v.z);
    p.x = fmaf(v.x, dt, p.x);
    p.y = fmaf(v.y, dt, p.y);
    p.z = fmaf(v.z, dt, p.z);
    pos[i] = p;
    vel[i] = v;
}

int main(void)
{
    pw_report rep = pw_report_start("nbody");
    pw_rng rng = pw_rng_seed(10);
    const int n = 512;
    const float eps2 = 0.01f, dt = 0.001f;
    float4 *pos = (float4 *)malloc(n * sizeof(float4));
    float4 *vel = (float4 *)malloc(n * sizeof(float4));
    float4 *acc = (float4 *)malloc(n * sizeof(float4));
    float4 *pos2 = (float4 *)malloc(n * sizeof(float4));
    float4 *vel2 = (float4 *)malloc(n * sizeof(float4));
    for (int i = 0; i < n; i++) {
        pos[i] = make_float4(pw_rng_float(&rng, -10.0f, 10.0f), pw_rng_float(&rng, -10.0f, 10.0f),
                             pw_rng_float(&rng, -10.0f, 10.0f), pw_rng_float(&rng, 0.1f, 2.0f));
        vel[i] = make_float4(pw_rng_float(&rng, -1.0f, 1.0f), pw_rng_float(&rng, -1.0f, 1.0f),
                             pw_rng_float(&rng, -1.0f, 1.0f), 0.0f);
    }
    float4 *d_pos, *d_vel, *d_acc;
    CHECK(cudaMalloc(&d_pos, n * sizeof(float4)));
    CHECK(cudaMalloc(&d_vel, n * sizeof(float4)));
    CHECK(cudaMalloc(&d_acc, n * sizeof(float4)));

    const int sizes[] = {96, 128};
    for (size_t k = 0; k < PW_ARRAY_SIZE(sizes); k++) {
        int bs = sizes[k];
        CHECK(cudaMemcpy(d_pos, pos, n * sizeof(float4), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(d_vel, vel, n * sizeof(float4), cudaMemcpyHostToDevice));
        nbody_accel<<<PW_DIV_UP(n, bs), bs, bs * sizeof(float4)>>>(d_pos, d_acc, n, eps2);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(acc, d_acc, n * sizeof(float4), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++) {
            double a[3] = {0, 0, 0}, mag[3] = {0, 0, 0};
            for (int j = 0; j < n; j++) {
                double r[3] = {(double)pos[j].x - pos[i].x, (double)pos[j].y - pos[i].y, (double)pos[j].z - pos[i].z};
                double d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + (double)eps2;
                double s = (double)pos[j].w / (d2 * sqrt(d2));
                for (int c = 0; c < 3; c++) {
                    a[c] += r[c] * s;
                    mag[c] += fabs(r[c] * s);
                }
            }
            float g[3] = {acc[i].x, acc[i].y, acc[i].z};
            for (int c = 0; c < 3; c++) {
                double tol = 600.0 * ldexp(1.0, -24) * mag[c];
                pw_expect(&rep, fabs((double)g[c] - a[c]) <= tol, "accel bs=%d body %d comp %d: %.9g want %.9g (tol %.3g)",
                          bs, i, c, g[c], a[c], tol);
            }
        }

        nbody_integrate<<<PW_DIV_UP(n, bs), bs>>>(d_pos, d_vel, d_acc, n, dt);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(pos2, d_pos, n * sizeof(float4), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(vel2, d_vel, n * sizeof(float4), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++) {
            float ac[3] = {acc[i].x, acc[i].y, acc[i].z};
            float v0[3] = {vel[i].x, vel[i].y, vel[i].z}, p0[3] = {pos[i].x, pos[i].y, pos[i].z};
            float v1[3] = {vel2[i].x, vel2[i].y, vel2[i].z}, p1[3] = {pos2[i].x, pos2[i].y, pos2[i].z};
            for (int c = 0; c < 3; c++) {
                float v = fmaf(ac[c], dt, v0[c]);
                float p = fmaf(v, dt, p0[c]);
                pw_expect(&rep, f2u(v1[c]) == f2u(v) && f2u(p1[c]) == f2u(p),
                          "integrate bs=%d body %d comp %d: v %a p %a want v %a p %a", bs, i, c, v1[c], p1[c], v, p);
            }
            pw_expect(&rep, f2u(pos2[i].w) == f2u(pos[i].w), "integrate body %d: mass changed", i);
        }
    }
    free(pos);
    free(vel);
    free(acc);
    free(pos2);
    free(vel2);
    CHECK(cudaFree(d_pos));
    CHECK(cudaFree(d_vel));
    CHECK(cudaFree(d_acc));
    return pw_finish(&rep);
}
