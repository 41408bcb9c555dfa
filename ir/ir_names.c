/* ir/ir_names.c: how modifiers are spelled, and which ops use which.
 *
 * Every field of ir_mods is described once here: its spellings (as PTX
 * spells them after the dot: "rn", "shared::cta", "L2::evict_last"); the
 * ops that take it are ir_ops.def's mods column.  The printer writes the
 * spellings, the .pwir parser and the PTX decoder read them (resolving a
 * spelling among the fields of the op at hand, so "lo" is mul.lo on mul and
 * the unsigned "lower" compare on setp), and the verifier rejects a field
 * set on an op that does not use it (style.md #9: one data-driven table, no
 * per-op code).
 *
 * Adding a modifier: a field in ir_mods (ir.h), a row in IR_MOD_FIELDS
 * (ir.h), its spellings below, and the ops that take it in
 * ir_ops.def's mods column.
 */
#include <string.h>

#include "ir_priv.h"

/* ---- spellings -------------------------------------------------------- */

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const rnd_names[] = {
  "", "rn", "rz", "rm", "rp", "rna", "rs", "rni", "rzi", "rmi", "rpi",
};
static const char *const cmp_names[] = {
  "", "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
  "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
};
static const char *const boolop_names[] = {"", "and", "or", "xor"};
static const char *const mulmode_names[] = {"", "lo", "hi", "wide"};
static const char *const space_names[] = {
  "generic", "global", "shared", "shared::cta", "shared::cluster", "local", "const",
  "param", "param::entry", "param::func", "tex", "reg",
};
static const char *const sem_names[] = {
  "", "weak", "volatile", "relaxed", "acquire", "release", "acq_rel", "sc", "mmio",
};
static const char *const scope_names[] = {"", "cta", "cluster", "gpu", "sys"};
static const char *const cache_names[] = {"", "ca", "cg", "cs", "lu", "cv", "wb", "wt"};
static const char *const l1evict_names[] = {
  "", "L1::evict_normal", "L1::evict_unchanged", "L1::evict_first", "L1::evict_last",
  "L1::no_allocate",
};
static const char *const l2evict_names[] = {
  "", "L2::evict_normal", "L2::evict_unchanged", "L2::evict_first", "L2::evict_last",
  "L2::no_allocate",
};
static const char *const l2prefetch_names[] = {NULL, "L2::64B", "L2::128B", NULL, "L2::256B"};
static const char *const vec_names[] = {NULL, "v1", "v2", NULL, "v4", NULL, NULL, NULL, "v8"};
static const char *const atomop_names[] = {
  "", "add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas", "popc",
};
static const char *const shfl_names[] = {"", "up", "down", "bfly", "idx"};
static const char *const vote_names[] = {"", "all", "any", "uni", "ballot"};
static const char *const match_names[] = {"", "any", "all"};
/* bar's default mode (sync, 0) is not spelled: bar.sync is the .sync flag. */
static const char *const barmode_names[] = {"", "arrive", "red", "wait"};
static const char *const prmt_names[] = {"", "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"};
static const char *const testp_names[] = {
  "", "finite", "infinite", "number", "notanumber", "normal", "subnormal",
};
static const char *const proxy_names[] = {
  "", "proxy.alias", "proxy.async", "proxy.async.global", "proxy.async.shared::cta",
  "proxy.async.shared::cluster", "proxy.tensormap", "proxy.generic",
};

static const char *const shape_names[] = {
  "", "m8n8k4", "m8n8k16", "m8n8k32", "m8n8k128", "m16n8k4", "m16n8k8", "m16n8k16",
  "m16n8k32", "m16n8k64", "m16n8k128", "m16n8k256", "m16n16k8", "m16n16k16", "m32n8k16",
  "m8n32k16", "m8n8", "m16n16", "m8n16", "m16n8",
};
static const char *const layout_names[] = {"", "row", "col", "row.row", "row.col", "col.row", "col.col"};
static const char *const mmakind_names[] = {
  "", "kind::f8f6f4", "kind::mxf8f6f4.block_scale.scale_vec::1X", "kind::mxf4.block_scale.scale_vec::2X",
  "kind::mxf4nvf4.block_scale.scale_vec::2X", "kind::mxf4nvf4.block_scale.scale_vec::4X",
};
static const char *const frag_names[] = {"", "a", "b", "c", "d"};
static const char *const geom_names[] = {"", "1d", "2d", "3d", "a1d", "a2d", "cube", "acube", "2dms", "a2dms"};
static const char *const texlod_names[] = {"", "base", "level", "grad"};
static const char *const texcomp_names[] = {"", "r", "g", "b", "a"};
static const char *const clampmode_names[] = {"", "trap", "clamp", "zero"};
static const char *const surfmode_names[] = {"", "b", "p"};
static const char *const query_names[] = {
  "", "width", "height", "depth", "channel_data_type", "channel_order", "normalized_coords",
  "filter_mode", "addr_mode_0", "addr_mode_1", "addr_mode_2", "array_size",
  "num_mipmap_levels", "num_samples", "force_unnormalized_coords",
  "global_address", "rank", "box_dim", "global_dim", "global_stride", "element_stride", "elemtype",
  "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode",
};
static const char *const gdc_names[] = {"", "launch_dependents", "wait"};
static const char *const level_names[] = {"", "L1", "L2", "tensormap"};
static const char *const policy_names[] = {"", "fractional", "range", "cvt"};
/* createpolicy's second priority: spelled apart from the first (l2evict),
 * which createpolicy also takes */
static const char *const l2evict2_names[] = {
  "", NULL, "L2::secondary_evict_unchanged", "L2::secondary_evict_first",
};
static const char *const bulk_names[] = {"", "mbarrier::complete_tx::bytes", "bulk_group", "read"};
static const char *const tdim_names[] = {"", "1d", "2d", "3d", "4d", "5d"};
static const char *const tmode_names[] = {"", "tile", "tile::gather4", "tile::scatter4"};
static const char *const mbar_names[] = {"", "parity", "expect_tx", "noComplete", "noinc"};

#define FLAG(set) ((const char *const[]){"", set})

const ir_mod_field_info ir_mod_field_infos[ir_mod_count] = {
  [ir_mod_uni] = {"uni", FLAG("uni"), 2, NULL},
  [ir_mod_sync] = {"sync", FLAG("sync"), 2, NULL},
  [ir_mod_sem] = {"sem", sem_names, N(sem_names), NULL},
  [ir_mod_scope] = {"scope", scope_names, N(scope_names), NULL},
  [ir_mod_cvta_to] = {"cvta_to", FLAG("to"), 2, NULL},
  [ir_mod_space] = {"space", space_names, N(space_names), NULL},
  [ir_mod_nc] = {"nc", FLAG("nc"), 2, NULL},
  [ir_mod_cache] = {"cache", cache_names, N(cache_names), NULL},
  [ir_mod_l1evict] = {"l1evict", l1evict_names, N(l1evict_names), NULL},
  [ir_mod_l2evict] = {"l2evict", l2evict_names, N(l2evict_names), NULL},
  [ir_mod_has_cache_hint] = {"has_cache_hint", FLAG("L2::cache_hint"), 2, NULL},
  [ir_mod_l2prefetch] = {"l2prefetch", l2prefetch_names, N(l2prefetch_names), NULL},
  [ir_mod_atomop] = {"atomop", atomop_names, N(atomop_names), NULL},
  [ir_mod_shfl] = {"shfl", shfl_names, N(shfl_names), NULL},
  [ir_mod_vote] = {"vote", vote_names, N(vote_names), NULL},
  [ir_mod_match] = {"match", match_names, N(match_names), NULL},
  [ir_mod_barmode] = {"barmode", barmode_names, N(barmode_names), NULL},
  [ir_mod_aligned] = {"aligned", FLAG("aligned"), 2, NULL},
  [ir_mod_mulmode] = {"mulmode", mulmode_names, N(mulmode_names), NULL},
  [ir_mod_cmp] = {"cmp", cmp_names, N(cmp_names), NULL},
  [ir_mod_boolop] = {"boolop", boolop_names, N(boolop_names), NULL},
  [ir_mod_testp] = {"testp", testp_names, N(testp_names), NULL},
  [ir_mod_prmt] = {"prmt", prmt_names, N(prmt_names), NULL},
  [ir_mod_rnd] = {"rnd", rnd_names, N(rnd_names), NULL},
  [ir_mod_shf_left] = {"shf_left", FLAG("l"), 2, "r"},
  [ir_mod_shf_clamp] = {"shf_clamp", FLAG("clamp"), 2, "wrap"},
  [ir_mod_bfind_shiftamt] = {"bfind_shiftamt", FLAG("shiftamt"), 2, NULL},
  [ir_mod_dp_hi] = {"dp_hi", FLAG("hi"), 2, "lo"},
  [ir_mod_signed_a] = {"signed_a", FLAG("a_s32"), 2, NULL},
  [ir_mod_signed_b] = {"signed_b", FLAG("b_s32"), 2, NULL},
  [ir_mod_approx] = {"approx", FLAG("approx"), 2, NULL},
  [ir_mod_full] = {"full", FLAG("full"), 2, NULL},
  [ir_mod_ftz] = {"ftz", FLAG("ftz"), 2, NULL},
  [ir_mod_sat] = {"sat", FLAG("sat"), 2, NULL},
  [ir_mod_nan] = {"nan", FLAG("NaN"), 2, NULL},
  [ir_mod_xorsign] = {"xorsign", FLAG("xorsign"), 2, NULL},
  [ir_mod_absmod] = {"absmod", FLAG("abs"), 2, NULL},
  [ir_mod_relu] = {"relu", FLAG("relu"), 2, NULL},
  [ir_mod_satfinite] = {"satfinite", FLAG("satfinite"), 2, NULL},
  [ir_mod_noftz_f16] = {"noftz_f16", FLAG("noftz"), 2, NULL},
  [ir_mod_cc] = {"cc", FLAG("cc"), 2, NULL},
  [ir_mod_unified] = {"unified", FLAG("unified"), 2, NULL},
  [ir_mod_vec] = {"vec", vec_names, N(vec_names), NULL},
  [ir_mod_proxy] = {"proxy", proxy_names, N(proxy_names), NULL},
  [ir_mod_shape] = {"shape", shape_names, N(shape_names), NULL},
  [ir_mod_layout] = {"layout", layout_names, N(layout_names), NULL},
  [ir_mod_mmakind] = {"mmakind", mmakind_names, N(mmakind_names), NULL},
  [ir_mod_frag] = {"frag", frag_names, N(frag_names), NULL},
  [ir_mod_trans] = {"trans", FLAG("trans"), 2, NULL},
  [ir_mod_geom] = {"geom", geom_names, N(geom_names), NULL},
  [ir_mod_texlod] = {"texlod", texlod_names, N(texlod_names), NULL},
  [ir_mod_texcomp] = {"texcomp", texcomp_names, N(texcomp_names), NULL},
  [ir_mod_clampmode] = {"clampmode", clampmode_names, N(clampmode_names), NULL},
  [ir_mod_surfmode] = {"surfmode", surfmode_names, N(surfmode_names), NULL},
  [ir_mod_query] = {"query", query_names, N(query_names), NULL},
  [ir_mod_gdc] = {"gdc", gdc_names, N(gdc_names), NULL},
  [ir_mod_acc_f32] = {"acc_f32", FLAG("acc::f32"), 2, NULL},
  [ir_mod_mbar] = {"mbar", mbar_names, N(mbar_names), NULL},
  [ir_mod_level] = {"level", level_names, N(level_names), NULL},
  [ir_mod_policy] = {"policy", policy_names, N(policy_names), NULL},
  [ir_mod_l2evict2] = {"l2evict2", l2evict2_names, N(l2evict2_names), NULL},
  [ir_mod_bulk] = {"bulk", bulk_names, N(bulk_names), NULL},
  [ir_mod_tdim] = {"tdim", tdim_names, N(tdim_names), NULL},
  [ir_mod_tile] = {"tile", tmode_names, N(tmode_names), NULL},
};

static const char *spell(const char *const *t, unsigned n, unsigned v) {
  return v < n && t[v] ? t[v] : "";
}

const char *ir_rnd_name(ir_rnd r) { return spell(rnd_names, N(rnd_names), r); }
const char *ir_cmp_name(ir_cmp c) { return spell(cmp_names, N(cmp_names), c); }
const char *ir_space_name(ir_space s) { return spell(space_names, N(space_names), s); }
const char *ir_sem_name(ir_sem s) { return spell(sem_names, N(sem_names), s); }
const char *ir_scope_name(ir_scope s) { return spell(scope_names, N(scope_names), s); }
const char *ir_atomop_name(ir_atomop a) { return spell(atomop_names, N(atomop_names), a); }

const char *ir_mod_spelling(ir_mod_field f, unsigned v) {
  const ir_mod_field_info *fi = &ir_mod_field_infos[f];
  if (v == 0) return fi->zero;
  return v < fi->nspell ? fi->spell[v] : NULL;
}

static const char *const sreg_enum_names[ir_sreg_count] = {
#define IR_SREG(name, ptx, type, ncomp, flags) [ir_sreg_##name] = #name,
#include "ir_sregs.def"
#undef IR_SREG
};

const char *ir_sreg_name(ir_sreg s) { return s < ir_sreg_count ? sreg_enum_names[s] : "?"; }

/* ---- field access ----------------------------------------------------- */

unsigned ir_mods_get(const ir_mods *m, ir_mod_field f) {
  switch (f) {
#define X(name) case ir_mod_##name: return m->name;
    IR_MOD_FIELDS(X)
#undef X
  case ir_mod_count: break;
  }
  return 0;
}

void ir_mods_set(ir_mods *m, ir_mod_field f, unsigned v) {
  switch (f) {
#define X(name) case ir_mod_##name: m->name = v; break;
    IR_MOD_FIELDS(X)
#undef X
  case ir_mod_count: break;
  }
}

/* ---- which ops use which fields --------------------------------------- */
/* The mods column of ir_ops.def (ir_op_info.mods). */

/* the mods column is a 64-bit mask of ir_mod_field bits: a 65th field needs a wider mask */
_Static_assert(ir_mod_count <= 64, "ir_ops.def's mods column holds 64 fields");
#define M(f) (UINT64_C(1) << ir_mod_##f)

bool ir_op_uses_mod(ir_op op, ir_mod_field f) {
  return op < ir_op_count && (ir_op_infos[op].mods >> f) & 1;
}

uint64_t ir_op_mod_mask(ir_op op) { return op < ir_op_count ? ir_op_infos[op].mods : 0; }

bool ir_mods_fit_op(ir_op op, const ir_mods *m) {
  return (ir_mods_nonzero(m) & ~ir_op_mod_mask(op)) == 0;
}

const uint64_t ir_mod_zero_spelled = M(shf_left) | M(shf_clamp) | M(dp_hi);

uint64_t ir_mods_nonzero(const ir_mods *m) {
  static const ir_mods zero;
  if (!memcmp(m, &zero, sizeof zero)) return 0;  /* most instructions */
  uint64_t mask = 0;
#define X(name) if (m->name) mask |= M(name);
  IR_MOD_FIELDS(X)
#undef X
  return mask;
}

/* ---- spellings as words (the .pwir parser, the PTX decoder) ------------ */

void ir_mod_words_add(pw_map *words, pw_arena *a, const char *s, int field, unsigned value) {
  bool found;
  void **slot = pw_map_str_slot(words, s, strlen(s), &found);
  ir_mod_word *w = IR_NEW(a, ir_mod_word);
  w->field = (int16_t)field;
  w->value = (uint8_t)value;
  /* Append: the first meaning added is tried first. */
  const ir_mod_word **tail = (const ir_mod_word **)slot;
  while (*tail) tail = (const ir_mod_word **)&(*tail)->next;
  *tail = w;
}

void ir_mod_words_init(pw_map *words, pw_arena *a) {
  pw_map_init(words, a, 256);
  for (unsigned t = 1; t < ir_type_count; t++) ir_mod_words_add(words, a, ir_type_infos[t].name, -1, t);
  for (unsigned f = 0; f < ir_mod_count; f++) {
    const ir_mod_field_info *fi = &ir_mod_field_infos[f];
    for (unsigned v = 1; v < fi->nspell; v++)
      if (fi->spell[v]) ir_mod_words_add(words, a, fi->spell[v], (int)f, v);
    if (fi->zero) ir_mod_words_add(words, a, fi->zero, (int)f, 0);
  }
}

const ir_mod_word *ir_mod_words_get(const pw_map *words, const char *s, size_t len) {
  return pw_map_str_get(words, s, len);
}

const ir_mod_word *ir_mod_word_for(const ir_mod_word *w, ir_op op, bool any) {
  const ir_mod_word *first_field = NULL;
  for (; w; w = w->next) {
    if (w->field < 0 || ir_op_uses_mod(op, (ir_mod_field)w->field)) return w;
    if (!first_field) first_field = w;
  }
  return any ? first_field : NULL;
}
