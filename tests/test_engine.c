/*
** test_engine.c — C unit tests of the engine (no SQL, no GPU).
**
** Oracles that do not come from the code under test:
**   - IEEE addition and division are correctly rounded, so the exact sum of
**     two doubles must equal a + b, and an exact integer total below 2^53
**     divided by n must equal (double)total / n;
**   - the same multiset of values, cut into chunks of any size, reduced and
**     merged in any order, must give the same normalised partial (memcmp);
**   - a sliding-window max/min must equal a brute-force scan of the frame.
** Prints one line per failure and ends with "N passed, N failed".
*/
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "bestval.h"
#include "cache_gpu_many.h"
#include "cache_star.h"
#include "cpu_reduce.h"
#include "fstamp.h"
#include "pct.h"
#include "xacc.h"

static int passed, failed;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (cond)                                                                  \
      passed++;                                                                \
    else {                                                                     \
      failed++;                                                                \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                              \
      printf(__VA_ARGS__);                                                     \
      printf("\n");                                                            \
    }                                                                          \
  } while (0)

/* xorshift64*: reproducible, no libc rand() state shared with anything */
static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 2685821657736338717ull;
}

/* A finite double with a random sign, exponent in [emin, emax], mantissa. */
static double rnd_double(int emin, int emax) {
  double m = (double)(rnd() >> 11) / 9007199254740992.0 + 0.5;
  double d = ldexp(m, emin + (int)(rnd() % (uint64_t)(emax - emin + 1)));
  return (rnd() & 1) ? -d : d;
}

static int same_bits(double a, double b) { return ga_dbits(a) == ga_dbits(b); }

static double sum_of(const double *v, int n) {
  ga_sum_partial p;
  ga_sum_init(&p);
  for (int i = 0; i < n; i++)
    ga_sum_add_real(&p, v[i], 1);
  return ga_sum_round(&p);
}

static void test_pairs(void) {
  int bad = 0;
  for (int t = 0; t < 200000; t++) {
    int wide = t % 3;
    double a = rnd_double(wide ? -1074 : -60, wide ? 1023 : 60);
    double b = rnd_double(wide ? -1074 : -60, wide ? 1023 : 60);
    double v[2] = {a, b};
    if (!same_bits(sum_of(v, 2), a + b)) {
      if (bad++ < 5)
        printf("  pair %a + %a: got %a\n", a, b, sum_of(v, 2));
    }
  }
  CHECK(bad == 0, "exact sum of two doubles != IEEE a+b in %d cases", bad);
}

static void test_known(void) {
  double tenth[10];
  for (int i = 0; i < 10; i++)
    tenth[i] = 0.1;
  CHECK(sum_of(tenth, 10) == 1.0, "0.1 * 10 gave %a", sum_of(tenth, 10));
  double c[3] = {1e100, 1.0, -1e100};
  CHECK(sum_of(c, 3) == 1.0, "cancellation gave %a", sum_of(c, 3));
  double o[2] = {DBL_MAX, DBL_MAX};
  CHECK(isinf(sum_of(o, 2)) && sum_of(o, 2) > 0, "overflow to +inf");
  double o2[3] = {DBL_MAX, DBL_MAX, -DBL_MAX};
  CHECK(sum_of(o2, 3) == DBL_MAX, "no spurious overflow: %a", sum_of(o2, 3));
  double s[3] = {DBL_TRUE_MIN, DBL_TRUE_MIN, -0.0};
  CHECK(sum_of(s, 3) == 2 * DBL_TRUE_MIN, "subnormals");
  double inf[3] = {INFINITY, 1.0, -INFINITY};
  CHECK(isnan(sum_of(inf, 3)), "+inf + -inf is NaN (SQL NULL)");
  CHECK(sum_of(inf, 2) == INFINITY, "+inf + 1");
  double z[2] = {-0.0, -0.0};
  CHECK(same_bits(sum_of(z, 2), 0.0), "zeros sum to +0.0 like sum()");
  /* ties to even at the top of the mantissa: 2^53 + 1 + 2^-30 rounds up */
  double t3[3] = {0x1p53, 1.0, 0x1p-30};
  CHECK(sum_of(t3, 3) == 0x1p53 + 2, "sticky bit below the round bit");
  double t2[2] = {0x1p53, 1.0};
  CHECK(sum_of(t2, 2) == 0x1p53, "tie to even");

  ga_sum_partial p;
  ga_sum_init(&p);
  ga_sum_add_int(&p, 9007199254740993ll, 1);
  ga_sum_add_real(&p, 1.0, 1);
  CHECK(ga_sum_round(&p) == 9007199254740994.0, "int + real exact");
  int64_t iv;
  double rv;
  ga_sum_init(&p);
  ga_sum_add_int(&p, INT64_MAX, 1);
  ga_sum_add_int(&p, 1, 1);
  ga_sum_add_int(&p, -1, 1);
  CHECK(ga_sum_result(&p, &iv, &rv) == GA_SUM_INT && iv == INT64_MAX,
        "order-independent overflow rule");
  ga_sum_add_int(&p, 1, 1);
  CHECK(ga_sum_result(&p, &iv, &rv) == GA_SUM_OVERFLOW, "overflow");
  ga_sum_init(&p);
  ga_sum_add_int(&p, INT64_MIN, 1);
  CHECK(ga_sum_result(&p, &iv, &rv) == GA_SUM_INT && iv == INT64_MIN,
        "INT64_MIN");
  ga_sum_add_int(&p, -1, 1);
  CHECK(ga_sum_result(&p, &iv, &rv) == GA_SUM_OVERFLOW, "below INT64_MIN");
}

/* Integer totals past 2^95 (defect: the halves used to wrap there).  Each
** partial stands for a chunk of GA_XACC_SAFE_ADDS (2^29) values at an int64
** extreme, as a GPU kernel or the CPU reducer may leave it (unnormalised
** halves); billions of values through SQL would take hours, so the partials
** are built here. */
static void chunk_of(ga_sum_partial *p, int64_t v) {
  ga_sum_init(p);
  const int64_t n = GA_XACC_SAFE_ADDS;
  p->ilo = (int64_t)((uint64_t)v & 0xffffffffu) * n;
  p->ihi = (v >> 32) * n;
  p->nint = n;
}

static void test_wide_ints(void) {
  ga_sum_partial big, neg, acc, acc2, part;
  chunk_of(&big, INT64_MAX);
  chunk_of(&neg, INT64_MIN);
  const ga_i128 n = GA_XACC_SAFE_ADDS;
  /* 256 chunks of INT64_MAX: about 2^100 */
  ga_sum_init(&acc);
  for (int k = 0; k < 256; k++)
    ga_sum_merge(&acc, &big);
  ga_i128 want = 256 * n * (ga_i128)INT64_MAX;
  CHECK(ga_sum_int_total(&acc) == want, "2^100 integer total is exact");
  int64_t iv;
  double rv;
  CHECK(ga_sum_result(&acc, &iv, &rv) == GA_SUM_OVERFLOW,
        "total beyond int64 is an overflow");
  CHECK(ga_sum_round(&acc) == (double)want,
        "total() of 2^100 ints rounds once");
  /* back into range: the same chunks of INT64_MIN, then 42, in two orders */
  for (int k = 0; k < 256; k++)
    ga_sum_merge(&acc, &neg);
  ga_sum_init(&part);
  ga_sum_add_int(&part, 42 + 256 * (int64_t)n, 1); /* MIN = -(MAX+1) */
  ga_sum_merge(&acc, &part);
  CHECK(ga_sum_result(&acc, &iv, &rv) == GA_SUM_INT && iv == 42,
        "2^100 - 2^100 + 42 = 42, got kind %d", ga_sum_result(&acc, &iv, &rv));
  ga_sum_init(&acc2);
  ga_sum_merge(&acc2, &part);
  for (int k = 0; k < 256; k++) {
    ga_sum_merge(&acc2, &neg);
    ga_sum_merge(&acc2, &big);
  }
  CHECK(!memcmp(&acc, &acc2, sizeof acc),
        "normalised partial independent of merge order");
  /* negative totals far below int64 */
  ga_sum_init(&acc);
  for (int k = 0; k < 400; k++)
    ga_sum_merge(&acc, &neg);
  CHECK(ga_sum_int_total(&acc) == 400 * n * (ga_i128)INT64_MIN,
        "-2^100 integer total is exact");
  /* set/get round trip, and the normalised form is canonical */
  ga_i128 ts[] = {0,
                  -1,
                  1,
                  (ga_i128)INT64_MIN * 3,
                  ((ga_i128)1 << 125) - 7,
                  -((ga_i128)1 << 125) + 11};
  for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++) {
    ga_sum_init(&part);
    ga_sum_set_int_total(&part, ts[k]);
    ga_sum_partial q = part;
    ga_sum_normalize(&q);
    CHECK(ga_sum_int_total(&part) == ts[k] && !memcmp(&q, &part, sizeof q),
          "set_int_total round trip %zu", k);
  }
}

static void test_div(void) {
  int bad = 0;
  for (int t = 0; t < 100000; t++) {
    ga_sum_partial p;
    ga_sum_init(&p);
    int n = 1 + (int)(rnd() % 50);
    int64_t tot = 0;
    for (int i = 0; i < n; i++) {
      int64_t v = (int64_t)(rnd() % 2000000000001ull) - 1000000000000ll;
      tot += v;
      ga_sum_add_int(&p, v, 1);
    }
    if (!same_bits(ga_sum_round_div(&p, n), (double)tot / n))
      bad++;
  }
  CHECK(bad == 0, "exact avg != (double)total/n in %d cases", bad);
  ga_sum_partial p;
  ga_sum_init(&p);
  ga_sum_add_real(&p, DBL_TRUE_MIN, 1);
  CHECK(ga_sum_round_div(&p, 2) == 0.0, "half the smallest subnormal: even");
  ga_sum_add_real(&p, DBL_TRUE_MIN, 1);
  ga_sum_add_real(&p, DBL_TRUE_MIN, 1);
  CHECK(ga_sum_round_div(&p, 2) == 2 * DBL_TRUE_MIN, "1.5 ulp rounds to 2");
  ga_sum_init(&p);
  ga_sum_add_real(&p, DBL_MAX, 1);
  ga_sum_add_real(&p, DBL_MAX, 1);
  CHECK(ga_sum_round_div(&p, 2) == DBL_MAX, "avg of DBL_MAX pair, no overflow");
}

/* Reduce v (mixed ints and reals) cut at random points, chunks in a random
** order; the normalised partial must not depend on any of it. */
static void test_splits(void) {
  enum { N = 20000 };
  static uint64_t vals[N], isint[N / 64 + 1];
  for (int i = 0; i < N; i++) {
    int is_int = (rnd() % 3) == 0;
    if (is_int)
      vals[i] = rnd();
    else
      vals[i] = (uint64_t)ga_dbits(rnd_double(-1074, 1000));
    if (is_int)
      isint[i >> 6] |= 1ull << (i & 63);
    else
      isint[i >> 6] &= ~(1ull << (i & 63));
  }
  ga_sum_partial ref;
  ga_sum_init(&ref);
  ga_cpu_sum(vals, isint, N, GA_LAYOUT_MIXED, &ref);
  ga_sum_normalize(&ref);
  ga_best_partial bref;
  ga_cpu_best(vals, isint, N, GA_LAYOUT_MIXED, 0, &bref);
  int bad = 0, badb = 0;
  for (int t = 0; t < 200; t++) {
    /* cut points at multiples of 64, so each piece has its own bitmap */
    int cuts[40], nc = 0, pos = 0;
    while (pos < N && nc < 39) {
      cuts[nc++] = pos;
      pos += 64 * (1 + (int)(rnd() % 40));
    }
    cuts[nc] = N;
    int order[40];
    for (int i = 0; i < nc; i++)
      order[i] = i;
    for (int i = nc - 1; i > 0; i--) {
      int j = (int)(rnd() % (uint64_t)(i + 1)), x = order[i];
      order[i] = order[j];
      order[j] = x;
    }
    ga_sum_partial acc;
    ga_sum_init(&acc);
    ga_best_partial best = {0};
    for (int i = 0; i < nc; i++) {
      int a = cuts[order[i]], b = order[i] + 1 <= nc ? cuts[order[i] + 1] : N;
      if (b > N)
        b = N;
      ga_sum_partial part;
      ga_sum_init(&part);
      ga_cpu_sum(vals + a, isint + a / 64, b - a, GA_LAYOUT_MIXED, &part);
      ga_sum_merge(&acc, &part);
      ga_best_partial bp;
      ga_cpu_best(vals + a, isint + a / 64, b - a, GA_LAYOUT_MIXED, 0, &bp);
      bp.idx += a;
      ga_best_merge(&best, &bp, 0);
    }
    if (memcmp(&acc, &ref, sizeof acc))
      bad++;
    if (memcmp(&best, &bref, sizeof best))
      badb++;
  }
  CHECK(bad == 0, "split/merge changed the sum partial in %d of 200", bad);
  CHECK(badb == 0, "split/merge changed the max partial in %d of 200", badb);
}

/* Merging NORMALISED integer partials (their carry word itop is set: -1 for
** any negative total, more past 2^64): ga_sum_merge takes partials in any
** state, so the carries of `from` must count.  Oracle: __int128 sums. */
static void test_merge_normalised_ints(void) {
  int bad = 0;
  for (int t = 0; t < 2000; t++) {
    ga_sum_partial acc, part;
    ga_sum_init(&acc);
    ga_i128 want = 0;
    int parts = 1 + (int)(rnd() % 6);
    for (int k = 0; k < parts; k++) {
      ga_sum_init(&part);
      int n = 1 + (int)(rnd() % 40);
      for (int i = 0; i < n; i++) {
        int64_t v = (int64_t)rnd(); /* the whole range, both signs */
        if (t % 3 == 0)
          v = v < 0 ? v : -v; /* negative totals: itop = -1 */
        ga_sum_add_int(&part, v, 1);
        want += v;
      }
      ga_sum_normalize(&part);
      ga_sum_merge(&acc, &part);
    }
    if (ga_sum_int_total(&acc) != want)
      bad++;
  }
  CHECK(bad == 0, "merged normalised integer partials wrong in %d of 2000",
        bad);
}

/* Partials that saw +Inf, -Inf or NaN, merged (as the GPU path merges the
** device partials): the merged partial must be the one-pass partial, and its
** rounding the one README rule 2 gives (+Inf with finite values is +Inf,
** +Inf with -Inf or a NaN is NaN, SQL NULL).  Every special value sits in
** the second partial only, so a merge that drops its counter is caught. */
static void test_merge_specials(void) {
  static const struct {
    double special[2];
    int n;
    double want; /* NAN: must be NaN */
  } cases[] = {{{INFINITY}, 1, INFINITY},
               {{-INFINITY}, 1, -INFINITY},
               {{NAN}, 1, NAN},
               {{INFINITY, -INFINITY}, 2, NAN},
               {{INFINITY, INFINITY}, 2, INFINITY}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    double first[3] = {1.5, -1e300, 0x1p-1074}, second[4] = {2.0, 1e300};
    int n2 = 2;
    for (int k = 0; k < cases[c].n; k++)
      second[n2++] = cases[c].special[k];
    ga_sum_partial one, a, b;
    ga_sum_init(&one);
    ga_sum_init(&a);
    ga_sum_init(&b);
    for (int k = 0; k < 3; k++) {
      ga_sum_add_real(&one, first[k], 1);
      ga_sum_add_real(&a, first[k], 1);
    }
    for (int k = 0; k < n2; k++) {
      ga_sum_add_real(&one, second[k], 1);
      ga_sum_add_real(&b, second[k], 1);
    }
    ga_sum_merge(&a, &b);
    ga_sum_normalize(&one);
    double got = ga_sum_round(&a), want = cases[c].want;
    CHECK(!memcmp(&a, &one, sizeof a) &&
              (isnan(want) ? isnan(got) : same_bits(got, want)),
          "merge with specials, case %zu: got %a want %a (npinf %lld nninf "
          "%lld nnan %lld)",
          c, got, want, (long long)a.npinf, (long long)a.nninf,
          (long long)a.nnan);
  }
}

static void test_cmp(void) {
  CHECK(ga_num_cmp(GA_KIND_INT, 9007199254740993ll, GA_KIND_REAL,
                   ga_dbits(9007199254740992.0)) > 0,
        "2^53+1 > 2^53.0");
  CHECK(ga_num_cmp(GA_KIND_INT, INT64_MAX, GA_KIND_REAL, ga_dbits(0x1p63)) < 0,
        "INT64_MAX < 2^63.0");
  CHECK(ga_num_cmp(GA_KIND_INT, INT64_MIN, GA_KIND_REAL, ga_dbits(-0x1p63)) ==
            0,
        "INT64_MIN == -2^63.0");
  CHECK(ga_num_cmp(GA_KIND_REAL, ga_dbits(-0.5), GA_KIND_INT, 0) < 0,
        "-0.5 < 0");
  CHECK(ga_num_cmp(GA_KIND_REAL, ga_dbits(-0.0), GA_KIND_REAL, ga_dbits(0.0)) ==
            0,
        "-0.0 == 0.0");
  CHECK(ga_num_cmp(GA_KIND_INT, -3, GA_KIND_REAL, ga_dbits(-2.5)) < 0,
        "-3 < -2.5");
}

/* ---- the aggregate engine, CPU path ---- */

static ga_config cpu_cfg(void) {
  ga_config c;
  ga_config_default(&c);
  c.device = GA_DEVICE_CPU;
  return c;
}

static ga_value vint(int64_t i) {
  ga_value v = {GA_V_INT, 0, i, 0, NULL};
  return v;
}
static ga_value vreal(double r) {
  ga_value v = {GA_V_REAL, 0, 0, r, NULL};
  return v;
}

/* The same reals fed in two orders, across many chunks, same bits. */
static void test_agg_order(void) {
  enum { N = 100000 };
  static double v[N];
  for (int i = 0; i < N; i++)
    v[i] = rnd_double(-40, 40);
  ga_config cfg = cpu_cfg();
  ga_value out1, out2;
  ga_agg *a = ga_agg_new(GA_AGG_SUM, &cfg, NULL);
  for (int i = 0; i < N; i++) {
    ga_value x = vreal(v[i]);
    ga_agg_step(a, &x);
  }
  ga_agg_final(a, &out1);
  ga_agg_free(a);
  a = ga_agg_new(GA_AGG_SUM, &cfg, NULL);
  for (int i = N - 1; i >= 0; i--) {
    ga_value x = vreal(v[i]);
    ga_agg_step(a, &x);
  }
  ga_agg_final(a, &out2);
  ga_agg_free(a);
  CHECK(out1.type == GA_V_REAL && same_bits(out1.r, out2.r),
        "reverse order changed the sum: %a vs %a", out1.r, out2.r);
  /* the chunk boundary: exactly one CPU chunk, and one value more */
  for (int n = 8191; n <= 8193; n++) {
    a = ga_agg_new(GA_AGG_SUM, &cfg, NULL);
    for (int i = 0; i < n; i++) {
      ga_value x = vint(i);
      ga_agg_step(a, &x);
    }
    ga_agg_final(a, &out1);
    ga_agg_free(a);
    CHECK(out1.type == GA_V_INT && out1.i == (int64_t)n * (n - 1) / 2,
          "chunk boundary n=%d", n);
  }
}

/* Sliding windows: max/min via the deque against a brute-force frame scan,
** with ints, reals equal to ints, and texts. */
static void test_window_best(void) {
  enum { N = 3000 };
  static ga_value v[N];
  static char texts[N][4];
  for (int i = 0; i < N; i++) {
    int k = (int)(rnd() % 10);
    if (k < 4)
      v[i] = vint((int64_t)(rnd() % 20));
    else if (k < 8)
      v[i] = vreal((double)(rnd() % 20) * 0.5);
    else if (k < 9) {
      texts[i][0] = (char)('a' + rnd() % 3);
      v[i].type = GA_V_TEXT;
      v[i].p = texts[i];
      v[i].n = 1;
    } else
      v[i].type = GA_V_NULL;
  }
  ga_config cfg = cpu_cfg();
  for (int want_min = 0; want_min < 2; want_min++) {
    int width = 7, bad = 0;
    ga_agg *a = ga_agg_new(want_min ? GA_AGG_MIN : GA_AGG_MAX, &cfg, NULL);
    for (int i = 0; i < N; i++) {
      ga_agg_step(a, &v[i]);
      if (i >= width)
        ga_agg_inverse(a, &v[i - width]);
      ga_value got;
      ga_agg_value(a, &got);
      /* brute force over the frame (i-width, i], first seen wins */
      ga_value best = {GA_V_NULL, 0, 0, 0, NULL};
      for (int j = i - width + 1 < 0 ? 0 : i - width + 1; j <= i; j++) {
        if (v[j].type == GA_V_NULL)
          continue;
        int c = best.type == GA_V_NULL ? 1 : ga_value_cmp(&v[j], &best);
        if (want_min ? c < 0 || best.type == GA_V_NULL : c > 0)
          best = v[j];
      }
      if (got.type != best.type || ga_value_cmp(&got, &best) != 0)
        bad++;
    }
    ga_value fin;
    ga_agg_final(a, &fin);
    ga_agg_free(a);
    CHECK(bad == 0, "sliding %s wrong in %d frames", want_min ? "min" : "max",
          bad);
  }
}

/* Sum windows: drop 1e100 after adding 1.0. */
static void test_window_sum(void) {
  ga_config cfg = cpu_cfg();
  ga_agg *a = ga_agg_new(GA_AGG_SUM, &cfg, NULL);
  ga_value big = vreal(1e100), one = vreal(1.0), out;
  ga_agg_step(a, &big);
  ga_agg_step(a, &one);
  ga_agg_value(a, &out);
  CHECK(out.type == GA_V_REAL && out.r == 1e100, "1e100 + 1");
  ga_agg_inverse(a, &big);
  ga_agg_value(a, &out);
  CHECK(out.type == GA_V_REAL && out.r == 1.0, "exact inverse: %a", out.r);
  ga_agg_inverse(a, &one);
  ga_agg_value(a, &out);
  CHECK(out.type == GA_V_NULL, "empty frame is NULL");
  ga_value i5 = vint(5);
  ga_agg_step(a, &i5);
  ga_agg_value(a, &out);
  CHECK(out.type == GA_V_INT && out.i == 5, "frame of ints is INTEGER again");
  ga_agg_final(a, &out);
  ga_agg_free(a);
}

/* engine/reduce/pct.c (issue 39): the selection at every k against a
** sorted copy, on shapes that defeat a median-of-three pivot, with the
** quickselect rounds cut to 0, 1 and 3 so that the heapsort that ends an
** introselect runs too; then the blend of rule 2 and _disc's zeros. */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void test_pct_select(void) {
  enum { N = 203 };
  double src[N], sorted[N], v[N];
  int bad = 0;
  for (int shape = 0; shape < 5; shape++) {
    unsigned s = 12345u + (unsigned)shape;
    for (int i = 0; i < N; i++) {
      s = s * 1103515245u + 12345u;
      src[i] = shape == 0   ? i
               : shape == 1 ? N - i
               : shape == 2 ? (i < N / 2 ? i : N - i)
               : shape == 3 ? (double)((s >> 16) % 4)
                            : (double)(s >> 8) / 7.0;
    }
    memcpy(sorted, src, sizeof src);
    qsort(sorted, N, sizeof(double), cmp_double);
    int rounds[] = {-1, 0, 1, 3};
    for (int r = 0; r < 4; r++)
      for (int k = 0; k < N; k++) {
        memcpy(v, src, sizeof src);
        ga_pct_select(v, N, (size_t)k, rounds[r], NULL, NULL);
        int ok = v[k] == sorted[k];
        for (int i = 0; ok && i < N; i++)
          ok = i < k ? v[i] <= v[k] : i > k ? v[i] >= v[k] : 1;
        bad += !ok;
      }
  }
  CHECK(bad == 0, "pct: the selection at every k, every round budget (%d bad)",
        bad);
  ga_pct p = {0};
  double in[] = {4.0, 1.0, 3.0, 2.0}, out = 0;
  for (int i = 0; i < 4; i++)
    ga_pct_push(&p, in[i]);
  p.frac = 0.1;
  p.frac_set = 1;
  ga_pct_answer(&p, GA_PCT_CONT, &out, NULL, NULL);
  /* ix = 0.1 * 3 = 0.30000000000000004: 1 + (2 - 1) * ix */
  CHECK(out == 1.0 + (2.0 - 1.0) * (0.1 * 3.0 - 0.0), "pct: the blend (%.17g)",
        out);
  ga_pct_answer(&p, GA_PCT_DISC, &out, NULL, NULL);
  CHECK(out == 1.0, "pct: _disc at floor(ix) (%.17g)", out);
  ga_pct_free(&p);
  double z[] = {0.0, -0.0, -0.0, 0.0, 0.0};
  for (int i = 0; i < 5; i++)
    ga_pct_push(&p, z[i]);
  p.frac = 0.25; /* ix 1: the second of -0.0, -0.0, 0.0, 0.0, 0.0 */
  ga_pct_answer(&p, GA_PCT_DISC, &out, NULL, NULL);
  CHECK(out == 0.0 && signbit(out), "pct: _disc orders -0.0 first");
  p.frac = 0.5;
  ga_pct_answer(&p, GA_PCT_DISC, &out, NULL, NULL);
  CHECK(out == 0.0 && !signbit(out), "pct: then 0.0");
  ga_pct_free(&p);
}

/* ---- the cache's long loops poll the caller's interrupt (rule 4 of
** cache_star.c, rule 5 of cache_gpu_many.c) ---- */

/* The interrupt hook: counts its calls, says "interrupted" from call
** *arg on (0: never). */
static int polls, stop_at;
static int poll_hook(void *arg) {
  (void)arg;
  polls++;
  return stop_at && polls >= stop_at;
}

/* A host entry of one INTEGER column: rows 0 .. n-1, value i % mod. */
static void int_entry(ga_centry *e, ga_ccol *col, ga_cblock **seg,
                      int64_t *base, int64_t n, int64_t mod) {
  memset(e, 0, sizeof(*e));
  memset(col, 0, sizeof(*col));
  *seg = ga_cb_new(1, n, 0);
  for (int64_t i = 0; i < n; i++) {
    ga_cb_vals(*seg, 0)[i] = (uint64_t)(i % mod);
    ga_cb_isint(*seg, 0)[i >> 6] |= 1ull << (i & 63);
    ga_cb_notnull(*seg, 0)[i >> 6] |= 1ull << (i & 63);
  }
  (*seg)->n = n;
  *base = 0;
  col->name = "k";
  col->nint = n;
  col->imax = mod - 1;
  e->table = "t";
  e->ncols = 1;
  e->cols = col;
  e->rows = n;
  e->segs = seg;
  e->seg_base = base;
  e->nsegs = 1;
}

/* fact JOIN dim (and, with leaf, dim JOIN leaf: a snowflake) on column 0
** of each. */
static int star_run(const ga_centry *fact, const ga_centry *dim,
                    const ga_centry *leaf, int *matched) {
  ga_cstar s;
  memset(&s, 0, sizeof(s));
  s.fact = fact;
  s.ndims = leaf ? 2 : 1;
  s.dims[0].e = dim;
  s.dims[0].parent = -1;
  s.dims[0].nkeys = 1;
  s.dims[1].e = leaf;
  s.dims[1].parent = 0;
  s.dims[1].nkeys = 1;
  s.ncols = 2; /* the fact's key and the dimension's */
  s.cols[0].tab = -1;
  s.cols[1].tab = 0;
  s.threads = 1;
  s.cap = (int64_t)1 << 40;
  s.interrupted = poll_hook;
  char why[200] = "";
  const char *names[] = {"a", "b"};
  ga_centry out;
  memset(&out, 0, sizeof(out));
  int rc = ga_cstar_build(&s, why, sizeof why);
  if (rc == GA_OK)
    rc = ga_cstar_probe(&s, names, &out, why, sizeof why);
  *matched = (int)s.matched;
  ga_cstar_entry_free(&out);
  ga_cstar_free(&s);
  return rc;
}

static int hand_one(void *arg, int64_t g, ga_xstate *sts) {
  (void)g;
  (void)sts;
  ++*(int64_t *)arg;
  return GA_SCAN_OK;
}

static void test_cache_polls(void) {
  /* a dimension of 50,000 rows (keys 0 .. 49,999: a dense lookup) and a
  ** fact of 1,000 rows, 16 words: too few for the probe's own poll */
  ga_centry fact, dim;
  ga_ccol fcol, dcol;
  ga_cblock *fseg, *dseg;
  int64_t fbase, dbase;
  int_entry(&fact, &fcol, &fseg, &fbase, 1000, 70000);
  int_entry(&dim, &dcol, &dseg, &dbase, 50000, 70000);
  int matched = 0;
  polls = stop_at = 0;
  int rc = star_run(&fact, &dim, NULL, &matched);
  /* the dimension's start, then its rows, its lookup's two passes and its
  ** column laid out by row: 3 polls each (every 16,384 rows) */
  CHECK(rc == GA_OK && matched == 1000 && polls == 13,
        "star: the build's loops poll (rc %d, %d joined, %d polls)", rc,
        matched, polls);
  int all = polls;
  for (int at = 2; at <= all; at++) {
    polls = 0;
    stop_at = at;
    rc = star_run(&fact, &dim, NULL, &matched);
    CHECK(rc == GA_SCAN_INTERRUPT && polls == at,
          "star: an interrupt at poll %d of %d ends the join (rc %d)", at, all,
          rc);
  }
  /* a snowflake: a leaf of 50,000 rows under the dimension, whose rows
  ** find theirs in it (3 polls more) besides the leaf's own 1 + 9 */
  ga_centry leaf;
  ga_ccol lcol;
  ga_cblock *lseg;
  int64_t lbase;
  int_entry(&leaf, &lcol, &lseg, &lbase, 50000, 70000);
  polls = stop_at = 0;
  rc = star_run(&fact, &dim, &leaf, &matched);
  CHECK(rc == GA_OK && matched == 1000 && polls == 26,
        "star: a snowflake's loops poll (rc %d, %d joined, %d polls)", rc,
        matched, polls);
  /* the leaf's 10 (built first), the dimension's start and rows (4), then
  ** its rows finding the leaf's: the first poll there */
  stop_at = 15;
  polls = 0;
  rc = star_run(&fact, &dim, &leaf, &matched);
  CHECK(rc == GA_SCAN_INTERRUPT && polls == 15,
        "star: an interrupt in the snowflake's children ends it (rc %d)", rc);
  stop_at = 0;
  ga_cb_free(fseg);
  ga_cb_free(dseg);
  ga_cb_free(lseg);

  /* a GPU entry's groups handed over: the caller's range polls every
  ** 1,024 groups */
  ga_cquery q;
  memset(&q, 0, sizeof(q));
  q.interrupted = poll_hook;
  int64_t done = 0;
  polls = stop_at = 0;
  rc = ga_cq_hand_groups(&q, 5000, 1, 0, hand_one, &done);
  CHECK(rc == GA_SCAN_OK && done == 5000 && polls == 4,
        "hand: 5,000 groups, 4 polls (rc %d, %lld, %d)", rc, (long long)done,
        polls);
  done = polls = 0;
  stop_at = 2;
  rc = ga_cq_hand_groups(&q, 5000, 1, 0, hand_one, &done);
  CHECK(rc == GA_SCAN_INTERRUPT && done == 2047,
        "hand: interrupted at the second poll (rc %d, %lld handed)", rc,
        (long long)done);
  stop_at = 0;
}

/* fstamp.h rule 1: two stamps are one state only when every field is equal;
** each field alone, moved, must make them differ (the birth time too: a
** file built again under the name on an inode freed while no connection
** was open, its change time equal). */
static void test_fstamp_fields(void) {
  ga_fstamp a;
  memset(&a, 0, sizeof a);
  a.ok = 1;
  a.st_dev = 7;
  a.st_ino = 11;
  a.st_ctime_ns = 1700000000123456789LL;
  a.has_btime = 1;
  a.st_btime_ns = 1700000000000000001LL;
  a.size = 8192;
  a.counter = 3;
  a.npages = 2;
  a.cookie = 1;
  a.pagesize = 4096;
  ga_fstamp b = a;
  CHECK(ga_fstamp_diff(&a, &b) == NULL, "fstamp: equal stamps differ");
#define MOVE(field, v)                                                         \
  do {                                                                         \
    b = a;                                                                     \
    b.field = v;                                                               \
    CHECK(ga_fstamp_diff(&a, &b) != NULL, "fstamp: %s moved, same state",      \
          #field);                                                             \
  } while (0)
  MOVE(st_dev, 8);
  MOVE(st_ino, 12);
  MOVE(st_ctime_ns, a.st_ctime_ns + 1);
  MOVE(st_btime_ns, a.st_btime_ns + 1);
  MOVE(has_btime, 0);
  MOVE(size, 4096);
  MOVE(counter, 4);
  MOVE(npages, 3);
  MOVE(cookie, 2);
  MOVE(wal, 1);
#undef MOVE
}

int main(void) {
  test_pairs();
  test_known();
  test_div();
  test_wide_ints();
  test_splits();
  test_merge_specials();
  test_merge_normalised_ints();
  test_cmp();
  test_agg_order();
  test_window_best();
  test_window_sum();
  test_pct_select();
  test_cache_polls();
  test_fstamp_fields();
  printf("RESULT engine: %d passed, %d failed, 0 skipped\n", passed, failed);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
