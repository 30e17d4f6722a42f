/*
** matadd.cu — c = a + b for doubles: gak_matadd (1D grid-stride, 16-byte
** vectors) and gak_matadd_2d (the seeds' 2D grid of 16x16 blocks).
**
** Both are pure streaming kernels (two loads and one store per element, no
** reuse), so the only goals are full-width transactions and enough bytes in
** flight: the 1D kernel moves 16 bytes per load and keeps two iterations of
** loads in flight per thread, on a persistent grid of 8 blocks of 256
** threads per SM (2048 threads, the SM's maximum).
*/
#include <stdint.h>

#include "gak.h"
#include "reduce.cuh" /* gak_sm_count */

#define GAK_MATADD_THREADS 256
#define GAK_MATADD_BLOCKS_PER_SM 8

__global__ void __launch_bounds__(GAK_MATADD_THREADS)
    gak_matadd_vec_kernel(const double2 *__restrict__ a,
                          const double2 *__restrict__ b,
                          double2 *__restrict__ c, int64_t npairs) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  /* two pairs per iteration: four 16-byte loads issued before any add */
  for (; i + stride < npairs; i += 2 * stride) {
    double2 x0 = __ldg(a + i), y0 = __ldg(b + i);
    double2 x1 = __ldg(a + i + stride), y1 = __ldg(b + i + stride);
    c[i] = make_double2(x0.x + y0.x, x0.y + y0.y);
    c[i + stride] = make_double2(x1.x + y1.x, x1.y + y1.y);
  }
  if (i < npairs) {
    double2 x = __ldg(a + i), y = __ldg(b + i);
    c[i] = make_double2(x.x + y.x, x.y + y.y);
  }
}

/* Any alignment (and the odd last element of the vector path). */
__global__ void __launch_bounds__(GAK_MATADD_THREADS)
    gak_matadd_scalar_kernel(const double *__restrict__ a,
                             const double *__restrict__ b,
                             double *__restrict__ c, int64_t begin, int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = begin + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
       i < n; i += stride)
    c[i] = __ldg(a + i) + __ldg(b + i);
}

static int gak_matadd_grid(int64_t work) {
  int64_t g = (int64_t)gak_sm_count() * GAK_MATADD_BLOCKS_PER_SM;
  int64_t need = (work + GAK_MATADD_THREADS - 1) / GAK_MATADD_THREADS;
  if (need < 1)
    need = 1;
  return (int)(g < need ? g : need);
}

extern "C" int gak_matadd(const double *d_a, const double *d_b, double *d_c,
                          int64_t n, gak_stream stream) {
  cudaStream_t s = (cudaStream_t)stream;
  if (n < 0)
    return (int)cudaErrorInvalidValue;
  if (n == 0)
    return (int)cudaSuccess;
  bool aligned = (((uintptr_t)d_a | (uintptr_t)d_b | (uintptr_t)d_c) & 15) == 0;
  int64_t begin = 0;
  if (aligned && n >= 2) {
    int64_t npairs = n / 2;
    gak_matadd_vec_kernel<<<gak_matadd_grid(npairs), GAK_MATADD_THREADS, 0,
                            s>>>((const double2 *)d_a, (const double2 *)d_b,
                                 (double2 *)d_c, npairs);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess)
      return (int)err;
    begin = 2 * npairs;
  }
  if (begin < n) {
    gak_matadd_scalar_kernel<<<gak_matadd_grid(n - begin), GAK_MATADD_THREADS,
                               0, s>>>(d_a, d_b, d_c, begin, n);
    return (int)cudaGetLastError();
  }
  return (int)cudaSuccess;
}

/* The seeds' kernel: one thread per element of a rows x cols matrix on a
** 2D grid of 16x16 blocks (x along columns, so a warp reads 16 consecutive
** doubles of two rows).  grid.y is capped at 65535, so taller bands loop. */
__global__ void __launch_bounds__(256)
    gak_matadd_2d_kernel(const double *__restrict__ a,
                         const double *__restrict__ b, double *__restrict__ c,
                         int64_t rows, int64_t cols) {
  int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= cols)
    return;
  for (int64_t row = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; row < rows;
       row += (int64_t)gridDim.y * blockDim.y) {
    int64_t i = row * cols + col;
    c[i] = __ldg(a + i) + __ldg(b + i);
  }
}

extern "C" int gak_matadd_2d(const double *d_a, const double *d_b, double *d_c,
                             int64_t rows, int64_t cols, gak_stream stream) {
  if (rows < 0 || cols < 0)
    return (int)cudaErrorInvalidValue;
  if (rows == 0 || cols == 0)
    return (int)cudaSuccess;
  int64_t gx = (cols + 15) / 16, gy = (rows + 15) / 16;
  if (gx > 0x7fffffff)
    return (int)cudaErrorInvalidValue;
  if (gy > 65535)
    gy = 65535;
  dim3 grid((unsigned)gx, (unsigned)gy), block(16, 16);
  gak_matadd_2d_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(d_a, d_b, d_c,
                                                                 rows, cols);
  return (int)cudaGetLastError();
}
