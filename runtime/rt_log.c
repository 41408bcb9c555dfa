/* runtime/rt_log.c: PTXWAVE_LOG=error|warn|info|debug|trace (default warn),
 * to stderr or to the file PTXWAVE_LOG_FILE.  One line per message, written
 * with one write() so the lines of several threads do not interleave.
 * In the kernel-cache library (rt_log.h): no CUDA types here. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include "runtime/rt_log.h"

int rt_log_level = rt_warn;
static int log_fd = 2;

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

__attribute__((constructor)) void rt_log_init(void) {
  const char *v = getenv("PTXWAVE_LOG");
  if (v) {
    for (int i = 0; i <= rt_trace; i++)
      if (!strcmp(v, level_names[i])) rt_log_level = i;
  }
  const char *f = getenv("PTXWAVE_LOG_FILE");
  if (f && *f) {
    int fd = open(f, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) log_fd = fd;
  }
}

void rt_log(rt_level l, const char *fmt, ...) {
  char buf[2048];
  int n = snprintf(buf, sizeof buf, "ptxwave: %s: ", level_names[l]);
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
  va_end(ap);
  size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
  if (len > sizeof buf - 2) len = sizeof buf - 2;
  buf[len++] = '\n';
  ssize_t w = write(log_fd, buf, len);
  (void)w;
}
