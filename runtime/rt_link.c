/* runtime/rt_link.c: cuLinkCreate/AddData/AddFile/Complete/Destroy and the
 * linked image (rt_link.h; docs/runtime.md "Linking").
 *
 * CUDA links relocatable device code at run time: cuDNN's runtime-compiled
 * engines, for one, are PTX modules that call functions (`_Z6mul_opff`) other
 * PTX modules define.  Here linking happens on the IR: a linked image keeps
 * the PTX texts, and rt_parse_module() parses each one and merges them with
 * ir_link, which binds every .extern .func/.global to its definition.  The
 * image is checked once at cuLinkComplete (so an undefined or multiply
 * defined symbol fails there, as in CUDA, with the symbol named in the log
 * and in CU_JIT_ERROR_LOG_BUFFER) and linked again at each load.
 *
 * Inputs: CU_JIT_INPUT_PTX; CU_JIT_INPUT_FATBINARY (its PTX, chosen as a
 * module load chooses it); a linked image given back as CU_JIT_INPUT_CUBIN
 * or _OBJECT.  NVIDIA cubins, objects, libraries and NVVM IR cannot be
 * translated: CUDA_ERROR_NOT_SUPPORTED, logged.
 *
 * cuLibraryLoadData takes one image (the API has no list of inputs), so
 * several modules reach it the CUDA way: cuLinkComplete's image.
 *
 * A program built with nvcc -rdc=true registers a fatbin whose only image
 * is the device-linked cubin, and lists each file's relocatable fatbin
 * (the __nv_relfatbin containers) beside it (__fatBinC_Wrapper_t version
 * 2, fatbinary_section.h: "array of prelinked fatbins"): those fatbins'
 * PTX are linked here as cuLink* links them (rt_link_relocatable).
 */
#include "runtime/rt_link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir_link.h"
#include "lower/lower.h"
#include "ptx/container.h"
#include "ptx/ptx_parse.h"
#include "runtime/rt.h"

/* ---- the image ---------------------------------------------------------------- */

typedef struct rt_part {
  char *name;
  char *text;       /* NUL-terminated */
  size_t len;
} rt_part;

bool rt_link_is_image(const char *text, size_t len) {
  size_t n = sizeof RT_LINK_MAGIC - 1;
  return text && len >= n && !memcmp(text, RT_LINK_MAGIC, n);
}

/* Walks the parts of an image: *pos at the next "//part" line.  Treats
 * every length as hostile.  False at the end or on a malformed part. */
static bool next_part(const char *text, size_t len, size_t *pos, const char **name, size_t *name_len,
                      const char **ptx, size_t *ptx_len) {
  static const char tag[] = "//part ";
  size_t p = *pos;
  if (p >= len || len - p < sizeof tag - 1 || memcmp(text + p, tag, sizeof tag - 1)) return false;
  p += sizeof tag - 1;
  size_t n = 0;
  bool digits = false;
  while (p < len && text[p] >= '0' && text[p] <= '9') {
    if (n > (SIZE_MAX - 9) / 10) return false;
    n = n * 10 + (size_t)(text[p++] - '0');
    digits = true;
  }
  if (!digits || p >= len || text[p] != ' ') return false;
  p++;
  const char *nm = text + p;
  while (p < len && text[p] != '\n') p++;
  if (p >= len) return false;
  *name = nm;
  *name_len = (size_t)(text + p - nm);
  p++;
  if (n > len - p) return false;
  *ptx = text + p;
  *ptx_len = n;
  p += n;
  if (p < len && text[p] == '\n') p++;
  *pos = p;
  return true;
}

static ir_module *parse_image(const char *name, const char *text, size_t len, pw_diag *d) {
  size_t pos = 0;
  while (pos < len && text[pos] != '\n') pos++;
  pos++;
  unsigned n = 0, cap = 0;
  ir_module **mods = NULL;
  const char *pn, *ptx;
  size_t pnl, plen;
  bool bad = false;
  while (pos < len && text[pos] != '\0') {
    if (!next_part(text, len, &pos, &pn, &pnl, &ptx, &plen)) {
      pw_error(d, name, "malformed linked image at byte %zu", pos);
      bad = true;
      break;
    }
    char part_name[256];
    snprintf(part_name, sizeof part_name, "%.*s", (int)(pnl < 200 ? pnl : 200), pn);
    ir_module *m = ptx_parse(part_name, ptx, plen, d, NULL);
    if (!m) {
      bad = true;
      break;
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 4;
      ir_module **nm = realloc(mods, cap * sizeof *mods);
      if (!nm) {
        ir_module_destroy(m);
        bad = true;
        break;
      }
      mods = nm;
    }
    mods[n++] = m;
  }
  if (!bad && n == 0) {
    pw_error(d, name, "linked image without modules");
    bad = true;
  }
  ir_module *out = NULL;
  if (bad) {
    for (unsigned k = 0; k < n; k++) ir_module_destroy(mods[k]);
  } else {
    /* Undefined symbols are reported by rt_parse_module, once what no
     * kernel can reach is gone: an -rdc=true program links all of
     * libcudadevrt, whose other functions call driver entry points
     * nothing here provides, as nvlink keeps only what is used. */
    out = ir_link_modules(mods, n, true, d);
    if (out) ir_link_drop_unreached(out);
  }
  free(mods);
  return out;
}

bool rt_link_compile(const char *name, const char *text, size_t len, const cg_options *opt,
                     cg_emit_kind kind, cg_output *out, pw_diag *d) {
  size_t pos = 0;
  while (pos < len && text[pos] != '\n') pos++;
  pos++;
  unsigned n = 0, cap = 0;
  const char **names = NULL, **texts = NULL;
  size_t *lens = NULL;
  char **owned = NULL;   /* the parts' names, NUL-terminated copies */
  bool ok = true;
  const char *pn, *ptx;
  size_t pnl, plen;
  while (ok && pos < len && text[pos] != '\0') {
    if (!next_part(text, len, &pos, &pn, &pnl, &ptx, &plen)) {
      pw_error(d, name, "malformed linked image at byte %zu", pos);
      ok = false;
      break;
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 4;
      names = realloc(names, cap * sizeof *names);
      texts = realloc(texts, cap * sizeof *texts);
      lens = realloc(lens, cap * sizeof *lens);
      owned = realloc(owned, cap * sizeof *owned);
      if (!names || !texts || !lens || !owned) PW_DIE("out of memory");
    }
    owned[n] = strndup(pn, pnl);
    if (!owned[n]) PW_DIE("out of memory");
    names[n] = owned[n];
    texts[n] = ptx;
    lens[n++] = plen;
  }
  if (ok && !n) {
    pw_error(d, name, "linked image without modules");
    ok = false;
  }
  if (ok) ok = cg_compile_ptx_linked(n, names, texts, lens, opt, kind, out, d);
  for (unsigned k = 0; k < n; k++) free(owned[k]);
  free(owned);
  free(names);
  free(texts);
  free(lens);
  return ok;
}

ir_module *rt_parse_module(const char *name, const char *text, size_t len, pw_diag *d) {
  ir_module *m = rt_link_is_image(text, len) ? parse_image(name, text, len, d)
                                              : ptx_parse(name, text, len, d, NULL);
  /* As CUDA's JIT: a module that calls a function or uses a variable that
   * is only declared fails its load (link it first, cuLink*). */
  if (m && !ir_link_check_defined(m, d)) {
    ir_module_destroy(m);
    return NULL;
  }
  /* One device: multimem.* is ld/st/red of the one copy. */
  if (m) lower_multimem(m, &(lower_multimem_options){.diag = d});
  return m;
}

/* ---- the link state ----------------------------------------------------------- */

#define LINK_MAGIC 0x4c6e6b21u

struct CUlinkState_st {
  uint32_t magic;
  rt_part *parts;
  unsigned nparts, cap;
  char *image;                  /* cuLinkComplete's output, owned here */
  size_t image_len;
  char *error_log, *info_log;   /* CU_JIT_ERROR/INFO_LOG_BUFFER, the caller's */
  size_t error_cap, info_cap;
  void **error_size_out, **info_size_out;  /* where the _SIZE_BYTES values live */
};

static bool link_valid(CUlinkState s) { return s && s->magic == LINK_MAGIC; }

/* The JIT options cuLinkCreate keeps: the log buffers (cuda.h: a size
 * option's value is the size itself, cast to void *, and is overwritten
 * with the bytes written). */
static void take_options(CUlinkState s, unsigned n, CUjit_option *o, void **v) {
  if (!o || !v) return;
  for (unsigned k = 0; k < n; k++) {
    switch (o[k]) {
    case CU_JIT_ERROR_LOG_BUFFER: s->error_log = v[k]; break;
    case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
      s->error_cap = (size_t)(uintptr_t)v[k];
      s->error_size_out = &v[k];
      break;
    case CU_JIT_INFO_LOG_BUFFER: s->info_log = v[k]; break;
    case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
      s->info_cap = (size_t)(uintptr_t)v[k];
      s->info_size_out = &v[k];
      break;
    default:
      RT_LOG(rt_debug, "cuLinkCreate: JIT option %d ignored", (int)o[k]);
      break;
    }
  }
}

static void log_to(char *buf, size_t cap, void **size_out, const char *msg) {
  if (!buf || !cap) return;
  snprintf(buf, cap, "%s", msg);
  if (size_out) *size_out = (void *)(uintptr_t)(strlen(buf) + 1);
}

static void link_error(CUlinkState s, const char *msg) {
  RT_LOG(rt_error, "cuLink: %s", msg);
  log_to(s->error_log, s->error_cap, s->error_size_out, msg);
}

RT_EXPORT CUresult cuLinkCreate(unsigned int n, CUjit_option *o, void **v, CUlinkState *out) {
  RT_TRACE("%u, %p, %p, %p", n, (void *)o, (void *)v, (void *)out);
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!out || (n && (!o || !v))) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUlinkState s = calloc(1, sizeof *s);
  if (!s) return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  s->magic = LINK_MAGIC;
  take_options(s, n, o, v);
  *out = s;
  return rt_ret(CUDA_SUCCESS);
}

static CUresult add_part(CUlinkState s, const char *name, const char *text, size_t len) {
  if (s->nparts == s->cap) {
    unsigned cap = s->cap ? s->cap * 2 : 4;
    rt_part *p = realloc(s->parts, cap * sizeof *p);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    s->parts = p;
    s->cap = cap;
  }
  rt_part *p = &s->parts[s->nparts];
  p->name = strdup(name && *name ? name : "input");
  p->text = malloc(len + 1);
  if (!p->name || !p->text) {
    free(p->name);
    free(p->text);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  /* A part's name sits on its header line: no newline in it. */
  for (char *c = p->name; *c; c++)
    if (*c == '\n' || *c == '\r') *c = '_';
  memcpy(p->text, text, len);
  p->text[len] = '\0';
  p->len = len;
  s->nparts++;
  return CUDA_SUCCESS;
}

/* The PTX of a fatbin (container or wrapper) chosen as rt_module.c's
 * load_container chooses it: the best entry by ptx_rank that reads. */
static CUresult add_fatbin(CUlinkState s, const void *data, const char *name) {
  const uint8_t *c = data;
  uint32_t magic;
  memcpy(&magic, c, 4);
  if (magic == PTX_WRAPPER_MAGIC) {
    memcpy(&c, (const uint8_t *)data + 8, sizeof c);
    if (!c) return CUDA_ERROR_INVALID_IMAGE;
    memcpy(&magic, c, 4);
  }
  if (magic != PTX_FATBIN_MAGIC) return CUDA_ERROR_INVALID_IMAGE;
  uint16_t hsize;
  uint64_t bytes;
  memcpy(&hsize, c + 6, 2);
  memcpy(&bytes, c + 8, 8);
  if (hsize < 16 || bytes > ((uint64_t)1 << 34)) return CUDA_ERROR_INVALID_IMAGE;
  pw_diag d;
  pw_diag_init(&d, NULL);
  ptx_file *f = ptx_file_from_memory("fatbin", c, hsize + bytes, &d);
  CUresult r = CUDA_ERROR_NO_BINARY_FOR_GPU;
  if (f && f->ncontainers) {
    uint32_t order[64];
    uint32_t n = rt_ptx_rank(&f->containers[0], order, 64);
    for (uint32_t i = 0; i < n && i < 64 && r != CUDA_SUCCESS; i++) {
      ptx_payload p;
      if (!ptx_entry_read(f, &f->containers[0].entries[order[i]], NULL, NULL, &d, &p)) continue;
      r = add_part(s, name, (const char *)p.data, p.len);
      ptx_payload_free(&p);
    }
  } else {
    r = CUDA_ERROR_INVALID_IMAGE;
  }
  if (r != CUDA_SUCCESS) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s: no PTX in the fatbin%s%s",
             name, pw_diag_text(&d)[0] ? ": " : "", pw_diag_text(&d));
    link_error(s, msg);
  }
  if (f) ptx_file_close(f);
  pw_diag_fini(&d);
  return r;
}

/* A linked image given back as an input: its parts. */
static CUresult add_image(CUlinkState s, const char *text, size_t len) {
  size_t pos = 0;
  while (pos < len && text[pos] != '\n') pos++;
  pos++;
  const char *pn, *ptx;
  size_t pnl, plen;
  while (pos < len && text[pos] != '\0') {
    if (!next_part(text, len, &pos, &pn, &pnl, &ptx, &plen)) return CUDA_ERROR_INVALID_IMAGE;
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(pnl < 200 ? pnl : 200), pn);
    CUresult r = add_part(s, name, ptx, plen);
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

static const char *input_name(CUjitInputType t) {
  switch (t) {
  case CU_JIT_INPUT_CUBIN: return "cubin";
  case CU_JIT_INPUT_PTX: return "PTX";
  case CU_JIT_INPUT_FATBINARY: return "fatbin";
  case CU_JIT_INPUT_OBJECT: return "object";
  case CU_JIT_INPUT_LIBRARY: return "library";
  case CU_JIT_INPUT_NVVM: return "NVVM IR";
  default: return "unknown input";
  }
}

static CUresult add_data(CUlinkState s, CUjitInputType type, const void *data, size_t size, const char *name) {
  const char *text = data;
  switch (type) {
  case CU_JIT_INPUT_PTX: {
    /* size may count a terminating NUL (CUDA's samples pass strlen + 1) */
    size_t len = strnlen(text, size);
    return add_part(s, name, text, len);
  }
  case CU_JIT_INPUT_FATBINARY:
    if (size < 16) return CUDA_ERROR_INVALID_IMAGE;
    return add_fatbin(s, data, name ? name : "fatbin");
  case CU_JIT_INPUT_CUBIN:
  case CU_JIT_INPUT_OBJECT: {
    size_t len = strnlen(text, size);
    if (rt_link_is_image(text, len)) return add_image(s, text, len);
    break;
  }
  default:
    break;
  }
  char msg[256];
  snprintf(msg, sizeof msg, "%s: a %s input cannot be translated: only PTX (and fatbins with PTX) link",
           name ? name : "input", input_name(type));
  link_error(s, msg);
  return CUDA_ERROR_NOT_SUPPORTED;
}

RT_EXPORT CUresult cuLinkAddData(CUlinkState s, CUjitInputType type, void *data, size_t size,
                                 const char *name, unsigned int n, CUjit_option *o, void **v) {
  RT_TRACE("%p, %d, %p, %zu, %s, %u", (void *)s, (int)type, data, size, name ? name : "(null)", n);
  if (!link_valid(s)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  if (!data || !size) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(add_data(s, type, data, size, name));
}

RT_EXPORT CUresult cuLinkAddFile(CUlinkState s, CUjitInputType type, const char *path, unsigned int n,
                                 CUjit_option *o, void **v) {
  RT_TRACE("%p, %d, %s, %u", (void *)s, (int)type, path ? path : "(null)", n);
  if (!link_valid(s)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  if (!path) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  FILE *f = fopen(path, "rb");
  if (!f) return rt_ret(CUDA_ERROR_FILE_NOT_FOUND);
  char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len + 4096 + 1 > cap) {
      cap = cap ? cap * 2 : 65536;
      char *nb = realloc(buf, cap);
      if (!nb) {
        free(buf);
        fclose(f);
        return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
      }
      buf = nb;
    }
    size_t got = fread(buf + len, 1, cap - len - 1, f);
    len += got;
    if (got == 0) break;
  }
  fclose(f);
  CUresult r = len ? add_data(s, type, buf, len, path) : CUDA_ERROR_INVALID_IMAGE;
  free(buf);
  return rt_ret(r);
}

/* The parts as one linked image (NUL-terminated, *len without the NUL). */
static char *build_image(CUlinkState s, size_t *len) {
  size_t total = sizeof RT_LINK_MAGIC + 24;
  for (unsigned k = 0; k < s->nparts; k++) total += s->parts[k].len + strlen(s->parts[k].name) + 48;
  char *img = malloc(total);
  if (!img) return NULL;
  size_t at = (size_t)snprintf(img, total, "%s%u\n", RT_LINK_MAGIC, s->nparts);
  for (unsigned k = 0; k < s->nparts; k++) {
    at += (size_t)snprintf(img + at, total - at, "//part %zu %s\n", s->parts[k].len, s->parts[k].name);
    memcpy(img + at, s->parts[k].text, s->parts[k].len);
    at += s->parts[k].len;
    img[at++] = '\n';
  }
  img[at] = '\0';
  *len = at;
  return img;
}

static void link_state_fini(CUlinkState s) {
  for (unsigned k = 0; k < s->nparts; k++) {
    free(s->parts[k].name);
    free(s->parts[k].text);
  }
  free(s->parts);
  free(s->image);
}

CUresult rt_link_relocatable(const uint8_t *const *fatbins, unsigned n, const char *name,
                             char **image, size_t *len) {
  struct CUlinkState_st s = {.magic = LINK_MAGIC};
  CUresult r = n ? CUDA_SUCCESS : CUDA_ERROR_NO_BINARY_FOR_GPU;
  for (unsigned k = 0; k < n && r == CUDA_SUCCESS; k++) {
    char part[300];
    snprintf(part, sizeof part, "%s: relocatable fatbin %u of %u", name, k + 1, n);
    r = add_fatbin(&s, fatbins[k], part);
  }
  if (r == CUDA_SUCCESS && !(*image = build_image(&s, len))) r = CUDA_ERROR_OUT_OF_MEMORY;
  if (r == CUDA_SUCCESS)
    RT_LOG(rt_debug, "%s: linked the PTX of %u relocatable fatbins (%zu bytes)", name, n, *len);
  link_state_fini(&s);
  return r;
}

RT_EXPORT CUresult cuLinkComplete(CUlinkState s, void **cubin, size_t *size) {
  RT_TRACE("%p, %p, %p", (void *)s, (void *)cubin, (void *)size);
  if (!link_valid(s)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  if (!cubin || !size) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (s->nparts == 0) {
    link_error(s, "nothing to link: no input was added");
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  }
  size_t at;
  char *img = build_image(s, &at);
  if (!img) return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  /* Link now, as CUDA does: errors belong to cuLinkComplete. */
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = rt_parse_module("linked", img, at, &d);
  CUresult r = CUDA_SUCCESS;
  if (!m) {
    link_error(s, pw_diag_text(&d));
    r = strstr(pw_diag_text(&d), "symbol '") ? CUDA_ERROR_INVALID_IMAGE : CUDA_ERROR_INVALID_PTX;
    free(img);
  } else {
    ir_module_destroy(m);
    free(s->image);
    s->image = img;
    s->image_len = at;
    *cubin = img;
    *size = at + 1;
    char info[128];
    snprintf(info, sizeof info, "linked %u PTX modules (%zu bytes)", s->nparts, at);
    log_to(s->info_log, s->info_cap, s->info_size_out, info);
    RT_LOG(rt_debug, "cuLinkComplete: %s", info);
  }
  pw_diag_fini(&d);
  return rt_ret(r);
}

RT_EXPORT CUresult cuLinkDestroy(CUlinkState s) {
  RT_TRACE("%p", (void *)s);
  if (!link_valid(s)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  link_state_fini(s);
  s->magic = 0;
  free(s);
  return rt_ret(CUDA_SUCCESS);
}

/* The CUDA 5.5 symbols (cuda.h maps the names to the _v2 ones): the same
 * signatures. */
RT_EXPORT CUresult rt_cuLinkCreate_v1(unsigned int n, CUjit_option *o, void **v, CUlinkState *out)
    __asm__("cuLinkCreate");
RT_EXPORT CUresult rt_cuLinkCreate_v1(unsigned int n, CUjit_option *o, void **v, CUlinkState *out) {
  return cuLinkCreate(n, o, v, out);
}
RT_EXPORT CUresult rt_cuLinkAddData_v1(CUlinkState s, CUjitInputType type, void *data, size_t size,
                                       const char *name, unsigned int n, CUjit_option *o, void **v)
    __asm__("cuLinkAddData");
RT_EXPORT CUresult rt_cuLinkAddData_v1(CUlinkState s, CUjitInputType type, void *data, size_t size,
                                       const char *name, unsigned int n, CUjit_option *o, void **v) {
  return cuLinkAddData(s, type, data, size, name, n, o, v);
}
RT_EXPORT CUresult rt_cuLinkAddFile_v1(CUlinkState s, CUjitInputType type, const char *path,
                                       unsigned int n, CUjit_option *o, void **v) __asm__("cuLinkAddFile");
RT_EXPORT CUresult rt_cuLinkAddFile_v1(CUlinkState s, CUjitInputType type, const char *path,
                                       unsigned int n, CUjit_option *o, void **v) {
  return cuLinkAddFile(s, type, path, n, o, v);
}
