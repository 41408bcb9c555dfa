/* benchmarks/extract_bench.c: how fast ptxwave gets the payloads out of the
 * CUDA toolkit's libraries, next to the zstd and lz4 command-line tools on
 * the same payloads in the same run.  Prints throughputs and ratios; never
 * asserts a timing (benchmarks/README.md).
 *
 * What is measured:
 *   1. scan: opening (mmap) and scanning every input for containers;
 *   2. extract: decompressing every PTX and cubin entry in memory, as
 *      `ptxwave extract` does before writing (decompressed MB/s over the
 *      wall time of scan + decompression);
 *   3. the same payloads through the CLIs: every zstd payload is a zstd
 *      frame already, written as is, frames back to back, to one file for
 *      `zstd -d`.  An LZ4 payload is a raw block (no frame): each is wrapped
 *      in an LZ4 frame of its own (lz4's Frame_format.md: independent
 *      blocks, 4 MiB block maximum, no checksums) for `lz4 -d`.  A frame
 *      block holds at most 4 MiB, so the few blocks that expand beyond it
 *      are left out of the comparison and counted.  ptxwave's side of each
 *      ratio is the time its decoder spent on exactly those payloads in
 *      step 2; the CLIs' side is wall time of `tool -d -c FILE >/dev/null`,
 *      so it includes reading the file and process start-up (milliseconds).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "ptx/container.h"

#define LZ4_FRAME_BLOCK_MAX (4u << 20)

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct stats {
  double secs;
  uint64_t in_bytes, out_bytes, n;
} stats;

static void usage(void) {
  printf("usage: extract_bench [--dir DIR] [--tmp DIR] [--no-cli] [FILE...]\n"
         "\n"
         "Decompresses every PTX and cubin entry of FILE... (default: every real\n"
         "*.so* file of DIR, /usr/local/cuda/lib64, and libcudadevrt.a) and reports\n"
         "MB/s, then times `zstd -d` and `lz4 -d` on the same payloads, written\n"
         "under --tmp (default $TMPDIR or /tmp), and prints the ratios.\n");
}

static bool write_all(FILE *f, const void *p, size_t n) { return fwrite(p, 1, n, f) == n; }

static void put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

/* One raw LZ4 block as a one-block LZ4 frame. */
static bool write_lz4_frame(FILE *f, const uint8_t *block, uint32_t len) {
  uint8_t h[7];
  put32(h, 0x184D2204);           /* frame magic */
  h[4] = 0x60;                    /* FLG: version 01, independent blocks, nothing else */
  h[5] = 0x70;                    /* BD: 4 MiB block maximum */
  h[6] = (uint8_t)(XXH32(h + 4, 2, 0) >> 8); /* header checksum */
  uint8_t sz[4], end[4] = {0, 0, 0, 0};
  put32(sz, len);                 /* high bit clear: compressed */
  return write_all(f, h, 7) && write_all(f, sz, 4) && write_all(f, block, len) && write_all(f, end, 4);
}

static double run_cli(const char *cmd) {
  double t0 = now();
  int rc = system(cmd);
  double t = now() - t0;
  if (rc != 0) {
    printf("  (command failed: %s)\n", cmd);
    return -1;
  }
  return t;
}

static void print_rate(const char *what, const stats *s) {
  printf("  %-26s %8lu entries %10.1f MB -> %10.1f MB in %7.3f s = %8.1f MB/s decompressed\n", what, s->n,
         s->in_bytes / 1e6, s->out_bytes / 1e6, s->secs, s->secs > 0 ? s->out_bytes / 1e6 / s->secs : 0);
}

int main(int argc, char **argv) {
  const char *dir = "/usr/local/cuda/lib64", *tmpdir = getenv("TMPDIR");
  bool cli = true;
  if (!tmpdir) tmpdir = "/tmp";
  char **files = calloc((size_t)argc + 512, sizeof *files);
  int nfiles = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--dir") && i + 1 < argc)
      dir = argv[++i];
    else if (!strcmp(argv[i], "--tmp") && i + 1 < argc)
      tmpdir = argv[++i];
    else if (!strcmp(argv[i], "--no-cli"))
      cli = false;
    else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage();
      return 0;
    } else
      files[nfiles++] = argv[i];
  }
  if (!nfiles) {
    DIR *dh = opendir(dir);
    if (!dh) {
      printf("no %s: give FILE arguments\n", dir);
      return 1;
    }
    struct stat ids[512];
    struct dirent *de;
    while ((de = readdir(dh)) && nfiles < 512) {
      if (!strstr(de->d_name, ".so") && strcmp(de->d_name, "libcudadevrt.a")) continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
      struct stat st;
      if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) continue;
      bool dup = false;
      for (int i = 0; i < nfiles; i++) dup |= ids[i].st_ino == st.st_ino && ids[i].st_dev == st.st_dev;
      if (dup) continue;
      ids[nfiles] = st;
      files[nfiles++] = strdup(path);
    }
    closedir(dh);
  }

  char zpath[4096], lpath[4096];
  snprintf(zpath, sizeof zpath, "%s/ptxwave-bench-%ld.zst", tmpdir, (long)getpid());
  snprintf(lpath, sizeof lpath, "%s/ptxwave-bench-%ld.lz4", tmpdir, (long)getpid());
  FILE *zf = cli ? fopen(zpath, "wb") : NULL, *lf = cli ? fopen(lpath, "wb") : NULL;
  if (cli && (!zf || !lf)) {
    printf("cannot write under %s\n", tmpdir);
    return 1;
  }

  pw_diag d;
  pw_diag_init(&d, stderr);
  d.max_errors = 20;
  ptx_decoder *dec = ptx_decoder_new();
  stats scan = {0}, all = {0}, by[3] = {{0}}, lz4_framed = {0};
  uint64_t containers = 0, lz4_left_out = 0, lz4_left_out_bytes = 0;
  double write_secs = 0; /* writing the CLIs' input files: not extraction */
  int withfat = 0;
  double total0 = now();
  for (int i = 0; i < nfiles; i++) {
    double t0 = now();
    ptx_file *f = ptx_file_open(files[i], &d);
    scan.secs += now() - t0;
    if (!f) continue;
    scan.in_bytes += f->size;
    containers += f->ncontainers;
    withfat += f->ncontainers > 0;
    for (uint32_t ci = 0; ci < f->ncontainers; ci++) {
      const ptx_container *c = &f->containers[ci];
      for (uint32_t ei = 0; ei < c->nentries; ei++) {
        const ptx_entry *e = &c->entries[ei];
        if (e->kind != ptx_kind_ptx && e->kind != ptx_kind_elf) continue;
        ptx_payload pl;
        double t1 = now();
        bool ok = ptx_entry_read(f, e, NULL, dec, &d, &pl);
        double dt = now() - t1;
        if (!ok) continue;
        uint64_t in = e->compression == ptx_comp_none ? e->payload_size : e->compressed_size;
        int k = e->compression == ptx_comp_lz4 ? 1 : e->compression == ptx_comp_zstd ? 2 : 0;
        stats *s[2] = {&all, &by[k]};
        for (int j = 0; j < 2; j++) {
          s[j]->secs += dt;
          s[j]->n++;
          s[j]->in_bytes += in;
          s[j]->out_bytes += e->uncompressed_size;
        }
        const uint8_t *src = f->data + e->payload_offset;
        double tw = now();
        if (cli && k == 2) write_all(zf, src, (size_t)e->compressed_size);
        if (k == 1) {
          if (e->uncompressed_size <= LZ4_FRAME_BLOCK_MAX) {
            if (cli) write_lz4_frame(lf, src, (uint32_t)e->compressed_size);
            lz4_framed.secs += dt;
            lz4_framed.n++;
            lz4_framed.in_bytes += in;
            lz4_framed.out_bytes += e->uncompressed_size;
          } else {
            lz4_left_out++;
            lz4_left_out_bytes += e->uncompressed_size;
          }
        }
        write_secs += now() - tw;
        ptx_payload_free(&pl);
      }
    }
    ptx_file_close(f);
  }
  double wall = now() - total0 - write_secs;
  ptx_decoder_free(dec);
  if (zf) fclose(zf);
  if (lf) fclose(lf);

  printf("extract_bench: %d inputs, %d with fatbins, %lu containers, %.1f MB read\n", nfiles, withfat,
         containers, scan.in_bytes / 1e6);
  printf("ptxwave (in process, one thread):\n");
  printf("  %-26s %7.3f s\n", "open + scan", scan.secs);
  print_rate("all PTX + cubin", &all);
  print_rate("  LZ4 blocks", &by[1]);
  print_rate("  zstd frames", &by[2]);
  print_rate("  stored", &by[0]);
  printf("  %-26s %7.3f s wall = %.1f MB/s decompressed (scan + decompression; writing the CLI inputs not counted)\n",
         "extraction overall", wall, wall > 0 ? all.out_bytes / 1e6 / wall : 0);
  if (cli) {
    char cmd[8192];
    printf("the same payloads through the command-line tools (wall time, to /dev/null):\n");
    snprintf(cmd, sizeof cmd, "zstd -q -d -c '%s' > /dev/null", zpath);
    double tz = run_cli(cmd);
    snprintf(cmd, sizeof cmd, "lz4 -q -d -c '%s' > /dev/null", lpath);
    double tl = run_cli(cmd);
    double pz = by[2].secs > 0 ? by[2].out_bytes / 1e6 / by[2].secs : 0;
    double pl = lz4_framed.secs > 0 ? lz4_framed.out_bytes / 1e6 / lz4_framed.secs : 0;
    if (tz > 0)
      printf("  zstd -d: %10.1f MB in %7.3f s = %8.1f MB/s; ptxwave %8.1f MB/s; ratio ptxwave/zstd %.2f\n",
             by[2].out_bytes / 1e6, tz, by[2].out_bytes / 1e6 / tz, pz, pz / (by[2].out_bytes / 1e6 / tz));
    if (tl > 0)
      printf("  lz4 -d:  %10.1f MB in %7.3f s = %8.1f MB/s; ptxwave %8.1f MB/s; ratio ptxwave/lz4 %.2f\n",
             lz4_framed.out_bytes / 1e6, tl, lz4_framed.out_bytes / 1e6 / tl, pl,
             pl / (lz4_framed.out_bytes / 1e6 / tl));
    printf("  (%lu LZ4 blocks, %.1f MB decompressed, exceed the 4 MiB frame block limit and are not in the lz4 row)\n",
           lz4_left_out, lz4_left_out_bytes / 1e6);
    unlink(zpath);
    unlink(lpath);
  }
  pw_diag_fini(&d);
  return d.nerrors ? 1 : 0;
}
