/*
** idrows.c — rows tagged with a group id, sorted stably by id (idrows.h).
*/
#include "idrows.h"

#include <string.h>

#include "bigmem.h"

#include "sqlite3ext.h"
#include "value.h"
SQLITE_EXTENSION_INIT3

void ga_idrows_init(ga_idrows *r, int nvals, int64_t most) {
  memset(r, 0, sizeof(*r));
  r->stride = 1 + nvals;
  int64_t room = GA_IDR_MAX_BYTES / (r->stride * (int64_t)sizeof(uint64_t));
  r->most = most < room ? most : room;
}

void ga_idrows_free(ga_idrows *r) {
  ga_big_free(r->rec, r->bytes);
  r->rec = NULL;
  r->n = r->cap = 0;
  r->bytes = 0;
}

int ga_idrows_reserve(ga_idrows *r) {
  if (r->n < r->cap)
    return GA_OK;
  if (r->rec || r->most < 1)
    return GA_IDR_FULL; /* rule 3 */
  size_t bytes = sizeof(uint64_t) * (size_t)(r->most * r->stride);
  r->rec = ga_big_alloc(bytes);
  if (!r->rec)
    return GA_NOMEM;
  r->bytes = bytes;
  r->cap = r->most;
  return GA_OK;
}

/* One pass of rule 2: records of src by the digit at `shift`, into dst. */
static void pass(const uint64_t *src, uint64_t *dst, int64_t n, int stride,
                 int shift, int64_t *count) {
  int64_t nb = (int64_t)1 << GA_IDR_BITS, mask = nb - 1;
  memset(count, 0, sizeof(int64_t) * (size_t)nb);
  for (int64_t i = 0; i < n; i++)
    count[((uint32_t)src[i * stride] >> shift) & mask]++;
  int64_t at = 0;
  for (int64_t d = 0; d < nb; d++) {
    int64_t c = count[d];
    count[d] = at;
    at += c;
  }
  for (int64_t i = 0; i < n; i++) {
    const uint64_t *s = src + i * stride;
    uint64_t *t = dst + count[((uint32_t)s[0] >> shift) & mask]++ * stride;
    for (int k = 0; k < stride; k++)
      t[k] = s[k];
  }
}

int ga_idrows_sort(ga_idrows *r, int64_t ids) {
  if (r->n < 2 || ids <= 1)
    return GA_OK;
  int passes = 0;
  while (passes * GA_IDR_BITS < 32 && (ids - 1) >> (passes * GA_IDR_BITS))
    passes++;
  size_t bytes = sizeof(uint64_t) * (size_t)(r->n * r->stride);
  uint64_t *tmp = ga_big_alloc(bytes);
  int64_t *count =
      sqlite3_malloc64(sizeof(int64_t) * ((size_t)1 << GA_IDR_BITS));
  if (!tmp || !count) {
    ga_big_free(tmp, bytes);
    sqlite3_free(count);
    return GA_NOMEM;
  }
  uint64_t *a = r->rec, *b = tmp;
  for (int p = 0; p < passes; p++) {
    pass(a, b, r->n, r->stride, p * GA_IDR_BITS, count);
    uint64_t *x = a;
    a = b;
    b = x;
  }
  if (a != r->rec) { /* the sorted records are in tmp: keep that buffer */
    ga_big_free(r->rec, r->bytes);
    r->rec = a;
    r->bytes = bytes;
    r->cap = r->n;
  } else {
    ga_big_free(tmp, bytes);
  }
  sqlite3_free(count);
  return GA_OK;
}

int64_t ga_idrows_lower(const ga_idrows *r, int64_t id) {
  int64_t lo = 0, hi = r->n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if ((int64_t)ga_idrows_id(r, mid) < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}
