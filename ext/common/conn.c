/*
** conn.c — one ga_conn per user connection (ext/common/glue.h).
**
** Rules:
**   1. Every registration that points at a connection's ga_conn holds a
**      reference to it (ga_conn_ref), released by its destructor: when the
**      connection closes, when a registration fails (SQLite calls the
**      destructor then too), or when a failed .load takes them back.  The
**      last release frees it, so nothing can point at a freed ga_conn.
**   2. A second .load into the same connection finds its ga_conn and
**      registers nothing again.
*/
#include <pthread.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache.h"
#include "chunk.h"
#include "glue.h"

typedef struct ga_conn_node {
  sqlite3 *db;
  ga_conn *conn;
  struct ga_conn_node *next;
} ga_conn_node;

static pthread_mutex_t conns_mu = PTHREAD_MUTEX_INITIALIZER;
static ga_conn_node *conns;

/* Rule 1. */
void ga_conn_ref(ga_conn *conn) {
  __atomic_add_fetch(&conn->refs, 1, __ATOMIC_RELAXED);
}

void ga_conn_unref(void *p) {
  ga_conn *conn = p;
  if (__atomic_sub_fetch(&conn->refs, 1, __ATOMIC_ACQ_REL) > 0)
    return;
  int last;
  pthread_mutex_lock(&conns_mu);
  for (ga_conn_node **pp = &conns; *pp; pp = &(*pp)->next)
    if ((*pp)->conn == conn) {
      ga_conn_node *n = *pp;
      *pp = n->next;
      sqlite3_free(n);
      break;
    }
  last = conns == NULL;
  pthread_mutex_unlock(&conns_mu);
  /* its own entries go, its shared ones stay (cache.h rule 5); the last
  ** connection's cache_keep keeps them for a later one (cache.c rule 7) */
  ga_cache_release(conn->cache, conn->db, conn->cfg.cache_keep);
  for (int i = 0; i < conn->ncache_pools; i++)
    ga_scan_pool_unref(conn->cache_pools[i]);
  sqlite3_free(conn->cache_pools);
  sqlite3_free(conn);
  if (last)
    ga_pool_trim(); /* no connection left to reuse cached chunks */
}

ga_conn *ga_conn_open(sqlite3 *db, int *again) {
  *again = 0;
  pthread_mutex_lock(&conns_mu);
  for (ga_conn_node *n = conns; n; n = n->next)
    if (n->db == db) {
      pthread_mutex_unlock(&conns_mu);
      *again = 1;
      return NULL;
    }
  pthread_mutex_unlock(&conns_mu);
  ga_conn *conn = sqlite3_malloc64(sizeof(*conn));
  ga_conn_node *node = sqlite3_malloc64(sizeof(*node));
  if (conn) {
    memset(conn, 0, sizeof(*conn));
    conn->cache = ga_cache_shared();
    conn->db = db;
  }
  if (!conn || !node || !conn->cache) {
    if (conn)
      /* (NULL-safe) owning nothing: what was kept stays kept */
      ga_cache_release(conn->cache, db, 1);
    sqlite3_free(conn);
    sqlite3_free(node);
    return NULL;
  }
  conn->refs = 1; /* the caller's */
  /* planner/cache_plan.c rule 7: a connection that loads gpuagg outside a
  ** transaction may read the shared entries loaded before */
  int64_t seq = ga_cache_seq_now();
  if (sqlite3_txn_state(db, "main") == SQLITE_TXN_NONE)
    ga_cache_note_idle(db, "main", seq);
  ga_config_default(&conn->cfg);
  node->db = db;
  node->conn = conn;
  pthread_mutex_lock(&conns_mu);
  node->next = conns;
  conns = node;
  pthread_mutex_unlock(&conns_mu);
  return conn;
}

/* ---- the scanning modules' data ---- */

void *ga_conn_data_new(ga_conn *conn, size_t size) {
  ga_conn **m = sqlite3_malloc64(size);
  if (!m)
    return NULL;
  memset(m, 0, size);
  *m = conn; /* the first member */
  ga_conn_ref(conn);
  return m;
}

void *ga_scan_module_new(ga_conn *conn) {
  return ga_conn_data_new(conn, sizeof(ga_scan_module));
}

void ga_scan_module_free(void *p) {
  ga_scan_module *m = p;
  for (int i = 0; i < m->npools; i++)
    ga_scan_pool_unref(m->pools[i]);
  sqlite3_free(m->pools);
  ga_conn_unref(m->conn);
  sqlite3_free(m);
}

int ga_reverse_off(sqlite3 *db) {
  sqlite3_stmt *st = NULL;
  int on = 0;
  if (sqlite3_prepare_v2(db, "PRAGMA reverse_unordered_selects", -1, &st,
                         NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    on = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  if (on)
    sqlite3_exec(db, "PRAGMA reverse_unordered_selects = 0", NULL, NULL, NULL);
  return on;
}

void ga_reverse_restore(sqlite3 *db, int on) {
  if (on)
    sqlite3_exec(db, "PRAGMA reverse_unordered_selects = 1", NULL, NULL, NULL);
}
