/*
** keymemo.c — a worker's memo of group terms over one column (keymemo.h,
** whose header states the SQL interface and the rules).
**
** Why: a term such as strftime('%Y-%m', d) or substr(date(d), 1, 7)
** allocates once a row inside SQLite (strftime builds its text in a
** sqlite3_str without a connection; nested text functions copy their
** intermediate values), and every such allocation takes SQLite's global
** allocator mutex (SQLITE_CONFIG_MEMSTATUS, on by default): 16 workers
** then wait on one another (bench/RESULTS.md).  Analysts' date columns
** hold few distinct values next to their rows (a day, or a second, of
** many rows), so each worker evaluates the term once per distinct value.
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "keymemo.h"

/* TEXT and BLOB bytes of the entries, in blocks that never move. */
struct ga_kmemo_block {
  struct ga_kmemo_block *next;
  size_t used, cap;
  char data[];
};
#define KM_BLOCK_BYTES ((size_t)16 << 10)
/* A value or key with more bytes than this is not kept (the memo stays
** open for others) */
#define KM_MAX_VALUE_BYTES 4096
#define KM_MIN_ENTRIES 64u

static _Thread_local ga_keymemo *cur;

void ga_keymemo_init(ga_keymemo *m, int nk, const signed char *raw,
                     int64_t max_bytes) {
  memset(m, 0, sizeof(*m));
  m->nk = nk < GA_KEYMEMO_MAX_KEYS ? nk : GA_KEYMEMO_MAX_KEYS;
  m->max_bytes = max_bytes;
  for (int k = 0; raw && k < m->nk; k++)
    if (raw[k] >= 0) {
      m->k[k].on = 1;
      m->k[k].raw = raw[k];
      m->terms++;
    }
}

void ga_keymemo_free(ga_keymemo *m) {
  for (int k = 0; k < m->nk; k++) {
    sqlite3_free(m->k[k].ent);
    sqlite3_free(m->k[k].slot);
  }
  for (ga_kmemo_block *b = m->blocks, *nx; b; b = nx) {
    nx = b->next;
    sqlite3_free(b);
  }
  m->blocks = NULL;
  for (int k = 0; k < m->nk; k++) {
    m->k[k].ent = NULL;
    m->k[k].slot = NULL;
    m->k[k].n = m->k[k].cap = m->k[k].ent_cap = 0;
  }
}

void ga_keymemo_enter(ga_keymemo *m, ga_keymemo **old) {
  *old = cur;
  cur = m;
}

void ga_keymemo_leave(ga_keymemo *old) { cur = old; }

/* The guard's argument as the scan's key_of reads a column of a UTF-8
** database (the memo is used only there: planner/path.c): the stored
** bytes, read without a terminator (sqlite3_value_text would allocate one
** for a value read from the page).  0 when SQLite has no bytes for it. */
static int raw_of(sqlite3_value *v, ga_value *x) {
  memset(x, 0, sizeof(*x));
  switch (sqlite3_value_type(v)) {
  case SQLITE_INTEGER:
    x->type = GA_V_INT;
    x->i = sqlite3_value_int64(v);
    return 1;
  case SQLITE_FLOAT:
    x->type = GA_V_REAL;
    x->r = sqlite3_value_double(v);
    return 1;
  case SQLITE_TEXT:
    x->type = GA_V_TEXT;
    x->n = sqlite3_value_bytes(v);
    x->p = x->n ? sqlite3_value_blob(v) : (const void *)"";
    return x->p != NULL;
  case SQLITE_BLOB:
    x->type = GA_V_BLOB;
    x->p = sqlite3_value_blob(v);
    x->n = sqlite3_value_bytes(v);
    return x->p != NULL || x->n == 0;
  default:
    x->type = GA_V_NULL;
    return 1;
  }
}

/* Rule 1: one value, by type and exact bytes or bits. */
static int same(const ga_value *a, const ga_value *b) {
  if (a->type != b->type)
    return 0;
  switch (a->type) {
  case GA_V_INT:
    return a->i == b->i;
  case GA_V_REAL:
    return !memcmp(&a->r, &b->r, sizeof(double));
  case GA_V_TEXT:
  case GA_V_BLOB:
    return a->n == b->n && (!a->n || !memcmp(a->p, b->p, (size_t)a->n));
  default:
    return 1;
  }
}

static uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

/* A hash of x, eight bytes at a time (a row's lookup: the hit's cost).  A
** TEXT and a BLOB of the same bytes hash alike: same() tells them apart. */
static uint64_t hash_of(const ga_value *x) {
  switch (x->type) {
  case GA_V_INT:
    return mix((uint64_t)x->i ^ 0x1111);
  case GA_V_REAL: {
    uint64_t b;
    memcpy(&b, &x->r, sizeof b);
    return mix(b ^ 0x2222);
  }
  case GA_V_TEXT:
  case GA_V_BLOB: {
    const unsigned char *p = x->p;
    size_t n = (size_t)x->n, i = 0;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      memcpy(&w, p + i, 8);
      h = (h ^ w) * 0x100000001b3ull;
      h ^= h >> 29;
    }
    uint64_t t = 0;
    if (n > i) /* an empty value's p may be NULL */
      memcpy(&t, p + i, n - i);
    return mix(h ^ t);
  }
  default:
    return 0x3333;
  }
}

/* The entry of x in q: 1 with *at, or 0. */
static int find(const ga_kmemo_key *q, const ga_value *x, uint64_t h,
                uint32_t *at) {
  if (!q->cap)
    return 0;
  uint32_t mask = q->cap - 1;
  for (uint32_t j = (uint32_t)(h ^ (h >> 32)) & mask;; j = (j + 1) & mask) {
    uint32_t s = q->slot[j];
    if (!s)
      return 0;
    const ga_kmemo_ent *e = &q->ent[s - 1];
    if (e->h == h && same(&e->raw, x)) {
      *at = s - 1;
      return 1;
    }
  }
}

void ga_keymemo_guard(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  ga_keymemo *m = cur;
  int k = argc == 2 ? sqlite3_value_int(argv[0]) : -1;
  if (!m || k < 0 || k >= m->nk || !m->k[k].on) {
    sqlite3_result_int(ctx, 1); /* no memo here: evaluate */
    return;
  }
  ga_kmemo_key *q = &m->k[k];
  if (q->seen)
    m->broken = 1; /* rule 2: called again before the row was read */
  ga_value x;
  uint32_t at;
  if (raw_of(argv[1], &x) && find(q, &x, hash_of(&x), &at)) {
    q->seen = 1;
    q->at = at;
    sqlite3_result_int(ctx, 0);
  } else {
    q->seen = 2;
    sqlite3_result_int(ctx, 1);
  }
}

int ga_keymemo_register(sqlite3 *db) {
  /* not SQLITE_DETERMINISTIC: its answer changes from row to row for one
  ** argument (a miss, then hits), and SQLite must evaluate it exactly where
  ** the CASE is, once a row */
  return sqlite3_create_function(db, "gpuagg_keymemo_miss", 2,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL,
                                 ga_keymemo_guard, NULL, NULL);
}

/* Room for q's next entry (arrays doubled); 0: full (rule 3), -1: NOMEM. */
static int grow(ga_keymemo *m, ga_kmemo_key *q) {
  if (q->n < q->ent_cap)
    return 1;
  uint32_t ne = q->ent_cap ? q->ent_cap * 2 : KM_MIN_ENTRIES, ns = ne * 2;
  if (ne > (1u << 24))
    return 0;
  int64_t add = (int64_t)(ne - q->ent_cap) * GA_KEYMEMO_ENTRY_BYTES +
                (int64_t)(ns - q->cap) * (int64_t)sizeof(uint32_t);
  if (m->bytes + add > m->max_bytes)
    return 0;
  ga_kmemo_ent *e = sqlite3_realloc64(q->ent, (uint64_t)ne * sizeof(*e));
  if (!e)
    return -1;
  q->ent = e;
  uint32_t *s = sqlite3_malloc64((uint64_t)ns * sizeof(*s));
  if (!s)
    return -1;
  memset(s, 0, (size_t)ns * sizeof(*s));
  for (uint32_t i = 0; i < q->n; i++) { /* the entries' slots, again */
    uint64_t h = e[i].h;
    uint32_t j = (uint32_t)(h ^ (h >> 32)) & (ns - 1);
    while (s[j])
      j = (j + 1) & (ns - 1);
    s[j] = i + 1;
  }
  sqlite3_free(q->slot);
  q->slot = s;
  q->cap = ns;
  q->ent_cap = ne;
  m->bytes += add;
  return 1;
}

/* n bytes in m's blocks; NULL: full (*nomem 0) or out of memory (1). */
static void *room(ga_keymemo *m, size_t n, int *nomem) {
  ga_kmemo_block *b = m->blocks;
  if (!b || b->cap - b->used < n) {
    size_t cap = n > KM_BLOCK_BYTES ? n : KM_BLOCK_BYTES;
    int64_t add = (int64_t)(sizeof(*b) + cap);
    if (m->bytes + add > m->max_bytes)
      return NULL;
    b = sqlite3_malloc64(sizeof(*b) + cap);
    if (!b) {
      *nomem = 1;
      return NULL;
    }
    b->cap = cap;
    b->used = 0;
    b->next = m->blocks;
    m->blocks = b;
    m->bytes += add;
  }
  void *p = b->data + b->used;
  b->used += n;
  return p;
}

/* x, with its bytes copied into m's blocks. */
static int keep(ga_keymemo *m, const ga_value *x, ga_value *out, int *nomem) {
  *out = *x;
  if ((x->type == GA_V_TEXT || x->type == GA_V_BLOB) && x->n > 0) {
    void *p = room(m, (size_t)x->n, nomem);
    if (!p)
      return 0;
    memcpy(p, x->p, (size_t)x->n);
    out->p = p;
  } else if (x->type == GA_V_TEXT || x->type == GA_V_BLOB) {
    out->p = ""; /* empty: key_of's non-NULL pointer */
  }
  return 1;
}

static int value_bytes(const ga_value *x) {
  return x->type == GA_V_TEXT || x->type == GA_V_BLOB ? x->n : 0;
}

/* The row's raw value and key into q (a miss).  GA_OK or GA_NOMEM. */
static int insert(ga_keymemo *m, ga_kmemo_key *q, const ga_value *raw,
                  const ga_value *key) {
  if (value_bytes(raw) > KM_MAX_VALUE_BYTES ||
      value_bytes(key) > KM_MAX_VALUE_BYTES)
    return GA_OK; /* not kept; others still are */
  uint64_t h = hash_of(raw);
  uint32_t at;
  if (find(q, raw, h, &at))
    return GA_OK;
  int g = grow(m, q), nomem = 0;
  if (g < 0)
    return GA_NOMEM;
  if (g == 0) {
    m->full = 1;
    return GA_OK;
  }
  ga_kmemo_ent *e = &q->ent[q->n];
  e->h = h;
  if (!keep(m, raw, &e->raw, &nomem) || !keep(m, key, &e->key, &nomem)) {
    if (nomem)
      return GA_NOMEM;
    m->full = 1; /* the bytes taken for raw stay in the block, charged */
    return GA_OK;
  }
  uint32_t mask = q->cap - 1;
  uint32_t j = (uint32_t)(h ^ (h >> 32)) & mask;
  while (q->slot[j])
    j = (j + 1) & mask;
  q->slot[j] = ++q->n;
  return GA_OK;
}

int ga_keymemo_take(ga_keymemo *m, ga_value *key) {
  if (m->broken)
    return GA_KEYMEMO_STEP;
  for (int k = 0; k < m->nk; k++) {
    ga_kmemo_key *q = &m->k[k];
    if (!q->on)
      continue;
    int seen = q->seen;
    q->seen = 0;
    if (seen == 1) {
      if (key[k].type != GA_V_NULL) /* the CASE was evaluated: not a hit */
        return GA_KEYMEMO_STEP;
      key[k] = q->ent[q->at].key;
      q->hits++;
    } else if (seen == 2) {
      q->misses++;
      if (!m->full) {
        int rc = insert(m, q, &key[q->raw], &key[k]);
        if (rc != GA_OK)
          return rc;
      }
    } else {
      return GA_KEYMEMO_STEP; /* the guard did not see this row */
    }
  }
  return GA_OK;
}

int64_t ga_keymemo_charge(ga_keymemo *m) {
  int64_t d = m->bytes - m->charged;
  m->charged = m->bytes;
  return d;
}
