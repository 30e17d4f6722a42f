/*
** dims.c — a star join's dimensions, built once per call in the scan's
** snapshot and probed by the workers (dims.h, its rules).
*/
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "dims.h"
#include "scan_group.h"

/* ---- the registry: tokens of the builds alive ---- */

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
#define REG_MAX 256
static ga_sd *reg[REG_MAX];

static int reg_add(ga_sd *sd) {
  pthread_mutex_lock(&reg_mu);
  int ok = 0;
  for (int i = 0; i < REG_MAX && !ok; i++)
    if (!reg[i])
      reg[i] = sd, ok = 1;
  pthread_mutex_unlock(&reg_mu);
  return ok;
}

static void reg_del(ga_sd *sd) {
  pthread_mutex_lock(&reg_mu);
  for (int i = 0; i < REG_MAX; i++)
    if (reg[i] == sd)
      reg[i] = NULL;
  pthread_mutex_unlock(&reg_mu);
}

static ga_sd *reg_find(uint64_t token) {
  ga_sd *r = NULL;
  pthread_mutex_lock(&reg_mu);
  for (int i = 0; i < REG_MAX && !r; i++)
    if (reg[i] && reg[i]->token == token)
      r = reg[i];
  pthread_mutex_unlock(&reg_mu);
  return r;
}

/* ---- memory: an arena of TEXT and BLOB bytes ---- */

struct ga_sd_block {
  ga_sd_block *next;
  size_t used, cap;
  char b[];
};

static const char *arena_put(ga_sd_dim *d, const void *p, int n) {
  ga_sd_block *b = d->blocks;
  if (!b || b->cap - b->used < (size_t)n + 1) {
    size_t cap = (size_t)n + 1 > 65536 ? (size_t)n + 1 : 65536;
    b = sqlite3_malloc64(sizeof(*b) + cap);
    if (!b)
      return NULL;
    b->next = d->blocks;
    b->used = 0;
    b->cap = cap;
    d->blocks = b;
    d->bytes += (int64_t)(sizeof(*b) + cap);
  }
  char *r = b->b + b->used;
  if (n)
    memcpy(r, p, (size_t)n);
  r[n] = 0;
  b->used += (size_t)n + 1;
  return r;
}

static void dim_clear(ga_sd_dim *d) {
  sqlite3_free(d->keys);
  sqlite3_free(d->attrs);
  sqlite3_free(d->slot);
  sqlite3_free(d->bits);
  sqlite3_free(d->null_attrs);
  d->null_attrs = NULL;
  while (d->blocks) {
    ga_sd_block *b = d->blocks;
    d->blocks = b->next;
    sqlite3_free(b);
  }
  d->keys = NULL;
  d->attrs = NULL;
  d->slot = NULL;
  d->bits = NULL;
  d->nbits = 0;
  d->rows = d->bytes = 0;
  d->kind = 0;
  d->span = d->cap = 0;
  d->lo = 0;
}

ga_sd *ga_sd_new(int n) {
  ga_sd *sd = sqlite3_malloc64(sizeof(*sd));
  if (!sd)
    return NULL;
  memset(sd, 0, sizeof(*sd));
  sd->d = sqlite3_malloc64(sizeof(ga_sd_dim) * (size_t)(n ? n : 1));
  if (!sd->d) {
    sqlite3_free(sd);
    return NULL;
  }
  memset(sd->d, 0, sizeof(ga_sd_dim) * (size_t)(n ? n : 1));
  sd->n = n;
  const char *env = getenv("GPUAGG_DIM_BYTES"); /* tests: rule 4 */
  sd->cap_bytes = env && atoll(env) > 0 ? atoll(env) : GA_SD_DIM_BYTES;
  do
    sqlite3_randomness(sizeof sd->token, &sd->token);
  while (!sd->token || sd->token > (uint64_t)INT64_MAX);
  if (!reg_add(sd)) {
    sqlite3_free(sd->d);
    sqlite3_free(sd);
    return NULL;
  }
  return sd;
}

void ga_sd_free(ga_sd *sd) {
  if (!sd)
    return;
  reg_del(sd);
  for (int k = 0; k < sd->n; k++) {
    dim_clear(&sd->d[k]);
    sqlite3_free(sd->d[k].sql);
    sqlite3_free(sd->d[k].null_sql);
    sqlite3_free(sd->d[k].table);
    sqlite3_free(sd->d[k].span_sql);
  }
  sqlite3_free(sd->d);
  sqlite3_free(sd->probe_piece);
  sqlite3_free(sd->probe_rows);
  sqlite3_free(sd);
}

/* ---- rule 2: a value as a key ---- */

/* v as key component under (numeric, coll): 0 NULL (never matches), 1 set.
** TEXT keys point at v's bytes, or at *buf (folded, sqlite3_malloc'd,
** freed by the caller) for NOCASE. */
static int key_of(sqlite3_value *v, int numeric, int coll, ga_sd_key *k,
                  char **buf) {
  sqlite3_value *dup = NULL;
  int t = sqlite3_value_type(v);
  if (t == SQLITE_NULL)
    return 0;
  if (t == SQLITE_TEXT && numeric) {
    /* OP_Eq's numeric affinity, applied to a copy: the row's value stays */
    dup = sqlite3_value_dup(v);
    if (!dup)
      return -1;
    t = sqlite3_value_numeric_type(dup);
    if (t != SQLITE_TEXT)
      v = dup;
  }
  int r = 1;
  if (t == SQLITE_INTEGER) {
    k->cls = 1;
    k->u.i = sqlite3_value_int64(v);
  } else if (t == SQLITE_FLOAT) {
    double x = sqlite3_value_double(v);
    if (x == floor(x) && x >= -9223372036854775808.0 &&
        x < 9223372036854775808.0) {
      k->cls = 1; /* 1.0 = 1: the integer it equals exactly */
      k->u.i = (int64_t)x;
    } else {
      k->cls = 2;
      k->u.r = x;
    }
  } else if (t == SQLITE_TEXT) {
    const char *p = (const char *)sqlite3_value_text(v);
    int n = sqlite3_value_bytes(v);
    if (!p) {
      r = -1;
    } else {
      k->cls = 3;
      if (coll == GA_COLL_RTRIM)
        while (n > 0 && p[n - 1] == ' ')
          n--;
      if (coll == GA_COLL_NOCASE) {
        char *f = sqlite3_malloc64((uint64_t)n + 1);
        if (!f) {
          r = -1;
        } else {
          for (int i = 0; i < n; i++)
            f[i] = p[i] >= 'A' && p[i] <= 'Z' ? (char)(p[i] + 32) : p[i];
          *buf = f;
          p = f;
        }
      }
      k->u.p = p;
      k->n = n;
    }
  } else {
    k->cls = 4;
    k->u.p = sqlite3_value_blob(v);
    k->n = sqlite3_value_bytes(v);
    if (!k->u.p)
      k->u.p = "";
  }
  if (dup) {
    if (r == 1 && (k->cls == 3 || k->cls == 4) && !*buf) {
      /* the bytes live in dup: keep a copy */
      char *c = sqlite3_malloc64((uint64_t)k->n + 1);
      if (!c)
        r = -1;
      else {
        memcpy(c, k->u.p, (size_t)k->n);
        *buf = c;
        k->u.p = c;
      }
    }
    sqlite3_value_free(dup);
  }
  return r;
}

static uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

static uint64_t key_hash(const ga_sd_key *k, int nk) {
  uint64_t h = 0x243f6a8885a308d3ull;
  for (int c = 0; c < nk; c++) {
    h = mix(h, k[c].cls);
    if (k[c].cls == 1)
      h = mix(h, (uint64_t)k[c].u.i);
    else if (k[c].cls == 2) {
      uint64_t b;
      memcpy(&b, &k[c].u.r, 8);
      h = mix(h, b);
    } else {
      uint64_t x = 1469598103934665603ull;
      for (int i = 0; i < k[c].n; i++)
        x = (x ^ (unsigned char)k[c].u.p[i]) * 1099511628211ull;
      h = mix(h, x);
    }
  }
  return h;
}

static int key_eq(const ga_sd_key *a, const ga_sd_key *b, int nk) {
  for (int c = 0; c < nk; c++) {
    if (a[c].cls != b[c].cls)
      return 0;
    if (a[c].cls == 1 ? a[c].u.i != b[c].u.i
        : a[c].cls == 2
            ? a[c].u.r != b[c].u.r
            : a[c].n != b[c].n || memcmp(a[c].u.p, b[c].u.p, (size_t)a[c].n))
      return 0;
  }
  return 1;
}

static int bit_of(const uint64_t *b, uint64_t i) {
  return (int)(b[i >> 6] >> (i & 63)) & 1;
}

/* Row of key k (0..rows-1), -1 none.  Rule 7: the key's bit first. */
static int64_t find(const ga_sd_dim *d, const ga_sd_key *k) {
  if (d->kind == 1) {
    if (k[0].cls != 1)
      return -1;
    uint64_t o = (uint64_t)k[0].u.i - (uint64_t)d->lo;
    return o < d->span && bit_of(d->bits, o) ? (int64_t)d->slot[o] - 1 : -1;
  }
  if (!d->cap)
    return -1;
  uint64_t h = key_hash(k, d->nk);
  if (!bit_of(d->bits, h & (d->nbits - 1)))
    return -1;
  uint64_t m = d->cap - 1, i = h & m;
  for (;; i = (i + 1) & m) {
    uint32_t s = d->slot[i];
    if (!s)
      return -1;
    if (key_eq(&d->keys[(size_t)(s - 1) * (size_t)d->nk], k, d->nk))
      return (int64_t)s - 1;
  }
}

/* ---- the build (rule 1) ---- */

/* v into cell c (TEXT and BLOB bytes into d's arena): 0, or 1 no memory. */
static int cell_of(ga_sd_dim *d, sqlite3_value *v, ga_sd_cell *c) {
  c->type = (uint8_t)sqlite3_value_type(v);
  c->n = 0;
  if (c->type == SQLITE_INTEGER)
    c->u.i = sqlite3_value_int64(v);
  else if (c->type == SQLITE_FLOAT)
    c->u.r = sqlite3_value_double(v);
  else if (c->type == SQLITE_TEXT || c->type == SQLITE_BLOB) {
    const void *p = c->type == SQLITE_TEXT ? (const void *)sqlite3_value_text(v)
                                           : sqlite3_value_blob(v);
    c->n = sqlite3_value_bytes(v);
    if ((!p && c->n) || !(c->u.p = arena_put(d, p ? p : "", c->n)))
      return 1;
  }
  return 0;
}

/* A LEFT JOIN's NULL row: 0, or build_one's codes. */
static int build_null(ga_sd_dim *d, sqlite3 *db, const ga_scan_spec *sp,
                      const char **msg) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, d->null_sql, -1, &st, NULL);
  int ret = 0;
  if (rc == SQLITE_OK) {
    for (int i = 0; i < sp->nparams; i++)
      if (sp->params[i] && sqlite3_bind_value(st, i + 3, sp->params[i]))
        break;
    rc = sqlite3_step(st);
  }
  if (rc == SQLITE_ROW) {
    d->null_attrs =
        sqlite3_malloc64(sizeof(ga_sd_cell) * (uint64_t)(d->na ? d->na : 1));
    if (!d->null_attrs)
      ret = 1;
    for (int c = 0; c < d->na && !ret; c++)
      ret = cell_of(d, sqlite3_column_value(st, 1 + c), &d->null_attrs[c]);
  } else {
    *msg = sqlite3_errmsg(db);
    ret = (rc & 0xff) == SQLITE_NOMEM       ? 1
          : (rc & 0xff) == SQLITE_INTERRUPT ? 5
                                            : 4;
  }
  sqlite3_finalize(st);
  return ret;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define CHARGE(d, x, cap)                                                      \
  do {                                                                         \
    (d)->bytes += (int64_t)(x);                                                \
    if ((d)->bytes > (cap))                                                    \
      return 2;                                                                \
  } while (0)

/* 0 built; 1 no memory; 2 past the cap; 3 duplicate keys; 4 SQLite's error
** (*msg); 5 interrupted. */
static int build_one(ga_sd *sd, ga_sd_dim *d, sqlite3 *db,
                     const ga_scan_spec *sp, const char **msg) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, d->sql, -1, &st, NULL);
  if (rc != SQLITE_OK) {
    *msg = sqlite3_errmsg(db);
    return (rc & 0xff) == SQLITE_NOMEM       ? 1
           : (rc & 0xff) == SQLITE_INTERRUPT ? 5
                                             : 4;
  }
  for (int i = 0; i < sp->nparams; i++)
    if (sp->params[i] && sqlite3_bind_value(st, i + 3, sp->params[i]))
      break;
  int64_t cap_rows = 0;
  int ret = 0;
  int nk = d->nk, na = d->na;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (d->rows == cap_rows) {
      int64_t nc = cap_rows ? cap_rows * 2 : 256;
      if (nc > UINT32_MAX - 2) {
        ret = 2;
        break;
      }
      int64_t add = (nc - cap_rows) *
                    (int64_t)(sizeof(ga_sd_key) * nk + sizeof(ga_sd_cell) * na);
      d->bytes += add;
      if (d->bytes > sd->cap_bytes) {
        ret = 2;
        break;
      }
      ga_sd_key *k =
          sqlite3_realloc64(d->keys, sizeof(ga_sd_key) * (uint64_t)nk * nc);
      if (k)
        d->keys = k;
      ga_sd_cell *a =
          na ? sqlite3_realloc64(d->attrs, sizeof(ga_sd_cell) * (uint64_t)na *
                                               (uint64_t)nc)
             : d->attrs;
      if (a)
        d->attrs = a;
      if (!k || (na && !a)) {
        ret = 1;
        break;
      }
      cap_rows = nc;
    }
    ga_sd_key *k = &d->keys[(size_t)d->rows * (size_t)nk];
    int null = 0;
    for (int c = 0; c < nk && !null && !ret; c++) {
      char *buf = NULL;
      int r = key_of(sqlite3_column_value(st, c), d->numeric[c], d->coll[c],
                     &k[c], &buf);
      if (r < 0)
        ret = 1;
      else if (r == 0)
        null = 1; /* a NULL key joins nothing */
      else if (k[c].cls >= 3 && !(k[c].u.p = arena_put(d, k[c].u.p, k[c].n)))
        ret = 1;
      sqlite3_free(buf);
    }
    if (ret)
      break;
    if (null)
      continue;
    ga_sd_cell *a = &d->attrs[(size_t)d->rows * (size_t)na];
    for (int c = 0; c < na && !ret; c++)
      ret = cell_of(d, sqlite3_column_value(st, nk + c), &a[c]);
    if (ret)
      break;
    if (d->bytes > sd->cap_bytes) {
      ret = 2;
      break;
    }
    d->rows++;
  }
  if (!ret && rc != SQLITE_DONE) {
    *msg = sqlite3_errmsg(db);
    ret = (rc & 0xff) == SQLITE_NOMEM       ? 1
          : (rc & 0xff) == SQLITE_INTERRUPT ? 5
                                            : 4;
  }
  sqlite3_finalize(st);
  if (ret)
    return ret;
  /* rule 5: dense or hash */
  int dense = nk == 1 && d->rows > 0;
  int64_t lo = 0, hi = 0;
  for (int64_t r = 0; r < d->rows && dense; r++) {
    if (d->keys[r].cls != 1)
      dense = 0;
    else if (!r || d->keys[r].u.i < lo)
      lo = d->keys[r].u.i;
    if (dense && (!r || d->keys[r].u.i > hi))
      hi = d->keys[r].u.i;
  }
  if (dense) {
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
    if (span == 0 ||
        (span > (uint64_t)d->rows * 4 + 1024 && span > GA_SD_DENSE_SLOTS))
      dense = 0;
    else {
      uint64_t words = (span + 63) / 64;
      CHARGE(d, span * sizeof(uint32_t) + words * 8, sd->cap_bytes);
      d->slot = sqlite3_malloc64(span * sizeof(uint32_t));
      d->bits = sqlite3_malloc64(words * 8);
      if (!d->slot || !d->bits)
        return 1;
      memset(d->slot, 0, span * sizeof(uint32_t));
      memset(d->bits, 0, words * 8);
      d->nbits = span;
      d->lo = lo;
      d->span = span;
      d->kind = 1;
      for (int64_t r = 0; r < d->rows; r++) {
        uint64_t o = (uint64_t)d->keys[r].u.i - (uint64_t)lo;
        if (d->slot[o])
          return 3; /* rule 3 */
        d->slot[o] = (uint32_t)(r + 1);
        d->bits[o >> 6] |= (uint64_t)1 << (o & 63);
      }
      return 0;
    }
  }
  uint64_t cap = 16;
  while (cap < (uint64_t)d->rows * 2)
    cap *= 2;
  /* rule 7: 4 bits a slot (cap is a power of 2 of at least 16) */
  CHARGE(d, cap * sizeof(uint32_t) + cap / 2, sd->cap_bytes);
  d->slot = sqlite3_malloc64(cap * sizeof(uint32_t));
  d->bits = sqlite3_malloc64(cap / 2);
  if (!d->slot || !d->bits)
    return 1;
  memset(d->slot, 0, cap * sizeof(uint32_t));
  memset(d->bits, 0, cap / 2);
  d->nbits = cap * 4;
  d->cap = cap;
  d->kind = 2;
  for (int64_t r = 0; r < d->rows; r++) {
    const ga_sd_key *k = &d->keys[(size_t)r * (size_t)nk];
    uint64_t h = key_hash(k, nk), i = h & (cap - 1), b = h & (d->nbits - 1);
    d->bits[b >> 6] |= (uint64_t)1 << (b & 63);
    for (;; i = (i + 1) & (cap - 1)) {
      uint32_t s = d->slot[i];
      if (!s) {
        d->slot[i] = (uint32_t)(r + 1);
        break;
      }
      if (key_eq(&d->keys[(size_t)(s - 1) * (size_t)nk], k, nk))
        return 3; /* rule 3 */
    }
  }
  return 0;
}

/* Rule 8: the range snippet of d in text t (after its marker): lo..hi,
** or `1` (on 0). */
static void range_write(char *t, const ga_sd_dim *d, int on, int64_t lo,
                        int64_t hi) {
  char *p = t ? strstr(t, d->marker) : NULL;
  if (!p)
    return;
  p += strlen(d->marker);
  if (!on) {
    memset(p, ' ', (size_t)d->range_len);
    p[0] = '1';
    return;
  }
  char f[32];
  sqlite3_snprintf((int)sizeof f, f, "%20lld", (long long)lo);
  memcpy(p + d->range_lo, f, 20);
  sqlite3_snprintf((int)sizeof f, f, "%20lld", (long long)hi);
  memcpy(p + d->range_lo + 25, f, 20);
}

/* Rule 8 for dimension d, built: its range, or none. */
static void range_of(ga_sd *sd, ga_sd_dim *d, sqlite3 *db) {
  int on = d->range_on != 0; /* a blanked snippet stays blank (rule 8) */
  int64_t lo = 1, hi = 0;
  double all = -1; /* the key column's span (max - min), -1 unread */
  for (int64_t r = 0; r < d->rows && on; r++) {
    const ga_sd_key *k = &d->keys[r];
    if (k->cls != 1)
      on = 0;
    else if (!r || k->u.i < lo)
      lo = k->u.i;
    if (on && (!r || k->u.i > hi))
      hi = k->u.i;
  }
  if (on && d->rows) { /* worth a term: at most half the table's span */
    sqlite3_stmt *st = NULL;
    on = 0;
    if (sqlite3_prepare_v2(db, d->span_sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_type(st, 0) == SQLITE_INTEGER &&
        sqlite3_column_type(st, 1) == SQLITE_INTEGER) {
      all = (double)sqlite3_column_int64(st, 1) -
            (double)sqlite3_column_int64(st, 0);
      on = (double)hi - (double)lo <= all / 2;
    }
    sqlite3_finalize(st);
  }
  d->range_on = on;
  /* rule 9: the share of the fact's keys the range keeps (uniform keys) */
  d->range_share = !on ? 1.0
                   : !d->rows || all < 0
                       ? 0.0
                       : ((double)hi - (double)lo + 1) / (all + 1);
  d->range_lo_v = lo;
  d->range_hi_v = hi;
  range_write(sd->probe_piece, d, on, lo, hi);
  range_write(sd->probe_rows, d, on, lo, hi);
}

/* ---- rule 10: the last choices ---- */

static struct {
  uint64_t key;
  int join;
  unsigned calls, age;
} memo_tab[GA_SD_MEMO];
static unsigned memo_clock;

static uint64_t fnv(uint64_t h, const char *z) {
  for (; z && *z; z++)
    h = (h ^ (unsigned char)*z) * 1099511628211ull;
  return h;
}

/* The key of sd's SQLite's join text on db's file with nw workers; 0 none
** (an in-memory or temporary file: no file name). */
static uint64_t memo_key(const ga_sd *sd, sqlite3 *db, int nw) {
  const char *f = sqlite3_db_filename(db, "main");
  if (!f || !*f || !sd->join_piece)
    return 0;
  uint64_t h = fnv(fnv(1469598103934665603ull, sd->join_piece), f);
  h = mix(h, (uint64_t)nw);
  return h ? h : 1;
}

/* 1: the last build for key chose SQLite's join and this call is not the
** one that weighs again (counted). */
static int memo_join(uint64_t key) {
  int r = 0;
  pthread_mutex_lock(&reg_mu);
  for (int i = 0; i < GA_SD_MEMO; i++)
    if (memo_tab[i].key == key) {
      r = memo_tab[i].join && ++memo_tab[i].calls % GA_SD_MEMO_CALLS != 0;
      break;
    }
  pthread_mutex_unlock(&reg_mu);
  return r;
}

static void memo_set(uint64_t key, int join) {
  pthread_mutex_lock(&reg_mu);
  int at = 0;
  for (int i = 0; i < GA_SD_MEMO; i++) {
    if (memo_tab[i].key == key) {
      at = i;
      break;
    }
    if (memo_tab[i].age < memo_tab[at].age)
      at = i; /* the oldest (0: never used) */
  }
  memo_tab[at].key = key;
  memo_tab[at].join = join;
  memo_tab[at].calls = 0;
  memo_tab[at].age = ++memo_clock;
  pthread_mutex_unlock(&reg_mu);
}

/* Rule 9: the probes (0) or SQLite's join (1) for nw workers, the
** estimates into sd. */
static int choose(ga_sd *sd, int nw) {
  const char *env = getenv("GPUAGG_DIM_CHOICE"); /* A/B, tests */
  double n = (double)sd->fact_rows, calls = 0, reach = 1, pass = 1;
  double built = 0;
  int inner = 0, known = sd->fact_rows > 0;
  for (int k = 0; k < sd->n; k++) {
    const ga_sd_dim *d = &sd->d[k];
    if (d->left || d->table_rows <= 0)
      known = 0;
    double f = d->table_rows > 0 ? (double)d->rows / (double)d->table_rows : 1;
    if (f > 1)
      f = 1;
    double r = d->span_sql && d->range_on == 1 ? d->range_share : 1;
    reach *= r; /* SQLite tests every range before the first call */
    pass *= f;
    built += (double)d->table_rows;
    inner++;
  }
  /* the calls, in the texts' order: a dimension's share of the rows in
  ** its range is f / r */
  double prefix = 1;
  for (int k = 0; k < sd->n; k++) {
    const ga_sd_dim *d = &sd->d[k];
    double f = d->table_rows > 0 ? (double)d->rows / (double)d->table_rows : 1;
    double r = d->span_sql && d->range_on == 1 ? d->range_share : 1;
    calls += prefix;
    prefix *= r > 0 ? (f / r > 1 ? 1 : f / r) : 0;
  }
  sd->probe_ms = n * reach * calls * GA_SD_NS_CALL / 1e6;
  sd->join_ms = ((double)(nw > 0 ? nw : 1) * built * GA_SD_NS_ROW +
                 n * pass * inner * GA_SD_NS_SEEK) /
                1e6;
  sd->forced = env && (!strcmp(env, "probe") || !strcmp(env, "join"));
  if (sd->forced)
    return !strcmp(env, "join");
  /* a written range drops most fact rows inline, before any call: SQLite's
  ** join tests its Bloom filters on every row instead (SSB Q3.4, Q4.3) */
  return known && reach >= 1 && sd->join_ms < sd->probe_ms;
}

int ga_sd_build(void *arg, sqlite3 **w, int nw, char *why, size_t n) {
  ga_sd *sd = arg;
  ga_scan_spec *sp = sd->spec;
  (void)why;
  (void)n;
  sd->builds++;
  sd->used = 1;
  sd->why[0] = 0;
  sd->chosen = 0;
  sd->remembered = 0;
  sp->sql_piece = sd->probe_piece;
  sp->sql_rows = sd->probe_rows;
  sp->large_pieces = 1;
  const char *env = getenv("GPUAGG_DIM_CHOICE");
  uint64_t key = env ? 0 : memo_key(sd, w[0], nw);
  if (key && memo_join(key)) { /* rule 10: SQLite's join, nothing built */
    for (int k = 0; k < sd->n; k++)
      dim_clear(&sd->d[k]);
    sd->used = 0;
    sd->chosen = sd->choice = sd->remembered = 1;
    sd->forced = 0;
    sqlite3_snprintf((int)sizeof sd->why, sd->why,
                     "an earlier call's build chose SQLite's join in every "
                     "worker, one piece each (dims.h rules 9 and 10: built "
                     "and weighed again every %d calls)",
                     GA_SD_MEMO_CALLS);
    sp->sql_piece = sd->join_piece;
    sp->sql_rows = sd->join_rows;
    sp->large_pieces = 2;
    return SQLITE_OK;
  }
  for (int k = 0; k < sd->n; k++) {
    ga_sd_dim *d = &sd->d[k];
    dim_clear(d);
    d->probes = d->matches = 0;
    const char *msg = NULL;
    double t0 = now_ms();
    int r = build_one(sd, d, w[0], sp, &msg);
    if (!r && d->left)
      r = build_null(d, w[0], sp, &msg);
    d->ms = now_ms() - t0;
    if (r == 1)
      return SQLITE_NOMEM;
    if (r == 5)
      return SQLITE_INTERRUPT;
    if (r) {
      /* rules 3, 4: SQLite's join in every worker, as planned before */
      sqlite3_snprintf((int)sizeof sd->why, sd->why,
                       r == 2   ? "the lookup of %s passed its cap of %lld "
                                  "bytes (dims.h rule 4)"
                       : r == 3 ? "%s has two rows of one key after affinity "
                                  "and collation (a fact row joins both)"
                                : "building %s failed (%s)",
                       d->table,
                       r == 2 ? (long long)sd->cap_bytes : (long long)0,
                       msg ? msg : "");
      if (r == 4)
        sqlite3_snprintf((int)sizeof sd->why, sd->why,
                         "building %s failed (%s)", d->table, msg ? msg : "");
      sd->used = 0;
      for (int x = 0; x <= k; x++)
        dim_clear(&sd->d[x]);
      sp->sql_piece = sd->join_piece;
      sp->sql_rows = sd->join_rows;
      sp->large_pieces = 2; /* rule 9: the Bloom filters once per worker */
      return SQLITE_OK;
    }
  }
  for (int k = 0; k < sd->n; k++)
    if (sd->d[k].span_sql)
      range_of(sd, &sd->d[k], w[0]);
  sd->chosen = 1;
  sd->choice = choose(sd, nw);
  if (key && !sd->forced) /* rule 10 */
    memo_set(key, sd->choice);
  if (sd->choice) { /* rule 9: SQLite's join, the dimensions kept for JSON */
    sqlite3_snprintf(
        (int)sizeof sd->why, sd->why,
        "%s: SQLite's join in every worker, one piece each (its Bloom "
        "filters and B-tree seeks %.1f ms against %.1f ms of probe calls, "
        "dims.h rule 9)",
        sd->forced ? "chosen by GPUAGG_DIM_CHOICE=join"
                   : "few fact rows pass the dimensions' filters",
        sd->join_ms, sd->probe_ms);
    sd->used = 0;
    sp->sql_piece = sd->join_piece;
    sp->sql_rows = sd->join_rows;
    sp->large_pieces = 2;
  }
  return SQLITE_OK;
}

char *ga_sd_json(const ga_sd *sd) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendf(s, "{\"used\":%s", sd->used ? "true" : "false");
  if (!sd->used && sd->why[0])
    sqlite3_str_appendf(s, ",\"why\":\"%w\"", sd->why);
  if (sd->chosen) /* rule 9 */
    sqlite3_str_appendf(
        s,
        ",\"choice\":{\"path\":\"%s\",\"forced\":%s,"
        "\"remembered\":%s,\"probe_ms\":%.3f,"
        "\"join_ms\":%.3f}",
        sd->choice ? "join" : "probe", sd->forced ? "true" : "false",
        sd->remembered ? "true" : "false", sd->probe_ms, sd->join_ms);
  sqlite3_str_appendall(s, ",\"dims\":[");
  for (int k = 0; k < sd->n; k++) {
    const ga_sd_dim *d = &sd->d[k];
    int64_t pr = __atomic_load_n(&d->probes, __ATOMIC_RELAXED);
    int64_t ma = __atomic_load_n(&d->matches, __ATOMIC_RELAXED);
    sqlite3_str_appendf(
        s,
        "%s{\"table\":\"%w\",\"rows\":%lld,\"bytes\":%lld,"
        "\"kind\":\"%s\",\"ms\":%.3f,\"probes\":%lld,"
        "\"matches\":%lld,\"table_rows\":%lld",
        k ? "," : "", d->table, (long long)d->rows, (long long)d->bytes,
        d->kind == 1   ? "dense"
        : d->kind == 2 ? "hash"
                       : "none",
        d->ms, (long long)pr, (long long)ma, (long long)d->table_rows);
    if (d->span_sql && d->range_on == 1) /* rule 8 */
      sqlite3_str_appendf(s, ",\"range\":[%lld,%lld]}",
                          (long long)d->range_lo_v, (long long)d->range_hi_v);
    else
      sqlite3_str_appendf(s, ",\"range\":null}");
  }
  sqlite3_str_appendall(s, "]}");
  return sqlite3_str_finish(s);
}

/* ---- the probes (rule 6) ---- */

typedef struct memo_dim {
  int have;    /* a single INTEGER key remembered */
  int64_t key; /* it */
  int64_t row; /* its row, -1 none */
  int64_t probes, matches;
} memo_dim;

typedef struct memo memo;

/* A worker connection's function's user data (rule 6): the memo its
** running statement made, NULL none. */
typedef struct sd_conn {
  memo *cur;
} sd_conn;

struct memo {
  ga_sd *sd;
  sd_conn *owner; /* whose cur may point here */
  int n;
  memo_dim m[];
};

static void memo_free(void *p) {
  memo *x = p;
  if (x->owner && x->owner->cur == x)
    x->owner->cur = NULL;
  for (int k = 0; k < x->n; k++) {
    __atomic_add_fetch(&x->sd->d[k].probes, x->m[k].probes, __ATOMIC_RELAXED);
    __atomic_add_fetch(&x->sd->d[k].matches, x->m[k].matches, __ATOMIC_RELAXED);
  }
  sqlite3_free(x);
}

static memo *memo_of(sqlite3_context *ctx, sqlite3_value *tok) {
  sd_conn *c = sqlite3_user_data(ctx);
  uint64_t t = (uint64_t)sqlite3_value_int64(tok);
  memo *x = c ? c->cur : NULL;
  if (x && x->sd->token == t) /* the statement's memo: no auxdata search */
    return x;
  x = sqlite3_get_auxdata(ctx, 0);
  if (x) {
    if (c && x->sd->token == t)
      c->cur = x, x->owner = c;
    return x;
  }
  ga_sd *sd = reg_find(t);
  if (!sd || !sd->used)
    return NULL;
  x = sqlite3_malloc64(sizeof(*x) + sizeof(memo_dim) * (size_t)sd->n);
  if (!x)
    return NULL;
  memset(x, 0, sizeof(*x) + sizeof(memo_dim) * (size_t)sd->n);
  x->sd = sd;
  x->n = sd->n;
  sqlite3_set_auxdata(ctx, 0, x, memo_free);
  x = sqlite3_get_auxdata(ctx, 0); /* NULL: set_auxdata freed it */
  if (x && c)
    c->cur = x, x->owner = c;
  return x;
}

/* The row of dimension argv[1]'s key argv[a..], -1 none, -2 error. */
static int64_t probe(sqlite3_context *ctx, int argc, sqlite3_value **argv,
                     int a, ga_sd_dim **pd, int count) {
  memo *x = memo_of(ctx, argv[0]);
  if (!x) {
    sqlite3_result_error(ctx,
                         "gpuagg_dim_probe: no dimensions are built under "
                         "this token (gpu_query's workers alone call it)",
                         -1);
    return -2;
  }
  int dk = sqlite3_value_int(argv[1]);
  if (dk < 0 || dk >= x->n || argc - a != x->sd->d[dk].nk) {
    sqlite3_result_error(ctx, "gpuagg_dim_probe: bad arguments", -1);
    return -2;
  }
  ga_sd_dim *d = &x->sd->d[dk];
  memo_dim *m = &x->m[dk];
  *pd = d;
  if (d->nk == 1 && sqlite3_value_type(argv[a]) == SQLITE_INTEGER) {
    int64_t v = sqlite3_value_int64(argv[a]);
    if (m->have && m->key == v)
      return m->row;
    ga_sd_key k = {.cls = 1, .u.i = v};
    int64_t r = find(d, &k);
    m->have = 1;
    m->key = v;
    m->row = r;
    m->probes++;
    m->matches += r >= 0;
    (void)count;
    return r;
  }
  ga_sd_key k[GA_SD_MAX_KEYS] = {{0}};
  char *buf[GA_SD_MAX_KEYS] = {0};
  int64_t r = -1, null = 0, err = 0;
  for (int c = 0; c < d->nk; c++) {
    int q = key_of(argv[a + c], d->numeric[c], d->coll[c], &k[c], &buf[c]);
    null |= q == 0;
    err |= q < 0;
  }
  if (err) {
    sqlite3_result_error_nomem(ctx);
    r = -2;
  } else if (!null)
    r = find(d, k);
  for (int c = 0; c < d->nk; c++)
    sqlite3_free(buf[c]);
  m->have = 0;
  if (r >= -1) {
    m->probes++;
    m->matches += r >= 0;
  }
  return r;
}

/* Rule 6's hot path: one INTEGER key of a dimension whose memo the
** connection holds; 0 (the caller takes probe()'s path) or 1 done (*row). */
static int probe_int(sqlite3_context *ctx, int argc, sqlite3_value **argv,
                     int a, int64_t *row, ga_sd_dim **pd) {
  sd_conn *c = sqlite3_user_data(ctx);
  memo *x = c ? c->cur : NULL;
  if (!x || argc != a + 1 || sqlite3_value_type(argv[a]) != SQLITE_INTEGER ||
      x->sd->token != (uint64_t)sqlite3_value_int64(argv[0]))
    return 0;
  int dk = sqlite3_value_int(argv[1]);
  if (dk < 0 || dk >= x->n || x->sd->d[dk].nk != 1)
    return 0;
  ga_sd_dim *d = &x->sd->d[dk];
  memo_dim *m = &x->m[dk];
  int64_t v = sqlite3_value_int64(argv[a]);
  *pd = d;
  if (m->have && m->key == v) {
    *row = m->row;
    return 1;
  }
  int64_t r = -1;
  if (d->kind == 1) { /* find()'s dense read, inline */
    uint64_t o = (uint64_t)v - (uint64_t)d->lo;
    if (o < d->span && bit_of(d->bits, o))
      r = (int64_t)d->slot[o] - 1;
  } else {
    ga_sd_key k = {.cls = 1, .u.i = v};
    r = find(d, &k);
  }
  m->have = 1;
  m->key = v;
  m->row = r;
  m->probes++;
  m->matches += r >= 0;
  *row = r;
  return 1;
}

static void fn_probe(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  ga_sd_dim *d = NULL;
  int64_t row;
  if (probe_int(ctx, argc, argv, 2, &row, &d)) {
    sqlite3_result_int(ctx, row >= 0);
    return;
  }
  if (argc < 3) {
    sqlite3_result_error(ctx, "gpuagg_dim_probe: bad arguments", -1);
    return;
  }
  int64_t r = probe(ctx, argc, argv, 2, &d, 1);
  if (r >= -1)
    sqlite3_result_int(ctx, r >= 0);
}

static void fn_get(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  ga_sd_dim *d = NULL;
  if (argc < 4) {
    sqlite3_result_error(ctx, "gpuagg_dim_get: bad arguments", -1);
    return;
  }
  int64_t r;
  if (!probe_int(ctx, argc, argv, 3, &r, &d))
    r = probe(ctx, argc, argv, 3, &d, 0);
  if (r == -2 || (r == -1 && !d->left))
    return; /* the error is set; NULL (no row) */
  int i = sqlite3_value_int(argv[2]);
  if (i < 0 || i >= d->na) {
    sqlite3_result_error(ctx, "gpuagg_dim_get: bad arguments", -1);
    return;
  }
  const ga_sd_cell *c = r >= 0
                            ? &d->attrs[(size_t)r * (size_t)d->na + (size_t)i]
                            : &d->null_attrs[i]; /* LEFT JOIN's NULL row */
  switch (c->type) {
  case SQLITE_INTEGER:
    sqlite3_result_int64(ctx, c->u.i);
    break;
  case SQLITE_FLOAT:
    sqlite3_result_double(ctx, c->u.r);
    break;
  case SQLITE_TEXT:
    sqlite3_result_text(ctx, c->u.p, c->n, SQLITE_STATIC);
    break;
  case SQLITE_BLOB:
    sqlite3_result_blob(ctx, c->u.p, c->n, SQLITE_STATIC);
    break;
  default:
    sqlite3_result_null(ctx);
  }
}

int ga_sd_register(sqlite3 *db) {
  /* rule 6: each function its own memo pointer, freed with the connection
  ** (after its statements, whose memos clear it) */
  sd_conn *cp = sqlite3_malloc64(sizeof(*cp)),
          *cg = sqlite3_malloc64(sizeof(*cg));
  if (!cp || !cg) {
    sqlite3_free(cp);
    sqlite3_free(cg);
    return SQLITE_NOMEM;
  }
  cp->cur = cg->cur = NULL;
  int rc = sqlite3_create_function_v2(db, "gpuagg_dim_probe", -1,
                                      SQLITE_UTF8 | SQLITE_DIRECTONLY, cp,
                                      fn_probe, NULL, NULL, sqlite3_free);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "gpuagg_dim_get", -1,
                                    SQLITE_UTF8 | SQLITE_DIRECTONLY, cg, fn_get,
                                    NULL, NULL, sqlite3_free);
  else
    sqlite3_free(cg); /* create_function_v2 freed cp on its failure */
  return rc;
}
