/*
** state.h — exact aggregate states: the partial of one group for every gpu_
** aggregate (rows, count, exact sum, max, min), stepping, merging, results,
** and the versioned BLOB formats that store them (README "Aggregate states").
**
** Users: ext/states/states.c (gpu_<agg>_state / gpu_<agg>_merge and the fused
** worker aggregate) and gpu_aggregate's workers (engine/scan/scan.c), which
*hand
** their partials back as the fused BLOB: one partial format for both.
**
** Rules:
**   1. A state is exact: merging states in any grouping gives the same sum
**      bits as one pass over all rows (the sum is a ga_sum_partial).
**   2. max/min keep max()'s order (NULL < numbers < TEXT < BLOB, numbers
**      exact across INTEGER/REAL, TEXT/BLOB by memcmp of the stored bytes);
**      among equal values the earlier one wins: the first row stepped, and in
**      ga_xstate_merge the state merged INTO (the earlier one).
**   3. TEXT is held as the bytes of the database encoding it was compared in
**      (s->enc); states of different encodings are never compared with each
**      other here: the SQL glue refuses that mix.
**   4. A BLOB is decoded only after it has been validated completely; any
**      BLOB that encode cannot have produced is refused (so equal states
**      have equal BLOBs, and a refused BLOB never yields an answer).
*/
#ifndef GA_STATE_H
#define GA_STATE_H

#include <stdint.h>

#include "bestval.h"
#include "ga_partial.h"
#include "value.h"
#include "xacc.h"

/* The exact state of one aggregate group, as every gpu_ aggregate needs it.
** An all-zero ga_xstate is a valid empty state (SQLite's zeroed aggregate
** context can be used as one without ga_xstate_init). */
typedef struct ga_xstate {
  int64_t rows;       /* values stepped, NULLs included (count(*)) */
  int64_t count;      /* non-NULL values (count(x)) = sum.nint + sum.nreal */
  ga_sum_partial sum; /* sum()'s classification of every non-NULL value */
  ga_bval max, min;   /* max()/min()'s view, GA_V_NULL when none */
  int enc;            /* encoding of TEXT bytes in max/min: SQLITE_UTF8 (1),
                         SQLITE_UTF16LE (2), SQLITE_UTF16BE (3); 0 while unknown */
} ga_xstate;

/* Return code of decode (and of a merge whose counts would exceed int64). */
#define GA_BADSTATE 16

/* BLOB kinds (byte 5 of the header, README). */
#define GA_STATE_SUM 1   /* sum partial: gpu_sum/total/avg_state */
#define GA_STATE_MAX 2   /* best value: gpu_max_state */
#define GA_STATE_MIN 3   /* best value: gpu_min_state */
#define GA_STATE_FUSED 4 /* rows, sum partial, max, min: the workers' state */
#define GA_STATE_VAR 5   /* sum partial and Σx²: gpu_var_state (vstate.h) */
#define GA_STATE_VERSION 1

/* Normalise the sum every this many values (GA_XACC_SAFE_ADDS and the 2^31
** integer halves both allow more). */
#define GA_STATE_NORM_MASK ((int64_t)(1 << 27) - 1)

void ga_xstate_init(ga_xstate *s);
void ga_xstate_clear(ga_xstate *s); /* frees text/blob copies; s is empty */

/* One row's value: num = sum()'s classification (GA_V_NULL/INT/REAL, from
** sqlite3_value_numeric_type) and raw = max()'s (the storage class as is,
** TEXT in the database encoding).  NULL counts in rows only.  GA_OK or
** GA_NOMEM (a text/blob copy).  Callers that read the value with
** sqlite3_value_numeric_type must take raw first: that call may turn a
** TEXT value into a number. */
int ga_xstate_step(ga_xstate *s, const ga_value *num, const ga_value *raw);
/* The halves of ga_xstate_step, for glue that must order them. */
void ga_xstate_step_sum(ga_xstate *s, const ga_value *num); /* + rows/count */
int ga_xstate_step_max(ga_xstate *s, const ga_value *raw);
int ga_xstate_step_min(ga_xstate *s, const ga_value *raw);

/* max()'s (want_min 0) or min()'s step on one best value: v replaces *b
** only when strictly better (NULL never); ga_best_set sets it outright
** (numbers in place, TEXT and BLOB copied).  GA_OK or GA_NOMEM. */
int ga_best_update(ga_bval *b, const ga_value *v, int want_min);
int ga_best_set(ga_bval *b, const ga_value *v);

/* The max/min half of a merge (into's max and min += later's, among equal
** values into's winning), in two steps so that a failure elsewhere leaves
** into unchanged: begin copies later's values that beat into's (GA_OK or
** GA_NOMEM, nothing kept then); end puts them in (commit) or drops them. */
typedef struct ga_bval_merge {
  ga_bval max, min;
  int take_max, take_min;
} ga_bval_merge;
int ga_bval_merge_begin(ga_bval_merge *m, const ga_bval *max,
                        const ga_bval *min, const ga_bval *later_max,
                        const ga_bval *later_min);
void ga_bval_merge_end(ga_bval_merge *m, ga_bval *max, ga_bval *min,
                       int commit);

/* into += later, where `later` covers rows AFTER into's rows: among equal
** values in max/min into's wins.  GA_OK, GA_NOMEM, or GA_BADSTATE when the
** merged counts would leave int64 (only crafted BLOBs can do that). */
int ga_xstate_merge(ga_xstate *into, const ga_xstate *later);
/* The sum part only (rows, count, sum): into += later or into -= later
** (sign -1: a window frame dropping a state added before). */
int ga_xstate_merge_sum(ga_xstate *into, const ga_xstate *later, int sign);

/* What gpu_sum / gpu_total / gpu_avg / gpu_max / gpu_min (op = GA_AGG_*)
** give over the rows in s: value and type.  GA_OK or GA_OVERFLOW (gpu_sum's
** 'integer overflow').  out->p points into s. */
int ga_xstate_result(const ga_xstate *s, int op, ga_value *out);

/* Encode s as a BLOB of `kind` (GA_STATE_*), allocated with
** sqlite3_malloc64, normalised (equal states give equal bytes).  GA_OK or
** GA_NOMEM.  A state holding TEXT must have s->enc set. */
int ga_state_encode(const ga_xstate *s, int kind, unsigned char **out,
                    int64_t *n);
/* The same into the caller's buffer: returns the BLOB's size, and writes it
** only when that is at most cap (so a stack buffer serves the common small
** state without an allocation; buf may be NULL when cap is 0). */
int64_t ga_state_encode_buf(const ga_xstate *s, int kind, unsigned char *buf,
                            int64_t cap);
/* Validate completely, then decode into *out (initialised here; clear it
** with ga_xstate_clear).  GA_OK; GA_NOMEM; or GA_BADSTATE with *err a
** static text saying why (never NULL then): not a gpuagg state, truncated,
** a newer version, another kind of state, or an impossible value. */
int ga_state_decode(const void *blob, int64_t n, int kind, ga_xstate *out,
                    const char **err);
/* The sum section of a BLOB alone, for vstate.c: written into buf when its
** size (returned) is at most cap; read with every check of the sum's,
** returning the bytes read, or -1 with *err set. */
int64_t ga_state_sum_section(const ga_sum_partial *p, unsigned char *buf,
                             int64_t cap);
int64_t ga_state_sum_section_read(const unsigned char *p, int64_t n,
                                  ga_sum_partial *out, const char **err);
/* The kind of a BLOB that starts like a state, or 0. */
int ga_state_kind(const void *blob, int64_t n);

/* ---- the per-row fast path of numbers (gpuagg's fused worker aggregate) */

/* A number against a best value that is not of the same kind (NULL, the
** other kind of number, TEXT or BLOB). */
void ga_xstate_best_num_slow(ga_bval *b, const ga_value *v, int want_min);

/* Integers below 2^53 in magnitude convert to double exactly, so a mixed
** INTEGER/REAL comparison of them needs no ga_num_cmp. */
#define GA_EXACT_DBL(i) ((i) > -((int64_t)1 << 53) && (i) < ((int64_t)1 << 53))

static inline void ga_xstate_best_int(ga_bval *b, int64_t v, int want_min) {
  if (b->type == GA_V_INT) {
    if (want_min ? v < b->i : v > b->i)
      b->i = v;
    return;
  }
  if (b->type == GA_V_REAL && GA_EXACT_DBL(v)) {
    double d = (double)v;
    if (want_min ? d < b->r : d > b->r) {
      b->type = GA_V_INT;
      b->i = v;
    }
    return;
  }
  ga_value x;
  x.type = GA_V_INT;
  x.i = v;
  ga_xstate_best_num_slow(b, &x, want_min);
}

static inline void ga_xstate_best_real(ga_bval *b, double v, int want_min) {
  if (b->type == GA_V_REAL) {
    if (want_min ? v < b->r : v > b->r)
      b->r = v;
    return;
  }
  if (b->type == GA_V_INT && GA_EXACT_DBL(b->i)) {
    double d = (double)b->i;
    if (want_min ? v < d : v > d) {
      b->type = GA_V_REAL;
      b->r = v;
    }
    return;
  }
  ga_value x;
  x.type = GA_V_REAL;
  x.r = v;
  ga_xstate_best_num_slow(b, &x, want_min);
}

/* An INTEGER value (storage class and classification both INTEGER). */
static inline void ga_xstate_step_int(ga_xstate *s, int64_t v) {
  s->rows++;
  s->count++;
  ga_sum_add_int(&s->sum, v, 1);
  if ((s->count & GA_STATE_NORM_MASK) == 0)
    ga_sum_normalize(&s->sum);
  ga_xstate_best_int(&s->max, v, 0);
  ga_xstate_best_int(&s->min, v, 1);
}

/* A REAL value. */
static inline void ga_xstate_step_real(ga_xstate *s, double v) {
  s->rows++;
  s->count++;
  ga_xacc_add_real(&s->sum, v, 1);
  if ((s->count & GA_STATE_NORM_MASK) == 0)
    ga_sum_normalize(&s->sum);
  ga_xstate_best_real(&s->max, v, 0);
  ga_xstate_best_real(&s->min, v, 1);
}

static inline void ga_xstate_step_null(ga_xstate *s) { s->rows++; }

#endif
