/*
** gak.h — the C API of gpuagg's CUDA kernels (the "gak_" prefix).
**
** The engine (engine/gpu.c, plain C11) calls only these functions; kernels/
** holds device code and the thin launch wrappers behind them.  Every function
** enqueues work on the given stream and returns at once with the
** cudaError_t (as int) of the enqueue; it never synchronises.  Errors that
** happen while the kernel runs surface later at the engine's stream sync.
**
** Output partials are written completely by the call (no pre-zeroing is
** needed by the caller), in the formats of engine/ga_partial.h, so that the
** engine merges GPU and CPU partials alike.
*/
#ifndef GAK_H
#define GAK_H

#include <stddef.h>
#include <stdint.h>

#include "../engine/ga_partial.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUstream_st *gak_stream; /* same type as cudaStream_t */

/* Bytes of device scratch that the reductions below need for n values;
** the engine allocates it once per stream slot for its largest chunk. */
size_t gak_scratch_bytes(int64_t n);

/* Exact sum of n values (layout GA_LAYOUT_*; d_isint is read only for
** GA_LAYOUT_MIXED) into *d_out. n may be 0. */
int gak_sum(const uint64_t *d_vals, const uint64_t *d_isint, int64_t n,
            int layout, ga_sum_partial *d_out, void *d_scratch,
            gak_stream stream);

/* Max (want_min = 0) or min (want_min = 1) of n numeric values, with the
** index of its first occurrence, into *d_out. */
int gak_best(const uint64_t *d_vals, const uint64_t *d_isint, int64_t n,
             int layout, int want_min, ga_best_partial *d_out, void *d_scratch,
             gak_stream stream);

/* c = a + b for n doubles (the gpu_matadd kernel, 1D grid-stride). */
int gak_matadd(const double *d_a, const double *d_b, double *d_c, int64_t n,
               gak_stream stream);

/* c = a + b over a rows x cols row-major band (2D grid, the seeds' kernel;
** kept for the benchmark). */
int gak_matadd_2d(const double *d_a, const double *d_b, double *d_c,
                  int64_t rows, int64_t cols, gak_stream stream);

/* Multiprocessor count etc. are read by the wrappers themselves through
** cudaGetDevice/cudaDeviceGetAttribute on the current device. */

#ifdef __cplusplus
}
#endif

#endif
