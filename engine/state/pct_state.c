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
**   5. The sort into rule 2's order polls the caller's interrupt every
**      65,536 values it visits (a long loop): a least-significant-digit
**      radix sort, 11 bits a pass, on
**      the values' bits made unsigned-ordered (negative: all bits flipped;
**      else the sign bit set), which is rule 2's order for finite values;
**      a pass whose digit is one value for all is skipped.  Its scratch,
**      a second array of the n values, lives only while it sorts (the
**      BLOB made next is as large); under 64 values an insertion sort.
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

/* Rule 5's key: unsigned order is rule 2's order. */
static uint64_t key_of(double d) {
  uint64_t u = dbits(d);
  return u >> 63 ? ~u : u | (1ull << 63);
}

#define SORT_BITS 11
#define SORT_POLL 65536

int ga_pct_sort(double *v, size_t n, int (*stop)(void *), void *arg) {
  if (n < 64) { /* rule 5: insertion sort */
    for (size_t i = 1; i < n; i++) {
      double x = v[i];
      size_t j = i;
      for (; j > 0 && before(x, v[j - 1]); j--)
        v[j] = v[j - 1];
      v[j] = x;
    }
    return GA_OK;
  }
  double *tmp = malloc(n * sizeof(double));
  size_t *count = malloc(sizeof(size_t) << SORT_BITS);
  if (!tmp || !count) {
    free(tmp);
    free(count);
    return GA_NOMEM;
  }
  int rc = GA_OK;
  size_t seen = 0;
  double *from = v, *to = tmp;
  for (int shift = 0; shift < 64 && rc == GA_OK; shift += SORT_BITS) {
    memset(count, 0, sizeof(size_t) << SORT_BITS);
    const uint64_t mask = (1u << SORT_BITS) - 1;
    for (size_t i = 0; i < n; i++) {
      count[(key_of(from[i]) >> shift) & mask]++;
      if (++seen % SORT_POLL == 0 && stop && stop(arg)) {
        rc = GA_INTERRUPTED;
        break;
      }
    }
    if (rc != GA_OK || count[(key_of(from[0]) >> shift) & mask] == n)
      continue; /* one digit for all: this pass keeps the order */
    size_t at = 0;
    for (size_t d = 0; d <= mask; d++) {
      size_t c = count[d];
      count[d] = at;
      at += c;
    }
    for (size_t i = 0; i < n; i++) {
      to[count[(key_of(from[i]) >> shift) & mask]++] = from[i];
      if (++seen % SORT_POLL == 0 && stop && stop(arg)) {
        rc = GA_INTERRUPTED;
        break;
      }
    }
    if (rc != GA_OK) { /* to is partly written: v keeps its values */
      if (from != v)
        memcpy(v, from, n * sizeof(double));
      break;
    }
    double *t = from;
    from = to;
    to = t;
  }
  if (rc == GA_OK && from != v)
    memcpy(v, from, n * sizeof(double));
  free(tmp);
  free(count);
  return rc;
}

int ga_pct_state_encode(ga_pct *p, unsigned char **out, int64_t *n,
                        int (*stop)(void *), void *arg) {
  int rc = ga_pct_sort(p->v, p->n, stop, arg); /* rule 5 */
  if (rc != GA_OK)
    return rc;
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
