/* tests/unit/test_tex.c: textures and surfaces run end to end in the
 * emulator: PTX with tex/tld4/txq/suld/sust, lowered by lower_tex (the
 * pass under test), run on descriptors this file writes (the layout of
 * lower/tex_desc.def, the contract with the runtime), and compared with a
 * host reference written here from the CUDA Programming Guide's "Texture
 * Fetching" appendix: nearest-point and linear filtering with weights in
 * 9-bit fixed point (8 fractional bits), the four address modes, the
 * normalized-float read mode; the PTX ISA for tld4's order (9.7.10.4,
 * counter-clockwise from the lower left) and suld/sust (9.7.11: x in bytes,
 * .clamp / .zero).
 *
 * Floats compare bit for bit: the reference does the same f32 operations
 * in the order the Programming Guide's formulas give (products of weights
 * in x, y, z order, the sum over corners x-fastest), with contraction off
 * (meson c_args).  A few results are also checked against hand-computed
 * constants, so the reference itself is anchored.
 */
#include <math.h>

#include "emu_test.h"
#include "lower/lower.h"
#include "lower/tex_desc.h"

/* ---- running ----------------------------------------------------------- */
#define KERNEL(name, body)                                                                          \
  ".visible .entry " name "(.param .u64 T, .param .u64 C, .param .u64 O, .param .u32 N)\n{\n"     \
  "  .reg .b64 %rd<8>;\n  .reg .b32 %r<16>;\n  .reg .f32 %f<16>;\n  .reg .pred %p<2>;\n"          \
  "  mov.u32 %r0, %tid.x;\n  mov.u32 %r1, %ctaid.x;\n  mov.u32 %r2, %ntid.x;\n"                    \
  "  mad.lo.u32 %r0, %r1, %r2, %r0;\n  ld.param.u32 %r1, [N];\n  setp.ge.u32 %p0, %r0, %r1;\n"    \
  "  @%p0 bra DONE;\n"                                                                            \
  "  ld.param.u64 %rd1, [T];\n  ld.param.u64 %rd2, [C];\n  ld.param.u64 %rd3, [O];\n"             \
  "  mul.wide.u32 %rd4, %r0, 16;\n  add.u64 %rd5, %rd2, %rd4;\n  add.u64 %rd6, %rd3, %rd4;\n"     \
  "  ld.global.v4.b32 {%r4, %r5, %r6, %r7}, [%rd5];\n"                                            \
  "  mov.b32 %f4, %r4;\n  mov.b32 %f5, %r5;\n  mov.b32 %f6, %r6;\n  mov.b32 %f7, %r7;\n"          \
  body                                                                                            \
  "  st.global.v4.b32 [%rd6], {%r8, %r9, %r10, %r11};\n"                                          \
  "DONE:\n  ret;\n}\n"
#define FOUT "  mov.b32 %r8, %f8;\n  mov.b32 %r9, %f9;\n  mov.b32 %r10, %f10;\n  mov.b32 %r11, %f11;\n"

static const char *const kernels =
    ET_HEADER
    KERNEL("s1d", "  tex.1d.v4.f32.f32 {%f8, %f9, %f10, %f11}, [%rd1, {%f4}];\n" FOUT)
    KERNEL("s2d", "  tex.2d.v4.f32.f32 {%f8, %f9, %f10, %f11}, [%rd1, {%f4, %f5}];\n" FOUT)
    KERNEL("s3d", "  tex.3d.v4.f32.f32 {%f8, %f9, %f10, %f11}, [%rd1, {%f4, %f5, %f6, %f6}];\n" FOUT)
    KERNEL("sa2d", "  tex.a2d.v4.f32.f32 {%f8, %f9, %f10, %f11}, [%rd1, {%r7, %f4, %f5, %f5}];\n" FOUT)
    KERNEL("scube", "  tex.cube.v4.f32.f32 {%f8, %f9, %f10, %f11}, [%rd1, {%f4, %f5, %f6, %f6}];\n" FOUT)
    KERNEL("sacube", "  tex.acube.v4.f32.f32 {%f8, %f9, %f10, %f11}, [%rd1, {%r4, %f5, %f6, %f7}];\n" FOUT)
    KERNEL("icube", "  tex.cube.v4.u32.f32 {%r8, %r9, %r10, %r11}, [%rd1, {%f4, %f5, %f6, %f6}];\n")
    KERNEL("gcube", "  tld4.r.cube.v4.f32.f32 {%f8, %f9, %f10, %f11}, [%rd1, {%f4, %f5, %f6, %f6}];\n" FOUT)
    KERNEL("ms", "  tex.2dms.v4.s32.s32 {%r8, %r9, %r10, %r11}, [%rd1, {%r4, %r5, %r6, %r7}];\n")
    KERNEL("msa", "  tex.a2dms.v4.f32.s32 {%f8, %f9, %f10, %f11}, [%rd1, {%r4, %r5, %r6, %r7}];\n" FOUT)
    KERNEL("i2d", "  tex.2d.v4.s32.f32 {%r8, %r9, %r10, %r11}, [%rd1, {%f4, %f5}];\n")
    KERNEL("fetch", "  tex.1d.v4.s32.s32 {%r8, %r9, %r10, %r11}, [%rd1, {%r4}];\n")
    KERNEL("fetchf", "  tex.1d.v4.f32.s32 {%f8, %f9, %f10, %f11}, [%rd1, {%r4}];\n" FOUT)
    KERNEL("gather", "  tld4.g.2d.v4.f32.f32 {%f8, %f9, %f10, %f11}, [%rd1, {%f4, %f5}];\n" FOUT)
    KERNEL("query", "  txq.width.b32 %r8, [%rd1];\n  txq.height.b32 %r9, [%rd1];\n"
                    "  txq.depth.b32 %r10, [%rd1];\n  suq.array_size.b32 %r11, [%rd1];\n")
    KERNEL("sload", "  suld.b.2d.b32.zero {%r8}, [%rd1, {%r4, %r5}];\n  mov.u32 %r9, 0;\n"
                    "  suld.b.2d.v2.b16.clamp {%r10, %r11}, [%rd1, {%r4, %r5}];\n")
    KERNEL("sstore", "  sust.b.2d.b32.clamp [%rd1, {%r4, %r5}], {%r6};\n  mov.u32 %r8, 0;\n"
                     "  mov.u32 %r9, 0;\n  mov.u32 %r10, 0;\n  mov.u32 %r11, 0;\n");

static et *load(void) {
  et *t = calloc(1, sizeof *t);
  pw_diag d;
  pw_diag_init(&d, NULL);
  t->ir = ptx_parse("tex.ptx", kernels, strlen(kernels), &d, NULL);
  if (!t->ir) fprintf(stderr, "%s\n", pw_diag_text(&d));
  ck_assert_msg(t->ir != NULL, "the test PTX does not parse");
  lower_tex(t->ir, &(lower_tex_options){.diag = &d});
  if (d.nerrors) fprintf(stderr, "%s\n", pw_diag_text(&d));
  ck_assert_int_eq(d.nerrors, 0);
  ck_assert(ir_verify(t->ir, NULL, &d));
  pw_diag_fini(&d);
  ck_assert_int_eq(emu_context_create(&(emu_options){.threads = 2}, &t->ctx), EMU_OK);
  emu_status st = emu_module_load(t->ctx, t->ir, &t->mod);
  ck_assert_msg(st == EMU_OK, "module load: %s", emu_error_message(t->ctx));
  return t;
}

/* Runs kernel over n samples of 4 words; out gets 4 words per sample. */
static void run(et *t, const char *kernel, const lower_tex_desc *desc, const uint32_t *coords, unsigned n, uint32_t *out) {
  uint64_t dd = et_alloc(t, sizeof *desc, desc);
  uint64_t dc = et_alloc(t, 16 * (size_t)n, coords);
  uint64_t dout = et_alloc(t, 16 * (size_t)n, NULL);
  et_ok(t, et_launch(t, kernel, (emu_dim3){(n + 63) / 64, 1, 1}, (emu_dim3){64, 1, 1}, 0, 4, dd, dc, dout,
                     (uint64_t)n));
  et_get(t, out, dout, 16 * (size_t)n);
  emu_free(t->ctx, dd);
  emu_free(t->ctx, dc);
  emu_free(t->ctx, dout);
}

static uint32_t fbits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float bitsf(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* ---- the reference (CUDA Programming Guide, "Texture Fetching") -------- */
static float half_to_float(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
  return h & 0x8000 ? -v : v;
}

/* The index read for texel index i of a dimension of n texels. */
static int ref_addr(int i, int n, unsigned mode, int *ok) {
  *ok = 1;
  switch (mode) {
  case LOWER_TEX_ADDR_WRAP: return ((i % n) + n) % n;
  case LOWER_TEX_ADDR_MIRROR: {
    int m = ((i % (2 * n)) + 2 * n) % (2 * n);
    return m < n ? m : 2 * n - 1 - m;
  }
  case LOWER_TEX_ADDR_BORDER: *ok = i >= 0 && i < n; /* fall through */
  default: return i < 0 ? 0 : i >= n ? n - 1 : i;
  }
}

/* Channel k of texel (x, y, z): as a float for float results, as int bits
 * for integer results. */
static void ref_texel(const lower_tex_desc *d, const uint8_t *data, int x, int y, int z, int ok, bool fres, uint32_t *v) {
  for (unsigned k = 0; k < 4; k++) {
    if (!ok) {
      float b = (&d->border0)[k];
      v[k] = fres ? fbits(b) : (uint32_t)(int32_t)b;
      continue;
    }
    if (k >= d->channels) {
      v[k] = 0;
      continue;
    }
    const uint8_t *p = data + (size_t)z * d->slice + (size_t)y * d->pitch + (size_t)x * d->elem_bytes +
                       k * (d->chan_bits / 8);
    uint32_t raw = 0;
    memcpy(&raw, p, d->chan_bits / 8);
    int32_t s = d->chan_bits == 8 ? (int8_t)raw : d->chan_bits == 16 ? (int16_t)raw : (int32_t)raw;
    if (!fres) {
      v[k] = d->chan_kind == LOWER_TEX_CHAN_SINT ? (uint32_t)s : raw;
      continue;
    }
    float f;
    if (d->chan_kind == LOWER_TEX_CHAN_FLOAT) f = d->chan_bits == 32 ? bitsf(raw) : half_to_float((uint16_t)raw);
    else if (!d->read_float) f = d->chan_kind == LOWER_TEX_CHAN_SINT ? (float)s : (float)raw;
    else if (d->chan_kind == LOWER_TEX_CHAN_SINT) f = fmaxf((float)s / (float)((1u << (d->chan_bits - 1)) - 1), -1.0f);
    else f = (float)raw / (float)(d->chan_bits == 32 ? 4294967295u : (1u << d->chan_bits) - 1);
    v[k] = fbits(f);
  }
}

/* tex at coordinates u[0..dims-1] (float or int bits), layer or -1;
 * gather: tld4's component. */
static void ref_sample(const lower_tex_desc *d, const uint8_t *data, unsigned dims, const uint32_t *u, bool fcoord,
                       bool fres, int layer, int gather, uint32_t *out) {
  const uint32_t n[3] = {d->width, d->height, d->depth};
  const uint32_t mode[3] = {d->addr0, d->addr1, d->addr2};
  bool lin = gather >= 0 || (fcoord && fres && d->filter == LOWER_TEX_FILTER_LINEAR);
  int idx[3][2] = {{0}}, ok[3][2] = {{1, 1}, {1, 1}, {1, 1}};
  float alpha[3] = {0};
  for (unsigned k = 0; k < dims; k++) {
    int i0;
    if (fcoord) {
      float x = d->normalized ? bitsf(u[k]) * (float)n[k] : bitsf(u[k]);
      if (lin) {
        float xb = x - 0.5f;
        i0 = (int)floorf(xb);
        alpha[k] = rintf((xb - floorf(xb)) * 256.0f) / 256.0f;   /* 9-bit fixed point, 8 fractional bits */
      } else {
        i0 = (int)floorf(x);
      }
    } else {
      i0 = (int32_t)u[k];
    }
    idx[k][0] = ref_addr(i0, (int)n[k], mode[k], &ok[k][0]);
    idx[k][1] = ref_addr(i0 + 1, (int)n[k], mode[k], &ok[k][1]);
  }
  if (layer >= 0 && (uint32_t)layer >= d->layers) layer = (int)d->layers - 1;
  uint32_t t[8][4];
  for (unsigned m = 0; m < (1u << dims); m++) {
    int c[3] = {0, 0, 0}, okm = 1;
    for (unsigned k = 0; k < dims; k++) {
      c[k] = idx[k][(m >> k) & 1];
      okm &= ok[k][(m >> k) & 1];
    }
    if (layer >= 0) c[dims] = layer;
    ref_texel(d, data, c[0], c[1], c[2], okm, fres, t[m]);
  }
  if (gather >= 0) {
    out[0] = t[2][gather];   /* (i, j+1) */
    out[1] = t[3][gather];   /* (i+1, j+1) */
    out[2] = t[1][gather];   /* (i+1, j) */
    out[3] = t[0][gather];   /* (i, j) */
    return;
  }
  for (unsigned k = 0; k < 4; k++) {
    if (!lin) {
      out[k] = t[0][k];
      continue;
    }
    float acc = 0;
    for (unsigned m = 0; m < (1u << dims); m++) {
      float w = 1;
      for (unsigned q = 0; q < dims; q++) {
        float wq = (m >> q) & 1 ? alpha[q] : 1.0f - alpha[q];
        w = q ? w * wq : wq;
      }
      acc = m ? acc + w * bitsf(t[m][k]) : w * bitsf(t[m][k]);
    }
    out[k] = fbits(acc);
  }
}

/* The face and its (u, v) for direction (x, y, z): the CUDA Programming
 * Guide's cubemap table, written as its rows (major axis, then sign), with
 * ties going to z, then y (lower_tex's documented choice). */
static int ref_cube(float x, float y, float z, float *u, float *v) {
  float ax = fabsf(x), ay = fabsf(y), az = fabsf(z), m, sc, tc;
  int face;
  if (az >= ax && az >= ay) {
    m = az;
    if (z >= 0) face = 4, sc = x, tc = -y;
    else face = 5, sc = -x, tc = -y;
  } else if (ay >= ax) {
    m = ay;
    if (y >= 0) face = 2, sc = x, tc = z;
    else face = 3, sc = x, tc = -z;
  } else {
    m = ax;
    if (x >= 0) face = 0, sc = -z, tc = -y;
    else face = 1, sc = z, tc = -y;
  }
  *u = (sc / m + 1.0f) * 0.5f;
  *v = (tc / m + 1.0f) * 0.5f;
  return face;
}

/* A cube sample through ref_sample: the face's (u, v) as normalized 2D
 * coordinates of slice 6 * layer + face (layer clamped to [0, cubes-1]). */
static void ref_cube_sample(const lower_tex_desc *d, const uint8_t *data, const uint32_t *c, int layer, unsigned cubes,
                            bool fres, int gather, uint32_t *out) {
  float u, v;
  int face = ref_cube(bitsf(c[0]), bitsf(c[1]), bitsf(c[2]), &u, &v);
  if (layer >= (int)cubes) layer = (int)cubes - 1;
  lower_tex_desc dn = *d;
  dn.normalized = 1;
  dn.layers = 1000;   /* the slice is computed here */
  uint32_t uv[2] = {fbits(u), fbits(v)};
  ref_sample(&dn, data, 2, uv, true, fres, 6 * (layer < 0 ? 0 : layer) + face, gather, out);
}

/* ---- fixtures ------------------------------------------------------------ */
static lower_tex_desc desc2d(uint64_t base, unsigned w, unsigned h, unsigned pitch, unsigned ch, unsigned bits,
                       lower_tex_chan kind) {
  lower_tex_desc d = {0};
  d.base = base;
  d.kind = LOWER_TEX_KIND_PITCH2D;
  d.width = w;
  d.height = h;
  d.depth = 1;
  d.pitch = pitch;
  d.slice = (uint64_t)pitch * h;
  d.channels = ch;
  d.chan_bits = bits;
  d.chan_kind = kind;
  d.elem_bytes = ch * bits / 8;
  d.addr0 = d.addr1 = d.addr2 = LOWER_TEX_ADDR_CLAMP;
  return d;
}

static void fill(uint8_t *p, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; i++) {
    seed ^= seed >> 12;
    seed ^= seed << 25;
    seed ^= seed >> 27;
    p[i] = (uint8_t)((seed * 2685821657736338717ull) >> 56);
  }
}

/* Compares n samples; names the first mismatches. */
static void compare(const char *what, const uint32_t *got, const uint32_t *want, unsigned n, const uint32_t *coords) {
  unsigned bad = 0;
  for (unsigned i = 0; i < n; i++)
    for (unsigned k = 0; k < 4; k++)
      if (got[4 * i + k] != want[4 * i + k] && bad++ < 5)
        fprintf(stderr, "%s: sample %u (%08x %08x %08x %08x) channel %u: got %08x (%g) want %08x (%g)\n", what, i,
                coords[4 * i], coords[4 * i + 1], coords[4 * i + 2], coords[4 * i + 3], k, got[4 * i + k],
                bitsf(got[4 * i + k]), want[4 * i + k], bitsf(want[4 * i + k]));
  ck_assert_msg(bad == 0, "%s: %u mismatches", what, bad);
}

/* ---- tests ----------------------------------------------------------------- */
/* Hand-computed anchors: a 2x2 float texture [1 2; 3 4], unnormalized. */
START_TEST(hand_values) {
  et *t = load();
  const float texels[4] = {1, 2, 3, 4};
  uint64_t data = et_alloc(t, sizeof texels, texels);
  lower_tex_desc d = desc2d(data, 2, 2, 8, 1, 32, LOWER_TEX_CHAN_FLOAT);
  d.filter = LOWER_TEX_FILTER_LINEAR;
  /* (1,1): the centre, all weights 1/2: 2.5.  (0.75,0.5): x-0.5 = 0.25,
   * alpha = 1/4 of the way from 1 to 2 in row 0: 1.25.  (0.5+1/1024, 0.5):
   * alpha = round(1/4)/256 = 0: 1.  (-3, 0.5) clamps to column 0: 1. */
  const float in[4][2] = {{1, 1}, {0.75f, 0.5f}, {0.5f + 1.0f / 1024, 0.5f}, {-3, 0.5f}};
  const float want[4] = {2.5f, 1.25f, 1.0f, 1.0f};
  uint32_t coords[16] = {0}, out[16];
  for (unsigned i = 0; i < 4; i++) {
    coords[4 * i] = fbits(in[i][0]);
    coords[4 * i + 1] = fbits(in[i][1]);
  }
  run(t, "s2d", &d, coords, 4, out);
  for (unsigned i = 0; i < 4; i++) {
    ck_assert_msg(bitsf(out[4 * i]) == want[i], "sample %u: got %g want %g", i, bitsf(out[4 * i]), want[i]);
    ck_assert_uint_eq(out[4 * i + 1], 0);   /* missing channels read 0 */
  }
  /* point sampling of (1.5, 0.2): texel (1, 0) = 2 */
  d.filter = LOWER_TEX_FILTER_POINT;
  coords[0] = fbits(1.5f);
  coords[1] = fbits(0.2f);
  run(t, "s2d", &d, coords, 1, out);
  ck_assert(bitsf(out[0]) == 2.0f);
  et_free(t);
}
END_TEST

/* uchar4, normalized-float reads, every address mode pair, both filters,
 * normalized coordinates, a pitch wider than the row. */
START_TEST(uchar4_modes) {
  et *t = load();
  enum { W = 5, H = 3, PITCH = 32 };
  uint8_t img[PITCH * H];
  fill(img, sizeof img, 7);
  uint64_t data = et_alloc(t, sizeof img, img);
  enum { NS = 13 * 11 };
  uint32_t coords[4 * NS] = {0}, out[4 * NS], want[4 * NS];
  for (unsigned i = 0; i < NS; i++) {
    coords[4 * i] = fbits(-0.7f + 0.19f * (float)(i % 13));
    coords[4 * i + 1] = fbits(-0.9f + 0.27f * (float)(i / 13));
  }
  for (unsigned am = 0; am < 16; am++)
    for (unsigned filt = 0; filt < 2; filt++) {
      lower_tex_desc d = desc2d(data, W, H, PITCH, 4, 8, LOWER_TEX_CHAN_UINT);
      d.read_float = 1;
      d.normalized = 1;
      d.filter = filt;
      d.addr0 = am & 3;
      d.addr1 = am >> 2;
      d.border0 = 0.25f;
      d.border1 = 0.5f;
      d.border2 = -2.0f;
      d.border3 = 1.0f;
      run(t, "s2d", &d, coords, NS, out);
      for (unsigned i = 0; i < NS; i++) ref_sample(&d, img, 2, &coords[4 * i], true, true, -1, -1, &want[4 * i]);
      char what[64];
      snprintf(what, sizeof what, "uchar4 addr %u/%u filter %u", am & 3, am >> 2, filt);
      compare(what, out, want, NS, coords);
    }
  et_free(t);
}
END_TEST

/* float and short2 textures, unnormalized coordinates: element reads of
 * floats, normalized-float and element (integer result) reads of signed
 * 16-bit channels, and f16 channels. */
START_TEST(formats) {
  et *t = load();
  enum { W = 7, H = 4, PITCH = 64, NS = 40 };
  uint8_t img[PITCH * H];
  fill(img, sizeof img, 99);
  /* keep the float texels finite and moderate: a float from small ints */
  float fl[PITCH * H / 4];
  for (unsigned i = 0; i < PITCH * H / 4; i++) fl[i] = (float)((int)img[i] - 128) / 8.0f;
  uint16_t hf[PITCH * H / 2];
  for (unsigned i = 0; i < PITCH * H / 2; i++) hf[i] = (uint16_t)(0x3c00 + (img[i] & 0x3f) * 7 - 200);
  uint64_t dimg = et_alloc(t, sizeof img, img), dfl = et_alloc(t, sizeof fl, fl), dhf = et_alloc(t, sizeof hf, hf);
  uint32_t coords[4 * NS] = {0}, out[4 * NS], want[4 * NS];
  for (unsigned i = 0; i < NS; i++) {
    coords[4 * i] = fbits(-1.3f + 0.23f * (float)i);
    coords[4 * i + 1] = fbits(4.6f - 0.13f * (float)i);
  }
  for (unsigned filt = 0; filt < 2; filt++) {
    lower_tex_desc d = desc2d(dfl, W, H, PITCH, 1, 32, LOWER_TEX_CHAN_FLOAT);
    d.filter = filt;
    d.addr1 = LOWER_TEX_ADDR_BORDER;
    d.border0 = 9.5f;
    run(t, "s2d", &d, coords, NS, out);
    for (unsigned i = 0; i < NS; i++) ref_sample(&d, (uint8_t *)fl, 2, &coords[4 * i], true, true, -1, -1, &want[4 * i]);
    compare("float", out, want, NS, coords);

    d = desc2d(dimg, W, H, PITCH, 2, 16, LOWER_TEX_CHAN_SINT);
    d.filter = filt;
    d.read_float = 1;
    run(t, "s2d", &d, coords, NS, out);
    for (unsigned i = 0; i < NS; i++) ref_sample(&d, img, 2, &coords[4 * i], true, true, -1, -1, &want[4 * i]);
    compare("short2 normalized float", out, want, NS, coords);

    d.read_float = 0;   /* element type: integer results, never filtered */
    run(t, "i2d", &d, coords, NS, out);
    for (unsigned i = 0; i < NS; i++) ref_sample(&d, img, 2, &coords[4 * i], true, false, -1, -1, &want[4 * i]);
    compare("short2 element", out, want, NS, coords);

    d = desc2d(dhf, W, H, PITCH, 1, 16, LOWER_TEX_CHAN_FLOAT);
    d.filter = filt;
    run(t, "s2d", &d, coords, NS, out);
    for (unsigned i = 0; i < NS; i++) ref_sample(&d, (uint8_t *)hf, 2, &coords[4 * i], true, true, -1, -1, &want[4 * i]);
    compare("half", out, want, NS, coords);
  }
  et_free(t);
}
END_TEST

/* tex1Dfetch on linear memory: integer indices, border (0) outside; the
 * integer and the normalized-float reads of uchar2; 1D float filtering. */
START_TEST(linear_1d) {
  et *t = load();
  enum { W = 37, NS = 50 };
  uint8_t buf[2 * W];
  fill(buf, sizeof buf, 3);
  uint64_t dbuf = et_alloc(t, sizeof buf, buf);
  lower_tex_desc d = desc2d(dbuf, W, 1, 2 * W, 2, 8, LOWER_TEX_CHAN_UINT);
  d.kind = LOWER_TEX_KIND_LINEAR;
  d.addr0 = LOWER_TEX_ADDR_BORDER;
  uint32_t coords[4 * NS] = {0}, out[4 * NS], want[4 * NS];
  for (unsigned i = 0; i < NS; i++) coords[4 * i] = (uint32_t)((int)i - 5);
  run(t, "fetch", &d, coords, NS, out);
  for (unsigned i = 0; i < NS; i++) ref_sample(&d, buf, 1, &coords[4 * i], false, false, -1, -1, &want[4 * i]);
  compare("fetch uchar2", out, want, NS, coords);
  ck_assert_uint_eq(out[0], 0);                    /* index -5: border 0 */
  ck_assert_uint_eq(out[4 * 5], buf[0]);           /* index 0 */
  ck_assert_uint_eq(out[4 * 6 + 1], buf[3]);       /* index 1, channel y */
  d.read_float = 1;
  run(t, "fetchf", &d, coords, NS, out);
  for (unsigned i = 0; i < NS; i++) ref_sample(&d, buf, 1, &coords[4 * i], false, true, -1, -1, &want[4 * i]);
  compare("fetch uchar2 as float", out, want, NS, coords);
  ck_assert(bitsf(out[4 * 5]) == (float)buf[0] / 255.0f);
  /* 1D linear filter, wrap, normalized */
  d.read_float = 1;
  d.filter = LOWER_TEX_FILTER_LINEAR;
  d.normalized = 1;
  d.addr0 = LOWER_TEX_ADDR_WRAP;
  for (unsigned i = 0; i < NS; i++) coords[4 * i] = fbits(-1.1f + 0.061f * (float)i);
  run(t, "s1d", &d, coords, NS, out);
  for (unsigned i = 0; i < NS; i++) ref_sample(&d, buf, 1, &coords[4 * i], true, true, -1, -1, &want[4 * i]);
  compare("1d linear wrap", out, want, NS, coords);
  et_free(t);
}
END_TEST

/* 3D trilinear and a 2D layered array (the layer clamped, never filtered). */
START_TEST(volume_and_layers) {
  et *t = load();
  enum { W = 4, H = 3, D = 3, NS = 45 };
  float vol[W * H * D];
  for (unsigned i = 0; i < W * H * D; i++) vol[i] = (float)((i * 37) % 23) - 7.5f;
  uint64_t dv = et_alloc(t, sizeof vol, vol);
  lower_tex_desc d = desc2d(dv, W, H, W * 4, 1, 32, LOWER_TEX_CHAN_FLOAT);
  d.kind = LOWER_TEX_KIND_ARRAY;
  d.depth = D;
  d.filter = LOWER_TEX_FILTER_LINEAR;
  d.addr2 = LOWER_TEX_ADDR_BORDER;
  d.border0 = 100.0f;
  uint32_t coords[4 * NS] = {0}, out[4 * NS], want[4 * NS];
  for (unsigned i = 0; i < NS; i++) {
    coords[4 * i] = fbits(-0.4f + 0.11f * (float)i);
    coords[4 * i + 1] = fbits(3.4f - 0.077f * (float)i);
    coords[4 * i + 2] = fbits(-0.8f + 0.09f * (float)i);
  }
  run(t, "s3d", &d, coords, NS, out);
  for (unsigned i = 0; i < NS; i++) ref_sample(&d, (uint8_t *)vol, 3, &coords[4 * i], true, true, -1, -1, &want[4 * i]);
  compare("3d trilinear", out, want, NS, coords);

  /* the same memory as 3 layers of 4x3; coordinate word 3 is the layer */
  d.depth = D;
  d.layers = D;
  d.addr2 = LOWER_TEX_ADDR_CLAMP;
  for (unsigned i = 0; i < NS; i++) coords[4 * i + 3] = i % 5;   /* 3 and 4 clamp to 2 */
  run(t, "sa2d", &d, coords, NS, out);
  for (unsigned i = 0; i < NS; i++)
    ref_sample(&d, (uint8_t *)vol, 2, &coords[4 * i], true, true, (int)coords[4 * i + 3], -1, &want[4 * i]);
  compare("a2d", out, want, NS, coords);
  et_free(t);
}
END_TEST

/* A cubemap of 4x4 float faces, texel (x, y) of face f = 100 f + 10 y + x,
 * point sampled at hand-computed directions (the guide's table). */
START_TEST(cube_hand) {
  et *t = load();
  enum { W = 4 };
  float faces[6 * W * W];
  for (unsigned f = 0; f < 6; f++)
    for (unsigned y = 0; y < W; y++)
      for (unsigned x = 0; x < W; x++) faces[(f * W + y) * W + x] = (float)(100 * f + 10 * y + x);
  uint64_t dv = et_alloc(t, sizeof faces, faces);
  lower_tex_desc d = desc2d(dv, W, W, W * 4, 1, 32, LOWER_TEX_CHAN_FLOAT);
  d.kind = LOWER_TEX_KIND_ARRAY;
  d.depth = 6;
  /* unnormalized in the descriptor: a face's coordinates are normalized
   * regardless */
  const struct { float x, y, z, want; } cases[] = {
      /* +x: s = -z, t = -y: (0.25/1+1)/2 = 0.625 -> 2; (-0.75+1)/2 -> 0 */
      {1, 0.75f, -0.25f, 2},
      /* -x: s = z = 0.5 -> u 0.75 -> 3, t = -y = 0.5 -> 3 */
      {-2, -1, 1, 100 + 33},
      /* +y: s = x = -0.5 -> 1, t = z = 0.25 -> 2 */
      {-0.5f, 1, 0.25f, 200 + 21},
      /* -y: s = x = 0.5 -> u 0.75 -> 3, t = -z = -0.25 -> v 0.375 -> 1 */
      {0.5f, -1, 0.25f, 300 + 13},
      /* +z: s = x = 0, t = -y = 0 -> centre (2, 2) */
      {0, 0, 3, 400 + 22},
      /* -z: s = -x = -0.875 -> u 0.0625 -> 0, t = -y = 0.875 -> 3 */
      {0.875f, -0.875f, -1, 500 + 30},
      /* ties go to z, then y: (1, 1, 1) is +z, s = 1 -> u 1 -> x 4 clamps to 3, t = -1 -> 0 */
      {1, 1, 1, 400 + 3},
      /* (1, -1, 0.5): y before x: -y, s = 1 -> 3, t = -0.5 -> v 0.25 -> 1 */
      {1, -1, 0.5f, 300 + 13},
  };
  enum { N = sizeof cases / sizeof *cases };
  uint32_t coords[4 * N] = {0}, out[4 * N];
  for (unsigned i = 0; i < N; i++) {
    coords[4 * i] = fbits(cases[i].x);
    coords[4 * i + 1] = fbits(cases[i].y);
    coords[4 * i + 2] = fbits(cases[i].z);
  }
  run(t, "scube", &d, coords, N, out);
  for (unsigned i = 0; i < N; i++)
    ck_assert_msg(bitsf(out[4 * i]) == cases[i].want, "direction %u (%g %g %g): got %g want %g", i, cases[i].x,
                  cases[i].y, cases[i].z, bitsf(out[4 * i]), cases[i].want);
  et_free(t);
}
END_TEST

/* Random directions against the reference: point and linear filtering,
 * each address mode (on each face separately: not seamless), float and
 * uchar4 faces, cube and layered cube (layer clamped), integer results and
 * tld4 on a face. */
START_TEST(cube_random) {
  et *t = load();
  enum { W = 5, L = 3, NS = 400 };
  static uint8_t img[6 * L * W * W * 4];
  fill(img, sizeof img, 1234);
  uint64_t dv = et_alloc(t, sizeof img, img);
  static uint32_t coords[4 * NS], out[4 * NS], want[4 * NS];
  uint64_t seed = 77;
  for (unsigned i = 0; i < 4 * NS; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    /* directions in [-2, 2) on a 1/64 grid, so ties and edges occur */
    coords[i] = fbits((float)((int)(seed >> 58) * 4 - 128 + (int)((seed >> 40) & 3)) / 64.0f);
  }
  /* no zero direction: its face coordinates are 0/0 */
  for (unsigned i = 0; i < NS; i++)
    if (!(coords[4 * i] << 1) && !(coords[4 * i + 1] << 1) && !(coords[4 * i + 2] << 1)) coords[4 * i] = fbits(1.0f);
  for (unsigned cfg = 0; cfg < 8; cfg++) {
    bool uchar = cfg & 1, lin = cfg & 2;
    unsigned mode = (cfg >> 2) ? LOWER_TEX_ADDR_BORDER : LOWER_TEX_ADDR_CLAMP;
    lower_tex_desc d = uchar ? desc2d(dv, W, W, W * 4, 4, 8, LOWER_TEX_CHAN_UINT)
                             : desc2d(dv, W, W, W * 4, 1, 32, LOWER_TEX_CHAN_FLOAT);
    d.kind = LOWER_TEX_KIND_ARRAY;
    d.depth = 6;
    d.read_float = uchar;
    d.filter = lin ? LOWER_TEX_FILTER_LINEAR : LOWER_TEX_FILTER_POINT;
    d.addr0 = d.addr1 = mode;
    d.border0 = 0.5f;
    if (!uchar) {   /* moderate finite floats */
      float *fp = (float *)img;
      for (unsigned k = 0; k < sizeof img / 4; k++) fp[k] = (float)(int)(img[4 * k] % 64) - 17.25f;
      ck_assert_int_eq(emu_memcpy_htod(t->ctx, dv, img, sizeof img), EMU_OK);
    } else {
      fill(img, sizeof img, 1234);
      ck_assert_int_eq(emu_memcpy_htod(t->ctx, dv, img, sizeof img), EMU_OK);
    }
    char what[64];
    run(t, "scube", &d, coords, NS, out);
    for (unsigned i = 0; i < NS; i++) ref_cube_sample(&d, img, &coords[4 * i], -1, 1, true, -1, &want[4 * i]);
    snprintf(what, sizeof what, "cube %s %s mode %u", uchar ? "uchar4" : "float", lin ? "linear" : "point", mode);
    compare(what, out, want, NS, coords);
    /* acube: {layer, x, y, z}; L cubemaps of six faces (the runtime's
     * layers: every face) */
    d.depth = 6 * L;
    d.layers = 6 * L;
    d.cubemaps = L;
    static uint32_t ac[4 * NS];
    for (unsigned i = 0; i < NS; i++) {
      ac[4 * i] = i % (L + 2);   /* L and L+1 clamp to L-1 */
      memcpy(&ac[4 * i + 1], &coords[4 * i], 12);
    }
    run(t, "sacube", &d, ac, NS, out);
    for (unsigned i = 0; i < NS; i++)
      ref_cube_sample(&d, img, &ac[4 * i + 1], (int)ac[4 * i], L, true, -1, &want[4 * i]);
    snprintf(what, sizeof what, "acube %s %s mode %u", uchar ? "uchar4" : "float", lin ? "linear" : "point", mode);
    compare(what, out, want, NS, ac);
    d.depth = 6;
    d.layers = 6;
    d.cubemaps = 1;
    if (cfg == 1) {   /* element reads of uchar4: integer results, point */
      d.read_float = 0;
      run(t, "icube", &d, coords, NS, out);
      for (unsigned i = 0; i < NS; i++) ref_cube_sample(&d, img, &coords[4 * i], -1, 1, false, -1, &want[4 * i]);
      compare("cube u32 results", out, want, NS, coords);
      d.read_float = 1;
      run(t, "gcube", &d, coords, NS, out);
      for (unsigned i = 0; i < NS; i++) ref_cube_sample(&d, img, &coords[4 * i], -1, 1, true, 0, &want[4 * i]);
      compare("tld4.r.cube", out, want, NS, coords);
    }
  }
  et_free(t);
}
END_TEST

/* tex.2dms / tex.a2dms on a single-sample resource: sample 0 is the texel
 * at integer (x, y) (of the layer), any other sample reads zeros. */
START_TEST(multisample) {
  et *t = load();
  enum { W = 6, H = 5, L = 2 };
  int32_t img[L * W * H];
  for (unsigned i = 0; i < L * W * H; i++) img[i] = (int32_t)(i * 7919u % 1000) - 300;
  uint64_t dv = et_alloc(t, sizeof img, img);
  lower_tex_desc d = desc2d(dv, W, H, W * 4, 1, 32, LOWER_TEX_CHAN_SINT);
  /* {sample, x, y, unused} */
  const int32_t ms[][4] = {{0, 0, 0, 9}, {0, 5, 4, 9}, {0, 3, 2, 0}, {1, 3, 2, 0}, {3, 1, 1, 0}};
  enum { N = sizeof ms / sizeof *ms };
  uint32_t coords[4 * N], out[4 * N];
  memcpy(coords, ms, sizeof ms);
  run(t, "ms", &d, coords, N, out);
  for (unsigned i = 0; i < N; i++) {
    int32_t want = ms[i][0] ? 0 : img[ms[i][2] * W + ms[i][1]];
    ck_assert_msg((int32_t)out[4 * i] == want, "2dms %u: got %d want %d", i, (int32_t)out[4 * i], want);
    for (unsigned k = 1; k < 4; k++) ck_assert_uint_eq(out[4 * i + k], 0);
  }
  /* a2dms {layer, sample, x, y}, float results of a float texture */
  float fimg[L * W * H];
  for (unsigned i = 0; i < L * W * H; i++) fimg[i] = (float)img[i] / 8.0f;
  uint64_t fv = et_alloc(t, sizeof fimg, fimg);
  d = desc2d(fv, W, H, W * 4, 1, 32, LOWER_TEX_CHAN_FLOAT);
  d.kind = LOWER_TEX_KIND_ARRAY;
  d.depth = L;
  d.layers = L;
  const int32_t ma[][4] = {{0, 0, 1, 2}, {1, 0, 5, 4}, {1, 2, 5, 4}, {7, 0, 2, 3}};   /* layer 7 clamps to 1 */
  enum { NA = sizeof ma / sizeof *ma };
  uint32_t ac[4 * NA];
  memcpy(ac, ma, sizeof ma);
  run(t, "msa", &d, ac, NA, out);
  for (unsigned i = 0; i < NA; i++) {
    int l = ma[i][0] < L ? ma[i][0] : L - 1;
    float want = ma[i][1] ? 0.0f : fimg[(l * H + ma[i][3]) * W + ma[i][2]];
    ck_assert_msg(bitsf(out[4 * i]) == want, "a2dms %u: got %g want %g", i, bitsf(out[4 * i]), want);
  }
  et_free(t);
}
END_TEST

/* tld4.g (tex2Dgather): the green channel of the bilinear footprint. */
START_TEST(gather) {
  et *t = load();
  enum { W = 6, H = 5, NS = 30 };
  uint8_t img[W * H * 4];
  fill(img, sizeof img, 11);
  uint64_t di = et_alloc(t, sizeof img, img);
  lower_tex_desc d = desc2d(di, W, H, W * 4, 4, 8, LOWER_TEX_CHAN_UINT);
  d.read_float = 1;
  d.filter = LOWER_TEX_FILTER_POINT;   /* tld4 ignores the filter */
  d.addr0 = LOWER_TEX_ADDR_MIRROR;
  d.normalized = 1;
  uint32_t coords[4 * NS] = {0}, out[4 * NS], want[4 * NS];
  for (unsigned i = 0; i < NS; i++) {
    coords[4 * i] = fbits(-0.3f + 0.051f * (float)i);
    coords[4 * i + 1] = fbits(0.9f - 0.033f * (float)i);
  }
  run(t, "gather", &d, coords, NS, out);
  for (unsigned i = 0; i < NS; i++) ref_sample(&d, img, 2, &coords[4 * i], true, true, -1, 1, &want[4 * i]);
  compare("tld4.g", out, want, NS, coords);
  /* hand-checked: at the texel corner (2/6, 2/5) the footprint is texels
   * x 1..2, y 1..2: lower left (1,2) first, upper left (1,1) last */
  coords[0] = fbits(2.0f / 6);
  coords[1] = fbits(2.0f / 5);
  run(t, "gather", &d, coords, 1, out);
  ck_assert(bitsf(out[0]) == (float)img[(2 * W + 1) * 4 + 1] / 255.0f);
  ck_assert(bitsf(out[3]) == (float)img[(1 * W + 1) * 4 + 1] / 255.0f);
  et_free(t);
}
END_TEST

START_TEST(query) {
  et *t = load();
  lower_tex_desc d = desc2d(0, 17, 9, 128, 1, 32, LOWER_TEX_CHAN_FLOAT);
  d.depth = 5;
  d.layers = 5;
  uint32_t coords[4] = {0}, out[4];
  run(t, "query", &d, coords, 1, out);
  ck_assert_uint_eq(out[0], 17);
  ck_assert_uint_eq(out[1], 9);
  ck_assert_uint_eq(out[2], 5);
  ck_assert_uint_eq(out[3], 5);
  et_free(t);
}
END_TEST

/* suld.b .zero / .clamp and sust.b .clamp on a 6x4 surface of 4-byte
 * texels: x in bytes. */
START_TEST(surfaces) {
  et *t = load();
  enum { W = 6, H = 4, PITCH = 32, NS = 24 };
  uint32_t img[PITCH / 4 * H];
  for (unsigned i = 0; i < PITCH / 4 * H; i++) img[i] = 0x10000u * i + 0x1234u + i;
  uint64_t di = et_alloc(t, sizeof img, img);
  lower_tex_desc d = desc2d(di, W, H, PITCH, 1, 32, LOWER_TEX_CHAN_UINT);
  uint32_t coords[4 * NS] = {0}, out[4 * NS];
  for (unsigned i = 0; i < NS; i++) {
    coords[4 * i] = (uint32_t)(4 * ((int)i % 8) - 8);   /* bytes, aligned, some out of range */
    coords[4 * i + 1] = (uint32_t)((int)i / 6 - 1);
    coords[4 * i + 2] = 0xabc00000u + i;
  }
  run(t, "sload", &d, coords, NS, out);
  const uint8_t *bytes = (const uint8_t *)img;
  for (unsigned i = 0; i < NS; i++) {
    int x = (int32_t)coords[4 * i], y = (int32_t)coords[4 * i + 1];
    bool in = x >= 0 && x <= W * 4 - 4 && y >= 0 && y < H;
    uint32_t z = 0;
    if (in) memcpy(&z, bytes + y * PITCH + x, 4);
    ck_assert_msg(out[4 * i] == z, "suld.zero sample %u (%d,%d): got %08x want %08x", i, x, y, out[4 * i], z);
    int cx = x < 0 ? 0 : x > W * 4 - 4 ? W * 4 - 4 : x, cy = y < 0 ? 0 : y >= H ? H - 1 : y;
    uint16_t h0, h1;
    memcpy(&h0, bytes + cy * PITCH + cx, 2);
    memcpy(&h1, bytes + cy * PITCH + cx + 2, 2);
    ck_assert_msg(out[4 * i + 2] == h0 && out[4 * i + 3] == h1, "suld.clamp sample %u", i);
  }
  /* stores: one thread per distinct clamped target, so the order of the
   * stores does not matter */
  uint32_t sc[4 * 4] = {0}, want[PITCH / 4 * H];
  const int sx[4] = {-8, 100, 8, 5 * 4}, sy[4] = {-1, 2, 7, 0};
  memcpy(want, img, sizeof img);
  for (unsigned i = 0; i < 4; i++) {
    sc[4 * i] = (uint32_t)sx[i];
    sc[4 * i + 1] = (uint32_t)sy[i];
    sc[4 * i + 2] = 0xfeed0000u + i;
    int cx = sx[i] < 0 ? 0 : sx[i] > W * 4 - 4 ? W * 4 - 4 : sx[i], cy = sy[i] < 0 ? 0 : sy[i] >= H ? H - 1 : sy[i];
    memcpy((uint8_t *)want + cy * PITCH + cx, &sc[4 * i + 2], 4);
  }
  run(t, "sstore", &d, sc, 4, out);
  uint32_t got[PITCH / 4 * H];
  et_get(t, got, di, sizeof got);
  ck_assert_mem_eq(got, want, sizeof got);
  et_free(t);
}
END_TEST

int main(void) {
  Suite *s = suite_create("tex");
  TCase *tc = tcase_create("tex");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, hand_values);
  tcase_add_test(tc, uchar4_modes);
  tcase_add_test(tc, formats);
  tcase_add_test(tc, linear_1d);
  tcase_add_test(tc, volume_and_layers);
  tcase_add_test(tc, gather);
  tcase_add_test(tc, cube_hand);
  tcase_add_test(tc, cube_random);
  tcase_add_test(tc, multisample);
  tcase_add_test(tc, query);
  tcase_add_test(tc, surfaces);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? 1 : 0;
}
