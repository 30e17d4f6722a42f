/*
** cpu_sum_ab.c — A/B of two builds of engine/reduce/cpu_sum.c in one process
** (bench/cpu_sum_ab.sh builds them with their exported names prefixed A_ and
** B_), against the plain one-thread loop, alternating.
**
**   cpu_sum_ab VARIANT_A VARIANT_B [--log2n N] [--reps R] [--csv FILE]
**              [--label TEXT]
**
** VARIANT_x names a variant of that build ("reference", "bins+avx2", ... or
** "best").  Data sets as bench/cpu_reduce.c: typical, wide200, wide1000,
** binade, binade_pm; 2^N doubles (default 2^25, 256 MiB: far past L3).  Each
** repetition times the plain loop, then A and B (B first on odd ones;
** the first repetition is a warm-up); reported per data set: x_plain of A
** and of B (median over repetitions of plain time / kernel time) and
** b_over_a (median of A time / B time).  Both partials must be equal after
** normalisation.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "ga_partial.h"
#include "xacc.h"

#define DECL(P)                                                                \
  int P##ga_cpu_sum_nvariants(void);                                           \
  const char *P##ga_cpu_sum_variant_name(int v);                               \
  int P##ga_cpu_sum_variant_ok(int v);                                         \
  int P##ga_cpu_sum_variant_best(void);                                        \
  void P##ga_cpu_sum_variant(int v, const uint64_t *vals,                      \
                             const uint64_t *isint, int64_t n, int layout,     \
                             ga_sum_partial *p);
DECL(A_)
DECL(B_)

__attribute__((noinline)) static double plain_sum(const double *v, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i++)
    s += v[i];
  return s;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

static void fill(double *v, int64_t n, const char *data) {
  for (int64_t i = 0; i < n; i++) {
    uint64_t x = next();
    double m = 1.0 + (double)(x >> 11) * 0x1p-53;
    if (!strcmp(data, "typical"))
      v[i] = (double)(x >> 11) * 0x1p-53 * 2 - 0.5;
    else if (!strcmp(data, "wide200"))
      v[i] = ldexp((x & 1) ? -m : m, (int)(next() % 401) - 200);
    else if (!strcmp(data, "wide1000"))
      v[i] = ldexp((x & 1) ? -m : m, (int)(next() % 2001) - 1000);
    else if (!strcmp(data, "binade_pm"))
      v[i] = (x & 1) ? -m : m;
    else
      v[i] = m;
  }
}

static int find(const char *name, int b) {
  int nv = b ? B_ga_cpu_sum_nvariants() : A_ga_cpu_sum_nvariants();
  if (!strcmp(name, "best"))
    return b ? B_ga_cpu_sum_variant_best() : A_ga_cpu_sum_variant_best();
  for (int v = 0; v < nv; v++) {
    const char *s =
        b ? B_ga_cpu_sum_variant_name(v) : A_ga_cpu_sum_variant_name(v);
    int ok = b ? B_ga_cpu_sum_variant_ok(v) : A_ga_cpu_sum_variant_ok(v);
    if (!strcmp(s, name) && ok)
      return v;
  }
  return -1;
}

static void run(int b, int v, const double *x, int64_t n, ga_sum_partial *p) {
  ga_sum_init(p);
  for (int64_t i = 0; i < n; i += 1 << 20) {
    int64_t m = n - i < (1 << 20) ? n - i : (1 << 20);
    if (b)
      B_ga_cpu_sum_variant(v, (const uint64_t *)x + i, NULL, m, GA_LAYOUT_REAL,
                           p);
    else
      A_ga_cpu_sum_variant(v, (const uint64_t *)x + i, NULL, m, GA_LAYOUT_REAL,
                           p);
    ga_sum_normalize(p);
  }
}

#define MAXR 64

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: cpu_sum_ab VARIANT_A VARIANT_B [--log2n N] "
                    "[--reps R] [--csv FILE] [--label TEXT]\n");
    return 2;
  }
  int log2n = 25, reps = 11;
  const char *label = "";
  FILE *csv = NULL;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--log2n"))
      log2n = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--reps"))
      reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--label"))
      label = argv[i + 1];
    else if (!strcmp(argv[i], "--csv"))
      csv = fopen(argv[i + 1], "a");
  }
  if (reps < 2)
    reps = 2;
  if (reps > MAXR)
    reps = MAXR;
  int va = find(argv[1], 0), vb = find(argv[2], 1);
  if (va < 0 || vb < 0) {
    fprintf(stderr, "cpu_sum_ab: no variant %s here\n",
            va < 0 ? argv[1] : argv[2]);
    return 2;
  }
  int64_t n = (int64_t)1 << log2n;
  double *x = malloc((size_t)n * 8);
  if (!x)
    return 1;
  const char *datas[] = {"typical", "wide200", "wide1000", "binade",
                         "binade_pm"};
  int bad = 0;
  for (int d = 0; d < 5; d++) {
    fill(x, n, datas[d]);
    double ra[MAXR], rb[MAXR], rab[MAXR], chk = 0;
    ga_sum_partial pa, pb;
    for (int r = 0; r < reps; r++) {
      /* A then B on even repetitions, B then A on odd ones */
      double t0 = bench_now_ms();
      chk += plain_sum(x, n);
      double t1 = bench_now_ms(), t2, t3;
      if (r % 2 == 0) {
        run(0, va, x, n, &pa);
        t2 = bench_now_ms();
        run(1, vb, x, n, &pb);
        t3 = bench_now_ms();
      } else {
        run(1, vb, x, n, &pb);
        double tb = bench_now_ms();
        run(0, va, x, n, &pa);
        t3 = bench_now_ms();
        t2 = t1 + (t3 - tb); /* so that t2 - t1 is A's time, t3 - t2 B's */
      }
      if (r == 0 && memcmp(&pa, &pb, sizeof pa)) {
        printf("MISMATCH on %s\n", datas[d]);
        bad = 1;
      }
      if (r > 0) {
        ra[r - 1] = (t1 - t0) / (t2 - t1);
        rb[r - 1] = (t1 - t0) / (t3 - t2);
        rab[r - 1] = (t2 - t1) / (t3 - t2);
      }
    }
    double xa = bench_median(ra, reps - 1), xb = bench_median(rb, reps - 1);
    double ab = bench_median(rab, reps - 1);
    printf("%-32s %-9s A %-12s x%.3f  B %-12s x%.3f  B/A %.3f%s\n", label,
           datas[d], argv[1], xa, argv[2], xb, ab, chk == 0.5 ? " " : "");
    if (csv)
      fprintf(csv, "%s,%s,%s,%s,%d,%.3f,%.3f,%.3f\n", label, datas[d], argv[1],
              argv[2], log2n, xa, xb, ab);
  }
  if (csv)
    fclose(csv);
  free(x);
  return bad;
}
