/*
 * texcube_seamless.cu: linear filtering of a cubemap with
 * cudaTextureDesc::seamlessCubemap (CU_TRSF_SEAMLESS_CUBEMAP): the bilinear
 * footprint that crosses a face edge takes its texels from the adjacent
 * face, and one that reaches past a cube corner averages the three texels
 * that meet there (the OpenGL 4.6 spec, 8.13.1 "Seamless Cube Map
 * Filtering", which CUDA's seamless cubemaps follow).
 *
 * The host reference finds those texels by geometry, not by a face
 * adjacency table: each texel's centre is a point on the cube's surface
 * (face f at (s, t) in [-1, 1]^2, the Programming Guide's face table run
 * backwards).  A footprint texel outside its face in one direction is the
 * texel of another face whose centre is nearest the point where the
 * footprint leaves the face (that edge point, half a texel from both
 * centres); one outside in both directions is the mean of the three
 * texels whose centres are nearest the cube corner.  The device follows
 * lower_tex's integer folding; a wrong neighbour face, orientation or
 * texel shows, since every texel of every face holds a distinct value
 * (64 f + 8 y + x).
 *
 * Directions as texcube.cu: major axis +-1 or +-2, the others on a 1/64
 * grid, so the texel coordinates and the 9-bit filter weights are exact;
 * many sit near edges and corners (|s| or |t| above 7/8).  Tolerance 1/64
 * absolute, as texcube's.  Also: without the flag the same texture
 * filters each face on its own (clamped), which differs near the edges.
 */
#include <math.h>

#include "check.h"

enum { W = 8, NS = 1024 };

__global__ void sample_cube(cudaTextureObject_t t, const float4 *dir, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemap<float>(t, dir[i].x, dir[i].y, dir[i].z);
}

static float texel_value(int f, int x, int y) { return (float)(64 * f + 8 * y + x); }

/* The guide's table: the face, and (u, v) in [0, 1] on it. */
static int ref_face(float x, float y, float z, float *u, float *v)
{
    float ax = fabsf(x), ay = fabsf(y), az = fabsf(z), m, s, t;
    int f;
    if (ax > ay && ax > az) {
        m = ax;
        if (x >= 0) { f = 0; s = -z; t = -y; }
        else        { f = 1; s = z;  t = -y; }
    } else if (ay > ax && ay > az) {
        m = ay;
        if (y >= 0) { f = 2; s = x; t = z; }
        else        { f = 3; s = x; t = -z; }
    } else {
        m = az;
        if (z >= 0) { f = 4; s = x;  t = -y; }
        else        { f = 5; s = -x; t = -y; }
    }
    *u = (s / m + 1.0f) / 2.0f;
    *v = (t / m + 1.0f) / 2.0f;
    return f;
}

/* The point of face f at (s, t): the table backwards (face 0 has x = 1,
 * s = -z, t = -y, ...). */
static void face_point(int f, double s, double t, double p[3])
{
    switch (f) {
    case 0: p[0] = 1;  p[1] = -t; p[2] = -s; break;
    case 1: p[0] = -1; p[1] = -t; p[2] = s;  break;
    case 2: p[0] = s;  p[1] = 1;  p[2] = t;  break;
    case 3: p[0] = s;  p[1] = -1; p[2] = -t; break;
    case 4: p[0] = s;  p[1] = -t; p[2] = 1;  break;
    default: p[0] = -s; p[1] = -t; p[2] = -1; break;
    }
}

static double dist2(const double a[3], const double b[3])
{
    double d = 0;
    for (int k = 0; k < 3; k++) d += (a[k] - b[k]) * (a[k] - b[k]);
    return d;
}

/* The k nearest texel centres to point q, faces other than `skip` (-1:
 * none), summed. */
static double nearest_sum(const double q[3], int skip, int k)
{
    double best[3] = {1e9, 1e9, 1e9};
    double val[3] = {0, 0, 0};
    for (int f = 0; f < 6; f++) {
        if (f == skip) continue;
        for (int y = 0; y < W; y++)
            for (int x = 0; x < W; x++) {
                double c[3];
                face_point(f, (2.0 * x + 1) / W - 1, (2.0 * y + 1) / W - 1, c);
                double d = dist2(c, q), v = texel_value(f, x, y);
                for (int r = 0; r < k; r++)
                    if (d < best[r]) {
                        for (int s = k - 1; s > r; s--) { best[s] = best[s - 1]; val[s] = val[s - 1]; }
                        best[r] = d;
                        val[r] = v;
                        break;
                    }
            }
    }
    return val[0] + val[1] + val[2];
}

/* Footprint texel (i, j) of face f, seamless. */
static double seam_texel(int f, int i, int j)
{
    int oi = i < 0 || i >= W, oj = j < 0 || j >= W;
    if (!oi && !oj) return texel_value(f, i, j);
    /* where the footprint leaves the face: the edge (or corner) point */
    double s = oi ? (i < 0 ? -1.0 : 1.0) : (2.0 * i + 1) / W - 1;
    double t = oj ? (j < 0 ? -1.0 : 1.0) : (2.0 * j + 1) / W - 1;
    double q[3];
    face_point(f, s, t, q);
    if (oi && oj) return nearest_sum(q, -1, 3) / 3.0;
    return nearest_sum(q, f, 1);
}

static double ref_sample(float x, float y, float z, int seamless)
{
    float u, v;
    int f = ref_face(x, y, z, &u, &v);
    float xb = u * W - 0.5f, yb = v * W - 0.5f;
    int i = (int)floorf(xb), j = (int)floorf(yb);
    double a = xb - floorf(xb), b = yb - floorf(yb);
    double t[2][2];
    for (int dj = 0; dj < 2; dj++)
        for (int di = 0; di < 2; di++) {
            int ii = i + di, jj = j + dj;
            if (seamless) t[dj][di] = seam_texel(f, ii, jj);
            else t[dj][di] = texel_value(f, ii < 0 ? 0 : ii >= W ? W - 1 : ii, jj < 0 ? 0 : jj >= W ? W - 1 : jj);
        }
    return (1 - a) * (1 - b) * t[0][0] + a * (1 - b) * t[0][1] + (1 - a) * b * t[1][0] + a * b * t[1][1];
}

static cudaTextureObject_t make_tex(cudaArray_t a, int seamless)
{
    cudaResourceDesc r;
    memset(&r, 0, sizeof r);
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a;
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 1;
    td.seamlessCubemap = seamless;
    cudaTextureObject_t t = 0;
    CHECK(cudaCreateTextureObject(&t, &r, &td, NULL));
    return t;
}

int main(void)
{
    pw_report rep = pw_report_start("texcube_seamless");
    pw_rng rng = pw_rng_seed(0x5ea3);
    cudaChannelFormatDesc fc = cudaCreateChannelDesc<float>();
    static float h_faces[6][W][W];
    for (int f = 0; f < 6; f++)
        for (int y = 0; y < W; y++)
            for (int x = 0; x < W; x++) h_faces[f][y][x] = texel_value(f, x, y);
    cudaArray_t cube;
    CHECK(cudaMalloc3DArray(&cube, &fc, make_cudaExtent(W, W, 6), cudaArrayCubemap));
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = make_cudaPitchedPtr(h_faces, W * sizeof(float), W, W);
    p.dstArray = cube;
    p.extent = make_cudaExtent(W, W, 6);
    p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p));

    /* directions: half of them with both minor coordinates near the edge
     * (|c| > 7/8 of the major axis: a corner footprint), a quarter with
     * one, the rest anywhere */
    static float4 h_dir[NS];
    for (int i = 0; i < NS; i++) {
        float c[3];
        int axis = pw_rng_int(&rng, 0, 2);
        float m = pw_rng_int(&rng, 0, 1) ? 1.0f : 2.0f;
        int lim = (int)(64 * m) - 1, edge = (int)(56 * m);
        for (int k = 0; k < 3; k++) {
            int near = i % 4 < 2 || (i % 4 == 2 && k == (axis + 1) % 3);
            int mag = near ? pw_rng_int(&rng, edge, lim) : pw_rng_int(&rng, 0, lim);
            c[k] = (float)(pw_rng_int(&rng, 0, 1) ? mag : -mag) / 64.0f;
        }
        c[axis] = pw_rng_int(&rng, 0, 1) ? m : -m;
        h_dir[i] = make_float4(c[0], c[1], c[2], 0);
    }
    float4 *d_dir;
    float *d_out;
    static float h_out[NS];
    CHECK(cudaMalloc(&d_dir, sizeof h_dir));
    CHECK(cudaMalloc(&d_out, sizeof h_out));
    CHECK(cudaMemcpy(d_dir, h_dir, sizeof h_dir, cudaMemcpyHostToDevice));
    int differ = 0;
    for (int seamless = 1; seamless >= 0; seamless--) {
        cudaTextureObject_t t = make_tex(cube, seamless);
        sample_cube<<<PW_DIV_UP(NS, 128), 128>>>(t, d_dir, d_out, NS);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost));
        for (int i = 0; i < NS; i++) {
            double want = ref_sample(h_dir[i].x, h_dir[i].y, h_dir[i].z, seamless);
            pw_expect(&rep, fabs(h_out[i] - want) <= 1.0 / 64,
                      "%s linear (%g, %g, %g): got %.6f want %.6f", seamless ? "seamless" : "per-face",
                      h_dir[i].x, h_dir[i].y, h_dir[i].z, h_out[i], want);
            if (!seamless && fabs(want - ref_sample(h_dir[i].x, h_dir[i].y, h_dir[i].z, 1)) > 1.0 / 64) differ++;
        }
        CHECK(cudaDestroyTextureObject(t));
    }
    /* the test means something: most edge footprints differ between the two */
    pw_expect(&rep, differ > NS / 4, "only %d of %d samples differ with and without seamless filtering", differ, NS);
    CHECK(cudaFree(d_dir));
    CHECK(cudaFree(d_out));
    CHECK(cudaFreeArray(cube));
    return pw_finish(&rep);
}
