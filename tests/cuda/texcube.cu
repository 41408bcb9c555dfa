/*
 * texcube.cu: cubemap and layered cubemap textures (texCubemap,
 * texCubemapLayered) on CUDA arrays made with cudaArrayCubemap
 * (| cudaArrayLayered), filled face by face with cudaMemcpy3D.
 *
 * The reference is the CUDA C++ Programming Guide's cubemap table, written
 * here on the host: the major axis of the direction (x, y, z) picks the
 * face (+x -x +y -y +z -z = 0..5, CUarray_cubemap_face) and (s, t) on it,
 * and the face is sampled at normalized ((s/|m| + 1)/2, (t/|m| + 1)/2).
 * Texel (x, y) of face f of cubemap l holds 384 l + 64 f + 8 y + x: every
 * texel of every face is distinct, so a wrong face, texel or layer shows.
 *
 * Directions: the major axis is +-1 or +-2 (a power of two: s/|m| is exact
 * however the hardware divides), the two others on a 1/64 grid strictly
 * smaller in magnitude (no ties between axes, whose face the guide leaves
 * open).  So the texel coordinate u * 8 lies on a 1/16 grid and is exact:
 * point sampling is checked bit for bit.  Linear filtering: the weights
 * frac(x - 0.5) are then multiples of 1/16, exact in the 9-bit fixed point
 * the guide describes, so only the four products and three sums round; the
 * tolerance 1/64 absolute covers the hardware's filtering precision with a
 * wide margin (values below 1152, f32 ulp 2^-13 there) and is far below
 * what a wrong texel changes (texels differ by at least 1, weights by
 * 1/16).  Face borders are clamped per face (not seamless: the default).
 * Also: the shape rules of cudaMalloc3DArray for cubemaps,
 * cudaArrayGetInfo's flags, and surfaces on (layered) cubemaps
 * (surfCubemap[Layered]write/read: every face a layer).
 */
#include <math.h>

#include "check.h"

enum { W = 8, L = 3, NS = 512 };

__global__ void sample_cube(cudaTextureObject_t t, const float4 *dir, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemap<float>(t, dir[i].x, dir[i].y, dir[i].z);
}

__global__ void sample_cube_layered(cudaTextureObject_t t, const float4 *dir, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemapLayered<float>(t, dir[i].x, dir[i].y, dir[i].z, (int)dir[i].w);
}

/* surfCubemapLayeredwrite (suld/sust .a2d, layer 6 l + f) of every texel,
 * then surfCubemapLayeredread of every texel into out */
__global__ void surf_faces(cudaSurfaceObject_t s, int cubes, float *out)
{
    int x = threadIdx.x, y = threadIdx.y, lf = blockIdx.x;
    if (cubes) surfCubemapLayeredwrite<float>((float)(1000 * lf + 10 * y + x), s, x * 4, y, lf);
    else surfCubemapwrite<float>((float)(1000 * lf + 10 * y + x), s, x * 4, y, lf);
    __syncthreads();
    float v = cubes ? surfCubemapLayeredread<float>(s, x * 4, y, lf) : surfCubemapread<float>(s, x * 4, y, lf);
    out[(lf * blockDim.y + y) * blockDim.x + x] = v;
}

static float texel_value(int l, int f, int x, int y) { return (float)(384 * l + 64 * f + 8 * y + x); }

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

static int clampi(int i) { return i < 0 ? 0 : i >= W ? W - 1 : i; }

/* Point or linear sample of cubemap l at direction d (clamp on the face). */
static float ref_sample(float x, float y, float z, int l, int linear)
{
    float u, v;
    int f = ref_face(x, y, z, &u, &v);
    float px = u * W, py = v * W;
    if (!linear) return texel_value(l, f, clampi((int)floorf(px)), clampi((int)floorf(py)));
    float xb = px - 0.5f, yb = py - 0.5f;
    int i = (int)floorf(xb), j = (int)floorf(yb);
    float a = xb - floorf(xb), b = yb - floorf(yb);
    return (1 - a) * (1 - b) * texel_value(l, f, clampi(i), clampi(j)) +
           a * (1 - b) * texel_value(l, f, clampi(i + 1), clampi(j)) +
           (1 - a) * b * texel_value(l, f, clampi(i), clampi(j + 1)) +
           a * b * texel_value(l, f, clampi(i + 1), clampi(j + 1));
}

static cudaTextureObject_t make_tex(cudaArray_t a, cudaTextureFilterMode filt)
{
    cudaResourceDesc r;
    memset(&r, 0, sizeof r);
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a;
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
    td.filterMode = filt;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 1;
    cudaTextureObject_t t = 0;
    CHECK(cudaCreateTextureObject(&t, &r, &td, NULL));
    return t;
}

int main(void)
{
    pw_report rep = pw_report_start("texcube");
    pw_rng rng = pw_rng_seed(0xc0be);
    cudaChannelFormatDesc fc = cudaCreateChannelDesc<float>();

    /* shapes CUDA refuses: width != height, depth not 6 (a multiple of 6) */
    {
        cudaArray_t bad;
        pw_expect(&rep, cudaMalloc3DArray(&bad, &fc, make_cudaExtent(W, W + 1, 6), cudaArrayCubemap) ==
                            cudaErrorInvalidValue, "cubemap %dx%d accepted", W, W + 1);
        pw_expect(&rep, cudaMalloc3DArray(&bad, &fc, make_cudaExtent(W, W, 5), cudaArrayCubemap) ==
                            cudaErrorInvalidValue, "cubemap of depth 5 accepted");
        pw_expect(&rep, cudaMalloc3DArray(&bad, &fc, make_cudaExtent(W, W, 14), cudaArrayCubemap | cudaArrayLayered) ==
                            cudaErrorInvalidValue, "layered cubemap of depth 14 accepted");
        cudaGetLastError();
    }

    /* the cubemap, one face per cudaMemcpy3D; the layered one in one copy */
    static float h_faces[L * 6][W][W];
    for (int l = 0; l < L; l++)
        for (int f = 0; f < 6; f++)
            for (int y = 0; y < W; y++)
                for (int x = 0; x < W; x++) h_faces[6 * l + f][y][x] = texel_value(l, f, x, y);
    cudaArray_t cube, cubes;
    CHECK(cudaMalloc3DArray(&cube, &fc, make_cudaExtent(W, W, 6), cudaArrayCubemap));
    CHECK(cudaMalloc3DArray(&cubes, &fc, make_cudaExtent(W, W, 6 * L), cudaArrayCubemap | cudaArrayLayered));
    for (int f = 0; f < 6; f++) {
        cudaMemcpy3DParms p;
        memset(&p, 0, sizeof p);
        p.srcPtr = make_cudaPitchedPtr(h_faces[f], W * sizeof(float), W, W);
        p.dstArray = cube;
        p.dstPos = make_cudaPos(0, 0, f);
        p.extent = make_cudaExtent(W, W, 1);
        p.kind = cudaMemcpyHostToDevice;
        CHECK(cudaMemcpy3D(&p));
    }
    {
        cudaMemcpy3DParms p;
        memset(&p, 0, sizeof p);
        p.srcPtr = make_cudaPitchedPtr(h_faces, W * sizeof(float), W, W);
        p.dstArray = cubes;
        p.extent = make_cudaExtent(W, W, 6 * L);
        p.kind = cudaMemcpyHostToDevice;
        CHECK(cudaMemcpy3D(&p));
    }
    {
        cudaChannelFormatDesc d;
        cudaExtent e;
        unsigned flags;
        CHECK(cudaArrayGetInfo(&d, &e, &flags, cube));
        pw_expect(&rep, flags == cudaArrayCubemap && e.width == W && e.height == W && e.depth == 6,
                  "cudaArrayGetInfo(cube): flags %#x extent %zu %zu %zu", flags, e.width, e.height, e.depth);
        CHECK(cudaArrayGetInfo(&d, &e, &flags, cubes));
        pw_expect(&rep, flags == (cudaArrayCubemap | cudaArrayLayered) && e.depth == 6 * L,
                  "cudaArrayGetInfo(layered cube): flags %#x depth %zu", flags, e.depth);
    }

    /* directions: a major axis of +-1 or +-2, the others on a 1/64 grid
     * strictly inside it; w is the layer for the layered cubemap */
    static float4 h_dir[NS];
    for (int i = 0; i < NS; i++) {
        float c[3];
        int axis = pw_rng_int(&rng, 0, 2);
        float m = pw_rng_int(&rng, 0, 1) ? 1.0f : 2.0f;
        int lim = (int)(64 * m) - 1;
        for (int k = 0; k < 3; k++) c[k] = (float)pw_rng_int(&rng, -lim, lim) / 64.0f;
        c[axis] = pw_rng_int(&rng, 0, 1) ? m : -m;
        h_dir[i] = make_float4(c[0], c[1], c[2], (float)(i % L));
    }
    /* anchors by hand: +x centre, -y, -z */
    h_dir[0] = make_float4(1, 0, 0, 0);          /* face 0, u = v = 0.5: texel (4, 4) = 36 */
    h_dir[1] = make_float4(0.5f, -1, 0.25f, 1);  /* face 3, s 0.5 t -0.25: texel (6, 3) = 384+192+24+6 */
    h_dir[2] = make_float4(0.5f, 0.25f, -2, 2);  /* face 5, s -0.25 t -0.125: (3, 3) = 768+320+27 */
    float4 *d_dir;
    float *d_out;
    static float h_out[NS];
    CHECK(cudaMalloc(&d_dir, sizeof h_dir));
    CHECK(cudaMalloc(&d_out, sizeof h_out));
    CHECK(cudaMemcpy(d_dir, h_dir, sizeof h_dir, cudaMemcpyHostToDevice));

    for (int layered = 0; layered < 2; layered++)
        for (int linear = 0; linear < 2; linear++) {
            cudaTextureObject_t t =
                make_tex(layered ? cubes : cube, linear ? cudaFilterModeLinear : cudaFilterModePoint);
            if (layered) sample_cube_layered<<<PW_DIV_UP(NS, 128), 128>>>(t, d_dir, d_out, NS);
            else sample_cube<<<PW_DIV_UP(NS, 128), 128>>>(t, d_dir, d_out, NS);
            CHECK_LAUNCH();
            CHECK(cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost));
            for (int i = 0; i < NS; i++) {
                float want = ref_sample(h_dir[i].x, h_dir[i].y, h_dir[i].z, layered ? (int)h_dir[i].w : 0, linear);
                int ok = linear ? fabsf(h_out[i] - want) <= 1.0f / 64 : f2u(h_out[i]) == f2u(want);
                pw_expect(&rep, ok, "%s %s (%g, %g, %g) layer %g: got %.9g want %.9g",
                          layered ? "texCubemapLayered" : "texCubemap", linear ? "linear" : "point", h_dir[i].x,
                          h_dir[i].y, h_dir[i].z, h_dir[i].w, h_out[i], want);
            }
            if (!linear) {
                pw_expect(&rep, h_out[0] == 36.0f, "anchor +x: got %g", h_out[0]);   /* layer 0 either way */
                pw_expect(&rep, h_out[1] == (layered ? 606.0f : 222.0f), "anchor -y: got %g", h_out[1]);
                pw_expect(&rep, h_out[2] == (layered ? 1115.0f : 347.0f), "anchor -z: got %g", h_out[2]);
            }
            CHECK(cudaDestroyTextureObject(t));
        }

    /* surfaces on a cubemap and a layered cubemap: every face is a layer */
    for (int layered = 0; layered < 2; layered++) {
        int nl = layered ? 6 * L : 6;
        cudaArray_t sa;
        CHECK(cudaMalloc3DArray(&sa, &fc, make_cudaExtent(W, W, nl),
                                cudaArrayCubemap | cudaArraySurfaceLoadStore | (layered ? cudaArrayLayered : 0)));
        cudaResourceDesc r;
        memset(&r, 0, sizeof r);
        r.resType = cudaResourceTypeArray;
        r.res.array.array = sa;
        cudaSurfaceObject_t s = 0;
        CHECK(cudaCreateSurfaceObject(&s, &r));
        float *d_sv;
        static float h_sv[6 * L * W * W], h_copy[6 * L * W * W];
        CHECK(cudaMalloc(&d_sv, sizeof h_sv));
        surf_faces<<<nl, dim3(W, W)>>>(s, layered, d_sv);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(h_sv, d_sv, sizeof h_sv, cudaMemcpyDeviceToHost));
        cudaMemcpy3DParms p;
        memset(&p, 0, sizeof p);
        p.srcArray = sa;
        p.dstPtr = make_cudaPitchedPtr(h_copy, W * sizeof(float), W, W);
        p.extent = make_cudaExtent(W, W, nl);
        p.kind = cudaMemcpyDeviceToHost;
        CHECK(cudaMemcpy3D(&p));
        for (int lf = 0; lf < nl; lf++)
            for (int y = 0; y < W; y++)
                for (int x = 0; x < W; x++) {
                    float want = (float)(1000 * lf + 10 * y + x);
                    int k = (lf * W + y) * W + x;
                    pw_expect(&rep, h_sv[k] == want && h_copy[k] == want,
                              "%s surface layer-face %d (%d, %d): read %g, copied %g, want %g",
                              layered ? "layered cubemap" : "cubemap", lf, x, y, h_sv[k], h_copy[k], want);
                }
        CHECK(cudaDestroySurfaceObject(s));
        CHECK(cudaFreeArray(sa));
        CHECK(cudaFree(d_sv));
    }

    CHECK(cudaFreeArray(cube));
    CHECK(cudaFreeArray(cubes));
    CHECK(cudaFree(d_dir));
    CHECK(cudaFree(d_out));
    return pw_finish(&rep);
}
