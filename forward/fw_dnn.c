/* forward/fw_dnn.c: cudnnBackendExecute in the forwarding layer.
 *
 * cuDNN's graph API runs an execution plan (an engine configuration of an
 * operation graph) on a variant pack (the device pointers by tensor id).
 * The call goes to cuDNN first; when it met a SASS-only kernel (all nine
 * engines cuDNN 9 offers for a small f32 matmul at capability 12.0 are SASS
 * only), the plan's operation graph is read back from cuDNN's own JSON
 * serialisation of the plan (describe, fw_json.c), the pointers from the
 * variant pack, and a graph of one matmul operation is run by the layer's
 * GEMM kernel on the handle's stream (cudnnGetStream):
 *
 *   C[q] = A[q] B[q]     A: [.., M, K], B: [.., K, N], C: [.., M, N]
 *
 * (cuDNN documentation, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR) with the
 * tensors' own strides, one batch dimension or none, a batch of 1 in A or
 * B broadcast, f16/bf16/f32/f64 data and the matmul descriptor's compute
 * type.  C is only written, so the call's earlier work cannot spoil what
 * the layer reads.  Other graphs (fused pointwise, convolutions ...) keep
 * cuDNN's error, logged.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn.h>

#include "forward/fw.h"
#include "forward/fw_json.h"

#define DNN_SO "libcudnn.so.9"

typedef __typeof__(cudnnBackendGetAttribute) dnn_get_fn;

/* cuDNN's names of the data types the kernels read (cudnnDataType_t). */
static int type_of(const char *v, const char *end) {
  static const struct { const char *name; int type; } types[] = {
      {"CUDNN_DATA_FLOAT", fw_r_32f}, {"CUDNN_DATA_DOUBLE", fw_r_64f},
      {"CUDNN_DATA_HALF", fw_r_16f}, {"CUDNN_DATA_BFLOAT16", fw_r_16bf}};
  for (unsigned i = 0; i < sizeof types / sizeof types[0]; i++)
    if (fw_json_is(v, end, types[i].name)) return types[i].type;
  return -1;
}

/* A matmul operand as a matrix view: element type, id, rows and columns
 * with their strides, a batch (rank 3) with its stride (0 for a batch of
 * 1, which broadcasts). */
typedef struct dnn_tensor {
  int type;
  long long uid, batch, rows, cols, qs, rs, cs;
} dnn_tensor;

/* The tensor named by the node's `key` (matA ...), from the graph's list. */
static const char *tensor(const char *node, const char *tensors, const char *end, const char *key,
                          dnn_tensor *t) {
  long long name, id;
  if (!fw_json_int(fw_json_member(node, end, key), end, &name)) return "a matmul operand unnamed";
  const char *v;
  for (int i = 0; (v = fw_json_index(tensors, end, i)); i++) {
    if (!fw_json_int(fw_json_member(v, end, "name"), end, &id) || id != name) continue;
    if (fw_json_true(fw_json_member(v, end, "isVirtual"), end)) return "a virtual tensor";
    const char *dim = fw_json_member(v, end, "dim"), *stride = fw_json_member(v, end, "stride");
    int n = fw_json_length(dim, end);
    if (n < 2 || n > 3 || fw_json_length(stride, end) != n) return "tensors of rank other than 2, 3";
    long long d[3], s[3];
    for (int j = 0; j < n; j++)
      if (!fw_json_int(fw_json_index(dim, end, j), end, &d[j]) ||
          !fw_json_int(fw_json_index(stride, end, j), end, &s[j]))
        return "a tensor's dimensions do not read";
    t->type = type_of(fw_json_member(v, end, "dataType"), end);
    if (t->type < 0) return "a data type the layer does not cover";
    t->uid = id;
    t->batch = n == 3 ? d[0] : 1;
    t->qs = n == 3 && d[0] > 1 ? s[0] : 0;
    t->rows = d[n - 2], t->cols = d[n - 1];
    t->rs = s[n - 2], t->cs = s[n - 1];
    return NULL;
  }
  return "a matmul operand not among the graph's tensors";
}

/* ---- variant packs ------------------------------------------------------
 * cuDNN does not give a variant pack's ids and pointers back
 * (cudnnBackendGetAttribute answers NOT_SUPPORTED for
 * CUDNN_ATTR_VARIANT_PACK_*), so the layer records them as they are set,
 * through cudnnBackendSetAttribute below, until the descriptor is
 * destroyed.  Only those two attributes are looked at; every call goes on
 * to cuDNN's own. */
enum { VP_MAX = 64, VP_LIVE = 1024 };
typedef struct vpack {
  cudnnBackendDescriptor_t d;
  int nuids, nptrs;             /* -1: more than VP_MAX */
  int64_t uids[VP_MAX];
  void *ptrs[VP_MAX];
} vpack;

static pthread_mutex_t vp_lock = PTHREAD_MUTEX_INITIALIZER;
static vpack *vps;              /* the live packs that had one set, unordered */
static int nvps;

static vpack *vpack_find(cudnnBackendDescriptor_t d, bool add) {
  for (int i = 0; i < nvps; i++)
    if (vps[i].d == d) return &vps[i];
  if (!add) return NULL;
  if (!vps && !(vps = calloc(VP_LIVE, sizeof *vps))) return NULL;
  /* a program that never destroys its packs: the first entry goes */
  if (nvps == VP_LIVE) memmove(vps, vps + 1, (VP_LIVE - 1) * sizeof *vps), nvps--;
  vps[nvps] = (vpack){.d = d};
  return &vps[nvps++];
}

static void vpack_set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a, int64_t n,
                      const void *elems) {
  pthread_mutex_lock(&vp_lock);
  vpack *v = vpack_find(d, true);
  if (v) {
    int count = n <= VP_MAX && n >= 0 && elems ? (int)n : -1;
    if (a == CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS) {
      v->nuids = count;
      if (count > 0) memcpy(v->uids, elems, (size_t)count * sizeof v->uids[0]);
    } else {
      v->nptrs = count;
      if (count > 0) memcpy(v->ptrs, elems, (size_t)count * sizeof v->ptrs[0]);
    }
  }
  pthread_mutex_unlock(&vp_lock);
}

/* The pack's ids and pointers (as many of each), or -1 if not known. */
static int vpack_get(cudnnBackendDescriptor_t d, int64_t *uids, void **ptrs) {
  pthread_mutex_lock(&vp_lock);
  vpack *v = vpack_find(d, false);
  int n = v && v->nuids >= 0 && v->nuids == v->nptrs ? v->nuids : -1;
  if (n > 0) {
    memcpy(uids, v->uids, (size_t)n * sizeof *uids);
    memcpy(ptrs, v->ptrs, (size_t)n * sizeof *ptrs);
  }
  pthread_mutex_unlock(&vp_lock);
  return n;
}

FW_EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d,
                                                 cudnnBackendAttributeName_t a,
                                                 cudnnBackendAttributeType_t t, int64_t n,
                                                 const void *elems) {
  FW_REAL(cudnnBackendSetAttribute, DNN_SO);
  if (!real) return CUDNN_STATUS_NOT_INITIALIZED;
  cudnnStatus_t r = real(d, a, t, n, elems);
  if (r == CUDNN_STATUS_SUCCESS &&
      ((a == CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS && t == CUDNN_TYPE_INT64) ||
       (a == CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS && t == CUDNN_TYPE_VOID_PTR)))
    vpack_set(d, a, n, elems);
  return r;
}

FW_EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d) {
  FW_REAL(cudnnBackendDestroyDescriptor, DNN_SO);
  if (!real) return CUDNN_STATUS_NOT_INITIALIZED;
  pthread_mutex_lock(&vp_lock);
  vpack *v = vpack_find(d, false);
  if (v) *v = vps[--nvps];
  pthread_mutex_unlock(&vp_lock);
  return real(d);
}

/* The plan's operation graph as cuDNN serialises it
 * (CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION: "operationGraph" with
 * "tensors" and "nodes"; the descriptors themselves do not give their
 * operations back: CUDNN_ATTR_OPERATIONGRAPH_OPS answers NOT_SUPPORTED). */
static const char *describe(const char *json, const char *end,
                            cudnnBackendDescriptor_t pack, fw_gemm_args *g, fw_acc *acc) {
  const char *graph = fw_json_member(json, end, "operationGraph");
  const char *tensors = fw_json_member(graph, end, "tensors");
  const char *nodes = fw_json_member(graph, end, "nodes");
  if (!tensors || !nodes) return "the plan's graph does not read back";
  if (fw_json_length(nodes, end) != 1) return "a graph of more than one operation";
  const char *node = fw_json_index(nodes, end, 0);
  if (!fw_json_is(fw_json_member(node, end, "operation"), end,
                  "CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR"))
    return "an operation other than a matmul";
  /* a member beyond these (M/N/K overrides, padding ...) is not covered */
  static const char *const known[] = {"operation", "mathPrec", "matA", "matB", "matC", "name"};
  const char *key;
  int klen;
  for (int i = 0; fw_json_nth_member(node, end, i, &key, &klen); i++) {
    bool ok = false;
    for (unsigned j = 0; j < sizeof known / sizeof known[0]; j++)
      ok |= (size_t)klen == strlen(known[j]) && !memcmp(key, known[j], (size_t)klen);
    if (!ok) return "a matmul with attributes beyond its operands and precision";
  }
  const char *prec = fw_json_member(node, end, "mathPrec");
  int scale;
  if (fw_json_is(prec, end, "CUDNN_DATA_FLOAT")) *acc = fw_acc_f32, scale = fw_r_32f;
  else if (fw_json_is(prec, end, "CUDNN_DATA_DOUBLE")) *acc = fw_acc_f64, scale = fw_r_64f;
  else if (fw_json_is(prec, end, "CUDNN_DATA_HALF")) *acc = fw_acc_f16, scale = fw_r_16f;
  else return "a compute type the layer does not cover";
  dnn_tensor ta, tb, tc;
  const char *why;
  if ((why = tensor(node, tensors, end, "matA", &ta)) ||
      (why = tensor(node, tensors, end, "matB", &tb)) ||
      (why = tensor(node, tensors, end, "matC", &tc)))
    return why;
  if (ta.rows != tc.rows || tb.cols != tc.cols || ta.cols != tb.rows ||
      (ta.batch != tc.batch && ta.batch != 1) || (tb.batch != tc.batch && tb.batch != 1))
    return "the shapes do not form a matmul";
  if (tc.rows > INT32_MAX || tc.cols > INT32_MAX || ta.cols > INT32_MAX || tc.batch > INT32_MAX)
    return "a size above 2^31 - 1";
  const int types[] = {ta.type, tb.type, tc.type};
  if (!fw_types_ok(*acc, types, 3)) return "the data types are not covered";

  /* the variant pack: a device pointer per tensor id */
  int64_t uids[VP_MAX];
  void *ptrs[VP_MAX];
  int n = vpack_get(pack, uids, ptrs);
  if (n < 0) return "the variant pack's pointers are not known (set before the layer loaded?)";
  void *pa = NULL, *pb = NULL, *pc = NULL;
  for (int i = 0; i < n; i++) {
    if (uids[i] == ta.uid) pa = ptrs[i];
    if (uids[i] == tb.uid) pb = ptrs[i];
    if (uids[i] == tc.uid) pc = ptrs[i];
  }
  if (!pa || !pb || !pc) return "a tensor has no pointer in the variant pack";
  *g = (fw_gemm_args){.a = pa, .b = pb, .d = pc,
                      .a_r = ta.rs, .a_c = ta.cs, .a_q = ta.qs,
                      .b_r = tb.rs, .b_c = tb.cs, .b_q = tb.qs,
                      .d_r = tc.rs, .d_c = tc.cs, .d_q = tc.qs,
                      .alpha = 1, .beta = 0,
                      .m = (int)tc.rows, .n = (int)tc.cols, .k = (int)ta.cols,
                      .batch = (int)tc.batch,
                      .a_type = ta.type, .b_type = tb.type, .c_type = tc.type,
                      .d_type = tc.type, .bias_type = tc.type, .scale_type = scale};
  return NULL;
}

/* The plan's JSON, malloc'd (NUL-terminated), or NULL. */
static char *plan_json(dnn_get_fn *get, cudnnBackendDescriptor_t plan, int64_t *len) {
  for (int64_t cap = 1 << 16; cap <= (1 << 26); cap *= 4) {
    char *buf = malloc((size_t)cap);
    if (!buf) return NULL;
    *len = 0;
    if (get(plan, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, cap - 1, len,
            buf) == CUDNN_STATUS_SUCCESS && *len >= 0 && *len < cap - 1) {
      buf[*len] = 0;
      return buf;
    }
    free(buf);
  }
  return NULL;
}

FW_EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
                                            cudnnBackendDescriptor_t pack) {
  FW_REAL(cudnnBackendExecute, DNN_SO);
  if (!real) return CUDNN_STATUS_NOT_INITIALIZED;
  fw_call c;
  fw_enter(&c, "cudnnBackendExecute");
  cudnnStatus_t r = real(h, plan, pack);
  if (!fw_refused(&c)) return r;
  FW_SYM(get, cudnnBackendGetAttribute, DNN_SO);
  FW_SYM(get_stream, cudnnGetStream, DNN_SO);
  cudaStream_t s = NULL;
  if (!get || !get_stream || get_stream(h, &s) != CUDNN_STATUS_SUCCESS) {
    fw_decline(&c, "cuDNN's attribute getter or the handle's stream is not reachable");
    return r;
  }
  int64_t len = 0;
  char *json = plan_json(get, plan, &len);
  fw_gemm_args g;
  fw_acc acc = fw_acc_f32;
  const char *why = json ? describe(json, json + len, pack, &g, &acc)
                         : "the plan's JSON does not read back";
  free(json);
  if (why) {
    fw_decline(&c, why);
    return r;
  }
  if (!fw_may_take(&c, false)) return r;
  return fw_gemm(&g, acc, (CUstream)s) == CUDA_SUCCESS ? CUDNN_STATUS_SUCCESS : r;
}
