/*
** reduce.cuh — gpuagg's reduction framework, layered like CUB.
**
**   policy        gak_policy<BLOCK_THREADS, ITEMS, BLOCKS_PER_SM>: tuning only.
**   thread level  gak_consume(): grid-stride over tiles of ITEMS 64-bit words
**                 per thread, loaded as 16-byte vectors, all loads of a tile
**                 issued before any is used (ITEMS/2 loads in flight).
**   warp level    gak_warp_reduce(): __shfl_down_sync tree.
**   block level   gak_block_reduce(): one value per warp through shared memory.
**   device level  one partial per launch, written by the op's finish(): global
**                 64-bit atomics (integer sums are associative, so the result
**                 is deterministic) or a last-block-done pass (max/min).
**
** An op is a struct with
**   struct thread_state; struct shared_state;
**   init(thread_state&, shared_state&)              before the main loop
**   tile<P>(thread_state&, shared_state&, w[ITEMS], e0)  one tile's words;
**       word k has stream index e0 + (k/2)*2*BLOCK_THREADS + (k&1)
**   one(thread_state&, shared_state&, w, e)         one word (head, tail)
**   finish(thread_state&, shared_state&)            warp/block/device levels
** so the loops, the vector loads and the launch are written once for all ops
** and types.  Every thread sees its words in increasing stream order, which
** is what lets max/min keep the first occurrence with a strict comparison.
*/
#ifndef GAK_REDUCE_CUH
#define GAK_REDUCE_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "gak.h"

/* Largest grid any reduction launches: sizes the last-block-done scratch
** independently of the device, so gak_scratch_bytes needs no device. */
#define GAK_MAX_GRID 2048

template <int BLOCK_THREADS_, int ITEMS_, int BLOCKS_PER_SM_>
struct gak_policy {
  static_assert(ITEMS_ % 2 == 0, "ITEMS counts 64-bit words, two per vector");
  static_assert(BLOCK_THREADS_ % 32 == 0, "whole warps");
  static constexpr int BLOCK_THREADS = BLOCK_THREADS_;
  static constexpr int ITEMS = ITEMS_;
  static constexpr int VECS = ITEMS_ / 2;
  static constexpr int TILE = BLOCK_THREADS_ * ITEMS_;
  static constexpr int BLOCKS_PER_SM = BLOCKS_PER_SM_;
  static constexpr int WARPS = BLOCK_THREADS_ / 32;
};

/* Multiprocessor count of the current device, cached per device: the
** attribute query costs a driver call and gak_* are called per chunk from
** several threads, so the cache is read and written with atomics (a racing
** writer stores the same value; relaxed order is enough for one int). */
#define GAK_SM_CACHE 64
static inline int gak_sm_count(void) {
  static int cache[GAK_SM_CACHE];
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess)
    return 1;
  int v = dev >= 0 && dev < GAK_SM_CACHE
              ? __atomic_load_n(&cache[dev], __ATOMIC_RELAXED)
              : 0;
  if (v > 0)
    return v;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) !=
          cudaSuccess ||
      v <= 0) {
    (void)cudaGetLastError(); /* not the launch's error; asked again later */
    return 1;
  }
  if (dev >= 0 && dev < GAK_SM_CACHE)
    __atomic_store_n(&cache[dev], v, __ATOMIC_RELAXED);
  return v;
}

/* Persistent grid: enough blocks to fill every SM at the policy's
** occupancy, never more than there are tiles (or one), never more than
** GAK_MAX_GRID. */
template <class P> static inline int gak_grid_for(int64_t n) {
  int64_t g = (int64_t)gak_sm_count() * P::BLOCKS_PER_SM;
  int64_t tiles = (n + P::TILE - 1) / P::TILE;
  if (tiles < 1)
    tiles = 1;
  if (g > tiles)
    g = tiles;
  if (g > GAK_MAX_GRID)
    g = GAK_MAX_GRID;
  return (int)g;
}

/* ------------------------------------------------------------ numbers */

/* i against d, exactly (d is never NaN: SQLite has none); and ga_num_cmp of
** engine/reduce/xacc.c on the device (the reductions and the cache kernels). */
__device__ __forceinline__ int gak_cmp_int_real(long long i, double d) {
  if (d >= 0x1p63)
    return -1;
  if (d < -0x1p63)
    return 1;
  long long di = (long long)d; /* truncation is exact here */
  if (i != di)
    return i < di ? -1 : 1;
  double f = d - (double)di;
  return f > 0 ? -1 : (f < 0 ? 1 : 0);
}

/* ga_num_cmp of engine/reduce/xacc.c, on the device */
__device__ __forceinline__ int gak_num_cmp(int ka, long long a, int kb,
                                           long long b) {
  if (ka == GA_KIND_INT && kb == GA_KIND_INT)
    return (a > b) - (a < b);
  if (ka == GA_KIND_REAL && kb == GA_KIND_REAL) {
    double x = __longlong_as_double(a), y = __longlong_as_double(b);
    return (x > y) - (x < y);
  }
  if (ka == GA_KIND_INT)
    return gak_cmp_int_real(a, __longlong_as_double(b));
  return -gak_cmp_int_real(b, __longlong_as_double(a));
}

/* ---------------------------------------------------------------- warp */

/* Shuffle any trivially copyable value, 32 bits at a time. */
template <class T> __device__ __forceinline__ T gak_shfl_down(T v, int off) {
  static_assert(sizeof(T) % 4 == 0, "32-bit words");
  union {
    T t;
    int w[sizeof(T) / 4];
  } u;
  u.t = v;
#pragma unroll
  for (int i = 0; i < (int)(sizeof(T) / 4); i++)
    u.w[i] = __shfl_down_sync(0xffffffffu, u.w[i], off);
  return u.t;
}

/* Tree over the warp; the result is valid in lane 0.  Only lanes below
** `off` merge, so each value is merged exactly once: merges may have side
** effects (the exact sum flushes residuals to shared memory). */
template <class T, class Merge>
__device__ __forceinline__ T gak_warp_reduce(T v, Merge merge) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    T o = gak_shfl_down(v, off);
    if (lane < off)
      v = merge(v, o);
  }
  return v;
}

/* --------------------------------------------------------------- block */

/* Result valid in thread 0.  `slots` holds one T per warp. */
template <class P, class T, class Merge>
__device__ __forceinline__ T gak_block_reduce(T v, Merge merge, T *slots) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = gak_warp_reduce(v, merge);
  if (P::WARPS == 1)
    return v;
  if (lane == 0)
    slots[warp] = v;
  __syncthreads();
  if (warp == 0) {
    T x = slots[lane < P::WARPS ? lane : 0];
    /* lanes past the last warp hold a copy of slot 0 but never merge it:
    ** only lanes below `off` merge, and off >= WARPS's lanes are unused */
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
      T o = gak_shfl_down(x, off);
      if (lane < off && lane + off < P::WARPS)
        x = merge(x, o);
    }
    v = x;
  }
  return v;
}

/* -------------------------------------------------------------- thread */

/* Feed every word of [0, n) to the op.  d_vals need only be 8-byte aligned:
** when it is not 16-byte aligned, word 0 is handed to block 0 thread 0
** before its tiles, keeping per-thread increasing order. */
template <class P, class Op>
__device__ __forceinline__ void
gak_consume(Op &op, typename Op::thread_state &st,
            typename Op::shared_state &sh, const uint64_t *__restrict__ v,
            int64_t n) {
  int64_t head = ((uintptr_t)v & 15) ? 1 : 0;
  if (head > n)
    head = n;
  if (head && blockIdx.x == 0 && threadIdx.x == 0)
    op.one(st, sh, v[0], 0);
  const int64_t m = n - head;
  const ulonglong2 *__restrict__ v2 =
      reinterpret_cast<const ulonglong2 *>(v + head);
  const int64_t ntiles = m / P::TILE;
  for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
    uint64_t w[P::ITEMS];
    const ulonglong2 *src = v2 + t * (P::TILE / 2) + threadIdx.x;
    /* every load of the tile before any use: VECS 16-byte loads in flight */
#pragma unroll
    for (int j = 0; j < P::VECS; j++) {
      ulonglong2 x = __ldg(src + j * P::BLOCK_THREADS);
      w[2 * j] = x.x;
      w[2 * j + 1] = x.y;
    }
    op.template tile<P>(st, sh, w, head + t * P::TILE + 2 * threadIdx.x);
  }
  /* the tail (fewer than TILE words) after all tiles: still increasing */
  for (int64_t i = ntiles * P::TILE + (int64_t)blockIdx.x * P::BLOCK_THREADS +
                   threadIdx.x;
       i < m; i += (int64_t)gridDim.x * P::BLOCK_THREADS)
    op.one(st, sh, __ldg(v + head + i), head + i);
}

/* ---------------------------------------------------------------- device */

template <class P, class Op>
__global__ void __launch_bounds__(P::BLOCK_THREADS, P::BLOCKS_PER_SM)
    gak_reduce_kernel(Op op, const uint64_t *__restrict__ vals, int64_t n) {
  __shared__ typename Op::shared_state sh;
  typename Op::thread_state st;
  op.init(st, sh);
  gak_consume<P>(op, st, sh, vals, n);
  op.template finish<P>(st, sh);
}

template <class P, class Op>
static inline cudaError_t gak_launch(const Op &op, const uint64_t *vals,
                                     int64_t n, cudaStream_t stream) {
  gak_reduce_kernel<P, Op>
      <<<gak_grid_for<P>(n), P::BLOCK_THREADS, 0, stream>>>(op, vals, n);
  return cudaGetLastError();
}

/* Bit i of the GA_LAYOUT_MIXED bitmap: value i is an int64. */
__device__ __forceinline__ int gak_isint_bit(const uint64_t *__restrict__ b,
                                             int64_t i) {
  return (int)((__ldg(b + (i >> 6)) >> (i & 63)) & 1);
}

/* Bench-only tuning hooks (not part of gak.h): the same kernels as gak_sum
** and gak_best with the policy (0..2) and, for reals, the number of
** expansion levels (2..3; the mixed layout always uses 2) chosen by the caller.
** gak_sum_tuned with d_scratch NULL redoes failed tiles value by value; with
** scratch (gak_scratch_bytes(n)) it defers them to the wide kernel, as
** gak_sum does. */
#ifdef __cplusplus
extern "C" {
#endif
int gak_sum_tuned(const uint64_t *d_vals, const uint64_t *d_isint, int64_t n,
                  int layout, int levels, int policy, ga_sum_partial *d_out,
                  void *d_scratch, gak_stream stream);
int gak_best_tuned(const uint64_t *d_vals, const uint64_t *d_isint, int64_t n,
                   int layout, int want_min, int policy, ga_best_partial *d_out,
                   void *d_scratch, gak_stream stream);
#ifdef __cplusplus
}
#endif

#endif
