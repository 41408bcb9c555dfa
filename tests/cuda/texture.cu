/*
 * texture: texture and surface objects through the runtime API.
 *
 *  - a CUDA array of uchar4 (cudaMallocArray, cudaMemcpy2DToArray) read as
 *    normalized floats through three texture objects: linear filter with
 *    normalized coordinates and wrap/mirror, point filter with clamp and
 *    unnormalized coordinates, linear with border and a border colour;
 *    tex2Dgather (tld4) of its green channel.
 *  - a pitched 2D float buffer (cudaMallocPitch, cudaMemcpy2D): linear
 *    filtering, clamp, unnormalized coordinates.
 *  - a pitched short2 buffer read as normalized floats (tex2D<float4>) and
 *    as elements (tex2D<short2>).
 *  - tex1Dfetch on linear memory (float), indices past the end read 0.
 *  - a surface object on an int array: surf2Dwrite from one kernel,
 *    surf2Dread from another, and cudaMemcpy2DFromArray back to the host.
 *
 * The expected values come from the CUDA Programming Guide's "Texture
 * Fetching" appendix, computed on the host: nearest-point sampling
 * T[floor(x)], linear filtering with xB = x - 0.5 and weights alpha =
 * frac(xB) in 9-bit fixed point with 8 fractional bits, the address modes
 * (clamp, wrap: x - floor(x), mirror, border), and the normalized-float
 * read mode (u / 255, max(s / 32767, -1)).  Point sampling, gathers,
 * fetches and surfaces compare exactly.  Filtered values compare within
 * 1/256 of the texel range: the guide fixes the weights' precision but not
 * the precision of the weighted sum, which differs between GPUs.
 */
#include "check.h"

#include <math.h>

enum { AW = 13, AH = 7, NS = 96 };

__global__ void sample2d(cudaTextureObject_t t, const float2 *uv, float4 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2D<float4>(t, uv[i].x, uv[i].y);
}

__global__ void sample2d_f(cudaTextureObject_t t, const float2 *uv, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2D<float>(t, uv[i].x, uv[i].y);
}

__global__ void sample2d_s2(cudaTextureObject_t t, const float2 *uv, short2 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2D<short2>(t, uv[i].x, uv[i].y);
}

__global__ void gather_g(cudaTextureObject_t t, const float2 *uv, float4 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2Dgather<float4>(t, uv[i].x, uv[i].y, 1);
}

__global__ void fetch1d(cudaTextureObject_t t, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex1Dfetch<float>(t, i - 3);
}

__global__ void surf_write(cudaSurfaceObject_t s, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h)
        surf2Dwrite(x * 1000 + y * 7 - 500, s, x * 4, y);
}

__global__ void surf_read(cudaSurfaceObject_t s, int *out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h)
        out[y * w + x] = surf2Dread<int>(s, x * 4, y) + 1;
}

/* ---- the host reference (Programming Guide, "Texture Fetching") ------- */
typedef struct ref_tex {
    const unsigned char *data;   /* texel (0,0) */
    size_t pitch;                /* bytes per row */
    int w, h, ch, bits;          /* channels, bits per channel */
    int sint, flt, normread;     /* signed, float channels; read as normalized float */
    int mode[2], linear, normcoord;
    float border[4];
} ref_tex;

static int ref_index(int i, int n, int mode, int *ok)
{
    *ok = 1;
    if (mode == cudaAddressModeWrap) return ((i % n) + n) % n;
    if (mode == cudaAddressModeMirror) {
        int m = ((i % (2 * n)) + 2 * n) % (2 * n);
        return m < n ? m : 2 * n - 1 - m;
    }
    if (mode == cudaAddressModeBorder) *ok = i >= 0 && i < n;
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

static float ref_channel(const ref_tex *t, int x, int y, int k)
{
    if (k >= t->ch) return 0.0f;
    const unsigned char *p = t->data + y * t->pitch + (size_t)x * t->ch * (t->bits / 8) + k * (t->bits / 8);
    if (t->flt) { float f; memcpy(&f, p, 4); return f; }
    if (t->bits == 8) {
        if (t->sint) { signed char s = (signed char)*p; return t->normread ? fmaxf((float)s / 127.0f, -1.0f) : (float)s; }
        return t->normread ? (float)*p / 255.0f : (float)*p;
    }
    short s; memcpy(&s, p, 2);
    unsigned short u; memcpy(&u, p, 2);
    if (t->sint) return t->normread ? fmaxf((float)s / 32767.0f, -1.0f) : (float)s;
    return t->normread ? (float)u / 65535.0f : (float)u;
}

static float ref_texel(const ref_tex *t, int ix, int iy, int k)
{
    int okx, oky;
    int x = ref_index(ix, t->w, t->mode[0], &okx), y = ref_index(iy, t->h, t->mode[1], &oky);
    if (!okx || !oky) return t->border[k];
    return ref_channel(t, x, y, k);
}

/* 9-bit fixed point weight, 8 fractional bits */
static float ref_frac(float xb) { return rintf(h_mul(h_sub(xb, floorf(xb)), 256.0f)) / 256.0f; }

static void ref_sample(const ref_tex *t, float u, float v, float out[4])
{
    float x = t->normcoord ? h_mul(u, (float)t->w) : u, y = t->normcoord ? h_mul(v, (float)t->h) : v;
    for (int k = 0; k < 4; k++) {
        if (!t->linear) { out[k] = ref_texel(t, (int)floorf(x), (int)floorf(y), k); continue; }
        float xb = h_sub(x, 0.5f), yb = h_sub(y, 0.5f);
        int i = (int)floorf(xb), j = (int)floorf(yb);
        float a = ref_frac(xb), b = ref_frac(yb);
        /* (1-a)(1-b)T[i,j] + a(1-b)T[i+1,j] + (1-a)bT[i,j+1] + abT[i+1,j+1] */
        float r = h_mul(h_mul(1.0f - a, 1.0f - b), ref_texel(t, i, j, k));
        r = h_add(r, h_mul(h_mul(a, 1.0f - b), ref_texel(t, i + 1, j, k)));
        r = h_add(r, h_mul(h_mul(1.0f - a, b), ref_texel(t, i, j + 1, k)));
        r = h_add(r, h_mul(h_mul(a, b), ref_texel(t, i + 1, j + 1, k)));
        out[k] = r;
    }
}

/* tld4: the footprint of linear filtering, counter-clockwise from the
 * lower left (PTX ISA, tld4): (i,j+1) (i+1,j+1) (i+1,j) (i,j) */
static void ref_gather(const ref_tex *t, float u, float v, int k, float out[4])
{
    float x = t->normcoord ? h_mul(u, (float)t->w) : u, y = t->normcoord ? h_mul(v, (float)t->h) : v;
    int i = (int)floorf(h_sub(x, 0.5f)), j = (int)floorf(h_sub(y, 0.5f));
    out[0] = ref_texel(t, i, j + 1, k);
    out[1] = ref_texel(t, i + 1, j + 1, k);
    out[2] = ref_texel(t, i + 1, j, k);
    out[3] = ref_texel(t, i, j, k);
}

static void check4(pw_report *rep, const char *what, int s, const float *got, const float *want, float tol)
{
    for (int k = 0; k < 4; k++)
        pw_expect(rep, tol == 0.0f ? f2u(got[k]) == f2u(want[k]) : fabsf(got[k] - want[k]) <= tol,
                  "%s sample %d channel %d: got %.9g want %.9g", what, s, k, got[k], want[k]);
}

static cudaTextureObject_t make_tex(const cudaResourceDesc *res, int mode0, int mode1, cudaTextureFilterMode filt,
                                    cudaTextureReadMode read, int normcoord, const float *border)
{
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = (cudaTextureAddressMode)mode0;
    td.addressMode[1] = (cudaTextureAddressMode)mode1;
    td.filterMode = filt;
    td.readMode = read;
    td.normalizedCoords = normcoord;
    if (border) memcpy(td.borderColor, border, sizeof td.borderColor);
    cudaTextureObject_t t = 0;
    CHECK(cudaCreateTextureObject(&t, res, &td, NULL));
    return t;
}

int main(void)
{
    pw_report rep = pw_report_start("texture");
    pw_rng rng = pw_rng_seed(0x7e47u);

    /* coordinates: normalized ones over [-0.6, 1.6), unnormalized over the
     * texture and a margin */
    float2 h_nuv[NS], h_uv[NS];
    for (int i = 0; i < NS; i++) {
        h_nuv[i] = make_float2(pw_rng_float(&rng, -0.6f, 1.6f), pw_rng_float(&rng, -0.6f, 1.6f));
        h_uv[i] = make_float2(pw_rng_float(&rng, -2.0f, AW + 2.0f), pw_rng_float(&rng, -2.0f, AH + 2.0f));
    }
    h_uv[0] = make_float2(1.0f, 1.0f);   /* a texel corner: equal weights */
    h_uv[1] = make_float2(2.5f, 3.5f);   /* a texel centre: that texel */
    float2 *d_nuv, *d_uv;
    CHECK(cudaMalloc(&d_nuv, sizeof h_nuv));
    CHECK(cudaMalloc(&d_uv, sizeof h_uv));
    CHECK(cudaMemcpy(d_nuv, h_nuv, sizeof h_nuv, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_uv, h_uv, sizeof h_uv, cudaMemcpyHostToDevice));
    float4 *d_out4;
    float *d_outf;
    CHECK(cudaMalloc(&d_out4, NS * sizeof(float4)));
    CHECK(cudaMalloc(&d_outf, NS * sizeof(float)));
    float4 h_out4[NS];
    float h_outf[NS];

    /* ---- uchar4 array ---- */
    static unsigned char img[AH][AW][4];
    for (int y = 0; y < AH; y++)
        for (int x = 0; x < AW; x++)
            for (int k = 0; k < 4; k++) img[y][x][k] = (unsigned char)pw_rng_u32(&rng);
    cudaChannelFormatDesc cd = cudaCreateChannelDesc<uchar4>();
    cudaArray_t arr;
    CHECK(cudaMallocArray(&arr, &cd, AW, AH, cudaArrayTextureGather));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, img, AW * 4, AW * 4, AH, cudaMemcpyHostToDevice));
    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    ref_tex rt;
    memset(&rt, 0, sizeof rt);
    rt.data = &img[0][0][0];
    rt.pitch = AW * 4;
    rt.w = AW; rt.h = AH; rt.ch = 4; rt.bits = 8; rt.normread = 1;
    const float border[4] = {0.25f, 0.5f, 0.75f, 1.0f};
    struct { int m0, m1, linear, norm, border; const char *name; } cfg[] = {
        {cudaAddressModeWrap, cudaAddressModeMirror, 1, 1, 0, "uchar4 linear wrap/mirror"},
        {cudaAddressModeClamp, cudaAddressModeClamp, 0, 0, 0, "uchar4 point clamp"},
        {cudaAddressModeBorder, cudaAddressModeBorder, 1, 1, 1, "uchar4 linear border"},
        {cudaAddressModeMirror, cudaAddressModeWrap, 0, 1, 0, "uchar4 point mirror/wrap"},
    };
    for (unsigned c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        cudaTextureObject_t t = make_tex(&res, cfg[c].m0, cfg[c].m1, cfg[c].linear ? cudaFilterModeLinear : cudaFilterModePoint,
                                         cudaReadModeNormalizedFloat, cfg[c].norm, border);
        sample2d<<<2, 48>>>(t, cfg[c].norm ? d_nuv : d_uv, d_out4, NS);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(h_out4, d_out4, sizeof h_out4, cudaMemcpyDeviceToHost));
        rt.mode[0] = cfg[c].m0; rt.mode[1] = cfg[c].m1; rt.linear = cfg[c].linear; rt.normcoord = cfg[c].norm;
        memcpy(rt.border, border, sizeof border);
        for (int i = 0; i < NS; i++) {
            float want[4];
            const float2 uv = cfg[c].norm ? h_nuv[i] : h_uv[i];
            ref_sample(&rt, uv.x, uv.y, want);
            check4(&rep, cfg[c].name, i, &h_out4[i].x, want, cfg[c].linear ? 1.0f / 256 : 0.0f);
        }
        /* hand-checked: point sampling at the centre of texel (2,3) */
        if (c == 1)
            pw_expect(&rep, f2u(h_out4[1].x) == f2u((float)img[3][2][0] / 255.0f), "point at (2.5,3.5): %g",
                      h_out4[1].x);
        CHECK(cudaDestroyTextureObject(t));
    }

    /* tex2Dgather of the green channel (tld4.g), normalized coordinates */
    {
        cudaTextureObject_t t = make_tex(&res, cudaAddressModeWrap, cudaAddressModeClamp, cudaFilterModePoint,
                                         cudaReadModeNormalizedFloat, 1, NULL);
        gather_g<<<2, 48>>>(t, d_nuv, d_out4, NS);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(h_out4, d_out4, sizeof h_out4, cudaMemcpyDeviceToHost));
        rt.mode[0] = cudaAddressModeWrap; rt.mode[1] = cudaAddressModeClamp; rt.normcoord = 1;
        for (int i = 0; i < NS; i++) {
            float want[4];
            ref_gather(&rt, h_nuv[i].x, h_nuv[i].y, 1, want);
            check4(&rep, "tex2Dgather", i, &h_out4[i].x, want, 0.0f);
        }
        CHECK(cudaDestroyTextureObject(t));
    }

    /* ---- pitched float buffer, linear, clamp, unnormalized ---- */
    {
        static float fimg[AH][AW];
        for (int y = 0; y < AH; y++)
            for (int x = 0; x < AW; x++) fimg[y][x] = pw_rng_float(&rng, -4.0f, 4.0f);
        float *d_f;
        size_t pitch;
        CHECK(cudaMallocPitch((void **)&d_f, &pitch, AW * sizeof(float), AH));
        CHECK(cudaMemcpy2D(d_f, pitch, fimg, AW * sizeof(float), AW * sizeof(float), AH, cudaMemcpyHostToDevice));
        cudaResourceDesc pr;
        memset(&pr, 0, sizeof pr);
        pr.resType = cudaResourceTypePitch2D;
        pr.res.pitch2D.devPtr = d_f;
        pr.res.pitch2D.desc = cudaCreateChannelDesc<float>();
        pr.res.pitch2D.width = AW;
        pr.res.pitch2D.height = AH;
        pr.res.pitch2D.pitchInBytes = pitch;
        cudaTextureObject_t t = make_tex(&pr, cudaAddressModeClamp, cudaAddressModeClamp, cudaFilterModeLinear,
                                         cudaReadModeElementType, 0, NULL);
        sample2d_f<<<3, 33>>>(t, d_uv, d_outf, NS);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(h_outf, d_outf, sizeof h_outf, cudaMemcpyDeviceToHost));
        ref_tex fr;
        memset(&fr, 0, sizeof fr);
        fr.data = (const unsigned char *)&fimg[0][0];
        fr.pitch = AW * sizeof(float);
        fr.w = AW; fr.h = AH; fr.ch = 1; fr.bits = 32; fr.flt = 1; fr.linear = 1;
        fr.mode[0] = fr.mode[1] = cudaAddressModeClamp;
        for (int i = 0; i < NS; i++) {
            float want[4];
            ref_sample(&fr, h_uv[i].x, h_uv[i].y, want);
            pw_expect(&rep, fabsf(h_outf[i] - want[0]) <= 8.0f / 256, "float pitch2D sample %d: got %.9g want %.9g", i,
                      h_outf[i], want[0]);
        }
        /* hand-checked: at the corner (1,1) the mean of texels (0..1, 0..1) */
        float mean = (fimg[0][0] + fimg[0][1] + fimg[1][0] + fimg[1][1]) / 4;
        pw_expect(&rep, fabsf(h_outf[0] - mean) <= 8.0f / 256, "float corner: got %g want %g", h_outf[0], mean);
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaFree(d_f));
    }

    /* ---- pitched short2: normalized float and element reads ---- */
    {
        static short simg[AH][AW][2];
        for (int y = 0; y < AH; y++)
            for (int x = 0; x < AW; x++)
                for (int k = 0; k < 2; k++) simg[y][x][k] = (short)pw_rng_int(&rng, -32768, 32767);
        simg[0][0][0] = -32768;   /* normalizes to -1 (clamped) */
        short2 *d_s;
        size_t pitch;
        CHECK(cudaMallocPitch((void **)&d_s, &pitch, AW * sizeof(short2), AH));
        CHECK(cudaMemcpy2D(d_s, pitch, simg, AW * sizeof(short2), AW * sizeof(short2), AH, cudaMemcpyHostToDevice));
        cudaResourceDesc sr;
        memset(&sr, 0, sizeof sr);
        sr.resType = cudaResourceTypePitch2D;
        sr.res.pitch2D.devPtr = d_s;
        sr.res.pitch2D.desc = cudaCreateChannelDesc<short2>();
        sr.res.pitch2D.width = AW;
        sr.res.pitch2D.height = AH;
        sr.res.pitch2D.pitchInBytes = pitch;
        ref_tex s;
        memset(&s, 0, sizeof s);
        s.data = (const unsigned char *)&simg[0][0][0];
        s.pitch = AW * sizeof(short2);
        s.w = AW; s.h = AH; s.ch = 2; s.bits = 16; s.sint = 1; s.normread = 1;
        s.mode[0] = s.mode[1] = cudaAddressModeClamp;
        cudaTextureObject_t t = make_tex(&sr, cudaAddressModeClamp, cudaAddressModeClamp, cudaFilterModePoint,
                                         cudaReadModeNormalizedFloat, 0, NULL);
        sample2d<<<2, 48>>>(t, d_uv, d_out4, NS);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(h_out4, d_out4, sizeof h_out4, cudaMemcpyDeviceToHost));
        for (int i = 0; i < NS; i++) {
            float want[4];
            ref_sample(&s, h_uv[i].x, h_uv[i].y, want);
            /* channels z and w of a two-channel texture are not checked */
            want[2] = h_out4[i].z;
            want[3] = h_out4[i].w;
            check4(&rep, "short2 normalized", i, &h_out4[i].x, want, 0.0f);
        }
        CHECK(cudaDestroyTextureObject(t));
        t = make_tex(&sr, cudaAddressModeClamp, cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeElementType, 0,
                     NULL);
        short2 *d_o2;
        short2 h_o2[NS];
        CHECK(cudaMalloc(&d_o2, sizeof h_o2));
        sample2d_s2<<<2, 48>>>(t, d_uv, d_o2, NS);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(h_o2, d_o2, sizeof h_o2, cudaMemcpyDeviceToHost));
        s.normread = 0;
        for (int i = 0; i < NS; i++) {
            float want[4];
            ref_sample(&s, h_uv[i].x, h_uv[i].y, want);
            pw_expect(&rep, h_o2[i].x == (short)want[0] && h_o2[i].y == (short)want[1],
                      "short2 element sample %d: got (%d,%d) want (%g,%g)", i, h_o2[i].x, h_o2[i].y, want[0], want[1]);
        }
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaFree(d_o2));
        CHECK(cudaFree(d_s));
    }

    /* ---- tex1Dfetch on linear memory ---- */
    {
        enum { N = 70 };
        float lin[N];
        for (int i = 0; i < N; i++) lin[i] = pw_rng_float(&rng, -100.0f, 100.0f);
        float *d_lin;
        CHECK(cudaMalloc(&d_lin, sizeof lin));
        CHECK(cudaMemcpy(d_lin, lin, sizeof lin, cudaMemcpyHostToDevice));
        cudaResourceDesc lr;
        memset(&lr, 0, sizeof lr);
        lr.resType = cudaResourceTypeLinear;
        lr.res.linear.devPtr = d_lin;
        lr.res.linear.desc = cudaCreateChannelDesc<float>();
        lr.res.linear.sizeInBytes = sizeof lin;
        cudaTextureObject_t t = make_tex(&lr, cudaAddressModeClamp, cudaAddressModeClamp, cudaFilterModePoint,
                                         cudaReadModeElementType, 0, NULL);
        fetch1d<<<1, 96>>>(t, d_outf, NS);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(h_outf, d_outf, sizeof h_outf, cudaMemcpyDeviceToHost));
        for (int i = 0; i < NS; i++) {
            int k = i - 3;
            float want = k >= 0 && k < N ? lin[k] : 0.0f;   /* out of range reads zero */
            pw_expect(&rep, f2u(h_outf[i]) == f2u(want), "tex1Dfetch(%d): got %g want %g", k, h_outf[i], want);
        }
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaFree(d_lin));
    }

    /* ---- surface: write, read back by a kernel and by a copy ---- */
    {
        enum { SW = 37, SH = 5 };
        cudaChannelFormatDesc ic = cudaCreateChannelDesc<int>();
        cudaArray_t sa;
        CHECK(cudaMallocArray(&sa, &ic, SW, SH, cudaArraySurfaceLoadStore));
        cudaResourceDesc srr;
        memset(&srr, 0, sizeof srr);
        srr.resType = cudaResourceTypeArray;
        srr.res.array.array = sa;
        cudaSurfaceObject_t s = 0;
        CHECK(cudaCreateSurfaceObject(&s, &srr));
        surf_write<<<dim3(2, SH), 32>>>(s, SW, SH);
        CHECK_LAUNCH();
        int *d_si;
        static int h_si[SH * SW], h_copy[SH][SW];
        CHECK(cudaMalloc(&d_si, sizeof h_si));
        surf_read<<<dim3(2, SH), 32>>>(s, d_si, SW, SH);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(h_si, d_si, sizeof h_si, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy2DFromArray(h_copy, SW * sizeof(int), sa, 0, 0, SW * sizeof(int), SH, cudaMemcpyDeviceToHost));
        for (int y = 0; y < SH; y++)
            for (int x = 0; x < SW; x++) {
                int want = x * 1000 + y * 7 - 500;
                pw_expect(&rep, h_copy[y][x] == want, "surface (%d,%d) copied: got %d want %d", x, y, h_copy[y][x], want);
                pw_expect(&rep, h_si[y * SW + x] == want + 1, "surf2Dread (%d,%d): got %d want %d", x, y,
                          h_si[y * SW + x], want + 1);
            }
        CHECK(cudaDestroySurfaceObject(s));
        CHECK(cudaFreeArray(sa));
        CHECK(cudaFree(d_si));
    }

    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(d_nuv));
    CHECK(cudaFree(d_uv));
    CHECK(cudaFree(d_out4));
    CHECK(cudaFree(d_outf));
    return pw_finish(&rep);
}
