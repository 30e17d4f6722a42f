/*
** vstate.c — the variance state's BLOB (see vstate.h and its rules).
*/
#include "vstate.h"

#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#define NSQ GA_XSQ_DIGITS

int ga_vstate_encode(const ga_var_partial *p, unsigned char **out, int64_t *n) {
  ga_var_partial q = *p;
  ga_var_normalize(&q);
  int lo = 0, hi = NSQ - 1;
  while (lo < NSQ && q.sq[lo] == 0)
    lo++;
  while (hi >= lo && q.sq[hi] == 0)
    hi--;
  int nd = lo < NSQ ? hi - lo + 1 : 0;
  if (!nd)
    lo = 0;
  int64_t ssz = ga_state_sum_section(&q.sum, NULL, 0);
  int64_t size = 8 + ssz + 2 + 4 * (int64_t)nd;
  unsigned char *b = sqlite3_malloc64((uint64_t)size);
  *n = 0;
  *out = b;
  if (!b)
    return GA_NOMEM;
  memcpy(b, "GAST", 4);
  b[4] = GA_STATE_VERSION;
  b[5] = GA_STATE_VAR;
  b[6] = b[7] = 0;
  ga_state_sum_section(&q.sum, b + 8, ssz);
  unsigned char *w = b + 8 + ssz;
  *w++ = (unsigned char)lo;
  *w++ = (unsigned char)nd;
  for (int k = 0; k < nd; k++) {
    uint32_t d = (uint32_t)q.sq[lo + k]; /* normalised, non-negative */
    for (int i = 0; i < 4; i++)
      *w++ = (unsigned char)(d >> (8 * i));
  }
  *n = size;
  return GA_OK;
}

int ga_vstate_decode(const void *blob, int64_t n, ga_var_partial *out,
                     const char **err) {
  const unsigned char *p = blob;
  ga_var_init(out);
  if (!p || n < 8 || memcmp(p, "GAST", 4) || p[4] != GA_STATE_VERSION ||
      p[5] != GA_STATE_VAR) {
    /* state.c names what it is: no state, a newer version, another kind */
    ga_xstate x;
    *err = NULL;
    if (ga_state_decode(blob, n, GA_STATE_VAR, &x, err) == GA_OK)
      ga_xstate_clear(&x); /* not reached: the header differs */
    if (!*err)
      *err = n < 8 ? "truncated state" : "not a gpuagg state";
    return GA_BADSTATE;
  }
  *err = NULL;
  if (p[6] || p[7]) {
    *err = "malformed state (reserved header bytes)";
    return GA_BADSTATE;
  }
  int64_t used = ga_state_sum_section_read(p + 8, n - 8, &out->sum, err);
  if (used < 0)
    return GA_BADSTATE;
  const unsigned char *r = p + 8 + used;
  int64_t left = n - 8 - used;
  if (left < 2) {
    *err = "truncated state";
    return GA_BADSTATE;
  }
  unsigned lo = r[0], nd = r[1];
  r += 2, left -= 2;
  if (lo + nd > NSQ || (nd == 0 && lo)) {
    *err = "malformed state (digit range)";
    return GA_BADSTATE;
  }
  if (left < 4 * (int64_t)nd) {
    *err = "truncated state";
    return GA_BADSTATE;
  }
  if (left > 4 * (int64_t)nd) {
    *err = "malformed state (trailing bytes)";
    return GA_BADSTATE;
  }
  for (unsigned k = 0; k < nd; k++, r += 4)
    out->sq[lo + k] = (int64_t)((uint32_t)r[0] | (uint32_t)r[1] << 8 |
                                (uint32_t)r[2] << 16 | (uint32_t)r[3] << 24);
  if (nd && (out->sq[lo] == 0 || out->sq[lo + nd - 1] == 0)) {
    *err = "malformed state (digits not canonical)";
    return GA_BADSTATE;
  }
  /* Σx² < n 2^2048: the bits from 2^2048 (bit 4196 = digit 131, bit 4) up,
  ** as an integer, below n (each x² < 2^2048, int64² < 2^127) */
  if (nd && !ga_var_bounded(out)) {
    *err = "malformed state (sum of squares too large for its count)";
    return GA_BADSTATE;
  }
  if (!ga_var_consistent(out)) {
    *err = "malformed state (sum of squares below (sum)^2 / n)";
    return GA_BADSTATE;
  }
  return GA_OK;
}
