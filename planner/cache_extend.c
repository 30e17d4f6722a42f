/*
** cache_extend.c — appends extend a cache entry (issue 40, part 4): when
** the only change to a table since its entry's state is rows appended past
** its largest rowid, the next cached query (ga_cache_answer_ext, which
** gpu_query's and gpu_aggregate's cache steps call: ext/query/query_vtab.c
** rule 8, ext/aggregate/aggregate_vtab.c) or gpu_cache call
** (ext/cache/cache_fns.c rule 11) reads only the new rows and appends them
** to the entry, instead of a reload.  A gpu_query text with a subquery
** reads the entry as it is (its values may come from the entry before the
** rows are asked: ext/query/query_vtab.c subq_cache).
**
** Rules:
**   1. Proved, never guessed.  Only in WAL mode, for a host or GPU entry
**      (rule 8) of a file's table whose stamp proves its state
**      (ga_fstamp.walprov: the WAL holds the entry's commit frame), with
**      no column of TEXT and numbers, auto_vacuum = 0 (auto-vacuum moves
**      pages at commit: a page of old rows would reappear under a number
**      never recorded), and a file under 2^24 pages (rule 4's type byte).
**      Anything else: today's behaviour (the entry is stale, the query
**      takes the uncached path, gpu_cache reloads) with the reason in
**      last_scan.why ("not extended: ...").
**   2. The record (ga_centry.app, at the load, engine/cache/cache_append.h):
**      inside one read transaction whose snapshot is the entry's state
**      (rule 3), the table's leaf pages, the children of its bottom
**      interior level (a table b-tree's leaves are all at one depth: the
**      interior pages alone are read, a few hundred at 6e6 rows; interior
**      pages hold no rows), and the last leaves (cache_append.h rule 2:
**      the last three children of the right-most bottom interior page, or
**      a leaf root), read from the snapshot's own version of each page
**      (ga_walview_page): table leaves in key order, the last one's last
**      rowid max(rowid), the first one's first rowid above lmax (the
**      largest rowid below it), and count(rowid > lmax) equal to their
**      cells, kr; so they hold exactly the kr rows above lmax.
**   3. One snapshot.  No transaction open on the schema: the reader opens
**      one with the wal-index header read just before and just after
**      (filestamp.c rule 4) and holds it (a statement left on its row)
**      while every step below reads.  The caller's own read transaction
**      (a gpu_query or gpu_aggregate statement holds one): its snapshot is
**      the newest commit when the header is the one noted at the last
**      moment the connection had no transaction open (ext/common/
**      walproof.c rule 5; the transaction began after that moment, and no
**      commit came since).  Otherwise nothing is proven either way: the
**      entry is kept (not marked stale) for a later caller.  A write
**      transaction of the caller's: nothing.
**   4. The proof, in that snapshot: the same file (device, inode), the same
**      WAL generation (salts) with the entry's frame still there under its
**      checksum, the same schema cookie, and every frame after it (frame by
**      frame, walproof.c rule 2) writes no recorded page but the last
**      leaves, and no commit shrank the file below a recorded page.  A row
**      at or below lmax is on a recorded leaf left of the last leaves (or
**      its overflow pages): changing or deleting it writes that page (its
**      cell is rewritten, or removed before a balance frees the page: the
**      page is dirty and goes to the WAL); a row inserted with a rowid at
**      or below lmax lands in a leaf left of the last leaves (the interior
**      keys route it there: a divider is at least every key on its left),
**      which is written; a balance that moves such a leaf's cells writes
**      the leftmost sibling it reuses, a recorded leaf left of the last
**      ones; VACUUM rewrites every page; blob I/O writes the row's leaf or
**      only an overflow page, which is not recorded: every page of the
**      entry's state (at most the file's size then) that the frames wrote
**      and the record lacks must be a b-tree page in the snapshot (an
**      overflow page begins with the next one's number, 0 in its first
**      byte below 2^24 pages; a freelist trunk too declines).  A page can
**      also leave the table unwritten: DELETE without WHERE (OP_Clear)
**      frees every leaf without writing it (secure_delete off or fast), so
**      no recorded page may be on the snapshot's freelist (page 1's trunk
**      list walked, its count checked).  Then the rows with rowid above
**      lmax are read again: those up to the old max must be exactly the
**      entry's last kr rows (values, types, TEXT by value), so a change on
**      the last leaves (an UPDATE, an INSERT OR REPLACE, a delete, an
**      insert between lmax and the old max) is seen there.  Rows above the
**      old max are the appends.
**   5. The new record: every page the frames wrote whose version in the
**      snapshot may hold a table's rows (not an interior page, not an index
**      leaf; not page 1, sqlite_schema's root) joins the recorded pages
**      (cache_append.h rule 1: only ever added), and the new last leaves
**      are found by descending the right-most children from the table's
**      root page, checked as in rule 2.
**   6. Sharing (engine/cache/cache.h rule 5): the entry grows only while no
**      other caller holds it (ga_cache_unlink_sole), out of the list, so no
**      running query reads it and no reader proven against the old state is
**      answered from it; it comes back with the new stamps read in the
**      snapshot (the extending connection becomes its owner: its own stamps
**      are the ones it read) and a new link sequence (cache_plan.c rule
**      7(c)); an entry of the same key that another thread's gpu_cache
**      linked meanwhile is dropped (relink_unique).  The extending
**      connection's authorizer must compile the
**      entry's columns as at the load, and read_uncommitted must be off
**      (cache_plan.c rule 6), TEMP shadowing resolved before (the target's
**      schema).
**   7. The new rows are read on the caller's connection in that snapshot
**      (gpuagg_collect, as a load), their blocks charged to cache_bytes as
**      a load's; the grown dictionaries' bytes are reserved before the
**      entry changes.  The frame loop, the overflow check and the new
**      record's page loop poll the caller's interrupt.  A
**      cache file of the old state no longer matches the entry's stamp and
**      is left as it is (ext/cache/cache_persist.c maps only a file whose
**      stamp is the reader's).
**   8. A GPU entry (session 7) extends under rules 1-7 unchanged: the same
**      proof, the same new rows read on the caller's connection (the same
**      collector text, charged to the GPU budget as its load was, the
**      caller's interrupt polled), rule 6's sharing.  Only the data side
**      differs (engine/cache/cache_append.h rule 5): the last leaves' rows
**      are read back from the device for rule 4's comparison, and the new
**      rows are copied after the old ones in the device columns, in place
**      when they have room, else into a larger allocation holding the old
**      rows copied device to device.  gpuagg_info's entry says which in its
**      "how" ("device columns in place" / "re-copied"), and so does
**      last_scan.why; the cache's counters gpu_append_inplace and
**      gpu_append_copied count them.  A device step that fails after the
**      refusals leaves the entry without its columns: it is dropped (not
**      relinked, marked stale), the reservations given back, and the query
**      takes the uncached path ("not extended: ... (the GPU entry is
**      dropped)").  A caller whose device is 'cpu' does no device work: it
**      leaves a GPU entry as it is (its query declines the entry anyway:
**      cache_plan.c), for a caller that may use the GPU.
*/
#include <stdio.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_append.h"
#include "cache_extend.h"
#include "cache_plan.h"
#include "filestamp.h"
#include "walproof.h"

/* The first column of sql's first row as an integer (?1 bound to bind1
** when bind); SQLITE_OK with *has (0: no row, or NULL). */
static int one_int(sqlite3 *db, const char *sql, int64_t bind1, int bind,
                   int64_t *out, int *has) {
  sqlite3_stmt *st = NULL;
  *has = 0;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    if (bind)
      sqlite3_bind_int64(st, 1, bind1);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      *has = sqlite3_column_type(st, 0) != SQLITE_NULL;
      *out = sqlite3_column_int64(st, 0);
      rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
      rc = SQLITE_OK;
    } else {
      rc = sqlite3_reset(st);
      if (rc == SQLITE_OK)
        rc = SQLITE_ERROR;
    }
  }
  sqlite3_finalize(st);
  return rc == SQLITE_OK ? rc : ga_intr_rc(db, rc);
}

/* Rule 3: a read transaction held on schema whose snapshot is h->fs. */
typedef struct held {
  sqlite3_stmt *st;
  int64_t schema_version;
  ga_fstamp fs;
} held;

static void unhold(held *h) {
  sqlite3_finalize(h->st);
  h->st = NULL;
}

/* SQLITE_OK; SQLITE_NOTFOUND with why; another error code. */
static int hold(sqlite3 *db, const char *schema, held *h, int *pending,
                char *why, size_t nwhy) {
  unsigned char before[GA_FSTAMP_WALIDX];
  memset(h, 0, sizeof(*h));
  int txn = sqlite3_txn_state(db, schema);
  if (txn == SQLITE_TXN_WRITE) {
    snprintf(why, nwhy, "this connection is writing to %s", schema);
    return SQLITE_NOTFOUND;
  }
  if (txn == SQLITE_TXN_READ) {
    /* the caller's transaction: its snapshot is the header noted when the
    ** connection last had none, if that is still the newest commit */
    ga_fstamp_read_locked(db, schema, &h->fs);
    int has = 0;
    if (!ga_walnote_get(db, schema, h->fs.st_dev, h->fs.st_ino, before) ||
        memcmp(before, h->fs.walidx, GA_FSTAMP_WALIDX)) {
      snprintf(why, nwhy,
               "this connection's read transaction on %s may have begun "
               "before the newest commit (it is proven once the connection "
               "is seen outside a transaction after the commit: a new "
               "statement, gpuagg_info(), gpu_cache)",
               schema);
      *pending = 1;
      return SQLITE_NOTFOUND;
    }
    char *sql = sqlite3_mprintf("PRAGMA \"%w\".schema_version", schema);
    int rc =
        sql ? one_int(db, sql, 0, 0, &h->schema_version, &has) : SQLITE_NOMEM;
    sqlite3_free(sql);
    if (rc != SQLITE_OK)
      return rc;
    if (!has || !h->fs.ok || !h->fs.wal || !h->fs.walprov) {
      snprintf(why, nwhy, "the WAL proves no state");
      return SQLITE_NOTFOUND;
    }
    return SQLITE_OK;
  }
  if (!ga_fstamp_walidx(db, schema, before)) {
    snprintf(why, nwhy, "the wal-index header cannot be read");
    return SQLITE_NOTFOUND;
  }
  char *sql = sqlite3_mprintf("PRAGMA \"%w\".schema_version", schema);
  if (!sql)
    return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(db, sql, -1, &h->st, NULL);
  sqlite3_free(sql);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(h->st);
    if (rc == SQLITE_ROW) {
      rc = SQLITE_OK;
      h->schema_version = sqlite3_column_int64(h->st, 0);
    } else {
      rc = sqlite3_reset(h->st);
      if (rc == SQLITE_OK)
        rc = SQLITE_ERROR;
    }
  }
  if (rc != SQLITE_OK) {
    unhold(h);
    rc = ga_intr_rc(db, rc);
    if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
      return rc & 0xff;
    snprintf(why, nwhy, "cannot open a read transaction (%s)",
             sqlite3_errstr(rc));
    return SQLITE_NOTFOUND;
  }
  ga_fstamp_read_locked(db, schema, &h->fs);
  if (memcmp(before, h->fs.walidx, GA_FSTAMP_WALIDX)) {
    unhold(h);
    snprintf(why, nwhy,
             "a commit was published while the read transaction opened");
    return SQLITE_NOTFOUND;
  }
  if (!h->fs.ok || !h->fs.wal || !h->fs.walprov) {
    unhold(h);
    snprintf(why, nwhy, "%s",
             !h->fs.wal  ? "rollback journal (appends extend in WAL mode)"
             : h->fs.why ? h->fs.why
                         : "the WAL proves no state");
    return SQLITE_NOTFOUND;
  }
  return SQLITE_OK;
}

/* auto_vacuum = 0 (NONE); unreadable: not proven off */
static int autovacuum_off(sqlite3 *db, const char *schema) {
  return ga_pragma_is(db, schema, "auto_vacuum", "0", 0);
}

/* The table's root page (sqlite_schema, in the snapshot): 1, 0 (why), -1
** with *rc. */
static int root_page(sqlite3 *db, const char *schema, const char *table,
                     uint32_t *root, int *rc, char *why, size_t nwhy) {
  int64_t r = 0;
  int has = 0;
  char *sql = sqlite3_mprintf("SELECT rootpage FROM \"%w\".sqlite_schema "
                              "WHERE type = 'table' AND name = '%q'",
                              schema, table);
  *rc = sql ? one_int(db, sql, 0, 0, &r, &has) : SQLITE_NOMEM;
  sqlite3_free(sql);
  if (*rc != SQLITE_OK)
    return -1;
  if (!has || r < 2 || r >= 0x40000000) {
    snprintf(why, nwhy, "the table's root page cannot be found");
    return 0;
  }
  *root = (uint32_t)r;
  return 1;
}

/* Rule 2 / rule 5: the tail leaves under root in the snapshot hold exactly
** the rows above their lmax: sets a's tail, kr, lmax, maxrowid.  1, 0
** (why), or -1 with *rc. */
static int tail_leaves(sqlite3 *db, const char *schema, const char *table,
                       const ga_walview *v, uint32_t root, ga_cappend *a,
                       int *rc, char *why, size_t nwhy) {
  unsigned char *buf = sqlite3_malloc64(v->pgsz);
  uint32_t pg = root, kids[GA_CAPPEND_TAIL];
  int nk = 0, ok = 0, has = 0;
  int64_t kr = 0, first = 0, prev = 0, maxr = 0, lmax = 0, cnt = 0;
  if (!buf) {
    *rc = SQLITE_NOMEM;
    return -1;
  }
  /* down the right edge to the bottom interior page (or a leaf root) */
  for (int depth = 0; depth < 40 && ga_walview_page(v, pg, buf); depth++) {
    int t = ga_btree_type(buf, pg, v->pgsz);
    if (t == 0x0d && pg == root) {
      kids[0] = pg;
      nk = ok = 1;
      break;
    }
    uint32_t right = 0;
    if (t != 0x05 || !ga_btree_right(buf, pg, v->pgsz, &right))
      break;
    unsigned char *child = sqlite3_malloc64(v->pgsz);
    int leaf = child && ga_walview_page(v, right, child) &&
               ga_btree_type(child, right, v->pgsz) == 0x0d;
    sqlite3_free(child);
    if (leaf) {
      ok = ga_btree_last_children(buf, pg, v->pgsz, kids, GA_CAPPEND_TAIL, &nk);
      break;
    }
    pg = right;
  }
  for (int i = 0; ok && i < nk; i++) {
    int n = 0;
    int64_t f = 0, l = 0;
    ok = ga_walview_page(v, kids[i], buf) &&
         ga_btree_leaf(buf, kids[i], v->pgsz, &n, &f, &l) && n > 0 &&
         (i == 0 || f > prev);
    if (i == 0)
      first = f;
    prev = l;
    kr += n;
  }
  sqlite3_free(buf);
  if (!ok) {
    snprintf(why, nwhy, "the b-tree's right edge cannot be read");
    return 0;
  }
  char *sql = sqlite3_mprintf("SELECT max(%s) FROM \"%w\".\"%w\"", a->rowid,
                              schema, table);
  *rc = sql ? one_int(db, sql, 0, 0, &maxr, &has) : SQLITE_NOMEM;
  sqlite3_free(sql);
  if (*rc != SQLITE_OK)
    return -1;
  if (!has || maxr != prev) {
    snprintf(why, nwhy, "the last leaf does not hold the largest rowid");
    return 0;
  }
  sql = sqlite3_mprintf("SELECT max(%s) FROM \"%w\".\"%w\" WHERE %s < ?1",
                        a->rowid, schema, table, a->rowid);
  *rc = sql ? one_int(db, sql, first, 1, &lmax, &has) : SQLITE_NOMEM;
  sqlite3_free(sql);
  if (*rc != SQLITE_OK)
    return -1;
  int has_lmax = has;
  sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\".\"%w\" WHERE %s > ?1",
                        schema, table, a->rowid);
  *rc = sql ? one_int(db, sql, has_lmax ? lmax : INT64_MIN, 1, &cnt, &has)
            : SQLITE_NOMEM;
  sqlite3_free(sql);
  if (*rc != SQLITE_OK)
    return -1;
  if (cnt != kr) {
    snprintf(why, nwhy, "the tail leaves are not the table's last rows");
    return 0;
  }
  memcpy(a->tail, kids, sizeof(uint32_t) * (size_t)nk);
  a->ntail = nk;
  a->kr = kr;
  a->has_lmax = has_lmax;
  a->lmax = lmax;
  a->maxrowid = maxr;
  return 1;
}

/* Rule 2: the table's leaf pages in the snapshot, added to a, from its
** interior pages alone: a table b-tree's leaves are all at one depth, so
** the children of the bottom interior level are its leaves, found without
** reading them (a few hundred interior pages at 6e6 rows, where a listing
** of every page reads all of them).  1; 0 (malformed: nothing proven); -1
** with *rc. */
static int leaf_pages(const ga_walview *v, uint32_t root, ga_cappend *a,
                      int *rc) {
  unsigned char *buf = sqlite3_malloc64(v->pgsz);
  uint32_t maxk = v->pgsz; /* more than an interior page's children */
  uint32_t *kids = sqlite3_malloc64(sizeof(uint32_t) * maxk);
  uint32_t *lvl = sqlite3_malloc64(sizeof(uint32_t) * 1), *next = NULL;
  size_t nl = 1, nn = 0, cap = 0;
  int ok = 0, depth = 0;
  if (!buf || !kids || !lvl) {
    *rc = SQLITE_NOMEM;
    goto out;
  }
  /* the depth: down the left edge to the leaf */
  for (uint32_t pg = root; depth < 40; depth++) {
    if (!ga_walview_page(v, pg, buf))
      goto out;
    int t = ga_btree_type(buf, pg, v->pgsz), n = 0;
    if (t == 0x0d)
      break;
    if (t != 0x05 ||
        !ga_btree_last_children(buf, pg, v->pgsz, kids, (int)maxk, &n))
      goto out;
    pg = kids[0];
  }
  if (depth >= 40)
    goto out;
  lvl[0] = root;
  /* levels 0 .. depth-1 are interior; their children one level down */
  for (int d = 0; d < depth; d++) {
    nn = 0;
    for (size_t i = 0; i < nl; i++) {
      int n = 0;
      if (!ga_walview_page(v, lvl[i], buf) ||
          !ga_btree_last_children(buf, lvl[i], v->pgsz, kids, (int)maxk, &n))
        goto out;
      if (nn + (size_t)n > cap) {
        size_t nc = (nn + (size_t)n) * 2;
        uint32_t *g = sqlite3_realloc64(next, sizeof(uint32_t) * nc);
        if (!g) {
          *rc = SQLITE_NOMEM;
          goto out;
        }
        next = g;
        cap = nc;
      }
      for (int k = 0; k < n; k++) {
        if (kids[k] < 2 || kids[k] > v->npage) /* a page of no snapshot */
          goto out;
        next[nn++] = kids[k];
      }
      if (nn > v->npage) /* more children than pages: a cycle */
        goto out;
    }
    sqlite3_free(lvl); /* the level below becomes the one to read */
    lvl = next;
    next = NULL;
    nl = nn;
    cap = 0;
  }
  for (size_t i = 0; i < nl; i++)
    if (ga_cappend_add(a, lvl[i])) {
      *rc = SQLITE_NOMEM;
      goto out;
    }
  ok = 1;
out:
  sqlite3_free(buf);
  sqlite3_free(kids);
  sqlite3_free(lvl);
  sqlite3_free(next);
  return *rc != SQLITE_OK ? -1 : ok;
}

void ga_cextend_record(sqlite3 *db, ga_centry *e, const char *rowid) {
  char why[200] = "";
  held h;
  ga_walview v;
  memset(&v, 0, sizeof(v));
  e->app_no = NULL;
  if (!sqlite3_stricmp(e->schema, "temp") || !e->stamp.fs.wal) {
    e->app_no = "rollback journal (appends extend in WAL mode)";
    return;
  }
  for (int c = 0; c < e->ncols; c++)
    if (e->cols[c].mixed || e->cols[c].src_table) {
      e->app_no = "a column holds TEXT and numbers";
      return;
    }
  if (e->rows == 0 || !rowid) {
    e->app_no = "the table was empty at the load";
    return;
  }
  int pending = 0;
  int rc = hold(db, e->schema, &h, &pending, why, sizeof why);
  if (rc != SQLITE_OK) {
    e->app_no = "the load's state could not be held (a transaction open, a "
                "commit meanwhile, or no provable WAL state)";
    return;
  }
  ga_cappend *a = ga_cappend_new();
  uint32_t root = 0;
  if (!a) {
    e->app_no = "out of memory";
    goto done;
  }
  snprintf(a->rowid, sizeof a->rowid, "%s", rowid);
  if (ga_fstamp_diff(&e->stamp.fs, &h.fs) ||
      h.schema_version != e->stamp.schema_version) {
    e->app_no = "a commit came between the load and the record of its pages";
    goto done;
  }
  if (!autovacuum_off(db, e->schema)) {
    e->app_no = "auto_vacuum is on (it moves pages at commit)";
    goto done;
  }
  rc = ga_walview_open(db, e->schema, &h.fs, h.fs.mxframe, NULL, NULL, &v, why,
                       sizeof why);
  if (rc != SQLITE_OK) {
    e->app_no = "the WAL could not be read";
    goto done;
  }
  if (v.npage >= (1u << 24)) { /* rule 4: a type byte read unambiguously */
    e->app_no = "the file has 2^24 pages or more";
    goto done;
  }
  a->pgsz = v.pgsz;
  int got = root_page(db, e->schema, e->table, &root, &rc, why, sizeof why);
  if (got == 1)
    got = leaf_pages(&v, root, a, &rc);
  if (got != 1) {
    e->app_no = "the table's leaf pages could not be listed";
    goto done;
  }
  if (tail_leaves(db, e->schema, e->table, &v, root, a, &rc, why, sizeof why) !=
          1 ||
      a->kr > e->rows) {
    e->app_no = "the b-tree's last leaves could not be proven to hold the "
                "table's last rows";
    goto done;
  }
  for (int i = 0; i < a->ntail; i++)
    if (!ga_cappend_has(a, a->tail[i])) {
      e->app_no = "a last leaf is not among the table's leaves";
      goto done;
    }
  e->app = a;
  e->app_free = ga_cappend_free;
  a = NULL;
done:
  ga_walview_close(&v);
  ga_cappend_free(a);
  unhold(&h);
}

/* ---- the extension ---- */

/* A load's own text (engine/cache/cache_load.c ga_cload_sql) over e's
** columns: the new rows are read as the load read the old ones. */
static char *collect_sql(const char *schema, const ga_centry *e,
                         const char *rowid) {
  const char **names =
      sqlite3_malloc64(sizeof(char *) * (size_t)(e->ncols ? e->ncols : 1));
  if (!names)
    return NULL;
  for (int i = 0; i < e->ncols; i++)
    names[i] = e->cols[i].name;
  char *sql = ga_cload_sql(schema, e->table, rowid, names, e->ncols);
  sqlite3_free(names);
  return sql;
}

/* The rows lo..hi into a new host entry (not linked, its bytes in
** c->used).  SQLite code; SQLITE_NOTFOUND with why (a BLOB, the budget). */
static int read_rows(ga_cache *c, sqlite3 *db, int64_t budget,
                     const char *schema, const ga_centry *e, int64_t lo,
                     int64_t hi, ga_centry **out, char *why, size_t nwhy) {
  *out = NULL;
  char *sql = collect_sql(schema, e, e->app->rowid);
  sqlite3_stmt *st = NULL;
  int64_t rows = 0;
  if (!sql)
    return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  sqlite3_free(sql);
  if (rc != SQLITE_OK)
    return ga_intr_rc(db, rc);
  ga_cload *l = ga_cload_new(c, GA_CACHE_HOST, e->ncols, 0, budget);
  if (!l) {
    sqlite3_finalize(st);
    return SQLITE_NOMEM;
  }
  ga_cload_set_enc(l, e->enc);
  sqlite3_bind_int64(st, 1, lo);
  sqlite3_bind_int64(st, 2, hi);
  rc = ga_cload_piece_begin(l, st, 0, lo, hi);
  if (rc == GA_OK) {
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
      ;
    if (rc == SQLITE_DONE)
      rc = ga_cload_piece_end(l, 0, 1, &rows) ? SQLITE_NOTFOUND : SQLITE_OK;
    else if (ga_cload_error(l, NULL, 0, NULL, NULL, NULL))
      rc = SQLITE_NOTFOUND;
    else {
      int r2 = sqlite3_reset(st);
      rc = ga_intr_rc(db, r2 ? r2 : SQLITE_ERROR);
    }
  } else {
    rc = rc == GA_NOMEM ? SQLITE_NOMEM : SQLITE_NOTFOUND;
  }
  sqlite3_finalize(st);
  ga_centry *x = rc == SQLITE_OK ? ga_cload_finish(l) : NULL;
  if (rc == SQLITE_OK && !x)
    rc = SQLITE_NOTFOUND;
  if (!x) {
    char lw[200] = "";
    int err = ga_cload_error(l, lw, sizeof lw, NULL, NULL, NULL);
    ga_cload_abort(l);
    if (err == GA_NOMEM)
      return SQLITE_NOMEM;
    if (rc == SQLITE_NOTFOUND)
      snprintf(why, nwhy, "reading the new rows failed (%s)",
               err == GA_CLOAD_ETYPE     ? "a BLOB value"
               : err == GA_CLOAD_EBUDGET ? "cache_bytes"
                                         : lw);
    return rc;
  }
  *out = x;
  return SQLITE_OK;
}

static void discard(ga_cache *c, ga_centry *x) {
  if (!x)
    return;
  pthread_mutex_lock(&c->mu);
  c->used -= x->bytes;
  pthread_mutex_unlock(&c->mu);
  ga_centry_free(x);
}

typedef struct resv {
  ga_cache *c;
  int64_t budget;
} resv;

static int reserve_cb(void *arg, int64_t n) {
  resv *r = arg;
  return !ga_cache_reserve(r->c, r->budget, n, NULL);
}

/* Rule 6: e back into the list (moved: its new state, a new link
** sequence).  Another thread's gpu_cache of the same table may have linked
** an entry of the key while e was out: e replaces it, as a load replaces
** one (ext/cache/cache_fns.c), so the key never holds two. */
static void relink_unique(ga_cache *c, sqlite3 *db, ga_centry *e, int moved) {
  ga_centry *dup = ga_cache_lookup(c, db, e->schema, e->table);
  if (dup)
    ga_cache_drop(c, dup); /* gives back lookup's reference */
  if (moved)
    ga_cache_relink_moved(c, e);
  else
    ga_cache_relink(c, e);
}
/* Rule 5's new record into b (a copy of a grown), given the snapshot. */
static int new_record(sqlite3 *db, const char *schema, const ga_centry *e,
                      const ga_walview *v, uint32_t from, ga_intr *intr,
                      ga_cappend *b, char *why, size_t nwhy) {
  const ga_cappend *a = e->app;
  int rc = SQLITE_OK;
  unsigned char *buf = sqlite3_malloc64(v->pgsz);
  if (!buf)
    return SQLITE_NOMEM;
  *b = *a;
  b->pages = sqlite3_malloc64(sizeof(uint64_t) * (size_t)GA_BW(a->nbits));
  if (!b->pages) {
    sqlite3_free(buf);
    return SQLITE_NOMEM;
  }
  memcpy(b->pages, a->pages, sizeof(uint64_t) * (size_t)GA_BW(a->nbits));
  for (uint32_t p = 1; p < v->nlast; p++) {
    if ((p & 65535) == 0 && ga_intr_check(intr)) { /* rule 7 */
      rc = SQLITE_INTERRUPT;
      break;
    }
    if (v->last[p] <= from)
      continue;
    if (!ga_walview_page(v, p, buf)) {
      snprintf(why, nwhy, "page %u cannot be read", p);
      rc = SQLITE_NOTFOUND;
      break;
    }
    /* an interior page holds no row, an index leaf none of a table's; an
    ** overflow or freelist page starts with a page number, whose first
    ** byte is 0 below 2^24 pages: only then is the type byte unambiguous
    ** (page 1 is sqlite_schema's root: never a user table's) */
    int t = ga_btree_type(buf, p, v->pgsz);
    int rows = p != 1 && (v->nlast >= (1u << 24) ||
                          (t != 0x02 && t != 0x05 && t != 0x0a));
    if (rows && ga_cappend_add(b, p)) {
      rc = SQLITE_NOMEM;
      break;
    }
  }
  sqlite3_free(buf);
  uint32_t root = 0;
  if (rc == SQLITE_OK) {
    int r = root_page(db, schema, e->table, &root, &rc, why, nwhy);
    if (r == 1)
      r = tail_leaves(db, schema, e->table, v, root, b, &rc, why, nwhy);
    if (r == 0)
      rc = SQLITE_NOTFOUND;
  }
  if (rc != SQLITE_OK) {
    sqlite3_free(b->pages);
    b->pages = NULL;
  }
  return rc;
}

/* Rule 4: NULL when no page of a's record is free in v's snapshot, else
** why (a recorded page on the freelist, or a freelist that cannot be
** walked); *rc set on NOMEM.  buf: v->pgsz bytes. */
static const char *free_pages_recorded(const ga_walview *v, const ga_cappend *a,
                                       unsigned char *buf, int *rc) {
  (void)rc;
  if (!ga_walview_page(v, 1, buf))
    return "page 1 cannot be read";
  uint32_t trunk = ga_be4(buf + 32), nfree = ga_be4(buf + 36);
  uint32_t seen = 0, trunks = 0;
  while (trunk) {
    if (trunk > v->npage || ++trunks > v->npage)
      return "the freelist cannot be walked";
    if (ga_cappend_has(a, trunk))
      return "a page that held rows of the table is free now (DELETE "
             "without WHERE frees pages unwritten)";
    if (!ga_walview_page(v, trunk, buf))
      return "the freelist cannot be walked";
    uint32_t next = ga_be4(buf), n = ga_be4(buf + 4);
    if (n > (v->pgsz - 8) / 4)
      return "the freelist cannot be walked";
    for (uint32_t i = 0; i < n; i++)
      if (ga_cappend_has(a, ga_be4(buf + 8 + 4 * i)))
        return "a page that held rows of the table is free now (DELETE "
               "without WHERE frees pages unwritten)";
    seen += n + 1;
    trunk = next;
  }
  if (seen != nfree)
    return "the freelist's count is not its pages'";
  return NULL;
}

int ga_cextend_try(ga_cache *c, sqlite3 *db, const ga_config *cfg,
                   const char *schema, ga_centry *e, int64_t *added, char *why,
                   size_t nwhy) {
  *added = -1;
  why[0] = 0;
  ga_cappend *a = e->app;
  if (!a) {
    if (e->app_no)
      snprintf(why, nwhy, "%s", e->app_no);
    return SQLITE_OK;
  }
  if ((e->where != GA_CACHE_HOST && e->where != GA_CACHE_GPU) || e->watch ||
      __atomic_load_n(&e->stale, __ATOMIC_RELAXED))
    return SQLITE_OK;
  if (e->where == GA_CACHE_GPU && cfg->device == GA_DEVICE_CPU) {
    /* rule 8: no device work for a caller that asked for none; the entry
    ** is left as it is for a caller that may use the GPU */
    snprintf(why, nwhy, "the entry is in GPU memory and device = 'cpu'");
    return SQLITE_OK;
  }
  held h;
  ga_walview v;
  ga_cappend nb;
  ga_centry *r = NULL, *x = NULL;
  unsigned char *pgbuf = NULL;
  memset(&v, 0, sizeof(v));
  memset(&nb, 0, sizeof(nb));
  int pending = 0;
  int rc = hold(db, schema, &h, &pending, why, nwhy);
  if (rc != SQLITE_OK) {
    if (pending)
      *added = -2;
    return rc == SQLITE_NOTFOUND ? SQLITE_OK : rc;
  }
  if (!ga_fstamp_diff(&e->fs, &h.fs)) { /* nothing committed since */
    unhold(&h);
    return SQLITE_OK;
  }
  const ga_fstamp *o = &e->fs;
  ga_intr intr = {.db = db};
  uint32_t from = o->mxframe;
  if (h.fs.st_dev != o->st_dev || h.fs.st_ino != o->st_ino) {
    snprintf(why, nwhy, "another file under the name");
    goto no;
  }
  if (memcmp(h.fs.salt, o->salt, sizeof o->salt) || h.fs.mxframe <= from) {
    snprintf(why, nwhy,
             "the WAL was reset or checkpointed (new salts): its "
             "frames since the entry's state are gone");
    goto no;
  }
  if (h.schema_version != e->stamp.schema_version) {
    snprintf(why, nwhy, "the schema changed (schema_version)");
    goto no;
  }
  if (!autovacuum_off(db, schema)) {
    snprintf(why, nwhy, "auto_vacuum is on (it moves pages at commit)");
    goto no;
  }
  int64_t ru = 1;
  int has = 0;
  rc = one_int(db, "PRAGMA read_uncommitted", 0, 0, &ru, &has);
  if (rc != SQLITE_OK)
    goto out;
  if (ru) {
    snprintf(why, nwhy, "read_uncommitted = 1");
    goto no;
  }
  char *sig = ga_centry_sig(db, schema, e, &rc);
  int same = sig && e->auth_sig && !strcmp(sig, e->auth_sig);
  sqlite3_free(sig);
  if (!same) {
    if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
      goto out;
    rc = SQLITE_OK;
    snprintf(why, nwhy,
             "the connection's authorizer treats the columns "
             "otherwise than at the load");
    goto no;
  }
  rc = ga_walview_open(db, schema, &h.fs, from, ga_intr_check, &intr, &v, why,
                       nwhy);
  if (rc == SQLITE_NOTFOUND)
    goto no;
  if (rc != SQLITE_OK)
    goto out;
  if (!ga_walview_frame_is(&v, from, o->cksum)) {
    snprintf(why, nwhy,
             "the entry's frame %u was overwritten (the WAL was "
             "reset)",
             from);
    goto no;
  }
  for (uint32_t p = 1; p < v.nlast; p++) {
    if (v.last[p] > from && !ga_cappend_in_tail(a, p) && ga_cappend_has(a, p)) {
      snprintf(why, nwhy,
               "frame %u wrote page %u, which held rows of %s at the entry's "
               "state (not only appends)",
               v.last[p], p, e->table);
      goto no;
    }
  }
  /* rule 4: a page of the entry's state that is no leaf of the table (not
  ** recorded) may have been an overflow page of its rows: its new version
  ** must be a b-tree page (an overflow page begins with the next one's
  ** number, whose first byte is 0 below 2^24 pages) */
  if (!v.from_npage || v.npage >= (1u << 24)) {
    snprintf(why, nwhy, "the entry's state has no page count under 2^24");
    goto no;
  }
  if (!(pgbuf = sqlite3_malloc64(v.pgsz))) {
    rc = SQLITE_NOMEM;
    goto out;
  }
  for (uint32_t p = 2; p < v.nlast && p <= v.from_npage; p++) {
    if ((p & 65535) == 0 && ga_intr_check(&intr)) { /* rule 7 */
      rc = SQLITE_INTERRUPT;
      goto out;
    }
    if (v.last[p] <= from || ga_cappend_has(a, p))
      continue;
    if (!ga_walview_page(&v, p, pgbuf) || ga_btree_type(pgbuf, p, v.pgsz) < 0) {
      snprintf(why, nwhy, "frame %u wrote page %u: an overflow or free page",
               v.last[p], p);
      goto no;
    }
  }
  /* rule 4: a page can leave the table unwritten: DELETE without WHERE
  ** (OP_Clear) frees every leaf without writing it (secure_delete off).
  ** So no recorded page may be on the freelist in the snapshot (page 1's
  ** first trunk and count, each trunk's next, count and leaves) */
  {
    const char *fw = free_pages_recorded(&v, a, pgbuf, &rc);
    if (rc != SQLITE_OK)
      goto out;
    if (fw) {
      snprintf(why, nwhy, "%s", fw);
      goto no;
    }
  }
  for (uint32_t p = v.mincommit + 1; v.mincommit != 0xffffffffu && p < a->nbits;
       p++)
    if (ga_cappend_has(a, p)) {
      snprintf(why, nwhy, "a commit shrank the file below page %u", p);
      goto no;
    }
  /* rule 8: a GPU entry's new rows count in the GPU budget, as its load's */
  int64_t budget = ga_cache_budget(cfg, e->where);
  int64_t lo = a->has_lmax ? a->lmax + 1 : INT64_MIN;
  rc = read_rows(c, db, budget, schema, e, lo, a->maxrowid, &r, why, nwhy);
  if (rc == SQLITE_NOTFOUND)
    goto no;
  if (rc != SQLITE_OK)
    goto out;
  if (r->rows != a->kr) {
    snprintf(why, nwhy,
             "the last leaves' rowids hold %lld rows, not %lld: a row "
             "was deleted or inserted there (not only appends)",
             (long long)r->rows, (long long)a->kr);
    goto no;
  }
  if (!ga_cappend_same_tail(e, r, why, nwhy))
    goto no;
  if (a->maxrowid < INT64_MAX) {
    rc = read_rows(c, db, budget, schema, e, a->maxrowid + 1, INT64_MAX, &x,
                   why, nwhy);
    if (rc == SQLITE_NOTFOUND)
      goto no;
    if (rc != SQLITE_OK)
      goto out;
    if (x && x->rows == 0) { /* a commit elsewhere: the stamps and the
                                record move, the columns and what a GPU
                                entry derived from them stay */
      discard(c, x);
      x = NULL;
    }
  }
  rc = new_record(db, schema, e, &v, from, &intr, &nb, why, nwhy);
  if (rc == SQLITE_NOTFOUND)
    goto no;
  if (rc != SQLITE_OK)
    goto out;
  ga_cstamp st;
  memset(&st, 0, sizeof(st));
  rc = ga_cstamp_read(db, schema, NULL, &st);
  if (rc != SQLITE_OK) {
    ga_cstamp_free(&st);
    goto out;
  }
  if (ga_fstamp_diff(&st.fs, &h.fs)) { /* cannot be: the snapshot is held */
    ga_cstamp_free(&st);
    snprintf(why, nwhy, "the state moved while it was read");
    goto no;
  }
  char *nschema = sqlite3_mprintf("%s", schema);
  if (!nschema) {
    ga_cstamp_free(&st);
    rc = SQLITE_NOMEM;
    goto out;
  }
  /* rule 6: ours alone while it grows */
  if (!ga_cache_unlink_sole(c, e)) {
    sqlite3_free(nschema);
    ga_cstamp_free(&st);
    snprintf(why, nwhy, "another query holds the entry now");
    goto no;
  }
  int64_t moved = 0, more = 0;
  resv rv = {c, budget};
  int mrc = GA_OK, copied = -1;
  if (x && e->where == GA_CACHE_GPU) /* rule 8 */
    mrc = ga_cappend_merge_gpu(c, budget, e, x, &more, &copied, ga_intr_check,
                               &intr, why, nwhy);
  else if (x)
    mrc = ga_cappend_merge(e, x, reserve_cb, &rv, &moved, &more, why, nwhy);
  if (mrc == GA_CLOAD_EFAIL) { /* rule 8: the entry lost its columns */
    pthread_mutex_lock(&c->mu);
    c->used -= more;
    pthread_mutex_unlock(&c->mu);
    __atomic_store_n(&e->stale, 1, __ATOMIC_RELAXED);
    sqlite3_free(nschema);
    ga_cstamp_free(&st);
    if (ga_intr_check(&intr)) {
      rc = SQLITE_INTERRUPT;
      goto out;
    }
    size_t wl = strlen(why);
    snprintf(why + wl, nwhy - wl, " (the GPU entry is dropped)");
    goto no;
  }
  if (mrc != GA_OK) {
    relink_unique(c, db, e, 0); /* as it was */
    sqlite3_free(nschema);
    ga_cstamp_free(&st);
    if (mrc == GA_NOMEM || mrc == GA_INTERRUPTED) {
      rc = mrc == GA_NOMEM ? SQLITE_NOMEM : SQLITE_INTERRUPT;
      goto out;
    }
    goto no;
  }
  if (more) { /* reserved into used: e's bytes count it on relink */
    pthread_mutex_lock(&c->mu);
    c->used -= more;
    pthread_mutex_unlock(&c->mu);
  }
  int64_t n = x ? x->rows : 0;
  ga_cstamp_free(&e->stamp);
  e->stamp = st;
  e->fs = st.fs;
  sqlite3_free(e->schema);
  e->schema = nschema;
  __atomic_store_n(&e->owner, (const void *)db, __ATOMIC_RELAXED);
  nb.appends = a->appends + n;
  nb.extends = a->extends + 1;
  sqlite3_free(a->pages);
  *a = nb;
  nb.pages = NULL;
  char *cut = strstr(e->note, "; extended");
  if (cut)
    *cut = 0;
  size_t len = strlen(e->note);
  snprintf(e->note + len, sizeof e->note - len,
           "; extended by %lld rows (%lld appended in all%s)", (long long)n,
           (long long)a->appends,
           copied < 0 ? ""
           : copied   ? "; device columns re-copied"
                      : "; device columns in place");
  if (copied >= 0) { /* rule 8's counters (gpuagg_info) */
    pthread_mutex_lock(&c->mu);
    if (copied)
      c->gpu_append_copied++;
    else
      c->gpu_append_inplace++;
    pthread_mutex_unlock(&c->mu);
  }
  relink_unique(c, db, e, 1);
  *added = n;
  why[0] = 0;
  if (copied >= 0) /* ga_cache_answer_ext's last_scan.why */
    snprintf(why, nwhy, "%s",
             copied ? "device columns re-copied" : "device columns in place");
  goto out;
no:
  rc = SQLITE_OK;
out:
  sqlite3_free(pgbuf);
  sqlite3_free(nb.pages);
  ga_walview_close(&v);
  ga_intr_free(&intr);
  discard(c, r);
  discard(c, x);
  unhold(&h);
  if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_NOMEM &&
      (rc & 0xff) != SQLITE_INTERRUPT) {
    snprintf(why, nwhy, "reading the table failed (%s)", sqlite3_errstr(rc));
    rc = SQLITE_OK;
  }
  return rc & 0xff;
}

int ga_cache_answer_ext(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                        const ga_target *t, const ga_parts *p, ga_scan_out *out,
                        int *hit, char *why, size_t nwhy) {
  ga_cache *c = conn->cache;
  int64_t added = -1;
  char xwhy[200] = "";
  int was_stale = 1;
  /* before ga_cache_answer's shape, whose programs read the dictionaries */
  ga_centry *e = c ? ga_cache_lookup(c, db, t->schema, t->table) : NULL;
  if (e) {
    was_stale = __atomic_load_n(&e->stale, __ATOMIC_RELAXED);
    int rc =
        ga_cextend_try(c, db, cfg, t->schema, e, &added, xwhy, sizeof xwhy);
    if (rc != SQLITE_OK) {
      ga_centry_put(c, e);
      return rc;
    }
  }
  int rc = ga_cache_answer(conn, db, cfg, t, p, out, hit, why, nwhy);
  if (e && added == -2 && !was_stale) /* a later caller may extend it */
    __atomic_store_n(&e->stale, 0, __ATOMIC_RELAXED);
  if (e)
    ga_centry_put(c, e);
  size_t len = strlen(why);
  if (rc == SQLITE_OK && *hit && added >= 0)
    snprintf(why + len, nwhy - len, " (extended by %lld appended rows%s%s)",
             (long long)added, xwhy[0] ? "; " : "", xwhy);
  else if (rc == SQLITE_OK && !*hit && xwhy[0] && strstr(why, "stale"))
    snprintf(why + len, nwhy - len, "; not extended: %s", xwhy);
  else if (rc == SQLITE_OK && !*hit && !why[0] && strstr(xwhy, "dropped"))
    snprintf(why, nwhy, "no cache entry; not extended: %s", xwhy);
  return rc;
}
