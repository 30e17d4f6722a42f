/*
** test_scan_group.c — engine/scan/scan_group.c against SQLite itself
** (make test-scan-group; suite scan_group of tests/run_all.sh).
**
**   1. ga_coll_cmp agrees in sign with SQLite's BINARY, NOCASE and RTRIM on
**      random strings (ASCII letters of both cases, spaces, '[', digits,
**      UTF-8, embedded NUL), and ga_key_cmp with SQLite's comparison of
**      mixed values (`a < b COLLATE c`, `a = b`).
**   2. Keys that compare equal hash equal (GROUP BY's 1 = 1.0 = -0.0 ... ).
**   3. Group tables and shards: random pieces of random rows, added in a
**      random order (as workers interleave), give the same groups, counts,
**      first-row representatives and first-seen max/min (5 vs 5.0) as the
**      rows taken in rowid order; pieces move whole, group by group, or go
**      direct (row by row or in batches, ga_gs_batch).
** Prints FAIL lines and "RESULT scan_group: p passed, f failed, 0 skipped".
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "scan_group.h"

/* One check per kind of comparison (printed once, with its first failing
** case), counted as one passed check when every case of it agreed: the
** cases number in the hundreds of thousands. */
#define NKINDS 32
static const char *kinds[NKINDS];
static long long kind_fail[NKINDS], kind_cases[NKINDS];

static void check(int ok, const char *what, long long i) {
  int k = 0;
  while (k < NKINDS - 1 && kinds[k] && strcmp(kinds[k], what))
    k++;
  kinds[k] = what;
  kind_cases[k]++;
  if (!ok && kind_fail[k]++ == 0)
    printf("FAIL [scan_group] %s (case %lld)\n", what, i);
}

static uint64_t seed = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) {
  seed ^= seed >> 12;
  seed ^= seed << 25;
  seed ^= seed >> 27;
  return seed * 2685821657736338717ull;
}

/* A random string of n bytes from a small alphabet that stresses the
** collations. */
static int rand_text(char *buf, int max) {
  static const char *const pieces[] = {"a",        "A", "b", "B", " ",
                                       "[",        "z", "Z", "1", "\xc3\xa9",
                                       "\xc3\x89", "`", "_"};
  int n = 0, k = (int)(rnd() % 5);
  for (int i = 0; i < k; i++) {
    const char *p = pieces[rnd() % (sizeof pieces / sizeof pieces[0])];
    int l = (int)strlen(p);
    if (n + l >= max)
      break;
    memcpy(buf + n, p, (size_t)l);
    n += l;
  }
  if (rnd() % 10 == 0 && n + 2 < max) { /* an embedded NUL */
    buf[n++] = 0;
    buf[n++] = rnd() % 2 ? 'a' : 'A';
  }
  return n;
}

static const char *const coll_names[3] = {"BINARY", "NOCASE", "RTRIM"};

static void test_collations(sqlite3 *db) {
  sqlite3_stmt *st[3];
  for (int c = 0; c < 3; c++) {
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT (?1 COLLATE %s > ?2) - (?1 < ?2)",
             coll_names[c]);
    /* the second comparison also takes the left operand's collation */
    snprintf(sql, sizeof sql,
             "SELECT (?1 COLLATE %s > ?2) - (?1 COLLATE %s < ?2)",
             coll_names[c], coll_names[c]);
    sqlite3_prepare_v2(db, sql, -1, &st[c], NULL);
  }
  for (long long i = 0; i < 20000; i++) {
    char a[32], b[32];
    int na = rand_text(a, sizeof a), nb = rand_text(b, sizeof b);
    if (rnd() % 4 == 0) { /* near-equal pairs */
      memcpy(b, a, (size_t)na);
      nb = na;
      for (int k = 0; k < nb; k++)
        if (rnd() % 3 == 0 && ((b[k] | 32) >= 'a' && (b[k] | 32) <= 'z'))
          b[k] ^= 32;
      if (rnd() % 3 == 0 && nb < 30)
        b[nb++] = ' ';
    }
    for (int c = 0; c < 3; c++) {
      sqlite3_bind_text(st[c], 1, a, na, SQLITE_STATIC);
      sqlite3_bind_text(st[c], 2, b, nb, SQLITE_STATIC);
      sqlite3_step(st[c]);
      int want = sqlite3_column_int(st[c], 0);
      sqlite3_reset(st[c]);
      int got = ga_coll_cmp(c, a, na, b, nb);
      got = (got > 0) - (got < 0);
      check(got == want, coll_names[c], i);
      if (got == 0) {
        ga_value ka = {GA_V_TEXT, na, 0, 0, a}, kb = {GA_V_TEXT, nb, 0, 0, b};
        check(ga_key_hash(&ka, c) == ga_key_hash(&kb, c), "equal texts hash",
              i);
      }
    }
  }
  for (int c = 0; c < 3; c++)
    sqlite3_finalize(st[c]);
}

/* A random value as SQL sees it: bound to a statement and as a ga_value. */
typedef struct val {
  int type;
  int64_t i;
  double r;
  char t[16];
  int n;
} val;

static void rand_val(val *v) {
  static const double reals[] = {1.0,  -0.0, 0.0, 5.0, 2.5, 9007199254740992.0,
                                 -1.0, 1e300};
  static const int64_t ints[] = {
      1,         0,        5, -1, 9007199254740993LL, 9007199254740992LL,
      INT64_MAX, INT64_MIN};
  memset(v, 0, sizeof(*v));
  switch (rnd() % 5) {
  case 0:
    v->type = GA_V_NULL;
    break;
  case 1:
    v->type = GA_V_INT;
    v->i = ints[rnd() % 8];
    break;
  case 2:
    v->type = GA_V_REAL;
    v->r = reals[rnd() % 8];
    break;
  case 3:
    v->type = GA_V_TEXT;
    v->n = rand_text(v->t, sizeof v->t);
    break;
  default:
    v->type = GA_V_BLOB;
    v->n = rand_text(v->t, sizeof v->t);
  }
}

static void bind_val(sqlite3_stmt *st, int k, const val *v) {
  switch (v->type) {
  case GA_V_INT:
    sqlite3_bind_int64(st, k, v->i);
    break;
  case GA_V_REAL:
    sqlite3_bind_double(st, k, v->r);
    break;
  case GA_V_TEXT:
    sqlite3_bind_text(st, k, v->t, v->n, SQLITE_STATIC);
    break;
  case GA_V_BLOB:
    sqlite3_bind_blob(st, k, v->t, v->n, SQLITE_STATIC);
    break;
  default:
    sqlite3_bind_null(st, k);
  }
}

static ga_value as_key(const val *v) {
  ga_value k = {v->type, v->n, v->i, v->r, v->t};
  return k;
}

static void test_keys(sqlite3 *db) {
  for (int c = 0; c < 3; c++) {
    sqlite3_stmt *st;
    char sql[160];
    /* GROUP BY's equality (NULL = NULL) and ORDER BY's order */
    snprintf(sql, sizeof sql,
             "SELECT CASE WHEN ?1 IS ?2 COLLATE %s THEN 0 WHEN ?1 COLLATE %s "
             "< ?2 OR (?1 IS NULL) THEN -1 ELSE 1 END",
             coll_names[c], coll_names[c]);
    sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    for (long long i = 0; i < 20000; i++) {
      val a, b;
      rand_val(&a);
      rand_val(&b);
      if (rnd() % 4 == 0)
        b = a;
      bind_val(st, 1, &a);
      bind_val(st, 2, &b);
      sqlite3_step(st);
      int want = sqlite3_column_int(st, 0);
      sqlite3_reset(st);
      ga_value ka = as_key(&a), kb = as_key(&b);
      int got = ga_key_cmp(&ka, &kb, c);
      check(got == want, "ga_key_cmp", i);
      if (got == 0)
        check(ga_key_hash(&ka, c) == ga_key_hash(&kb, c), "equal keys hash", i);
    }
    sqlite3_finalize(st);
  }
}

/* ---- tables: rows in pieces, added out of order ---- */

/* Rows of up to MAXK keys and MAXS values; a round uses nk keys and ns
** states (gpu_query's shapes), with the key collations of the round. */
#define NROWS 3000
#define MAXK 3
#define MAXS 3
typedef struct row {
  val key[MAXK];
  int xt[MAXS]; /* x: 0 NULL, 1 INTEGER 5, 2 REAL 5.0, 3 INTEGER i, 4 text */
  int64_t xi[MAXS];
} row;

static void x_value(const row *r, int s, ga_value *num, ga_value *raw) {
  memset(num, 0, sizeof(*num));
  memset(raw, 0, sizeof(*raw));
  switch (r->xt[s]) {
  case 0:
    num->type = raw->type = GA_V_NULL;
    break;
  case 1:
    num->type = raw->type = GA_V_INT;
    num->i = raw->i = 5;
    break;
  case 2:
    num->type = raw->type = GA_V_REAL;
    num->r = raw->r = 5.0;
    break;
  case 3:
    num->type = raw->type = GA_V_INT;
    num->i = raw->i = r->xi[s];
    break;
  default:
    num->type = GA_V_REAL; /* sum()'s view of 'z' is 0.0 */
    num->r = 0.0;
    raw->type = GA_V_TEXT;
    raw->p = "z";
    raw->n = 1;
  }
}

/* Row i's states (one value each, stepped) into s; keys into k. */
static void row_states(const row *r, const ga_gshape *sh, ga_xstate *s,
                       ga_value *k) {
  for (int j = 0; j < sh->nk + sh->nc; j++)
    k[j] = as_key(&r->key[j]);
  for (int j = 0; j < sh->ns; j++) {
    ga_value num, raw;
    ga_xstate_init(&s[j]);
    s[j].enc = SQLITE_UTF8;
    x_value(r, j, &num, &raw);
    ga_xstate_step(&s[j], &num, &raw);
  }
}

static int same_value(const ga_value *a, const ga_value *b) {
  return a->type == b->type && (a->type != GA_V_INT || a->i == b->i) &&
         (a->type != GA_V_REAL || !memcmp(&a->r, &b->r, sizeof a->r)) &&
         (a->type < GA_V_TEXT ||
          (a->n == b->n && !memcmp(a->p, b->p, (size_t)a->n)));
}

/* Direct mode (engine/scan/scan.c) over rows [a, b) of piece p: rows of
** numbers and NULLs in batches of a random size (1 to 7 rows, so batches
** fill often), a row with a TEXT value stepping the batch first, then
** itself through ga_gs_hold_group, as scan.c's take_row_batch does. */
static void direct_piece(ga_group_shards *gs, const ga_gshape *sh,
                         const row *rows, int a, int b, int64_t p,
                         int64_t *bytes) {
  ga_gs_batch batch;
  int64_t wait = 0;
  int first = (int)(rnd() % GA_GS_SHARDS);
  if (ga_gs_batch_init(&batch, sh, 1 + (int)(rnd() % 7)) != GA_OK) {
    check(0, "batch made", p);
    return;
  }
  for (int i = a; i < b; i++) {
    ga_value k[MAXK], num[MAXS], raw[MAXS];
    int text = 0;
    for (int j = 0; j < sh->nk + sh->nc; j++)
      k[j] = as_key(&rows[i].key[j]);
    for (int j = 0; j < sh->ns; j++) {
      x_value(&rows[i], j, &num[j], &raw[j]);
      text |= raw[j].type == GA_V_TEXT;
    }
    uint64_t h = ga_keys_hash(k, sh);
    if (!text && ga_gs_batch_room(&batch, 64)) {
      ga_gs_batch_add(&batch, k, raw, h);
      continue;
    }
    check(ga_gs_step_batch(gs, &batch, p, first, bytes, &wait) == GA_OK,
          "batch stepped", p);
    if (!text) { /* it was full */
      ga_gs_batch_add(&batch, k, raw, h);
      continue;
    }
    ga_gs_hold hold;
    ga_group *g = ga_gs_hold_group(gs, k, h, p, &hold);
    check(g != NULL, "group held", p);
    if (!g)
      continue;
    int64_t extra = 0;
    for (int j = 0; j < sh->ns; j++) {
      ga_gstate *st = &g->st[j];
      int64_t was = ga_gstate_heap_bytes(st);
      ga_gstate_best_tagged(&st->max, &g->tag[2 * j], p, &raw[j], 0);
      ga_gstate_best_tagged(&st->min, &g->tag[2 * j + 1], p, &raw[j], 1);
      ga_gstate_step_sum(st, &num[j]);
      extra += ga_gstate_heap_bytes(st) - was;
    }
    ga_gs_release(gs, &hold, extra, bytes);
  }
  check(ga_gs_step_batch(gs, &batch, p, first, bytes, &wait) == GA_OK,
        "batch stepped", p);
  check(batch.n == 0, "batch emptied", p);
  ga_gs_batch_free(&batch);
}

static void test_tables(void) {
  static row rows[NROWS];
  for (int round = 0; round < 2 * MAXK * MAXS; round++) {
    ga_gshape sh;
    memset(&sh, 0, sizeof(sh));
    sh.nk = 1 + round % MAXK;
    sh.ns = 1 + (round / MAXK) % MAXS;
    /* a carried value (gpu_query's columns of group terms): the first
    ** row's, neither compared nor hashed */
    sh.nc = sh.nk < MAXK ? (round / (MAXK * MAXS)) % 2 : 0;
    for (int j = 0; j < sh.nk; j++)
      sh.coll[j] = (round + j) % 3;
    /* odd rounds: keys 1, 1.0, 5, 5.0, 'a', 'A' and values NULL, 5, 5.0,
    ** so that groups hold many rows, rows of one group meet in a batch of
    ** direct mode, and the representative (1 or 1.0) and the max/min ties
    ** (5 or 5.0) depend on the order the rows are stepped in */
    val pool[6];
    memset(pool, 0, sizeof pool);
    pool[0].type = pool[2].type = GA_V_INT;
    pool[0].i = 1;
    pool[2].i = 5;
    pool[1].type = pool[3].type = GA_V_REAL;
    pool[1].r = 1.0;
    pool[3].r = 5.0;
    pool[4].type = pool[5].type = GA_V_TEXT;
    pool[4].t[0] = 'a';
    pool[5].t[0] = 'A';
    pool[4].n = pool[5].n = 1;
    for (int i = 0; i < NROWS; i++)
      for (int j = 0; j < MAXK; j++) {
        if (round % 2)
          rows[i].key[j] = pool[rnd() % 6];
        else
          rand_val(&rows[i].key[j]);
        rows[i].xt[j] = (int)(rnd() % (round % 2 ? 3 : 5));
        rows[i].xi[j] = (int64_t)(rnd() % 1000) - 500;
      }
    /* expected: one table fed in rowid order, one piece per row */
    ga_group_table want;
    ga_gt_init(&want, &sh);
    for (int i = 0; i < NROWS; i++) {
      ga_xstate s[MAXS];
      ga_value k[MAXK];
      row_states(&rows[i], &sh, s, k);
      ga_gt_add(&want, k, ga_keys_hash(k, &sh), s, i);
    }
    /* got: random pieces, stepped in order inside a piece, added to the
    ** shards in a random order of pieces */
    int cut[NROWS + 1], ncut = 0, order[NROWS];
    for (int i = 0; i < NROWS; i += 1 + (int)(rnd() % 200))
      cut[ncut++] = i;
    cut[ncut] = NROWS;
    for (int p = 0; p < ncut; p++)
      order[p] = p;
    for (int p = ncut - 1; p > 0; p--) {
      int q = (int)(rnd() % (uint64_t)(p + 1)), t = order[p];
      order[p] = order[q];
      order[q] = t;
    }
    ga_group_shards *gs = ga_gs_new(&sh);
    int64_t bytes = 0;
    for (int o = 0; o < ncut; o++) {
      int p = order[o];
      /* a third of the pieces move whole (a worker's table, mode 1), a
      ** third group by group (SQLite's GROUP BY in a piece, 0), a third go
      ** direct (2); which third the first piece is in changes by round */
      int mode = (p + round) % 3;
      ga_group_table piece; /* the piece's GROUP BY: first row wins */
      ga_gt_init(&piece, &sh);
      for (int i = cut[p]; i < cut[p + 1]; i++) {
        ga_xstate s[MAXS];
        ga_value k[MAXK];
        row_states(&rows[i], &sh, s, k);
        /* a worker's table tags its groups with the piece (ga_gs_take
        ** moves them as they are); ga_gs_add tags what it adds */
        ga_gt_add(&piece, k, ga_keys_hash(k, &sh), s, mode == 1 ? p : 0);
      }
      if (mode == 2) {
        direct_piece(gs, &sh, rows, cut[p], cut[p + 1], p, &bytes);
      } else if (mode == 1) {
        ga_gs_take(gs, &piece, p, &bytes);
      } else {
        for (size_t j = 0; j < piece.cap; j++) {
          ga_group *g = piece.slot[j];
          if (!g)
            continue;
          ga_value k[MAXK];
          for (int q = 0; q < sh.nk + sh.nc; q++)
            ga_bval_view(&g->key[q], &k[q]);
          ga_xstate x[MAXS]; /* as a piece's BLOBs decode: ga_xstates */
          for (int q = 0; q < sh.ns; q++) {
            ga_xstate view;
            ga_gstate_view(&g->st[q], &view);
            ga_xstate_init(&x[q]);
            ga_xstate_merge(&x[q], &view);
          }
          ga_gs_add(gs, k, x, p, &bytes);
        }
      }
      ga_gt_free(&piece);
    }
    ga_group **v;
    size_t n;
    ga_gs_sorted(gs, &v, &n);
    check(n == want.n, "group count", round);
    check(bytes > 0, "bytes counted", round);
    for (size_t j = 0; j < n; j++) {
      ga_value k[MAXK], wk[MAXK];
      for (int q = 0; q < sh.nk + sh.nc; q++)
        ga_bval_view(&v[j]->key[q], &k[q]);
      if (j > 0) { /* sorted */
        ga_value pk[MAXK];
        for (int q = 0; q < sh.nk; q++)
          ga_bval_view(&v[j - 1]->key[q], &pk[q]);
        check(ga_keys_cmp(pk, k, &sh) < 0, "sorted, distinct", round);
      }
      ga_group *w = NULL;
      for (size_t q = 0; q < want.cap && !w; q++)
        if (want.slot[q]) {
          for (int r = 0; r < sh.nk; r++)
            ga_bval_view(&want.slot[q]->key[r], &wk[r]);
          if (ga_keys_cmp(k, wk, &sh) == 0)
            w = want.slot[q];
        }
      check(w != NULL, "group found", round);
      if (!w)
        continue;
      /* the representatives: same type and bytes as the first row's */
      for (int q = 0; q < sh.nk + sh.nc; q++) {
        ga_bval_view(&w->key[q], &wk[q]);
        check(k[q].type == wk[q].type && k[q].n == wk[q].n &&
                  (k[q].type != GA_V_REAL || k[q].r == wk[q].r) &&
                  (k[q].type < GA_V_TEXT ||
                   !memcmp(k[q].p, wk[q].p, (size_t)k[q].n)),
              "first-row representative", round);
      }
      for (int q = 0; q < sh.ns; q++) {
        const ga_gstate *gv = &v[j]->st[q], *gw = &w->st[q];
        check(gv->rows == gw->rows && gv->count == gw->count, "rows and count",
              round);
        for (int op = GA_AGG_SUM; op <= GA_AGG_MIN; op++) {
          ga_value a, b;
          int ra = ga_gstate_result(gv, op, &a);
          int rb = ga_gstate_result(gw, op, &b);
          check(ra == rb && same_value(&a, &b),
                op == GA_AGG_MAX   ? "max, first seen wins"
                : op == GA_AGG_MIN ? "min, first seen wins"
                                   : "sum/total/avg",
                round);
        }
      }
    }
    sqlite3_free(v);
    ga_gs_free(gs);
    ga_gt_free(&want);
  }
}

/* engine/state/dset.h rule 5 (issue 37, session 3): the loops over a
** DISTINCT set's slots (a merge, a result) poll this thread's poll every
** GA_DSET_POLL_EVERY slots and stop with GA_INTERRUPTED once it says so;
** counted, never timed. */
static int64_t poll_calls, poll_stop_after;
static int stop_after(void *arg) {
  (void)arg;
  return ++poll_calls > poll_stop_after;
}

static void test_dset_poll(void) {
  ga_gstate a, b;
  ga_gstate_init(&a);
  ga_gstate_init(&b);
  const int64_t n = 1000000; /* 500,000 values each: 2^20 slots */
  int ok = 1;
  for (int64_t i = 0; i < n && ok; i++) {
    ga_value v = {.type = GA_V_INT, .i = i};
    ok = ga_distinct_step(i < n / 2 ? &a : &b, GA_COLL_BINARY, &v,
                          i < n / 2 ? 0 : 1, NULL) == GA_OK;
  }
  check(ok && b.set && b.set->cap == (size_t)1 << 20, "dset poll: the sets", 0);
  ga_dset_poll p = {stop_after, NULL, 0};
  /* a merge stops at the poll that says so, and only there */
  poll_calls = 0;
  poll_stop_after = 10;
  ga_dset_poll *was = ga_dset_poll_swap(&p);
  int rc = ga_gstate_merge(&a, &b);
  check(rc == GA_INTERRUPTED && p.polls == 11 && poll_calls == 11,
        "dset poll: a merge stops", p.polls);
  /* a result over the (partly merged) set: sum and max stop too */
  ga_value v;
  poll_calls = p.polls = 0;
  poll_stop_after = 3;
  rc = ga_gstate_result(&a, GA_AGG_SUM, &v);
  check(rc == GA_INTERRUPTED && p.polls == 4, "dset poll: a sum stops",
        p.polls);
  poll_calls = p.polls = 0;
  rc = ga_gstate_result(&a, GA_AGG_MAX, &v);
  check(rc == GA_INTERRUPTED && p.polls == 4, "dset poll: a max stops",
        p.polls);
  /* a poll that never says stop: every slot's turn, the whole answer */
  ga_gstate c;
  ga_gstate_init(&c);
  for (int64_t i = 0; i < n / 2 && ok; i++) {
    ga_value x = {.type = GA_V_INT, .i = i};
    ok = ga_distinct_step(&c, GA_COLL_BINARY, &x, 0, NULL) == GA_OK;
  }
  poll_calls = p.polls = 0;
  poll_stop_after = INT64_MAX;
  rc = ok ? ga_gstate_merge(&c, &b) : GA_NOMEM;
  int64_t merge_polls = p.polls;
  int rc2 = ga_gstate_result(&c, GA_AGG_SUM, &v);
  check(rc == GA_OK && merge_polls == (1 << 20) / GA_DSET_POLL_EVERY &&
            rc2 == GA_OK && v.type == GA_V_INT && v.i == n * (n - 1) / 2 &&
            ga_gstate_count(&c) == n,
        "dset poll: no stop, the whole answer", merge_polls);
  /* no poll: nothing is counted */
  ga_dset_poll_swap(was);
  p.polls = 0;
  rc = ga_gstate_result(&c, GA_AGG_MAX, &v);
  check(rc == GA_OK && v.i == n - 1 && p.polls == 0, "dset poll: none set",
        p.polls);
  ga_gstate_clear(&a);
  ga_gstate_clear(&b);
  ga_gstate_clear(&c);
}

int main(void) {
  sqlite3 *db;
  sqlite3_open(":memory:", &db);
  test_collations(db);
  test_keys(db);
  test_tables();
  test_dset_poll();
  sqlite3_close(db);
  int passed = 0, failed = 0;
  for (int k = 0; k < NKINDS && kinds[k]; k++) {
    if (kind_fail[k])
      failed++;
    else
      passed++;
    if (getenv("VERBOSE"))
      printf("%s %s: %lld cases, %lld failed\n", kind_fail[k] ? "FAIL" : "PASS",
             kinds[k], kind_cases[k], kind_fail[k]);
  }
  printf("RESULT scan_group: %d passed, %d failed, 0 skipped\n", passed,
         failed);
  return failed ? 1 : 0;
}
