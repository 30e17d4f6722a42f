/*
** cpu_reduce.c — the CPU rows of the seeds' reduction table: a plain
** one-thread loop (what numpy's sum does, rounding at every add) and
** gpuagg's exact CPU path (ga_cpu_sum), on random doubles; and the same two
** on random int64 (the integer layout: sums of 32-bit halves).
**
**   build/bench/cpu_reduce [--csv FILE] [--clock wall|cpu]
** --clock cpu times with the thread's CPU time instead of the wall clock:
** on a shared machine it leaves out the waits for a core (see the CSV's
** clock column).
** Sizes: the seeds' 1080x1920 values and 1 GiB.  Median of 7 after a
** warm-up.  Every exact result is checked against an independent exact
** total (__int128 sums: the doubles here are multiples of 2^-53 below 2, so
** v * 2^53 is an integer) and the run fails if one differs.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "cpu_reduce.h"
#include "xacc.h"

/* Kept out of line so the compiler cannot fold the loop away. */
__attribute__((noinline)) static double plain_sum(const double *v, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i++)
    s += v[i];
  return s;
}

__attribute__((noinline)) static int64_t plain_isum(const int64_t *v,
                                                    int64_t n) {
  uint64_t s = 0; /* wraps, like a C loop over int64 would (defined here) */
  for (int64_t i = 0; i < n; i++)
    s += (uint64_t)v[i];
  return (int64_t)s;
}

/* The exact CPU path as the engine runs it: chunks below GA_XACC_SAFE_ADDS,
** normalised after each. */
static void exact_sum(const uint64_t *v, int64_t n, int layout,
                      ga_sum_partial *p) {
  ga_sum_init(p);
  for (int64_t i = 0; i < n; i += 1 << 20) {
    int64_t m = n - i < (1 << 20) ? n - i : (1 << 20);
    ga_cpu_sum(v + i, NULL, m, layout, p);
    ga_sum_normalize(p);
  }
}

int main(int argc, char **argv) {
  FILE *csv = NULL;
  int bad = 0, cpu_clock = 0;
  for (int i = 1; i + 1 < argc; i++) {
    if (!strcmp(argv[i], "--csv") && !(csv = fopen(argv[i + 1], "w"))) {
      perror(argv[i + 1]);
      return 1;
    }
    if (!strcmp(argv[i], "--clock"))
      cpu_clock = !strcmp(argv[i + 1], "cpu");
  }
  double (*now)(void) = cpu_clock ? bench_cpu_ms : bench_now_ms;
  const char *clock_name = cpu_clock ? "thread-cpu" : "wall";
  if (csv)
    fprintf(csv, "kernel,size,n,median_ms,gbps,ns_per_value,checked,clock\n");
  struct {
    const char *name;
    int64_t n;
  } sizes[] = {{"1080x1920", 1080 * 1920}, {"1GiB", (int64_t)1 << 27}};
  printf("%-22s %10s %12s %10s %8s\n", "kernel", "size", "median_ms", "GB/s",
         "ns/val");
  for (int s = 0; s < 2; s++) {
    int64_t n = sizes[s].n;
    double *v = malloc((size_t)n * 8);
    int64_t *iv = malloc((size_t)n * 8);
    if (!v || !iv)
      return 1;
    uint64_t x = 88172645463325252ull;
    __int128 rsum = 0, isum = 0; /* exact references */
    for (int64_t i = 0; i < n; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      v[i] = (double)(x >> 11) * 0x1p-53 * 2 - 0.5; /* never all zeros */
      rsum += (__int128)(v[i] * 0x1p53);            /* exact: an integer */
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      iv[i] = (int64_t)x; /* the whole int64 range, both signs */
      isum += iv[i];
    }
    double rref = (double)rsum * 0x1p-53; /* rounded once, then exact */
    for (int k = 0; k < 4; k++) {
      static const char *names[] = {
          "cpu 1-thread loop f64", "cpu exact f64 (ours)",
          "cpu 1-thread loop i64", "cpu exact i64 (ours)"};
      double t[8], chk = 0;
      int ok = 1;
      for (int r = 0; r < 8; r++) {
        ga_sum_partial p;
        double t0 = now();
        if (k == 0) {
          chk += plain_sum(v, n);
        } else if (k == 1) {
          exact_sum((const uint64_t *)v, n, GA_LAYOUT_REAL, &p);
          double got = ga_sum_round(&p);
          chk += got;
          ok &= ga_dbits(got) == ga_dbits(rref);
        } else if (k == 2) {
          chk += (double)plain_isum(iv, n);
        } else {
          exact_sum((const uint64_t *)iv, n, GA_LAYOUT_INT, &p);
          ok &= ga_sum_int_total(&p) == isum;
          chk += (double)ga_sum_int_total(&p);
        }
        t[r] = now() - t0;
      }
      double med = bench_median(t + 1, 7); /* t[0] was the warm-up */
      double gbps = n * 8.0 / med / 1e6;
      const char *checked = k & 1 ? (ok ? "exact" : "WRONG") : "-";
      bad += !ok;
      printf("%-22s %10s %12.3f %10.2f %8.3f   (checksum %g, %s)\n", names[k],
             sizes[s].name, med, gbps, med * 1e6 / n, chk, checked);
      if (csv)
        fprintf(csv, "%s,%s,%lld,%.4f,%.2f,%.3f,%s,%s\n", names[k],
                sizes[s].name, (long long)n, med, gbps, med * 1e6 / n, checked,
                clock_name);
    }
    free(v);
    free(iv);
  }
  if (csv)
    fclose(csv);
  if (bad) {
    printf("FAIL: %d exact results differ from the reference\n", bad);
    return 1;
  }
  return 0;
}
