/*
** none.c — the gak.h backend of a build without CUDA (CUDA=0, or no nvcc).
**
** Every call fails with GAK_ENOTBUILT, so engine/reduce/gpu.c reports "built
** without CUDA", never takes a GPU path and counts no error: the extension
** answers everything on the CPU.  Error codes are the classes themselves.
*/
#include <stddef.h>
#include <stdint.h>

#include "gak.h"

#define NB GAK_ENOTBUILT

int gak_error_class(int err) { return err; }
const char *gak_error_string(int err) {
  return err == 0 ? "no error" : "built without CUDA";
}
int gak_take_error(void) { return 0; }
const char *gak_backend(void) { return "none"; }

int gak_runtime_version(int *v) {
  *v = 0;
  return NB;
}
int gak_driver_version(int *v) {
  *v = 0;
  return NB;
}
int gak_device_count(int *n) {
  *n = 0;
  return NB;
}
int gak_device_props(int dev, gak_props *p) {
  (void)dev, (void)p;
  return NB;
}
int gak_get_device(int *dev) {
  *dev = 0;
  return NB;
}
int gak_set_device(int dev) {
  (void)dev;
  return NB;
}
int gak_malloc(void **p, size_t bytes) {
  (void)bytes;
  *p = NULL;
  return NB;
}
int gak_free(void *p) { return p ? NB : 0; }
int gak_host_alloc(void **p, size_t bytes) {
  (void)bytes;
  *p = NULL;
  return NB;
}
int gak_host_free(void *p) { return p ? NB : 0; }
int gak_stream_create(gak_stream *s) {
  *s = NULL;
  return NB;
}
int gak_stream_destroy(gak_stream s) { return s ? NB : 0; }
int gak_stream_sync(gak_stream s) {
  (void)s;
  return NB;
}
int gak_event_create(gak_event *e, int timing) {
  (void)timing;
  *e = NULL;
  return NB;
}
int gak_event_destroy(gak_event e) { return e ? NB : 0; }
int gak_event_record(gak_event e, gak_stream s) {
  (void)e, (void)s;
  return NB;
}
int gak_event_query(gak_event e) {
  (void)e;
  return NB;
}
int gak_event_sync(gak_event e) {
  (void)e;
  return NB;
}
int gak_event_elapsed(float *ms, gak_event from, gak_event to) {
  (void)from, (void)to;
  *ms = 0;
  return NB;
}
int gak_memcpy_h2d(void *d, const void *h, size_t bytes, gak_stream s) {
  (void)d, (void)h, (void)bytes, (void)s;
  return NB;
}
int gak_memcpy_d2h(void *h, const void *d, size_t bytes, gak_stream s) {
  (void)d, (void)h, (void)bytes, (void)s;
  return NB;
}

size_t gak_scratch_bytes(int64_t n) {
  (void)n;
  return 0;
}
int gak_sum(const uint64_t *v, const uint64_t *b, int64_t n, int layout,
            ga_sum_partial *out, void *scratch, gak_stream s) {
  (void)v, (void)b, (void)n, (void)layout, (void)out, (void)scratch, (void)s;
  return NB;
}
int gak_var(const uint64_t *d_vals, const uint64_t *d_isint, int64_t n,
            int layout, ga_sum_partial *d_sum, int64_t *d_sq,
            gak_stream stream) {
  (void)d_vals, (void)d_isint, (void)n, (void)layout, (void)d_sum, (void)d_sq,
      (void)stream;
  return NB;
}
int gak_best(const uint64_t *v, const uint64_t *b, int64_t n, int layout,
             int want_min, ga_best_partial *out, void *scratch, gak_stream s) {
  (void)v, (void)b, (void)n, (void)layout, (void)want_min, (void)out;
  (void)scratch, (void)s;
  return NB;
}
int gak_matadd(const double *a, const double *b, double *c, int64_t n,
               gak_stream s) {
  (void)a, (void)b, (void)c, (void)n, (void)s;
  return NB;
}
int gak_matadd_2d(const double *a, const double *b, double *c, int64_t rows,
                  int64_t cols, gak_stream s) {
  (void)a, (void)b, (void)c, (void)rows, (void)cols, (void)s;
  return NB;
}

int gak_memcpy_d2d(void *d, const void *s, size_t bytes, gak_stream st) {
  (void)d, (void)s, (void)bytes, (void)st;
  return NB;
}

/* ---- the column cache: never reached (no GPU entry can exist) ---- */
int gak_cache_filter(const gak_cfilter *f, int64_t n, uint32_t *d_sel,
                     gak_stream s) {
  (void)f, (void)n, (void)d_sel, (void)s;
  return NB;
}
size_t gak_cache_compact_scratch(int64_t n) {
  (void)n;
  return 0;
}
int gak_cache_compact(const uint32_t *d_sel, int64_t n, uint32_t *d_idx,
                      int64_t *d_count, void *d_scratch, gak_stream s) {
  (void)d_sel, (void)n, (void)d_idx, (void)d_count, (void)d_scratch, (void)s;
  return NB;
}
size_t gak_cache_dict_scratch(int64_t n) {
  (void)n;
  return 0;
}
int gak_cache_dict(gak_ccol key, int64_t n, int64_t nn, int64_t *d_dict,
                   int64_t *d_ndict, void *d_scratch, gak_stream s) {
  (void)key, (void)n, (void)nn, (void)d_dict, (void)d_ndict, (void)d_scratch;
  (void)s;
  return NB;
}
size_t gak_cache_sort_scratch(int64_t m) {
  (void)m;
  return 0;
}
int gak_cache_sort(const uint32_t *d_gid, const uint32_t *d_idx,
                   uint32_t *d_gid_out, uint32_t *d_idx_out, int64_t m,
                   int bits, void *d_scratch, gak_stream s) {
  (void)d_gid, (void)d_idx, (void)d_gid_out, (void)d_idx_out, (void)m;
  (void)bits, (void)d_scratch, (void)s;
  return NB;
}
int gak_cache_remap(uint64_t *d_vals, const uint64_t *d_notnull, int64_t n,
                    const uint32_t *d_map, int64_t nmap, gak_stream s) {
  (void)d_vals, (void)d_notnull, (void)n, (void)d_map, (void)nmap, (void)s;
  return NB;
}
int gak_cache_bounds(const uint32_t *d_gid, int64_t m, int64_t ngroups,
                     uint32_t *d_start, uint32_t *d_end, gak_stream s) {
  (void)d_gid, (void)m, (void)ngroups, (void)d_start, (void)d_end, (void)s;
  return NB;
}
int gak_cache_reduce(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_gid,
                     const uint32_t *d_sel, const gak_cslice *d_slices,
                     int64_t nslices, gak_cstate *d_out, gak_stream s) {
  (void)x, (void)d_idx, (void)d_gid, (void)d_sel, (void)d_slices, (void)nslices;
  (void)d_out, (void)s;
  return NB;
}
int gak_cache_group_counts(const uint32_t *d_gid, const uint32_t *d_sel,
                           int64_t m, int64_t ngroups, uint32_t *d_counts,
                           uint32_t *d_firsts, gak_stream s) {
  (void)d_gid, (void)d_sel, (void)m, (void)ngroups, (void)d_counts;
  (void)d_firsts, (void)s;
  return NB;
}
int gak_cache_reduce_groups(gak_ccol x, const uint32_t *d_gid,
                            const uint32_t *d_sel, const gak_cslice *d_slices,
                            int64_t nslices, const gak_cgids *gids,
                            gak_cstate *d_out, gak_stream s) {
  (void)x, (void)d_gid, (void)d_sel, (void)d_slices, (void)nslices;
  (void)gids, (void)d_out, (void)s;
  return NB;
}
int gak_cache_group_order(gak_ccol x, const uint32_t *d_idx,
                          const uint32_t *d_start, const uint32_t *d_end,
                          int64_t ngroups, int mode, int desc, uint64_t *d_key,
                          uint32_t *d_flag, gak_stream s) {
  (void)x, (void)d_idx, (void)d_start, (void)d_end, (void)ngroups, (void)mode;
  (void)desc, (void)d_key, (void)d_flag, (void)s;
  return NB;
}
int gak_cache_group_count(gak_ccol x, const uint32_t *d_idx,
                          const uint32_t *d_start, const uint32_t *d_end,
                          int64_t ngroups, int desc, uint64_t *d_key,
                          gak_stream s) {
  (void)x, (void)d_idx, (void)d_start, (void)d_end, (void)ngroups;
  (void)desc, (void)d_key, (void)s;
  return NB;
}
int gak_cache_many_compact(gak_ccol x, const uint32_t *d_idx,
                           const uint32_t *d_bounds, int64_t ngr,
                           gak_cmany *d_out, uint32_t *d_first,
                           uint32_t *d_flag, gak_stream s) {
  (void)x, (void)d_idx, (void)d_bounds, (void)ngr, (void)d_out;
  (void)d_first, (void)d_flag, (void)s;
  return NB;
}
size_t gak_cache_topk_scratch(int64_t ngroups) {
  (void)ngroups;
  return 0;
}
int gak_cache_topk(const uint64_t *d_key, const uint32_t *d_start,
                   const uint32_t *d_end, int64_t ngroups, int64_t k,
                   int64_t cap, uint32_t *d_ids, uint32_t *d_bounds,
                   int64_t *d_count, void *d_scratch, gak_stream s) {
  (void)d_key, (void)d_start, (void)d_end, (void)ngroups, (void)k, (void)cap;
  (void)d_ids, (void)d_bounds, (void)d_count, (void)d_scratch, (void)s;
  return NB;
}
int gak_cache_merge(const gak_cstate *d_slice_states,
                    const gak_cgroup *d_groups, int64_t ngroups, gak_ccol key,
                    gak_cstate *d_out, gak_stream s) {
  (void)d_slice_states, (void)d_groups, (void)ngroups, (void)key, (void)d_out;
  (void)s;
  return NB;
}
int gak_cache_eval(const gak_cprog *p, int64_t n, const uint32_t *d_rows,
                   const uint32_t *d_sel, uint64_t *d_vals, uint64_t *d_isint,
                   uint64_t *d_notnull, uint32_t *d_err, gak_stream s) {
  (void)p, (void)n, (void)d_rows, (void)d_sel, (void)d_vals, (void)d_isint;
  (void)d_notnull;
  (void)d_err, (void)s;
  return NB;
}
int gak_cache_key_ids(const gak_ckeys *k, const uint32_t *d_idx, int64_t m,
                      uint32_t *d_gid, gak_stream s) {
  (void)k, (void)d_idx, (void)m, (void)d_gid, (void)s;
  return NB;
}
int gak_cache_gather(gak_ccol col, const uint32_t *d_rows,
                     const uint32_t *d_through, int64_t n, gak_cval *d_out,
                     gak_stream s) {
  (void)col, (void)d_rows, (void)d_through, (void)n, (void)d_out, (void)s;
  return NB;
}
int gak_cache_eval_filter(const gak_cprog *p, int64_t n, uint32_t *d_sel,
                          uint32_t *d_err, gak_stream s) {
  (void)p, (void)n, (void)d_sel, (void)d_err, (void)s;
  return NB;
}

int gak_cdist_domain(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_sel,
                     int64_t m, int64_t *d_out, gak_stream s) {
  (void)x, (void)d_idx, (void)d_sel, (void)m, (void)d_out, (void)s;
  return NB;
}
int gak_cdist_bits(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_gid,
                   const uint32_t *d_sel, int64_t m, int64_t lo, int64_t range,
                   int64_t ngroups, int flags, uint64_t *d_bits,
                   int64_t *d_miss, gak_stream s) {
  (void)x, (void)d_idx, (void)d_gid, (void)d_sel, (void)m, (void)lo;
  (void)range, (void)ngroups, (void)flags, (void)d_bits, (void)d_miss, (void)s;
  return NB;
}
int gak_cdist_count(const uint64_t *d_bits, int64_t range, int64_t ngroups,
                    int64_t *d_counts, gak_stream s) {
  (void)d_bits, (void)range, (void)ngroups, (void)d_counts, (void)s;
  return NB;
}
size_t gak_cdist_sort_scratch(int64_t m) {
  (void)m;
  return 0;
}
int gak_cdist_sort(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_gid,
                   const uint32_t *d_sel, int64_t m, int64_t ngroups,
                   uint32_t *d_rgid, gak_cval *d_rval, int64_t *d_n,
                   int64_t *d_counts, void *d_scratch, gak_stream s) {
  (void)x, (void)d_idx, (void)d_gid, (void)d_sel, (void)m, (void)ngroups;
  (void)d_rgid, (void)d_rval, (void)d_n, (void)d_counts, (void)d_scratch;
  (void)s;
  return NB;
}

int gak_cstar_probe(const gak_cstar *p, int64_t n, uint64_t *d_sel,
                    int64_t *d_stats, gak_stream s) {
  (void)p, (void)n, (void)d_sel, (void)d_stats, (void)s;
  return NB;
}
int gak_cstar_and(uint32_t *d_sel, const uint64_t *d_and, int64_t n,
                  gak_stream s) {
  (void)d_sel, (void)d_and, (void)n, (void)s;
  return NB;
}
int gak_cache_sq(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_gid,
                 const uint32_t *d_sel, const gak_cslice *d_slices,
                 const uint32_t *d_slout, int64_t nslices, int64_t ngr,
                 int64_t *d_sq, gak_stream s) {
  (void)x, (void)d_idx, (void)d_gid, (void)d_sel, (void)d_slices;
  (void)d_slout, (void)nslices, (void)ngr, (void)d_sq, (void)s;
  return NB;
}
int gak_cache_pct_count(gak_ccol x, const uint32_t *d_idx,
                        const uint32_t *d_gid, const uint32_t *d_sel,
                        const gak_cslice *d_slices, const uint32_t *d_slout,
                        int64_t nslices, int64_t ngr, int64_t *d_counts,
                        gak_stream s) {
  (void)x, (void)d_idx, (void)d_gid, (void)d_sel, (void)d_slices;
  (void)d_slout, (void)nslices, (void)ngr, (void)d_counts, (void)s;
  return NB;
}
int gak_cache_pct_gather(gak_ccol x, const uint32_t *d_idx,
                         const uint32_t *d_gid, const uint32_t *d_sel,
                         const gak_cslice *d_slices, const uint32_t *d_slout,
                         int64_t nslices, int64_t ngr, const int64_t *d_offs,
                         int64_t *d_cursor, double *d_out, gak_stream s) {
  (void)x, (void)d_idx, (void)d_gid, (void)d_sel, (void)d_slices;
  (void)d_slout, (void)nslices, (void)ngr, (void)d_offs, (void)d_cursor;
  (void)d_out, (void)s;
  return NB;
}
size_t gak_cache_pct_sort_scratch(int64_t total, int64_t ngr) {
  (void)total, (void)ngr;
  return 0;
}
int gak_cache_pct_sort(double *d_vals, double *d_tmp, const int64_t *d_offs,
                       const int64_t *h_offs, int64_t ngr, int64_t total,
                       void *d_scratch, gak_stream s) {
  (void)d_vals, (void)d_tmp, (void)d_offs, (void)h_offs, (void)ngr;
  (void)total, (void)d_scratch, (void)s;
  return NB;
}
int gak_cache_pct_pick(const double *d_vals, int64_t nvals,
                       const int64_t *d_pos, int64_t npos, double *d_out,
                       gak_stream s) {
  (void)d_vals, (void)nvals, (void)d_pos, (void)npos, (void)d_out, (void)s;
  return NB;
}
