/*
** dict.c — TEXT dictionaries of the column cache (dict.h).
**
** Both kinds hold a set: the values back to back in one byte array, per id
** its offset, length and hash, and open-addressed slots of ids (linear
** probing, at most 3/4 full) that find a value by its hash and bytes.  A
** load's dictionary adds a mutex, and once sealed the ids in code order
** (sorted) and each id's code (rank).
*/
#include "dict.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "value.h"

typedef struct dset {
  char *bytes;
  size_t nbytes, capbytes;
  int64_t *off;
  int32_t *len;
  uint64_t *hash;
  uint32_t n, capn;
  uint32_t *slot;           /* id + 1; 0: empty */
  size_t cap;               /* slots: a power of 2 */
  ga_dict_charge_fn charge; /* rule 6, or NULL */
  void *charge_arg;
  int64_t charged; /* bytes granted by charge, net */
} dset;

struct ga_dict_local {
  dset s;
};

struct ga_dict {
  dset s;
  pthread_mutex_t mu;
  int sealed;
  uint32_t *sorted; /* code -> id */
  uint32_t *rank;   /* id -> code */
};

int ga_dict_cmp(const void *a, int na, const void *b, int nb) {
  int m = na < nb ? na : nb;
  int c = m > 0 ? memcmp(a, b, (size_t)m) : 0;
  return c ? c : na - nb;
}

/* 64-bit hash of n bytes: 8 at a time, multiplied and mixed. */
static uint64_t dhash(const unsigned char *p, int n) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  uint64_t w = 0;
  if (n > i)
    memcpy(&w, p + i, (size_t)(n - i));
  h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 29;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

static void dset_free(dset *s) {
  sqlite3_free(s->bytes);
  sqlite3_free(s->off);
  sqlite3_free(s->len);
  sqlite3_free(s->hash);
  sqlite3_free(s->slot);
  memset(s, 0, sizeof(*s));
}

static int64_t dset_bytes(const dset *s) {
  return (int64_t)s->capbytes +
         (int64_t)s->capn *
             (int64_t)(sizeof(int64_t) + sizeof(int32_t) + sizeof(uint64_t)) +
         (int64_t)s->cap * (int64_t)sizeof(uint32_t);
}

/* Rule 6: ask for more bytes before allocating them.  GA_OK or
** GA_DICT_BUDGET. */
static int charge(dset *s, int64_t more) {
  if (!s->charge || more <= 0)
    return GA_OK;
  if (s->charge(s->charge_arg, more))
    return GA_DICT_BUDGET;
  s->charged += more;
  return GA_OK;
}

/* An allocation charged for failed: the bytes go back. */
static void uncharge(dset *s, int64_t less) {
  if (!s->charge || less <= 0)
    return;
  s->charge(s->charge_arg, -less);
  s->charged -= less;
}

static int grow_slots(dset *s) {
  size_t cap = s->cap ? s->cap * 2 : 1024;
  int64_t more = (int64_t)((cap - s->cap) * sizeof(uint32_t));
  if (charge(s, more))
    return GA_DICT_BUDGET;
  uint32_t *slot = sqlite3_malloc64(cap * sizeof(uint32_t));
  if (!slot) {
    uncharge(s, more);
    return GA_NOMEM;
  }
  memset(slot, 0, cap * sizeof(uint32_t));
  for (uint32_t id = 0; id < s->n; id++) {
    size_t j = (size_t)s->hash[id] & (cap - 1);
    while (slot[j])
      j = (j + 1) & (cap - 1);
    slot[j] = id + 1;
  }
  sqlite3_free(s->slot);
  s->slot = slot;
  s->cap = cap;
  return GA_OK;
}

static int grow_ids(dset *s) {
  uint32_t capn = s->capn ? s->capn * 2 : 1024;
  if ((int64_t)capn > GA_DICT_MAX + 1)
    capn = (uint32_t)(GA_DICT_MAX + 1);
  int64_t more =
      (int64_t)(capn - s->capn) *
      (int64_t)(sizeof(int64_t) + sizeof(int32_t) + sizeof(uint64_t));
  if (charge(s, more))
    return GA_DICT_BUDGET;
  int64_t *off = sqlite3_realloc64(s->off, capn * sizeof(int64_t));
  if (off)
    s->off = off;
  int32_t *len = sqlite3_realloc64(s->len, capn * sizeof(int32_t));
  if (len)
    s->len = len;
  uint64_t *hash = sqlite3_realloc64(s->hash, capn * sizeof(uint64_t));
  if (hash)
    s->hash = hash;
  if (!off || !len || !hash) {
    uncharge(s, more); /* capn stays: the arrays that grew are unused */
    return GA_NOMEM;
  }
  s->capn = capn;
  return GA_OK;
}

/* The id of (p, n, h) in s, added when new.  GA_OK, GA_NOMEM, FULL. */
static int dset_intern(dset *s, const void *p, int n, uint64_t h,
                       uint32_t *id) {
  if ((s->n + 1) * (size_t)4 > s->cap * 3) {
    int rc = grow_slots(s);
    if (rc)
      return rc;
  }
  size_t j = (size_t)h & (s->cap - 1);
  for (; s->slot[j]; j = (j + 1) & (s->cap - 1)) {
    uint32_t k = s->slot[j] - 1;
    if (s->hash[k] == h && s->len[k] == n &&
        (n == 0 || !memcmp(s->bytes + s->off[k], p, (size_t)n))) {
      *id = k;
      return GA_OK;
    }
  }
  if ((int64_t)s->n >= GA_DICT_MAX)
    return GA_DICT_FULL;
  if (s->n == s->capn) {
    int rc = grow_ids(s);
    if (rc)
      return rc;
  }
  if (!s->bytes || s->nbytes + (size_t)n > s->capbytes) {
    size_t cap = s->capbytes ? s->capbytes * 2 : 4096;
    while (cap < s->nbytes + (size_t)n)
      cap *= 2;
    int64_t more = (int64_t)(cap - s->capbytes);
    if (charge(s, more))
      return GA_DICT_BUDGET;
    char *b = sqlite3_realloc64(s->bytes, cap);
    if (!b) {
      uncharge(s, more);
      return GA_NOMEM;
    }
    s->bytes = b;
    s->capbytes = cap;
  }
  if (n)
    memcpy(s->bytes + s->nbytes, p, (size_t)n);
  s->off[s->n] = (int64_t)s->nbytes;
  s->len[s->n] = n;
  s->hash[s->n] = h;
  s->nbytes += (size_t)n;
  s->slot[j] = s->n + 1;
  *id = s->n++;
  return GA_OK;
}

/* ---- one thread's ---- */

ga_dict_local *ga_dict_local_new(void) {
  ga_dict_local *l = sqlite3_malloc64(sizeof(*l));
  if (l)
    memset(l, 0, sizeof(*l));
  return l;
}

void ga_dict_local_free(ga_dict_local *l) {
  if (!l)
    return;
  dset_free(&l->s);
  sqlite3_free(l);
}

int ga_dict_local_intern(ga_dict_local *l, const void *p, int n, uint32_t *id) {
  return dset_intern(&l->s, p, n, dhash(p, n), id);
}

uint32_t ga_dict_local_count(const ga_dict_local *l) { return l->s.n; }

void ga_dict_local_clear(ga_dict_local *l) {
  dset *s = &l->s;
  s->n = 0;
  s->nbytes = 0;
  if (s->slot)
    memset(s->slot, 0, s->cap * sizeof(uint32_t));
}

int64_t ga_dict_local_bytes(const ga_dict_local *l) {
  return (int64_t)sizeof(*l) + dset_bytes(&l->s);
}

void ga_dict_local_charge(ga_dict_local *l, ga_dict_charge_fn fn, void *arg) {
  l->s.charge = fn;
  l->s.charge_arg = arg;
}

int64_t ga_dict_local_charged(const ga_dict_local *l) { return l->s.charged; }

/* ---- a load's ---- */

ga_dict *ga_dict_new(void) {
  ga_dict *d = sqlite3_malloc64(sizeof(*d));
  if (!d)
    return NULL;
  memset(d, 0, sizeof(*d));
  pthread_mutex_init(&d->mu, NULL);
  return d;
}

void ga_dict_free(ga_dict *d) {
  if (!d)
    return;
  dset_free(&d->s);
  sqlite3_free(d->sorted);
  sqlite3_free(d->rank);
  pthread_mutex_destroy(&d->mu);
  sqlite3_free(d);
}

int ga_dict_merge(ga_dict *d, const ga_dict_local *l, uint32_t *map) {
  const dset *ls = &l->s;
  int rc = GA_OK;
  pthread_mutex_lock(&d->mu);
  for (uint32_t i = 0; i < ls->n && rc == GA_OK; i++)
    rc = dset_intern(&d->s, ls->bytes + ls->off[i], ls->len[i], ls->hash[i],
                     &map[i]);
  pthread_mutex_unlock(&d->mu);
  return rc;
}

/* qsort has no context argument in C11: the set being sorted travels in a
** thread-local (two loads may seal at once). */
static _Thread_local const dset *sort_set;

static int by_value(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  const dset *s = sort_set;
  return ga_dict_cmp(s->bytes + s->off[a], s->len[a], s->bytes + s->off[b],
                     s->len[b]);
}

int ga_dict_seal(ga_dict *d) {
  if (d->sealed)
    return GA_OK;
  uint32_t n = d->s.n;
  d->sorted = sqlite3_malloc64(((size_t)n + 1) * sizeof(uint32_t));
  d->rank = sqlite3_malloc64(((size_t)n + 1) * sizeof(uint32_t));
  if (!d->sorted || !d->rank)
    return GA_NOMEM;
  for (uint32_t i = 0; i < n; i++)
    d->sorted[i] = i;
  sort_set = &d->s;
  qsort(d->sorted, n, sizeof(uint32_t), by_value);
  for (uint32_t c = 0; c < n; c++)
    d->rank[d->sorted[c]] = c;
  d->sealed = 1;
  return GA_OK;
}

int64_t ga_dict_count(const ga_dict *d) { return d->s.n; }

uint32_t ga_dict_code(const ga_dict *d, uint32_t id) { return d->rank[id]; }

void ga_dict_value(const ga_dict *d, uint32_t code, const void **p, int *n) {
  uint32_t id = d->sorted[code];
  *p = d->s.bytes + d->s.off[id];
  *n = d->s.len[id];
}

int64_t ga_dict_find(const ga_dict *d, const void *p, int n, int *found) {
  int64_t lo = 0, hi = d->s.n; /* the answer is in [lo, hi] */
  *found = 0;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    const void *v;
    int nv;
    ga_dict_value(d, (uint32_t)mid, &v, &nv);
    int c = ga_dict_cmp(v, nv, p, n);
    if (c < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
      if (c == 0)
        *found = 1;
    }
  }
  return lo;
}

int64_t ga_dict_bytes(const ga_dict *d) {
  return (int64_t)sizeof(*d) + dset_bytes(&d->s) +
         (d->sorted ? 2 * ((int64_t)d->s.n + 1) * (int64_t)sizeof(uint32_t)
                    : 0);
}

void ga_dict_charge(ga_dict *d, ga_dict_charge_fn fn, void *arg) {
  d->s.charge = fn;
  d->s.charge_arg = arg;
}

int64_t ga_dict_charged(const ga_dict *d) { return d->s.charged; }
