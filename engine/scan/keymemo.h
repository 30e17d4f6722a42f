/*
** keymemo.h — a worker's memo of group terms over one column (issue 37):
** each distinct value of the column is evaluated once per worker and call,
** and every later row with that value takes the term's value from the memo.
**
** SQL interface (worker connections only, ga_worker_prep):
**   gpuagg_keymemo_miss(K, X)  1 when X is not in the memo of the calling
**       thread's key K (SQLite then evaluates the term), 0 when it is (the
**       worker takes the term's value from the memo).  Not deterministic,
**       so SQLite neither factors it out of the row nor evaluates it apart
**       from the CASE that holds it; DIRECTONLY.  Outside a scan (no memo
**       entered on the thread), always 1.
**
** The workers' text of such a key (planner/args.c, ga_sql_piece) is
**   +(CASE WHEN gpuagg_keymemo_miss(K, <column>) THEN (<term>) END)
** and the row also holds <column> (a bare key or a carried column, at
** position raw[K] of the row: planner/query.c rule 11).
**
** Rules:
**   1. Exact.  The memo maps a value of the column, compared by type and
**      exact bytes or bits (INTEGER 1, REAL 1.0, TEXT '1' and BLOB x'31'
**      are four values; -0.0 is not 0.0), to the term's value as SQLite
**      computed it on the first row of this worker that held that value,
**      in the real row context (the column's affinity, the term's
**      collations, the call's parameters and pinned time: all the same for
**      every row of one call).  The planner takes only terms whose value is
**      a function of that one column's value (query.c rule 11), so the
**      memo's value is the value SQLite would compute on any later row.
**      Its type and bytes are kept as they came (ga_value), and grouping
**      compares them under the key's collation as before (scan_group.h
**      rule 1).
**   2. One row at a time.  The guard records, per key, what it found (hit:
**      the entry; miss) and the worker consumes that record when it reads
**      the row (ga_keymemo_take): a hit whose column is not NULL, a row
**      without a record, or a guard called twice before the row was read
**      fails the scan (the serial path), never a wrong key.
**   3. Bounded.  One memo per worker and call, GA_KEYMEMO_BYTES at most
**      for all its keys (entries, slots and bytes; smaller in tests:
**      GPUAGG_KEY_MEMO_BYTES), charged to the call's group_bytes.  A memo
**      that would pass it is full: it inserts no more, and its rows still
**      look up (hits stay hits) and evaluate the term on a miss, as without
**      a memo.
**   4. Per call.  A memo lives in one worker for one call (pinned 'now'
**      holds: every worker reads the call's one time), nothing is shared
**      between threads, and the thread's memo is entered and left as the
**      pinned time is (pintime.h), so a caller's thread gets back what it
**      had.
**   5. Memory: GA_KEYMEMO_ENTRY_BYTES an entry, plus 8 bytes of slot,
**      plus the bytes of TEXT and BLOB values and keys.
*/
#ifndef GA_KEYMEMO_H
#define GA_KEYMEMO_H

#include <stdint.h>

#include "value.h"

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_context sqlite3_context;
typedef struct sqlite3_value sqlite3_value;

/* A worker's memo for all its keys, at most (rule 3). */
#define GA_KEYMEMO_BYTES ((int64_t)2 << 20)
#define GA_KEYMEMO_MAX_KEYS 32 /* GA_MAX_KEYS */

typedef struct ga_kmemo_ent {
  uint64_t h;   /* the hash of raw (keymemo.c) */
  ga_value raw; /* the column's value */
  ga_value key; /* the term's */
} ga_kmemo_ent;
#define GA_KEYMEMO_ENTRY_BYTES ((int64_t)sizeof(ga_kmemo_ent))

typedef struct ga_kmemo_key {
  int on;  /* a memo key */
  int raw; /* the row position of its column */
  ga_kmemo_ent *ent;
  uint32_t *slot; /* 1 + entry index, 0 empty; cap a power of 2 */
  uint32_t n, cap, ent_cap;
  /* rule 2: the guard's record of the row: 0 none, 1 hit (at), 2 miss */
  int seen;
  uint32_t at;
  int64_t hits, misses;
} ga_kmemo_key;

typedef struct ga_kmemo_block ga_kmemo_block;

typedef struct ga_keymemo {
  int nk;    /* keys of the row (memo keys among them: on) */
  int terms; /* memo keys */
  ga_kmemo_key k[GA_KEYMEMO_MAX_KEYS];
  ga_kmemo_block *blocks; /* TEXT and BLOB bytes */
  int64_t bytes, max_bytes, charged;
  int full;   /* rule 3: inserts no more */
  int broken; /* rule 2: the guard was called twice for one row */
} ga_keymemo;

/* Return code of ga_keymemo_take: rule 2's failure (GA_OK, GA_NOMEM are
** engine/core/value.h's). */
#define GA_KEYMEMO_STEP 40

/* m for nk keys of which raw[k] >= 0 are memo keys (their column's row
** position), at most max_bytes.  Nothing is allocated until a row is. */
void ga_keymemo_init(ga_keymemo *m, int nk, const signed char *raw,
                     int64_t max_bytes);
void ga_keymemo_free(ga_keymemo *m);

/* The calling thread's memo (the guard's) is m from enter to leave; *old
** keeps what it was. */
void ga_keymemo_enter(ga_keymemo *m, ga_keymemo **old);
void ga_keymemo_leave(ga_keymemo *old);

/* A row's keys read (key: nk keys then the carried values, as the scan
** reads them): each memo key's value from the memo on a hit, and the row's
** value into the memo on a miss (unless full).  GA_OK, GA_NOMEM or
** GA_KEYMEMO_STEP (rule 2). */
int ga_keymemo_take(ga_keymemo *m, ga_value *key);

/* Bytes allocated since the last call (rule 3: the caller adds them to the
** groups' bytes). */
int64_t ga_keymemo_charge(ga_keymemo *m);

/* The SQL function (SQL interface above) and its registration. */
void ga_keymemo_guard(sqlite3_context *ctx, int argc, sqlite3_value **argv);
int ga_keymemo_register(sqlite3 *db);

#endif
