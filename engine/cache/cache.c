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
**   5. One cache per process (cache.h rule 5): ga_cache_shared hands it to
**      each connection that loads gpuagg (ext/common/conn.c), counting
**      them under g_mu; ga_cache_release drops the closing connection's own
**      entries and disowns its shared ones; when the last connection
**      closes, rule 7 decides whether the cache is kept or freed.  The
**      budget, `used` and the eviction are the process's.
**   6. The locking, designed for threads each with its own connection
**      querying, loading and evicting at once:
**        g_mu   the process's cache pointer and its connection count
**        qmu    one query on entries at a time (ga_cache_qlock, re-entrant
**               per thread): the GPU stream and scratch, the structures a
**               query builds lazily in an entry (a GPU entry's group
**               dictionary), the counters.  Held only around the engine's
**               work, never while SQL runs on a caller's connection (a
**               busy wait there could wait on a writer that waits on qmu).
**        mu     the list, used, tick, refs, linked, owner; held briefly,
**               never while calling SQLite or freeing.
**      Order: qmu, then g_mu, then mu (the last connection's close marks
**      the entries it keeps under g_mu and mu: no connection can come
**      meanwhile; a watcher's close, under qmu, may release a connection);
**      never the other way.  An entry
**      lives while it is linked (the list's reference) or referenced:
**      ga_cache_get takes a reference under mu, ga_centry_put gives it
**      back and frees the entry when it was the last and the entry is out
**      of the list.  So an eviction or a drop by another thread while a
**      query runs only unlinks it; eviction skips entries in use.  The
**      device stream and scratch go (release_dev) under qmu, once no GPU
**      entry is linked.  An extension by appends (cache_append.h rule 3)
**      takes the entry out of the list only when the list's and the
**      caller's are its only references (ga_cache_unlink_sole, under mu):
**      no query is reading it and none can find it until it is back
**      (ga_cache_relink_moved, with a new link sequence).
**   7. Kept across the last close (issue 40: pandas' read_sql with a
**      connection per call, sqlite-utils, notebooks that reconnect).  When
**      the process's last connection closes with its cache_keep knob on
**      (the default), the cache stays (g_cache, nconn 0) with every entry
**      still linked, and the next connection (ga_cache_shared) finds it.
**      What stays is what ga_cache_release leaves to other connections
**      anyway: shareable entries (owner NULL), each answering a later
**      connection only where that connection's own file stamp proves it
**      current (planner/cache_plan.c rule 7 (a)-(c): a commit, a WAL
**      checkpointed away, a file replaced, all while no connection was
**      open, show in the stamp); the entries that need their owner open
**      to be proved (temp, in memory, a WAL without a committed frame,
**      an attached file's watcher) went with their owner, as before.
**      An entry already marked stale goes at that close (it would answer
**      nobody).  Each kept entry is marked (kept, counted once in c->kept) for
**      gpuagg_info and last_scan.why.  Memory stays within the budget:
**      kept entries are evicted like any other (stale first, then LRU),
**      gpu_cache_drop frees them, and cache_keep 'off' on the last
**      connection to close frees the cache as before.  A cache with no
**      entry is freed all the same.
**        SQLite dlcloses a loadable extension when the connection that
**      loaded it closes: the kept cache's code (free_dev, release_dev,
**      the queries) must stay mapped.  The library is linked -z nodelete
**      (Makefile) and, for a build without it, pinned at run time when
**      the first entries are kept (the pin hook, ext/init.c:
**      dlopen(RTLD_NOLOAD | RTLD_NODELETE) of its own path); linked into
**      a program (SQLITE_CORE) there is nothing to pin.  The global
**      g_cache reaches every kept block, so a leak check at exit finds
**      none; nothing is freed at exit (the device memory and the CUDA
**      context go with the process: no atexit runs after the CUDA
**      runtime's teardown).  No thread outlives its query (the cache's
**      workers are started per query), so nothing runs while no
**      connection is open.
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

/* Rule 5: the process's cache and its connections. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static ga_cache *g_cache;
/* the query lock's depth on this thread (rule 6) */
static _Thread_local int q_depth;
/* planner/cache_plan.c rule 7's clock */
static int64_t g_seq;

static pthread_mutex_t g_idle_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ga_cidle {
  const void *db;
  char *schema;
  int64_t seq;
} * g_idle;
static int g_nidle;

int64_t ga_cache_seq_now(void) {
  return __atomic_load_n(&g_seq, __ATOMIC_SEQ_CST);
}

void ga_cache_note_idle(const void *db, const char *schema, int64_t seq) {
  pthread_mutex_lock(&g_idle_mu);
  int at = -1;
  for (int i = 0; i < g_nidle && at < 0; i++)
    if (g_idle[i].db == db && !sqlite3_stricmp(g_idle[i].schema, schema))
      at = i;
  if (at < 0) {
    char *name = sqlite3_mprintf("%s", schema);
    if (!g_idle)
      g_idle = sqlite3_malloc64(sizeof(*g_idle) * GA_CACHE_IDLE);
    if (!name || !g_idle) { /* out of memory: nothing noted, no proof */
      sqlite3_free(name);
      pthread_mutex_unlock(&g_idle_mu);
      return;
    }
    if (g_nidle == GA_CACHE_IDLE) { /* the bound: the oldest goes */
      int old = 0;
      for (int i = 1; i < g_nidle; i++)
        if (g_idle[i].seq < g_idle[old].seq)
          old = i;
      sqlite3_free(g_idle[old].schema);
      g_idle[old] = g_idle[--g_nidle];
    }
    at = g_nidle++;
    g_idle[at].db = db;
    g_idle[at].schema = name;
    g_idle[at].seq = seq;
  }
  if (seq > g_idle[at].seq)
    g_idle[at].seq = seq;
  pthread_mutex_unlock(&g_idle_mu);
}

int64_t ga_cache_idle_seq(const void *db, const char *schema) {
  int64_t seq = -1;
  pthread_mutex_lock(&g_idle_mu);
  for (int i = 0; i < g_nidle; i++)
    if (g_idle[i].db == db && !sqlite3_stricmp(g_idle[i].schema, schema))
      seq = g_idle[i].seq;
  pthread_mutex_unlock(&g_idle_mu);
  return seq;
}

/* A closing connection's idle moments. */
static void forget_idle(const void *db) {
  pthread_mutex_lock(&g_idle_mu);
  for (int i = 0; i < g_nidle;)
    if (g_idle[i].db == db) {
      sqlite3_free(g_idle[i].schema);
      g_idle[i] = g_idle[--g_nidle];
    } else {
      i++;
    }
  if (!g_nidle) {
    sqlite3_free(g_idle);
    g_idle = NULL;
  }
  pthread_mutex_unlock(&g_idle_mu);
}

ga_cache *ga_cache_new(void) {
  ga_cache *c = sqlite3_malloc64(sizeof(*c));
  if (!c)
    return NULL;
  memset(c, 0, sizeof(*c));
  pthread_mutex_init(&c->mu, NULL);
  pthread_mutex_init(&c->qmu, NULL);
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
  if (e->app && e->app_free)
    e->app_free(e->app);
  sqlite3_free(e);
}

void ga_cache_qlock(ga_cache *c) {
  if (q_depth++ == 0)
    pthread_mutex_lock(&c->qmu);
}

void ga_cache_qunlock(ga_cache *c) {
  if (--q_depth == 0)
    pthread_mutex_unlock(&c->qmu);
}

static int any_gpu_entry(const ga_cache *c) {
  for (const ga_centry *e = c->entries; e; e = e->next)
    if (e->where == GA_CACHE_GPU)
      return 1;
  return 0;
}

/* Rules 4 and 6: the stream and the scratch, where the GPU side took them,
** once no GPU entry is left; under the query lock, so never while a query
** on an unlinked GPU entry (still referenced) uses them. */
static void release_dev(ga_cache *c) {
  ga_cache_qlock(c);
  pthread_mutex_lock(&c->mu);
  int gpu_left = any_gpu_entry(c);
  pthread_mutex_unlock(&c->mu);
  if (!gpu_left && c->release_dev)
    c->release_dev(c);
  ga_cache_qunlock(c);
}

/* Unlink e (under c->mu): its bytes leave used, the list's reference goes.
** 1 when nobody holds it any more (the caller frees it, outside c->mu). */
static int unlink_entry(ga_cache *c, ga_centry *e) {
  if (!e->linked)
    return 0;
  for (ga_centry **pp = &c->entries; *pp; pp = &(*pp)->next)
    if (*pp == e) {
      *pp = e->next;
      c->used -= e->bytes;
      e->next = NULL;
      e->linked = 0;
      return --e->refs == 0;
    }
  return 0;
}

void ga_centry_put(ga_cache *c, ga_centry *e) {
  if (!e)
    return;
  pthread_mutex_lock(&c->mu);
  int gone = --e->refs == 0 && !e->linked;
  int gpu = e->where == GA_CACHE_GPU;
  pthread_mutex_unlock(&c->mu);
  if (gone) {
    ga_centry_free(e);
    if (gpu)
      release_dev(c);
  }
}

void ga_cache_link(ga_cache *c, ga_centry *e) {
  pthread_mutex_lock(&c->mu);
  e->next = c->entries; /* its bytes are in used already */
  c->entries = e;
  e->linked = 1;
  e->refs++;
  c->loads++;
  e->seq = __atomic_add_fetch(&g_seq, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&c->mu);
}

void ga_cache_drop(ga_cache *c, ga_centry *e) {
  pthread_mutex_lock(&c->mu);
  int gone = unlink_entry(c, e);
  pthread_mutex_unlock(&c->mu);
  if (gone) /* cannot be: the caller holds one */
    ga_centry_free(e);
  ga_centry_put(c, e);
  release_dev(c);
}

void ga_cache_drop_all(ga_cache *c) {
  for (;;) {
    pthread_mutex_lock(&c->mu);
    ga_centry *e = c->entries;
    int gone = e ? unlink_entry(c, e) : 0;
    pthread_mutex_unlock(&c->mu);
    if (!e)
      break;
    if (gone)
      ga_centry_free(e);
  }
  release_dev(c);
}

void ga_cache_free(ga_cache *c) {
  if (!c)
    return;
  ga_cache_drop_all(c);
  release_dev(c);
  pthread_mutex_destroy(&c->mu);
  pthread_mutex_destroy(&c->qmu);
  sqlite3_free(c);
}

ga_cache *ga_cache_shared(void) {
  pthread_mutex_lock(&g_mu);
  if (!g_cache)
    g_cache = ga_cache_new();
  ga_cache *c = g_cache;
  if (c)
    c->nconn++;
  pthread_mutex_unlock(&g_mu);
  return c;
}

int ga_cache_nconn(ga_cache *c) {
  pthread_mutex_lock(&g_mu);
  int n = c->nconn;
  pthread_mutex_unlock(&g_mu);
  return n;
}

static void (*g_pin)(void);

void ga_cache_set_pin(void (*pin)(void)) {
  __atomic_store_n(&g_pin, pin, __ATOMIC_RELAXED);
}

/* Rule 7, under g_mu and c->mu: the entries marked stale (refused as
** stale: never used again) out of the list into *gone, to be freed once
** the locks are let go (a stale entry would sit in memory until an
** eviction); then mark every other entry kept; how many are linked. */
static int keep_entries(ga_cache *c, ga_centry **gone) {
  for (ga_centry *e = c->entries, *nx; e; e = nx) {
    nx = e->next;
    if (__atomic_load_n(&e->stale, __ATOMIC_RELAXED) && unlink_entry(c, e)) {
      e->next = *gone;
      *gone = e;
    }
  }
  int n = 0;
  for (ga_centry *e = c->entries; e; e = e->next, n++)
    if (!__atomic_load_n(&e->kept, __ATOMIC_RELAXED)) {
      __atomic_store_n(&e->kept, 1, __ATOMIC_RELAXED); /* read unlocked */
      c->kept++;
    }
  return n;
}

void ga_cache_release(ga_cache *c, const void *owner, int keep) {
  if (!c)
    return;
  /* the owner's own entries go (one at a time: freeing one may close its
  ** watcher connection, which may release a connection of its own here),
  ** its shared ones stay, owned by nobody (rule 5) */
  for (;;) {
    ga_centry *drop = NULL;
    int gone = 0;
    pthread_mutex_lock(&c->mu);
    for (ga_centry *e = c->entries; e; e = e->next)
      if (e->owner == owner && owner) {
        if (e->shareable && !e->watch && !e->fs.walempty) {
          __atomic_store_n(&e->owner, NULL, __ATOMIC_RELAXED);
        } else {
          drop = e;
          break;
        }
      }
    if (drop)
      gone = unlink_entry(c, drop);
    pthread_mutex_unlock(&c->mu);
    if (!drop)
      break;
    if (gone)
      ga_centry_free(drop);
  }
  forget_idle(owner);
  /* the device's stream and scratch, while this connection still counts:
  ** once nconn is down, another thread's last close may free c */
  release_dev(c);
  pthread_mutex_lock(&g_mu);
  int last = --c->nconn == 0, kept = 0;
  ga_centry *gone = NULL;
  if (last && keep && g_cache == c) { /* rule 7 */
    pthread_mutex_lock(&c->mu);
    kept = keep_entries(c, &gone) > 0;
    pthread_mutex_unlock(&c->mu);
  }
  if (last && !kept && g_cache == c)
    g_cache = NULL;
  pthread_mutex_unlock(&g_mu);
  /* unlinked, referenced by nobody: ours to free.  Nothing of c is
  ** touched from here on where c is kept: once g_mu is let go another
  ** thread may open a connection and its last close free c (the stream
  ** stays until a later drop or close lets it go) */
  while (gone) {
    ga_centry *e = gone;
    gone = e->next;
    ga_centry_free(e);
  }
  if (kept) {
    void (*pin)(void) = __atomic_load_n(&g_pin, __ATOMIC_RELAXED);
    if (pin) /* before SQLite's dlclose, which follows this close */
      pin();
  }
  if (last && !kept) /* nobody else can reach c now */
    ga_cache_free(c);
}

int ga_cache_unlink(ga_cache *c, ga_centry *e) {
  pthread_mutex_lock(&c->mu);
  int was = e->linked;
  unlink_entry(c, e); /* the caller's reference keeps it */
  pthread_mutex_unlock(&c->mu);
  return was;
}

/* Back into the list (under c->mu): its bytes into used, the list's
** reference; moved: a new link sequence (an extension's new state). */
static void relink(ga_cache *c, ga_centry *e, int moved) {
  pthread_mutex_lock(&c->mu);
  e->next = c->entries;
  c->entries = e;
  c->used += e->bytes;
  e->linked = 1;
  e->refs++;
  if (moved)
    e->seq = __atomic_add_fetch(&g_seq, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&c->mu);
}

void ga_cache_relink(ga_cache *c, ga_centry *e) { relink(c, e, 0); }

int ga_cache_unlink_sole(ga_cache *c, ga_centry *e) {
  pthread_mutex_lock(&c->mu);
  int sole = e->linked && e->refs == 2;
  if (sole)
    unlink_entry(c, e); /* the caller's reference keeps it */
  pthread_mutex_unlock(&c->mu);
  return sole;
}

void ga_cache_relink_moved(ga_cache *c, ga_centry *e) { relink(c, e, 1); }

void ga_cache_free_unlinked(ga_cache *c, ga_centry *e) {
  ga_centry_put(c, e);
  release_dev(c);
}

static int same(const char *a, const char *b) {
  return a && b && !sqlite3_stricmp(a, b);
}

ga_centry *ga_cache_get(ga_cache *c, const void *owner, const char *schema,
                        int has_ident, uint64_t dev, uint64_t ino,
                        const char *table) {
  ga_centry *got = NULL, *stale = NULL;
  pthread_mutex_lock(&c->mu);
  for (ga_centry *e = c->entries; e && !got; e = e->next)
    if (e->owner == owner && owner && same(e->schema, schema) &&
        same(e->table, table)) {
      if (!__atomic_load_n(&e->stale, __ATOMIC_RELAXED))
        got = e;
      else if (!stale)
        stale = e;
    }
  for (ga_centry *e = c->entries; e && !got; e = e->next)
    if (has_ident && e->shareable && e->fdev == dev && e->fino == ino &&
        same(e->table, table)) {
      if (!__atomic_load_n(&e->stale, __ATOMIC_RELAXED))
        got = e;
      else if (!stale)
        stale = e;
    }
  if (!got)
    got = stale;
  if (got)
    got->refs++;
  pthread_mutex_unlock(&c->mu);
  return got;
}

int64_t ga_cache_touch(ga_cache *c) {
  return __atomic_add_fetch(&c->tick, 1, __ATOMIC_RELAXED);
}

/* The eviction victim (rule 2), or NULL: never one a caller is using
** (rule 6: it would stay in memory, its bytes uncounted). */
static ga_centry *victim(ga_cache *c, const ga_centry *keep) {
  ga_centry *best = NULL;
  for (ga_centry *e = c->entries; e; e = e->next) {
    if (e == keep || e->refs > 1)
      continue;
    int es = __atomic_load_n(&e->stale, __ATOMIC_RELAXED);
    int bs = best ? __atomic_load_n(&best->stale, __ATOMIC_RELAXED) : 0;
    if (!best || (es && !bs) ||
        (es == bs && __atomic_load_n(&e->lru, __ATOMIC_RELAXED) <
                         __atomic_load_n(&best->lru, __ATOMIC_RELAXED)))
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
    int gone = unlink_entry(c, v);
    pthread_mutex_unlock(&c->mu);
    if (gone)
      ga_centry_free(v); /* device frees outside the mutex */
  }
}

void ga_cache_fit(ga_cache *c, int64_t budget) {
  for (;;) {
    pthread_mutex_lock(&c->mu);
    ga_centry *v = c->used > budget ? victim(c, NULL) : NULL;
    int gone = v ? unlink_entry(c, v) : 0;
    pthread_mutex_unlock(&c->mu);
    if (!v) {
      release_dev(c);
      return;
    }
    if (gone)
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
