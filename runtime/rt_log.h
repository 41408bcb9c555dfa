/* runtime/rt_log.h: the runtime's log (rt_log.c): PTXWAVE_LOG=error|warn|
 * info|debug|trace (default warn), to stderr or to PTXWAVE_LOG_FILE.
 *
 * Part of the kernel-cache library (pw_rt_cache: rt_log.c, rt_cache.c,
 * rt_bundle.c; docs/decisions.md), which libcuda.so.1 and `ptxwave
 * convert` both link, so it needs no CUDA header.
 */
#ifndef PW_RT_LOG_H
#define PW_RT_LOG_H

typedef enum rt_level { rt_error, rt_warn, rt_info, rt_debug, rt_trace } rt_level;
extern int rt_log_level;   /* PTXWAVE_LOG, read once; default warn */
void rt_log_init(void);
void rt_log(rt_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define RT_LOG(l, ...) ((l) <= rt_log_level ? rt_log((l), __VA_ARGS__) : (void)0)
#define RT_TRACE(fmt, ...) RT_LOG(rt_trace, "%s(" fmt ")", __func__, ##__VA_ARGS__)

#endif
