/*
** bestval.c — see bestval.h.
*/
#include "bestval.h"

#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "ga_partial.h"
#include "xacc.h"

static int rank(int type) {
  return type == GA_V_NULL ? 0 : type <= GA_V_REAL ? 1 : type - 1;
}

int ga_value_cmp(const ga_value *a, const ga_value *b) {
  int ra = rank(a->type), rb = rank(b->type);
  if (ra != rb)
    return ra < rb ? -1 : 1;
  if (ra == 0)
    return 0;
  if (ra == 1) {
    int ka = a->type == GA_V_INT ? GA_KIND_INT : GA_KIND_REAL;
    int kb = b->type == GA_V_INT ? GA_KIND_INT : GA_KIND_REAL;
    return ga_num_cmp(ka, ka == GA_KIND_INT ? a->i : ga_dbits(a->r), kb,
                      kb == GA_KIND_INT ? b->i : ga_dbits(b->r));
  }
  int n = a->n < b->n ? a->n : b->n;
  int c = n ? memcmp(a->p, b->p, (size_t)n) : 0;
  if (c)
    return c < 0 ? -1 : 1;
  return (a->n > b->n) - (a->n < b->n);
}

void ga_bval_clear(ga_bval *b) {
  sqlite3_free(b->p);
  memset(b, 0, sizeof(*b));
}

int ga_bval_set(ga_bval *dst, const ga_value *src) {
  void *p = NULL;
  if ((src->type == GA_V_TEXT || src->type == GA_V_BLOB) &&
      src->n <= GA_BVAL_INLINE) {
    char small[GA_BVAL_INLINE + 1] = {0}; /* src may be dst's own bytes */
    if (src->n)
      memcpy(small, src->p, (size_t)src->n);
    sqlite3_free(dst->p);
    dst->type = src->type;
    dst->n = src->n;
    memcpy(dst->small, small, sizeof(small));
    dst->p = NULL;
    return GA_OK;
  }
  if (src->type == GA_V_TEXT || src->type == GA_V_BLOB) {
    p = sqlite3_malloc64((uint64_t)src->n + 1);
    if (!p)
      return GA_NOMEM;
    if (src->n)
      memcpy(p, src->p, (size_t)src->n);
    ((char *)p)[src->n] = 0;
  }
  sqlite3_free(dst->p);
  dst->type = src->type;
  dst->n = src->n;
  dst->i = src->i;
  dst->r = src->r;
  dst->p = p;
  return GA_OK;
}

static ga_bval *at(const ga_deque *d, int64_t k) {
  return &d->v[(d->head + k) % d->cap];
}

int ga_deque_push(ga_deque *d, const ga_value *x, int want_min) {
  ga_value back;
  while (d->len > 0) {
    ga_bval_view(at(d, d->len - 1), &back);
    int c = ga_value_cmp(x, &back);
    if (want_min ? c >= 0 : c <= 0)
      break; /* back is not strictly worse */
    ga_bval_clear(at(d, d->len - 1));
    d->len--;
  }
  if (d->len == d->cap) {
    int64_t ncap = d->cap ? 2 * d->cap : 16;
    ga_bval *nv = sqlite3_malloc64((uint64_t)ncap * sizeof(ga_bval));
    if (!nv)
      return GA_NOMEM;
    for (int64_t k = 0; k < d->len; k++)
      nv[k] = *at(d, k);
    sqlite3_free(d->v);
    d->v = nv;
    d->cap = ncap;
    d->head = 0;
  }
  ga_bval *slot = at(d, d->len);
  memset(slot, 0, sizeof(*slot));
  if (ga_bval_set(slot, x))
    return GA_NOMEM;
  d->len++;
  return GA_OK;
}

void ga_deque_leave(ga_deque *d, const ga_value *x) {
  ga_value front;
  if (d->len == 0 || x->type == GA_V_NULL)
    return;
  ga_bval_view(at(d, 0), &front);
  if (ga_value_cmp(x, &front) != 0)
    return;
  ga_bval_clear(at(d, 0));
  d->head = (d->head + 1) % d->cap;
  d->len--;
}

const ga_bval *ga_deque_front(const ga_deque *d) {
  return d->len ? at(d, 0) : NULL;
}

void ga_deque_free(ga_deque *d) {
  for (int64_t k = 0; k < d->len; k++)
    ga_bval_clear(at(d, k));
  sqlite3_free(d->v);
  memset(d, 0, sizeof(*d));
}
