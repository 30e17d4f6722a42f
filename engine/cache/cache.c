/*
** cache.c — the column cache's entries, budget and eviction (cache.h).
**
** Rules:
**   1. c->used is the sum of the bytes of every entry plus what a load under
**      way holds; it is changed only under c->mu.
**   2. Eviction takes the least recently used entry (loaded or answered
**      longest ago), stale entries before current ones, and never the entry
**      being loaded or refreshed.
**   3. Freeing an entry frees everything it holds (host blocks, device
**      arrays, dictionaries, the mapping of a cache file: after the blocks
**      that point into it, cache_file.h rule 5); the device query scratch
**      goes with the last GPU entry.
**   4. The device side is cache_gpu.c's: an entry's device arrays and the
**      cache's stream and scratch are freed through the hooks it sets with
**      them (ga_centry.free_dev, ga_cache.release_dev), so this file calls
**      nothing of the GPU side and the dependency runs one way
**      (cache_gpu.c reads the entry).
*/
#include "cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

/* ---- blocks ---- */

ga_cblock *ga_cb_new(int ncols, int64_t cap, int pinned) {
  if (cap < 1)
    cap = 1;
  size_t words = (size_t)ncols * (size_t)cap +
                 (size_t)ncols * 2 * (size_t)GA_BW(cap) +
                 (pinned ? (size_t)ncols * 2 * ((size_t)GA_BW(cap) + 2) : 0);
  ga_cblock *b = sqlite3_malloc64(sizeof(*b));
  if (!b)
    return NULL;
  memset(b, 0, sizeof(*b));
  b->ncols = ncols;
  b->cap = cap;
  b->pinned = pinned;
  b->bytes = (int64_t)(words * 8);
  b->mem = pinned ? ga_gpu_host_alloc(words * 8) : sqlite3_malloc64(words * 8);
  if (!b->mem) {
    sqlite3_free(b);
    return NULL;
  }
  /* the bitmaps are set bit by bit */
  memset(ga_cb_isint(b, 0), 0, (size_t)ncols * 2 * (size_t)GA_BW(cap) * 8);
  return b;
}

void ga_cb_free(ga_cblock *b) {
  if (!b)
    return;
  if (b->mapped)
    ; /* its entry's mapping (cache_file.h rule 5) */
  else if (b->pinned)
    ga_gpu_host_free(b->mem);
  else
    sqlite3_free(b->mem);
  sqlite3_free(b);
}

/* ---- the cache ---- */

ga_cache *ga_cache_new(void) {
  ga_cache *c = sqlite3_malloc64(sizeof(*c));
  if (!c)
    return NULL;
  memset(c, 0, sizeof(*c));
  pthread_mutex_init(&c->mu, NULL);
  c->dev = -1;
  return c;
}

void ga_centry_free(ga_centry *e) {
  if (!e)
    return;
  if (e->where == GA_CACHE_GPU && e->free_dev) /* rule 4 */
    e->free_dev(e);
  for (int64_t i = 0; i < e->nsegs; i++)
    ga_cb_free(e->segs[i]);
  sqlite3_free(e->segs);
  sqlite3_free(e->seg_base);
  if (e->free_map) /* after the blocks that point into it */
    e->free_map(e);
  for (int k = 0; k < e->ncols && e->cols; k++) {
    sqlite3_free(e->cols[k].name);
    ga_dict_free(e->cols[k].dict);
  }
  sqlite3_free(e->cols);
  sqlite3_free(e->schema);
  sqlite3_free(e->table);
  sqlite3_free(e->stamp.file);
  sqlite3_free(e->auth_sig);
  sqlite3_close(e->watch);
  sqlite3_free(e);
}

/* Rule 4: the stream and the scratch, where the GPU side took them. */
static void release_dev(ga_cache *c) {
  if (c->release_dev)
    c->release_dev(c);
}

static int any_gpu_entry(const ga_cache *c) {
  for (const ga_centry *e = c->entries; e; e = e->next)
    if (e->where == GA_CACHE_GPU)
      return 1;
  return 0;
}

/* Unlink e (under c->mu); the caller frees it. */
static void unlink_entry(ga_cache *c, ga_centry *e) {
  for (ga_centry **pp = &c->entries; *pp; pp = &(*pp)->next)
    if (*pp == e) {
      *pp = e->next;
      c->used -= e->bytes;
      e->next = NULL;
      return;
    }
}

void ga_cache_drop(ga_cache *c, ga_centry *e) {
  pthread_mutex_lock(&c->mu);
  unlink_entry(c, e);
  int gpu_left = any_gpu_entry(c);
  pthread_mutex_unlock(&c->mu);
  ga_centry_free(e);
  if (!gpu_left)
    release_dev(c);
}

void ga_cache_drop_all(ga_cache *c) {
  while (c->entries)
    ga_cache_drop(c, c->entries);
}

void ga_cache_free(ga_cache *c) {
  if (!c)
    return;
  ga_cache_drop_all(c);
  release_dev(c);
  for (int i = 0; i < c->npools; i++)
    ga_scan_pool_unref(c->pools[i]);
  sqlite3_free(c->pools);
  pthread_mutex_destroy(&c->mu);
  sqlite3_free(c);
}

void ga_cache_unlink(ga_cache *c, ga_centry *e) {
  pthread_mutex_lock(&c->mu);
  unlink_entry(c, e);
  pthread_mutex_unlock(&c->mu);
}

void ga_cache_relink(ga_cache *c, ga_centry *e) {
  pthread_mutex_lock(&c->mu);
  e->next = c->entries;
  c->entries = e;
  c->used += e->bytes;
  pthread_mutex_unlock(&c->mu);
}

void ga_cache_free_unlinked(ga_cache *c, ga_centry *e) {
  pthread_mutex_lock(&c->mu);
  int gpu_left = any_gpu_entry(c);
  pthread_mutex_unlock(&c->mu);
  ga_centry_free(e);
  if (!gpu_left)
    release_dev(c);
}

ga_centry *ga_cache_find(ga_cache *c, const char *schema, const char *table) {
  for (ga_centry *e = c->entries; e; e = e->next)
    if (!sqlite3_stricmp(e->schema, schema) &&
        !sqlite3_stricmp(e->table, table))
      return e;
  return NULL;
}

int64_t ga_cache_touch(ga_cache *c) {
  return __atomic_add_fetch(&c->tick, 1, __ATOMIC_RELAXED);
}

/* The eviction victim (rule 2), or NULL. */
static ga_centry *victim(ga_cache *c, const ga_centry *keep) {
  ga_centry *best = NULL;
  for (ga_centry *e = c->entries; e; e = e->next) {
    if (e == keep)
      continue;
    if (!best || (e->stale && !best->stale) ||
        (e->stale == best->stale && e->lru < best->lru))
      best = e;
  }
  return best;
}

int ga_cache_reserve(ga_cache *c, int64_t budget, int64_t more,
                     const ga_centry *keep) {
  for (;;) {
    pthread_mutex_lock(&c->mu);
    if (c->used + more <= budget) {
      c->used += more;
      pthread_mutex_unlock(&c->mu);
      return 1;
    }
    ga_centry *v = victim(c, keep);
    if (!v) {
      pthread_mutex_unlock(&c->mu);
      return 0;
    }
    unlink_entry(c, v);
    pthread_mutex_unlock(&c->mu);
    ga_centry_free(v); /* device frees outside the mutex */
  }
}

void ga_cache_fit(ga_cache *c, int64_t budget) {
  for (;;) {
    pthread_mutex_lock(&c->mu);
    ga_centry *v = c->used > budget ? victim(c, NULL) : NULL;
    if (v)
      unlink_entry(c, v);
    int gpu_left = any_gpu_entry(c);
    pthread_mutex_unlock(&c->mu);
    if (!v) {
      if (!gpu_left)
        release_dev(c);
      return;
    }
    ga_centry_free(v);
  }
}

/* ---- where and how much ---- */

int ga_cache_where(const ga_config *cfg) {
  if (cfg->device == GA_DEVICE_CPU)
    return GA_CACHE_HOST;
  return ga_gpu_ndev(cfg) > 0 ? GA_CACHE_GPU : GA_CACHE_HOST;
}

int64_t ga_cache_budget(const ga_config *cfg, int where) {
  if (cfg->cache_bytes > 0)
    return cfg->cache_bytes;
  if (where == GA_CACHE_GPU)
    return (int64_t)(ga_gpu_dev_mem(0) / 4);
  long pages = sysconf(_SC_PHYS_PAGES), ps = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || ps <= 0)
    return (int64_t)1 << 30;
  return (int64_t)pages * ps / 4;
}

void ga_cquery_free(ga_cquery *q) {
  sqlite3_free(q->prog);
  q->prog = NULL;
  if (q->env) {
    for (int i = 0; i < q->env->nmaps; i++) {
      sqlite3_free(q->env->maps[i].v);
      sqlite3_free(q->env->maps[i].type);
    }
    sqlite3_free(q->env->maps);
    sqlite3_free(q->env);
    q->env = NULL;
  }
  for (int i = 0; i < q->nowned; i++)
    ga_dict_free(q->owned[i]);
  sqlite3_free(q->owned);
  q->owned = NULL;
  q->nowned = 0;
}

int ga_cache_decode_keys(const ga_centry *e, const ga_cquery *q,
                         ga_scan_out *out) {
  out->enc = e->enc;
  for (int k = 0; k < q->nkeys + q->ncarry; k++) {
    const ga_dict *d = q->kdict[k];
    for (size_t i = 0; d && i < out->n; i++) {
      ga_bval *b = &out->sorted[i]->key[k];
      ga_value v;
      ga_bval_view(b, &v);
      if (v.type != GA_V_INT)
        continue; /* NULL */
      ga_value t = {0};
      t.type = GA_V_TEXT;
      ga_dict_value(d, (uint32_t)v.i, &t.p, &t.n);
      if (ga_bval_set(b, &t))
        return GA_NOMEM;
    }
  }
  for (int i = 0; i < q->nvals; i++) {
    const ga_dict *d = q->vdict[i];
    for (size_t g = 0; d && g < out->n; g++) {
      ga_gstate *st = &out->sorted[g]->st[i];
      ga_bval *b[2] = {&st->max, &st->min};
      st->enc = e->enc;
      for (int j = 0; j < 2; j++) {
        ga_value v;
        ga_bval_view(b[j], &v);
        if (v.type != GA_V_INT)
          continue; /* no value */
        ga_value t = {0};
        t.type = GA_V_TEXT;
        ga_dict_value(d, (uint32_t)v.i, &t.p, &t.n);
        if (ga_bval_set(b[j], &t))
          return GA_NOMEM;
      }
    }
  }
  return GA_OK;
}

double ga_cache_prof_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

void ga_cache_prof(const char *who, const char *what, double *t0) {
  static int on = -1; /* connections of several threads read it */
  int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
  if (v < 0) {
    const char *z = getenv("GPUAGG_CACHE_PROFILE");
    v = z && *z == '1';
    __atomic_store_n(&on, v, __ATOMIC_RELAXED);
  }
  if (!v)
    return;
  double t = ga_cache_prof_ms();
  fprintf(stderr, "%s %-10s %8.3f ms\n", who, what, t - *t0);
  *t0 = t;
}
