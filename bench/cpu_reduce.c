/*
** cpu_reduce.c — the CPU rows of the seeds' reduction table: a plain
** one-thread loop (what numpy's sum does, rounding at every add) and
** gpuagg's exact CPU path (ga_cpu_sum), on random doubles.
**
**   build/bench/cpu_reduce [--csv FILE]
** Sizes: the seeds' 1080x1920 doubles and 1 GiB.  Median of 7 after a warm-up.
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

int main(int argc, char **argv) {
  FILE *csv = NULL;
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--csv"))
      csv = fopen(argv[i + 1], "w");
  if (csv)
    fprintf(csv, "kernel,size,n,median_ms,gbps\n");
  struct {
    const char *name;
    int64_t n;
  } sizes[] = {{"1080x1920", 1080 * 1920}, {"1GiB", (int64_t)1 << 27}};
  printf("%-16s %10s %12s %10s\n", "kernel", "size", "median_ms", "GB/s");
  for (int s = 0; s < 2; s++) {
    int64_t n = sizes[s].n;
    double *v = malloc((size_t)n * 8);
    uint64_t x = 88172645463325252ull;
    for (int64_t i = 0; i < n; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      v[i] = (double)(x >> 11) * 0x1p-53 * 2 - 0.5; /* never all zeros */
    }
    for (int k = 0; k < 2; k++) {
      double t[8], chk = 0;
      for (int r = 0; r < 8; r++) {
        double t0 = bench_now_ms();
        if (k == 0) {
          chk += plain_sum(v, n);
        } else {
          ga_sum_partial p;
          ga_sum_init(&p);
          /* in chunks below GA_XACC_SAFE_ADDS, as the engine does */
          for (int64_t i = 0; i < n; i += 1 << 20) {
            int64_t m = n - i < (1 << 20) ? n - i : (1 << 20);
            ga_cpu_sum((const uint64_t *)v + i, NULL, m, GA_LAYOUT_REAL, &p);
            ga_sum_normalize(&p);
          }
          chk += ga_sum_round(&p);
        }
        t[r] = bench_now_ms() - t0;
      }
      double med = bench_median(t + 1, 7); /* t[0] was the warm-up */
      const char *name = k ? "cpu exact (ours)" : "cpu 1-thread loop";
      double gbps = n * 8.0 / med / 1e6;
      printf("%-16s %10s %12.3f %10.2f   (checksum %g)\n", name, sizes[s].name,
             med, gbps, chk);
      if (csv)
        fprintf(csv, "%s,%s,%lld,%.4f,%.2f\n", name, sizes[s].name,
                (long long)n, med, gbps);
    }
    free(v);
  }
  if (csv)
    fclose(csv);
  return 0;
}
