/*
** bench_util.h — timing helpers shared by the C benchmarks.
*/
#ifndef GA_BENCH_UTIL_H
#define GA_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* CPU time of the calling thread: on a shared machine it leaves out the time
** the thread waited for a core (the neighbours' load), which wall time does
** not.  For one-thread CPU work only. */
static inline double bench_cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline int bench_cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v). */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmpd);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
