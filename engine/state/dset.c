/*
** dset.c — see dset.h.
*/
#include "dset.h"

#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

static int64_t text_of(const ga_bval *b) { return b->p ? b->n : 0; }

static _Thread_local ga_dset_poll *tl_poll; /* rule 5 */

ga_dset_poll *ga_dset_poll_swap(ga_dset_poll *p) {
  ga_dset_poll *was = tl_poll;
  tl_poll = p;
  return was;
}

int ga_dset_stop_at(size_t i) {
  ga_dset_poll *p = tl_poll;
  if (!p || !p->stop ||
      (i & (GA_DSET_POLL_EVERY - 1)) != GA_DSET_POLL_EVERY - 1)
    return 0;
  p->polls++;
  return p->stop(p->arg) != 0;
}

/* A slot's stored hash: never 0, which marks an empty slot. */
static uint64_t slot_hash(uint64_t h) { return h | 1; }

static int dset_grow(ga_dset *s) {
  size_t cap = s->cap ? s->cap * 2 : 8;
  ga_dent *e = sqlite3_malloc64((sizeof(ga_dent) + sizeof(uint64_t)) * cap);
  if (!e)
    return GA_NOMEM;
  uint64_t *hs = (uint64_t *)(e + cap);
  memset(e, 0, (sizeof(ga_dent) + sizeof(uint64_t)) * cap); /* all empty */
  for (size_t i = 0; i < s->cap; i++) {
    if (!s->hs[i])
      continue;
    size_t j = (size_t)s->hs[i] & (cap - 1);
    while (hs[j])
      j = (j + 1) & (cap - 1);
    e[j] = s->e[i]; /* a bval moves as it is: its bytes are inline or p */
    hs[j] = s->hs[i];
  }
  sqlite3_free(s->e);
  s->e = e;
  s->hs = hs;
  s->cap = cap;
  return GA_OK;
}

/* The slot of raw (hash h): its entry's, or the empty one to fill. */
static size_t dset_find(const ga_dset *s, const ga_value *raw, uint64_t h) {
  uint64_t sh = slot_hash(h);
  size_t j = (size_t)sh & (s->cap - 1);
  for (;;) {
    uint64_t x = s->hs[j];
    if (!x)
      return j;
    if (x == sh) {
      const ga_dent *e = &s->e[j];
      int same;
      if (raw->type == GA_V_INT && e->raw.type == GA_V_INT) /* the usual */
        same = e->raw.i == raw->i;
      else {
        ga_value v;
        ga_bval_view(&e->raw, &v);
        same = s->eq(&v, raw, s->coll);
      }
      if (same)
        return j;
    }
    j = (j + 1) & (s->cap - 1);
  }
}

/* Slot j (empty, or the entry to replace) := raw of tag; num unset (INT
** 0). */
static int dset_put(ga_dset *s, size_t j, const ga_value *raw, uint64_t h,
                    int64_t tag) {
  ga_dent *e = &s->e[j];
  ga_bval b;
  memset(&b, 0, sizeof(b));
  if (ga_bval_set(&b, raw))
    return GA_NOMEM;
  if (!s->hs[j]) {
    s->n++;
  } else {
    s->text_bytes -= text_of(&e->raw);
    ga_bval_clear(&e->raw);
  }
  e->raw = b;
  s->text_bytes += text_of(&e->raw);
  s->hs[j] = slot_hash(h);
  e->tag = tag;
  e->num_type = GA_V_INT;
  e->num_i = 0;
  return GA_OK;
}

#define GA_COLL_NONE_PCT 0 /* rule 6: no collation, no eq */

static ga_dset *dset_new(int coll, ga_dset_eq_fn eq) {
  ga_dset *s = sqlite3_malloc64(sizeof(*s));
  if (s) {
    memset(s, 0, sizeof(*s));
    s->coll = coll;
    s->eq = eq;
  }
  return s;
}

int ga_dset_add(ga_dset **ps, int coll, ga_dset_eq_fn eq, const ga_value *raw,
                uint64_t h, int64_t tag, ga_dent **slot) {
  if (slot)
    *slot = NULL;
  if (!*ps && !(*ps = dset_new(coll, eq)))
    return GA_NOMEM;
  ga_dset *s = *ps;
  if ((s->n + 1) * 4 > s->cap * 3 && dset_grow(s))
    return GA_NOMEM;
  size_t j = dset_find(s, raw, h);
  if (s->hs[j] && s->e[j].tag <= tag)
    return GA_OK; /* the first in rowid order stays (rule 2) */
  if (dset_put(s, j, raw, h, tag))
    return GA_NOMEM;
  if (slot)
    *slot = &s->e[j];
  return GA_OK;
}

void ga_dset_set_num(ga_dent *e, const ga_value *num) {
  if (num->type == GA_V_INT) {
    e->num_type = GA_V_INT;
    e->num_i = num->i;
  } else {
    e->num_type = GA_V_REAL;
    memcpy(&e->num_i, &num->r, sizeof(double));
  }
}

int ga_dset_pct_push(ga_dset **ps, double y) {
  if (!*ps && !(*ps = dset_new(GA_COLL_NONE_PCT, NULL)))
    return GA_NOMEM;
  return ga_pct_push(&(*ps)->pct, y);
}

int ga_dset_merge(ga_dset **into, const ga_dset *later) {
  if (later && later->pct.n) { /* rule 6 */
    if (later->pct.at || (*into && (*into)->pct.at))
      return GA_PCT_BAD; /* rule 6: a selection made elsewhere never merges */
    if (!*into && !(*into = dset_new(GA_COLL_NONE_PCT, NULL)))
      return GA_NOMEM;
    ga_pct *d = &(*into)->pct;
    if (d->n + later->pct.n > d->cap) {
      size_t want = d->n + later->pct.n;
      double *v = realloc(d->v, want * sizeof(double));
      if (!v)
        return GA_NOMEM;
      d->v = v;
      d->cap = want;
    }
    memcpy(d->v + d->n, later->pct.v, later->pct.n * sizeof(double));
    d->n += later->pct.n;
  }
  if (!later || !later->n)
    return GA_OK;
  for (size_t i = 0; i < later->cap; i++) {
    if (ga_dset_stop_at(i)) /* rule 5 */
      return GA_INTERRUPTED;
    const ga_dent *f = &later->e[i];
    if (f->raw.type == GA_V_NULL)
      continue;
    ga_value v;
    ga_dent *e;
    ga_bval_view(&f->raw, &v);
    if (ga_dset_add(into, later->coll, later->eq, &v, later->hs[i], f->tag, &e))
      return GA_NOMEM;
    if (e) {
      e->num_type = f->num_type;
      e->num_i = f->num_i;
    }
  }
  return GA_OK;
}

int64_t ga_dset_bytes(const ga_dset *s) {
  return s ? (int64_t)sizeof(*s) + (int64_t)s->cap * GA_DSET_ENTRY_BYTES +
                 s->text_bytes +
                 (int64_t)s->pct.cap * GA_PCT_VALUE_BYTES /* rule 6 */
                 + (s->pct.at ? (int64_t)(s->pct.cap * sizeof(size_t)) : 0)
           : 0;
}

void ga_dset_free(ga_dset *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->cap; i++)
    if (s->e[i].raw.type != GA_V_NULL)
      ga_bval_clear(&s->e[i].raw);
  sqlite3_free(s->e);
  ga_pct_free(&s->pct);
  sqlite3_free(s);
}
