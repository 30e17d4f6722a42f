/*
** pct_state.c — the state BLOB of gpu_percentile_state (issue 39): the
** values a median or percentile keeps, so that states merged in any
** grouping give the aggregate over all the rows, bit for bit.
**
** Rules:
**   1. The header is state.h's (magic GAST, format version 1, kind 6,
**      two reserved zero bytes); then n, 8 bytes, and the n values, 8
**      bytes each, binary64, all little-endian.
**   2. Canonical: the values ascend in IEEE total order (-0.0 before 0.0),
**      so equal multisets of values give equal bytes whatever the order or
**      grouping of their rows.
**   3. A BLOB is validated completely before any value is used: its length
**      is exactly 16 + 8n, every value finite (SQLite's NaN is NULL; an
**      infinity is an error before it reaches a state) and rule 2's order
**      holds.  Anything else is refused, so a refused BLOB never yields an
**      answer.
**   4. Merging appends the values: the cap (pct.h) counts them as their own
**      rows would.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pct_state.h"
#include "state.h"
#include "value.h"

static uint64_t dbits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

/* Rule 2's order: by value, -0.0 before 0.0. */
static int before(double a, double b) {
  return a < b || (a == b && signbit(a) && !signbit(b));
}

static int cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return before(a, b) ? -1 : before(b, a);
}

static void put64(unsigned char *o, uint64_t v) {
  for (int i = 0; i < 8; i++)
    o[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get64(const unsigned char *o) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)o[i] << (8 * i);
  return v;
}

int ga_pct_state_encode(ga_pct *p, unsigned char **out, int64_t *n) {
  if (p->n) /* qsort(NULL, 0, ...) is undefined */
    qsort(p->v, p->n, sizeof(double), cmp);
  size_t bytes = 16 + 8 * p->n;
  unsigned char *o = malloc(bytes);
  if (!o)
    return GA_NOMEM;
  memcpy(o, "GAST", 4);
  o[4] = GA_STATE_VERSION;
  o[5] = GA_STATE_PCT;
  o[6] = o[7] = 0;
  put64(o + 8, (uint64_t)p->n);
  for (size_t i = 0; i < p->n; i++)
    put64(o + 16 + 8 * i, dbits(p->v[i]));
  *out = o;
  *n = (int64_t)bytes;
  return GA_OK;
}

int ga_pct_state_merge(const void *blob, int64_t n, ga_pct *into,
                       const char **err) {
  const unsigned char *b = blob;
  if (n < 8 || memcmp(b, "GAST", 4)) {
    *err = n < 8 && n >= 0 && !memcmp(b, "GAST", (size_t)(n < 4 ? n : 4))
               ? "truncated state"
               : "not a gpuagg state";
    return GA_BADSTATE;
  }
  if (b[4] > GA_STATE_VERSION) {
    *err = "state made by a newer gpuagg (format version > 1); upgrade "
           "gpuagg to read it";
    return GA_BADSTATE;
  }
  if (b[4] != GA_STATE_VERSION) {
    *err = "not a gpuagg state (version 0)";
    return GA_BADSTATE;
  }
  if (b[5] != GA_STATE_PCT) {
    *err = b[5] == GA_STATE_SUM   ? "wrong kind of state: this is a sum state "
                                    "(gpu_sum/total/avg_state)"
           : b[5] == GA_STATE_MAX ? "wrong kind of state: this is a max state "
                                    "(gpu_max_state)"
           : b[5] == GA_STATE_MIN ? "wrong kind of state: this is a min state "
                                    "(gpu_min_state)"
                                  : "wrong kind of state: not one of "
                                    "gpu_percentile_state";
    return GA_BADSTATE;
  }
  if (b[6] || b[7]) {
    *err = "malformed state (reserved header bytes)";
    return GA_BADSTATE;
  }
  if (n < 16) {
    *err = "truncated state";
    return GA_BADSTATE;
  }
  uint64_t cnt = get64(b + 8);
  if (cnt > (uint64_t)(n - 16) / 8) {
    *err = "truncated state";
    return GA_BADSTATE;
  }
  if ((uint64_t)(n - 16) != 8 * cnt) {
    *err = "malformed state (bytes after its values)";
    return GA_BADSTATE;
  }
  double prev = 0;
  for (uint64_t i = 0; i < cnt; i++) { /* rule 3, before any use */
    uint64_t u = get64(b + 16 + 8 * i);
    double d;
    memcpy(&d, &u, sizeof d);
    if (!isfinite(d)) {
      *err = "malformed state (a value that is not finite)";
      return GA_BADSTATE;
    }
    if (i && before(d, prev)) {
      *err = "malformed state (values out of order)";
      return GA_BADSTATE;
    }
    prev = d;
  }
  if (into->cap_bytes > 0 &&
      (int64_t)((into->n + cnt) * GA_PCT_VALUE_BYTES) > into->cap_bytes)
    return GA_PCT_CAP; /* rule 4 */
  for (uint64_t i = 0; i < cnt; i++) {
    uint64_t u = get64(b + 16 + 8 * i);
    double d;
    memcpy(&d, &u, sizeof d);
    int rc = ga_pct_push(into, d);
    if (rc != GA_OK)
      return rc;
  }
  return GA_OK;
}
