/*
** gpu_kernels_test.cu — adversarial correctness of gak_sum and gak_best
** against the CPU reference (engine/reduce/xacc.c).
**
** Sums: the GPU partial and the CPU partial (ga_sum_add_real/int) must be
** byte-identical after ga_sum_normalize, since both represent the same exact
** value.  Max/min: kind, index and bits must equal a CPU loop's.  Every case
** runs for every policy and level count the kernels have (gak_sum_tuned,
** gak_best_tuned), at a 16-byte-aligned start and at an 8-byte one (the
** kernels peel one word), with the output and scratch pre-filled with 0xff
** bytes to prove that the call writes the whole partial.
** Prints ok/FAIL lines, then "N passed, N failed"; SKIP with no GPU.
*/
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

extern "C" {
#include "xacc.h"
}
#include "gak.h"
#include "reduce.cuh"

static int g_pass, g_fail;

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #x,                   \
             cudaGetErrorString(e_));                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static uint64_t g_rng = 0x243f6a8885a308d3ull;
static uint64_t rnd(void) {
  uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static uint64_t dbits(double d) { return (uint64_t)ga_dbits(d); }

/* A test input: words, and for the mixed layout a bitmap. */
struct input {
  std::string name;
  int layout;
  std::vector<uint64_t> v;
  std::vector<uint64_t> bits; /* (n + 63) / 64 words when mixed */
  void real(double d) { push(dbits(d), 0); }
  void integer(int64_t i) { push((uint64_t)i, 1); }
  void push(uint64_t w, int isint) {
    size_t i = v.size();
    v.push_back(w);
    if (bits.size() < i / 64 + 1)
      bits.push_back(0);
    if (isint)
      bits[i / 64] |= 1ull << (i % 64);
  }
  int isint(size_t i) const {
    if (layout == GA_LAYOUT_INT)
      return 1;
    if (layout == GA_LAYOUT_REAL)
      return 0;
    return (int)((bits[i / 64] >> (i % 64)) & 1);
  }
};

static void cpu_sum(const input &in, ga_sum_partial *p) {
  ga_sum_init(p);
  for (size_t i = 0; i < in.v.size(); i++) {
    if (in.isint(i))
      ga_sum_add_int(p, (int64_t)in.v[i], 1);
    else
      ga_sum_add_real(p, ga_bitsd((int64_t)in.v[i]), 1);
  }
  ga_sum_normalize(p);
}

static ga_best_partial cpu_best(const input &in, int want_min) {
  ga_best_partial b;
  memset(&b, 0, sizeof(b));
  for (size_t i = 0; i < in.v.size(); i++) {
    int kind = in.isint(i) ? GA_KIND_INT : GA_KIND_REAL;
    int c = b.kind == GA_KIND_NONE
                ? 1
                : ga_num_cmp(kind, (int64_t)in.v[i], b.kind, b.bits);
    if (want_min && b.kind != GA_KIND_NONE)
      c = -c;
    if (c > 0) {
      b.kind = kind;
      b.idx = (int64_t)i;
      b.bits = (int64_t)in.v[i];
    }
  }
  return b;
}

static void report(bool ok, const std::string &what, const char *detail) {
  if (ok) {
    g_pass++;
  } else {
    g_fail++;
    printf("FAIL %s: %s\n", what.c_str(), detail);
  }
}

/* Run every variant of gak_sum and gak_best on one input. */
static void run_case(const input &in) {
  const int64_t n = (int64_t)in.v.size();
  int fails_before = g_fail;
  ga_sum_partial ref;
  cpu_sum(in, &ref);
  ga_best_partial bref[2] = {cpu_best(in, 0), cpu_best(in, 1)};
  bool has_nan = false;
  for (size_t i = 0; i < in.v.size(); i++)
    if (!in.isint(i) && isnan(ga_bitsd((int64_t)in.v[i])))
      has_nan = true;

  uint64_t *d_v, *d_bits;
  ga_sum_partial *d_sum;
  ga_best_partial *d_best;
  void *d_scratch;
  CK(cudaMalloc(&d_v, (n + 2) * 8));
  CK(cudaMalloc(&d_bits, (in.bits.size() + 1) * 8));
  CK(cudaMalloc(&d_sum, sizeof(ga_sum_partial)));
  CK(cudaMalloc(&d_best, sizeof(ga_best_partial)));
  CK(cudaMalloc(&d_scratch, gak_scratch_bytes(n)));
  if (!in.bits.empty())
    CK(cudaMemcpy(d_bits, in.bits.data(), in.bits.size() * 8,
                  cudaMemcpyHostToDevice));
  for (int off = 0; off < 2; off++) {
    uint64_t *dv = d_v + off; /* off 1: 8-byte aligned only */
    if (n)
      CK(cudaMemcpy(dv, in.v.data(), n * 8, cudaMemcpyHostToDevice));
    for (int policy = 0; policy < 3; policy++) {
      for (int lv = 4; lv <= 7; lv++) {
        /* levels 2..3, each without (careful redo) and with the scratch
        ** that defers failed warp tiles to the wide kernel */
        int levels = lv >> 1, defer = lv & 1;
        if (in.layout != GA_LAYOUT_REAL && levels != 2)
          continue;
        CK(cudaMemset(d_sum, 0xff, sizeof(ga_sum_partial)));
        CK(cudaMemset(d_scratch, 0xff, gak_scratch_bytes(n)));
        int e = gak_sum_tuned(dv, d_bits, n, in.layout, levels, policy, d_sum,
                              defer ? d_scratch : nullptr, nullptr);
        CK((cudaError_t)e);
        CK(cudaDeviceSynchronize());
        ga_sum_partial g;
        CK(cudaMemcpy(&g, d_sum, sizeof(g), cudaMemcpyDeviceToHost));
        ga_sum_normalize(&g);
        char what[64];
        snprintf(what, sizeof(what), "sum off%d P%d L%d%s", off, policy, levels,
                 defer ? " defer" : "");
        char detail[256];
        snprintf(detail, sizeof(detail),
                 "gpu %.17g nint %lld nreal %lld inf %lld/%lld nan %lld; cpu "
                 "%.17g nint %lld nreal %lld inf %lld/%lld nan %lld",
                 ga_sum_round(&g), (long long)g.nint, (long long)g.nreal,
                 (long long)g.npinf, (long long)g.nninf, (long long)g.nnan,
                 ga_sum_round(&ref), (long long)ref.nint, (long long)ref.nreal,
                 (long long)ref.npinf, (long long)ref.nninf,
                 (long long)ref.nnan);
        report(memcmp(&g, &ref, sizeof(g)) == 0, in.name + " " + what, detail);
      }
      if (has_nan)
        continue; /* max/min never see NaN (engine contract) */
      for (int want_min = 0; want_min < 2; want_min++) {
        CK(cudaMemset(d_best, 0xff, sizeof(ga_best_partial)));
        CK(cudaMemset(d_scratch, 0xff, gak_scratch_bytes(n)));
        int e = gak_best_tuned(dv, d_bits, n, in.layout, want_min, policy,
                               d_best, d_scratch, nullptr);
        CK((cudaError_t)e);
        CK(cudaDeviceSynchronize());
        ga_best_partial g;
        CK(cudaMemcpy(&g, d_best, sizeof(g), cudaMemcpyDeviceToHost));
        const ga_best_partial &r = bref[want_min];
        char what[64];
        snprintf(what, sizeof(what), "%s off%d P%d", want_min ? "min" : "max",
                 off, policy);
        char detail[256];
        snprintf(detail, sizeof(detail),
                 "gpu kind %d idx %lld bits %016llx pad %d; cpu kind %d idx "
                 "%lld bits %016llx",
                 g.kind, (long long)g.idx, (unsigned long long)g.bits, g.pad,
                 r.kind, (long long)r.idx, (unsigned long long)r.bits);
        report(memcmp(&g, &r, sizeof(g)) == 0, in.name + " " + what, detail);
      }
    }
  }
  /* the public entry points once (default policy) */
  {
    if (n)
      CK(cudaMemcpy(d_v, in.v.data(), n * 8, cudaMemcpyHostToDevice));
    CK(cudaMemset(d_sum, 0xff, sizeof(ga_sum_partial)));
    CK((cudaError_t)gak_sum(d_v, d_bits, n, in.layout, d_sum, d_scratch,
                            nullptr));
    CK(cudaDeviceSynchronize());
    ga_sum_partial g;
    CK(cudaMemcpy(&g, d_sum, sizeof(g), cudaMemcpyDeviceToHost));
    ga_sum_normalize(&g);
    report(memcmp(&g, &ref, sizeof(g)) == 0, in.name + " gak_sum", "differs");
    if (!has_nan) {
      CK((cudaError_t)gak_best(d_v, d_bits, n, in.layout, 0, d_best, d_scratch,
                               nullptr));
      CK(cudaDeviceSynchronize());
      ga_best_partial b;
      CK(cudaMemcpy(&b, d_best, sizeof(b), cudaMemcpyDeviceToHost));
      report(memcmp(&b, &bref[0], sizeof(b)) == 0, in.name + " gak_best",
             "differs");
    }
  }
  CK(cudaFree(d_v));
  CK(cudaFree(d_bits));
  CK(cudaFree(d_sum));
  CK(cudaFree(d_best));
  CK(cudaFree(d_scratch));
  printf("%s %s (n=%lld)\n", g_fail == fails_before ? "ok  " : "FAIL",
         in.name.c_str(), (long long)n);
  fflush(stdout);
}

static input make(const char *name, int layout) {
  input in;
  in.name = name;
  in.layout = layout;
  return in;
}

/* random finite double: random sign and fraction, exponent in [lo, hi] */
static double rnd_real(int lo, int hi) {
  uint64_t r = rnd();
  int e = lo + (int)(rnd() % (uint64_t)(hi - lo + 1));
  double m = 1.0 + (double)(r >> 12) * 0x1p-52;
  return (r & 1 ? -1 : 1) * ldexp(m, e);
}

static const char *LN[3] = {"int", "real", "mixed"};

int main(void) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("SKIP: no GPU\n");
    printf("0 passed, 0 failed\n");
    return 0;
  }
  char name[128];

  /* sizes around warp/tile boundaries, every layout */
  const int64_t sizes[] = {0,   1,   2,    31,   32,   33,   63,     64,     65,
                           255, 257, 2047, 2048, 2049, 4097, 100003, 1000001};
  for (int layout = 0; layout < 3; layout++)
    for (int64_t n : sizes) {
      snprintf(name, sizeof(name), "random %s n=%lld", LN[layout],
               (long long)n);
      input in = make(name, layout);
      for (int64_t i = 0; i < n; i++) {
        int isint = layout == 0 || (layout == 2 && (rnd() & 1));
        if (isint)
          in.integer((int64_t)rnd());
        else
          in.real(rnd_real(-30, 30));
      }
      run_case(in);
    }

  /* cancellation: 1e100, 1, -1e100 (the naive sum is 0) */
  for (int64_t reps : {1, 1000, 70000}) {
    snprintf(name, sizeof(name), "cancel 1e100,1,-1e100 x%lld",
             (long long)reps);
    input in = make(name, GA_LAYOUT_REAL);
    for (int64_t r = 0; r < reps; r++) {
      in.real(1e100);
      in.real(1.0);
      in.real(-1e100);
    }
    run_case(in);
  }
  {
    input in = make("cancel pairs x and -x, then 2^-1074", GA_LAYOUT_REAL);
    std::vector<double> xs;
    for (int i = 0; i < 50000; i++)
      xs.push_back(rnd_real(-1000, 1000));
    for (double x : xs)
      in.real(x);
    for (double x : xs)
      in.real(-x);
    in.real(ldexp(1.0, -1074));
    run_case(in);
  }
  /* huge dynamic range: every exponent, every sign */
  for (int64_t n : {1000, 300001}) {
    snprintf(name, sizeof(name), "full exponent range n=%lld", (long long)n);
    input in = make(name, GA_LAYOUT_REAL);
    for (int64_t i = 0; i < n; i++)
      in.real(rnd_real(-1022, 1023));
    run_case(in);
  }
  /* subnormals, alone and with normals */
  {
    input in = make("subnormals", GA_LAYOUT_REAL);
    for (int i = 0; i < 20011; i++) {
      uint64_t m = rnd() & ((1ull << 52) - 1);
      in.push(m | (rnd() & (1ull << 63)), 0);
    }
    run_case(in);
    input in2 = make("subnormals with 1.0 and DBL_MIN", GA_LAYOUT_REAL);
    for (int i = 0; i < 20011; i++) {
      in2.push((rnd() & ((1ull << 52) - 1)) | (rnd() & (1ull << 63)), 0);
      if (i % 7 == 0)
        in2.real(i % 2 ? 1.0 : -DBL_MIN);
    }
    run_case(in2);
  }
  /* near DBL_MAX: the float sum overflows, the exact one does not */
  {
    input in = make("DBL_MAX x3000 then -DBL_MAX x2999", GA_LAYOUT_REAL);
    for (int i = 0; i < 3000; i++)
      in.real(DBL_MAX);
    for (int i = 0; i < 2999; i++)
      in.real(-DBL_MAX);
    run_case(in);
    input in2 = make("DBL_MAX interleaved with 1e-300", GA_LAYOUT_REAL);
    for (int i = 0; i < 40000; i++)
      in2.real(i % 3 ? DBL_MAX : 1e-300);
    run_case(in2);
    input in3 = make("+-DBL_MAX random signs", GA_LAYOUT_REAL);
    for (int i = 0; i < 77777; i++)
      in3.real(rnd() & 1 ? DBL_MAX : -ldexp(1.9, 1023));
    run_case(in3);
  }
  /* infinities and NaN (NaN: sums only) */
  {
    input in = make("+Inf in randoms", GA_LAYOUT_REAL);
    for (int i = 0; i < 50000; i++)
      in.real(i % 997 == 5 ? INFINITY : rnd_real(-10, 10));
    run_case(in);
    input in2 = make("+Inf and -Inf in randoms", GA_LAYOUT_REAL);
    for (int i = 0; i < 50000; i++)
      in2.real(i % 991 == 5 ? (i & 1 ? INFINITY : -INFINITY)
                            : rnd_real(-10, 10));
    run_case(in2);
    input in3 = make("NaN and Inf (sum only)", GA_LAYOUT_MIXED);
    for (int i = 0; i < 50000; i++) {
      if (i % 499 == 3)
        in3.real(i % 3 == 0 ? NAN : (i % 3 == 1 ? -INFINITY : INFINITY));
      else if (i & 1)
        in3.integer((int64_t)rnd());
      else
        in3.real(rnd_real(-10, 10));
    }
    run_case(in3);
    input in4 = make("-Inf only", GA_LAYOUT_REAL);
    for (int i = 0; i < 5; i++)
      in4.real(-INFINITY);
    run_case(in4);
  }
  /* integers at the extremes */
  {
    input in = make("INT64_MIN/INT64_MAX", GA_LAYOUT_INT);
    for (int i = 0; i < 100000; i++)
      in.integer(i % 2 ? INT64_MAX : INT64_MIN);
    in.integer(-1);
    run_case(in);
    input in2 = make("INT64_MAX x2^17 (overflowing total)", GA_LAYOUT_INT);
    for (int i = 0; i < 131072; i++)
      in2.integer(INT64_MAX);
    run_case(in2);
  }
  /* ties across kinds, and the first occurrence */
  {
    input a = make("tie real 5.0 then int 5", GA_LAYOUT_MIXED);
    a.real(5.0);
    a.integer(5);
    run_case(a);
    input b = make("tie int 5 then real 5.0", GA_LAYOUT_MIXED);
    b.integer(5);
    b.real(5.0);
    run_case(b);
    input c =
        make("int 2^53+1 vs real 2^53, INT64_MAX vs 2^63", GA_LAYOUT_MIXED);
    c.real(9007199254740992.0);
    c.integer(9007199254740993ll);
    c.integer(INT64_MAX);
    c.real(0x1p63);
    c.integer(INT64_MIN);
    c.real(-0x1p63);
    c.real(-0x1p63 - 4096);
    run_case(c);
    input d = make("many ties of 5 / 5.0 across blocks", GA_LAYOUT_MIXED);
    for (int i = 0; i < 300001; i++) {
      if (i % 1001 == 17)
        (i & 1) ? d.integer(5) : d.real(5.0);
      else
        (i & 1) ? d.integer(-(int64_t)(rnd() % 1000)) : d.real(-rnd_real(0, 9));
    }
    run_case(d);
    input e = make("max at the last position", GA_LAYOUT_INT);
    for (int i = 0; i < 100000; i++)
      e.integer(i);
    run_case(e);
    input f = make("all equal ints", GA_LAYOUT_INT);
    for (int i = 0; i < 100000; i++)
      f.integer(42);
    run_case(f);
    input g = make("all equal reals, one larger in the middle", GA_LAYOUT_REAL);
    for (int i = 0; i < 100001; i++)
      g.real(i == 54321 ? 2.5 : 2.0);
    run_case(g);
  }
  /* -0.0 and 0.0 compare equal: the first wins */
  {
    input a = make("-0.0 then 0.0", GA_LAYOUT_REAL);
    a.real(-0.0);
    a.real(0.0);
    run_case(a);
    input b = make("0.0 then -0.0", GA_LAYOUT_REAL);
    b.real(0.0);
    b.real(-0.0);
    run_case(b);
    input c = make("zeros of both signs, n=100000", GA_LAYOUT_REAL);
    for (int i = 0; i < 100000; i++)
      c.real(rnd() & 1 ? -0.0 : 0.0);
    run_case(c);
    input d = make("negatives then zeros of both signs", GA_LAYOUT_REAL);
    for (int i = 0; i < 70000; i++)
      d.real(i < 30000 ? -1.0 : (i & 1 ? 0.0 : -0.0));
    run_case(d);
    input e = make("int 0 and -0.0 mixed", GA_LAYOUT_MIXED);
    e.real(-0.0);
    e.integer(0);
    e.real(0.0);
    run_case(e);
  }
  /* wide-range reals: most warp tiles fail the expansion and are deferred
  ** to the wide kernel; mixed with ints, Inf and a tail */
  {
    input a = make("2^+-200 reals n=300007", GA_LAYOUT_REAL);
    for (int i = 0; i < 300007; i++)
      a.real(rnd_real(-200, 200));
    run_case(a);
    input b = make("2^+-1000 reals n=200003", GA_LAYOUT_REAL);
    for (int i = 0; i < 200003; i++)
      b.real(rnd_real(-1000, 1000));
    run_case(b);
    input c = make("2^+-300 reals, ints, +Inf, -Inf, mixed n=250001",
                   GA_LAYOUT_MIXED);
    for (int i = 0; i < 250001; i++) {
      if (i % 3 == 0)
        c.integer((int64_t)rnd());
      else if (i == 100000)
        c.real(INFINITY);
      else if (i == 200000)
        c.real(-INFINITY);
      else
        c.real(rnd_real(-300, 300));
    }
    run_case(c);
    input d =
        make("typical data with one wide warp tile per 50000", GA_LAYOUT_REAL);
    for (int i = 0; i < 400000; i++)
      d.real(i % 50000 == 77 ? 1e280 : rnd_real(-20, 20));
    run_case(d);
    input e = make("mixed max/min: ints and reals interleaved, ties",
                   GA_LAYOUT_MIXED);
    for (int i = 0; i < 300000; i++) {
      int64_t v = (int64_t)(rnd() % 2000001) - 1000000;
      if (i % 7 == 3)
        e.real((double)v);
      else if (i % 13 == 5)
        e.real(rnd_real(-30, 19) * ((rnd() & 1) ? 1 : -1));
      else
        e.integer(v);
    }
    e.real(1000000.0); /* ties with an earlier int 1000000 if one exists */
    run_case(e);
    input f =
        make("mixed max/min near 2^53 and 2^63, -Inf/+Inf", GA_LAYOUT_MIXED);
    for (int i = 0; i < 100000; i++) {
      uint64_t r = rnd() % 6;
      if (r == 0)
        f.integer(9007199254740993ll + (int64_t)(rnd() % 5) - 2);
      else if (r == 1)
        f.real(9007199254740992.0 + 2.0 * (double)(rnd() % 3));
      else if (r == 2)
        f.integer(INT64_MAX - (int64_t)(rnd() % 3));
      else if (r == 3)
        f.real(i == 5000 ? INFINITY : (i == 6000 ? -INFINITY : 0x1p63));
      else if (r == 4)
        f.integer(INT64_MIN + (int64_t)(rnd() % 3));
      else
        f.real(-0x1p63);
    }
    run_case(f);
  }
  /* infinities in max/min */
  {
    input a = make("+-Inf max/min", GA_LAYOUT_REAL);
    for (int i = 0; i < 5000; i++)
      a.real(i == 4000 ? INFINITY : (i == 17 ? -INFINITY : rnd_real(-5, 5)));
    run_case(a);
  }

  printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
