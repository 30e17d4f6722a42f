/*
** gak.h — the C API of gpuagg's device side (the "gak_" prefix).
**
** The engine (engine/reduce/gpu.c, engine/matadd/matadd.c: plain C11, no CUDA
*headers)
** calls only these functions.  Three backends implement them:
**
**   kernels/ (.cu)     CUDA: the kernels and their launch wrappers, and
**                      kernels/runtime.cu, a thin layer over the CUDA runtime
**                      (the build with CUDA=1);
**   kernels/none.c     no CUDA at all: gak_device_count() says "built
**                      without CUDA" and the engine never takes a GPU path;
**   tests/fakegpu/     a test-only backend that runs the same API on the CPU,
**                      with one thread per stream and fault injection, so
**                      that CI (no GPU) runs the engine's GPU-path logic.
**
** Rules every backend keeps:
**   1. Functions return 0 on success, else a backend error code; the engine
**      interprets codes only through gak_error_class() and prints them with
**      gak_error_string().
**   2. Work on a stream (copies, kernels, event records) is enqueued and the
**      call returns at once; it runs in order per stream.  Errors that happen
**      while it runs surface later, at gak_event_query/sync or
**      gak_stream_sync, classed GAK_EKERNEL when a kernel faulted.
**   3. Output partials are written completely by the call (no pre-zeroing is
**      needed by the caller), in the formats of base/ga_partial.h, so the
**      engine merges device and CPU partials alike.
**   4. Device calls act on the calling thread's current device
**      (gak_set_device); the engine restores the caller's device after use.
*/
#ifndef GAK_H
#define GAK_H

#include <stddef.h>
#include <stdint.h>

#include "ga_partial.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUstream_st *gak_stream; /* same type as cudaStream_t */
typedef struct CUevent_st *gak_event;   /* same type as cudaEvent_t */

/* ---- the runtime ---- */

/* Error classes (gak_error_class). */
#define GAK_OK 0
#define GAK_ENOTREADY 1  /* an event or stream has not finished yet */
#define GAK_ENODRIVER 2  /* no driver installed */
#define GAK_EOLDDRIVER 3 /* the driver is older than the runtime */
#define GAK_ENODEVICE 4  /* a driver but no device */
#define GAK_ENOMEM 5     /* device or pinned memory exhausted */
#define GAK_EKERNEL 6    /* a kernel faulted while it ran */
#define GAK_ENOTBUILT 7  /* built without CUDA (kernels/none.c) */
#define GAK_EOTHER 8
int gak_error_class(int err);
const char *gak_error_string(int err);
/* The backend's sticky-free "last error" (cudaGetLastError): returns it and
** clears it. */
int gak_take_error(void);

/* "cuda", "none" or "fake". */
const char *gak_backend(void);
/* Runtime and driver versions as 1000*major + 10*minor (0 when absent). */
int gak_runtime_version(int *v);
int gak_driver_version(int *v);

typedef struct gak_props {
  char name[256];
  int major, minor; /* compute capability */
  size_t mem;       /* bytes */
  int sms;          /* multiprocessors */
} gak_props;
int gak_device_count(int *n);
int gak_device_props(int dev, gak_props *p);
int gak_get_device(int *dev);
int gak_set_device(int dev);

int gak_malloc(void **p, size_t bytes);
int gak_free(void *p);
/* Pinned (page-locked, portable across devices) host memory. */
int gak_host_alloc(void **p, size_t bytes);
int gak_host_free(void *p);

/* Non-blocking streams (they never synchronise with the legacy stream). */
int gak_stream_create(gak_stream *s);
int gak_stream_destroy(gak_stream s);
int gak_stream_sync(gak_stream s);
/* timing = 0: a synchronisation-only event. */
int gak_event_create(gak_event *e, int timing);
int gak_event_destroy(gak_event e);
int gak_event_record(gak_event e, gak_stream s);
/* 0 when done, an error of class GAK_ENOTREADY while pending, or the error
** of the work before it. */
int gak_event_query(gak_event e);
int gak_event_sync(gak_event e);
/* Milliseconds between two timing events, both done. */
int gak_event_elapsed(float *ms, gak_event from, gak_event to);

int gak_memcpy_h2d(void *d_dst, const void *h_src, size_t bytes, gak_stream s);
int gak_memcpy_d2h(void *h_dst, const void *d_src, size_t bytes, gak_stream s);
/* Device to device, on the current device (the column cache grows its
** arrays with it). */
int gak_memcpy_d2d(void *d_dst, const void *d_src, size_t bytes, gak_stream s);

/* ---- the kernels ---- */

/* Bytes of device scratch that the reductions below need for n values;
** the engine allocates it once per stream slot for its largest chunk. */
size_t gak_scratch_bytes(int64_t n);

/* Exact sum of n values (layout GA_LAYOUT_*; d_isint is read only for
** GA_LAYOUT_MIXED) into *d_out.  0 <= n <= GA_XACC_SAFE_ADDS (2^29): the
** partial's digits are sums of per-value pieces below 2^33, and the engine
** merges partials that respect that bound (engine/reduce/xacc.h).  Values that
*an
** in-register expansion cannot hold (wide exponent ranges, Inf, NaN) are
** deferred through d_scratch (gak_scratch_bytes(n) bytes) to a second
** kernel when n is large (4M values and more), so d_scratch must be given. */
int gak_sum(const uint64_t *d_vals, const uint64_t *d_isint, int64_t n,
            int layout, ga_sum_partial *d_out, void *d_scratch,
            gak_stream stream);

/* Issue 39: the exact (n, Σx, Σx²) of n values (layout GA_LAYOUT_*) for the
** variance: Σx and the counts into *d_sum (gak_sum's partial), Σx² into
** d_sq[GA_XSQ_DIGITS] (ga_partial.h), both written completely.
** 0 <= n <= GA_XACC_SAFE_ADDS.  kernels/var.cu; engine/reduce/xvar.h merges
** and rounds (ga_var_partial's sum and sq). */
int gak_var(const uint64_t *d_vals, const uint64_t *d_isint, int64_t n,
            int layout, ga_sum_partial *d_sum, int64_t *d_sq,
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

/* ---- the column cache (kernels/cache.cu; engine/cache/cache_gpu.c) ----
**
** A cached column on the device holds n values in rowid order: vals[i] is
** the int64 or the double's bits (0 for NULL); bit i of isint (64-bit
** words) is set when value i is an INTEGER, bit i of notnull when it is not
** NULL.  Row numbers are below 2^32 (uint32 index lists).  Comparisons of
** numbers are exact across INTEGER and REAL, as SQLite compares them
** (ga_num_cmp); NULL never passes a comparison.
**
** A query runs as: filter -> compact (the passing rows' indices, in rowid
** order) -> [grouped: group ids -> stable sort by group -> bounds] ->
** reduce (one exact state per slice of a group's rows) -> merge (one state
** per group).  The engine cuts groups into slices between bounds and
** merge. */
#define GAK_CMP_EQ 0
#define GAK_CMP_NE 1
#define GAK_CMP_LT 2
#define GAK_CMP_LE 3
#define GAK_CMP_GT 4
#define GAK_CMP_GE 5
#define GAK_CMP_ISNULL 6
#define GAK_CMP_NOTNULL 7
#define GAK_CMP_IN 8 /* equal to one of nlit literals */
#define GAK_CACHE_MAX_TERMS 16
#define GAK_CACHE_MAX_LITS 64

typedef struct gak_ccol {
  const uint64_t *vals, *isint, *notnull;
} gak_ccol;

/* A numeric literal: kind GA_KIND_INT or GA_KIND_REAL, and its bits. */
typedef struct gak_clit {
  int32_t kind, pad;
  int64_t bits;
} gak_clit;

/* cols[col] OP lits[lit] (IN: lits[lit .. lit + nlit - 1]). */
typedef struct gak_cterm {
  int32_t col, op, lit, nlit;
} gak_cterm;

/* An AND of terms (none: every row passes); passed by value to kernels. */
typedef struct gak_cfilter {
  int32_t nterms, nlits;
  gak_ccol cols[GAK_CACHE_MAX_TERMS];
  gak_cterm terms[GAK_CACHE_MAX_TERMS];
  gak_clit lits[GAK_CACHE_MAX_LITS];
} gak_cfilter;

/* Rows [start, start + len) of the index list, all of group `group`. */
typedef struct gak_cslice {
  uint32_t group, start, len, pad;
} gak_cslice;

/* Slices first_slice .. first_slice + nslices - 1 make one group. */
typedef struct gak_cgroup {
  uint32_t first_slice, nslices;
} gak_cgroup;

/* The exact state of a slice or a group: rows (that passed the filter),
** count (non-NULL values), the sum partial (digits below 2^32 after the
** reduce; sums of those after the merge, not normalised), max and min with
** the row number of their first occurrence, the first row, and (merge,
** grouped) the group key's value at that first row. */
typedef struct gak_cstate {
  ga_sum_partial sum;
  ga_best_partial max, min;
  int64_t rows, count, first;
  int32_t key_kind, pad; /* GA_KIND_NONE: NULL key */
  int64_t key_bits;
} gak_cstate;

/* Bit i of d_sel (32-bit words, ceil(n / 32) of them) = row i passes f;
** bits past n are 0. */
int gak_cache_filter(const gak_cfilter *f, int64_t n, uint32_t *d_sel,
                     gak_stream s);
/* The positions of d_sel's set bits among n, in increasing order, into
** d_idx; their count into *d_count.  d_scratch: gak_cache_compact_scratch(n)
** bytes. */
size_t gak_cache_compact_scratch(int64_t n);
int gak_cache_compact(const uint32_t *d_sel, int64_t n, uint32_t *d_idx,
                      int64_t *d_count, void *d_scratch, gak_stream s);
/* The sorted distinct canonical keys of the nn non-NULL values among the n
** of a column into d_dict (room for nn), their count into *d_ndict; -1 when
** a value has no int64 canonical key (a REAL that is not an integer in int64
** range: such group keys stay on the uncached path), -2 when the column
** does not hold nn non-NULL values.  The canonical key of an INTEGER is
** itself, of a REAL its integral value (1 = 1.0, -0.0 = 0).  d_scratch:
** gak_cache_dict_scratch(n) bytes. */
size_t gak_cache_dict_scratch(int64_t n);
int gak_cache_dict(gak_ccol key, int64_t n, int64_t nn, int64_t *d_dict,
                   int64_t *d_ndict, void *d_scratch, gak_stream s);
/* (gid, idx) pairs sorted by gid, stably (rowid order within a group), gids
** below 2^bits.  d_scratch: gak_cache_sort_scratch(m) bytes. */
size_t gak_cache_sort_scratch(int64_t m);
int gak_cache_sort(const uint32_t *d_gid, const uint32_t *d_idx,
                   uint32_t *d_gid_out, uint32_t *d_idx_out, int64_t m,
                   int bits, void *d_scratch, gak_stream s);
/* A TEXT column's words (engine/cache/dict.h): each row with a value (its
** bit in d_notnull) gets d_map[its word], which is below nmap: a load's id
** becomes the value's code. */
int gak_cache_remap(uint64_t *d_vals, const uint64_t *d_notnull, int64_t n,
                    const uint32_t *d_map, int64_t nmap, gak_stream s);
/* Where each group's rows lie in sorted gids: [start[g], end[g]) for g in
** [0, ngroups); both 0 for a group without rows. */
int gak_cache_bounds(const uint32_t *d_gid, int64_t m, int64_t ngroups,
                     uint32_t *d_start, uint32_t *d_end, gak_stream s);
/* One state per slice, over column x at rows d_idx[start .. start+len)
** (d_idx NULL: rows start .. start+len themselves).  d_gid not NULL: only
** the positions p of a slice with d_gid[p] == its group, and bit p of d_sel
** set (d_sel NULL: every bit), count (few groups, rows in place); rows is
** then their count, and first their first row (INT64_MAX for none). */
int gak_cache_reduce(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_gid,
                     const uint32_t *d_sel, const gak_cslice *d_slices,
                     int64_t nslices, gak_cstate *d_out, gak_stream s);
/* d_counts[g] = how many j in [0, m) with bit j of d_sel set (d_sel NULL:
** every j) have d_gid[j] == g, for g < ngroups (at most
** GAK_CACHE_COUNT_MAX); other ids are not counted.
** d_firsts not NULL: d_firsts[g] = the first such j (0xffffffff for
** none); m below 2^32. */
#define GAK_CACHE_COUNT_MAX 4096
int gak_cache_group_counts(const uint32_t *d_gid, const uint32_t *d_sel,
                           int64_t m, int64_t ngroups, uint32_t *d_counts,
                           uint32_t *d_firsts, gak_stream s);
/* Few groups at once, for a value no min or max reads: over rows start ..
** start+len of each of the nslices slices, the rows with bit set in d_sel
** whose d_gid is gids->g[q] make state q of the slice, into d_out[q *
** nslices + slice]: its sum and count (rows 0, first INT64_MAX, no max or
** min: gak_cache_group_counts has the rows and the first rows). */
#define GAK_CACHE_FEW 4
typedef struct gak_cgids {
  uint32_t n, g[GAK_CACHE_FEW];
} gak_cgids;
int gak_cache_reduce_groups(gak_ccol x, const uint32_t *d_gid,
                            const uint32_t *d_sel, const gak_cslice *d_slices,
                            int64_t nslices, const gak_cgids *gids,
                            gak_cstate *d_out, gak_stream s);
/* One state per group from its slices' states; key.vals NULL: no key. */
int gak_cache_merge(const gak_cstate *d_slice_states,
                    const gak_cgroup *d_groups, int64_t ngroups, gak_ccol key,
                    gak_cstate *d_out, gak_stream s);

/* ---- variance and medians on a GPU entry (kernels/cache_stat.cu; issue
** 39, engine/cache/cache_gpu_stat.c) ----
**
** Both read a value as gak_cache_reduce does: over the positions of each
** of the nslices slices (x at row d_idx[p], or p itself when d_idx is
** NULL; where d_gid is not NULL only the positions p with d_gid[p] equal
** to the slice's group and bit p of d_sel set), NULLs skipped; slice j's
** values belong to output group d_slout[j] < ngr.
**
** gak_cache_sq: d_sq[g * GA_XSQ_DIGITS ..] = Σx² of output group g's
** values (ga_partial.h's window: xvar.h rule 2), written whole: the exact
** squares of INTEGERs (128-bit) and of finite REALs; infinities and NaN
** add nothing (the sum's counts say the variance is NULL).  Digits are
** 64-bit sums of digits below 2^32 (each block carries its own before it
** adds them), not normalised: the host normalises. */
int gak_cache_sq(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_gid,
                 const uint32_t *d_sel, const gak_cslice *d_slices,
                 const uint32_t *d_slout, int64_t nslices, int64_t ngr,
                 int64_t *d_sq, gak_stream s);
/* gak_cache_pct_count: d_counts[g] = output group g's non-NULL values,
** d_counts[ngr] = how many of them are infinities (SQLite's percentile
** refuses them); written whole.
** gak_cache_pct_gather: each group's values as doubles (an INTEGER
** rounded to nearest, as (double) in C) into d_out[d_offs[g] ..
** d_offs[g] + d_counts[g]), in no particular order; d_cursor (ngr
** counters) is the call's own scratch.
** gak_cache_pct_sort: each group's run sorted ascending by value (its
** order-preserving 64-bit key: -0.0 before 0.0), run g = d_vals[d_offs[g]
** .. d_offs[g + 1]) (d_offs has ngr + 1 entries, d_offs[ngr] = total;
** h_offs: the same on the host);
** d_tmp has room for total values; d_scratch: gak_cache_pct_sort_scratch
** (total, ngr) bytes.  The sorted values end in d_vals. */
int gak_cache_pct_count(gak_ccol x, const uint32_t *d_idx,
                        const uint32_t *d_gid, const uint32_t *d_sel,
                        const gak_cslice *d_slices, const uint32_t *d_slout,
                        int64_t nslices, int64_t ngr, int64_t *d_counts,
                        gak_stream s);
int gak_cache_pct_gather(gak_ccol x, const uint32_t *d_idx,
                         const uint32_t *d_gid, const uint32_t *d_sel,
                         const gak_cslice *d_slices, const uint32_t *d_slout,
                         int64_t nslices, int64_t ngr, const int64_t *d_offs,
                         int64_t *d_cursor, double *d_out, gak_stream s);
/* Up to this many groups, one radix sort a group (each over the whole
** device); past it, one segmented sort (a block a segment). */
#define GAK_PCT_SORT_EACH 64
size_t gak_cache_pct_sort_scratch(int64_t total, int64_t ngr);
int gak_cache_pct_sort(double *d_vals, double *d_tmp, const int64_t *d_offs,
                       const int64_t *h_offs, int64_t ngr, int64_t total,
                       void *d_scratch, gak_stream s);
/* gak_cache_pct_pick: d_out[j] = d_vals[d_pos[j]] for j < npos (the
** order statistics the medians read, from the sorted runs; d_pos: places
** in d_vals, each below nvals, the values' count: a place outside reads
** nothing and gives NaN, and the fake GPU fails the test on it).  Nothing
** for npos 0. */
int gak_cache_pct_pick(const double *d_vals, int64_t nvals,
                       const int64_t *d_pos, int64_t npos, double *d_out,
                       gak_stream s);

/* ---- ORDER BY an aggregate ... LIMIT k over many groups (kernels/
** cache_topk.cu; issue 20, bench/query_bench.py's d2) ----
**
** gak_cache_group_order: one thread a group g < ngroups, over its rows
** [start[g], end[g]) of the sorted layout (value x at row d_idx[p], or at
** p itself when d_idx is NULL), the exact finished value of sum(x) or
** total(x) as an order key: ascending keys for ascending values under
** SQLite's comparison, all 64 bits.  mode: GAK_ORDER_INT (every value an
** INTEGER: sum is the int64 sum, total that sum rounded once) or
** GAK_ORDER_REAL (every value a REAL: the correctly rounded exact sum), or
** GAK_ORDER_TOTAL with either.  A group without rows has key 0; a group
** whose values are all NULL has key 1 for sum (NULL sorts first) and
** 0.0's for total; desc = 0 stores every other key's complement, so that
** a descending sort of keys is SQLite's ascending order there.  Declined
** (bit 1 of *d_flag set: the host takes another path): a value of the
** other kind, an infinity or NaN, values more than 64 binades below their
** group's largest, an int64 sum past 2^62, a REAL sum that is subnormal or
** overflows. */
#define GAK_ORDER_INT 0
#define GAK_ORDER_REAL 1
#define GAK_ORDER_TOTAL 2
int gak_cache_group_order(gak_ccol x, const uint32_t *d_idx,
                          const uint32_t *d_start, const uint32_t *d_end,
                          int64_t ngroups, int mode, int desc, uint64_t *d_key,
                          uint32_t *d_flag, gak_stream s);
/* gak_cache_topk: the groups among the first k in descending key order,
** ties with the k-th included, groups without rows (key 0) never:
** *d_count of them (at most ngroups), their ids in key order in
** d_ids[0 .. min(count, cap)) and their bounds in d_bounds (start, end
** pairs).  d_scratch: gak_cache_topk_scratch(ngroups) bytes. */
size_t gak_cache_topk_scratch(int64_t ngroups);
int gak_cache_topk(const uint64_t *d_key, const uint32_t *d_start,
                   const uint32_t *d_end, int64_t ngroups, int64_t k,
                   int64_t cap, uint32_t *d_ids, uint32_t *d_bounds,
                   int64_t *d_count, void *d_scratch, gak_stream s);

/* ---- many groups (kernels/cache_many.cu; issue 37, bench/query_bench.py's
** d5) ----
**
** gak_cache_group_count: one thread a group g < ngroups, its count over
** rows [start[g], end[g]) of the sorted layout as an order key, as
** gak_cache_group_order makes one: count(*) when x.notnull is NULL (the
** rows, end - start), else count(x) (the rows p whose bit d_idx[p], or p
** when d_idx is NULL, is set in x.notnull).  Key 2^63 + count; a group
** without rows has key 0; desc = 0 stores every other key's complement.
** A count is exact: nothing declines. */
int gak_cache_group_count(gak_ccol x, const uint32_t *d_idx,
                          const uint32_t *d_start, const uint32_t *d_end,
                          int64_t ngroups, int desc, uint64_t *d_key,
                          gak_stream s);

/* gak_cache_many_compact (issue 37, d4 on the GPU): one thread a group g <
** ngr, over rows [d_bounds[2g], d_bounds[2g + 1]) of the sorted layout
** (value x at row d_idx[p], or at p when d_idx is NULL), a compact exact
** state: the counts of its INTEGER and REAL values, the int64 sum of the
** INTEGERs and the int64 sum of the REALs, each REAL an integer below 2^53
** in magnitude (so converted exactly).  d_first not NULL: d_first[g] = the
** group's first row (d_idx[start], or start).  Bit 0 of *d_flag set (the
** host reduces exactly instead): a REAL that is not such an integer (an
** infinity, NaN or a fraction), or either sum leaving int64 at any step. */
typedef struct gak_cmany {
  int64_t nint, nreal, isum, rsum;
} gak_cmany;
int gak_cache_many_compact(gak_ccol x, const uint32_t *d_idx,
                           const uint32_t *d_bounds, int64_t ngr,
                           gak_cmany *d_out, uint32_t *d_first,
                           uint32_t *d_flag, gak_stream s);

/* ---- expressions and keys (kernels/cache_expr.cu; issue 20) ----
**
** A program is engine/cache/cexpr.h's, one instruction a gak_cins (op:
** its GA_CX_* number; col: a slot of cols; a, b; the literal's type
** (base/cx_ops.h's GA_CX_T*) and bits), run one row a thread with the
** scalar rules of base/cx_ops.h, which the host's lanes run too. */
#define GAK_CX_MAX 64   /* instructions (cexpr.h's GA_CX_MAX) */
#define GAK_CX_DEPTH 16 /* the stack a program may use on the GPU */
#define GAK_CX_COLS 16  /* column slots of one program */
#define GAK_CX_MAPS 8   /* derived columns' maps of one program */
#define GAK_CACHE_MAX_KEYS 16

typedef struct gak_cval {
  int32_t type, pad; /* GA_CX_TNULL, GA_CX_TINT, GA_CX_TREAL */
  int64_t bits;
} gak_cval;

typedef struct gak_cins {
  int32_t op, col, a, b;
  int32_t type, pad; /* GA_CX_LIT's literal */
  int64_t bits;
} gak_cins;

/* A derived column's map: the value of each code (n of them; code n:
** the value for a NULL). */
typedef struct gak_cmap {
  const uint64_t *v;
  const uint8_t *type; /* GA_V_NULL, GA_V_INT or GA_V_REAL (value.h) */
  int64_t n;
} gak_cmap;

typedef struct gak_cprog {
  int32_t n, depth;
  gak_cins ins[GAK_CX_MAX];
  gak_ccol cols[GAK_CX_COLS];
  gak_cmap maps[GAK_CX_MAPS];
  const gak_cval *pool; /* the IN lists' literals (device memory) */
} gak_cprog;

/* Program p's value at n rows into d_vals (the int64 or the double's
** bits, 0 for NULL) and the isint / notnull bitmaps (64-bit words, bits
** past n cleared), as a cached column holds them: value j is row
** d_rows[j]'s (d_rows NULL: row j's), so a filter's passing rows become a
** column of their own.  *d_err becomes 1 when a row whose bit is set in
** d_sel (32-bit words, by row; NULL: every row) raises an error
** (abs(-9223372036854775808)); the caller zeroes it. */
int gak_cache_eval(const gak_cprog *p, int64_t n, const uint32_t *d_rows,
                   const uint32_t *d_sel, uint64_t *d_vals, uint64_t *d_isint,
                   uint64_t *d_notnull, uint32_t *d_err, gak_stream s);

/* Program p as a filter: bit i of d_sel (32-bit words, ceil(n / 32) of
** them, bits past n cleared) set where row i's value is true (a number
** other than 0; NULL is not); *d_err as gak_cache_eval's, over every
** row. */
int gak_cache_eval_filter(const gak_cprog *p, int64_t n, uint32_t *d_sel,
                          uint32_t *d_err, gak_stream s);

/* One key of several: its id is the index of the value's canonical key in
** dict (ndict of them; a NULL value: ndict), or, where map is set, the
** value is a code and its id map[code] (a NULL value: map[nmap - 1]).  The
** group id is the sum of id * stride over the keys. */
typedef struct gak_ckey {
  gak_ccol col;
  const int64_t *dict;
  int64_t ndict;
  const uint32_t *map;
  int64_t nmap;
  uint32_t stride, pad;
} gak_ckey;

typedef struct gak_ckeys {
  int32_t n, pad;
  gak_ckey k[GAK_CACHE_MAX_KEYS];
} gak_ckeys;

/* For each of m rows d_idx[j] (d_idx NULL: rows j): its group id into
** d_gid[j] (0xffffffff for a value missing from a dictionary: the engine's
** count check fails). */
int gak_cache_key_ids(const gak_ckeys *k, const uint32_t *d_idx, int64_t m,
                      uint32_t *d_gid, gak_stream s);

/* Column col's value at each of n rows d_rows[j] into d_out[j] (d_through
** not NULL: at rows d_through[d_rows[j]]). */
int gak_cache_gather(gak_ccol col, const uint32_t *d_rows,
                     const uint32_t *d_through, int64_t n, gak_cval *d_out,
                     gak_stream s);

/* ---- DISTINCT inside aggregates (kernels/cache_distinct.cu; issue 37) ----
**
** A DISTINCT value's set of each group is a bitmap: bit v - lo of the
** group's row (rows of (range + 63) / 64 words of 64 bits, ngroups rows)
** for each INTEGER value v of the group.  The values: at positions j < m,
** value x at row d_idx[j] (d_idx NULL: row j), of group d_gid[j] (d_gid
** NULL: group 0; an id at or past ngroups is skipped), where bit j of
** d_sel (32-bit words) is set (d_sel NULL: every j); NULLs are skipped.
**
** gak_cdist_domain: over those values (every id), d_out[0] = the REALs
** that are not integers within int64 (infinities included), d_out[1] =
** the REALs that are integers (1.0, -0.0), d_out[2] = the least of the
** INTEGERs and those integral REALs (INT64_MAX when none), d_out[3] = the
** greatest (INT64_MIN when none).  d_out is written whole.
**
** gak_cdist_bits: d_bits zeroed, then each value's bit set; a REAL sets
** its integer's bit only under GAK_CDIST_FOLD and when it is an integer
** (count alone reads such a set: 1 and 1.0 are one value).  *d_miss (written
** whole) = the values that set no bit (a REAL not folded, a value outside
** [lo, lo + range)): the host then declines.  range at most 2^32.
**
** gak_cdist_count: d_counts[g] = the bits set in row g, g < ngroups. */
#define GAK_CDIST_FOLD 1
/* Where ngroups * words is at most this (96 KiB: two blocks a
** multiprocessor at least), a block sets the bits in shared memory first
** (kernels/cache_distinct.cu rule 2). */
#define GAK_CDIST_SMEM_WORDS 12288
int gak_cdist_domain(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_sel,
                     int64_t m, int64_t *d_out, gak_stream s);
int gak_cdist_bits(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_gid,
                   const uint32_t *d_sel, int64_t m, int64_t lo, int64_t range,
                   int64_t ngroups, int flags, uint64_t *d_bits,
                   int64_t *d_miss, gak_stream s);
int gak_cdist_count(const uint64_t *d_bits, int64_t range, int64_t ngroups,
                    int64_t *d_counts, gak_stream s);

/* gak_cdist_sort: every value, by sorting (group, value) pairs: the
** distinct pairs of the positions (an INTEGER and a REAL that is an
** integer within int64 are one value; other REALs are values by their
** bits, -0.0 being 0), *d_n of them in group order, each with its group
** in d_rgid and the value at its first position (the representative:
** positions are in rowid order within a group) in d_rval, its INTEGER or
** REAL kept (GA_CX_TINT or GA_CX_TREAL); d_counts[g] = the pairs of group
** g < ngroups.  d_rgid and d_rval have room for m; m below 2^31, ngroups
** at most 2^30.  d_scratch: gak_cdist_sort_scratch(m) bytes. */
size_t gak_cdist_sort_scratch(int64_t m);
int gak_cdist_sort(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_gid,
                   const uint32_t *d_sel, int64_t m, int64_t ngroups,
                   uint32_t *d_rgid, gak_cval *d_rval, int64_t *d_n,
                   int64_t *d_counts, void *d_scratch, gak_stream s);

/* ---- star joins from the GPU cache (kernels/cache_star.cu; issue 38
** section 3.3, engine/cache/cache_gpu_star.c) ----
**
** The host builds each dimension's lookup (engine/cache/cache_star.c rule
** 2) and hands it over as it is: a dense array over [base, base + span),
** or an open-addressing table of hmask + 1 slots whose keys are nkeys
** int64s a slot, probed from hash(key) & hmask one slot at a time (the
** hash is engine/cache/cache_star.c's hash_of, repeated in the kernel).
** A slot holds the dimension's row, -1 (dense: no key; hash: an empty
** slot, which ends the probe), or -2 (the key's row is there, but a
** snowflake's inner join under it misses: the fact row is dropped).
**
** gak_cstar_probe: for each fact row i < n, each dimension in turn (the
** order given: the fewest kept first) takes the fact row's key (its
** columns' values: NULL never matches; a TEXT key's code through map,
** whose -1 matches nothing; a number's key is its INTEGER, or a REAL's
** integral value within int64, else nothing) and finds its row; a miss
** drops the row where miss_drops (an inner join, or a LEFT JOIN above an
** inner one), else the dimension's row is -1 (a LEFT JOIN's NULLs).  Bit
** i of d_sel (64-bit words, GA_BW(n) of them, bits past n cleared) is set
** where the row stays, and each column c of p->cols gets, at row i, the
** value of its dimension's row in v and f (1 isint, 2 notnull), or NULL
** (where the row is dropped or the dimension's row is -1): vals (0 for
** NULL) and the bitmaps, as a cached column holds them.  d_stats (1 + 4 *
** ncols int64s, set by the caller to 0, then 0, 0, INT64_MAX, INT64_MIN
** per column): [0] += the rows kept; per column the non-NULL values, the
** INTEGER ones, their least and greatest. */
#define GAK_CSTAR_DIMS 8
#define GAK_CSTAR_KEYS 4
#define GAK_CSTAR_COLS 16

typedef struct gak_cstar_dim {
  int32_t nkeys, dense, miss_drops, pad;
  gak_ccol key[GAK_CSTAR_KEYS];       /* the fact's key columns */
  const int64_t *map[GAK_CSTAR_KEYS]; /* TEXT: code -> key id; NULL */
  int64_t nmap[GAK_CSTAR_KEYS];
  int64_t base, span; /* dense */
  uint64_t hmask;     /* hash */
  const int32_t *slot;
  const int64_t *hkey; /* hash: nkeys a slot */
} gak_cstar_dim;

typedef struct gak_cstar_col {
  int32_t dim, pad;                 /* the index in gak_cstar.dims */
  const uint64_t *v;                /* by the dimension's row */
  const uint8_t *f;                 /* 1 isint, 2 notnull */
  uint64_t *vals, *isint, *notnull; /* n rows */
} gak_cstar_col;

typedef struct gak_cstar {
  int32_t ndims, ncols;
  gak_cstar_dim dims[GAK_CSTAR_DIMS];
  gak_cstar_col cols[GAK_CSTAR_COLS];
} gak_cstar;

int gak_cstar_probe(const gak_cstar *p, int64_t n, uint64_t *d_sel,
                    int64_t *d_stats, gak_stream s);
/* Bits of d_sel (32-bit words, ceil(n / 32)) ANDed with d_and's (64-bit
** words, GA_BW(n)): the join's rows within a filter's. */
int gak_cstar_and(uint32_t *d_sel, const uint64_t *d_and, int64_t n,
                  gak_stream s);

#ifdef __cplusplus
}
#endif

#endif
