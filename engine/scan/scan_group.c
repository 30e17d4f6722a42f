/*
** scan_group.c — see scan_group.h.
*/
#include "scan_group.h"

#include "bigmem.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "xacc.h"

/* ---- SQLite's built-in collations (sqlite3/main.c: binCollFunc,
** rtrimCollFunc, nocaseCollatingFunc with sqlite3StrNICmp) ---- */

static unsigned char lower_ascii(unsigned char c) {
  return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

static int bin_cmp(const unsigned char *a, int na, const unsigned char *b,
                   int nb) {
  int n = na < nb ? na : nb;
  int c = n ? memcmp(a, b, (size_t)n) : 0;
  return c ? c : na - nb;
}

static int rtrim_len(const unsigned char *p, int n) {
  while (n > 0 && p[n - 1] == ' ')
    n--;
  return n;
}

int ga_coll_cmp(int coll, const void *pa, int na, const void *pb, int nb) {
  const unsigned char *a = pa, *b = pb;
  if (coll == GA_COLL_RTRIM)
    return bin_cmp(a, rtrim_len(a, na), b, rtrim_len(b, nb));
  if (coll != GA_COLL_NOCASE)
    return bin_cmp(a, na, b, nb);
  /* sqlite3StrNICmp over the shorter length: it stops at a NUL in a, and
  ** then compares that NUL with b's byte */
  int n = na < nb ? na : nb, i = 0;
  while (i < n && a[i] != 0 && lower_ascii(a[i]) == lower_ascii(b[i]))
    i++;
  int r = i == n ? 0 : (int)lower_ascii(a[i]) - (int)lower_ascii(b[i]);
  return r ? r : na - nb;
}

/* ---- keys ---- */

static int rank(int type) {
  return type == GA_V_NULL   ? 0
         : type <= GA_V_REAL ? 1
         : type == GA_V_TEXT ? 2
                             : 3;
}

int ga_key_cmp(const ga_value *a, const ga_value *b, int coll) {
  int ra = rank(a->type), rb = rank(b->type);
  if (ra != rb)
    return ra < rb ? -1 : 1;
  switch (ra) {
  case 0:
    return 0;
  case 1: {
    int ka = a->type == GA_V_INT ? GA_KIND_INT : GA_KIND_REAL;
    int kb = b->type == GA_V_INT ? GA_KIND_INT : GA_KIND_REAL;
    return ga_num_cmp(ka, ka == GA_KIND_INT ? a->i : ga_dbits(a->r), kb,
                      kb == GA_KIND_INT ? b->i : ga_dbits(b->r));
  }
  case 2: {
    int c = ga_coll_cmp(coll, a->p, a->n, b->p, b->n);
    return (c > 0) - (c < 0);
  }
  default: {
    int c = bin_cmp(a->p, a->n, b->p, b->n);
    return (c > 0) - (c < 0);
  }
  }
}

static uint64_t mix64(uint64_t x) { /* splitmix64's finaliser */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

static uint64_t hash_bytes(uint64_t h, const unsigned char *p, int n,
                           int fold) {
  for (int i = 0; i < n; i++) {
    h ^= fold ? lower_ascii(p[i]) : p[i];
    h *= 0x100000001b3ull; /* FNV-1a */
  }
  return mix64(h);
}

uint64_t ga_key_hash(const ga_value *k, int coll) {
  switch (k->type) {
  case GA_V_INT:
    return mix64((uint64_t)k->i ^ 0x1111);
  case GA_V_REAL:
    /* an integral REAL within int64 equals that INTEGER (and -0.0 is 0) */
    if (k->r >= -9223372036854775808.0 && k->r < 9223372036854775808.0 &&
        k->r == (double)(int64_t)k->r)
      return mix64((uint64_t)(int64_t)k->r ^ 0x1111);
    return mix64((uint64_t)ga_dbits(k->r) ^ 0x2222);
  case GA_V_TEXT: {
    const unsigned char *p = k->p;
    int n = k->n;
    if (coll == GA_COLL_RTRIM)
      return hash_bytes(0xcbf29ce484222325ull, p, rtrim_len(p, n), 0);
    if (coll == GA_COLL_NOCASE) {
      /* equal under NOCASE: same length, same folded bytes up to the first
      ** NUL (sqlite3StrNICmp ignores what follows it) */
      int m = 0;
      while (m < n && p[m])
        m++;
      return hash_bytes(0xcbf29ce484222325ull ^ (uint64_t)n, p, m, 1);
    }
    return hash_bytes(0xcbf29ce484222325ull, p, n, 0);
  }
  case GA_V_BLOB:
    return hash_bytes(0x84222325cbf29ce4ull, k->p, k->n, 0);
  default:
    return 0x9e3779b97f4a7c15ull;
  }
}

/* ---- DISTINCT aggregates' sets (rule 5) ---- */

static int distinct_eq(const ga_value *a, const ga_value *b, int coll) {
  return ga_key_cmp(a, b, coll) == 0;
}

int ga_distinct_add(ga_dset **set, int coll, const ga_value *raw, int64_t piece,
                    ga_dent **slot) {
  ga_dent *e = NULL;
  int rc = raw->type == GA_V_NULL
               ? GA_OK
               : ga_dset_add(set, coll, distinct_eq, raw,
                             ga_key_hash(raw, coll), piece, &e);
  if (e && (raw->type == GA_V_INT || raw->type == GA_V_REAL))
    ga_dset_set_num(e, raw);
  if (slot)
    *slot = e;
  return rc;
}

int ga_pct_gstep(ga_gstate *s, const ga_value *v) {
  s->rows++;
  if (v->type == GA_V_NULL)
    return GA_OK;
  double y = v->type == GA_V_INT ? (double)v->i : v->r;
  if ((v->type != GA_V_INT && v->type != GA_V_REAL) || !isfinite(y))
    return GA_PCT_BAD;
  s->count++;
  return ga_dset_pct_push(&s->set, y);
}

int ga_distinct_step(ga_gstate *s, int coll, const ga_value *raw, int64_t piece,
                     ga_dent **slot) {
  s->rows++;
  return ga_distinct_add(&s->set, coll, raw, piece, slot);
}

/* ---- tuples of keys ---- */

ga_gshape ga_gshape_one(int coll) {
  ga_gshape s;
  memset(&s, 0, sizeof(s));
  s.nk = s.ns = 1;
  s.coll[0] = coll;
  return s;
}

int ga_keys_cmp(const ga_value *a, const ga_value *b, const ga_gshape *s) {
  for (int i = 0; i < s->nk; i++) {
    int c = ga_key_cmp(&a[i], &b[i], s->coll[i]);
    if (c)
      return c;
  }
  return 0;
}

uint64_t ga_keys_hash(const ga_value *k, const ga_gshape *s) {
  if (s->nk == 1)
    return ga_key_hash(k, s->coll[0]);
  uint64_t h = 0x243f6a8885a308d3ull;
  for (int i = 0; i < s->nk; i++)
    h = mix64(h * 0x9e3779b97f4a7c15ull ^ ga_key_hash(&k[i], s->coll[i]));
  return h;
}

/* ---- groups ---- */

static int64_t text_bytes(const ga_bval *b) {
  return b->p ? b->n : 0; /* short ones live in the bval (bestval.h) */
}

static int64_t group_bytes(const ga_group *g, const ga_gshape *s) {
  int64_t n = GA_GROUP_FIXED_BYTES(s) + 32;
  for (int i = 0; i < s->nk + s->nc; i++)
    n += text_bytes(&g->key[i]);
  for (int i = 0; i < s->ns; i++)
    n += ga_gstate_heap_bytes(&g->st[i]);
  return n;
}

/* Point g's arrays into its own block and empty them. */
static void group_reset(ga_group *g, const ga_gshape *s) {
  int in_arena = g->in_arena;
  memset(g, 0, (size_t)GA_GROUP_FIXED_BYTES(s));
  g->in_arena = in_arena;
  g->key = (ga_bval *)(g + 1);
  g->st = (ga_gstate *)(g->key + s->nk + s->nc); /* all zero: empty */
  g->tag = (int64_t *)(g->st + s->ns);
}

ga_group *ga_group_new(const ga_gshape *s) {
  ga_group *g = sqlite3_malloc64((uint64_t)GA_GROUP_FIXED_BYTES(s));
  if (g) {
    g->in_arena = 0;
    group_reset(g, s);
  }
  return g;
}

/* ---- arenas ---- */

struct ga_garena {
  pthread_mutex_t mu;
  void *blocks; /* each starts with the pointer to the next */
};

/* The block header (the next block, the block's bytes) keeps the groups
** 16-byte aligned. */
#define ARENA_HDR 16

/* A new group of t's shape: from t's arena block when it has one.  A
** table's blocks double from GA_ARENA_GROUPS groups up to
** GA_ARENA_MAX_GROUPS, or GA_ARENA_MAX_BYTES for groups of many states: a
** table that makes millions of groups then maps
** them a few large blocks at a time (engine/core/bigmem.h: huge pages,
** where each 4 KiB page faulted in on its own). */
static ga_group *gt_new_group(ga_group_table *t) {
  const ga_gshape *s = &t->shape;
  if (!t->arena)
    return ga_group_new(s);
  size_t one = (size_t)GA_GROUP_FIXED_BYTES(s);
  if (t->block_left == 0) {
    size_t groups = t->block_groups ? t->block_groups : GA_ARENA_GROUPS;
    size_t bytes = ARENA_HDR + one * groups;
    char *b = ga_big_alloc(bytes);
    if (!b)
      return NULL;
    ((size_t *)b)[1] = bytes;
    pthread_mutex_lock(&t->arena->mu);
    *(void **)b = t->arena->blocks;
    t->arena->blocks = b;
    pthread_mutex_unlock(&t->arena->mu);
    t->block = b + ARENA_HDR;
    t->block_left = groups;
    t->block_groups =
        groups < GA_ARENA_MAX_GROUPS && bytes < GA_ARENA_MAX_BYTES / 2
            ? 2 * groups
            : groups;
  }
  ga_group *g = (ga_group *)t->block;
  t->block += one;
  t->block_left--;
  g->in_arena = 1;
  group_reset(g, s);
  return g;
}

/* What g holds, not g itself. */
static void group_clear(ga_group *g, const ga_gshape *s) {
  for (int i = 0; i < s->nk + s->nc; i++)
    ga_bval_clear(&g->key[i]);
  for (int i = 0; i < s->ns; i++)
    ga_gstate_clear(&g->st[i]);
}

void ga_group_free(ga_group *g, const ga_gshape *s) {
  if (!g)
    return;
  group_clear(g, s);
  if (!g->in_arena)
    sqlite3_free(g);
}

/* g's first n keys as values: the compared ones (s->nk) to look a group
** up or sort it, all of them (nk + nc) to move it. */
static void keys_view(const ga_group *g, int n, ga_value *out) {
  for (int i = 0; i < n; i++)
    ga_bval_view(&g->key[i], &out[i]);
}

/* b better than a as a max (want_min 0) or a min: NULL is "none". */
static int cmp_best(const ga_bval *a, const ga_bval *b, int want_min) {
  ga_value va, vb;
  ga_bval_view(a, &va);
  ga_bval_view(b, &vb);
  if (vb.type == GA_V_NULL)
    return va.type == GA_V_NULL ? 0 : -1;
  if (va.type == GA_V_NULL)
    return 1;
  int c = ga_value_cmp(&vb, &va);
  return want_min ? -c : c;
}

static void swap_bval(ga_bval *a, ga_bval *b) {
  ga_bval t = *a;
  *a = *b;
  *b = t;
}

/* One state: into += st, st from piece `piece`; tag: into's two tags. */
static int state_merge(ga_gstate *into, int64_t *tag, ga_gstate *st,
                       int64_t piece) {
  int cmax = cmp_best(&into->max, &st->max, 0);
  int cmin = cmp_best(&into->min, &st->min, 1);
  int tie_max = cmax == 0 && st->max.type != GA_V_NULL && piece < tag[0];
  int tie_min = cmin == 0 && st->min.type != GA_V_NULL && piece < tag[1];
  int rc = ga_gstate_merge(into, st); /* into's wins ties ... */
  if (rc)
    return rc;
  if (cmax > 0 || tie_max) {
    if (tie_max) /* ... unless st's came first in rowid order */
      swap_bval(&into->max, &st->max);
    tag[0] = piece;
  }
  if (cmin > 0 || tie_min) {
    if (tie_min)
      swap_bval(&into->min, &st->min);
    tag[1] = piece;
  }
  if (!into->enc)
    into->enc = st->enc;
  return GA_OK;
}

/* g += sts, the states of piece `piece` with keys `keys` (rule 2). */
static int group_merge(ga_group *g, const ga_gshape *s, const ga_value *keys,
                       ga_gstate *sts, int64_t piece) {
  ga_bval k[GA_MAX_KEYS];
  int newkey = piece < g->key_piece, rc = GA_OK;
  memset(k, 0, sizeof(ga_bval) * (size_t)(s->nk + s->nc));
  for (int i = 0; newkey && i < s->nk + s->nc && rc == GA_OK; i++)
    rc = ga_bval_set(&k[i], &keys[i]);
  for (int i = 0; i < s->ns && rc == GA_OK; i++)
    rc = state_merge(&g->st[i], &g->tag[2 * i], &sts[i], piece);
  if (rc == GA_OK && newkey) {
    for (int i = 0; i < s->nk + s->nc; i++)
      swap_bval(&g->key[i], &k[i]);
    g->key_piece = piece;
  }
  for (int i = 0; i < s->nk + s->nc; i++)
    ga_bval_clear(&k[i]);
  return rc;
}

/* ---- tables ---- */

/* Group g (g->hash set) into empty slot j, or st merged into t's group e:
** t's count and bytes follow. */
static void gt_place(ga_group_table *t, size_t j, ga_group *g) {
  t->slot[j] = g;
  t->hash[j] = g->hash;
  t->n++;
  t->bytes += group_bytes(g, &t->shape);
}

static int gt_merge(ga_group_table *t, ga_group *e, const ga_value *keys,
                    ga_gstate *sts, int64_t piece) {
  int64_t was = group_bytes(e, &t->shape);
  int rc = group_merge(e, &t->shape, keys, sts, piece);
  t->bytes += group_bytes(e, &t->shape) - was;
  return rc;
}

void ga_gt_init(ga_group_table *t, const ga_gshape *s) {
  memset(t, 0, sizeof(*t));
  t->shape = *s;
}

void ga_gt_free(ga_group_table *t) {
  /* groups lie all over memory (millions, at the end of a scan, on one
  ** thread): each is prefetched a few slots before it is emptied */
  int64_t len = GA_GROUP_FIXED_BYTES(&t->shape);
  for (size_t i = 0; i < t->cap; i++) {
    const char *ahead = i + 16 < t->cap ? (const char *)t->slot[i + 16] : NULL;
    for (int64_t o = 0; ahead && o < len; o += 64)
      __builtin_prefetch(ahead + o, 1);
    ga_group_free(t->slot[i], &t->shape);
  }
  while (t->spare) {
    ga_group *g = t->spare;
    t->spare = g->next_spare;
    if (!g->in_arena) /* emptied when it became a spare */
      sqlite3_free(g);
  }
  sqlite3_free(t->slot);
  int rot = t->rot;
  ga_gshape s = t->shape;
  ga_garena *arena = t->arena;
  ga_gt_init(t, &s);
  t->rot = rot;
  t->arena = arena; /* its blocks are freed with the arena */
}

/* A table's slots use the hash rotated by t->rot: a worker's table (rot 32)
** is emptied in slot order into the shared ones (rot 0), and with the same
** bits that order would fill their slots in runs, the pathological case of
** linear probing. */
static size_t slot_of(const ga_group_table *t, uint64_t h) {
  return (size_t)(t->rot ? h >> t->rot | h << (64 - t->rot) : h);
}

/* The slots and their hashes in one allocation: probing reads the hashes,
** which are contiguous, and touches a group (~700 bytes, likely out of
** cache) only when its hash matches. */
static int gt_grow(ga_group_table *t) {
  size_t cap = t->cap ? t->cap * 2 : 64;
  size_t one = sizeof(*t->slot) + sizeof(*t->hash);
  ga_group **s = sqlite3_malloc64(cap * one);
  if (!s)
    return GA_NOMEM;
  memset(s, 0, cap * one);
  uint64_t *hs = (uint64_t *)(s + cap);
  for (size_t i = 0; i < t->cap; i++) {
    ga_group *g = t->slot[i];
    if (!g)
      continue;
    size_t j = slot_of(t, g->hash) & (cap - 1);
    while (s[j])
      j = (j + 1) & (cap - 1);
    s[j] = g;
    hs[j] = g->hash;
  }
  sqlite3_free(t->slot);
  t->bytes += (int64_t)((cap - t->cap) * one);
  t->slot = s;
  t->hash = hs;
  t->cap = cap;
  return GA_OK;
}

/* The slot of keys (hash h): its group, or the empty slot to fill. */
static size_t gt_find(const ga_group_table *t, const ga_value *keys,
                      uint64_t h) {
  size_t j = slot_of(t, h) & (t->cap - 1);
  for (;;) {
    ga_group *g = t->slot[j];
    if (!g)
      return j;
    if (t->hash[j] == h) {
      ga_value k[GA_MAX_KEYS];
      keys_view(g, t->shape.nk, k);
      if (ga_keys_cmp(k, keys, &t->shape) == 0)
        return j;
    }
    j = (j + 1) & (t->cap - 1);
  }
}

static int gt_reserve(ga_group_table *t) {
  return (t->n + 1) * 4 > t->cap * 3 ? gt_grow(t) : GA_OK;
}

/* The group of keys in t, made (empty states, keys copied, tags = piece)
** when it is new; NULL when out of memory.  A worker's own table of one
** piece (engine/scan/scan.c, hash mode): its values are stepped in rowid
** order, so the first row's keys and the first among equal max/min stay
** (rule 2). */
ga_group *ga_gt_get(ga_group_table *t, const ga_value *keys, uint64_t h,
                    int64_t piece) {
  if (gt_reserve(t))
    return NULL;
  size_t j = gt_find(t, keys, h);
  ga_group *g = t->slot[j];
  if (g)
    return g;
  if (!(g = ga_gt_make(t, keys, h, piece)))
    return NULL;
  gt_place(t, j, g);
  return g;
}

ga_group *ga_gt_make(ga_group_table *t, const ga_value *keys, uint64_t h,
                     int64_t piece) {
  const ga_gshape *s = &t->shape;
  ga_group *g;
  if (t->spare) { /* no allocator (its mutex) per group and piece */
    g = t->spare;
    t->spare = g->next_spare;
    group_reset(g, s);
  } else if (!(g = gt_new_group(t))) {
    return NULL;
  }
  for (int i = 0; i < s->nk + s->nc; i++)
    if (ga_bval_set(&g->key[i], &keys[i])) {
      ga_group_free(g, s);
      return NULL;
    }
  g->hash = h;
  g->key_piece = piece;
  for (int i = 0; i < 2 * s->ns; i++)
    g->tag[i] = piece;
  return g;
}

int ga_gt_add(ga_group_table *t, const ga_value *keys, uint64_t h,
              ga_xstate *sts, int64_t piece) {
  return ga_gt_add_sets(t, keys, h, sts, NULL, piece);
}

int ga_gt_add_sets(ga_group_table *t, const ga_value *keys, uint64_t h,
                   ga_xstate *sts, ga_dset **sets, int64_t piece) {
  return ga_gt_add_sq(t, keys, h, sts, sets, NULL, piece);
}

int ga_gt_add_sq(ga_group_table *t, const ga_value *keys, uint64_t h,
                 ga_xstate *sts, ga_dset **sets, ga_gsq **sqs, int64_t piece) {
  const ga_gshape *s = &t->shape;
  ga_gstate gs[GA_MAX_STATES];
  int n = 0, rc = GA_OK;
  for (; n < s->ns && rc == GA_OK; n++) {
    rc = ga_gstate_take(&gs[n], &sts[n]);
    if (rc == GA_OK && sets) {
      gs[n].set = sets[n];
      sets[n] = NULL;
    }
    if (rc == GA_OK && sqs) { /* gstate.h rule 8 */
      gs[n].sq = sqs[n];
      sqs[n] = NULL;
    }
  }
  if (rc == GA_OK) {
    size_t had = t->n;
    ga_group *g = ga_gt_get(t, keys, h, piece);
    if (!g)
      rc = GA_NOMEM;
    else if (t->n == had) /* there already: merge */
      rc = gt_merge(t, g, keys, gs, piece);
    else { /* new: gs are its states */
      int64_t before = group_bytes(g, s);
      memcpy(g->st, gs, sizeof(ga_gstate) * (size_t)s->ns);
      memset(gs, 0, sizeof(ga_gstate) * (size_t)s->ns);
      t->bytes += group_bytes(g, s) - before;
    }
  }
  for (int i = 0; i < s->ns; i++) {
    if (i < n)
      ga_gstate_clear(&gs[i]);
    ga_xstate_clear(&sts[i]);
    if (sets) {
      ga_dset_free(sets[i]);
      sets[i] = NULL;
    }
    if (sqs) {
      sqlite3_free(sqs[i]);
      sqs[i] = NULL;
    }
  }
  return rc;
}

/* ---- shards ---- */

/* A shard's lock and table on cache lines of their own: 16 workers lock
** shards at every row in direct mode, and neighbours sharing a line would
** bounce it between cores at each lock and each count. */
typedef struct gs_shard {
  _Alignas(64) pthread_mutex_t mu;
  ga_group_table t;
} gs_shard;

struct ga_group_shards {
  gs_shard sh[GA_GS_SHARDS];
  ga_garena arena;   /* the worker tables' groups (they move in here) */
  ga_group *adopted; /* ga_gs_adopt's, linked by next_spare (arena.mu) */
  void *block;       /* the allocation s is aligned in */
};

ga_group_shards *ga_gs_new(const ga_gshape *shape) {
  /* SQLite's allocator aligns to 8 bytes: the shards need 64 */
  char *block = sqlite3_malloc64(sizeof(ga_group_shards) + 64);
  if (!block)
    return NULL;
  ga_group_shards *s =
      (ga_group_shards *)(block + (64 - (uintptr_t)block % 64) % 64);
  s->block = block;
  pthread_mutex_init(&s->arena.mu, NULL);
  s->arena.blocks = NULL;
  s->adopted = NULL;
  for (int i = 0; i < GA_GS_SHARDS; i++) {
    ga_gt_init(&s->sh[i].t, shape);
    s->sh[i].t.arena = &s->arena; /* direct mode makes groups here */
    pthread_mutex_init(&s->sh[i].mu, NULL);
  }
  return s;
}

ga_garena *ga_gs_arena(ga_group_shards *s) { return &s->arena; }

void ga_gs_adopt(ga_group_shards *s, ga_group *head, ga_group *tail,
                 int plain) {
  if (!head || plain)
    return;
  pthread_mutex_lock(&s->arena.mu);
  tail->next_spare = s->adopted;
  s->adopted = head;
  pthread_mutex_unlock(&s->arena.mu);
}

void ga_gs_free(ga_group_shards *s) {
  if (!s)
    return;
  for (int i = 0; i < GA_GS_SHARDS; i++) {
    ga_gt_free(&s->sh[i].t);
    pthread_mutex_destroy(&s->sh[i].mu);
  }
  const ga_gshape *shape = &s->sh[0].t.shape;
  for (ga_group *g = s->adopted, *next; g; g = next) {
    next = g->next_spare;
    ga_group_free(g, shape);
  }
  s->adopted = NULL;
  /* after every group is emptied (the shards' above, the workers' tables
  ** before: scan.c frees them first) */
  while (s->arena.blocks) {
    void *b = s->arena.blocks;
    s->arena.blocks = *(void **)b;
    ga_big_free(b, ((size_t *)b)[1]);
  }
  pthread_mutex_destroy(&s->arena.mu);
  sqlite3_free(s->block);
}

const ga_gshape *ga_gs_shape(const ga_group_shards *s) {
  return &s->sh[0].t.shape;
}

int ga_gs_add(ga_group_shards *s, const ga_value *keys, ga_xstate *sts,
              int64_t piece, int64_t *bytes) {
  return ga_gs_add_sets(s, keys, sts, NULL, piece, bytes);
}

int ga_gs_add_sets(ga_group_shards *s, const ga_value *keys, ga_xstate *sts,
                   ga_dset **sets, int64_t piece, int64_t *bytes) {
  return ga_gs_add_sq(s, keys, sts, sets, NULL, piece, bytes);
}

int ga_gs_add_sq(ga_group_shards *s, const ga_value *keys, ga_xstate *sts,
                 ga_dset **sets, ga_gsq **sqs, int64_t piece, int64_t *bytes) {
  uint64_t h = ga_keys_hash(keys, &s->sh[0].t.shape);
  int k = (int)(h >> 58); /* the slots use the low bits */
  pthread_mutex_lock(&s->sh[k].mu);
  int64_t before = s->sh[k].t.bytes;
  int rc = ga_gt_add_sq(&s->sh[k].t, keys, h, sts, sets, sqs, piece);
  *bytes += s->sh[k].t.bytes - before;
  pthread_mutex_unlock(&s->sh[k].mu);
  return rc;
}

/* Direct mode's group of keys in shard table d (its lock held): made when
** new, given keys when piece comes before its own (rule 2).  NULL when out
** of memory. */
static ga_group *gs_get_locked(ga_group_table *d, const ga_value *keys,
                               uint64_t h, int64_t piece) {
  const ga_gshape *sh = &d->shape;
  size_t n = d->n;
  ga_group *g = ga_gt_get(d, keys, h, piece);
  if (g && d->n == n && piece < g->key_piece) { /* an earlier piece's row */
    int64_t was = group_bytes(g, sh);
    for (int i = 0; i < sh->nk + sh->nc; i++)
      if (ga_bval_set(&g->key[i], &keys[i]))
        return NULL;
    g->key_piece = piece;
    d->bytes += group_bytes(g, sh) - was;
  }
  return g;
}

ga_group *ga_gs_hold_group(ga_group_shards *s, const ga_value *keys, uint64_t h,
                           int64_t piece, ga_gs_hold *hold) {
  ga_group_table *d = &s->sh[h >> 58].t;
  hold->k = (int)(h >> 58);
  pthread_mutex_lock(&s->sh[hold->k].mu);
  hold->before = d->bytes;
  ga_group *g = gs_get_locked(d, keys, h, piece);
  if (!g)
    pthread_mutex_unlock(&s->sh[hold->k].mu);
  return g;
}

void ga_gs_release(ga_group_shards *s, ga_gs_hold *hold, int64_t extra,
                   int64_t *bytes) {
  s->sh[hold->k].t.bytes += extra;
  *bytes += s->sh[hold->k].t.bytes - hold->before;
  pthread_mutex_unlock(&s->sh[hold->k].mu);
}

/* ---- direct mode in batches ---- */

int ga_gs_batch_init(ga_gs_batch *b, const ga_gshape *s, int cap) {
  memset(b, 0, sizeof(*b));
  b->cap = cap;
  b->nkc = s->nk + s->nc;
  b->ns = s->ns;
  b->text_cap = (size_t)cap * 64; /* keys past it step the batch early */
  b->h = sqlite3_malloc64(sizeof(*b->h) * (size_t)cap);
  b->key = sqlite3_malloc64(sizeof(ga_value) * (size_t)(cap * b->nkc + 1));
  b->val = sqlite3_malloc64(sizeof(ga_value) * (size_t)(cap * b->ns + 1));
  b->order = sqlite3_malloc64(sizeof(int) * (size_t)cap);
  b->text = sqlite3_malloc64(b->text_cap);
  if (!b->h || !b->key || !b->val || !b->order || !b->text) {
    ga_gs_batch_free(b);
    return GA_NOMEM;
  }
  return GA_OK;
}

void ga_gs_batch_free(ga_gs_batch *b) {
  sqlite3_free(b->h);
  sqlite3_free(b->key);
  sqlite3_free(b->val);
  sqlite3_free(b->order);
  sqlite3_free(b->text);
  memset(b, 0, sizeof(*b));
}

int ga_gs_batch_room(const ga_gs_batch *b, size_t text) {
  return b->n < b->cap && text <= b->text_cap - b->text_n;
}

void ga_gs_batch_add(ga_gs_batch *b, const ga_value *keys, const ga_value *val,
                     uint64_t h) {
  ga_value *k = &b->key[(size_t)b->n * (size_t)b->nkc];
  for (int i = 0; i < b->nkc; i++) {
    k[i] = keys[i];
    if ((keys[i].type == GA_V_TEXT || keys[i].type == GA_V_BLOB) &&
        keys[i].n > 0) {
      memcpy(b->text + b->text_n, keys[i].p, (size_t)keys[i].n);
      k[i].p = b->text + b->text_n;
      b->text_n += (size_t)keys[i].n;
    }
  }
  memcpy(&b->val[(size_t)b->n * (size_t)b->ns], val,
         sizeof(ga_value) * (size_t)b->ns);
  b->h[b->n++] = h;
}

/* How far ahead of the row being stepped its slot, then its group, are
** prefetched (twice as far for the slot, whose line the group's lookup
** reads): enough misses in flight to cover a memory latency with the work
** of a few rows, few enough to stay inside the core's fill buffers. */
#define GS_PREFETCH_AHEAD 6

/* The home slot of hash h in table d (its line is prefetched a few rows
** ahead).  The prefetches themselves stay in gs_step_rows: GCC finds a
** function whose only effect is a prefetch "const" and drops its calls. */
static size_t gs_home(const ga_group_table *d, uint64_t h) {
  return slot_of(d, h) & (d->cap - 1);
}

/* The group of hash h: the first slot from its home with that hash (a
** likely match; the step still compares keys), NULL for none within the
** few slots a prefetched line holds. */
static const char *gs_likely_group(const ga_group_table *d, uint64_t h) {
  size_t j = gs_home(d, h);
  for (int probe = 0; probe < 8; probe++, j = (j + 1) & (d->cap - 1)) {
    if (!d->slot[j])
      return NULL; /* a new group */
    if (d->hash[j] == h)
      return (const char *)d->slot[j];
  }
  return NULL;
}

/* The m rows idx[] of b (one shard's, in batch order) into d, whose lock
** is held.  GA_OK or GA_NOMEM. */
static int gs_step_rows(ga_group_table *d, const ga_gs_batch *b, const int *idx,
                        int m, int64_t piece) {
  const int A = GS_PREFETCH_AHEAD;
  int64_t extra = 0;
  int rc = GA_OK;
  int64_t len = GA_GROUP_FIXED_BYTES(&d->shape); /* what a step reads */
  for (int i = 0; i < m && rc == GA_OK; i++) {
    if (i + 2 * A < m && d->cap) {
      size_t j = gs_home(d, b->h[idx[i + 2 * A]]);
      __builtin_prefetch(&d->slot[j], 0);
      __builtin_prefetch(&d->hash[j], 0);
    }
    const char *ahead =
        i + A < m && d->cap ? gs_likely_group(d, b->h[idx[i + A]]) : NULL;
    for (int64_t o = 0; ahead && o < len; o += 64)
      __builtin_prefetch(ahead + o, 1);
    int r = idx[i];
    ga_group *g =
        gs_get_locked(d, &b->key[(size_t)r * (size_t)b->nkc], b->h[r], piece);
    if (!g) {
      rc = GA_NOMEM;
      break;
    }
    const ga_value *v = &b->val[(size_t)r * (size_t)b->ns];
    for (int k = 0; k < b->ns && rc == GA_OK; k++) {
      int64_t was = ga_gstate_heap_bytes(&g->st[k]); /* a wide sum, a set */
      rc = d->shape.dist[k] == GA_DIST_PCT           /* rule 6 */
               ? ga_pct_gstep(&g->st[k], &v[k])
               : d->shape.dist[k]
                     ? ga_distinct_step(&g->st[k], d->shape.dist[k] - 1, &v[k],
                                        piece, NULL)
                     : ga_gstate_step_tagged(&g->st[k], &g->tag[2 * k], piece,
                                             &v[k]);
      if (rc == GA_OK && d->shape.sq[k]) /* gstate.h rule 8 */
        rc = ga_gstate_sq_step(&g->st[k], &v[k]);
      extra += ga_gstate_heap_bytes(&g->st[k]) - was;
    }
  }
  d->bytes += extra;
  return rc;
}

static int64_t gs_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int ga_gs_step_batch(ga_group_shards *s, ga_gs_batch *b, int64_t piece,
                     int first, int64_t *bytes, int64_t *wait_ns) {
  /* the rows by shard, in batch order within one (a counting sort) */
  int start[GA_GS_SHARDS + 1] = {0}, at[GA_GS_SHARDS];
  for (int r = 0; r < b->n; r++)
    start[(b->h[r] >> 58) + 1]++;
  for (int k = 0; k < GA_GS_SHARDS; k++) {
    start[k + 1] += start[k];
    at[k] = start[k];
  }
  for (int r = 0; r < b->n; r++)
    b->order[at[b->h[r] >> 58]++] = r;
  /* each shard once: free ones first, then wait for the busy ones */
  int rc = GA_OK, left = 0;
  unsigned char busy[GA_GS_SHARDS] = {0};
  for (int pass = 0; pass < 2 && rc == GA_OK; pass++) {
    for (int j = 0; j < GA_GS_SHARDS && rc == GA_OK; j++) {
      int k = (first + j) % GA_GS_SHARDS;
      if (start[k] == start[k + 1] || (pass == 1 && !busy[k]))
        continue;
      if (pass == 0 && pthread_mutex_trylock(&s->sh[k].mu)) {
        busy[k] = 1;
        left++;
        continue;
      }
      if (pass == 1) {
        int64_t t0 = gs_now_ns();
        pthread_mutex_lock(&s->sh[k].mu);
        *wait_ns += gs_now_ns() - t0;
      }
      ga_group_table *d = &s->sh[k].t;
      int64_t before = d->bytes;
      rc = gs_step_rows(d, b, &b->order[start[k]], start[k + 1] - start[k],
                        piece);
      *bytes += d->bytes - before;
      pthread_mutex_unlock(&s->sh[k].mu);
    }
    if (!left)
      break;
  }
  ga_gs_batch_drop(b);
  return rc;
}

int ga_gs_take(ga_group_shards *s, ga_group_table *t, int64_t piece,
               int64_t *bytes) {
  /* by shard first, so that each shard's lock is taken once a move, not
  ** once a group: 16 workers moving tens of thousands of groups each
  ** otherwise queue on the locks */
  ga_group *head[GA_GS_SHARDS] = {0};
  for (size_t j = 0; j < t->cap; j++) {
    ga_group *g = t->slot[j];
    if (!g)
      continue;
    t->slot[j] = NULL;
    int k = (int)(g->hash >> 58); /* the slots use the low bits */
    g->next_spare = head[k];
    head[k] = g;
  }
  int rc = GA_OK;
  for (int k = 0; k < GA_GS_SHARDS; k++) {
    if (!head[k])
      continue;
    ga_group_table *d = &s->sh[k].t;
    pthread_mutex_lock(&s->sh[k].mu);
    int64_t before = d->bytes;
    for (ga_group *g = head[k], *next; g; g = next) {
      next = g->next_spare;
      g->next_spare = NULL;
      if (rc == GA_OK) {
        ga_value key[GA_MAX_KEYS];
        keys_view(g, t->shape.nk + t->shape.nc, key);
        rc = gt_reserve(d);
        if (rc == GA_OK) {
          size_t i = gt_find(d, key, g->hash);
          if (!d->slot[i]) { /* new here: the group itself moves */
            gt_place(d, i, g);
            g = NULL;
          } else {
            rc = gt_merge(d, d->slot[i], key, g->st, piece);
          }
        }
      }
      if (g) { /* merged (or failed): keep it for the next piece */
        group_clear(g, &t->shape);
        g->next_spare = t->spare;
        t->spare = g;
      }
    }
    *bytes += d->bytes - before;
    pthread_mutex_unlock(&s->sh[k].mu);
  }
  t->n = 0;
  t->bytes = (int64_t)(t->cap * (sizeof(*t->slot) + sizeof(*t->hash)));
  return rc;
}

/* qsort has no context argument in C11: the shape travels in a
** thread-local (two connections may sort at once) */
static _Thread_local const ga_gshape *gs_shape_for_sort;

static int sort_cmp(const void *pa, const void *pb) {
  const ga_group *a = *(ga_group *const *)pa, *b = *(ga_group *const *)pb;
  ga_value ka[GA_MAX_KEYS], kb[GA_MAX_KEYS];
  keys_view(a, gs_shape_for_sort->nk, ka);
  keys_view(b, gs_shape_for_sort->nk, kb);
  return ga_keys_cmp(ka, kb, gs_shape_for_sort);
}

int ga_gs_sorted(ga_group_shards *s, ga_group ***out, size_t *n) {
  if (ga_gs_list(s, out, n))
    return GA_NOMEM;
  gs_shape_for_sort = &s->sh[0].t.shape;
  qsort(*out, *n, sizeof(**out), sort_cmp);
  return GA_OK;
}

int ga_gs_list(ga_group_shards *s, ga_group ***out, size_t *n) {
  size_t total = 0, k = 0;
  for (int i = 0; i < GA_GS_SHARDS; i++)
    total += s->sh[i].t.n;
  ga_group **v = sqlite3_malloc64((total ? total : 1) * sizeof(*v));
  if (!v)
    return GA_NOMEM;
  for (int i = 0; i < GA_GS_SHARDS; i++)
    for (size_t j = 0; j < s->sh[i].t.cap; j++)
      if (s->sh[i].t.slot[j])
        v[k++] = s->sh[i].t.slot[j];
  *out = v;
  *n = k;
  return GA_OK;
}
