/*
** bench/var_kernel.cu — issue 39: the exact variance kernel (gak_var,
** kernels/var.cu) checked against the CPU and timed against CUB.
**
**   build/bench/var_kernel --test            adversarial inputs, exactness
**   build/bench/var_kernel [--rows N] [--reps R] [--csv PATH]
**
** --test: for every input (random doubles of every exponent, 2^+-500,
** 2^-1000, subnormals, 1e9 + noise, infinities, int64 extremes, the mixed
** layout, n = 0, 1, odd sizes, an l_extendedprice-like column) gak_var's
** partial, normalised, must equal engine/reduce/xvar.c's over the same
** values byte for byte, and every one of the four results must be the
** same bits.  Prints one PASS/FAIL line each; exit 1 on a failure.
**
** Timing (default 6e7 rows of l_extendedprice-like doubles, k/100 for
** k in 90100..10494950, as bench/lineitem.py's): gak_var (exact n, Σx,
** Σx²), CUB's TransformReduce sum of squares (one double, rounded at
** every add) and CUB's plain double Sum, medians of --reps CUDA-event
** samples after warm-up; the table gives ms, GB/s and gak_var's share of
** CUB's sum of squares.  Prints SKIP and exits 0 without a GPU.
*/
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <cub/cub.cuh>
#include <functional>
#include <string>
#include <vector>

extern "C" {
#include "xacc.h"
#include "xvar.h"
}
#include "cuda_bench.cuh"
#include "gak.h"

static int g_fail = 0;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double dbits(uint64_t b) {
  double d;
  memcpy(&d, &b, 8);
  return d;
}
static uint64_t bitsd(double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  return b;
}

struct input {
  std::string name;
  int layout;
  std::vector<uint64_t> v, isint;
};

/* gak_var on the device, normalised into *out. */
static void gpu_var(const input &in, ga_var_partial *out) {
  int64_t n = (int64_t)in.v.size();
  uint64_t *d_v = NULL, *d_b = NULL;
  ga_sum_partial *d_s = NULL;
  int64_t *d_q = NULL;
  CK(cudaMalloc(&d_v, std::max<size_t>(8, in.v.size() * 8)));
  CK(cudaMalloc(&d_b, std::max<size_t>(8, in.isint.size() * 8)));
  CK(cudaMalloc(&d_s, sizeof(ga_sum_partial)));
  CK(cudaMalloc(&d_q, sizeof(int64_t) * GA_XSQ_DIGITS));
  if (n)
    CK(cudaMemcpy(d_v, in.v.data(), n * 8, cudaMemcpyHostToDevice));
  if (!in.isint.empty())
    CK(cudaMemcpy(d_b, in.isint.data(), in.isint.size() * 8,
                  cudaMemcpyHostToDevice));
  CK((cudaError_t)gak_var(d_v, d_b, n, in.layout, d_s, d_q, 0));
  CK(cudaDeviceSynchronize());
  ga_var_init(out);
  CK(cudaMemcpy(&out->sum, d_s, sizeof(ga_sum_partial),
                cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(out->sq, d_q, sizeof(int64_t) * GA_XSQ_DIGITS,
                cudaMemcpyDeviceToHost));
  ga_var_normalize(out);
  cudaFree(d_v);
  cudaFree(d_b);
  cudaFree(d_s);
  cudaFree(d_q);
}

static void cpu_var(const input &in, ga_var_partial *out) {
  ga_var_init(out);
  for (size_t i = 0; i < in.v.size(); i++) {
    int is_int =
        in.layout == GA_LAYOUT_INT ||
        (in.layout == GA_LAYOUT_MIXED && ((in.isint[i >> 6] >> (i & 63)) & 1));
    if (is_int)
      ga_var_add_int(out, (int64_t)in.v[i], 1);
    else
      ga_var_add_real(out, dbits(in.v[i]), 1);
  }
  ga_var_normalize(out);
}

static void check(const input &in) {
  ga_var_partial g, c;
  gpu_var(in, &g);
  cpu_var(in, &c);
  int ok = !memcmp(&g.sum, &c.sum, sizeof(g.sum)) &&
           !memcmp(g.sq, c.sq, sizeof(g.sq));
  for (int w = GA_VAR_SAMP; w <= GA_SD_POP; w++) {
    double a = 0, b = 0;
    int ka = ga_var_result(&g, w, &a), kb = ga_var_result(&c, w, &b);
    ok = ok && ka == kb && (!ka || bitsd(a) == bitsd(b));
  }
  printf("%s gak_var %s (n = %zu)\n", ok ? "PASS" : "FAIL", in.name.c_str(),
         in.v.size());
  if (!ok)
    g_fail = 1;
}

static input reals(const char *name, size_t n, double (*gen)(size_t)) {
  input in;
  in.name = name;
  in.layout = GA_LAYOUT_REAL;
  for (size_t i = 0; i < n; i++)
    in.v.push_back(bitsd(gen(i)));
  return in;
}

static double g_any(size_t) { /* every finite exponent */
  uint64_t b = rnd();
  double d = dbits(b);
  return isfinite(d) ? d : 1.5;
}
static double g_500(size_t i) {
  return ldexp((double)(rnd() >> 11), (i & 1 ? 500 : -500) - 53) *
         (rnd() & 1 ? 1 : -1);
}
static double g_1000(size_t) {
  return ldexp((double)(rnd() >> 11), -1000 - 53);
}
static double g_sub(size_t) { return ldexp((double)(rnd() >> 40), -1074); }
static double g_1e9(size_t) {
  return 1e9 + (double)(int64_t)(rnd() % 2001 - 1000) * 1e-6;
}
static double g_price(size_t) {
  return (double)(90100 + rnd() % (10494950 - 90100 + 1)) / 100.0;
}
static double g_inf(size_t i) {
  return i == 7 ? INFINITY : (double)(rnd() % 100);
}
static double g_huge(size_t i) { /* squares and sums beyond DBL_MAX */
  return ldexp(1.0 + (double)(rnd() >> 12) / 4503599627370496.0,
               1000 + (int)(i % 23));
}

static int test(void) {
  size_t sizes[] = {0, 1, 2, 1000, 65537, 1000003};
  for (size_t n : sizes) {
    std::string s = std::to_string(n);
    check(reals(("any exponent " + s).c_str(), n, g_any));
    check(reals(("2^+-500 " + s).c_str(), n, g_500));
    check(reals(("2^-1000 " + s).c_str(), n, g_1000));
    check(reals(("subnormal " + s).c_str(), n, g_sub));
    check(reals(("1e9 + noise " + s).c_str(), n, g_1e9));
    check(reals(("price " + s).c_str(), n, g_price));
    check(reals(("huge " + s).c_str(), n, g_huge));
  }
  check(reals("an infinity", 100, g_inf));
  input ints;
  ints.name = "int64 extremes";
  ints.layout = GA_LAYOUT_INT;
  for (size_t i = 0; i < 100003; i++)
    ints.v.push_back(i % 5 == 0   ? (uint64_t)INT64_MIN
                     : i % 5 == 1 ? (uint64_t)INT64_MAX
                                  : rnd());
  check(ints);
  input mixed;
  mixed.name = "mixed";
  mixed.layout = GA_LAYOUT_MIXED;
  size_t n = 300007;
  mixed.isint.assign((n + 63) / 64, 0);
  for (size_t i = 0; i < n; i++) {
    if (rnd() & 1) {
      mixed.isint[i >> 6] |= 1ull << (i & 63);
      mixed.v.push_back(rnd() >> (rnd() % 64));
    } else {
      mixed.v.push_back(bitsd(g_any(i)));
    }
  }
  check(mixed);
  printf("RESULT var_kernel: %s\n", g_fail ? "FAILED" : "all passed");
  return g_fail;
}

struct square {
  __host__ __device__ double operator()(double x) const { return x * x; }
};

static float time_it(int reps, cudaStream_t s, const std::function<void()> &f) {
  return (float)bench_event_ms(f, reps, 1, s);
}

int main(int argc, char **argv) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("SKIP: no GPU\n");
    return 0;
  }
  int64_t rows = 60000000;
  int reps = 20;
  const char *csv = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--test"))
      return test();
    if (!strcmp(argv[i], "--rows") && i + 1 < argc)
      rows = (int64_t)atof(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
      csv = argv[++i];
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::vector<double> h(rows);
  for (int64_t i = 0; i < rows; i++)
    h[i] = g_price(i);
  double *d = NULL, *d_out = NULL;
  ga_sum_partial *d_s = NULL;
  int64_t *d_q = NULL;
  CK(cudaMalloc(&d, rows * 8));
  CK(cudaMalloc(&d_out, 8));
  CK(cudaMalloc(&d_s, sizeof(ga_sum_partial)));
  CK(cudaMalloc(&d_q, sizeof(int64_t) * GA_XSQ_DIGITS));
  CK(cudaMemcpy(d, h.data(), rows * 8, cudaMemcpyHostToDevice));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  size_t tb1 = 0, tb2 = 0;
  CK(cub::DeviceReduce::TransformReduce(
      NULL, tb1, d, d_out, rows, cuda::std::plus<double>(), square(), 0.0, s));
  CK(cub::DeviceReduce::Sum(NULL, tb2, d, d_out, rows, s));
  void *tmp = NULL;
  CK(cudaMalloc(&tmp, std::max(tb1, tb2)));
  /* gak_var takes at most GA_XACC_SAFE_ADDS values a call: the engine's
  ** chunks; 6e7 rows are one call each of up to 2^29 */
  auto run_var = [&] {
    for (int64_t a = 0; a < rows; a += GA_XACC_SAFE_ADDS) {
      int64_t m = std::min<int64_t>(GA_XACC_SAFE_ADDS, rows - a);
      CK((cudaError_t)gak_var((const uint64_t *)(d + a), NULL, m,
                              GA_LAYOUT_REAL, d_s, d_q, (gak_stream)s));
    }
  };
  float t_var = time_it(reps, s, run_var);
  float t_sq = time_it(reps, s, [&] {
    CK(cub::DeviceReduce::TransformReduce(
        tmp, tb1, d, d_out, rows, cuda::std::plus<double>(), square(), 0.0, s));
  });
  float t_sum = time_it(reps, s, [&] {
    CK(cub::DeviceReduce::Sum(tmp, tb2, d, d_out, rows, s));
  });
  /* the answer: exact against the CPU, and CUB's sum of squares' error */
  if (rows <= GA_XACC_SAFE_ADDS) {
    ga_var_partial g, c;
    ga_var_init(&g);
    CK(cudaMemcpy(&g.sum, d_s, sizeof(g.sum), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(g.sq, d_q, sizeof(g.sq), cudaMemcpyDeviceToHost));
    ga_var_normalize(&g);
    ga_var_init(&c);
    for (int64_t i = 0; i < rows; i++)
      ga_var_add_real(&c, h[i], 1);
    ga_var_normalize(&c);
    if (memcmp(&g.sum, &c.sum, sizeof(g.sum)) ||
        memcmp(g.sq, c.sq, sizeof(g.sq))) {
      printf("MISMATCH gak_var @ %lld rows\n", (long long)rows);
      g_fail = 1;
    }
    double sd = 0;
    ga_var_result(&g, GA_SD_SAMP, &sd);
    printf("# stddev_samp (exact, correctly rounded) = %.17g\n", sd);
  }
  double gb = rows * 8.0 / 1e9;
  printf("# %s, %lld rows (%.2f GB)\n", prop.name, (long long)rows, gb);
  printf("%-34s %10s %10s %10s\n", "kernel", "ms", "GB/s", "% of CUB sq");
  printf("%-34s %10.3f %10.1f %10.1f\n", "gak_var (exact n, Σx, Σx²)", t_var,
         gb / t_var * 1e3, 100.0 * t_sq / t_var);
  printf("%-34s %10.3f %10.1f %10.1f\n", "CUB TransformReduce sum x*x", t_sq,
         gb / t_sq * 1e3, 100.0);
  printf("%-34s %10.3f %10.1f %10.1f\n", "CUB Sum (double)", t_sum,
         gb / t_sum * 1e3, 100.0 * t_sq / t_sum);
  if (csv) {
    FILE *f = fopen(csv, "w");
    if (f) {
      fprintf(f, "device,rows,kernel,ms,gbps,pct_of_cub_sumsq\n");
      fprintf(f, "%s,%lld,gak_var,%.4f,%.1f,%.1f\n", prop.name, (long long)rows,
              t_var, gb / t_var * 1e3, 100.0 * t_sq / t_var);
      fprintf(f, "%s,%lld,cub_transform_reduce_sumsq,%.4f,%.1f,100.0\n",
              prop.name, (long long)rows, t_sq, gb / t_sq * 1e3);
      fprintf(f, "%s,%lld,cub_sum,%.4f,%.1f,%.1f\n", prop.name, (long long)rows,
              t_sum, gb / t_sum * 1e3, 100.0 * t_sq / t_sum);
      fclose(f);
    }
  }
  return g_fail;
}
