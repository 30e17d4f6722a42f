/*
** cpu_reduce.c — the CPU rows of the seeds' reduction table: a plain
** one-thread loop (what numpy's sum does, rounding at every add) and
** gpuagg's exact CPU path (ga_cpu_sum), plus each variant of the exact sum
** of reals (engine/reduce/cpu_sum.h; "reference" is the one-value-at-a-time add
*it
** replaced), on several data sets.
**
**   build/bench/cpu_reduce [--csv FILE] [--reps N] [--sizes 1080x1920,1GiB]
**       [--data typical,wide200,wide1000,binade,binade_pm,mixed,int64]
**       [--clock wall|cpu]
**
** Data sets (doubles, random signs unless said):
**   typical   uniform in [-0.5, 0.5) (the seeds' shape)
**   wide200   exponents uniform in 2^-200 .. 2^200
**   wide1000  exponents uniform in 2^-1000 .. 2^1000
**   binade    [1, 2), positive: one exponent, every value in the same bin
**   binade_pm [1, 2) with random signs: two bins
**   mixed     typical, but every third value an int64 (GA_LAYOUT_MIXED; the
**             plain loop adds the same words as doubles, as a baseline)
**   int64     random int64 over the whole range (GA_LAYOUT_INT: sums of
**             32-bit halves; the plain loop is a wrapping int64 sum)
** Sizes: the seeds' 1080x1920 values and 1 GiB.  Each repetition times
** every kernel once, in turn, so that a change of machine load hits all of
** them; the first repetition is a warm-up.  Reported: the median time, and
** x_plain = the median over repetitions of (plain loop time / kernel time)
** in the same repetition.  --clock cpu times with the thread's CPU time
** instead of the wall clock: on a shared machine it leaves out the waits
** for a core (the CSV's clock column says which).
**
** Every exact result is checked, and the run fails if one differs: each
** kernel's normalised partial must equal the reference's, and where the
** data allow an independent exact total (__int128: the doubles of typical,
** binade, binade_pm and mixed are multiples of 2^-53 below 2, so v * 2^53
** is an integer) the reference's result must equal it, rounded once
** (checked = "exact"; "ref" where only the partials are compared).
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "cpu_reduce.h"
#include "cpu_sum.h"
#include "xacc.h"

/* Kept out of line so the compiler cannot fold the loops away. */
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

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

/* Fills v (isint: the bitmap of the mixed layout, all clear otherwise);
** returns the layout, and in *t the exact total times 2^53 (the total for
** int64) when *have is set. */
static int fill(double *v, uint64_t *isint, int64_t n, const char *data,
                __int128 *t, int *have) {
  memset(isint, 0, (size_t)((n + 63) / 64) * 8);
  *t = 0;
  *have = strcmp(data, "wide200") && strcmp(data, "wide1000");
  int layout = !strcmp(data, "mixed")   ? GA_LAYOUT_MIXED
               : !strcmp(data, "int64") ? GA_LAYOUT_INT
                                        : GA_LAYOUT_REAL;
  for (int64_t i = 0; i < n; i++) {
    uint64_t x = next();
    if (layout == GA_LAYOUT_INT || (layout == GA_LAYOUT_MIXED && i % 3 == 0)) {
      int64_t k = layout == GA_LAYOUT_INT
                      ? (int64_t)x /* the whole int64 range, both signs */
                      : (int64_t)(x >> 20) - (int64_t)(1ll << 43);
      memcpy(&v[i], &k, 8);
      *t += layout == GA_LAYOUT_INT ? (__int128)k : (__int128)k << 53;
      isint[i >> 6] |= 1ull << (i & 63);
      continue;
    }
    double m = 1.0 + (double)(x >> 11) * 0x1p-53; /* [1, 2) */
    if (layout == GA_LAYOUT_MIXED || !strcmp(data, "typical"))
      v[i] = (double)(x >> 11) * 0x1p-53 * 2 - 0.5; /* never all zeros */
    else if (!strcmp(data, "wide200"))
      v[i] = ldexp((x & 1) ? -m : m, (int)(next() % 401) - 200);
    else if (!strcmp(data, "wide1000"))
      v[i] = ldexp((x & 1) ? -m : m, (int)(next() % 2001) - 1000);
    else if (!strcmp(data, "binade_pm"))
      v[i] = (x & 1) ? -m : m;
    else
      v[i] = m;
    if (*have)
      *t += (__int128)(v[i] * 0x1p53); /* exact: an integer */
  }
  return layout;
}

/* The exact sum of v as the engine does it: chunks below
** GA_XACC_SAFE_ADDS, normalised after each.  variant < 0: ga_cpu_sum. */
static void exact_sum(const double *v, const uint64_t *isint, int layout,
                      int64_t n, int variant, ga_sum_partial *p) {
  ga_sum_init(p);
  for (int64_t i = 0; i < n; i += 1 << 20) {
    int64_t m = n - i < (1 << 20) ? n - i : (1 << 20);
    if (variant < 0)
      ga_cpu_sum((const uint64_t *)v + i, isint + i / 64, m, layout, p);
    else
      ga_cpu_sum_variant(variant, (const uint64_t *)v + i, isint + i / 64, m,
                         layout, p);
    ga_sum_normalize(p);
  }
}

static int listed(const char *list, const char *name) {
  size_t k = strlen(name);
  for (const char *s = list; (s = strstr(s, name)); s += k)
    if ((s == list || s[-1] == ',') && (s[k] == ',' || s[k] == 0))
      return 1;
  return 0;
}

#define MAXK 16
#define MAXR 64

int main(int argc, char **argv) {
  FILE *csv = NULL;
  int reps = 9, cpu_clock = 0;
  const char *sizes_arg = "1080x1920,1GiB";
  const char *data_arg =
      "typical,wide200,wide1000,binade,binade_pm,mixed,int64";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--csv") && !(csv = fopen(argv[i + 1], "w"))) {
      perror(argv[i + 1]);
      return 1;
    }
    if (!strcmp(argv[i], "--reps"))
      reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--sizes"))
      sizes_arg = argv[i + 1];
    else if (!strcmp(argv[i], "--data"))
      data_arg = argv[i + 1];
    else if (!strcmp(argv[i], "--clock"))
      cpu_clock = !strcmp(argv[i + 1], "cpu");
  }
  if (reps < 2)
    reps = 2;
  if (reps > MAXR)
    reps = MAXR;
  double (*now)(void) = cpu_clock ? bench_cpu_ms : bench_now_ms;
  const char *clock_name = cpu_clock ? "thread-cpu" : "wall";
  if (csv)
    fprintf(csv, "data,kernel,size,n,median_ms,gbps,ns_per_value,x_plain,"
                 "checked,clock\n");
  const struct {
    const char *name;
    int64_t n;
  } sizes[] = {{"1080x1920", 1080 * 1920}, {"1GiB", (int64_t)1 << 27}};
  const char *datas[] = {"typical",   "wide200", "wide1000", "binade",
                         "binade_pm", "mixed",   "int64"};
  const int ndatas = (int)(sizeof datas / sizeof datas[0]);
  printf("ga_cpu_sum uses %s\n",
         ga_cpu_sum_variant_name(ga_cpu_sum_variant_best()));
  printf("%-9s %-24s %10s %10s %8s %8s %7s\n", "data", "kernel", "size",
         "median_ms", "GB/s", "x_plain", "checked");
  int bad = 0;
  for (int s = 0; s < 2; s++) {
    if (!listed(sizes_arg, sizes[s].name))
      continue;
    int64_t n = sizes[s].n;
    double *v = malloc((size_t)n * 8);
    uint64_t *isint = malloc((size_t)((n + 63) / 64) * 8);
    if (!v || !isint)
      return 1;
    for (int d = 0; d < ndatas; d++) {
      if (!listed(data_arg, datas[d]))
        continue;
      __int128 total;
      int have;
      int layout = fill(v, isint, n, datas[d], &total, &have);
      /* kernels: -2 plain loop, -1 ga_cpu_sum, then the variants of the
      ** real sum (not for the integer layout, which has one path) */
      int kern[MAXK], nk = 0;
      kern[nk++] = -2;
      kern[nk++] = -1;
      for (int k = 0;
           layout != GA_LAYOUT_INT && k < ga_cpu_sum_nvariants() && nk < MAXK;
           k++)
        if (ga_cpu_sum_variant_ok(k))
          kern[nk++] = k;
      /* the reference: the per-value add, or for int64 ga_cpu_sum */
      ga_sum_partial want, got;
      exact_sum(v, isint, layout, n, layout == GA_LAYOUT_INT ? -1 : 0, &want);
      int ok_ref = 1;
      if (layout == GA_LAYOUT_INT)
        ok_ref = ga_sum_int_total(&want) == total;
      else if (have)
        ok_ref = ga_dbits(ga_sum_round(&want)) ==
                 ga_dbits((double)total * 0x1p-53); /* one rounding */
      double t[MAXK][MAXR], chk = 0;
      int ok[MAXK];
      for (int k = 0; k < nk; k++)
        ok[k] = ok_ref;
      for (int r = 0; r < reps; r++) {
        for (int k = 0; k < nk; k++) {
          double t0 = now();
          if (kern[k] == -2) {
            chk += layout == GA_LAYOUT_INT
                       ? (double)plain_isum((const int64_t *)v, n)
                       : plain_sum(v, n);
          } else {
            exact_sum(v, isint, layout, n, kern[k], &got);
            chk += ga_sum_round(&got);
          }
          t[k][r] = now() - t0;
          if (kern[k] != -2 && r == 0 && memcmp(&got, &want, sizeof got))
            ok[k] = 0;
        }
      }
      for (int k = 0; k < nk; k++) {
        /* repetition 0 was the warm-up */
        double ratio[MAXR], tk[MAXR];
        for (int r = 1; r < reps; r++) {
          ratio[r - 1] = t[0][r] / t[k][r];
          tk[r - 1] = t[k][r];
        }
        double med = bench_median(tk, reps - 1);
        double x = bench_median(ratio, reps - 1);
        char name[64];
        if (kern[k] == -2)
          snprintf(name, sizeof name, "cpu 1-thread loop");
        else if (kern[k] == -1)
          snprintf(name, sizeof name, "cpu exact (ours)");
        else
          snprintf(name, sizeof name, "cpu exact: %s",
                   ga_cpu_sum_variant_name(kern[k]));
        const char *checked = kern[k] == -2 ? "-"
                              : !ok[k]      ? "WRONG"
                              : have        ? "exact"
                                            : "ref";
        bad += kern[k] != -2 && !ok[k];
        double gbps = n * 8.0 / med / 1e6;
        printf("%-9s %-24s %10s %10.3f %8.2f %8.3f %7s\n", datas[d], name,
               sizes[s].name, med, gbps, x, checked);
        if (csv)
          fprintf(csv, "%s,%s,%s,%lld,%.4f,%.2f,%.3f,%.3f,%s,%s\n", datas[d],
                  name, sizes[s].name, (long long)n, med, gbps, med * 1e6 / n,
                  x, checked, clock_name);
      }
      if (chk == 0.123456789) /* keeps the sums alive */
        printf(" ");
    }
    free(v);
    free(isint);
  }
  if (csv)
    fclose(csv);
  if (bad) {
    printf("FAIL: %d exact results differ from the reference\n", bad);
    return 1;
  }
  return 0;
}
