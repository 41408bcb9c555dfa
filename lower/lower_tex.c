/* lower/lower_tex.c: textures and surfaces (PTX ISA 9.7.10 tex tld4 txq,
 * 9.7.11 suld sust sured suq) to plain IR: loads of ptxwave's descriptor
 * (tex_desc.def: the handle is its device address), coordinate arithmetic,
 * global loads and stores, format conversion and filtering in f32.
 * docs/lowering.md, "Textures", has the design and why it is software.
 *
 * The descriptor's fields are runtime values, so one expansion serves every
 * texture: each choice (address mode, filter, channel format, read mode) is
 * computed both ways and picked with selp, and the loads of a texel are
 * guarded by its format (8/16/32-bit channels) and by its presence, so no
 * load leaves the resource.  The sampling follows the CUDA Programming
 * Guide, "Texture Fetching":
 *   coordinates   x = normalized ? u * N : u
 *   point         i = floor(x)
 *   linear        xB = x - 0.5, i = floor(xB), alpha = frac(xB) held with 8
 *                 fractional bits (9-bit fixed point): round(frac * 256)/256
 *                 tex = sum over the 2^D corners of (product of (1-alpha_d)
 *                 or alpha_d) * T[corner], corners in x-fastest order, each
 *                 product and sum an f32 op rounded to nearest
 *   addressing    per texel index and dimension: clamp to [0, N-1]; wrap
 *                 i mod N; mirror (i mod 2N, reflected); border: the border
 *                 colour for an index outside [0, N)
 *   read mode     integer channels as normalized floats: u / (2^bits - 1),
 *                 max(s / (2^(bits-1) - 1), -1); float channels as they are
 * Layers (a1d, a2d) are clamped to [0, layers-1] and never filtered.
 * Cube maps (cube, acube): the direction's major axis picks the face (the
 * guide's cubemap table, cube_face), the face's coordinates are normalized
 * and sampled as 2D on slice face (+ 6 * layer), each face filtered and
 * addressed on its own (not seamless).  Multisample (2dms, a2dms): one
 * sample per texel, sample 0 is the texel and others read zeros.
 * Integer coordinates (tex.*.s32 coordinates: tex1Dfetch) are unnormalized
 * and point sampled.  Missing channels read 0.
 * Surfaces (9.7.11): the x coordinate is in bytes, y and z in rows and
 * slices; .trap traps outside the surface, .clamp clamps the access into
 * it, .zero reads zeros and drops stores.  Only the .b (raw bits) forms.
 * Not lowered (an error naming the instruction): .texref/.surfref
 * variables (texture references, removed in CUDA 12), the independent
 * texture mode (separate samplers), the formatted surface forms (.p), f16
 * results.
 */
#include "lower_internal.h"
#include "tex_desc.h"

#define S32 ir_type_s32
#define U32 ir_type_u32
#define U64 ir_type_u64
#define F32 ir_type_f32
#define PRED ir_type_pred

typedef struct tex_state {
  const lower_tex_options *opt;
} tex_state;

/* One expansion: the builder, the handle, and the fields loaded so far
 * (each field is loaded once, in the block of the instruction). */
typedef struct tex_ctx {
  ir_builder *b;
  ir_value *h;
  ir_value *field[LOWER_TEX_DESC_BYTES / 4];
} tex_ctx;

/* The format facts of one descriptor, computed once per expansion. */
typedef struct tex_fmt {
  ir_value *is8, *is16, *is32;   /* channel width */
  ir_value *sint, *flt;          /* channel kind */
  ir_value *readf;               /* read mode: normalized float */
  ir_value *nch;                 /* channel count (u32) */
  ir_value *cbytes;              /* bytes per channel (u64) */
  ir_value *ebytes;              /* bytes per texel (u64) */
  ir_value *shift;               /* 32 - bits: sign extension by shifts */
  ir_value *umax, *smax;         /* 2^bits - 1, 2^(bits-1) - 1 as f32 */
  ir_value *border[4];
} tex_fmt;

static bool want(const ir_instr *i, void *data) {
  (void)data;
  switch ((ir_op)i->op) {
  case ir_op_tex: case ir_op_tld4: case ir_op_txq: case ir_op_suld: case ir_op_sust:
  case ir_op_sured: case ir_op_suq:
    return true;
  default:
    return false;
  }
}

/* Eliminates the texture and surface ops; builds blocks (filtering,
 * bounds). */
const lower_contract lower_tex_contract = {
    .pass = "lower_tex",
    .ops = (const ir_op[]){ir_op_tex, ir_op_tld4, ir_op_txq, ir_op_suld, ir_op_sust, ir_op_sured, ir_op_suq,
                           ir_op_count},
    .preserves = 0,
};

/* ---- small constructors ------------------------------------------------- */
static ir_value *si(ir_builder *b, int32_t v) { return ir_imm(b, S32, (uint32_t)v); }
static ir_value *ui(ir_builder *b, uint32_t v) { return ir_imm(b, U32, v); }
static ir_value *fi(ir_builder *b, float f) { return ir_imm_f32(b, f); }
static ir_value *pred_true(ir_builder *b) { return ir_imm(b, PRED, 1); }

static ir_value *cvt(ir_builder *b, ir_type to, ir_type from, ir_value *x, ir_rnd rnd) {
  return ir_convert(b, to, from, x, .rnd = (uint8_t)rnd);
}
/* The same bits as another type of the same width. */
static ir_value *as(ir_builder *b, ir_type t, ir_value *x) {
  return x->type == t ? x : ir_copy(b, t, x);
}
static ir_value *add(ir_builder *b, ir_type t, ir_value *x, ir_value *y) { return lower_alu(b, ir_op_add, t, x, y); }
static ir_value *sub(ir_builder *b, ir_type t, ir_value *x, ir_value *y) { return lower_alu(b, ir_op_sub, t, x, y); }
static ir_value *mul(ir_builder *b, ir_type t, ir_value *x, ir_value *y) { return lower_alu(b, ir_op_mul, t, x, y); }
static ir_value *fadd(ir_builder *b, ir_value *x, ir_value *y) { return ir_alu2(b, ir_op_add, F32, x, y, .rnd = IR_RND_RN); }
static ir_value *fsub(ir_builder *b, ir_value *x, ir_value *y) { return ir_alu2(b, ir_op_sub, F32, x, y, .rnd = IR_RND_RN); }
static ir_value *fmul(ir_builder *b, ir_value *x, ir_value *y) { return ir_alu2(b, ir_op_mul, F32, x, y, .rnd = IR_RND_RN); }
static ir_value *smin(ir_builder *b, ir_value *x, ir_value *y) { return ir_alu2(b, ir_op_min, S32, x, y); }
static ir_value *smax(ir_builder *b, ir_value *x, ir_value *y) { return ir_alu2(b, ir_op_max, S32, x, y); }
static ir_value *cmp(ir_builder *b, ir_cmp c, ir_type t, ir_value *x, ir_value *y) { return lower_setp(b, c, t, x, y); }
static ir_value *sel(ir_builder *b, ir_type t, ir_value *x, ir_value *y, ir_value *p) { return lower_selp(b, t, x, y, p); }
static ir_value *pand(ir_builder *b, ir_value *x, ir_value *y) {
  uint64_t c;
  if (lower_const(x, &c)) return c ? y : x;
  if (lower_const(y, &c)) return c ? x : y;
  return ir_and(b, PRED, x, y);
}
static ir_value *por(ir_builder *b, ir_value *x, ir_value *y) { return ir_or(b, PRED, x, y); }
static ir_value *u64_of(ir_builder *b, ir_value *x32) { return cvt(b, U64, U32, as(b, U32, x32), IR_RND_NONE); }

/* A descriptor field (tex_desc.def), loaded once per expansion. */
static ir_value *fld(tex_ctx *c, unsigned off, ir_type t) {
  if (c->field[off / 4]) return c->field[off / 4];
  ir_instr *l = ir_build_mem(c->b, ir_op_ld, t, c->h, off, 0, NULL, 1, IR_MODS(.space = IR_SPACE_GLOBAL));
  return c->field[off / 4] = l->dst[0];
}
#define FLD(c, name, t) fld((c), LOWER_TEX_OFF_##name, (t))
static ir_value *fld_s32(tex_ctx *c, unsigned off) { return as(c->b, S32, fld(c, off, U32)); }
static ir_value *is(tex_ctx *c, unsigned off, uint32_t v) { return cmp(c->b, IR_CMP_EQ, U32, fld(c, off, U32), ui(c->b, v)); }

/* A guarded load of one channel: 0 when p is false. */
static ir_value *ld_guarded(ir_builder *b, ir_type t, ir_value *addr, ir_value *p) {
  ir_type d = U32;
  ir_instr *l = ir_build(b, ir_op_ld, t, 1, &addr, 1, &d, IR_MODS(.space = IR_SPACE_GLOBAL));
  ir_value *zero = ui(b, 0);
  ir_instr_set_guard(b, l, p, false, &zero);
  return l->dst[0];
}

static void fmt_init(tex_ctx *c, tex_fmt *f) {
  ir_builder *b = c->b;
  f->is8 = is(c, LOWER_TEX_OFF_chan_bits, 8);
  f->is16 = is(c, LOWER_TEX_OFF_chan_bits, 16);
  f->is32 = is(c, LOWER_TEX_OFF_chan_bits, 32);
  f->sint = is(c, LOWER_TEX_OFF_chan_kind, LOWER_TEX_CHAN_SINT);
  f->flt = is(c, LOWER_TEX_OFF_chan_kind, LOWER_TEX_CHAN_FLOAT);
  f->readf = cmp(b, IR_CMP_NE, U32, FLD(c, read_float, U32), ui(b, 0));
  f->nch = FLD(c, channels, U32);
  ir_value *bits = FLD(c, chan_bits, U32);
  f->cbytes = u64_of(b, lower_alu(b, ir_op_shr, U32, bits, ui(b, 3)));
  f->ebytes = u64_of(b, FLD(c, elem_bytes, U32));
  f->shift = sub(b, U32, ui(b, 32), bits);
  f->umax = sel(b, F32, fi(b, 255.0f), sel(b, F32, fi(b, 65535.0f), fi(b, 4294967295.0f), f->is16), f->is8);
  f->smax = sel(b, F32, fi(b, 127.0f), sel(b, F32, fi(b, 32767.0f), fi(b, 2147483647.0f), f->is16), f->is8);
  for (unsigned k = 0; k < 4; k++) f->border[k] = fld(c, LOWER_TEX_OFF_border0 + 4 * k, F32);
}

/* ---- addressing ----------------------------------------------------------- */
/* Texel index i (s32) of a dimension of n texels under address mode `mode`
 * (lower_tex_addr): the index to read, and in *ok whether the texel is inside
 * (false only for border mode outside [0, n)). */
static ir_value *address(ir_builder *b, ir_value *i, ir_value *n, ir_value *mode, ir_value **ok) {
  ir_value *last = sub(b, S32, n, si(b, 1));
  ir_value *clamp = smin(b, smax(b, i, si(b, 0)), last);
  ir_value *r = ir_alu2(b, ir_op_rem, S32, i, n);
  ir_value *wrap = sel(b, S32, add(b, S32, r, n), r, cmp(b, IR_CMP_LT, S32, r, si(b, 0)));
  ir_value *n2 = add(b, S32, n, n);
  ir_value *r2 = ir_alu2(b, ir_op_rem, S32, i, n2);
  r2 = sel(b, S32, add(b, S32, r2, n2), r2, cmp(b, IR_CMP_LT, S32, r2, si(b, 0)));
  ir_value *mirror = sel(b, S32, sub(b, S32, sub(b, S32, n2, si(b, 1)), r2), r2, cmp(b, IR_CMP_GE, S32, r2, n));
  ir_value *idx = sel(b, S32, wrap,
                      sel(b, S32, mirror, clamp, cmp(b, IR_CMP_EQ, U32, mode, ui(b, LOWER_TEX_ADDR_MIRROR))),
                      cmp(b, IR_CMP_EQ, U32, mode, ui(b, LOWER_TEX_ADDR_WRAP)));
  ir_value *inside = cmp(b, IR_CMP_LT, U32, as(b, U32, i), as(b, U32, n));
  *ok = ir_or(b, PRED, inside, cmp(b, IR_CMP_NE, U32, mode, ui(b, LOWER_TEX_ADDR_BORDER)));
  return idx;
}

/* Address of texel (x, y, z): base + z*slice + y*pitch + x*ebytes. */
static ir_value *texel_addr(tex_ctx *c, const tex_fmt *f, ir_value *x, ir_value *y, ir_value *z) {
  ir_builder *b = c->b;
  ir_value *a = FLD(c, base, U64);
  if (z) a = add(b, U64, a, mul(b, U64, u64_of(b, z), FLD(c, slice, U64)));
  if (y) a = add(b, U64, a, mul(b, U64, u64_of(b, y), FLD(c, pitch, U64)));
  return add(b, U64, a, mul(b, U64, u64_of(b, x), f->ebytes));
}

/* The four channels of the texel at addr, converted for a result of class
 * rt (f32, s32 or u32); the border colour where ok is false. */
static void texel(tex_ctx *c, const tex_fmt *f, ir_value *addr, ir_value *ok, ir_type rt, ir_value **v) {
  ir_builder *b = c->b;
  for (unsigned k = 0; k < 4; k++) {
    ir_value *ca = k ? add(b, U64, addr, mul(b, U64, ir_imm(b, U64, k), f->cbytes)) : addr;
    ir_value *p = k ? pand(b, ok, cmp(b, IR_CMP_LT, U32, ui(b, k), f->nch)) : ok;
    ir_value *v8 = ld_guarded(b, ir_type_u8, ca, pand(b, p, f->is8));
    ir_value *v16 = ld_guarded(b, ir_type_u16, ca, pand(b, p, f->is16));
    ir_value *v32 = ld_guarded(b, ir_type_u32, ca, pand(b, p, f->is32));
    /* the loads not taken gave 0 */
    ir_value *raw = ir_or(b, U32, ir_or(b, U32, v8, v16), v32);
    ir_value *sraw = ir_alu2(b, ir_op_shr, S32, as(b, S32, lower_alu(b, ir_op_shl, U32, raw, f->shift)), f->shift);
    if (rt != F32) {
      ir_value *iv = sel(b, U32, as(b, U32, sraw), raw, f->sint);
      ir_value *bv = as(b, U32, cvt(b, S32, F32, f->border[k], IR_RND_RZI));
      v[k] = as(b, rt, sel(b, U32, iv, bv, ok));
      continue;
    }
    ir_value *h = as(b, ir_type_f16, cvt(b, ir_type_u16, U32, raw, IR_RND_NONE));
    ir_value *fl = sel(b, F32, as(b, F32, raw), cvt(b, F32, ir_type_f16, h, IR_RND_NONE), f->is32);
    ir_value *ue = cvt(b, F32, U32, raw, IR_RND_RN), *se = cvt(b, F32, S32, sraw, IR_RND_RN);
    ir_value *un = ir_alu2(b, ir_op_div, F32, ue, f->umax, .rnd = IR_RND_RN);
    ir_value *sn = ir_alu2(b, ir_op_max, F32, ir_alu2(b, ir_op_div, F32, se, f->smax, .rnd = IR_RND_RN), fi(b, -1.0f));
    ir_value *iv = sel(b, F32, sel(b, F32, sn, un, f->sint), sel(b, F32, se, ue, f->sint), f->readf);
    v[k] = sel(b, F32, sel(b, F32, fl, iv, f->flt), f->border[k], ok);
  }
}

/* ---- tex and tld4 ----------------------------------------------------------- */
/* The shape of a geometry's coordinate vector (PTX ISA 9.7.10.3, tex):
 * spatial dimensions sampled, vector elements, and what precedes the
 * spatial coordinates: a layer (a1d a2d acube a2dms), then a sample index
 * (2dms a2dms); cube and acube give a direction x, y, z (then one unused
 * element for cube) from which a face and a 2D position on it come. */
typedef struct tex_geom {
  unsigned dims, ncoord;
  bool layered, cube, ms;
} tex_geom;

static bool geom_info(ir_geom g, tex_geom *o) {
  switch (g) {
  case IR_GEOM_1D: *o = (tex_geom){.dims = 1, .ncoord = 1}; return true;
  case IR_GEOM_2D: *o = (tex_geom){.dims = 2, .ncoord = 2}; return true;
  case IR_GEOM_3D: *o = (tex_geom){.dims = 3, .ncoord = 4}; return true;
  case IR_GEOM_A1D: *o = (tex_geom){.dims = 1, .ncoord = 2, .layered = true}; return true;
  case IR_GEOM_A2D: *o = (tex_geom){.dims = 2, .ncoord = 4, .layered = true}; return true;
  /* {x, y, z, unused} and {layer, x, y, z} */
  case IR_GEOM_CUBE: *o = (tex_geom){.dims = 2, .ncoord = 4, .cube = true}; return true;
  case IR_GEOM_ACUBE: *o = (tex_geom){.dims = 2, .ncoord = 4, .layered = true, .cube = true}; return true;
  /* {sample, x, y, unused} and {layer, sample, x, y} */
  case IR_GEOM_2DMS: *o = (tex_geom){.dims = 2, .ncoord = 4, .ms = true}; return true;
  case IR_GEOM_A2DMS: *o = (tex_geom){.dims = 2, .ncoord = 4, .layered = true, .ms = true}; return true;
  case IR_GEOM_NONE: return false;
  }
  return false;
}

/* The plain geometries surfaces address (9.7.11: 1d 2d 3d a1d a2d). */
static bool geom_dims(ir_geom g, unsigned *dims, bool *layered, unsigned *ncoord) {
  tex_geom t;
  if (!geom_info(g, &t) || t.cube || t.ms) return false;
  *dims = t.dims;
  *layered = t.layered;
  *ncoord = t.ncoord;
  return true;
}

static const char *geom_name(ir_geom g) {
  static const char *const names[] = {"", "1d", "2d", "3d", "a1d", "a2d", "cube", "acube", "2dms", "a2dms"};
  return g < sizeof names / sizeof *names ? names[g] : "?";
}

/* Checks what every form shares; false (with an error) if not lowered. */
static bool check_handle(tex_state *s, const ir_instr *i) {
  ir_value *h = i->src[0];
  if (h->kind == IR_VAL_SYMBOL) {
    lower_error(s->opt->diag, i,
                "'%s' names a .texref/.surfref variable: texture and surface references were removed in "
                "CUDA 12; ptxwave supports texture and surface objects (64-bit handles) only",
                ir_op_infos[i->op].ptx);
    return false;
  }
  if (i->block->func->module->texmode_independent) {
    lower_error(s->opt->diag, i, "'%s' in .texmode_independent (separate samplers) is not supported",
                ir_op_infos[i->op].ptx);
    return false;
  }
  return true;
}

/* Size of spatial dimension d (s32). */
static ir_value *dim_size(tex_ctx *c, unsigned d) {
  static const unsigned offs[3] = {LOWER_TEX_OFF_width, LOWER_TEX_OFF_height, LOWER_TEX_OFF_depth};
  return fld_s32(c, offs[d]);
}

/* The layer (u32 bits of the first coordinate) clamped to [0, layers-1]
 * (a resource without layers, layers 0, has the one layer 0). */
static ir_value *layer_of(tex_ctx *c, ir_value *l) {
  ir_builder *b = c->b;
  ir_value *n = ir_alu2(b, ir_op_max, U32, FLD(c, layers, U32), ui(b, 1));
  return as(b, S32, ir_alu2(b, ir_op_min, U32, as(b, U32, l), sub(b, U32, n, ui(b, 1))));
}

/* The cubemap (u32 bits of acube's first coordinate) clamped to [0,
 * cubemaps-1] (at least cubemap 0). */
static ir_value *cubemap_of(tex_ctx *c, ir_value *l) {
  ir_builder *b = c->b;
  ir_value *n = ir_alu2(b, ir_op_max, U32, FLD(c, cubemaps, U32), ui(b, 1));
  return as(b, S32, ir_alu2(b, ir_op_min, U32, as(b, U32, l), sub(b, U32, n, ui(b, 1))));
}

/* Cube map face selection (CUDA C++ Programming Guide, "Cubemap Textures",
 * the table of faces): the major axis m of the direction (x, y, z) picks
 * the face, numbered as CUarray_cubemap_face (+x -x +y -y +z -z, cuda.h),
 * and (s, t) on it:
 *   |x| major: x >= 0: face 0, s = -z, t = -y; x < 0: face 1, s = z, t = -y
 *   |y| major: y >= 0: face 2, s = x, t = z;   y < 0: face 3, s = x, t = -z
 *   |z| major: z >= 0: face 4, s = x, t = -y;  z < 0: face 5, s = -x, t = -y
 * and the face's normalized coordinates u = (s/|m| + 1)/2, v = (t/|m| + 1)/2.
 * The guide's conditions are strict (|x| > |y| and |x| > |z|); on a tie we
 * take z over y over x, the order of AMD's v_cubeid_f32 (RDNA3 ISA,
 * V_CUBEID_F32), so a later image_sample path would agree with this one.
 * The face goes to *face (s32), u and v to uv[0..1] (f32). */
static void cube_face(ir_builder *b, ir_value *x, ir_value *y, ir_value *z, ir_value **face, ir_value **uv) {
  ir_value *ax = ir_alu1(b, ir_op_abs, F32, x), *ay = ir_alu1(b, ir_op_abs, F32, y);
  ir_value *az = ir_alu1(b, ir_op_abs, F32, z);
  ir_value *zmaj = ir_and(b, PRED, cmp(b, IR_CMP_GE, F32, az, ax), cmp(b, IR_CMP_GE, F32, az, ay));
  ir_value *ymaj = cmp(b, IR_CMP_GE, F32, ay, ax);   /* when not zmaj */
  ir_value *xpos = cmp(b, IR_CMP_GE, F32, x, fi(b, 0.0f));
  ir_value *ypos = cmp(b, IR_CMP_GE, F32, y, fi(b, 0.0f));
  ir_value *zpos = cmp(b, IR_CMP_GE, F32, z, fi(b, 0.0f));
  ir_value *nx = ir_alu1(b, ir_op_neg, F32, x), *ny = ir_alu1(b, ir_op_neg, F32, y);
  ir_value *nz = ir_alu1(b, ir_op_neg, F32, z);
#define PICK(t, vz, vy, vx) sel(b, t, (vz), sel(b, t, (vy), (vx), ymaj), zmaj)
  *face = PICK(S32, sel(b, S32, si(b, 4), si(b, 5), zpos), sel(b, S32, si(b, 2), si(b, 3), ypos),
               sel(b, S32, si(b, 0), si(b, 1), xpos));
  ir_value *m = PICK(F32, az, ay, ax);
  ir_value *s = PICK(F32, sel(b, F32, x, nx, zpos), x, sel(b, F32, nz, z, xpos));
  ir_value *t = PICK(F32, ny, sel(b, F32, z, nz, ypos), ny);
#undef PICK
  ir_value *st[2] = {s, t};
  for (unsigned k = 0; k < 2; k++) {
    ir_value *r = ir_alu2(b, ir_op_div, F32, st[k], m, .rnd = IR_RND_RN);
    uv[k] = fmul(b, fadd(b, r, fi(b, 1.0f)), fi(b, 0.5f));
  }
}

/* Seamless cube map filtering (CU_TRSF_SEAMLESS_CUBEMAP; the OpenGL 4.6
 * spec, 8.13.1 "Seamless Cube Map Filtering", has the rule): a texel of
 * the linear footprint outside its face is taken from the adjacent face,
 * and one outside in both directions (at a cube corner) is the average of
 * the three texels that meet there.  Exact in integers: on an N x N face,
 * texel (i, j) is the point S = 2i + 1 - N, T = 2j + 1 - N of the face
 * scaled by N, whose major axis coordinate is +-N; cube_face's table run
 * backwards gives its direction D (x, y, z).  A texel one past the edge
 * has |S| = N + 1: it folds onto the neighbour by setting that axis to
 * +-N and the old major axis to +-(N - 1) (one texel inside), and the
 * table run forwards on D (the one coordinate of size N is the major
 * axis) gives the neighbour's face and texel. */
typedef struct cube_texel { ir_value *face, *i, *j; } cube_texel;

/* D of (face, S, T) with the major coordinate M (+-N folded to +-(N-1)):
 *   face 0 (+x): ( M, -T, -S)   face 1 (-x): (-M, -T,  S)
 *   face 2 (+y): ( S,  M,  T)   face 3 (-y): ( S, -M, -T)
 *   face 4 (+z): ( S, -T,  M)   face 5 (-z): (-S, -T, -M) */
static void cube_dir(ir_builder *b, ir_value *face, ir_value *S, ir_value *T, ir_value *M, ir_value *D[3]) {
  ir_value *nS = ir_alu1(b, ir_op_neg, S32, S), *nT = ir_alu1(b, ir_op_neg, S32, T);
  ir_value *nM = ir_alu1(b, ir_op_neg, S32, M);
  ir_value *f[6];
  for (int k = 0; k < 6; k++) f[k] = cmp(b, IR_CMP_EQ, S32, face, si(b, k));
#define BY_FACE(v0, v1, v2, v3, v4, v5) \
  sel(b, S32, v0, sel(b, S32, v1, sel(b, S32, v2, sel(b, S32, v3, sel(b, S32, v4, v5, f[4]), f[3]), f[2]), f[1]), f[0])
  D[0] = BY_FACE(M, nM, S, S, S, nS);
  D[1] = BY_FACE(nT, nT, M, nM, nT, nT);
  D[2] = BY_FACE(nS, S, T, nT, M, nM);
#undef BY_FACE
}

/* The face and texel of a direction whose one coordinate of size N is the
 * major axis (cube_face's table on integers). */
static cube_texel cube_of_dir(ir_builder *b, ir_value *D[3], ir_value *N) {
  ir_value *ax = ir_alu1(b, ir_op_abs, S32, D[0]), *ay = ir_alu1(b, ir_op_abs, S32, D[1]);
  ir_value *xmaj = cmp(b, IR_CMP_EQ, S32, ax, N), *ymaj = cmp(b, IR_CMP_EQ, S32, ay, N);
  ir_value *pos[3], *neg[3];
  for (int k = 0; k < 3; k++) {
    pos[k] = cmp(b, IR_CMP_GT, S32, D[k], si(b, 0));
    neg[k] = ir_alu1(b, ir_op_neg, S32, D[k]);
  }
#define PICK(vx, vy, vz) sel(b, S32, (vx), sel(b, S32, (vy), (vz), ymaj), xmaj)
  ir_value *face = PICK(sel(b, S32, si(b, 0), si(b, 1), pos[0]), sel(b, S32, si(b, 2), si(b, 3), pos[1]),
                        sel(b, S32, si(b, 4), si(b, 5), pos[2]));
  ir_value *S = PICK(sel(b, S32, neg[2], D[2], pos[0]), D[0], sel(b, S32, D[0], neg[0], pos[2]));
  ir_value *T = PICK(neg[1], sel(b, S32, D[2], neg[2], pos[1]), neg[1]);
#undef PICK
  ir_value *nm1 = sub(b, S32, N, si(b, 1));
  cube_texel r = {face, ir_alu2(b, ir_op_shr, S32, add(b, S32, S, nm1), ui(b, 1)),
                  ir_alu2(b, ir_op_shr, S32, add(b, S32, T, nm1), ui(b, 1))};
  return r;
}

/* Texel (i, j) of face `face`, taken across the edge it is beyond (i or j
 * one outside [0, N)); fold_s: across the S edge, else the T edge. */
static cube_texel cube_fold(ir_builder *b, ir_value *face, ir_value *i, ir_value *j, ir_value *N, bool fold_s) {
  ir_value *nm1 = sub(b, S32, N, si(b, 1));
  ir_value *S = sub(b, S32, add(b, S32, add(b, S32, i, i), si(b, 1)), N);
  ir_value *T = sub(b, S32, add(b, S32, add(b, S32, j, j), si(b, 1)), N);
  /* the folded axis lands on +-N, the old major axis one texel inside */
  ir_value *X = fold_s ? S : T;
  ir_value *Xn = sel(b, S32, N, ir_alu1(b, ir_op_neg, S32, N), cmp(b, IR_CMP_GT, S32, X, si(b, 0)));
  ir_value *D[3];
  cube_dir(b, face, fold_s ? Xn : S, fold_s ? T : Xn, nm1, D);
  return cube_of_dir(b, D, N);
}

/* Seamless cube maps in a linear lookup (the descriptor decides, a select
 * as everything else here): each footprint texel beyond its face comes
 * from the neighbour (cube_fold), and the one beyond a cube corner (a
 * 2 x 2 footprint has at most one) is the mean of the three texels there:
 * a neighbour's corner texel (loaded as the footprint's), the other
 * neighbour's and the face's own corner texel (two more loads). */
typedef struct seam_state {
  ir_value *seam, *N, *base, *face, *layer, *i0[2];
  ir_value *both[4], *yx[3], *zx[3], *anyboth;
} seam_state;

static void seam_init(tex_ctx *c, seam_state *ss, ir_value *lin, ir_value *layer, ir_value *face,
                      ir_value *const *i0) {
  ir_builder *b = c->b;
  ss->seam = pand(b, is(c, LOWER_TEX_OFF_seamless, 1), lin);
  ss->N = as(b, S32, dim_size(c, 0));
  ss->base = sub(b, S32, layer, face);
  ss->face = face;
  ss->layer = layer;
  ss->i0[0] = i0[0];
  ss->i0[1] = i0[1];
}

/* Footprint corner m: its texel's (x, y, slice) and presence when
 * seamless, and the corner case's other two texels. */
static void seam_corner(tex_ctx *c, seam_state *ss, unsigned m, ir_value *xyz[3], ir_value **okm) {
  ir_builder *b = c->b;
  ir_value *ii = add(b, S32, ss->i0[0], si(b, (int)(m & 1))), *jj = add(b, S32, ss->i0[1], si(b, (int)(m >> 1 & 1)));
  ir_value *nm1 = sub(b, S32, ss->N, si(b, 1));
  ir_value *ci = ir_alu2(b, ir_op_min, S32, ir_alu2(b, ir_op_max, S32, ii, si(b, 0)), nm1);
  ir_value *cj = ir_alu2(b, ir_op_min, S32, ir_alu2(b, ir_op_max, S32, jj, si(b, 0)), nm1);
  ir_value *out_i = cmp(b, IR_CMP_NE, S32, ii, ci), *out_j = cmp(b, IR_CMP_NE, S32, jj, cj);
  cube_texel fs = cube_fold(b, ss->face, ii, cj, ss->N, true);
  cube_texel ft = cube_fold(b, ss->face, ci, jj, ss->N, false);
  /* beyond the S edge (or the corner): fs; beyond the T edge: ft */
  ir_value *X[3] = {sel(b, S32, fs.i, sel(b, S32, ft.i, ci, out_j), out_i),
                    sel(b, S32, fs.j, sel(b, S32, ft.j, cj, out_j), out_i),
                    add(b, S32, ss->base, sel(b, S32, fs.face, sel(b, S32, ft.face, ss->face, out_j), out_i))};
  for (unsigned k = 0; k < 3; k++) xyz[k] = sel(b, S32, X[k], xyz[k], ss->seam);
  *okm = por(b, *okm, ss->seam);
  ss->both[m] = pand(b, ss->seam, pand(b, out_i, out_j));
  ir_value *Y[3] = {ft.i, ft.j, add(b, S32, ss->base, ft.face)}, *Z[3] = {ci, cj, ss->layer};
  for (unsigned k = 0; k < 3; k++) {
    ss->yx[k] = ss->yx[k] ? sel(b, S32, Y[k], ss->yx[k], ss->both[m]) : Y[k];
    ss->zx[k] = ss->zx[k] ? sel(b, S32, Z[k], ss->zx[k], ss->both[m]) : Z[k];
  }
  ss->anyboth = ss->anyboth ? por(b, ss->anyboth, ss->both[m]) : ss->both[m];
}

/* The corner case: the mean of its three texels. */
static void seam_finish(tex_ctx *c, const tex_fmt *f, seam_state *ss, ir_type rt, unsigned ncorner, ir_value *t[8][4]) {
  ir_builder *b = c->b;
  ir_value *vy[4], *vz[4];
  texel(c, f, texel_addr(c, f, ss->yx[0], ss->yx[1], ss->yx[2]), ss->anyboth, rt, vy);
  texel(c, f, texel_addr(c, f, ss->zx[0], ss->zx[1], ss->zx[2]), ss->anyboth, rt, vz);
  for (unsigned m = 0; m < ncorner; m++)
    for (unsigned k = 0; k < 4; k++) {
      ir_value *mean = fmul(b, fadd(b, fadd(b, t[m][k], vy[k]), vz[k]), fi(b, 1.0f / 3.0f));
      t[m][k] = sel(b, F32, mean, t[m][k], ss->both[m]);
    }
}

static bool lower_sample(ir_builder *b, tex_state *s, ir_instr *i, ir_value **out) {
  tex_geom gm;
  ir_geom g = (ir_geom)i->mods.geom;
  const char *op = ir_op_infos[i->op].ptx;
  if (!check_handle(s, i)) return false;
  if (!geom_info(g, &gm)) {
    lower_error(s->opt->diag, i, "'%s' without a geometry", op);
    return false;
  }
  unsigned dims = gm.dims, ncoord = gm.ncoord;
  bool layered = gm.layered;
  ir_type rt = (ir_type)i->type, ct = i->type2 ? (ir_type)i->type2 : F32;
  if (rt != F32 && rt != S32 && rt != U32) {
    lower_error(s->opt->diag, i, "'%s' with .%s results is not supported (only .f32 .s32 .u32)", op,
                ir_type_name(rt));
    return false;
  }
  if (i->nsrc < 1 + ncoord) {
    lower_error(s->opt->diag, i, "'%s.%s' needs %u coordinates", op, geom_name(g), ncoord);
    return false;
  }
  /* 9.7.10.3: ".cube, .acube require .f32" coordinates, ".2dms, .a2dms
   * require .s32" */
  bool fcoord = ir_type_kind_of(ct) == IR_TK_FLOAT;
  if ((gm.cube && !fcoord) || (gm.ms && fcoord)) {
    lower_error(s->opt->diag, i, "'%s.%s' needs .%s coordinates", op, geom_name(g), gm.cube ? "f32" : "s32");
    return false;
  }
  /* After the coordinates: the level (.level), the gradients (.grad), or
   * else an offset vector or a depth-compare value, which change the
   * lookup: not lowered. */
  bool extra_ok = i->mods.texlod == IR_TEXLOD_GRAD ||
                  i->nsrc == 1 + ncoord + (i->mods.texlod == IR_TEXLOD_LEVEL ? 1u : 0u);
  if (!extra_ok) {
    lower_error(s->opt->diag, i, "'%s' with a texel offset or a depth compare is not supported", op);
    return false;
  }
  bool gather = i->op == ir_op_tld4;
  if (gather && (dims != 2 || gm.ms)) {   /* 9.7.10.4: .2d .a2d .cube .acube */
    lower_error(s->opt->diag, i, "tld4 needs a 2d, a2d, cube or acube texture");
    return false;
  }
  tex_ctx c = {.b = b, .h = i->src[0]};
  tex_fmt f;
  fmt_init(&c, &f);
  ir_value *const *coord = i->src + 1;
  ir_value *layer = !layered ? NULL : gm.cube ? cubemap_of(&c, coord[0]) : layer_of(&c, coord[0]);
  if (layered) coord++;
  /* Multisample: our resources have one sample (CUDA makes multisample
   * arrays only through graphics interop, which ptxwave has not): sample 0
   * is the texel, any other sample reads zeros (as Direct3D's ld2dms leaves
   * an out-of-range sample: the ISA does not say). */
  ir_value *sample_ok = NULL;
  if (gm.ms) {
    sample_ok = cmp(b, IR_CMP_EQ, U32, as(b, U32, coord[0]), ui(b, 0));
    coord++;
  }
  /* Cube: the face and its normalized (u, v); the face is the slice of a
   * cubemap (six layers in CUarray_cubemap_face order, cuda.h
   * cuArray3DCreate), cubemap l of a layered one has slices 6l..6l+5
   * (l clamped to the descriptor's cubemaps). */
  ir_value *face_uv[2], *face = NULL;
  if (gm.cube) {
    cube_face(b, as(b, F32, coord[0]), as(b, F32, coord[1]), as(b, F32, coord[2]), &face, face_uv);
    layer = layer ? add(b, S32, mul(b, S32, layer, si(b, 6)), face) : face;
    layered = true;
    coord = face_uv;
  }
  /* Linear filtering applies to float results of float coordinates
   * (Programming Guide: "linear filtering ... only for textures that are
   * configured to return floating-point data"); tld4 always takes the
   * bilinear footprint. */
  ir_value *lin = NULL;
  if (gather) lin = pred_true(b);
  else if (fcoord && rt == F32) lin = is(&c, LOWER_TEX_OFF_filter, LOWER_TEX_FILTER_LINEAR);
  /* a cube face's coordinates are normalized whatever the descriptor says */
  ir_value *norm = gm.cube ? NULL : cmp(b, IR_CMP_NE, U32, FLD(&c, normalized, U32), ui(b, 0));
  ir_value *idx[3][2], *ok[3][2], *alpha[3] = {0}, *i0s[3] = {0};
  static const unsigned amode[3] = {LOWER_TEX_OFF_addr0, LOWER_TEX_OFF_addr1, LOWER_TEX_OFF_addr2};
  for (unsigned d = 0; d < dims; d++) {
    ir_value *n = dim_size(&c, d), *i0;
    if (fcoord) {
      ir_value *u = as(b, F32, coord[d]);
      ir_value *un = fmul(b, u, cvt(b, F32, S32, n, IR_RND_RN));
      ir_value *x = norm ? sel(b, F32, un, u, norm) : un;
      ir_value *xb = lin ? sel(b, F32, fsub(b, x, fi(b, 0.5f)), x, lin) : x;
      i0 = cvt(b, S32, F32, xb, IR_RND_RMI);
      if (lin) {
        ir_value *fr = fsub(b, xb, cvt(b, F32, F32, xb, IR_RND_RMI));
        alpha[d] = fmul(b, cvt(b, F32, F32, fmul(b, fr, fi(b, 256.0f)), IR_RND_RNI), fi(b, 1.0f / 256.0f));
      }
    } else {
      i0 = as(b, S32, coord[d]);
    }
    ir_value *mode = fld(&c, amode[d], U32);
    i0s[d] = i0;
    idx[d][0] = address(b, i0, n, mode, &ok[d][0]);
    if (lin) idx[d][1] = address(b, add(b, S32, i0, si(b, 1)), n, mode, &ok[d][1]);
  }
  seam_state ss = {0};
  bool seamc = gm.cube && lin && !gather;
  if (seamc) seam_init(&c, &ss, lin, layer, face, i0s);
  /* The corners: bit d of m picks index 1 of dimension d. */
  unsigned ncorner = lin ? 1u << dims : 1;
  ir_value *t[8][4];
  for (unsigned m = 0; m < ncorner; m++) {
    ir_value *xyz[3] = {NULL, NULL, NULL}, *okm = pred_true(b);
    for (unsigned d = 0; d < dims; d++) {
      unsigned k = (m >> d) & 1;
      xyz[d] = idx[d][k];
      okm = pand(b, okm, ok[d][k]);
    }
    if (layered) xyz[dims] = layer;   /* a1d: the layer is the row, a2d: the slice */
    if (seamc) seam_corner(&c, &ss, m, xyz, &okm);
    texel(&c, &f, texel_addr(&c, &f, xyz[0], xyz[1], xyz[2]), okm, rt, t[m]);
  }
  if (seamc) seam_finish(&c, &f, &ss, rt, ncorner, t);
  unsigned nres = i->ndst < 4 ? i->ndst : 4;
  if (gather) {
    /* 9.7.10.4: the footprint's texels counter-clockwise from the lower
     * left: (i, j+1), (i+1, j+1), (i+1, j), (i, j). */
    static const unsigned order[4] = {2, 3, 1, 0};
    unsigned comp = i->mods.texcomp ? i->mods.texcomp - 1u : 0;
    for (unsigned k = 0; k < nres; k++) out[k] = t[order[k]][comp];
  } else {
    for (unsigned k = 0; k < nres; k++) {
      ir_value *r = t[0][k];
      if (lin) {
        ir_value *acc = NULL;
        for (unsigned m = 0; m < ncorner; m++) {
          ir_value *w = NULL;
          for (unsigned d = 0; d < dims; d++) {
            ir_value *wd = (m >> d) & 1 ? alpha[d] : fsub(b, fi(b, 1.0f), alpha[d]);
            w = w ? fmul(b, w, wd) : wd;
          }
          ir_value *term = fmul(b, w, t[m][k]);
          acc = acc ? fadd(b, acc, term) : term;
        }
        r = sel(b, F32, acc, t[0][k], lin);
      }
      out[k] = r;
    }
  }
  if (sample_ok)
    for (unsigned k = 0; k < nres; k++) out[k] = sel(b, rt, out[k], ir_imm(b, rt, 0), sample_ok);
  for (unsigned k = 0; k < nres; k++) out[k] = as(b, (ir_type)i->dst[k]->type, out[k]);
  /* the optional residency predicate: our texture data is always resident */
  if (i->ndst > 4) out[4] = pred_true(b);
  return true;
}

/* ---- txq and suq ------------------------------------------------------------ */
static bool lower_query(ir_builder *b, tex_state *s, ir_instr *i, ir_value **out) {
  if (!check_handle(s, i)) return false;
  tex_ctx c = {.b = b, .h = i->src[0]};
  ir_value *v;
  switch ((ir_query)i->mods.query) {
  case IR_QUERY_WIDTH: v = FLD(&c, width, U32); break;
  case IR_QUERY_HEIGHT: v = FLD(&c, height, U32); break;
  case IR_QUERY_DEPTH: v = FLD(&c, depth, U32); break;
  case IR_QUERY_CHANNEL_DATA_TYPE: v = FLD(&c, format, U32); break;
  case IR_QUERY_CHANNEL_ORDER: v = FLD(&c, channels, U32); break;
  case IR_QUERY_NORMALIZED_COORDS: v = FLD(&c, normalized, U32); break;
  case IR_QUERY_FILTER_MODE: v = FLD(&c, filter, U32); break;
  case IR_QUERY_ADDR_MODE_0: v = FLD(&c, addr0, U32); break;
  case IR_QUERY_ADDR_MODE_1: v = FLD(&c, addr1, U32); break;
  case IR_QUERY_ADDR_MODE_2: v = FLD(&c, addr2, U32); break;
  case IR_QUERY_ARRAY_SIZE: v = FLD(&c, layers, U32); break;
  case IR_QUERY_NUM_MIPMAP_LEVELS: v = ui(b, 1); break;   /* no mipmaps: one level */
  case IR_QUERY_NUM_SAMPLES: v = ui(b, 1); break;          /* no multisampling */
  case IR_QUERY_FORCE_UNNORMALIZED_COORDS: v = ui(b, 0); break;
  case IR_QUERY_NONE: default:
    lower_error(s->opt->diag, i, "'%s' without an attribute", ir_op_infos[i->op].ptx);
    return false;
  }
  out[0] = as(b, (ir_type)i->dst[0]->type, v);
  return true;
}

/* ---- surfaces ---------------------------------------------------------------- */
/* Guards the rest of the block on p: a trap where it is false (9.7.11.1
 * .trap: "causes an execution trap on out-of-bounds addresses"). */
static void trap_unless(ir_builder *b, ir_instr *i, ir_value *p) {
  ir_block *pre = b->block;
  ir_block *cont = ir_block_split_before(i, NULL);
  ir_block *bad = ir_block_create_after(pre->func, pre, NULL);
  ir_builder e = ir_builder_at_end(pre);
  e.loc = i->loc;
  ir_cbr(&e, p, cont, bad);
  e = ir_builder_at_end(bad);
  e.loc = i->loc;
  ir_build(&e, ir_op_trap, ir_type_none, 0, NULL, 0, NULL, NULL);
  ir_loc loc = b->loc;
  *b = ir_builder_before(i);
  b->loc = loc;
}

/* suld / sust / sured .b: the address of the access of `size` bytes and
 * its predicate (false: .zero drops it).  NULL on an error. */
static ir_value *surf_addr(ir_builder *b, tex_state *s, ir_instr *i, unsigned size, ir_value **pok,
                           unsigned *ncoord_out) {
  unsigned dims, ncoord;
  bool layered;
  ir_geom g = (ir_geom)i->mods.geom;
  if (!check_handle(s, i)) return NULL;
  if (!geom_dims(g, &dims, &layered, &ncoord)) {
    lower_error(s->opt->diag, i, "'%s.%s' is not supported", ir_op_infos[i->op].ptx, geom_name(g));
    return NULL;
  }
  if (i->mods.surfmode == IR_SURF_P) {
    lower_error(s->opt->diag, i, "'%s.p' (formatted surface access) is not supported; use the .b forms",
                ir_op_infos[i->op].ptx);
    return NULL;
  }
  if (i->nsrc < 1 + ncoord) {
    lower_error(s->opt->diag, i, "'%s.%s' needs %u coordinates", ir_op_infos[i->op].ptx, geom_name(g), ncoord);
    return NULL;
  }
  *ncoord_out = ncoord;
  tex_ctx c = {.b = b, .h = i->src[0]};
  ir_value *const *coord = i->src + 1;
  ir_value *l = NULL, *lok = NULL;
  if (layered) {
    l = as(b, S32, coord[0]);
    lok = cmp(b, IR_CMP_LT, U32, as(b, U32, l), FLD(&c, layers, U32));
    coord++;
  }
  ir_value *ok = pred_true(b), *xyz[3] = {NULL, NULL, NULL};
  for (unsigned d = 0; d < dims; d++) {
    ir_value *v = as(b, S32, coord[d]);
    ir_value *n;
    if (d) {
      n = dim_size(&c, d);
    } else {
      ir_value *w = FLD(&c, width, U32), *eb = FLD(&c, elem_bytes, U32);
      n = as(b, S32, mul(b, U32, w, eb));
    }
    /* the last valid start: n - 1 for rows and slices, n - size for bytes */
    ir_value *last = sub(b, S32, n, si(b, d == 0 ? (int32_t)size : 1));
    ok = pand(b, ok, ir_and(b, PRED, cmp(b, IR_CMP_GE, S32, v, si(b, 0)), cmp(b, IR_CMP_LE, S32, v, last)));
    if (i->mods.clampmode == IR_CLAMP_CLAMP) v = smin(b, smax(b, v, si(b, 0)), last);
    xyz[d] = v;
  }
  if (layered) {
    ok = pand(b, ok, lok);
    if (i->mods.clampmode == IR_CLAMP_CLAMP) l = layer_of(&c, l);
    xyz[dims] = l;
  }
  ir_value *a = FLD(&c, base, U64);
  if (xyz[2]) a = add(b, U64, a, mul(b, U64, u64_of(b, xyz[2]), FLD(&c, slice, U64)));
  if (xyz[1]) a = add(b, U64, a, mul(b, U64, u64_of(b, xyz[1]), FLD(&c, pitch, U64)));
  a = add(b, U64, a, u64_of(b, xyz[0]));
  switch ((ir_clampmode)i->mods.clampmode) {
  case IR_CLAMP_CLAMP: *pok = NULL; break;
  case IR_CLAMP_ZERO: *pok = ok; break;
  case IR_CLAMP_TRAP: case IR_CLAMP_NONE: default:   /* .trap is the default */
    trap_unless(b, i, ok);
    *pok = NULL;
    break;
  }
  return a;
}

static ir_type uint_type(unsigned bits) {
  return bits == 8 ? ir_type_u8 : bits == 16 ? ir_type_u16 : bits == 32 ? U32 : U64;
}

static bool lower_surface(ir_builder *b, tex_state *s, ir_instr *i, ir_value **out) {
  ir_type t = (ir_type)i->type;
  unsigned eb = ir_type_bits(t) / 8, n = i->mods.vec ? i->mods.vec : 1;
  unsigned ncoord = 0;
  ir_value *ok;
  ir_value *a = surf_addr(b, s, i, eb * n, &ok, &ncoord);
  if (!a) return false;
  /* the parser checked the counts; stay inside them whatever the IR says */
  unsigned have = i->op == ir_op_suld ? i->ndst : i->nsrc - 1 - ncoord;
  if (have < n) n = have;
  for (unsigned k = 0; k < n; k++) {
    ir_value *ak = add(b, U64, a, ir_imm(b, U64, (uint64_t)k * eb));
    ir_instr *m;
    if (i->op == ir_op_suld) {
      ir_type d = (ir_type)i->dst[k]->type;
      m = ir_build(b, ir_op_ld, t, 1, &ak, 1, &d, IR_MODS(.space = IR_SPACE_GLOBAL));
      if (ok) {
        ir_value *zero = ir_imm(b, d, 0);
        ir_instr_set_guard(b, m, ok, false, &zero);
      }
      out[k] = m->dst[0];
      continue;
    }
    ir_value *v = i->src[1 + ncoord + k];
    unsigned vb = ir_type_bits((ir_type)v->type), tb = ir_type_bits(t);
    if (vb > tb) v = cvt(b, uint_type(tb), uint_type(vb), as(b, uint_type(vb), v), IR_RND_NONE);
    if (i->op == ir_op_sust)
      m = ir_build_mem(b, ir_op_st, t, ak, 0, 1, &v, 0, IR_MODS(.space = IR_SPACE_GLOBAL));
    else
      m = ir_build_mem(b, ir_op_red, t, ak, 0, 1, &v, 0, IR_MODS(.space = IR_SPACE_GLOBAL, .atomop = i->mods.atomop));
    if (ok) ir_instr_set_guard(b, m, ok, false, NULL);
  }
  return true;
}

static bool lower_instr(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  tex_state *s = data;
  switch ((ir_op)i->op) {
  case ir_op_tex: case ir_op_tld4: return lower_sample(b, s, i, out);
  case ir_op_txq: case ir_op_suq: return lower_query(b, s, i, out);
  case ir_op_suld: case ir_op_sust: case ir_op_sured: return lower_surface(b, s, i, out);
  default: return false;
  }
}

bool lower_tex(ir_module *m, const lower_tex_options *opt) {
  tex_state s = {opt};
  return lower_walk(m, want, lower_instr, &s);
}
