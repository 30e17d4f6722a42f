/*
** cache_load.c — loading an entry (cache.h): gpu_aggregate's workers run
**
**   SELECT gpuagg_collect(?3, "x", "k", ...) FROM t NOT INDEXED
**    WHERE rowid >= ?1 AND rowid <= ?2
**
** over rowid pieces (engine/scan/scan.c, with the piece hooks below), so the
** values are collected inside their own SQL; ?3 is the piece's sink.  The
** serial path runs the same statement over the whole table on the caller's
** connection, as piece 0.
**
** Rules:
**   1. Pieces are numbered in rowid order (scan.c); the entry is their rows
**      in piece order, so row i is the i-th row in rowid order.
**   2. Host entry: the blocks are the entry's segments; nothing is copied.
**   3. GPU entry: blocks are pinned staging.  A block is placed (copied to
**      the device arrays at the next row offset, cache_gpu.c) once every
**      earlier row is placed: the filled blocks of the frontier piece at
**      once, its last one when the piece is done.  Placed blocks are
**      recycled once their copies completed, so staging stays a few blocks
**      per worker, never the table (the serial path streams its one piece
**      the same way).
**   4. A sink's list of blocks changes only under l->mu; its owner (the
**      worker stepping the piece) writes rows into its tail block, which no
**      other thread touches until the owner appends the next block or ends
**      the piece, both under l->mu.
**   5. Budget: host blocks, and device capacity, are reserved in the cache
**      (ga_cache_reserve, evicting others) before they are allocated; so
**      are the TEXT dictionaries' bytes, each sink's and the load's, as
**      they grow (dict.h rule 6, dict_charge), not once the column is in;
**      a load that cannot fit fails with GA_CLOAD_EBUDGET as soon as it
**      passes.  A sink's dictionaries and their bytes go at its piece's
**      end (merged), a mixed column's at the finish.
**   6. The first failure wins and stops the scan (the hooks return it):
**      a BLOB value (its column), the budget, the row limit, a GPU step
*(gpu_failed: the caller may load
**      into host memory instead).
**   7. TEXT: a sink interns its block's values of a column in a dictionary
**      of its own (dict.h) and writes local ids; when the block is complete
**      (full, or the piece's last) that dictionary merges into the load's
**      dictionary of the column, the block's ids become load ids, and the
**      sink's dictionary starts again.  So a placed block (GPU) holds load
**      ids; the finish seals the dictionaries and turns every load id into
**      its code (host: in the blocks; GPU: gak_cache_remap on the device).
**      Each step keeps row i's word row i's value.
**   8. A column of TEXT and numbers loads, marked mixed: its words are ids
**      and numbers in one array, which no query may read.  The planner
**      refuses any query that names it (planner/cache_lex.c), so the other
**      columns of the entry still answer.  SQLite's order across types
**      and its affinity rules are not built on codes.
**   9. Each TEXT column counts the rows that hold 'now' in any case (spaces
**      around it too): SQLite's date and time functions read such a value
**      as the statement's time, which no value computed once per query
**      from the dictionary (a derived column, planner/cache_derive.c rule
**      2) may stand for; ga_ccol.nnow > 0 declines it.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "cache_gpu.h"
#include "gpu.h"
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

/* A sink's figures per column (ga_csink.stats): counts of NULL, INTEGER,
** REAL and TEXT values, then the least and the greatest INTEGER, then the
** TEXT values that are 'now' (rule 9). */
#define GA_CS_NSTAT 7

/* Rule 9: is the TEXT value (p, n bytes in encoding enc) 'now' in any
** case, ASCII spaces around it allowed (SQLite 3.40 reads only "now"
** itself as the time; a wider test only declines more)? */
static int text_is_now(const unsigned char *p, int n, int enc) {
  int w = enc == SQLITE_UTF16LE || enc == SQLITE_UTF16BE ? 2 : 1;
  if (n > 64 * w || n < 3 * w)
    return 0;
  int k = 0, after = 0; /* letters matched; spaces after them */
  for (int i = 0; i + w <= n; i += w) {
    unsigned c = w == 1                  ? p[i]
                 : enc == SQLITE_UTF16LE ? p[i] | (unsigned)p[i + 1] << 8
                                         : (unsigned)p[i] << 8 | p[i + 1];
    if (c == ' ' || (c >= '\t' && c <= '\r')) {
      after = k > 0;
      continue;
    }
    if (after || k == 3 || (c | 0x20) != (unsigned)"now"[k])
      return 0;
    k++;
  }
  return k == 3;
}

/* Rows of a block after a piece's first (whose size is its rowid span). */
#define GA_CLOAD_BLOCK_ROWS 65536

struct ga_csink {
  ga_cload *load;
  int64_t no;
  ga_cblock *head, *tail; /* GPU: the blocks not yet placed */
  int64_t rows, cap_hint;
  int done;
  int64_t *stats;     /* per column: nnull, nint, nreal, ntext, imin, imax */
  ga_dict_local **dl; /* TEXT: this piece's values of each column (rule 7) */
};

struct ga_cload {
  ga_cache *c;
  int where, ncols;
  int64_t budget;
  pthread_mutex_t mu;
  ga_csink **pieces;
  int64_t npieces, cap_pieces;
  int64_t frontier;    /* GPU: pieces placed completely */
  int64_t rows_placed; /* GPU: rows copied (or queued) to the device */
  int64_t rows;        /* rows of finished pieces */
  int64_t reserved;    /* bytes reserved in c->used for this load (c->mu) */
  int err;             /* GA_OK, GA_NOMEM, GA_CLOAD_E* (atomic read) */
  int gpu_failed, bad_col, bad_type;
  char why[256];
  ga_cgpu *g;
  ga_cblock *free_blocks; /* pinned, recycled */
  ga_dict **dict;         /* TEXT: each column's values (rule 7), under mu */
  int enc;                /* the bytes TEXT values come in */
};

/* Record the first failure (under l->mu). */
static void set_err(ga_cload *l, int err, int gpu, const char *fmt, ...) {
  if (l->err)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(l->why, sizeof l->why, fmt, ap);
  va_end(ap);
  l->gpu_failed = gpu;
  __atomic_store_n(&l->err, err, __ATOMIC_RELEASE);
}

static int failed(ga_cload *l) {
  return __atomic_load_n(&l->err, __ATOMIC_ACQUIRE);
}

/* Reserve `more` bytes of the budget for this load; 0 when it cannot fit. */
static int reserve(ga_cload *l, int64_t more) {
  if (!ga_cache_reserve(l->c, l->budget, more, NULL))
    return 0;
  pthread_mutex_lock(&l->c->mu);
  l->reserved += more;
  pthread_mutex_unlock(&l->c->mu);
  return 1;
}

static void unreserve(ga_cload *l, int64_t bytes) {
  pthread_mutex_lock(&l->c->mu);
  l->c->used -= bytes;
  l->reserved -= bytes;
  pthread_mutex_unlock(&l->c->mu);
}

/* Rule 5 for TEXT dictionaries (dict.h rule 6): a sink's and the load's
** dictionaries ask for their bytes as they grow.  0 when granted. */
static int dict_charge(void *arg, int64_t more) {
  ga_cload *l = arg;
  if (more < 0) {
    unreserve(l, -more);
    return 0;
  }
  return !reserve(l, more);
}

char *ga_cload_sql(const char *schema, const char *table, const char *rowid,
                   const char *const *names, int n) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendall(s, "SELECT gpuagg_collect(?3");
  for (int i = 0; i < n; i++)
    sqlite3_str_appendf(s, ", \"%w\"", names[i]);
  sqlite3_str_appendf(s,
                      ") FROM \"%w\".\"%w\" NOT INDEXED WHERE %s >= ?1 AND "
                      "%s <= ?2",
                      schema, table, rowid, rowid);
  return sqlite3_str_finish(s);
}

ga_cload *ga_cload_new(ga_cache *c, int where, int ncols, int64_t est_rows,
                       int64_t budget) {
  ga_cload *l = sqlite3_malloc64(sizeof(*l));
  if (!l)
    return NULL;
  memset(l, 0, sizeof(*l));
  l->c = c;
  l->where = where;
  l->ncols = ncols;
  l->budget = budget;
  pthread_mutex_init(&l->mu, NULL);
  if (where == GA_CACHE_GPU) {
    /* the device arrays start at the table's estimated rows (exact for
    ** dense rowids), as far as the budget allows; they grow if needed */
    int64_t rb = ga_cache_gpu_bytes(ncols, 64) / 64;
    int64_t cap = est_rows > 0 ? est_rows : 1;
    if (cap > GA_CACHE_MAX_ROWS)
      cap = GA_CACHE_MAX_ROWS;
    if (cap > budget / rb)
      cap = budget / rb;
    if (cap < 1 || !reserve(l, ga_cache_gpu_bytes(ncols, cap))) {
      set_err(l, GA_CLOAD_EBUDGET, 0, "budget");
      return l;
    }
    char why[200];
    int rc = ga_cgpu_begin(&l->g, ncols, cap, why, sizeof why);
    if (rc)
      set_err(l, rc == GA_NOMEM ? GA_NOMEM : GA_CLOAD_EFAIL, 1, "%s", why);
  }
  return l;
}

/* ---- blocks ---- */

static int64_t host_block_bytes(int ncols, int64_t cap) {
  return (int64_t)((size_t)ncols * (size_t)cap * 8 +
                   (size_t)ncols * 2 * (size_t)GA_BW(cap) * 8);
}

/* A block of cap rows: host blocks are reserved in the budget first;
** pinned ones are recycled.  NULL on failure (recorded). */
static ga_cblock *block_new(ga_cload *l, int64_t cap) {
  ga_cblock *b = NULL;
  if (l->where == GA_CACHE_GPU) {
    pthread_mutex_lock(&l->mu);
    for (ga_cblock **pp = &l->free_blocks; *pp; pp = &(*pp)->next)
      if ((*pp)->cap >= cap) {
        b = *pp;
        *pp = b->next;
        break;
      }
    pthread_mutex_unlock(&l->mu);
    if (b) {
      b->next = NULL;
      b->n = 0;
      memset(ga_cb_isint(b, 0), 0,
             (size_t)b->ncols * 2 * (size_t)GA_BW(b->cap) * 8);
      return b;
    }
    b = ga_cb_new(l->ncols, cap, 1);
    if (!b) {
      pthread_mutex_lock(&l->mu);
      set_err(l, GA_CLOAD_EFAIL, 1, "no pinned host memory for the load");
      pthread_mutex_unlock(&l->mu);
    }
    return b;
  }
  int64_t bytes = host_block_bytes(l->ncols, cap);
  if (!reserve(l, bytes)) {
    pthread_mutex_lock(&l->mu);
    set_err(l, GA_CLOAD_EBUDGET, 0, "budget");
    pthread_mutex_unlock(&l->mu);
    return NULL;
  }
  b = ga_cb_new(l->ncols, cap, 0);
  if (!b) {
    unreserve(l, bytes);
    pthread_mutex_lock(&l->mu);
    set_err(l, GA_NOMEM, 0, "out of memory");
    pthread_mutex_unlock(&l->mu);
  }
  return b;
}

/* Make room on the device for `need` rows (under l->mu). */
static int ensure_cap(ga_cload *l, int64_t need) {
  int64_t have = ga_cgpu_cap(l->g);
  if (need <= have)
    return 1;
  if (need > GA_CACHE_MAX_ROWS) {
    set_err(l, GA_CLOAD_EFAIL, 0, "more than %lld rows",
            (long long)GA_CACHE_MAX_ROWS);
    return 0;
  }
  int64_t rb = ga_cache_gpu_bytes(l->ncols, 64) / 64;
  int64_t cap = have * 2 > need ? have * 2 : need;
  if (cap > GA_CACHE_MAX_ROWS)
    cap = GA_CACHE_MAX_ROWS;
  if (cap > l->budget / rb) /* as much as the budget allows, if that fits */
    cap = l->budget / rb > need ? l->budget / rb : need;
  if (!reserve(l, ga_cache_gpu_bytes(l->ncols, cap) -
                      ga_cache_gpu_bytes(l->ncols, have))) {
    set_err(l, GA_CLOAD_EBUDGET, 0, "budget");
    return 0;
  }
  int rc = ga_cgpu_grow(l->g, cap);
  if (rc) {
    set_err(l, rc == GA_NOMEM ? GA_NOMEM : GA_CLOAD_EFAIL, 1, "%s",
            ga_cgpu_why(l->g));
    return 0;
  }
  return 1;
}

/* Place every block that may be placed now (rule 3); under l->mu.  Placed
** blocks are moved to *done, to be recycled after their copies. */
static void place_ready(ga_cload *l, ga_cblock **done) {
  while (!l->err && l->frontier < l->npieces && l->pieces[l->frontier]) {
    ga_csink *s = l->pieces[l->frontier];
    /* the tail of a piece still stepping is its owner's (rule 4) */
    while (s->head && (s->done || s->head != s->tail)) {
      ga_cblock *b = s->head;
      if (b->n > 0) {
        if (!ensure_cap(l, l->rows_placed + b->n))
          return;
        int rc = ga_cgpu_place(l->g, b, l->rows_placed);
        if (rc) {
          set_err(l, rc == GA_NOMEM ? GA_NOMEM : GA_CLOAD_EFAIL, 1, "%s",
                  ga_cgpu_why(l->g));
          return;
        }
        l->rows_placed += b->n;
      }
      s->head = b->next;
      if (s->tail == b)
        s->tail = NULL;
      b->next = *done;
      *done = b;
    }
    if (!s->done)
      return; /* its tail is still filling */
    l->frontier++;
  }
}

/* Place what can be placed, wait for those copies, recycle their blocks. */
static void place(ga_cload *l) {
  ga_cblock *done = NULL;
  pthread_mutex_lock(&l->mu);
  place_ready(l, &done);
  pthread_mutex_unlock(&l->mu);
  if (!done)
    return;
  int rc = ga_cgpu_sync(l->g);
  pthread_mutex_lock(&l->mu);
  if (rc)
    set_err(l, GA_CLOAD_EFAIL, 1, "a copy to the GPU failed");
  while (done) {
    ga_cblock *b = done;
    done = b->next;
    b->next = l->free_blocks;
    l->free_blocks = b;
  }
  pthread_mutex_unlock(&l->mu);
}

/* ---- sinks ---- */

/* A sink's dictionaries, and the bytes they were charged (rule 5). */
static void sink_free_dicts(ga_csink *s) {
  for (int c = 0; s->dl && c < s->load->ncols; c++)
    if (s->dl[c]) {
      unreserve(s->load, ga_dict_local_charged(s->dl[c]));
      ga_dict_local_free(s->dl[c]);
    }
  sqlite3_free(s->dl);
  s->dl = NULL;
}

static int block_text(ga_cload *l, ga_csink *s, ga_cblock *b);

/* A new tail for s (rule 4), once the full one's TEXT ids are load ids
** (rule 7: a GPU load may place it as soon as the new tail is linked). */
static int sink_grow(ga_csink *s) {
  ga_cload *l = s->load;
  if (failed(l))
    return 1;
  if (s->tail && s->tail->n && block_text(l, s, s->tail))
    return 1;
  /* (s->head may change under another thread's placement: rows is ours) */
  ga_cblock *b = block_new(l, s->rows == 0 ? s->cap_hint : GA_CLOAD_BLOCK_ROWS);
  if (!b)
    return 1;
  pthread_mutex_lock(&l->mu);
  if (s->tail)
    s->tail->next = b;
  else
    s->head = b;
  s->tail = b;
  pthread_mutex_unlock(&l->mu);
  if (l->where == GA_CACHE_GPU)
    place(l); /* the filled block of the frontier piece goes now */
  return failed(l) ? GA_CLOAD_EFAIL : GA_OK;
}

/* A dictionary's failure as the load's. */
static int load_err(int rc) {
  return rc == GA_DICT_FULL     ? GA_CLOAD_EDICT
         : rc == GA_DICT_BUDGET ? GA_CLOAD_EBUDGET
                                : GA_NOMEM;
}

static int l_enc(const ga_csink *s);

/* A TEXT value of column c into the sink's dictionary (rule 7): its id. */
static int sink_text(ga_csink *s, int c, const void *p, int n, uint64_t *word) {
  ga_cload *l = s->load;
  if (!s->dl) {
    s->dl = sqlite3_malloc64(sizeof(*s->dl) * (size_t)l->ncols);
    if (!s->dl)
      return GA_NOMEM;
    memset(s->dl, 0, sizeof(*s->dl) * (size_t)l->ncols);
  }
  if (!s->dl[c]) {
    if (!(s->dl[c] = ga_dict_local_new()))
      return GA_NOMEM;
    ga_dict_local_charge(s->dl[c], dict_charge, l);
  }
  uint32_t id;
  int rc = ga_dict_local_intern(s->dl[c], p, n, &id);
  if (rc) {
    pthread_mutex_lock(&l->mu);
    if (!l->err)
      l->bad_col = c;
    set_err(l, load_err(rc), 0, rc == GA_DICT_BUDGET ? "budget" : "text");
    pthread_mutex_unlock(&l->mu);
    return 1;
  }
  *word = id;
  return GA_OK;
}

int ga_csink_row(ga_csink *s, const int *types, const int64_t *words,
                 const void *const *text, const int *tlen, int ncols) {
  ga_cblock *b = s->tail;
  if (!b || b->n == b->cap) {
    if (sink_grow(s))
      return 1;
    b = s->tail;
  }
  int64_t i = b->n;
  uint64_t bit = 1ull << (i & 63);
  for (int c = 0; c < ncols; c++) {
    switch (types[c]) {
    case GA_V_NULL:
      ga_cb_vals(b, c)[i] = 0;
      s->stats[GA_CS_NSTAT * c]++;
      break;
    case GA_V_INT:
      ga_cb_vals(b, c)[i] = (uint64_t)words[c];
      ga_cb_isint(b, c)[i >> 6] |= bit;
      ga_cb_notnull(b, c)[i >> 6] |= bit;
      s->stats[GA_CS_NSTAT * c + 1]++;
      if (words[c] < s->stats[GA_CS_NSTAT * c + 4])
        s->stats[GA_CS_NSTAT * c + 4] = words[c];
      if (words[c] > s->stats[GA_CS_NSTAT * c + 5])
        s->stats[GA_CS_NSTAT * c + 5] = words[c];
      break;
    case GA_V_REAL:
      ga_cb_vals(b, c)[i] = (uint64_t)words[c];
      ga_cb_notnull(b, c)[i >> 6] |= bit;
      s->stats[GA_CS_NSTAT * c + 2]++;
      break;
    case GA_V_TEXT: {
      uint64_t w;
      int rc = sink_text(s, c, text[c], tlen[c], &w);
      if (rc)
        return rc;
      ga_cb_vals(b, c)[i] = w; /* an id, then a code: an INTEGER word */
      ga_cb_isint(b, c)[i >> 6] |= bit;
      ga_cb_notnull(b, c)[i >> 6] |= bit;
      s->stats[GA_CS_NSTAT * c + 3]++;
      s->stats[GA_CS_NSTAT * c + 6] += text_is_now(text[c], tlen[c], l_enc(s));
      break;
    }
    default: {
      ga_cload *l = s->load;
      pthread_mutex_lock(&l->mu);
      if (!l->err) {
        l->bad_col = c;
        l->bad_type = types[c];
      }
      set_err(l, GA_CLOAD_ETYPE, 0, "type");
      pthread_mutex_unlock(&l->mu);
      return 1;
    }
    }
  }
  b->n++;
  s->rows++;
  return GA_OK;
}

int ga_cload_piece_begin(void *arg, sqlite3_stmt *st, int64_t no, int64_t lo,
                         int64_t hi) {
  ga_cload *l = arg;
  if (failed(l))
    return GA_CLOAD_EFAIL;
  ga_csink *s = sqlite3_malloc64(sizeof(*s));
  int64_t *stats =
      sqlite3_malloc64(sizeof(int64_t) * GA_CS_NSTAT * (size_t)l->ncols);
  if (!s || !stats) {
    sqlite3_free(s);
    sqlite3_free(stats);
    return GA_NOMEM;
  }
  memset(s, 0, sizeof(*s));
  memset(stats, 0, sizeof(int64_t) * GA_CS_NSTAT * (size_t)l->ncols);
  for (int c = 0; c < l->ncols; c++) {
    stats[GA_CS_NSTAT * c + 4] = INT64_MAX;
    stats[GA_CS_NSTAT * c + 5] = INT64_MIN;
  }
  s->load = l;
  s->no = no;
  s->stats = stats;
  /* a dense piece holds at most its rowid span */
  uint64_t span = (uint64_t)hi - (uint64_t)lo;
  s->cap_hint =
      span < GA_CLOAD_BLOCK_ROWS ? (int64_t)span + 1 : GA_CLOAD_BLOCK_ROWS;
  pthread_mutex_lock(&l->mu);
  if (no >= l->cap_pieces) {
    int64_t cap = l->cap_pieces ? l->cap_pieces * 2 : 64;
    while (cap <= no)
      cap *= 2;
    ga_csink **p = sqlite3_realloc64(l->pieces, sizeof(*p) * (size_t)cap);
    if (!p) {
      pthread_mutex_unlock(&l->mu);
      sqlite3_free(stats);
      sqlite3_free(s);
      return GA_NOMEM;
    }
    memset(p + l->cap_pieces, 0, sizeof(*p) * (size_t)(cap - l->cap_pieces));
    l->pieces = p;
    l->cap_pieces = cap;
  }
  /* scan.c hands out each piece number once per scan */
  l->pieces[no] = s;
  if (no >= l->npieces)
    l->npieces = no + 1;
  pthread_mutex_unlock(&l->mu);
  int rc = sqlite3_bind_pointer(st, 3, s, GA_CLOAD_SINK, NULL);
  return rc == SQLITE_OK      ? GA_OK
         : rc == SQLITE_NOMEM ? GA_NOMEM
                              : GA_CLOAD_EFAIL;
}

/* Host: give back what a piece's last block does not use, when that is
** much (a sparse piece, deleted rows). */
static void shrink_last(ga_csink *s) {
  ga_cload *l = s->load;
  ga_cblock *b = s->tail;
  if (!b || b->n == 0 || b->n * 4 >= b->cap * 3)
    return;
  int64_t bytes = host_block_bytes(l->ncols, b->n);
  ga_cblock *nb = ga_cb_new(l->ncols, b->n, 0);
  if (!nb)
    return; /* keep the larger one */
  for (int c = 0; c < l->ncols; c++) {
    memcpy(ga_cb_vals(nb, c), ga_cb_vals(b, c), (size_t)b->n * 8);
    memcpy(ga_cb_isint(nb, c), ga_cb_isint(b, c), (size_t)GA_BW(b->n) * 8);
    memcpy(ga_cb_notnull(nb, c), ga_cb_notnull(b, c), (size_t)GA_BW(b->n) * 8);
  }
  nb->n = b->n;
  pthread_mutex_lock(&l->mu);
  for (ga_cblock **pp = &s->head; *pp; pp = &(*pp)->next)
    if (*pp == b) {
      *pp = nb;
      break;
    }
  s->tail = nb;
  pthread_mutex_unlock(&l->mu);
  unreserve(l, host_block_bytes(l->ncols, b->cap) - bytes);
  ga_cb_free(b);
}

/* Column c's words of the rows with a value in block b: an id becomes
** map[id]. */
static void remap(ga_cblock *b, int c, const uint32_t *map) {
  uint64_t *v = ga_cb_vals(b, c);
  const uint64_t *nn = ga_cb_notnull(b, c);
  for (int64_t i = 0; i < b->n; i++)
    if (ga_bit(nn, i))
      v[i] = map[v[i]];
}

/* Rule 7 when a block is complete (full, or the piece's last): each TEXT
** column's values so far into the load's dictionary, block b's ids into
** load ids, and the sink's dictionary emptied for its next block (ids
** start again).  GA_OK or an error (set). */
static int block_text(ga_cload *l, ga_csink *s, ga_cblock *b) {
  for (int c = 0; s->dl && c < l->ncols; c++) {
    uint32_t n = s->dl[c] ? ga_dict_local_count(s->dl[c]) : 0;
    if (!n)
      continue;
    if (s->stats[GA_CS_NSTAT * c + 1] || s->stats[GA_CS_NSTAT * c + 2]) {
      /* numbers too (rule 8): words that are no ids stay unmapped */
      ga_dict_local_clear(s->dl[c]);
      continue;
    }
    int rc = GA_OK;
    uint32_t *map = sqlite3_malloc64(sizeof(uint32_t) * n);
    pthread_mutex_lock(&l->mu);
    if (!l->dict) {
      l->dict = sqlite3_malloc64(sizeof(*l->dict) * (size_t)l->ncols);
      if (l->dict)
        memset(l->dict, 0, sizeof(*l->dict) * (size_t)l->ncols);
    }
    if (!map || !l->dict) {
      rc = GA_NOMEM;
    } else if (!l->dict[c]) {
      if (!(l->dict[c] = ga_dict_new()))
        rc = GA_NOMEM;
      else /* before it grows (under l->mu: no merge into it yet) */
        ga_dict_charge(l->dict[c], dict_charge, l);
    }
    ga_dict *d = l->dict ? l->dict[c] : NULL;
    pthread_mutex_unlock(&l->mu);
    if (rc == GA_OK)
      rc = ga_dict_merge(d, s->dl[c], map); /* takes d's own mutex */
    if (rc == GA_OK) {
      remap(b, c, map);
    } else {
      pthread_mutex_lock(&l->mu);
      if (!l->err)
        l->bad_col = c;
      set_err(l, load_err(rc), 0, rc == GA_DICT_BUDGET ? "budget" : "text");
      pthread_mutex_unlock(&l->mu);
    }
    sqlite3_free(map);
    ga_dict_local_clear(s->dl[c]);
    if (rc)
      return rc;
  }
  return GA_OK;
}

int ga_cload_piece_end(void *arg, int64_t no, int ok, int64_t *rows) {
  ga_cload *l = arg;
  pthread_mutex_lock(&l->mu);
  ga_csink *s = no < l->npieces ? l->pieces[no] : NULL;
  pthread_mutex_unlock(&l->mu);
  if (!s || !ok)
    return failed(l) ? GA_CLOAD_EFAIL : GA_OK;
  *rows = s->rows;
  if (s->tail && block_text(l, s, s->tail))
    return GA_CLOAD_EFAIL;
  sink_free_dicts(s); /* merged: their bytes leave the budget now */
  if (l->where == GA_CACHE_HOST)
    shrink_last(s);
  pthread_mutex_lock(&l->mu);
  s->done = 1;
  l->rows += s->rows;
  if (l->rows > GA_CACHE_MAX_ROWS)
    set_err(l, GA_CLOAD_EFAIL, 0, "more than %lld rows",
            (long long)GA_CACHE_MAX_ROWS);
  pthread_mutex_unlock(&l->mu);
  if (l->where == GA_CACHE_GPU)
    place(l);
  return failed(l) ? GA_CLOAD_EFAIL : GA_OK;
}

static void sink_free(ga_csink *s) {
  if (!s)
    return;
  while (s->head) {
    ga_cblock *b = s->head;
    s->head = b->next;
    ga_cb_free(b);
  }
  sqlite3_free(s->stats);
  sink_free_dicts(s);
  sqlite3_free(s);
}

/* The load's dictionaries, with what they were charged (a retry starts
** without them; at the finish, those of mixed columns). */
static void forget_dicts(ga_cload *l) {
  for (int c = 0; l->dict && c < l->ncols; c++)
    if (l->dict[c]) {
      unreserve(l, ga_dict_charged(l->dict[c]));
      ga_dict_free(l->dict[c]);
    }
  sqlite3_free(l->dict);
  l->dict = NULL;
}

/* Free the sinks, giving back their host blocks' reservations. */
static void forget_pieces(ga_cload *l) {
  for (int64_t i = 0; i < l->npieces; i++) {
    ga_csink *s = l->pieces[i];
    if (!s)
      continue;
    if (l->where == GA_CACHE_HOST) {
      int64_t bytes = 0;
      for (ga_cblock *b = s->head; b; b = b->next)
        bytes += host_block_bytes(l->ncols, b->cap);
      unreserve(l, bytes);
    }
    sink_free(s);
    l->pieces[i] = NULL;
  }
  l->npieces = 0;
  l->frontier = 0;
  l->rows_placed = 0;
  l->rows = 0;
}

void ga_cload_set_enc(ga_cload *l, int enc) { l->enc = enc; }

int ga_csink_enc(const ga_csink *s) { return s->load->enc; }
static int l_enc(const ga_csink *s) { return s->load->enc; }

void ga_cload_reset(ga_cload *l) {
  if (l->g)
    ga_cgpu_sync(l->g); /* no copy may still read a block */
  forget_pieces(l);
  forget_dicts(l);
  l->err = 0;
  l->gpu_failed = l->bad_col = l->bad_type = 0;
  l->why[0] = 0;
}

int ga_cload_error(const ga_cload *l, char *why, size_t nwhy, int *gpu_failed,
                   int *col, int *type) {
  if (gpu_failed)
    *gpu_failed = l->gpu_failed;
  if (col)
    *col = l->bad_col;
  if (type)
    *type = l->bad_type;
  if (why && nwhy)
    snprintf(why, nwhy, "%s", l->why);
  return l->err;
}

int64_t ga_cload_rows(const ga_cload *l) { return l->rows; }

static void release(ga_cload *l) {
  if (l->g)
    ga_cgpu_sync(l->g);
  forget_pieces(l);
  forget_dicts(l);
  while (l->free_blocks) {
    ga_cblock *b = l->free_blocks;
    l->free_blocks = b->next;
    ga_cb_free(b);
  }
  if (l->g) {
    ga_cgpu_abort(l->g);
    l->g = NULL;
  }
  if (l->reserved)
    unreserve(l, l->reserved);
  sqlite3_free(l->pieces);
  pthread_mutex_destroy(&l->mu);
}

void ga_cload_abort(ga_cload *l) {
  if (!l)
    return;
  release(l);
  sqlite3_free(l);
}

/* Rule 7 at the finish: each dictionary is sealed, counted in the budget
** and given to its column, and the load ids in the pieces' blocks become
** codes.  A column of TEXT and numbers is marked mixed instead (rule 8): its
** words stay as they are, and its dictionary goes with the load.  GA_OK or
** an error. */
static int finish_text(ga_cload *l, ga_centry *e) {
  for (int c = 0; c < l->ncols; c++) {
    ga_ccol *col = &e->cols[c];
    if (!col->ntext)
      continue;
    if (col->nint + col->nreal) {
      col->mixed = 1;
      continue;
    }
    ga_dict *d = l->dict[c];
    if (ga_dict_seal(d)) {
      set_err(l, GA_NOMEM, 0, "out of memory");
      return 1;
    }
    /* its values were charged as they came (dict_charge): the rest now */
    if (!reserve(l, ga_dict_bytes(d) - ga_dict_charged(d))) {
      set_err(l, GA_CLOAD_EBUDGET, 0, "budget");
      return 1;
    }
    int64_t n = ga_dict_count(d);
    uint32_t *code = sqlite3_malloc64(sizeof(uint32_t) * (size_t)(n ? n : 1));
    if (!code) {
      set_err(l, GA_NOMEM, 0, "out of memory");
      return 1;
    }
    for (int64_t id = 0; id < n; id++)
      code[id] = ga_dict_code(d, (uint32_t)id);
    int rc = GA_OK;
    if (l->where == GA_CACHE_GPU) /* every block is placed already */
      rc = ga_cgpu_remap(l->g, c, code, n);
    else
      for (int64_t i = 0; i < l->npieces; i++)
        for (ga_cblock *b = l->pieces[i]->head; b; b = b->next)
          remap(b, c, code);
    sqlite3_free(code);
    if (rc) {
      set_err(l, GA_CLOAD_EFAIL, 1, "%s", ga_cgpu_why(l->g));
      return 1;
    }
    ga_dict_charge(d, NULL, NULL); /* sealed: the entry's bytes now */
    col->dict = d;
    l->dict[c] = NULL;
  }
  return 0;
}

ga_centry *ga_cload_finish(ga_cload *l) {
  if (failed(l))
    return NULL;
  for (int64_t i = 0; i < l->npieces; i++)
    if (!l->pieces[i] || !l->pieces[i]->done) {
      set_err(l, GA_CLOAD_EFAIL, 0, "a piece of the table is missing");
      return NULL;
    }
  if (l->where == GA_CACHE_GPU) {
    place(l);
    if (failed(l))
      return NULL;
    if (l->frontier != l->npieces) {
      set_err(l, GA_CLOAD_EFAIL, 1, "rows were left unplaced");
      return NULL;
    }
  }
  ga_centry *e = sqlite3_malloc64(sizeof(*e));
  ga_ccol *cols = sqlite3_malloc64(sizeof(ga_ccol) * (size_t)l->ncols);
  if (!e || !cols) {
    sqlite3_free(e);
    sqlite3_free(cols);
    set_err(l, GA_NOMEM, 0, "out of memory");
    return NULL;
  }
  memset(e, 0, sizeof(*e));
  memset(cols, 0, sizeof(ga_ccol) * (size_t)l->ncols);
  e->where = GA_CACHE_HOST; /* until the device arrays are its own */
  e->enc = l->enc;
  e->dev = -1;
  e->ncols = l->ncols;
  e->cols = cols;
  e->rows = l->rows;
  for (int64_t i = 0; i < l->npieces; i++)
    for (int c = 0; c < l->ncols; c++) {
      cols[c].nnull += l->pieces[i]->stats[GA_CS_NSTAT * c];
      cols[c].nint += l->pieces[i]->stats[GA_CS_NSTAT * c + 1];
      cols[c].nreal += l->pieces[i]->stats[GA_CS_NSTAT * c + 2];
      cols[c].ntext += l->pieces[i]->stats[GA_CS_NSTAT * c + 3];
      cols[c].nnow += l->pieces[i]->stats[GA_CS_NSTAT * c + 6];
      if (i == 0 || l->pieces[i]->stats[GA_CS_NSTAT * c + 4] < cols[c].imin)
        cols[c].imin = l->pieces[i]->stats[GA_CS_NSTAT * c + 4];
      if (i == 0 || l->pieces[i]->stats[GA_CS_NSTAT * c + 5] > cols[c].imax)
        cols[c].imax = l->pieces[i]->stats[GA_CS_NSTAT * c + 5];
    }
  if (finish_text(l, e)) {
    ga_centry_free(e);
    return NULL;
  }
  forget_dicts(l); /* mixed columns': they go with the load (rule 8) */
  if (l->where == GA_CACHE_HOST) {
    int64_t n = 0;
    for (int64_t i = 0; i < l->npieces; i++)
      for (ga_cblock *b = l->pieces[i]->head; b; b = b->next)
        n++;
    e->segs = sqlite3_malloc64(sizeof(ga_cblock *) * (size_t)(n ? n : 1));
    e->seg_base = sqlite3_malloc64(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!e->segs || !e->seg_base) {
      ga_centry_free(e);
      set_err(l, GA_NOMEM, 0, "out of memory");
      return NULL;
    }
    int64_t base = 0;
    for (int64_t i = 0; i < l->npieces; i++) {
      ga_csink *s = l->pieces[i];
      while (s->head) {
        ga_cblock *b = s->head;
        s->head = b->next;
        b->next = NULL;
        if (b->n == 0) {
          unreserve(l, host_block_bytes(l->ncols, b->cap));
          ga_cb_free(b);
          continue;
        }
        e->segs[e->nsegs] = b;
        e->seg_base[e->nsegs++] = base;
        base += b->n;
      }
      s->tail = NULL;
    }
  } else {
    int64_t freed = 0;
    if (ga_cgpu_finish(l->g, e, l->rows_placed, &freed)) {
      set_err(l, GA_CLOAD_EFAIL, 1, "%s", ga_cgpu_why(l->g));
      ga_centry_free(e);
      return NULL;
    }
    ga_cgpu_free(l->g); /* its arrays are e's now */
    l->g = NULL;
    unreserve(l, freed);
    e->where = GA_CACHE_GPU;
  }
  pthread_mutex_lock(&l->c->mu);
  e->bytes = l->reserved;
  l->reserved = 0; /* now the entry's, in c->used */
  pthread_mutex_unlock(&l->c->mu);
  release(l);
  sqlite3_free(l);
  return e;
}
