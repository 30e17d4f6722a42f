/*
** collect.c — gpuagg_collect(P, c1, ...), gpu_cache's per-row collector:
** an aggregate that hands each row's values to the load's sink, which only
** a pointer bound with sqlite3_bind_pointer (type GA_CLOAD_SINK) gives; any
** other call is an error.  The load's workers (and its serial path, on the
** caller's connection) run it inside their own SQL.
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache.h"
#include "workers.h"

void ga_collect_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  ga_csink *s = sqlite3_value_pointer(argv[0], GA_CLOAD_SINK);
  int types[GA_CACHE_MAX_COLS], tlen[GA_CACHE_MAX_COLS];
  int64_t words[GA_CACHE_MAX_COLS];
  const void *text[GA_CACHE_MAX_COLS];
  int n = argc - 1;
  if (!s || n < 1 || n > GA_CACHE_MAX_COLS) {
    sqlite3_result_error(ctx, "gpuagg_collect: internal to gpu_cache", -1);
    return;
  }
  for (int c = 0; c < n; c++) {
    sqlite3_value *v = argv[c + 1];
    switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
      types[c] = GA_V_INT;
      words[c] = sqlite3_value_int64(v);
      break;
    case SQLITE_FLOAT: {
      double d = sqlite3_value_double(v);
      types[c] = GA_V_REAL;
      memcpy(&words[c], &d, 8);
      break;
    }
    case SQLITE_NULL:
      types[c] = GA_V_NULL;
      words[c] = 0;
      break;
    case SQLITE_TEXT: {
      /* the bytes SQLite holds, in the database's encoding: BINARY order
      ** is memcmp of those (engine/cache/dict.h); no terminator added */
      int enc = ga_csink_enc(s);
      types[c] = GA_V_TEXT;
      if (enc == SQLITE_UTF16LE || enc == SQLITE_UTF16BE) {
        text[c] = enc == SQLITE_UTF16LE ? sqlite3_value_text16le(v)
                                        : sqlite3_value_text16be(v);
        tlen[c] = sqlite3_value_bytes16(v);
      } else {
        tlen[c] = sqlite3_value_bytes(v);
        text[c] = tlen[c] ? sqlite3_value_blob(v) : "";
      }
      if (!text[c]) {
        sqlite3_result_error_nomem(ctx);
        return;
      }
      break;
    }
    default:
      types[c] = GA_V_BLOB;
    }
  }
  if (ga_csink_row(s, types, words, text, tlen, n))
    sqlite3_result_error(ctx, "gpuagg_collect: the load stopped", -1);
}

void ga_collect_final(sqlite3_context *ctx) { sqlite3_result_null(ctx); }
