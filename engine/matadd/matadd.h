/*
** matadd.h — the engine of gpu_matadd: C = A + B for two matrices given as
** lists of (i, j, v) entries, a missing entry counting as 0.
**
** The SQLite glue (ext/matadd/matadd_vtab.c) reads and validates the rows of
*the two
** inputs into ga_matadd_input lists, then ga_matadd_compute() picks a path:
**
**   dense   the bounding box of both inputs is reasonably filled: both are
**           scattered into row-major arrays and added, on the GPU (row bands
**           pipelined over several streams from pinned memory) or on the CPU
**           (small matrices, no GPU, or any GPU failure: same result);
**   sparse  the box is huge and sparsely filled: the entries are sorted and
**           merged, so memory is bounded by inputs plus output, never by the
**           shape.
**
** Either way the result is read back in ascending (i, j) order with
** ga_matadd_result_next(), one row for every coordinate present in A or B.
*/
#ifndef GA_MATADD_H
#define GA_MATADD_H

#include <stdint.h>

#include "config.h"

/* One entry of an input matrix. */
typedef struct ga_matadd_entry {
  int64_t i, j;
  double v;
} ga_matadd_entry;

/* A growable list of entries plus its bounding box (valid when n > 0). */
typedef struct ga_matadd_input {
  ga_matadd_entry *e;
  int64_t n, cap;
  int64_t imin, imax, jmin, jmax;
} ga_matadd_input;

/* Append one entry; SQLITE_OK or SQLITE_NOMEM. */
int ga_matadd_input_push(ga_matadd_input *in, int64_t i, int64_t j, double v);
void ga_matadd_input_free(ga_matadd_input *in);

/* Paths, for gpu_matadd_info() and the tests. */
#define GA_MATADD_EMPTY 0
#define GA_MATADD_DENSE_CPU 1
#define GA_MATADD_DENSE_GPU 2
#define GA_MATADD_SPARSE 3
const char *ga_matadd_path_name(int path);

/* Dense is chosen when the bounding box has at most
** GA_MATADD_DENSE_FILL * (entries of A + entries of B) + GA_MATADD_DENSE_SLACK
** cells: then the three dense arrays cost at most a constant times the
** inputs (rule "memory bounded by inputs plus output"), and the slack keeps
** any small matrix on the simple dense path. */
#define GA_MATADD_DENSE_FILL 4
#define GA_MATADD_DENSE_SLACK 65536

/* The result of one computation, consumed by a cursor. */
typedef struct ga_matadd_result {
  int path;     /* GA_MATADD_* */
  int eof;      /* set by _next when no row is left */
  int64_t i, j; /* the current row after a successful _next */
  double v;
  /* dense form: row-major box [imin, imin+rows) x [jmin, jmin+cols) */
  int64_t imin, jmin, rows, cols;
  double *c; /* sums, rows*cols (pinned or sqlite3_malloc64) */
  int c_pinned;
  double *a, *b; /* the scattered inputs (a may be c on the CPU path) */
  int ab_pinned;
  uint64_t *present; /* bitmap: cell present in A or B */
  int64_t pos;       /* next cell to look at */
  /* sparse form: merged entries */
  ga_matadd_entry *out;
  int64_t nout;
  /* what happened, for gpu_matadd_info() */
  int bands, streams, fallback;
} ga_matadd_result;

/* A duplicate found while computing: which input (0 = A, 1 = B) and where. */
typedef struct ga_matadd_dup {
  int which;
  int64_t i, j;
} ga_matadd_dup;

/* Return codes of ga_matadd_compute besides SQLITE_OK / SQLITE_NOMEM. */
#define GA_MATADD_DUPLICATE (-1)

/* Compute A + B into *res (zeroed by the caller).  The inputs are sorted in
** place on the sparse path.  Returns SQLITE_OK, SQLITE_NOMEM, or
** GA_MATADD_DUPLICATE with *dup filled in.  On error *res holds nothing that
** needs freeing beyond what ga_matadd_result_free releases. */
int ga_matadd_compute(ga_matadd_input *a, ga_matadd_input *b,
                      const ga_config *cfg, ga_matadd_result *res,
                      ga_matadd_dup *dup);

/* Advance to the next row in (i, j) order: 1 with res->i/j/v set, 0 at the
** end (res->eof set). */
int ga_matadd_result_next(ga_matadd_result *res);
void ga_matadd_result_free(ga_matadd_result *res);

/* c[0..n) = a + b on the GPU: bands of `band` doubles, over `nstreams`
** streams, from host memory (pinned, for the copies to overlap).  Returns 1
** on success, 0 when no GPU is usable or a CUDA step failed (counted through
** ga_cuda_ok; c is then unspecified and a, b are intact). *nbands gets the
** number of bands used. */
int ga_matadd_gpu(const double *a, const double *b, double *c, int64_t n,
                  int64_t band, int nstreams, int *nbands);

/* The band length (doubles) used for an n-cell matrix with `cols` columns:
** whole rows when a row fits, enough bands for every stream to hold
** several, each between 1 MiB and cfg->chunk_bytes (or 64 MiB). */
int64_t ga_matadd_band(int64_t n, int64_t cols, const ga_config *cfg);

#endif
