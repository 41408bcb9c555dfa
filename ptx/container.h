/* ptx/container.h: NVIDIA's containers: ELF64 files, ar archives, fatbin
 * containers and their entries, and the PTX text inside them.
 *
 * A ptx_file is one input, mapped read only (mmap) and scanned once when it
 * is opened: every fatbin container found in it (in any section, see
 * docs/containers.md), every entry of each container, and every fatbin
 * wrapper of `.nvFatBinSegment`.  Payloads are decompressed on demand
 * (ptx_entry_read) into a buffer the caller owns.
 *
 * Every offset, size and count in the input is hostile: the readers check
 * each one against the bytes that hold it, without overflow, and report a
 * malformed structure through pw_error_off() with the file's byte offset,
 * then go on with what is still readable.  Nothing here has global mutable
 * state.  A ptx_file is immutable once opened, so several threads may read
 * entries of the same file at once, each with its own ptx_decoder.
 *
 * The layout these readers implement, with the evidence for each field, is
 * in docs/containers.md.
 */
#ifndef PW_PTX_CONTAINER_H
#define PW_PTX_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/diag.h"

#define PTX_FATBIN_MAGIC 0xBA55ED50u  /* container header (fatbinary.h: FATBIN_MAGIC) */
#define PTX_WRAPPER_MAGIC 0x466243B1u /* __fatBinC_Wrapper_t (fatbinary_section.h) */

/* Entry kinds (u16 at entry +0x00).  Other values are listed, not decoded. */
enum {
  ptx_kind_ptx = 1,   /* PTX text */
  ptx_kind_elf = 2,   /* an SASS cubin (ELF, e_machine EM_CUDA) */
  ptx_kind_other = 8, /* seen in cuFFT/cuSPARSE: LTO IR; listed only */
};

/* Entry flags (u64 at entry +0x28), as observed; docs/containers.md. */
#define PTX_FLAG_64BIT 0x1ull        /* 64-bit host ABI */
#define PTX_FLAG_DEBUG 0x2ull        /* compiled with -G */
#define PTX_FLAG_LINUX 0x10ull       /* host OS */
#define PTX_FLAG_COMPRESS_OLD 0x1000ull /* pre-CUDA-11 compression: not supported */
#define PTX_FLAG_LZ4 0x2000ull       /* payload is one raw LZ4 block */
#define PTX_FLAG_ZSTD 0x8000ull      /* payload is one zstd frame */
#define PTX_FLAG_ARCH_A 0x100000ull  /* arch-specific target: sm_90a */
#define PTX_FLAG_ARCH_F 0x200000ull  /* family-specific target: sm_100f */
#define PTX_FLAG_CUBIN_OPTS 0x1000000ull /* cubin carries a binary options blob */

/* Decompressed sizes above this are refused unless the caller sets another
 * cap: the header's size field is hostile, and the biggest real entry in
 * CUDA 13's libraries is far below it. */
#define PTX_DEFAULT_MAX_DECOMPRESSED ((uint64_t)1 << 30)

/* The total decompression budget of one input: all the entries read from
 * one ptx_file together may expand to at most max(floor, factor x the
 * input's size) bytes.  The per-entry cap alone let a 175 KB fatbin of
 * many small frames, each claiming hundreds of MB, cost 10 s per inspect,
 * parse or load (issue 20).  Real inputs stay far below: CUDA 13.0's
 * libraries expand 8x overall (1.37 GB -> 11.0 GB, benchmarks/README.md
 * extract_bench), PTX text compresses about 10-20x.  The runtime takes
 * another budget from PTXWAVE_DECOMPRESS_BUDGET (docs/runtime.md). */
#define PTX_BUDGET_FLOOR ((uint64_t)256 << 20)
#define PTX_BUDGET_FACTOR 64u
uint64_t ptx_default_budget(uint64_t input_size);

typedef enum ptx_compression {
  ptx_comp_none,
  ptx_comp_lz4,
  ptx_comp_zstd,
  ptx_comp_unsupported, /* the old 0x1000 scheme, or LZ4 and zstd both set */
} ptx_compression;

typedef enum ptx_input {
  ptx_input_unknown,
  ptx_input_elf,    /* a host ELF64: executable, shared object, relocatable */
  ptx_input_ar,     /* an ar archive of host ELF objects */
  ptx_input_fatbin, /* raw fatbin containers (nvcc -fatbin) */
  ptx_input_ptx,    /* PTX text */
  ptx_input_cubin,  /* a device ELF (EM_CUDA): listed, not translatable */
} ptx_input;

/* One entry of a container.  Offsets are byte offsets in the file. */
typedef struct ptx_entry {
  uint64_t offset;           /* entry header */
  uint32_t header_size;      /* +0x04 */
  uint16_t kind;             /* +0x00: ptx_kind_* or another value */
  uint16_t version_major;    /* +0x1A: PTX ISA for PTX; ELF ABI of a cubin */
  uint16_t version_minor;    /* +0x18 */
  uint32_t arch;             /* +0x1C: SM number, 80 for sm_80 */
  char arch_suffix;          /* 0, 'a' or 'f' (from the flags) */
  uint64_t flags;            /* +0x28 */
  ptx_compression compression;
  uint64_t payload_offset;   /* offset + header_size */
  uint64_t payload_size;     /* +0x08: bytes reserved, padded to 8 */
  uint64_t compressed_size;  /* +0x10: bytes of the compressed stream; 0 if stored */
  uint64_t uncompressed_size;/* +0x38 if compressed, else payload_size */
  const char *options;       /* option text in the header (NUL-terminated
                              * copy, trailing blanks trimmed), or NULL */
  const uint8_t *options_bin;/* cubins: binary option blob in the mapping */
  uint32_t options_bin_len;
  const char *ident;         /* +0x20/+0x24: source file name (-G), or NULL */
} ptx_entry;

typedef struct ptx_container {
  uint64_t offset;      /* container header in the file */
  uint64_t size;        /* header + entries */
  const char *section;  /* ELF section holding it; NULL for raw fatbins */
  uint64_t section_offset; /* offset within that section */
  uint32_t shndx;       /* that section's index in its ELF (0 for raw fatbins) */
  uint64_t vaddr;       /* its address in the loaded image (sh_addr-based;
                         * relative to the section in relocatable objects) */
  const char *member;   /* ar member name, or NULL */
  int32_t wrapper;      /* index of a wrapper pointing at it, or -1 */
  bool malformed;       /* an entry failed validation; entries holds those before it */
  uint32_t nentries;
  ptx_entry *entries;
} ptx_container;

/* A __fatBinC_Wrapper_t in .nvFatBinSegment (fatbinary_section.h). */
typedef struct ptx_wrapper {
  uint64_t offset;      /* in the file */
  uint32_t version;     /* 1: FATBINC_VERSION, 2: FATBINC_LINK_VERSION */
  uint64_t data;        /* pointer to the container (in place, or from a relocation) */
  uint64_t list;        /* v1: filename (unused), v2: prelinked fatbin array */
  const char *member;   /* ar member name, or NULL */
  int32_t container;    /* index of the container `data` points at, or -1 */
} ptx_wrapper;

typedef struct ptx_file {
  const char *path;     /* as given */
  const char *name;     /* basename of path: the first part of stable names */
  const uint8_t *data;  /* the whole input, mapped */
  uint64_t size;
  ptx_input input;
  uint32_t ncontainers;
  ptx_container *containers;
  uint32_t nwrappers;
  ptx_wrapper *wrappers;
  uint32_t nmembers;    /* ar: members read */
  /* ptx_input_cubin: the device ELF's arch (e_flags); ptx_input_ptx: the
   * .version and .target of the text */
  uint32_t arch;
  char arch_suffix;
  uint16_t version_major, version_minor;
  int nerrors;          /* input errors found while scanning */
  /* The bytes every ptx_entry_read of this file may produce together:
   * ptx_default_budget(size) at open; a caller may set another before
   * reading (0: no budget).  Reads on several threads share it. */
  uint64_t decompress_budget;
  /* private */
  uint64_t *decompressed;  /* spent of the budget (atomic; in the arena) */
  pw_arena arena;
  void *map;
  size_t map_len;
} ptx_file;

/* ptx/elf.c (scanning) */

/* Maps and scans the file.  NULL, with a message, only when it cannot be
 * opened or mapped; malformed contents give a ptx_file with what was
 * readable and f->nerrors > 0. */
ptx_file *ptx_file_open(const char *path, pw_diag *d);
/* The same over bytes the caller keeps alive until ptx_file_close. */
ptx_file *ptx_file_from_memory(const char *path, const void *data, size_t size, pw_diag *d);
void ptx_file_close(ptx_file *f);

const char *ptx_input_name(ptx_input in);
const char *ptx_kind_name(uint16_t kind);       /* "ptx", "cubin", "kind8"... */
const char *ptx_compression_name(ptx_compression c);

/* ptx/decompress.c */

/* Reusable decompression state (a zstd context); one per thread. */
typedef struct ptx_decoder ptx_decoder;
ptx_decoder *ptx_decoder_new(void);
void ptx_decoder_free(ptx_decoder *dec);

typedef struct ptx_read_options {
  uint64_t max_decompressed; /* 0: PTX_DEFAULT_MAX_DECOMPRESSED */
} ptx_read_options;

/* A payload in memory the caller owns (malloc); data[len] is a NUL so PTX
 * text can be used as a C string. */
typedef struct ptx_payload {
  uint8_t *data;
  size_t len;
} ptx_payload;
void ptx_payload_free(ptx_payload *p);

/* Decompresses (or copies) one entry's payload.  PTX loses its trailing
 * NULs.  opt and dec may be NULL.  On failure: false, a message with the
 * entry's byte offset, out zeroed.  A compressed entry is charged its
 * decompressed size against the file's budget before it is decoded; one
 * that would pass it is refused. */
bool ptx_entry_read(const ptx_file *f, const ptx_entry *e, const ptx_read_options *opt,
                    ptx_decoder *dec, pw_diag *d, ptx_payload *out);

/* The decompressor under ptx_entry_read, for tests and the fuzzer:
 * src[0..src_len) holds a stream of `comp` that must expand to exactly
 * `expected` bytes, at most `cap`.  `off` is where src lies in `path`. */
bool ptx_decompress(ptx_compression comp, const uint8_t *src, size_t src_len, uint64_t expected,
                    uint64_t cap, ptx_decoder *dec, pw_diag *d, const char *path, uint64_t off,
                    ptx_payload *out);

/* ptx/select.c */

/* What the compiler behind us accepts. */
typedef struct ptx_target {
  uint16_t max_isa_major, max_isa_minor; /* highest PTX ISA version parsed */
  uint32_t max_sm;                       /* highest SM whose features are implemented */
  bool arch_specific;                    /* accept sm_XXa / sm_XXf PTX */
  /* Also rank, after the usable entries, the PTX that is only for newer
   * SMs or arch-specific (nearest SM first): a translator that parses any
   * PTX can still take it (the runtime's loader, docs/runtime.md). */
  bool any_ptx;
} ptx_target;

/* The PTX entries of c that t can use, best first; returns how many there
 * are (at most cap are stored).  The rule is in select.c and
 * docs/containers.md: highest SM first, then highest ISA version, then plain
 * before `f` before `a`; the rest is the fall-back order.  With t->any_ptx
 * the other PTX entries (ISA within t's) follow, nearest SM above first. */
uint32_t ptx_rank(const ptx_container *c, const ptx_target *t, uint32_t *order, uint32_t cap);
/* The first of ptx_rank, or -1 when no PTX entry is usable. */
int ptx_select(const ptx_container *c, const ptx_target *t);

/* ptx/iterate.c */

/* One decompressed payload handed to a ptx_module_fn. */
typedef struct ptx_module {
  const ptx_file *file;
  const ptx_container *container; /* NULL for PTX text and cubin inputs */
  const ptx_entry *entry;         /* NULL for PTX text and cubin inputs */
  uint32_t container_index, entry_index;
  uint16_t kind;                  /* ptx_kind_ptx or ptx_kind_elf */
  uint32_t arch;
  char arch_suffix;
  const char *name;               /* stable name, see ptx_entry_name */
  const char *text;               /* payload, NUL-terminated; PTX text for PTX */
  size_t len;
} ptx_module;

/* Returns false to stop the walk. */
typedef bool (*ptx_module_fn)(const ptx_module *m, void *user);

/* Kinds to visit. */
#define PTX_VISIT_PTX 1u
#define PTX_VISIT_CUBIN 2u

/* Calls fn for every PTX (and, with PTX_VISIT_CUBIN, cubin) payload of f,
 * in file order.  A PTX text input is one module.  Entries that fail to
 * decompress are reported and skipped.  Returns the number of errors. */
int ptx_file_for_each(const ptx_file *f, unsigned visit, const ptx_read_options *opt,
                      ptx_decoder *dec, pw_diag *d, ptx_module_fn fn, void *user);
/* Opens path, visits its PTX modules, closes it.  Returns the number of
 * errors (opening, scanning, decompressing). */
int ptx_for_each_ptx(const char *path, const ptx_read_options *opt, pw_diag *d,
                     ptx_module_fn fn, void *user);

/* The stable name of an entry:
 *   <file name>.c<container, 4+ digits>.e<entry, 2+ digits>.sm_<arch><a|f>.<ptx|cubin|kindN>
 * e.g. libcublas.so.13.c0123.e04.sm_90a.ptx.  Writes at most cap bytes
 * (snprintf rules) and returns the full length. */
size_t ptx_entry_name(char *buf, size_t cap, const ptx_file *f, uint32_t container,
                      uint32_t entry);

/* Counts `.entry NAME` directives of PTX text (cheap scan: skips comments
 * and strings, not a parse).  When names is non-NULL, up to cap
 * NUL-terminated names are copied from the arena. */
uint32_t ptx_scan_kernels(const char *text, size_t len, pw_arena *a, const char **names,
                          uint32_t cap);
/* The cluster directives of the same kernels, in the same order (the same
 * cheap scan): .reqnctapercluster (0 0 0 when absent; missing dimensions
 * 1) and .explicitcluster (PTX ISA 11.4). */
typedef struct ptx_kernel_cluster {
  uint32_t reqnctapercluster[3];
  bool explicitcluster;
} ptx_kernel_cluster;
uint32_t ptx_scan_kernel_clusters(const char *text, size_t len, ptx_kernel_cluster *out, uint32_t cap);

/* ptx/cubin.c */

/* Counts the kernels (STT_FUNC symbols with STO_CUDA_ENTRY) of an SASS
 * cubin's symbol table; with names non-NULL, copies up to cap of them from
 * the arena.  A malformed or non-CUDA ELF has none. */
uint32_t ptx_cubin_kernels(const uint8_t *elf, size_t size, pw_arena *a, const char **names,
                           uint32_t cap);

#endif
