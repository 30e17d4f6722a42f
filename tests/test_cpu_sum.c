/*
** test_cpu_sum.c — every variant of the CPU's exact sum
*(engine/reduce/cpu_sum.c)
** against the one-value-at-a-time superaccumulator add, on adversarial data.
**
** Oracle: ga_sum_add_real / ga_sum_add_int per value (the reference the GPU
** kernels are tested against too), then ga_sum_normalize; a variant must give
** the same partial byte for byte (memcmp) and the same ga_sum_round.  Each
** data set runs at several lengths (tails of every SIMD width, of a range
** sub-block and of a bin block), from an unaligned start, and into a partial
** that already holds unnormalised values.  Variants this CPU lacks print SKIP.
** Prints FAIL lines and "RESULT cpu_sum: N passed, N failed, N skipped".
*/
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_reduce.h"
#include "cpu_sum.h"
#include "xacc.h"

static int passed, failed, skipped;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 2685821657736338717ull;
}

static uint64_t bits(double d) { return (uint64_t)ga_dbits(d); }

/* sign * (1 + random fraction) * 2^e */
static uint64_t rnd_at(int e, int sign) {
  double m = 1.0 + (double)(rnd() >> 11) * 0x1p-53;
  double d = ldexp(m, e);
  return bits(sign < 0 ? -d : d);
}

static int rsign(void) { return (rnd() & 1) ? -1 : 1; }

#define MAXN 40000
static uint64_t vals[MAXN + 64];
static uint64_t isint[(MAXN + 64) / 64 + 1];

/* The data sets: fill vals[0..n) (and isint), return the layout. */
enum {
  D_TYPICAL,
  D_SUBNORMAL,
  D_ZEROS,
  D_SPECIALS,
  D_SPECIAL_LATE,
  D_HUGE,
  D_MAXMANT,
  D_CANCEL,
  D_TIES,
  D_WIDE200,
  D_WIDE1000,
  D_FULL,
  D_BINADE_POS,
  D_BINADE_NEG,
  D_BINADE_MIX,
  D_MIXED,
  D_MIXED_SPECIAL,
  D_COUNT
};
static const char *dname[D_COUNT] = {
    "typical",  "subnormals",   "zeros",        "inf/nan",  "inf late",
    "huge",     "max mantissa", "cancellation", "ties",     "2^+-200",
    "2^+-1000", "full range",   "binade +",     "binade -", "binade +-",
    "mixed",    "mixed inf/nan"};

static uint64_t special(void) {
  switch (rnd() % 5) {
  case 0:
    return bits(INFINITY);
  case 1:
    return bits(-INFINITY);
  case 2:
    return 0x7ff8000000000000ull; /* quiet NaN */
  case 3:
    return 0xfff0000000000001ull; /* negative signalling NaN */
  default:
    return 0x7fffffffffffffffull; /* NaN, all payload bits */
  }
}

static int fill(int d, int n) {
  memset(isint, 0, sizeof isint);
  for (int i = 0; i < n; i++) {
    uint64_t w;
    switch (d) {
    case D_TYPICAL:
      w = bits((double)(rnd() >> 11) * 0x1p-53 - 0.5);
      break;
    case D_SUBNORMAL: { /* subnormals, both zeros, the smallest normals */
      uint64_t r = rnd();
      if (r % 4 == 0)
        w = (r >> 12) & ((1ull << 52) - 1); /* subnormal (or +0) */
      else if (r % 4 == 1)
        w = rnd_at(-1022 + (int)(r >> 60) % 3, 1); /* e = 1..3 */
      else if (r % 4 == 2)
        w = (r & 8) ? bits(-0.0) : bits(DBL_TRUE_MIN);
      else
        w = bits(DBL_MIN);
      if (r & (1ull << 40))
        w |= 1ull << 63;
      break;
    }
    case D_ZEROS:
      w = (rnd() & 1) ? bits(-0.0) : bits(0.0);
      break;
    case D_SPECIALS: /* some specials everywhere */
      w = rnd() % 97 == 0 ? special() : rnd_at((int)(rnd() % 64) - 32, rsign());
      break;
    case D_SPECIAL_LATE: /* one special deep in a block, after ordinary
                            sub-blocks filled the bins */
      w = i == n - 3 || i == 5000 ? special()
                                  : rnd_at((int)(rnd() % 8), rsign());
      break;
    case D_HUGE:
      w = (rnd() & 3) ? bits(DBL_MAX) : rnd_at(1000 + (int)(rnd() % 24), 1);
      if (rnd() % 7 == 0)
        w |= 1ull << 63;
      break;
    case D_MAXMANT: /* every bin at its capacity: mantissa 2^53 - 1 */
      w = bits(0x1.fffffffffffffp0);
      break;
    case D_CANCEL: { /* (x, -x) pairs, 1e100 against 1, then leftovers */
      static uint64_t prev;
      if (i % 3 == 0)
        prev = rnd_at((int)(rnd() % 400) - 200, rsign()), w = prev;
      else if (i % 3 == 1)
        w = prev ^ (1ull << 63);
      else
        w = i % 2 ? bits(1e100) : bits(-1e100);
      if (i == n - 1)
        w = bits(1.0);
      break;
    }
    case D_TIES: /* sums that sit exactly on a rounding tie */
      w = i % 2 ? bits(0x1p53) : bits(i % 4 ? 1.0 : -0x1p53);
      if (i == 0)
        w = bits(0x1p-60);
      break;
    case D_WIDE200:
      w = rnd_at((int)(rnd() % 401) - 200, rsign());
      break;
    case D_WIDE1000:
      w = rnd_at((int)(rnd() % 2001) - 1000, rsign());
      break;
    case D_FULL: /* every bit pattern that is finite */
      do
        w = rnd();
      while (((w >> 52) & 0x7ff) == 0x7ff);
      break;
    case D_BINADE_POS:
      w = rnd_at(0, 1);
      break;
    case D_BINADE_NEG:
      w = rnd_at(0, -1);
      break;
    case D_BINADE_MIX:
      w = rnd_at(0, rsign());
      break;
    case D_MIXED:
    case D_MIXED_SPECIAL: {
      uint64_t r = rnd();
      if (r % 3 == 0) {
        int64_t v = r % 5 == 0   ? INT64_MIN
                    : r % 7 == 0 ? INT64_MAX
                                 : (int64_t)rnd();
        w = (uint64_t)v;
        isint[i >> 6] |= 1ull << (i & 63);
      } else if (d == D_MIXED_SPECIAL && r % 101 == 1) {
        w = special();
      } else {
        w = rnd_at((int)(rnd() % 120) - 60, rsign());
      }
      break;
    }
    default:
      w = 0;
    }
    vals[i] = w;
  }
  return d >= D_MIXED ? GA_LAYOUT_MIXED : GA_LAYOUT_REAL;
}

static void reference(const uint64_t *v, const uint64_t *bm, int n, int layout,
                      ga_sum_partial *p) {
  for (int i = 0; i < n; i++) {
    if (layout == GA_LAYOUT_MIXED && ((bm[i >> 6] >> (i & 63)) & 1))
      ga_sum_add_int(p, (int64_t)v[i], 1);
    else
      ga_sum_add_real(p, ga_bitsd((int64_t)v[i]), 1);
  }
}

/* A partial that already holds a few values, unnormalised. */
static void prefill(ga_sum_partial *p) {
  ga_sum_init(p);
  ga_sum_add_real(p, 3.25, 1);
  ga_sum_add_real(p, -0x1p-1060, 1);
  ga_sum_add_int(p, -7, 1);
}

static int same(const ga_sum_partial *a, const ga_sum_partial *b) {
  return !memcmp(a, b, sizeof *a) &&
         ga_dbits(ga_sum_round(a)) == ga_dbits(ga_sum_round(b));
}

static void test_variant(int v) {
  static const int lens[] = {0,    1,    3,    5,    7,    9,     15,
                             17,   31,   33,   63,   65,   2047,  2048,
                             2049, 4100, 8191, 8192, 8193, 16389, 3 * 8192 + 77,
                             MAXN};
  const int nlens = (int)(sizeof lens / sizeof lens[0]);
  for (int d = 0; d < D_COUNT; d++) {
    int bad = 0, runs = 0;
    for (int li = 0; li < nlens; li++) {
      int n = lens[li];
      /* the unaligned start needs 1 word more; mixed offsets stay on a
      ** bitmap word (the layout's contract) */
      int layout = fill(d, n + 64);
      for (int shift = 0; shift < 2; shift++) {
        int off = shift ? (layout == GA_LAYOUT_MIXED ? 64 : 1) : 0;
        for (int pre = 0; pre < 2; pre++) {
          ga_sum_partial want, got;
          if (pre) {
            prefill(&want);
            prefill(&got);
          } else {
            ga_sum_init(&want);
            ga_sum_init(&got);
          }
          reference(vals + off, isint + off / 64, n, layout, &want);
          ga_cpu_sum_variant(v, vals + off, isint + off / 64, n, layout, &got);
          ga_sum_normalize(&want);
          ga_sum_normalize(&got);
          runs++;
          if (!same(&want, &got) && bad++ < 3)
            printf("FAIL cpu_sum %s: %s, n=%d, offset %d, prefilled %d: "
                   "partial differs (sum %a, want %a)\n",
                   ga_cpu_sum_variant_name(v), dname[d], n, off, pre,
                   ga_sum_round(&got), ga_sum_round(&want));
        }
      }
    }
    if (bad) {
      failed++;
      printf("FAIL cpu_sum %s: %s: %d of %d runs differ from the reference\n",
             ga_cpu_sum_variant_name(v), dname[d], bad, runs);
    } else {
      passed++;
    }
  }
}

/* Many chunks in a row through one variant: a bin left non-zero by one call
** (a missed flush) would show in a later one. */
static void test_sequence(int v) {
  ga_sum_partial want, got;
  ga_sum_init(&want);
  ga_sum_init(&got);
  for (int k = 0; k < 3 * D_COUNT; k++) {
    int d = k % D_COUNT, n = 1000 + (int)(rnd() % 12000);
    int layout = fill(d, n);
    reference(vals, isint, n, layout, &want);
    ga_cpu_sum_variant(v, vals, isint, n, layout, &got);
  }
  ga_sum_normalize(&want);
  ga_sum_normalize(&got);
  if (same(&want, &got)) {
    passed++;
  } else {
    failed++;
    printf("FAIL cpu_sum %s: a sequence of chunks differs from the "
           "reference\n",
           ga_cpu_sum_variant_name(v));
  }
}

/* Threads summing at the same time must each get their own bins (the
** scratch cache): 6 threads, each its own data, many chunks, every result
** against the reference computed before the threads start. */
#define TN 6
#define TVALS 12000
typedef struct {
  uint64_t v[TVALS];
  ga_sum_partial want;
  int bad;
} tjob;

static void *tmain(void *arg) {
  tjob *j = arg;
  for (int r = 0; r < 400; r++) {
    ga_sum_partial got;
    ga_sum_init(&got);
    ga_cpu_sum(j->v, NULL, TVALS, GA_LAYOUT_REAL, &got);
    ga_sum_normalize(&got);
    if (memcmp(&got, &j->want, sizeof got))
      j->bad++;
  }
  return NULL;
}

static void test_threads(void) {
  static tjob jobs[TN];
  pthread_t th[TN];
  for (int t = 0; t < TN; t++) {
    fill(t % 2 ? D_WIDE200 : D_TYPICAL, TVALS);
    memcpy(jobs[t].v, vals, sizeof jobs[t].v);
    ga_sum_init(&jobs[t].want);
    reference(jobs[t].v, NULL, TVALS, GA_LAYOUT_REAL, &jobs[t].want);
    ga_sum_normalize(&jobs[t].want);
    jobs[t].bad = 0;
  }
  int started = 0;
  for (int t = 0; t < TN; t++)
    started += pthread_create(&th[t], NULL, tmain, &jobs[t]) == 0;
  int bad = 0;
  for (int t = 0; t < TN; t++) {
    if (t < started)
      pthread_join(th[t], NULL);
    bad += jobs[t].bad;
  }
  if (started == TN && bad == 0) {
    passed++;
  } else {
    failed++;
    printf("FAIL cpu_sum: %d threads started, %d concurrent sums differ\n",
           started, bad);
  }
}

int main(void) {
  int nv = ga_cpu_sum_nvariants(), ran = 0;
  for (int v = 0; v < nv; v++) {
    if (!ga_cpu_sum_variant_ok(v)) {
      skipped++;
      printf("SKIP cpu_sum %s: this CPU lacks it\n",
             ga_cpu_sum_variant_name(v));
      continue;
    }
    ran++;
    test_variant(v);
    test_sequence(v);
  }
  /* the portable path and the reference run everywhere */
  if (ran >= 2 && ga_cpu_sum_variant_ok(ga_cpu_sum_variant_best())) {
    passed++;
  } else {
    failed++;
    printf("FAIL cpu_sum: %d variants ran, best %s\n", ran,
           ga_cpu_sum_variant_name(ga_cpu_sum_variant_best()));
  }
  /* ga_cpu_sum itself (the engine's entry) gives the reference's partial */
  int layout = fill(D_MIXED, 5000);
  ga_sum_partial want, got;
  ga_sum_init(&want);
  ga_sum_init(&got);
  reference(vals, isint, 5000, layout, &want);
  ga_cpu_sum(vals, isint, 5000, layout, &got);
  ga_sum_normalize(&want);
  ga_sum_normalize(&got);
  if (same(&want, &got)) {
    passed++;
  } else {
    failed++;
    printf("FAIL cpu_sum: ga_cpu_sum differs from the reference\n");
  }
  test_threads();
  printf("RESULT cpu_sum: %d passed, %d failed, %d skipped\n", passed, failed,
         skipped);
  return failed != 0;
}
