/* convert/cv_log.c: the two logging symbols that the runtime's cache and
 * bundle code (runtime/rt_cache.c, runtime/rt_bundle.c, compiled into this
 * library as they are: the converter must store exactly what the runtime
 * reads) call through RT_LOG.  In `ptxwave convert` their warnings go to
 * stderr; libcuda.so.1 has its own rt_log.c. */
#include <stdarg.h>
#include <stdio.h>

#include "runtime/rt.h"

int rt_log_level = rt_warn;

void rt_log(rt_level l, const char *fmt, ...) {
  static const char *const names[] = {"error", "warn", "info", "debug", "trace"};
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(stderr, "ptxwave convert: %s: %s\n", names[l], buf);
}
