/*
** bench_variants.cu — the seeds' reduction evolution for plain f64 sums,
** for bench/kernels' table only (the Makefile keeps kernels/bench_*.cu out
** of libgpuagg.so).  None of these is exact, and they are kept as the
** tutorial wrote them (one element per thread, 256 threads per block), not
** tuned: they show what each step of the tutorial buys.
**
**   V1 naive:   interleaved-addressing tree in global memory; a grid cannot
**               synchronise, so each tree level is its own launch.
**   V2 shared:  block tree in shared memory, one partial per block, then the
**               same kernel again over the partials until one is left.
**   V3 shuffle: __shfl_down_sync within warps, 8 warp sums through shared
**               memory, then again over the partials.
** Each launcher needs d_work of n doubles and leaves the sum in *d_result.
*/
#include <stdint.h>

#include "gak.h"

#define GAK_SEED_THREADS 256

/* One level: dst[i] = src[i] + src[i + stride] for i a multiple of 2*stride.
** The first level reads the input and writes the work copy, so the input
** survives (the tutorial reduced a copy in place). */
__global__ void gak_seed_v1_level(const double *src, double *dst, int64_t n,
                                  int64_t stride) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || i % (2 * stride) != 0)
    return;
  dst[i] = i + stride < n ? src[i] + src[i + stride] : src[i];
}

__global__ void gak_seed_v2_block(const double *in, double *out, int64_t n) {
  __shared__ double sh[GAK_SEED_THREADS];
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int tx = threadIdx.x;
  sh[tx] = i < n ? in[i] : 0.0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tx < s)
      sh[tx] += sh[tx + s];
    __syncthreads();
  }
  if (tx == 0)
    out[blockIdx.x] = sh[0];
}

__global__ void gak_seed_v3_block(const double *in, double *out, int64_t n) {
  __shared__ double sh[GAK_SEED_THREADS / 32];
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  double v = i < n ? in[i] : 0.0;
  for (int off = 16; off > 0; off >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, off);
  if (lane == 0)
    sh[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < GAK_SEED_THREADS / 32 ? sh[lane] : 0.0;
    for (int off = 16; off > 0; off >>= 1)
      v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0)
      out[blockIdx.x] = v;
  }
}

static int64_t gak_seed_blocks(int64_t n) {
  return (n + GAK_SEED_THREADS - 1) / GAK_SEED_THREADS;
}

extern "C" int gak_bench_v1(const double *d_in, double *d_work, int64_t n,
                            double *d_result, gak_stream stream) {
  cudaStream_t s = (cudaStream_t)stream;
  if (n <= 0)
    return (int)cudaMemsetAsync(d_result, 0, sizeof(double), s);
  const double *src = d_in;
  int64_t stride = 1;
  do { /* at least one level, so d_work[0] always holds the result */
    gak_seed_v1_level<<<(unsigned)gak_seed_blocks(n), GAK_SEED_THREADS, 0, s>>>(
        src, d_work, n, stride);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess)
      return (int)err;
    src = d_work;
    stride *= 2;
  } while (stride < n);
  return (int)cudaMemcpyAsync(d_result, d_work, sizeof(double),
                              cudaMemcpyDeviceToDevice, s);
}

typedef void (*gak_seed_kernel)(const double *, double *, int64_t);

static int gak_seed_passes(gak_seed_kernel k, const double *d_in,
                           double *d_work, int64_t n, double *d_result,
                           cudaStream_t s) {
  if (n <= 0)
    return (int)cudaMemsetAsync(d_result, 0, sizeof(double), s);
  /* partials of pass j go to alternating halves of d_work: pass 1 writes
  ** n/256 values at d_work, pass 2 at d_work + n/2, ... */
  const double *src = d_in;
  double *bufs[2] = {d_work, d_work + (n + 1) / 2};
  int which = 0;
  do {
    int64_t nb = gak_seed_blocks(n);
    double *dst = nb == 1 ? d_result : bufs[which];
    k<<<(unsigned)nb, GAK_SEED_THREADS, 0, s>>>(src, dst, n);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess)
      return (int)err;
    src = dst;
    which ^= 1;
    n = nb;
  } while (n > 1);
  return (int)cudaSuccess;
}

extern "C" int gak_bench_v2(const double *d_in, double *d_work, int64_t n,
                            double *d_result, gak_stream stream) {
  return gak_seed_passes(gak_seed_v2_block, d_in, d_work, n, d_result,
                         (cudaStream_t)stream);
}

extern "C" int gak_bench_v3(const double *d_in, double *d_work, int64_t n,
                            double *d_result, gak_stream stream) {
  return gak_seed_passes(gak_seed_v3_block, d_in, d_work, n, d_result,
                         (cudaStream_t)stream);
}
