/*
 * graphs.cu: CUDA graphs, captured and built by hand (runtime-only).
 *
 * 1. Stream capture with a fork onto a second stream and a join through
 *    events (CUDA Programming Guide, "Cross-stream Dependencies and
 *    Events"):   copy in -> { scale on s1 | add on s2 } -> combine -> copy out.
 *    The graph has 5 nodes and 5 edges; it is instantiated and launched
 *    three times with new host inputs (the copy node reads the host buffer
 *    when it runs), then changed with cudaGraphExecKernelNodeSetParams and
 *    with cudaGraphExecUpdate from a second capture of the same shape; a
 *    capture of another shape is refused with TopologyChanged; the
 *    executable graph launched inside another capture becomes a child
 *    graph node there.
 * 2. Capture status and illegal calls: cudaStreamIsCapturing and
 *    cudaStreamGetCaptureInfo on both streams; cudaMalloc and a stream
 *    synchronise during a global capture answer
 *    cudaErrorStreamCaptureUnsupported and invalidate it (EndCapture:
 *    cudaErrorStreamCaptureInvalidated, no graph); in relaxed mode
 *    cudaMalloc is allowed; a fork that is never joined is
 *    cudaErrorStreamCaptureUnjoined; the legacy stream cannot capture.
 * 3. cudaMallocAsync and cudaFreeAsync in a capture become memory nodes
 *    around the kernels that use the memory, launched twice.
 * 4. An explicit graph with every node type: memory allocation, memset,
 *    kernel, child graph (a kernel), 1D copy to the host, host function,
 *    event record, event wait, empty, memory free; node and edge queries,
 *    cudaGraphDebugDotPrint; graph memory counted while the graphs live; a
 *    user object moved to the graph, destroyed only after both the graph
 *    and its executable graph are.
 * 5. The generic cudaGraphAddNode (memset and kernel nodes) and
 *    cudaGraphExecNodeSetParams.
 * Every expected value is computed on the host from the kernels' formulas.
 */
#include <unistd.h>

#include "check.h"

#define N 777

__global__ void scale(const unsigned *a, unsigned *b, unsigned k, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        b[i] = a[i] * k;
}

__global__ void add(const unsigned *a, unsigned *c, unsigned k, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + k;
}

__global__ void combine(const unsigned *b, const unsigned *c, unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = b[i] ^ (c[i] << 3);
}

static unsigned ref(unsigned x, unsigned ks, unsigned ka) { return (x * ks) ^ ((x + ka) << 3); }

static unsigned *d_a, *d_b, *d_c, *d_out;
static unsigned *h_in, *h_out;

/* The fork/join capture: scale by ks on s1, add ka on s2. */
static cudaGraph_t capture(cudaStream_t s1, cudaStream_t s2, cudaEvent_t fork, cudaEvent_t join,
                           unsigned ks, unsigned ka, pw_report *rep)
{
    cudaGraph_t g = NULL;
    unsigned n = N;
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    CHECK(cudaMemcpyAsync(d_a, h_in, N * sizeof(unsigned), cudaMemcpyHostToDevice, s1));
    CHECK(cudaEventRecord(fork, s1));
    CHECK(cudaStreamWaitEvent(s2, fork, 0));
    cudaStreamCaptureStatus st1, st2;
    unsigned long long id1 = 0, id2 = 0;
    CHECK(cudaStreamGetCaptureInfo(s1, &st1, &id1));
    CHECK(cudaStreamGetCaptureInfo(s2, &st2, &id2));
    pw_expect(rep, st1 == cudaStreamCaptureStatusActive && st2 == cudaStreamCaptureStatusActive,
              "capture status %d %d, want active", (int)st1, (int)st2);
    pw_expect(rep, id1 == id2 && id1 != 0, "capture ids %llu %llu: one capture", id1, id2);
    scale<<<PW_DIV_UP(N, 96), 96, 0, s1>>>(d_a, d_b, ks, n);
    CHECK(cudaGetLastError());
    add<<<PW_DIV_UP(N, 33), 33, 0, s2>>>(d_a, d_c, ka, n);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(join, s2));
    CHECK(cudaStreamWaitEvent(s1, join, 0));
    combine<<<PW_DIV_UP(N, 128), 128, 0, s1>>>(d_b, d_c, d_out, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(h_out, d_out, N * sizeof(unsigned), cudaMemcpyDeviceToHost, s1));
    CHECK(cudaStreamEndCapture(s1, &g));
    CHECK(cudaStreamIsCapturing(s2, &st2));
    pw_expect(rep, st2 == cudaStreamCaptureStatusNone, "s2 still capturing after the end");
    return g;
}

static void check_out(pw_report *rep, const char *what, unsigned ks, unsigned ka)
{
    long bad = 0;
    for (int i = 0; i < N; i++)
        if (h_out[i] != ref(h_in[i], ks, ka) && bad++ < 3)
            pw_fail(rep, "%s: out[%d] = %u, want %u", what, i, h_out[i], ref(h_in[i], ks, ka));
    if (bad > 3)
        pw_fail(rep, "%s: %ld mismatches in all", what, bad);
}

static void fill(pw_rng *rng)
{
    for (int i = 0; i < N; i++)
        h_in[i] = pw_rng_u32(rng);
}

static void test_capture(pw_report *rep)
{
    cudaStream_t s1, s2;
    cudaEvent_t fork, join;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    pw_rng rng = pw_rng_seed(1919);

    cudaGraph_t g = capture(s1, s2, fork, join, 3, 5, rep);
    size_t nn = 0, ne = 0;
    CHECK(cudaGraphGetNodes(g, NULL, &nn));
    CHECK(cudaGraphGetEdges(g, NULL, NULL, NULL, &ne));
    pw_expect(rep, nn == 5 && ne == 5, "captured graph: %zu nodes, %zu edges; want 5, 5", nn, ne);

    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    for (int launch = 0; launch < 3; launch++) {
        fill(&rng);
        memset(h_out, 0, N * sizeof(unsigned));
        CHECK(cudaGraphLaunch(x, s1));
        CHECK(cudaStreamSynchronize(s1));
        char what[32];
        snprintf(what, sizeof what, "launch %d", launch);
        check_out(rep, what, 3, 5);
    }

    /* the scale node's factor, changed in the executable graph only */
    cudaGraphNode_t nodes[5];
    nn = 5;
    CHECK(cudaGraphGetNodes(g, nodes, &nn));
    int found = 0;
    for (size_t i = 0; i < nn; i++) {
        cudaGraphNodeType t;
        CHECK(cudaGraphNodeGetType(nodes[i], &t));
        if (t != cudaGraphNodeTypeKernel)
            continue;
        cudaKernelNodeParams p;
        CHECK(cudaGraphKernelNodeGetParams(nodes[i], &p));
        if (p.func != (void *)scale)
            continue;
        found++;
        unsigned k = 11;
        void *args[] = {p.kernelParams[0], p.kernelParams[1], &k, p.kernelParams[3]};
        p.kernelParams = args;
        CHECK(cudaGraphExecKernelNodeSetParams(x, nodes[i], &p));
    }
    pw_expect(rep, found == 1, "%d scale nodes found, want 1", found);
    fill(&rng);
    CHECK(cudaGraphLaunch(x, s1));
    CHECK(cudaStreamSynchronize(s1));
    check_out(rep, "after SetParams", 11, 5);

    /* the same shape captured with other constants: an update */
    cudaGraph_t g2 = capture(s1, s2, fork, join, 7, 9, rep);
    cudaGraphExecUpdateResultInfo info;
    CHECK(cudaGraphExecUpdate(x, g2, &info));
    pw_expect(rep, info.result == cudaGraphExecUpdateSuccess, "update result %d", (int)info.result);
    fill(&rng);
    CHECK(cudaGraphLaunch(x, s1));
    CHECK(cudaStreamSynchronize(s1));
    check_out(rep, "after cudaGraphExecUpdate", 7, 9);

    /* another shape (no fork): refused, and the executable graph unchanged */
    cudaGraph_t g3;
    unsigned n = N;
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    scale<<<PW_DIV_UP(N, 96), 96, 0, s1>>>(d_a, d_b, 2, n);
    CHECK(cudaStreamEndCapture(s1, &g3));
    cudaError_t e = cudaGraphExecUpdate(x, g3, &info);
    pw_expect(rep, e == cudaErrorGraphExecUpdateFailure && info.result == cudaGraphExecUpdateErrorTopologyChanged,
              "update to another shape: %s, result %d", cudaGetErrorName(e), (int)info.result);
    (void)cudaGetLastError();
    fill(&rng);
    CHECK(cudaGraphLaunch(x, s1));
    CHECK(cudaStreamSynchronize(s1));
    check_out(rep, "after a refused update", 7, 9);

    /* the executable graph launched inside another capture: a child graph
     * node, followed by a kernel reading what it wrote */
    unsigned *h_c;
    CHECK(cudaMallocHost(&h_c, N * sizeof(unsigned)));
    cudaGraph_t outer;
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    CHECK(cudaGraphLaunch(x, s1));
    add<<<PW_DIV_UP(N, 64), 64, 0, s1>>>(d_out, d_c, 1, n);
    CHECK(cudaMemcpyAsync(h_c, d_c, N * sizeof(unsigned), cudaMemcpyDeviceToHost, s1));
    CHECK(cudaStreamEndCapture(s1, &outer));
    cudaGraphNode_t on[3];
    size_t non = 3;
    CHECK(cudaGraphGetNodes(outer, on, &non));
    cudaGraphNodeType t0 = cudaGraphNodeTypeEmpty;
    if (non)
        CHECK(cudaGraphNodeGetType(on[0], &t0));
    pw_expect(rep, non == 3 && t0 == cudaGraphNodeTypeGraph, "graph launched in a capture: %zu nodes, first type %d",
              non, (int)t0);
    cudaGraphExec_t ox;
    CHECK(cudaGraphInstantiate(&ox, outer, 0));
    fill(&rng);
    CHECK(cudaGraphLaunch(ox, s1));
    CHECK(cudaStreamSynchronize(s1));
    check_out(rep, "the graph launched in a capture", 7, 9);
    for (int i = 0; i < N; i++)
        if (!pw_expect(rep, h_c[i] == ref(h_in[i], 7, 9) + 1u, "after the child graph: c[%d] = %u", i, h_c[i]))
            break;
    CHECK(cudaGraphExecDestroy(ox));
    CHECK(cudaGraphDestroy(outer));
    CHECK(cudaFreeHost(h_c));

    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaGraphDestroy(g2));
    CHECK(cudaGraphDestroy(g3));
    CHECK(cudaEventDestroy(fork));
    CHECK(cudaEventDestroy(join));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
}

static void expect_err(pw_report *rep, cudaError_t got, cudaError_t want, const char *what)
{
    pw_expect(rep, got == want, "%s: %s, want %s", what, cudaGetErrorName(got), cudaGetErrorName(want));
    (void)cudaGetLastError();
}

static void test_illegal(pw_report *rep)
{
    cudaStream_t s1, s2;
    cudaEvent_t ev;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    unsigned n = N;
    cudaGraph_t g;
    void *p;

    /* an allocation during a global capture */
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    scale<<<1, 32, 0, s1>>>(d_a, d_b, 2, n);
    expect_err(rep, cudaMalloc(&p, 64), cudaErrorStreamCaptureUnsupported, "cudaMalloc during global capture");
    cudaStreamCaptureStatus st;
    CHECK(cudaStreamIsCapturing(s1, &st));
    pw_expect(rep, st == cudaStreamCaptureStatusInvalidated, "status after cudaMalloc: %d, want invalidated", (int)st);
    g = (cudaGraph_t)1;
    expect_err(rep, cudaStreamEndCapture(s1, &g), cudaErrorStreamCaptureInvalidated, "EndCapture of an invalidated capture");
    pw_expect(rep, g == NULL, "an invalidated capture gave a graph");

    /* synchronising the capturing stream */
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    expect_err(rep, cudaStreamSynchronize(s1), cudaErrorStreamCaptureUnsupported, "cudaStreamSynchronize during capture");
    expect_err(rep, cudaStreamEndCapture(s1, &g), cudaErrorStreamCaptureInvalidated, "EndCapture after a synchronise");

    /* relaxed mode: the allocation is allowed and the capture goes on */
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeRelaxed));
    scale<<<1, 32, 0, s1>>>(d_a, d_b, 2, n);
    CHECK(cudaMalloc(&p, 64));
    CHECK(cudaFree(p));
    CHECK(cudaStreamEndCapture(s1, &g));
    size_t nn = 0;
    CHECK(cudaGraphGetNodes(g, NULL, &nn));
    pw_expect(rep, nn == 1, "relaxed capture: %zu nodes, want 1", nn);
    CHECK(cudaGraphDestroy(g));

    /* a fork never joined */
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    CHECK(cudaEventRecord(ev, s1));
    CHECK(cudaStreamWaitEvent(s2, ev, 0));
    add<<<1, 32, 0, s2>>>(d_a, d_c, 1, n);
    expect_err(rep, cudaStreamEndCapture(s1, &g), cudaErrorStreamCaptureUnjoined, "EndCapture with an unjoined fork");
    CHECK(cudaStreamIsCapturing(s2, &st));
    pw_expect(rep, st == cudaStreamCaptureStatusNone, "the forked stream still captures");

    /* ending on the wrong stream, and with no capture */
    expect_err(rep, cudaStreamEndCapture(s1, &g), cudaErrorIllegalState, "EndCapture with no capture");
    expect_err(rep, cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported,
               "capturing the legacy stream");

    CHECK(cudaEventDestroy(ev));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
}

/* cudaMallocAsync / cudaFreeAsync in a capture: memory nodes around the
 * kernels that use the memory; out = (in + 4) * 6 */
static void test_capture_memory(pw_report *rep)
{
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned n = N;
    unsigned *tmp = NULL;
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaMemcpyAsync(d_a, h_in, N * sizeof(unsigned), cudaMemcpyHostToDevice, s));
    CHECK(cudaMallocAsync((void **)&tmp, N * sizeof(unsigned), s));
    add<<<PW_DIV_UP(N, 64), 64, 0, s>>>(d_a, tmp, 4, n);
    scale<<<PW_DIV_UP(N, 64), 64, 0, s>>>(tmp, d_out, 6, n);
    CHECK(cudaFreeAsync(tmp, s));
    CHECK(cudaMemcpyAsync(h_out, d_out, N * sizeof(unsigned), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamEndCapture(s, &g));
    cudaGraphNode_t nodes[8];
    size_t nn = 8;
    CHECK(cudaGraphGetNodes(g, nodes, &nn));
    int allocs = 0, frees = 0;
    for (size_t i = 0; i < nn; i++) {
        cudaGraphNodeType t;
        CHECK(cudaGraphNodeGetType(nodes[i], &t));
        allocs += t == cudaGraphNodeTypeMemAlloc;
        frees += t == cudaGraphNodeTypeMemFree;
    }
    pw_expect(rep, nn == 6 && allocs == 1 && frees == 1, "memory capture: %zu nodes, %d allocs, %d frees; want 6 1 1",
              nn, allocs, frees);
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    pw_rng rng = pw_rng_seed(404);
    for (int launch = 0; launch < 2; launch++) {
        fill(&rng);
        CHECK(cudaGraphLaunch(x, s));
        CHECK(cudaStreamSynchronize(s));
        for (int i = 0; i < N; i++)
            if (!pw_expect(rep, h_out[i] == (h_in[i] + 4u) * 6u, "memory capture launch %d: out[%d] = %u", launch, i,
                           h_out[i]))
                break;
    }
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaStreamDestroy(s));
}

/* The generic API: cudaGraphAddNode for a memset and a kernel node, then
 * cudaGraphExecNodeSetParams on the memset; out = value + 1 */
static void test_generic(pw_report *rep)
{
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    unsigned n = N, one = 1;
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    /* the union's dim3 members delete its default constructor: zeroed storage */
    alignas(cudaGraphNodeParams) unsigned char mbuf[sizeof(cudaGraphNodeParams)] = {0};
    alignas(cudaGraphNodeParams) unsigned char kbuf[sizeof(cudaGraphNodeParams)] = {0};
    cudaGraphNodeParams &mp = *reinterpret_cast<cudaGraphNodeParams *>(mbuf);
    cudaGraphNodeParams &kp = *reinterpret_cast<cudaGraphNodeParams *>(kbuf);
    mp.type = cudaGraphNodeTypeMemset;
    mp.memset.dst = d_c;
    mp.memset.value = 9;
    mp.memset.elementSize = 4;
    mp.memset.width = N;
    mp.memset.height = 1;
    cudaGraphNode_t set, kern, copy;
    CHECK(cudaGraphAddNode(&set, g, NULL, NULL, 0, &mp));
    kp.type = cudaGraphNodeTypeKernel;
    void *args[] = {&d_c, &d_out, &one, &n};
    kp.kernel.func = (void *)add;
    kp.kernel.gridDim = dim3(PW_DIV_UP(N, 128));
    kp.kernel.blockDim = dim3(128);
    kp.kernel.kernelParams = args;
    CHECK(cudaGraphAddNode(&kern, g, &set, NULL, 1, &kp));
    CHECK(cudaGraphAddMemcpyNode1D(&copy, g, &kern, 1, h_out, d_out, N * sizeof(unsigned), cudaMemcpyDeviceToHost));
    /* a kernel node attribute reads back what was set */
    cudaKernelNodeAttrValue av, back;
    memset(&av, 0, sizeof av);
    memset(&back, 0, sizeof back);
    av.priority = 3;
    CHECK(cudaGraphKernelNodeSetAttribute(kern, cudaLaunchAttributePriority, &av));
    CHECK(cudaGraphKernelNodeGetAttribute(kern, cudaLaunchAttributePriority, &back));
    pw_expect(rep, back.priority == 3, "kernel node priority attribute %d, want 3", back.priority);
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    for (unsigned v = 9; v <= 20; v += 11) {
        if (v != 9) {
            mp.memset.value = v;
            CHECK(cudaGraphExecNodeSetParams(x, set, &mp));
        }
        CHECK(cudaGraphLaunch(x, s));
        CHECK(cudaStreamSynchronize(s));
        for (int i = 0; i < N; i++)
            if (!pw_expect(rep, h_out[i] == v + 1, "generic nodes, memset %u: out[%d] = %u", v, i, h_out[i]))
                break;
    }
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaStreamDestroy(s));
}

static int host_calls;
static void host_fn(void *user) { host_calls += *(int *)user; }
static int destroyed;
static void uobj_fn(void *user) { destroyed += *(int *)user; }

static void test_explicit(pw_report *rep)
{
    cudaStream_t s;
    cudaEvent_t rec, wait;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaEventCreate(&rec));
    CHECK(cudaEventCreate(&wait));
    CHECK(cudaEventRecord(wait, s));
    unsigned n = N, k1 = 40, k2 = 2;

    cudaGraph_t g, child;
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphCreate(&child, 0));

    cudaMemAllocNodeParams ap;
    memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    ap.bytesize = N * sizeof(unsigned);
    cudaGraphNode_t alloc, set, kern, sub, copy, host, record, waitn, empty, freen;
    CHECK(cudaGraphAddMemAllocNode(&alloc, g, NULL, 0, &ap));
    unsigned *tmp = (unsigned *)ap.dptr;
    pw_expect(rep, tmp != NULL, "allocation node gave no address");

    cudaMemsetParams mp;
    memset(&mp, 0, sizeof mp);
    mp.dst = tmp;
    mp.value = 0x01020304u;
    mp.elementSize = 4;
    mp.width = N;
    mp.height = 1;
    CHECK(cudaGraphAddMemsetNode(&set, g, &alloc, 1, &mp));

    cudaKernelNodeParams kp = {};
    void *kargs[] = {&tmp, &d_b, &k1, &n};
    kp.func = (void *)add;
    kp.gridDim = dim3(PW_DIV_UP(N, 64));
    kp.blockDim = dim3(64);
    kp.kernelParams = kargs;
    CHECK(cudaGraphAddKernelNode(&kern, g, &set, 1, &kp));

    /* the child graph: d_c = d_b * k2 */
    cudaGraphNode_t ck;
    void *cargs[] = {&d_b, &d_c, &k2, &n};
    kp.func = (void *)scale;
    kp.kernelParams = cargs;
    CHECK(cudaGraphAddKernelNode(&ck, child, NULL, 0, &kp));
    CHECK(cudaGraphAddChildGraphNode(&sub, g, &kern, 1, child));
    k2 = 1000; /* the parameters were copied when the node was added */

    CHECK(cudaGraphAddMemcpyNode1D(&copy, g, &sub, 1, h_out, d_c, N * sizeof(unsigned), cudaMemcpyDeviceToHost));
    int inc = 1;
    cudaHostNodeParams hp = {host_fn, &inc};
    CHECK(cudaGraphAddHostNode(&host, g, &copy, 1, &hp));
    CHECK(cudaGraphAddEventRecordNode(&record, g, &host, 1, rec));
    CHECK(cudaGraphAddEventWaitNode(&waitn, g, NULL, 0, wait));
    cudaGraphNode_t both[2] = {record, waitn};
    CHECK(cudaGraphAddEmptyNode(&empty, g, both, 2));
    CHECK(cudaGraphAddMemFreeNode(&freen, g, &empty, 1, tmp));

    size_t nn = 0, ne = 0, nr = 0, nd = 0;
    CHECK(cudaGraphGetNodes(g, NULL, &nn));
    CHECK(cudaGraphGetEdges(g, NULL, NULL, NULL, &ne));
    CHECK(cudaGraphGetRootNodes(g, NULL, &nr));
    CHECK(cudaGraphNodeGetDependencies(empty, NULL, NULL, &nd));
    pw_expect(rep, nn == 10 && ne == 9 && nr == 2 && nd == 2,
              "explicit graph: %zu nodes %zu edges %zu roots, empty has %zu deps; want 10 9 2 2", nn, ne, nr, nd);
    cudaGraphNode_t dependents[4];
    size_t ndep = 4;
    CHECK(cudaGraphNodeGetDependentNodes(kern, dependents, NULL, &ndep));
    pw_expect(rep, ndep == 1 && dependents[0] == sub, "the kernel node's dependents: %zu", ndep);
    cudaGraphNodeType t;
    CHECK(cudaGraphNodeGetType(sub, &t));
    pw_expect(rep, t == cudaGraphNodeTypeGraph, "child node type %d", (int)t);

    char dot[] = "/tmp/pw_graph_XXXXXX";
    int fd = mkstemp(dot);
    if (fd >= 0) {
        close(fd);
        CHECK(cudaGraphDebugDotPrint(g, dot, cudaGraphDebugDotFlagsVerbose));
        FILE *f = fopen(dot, "r");
        char buf[8192] = {0};
        size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        unlink(dot);
        pw_expect(rep, len > 0 && strstr(buf, "digraph") && strstr(buf, "_Z3addPKjPjjj") &&
                           strstr(buf, "mem_free") && strstr(buf, "->"),
                  "cudaGraphDebugDotPrint wrote %zu bytes without the graph", len);
    }

    /* a user object whose one reference moves to the graph */
    cudaUserObject_t uo;
    int one = 1;
    CHECK(cudaUserObjectCreate(&uo, &one, uobj_fn, 1, cudaUserObjectNoDestructorSync));
    CHECK(cudaGraphRetainUserObject(g, uo, 1, cudaGraphUserObjectMove));

    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    unsigned long long gmem = 0;
    CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &gmem));
    pw_expect(rep, gmem >= N * sizeof(unsigned), "graph memory %llu with a %zu-byte allocation node", gmem,
              N * sizeof(unsigned));
    pw_rng rng = pw_rng_seed(7);
    for (int launch = 0; launch < 2; launch++) {
        for (int i = 0; i < N; i++)
            h_in[i] = pw_rng_u32(&rng);
        CHECK(cudaMemcpy(d_b, h_in, N * sizeof(unsigned), cudaMemcpyHostToDevice)); /* overwritten by the graph */
        memset(h_out, 0, N * sizeof(unsigned));
        CHECK(cudaGraphLaunch(x, s));
        CHECK(cudaStreamSynchronize(s));
        long bad = 0;
        for (int i = 0; i < N; i++) {
            unsigned want = (0x01020304u + 40u) * 2u;
            if (h_out[i] != want && bad++ < 3)
                pw_fail(rep, "explicit graph launch %d: out[%d] = %#x, want %#x", launch, i, h_out[i], want);
        }
        pw_expect(rep, host_calls == launch + 1, "host node ran %d times after %d launches", host_calls, launch + 1);
        pw_expect(rep, cudaEventQuery(rec) == cudaSuccess, "the event record node's event is not complete");
    }
    CHECK(cudaGraphDestroy(g));
    pw_expect(rep, destroyed == 0, "the user object was destroyed while the executable graph holds it");
    CHECK(cudaGraphExecDestroy(x));
    pw_expect(rep, destroyed == 1, "the user object's destructor ran %d times after the last release", destroyed);
    CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &gmem));
    pw_expect(rep, gmem == 0, "graph memory %llu after every graph is destroyed", gmem);
    CHECK(cudaGraphDestroy(child));
    CHECK(cudaEventDestroy(rec));
    CHECK(cudaEventDestroy(wait));
    CHECK(cudaStreamDestroy(s));
}

int main(void)
{
    pw_report rep = pw_report_start("graphs");
    CHECK(cudaMalloc(&d_a, N * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_b, N * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_c, N * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_out, N * sizeof(unsigned)));
    CHECK(cudaMallocHost(&h_in, N * sizeof(unsigned)));
    CHECK(cudaMallocHost(&h_out, N * sizeof(unsigned)));
    test_capture(&rep);
    test_illegal(&rep);
    test_capture_memory(&rep);
    test_explicit(&rep);
    test_generic(&rep);
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_c));
    CHECK(cudaFree(d_out));
    CHECK(cudaFreeHost(h_in));
    CHECK(cudaFreeHost(h_out));
    return pw_finish(&rep);
}
