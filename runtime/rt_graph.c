/* runtime/rt_graph.c: CUDA graphs and stream capture.
 *
 * A graph (CUgraph) is a list of nodes in creation order, each with the
 * list of nodes it depends on (its incoming edges); a node holds one
 * stream operation (rt_op: a kernel with its parameters packed once in
 * the kernel's .param layout, a 3D copy, a 2D set, a host function, an
 * event record or wait) or is empty, a child graph, or a memory
 * allocation or free.  Dependents and root nodes are computed from the
 * incoming lists when asked for.
 *
 * Instantiation (cuGraphInstantiate*) flattens child graphs into their
 * parent and sorts the nodes topologically (Kahn's algorithm, taking the
 * lowest flat index first, so the order depends only on the graph's shape):
 * the executable graph is that precomputed launch list.  A launch replays
 * it on the launch stream in order, which keeps every edge (the stream is
 * in order).  What a launch saves over the same calls one by one is their
 * checks and the packing of kernelParams (benchmarks/graph_bench.c).
 *
 * Capture (cuStreamBeginCapture) records instead of runs: while any stream
 * captures (rt_capturing), each stream operation asks rt_capture_op
 * whether its stream captures; if so the operation becomes a node that
 * depends on the stream's current dependency set, which it then replaces.
 * An event recorded in a capturing stream remembers that set; a stream
 * that waits on it joins the capture (a fork) or merges the set into its
 * own (a join), as the CUDA Programming Guide describes ("Cross-stream
 * Dependencies and Events").  cuStreamEndCapture checks that every stream
 * that joined was joined back into the origin (each of its last nodes has
 * a dependent or is in the origin's set), else
 * CUDA_ERROR_STREAM_CAPTURE_UNJOINED.
 *
 * Capture modes (cuThreadExchangeStreamCaptureMode, CUDA Driver API):
 * a thread in GLOBAL mode may not make "potentially unsafe" calls while it
 * has a capture not begun RELAXED or any thread has a GLOBAL capture;
 * THREAD_LOCAL looks only at the calling thread's captures; RELAXED never
 * prohibits.  A prohibited call returns CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
 * and invalidates the calling thread's captures; synchronising or querying
 * a capturing stream does the same to its capture; an operation on the
 * legacy stream while a blocking stream captures is
 * CUDA_ERROR_STREAM_CAPTURE_IMPLICIT and invalidates that capture; ending
 * an invalidated capture returns CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and
 * no graph.
 *
 * Memory nodes: the allocation is made when the node is added (CUDA fixes
 * the address there too, so later nodes can use it); it lives as long as
 * the graph or an executable graph of it refers to it, and is freed then
 * only if the graph frees it (a free node); without one it is the
 * application's to free, as CUDA documents.  Graphs with memory nodes are
 * not cloned or used as child graphs (CUDA: CUDA_ERROR_NOT_SUPPORTED).
 *
 * cuMemAllocAsync and cuMemFreeAsync on a capturing stream become memory
 * allocation and free nodes (rt_capture_mem; a free of memory the capture
 * did not allocate is not supported).
 *
 * Launching an executable graph into a capturing stream records a child
 * graph node made from its launch list as it is then.
 *
 * Not done: conditional, batch memory-op and external-semaphore nodes (these answer
 * CUDA_ERROR_NOT_SUPPORTED), device-side launch, node priorities.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt.h"
#include "util/pw_vec.h"

/* ---- graphs and nodes ----------------------------------------------------- */
#define RT_NODE_ATTRS 32   /* CUlaunchAttributeID values below this (16 in CUDA 13.0) */

typedef struct rt_galloc {      /* a memory node's allocation, shared by graph and execs */
  int refs;
  CUdeviceptr ptr;
  size_t bytes;
  bool freed_by_graph;
} rt_galloc;

struct CUgraphNode_st {
  CUgraphNodeType type;
  struct CUgraph_st *g;
  rt_op op;                     /* kernel, memcpy, memset, host, event record/wait */
  struct CUgraph_st *child;     /* CU_GRAPH_NODE_TYPE_GRAPH: a clone the node owns */
  rt_galloc *alloc;             /* MEM_ALLOC */
  CUDA_MEM_ALLOC_NODE_PARAMS alloc_params;
  void **argv;                  /* kernel: kernelParams pointing into op.k.buf */
  struct CUgraphNode_st **deps; /* incoming edges */
  size_t ndeps, capdeps;
  struct CUgraphNode_st *cloned_from;
  /* kernel node attributes (cuGraphKernelNodeSetAttribute): kept and read
   * back; none changes how the kernel runs here */
  CUkernelNodeAttrValue attrs[RT_NODE_ATTRS];
};

/* A user object (cuUserObjectCreate): a reference count and a destructor
 * run when it reaches zero; graphs and their executable graphs hold
 * references (CUDA Programming Guide, "Graph Memory ... User Objects"). */
struct CUuserObject_st {
  atomic_uint refs;
  void *ptr;
  CUhostFn destroy;
};

typedef struct uobj_ref {
  CUuserObject o;
  unsigned n;
} uobj_ref;

struct CUgraph_st {
  struct CUgraphNode_st **nodes;
  size_t n, cap;
  uobj_ref *uobj;               /* user objects the graph holds references to */
  size_t nuobj;
};

/* One entry of an executable graph's launch list. */
typedef struct exec_op {
  rt_op op;
  CUgraphNode origin;           /* the node of the instantiated graph (or of a child clone) */
  CUgraphNode top;              /* the node of the instantiated graph it came from */
  size_t flat;                  /* index in the flattened graph */
  size_t *deps;                 /* flat indices it depends on, sorted */
  size_t ndeps;
  bool disabled;
  rt_galloc *alloc;
  void **argv;
} exec_op;

struct CUgraphExec_st {
  exec_op *ops;
  size_t n;
  cuuint64_t flags;
  uobj_ref *uobj;               /* the graph's user objects, referenced again */
  size_t nuobj;
};

/* Graph memory (memory nodes' allocations) for cuDeviceGetGraphMemAttribute. */
static atomic_size_t graph_mem, graph_mem_high;

static void uobj_release(CUuserObject o, unsigned n) {
  if (atomic_fetch_sub(&o->refs, n) == n) {
    rt_handle_remove(rt_h_user_object, o);
    /* CUDA runs it on an internal thread; it may not call CUDA, so running
     * it here, at the last release, is equivalent */
    if (o->destroy) o->destroy(o->ptr);
    free(o);
  }
}

static void uobj_release_all(uobj_ref *v, size_t n) {
  for (size_t i = 0; i < n; i++) uobj_release(v[i].o, v[i].n);
  free(v);
}

/* A copy of v holding its own references. */
static uobj_ref *uobj_copy(const uobj_ref *v, size_t n) {
  uobj_ref *c = malloc((n ? n : 1) * sizeof *c);
  if (!c) return NULL;
  for (size_t i = 0; i < n; i++) {
    c[i] = v[i];
    atomic_fetch_add(&v[i].o->refs, v[i].n);
  }
  return c;
}

static bool graph_valid(CUgraph g) { return rt_handle_valid(rt_h_graph, g); }
static bool node_valid(CUgraphNode n) { return rt_handle_valid(rt_h_node, n); }
static bool exec_valid(CUgraphExec e) { return rt_handle_valid(rt_h_exec, e); }

static void galloc_release(rt_galloc *a) {
  if (!a || --a->refs > 0) return;
  if (a->freed_by_graph) cuMemFree(a->ptr);
  atomic_fetch_sub(&graph_mem, a->bytes);
  free(a);
}

/* kernelParams for GetParams: pointers into the packed buffer. */
static void **make_argv(CUfunction f, void *buf) {
  const rt_param_layout *L = rt_func_layout(f);
  void **v = calloc(L->nparams + 1, sizeof *v);
  if (!v) return NULL;
  for (unsigned i = 0; i < L->nparams; i++) v[i] = (char *)buf + L->params[i].offset;
  return v;
}

static void op_fini(rt_op *op, void ***argv) {
  if (op->type == CU_GRAPH_NODE_TYPE_KERNEL) free(op->k.buf);
  op->k.buf = NULL;
  if (argv) {
    free(*argv);
    *argv = NULL;
  }
}

/* A copy of op that owns its buffers. */
static CUresult op_copy(rt_op *dst, const rt_op *src, void ***argv) {
  *dst = *src;
  if (src->type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_SUCCESS;
  dst->k.buf = malloc(src->k.size ? src->k.size : 1);
  if (!dst->k.buf) return CUDA_ERROR_OUT_OF_MEMORY;
  memcpy(dst->k.buf, src->k.buf, src->k.size);
  if (argv && !(*argv = make_argv(src->k.f, dst->k.buf))) {
    free(dst->k.buf);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  return CUDA_SUCCESS;
}

static CUresult graph_new(CUgraph *out) {
  struct CUgraph_st *g = calloc(1, sizeof *g);
  if (!g) return CUDA_ERROR_OUT_OF_MEMORY;
  if (!rt_handle_add(rt_h_graph, g)) {
    free(g);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *out = g;
  return CUDA_SUCCESS;
}

static void graph_free(CUgraph g);

static void node_free(CUgraphNode n) {
  rt_handle_remove(rt_h_node, n);
  op_fini(&n->op, &n->argv);
  if (n->child) graph_free(n->child);
  galloc_release(n->alloc);
  free(n->deps);
  free(n);
}

static void graph_free(CUgraph g) {
  rt_handle_remove(rt_h_graph, g);
  for (size_t i = 0; i < g->n; i++) node_free(g->nodes[i]);
  uobj_release_all(g->uobj, g->nuobj);
  free(g->nodes);
  free(g);
}

static bool has_dep(CUgraphNode n, CUgraphNode d) {
  for (size_t i = 0; i < n->ndeps; i++)
    if (n->deps[i] == d) return true;
  return false;
}

static CUresult add_dep(CUgraphNode n, CUgraphNode d) {
  if (has_dep(n, d)) return CUDA_SUCCESS;
  CUgraphNode *nd = pw_vec_grow(n->deps, &n->capdeps, n->ndeps + 1, sizeof *nd);
  if (!nd) return CUDA_ERROR_OUT_OF_MEMORY;
  n->deps = nd;
  n->deps[n->ndeps++] = d;
  return CUDA_SUCCESS;
}

/* A new node of g depending on deps (all of g, no repeats: CUDA's rules for
 * every cuGraphAdd*Node). */
static CUresult node_new(CUgraph g, const CUgraphNode *deps, size_t ndeps, CUgraphNodeType type,
                         CUgraphNode *out) {
  if (!graph_valid(g)) return CUDA_ERROR_INVALID_VALUE;
  if (ndeps && !deps) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < ndeps; i++) {
    if (!node_valid(deps[i]) || deps[i]->g != g) return CUDA_ERROR_INVALID_VALUE;
    for (size_t j = 0; j < i; j++)
      if (deps[j] == deps[i]) return CUDA_ERROR_INVALID_VALUE;
  }
  struct CUgraphNode_st *n = calloc(1, sizeof *n);
  if (!n) return CUDA_ERROR_OUT_OF_MEMORY;
  n->type = type;
  n->op.type = type;
  n->g = g;
  for (size_t i = 0; i < ndeps; i++)
    if (add_dep(n, deps[i]) != CUDA_SUCCESS) {
      free(n->deps);
      free(n);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
  CUgraphNode *nn = pw_vec_grow(g->nodes, &g->cap, g->n + 1, sizeof *nn);
  if (!nn) {
    free(n->deps);
    free(n);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  g->nodes = nn;
  if (!rt_handle_add(rt_h_node, n)) {
    free(n->deps);
    free(n);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  g->nodes[g->n++] = n;
  *out = n;
  return CUDA_SUCCESS;
}

/* Removes a node made by node_new whose setup failed. */
static void node_drop(CUgraphNode n) {
  n->g->n--;
  node_free(n);
}

static bool graph_has_mem_nodes(CUgraph g) {
  for (size_t i = 0; i < g->n; i++) {
    CUgraphNodeType t = g->nodes[i]->type;
    if (t == CU_GRAPH_NODE_TYPE_MEM_ALLOC || t == CU_GRAPH_NODE_TYPE_MEM_FREE) return true;
    if (t == CU_GRAPH_NODE_TYPE_GRAPH && graph_has_mem_nodes(g->nodes[i]->child)) return true;
  }
  return false;
}

static size_t index_of(CUgraph g, CUgraphNode n) {
  for (size_t i = 0; i < g->n; i++)
    if (g->nodes[i] == n) return i;
  return (size_t)-1;
}

static CUresult graph_clone(CUgraph src, CUgraph *out) {
  if (graph_has_mem_nodes(src)) return CUDA_ERROR_NOT_SUPPORTED;
  CUgraph g;
  CUresult r = graph_new(&g);
  if (r != CUDA_SUCCESS) return r;
  if (src->nuobj) {   /* the clone holds references of its own */
    if (!(g->uobj = uobj_copy(src->uobj, src->nuobj))) r = CUDA_ERROR_OUT_OF_MEMORY;
    else g->nuobj = src->nuobj;
  }
  for (size_t i = 0; i < src->n && r == CUDA_SUCCESS; i++) {
    CUgraphNode s = src->nodes[i], n;
    r = node_new(g, NULL, 0, s->type, &n);
    if (r != CUDA_SUCCESS) break;
    n->cloned_from = s;
    memcpy(n->attrs, s->attrs, sizeof n->attrs);
    r = op_copy(&n->op, &s->op, s->type == CU_GRAPH_NODE_TYPE_KERNEL ? &n->argv : NULL);
    if (r == CUDA_SUCCESS && s->child) r = graph_clone(s->child, &n->child);
    for (size_t j = 0; j < s->ndeps && r == CUDA_SUCCESS; j++)
      r = add_dep(n, g->nodes[index_of(src, s->deps[j])]);
  }
  if (r != CUDA_SUCCESS) {
    graph_free(g);
    return r;
  }
  *out = g;
  return CUDA_SUCCESS;
}

/* ---- node parameters -------------------------------------------------------- */
static CUresult kernel_params_in(const CUDA_KERNEL_NODE_PARAMS *p, rt_op *op) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  CUfunction f = p->func ? p->func : (CUfunction)p->kern;
  if (!rt_func_valid(f)) return CUDA_ERROR_INVALID_HANDLE;
  *op = (rt_op){.type = CU_GRAPH_NODE_TYPE_KERNEL};
  op->k.f = f;
  op->k.grid[0] = p->gridDimX, op->k.grid[1] = p->gridDimY, op->k.grid[2] = p->gridDimZ;
  op->k.block[0] = p->blockDimX, op->k.block[1] = p->blockDimY, op->k.block[2] = p->blockDimZ;
  op->k.shared = p->sharedMemBytes;
  return rt_kernel_node_pack(f, op->k.grid, op->k.block, op->k.shared, p->kernelParams, p->extra,
                             &op->k.buf, &op->k.size);
}

static void kernel_params_out(const rt_op *op, void **argv, CUDA_KERNEL_NODE_PARAMS *p) {
  *p = (CUDA_KERNEL_NODE_PARAMS){
      .func = op->k.f, .gridDimX = op->k.grid[0], .gridDimY = op->k.grid[1],
      .gridDimZ = op->k.grid[2], .blockDimX = op->k.block[0], .blockDimY = op->k.block[1],
      .blockDimZ = op->k.block[2], .sharedMemBytes = op->k.shared, .kernelParams = argv,
      /* a CUkernel is its CUfunction here (rt_module.c); cudart finds the
       * host stub of a node's kernel through kern */
      .kern = (CUkernel)op->k.f, .ctx = rt_current_ctx()};
}

static CUresult memset_check(const CUDA_MEMSET_NODE_PARAMS *p) {
  if (!p || !p->dst) return CUDA_ERROR_INVALID_VALUE;
  if (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) return CUDA_ERROR_INVALID_VALUE;
  if (p->height > 1 && p->pitch < p->width * p->elementSize) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

static CUresult set_node_params(CUgraphNode n, const rt_op *op) {
  rt_op c;
  void **argv = NULL;
  CUresult r = op_copy(&c, op, op->type == CU_GRAPH_NODE_TYPE_KERNEL ? &argv : NULL);
  if (r != CUDA_SUCCESS) return r;
  op_fini(&n->op, &n->argv);
  n->op = c;
  n->argv = argv;
  return CUDA_SUCCESS;
}

/* ---- running an operation on a stream ------------------------------------- */
static CUresult op_run(const rt_op *op, CUstream s) {
  switch (op->type) {
  case CU_GRAPH_NODE_TYPE_KERNEL:
    return rt_launch_packed(op->k.f, op->k.grid, op->k.block, op->k.shared, s, op->k.buf, op->k.size,
                            op->k.coop);
  case CU_GRAPH_NODE_TYPE_MEMCPY: return cuMemcpy3DAsync(&op->cp, s);
  case CU_GRAPH_NODE_TYPE_MEMSET: {
    const CUDA_MEMSET_NODE_PARAMS *m = &op->ms;
    size_t pitch = m->height > 1 ? m->pitch : m->width * m->elementSize;
    switch (m->elementSize) {
    case 1: return cuMemsetD2D8Async(m->dst, pitch, (unsigned char)m->value, m->width, m->height, s);
    case 2: return cuMemsetD2D16Async(m->dst, pitch, (unsigned short)m->value, m->width, m->height, s);
    default: return cuMemsetD2D32Async(m->dst, pitch, m->value, m->width, m->height, s);
    }
  }
  case CU_GRAPH_NODE_TYPE_HOST: return cuLaunchHostFunc(s, op->host.fn, op->host.userData);
  case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return cuEventRecord(op->ev, s);
  case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return cuStreamWaitEvent(s, op->ev, 0);
  case CU_GRAPH_NODE_TYPE_EMPTY:
  case CU_GRAPH_NODE_TYPE_MEM_ALLOC:  /* allocated when the node was added */
  case CU_GRAPH_NODE_TYPE_MEM_FREE:   /* freed with the graph */
  case CU_GRAPH_NODE_TYPE_GRAPH:      /* flattened at instantiation */
    return CUDA_SUCCESS;
  default: return CUDA_ERROR_NOT_SUPPORTED;
  }
}

static CUresult mem_alloc_node(CUgraph g, const CUgraphNode *deps, size_t ndeps,
                               const CUDA_MEM_ALLOC_NODE_PARAMS *p, CUgraphNode *out);
static CUresult mem_free_node(CUgraph g, const CUgraphNode *deps, size_t ndeps, CUdeviceptr dptr,
                              CUgraphNode *out);

/* ---- stream capture ---------------------------------------------------------- */
typedef struct capture {
  uint64_t id;
  CUgraph g;
  bool own_graph;               /* false: cuStreamBeginCaptureToGraph */
  CUstreamCaptureMode mode;
  CUstream origin;
  pthread_t thread;
  bool invalid;
} capture;

typedef struct cap_stream {     /* a stream taking part in a capture */
  CUstream s;
  capture *c;
  CUgraphNode *deps;
  CUgraphEdgeData *edges;       /* zeros, for cuStreamGetCaptureInfo_v3 */
  size_t ndeps, cap;
} cap_stream;

typedef struct cap_event {      /* an event recorded in a capture */
  CUevent e;
  capture *c;
  CUgraphNode *nodes;
  size_t n;
} cap_event;

static struct {
  pthread_mutex_t lock;
  cap_stream *streams;
  size_t nstreams, capstreams;
  cap_event *events;
  size_t nevents, capevents;
  uint64_t next_id;
  atomic_int active;            /* captures in progress */
  atomic_int global;            /* ... begun in GLOBAL mode */
} CAP = {.lock = PTHREAD_MUTEX_INITIALIZER};

static __thread CUstreamCaptureMode thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
static __thread int thread_strict;   /* this thread's captures not begun RELAXED */

bool rt_capturing(void) { return atomic_load_explicit(&CAP.active, memory_order_relaxed) != 0; }

static bool is_default(CUstream s) { return !s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD; }

static cap_stream *find_stream(CUstream s) {
  for (size_t i = 0; i < CAP.nstreams; i++)
    if (CAP.streams[i].s == s) return &CAP.streams[i];
  return NULL;
}

static cap_event *find_event(CUevent e) {
  for (size_t i = 0; i < CAP.nevents; i++)
    if (CAP.events[i].e == e) return &CAP.events[i];
  return NULL;
}

static CUresult set_deps(cap_stream *cs, const CUgraphNode *deps, size_t n) {
  if (n > cs->cap) {
    CUgraphNode *nd = realloc(cs->deps, n * sizeof *nd);
    if (!nd) return CUDA_ERROR_OUT_OF_MEMORY;
    cs->deps = nd;
    CUgraphEdgeData *ne = realloc(cs->edges, n * sizeof *ne);
    if (!ne) return CUDA_ERROR_OUT_OF_MEMORY;
    cs->edges = ne;
    cs->cap = n;
  }
  if (n) memmove(cs->deps, deps, n * sizeof *deps);
  if (n) memset(cs->edges, 0, n * sizeof *cs->edges);
  cs->ndeps = n;
  return CUDA_SUCCESS;
}

static CUresult add_deps(cap_stream *cs, const CUgraphNode *deps, size_t n) {
  for (size_t i = 0; i < n; i++) {
    bool have = false;
    for (size_t j = 0; j < cs->ndeps; j++) have |= cs->deps[j] == deps[i];
    if (have) continue;
    if (cs->ndeps == cs->cap) {
      size_t cap = cs->cap ? cs->cap * 2 : 4;
      CUgraphNode *nd = realloc(cs->deps, cap * sizeof *nd);
      if (!nd) return CUDA_ERROR_OUT_OF_MEMORY;
      cs->deps = nd;
      CUgraphEdgeData *ne = realloc(cs->edges, cap * sizeof *ne);
      if (!ne) return CUDA_ERROR_OUT_OF_MEMORY;
      cs->edges = ne;
      cs->cap = cap;
    }
    memset(&cs->edges[cs->ndeps], 0, sizeof *cs->edges);
    cs->deps[cs->ndeps++] = deps[i];
  }
  return CUDA_SUCCESS;
}

static cap_stream *join_stream(CUstream s, capture *c) {
  cap_stream *ns = pw_vec_grow(CAP.streams, &CAP.capstreams, CAP.nstreams + 1, sizeof *ns);
  if (!ns) return NULL;
  CAP.streams = ns;
  cap_stream *cs = &CAP.streams[CAP.nstreams++];
  *cs = (cap_stream){.s = s, .c = c};
  return cs;
}

static void invalidate(capture *c) {
  if (!c->invalid) RT_LOG(rt_info, "capture %llu invalidated", (unsigned long long)c->id);
  c->invalid = true;
}

/* Drops every stream and event entry of c (its end). */
static void capture_forget(capture *c) {
  for (size_t i = 0; i < CAP.nstreams;) {
    if (CAP.streams[i].c == c) {
      free(CAP.streams[i].deps);
      free(CAP.streams[i].edges);
      CAP.streams[i] = CAP.streams[--CAP.nstreams];
    } else {
      i++;
    }
  }
  for (size_t i = 0; i < CAP.nevents;) {
    if (CAP.events[i].c == c) {
      free(CAP.events[i].nodes);
      CAP.events[i] = CAP.events[--CAP.nevents];
    } else {
      i++;
    }
  }
}

/* The legacy stream synchronises with every blocking stream: using it
 * while one captures would make a dependency the capture cannot record. */
static CUresult implicit_check(void) {
  CUresult r = CUDA_SUCCESS;
  for (size_t i = 0; i < CAP.nstreams; i++) {
    unsigned flags = 0;
    cuStreamGetFlags(CAP.streams[i].s, &flags);
    if (!(flags & CU_STREAM_NON_BLOCKING)) {
      invalidate(CAP.streams[i].c);
      r = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    }
  }
  return r;
}

CUresult rt_capture_op(CUstream s, const rt_op *op, bool *captured) {
  *captured = false;
  pthread_mutex_lock(&CAP.lock);
  CUresult r = CUDA_SUCCESS;
  if (!s || s == CU_STREAM_LEGACY) {
    r = implicit_check();
  } else if (!is_default(s)) {
    cap_stream *cs = find_stream(s);
    if (cs) {
      *captured = true;
      if (cs->c->invalid) {
        r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
      } else {
        CUgraphNode n;
        r = node_new(cs->c->g, cs->deps, cs->ndeps, op->type, &n);
        if (r == CUDA_SUCCESS) {
          r = set_node_params(n, op);
          if (r == CUDA_SUCCESS) r = set_deps(cs, &n, 1);
          else node_drop(n);
        }
        if (r != CUDA_SUCCESS) invalidate(cs->c);
      }
    }
  }
  pthread_mutex_unlock(&CAP.lock);
  return r;
}

static bool prohibited(void) {
  if (thread_mode == CU_STREAM_CAPTURE_MODE_RELAXED) return false;
  if (thread_strict > 0) return true;
  return thread_mode == CU_STREAM_CAPTURE_MODE_GLOBAL && atomic_load(&CAP.global) > 0;
}

CUresult rt_capture_unsafe(void) {
  if (!rt_capturing() || !prohibited()) return CUDA_SUCCESS;
  pthread_mutex_lock(&CAP.lock);
  pthread_t self = pthread_self();
  for (size_t i = 0; i < CAP.nstreams; i++) {
    capture *c = CAP.streams[i].c;
    if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && pthread_equal(c->thread, self)) invalidate(c);
  }
  pthread_mutex_unlock(&CAP.lock);
  RT_LOG(rt_debug, "call not permitted during stream capture");
  return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

CUresult rt_capture_sync(CUstream s) {
  if (!rt_capturing()) return CUDA_SUCCESS;
  pthread_mutex_lock(&CAP.lock);
  CUresult r = CUDA_SUCCESS;
  if (!s || s == CU_STREAM_LEGACY) {
    r = implicit_check();
  } else if (!is_default(s)) {
    cap_stream *cs = find_stream(s);
    if (cs) {
      invalidate(cs->c);
      r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
  }
  pthread_mutex_unlock(&CAP.lock);
  return r;
}

CUresult rt_capture_event_record(CUevent e, CUstream s, unsigned flags, bool *handled) {
  *handled = false;
  pthread_mutex_lock(&CAP.lock);
  CUresult r = CUDA_SUCCESS;
  cap_stream *cs = is_default(s) ? NULL : find_stream(s);
  if (!cs) {
    /* recorded outside any capture: no longer a capture's event */
    cap_event *ce = find_event(e);
    if (ce) {
      free(ce->nodes);
      *ce = CAP.events[--CAP.nevents];
    }
    if (!s || s == CU_STREAM_LEGACY) r = implicit_check();
    pthread_mutex_unlock(&CAP.lock);
    return r;
  }
  *handled = true;
  if (cs->c->invalid) {
    pthread_mutex_unlock(&CAP.lock);
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  if (flags & CU_EVENT_RECORD_EXTERNAL) {
    /* an event record node: the event is recorded when the graph runs */
    pthread_mutex_unlock(&CAP.lock);
    rt_op op = {.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD, .ev = e};
    bool cap;
    return rt_capture_op(s, &op, &cap);
  }
  cap_event *ce = find_event(e);
  if (!ce) {
    cap_event *ne = pw_vec_grow(CAP.events, &CAP.capevents, CAP.nevents + 1, sizeof *ne);
    if (!ne) {
      pthread_mutex_unlock(&CAP.lock);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    CAP.events = ne;
    ce = &CAP.events[CAP.nevents++];
    *ce = (cap_event){.e = e};
  }
  free(ce->nodes);
  ce->c = cs->c;
  ce->n = cs->ndeps;
  ce->nodes = malloc((cs->ndeps ? cs->ndeps : 1) * sizeof *ce->nodes);
  if (!ce->nodes) {
    *ce = CAP.events[--CAP.nevents];
    r = CUDA_ERROR_OUT_OF_MEMORY;
  } else if (cs->ndeps) {
    memcpy(ce->nodes, cs->deps, cs->ndeps * sizeof *ce->nodes);
  }
  pthread_mutex_unlock(&CAP.lock);
  return r;
}

CUresult rt_capture_wait_event(CUstream s, CUevent e, unsigned flags, bool *handled) {
  *handled = false;
  pthread_mutex_lock(&CAP.lock);
  CUresult r = CUDA_SUCCESS;
  cap_event *ce = find_event(e);
  cap_stream *cs = is_default(s) ? NULL : find_stream(s);
  if (!ce && !cs) {
    if (!s || s == CU_STREAM_LEGACY) r = implicit_check();
    pthread_mutex_unlock(&CAP.lock);
    return r;
  }
  *handled = true;
  if (!ce) {
    /* a capturing stream waiting on an event from outside its capture */
    pthread_mutex_unlock(&CAP.lock);
    if (flags & CU_EVENT_WAIT_EXTERNAL) {
      rt_op op = {.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT, .ev = e};
      bool cap;
      return rt_capture_op(s, &op, &cap);
    }
    pthread_mutex_lock(&CAP.lock);
    cs = find_stream(s);
    if (cs) invalidate(cs->c);
    pthread_mutex_unlock(&CAP.lock);
    return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
  }
  if (ce->c->invalid) {
    r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  } else if (!cs) {
    if (is_default(s)) {
      invalidate(ce->c);
      r = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    } else {
      /* a fork: s joins the capture after the event's nodes */
      cs = join_stream(s, ce->c);
      r = cs ? set_deps(cs, ce->nodes, ce->n) : CUDA_ERROR_OUT_OF_MEMORY;
    }
  } else if (cs->c != ce->c) {
    invalidate(cs->c);
    invalidate(ce->c);
    r = CUDA_ERROR_STREAM_CAPTURE_MERGE;
  } else {
    r = add_deps(cs, ce->nodes, ce->n);   /* a join */
  }
  pthread_mutex_unlock(&CAP.lock);
  return r;
}

CUresult rt_capture_mem(CUstream s, bool alloc, size_t bytes, CUdeviceptr *ptr, bool *captured) {
  *captured = false;
  if (is_default(s)) return CUDA_SUCCESS;
  pthread_mutex_lock(&CAP.lock);
  cap_stream *cs = find_stream(s);
  CUresult r = CUDA_SUCCESS;
  if (cs) {
    *captured = true;
    CUgraphNode n;
    if (cs->c->invalid) {
      r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    } else if (alloc) {
      CUDA_MEM_ALLOC_NODE_PARAMS p = {.bytesize = bytes};
      p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
      p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      r = mem_alloc_node(cs->c->g, cs->deps, cs->ndeps, &p, &n);
      if (r == CUDA_SUCCESS) *ptr = n->op.mem.ptr;
    } else {
      r = mem_free_node(cs->c->g, cs->deps, cs->ndeps, *ptr, &n);
      if (r != CUDA_SUCCESS) {
        RT_LOG(rt_warn, "cuMemFreeAsync during capture of %#llx, which this capture did not "
               "allocate: not supported", (unsigned long long)*ptr);
        r = CUDA_ERROR_NOT_SUPPORTED;
      }
    }
    if (r == CUDA_SUCCESS) r = set_deps(cs, &n, 1);
    else if (r != CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) invalidate(cs->c);
  }
  pthread_mutex_unlock(&CAP.lock);
  return r;
}

void rt_capture_stream_destroyed(CUstream s) {
  pthread_mutex_lock(&CAP.lock);
  cap_stream *cs = find_stream(s);
  if (cs) {
    invalidate(cs->c);
    if (cs->c->origin != s) {
      free(cs->deps);
      free(cs->edges);
      *cs = CAP.streams[--CAP.nstreams];
    }
  }
  pthread_mutex_unlock(&CAP.lock);
}

void rt_capture_event_destroyed(CUevent e) {
  pthread_mutex_lock(&CAP.lock);
  cap_event *ce = find_event(e);
  if (ce) {
    free(ce->nodes);
    *ce = CAP.events[--CAP.nevents];
  }
  pthread_mutex_unlock(&CAP.lock);
}

static CUresult begin_capture(CUstream s, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                              CUstreamCaptureMode mode) {
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return r;
  if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      mode != CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  /* "Capture may not be initiated if stream is CU_STREAM_LEGACY" */
  if (is_default(s)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  rt_stream_backend(s, &r);
  if (r != CUDA_SUCCESS) return r;
  if (g && !graph_valid(g)) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < ndeps; i++)
    if (!node_valid(deps[i]) || deps[i]->g != g) return CUDA_ERROR_INVALID_VALUE;
  capture *c = calloc(1, sizeof *c);
  if (!c) return CUDA_ERROR_OUT_OF_MEMORY;
  if (!g) {
    r = graph_new(&g);
    if (r != CUDA_SUCCESS) {
      free(c);
      return r;
    }
    c->own_graph = true;
  }
  pthread_mutex_lock(&CAP.lock);
  if (find_stream(s)) {
    pthread_mutex_unlock(&CAP.lock);
    if (c->own_graph) graph_free(g);
    free(c);
    return CUDA_ERROR_ILLEGAL_STATE;
  }
  c->id = ++CAP.next_id;
  c->g = g;
  c->mode = mode;
  c->origin = s;
  c->thread = pthread_self();
  cap_stream *cs = join_stream(s, c);
  r = cs ? set_deps(cs, deps, ndeps) : CUDA_ERROR_OUT_OF_MEMORY;
  if (r != CUDA_SUCCESS) {
    if (cs) CAP.nstreams--;
    pthread_mutex_unlock(&CAP.lock);
    if (c->own_graph) graph_free(g);
    free(c);
    return r;
  }
  atomic_fetch_add(&CAP.active, 1);
  if (mode == CU_STREAM_CAPTURE_MODE_GLOBAL) atomic_fetch_add(&CAP.global, 1);
  if (mode != CU_STREAM_CAPTURE_MODE_RELAXED) thread_strict++;
  pthread_mutex_unlock(&CAP.lock);
  RT_LOG(rt_debug, "capture %llu begins on stream %p", (unsigned long long)c->id, (void *)s);
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) {
  RT_TRACE("%p, %d", (void *)s, (int)mode);
  return rt_ret(begin_capture(s, NULL, NULL, 0, mode));
}

/* CUDA 10.0's cuStreamBeginCapture had no mode: GLOBAL. */
RT_EXPORT CUresult rt_cuStreamBeginCapture_v1(CUstream s) __asm__("cuStreamBeginCapture");
RT_EXPORT CUresult rt_cuStreamBeginCapture_v1(CUstream s) {
  RT_TRACE("%p", (void *)s);
  return rt_ret(begin_capture(s, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL));
}

RT_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *deps,
                                               const CUgraphEdgeData *edges, size_t ndeps,
                                               CUstreamCaptureMode mode) {
  RT_TRACE("%p, %p, %p, %p, %zu, %d", (void *)s, (void *)g, (void *)deps, (void *)edges, ndeps,
           (int)mode);
  if (!g) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  for (size_t i = 0; edges && i < ndeps; i++)
    if (edges[i].type || edges[i].from_port || edges[i].to_port) return rt_ret(CUDA_ERROR_NOT_SUPPORTED);
  return rt_ret(begin_capture(s, g, deps, ndeps, mode));
}

/* True when every last node of a stream that joined c is joined back into
 * the origin: it has a dependent, or is in the origin's dependency set. */
static bool all_joined(capture *c, cap_stream *origin) {
  for (size_t i = 0; i < CAP.nstreams; i++) {
    cap_stream *cs = &CAP.streams[i];
    if (cs->c != c || cs == origin) continue;
    for (size_t j = 0; j < cs->ndeps; j++) {
      CUgraphNode n = cs->deps[j];
      bool ok = false;
      for (size_t k = 0; k < origin->ndeps && !ok; k++) ok = origin->deps[k] == n;
      for (size_t k = 0; k < c->g->n && !ok; k++) ok = has_dep(c->g->nodes[k], n);
      if (!ok) return false;
    }
  }
  return true;
}

RT_EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *out) {
  RT_TRACE("%p, %p", (void *)s, (void *)out);
  if (!out) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *out = NULL;
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (is_default(s)) return rt_ret(CUDA_ERROR_ILLEGAL_STATE);
  rt_stream_backend(s, &r);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  pthread_mutex_lock(&CAP.lock);
  cap_stream *cs = find_stream(s);
  if (!cs) {
    pthread_mutex_unlock(&CAP.lock);
    return rt_ret(CUDA_ERROR_ILLEGAL_STATE);
  }
  capture *c = cs->c;
  if (c->origin != s) {
    invalidate(c);
    pthread_mutex_unlock(&CAP.lock);
    return rt_ret(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
  }
  if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(c->thread, pthread_self())) {
    pthread_mutex_unlock(&CAP.lock);
    return rt_ret(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
  }
  if (!c->invalid && !all_joined(c, cs)) r = CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
  else if (c->invalid) r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  capture_forget(c);
  atomic_fetch_sub(&CAP.active, 1);
  if (c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL) atomic_fetch_sub(&CAP.global, 1);
  if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED) thread_strict--;
  pthread_mutex_unlock(&CAP.lock);
  if (r == CUDA_SUCCESS) *out = c->g;
  else if (c->own_graph) graph_free(c->g);
  RT_LOG(rt_debug, "capture %llu ends: %zu nodes", (unsigned long long)c->id,
         r == CUDA_SUCCESS ? c->g->n : 0);
  free(c);
  return rt_ret(r);
}

static CUresult capture_info(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
                             const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *n) {
  if (!st) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return r;
  *st = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!s || s == CU_STREAM_LEGACY) {
    /* the legacy stream is never captured; asking while a blocking stream
     * captures is an implicit synchronisation with it */
    if (!rt_capturing()) return CUDA_SUCCESS;
    pthread_mutex_lock(&CAP.lock);
    bool blocking = false;
    for (size_t i = 0; i < CAP.nstreams; i++) {
      unsigned flags = 0;
      cuStreamGetFlags(CAP.streams[i].s, &flags);
      blocking |= !(flags & CU_STREAM_NON_BLOCKING);
    }
    pthread_mutex_unlock(&CAP.lock);
    return blocking ? CUDA_ERROR_STREAM_CAPTURE_IMPLICIT : CUDA_SUCCESS;
  }
  if (is_default(s)) return CUDA_SUCCESS;
  rt_stream_backend(s, &r);
  if (r != CUDA_SUCCESS) return r;
  pthread_mutex_lock(&CAP.lock);
  cap_stream *cs = find_stream(s);
  if (cs) {
    *st = cs->c->invalid ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    if (id) *id = cs->c->id;
    if (g) *g = cs->c->g;
    if (deps) *deps = cs->deps;
    if (edges) *edges = cs->ndeps ? cs->edges : NULL;
    if (n) *n = cs->ndeps;
  }
  pthread_mutex_unlock(&CAP.lock);
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st) {
  RT_TRACE("%p, %p", (void *)s, (void *)st);
  return rt_ret(capture_info(s, st, NULL, NULL, NULL, NULL, NULL));
}

RT_EXPORT CUresult cuStreamGetCaptureInfo(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id,
                                          CUgraph *g, const CUgraphNode **deps,
                                          const CUgraphEdgeData **edges, size_t *n) {
  RT_TRACE("%p, %p, %p, %p, %p, %p, %p", (void *)s, (void *)st, (void *)id, (void *)g,
           (void *)deps, (void *)edges, (void *)n);
  return rt_ret(capture_info(s, st, id, g, deps, edges, n));
}

RT_EXPORT CUresult rt_cuStreamGetCaptureInfo_v2(CUstream s, CUstreamCaptureStatus *st,
                                                cuuint64_t *id, CUgraph *g,
                                                const CUgraphNode **deps, size_t *n)
    __asm__("cuStreamGetCaptureInfo_v2");
RT_EXPORT CUresult rt_cuStreamGetCaptureInfo_v2(CUstream s, CUstreamCaptureStatus *st,
                                                cuuint64_t *id, CUgraph *g,
                                                const CUgraphNode **deps, size_t *n) {
  RT_TRACE("%p, %p, %p, %p, %p, %p", (void *)s, (void *)st, (void *)id, (void *)g, (void *)deps,
           (void *)n);
  return rt_ret(capture_info(s, st, id, g, deps, NULL, n));
}

RT_EXPORT CUresult rt_cuStreamGetCaptureInfo_v1(CUstream s, CUstreamCaptureStatus *st,
                                                cuuint64_t *id) __asm__("cuStreamGetCaptureInfo");
RT_EXPORT CUresult rt_cuStreamGetCaptureInfo_v1(CUstream s, CUstreamCaptureStatus *st,
                                                cuuint64_t *id) {
  RT_TRACE("%p, %p, %p", (void *)s, (void *)st, (void *)id);
  return rt_ret(capture_info(s, st, id, NULL, NULL, NULL, NULL));
}

static CUresult update_deps(CUstream s, CUgraphNode *deps, size_t n, unsigned flags) {
  if (flags > CU_STREAM_SET_CAPTURE_DEPENDENCIES || (n && !deps)) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&CAP.lock);
  cap_stream *cs = is_default(s) ? NULL : find_stream(s);
  CUresult r = CUDA_SUCCESS;
  if (!cs) r = CUDA_ERROR_ILLEGAL_STATE;
  else if (cs->c->invalid) r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  for (size_t i = 0; r == CUDA_SUCCESS && i < n; i++)
    if (!node_valid(deps[i]) || deps[i]->g != cs->c->g) r = CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS)
    r = flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES ? set_deps(cs, deps, n) : add_deps(cs, deps, n);
  pthread_mutex_unlock(&CAP.lock);
  return r;
}

RT_EXPORT CUresult cuStreamUpdateCaptureDependencies(CUstream s, CUgraphNode *deps,
                                                     const CUgraphEdgeData *edges, size_t n,
                                                     unsigned int flags) {
  RT_TRACE("%p, %p, %p, %zu, %u", (void *)s, (void *)deps, (void *)edges, n, flags);
  return rt_ret(update_deps(s, deps, n, flags));
}

RT_EXPORT CUresult rt_cuStreamUpdateCaptureDependencies_v1(CUstream s, CUgraphNode *deps, size_t n,
                                                           unsigned int flags)
    __asm__("cuStreamUpdateCaptureDependencies");
RT_EXPORT CUresult rt_cuStreamUpdateCaptureDependencies_v1(CUstream s, CUgraphNode *deps, size_t n,
                                                           unsigned int flags) {
  RT_TRACE("%p, %p, %zu, %u", (void *)s, (void *)deps, n, flags);
  return rt_ret(update_deps(s, deps, n, flags));
}

RT_EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode) {
  RT_TRACE("%p", (void *)mode);
  if (!mode) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUstreamCaptureMode m = *mode;
  if (m != CU_STREAM_CAPTURE_MODE_GLOBAL && m != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      m != CU_STREAM_CAPTURE_MODE_RELAXED)
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *mode = thread_mode;
  thread_mode = m;
  return rt_ret(CUDA_SUCCESS);
}

/* ---- graph construction ---------------------------------------------------- */
RT_EXPORT CUresult cuGraphCreate(CUgraph *out, unsigned int flags) {
  RT_TRACE("%p, %u", (void *)out, flags);
  if (!out || flags) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(graph_new(out));
}

RT_EXPORT CUresult cuGraphDestroy(CUgraph g) {
  RT_TRACE("%p", (void *)g);
  if (!graph_valid(g)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  graph_free(g);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuGraphClone(CUgraph *out, CUgraph g) {
  RT_TRACE("%p, %p", (void *)out, (void *)g);
  if (!out || !graph_valid(g)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(graph_clone(g, out));
}

RT_EXPORT CUresult cuGraphNodeFindInClone(CUgraphNode *out, CUgraphNode orig, CUgraph clone) {
  RT_TRACE("%p, %p, %p", (void *)out, (void *)orig, (void *)clone);
  if (!out || !graph_valid(clone)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  for (size_t i = 0; i < clone->n; i++)
    if (clone->nodes[i]->cloned_from == orig) {
      *out = clone->nodes[i];
      return rt_ret(CUDA_SUCCESS);
    }
  return rt_ret(CUDA_ERROR_INVALID_VALUE);
}

/* Adds a node holding op (copied). */
static CUresult add_op_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                            const rt_op *op) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  CUgraphNode n;
  CUresult r = node_new(g, deps, ndeps, op->type, &n);
  if (r != CUDA_SUCCESS) return r;
  r = set_node_params(n, op);
  if (r != CUDA_SUCCESS) {
    node_drop(n);
    return r;
  }
  *out = n;
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuGraphAddKernelNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                        size_t ndeps, const CUDA_KERNEL_NODE_PARAMS *p) {
  RT_TRACE("%p, %p, %p, %zu, %p", (void *)out, (void *)g, (void *)deps, ndeps, (const void *)p);
  rt_op op;
  CUresult r = kernel_params_in(p, &op);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  r = add_op_node(out, g, deps, ndeps, &op);
  free(op.k.buf);
  return rt_ret(r);
}

/* CUDA 10's CUDA_KERNEL_NODE_PARAMS had neither kern nor ctx. */
static CUDA_KERNEL_NODE_PARAMS kernel_v1(const CUDA_KERNEL_NODE_PARAMS_v1 *p) {
  return (CUDA_KERNEL_NODE_PARAMS){
      .func = p->func, .gridDimX = p->gridDimX, .gridDimY = p->gridDimY, .gridDimZ = p->gridDimZ,
      .blockDimX = p->blockDimX, .blockDimY = p->blockDimY, .blockDimZ = p->blockDimZ,
      .sharedMemBytes = p->sharedMemBytes, .kernelParams = p->kernelParams, .extra = p->extra};
}

RT_EXPORT CUresult rt_cuGraphAddKernelNode_v1(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                              size_t ndeps, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
    __asm__("cuGraphAddKernelNode");
RT_EXPORT CUresult rt_cuGraphAddKernelNode_v1(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                              size_t ndeps, const CUDA_KERNEL_NODE_PARAMS_v1 *p) {
  if (!p) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUDA_KERNEL_NODE_PARAMS q = kernel_v1(p);
  return cuGraphAddKernelNode(out, g, deps, ndeps, &q);
}

RT_EXPORT CUresult cuGraphKernelNodeGetParams(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS *p) {
  RT_TRACE("%p, %p", (void *)n, (void *)p);
  if (!p || !node_valid(n) || n->type != CU_GRAPH_NODE_TYPE_KERNEL) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  kernel_params_out(&n->op, n->argv, p);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult rt_cuGraphKernelNodeGetParams_v1(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS_v1 *p)
    __asm__("cuGraphKernelNodeGetParams");
RT_EXPORT CUresult rt_cuGraphKernelNodeGetParams_v1(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS_v1 *p) {
  if (!p) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUDA_KERNEL_NODE_PARAMS q;
  CUresult r = cuGraphKernelNodeGetParams(n, &q);
  if (r == CUDA_SUCCESS) memcpy(p, &q, sizeof *p);   /* v1 is v2's prefix */
  return r;
}

RT_EXPORT CUresult cuGraphKernelNodeSetParams(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p) {
  RT_TRACE("%p, %p", (void *)n, (const void *)p);
  if (!node_valid(n) || n->type != CU_GRAPH_NODE_TYPE_KERNEL) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  rt_op op;
  CUresult r = kernel_params_in(p, &op);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  r = set_node_params(n, &op);
  free(op.k.buf);
  return rt_ret(r);
}

RT_EXPORT CUresult rt_cuGraphKernelNodeSetParams_v1(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
    __asm__("cuGraphKernelNodeSetParams");
RT_EXPORT CUresult rt_cuGraphKernelNodeSetParams_v1(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p) {
  if (!p) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUDA_KERNEL_NODE_PARAMS q = kernel_v1(p);
  return cuGraphKernelNodeSetParams(n, &q);
}

RT_EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                        size_t ndeps, const CUDA_MEMCPY3D *p, CUcontext ctx) {
  RT_TRACE("%p, %p, %p, %zu, %p, %p", (void *)out, (void *)g, (void *)deps, ndeps, (const void *)p,
           (void *)ctx);
  if (!p) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  rt_op op = {.type = CU_GRAPH_NODE_TYPE_MEMCPY, .cp = *p};
  return rt_ret(add_op_node(out, g, deps, ndeps, &op));
}

RT_EXPORT CUresult cuGraphMemcpyNodeGetParams(CUgraphNode n, CUDA_MEMCPY3D *p) {
  RT_TRACE("%p, %p", (void *)n, (void *)p);
  if (!p || !node_valid(n) || n->type != CU_GRAPH_NODE_TYPE_MEMCPY) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *p = n->op.cp;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuGraphMemcpyNodeSetParams(CUgraphNode n, const CUDA_MEMCPY3D *p) {
  RT_TRACE("%p, %p", (void *)n, (const void *)p);
  if (!p || !node_valid(n) || n->type != CU_GRAPH_NODE_TYPE_MEMCPY) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  n->op.cp = *p;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                        size_t ndeps, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx) {
  RT_TRACE("%p, %p, %p, %zu, %p, %p", (void *)out, (void *)g, (void *)deps, ndeps, (const void *)p,
           (void *)ctx);
  CUresult r = memset_check(p);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  rt_op op = {.type = CU_GRAPH_NODE_TYPE_MEMSET, .ms = *p};
  return rt_ret(add_op_node(out, g, deps, ndeps, &op));
}

RT_EXPORT CUresult cuGraphMemsetNodeGetParams(CUgraphNode n, CUDA_MEMSET_NODE_PARAMS *p) {
  RT_TRACE("%p, %p", (void *)n, (void *)p);
  if (!p || !node_valid(n) || n->type != CU_GRAPH_NODE_TYPE_MEMSET) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *p = n->op.ms;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuGraphMemsetNodeSetParams(CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS *p) {
  RT_TRACE("%p, %p", (void *)n, (const void *)p);
  if (!node_valid(n) || n->type != CU_GRAPH_NODE_TYPE_MEMSET) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = memset_check(p);
  if (r == CUDA_SUCCESS) n->op.ms = *p;
  return rt_ret(r);
}

RT_EXPORT CUresult cuGraphAddHostNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                      size_t ndeps, const CUDA_HOST_NODE_PARAMS *p) {
  RT_TRACE("%p, %p, %p, %zu, %p", (void *)out, (void *)g, (void *)deps, ndeps, (const void *)p);
  if (!p || !p->fn) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  rt_op op = {.type = CU_GRAPH_NODE_TYPE_HOST, .host = *p};
  return rt_ret(add_op_node(out, g, deps, ndeps, &op));
}

RT_EXPORT CUresult cuGraphHostNodeGetParams(CUgraphNode n, CUDA_HOST_NODE_PARAMS *p) {
  RT_TRACE("%p, %p", (void *)n, (void *)p);
  if (!p || !node_valid(n) || n->type != CU_GRAPH_NODE_TYPE_HOST) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *p = n->op.host;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuGraphHostNodeSetParams(CUgraphNode n, const CUDA_HOST_NODE_PARAMS *p) {
  RT_TRACE("%p, %p", (void *)n, (const void *)p);
  if (!p || !p->fn || !node_valid(n) || n->type != CU_GRAPH_NODE_TYPE_HOST)
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  n->op.host = *p;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuGraphAddChildGraphNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                            size_t ndeps, CUgraph child) {
  RT_TRACE("%p, %p, %p, %zu, %p", (void *)out, (void *)g, (void *)deps, ndeps, (void *)child);
  if (!out || !graph_valid(child) || child == g) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUgraph clone;
  CUresult r = graph_clone(child, &clone);   /* "the graph is cloned into this node" */
  if (r != CUDA_SUCCESS) return rt_ret(r);
  CUgraphNode n;
  r = node_new(g, deps, ndeps, CU_GRAPH_NODE_TYPE_GRAPH, &n);
  if (r != CUDA_SUCCESS) {
    graph_free(clone);
    return rt_ret(r);
  }
  n->child = clone;
  *out = n;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode n, CUgraph *out) {
  RT_TRACE("%p, %p", (void *)n, (void *)out);
  if (!out || !node_valid(n) || n->type != CU_GRAPH_NODE_TYPE_GRAPH) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *out = n->child;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                       size_t ndeps) {
  RT_TRACE("%p, %p, %p, %zu", (void *)out, (void *)g, (void *)deps, ndeps);
  rt_op op = {.type = CU_GRAPH_NODE_TYPE_EMPTY};
  return rt_ret(add_op_node(out, g, deps, ndeps, &op));
}

static CUresult add_event_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                               CUevent e, CUgraphNodeType t) {
  if (!e) return CUDA_ERROR_INVALID_VALUE;
  if (!rt_handle_valid(rt_h_event, e)) return CUDA_ERROR_INVALID_HANDLE;
  rt_op op = {.type = t, .ev = e};
  return add_op_node(out, g, deps, ndeps, &op);
}

static CUresult event_node_get(CUgraphNode n, CUevent *out, CUgraphNodeType t) {
  if (!out || !node_valid(n) || n->type != t) return CUDA_ERROR_INVALID_VALUE;
  *out = n->op.ev;
  return CUDA_SUCCESS;
}

static CUresult event_node_set(CUgraphNode n, CUevent e, CUgraphNodeType t) {
  if (!node_valid(n) || n->type != t) return CUDA_ERROR_INVALID_VALUE;
  if (!rt_handle_valid(rt_h_event, e)) return CUDA_ERROR_INVALID_HANDLE;
  n->op.ev = e;
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuGraphAddEventRecordNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                             size_t ndeps, CUevent e) {
  RT_TRACE("%p, %p, %p, %zu, %p", (void *)out, (void *)g, (void *)deps, ndeps, (void *)e);
  return rt_ret(add_event_node(out, g, deps, ndeps, e, CU_GRAPH_NODE_TYPE_EVENT_RECORD));
}
RT_EXPORT CUresult cuGraphAddEventWaitNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                           size_t ndeps, CUevent e) {
  RT_TRACE("%p, %p, %p, %zu, %p", (void *)out, (void *)g, (void *)deps, ndeps, (void *)e);
  return rt_ret(add_event_node(out, g, deps, ndeps, e, CU_GRAPH_NODE_TYPE_WAIT_EVENT));
}
RT_EXPORT CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode n, CUevent *out) {
  RT_TRACE("%p, %p", (void *)n, (void *)out);
  return rt_ret(event_node_get(n, out, CU_GRAPH_NODE_TYPE_EVENT_RECORD));
}
RT_EXPORT CUresult cuGraphEventWaitNodeGetEvent(CUgraphNode n, CUevent *out) {
  RT_TRACE("%p, %p", (void *)n, (void *)out);
  return rt_ret(event_node_get(n, out, CU_GRAPH_NODE_TYPE_WAIT_EVENT));
}
RT_EXPORT CUresult cuGraphEventRecordNodeSetEvent(CUgraphNode n, CUevent e) {
  RT_TRACE("%p, %p", (void *)n, (void *)e);
  return rt_ret(event_node_set(n, e, CU_GRAPH_NODE_TYPE_EVENT_RECORD));
}
RT_EXPORT CUresult cuGraphEventWaitNodeSetEvent(CUgraphNode n, CUevent e) {
  RT_TRACE("%p, %p", (void *)n, (void *)e);
  return rt_ret(event_node_set(n, e, CU_GRAPH_NODE_TYPE_WAIT_EVENT));
}

/* A memory allocation node of g: the memory is allocated now (CUDA fixes
 * the address when the node is made). */
static CUresult mem_alloc_node(CUgraph g, const CUgraphNode *deps, size_t ndeps,
                               const CUDA_MEM_ALLOC_NODE_PARAMS *p, CUgraphNode *out) {
  rt_galloc *a = calloc(1, sizeof *a);
  if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
  uint64_t ptr;
  CUresult r = rt_check_init();
  if (r == CUDA_SUCCESS) r = rt_driver.backend->mem_alloc(rt_driver.backend, p->bytesize, &ptr);
  if (r != CUDA_SUCCESS) {
    free(a);
    return r;
  }
  CUgraphNode n;
  r = node_new(g, deps, ndeps, CU_GRAPH_NODE_TYPE_MEM_ALLOC, &n);
  if (r != CUDA_SUCCESS) {
    rt_driver.backend->mem_free(rt_driver.backend, ptr);
    free(a);
    return r;
  }
  *a = (rt_galloc){.refs = 1, .ptr = ptr, .bytes = p->bytesize};
  size_t now = atomic_fetch_add(&graph_mem, a->bytes) + a->bytes;
  for (size_t h = atomic_load(&graph_mem_high); now > h && !atomic_compare_exchange_weak(&graph_mem_high, &h, now);)
    ;
  n->alloc = a;
  n->op.mem.ptr = ptr;
  n->op.mem.bytes = p->bytesize;
  n->alloc_params = *p;
  n->alloc_params.dptr = ptr;
  n->alloc_params.accessDescs = NULL;
  n->alloc_params.accessDescCount = 0;
  *out = n;
  return CUDA_SUCCESS;
}

/* A free node of g for memory a node of g allocated. */
static CUresult mem_free_node(CUgraph g, const CUgraphNode *deps, size_t ndeps, CUdeviceptr dptr,
                              CUgraphNode *out) {
  rt_galloc *a = NULL;
  for (size_t i = 0; i < g->n && !a; i++)
    if (g->nodes[i]->alloc && g->nodes[i]->alloc->ptr == dptr) a = g->nodes[i]->alloc;
  if (!a || a->freed_by_graph) return CUDA_ERROR_INVALID_VALUE;
  rt_op op = {.type = CU_GRAPH_NODE_TYPE_MEM_FREE, .mem = {dptr, a->bytes}};
  CUresult r = add_op_node(out, g, deps, ndeps, &op);
  if (r == CUDA_SUCCESS) a->freed_by_graph = true;
  return r;
}

RT_EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                          size_t ndeps, CUDA_MEM_ALLOC_NODE_PARAMS *p) {
  RT_TRACE("%p, %p, %p, %zu, %p", (void *)out, (void *)g, (void *)deps, ndeps, (void *)p);
  if (!out || !p || !p->bytesize) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (p->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
      p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
      p->poolProps.handleTypes != CU_MEM_HANDLE_TYPE_NONE)
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = mem_alloc_node(g, deps, ndeps, p, out);
  if (r == CUDA_SUCCESS) p->dptr = (*out)->op.mem.ptr;
  return rt_ret(r);
}

RT_EXPORT CUresult cuGraphMemAllocNodeGetParams(CUgraphNode n, CUDA_MEM_ALLOC_NODE_PARAMS *p) {
  RT_TRACE("%p, %p", (void *)n, (void *)p);
  if (!p || !node_valid(n) || n->type != CU_GRAPH_NODE_TYPE_MEM_ALLOC) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *p = n->alloc_params;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                         size_t ndeps, CUdeviceptr dptr) {
  RT_TRACE("%p, %p, %p, %zu, %#llx", (void *)out, (void *)g, (void *)deps, ndeps,
           (unsigned long long)dptr);
  if (!out || !graph_valid(g)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(mem_free_node(g, deps, ndeps, dptr, out));   /* only memory this graph allocates */
}

RT_EXPORT CUresult cuGraphMemFreeNodeGetParams(CUgraphNode n, CUdeviceptr *out) {
  RT_TRACE("%p, %p", (void *)n, (void *)out);
  if (!out || !node_valid(n) || n->type != CU_GRAPH_NODE_TYPE_MEM_FREE) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *out = n->op.mem.ptr;
  return rt_ret(CUDA_SUCCESS);
}

/* ---- the generic forms (cuGraphAddNode, cuGraph[Exec]NodeSetParams) ------- */
static CUresult generic_reserved(const CUgraphNodeParams *p) {
  if (!p || p->reserved0[0] || p->reserved0[1] || p->reserved0[2] || p->reserved2)
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

/* The operation of a kernel, memcpy, memset, host, event record or wait
 * node from its generic parameters; CUDA_ERROR_NOT_SUPPORTED for the
 * types that have no operation here. */
static CUresult generic_op(const CUgraphNodeParams *p, rt_op *op) {
  switch (p->type) {
  case CU_GRAPH_NODE_TYPE_KERNEL: {
    CUDA_KERNEL_NODE_PARAMS k;
    memcpy(&k, &p->kernel, sizeof k);   /* v3 is v2's layout */
    return kernel_params_in(&k, op);
  }
  case CU_GRAPH_NODE_TYPE_MEMCPY:
    if (p->memcpy.flags || p->memcpy.reserved) return CUDA_ERROR_INVALID_VALUE;
    *op = (rt_op){.type = CU_GRAPH_NODE_TYPE_MEMCPY, .cp = p->memcpy.copyParams};
    return CUDA_SUCCESS;
  case CU_GRAPH_NODE_TYPE_MEMSET: {
    CUDA_MEMSET_NODE_PARAMS m = {.dst = p->memset.dst, .pitch = p->memset.pitch,
                                 .value = p->memset.value, .elementSize = p->memset.elementSize,
                                 .width = p->memset.width, .height = p->memset.height};
    CUresult r = memset_check(&m);
    if (r == CUDA_SUCCESS) *op = (rt_op){.type = CU_GRAPH_NODE_TYPE_MEMSET, .ms = m};
    return r;
  }
  case CU_GRAPH_NODE_TYPE_HOST:
    if (!p->host.fn) return CUDA_ERROR_INVALID_VALUE;
    *op = (rt_op){.type = CU_GRAPH_NODE_TYPE_HOST, .host = {p->host.fn, p->host.userData}};
    return CUDA_SUCCESS;
  case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
  case CU_GRAPH_NODE_TYPE_WAIT_EVENT: {
    CUevent e = p->type == CU_GRAPH_NODE_TYPE_EVENT_RECORD ? p->eventRecord.event : p->eventWait.event;
    if (!rt_handle_valid(rt_h_event, e)) return CUDA_ERROR_INVALID_HANDLE;
    *op = (rt_op){.type = p->type, .ev = e};
    return CUDA_SUCCESS;
  }
  case CU_GRAPH_NODE_TYPE_EMPTY:
    *op = (rt_op){.type = CU_GRAPH_NODE_TYPE_EMPTY};
    return CUDA_SUCCESS;
  default: return CUDA_ERROR_NOT_SUPPORTED;
  }
}

static CUresult add_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                         const CUgraphEdgeData *ed, size_t ndeps, CUgraphNodeParams *p) {
  CUresult r = generic_reserved(p);
  if (r != CUDA_SUCCESS || !out) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; ed && i < ndeps; i++)
    if (ed[i].type || ed[i].from_port || ed[i].to_port) return CUDA_ERROR_NOT_SUPPORTED;
  switch (p->type) {
  case CU_GRAPH_NODE_TYPE_GRAPH:
    if (p->graph.ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE)
      return cuGraphAddChildGraphNode(out, g, deps, ndeps, p->graph.graph);
    return CUDA_ERROR_NOT_SUPPORTED;   /* ownership moved to the parent: not done */
  case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
    CUDA_MEM_ALLOC_NODE_PARAMS a = {.poolProps = p->alloc.poolProps, .bytesize = p->alloc.bytesize};
    r = cuGraphAddMemAllocNode(out, g, deps, ndeps, &a);
    if (r == CUDA_SUCCESS) p->alloc.dptr = a.dptr;
    return r;
  }
  case CU_GRAPH_NODE_TYPE_MEM_FREE: return cuGraphAddMemFreeNode(out, g, deps, ndeps, p->free.dptr);
  default: break;
  }
  rt_op op;
  r = generic_op(p, &op);
  if (r != CUDA_SUCCESS) return r;
  r = add_op_node(out, g, deps, ndeps, &op);
  if (op.type == CU_GRAPH_NODE_TYPE_KERNEL) free(op.k.buf);
  return r;
}

RT_EXPORT CUresult cuGraphAddNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                  const CUgraphEdgeData *ed, size_t ndeps, CUgraphNodeParams *p) {
  RT_TRACE("%p, %p, %p, %p, %zu, %p", (void *)out, (void *)g, (void *)deps, (void *)ed, ndeps, (void *)p);
  return rt_ret(add_node(out, g, deps, ed, ndeps, p));
}

RT_EXPORT CUresult rt_cuGraphAddNode_v1(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                        size_t ndeps, CUgraphNodeParams *p) __asm__("cuGraphAddNode");
RT_EXPORT CUresult rt_cuGraphAddNode_v1(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                        size_t ndeps, CUgraphNodeParams *p) {
  RT_TRACE("%p, %p, %p, %zu, %p", (void *)out, (void *)g, (void *)deps, ndeps, (void *)p);
  return rt_ret(add_node(out, g, deps, NULL, ndeps, p));
}

RT_EXPORT CUresult cuGraphNodeSetParams(CUgraphNode n, CUgraphNodeParams *p) {
  RT_TRACE("%p, %p", (void *)n, (void *)p);
  CUresult r = generic_reserved(p);
  if (r != CUDA_SUCCESS || !node_valid(n) || n->type != p->type) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  rt_op op;
  r = generic_op(p, &op);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  r = set_node_params(n, &op);
  if (op.type == CU_GRAPH_NODE_TYPE_KERNEL) free(op.k.buf);
  return rt_ret(r);
}

static CUresult exec_set(CUgraphExec x, CUgraphNode n, const rt_op *op);

RT_EXPORT CUresult cuGraphExecNodeSetParams(CUgraphExec x, CUgraphNode n, CUgraphNodeParams *p) {
  RT_TRACE("%p, %p, %p", (void *)x, (void *)n, (void *)p);
  CUresult r = generic_reserved(p);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (p->type == CU_GRAPH_NODE_TYPE_GRAPH)
    return cuGraphExecChildGraphNodeSetParams(x, n, p->graph.graph);
  rt_op op;
  r = generic_op(p, &op);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  r = exec_set(x, n, &op);
  if (op.type == CU_GRAPH_NODE_TYPE_KERNEL) free(op.k.buf);
  return rt_ret(r);
}

/* ---- queries, edges ------------------------------------------------------- */
RT_EXPORT CUresult cuGraphNodeGetType(CUgraphNode n, CUgraphNodeType *t) {
  RT_TRACE("%p, %p", (void *)n, (void *)t);
  if (!t || !node_valid(n)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *t = n->type;
  return rt_ret(CUDA_SUCCESS);
}

/* CUDA's query convention: with a NULL array, *count is set to the total;
 * otherwise up to *count entries are written and *count becomes the number
 * written (missing entries of a larger array are NULL). */
static CUresult list_out(CUgraphNode *out, size_t *count, CUgraphNode *items, size_t n) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  if (!out) {
    *count = n;
    return CUDA_SUCCESS;
  }
  size_t k = *count < n ? *count : n;
  for (size_t i = 0; i < *count; i++) out[i] = i < k ? items[i] : NULL;
  *count = k;
  return CUDA_SUCCESS;
}

static void edges_zero(CUgraphEdgeData *e, size_t n) {
  if (e) memset(e, 0, n * sizeof *e);
}

RT_EXPORT CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *n) {
  RT_TRACE("%p, %p, %p", (void *)g, (void *)nodes, (void *)n);
  if (!graph_valid(g)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(list_out(nodes, n, g->nodes, g->n));
}

RT_EXPORT CUresult cuGraphGetRootNodes(CUgraph g, CUgraphNode *nodes, size_t *n) {
  RT_TRACE("%p, %p, %p", (void *)g, (void *)nodes, (void *)n);
  if (!graph_valid(g)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUgraphNode *roots = malloc((g->n ? g->n : 1) * sizeof *roots);
  if (!roots) return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  size_t k = 0;
  for (size_t i = 0; i < g->n; i++)
    if (!g->nodes[i]->ndeps) roots[k++] = g->nodes[i];
  CUresult r = list_out(nodes, n, roots, k);
  free(roots);
  return rt_ret(r);
}

static CUresult get_edges(CUgraph g, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *ed,
                          size_t *n) {
  if (!graph_valid(g) || !n || (!from) != (!to)) return CUDA_ERROR_INVALID_VALUE;
  size_t total = 0, k = 0;
  for (size_t i = 0; i < g->n; i++) total += g->nodes[i]->ndeps;
  if (!from) {
    *n = total;
    return CUDA_SUCCESS;
  }
  for (size_t i = 0; i < g->n; i++)
    for (size_t j = 0; j < g->nodes[i]->ndeps; j++, k++)
      if (k < *n) {
        from[k] = g->nodes[i]->deps[j];
        to[k] = g->nodes[i];
        if (ed) memset(&ed[k], 0, sizeof *ed);
      }
  for (size_t i = total; i < *n; i++) {
    from[i] = to[i] = NULL;
    if (ed) memset(&ed[i], 0, sizeof *ed);
  }
  if (*n > total) *n = total;
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuGraphGetEdges(CUgraph g, CUgraphNode *from, CUgraphNode *to,
                                   CUgraphEdgeData *ed, size_t *n) {
  RT_TRACE("%p, %p, %p, %p, %p", (void *)g, (void *)from, (void *)to, (void *)ed, (void *)n);
  return rt_ret(get_edges(g, from, to, ed, n));
}
RT_EXPORT CUresult rt_cuGraphGetEdges_v1(CUgraph g, CUgraphNode *from, CUgraphNode *to, size_t *n)
    __asm__("cuGraphGetEdges");
RT_EXPORT CUresult rt_cuGraphGetEdges_v1(CUgraph g, CUgraphNode *from, CUgraphNode *to, size_t *n) {
  RT_TRACE("%p, %p, %p, %p", (void *)g, (void *)from, (void *)to, (void *)n);
  return rt_ret(get_edges(g, from, to, NULL, n));
}

static CUresult node_deps(CUgraphNode n, CUgraphNode *out, CUgraphEdgeData *ed, size_t *count) {
  if (!node_valid(n)) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = list_out(out, count, n->deps, n->ndeps);
  if (r == CUDA_SUCCESS && out) edges_zero(ed, *count);
  return r;
}

static CUresult node_dependents(CUgraphNode n, CUgraphNode *out, CUgraphEdgeData *ed,
                                size_t *count) {
  if (!node_valid(n)) return CUDA_ERROR_INVALID_VALUE;
  CUgraph g = n->g;
  CUgraphNode *d = malloc((g->n ? g->n : 1) * sizeof *d);
  if (!d) return CUDA_ERROR_OUT_OF_MEMORY;
  size_t k = 0;
  for (size_t i = 0; i < g->n; i++)
    if (has_dep(g->nodes[i], n)) d[k++] = g->nodes[i];
  CUresult r = list_out(out, count, d, k);
  if (r == CUDA_SUCCESS && out) edges_zero(ed, *count);
  free(d);
  return r;
}

RT_EXPORT CUresult cuGraphNodeGetDependencies(CUgraphNode n, CUgraphNode *out, CUgraphEdgeData *ed,
                                              size_t *count) {
  RT_TRACE("%p, %p, %p, %p", (void *)n, (void *)out, (void *)ed, (void *)count);
  return rt_ret(node_deps(n, out, ed, count));
}
RT_EXPORT CUresult rt_cuGraphNodeGetDependencies_v1(CUgraphNode n, CUgraphNode *out, size_t *count)
    __asm__("cuGraphNodeGetDependencies");
RT_EXPORT CUresult rt_cuGraphNodeGetDependencies_v1(CUgraphNode n, CUgraphNode *out, size_t *count) {
  RT_TRACE("%p, %p, %p", (void *)n, (void *)out, (void *)count);
  return rt_ret(node_deps(n, out, NULL, count));
}
RT_EXPORT CUresult cuGraphNodeGetDependentNodes(CUgraphNode n, CUgraphNode *out,
                                                CUgraphEdgeData *ed, size_t *count) {
  RT_TRACE("%p, %p, %p, %p", (void *)n, (void *)out, (void *)ed, (void *)count);
  return rt_ret(node_dependents(n, out, ed, count));
}
RT_EXPORT CUresult rt_cuGraphNodeGetDependentNodes_v1(CUgraphNode n, CUgraphNode *out, size_t *count)
    __asm__("cuGraphNodeGetDependentNodes");
RT_EXPORT CUresult rt_cuGraphNodeGetDependentNodes_v1(CUgraphNode n, CUgraphNode *out, size_t *count) {
  RT_TRACE("%p, %p, %p", (void *)n, (void *)out, (void *)count);
  return rt_ret(node_dependents(n, out, NULL, count));
}

/* True when to is reachable from from (following dependents): an edge
 * from -> to's ancestor would close a cycle the other way. */
static bool reaches(CUgraphNode from, CUgraphNode to) {
  if (from == to) return true;
  for (size_t i = 0; i < from->ndeps; i++)
    if (reaches(from->deps[i], to)) return true;
  return false;
}

static CUresult edges_change(CUgraph g, const CUgraphNode *from, const CUgraphNode *to,
                             const CUgraphEdgeData *ed, size_t n, bool add) {
  if (!graph_valid(g) || (n && (!from || !to))) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < n; i++) {
    if (!node_valid(from[i]) || !node_valid(to[i]) || from[i]->g != g || to[i]->g != g)
      return CUDA_ERROR_INVALID_VALUE;
    if (ed && (ed[i].type || ed[i].from_port || ed[i].to_port)) return CUDA_ERROR_NOT_SUPPORTED;
  }
  for (size_t i = 0; i < n; i++) {
    CUgraphNode t = to[i], f = from[i];
    if (add) {
      /* a duplicate edge or a cycle is CUDA_ERROR_INVALID_VALUE */
      if (has_dep(t, f) || reaches(f, t)) return CUDA_ERROR_INVALID_VALUE;
      CUresult r = add_dep(t, f);
      if (r != CUDA_SUCCESS) return r;
    } else {
      size_t j = 0;
      while (j < t->ndeps && t->deps[j] != f) j++;
      if (j == t->ndeps) return CUDA_ERROR_INVALID_VALUE;
      memmove(&t->deps[j], &t->deps[j + 1], (t->ndeps - j - 1) * sizeof *t->deps);
      t->ndeps--;
    }
  }
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuGraphAddDependencies(CUgraph g, const CUgraphNode *from, const CUgraphNode *to,
                                          const CUgraphEdgeData *ed, size_t n) {
  RT_TRACE("%p, %p, %p, %p, %zu", (void *)g, (void *)from, (void *)to, (void *)ed, n);
  return rt_ret(edges_change(g, from, to, ed, n, true));
}
RT_EXPORT CUresult rt_cuGraphAddDependencies_v1(CUgraph g, const CUgraphNode *from,
                                                const CUgraphNode *to, size_t n)
    __asm__("cuGraphAddDependencies");
RT_EXPORT CUresult rt_cuGraphAddDependencies_v1(CUgraph g, const CUgraphNode *from,
                                                const CUgraphNode *to, size_t n) {
  RT_TRACE("%p, %p, %p, %zu", (void *)g, (void *)from, (void *)to, n);
  return rt_ret(edges_change(g, from, to, NULL, n, true));
}
RT_EXPORT CUresult cuGraphRemoveDependencies(CUgraph g, const CUgraphNode *from,
                                             const CUgraphNode *to, const CUgraphEdgeData *ed,
                                             size_t n) {
  RT_TRACE("%p, %p, %p, %p, %zu", (void *)g, (void *)from, (void *)to, (void *)ed, n);
  return rt_ret(edges_change(g, from, to, ed, n, false));
}
RT_EXPORT CUresult rt_cuGraphRemoveDependencies_v1(CUgraph g, const CUgraphNode *from,
                                                   const CUgraphNode *to, size_t n)
    __asm__("cuGraphRemoveDependencies");
RT_EXPORT CUresult rt_cuGraphRemoveDependencies_v1(CUgraph g, const CUgraphNode *from,
                                                   const CUgraphNode *to, size_t n) {
  RT_TRACE("%p, %p, %p, %zu", (void *)g, (void *)from, (void *)to, n);
  return rt_ret(edges_change(g, from, to, NULL, n, false));
}

RT_EXPORT CUresult cuGraphDestroyNode(CUgraphNode n) {
  RT_TRACE("%p", (void *)n);
  if (!node_valid(n)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUgraph g = n->g;
  size_t at = index_of(g, n);
  for (size_t i = 0; i < g->n; i++) {
    CUgraphNode m = g->nodes[i];
    for (size_t j = 0; j < m->ndeps;)
      if (m->deps[j] == n) memmove(&m->deps[j], &m->deps[j + 1], (--m->ndeps - j) * sizeof *m->deps);
      else j++;
  }
  if (n->type == CU_GRAPH_NODE_TYPE_MEM_FREE)
    for (size_t i = 0; i < g->n; i++)
      if (g->nodes[i]->alloc && g->nodes[i]->alloc->ptr == n->op.mem.ptr)
        g->nodes[i]->alloc->freed_by_graph = false;
  memmove(&g->nodes[at], &g->nodes[at + 1], (g->n - at - 1) * sizeof *g->nodes);
  g->n--;
  node_free(n);
  return rt_ret(CUDA_SUCCESS);
}

/* ---- instantiation ------------------------------------------------------------ */
typedef struct flat {           /* the graph with child graphs expanded */
  exec_op *ops;
  size_t n, cap;
} flat;

/* Appends g's nodes; returns in *first..*first+count the range of g's own
 * nodes' entries (a child node's entry is an empty op joining its
 * subgraph: the child's roots depend on the child node's dependencies
 * through it, and its dependents depend on the child's nodes). */
static CUresult flatten(CUgraph g, CUgraphNode top, flat *F, size_t *map) {
  size_t base = F->n;
  /* first pass: one entry per node, so map[] has every index */
  for (size_t i = 0; i < g->n; i++) {
    exec_op *no = pw_vec_grow(F->ops, &F->cap, F->n + 1, sizeof *no);
    if (!no) return CUDA_ERROR_OUT_OF_MEMORY;
    F->ops = no;
    CUgraphNode n = g->nodes[i];
    exec_op *e = &F->ops[F->n];
    *e = (exec_op){.origin = n, .top = top ? top : n, .flat = F->n};
    e->op.type = n->type == CU_GRAPH_NODE_TYPE_GRAPH ? CU_GRAPH_NODE_TYPE_EMPTY : n->type;
    CUresult r = op_copy(&e->op, &n->op, n->type == CU_GRAPH_NODE_TYPE_KERNEL ? &e->argv : NULL);
    if (r != CUDA_SUCCESS) return r;
    if (n->type == CU_GRAPH_NODE_TYPE_GRAPH) e->op.type = CU_GRAPH_NODE_TYPE_EMPTY;
    if (n->alloc) {
      e->alloc = n->alloc;
      n->alloc->refs++;
    }
    map[i] = F->n++;
  }
  /* second pass: edges, and child graphs after their node */
  for (size_t i = 0; i < g->n; i++) {
    CUgraphNode n = g->nodes[i];
    size_t *d = malloc((n->ndeps ? n->ndeps : 1) * sizeof *d);
    if (!d) return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t j = 0; j < n->ndeps; j++) d[j] = map[index_of(g, n->deps[j])];
    F->ops[map[i]].deps = d;
    F->ops[map[i]].ndeps = n->ndeps;
  }
  for (size_t i = 0; i < g->n; i++) {
    CUgraphNode n = g->nodes[i];
    if (n->type != CU_GRAPH_NODE_TYPE_GRAPH) continue;
    size_t *cmap = malloc((n->child->n ? n->child->n : 1) * sizeof *cmap);
    if (!cmap) return CUDA_ERROR_OUT_OF_MEMORY;
    size_t cbase = F->n;
    CUresult r = flatten(n->child, top ? top : n, F, cmap);
    free(cmap);
    if (r != CUDA_SUCCESS) return r;
    size_t cend = F->n;
    /* the child's roots depend on the child node's entry ... */
    for (size_t k = cbase; k < cend; k++)
      if (!F->ops[k].ndeps) {
        size_t *d = realloc(F->ops[k].deps, sizeof *d);
        if (!d) return CUDA_ERROR_OUT_OF_MEMORY;
        d[0] = map[i];
        F->ops[k].deps = d;
        F->ops[k].ndeps = 1;
      }
    /* ... and the node's dependents on every entry of the child */
    for (size_t j = base; j < base + g->n; j++) {
      exec_op *e = &F->ops[j];
      bool dep = false;
      for (size_t k = 0; k < e->ndeps; k++) dep |= e->deps[k] == map[i];
      if (!dep) continue;
      size_t *d = realloc(e->deps, (e->ndeps + cend - cbase) * sizeof *d);
      if (!d) return CUDA_ERROR_OUT_OF_MEMORY;
      for (size_t k = cbase; k < cend; k++) d[e->ndeps++] = k;
      e->deps = d;
    }
  }
  return CUDA_SUCCESS;
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

static void ops_free(exec_op *ops, size_t n) {
  for (size_t i = 0; i < n; i++) {
    op_fini(&ops[i].op, &ops[i].argv);
    free(ops[i].deps);
    galloc_release(ops[i].alloc);
  }
  free(ops);
}

/* The launch list of g: flattened, then in topological order (Kahn; the
 * lowest flat index among the ready entries first). */
static CUresult build_list(CUgraph g, exec_op **out, size_t *nout, CUgraphNode *err) {
  flat F = {0};
  size_t *map = malloc((g->n ? g->n : 1) * sizeof *map);
  if (!map) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult r = flatten(g, NULL, &F, map);
  free(map);
  if (r != CUDA_SUCCESS) {
    ops_free(F.ops, F.n);
    return r;
  }
  size_t n = F.n;
  size_t *indeg = calloc(n ? n : 1, sizeof *indeg);
  bool *done = calloc(n ? n : 1, sizeof *done);
  exec_op *sorted = malloc((n ? n : 1) * sizeof *sorted);
  if (!indeg || !done || !sorted) {
    free(indeg), free(done), free(sorted);
    ops_free(F.ops, F.n);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  for (size_t i = 0; i < n; i++) {
    qsort(F.ops[i].deps, F.ops[i].ndeps, sizeof *F.ops[i].deps, cmp_size);
    indeg[i] = F.ops[i].ndeps;
  }
  size_t k = 0;
  while (k < n) {
    size_t pick = n;
    for (size_t i = 0; i < n && pick == n; i++)
      if (!done[i] && !indeg[i]) pick = i;
    if (pick == n) break;   /* a cycle */
    done[pick] = true;
    sorted[k++] = F.ops[pick];
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < F.ops[i].ndeps; j++)
        if (F.ops[i].deps[j] == pick) indeg[i]--;
  }
  if (k < n) {
    for (size_t i = 0; i < n && err; i++)
      if (!done[i]) {
        *err = F.ops[i].top;
        break;
      }
    free(indeg), free(done), free(sorted);
    ops_free(F.ops, F.n);
    return CUDA_ERROR_INVALID_VALUE;
  }
  free(indeg);
  free(done);
  free(F.ops);
  *out = sorted;
  *nout = n;
  return CUDA_SUCCESS;
}

static CUresult instantiate(CUgraphExec *out, CUgraph g, cuuint64_t flags, CUgraphNode *err,
                            CUgraphInstantiateResult *res) {
  if (res) *res = CUDA_GRAPH_INSTANTIATE_ERROR;
  if (!out || !graph_valid(g)) return CUDA_ERROR_INVALID_VALUE;
  const cuuint64_t known = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                           CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
                           CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |
                           CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
  if (flags & ~known) return CUDA_ERROR_INVALID_VALUE;
  if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) {
    if (res) *res = CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED;
    return CUDA_ERROR_NOT_SUPPORTED;   /* no device-side graph launch */
  }
  struct CUgraphExec_st *x = calloc(1, sizeof *x);
  if (!x) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult r = build_list(g, &x->ops, &x->n, err);
  if (r != CUDA_SUCCESS) {
    if (res && r == CUDA_ERROR_INVALID_VALUE) *res = CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE;
    free(x);
    return r;
  }
  x->flags = flags;
  x->uobj = uobj_copy(g->uobj, g->nuobj);
  x->nuobj = g->nuobj;
  if (!x->uobj || !rt_handle_add(rt_h_exec, x)) {
    if (x->uobj) uobj_release_all(x->uobj, x->nuobj);
    ops_free(x->ops, x->n);
    free(x);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (res) *res = CUDA_GRAPH_INSTANTIATE_SUCCESS;
  RT_LOG(rt_debug, "graph %p instantiated: %zu operations", (void *)g, x->n);
  *out = x;
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *out, CUgraph g, unsigned long long flags) {
  RT_TRACE("%p, %p, %#llx", (void *)out, (void *)g, flags);
  return rt_ret(instantiate(out, g, flags, NULL, NULL));
}

/* CUDA 10 and 11: an error node and a log buffer. */
RT_EXPORT CUresult rt_cuGraphInstantiate_v1(CUgraphExec *out, CUgraph g, CUgraphNode *err,
                                            char *log, size_t logsize) __asm__("cuGraphInstantiate");
RT_EXPORT CUresult rt_cuGraphInstantiate_v1(CUgraphExec *out, CUgraph g, CUgraphNode *err,
                                            char *log, size_t logsize) {
  RT_TRACE("%p, %p, %p, %p, %zu", (void *)out, (void *)g, (void *)err, (void *)log, logsize);
  if (err) *err = NULL;
  CUresult r = instantiate(out, g, 0, err, NULL);
  if (log && logsize) snprintf(log, logsize, "%s", r == CUDA_SUCCESS ? "" : "the graph has a cycle");
  return rt_ret(r);
}
RT_EXPORT CUresult rt_cuGraphInstantiate_v2(CUgraphExec *out, CUgraph g, CUgraphNode *err,
                                            char *log, size_t logsize) __asm__("cuGraphInstantiate_v2");
RT_EXPORT CUresult rt_cuGraphInstantiate_v2(CUgraphExec *out, CUgraph g, CUgraphNode *err,
                                            char *log, size_t logsize) {
  return rt_cuGraphInstantiate_v1(out, g, err, log, logsize);
}

RT_EXPORT CUresult cuGraphLaunch(CUgraphExec x, CUstream s);

RT_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *out, CUgraph g,
                                                CUDA_GRAPH_INSTANTIATE_PARAMS *p) {
  RT_TRACE("%p, %p, %p", (void *)out, (void *)g, (void *)p);
  if (!p) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  p->hErrNode_out = NULL;
  CUresult r = instantiate(out, g, p->flags, &p->hErrNode_out, &p->result_out);
  if (r == CUDA_SUCCESS && (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)) {
    CUresult u;
    rt_stream_backend(p->hUploadStream, &u);   /* nothing to upload: the list is on the host */
    if (u != CUDA_SUCCESS) {
      cuGraphExecDestroy(*out);
      *out = NULL;
      r = u;
    }
  }
  return rt_ret(r);
}

RT_EXPORT CUresult cuGraphExecGetFlags(CUgraphExec x, cuuint64_t *flags) {
  RT_TRACE("%p, %p", (void *)x, (void *)flags);
  if (!flags) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!exec_valid(x)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  *flags = x->flags;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuGraphExecDestroy(CUgraphExec x) {
  RT_TRACE("%p", (void *)x);
  if (!rt_handle_remove(rt_h_exec, x)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  ops_free(x->ops, x->n);
  uobj_release_all(x->uobj, x->nuobj);
  free(x);
  return rt_ret(CUDA_SUCCESS);
}

/* A graph of x's launch list as it is now (parameters set since, disabled
 * entries empty), for a launch into a capturing stream. */
static CUresult graph_of_exec(CUgraphExec x, CUgraph *out) {
  CUgraph g;
  CUresult r = graph_new(&g);
  if (r != CUDA_SUCCESS) return r;
  size_t maxflat = 0;
  for (size_t i = 0; i < x->n; i++)
    if (x->ops[i].flat > maxflat) maxflat = x->ops[i].flat;
  CUgraphNode *byflat = calloc(maxflat + 1, sizeof *byflat);
  CUgraphNode *deps = malloc((x->n ? x->n : 1) * sizeof *deps);
  if (!byflat || !deps) r = CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < x->n && r == CUDA_SUCCESS; i++) {
    const exec_op *e = &x->ops[i];
    size_t nd = 0;
    for (size_t j = 0; j < e->ndeps; j++)   /* earlier in topological order */
      if (byflat[e->deps[j]]) deps[nd++] = byflat[e->deps[j]];
    bool runs = !e->disabled && e->op.type != CU_GRAPH_NODE_TYPE_MEM_ALLOC &&
                e->op.type != CU_GRAPH_NODE_TYPE_MEM_FREE;
    CUgraphNode n;
    r = node_new(g, deps, nd, runs ? e->op.type : CU_GRAPH_NODE_TYPE_EMPTY, &n);
    if (r != CUDA_SUCCESS) break;
    if (runs) r = set_node_params(n, &e->op);
    if (e->alloc) {   /* the memory stays while this graph refers to it */
      n->alloc = e->alloc;
      e->alloc->refs++;
    }
    byflat[e->flat] = n;
  }
  free(byflat);
  free(deps);
  if (r != CUDA_SUCCESS) {
    graph_free(g);
    return r;
  }
  *out = g;
  return CUDA_SUCCESS;
}

/* cuGraphLaunch into a capturing stream: a child graph node of x's graph
 * (CUDA records the launch of an executable graph the same way). */
static CUresult capture_exec(CUgraphExec x, CUstream s, bool *captured) {
  *captured = false;
  if (is_default(s)) return CUDA_SUCCESS;
  pthread_mutex_lock(&CAP.lock);
  cap_stream *cs = find_stream(s);
  CUresult r = CUDA_SUCCESS;
  if (cs) {
    *captured = true;
    CUgraph child;
    if (cs->c->invalid) r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    else r = graph_of_exec(x, &child);
    if (r == CUDA_SUCCESS) {
      CUgraphNode n;
      r = node_new(cs->c->g, cs->deps, cs->ndeps, CU_GRAPH_NODE_TYPE_GRAPH, &n);
      if (r == CUDA_SUCCESS) {
        n->child = child;
        r = set_deps(cs, &n, 1);
      } else {
        graph_free(child);
      }
    }
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) invalidate(cs->c);
  }
  pthread_mutex_unlock(&CAP.lock);
  return r;
}

/* The graph's operations in order, on s.  The list is read under no lock:
 * like CUDA, an executable graph is not to be updated while it launches
 * from another thread. */
RT_EXPORT CUresult cuGraphLaunch(CUgraphExec x, CUstream s) {
  RT_TRACE("%p, %p", (void *)x, (void *)s);
  if (!exec_valid(x)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  rt_stream_backend(s, &r);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (rt_capturing()) {
    bool captured;
    r = capture_exec(x, s, &captured);
    if (r != CUDA_SUCCESS || captured) return rt_ret(r);
  }
  for (size_t i = 0; i < x->n && r == CUDA_SUCCESS; i++)
    if (!x->ops[i].disabled) r = op_run(&x->ops[i].op, s);
  return rt_ret(r);
}

RT_EXPORT CUresult cuGraphUpload(CUgraphExec x, CUstream s) {
  RT_TRACE("%p, %p", (void *)x, (void *)s);
  if (!exec_valid(x)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r;
  rt_stream_backend(s, &r);
  return rt_ret(r);   /* the launch list is the host's: nothing to upload */
}

/* ---- updating an executable graph ---------------------------------------- */
/* Every entry of x that came from node n (a node of the instantiated graph
 * or of a child graph's clone). */
static exec_op *exec_find(CUgraphExec x, CUgraphNode n, size_t *from) {
  for (size_t i = *from; i < x->n; i++)
    if (x->ops[i].origin == n) {
      *from = i + 1;
      return &x->ops[i];
    }
  return NULL;
}

static CUresult exec_set(CUgraphExec x, CUgraphNode n, const rt_op *op) {
  if (!exec_valid(x) || !node_valid(n)) return CUDA_ERROR_INVALID_VALUE;
  size_t at = 0;
  exec_op *e = exec_find(x, n, &at);
  if (!e || e->op.type != op->type) return CUDA_ERROR_INVALID_VALUE;
  rt_op c;
  void **argv = NULL;
  CUresult r = op_copy(&c, op, op->type == CU_GRAPH_NODE_TYPE_KERNEL ? &argv : NULL);
  if (r != CUDA_SUCCESS) return r;
  op_fini(&e->op, &e->argv);
  e->op = c;
  e->argv = argv;
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuGraphExecKernelNodeSetParams(CUgraphExec x, CUgraphNode n,
                                                  const CUDA_KERNEL_NODE_PARAMS *p) {
  RT_TRACE("%p, %p, %p", (void *)x, (void *)n, (const void *)p);
  rt_op op;
  CUresult r = kernel_params_in(p, &op);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  r = exec_set(x, n, &op);
  free(op.k.buf);
  return rt_ret(r);
}
RT_EXPORT CUresult rt_cuGraphExecKernelNodeSetParams_v1(CUgraphExec x, CUgraphNode n,
                                                        const CUDA_KERNEL_NODE_PARAMS_v1 *p)
    __asm__("cuGraphExecKernelNodeSetParams");
RT_EXPORT CUresult rt_cuGraphExecKernelNodeSetParams_v1(CUgraphExec x, CUgraphNode n,
                                                        const CUDA_KERNEL_NODE_PARAMS_v1 *p) {
  if (!p) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUDA_KERNEL_NODE_PARAMS q = kernel_v1(p);
  return cuGraphExecKernelNodeSetParams(x, n, &q);
}
RT_EXPORT CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec x, CUgraphNode n,
                                                  const CUDA_MEMCPY3D *p, CUcontext ctx) {
  RT_TRACE("%p, %p, %p, %p", (void *)x, (void *)n, (const void *)p, (void *)ctx);
  if (!p) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  rt_op op = {.type = CU_GRAPH_NODE_TYPE_MEMCPY, .cp = *p};
  return rt_ret(exec_set(x, n, &op));
}
RT_EXPORT CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec x, CUgraphNode n,
                                                  const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx) {
  RT_TRACE("%p, %p, %p, %p", (void *)x, (void *)n, (const void *)p, (void *)ctx);
  CUresult r = memset_check(p);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  rt_op op = {.type = CU_GRAPH_NODE_TYPE_MEMSET, .ms = *p};
  return rt_ret(exec_set(x, n, &op));
}
RT_EXPORT CUresult cuGraphExecHostNodeSetParams(CUgraphExec x, CUgraphNode n,
                                                const CUDA_HOST_NODE_PARAMS *p) {
  RT_TRACE("%p, %p, %p", (void *)x, (void *)n, (const void *)p);
  if (!p || !p->fn) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  rt_op op = {.type = CU_GRAPH_NODE_TYPE_HOST, .host = *p};
  return rt_ret(exec_set(x, n, &op));
}
RT_EXPORT CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec x, CUgraphNode n, CUevent e) {
  RT_TRACE("%p, %p, %p", (void *)x, (void *)n, (void *)e);
  if (!rt_handle_valid(rt_h_event, e)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  rt_op op = {.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD, .ev = e};
  return rt_ret(exec_set(x, n, &op));
}
RT_EXPORT CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec x, CUgraphNode n, CUevent e) {
  RT_TRACE("%p, %p, %p", (void *)x, (void *)n, (void *)e);
  if (!rt_handle_valid(rt_h_event, e)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  rt_op op = {.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT, .ev = e};
  return rt_ret(exec_set(x, n, &op));
}

RT_EXPORT CUresult cuGraphNodeSetEnabled(CUgraphExec x, CUgraphNode n, unsigned int on) {
  RT_TRACE("%p, %p, %u", (void *)x, (void *)n, on);
  if (!exec_valid(x) || !node_valid(n)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  size_t at = 0;
  exec_op *e = exec_find(x, n, &at);
  /* kernel, memcpy and memset nodes only (CUDA Driver API) */
  if (!e || (e->op.type != CU_GRAPH_NODE_TYPE_KERNEL && e->op.type != CU_GRAPH_NODE_TYPE_MEMCPY &&
             e->op.type != CU_GRAPH_NODE_TYPE_MEMSET))
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  e->disabled = !on;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuGraphNodeGetEnabled(CUgraphExec x, CUgraphNode n, unsigned int *on) {
  RT_TRACE("%p, %p, %p", (void *)x, (void *)n, (void *)on);
  if (!on || !exec_valid(x) || !node_valid(n)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  size_t at = 0;
  exec_op *e = exec_find(x, n, &at);
  if (!e) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *on = !e->disabled;
  return rt_ret(CUDA_SUCCESS);
}

/* cuGraphExecUpdate: g must have x's shape (same flattened entries in the
 * same order, the same types and the same edges); then every entry takes
 * the parameters of g's node at its place. */
static CUresult exec_update(CUgraphExec x, CUgraph g, CUgraphExecUpdateResultInfo *info) {
  CUgraphExecUpdateResultInfo dummy;
  if (!info) info = &dummy;
  *info = (CUgraphExecUpdateResultInfo){.result = CU_GRAPH_EXEC_UPDATE_ERROR};
  if (!exec_valid(x) || !graph_valid(g)) return CUDA_ERROR_INVALID_VALUE;
  exec_op *ops;
  size_t n;
  CUresult r = build_list(g, &ops, &n, NULL);
  if (r != CUDA_SUCCESS) return r;
  CUgraphExecUpdateResult res = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  if (n != x->n) res = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
  for (size_t i = 0; i < n && res == CU_GRAPH_EXEC_UPDATE_SUCCESS; i++) {
    exec_op *a = &x->ops[i], *b = &ops[i];
    if (a->flat != b->flat || a->ndeps != b->ndeps ||
        (a->ndeps && memcmp(a->deps, b->deps, a->ndeps * sizeof *a->deps)))
      res = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    else if (a->op.type != b->op.type)
      res = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
    else if ((a->op.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC || a->op.type == CU_GRAPH_NODE_TYPE_MEM_FREE) &&
             a->op.mem.ptr != b->op.mem.ptr)
      res = CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
    if (res != CU_GRAPH_EXEC_UPDATE_SUCCESS) info->errorNode = b->top;
  }
  if (res != CU_GRAPH_EXEC_UPDATE_SUCCESS) {
    info->result = res;
    ops_free(ops, n);
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  }
  /* the entries keep their node handles (SetParams names the nodes of the
   * graph x was instantiated from) and take the new parameters */
  for (size_t i = 0; i < n; i++) {
    exec_op *a = &x->ops[i], *b = &ops[i];
    op_fini(&a->op, &a->argv);
    a->op = b->op;
    a->argv = b->argv;
    b->op.type = CU_GRAPH_NODE_TYPE_EMPTY;
    b->argv = NULL;
  }
  ops_free(ops, n);
  info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuGraphExecUpdate(CUgraphExec x, CUgraph g, CUgraphExecUpdateResultInfo *info) {
  RT_TRACE("%p, %p, %p", (void *)x, (void *)g, (void *)info);
  return rt_ret(exec_update(x, g, info));
}

RT_EXPORT CUresult rt_cuGraphExecUpdate_v1(CUgraphExec x, CUgraph g, CUgraphNode *err,
                                           CUgraphExecUpdateResult *res) __asm__("cuGraphExecUpdate");
RT_EXPORT CUresult rt_cuGraphExecUpdate_v1(CUgraphExec x, CUgraph g, CUgraphNode *err,
                                           CUgraphExecUpdateResult *res) {
  RT_TRACE("%p, %p, %p, %p", (void *)x, (void *)g, (void *)err, (void *)res);
  CUgraphExecUpdateResultInfo info;
  CUresult r = exec_update(x, g, &info);
  if (err) *err = info.errorNode;
  if (res) *res = info.result;
  return rt_ret(r);
}

RT_EXPORT CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec x, CUgraphNode n, CUgraph child) {
  RT_TRACE("%p, %p, %p", (void *)x, (void *)n, (void *)child);
  if (!exec_valid(x) || !node_valid(n) || n->type != CU_GRAPH_NODE_TYPE_GRAPH || !graph_valid(child))
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  /* the entries that came from n's child graph, in order, take the new
   * child's (same shape required, as for cuGraphExecUpdate) */
  exec_op *ops;
  size_t cn;
  CUresult r = build_list(child, &ops, &cn, NULL);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  exec_op **mine = malloc((x->n ? x->n : 1) * sizeof *mine);
  size_t k = 0;
  if (mine)
    for (size_t i = 0; i < x->n; i++)
      if (x->ops[i].top == n && x->ops[i].origin != n) mine[k++] = &x->ops[i];
  if (!mine) r = CUDA_ERROR_OUT_OF_MEMORY;
  else if (k != cn) r = CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; r == CUDA_SUCCESS && i < cn; i++)
    if (mine[i]->op.type != ops[i].op.type) r = CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; r == CUDA_SUCCESS && i < cn; i++) {
    op_fini(&mine[i]->op, &mine[i]->argv);
    mine[i]->op = ops[i].op;
    mine[i]->argv = ops[i].argv;
    ops[i].op.type = CU_GRAPH_NODE_TYPE_EMPTY;
    ops[i].argv = NULL;
  }
  free(mine);
  ops_free(ops, cn);
  return rt_ret(r);
}

/* ---- cuGraphDebugDotPrint ------------------------------------------------- */
static const char *type_name(CUgraphNodeType t) {
  switch (t) {
  case CU_GRAPH_NODE_TYPE_KERNEL: return "kernel";
  case CU_GRAPH_NODE_TYPE_MEMCPY: return "memcpy";
  case CU_GRAPH_NODE_TYPE_MEMSET: return "memset";
  case CU_GRAPH_NODE_TYPE_HOST: return "host";
  case CU_GRAPH_NODE_TYPE_GRAPH: return "graph";
  case CU_GRAPH_NODE_TYPE_EMPTY: return "empty";
  case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return "event_wait";
  case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return "event_record";
  case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return "mem_alloc";
  case CU_GRAPH_NODE_TYPE_MEM_FREE: return "mem_free";
  default: return "other";
  }
}

static void dot_graph(FILE *f, CUgraph g, const char *prefix, bool verbose) {
  for (size_t i = 0; i < g->n; i++) {
    CUgraphNode n = g->nodes[i];
    fprintf(f, "  \"%s%zu\" [shape=box, label=\"%zu: %s", prefix, i, i, type_name(n->type));
    if (n->type == CU_GRAPH_NODE_TYPE_KERNEL) {
      fprintf(f, "\\n%s", rt_func_name(n->op.k.f));
      if (verbose)
        fprintf(f, "\\ngrid (%u,%u,%u) block (%u,%u,%u) shared %u", n->op.k.grid[0], n->op.k.grid[1],
                n->op.k.grid[2], n->op.k.block[0], n->op.k.block[1], n->op.k.block[2], n->op.k.shared);
    } else if (n->type == CU_GRAPH_NODE_TYPE_MEMSET && verbose) {
      fprintf(f, "\\n%#llx = %#x x %zu x %zu", (unsigned long long)n->op.ms.dst, n->op.ms.value,
              n->op.ms.width, n->op.ms.height);
    } else if (n->type == CU_GRAPH_NODE_TYPE_MEMCPY && verbose) {
      fprintf(f, "\\n%zu x %zu x %zu bytes", n->op.cp.WidthInBytes, n->op.cp.Height, n->op.cp.Depth);
    } else if ((n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC || n->type == CU_GRAPH_NODE_TYPE_MEM_FREE)) {
      fprintf(f, "\\n%#llx", (unsigned long long)n->op.mem.ptr);
    }
    fprintf(f, "\"];\n");
    for (size_t j = 0; j < n->ndeps; j++)
      fprintf(f, "  \"%s%zu\" -> \"%s%zu\";\n", prefix, index_of(g, n->deps[j]), prefix, i);
    if (n->child) {
      char sub[256];
      snprintf(sub, sizeof sub, "%s%zu.", prefix, i);
      fprintf(f, "  subgraph \"cluster_%s%zu\" {\n  label=\"child graph of %zu\";\n", prefix, i, i);
      dot_graph(f, n->child, sub, verbose);
      fprintf(f, "  }\n");
    }
  }
}

RT_EXPORT CUresult cuGraphDebugDotPrint(CUgraph g, const char *path, unsigned int flags) {
  RT_TRACE("%p, %s, %#x", (void *)g, path ? path : "(null)", flags);
  if (!graph_valid(g) || !path) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  FILE *f = fopen(path, "w");
  if (!f) return rt_ret(CUDA_ERROR_OPERATING_SYSTEM);
  fprintf(f, "digraph \"graph %p\" {\n", (void *)g);
  dot_graph(f, g, "n", flags != 0);
  fprintf(f, "}\n");
  bool ok = !ferror(f);
  ok &= fclose(f) == 0;
  return rt_ret(ok ? CUDA_SUCCESS : CUDA_ERROR_OPERATING_SYSTEM);
}

/* ---- user objects, graph memory --------------------------------------------- */
RT_EXPORT CUresult cuUserObjectCreate(CUuserObject *out, void *ptr, CUhostFn destroy,
                                      unsigned int refs, unsigned int flags) {
  RT_TRACE("%p, %p, %p, %u, %u", (void *)out, ptr, (void *)(uintptr_t)destroy, refs, flags);
  if (!out || !destroy || !refs || flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC)
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  struct CUuserObject_st *o = malloc(sizeof *o);
  if (!o) return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  atomic_init(&o->refs, refs);
  o->ptr = ptr;
  o->destroy = destroy;
  if (!rt_handle_add(rt_h_user_object, o)) {
    free(o);
    return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  }
  *out = o;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuUserObjectRetain(CUuserObject o, unsigned int n) {
  RT_TRACE("%p, %u", (void *)o, n);
  if (!n || !rt_handle_valid(rt_h_user_object, o)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  atomic_fetch_add(&o->refs, n);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuUserObjectRelease(CUuserObject o, unsigned int n) {
  RT_TRACE("%p, %u", (void *)o, n);
  if (!n || !rt_handle_valid(rt_h_user_object, o) || atomic_load(&o->refs) < n)
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  uobj_release(o, n);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuGraphRetainUserObject(CUgraph g, CUuserObject o, unsigned int n,
                                           unsigned int flags) {
  RT_TRACE("%p, %p, %u, %u", (void *)g, (void *)o, n, flags);
  if (!n || !graph_valid(g) || !rt_handle_valid(rt_h_user_object, o) ||
      (flags & ~(unsigned)CU_GRAPH_USER_OBJECT_MOVE))
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  size_t i = 0;
  while (i < g->nuobj && g->uobj[i].o != o) i++;
  if (i == g->nuobj) {
    uobj_ref *nv = realloc(g->uobj, (g->nuobj + 1) * sizeof *nv);
    if (!nv) return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
    g->uobj = nv;
    g->uobj[g->nuobj++] = (uobj_ref){o, 0};
  }
  g->uobj[i].n += n;
  /* MOVE: the caller's references become the graph's */
  if (!(flags & CU_GRAPH_USER_OBJECT_MOVE)) atomic_fetch_add(&o->refs, n);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuGraphReleaseUserObject(CUgraph g, CUuserObject o, unsigned int n) {
  RT_TRACE("%p, %p, %u", (void *)g, (void *)o, n);
  if (!n || !graph_valid(g) || !rt_handle_valid(rt_h_user_object, o)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  size_t i = 0;
  while (i < g->nuobj && g->uobj[i].o != o) i++;
  if (i == g->nuobj || g->uobj[i].n < n) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  g->uobj[i].n -= n;
  if (!g->uobj[i].n) g->uobj[i] = g->uobj[--g->nuobj];
  uobj_release(o, n);
  return rt_ret(CUDA_SUCCESS);
}

/* Graph memory: the memory nodes' allocations that exist (made when the
 * node is added, released with the last graph or executable graph that
 * holds them); nothing is kept back, so reserved is used. */
RT_EXPORT CUresult cuDeviceGetGraphMemAttribute(CUdevice dev, CUgraphMem_attribute a, void *v) {
  RT_TRACE("%d, %d, %p", dev, (int)a, v);
  if (!v) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  switch (a) {
  case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
  case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT: *(cuuint64_t *)v = atomic_load(&graph_mem); break;
  case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
  case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: *(cuuint64_t *)v = atomic_load(&graph_mem_high); break;
  default: return rt_ret(CUDA_ERROR_INVALID_VALUE);
  }
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuDeviceSetGraphMemAttribute(CUdevice dev, CUgraphMem_attribute a, void *v) {
  RT_TRACE("%d, %d, %p", dev, (int)a, v);
  if (!v) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  /* only the high water marks, and only to zero (reset to the current) */
  if ((a != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH && a != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH) ||
      *(cuuint64_t *)v)
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  atomic_store(&graph_mem_high, atomic_load(&graph_mem));
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuDeviceGraphMemTrim(CUdevice dev) {
  RT_TRACE("%d", dev);
  return rt_ret(rt_check_device(dev));   /* nothing kept back to trim */
}

/* ---- kernel node attributes ------------------------------------------------ */
static bool kernel_node(CUgraphNode n) { return node_valid(n) && n->type == CU_GRAPH_NODE_TYPE_KERNEL; }

RT_EXPORT CUresult cuGraphKernelNodeGetAttribute(CUgraphNode n, CUkernelNodeAttrID a,
                                                 CUkernelNodeAttrValue *v) {
  RT_TRACE("%p, %d, %p", (void *)n, (int)a, (void *)v);
  if (!v || !kernel_node(n) || (unsigned)a >= RT_NODE_ATTRS) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *v = n->attrs[a];
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuGraphKernelNodeSetAttribute(CUgraphNode n, CUkernelNodeAttrID a,
                                                 const CUkernelNodeAttrValue *v) {
  RT_TRACE("%p, %d, %p", (void *)n, (int)a, (const void *)v);
  if (!v || !kernel_node(n) || (unsigned)a >= RT_NODE_ATTRS) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  /* clusters of one CTA only, as cuLaunchKernelEx (rt_module.c, cluster_check) */
  if (a == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION && (!v->clusterDim.x || !v->clusterDim.y || !v->clusterDim.z))
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (a == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION &&
      (uint64_t)v->clusterDim.x * v->clusterDim.y * v->clusterDim.z > 1)
    return rt_ret(CUDA_ERROR_INVALID_CLUSTER_SIZE);
  n->attrs[a] = *v;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuGraphKernelNodeCopyAttributes(CUgraphNode dst, CUgraphNode src) {
  RT_TRACE("%p, %p", (void *)dst, (void *)src);
  if (!kernel_node(dst) || !kernel_node(src)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  memcpy(dst->attrs, src->attrs, sizeof dst->attrs);
  return rt_ret(CUDA_SUCCESS);
}
