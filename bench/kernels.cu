/*
** bench/kernels.cu — gpuagg's kernels against CUB and the seeds' V1..V3.
**
**   build/bench/kernels [--quick] [--csv PATH] [--reps N]
**
** For each size (1 GiB of 64-bit words and the seeds' 1080x1920 doubles;
** --quick: two small sizes) it fills fresh random data on the device (never
** zero), times every kernel with CUDA events after warm-up (median of --reps
** samples, 25 by default; a sample of a small size times a batch of
** back-to-back launches, so that host launch gaps do not count), checks
** every result against the CPU (engine/reduce/xacc.c: exact partials compared
*after
** ga_sum_normalize, max/min by a CPU loop) and prints the table last:
** kernel, size, median ms, GB/s, % of the matching CUB op (matadd: % of the
** device-to-device copy).  Bytes are those read (plus written, for copy and
** matadd).  Exits 1 on any mismatch; prints SKIP and exits 0 with no GPU.
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
}
#include "cuda_bench.cuh"
#include "gak.h"
#include "reduce.cuh"

extern "C" int gak_bench_v1(const double *, double *, int64_t, double *,
                            gak_stream);
extern "C" int gak_bench_v2(const double *, double *, int64_t, double *,
                            gak_stream);
extern "C" int gak_bench_v3(const double *, double *, int64_t, double *,
                            gak_stream);

static int g_fail = 0;

static void mismatch(const char *what, const char *size, const char *detail) {
  printf("MISMATCH %s @ %s: %s\n", what, size, detail);
  g_fail = 1;
}

/* ------------------------------------------------------------ data */

__device__ __forceinline__ uint64_t bench_mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* reals: random sign, random 52-bit fraction, exponent in [-20, 20] */
__device__ __forceinline__ uint64_t bench_real(uint64_t r) {
  uint64_t e = 1023 - 20 + (r >> 58) % 41;
  return (r & (1ull << 63)) | (e << 52) | (bench_mix(r) & ((1ull << 52) - 1));
}

__global__ void bench_fill(uint64_t *i64, uint64_t *f64, uint64_t *mix,
                           uint64_t *bits, int64_t n, uint64_t seed) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    uint64_t r = bench_mix(seed ^ (uint64_t)i * 0x2545f4914f6cdd1dull);
    i64[i] = r | 1; /* full-range int64, never zero */
    f64[i] = bench_real(bench_mix(r));
    uint64_t word = bench_mix(seed * 31 + (uint64_t)(i >> 6));
    int isint = (int)((word >> (i & 63)) & 1);
    /* mixed: ints within +-2^40, reals as above */
    mix[i] = isint ? (uint64_t)((int64_t)(r >> 23) - (1ll << 40))
                   : bench_real(bench_mix(r + 7));
    if ((i & 63) == 0)
      bits[i >> 6] = word;
  }
}

/* reals with exponents in [emin, emax] (wide-range and single-binade sets;
** the exact sum's cost depends on the spread, CUB's does not) */
__global__ void bench_fill_spread(uint64_t *out, int64_t n, uint64_t seed,
                                  int emin, int emax) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    uint64_t r = bench_mix(seed ^ (uint64_t)i * 0x2545f4914f6cdd1dull);
    uint64_t e =
        (uint64_t)(1023 + emin) + (r >> 40) % (uint64_t)(emax - emin + 1);
    out[i] =
        (r & (1ull << 63)) | (e << 52) | (bench_mix(r) & ((1ull << 52) - 1));
  }
}

/* ----------------------------------------------------------- timing */

struct row {
  std::string kernel, size, ref;
  int64_t n;
  double bytes, ms;
};
static std::vector<row> g_rows;
static int g_reps = 25;

static double time_ms(const std::function<int()> &f, int batch,
                      cudaStream_t s) {
  return bench_event_ms(
      [&] {
        if (f() != 0) {
          fprintf(stderr, "launch failed\n");
          exit(1);
        }
      },
      g_reps, batch, s);
}

static void add_row(const char *kernel, const char *size, int64_t n,
                    double bytes, double ms, const char *ref) {
  g_rows.push_back(row{kernel, size, ref, n, bytes, ms});
}

/* ------------------------------------------------------- references */

static ga_best_partial cpu_best(const uint64_t *v, const uint64_t *bits,
                                int64_t n, int layout, int want_min) {
  ga_best_partial b;
  memset(&b, 0, sizeof(b));
  for (int64_t i = 0; i < n; i++) {
    int kind = layout == GA_LAYOUT_INT            ? GA_KIND_INT
               : layout == GA_LAYOUT_REAL         ? GA_KIND_REAL
               : ((bits[i >> 6] >> (i & 63)) & 1) ? GA_KIND_INT
                                                  : GA_KIND_REAL;
    int c = b.kind == GA_KIND_NONE
                ? 1
                : ga_num_cmp(kind, (int64_t)v[i], b.kind, b.bits);
    if (want_min && b.kind != GA_KIND_NONE)
      c = -c;
    if (c > 0) {
      b.kind = kind;
      b.idx = i;
      b.bits = (int64_t)v[i];
    }
  }
  return b;
}

static void cpu_sum(ga_sum_partial *p, const uint64_t *v, const uint64_t *bits,
                    int64_t n, int layout) {
  ga_sum_init(p);
  for (int64_t i = 0; i < n; i++) {
    int isint = layout == GA_LAYOUT_INT ||
                (layout == GA_LAYOUT_MIXED && ((bits[i >> 6] >> (i & 63)) & 1));
    if (isint)
      ga_sum_add_int(p, (int64_t)v[i], 1);
    else
      ga_sum_add_real(p, ga_bitsd((int64_t)v[i]), 1);
  }
  ga_sum_normalize(p);
}

static void check_sum(const char *what, const char *size,
                      const ga_sum_partial *d_out, const ga_sum_partial *ref) {
  ga_sum_partial g;
  CK(cudaDeviceSynchronize()); /* the bench stream does not block on 0 */
  CK(cudaMemcpy(&g, d_out, sizeof(g), cudaMemcpyDeviceToHost));
  ga_sum_normalize(&g);
  if (memcmp(&g, ref, sizeof(g)) != 0) {
    char buf[200];
    snprintf(buf, sizeof(buf), "gpu %.17g (nint %lld nreal %lld) cpu %.17g",
             ga_sum_round(&g), (long long)g.nint, (long long)g.nreal,
             ga_sum_round(ref));
    mismatch(what, size, buf);
  }
}

static void check_best(const char *what, const char *size,
                       const ga_best_partial *d_out,
                       const ga_best_partial *ref) {
  ga_best_partial g;
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(&g, d_out, sizeof(g), cudaMemcpyDeviceToHost));
  if (g.kind != ref->kind || g.idx != ref->idx || g.bits != ref->bits) {
    char buf[200];
    snprintf(buf, sizeof(buf),
             "gpu kind %d idx %lld bits %llx, cpu %d %lld %llx", g.kind,
             (long long)g.idx, (unsigned long long)g.bits, ref->kind,
             (long long)ref->idx, (unsigned long long)ref->bits);
    mismatch(what, size, buf);
  }
}

/* a double result of an inexact sum: within a loose bound of the exact one */
static void check_near(const char *what, const char *size, const double *d_r,
                       double exact, double abs_sum) {
  double r;
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(&r, d_r, sizeof(r), cudaMemcpyDeviceToHost));
  if (!(fabs(r - exact) <= 1e-12 * abs_sum + 1e-300)) {
    char buf[200];
    snprintf(buf, sizeof(buf), "got %.17g, exact %.17g", r, exact);
    mismatch(what, size, buf);
  }
}

/* ------------------------------------------------------------ one size */

static void bench_size(const char *size, int64_t n, int full_tuning,
                       cudaStream_t s) {
  printf("== %s: n = %lld words (%.1f MiB per array)\n", size, (long long)n,
         n * 8.0 / (1 << 20));
  fflush(stdout);
  const size_t bytes = (size_t)n * 8;
  const int64_t nbits = (n + 63) / 64;
  uint64_t *d_i64, *d_f64, *d_mix, *d_bits, *d_copy, *d_work;
  CK(cudaMalloc(&d_i64, bytes));
  CK(cudaMalloc(&d_f64, bytes));
  CK(cudaMalloc(&d_mix, bytes));
  CK(cudaMalloc(&d_bits, nbits * 8));
  CK(cudaMalloc(&d_copy, bytes));
  CK(cudaMalloc(&d_work, bytes));
  ga_sum_partial *d_sum;
  ga_best_partial *d_best;
  long long *d_cub_i;
  double *d_cub_d;
  void *d_scratch;
  CK(cudaMalloc(&d_sum, sizeof(*d_sum)));
  CK(cudaMalloc(&d_best, sizeof(*d_best)));
  CK(cudaMalloc(&d_cub_i, 8));
  CK(cudaMalloc(&d_cub_d, 8));
  CK(cudaMalloc(&d_scratch, gak_scratch_bytes(n)));
  bench_fill<<<1024, 256, 0, s>>>(d_i64, d_f64, d_mix, d_bits, n,
                                  0x1234567ull + (uint64_t)n);
  CK(cudaGetLastError());

  const long long *ci = (const long long *)d_i64;
  const double *cf = (const double *)d_f64;
  size_t tb = 0, t;
  CK(cub::DeviceReduce::Sum(nullptr, t, ci, d_cub_i, n, s));
  tb = std::max(tb, t);
  CK(cub::DeviceReduce::Sum(nullptr, t, cf, d_cub_d, n, s));
  tb = std::max(tb, t);
  CK(cub::DeviceReduce::Max(nullptr, t, ci, d_cub_i, n, s));
  tb = std::max(tb, t);
  CK(cub::DeviceReduce::Max(nullptr, t, cf, d_cub_d, n, s));
  tb = std::max(tb, t);
  void *d_tmp;
  CK(cudaMalloc(&d_tmp, tb));

  /* CPU references */
  std::vector<uint64_t> h_i64(n), h_f64(n), h_mix(n), h_bits(nbits);
  CK(cudaStreamSynchronize(s));
  CK(cudaMemcpy(h_i64.data(), d_i64, bytes, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h_f64.data(), d_f64, bytes, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h_mix.data(), d_mix, bytes, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h_bits.data(), d_bits, nbits * 8, cudaMemcpyDeviceToHost));
  ga_sum_partial r_i64, r_f64, r_mix;
  cpu_sum(&r_i64, h_i64.data(), nullptr, n, GA_LAYOUT_INT);
  cpu_sum(&r_f64, h_f64.data(), nullptr, n, GA_LAYOUT_REAL);
  cpu_sum(&r_mix, h_mix.data(), h_bits.data(), n, GA_LAYOUT_MIXED);
  ga_best_partial b_i64 = cpu_best(h_i64.data(), nullptr, n, GA_LAYOUT_INT, 0);
  ga_best_partial b_i64m = cpu_best(h_i64.data(), nullptr, n, GA_LAYOUT_INT, 1);
  ga_best_partial b_f64 = cpu_best(h_f64.data(), nullptr, n, GA_LAYOUT_REAL, 0);
  ga_best_partial b_f64m =
      cpu_best(h_f64.data(), nullptr, n, GA_LAYOUT_REAL, 1);
  ga_best_partial b_mix =
      cpu_best(h_mix.data(), h_bits.data(), n, GA_LAYOUT_MIXED, 0);
  double exact_f64 = ga_sum_round(&r_f64), abs_f64 = 0;
  for (int64_t i = 0; i < n; i++)
    abs_f64 += fabs(ga_bitsd((int64_t)h_f64[i]));
  uint64_t wrap_i64 = 0;
  for (int64_t i = 0; i < n; i++)
    wrap_i64 += h_i64[i];

  const int batch = bytes < (64u << 20) ? 20 : 1;
  const double B = (double)bytes;
  const double Bm = B + nbits * 8.0;
  gak_stream gs = (gak_stream)s;
  double ms;

  ms = time_ms(
      [&] {
        return (int)cudaMemcpyAsync(d_copy, d_f64, bytes,
                                    cudaMemcpyDeviceToDevice, s);
      },
      batch, s);
  add_row("d2d copy (r+w)", size, n, 2 * B, ms, "");

  ms = time_ms(
      [&] { return (int)cub::DeviceReduce::Sum(d_tmp, tb, ci, d_cub_i, n, s); },
      batch, s);
  add_row("cub sum i64", size, n, B, ms, "cub sum i64");
  {
    long long r;
    CK(cudaMemcpy(&r, d_cub_i, 8, cudaMemcpyDeviceToHost));
    if ((uint64_t)r != wrap_i64)
      mismatch("cub sum i64", size, "wrapping sum");
  }
  ms = time_ms(
      [&] { return (int)cub::DeviceReduce::Sum(d_tmp, tb, cf, d_cub_d, n, s); },
      batch, s);
  add_row("cub sum f64", size, n, B, ms, "cub sum f64");
  check_near("cub sum f64", size, d_cub_d, exact_f64, abs_f64);
  ms = time_ms(
      [&] { return (int)cub::DeviceReduce::Max(d_tmp, tb, ci, d_cub_i, n, s); },
      batch, s);
  add_row("cub max i64", size, n, B, ms, "cub max i64");
  {
    long long r;
    CK(cudaMemcpy(&r, d_cub_i, 8, cudaMemcpyDeviceToHost));
    if (r != b_i64.bits)
      mismatch("cub max i64", size, "value");
  }
  ms = time_ms(
      [&] { return (int)cub::DeviceReduce::Max(d_tmp, tb, cf, d_cub_d, n, s); },
      batch, s);
  add_row("cub max f64", size, n, B, ms, "cub max f64");
  {
    double r;
    CK(cudaMemcpy(&r, d_cub_d, 8, cudaMemcpyDeviceToHost));
    if (r != ga_bitsd(b_f64.bits))
      mismatch("cub max f64", size, "value");
  }

  /* ours */
  struct sumv {
    const char *name;
    const uint64_t *v;
    int layout, levels, policy;
    const ga_sum_partial *ref;
    double bytes;
    const char *cub;
    int tuning;
  } sums[] = {
      {"gak sum i64", d_i64, GA_LAYOUT_INT, 2, -1, &r_i64, B, "cub sum i64", 0},
      {"gak xsum f64", d_f64, GA_LAYOUT_REAL, 2, -1, &r_f64, B, "cub sum f64",
       0},
      {"gak sum mixed", d_mix, GA_LAYOUT_MIXED, 2, -1, &r_mix, Bm,
       "cub sum f64", 0},
      {"tune sum i64 P0", d_i64, GA_LAYOUT_INT, 2, 0, &r_i64, B, "cub sum i64",
       1},
      {"tune sum i64 P1", d_i64, GA_LAYOUT_INT, 2, 1, &r_i64, B, "cub sum i64",
       1},
      {"tune sum i64 P2", d_i64, GA_LAYOUT_INT, 2, 2, &r_i64, B, "cub sum i64",
       1},
      {"tune xsum f64 L3 P0", d_f64, GA_LAYOUT_REAL, 3, 0, &r_f64, B,
       "cub sum f64", 1},
      {"tune xsum f64 L2 P2", d_f64, GA_LAYOUT_REAL, 2, 2, &r_f64, B,
       "cub sum f64", 1},
      {"tune xsum f64 L3 P2", d_f64, GA_LAYOUT_REAL, 3, 2, &r_f64, B,
       "cub sum f64", 1},
  };
  for (const sumv &sv : sums) {
    if (sv.tuning && !full_tuning)
      continue;
    ms = time_ms(
        [&] {
          return sv.policy < 0
                     ? gak_sum(sv.v, d_bits, n, sv.layout, d_sum, d_scratch, gs)
                     : gak_sum_tuned(sv.v, d_bits, n, sv.layout, sv.levels,
                                     sv.policy, d_sum, d_scratch, gs);
        },
        batch, s);
    add_row(sv.name, size, n, sv.bytes, ms, sv.cub);
    check_sum(sv.name, size, d_sum, sv.ref);
  }

  struct bestv {
    const char *name;
    const uint64_t *v;
    int layout, want_min, policy;
    const ga_best_partial *ref;
    double bytes;
    const char *cub;
    int tuning;
  } bests[] = {
      {"gak max i64", d_i64, GA_LAYOUT_INT, 0, -1, &b_i64, B, "cub max i64", 0},
      {"gak min i64", d_i64, GA_LAYOUT_INT, 1, -1, &b_i64m, B, "cub max i64",
       0},
      {"gak max f64", d_f64, GA_LAYOUT_REAL, 0, -1, &b_f64, B, "cub max f64",
       0},
      {"gak min f64", d_f64, GA_LAYOUT_REAL, 1, -1, &b_f64m, B, "cub max f64",
       0},
      {"gak max mixed", d_mix, GA_LAYOUT_MIXED, 0, -1, &b_mix, Bm,
       "cub max f64", 0},
      {"tune max i64 P0", d_i64, GA_LAYOUT_INT, 0, 0, &b_i64, B, "cub max i64",
       1},
      {"tune max f64 P0", d_f64, GA_LAYOUT_REAL, 0, 0, &b_f64, B, "cub max f64",
       1},
      {"tune max i64 P2", d_i64, GA_LAYOUT_INT, 0, 2, &b_i64, B, "cub max i64",
       1},
      {"tune max f64 P2", d_f64, GA_LAYOUT_REAL, 0, 2, &b_f64, B, "cub max f64",
       1},
  };
  for (const bestv &bv : bests) {
    if (bv.tuning && !full_tuning)
      continue;
    ms = time_ms(
        [&] {
          return bv.policy < 0
                     ? gak_best(bv.v, d_bits, n, bv.layout, bv.want_min, d_best,
                                d_scratch, gs)
                     : gak_best_tuned(bv.v, d_bits, n, bv.layout, bv.want_min,
                                      bv.policy, d_best, d_scratch, gs);
        },
        batch, s);
    add_row(bv.name, size, n, bv.bytes, ms, bv.cub);
    check_best(bv.name, size, d_best, bv.ref);
  }

  /* the exact f64 sum on spread-out data, against CUB on the same data */
  {
    struct spread {
      const char *gak, *cub;
      int emin, emax;
    } sp[] = {{"gak xsum f64 2^+-200", "cub sum f64 2^+-200", -200, 200},
              {"gak xsum f64 2^+-1000", "cub sum f64 2^+-1000", -1000, 1000},
              {"gak xsum f64 1 binade", "cub sum f64 1 binade", 0, 0}};
    uint64_t *d_sp = d_work;
    std::vector<uint64_t> h_sp(n);
    for (const spread &q : sp) {
      bench_fill_spread<<<1024, 256, 0, s>>>(d_sp, n, 0x9876ull + q.emax,
                                             q.emin, q.emax);
      CK(cudaGetLastError());
      CK(cudaStreamSynchronize(s));
      CK(cudaMemcpy(h_sp.data(), d_sp, bytes, cudaMemcpyDeviceToHost));
      ga_sum_partial ref;
      cpu_sum(&ref, h_sp.data(), nullptr, n, GA_LAYOUT_REAL);
      const double *cs = (const double *)d_sp;
      ms = time_ms(
          [&] {
            return (int)cub::DeviceReduce::Sum(d_tmp, tb, cs, d_cub_d, n, s);
          },
          batch, s);
      add_row(q.cub, size, n, B, ms, q.cub);
      ms = time_ms(
          [&] {
            return gak_sum(d_sp, d_bits, n, GA_LAYOUT_REAL, d_sum, d_scratch,
                           gs);
          },
          batch, s);
      add_row(q.gak, size, n, B, ms, q.cub);
      check_sum(q.gak, size, d_sum, &ref);
      if (q.emax > 0) { /* the value-by-value path that deferral replaced */
        std::string nm = std::string(q.gak) + " no-defer";
        ms = time_ms(
            [&] {
              return gak_sum_tuned(d_sp, d_bits, n, GA_LAYOUT_REAL, 2, 0, d_sum,
                                   nullptr, gs);
            },
            1, s);
        add_row(nm.c_str(), size, n, B, ms, q.cub);
        check_sum(nm.c_str(), size, d_sum, &ref);
      }
    }
  }

  /* the seeds' evolution (inexact; checked against a loose bound) */
  double *d_res = d_cub_d;
  const double *f = (const double *)d_f64;
  double *w = (double *)d_work;
  ms = time_ms([&] { return gak_bench_v1(f, w, n, d_res, gs); },
               batch > 1 ? 2 : 1, s);
  add_row("seed V1 naive", size, n, B, ms, "cub sum f64");
  check_near("seed V1", size, d_res, exact_f64, abs_f64);
  ms = time_ms([&] { return gak_bench_v2(f, w, n, d_res, gs); }, batch, s);
  add_row("seed V2 shared", size, n, B, ms, "cub sum f64");
  check_near("seed V2", size, d_res, exact_f64, abs_f64);
  ms = time_ms([&] { return gak_bench_v3(f, w, n, d_res, gs); }, batch, s);
  add_row("seed V3 shuffle", size, n, B, ms, "cub sum f64");
  check_near("seed V3", size, d_res, exact_f64, abs_f64);

  /* matadd: c = a + b with a = the reals, b = their copy (made above) */
  double *c = (double *)d_work;
  const double *b2 = (const double *)d_copy;
  ms = time_ms([&] { return gak_matadd(f, b2, c, n, gs); }, batch, s);
  add_row("matadd 1d", size, n, 3 * B, ms, "d2d copy (r+w)");
  {
    std::vector<double> hc(n);
    CK(cudaMemcpy(hc.data(), c, bytes, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < n; i++) {
      double x = ga_bitsd((int64_t)h_f64[i]);
      if (hc[i] != x + x) {
        mismatch("matadd 1d", size, "element");
        break;
      }
    }
  }
  int64_t cols = 1920, rows = n / cols;
  CK(cudaMemset(c, 0, bytes));
  ms = time_ms([&] { return gak_matadd_2d(f, b2, c, rows, cols, gs); }, batch,
               s);
  add_row("matadd 2d 16x16", size, rows * cols, 3.0 * rows * cols * 8, ms,
          "d2d copy (r+w)");
  {
    std::vector<double> hc(rows * cols);
    CK(cudaMemcpy(hc.data(), c, rows * cols * 8, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < rows * cols; i++) {
      double x = ga_bitsd((int64_t)h_f64[i]);
      if (hc[i] != x + x) {
        mismatch("matadd 2d", size, "element");
        break;
      }
    }
  }

  CK(cudaFree(d_i64));
  CK(cudaFree(d_f64));
  CK(cudaFree(d_mix));
  CK(cudaFree(d_bits));
  CK(cudaFree(d_copy));
  CK(cudaFree(d_work));
  CK(cudaFree(d_sum));
  CK(cudaFree(d_best));
  CK(cudaFree(d_cub_i));
  CK(cudaFree(d_cub_d));
  CK(cudaFree(d_scratch));
  CK(cudaFree(d_tmp));
}

int main(int argc, char **argv) {
  const char *csv = nullptr;
  int quick = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick"))
      quick = 1;
    else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
      csv = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      g_reps = atoi(argv[++i]) > 0 ? atoi(argv[i]) : g_reps;
    else {
      fprintf(stderr, "usage: %s [--quick] [--csv PATH] [--reps N]\n", argv[0]);
      return 2;
    }
  }
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    printf("SKIP: no GPU (%s)\n",
           e != cudaSuccess ? cudaGetErrorString(e) : "no device");
    return 0;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount,
         prop.l2CacheSize >> 20);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  if (quick) {
    bench_size("4099", 4099, 1, s);
    bench_size("1080x1920", 1080 * 1920, 1, s);
  } else {
    bench_size("1GiB", (int64_t)1 << 27, 1, s);
    bench_size("1080x1920", 1080 * 1920, 1, s);
  }

  FILE *fc = csv ? fopen(csv, "w") : nullptr;
  if (csv && !fc)
    perror(csv);
  if (fc)
    fprintf(fc, "kernel,size,n,median_ms,gbps,pct_of_ref,ref\n");
  printf("\n%-24s %-10s %10s %9s %8s  %s\n", "kernel", "size", "median ms",
         "GB/s", "% ref", "ref");
  for (const row &r : g_rows) {
    double gbps = r.bytes / (r.ms * 1e-3) / 1e9;
    double pct = NAN;
    for (const row &q : g_rows)
      if (q.size == r.size && q.kernel == r.ref)
        pct = 100.0 * (r.bytes / r.ms) / (q.bytes / q.ms); /* GB/s ratio */
    printf("%-24s %-10s %10.4f %9.1f %8.1f  %s\n", r.kernel.c_str(),
           r.size.c_str(), r.ms, gbps, pct, r.ref.c_str());
    if (fc)
      fprintf(fc, "%s,%s,%lld,%.6f,%.2f,%.2f,%s\n", r.kernel.c_str(),
              r.size.c_str(), (long long)r.n, r.ms, gbps, pct, r.ref.c_str());
  }
  if (fc)
    fclose(fc);
  printf("%s\n", g_fail ? "FAIL: mismatches above" : "all results verified");
  return g_fail ? 1 : 0;
}
