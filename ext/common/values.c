/*
** values.c — SQLite values to and from the engine's, and the database's
** text encoding (ext/common/glue.h).
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "glue.h"

/* max()'s view of a TEXT or BLOB value: its bytes in encoding enc (the
** database's: BINARY compares them with memcmp).  0 when SQLite could not
** give them (a conversion ran out of memory): that must be an error, never
** an empty string in their place.  An empty BLOB may come back NULL. */
int ga_value_bytes(sqlite3_value *v, int type, int enc, ga_value *out) {
  out->type = type == SQLITE_TEXT ? GA_V_TEXT : GA_V_BLOB;
  if (type == SQLITE_BLOB) {
    out->p = sqlite3_value_blob(v);
    out->n = sqlite3_value_bytes(v);
  } else if (enc == SQLITE_UTF16LE) {
    out->p = sqlite3_value_text16le(v);
    out->n = sqlite3_value_bytes16(v);
  } else if (enc == SQLITE_UTF16BE) {
    out->p = sqlite3_value_text16be(v);
    out->n = sqlite3_value_bytes16(v);
  } else {
    out->p = sqlite3_value_text(v);
    out->n = sqlite3_value_bytes(v);
  }
  if (!out->p && type == SQLITE_BLOB && out->n == 0)
    out->p = ""; /* the empty blob */
  return out->p != NULL;
}

/* The main database's text encoding (a connection's conn->enc, or a
** worker's own).  Rules:
**   1. Read with PRAGMA encoding; 0 when it cannot be read (out of memory,
**      a busy schema): the error is then set on ctx and NOT remembered,
**      since a cached guess would compare UTF-16 text as UTF-8 for the
**      connection's whole life.
**   2. Kept in *cache only once it can no longer change: PRAGMA encoding =
**      changes it while the main database has no schema object (SQLite
**      fixes it at the first CREATE, main or temp; page_count is no sign:
**      PRAGMA user_version = 1 writes page 1 and leaves it open).  Until
**      then it is read again on every call (attached databases must match
**      main, so main's is every schema's). */
int ga_db_encoding_of(sqlite3 *db, int *enc) {
  sqlite3_stmt *st = NULL;
  *enc = 0;
  int rc = sqlite3_prepare_v2(db, "PRAGMA encoding", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    const char *e =
        rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    if (e)
      *enc = !strcmp(e, "UTF-16le")   ? SQLITE_UTF16LE
             : !strcmp(e, "UTF-16be") ? SQLITE_UTF16BE
                                      : SQLITE_UTF8;
    else if (rc == SQLITE_ROW || rc == SQLITE_DONE)
      rc = SQLITE_NOMEM; /* the row's text could not be made */
  }
  sqlite3_finalize(st);
  return *enc ? SQLITE_OK : rc;
}

/* Rule 2: has a schema object fixed the encoding?  Asked before the
** encoding is read, so that a schema another connection just created is
** loaded first.  0 also when it cannot tell (not cached then). */
static int enc_fixed(sqlite3 *db) {
  sqlite3_stmt *st = NULL;
  int fixed = 0;
  if (sqlite3_prepare_v2(db,
                         "SELECT EXISTS (SELECT 1 FROM main.sqlite_schema) OR "
                         "EXISTS (SELECT 1 FROM temp.sqlite_schema)",
                         -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    fixed = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return fixed;
}

int ga_db_encoding(sqlite3_context *ctx, int *cache) {
  if (*cache)
    return *cache;
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  int enc, fixed = enc_fixed(db);
  int rc = ga_db_encoding_of(db, &enc);
  if (enc && fixed)
    *cache = enc;
  else if (!enc && (rc & 0xff) == SQLITE_NOMEM)
    sqlite3_result_error_nomem(ctx);
  else if (!enc)
    sqlite3_result_error_code(ctx, rc);
  return enc;
}

void ga_result_value(sqlite3_context *ctx, const ga_value *v, int enc) {
  switch (v->type) {
  case GA_V_INT:
    sqlite3_result_int64(ctx, v->i);
    break;
  case GA_V_REAL:
    sqlite3_result_double(ctx, v->r);
    break;
  case GA_V_TEXT:
    if (enc == SQLITE_UTF16LE)
      sqlite3_result_text16le(ctx, v->p, v->n, SQLITE_TRANSIENT);
    else if (enc == SQLITE_UTF16BE)
      sqlite3_result_text16be(ctx, v->p, v->n, SQLITE_TRANSIENT);
    else
      sqlite3_result_text(ctx, v->p, v->n, SQLITE_TRANSIENT);
    break;
  case GA_V_BLOB:
    sqlite3_result_blob(ctx, v->p, v->n, SQLITE_TRANSIENT);
    break;
  default:
    sqlite3_result_null(ctx);
  }
}

/* A state as the result.  The common small state goes through a stack
** buffer and SQLITE_TRANSIENT: SQLite copies it into the connection's
** memory (its lookaside, where the build has one), and our own
** sqlite3_malloc and sqlite3_free, each taking SQLite's global memory
** mutex, are saved.  Workers in sorted mode return one state per group and
** piece, and their threads queued on that mutex (bench/RESULTS.md §8). */
void ga_result_state(sqlite3_context *ctx, const ga_xstate *s, int kind) {
  unsigned char small[256], *b;
  int64_t n = ga_state_encode_buf(s, kind, small, (int64_t)sizeof(small));
  if (n <= (int64_t)sizeof(small)) {
    sqlite3_result_blob64(ctx, small, (sqlite3_uint64)n, SQLITE_TRANSIENT);
    return;
  }
  if (ga_state_encode(s, kind, &b, &n) != GA_OK) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_blob64(ctx, b, (sqlite3_uint64)n, sqlite3_free);
}

char *ga_unquote(const char *z) {
  size_t n = strlen(z);
  if (n < 2 || z[0] != '\'' || z[n - 1] != '\'')
    return NULL;
  char *o = sqlite3_malloc64(n);
  if (!o)
    return NULL;
  size_t k = 0;
  /* exactly one literal: inside it a quote comes only doubled ('' is one
  ** quote); a lone one ends the literal, so 'a 'b' c' is three tokens
  ** that SQLite's module-argument parser joins into one argument */
  for (size_t j = 1; j + 1 < n; j++) {
    o[k++] = z[j];
    if (z[j] == '\'') {
      if (j + 2 >= n || z[j + 1] != '\'') {
        sqlite3_free(o);
        return NULL;
      }
      j++;
    }
  }
  o[k] = 0;
  return o;
}

int ga_column_decl(sqlite3 *db, const char *schema, const char *table,
                   const char *col, const char **type, const char **coll) {
  return ga_column_meta(db, schema, table, col, type, coll, NULL);
}

int ga_column_meta(sqlite3 *db, const char *schema, const char *table,
                   const char *col, const char **type, const char **coll,
                   int *pk) {
  typedef int (*meta_fn)(sqlite3 *, const char *, const char *, const char *,
                         char const **, char const **, int *, int *, int *);
  meta_fn meta = NULL;
#ifdef SQLITE_CORE
  meta = sqlite3_table_column_metadata;
#else
  meta = sqlite3_api->table_column_metadata;
#endif
  *type = *coll = NULL;
  if (pk)
    *pk = 0;
  if (!meta)
    return SQLITE_ERROR;
  return meta(db, schema, table, col, type, coll, NULL, pk, NULL);
}
