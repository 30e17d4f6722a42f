/*
** bench/cuda_bench.cuh — what the CUDA benchmarks share (bench/kernels.cu,
** bench/var_kernel.cu): a CUDA call checked (CK) and a kernel timed with
** CUDA events, the median of reps samples after three warm-up calls.
*/
#ifndef GA_CUDA_BENCH_CUH
#define GA_CUDA_BENCH_CUH

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <functional>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,               \
              cudaGetErrorString(e_));                                         \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/* Milliseconds of one call of f on stream s: three warm-up calls, then
** reps samples of batch back-to-back calls each (a small size's launch
** gaps then do not count), the median sample divided by batch. */
static inline double bench_event_ms(const std::function<void()> &f, int reps,
                                    int batch, cudaStream_t s) {
  for (int i = 0; i < 3; i++)
    f();
  CK(cudaStreamSynchronize(s));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < reps; r++) {
    CK(cudaEventRecord(a, s));
    for (int k = 0; k < batch; k++)
      f();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms / batch);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

#endif
