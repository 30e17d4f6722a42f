/*
** scan_group.h — the groups of the parallel scan (gpu_aggregate,
** gpu_query): tuples of group keys compared as SQLite's GROUP BY compares
** them, and tables of exact states, several per group, merged in rowid
** order (engine/scan/scan.c).
**
** Rules:
**   1. Two key tuples are one group exactly when SQLite's GROUP BY would
**      put them in one: key by key, NULLs together; INTEGER and REAL by
**      exact value (1 = 1.0, 0 = -0.0); TEXT by that key's collation, one
**      of SQLite's built-ins BINARY, NOCASE, RTRIM, reimplemented here byte
**      for byte (the caller checks that the connection does not override
**      them); BLOB by memcmp.
**      TEXT is held in the bytes SQLite compares: BINARY compares the
**      database's encoding (memcmp of UTF-16 in a UTF-16 database: two
**      malformed surrogate sequences that convert to the same UTF-8 are two
**      groups), NOCASE and RTRIM UTF-8 (SQLite registers them for UTF-8
**      only; the caller keeps a UTF-16 database's NOCASE and RTRIM keys on
**      the serial path, since the converted bytes are no representative).
**   2. Where the contract leaves a choice, the row first in rowid order
**      wins: the group's representative keys (all of one row), and among
**      equal max/min values of each state (5 vs 5.0) the first.  The keys
**      and each state's max and min carry the number of the rowid piece
**      they came from ("tags"); pieces are numbered in rowid
**      order, so merging by tags gives the rowid-order answer whatever order
**      the workers' tables are merged in.
**   3. Pieces arrive in any order (workers interleave): every merge compares
**      tags, so the answer does not depend on the order.
**   4. Memory is counted (ga_group_table.bytes) so the scan can cap it.
**   5. A DISTINCT aggregate's state (shape.dist) holds its values
**      (engine/state/dset.h): compared as rule 1 compares keys, under the
**      argument's collation, each with the piece it came from, so that the
**      representative of equal values is the first in rowid order (rule 2)
**      whatever order pieces and tables merge in (rule 3).  Its bytes are
**      the state's heap bytes (rule 4).
**   6. A median's or percentile's state (shape.dist GA_DIST_PCT, gpu_query,
**      issue 39) keeps every number of its value (engine/state/dset.h rule
**      6): counted, merged by appending in any order (the answer selects
**      over all of them), its bytes the state's heap bytes (rule 4).  A
**      value SQLite's percentile refuses (TEXT, BLOB, an infinity) stops
**      the scan (GA_PCT_BAD): the serial path gives SQLite's own error.
*/
#ifndef GA_SCAN_GROUP_H
#define GA_SCAN_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "agg.h"
#include "bestval.h"
#include "gstate.h"

/* SQLite's built-in collations. */
#define GA_COLL_BINARY 0
#define GA_COLL_NOCASE 1
#define GA_COLL_RTRIM 2

/* Text comparison exactly as SQLite's built-in collation `coll`. */
int ga_coll_cmp(int coll, const void *a, int na, const void *b, int nb);
/* GROUP BY's comparison of two keys (rule 1), a total order: NULL < numbers
** < TEXT (collation) < BLOB. */
int ga_key_cmp(const ga_value *a, const ga_value *b, int coll);
/* A hash that agrees with ga_key_cmp == 0. */
uint64_t ga_key_hash(const ga_value *k, int coll);

/* The shape of a scan's groups: nk keys (1 for an ungrouped scan: one
** NULL key), each compared under its collation, and ns exact states (one
** per distinct aggregate argument: gpu_query's measures; gpu_aggregate has
** one of each). */
#define GA_MAX_KEYS 32 /* compared and carried */
#define GA_MAX_STATES 64
typedef struct ga_gshape {
  int nk, ns;
  /* carried values after the keys: the group's first row's (rule 2),
  ** neither compared nor hashed (gpu_query: the columns that group terms
  ** such as substr(d, 1, 4) read, which its post-aggregate query reads) */
  int nc;
  int coll[GA_MAX_KEYS]; /* GA_COLL_* of each key */
  /* per state: 0, or 1 + the GA_COLL_* of a DISTINCT aggregate's argument,
  ** whose state keeps a set of values (gstate.h rule 5, rule 5 here), or
  ** GA_DIST_PCT (rule 6) */
  unsigned char dist[GA_MAX_STATES];
  /* per state: 1 when a variance reads it: its steps also add the value's
  ** square (gstate.h rule 8; issue 39) */
  unsigned char sq[GA_MAX_STATES];
} ga_gshape;

/* Rule 6: the state keeps every value (a median's or percentile's). */
#define GA_DIST_PCT 0x80
/* Rule 6's step of one row's value: the row counted, a number kept as its
** double; GA_PCT_BAD (pct.h) for TEXT, BLOB or an infinity, which SQLite
** reports as an error the serial path gives.  GA_OK or GA_NOMEM too. */
int ga_pct_gstep(ga_gstate *s, const ga_value *v);

/* Rule 5: raw (any value; NULL adds nothing) into the set of a DISTINCT
** aggregate, tagged `piece`.  *slot (may be NULL): the entry when raw became
** a representative, else NULL; a number's sum classification is itself,
** set here; a TEXT or BLOB's is the caller's to set (ga_dset_set_num).
** ga_distinct_step also counts the row.  GA_OK or GA_NOMEM. */
int ga_distinct_add(ga_dset **set, int coll, const ga_value *raw, int64_t piece,
                    ga_dent **slot);
int ga_distinct_step(ga_gstate *s, int coll, const ga_value *raw, int64_t piece,
                     ga_dent **slot);

/* One key and one state under collation coll (gpu_aggregate, the cache). */
ga_gshape ga_gshape_one(int coll);

/* GROUP BY's comparison of two key tuples: key by key, rule 1. */
int ga_keys_cmp(const ga_value *a, const ga_value *b, const ga_gshape *s);
/* A hash that agrees with ga_keys_cmp == 0 (ga_key_hash when nk = 1). */
uint64_t ga_keys_hash(const ga_value *k, const ga_gshape *s);

/* One group: its representative keys and its states, with rule 2's tags.
** One allocation holds the group and its arrays (ga_group_new). */
typedef struct ga_group {
  uint64_t hash;
  int64_t key_piece;
  struct ga_group *next_spare; /* in a table's spare list */
  int in_arena;  /* part of a ga_garena's block: not freed alone */
  ga_bval *key;  /* shape.nk keys, then shape.nc carried */
  ga_gstate *st; /* shape.ns states (compact: gstate.h) */
  int64_t *tag;  /* 2 per state: the pieces of its max, min */
} ga_group;

/* Memory of a group of shape s, before its TEXT and BLOB bytes (the
** README's bytes per group: the cap group_bytes counts these
** plus the bytes of keys and max/min values, and 32 bytes of slot). */
#define GA_GROUP_FIXED_BYTES(s)                                                \
  ((int64_t)sizeof(ga_group) +                                                 \
   (int64_t)((s)->nk + (s)->nc) * (int64_t)sizeof(ga_bval) +                   \
   (int64_t)(s)->ns * (int64_t)(sizeof(ga_gstate) + 2 * sizeof(int64_t)))

/* An empty group of shape s (keys NULL, states empty), NULL when out of
** memory; ga_group_free frees it with what it holds. */
ga_group *ga_group_new(const ga_gshape *s);
void ga_group_free(ga_group *g, const ga_gshape *s);

/* Blocks of groups for the worker tables of one scan, freed with its shards
** (ga_gs_free): a worker table that runs out of spare groups takes them
** from its own block, and a new block (GA_ARENA_GROUPS groups, one
** allocation) under the arena's mutex.  A group that moves into the shared
** groups leaves its worker for good, so with many groups every row of
** hash mode would otherwise allocate one, through SQLite's allocator and
** its global mutex. */
#define GA_ARENA_GROUPS 256
#define GA_ARENA_MAX_GROUPS 16384
#define GA_ARENA_MAX_BYTES ((size_t)16 << 20)
typedef struct ga_garena ga_garena;

/* A hash table of groups (one thread at a time). */
typedef struct ga_group_table {
  ga_group **slot; /* open addressing, linear probing; cap a power of 2 */
  uint64_t *hash;  /* hash[j]: the hash of slot[j]'s group (same block) */
  size_t cap, n;
  ga_gshape shape;
  int rot;             /* slots use the hash rotated right by rot bits */
  ga_group *spare;     /* groups kept for reuse (a worker's table) */
  int64_t bytes;       /* held by this table, about */
  ga_garena *arena;    /* where new groups come from; NULL: each its own */
  char *block;         /* the arena block being used, and what is left */
  size_t block_left;   /* of it, in groups */
  size_t block_groups; /* the next block's groups (0: GA_ARENA_GROUPS) */
} ga_group_table;

void ga_gt_init(ga_group_table *t, const ga_gshape *s);
void ga_gt_free(ga_group_table *t);
/* Merge sts (shape.ns states of rowid piece `piece` for keys, whose hash is
** h; taken over: they are left empty) into the table, pieces in any order
** (rule 2).  GA_OK, GA_NOMEM or GA_BADSTATE. */
int ga_gt_add(ga_group_table *t, const ga_value *keys, uint64_t h,
              ga_xstate *sts, int64_t piece);
/* The same with the DISTINCT states' sets (NULL entries: none), taken over
** (rule 5: a partial's groups). */
int ga_gt_add_sets(ga_group_table *t, const ga_value *keys, uint64_t h,
                   ga_xstate *sts, ga_dset **sets, int64_t piece);
/* The same with the variance states' Σx² too (NULL entries: none), taken
** over (gstate.h rule 8: a partial's groups). */
int ga_gt_add_sq(ga_group_table *t, const ga_value *keys, uint64_t h,
                 ga_xstate *sts, ga_dset **sets, ga_gsq **sqs, int64_t piece);

/* The group of keys (hash h) in t, made empty when new, with tags = piece;
** NULL when out of memory.  For a table that one thread fills with the
** rows of one piece, in rowid order. */
ga_group *ga_gt_get(ga_group_table *t, const ga_value *keys, uint64_t h,
                    int64_t piece);
/* The same group made new (from t's spares or arena) but placed in no
** table: for a caller that knows its keys are in no other group (the host
** cache's groups built one id at a time, engine/cache/cache_host.c rule
** 18), and hands it to ga_gs_adopt.  NULL when out of memory. */
ga_group *ga_gt_make(ga_group_table *t, const ga_value *keys, uint64_t h,
                     int64_t piece);

/* The groups of one scan, shared by its workers: shards by hash, one mutex
** each, so workers merge into one set of groups (memory grows with the
** groups, not groups x threads; in hash mode each worker's own table adds
** at most a bounded number, engine/scan/scan.c) and rarely wait for each other.
*/
#define GA_GS_SHARDS 64
typedef struct ga_group_shards ga_group_shards;

ga_group_shards *ga_gs_new(const ga_gshape *s); /* NULL: out of memory */
void ga_gs_free(ga_group_shards *s);
/* ga_gt_add into the keys' shard, thread-safe.  *bytes grows by what the
** shard's memory grew. */
int ga_gs_add(ga_group_shards *s, const ga_value *keys, ga_xstate *sts,
              int64_t piece, int64_t *bytes);
/* ga_gt_add_sets into the keys' shard, thread-safe. */
int ga_gs_add_sets(ga_group_shards *s, const ga_value *keys, ga_xstate *sts,
                   ga_dset **sets, int64_t piece, int64_t *bytes);
/* ga_gt_add_sq into the keys' shard, thread-safe. */
int ga_gs_add_sq(ga_group_shards *s, const ga_value *keys, ga_xstate *sts,
                 ga_dset **sets, ga_gsq **sqs, int64_t piece, int64_t *bytes);
/* Direct mode (engine/scan/scan.c): the group of keys (hash h) in s, made
** when new (keys copied, tags = piece) and given keys when piece comes
** before its own (rule 2), returned with its shard locked until
** ga_gs_release; NULL when out of memory (unlocked).  The caller steps
** the row's values into it with their piece's tags. */
typedef struct ga_gs_hold {
  int k;
  int64_t before; /* the shard's bytes when locked */
} ga_gs_hold;
ga_group *ga_gs_hold_group(ga_group_shards *s, const ga_value *keys, uint64_t h,
                           int64_t piece, ga_gs_hold *hold);
/* Unlock; *bytes grows by what the shard's memory grew, `extra` included
** (TEXT or BLOB that the caller's steps kept). */
void ga_gs_release(ga_group_shards *s, ga_gs_hold *hold, int64_t extra,
                   int64_t *bytes);

/* Direct mode in batches: a worker's rows of one piece, numbers and NULLs
** in every state (other rows take ga_gs_hold_group), kept until the batch
** is full or the piece ends, then stepped shard by shard.  One lock a
** shard a batch instead of one a row, and with a shard's rows known ahead,
** their slots and groups are prefetched a few rows before they are
** stepped: each row otherwise waits for four or five cache misses in a
** row (a slot, the group's keys, its states), one after the other.  Rows
** of a shard are stepped in the batch's order, which is rowid order, so
** rule 2 holds as in ga_gs_hold_group. */
typedef struct ga_gs_batch {
  int n, cap;    /* rows held, and room */
  int nkc, ns;   /* a row's keys and carried values; its state values */
  uint64_t *h;   /* the rows' hashes */
  ga_value *key; /* nkc a row; TEXT and BLOB bytes in text */
  ga_value *val; /* ns a row: GA_V_NULL, INT or REAL */
  int *order;    /* the rows by shard (ga_gs_step_batch's) */
  char *text;    /* the keys' bytes, copied: SQLite's are gone after a step */
  size_t text_n, text_cap;
} ga_gs_batch;

/* Room for cap rows of shape s (cap >= 1).  GA_OK or GA_NOMEM. */
int ga_gs_batch_init(ga_gs_batch *b, const ga_gshape *s, int cap);
void ga_gs_batch_free(ga_gs_batch *b);
/* Room for a row whose keys hold `text` bytes of TEXT and BLOB: 1, or 0
** when the batch must be stepped first (full; or too little text room,
** and no room ever when text exceeds an empty batch's). */
int ga_gs_batch_room(const ga_gs_batch *b, size_t text);
/* The batch's next row: its keys copied (the caller checked room), its
** values (val, ns of them) and hash. */
void ga_gs_batch_add(ga_gs_batch *b, const ga_value *keys, const ga_value *val,
                     uint64_t h);
/* Forget b's rows (a failed scan's). */
static inline void ga_gs_batch_drop(ga_gs_batch *b) {
  b->n = 0;
  b->text_n = 0;
}
/* Step b's rows (all of rowid piece `piece`) into s and empty b, whatever
** the outcome.  Shards are visited from `first` on (workers start apart),
** skipping busy ones until the end.  *bytes grows by what s's memory grew,
** *wait_ns by the time spent waiting for busy shards.  GA_OK or GA_NOMEM. */
int ga_gs_step_batch(ga_group_shards *s, ga_gs_batch *b, int64_t piece,
                     int first, int64_t *bytes, int64_t *wait_ns);

/* Move every group of t (one piece's: all tagged `piece`) into s and
** leave t empty, its slots kept for the next piece.  *bytes grows by what
** s's memory grew.  GA_OK, GA_NOMEM or GA_BADSTATE (t is emptied all the
** same). */
int ga_gs_take(ga_group_shards *s, ga_group_table *t, int64_t piece,
               int64_t *bytes);
/* Every group, in ga_keys_cmp order, once no thread adds any more; *out is
** sqlite3_malloc'd, the groups stay owned by s.  GA_OK or GA_NOMEM. */
int ga_gs_sorted(ga_group_shards *s, ga_group ***out, size_t *n);
/* The same in no particular order (no sort: millions of groups take
** seconds on one thread). */
int ga_gs_list(ga_group_shards *s, ga_group ***out, size_t *n);
/* The shape s was made with. */
const ga_gshape *ga_gs_shape(const ga_group_shards *s);
/* The arena of s's scan, for its worker tables (t->arena). */
ga_garena *ga_gs_arena(ga_group_shards *s);
/* Groups of ga_gt_make (linked by next_spare, head to tail) that s frees
** with its own (ga_gs_free); in none of its tables: ga_gs_list and
** ga_gs_sorted do not see them (the caller lists them itself).  plain: the
** caller knows that every one of them is of s's arena and holds nothing
** else (no TEXT or BLOB key or max/min out of line, no wide sum, set or
** squares): they go with the arena's blocks, and ga_gs_free does not
** walk them (issue 37: d4 of bench/query_bench.py cleared 200,000 groups,
** 70 MB, to free nothing). */
void ga_gs_adopt(ga_group_shards *s, ga_group *head, ga_group *tail, int plain);

#endif
