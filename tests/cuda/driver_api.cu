/*
 * driver_api: a program that uses the driver API directly, on PTX text.
 *
 * Two modules loaded from PTX strings (cuModuleLoadData and
 * cuModuleLoadDataEx), so a process holds several modules; a __global__
 * variable found with cuModuleGetGlobal and rewritten; launches through
 * cuLaunchKernel with kernelParams, with `extra`
 * (CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE: the parameters packed by hand at
 * their PTX offsets 0, 8, 16, 20) and through cuLaunchKernelEx; the primary
 * context; cuMemAlloc / cuMemcpyHtoD / DtoH / cuMemsetD32; cuFuncGetAttribute;
 * and the error path of cuModuleGetFunction for a missing name
 * (CUDA_ERROR_NOT_FOUND, named by cuGetErrorName).
 *
 * Links with -lcuda (at build time the toolkit's stub; at run time the
 * driver, or ptxwave's libcuda.so.1).  The PTX text between the PTX-BEGIN and
 * PTX-END markers is also checked by ptxas in the test suite
 * (ptxas_check.sh extracts it).
 */
#include "check.h"

#include <cuda.h>

#define CHECK_CU(call)                                                                     \
    do {                                                                                   \
        CUresult pw_r_ = (call);                                                           \
        if (pw_r_ != CUDA_SUCCESS) {                                                       \
            const char *pw_name_ = "?";                                                    \
            cuGetErrorName(pw_r_, &pw_name_);                                              \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call, pw_name_, \
                    (int)pw_r_);                                                           \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

/* PTX-BEGIN module_a */
static const char ptx_a[] = R"PTX(
.version 7.0
.target sm_70
.address_size 64

.visible .entry scale(
    .param .u64 scale_param_out,
    .param .u64 scale_param_in,
    .param .u32 scale_param_n,
    .param .f32 scale_param_k
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<8>;

    ld.param.u64 %rd1, [scale_param_out];
    ld.param.u64 %rd2, [scale_param_in];
    ld.param.u32 %r1, [scale_param_n];
    ld.param.f32 %f1, [scale_param_k];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mul.wide.s32 %rd5, %r5, 4;
    add.s64 %rd6, %rd4, %rd5;
    ld.global.f32 %f2, [%rd6];
    mul.rn.f32 %f3, %f2, %f1;
    add.s64 %rd7, %rd3, %rd5;
    st.global.f32 [%rd7], %f3;
DONE:
    ret;
}
)PTX";
/* PTX-END */

/* PTX-BEGIN module_b */
static const char ptx_b[] = R"PTX(
.version 7.0
.target sm_70
.address_size 64

.visible .global .align 4 .u32 g_bias = 100;

.visible .entry add_bias(
    .param .u64 add_bias_param_p,
    .param .u32 add_bias_param_n
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<9>;
    .reg .b64 %rd<5>;

    ld.param.u64 %rd1, [add_bias_param_p];
    ld.param.u32 %r1, [add_bias_param_n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.s32 %rd3, %r5, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r6, [%rd4];
    ld.global.u32 %r7, [g_bias];
    add.s32 %r8, %r6, %r7;
    add.s32 %r8, %r8, %r5;
    st.global.u32 [%rd4], %r8;
DONE:
    ret;
}
)PTX";
/* PTX-END */

int main(void)
{
    pw_report rep = pw_report_start("driver_api");
    CHECK_CU(cuInit(0));
    int ndev = 0;
    CHECK_CU(cuDeviceGetCount(&ndev));
    pw_expect(&rep, ndev >= 1, "cuDeviceGetCount %d", ndev);
    CUdevice dev;
    CHECK_CU(cuDeviceGet(&dev, 0));
    int warp = 0;
    CHECK_CU(cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
    pw_expect(&rep, warp == 32, "warp size %d", warp);
    CUcontext ctx;
    CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK_CU(cuCtxSetCurrent(ctx));

    CUmodule mod_a, mod_b;
    CHECK_CU(cuModuleLoadData(&mod_a, ptx_a));
    CHECK_CU(cuModuleLoadDataEx(&mod_b, ptx_b, 0, NULL, NULL));
    CUfunction f_scale, f_bias, f_missing;
    CHECK_CU(cuModuleGetFunction(&f_scale, mod_a, "scale"));
    CHECK_CU(cuModuleGetFunction(&f_bias, mod_b, "add_bias"));
    CUresult r = cuModuleGetFunction(&f_missing, mod_a, "add_bias"); /* lives in the other module */
    const char *rname = "";
    cuGetErrorName(r, &rname);
    pw_expect(&rep, r == CUDA_ERROR_NOT_FOUND && strcmp(rname, "CUDA_ERROR_NOT_FOUND") == 0,
              "cuModuleGetFunction of a missing name: %d (%s)", (int)r, rname);
    int maxt = 0;
    CHECK_CU(cuFuncGetAttribute(&maxt, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f_scale));
    pw_expect(&rep, maxt >= 96, "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK %d", maxt);

    const unsigned n = 1000, bs = 96, grid = PW_DIV_UP(n, bs);
    float in[1000], out[1000];
    pw_rng rng = pw_rng_seed(27);
    for (unsigned i = 0; i < n; i++)
        in[i] = pw_rng_float(&rng, -100.0f, 100.0f);
    CUdeviceptr d_in, d_out, d_u;
    CHECK_CU(cuMemAlloc(&d_in, n * sizeof(float)));
    CHECK_CU(cuMemAlloc(&d_out, n * sizeof(float)));
    CHECK_CU(cuMemAlloc(&d_u, n * sizeof(unsigned)));
    CHECK_CU(cuMemcpyHtoD(d_in, in, n * sizeof(float)));

    /* kernelParams */
    float k1 = 0.75f;
    void *args[] = {&d_out, &d_in, (void *)&n, &k1};
    CHECK_CU(cuLaunchKernel(f_scale, grid, 1, 1, bs, 1, 1, 0, NULL, args, NULL));
    CHECK_CU(cuCtxSynchronize());
    CHECK_CU(cuMemcpyDtoH(out, d_out, n * sizeof(float)));
    for (unsigned i = 0; i < n; i++) {
        float want = h_mul(in[i], k1);
        pw_expect(&rep, f2u(out[i]) == f2u(want), "kernelParams out[%u]=%a want %a", i, (double)out[i], (double)want);
    }

    /* extra: the parameter buffer laid out as the PTX declares it */
    float k2 = -2.5f;
    unsigned char buf[24];
    memcpy(buf + 0, &d_out, 8);
    memcpy(buf + 8, &d_in, 8);
    memcpy(buf + 16, &n, 4);
    memcpy(buf + 20, &k2, 4);
    size_t buf_size = sizeof(buf);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &buf_size, CU_LAUNCH_PARAM_END};
    CHECK_CU(cuLaunchKernel(f_scale, grid, 1, 1, bs, 1, 1, 0, NULL, NULL, extra));
    CHECK_CU(cuCtxSynchronize());
    CHECK_CU(cuMemcpyDtoH(out, d_out, n * sizeof(float)));
    for (unsigned i = 0; i < n; i++) {
        float want = h_mul(in[i], k2);
        pw_expect(&rep, f2u(out[i]) == f2u(want), "extra out[%u]=%a want %a", i, (double)out[i], (double)want);
    }

    /* a global of module B, read, rewritten, used by cuLaunchKernelEx */
    CUdeviceptr g_bias;
    size_t g_size = 0;
    CHECK_CU(cuModuleGetGlobal(&g_bias, &g_size, mod_b, "g_bias"));
    unsigned bias = 0;
    CHECK_CU(cuMemcpyDtoH(&bias, g_bias, sizeof(bias)));
    pw_expect(&rep, g_size == 4 && bias == 100, "g_bias: size %zu value %u", g_size, bias);
    bias = 7;
    CHECK_CU(cuMemcpyHtoD(g_bias, &bias, sizeof(bias)));
    CHECK_CU(cuMemsetD32(d_u, 0x01010101u, n));
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.gridDimX = grid;
    cfg.gridDimY = 1;
    cfg.gridDimZ = 1;
    cfg.blockDimX = bs;
    cfg.blockDimY = 1;
    cfg.blockDimZ = 1;
    cfg.sharedMemBytes = 0;
    cfg.hStream = NULL;
    cfg.attrs = NULL;
    cfg.numAttrs = 0;
    void *bargs[] = {&d_u, (void *)&n};
    CHECK_CU(cuLaunchKernelEx(&cfg, f_bias, bargs, NULL));
    CHECK_CU(cuCtxSynchronize());
    unsigned u[1000];
    CHECK_CU(cuMemcpyDtoH(u, d_u, n * sizeof(unsigned)));
    for (unsigned i = 0; i < n; i++)
        pw_expect(&rep, u[i] == 0x01010101u + 7u + i, "cuLaunchKernelEx u[%u]=%08x want %08x", i, u[i],
                  0x01010101u + 7u + i);

    CHECK_CU(cuMemFree(d_in));
    CHECK_CU(cuMemFree(d_out));
    CHECK_CU(cuMemFree(d_u));
    CHECK_CU(cuModuleUnload(mod_a));
    CHECK_CU(cuModuleUnload(mod_b));
    CHECK_CU(cuDevicePrimaryCtxRelease(dev));
    return pw_finish(&rep);
}
