/*
** qpartial.h — a query partial: the merged groups of one gpu_query text
** over one table or a join within one file (rule 7), or over several
** files' (merged), as one BLOB that
** another process can merge and finish (ext/query/partial_fns.c: SQL
** gpu_query_partial, gpu_query_merge, and gpu_query's gpuagg_partial
** column; docs/gpu_query.md "Many files").  SQLite-free: bytes in, groups
** out, and back.
**
** Rules:
**   1. The format, little-endian, version 4 (1 was before issue 36's
**      checked schema parts, 2 before issue 37's DISTINCT sets, 3 before
**      issue 38's join tables: its reader refuses them, asking for them
**      anew):
**        "GAQP", u8 version, u8 encoding (SQLITE_UTF8, _UTF16LE, _UTF16BE),
**        u8 keys, u8 carried, u8 states, u8 collation of each key, u8 of
**        each state (rule 6: 0, or 1 + a DISTINCT argument's collation),
**        u64 signature, u32 parameters, str table, u32 columns and per
**        column str name, str declared type, str collation, u8 flags
**        (1: the rowid under its own name, INTEGER PRIMARY KEY; 2: a
**        column of a WITHOUT ROWID table's PRIMARY KEY), u32 indexes
**        and per index str name, str index text (qschema.h rule 3: from
**        its parts, never the file's own CREATE INDEX), u32 other tables
**        (rule 7: a join's dimensions; 0 for one table) and per table str
**        table, its columns and its indexes as the fact's are written,
**        u64 rows (the groups' rows, summed), u64 groups, then per group: its
*keys and carried values (u8 type:
**        0 NULL, 1 INTEGER (i64), 2 REAL (f64 bits), 3 TEXT, 4 BLOB (str)),
**        then each state as a str holding a fused state BLOB (README "The
**        state BLOB"), then each DISTINCT state's set (rule 6).  str is u32
**        bytes and the bytes.  TEXT is in the partial's encoding (a
**        DISTINCT value under NOCASE or RTRIM: UTF-8, as it is compared).
**   2. A partial carries no rowid tags: within it every group has one
**      representative and each state one max and one min.  Merging k
**      partials in the order given tags everything of the i-th with i
**      (scan_group.h rule 2), so where the contract leaves a choice, the
**      earlier partial wins, and within it what its own scan chose.
**   3. Decoding validates every length and type before it trusts one;
**      a state goes through ga_state_decode.  A bad BLOB is GA_BADSTATE
**      with a static reason, never a crash.  The header's rows must be at
**      most 2^63 - 1 and equal the sum of its groups' rows (the first
**      state's), summed without overflow.
**   4. A header's schema parts are text taken from a file: the writer
**      (partial_fns.c) writes declared types, collations and indexes in
**      qschema.h's forms only, and the reader checks them again, since a
**      forged BLOB bypasses the writer.  A declared type that is no plain
**      type name, or a collation other than BINARY, NOCASE and RTRIM, is
**      a damaged partial; an index whose text is not of ga_qs_index_text
**      over the header's table and columns is dropped (the reader keeps
**      its own rendering of the parts, not the BLOB's bytes).  A header
**      of more than GA_QPART_MAX_COLS columns (SQLite's hard limit, which
**      no writer passes), two columns of one name, or an index of more
**      columns than the header's is damaged; column names are found by a
**      sorted index (ga_qpart_name), so that no header costs more than
**      n log n in its names.
**   5. Decoding is bounded as it goes: each group's bytes are charged
**      against the caller's cap before the next one is read, and the
**      caller's stop (its interrupt) is polled every GA_QPART_POLL groups,
**      when encoding too, and every GA_QPART_POLL columns or indexes while
**      a header is read.
**   6. A DISTINCT aggregate's state (scan_group.h rule 5) carries its set:
**      u32 values, then per value its representative (as a key is
**      written) and what sum() made of it (u8 1 INTEGER or 2 REAL, u64 the
**      integer or the REAL's bits).  Decoding checks every value (not NULL;
**      a number's classification is itself; no NaN; no two equal under the
**      argument's collation) and that the state's own count, max and min
**      are empty; the values are tagged with the partial's piece like
**      everything else of it (rule 2), so the earlier partial's
**      representative wins.  A damaged set is a damaged partial; the sets'
**      bytes count against the cap (rule 5) as the groups' do.
**   7. A join's partial (issue 38) is the join within its file: the
**      header's table is the fact, and each other table of the join (its
**      dimensions, in the order the text names them) follows with its own
**      columns and indexes, each read and checked as the fact's are (rule
**      4: a plain type name, a collation of SQLite's own, an index over
**      that table's own columns), since a file declares them too.  At
**      most GA_QPART_MAX_TABLES tables (SQLite's limit on a join); two
**      tables of one name are a damaged partial.  A WITHOUT ROWID table
**      (a dimension may be one: a bare rowid then names the fact's) is
**      the one whose PRIMARY KEY columns have flag 2, in column order; one
**      that has a rowid column too is a damaged partial.
**   8. A variance's state (gstate.h rule 8, issue 39) is flagged by
**      GA_QPART_SQ in its header byte (never with DISTINCT) and carries
**      its Σx² after the sets: u32 lowest digit, u32 digits, then each
**      normalised 32-bit digit (xvar.h rule 2's weights) as u32, from the
**      lowest nonzero one to the highest.  Decoding checks the window's
**      bounds, the canonical ends, zero without values and n*Σx² >=
**      (Σx)² (ga_var_consistent); a merge adds the windows exactly, so
**      partials merge in any grouping to the one-pass state's bits.  A
**      reader before issue 39 refuses the flag as a damaged shape.
**   9. A median's or percentile's state (scan_group.h rule 6, issue 39) is
**      the state byte GA_QPART_PCT (0x40, alone) and carries every value
**      of its group in the sets' place: u64 n, then n binary64 values in
**      ascending order, -0.0 before 0.0 (engine/scan/qpartial_pct.c, whose
**      rules say what is checked: n is the fused state's count, every value
**      finite, the order strict to that rule).  A merge appends the values,
**      so partials merge in any grouping to the one-pass answer; their
**      bytes count against the cap (rule 5) before they are allocated:
**      past it the caller's group_bytes error, never an approximation.  A
**      reader before it refuses the byte as a damaged shape.
*/
#ifndef GA_QPARTIAL_H
#define GA_QPARTIAL_H

#include <stddef.h>
#include <stdint.h>

#include "scan_group.h"

#define GA_QPART_VERSION 4
#define GA_QPART_SQ 0x80        /* rule 8: a state byte's flag */
#define GA_QPART_TOOBIG 30      /* ga_qpart_encode: past max_bytes */
#define GA_QPART_CAP 31         /* ga_qpart_add_groups: groups past the cap */
#define GA_QPART_STOP 32        /* the caller's stop said so (rule 5) */
#define GA_QPART_POLL 64        /* groups between two polls of the stop */
#define GA_QPART_MAX_COLS 32767 /* SQLite's SQLITE_MAX_COLUMN, at most */
#define GA_QPART_MAX_TABLES 64  /* rule 7: SQLite joins 64 tables at most */

/* Rule 5: what reading or writing groups and headers may spend.  stop
** (NULL: none) returns nonzero to end the work (ext/common/intr.c's
** ga_intr_check). */
typedef struct ga_qpart_limit {
  int64_t cap; /* ga_qpart_add_groups: *bytes past it is GA_QPART_CAP */
  int (*stop)(void *);
  void *stop_arg;
} ga_qpart_limit;

/* A column of the table, as the partial's file declares it (its CREATE
** TABLE is rebuilt from these where the partial is finished). */
typedef struct ga_qpart_col {
  char *name, *type, *coll; /* type "" when none; coll "BINARY" ... */
  int rowid;                /* the rowid under this name */
  int wpk; /* rule 7: a column of a WITHOUT ROWID table's PRIMARY KEY */
} ga_qpart_col;

/* An index of the table (a text's INDEXED BY must find it where the
** partial is finished): sql is qschema.h's text of its parts (rule 4). */
typedef struct ga_qpart_idx {
  char *name, *sql;
} ga_qpart_idx;

/* A name and its position: a head's columns sorted by name (rule 4). */
typedef struct ga_qpart_name {
  const char *name; /* not owned */
  int at;
} ga_qpart_name;

typedef struct ga_qpart_head ga_qpart_head;
struct ga_qpart_head {
  int enc;         /* SQLITE_UTF8 (1), SQLITE_UTF16LE (2), SQLITE_UTF16BE */
  ga_gshape shape; /* nk, nc, ns, coll[] */
  uint64_t sig;    /* the query and parameter values it was computed for */
  int nparams;
  char *table;
  int ncols;
  ga_qpart_col *cols;
  ga_qpart_name *byname; /* cols by name (ga_qpart_sort_cols) */
  int nidx;
  ga_qpart_idx *idx;
  /* rule 7: a join's other tables, each a head of which only table, ncols,
  ** cols, byname, nidx and idx are used */
  int ndims;
  ga_qpart_head *dims;
  int64_t rows; /* the rows of its groups: read, or counted by encode */
  int64_t ngroups;
  int64_t groups_at; /* read: the offset of the first group */
};

/* h's strings and tables, which ga_qpart_read_head allocates
** (sqlite3_malloc). */
void ga_qpart_head_free(ga_qpart_head *h);

/* g[0..n) under h as a BLOB (sqlite3_malloc64'd), h->rows set to the rows
** of those groups, as written.  GA_OK, GA_NOMEM, GA_QPART_TOOBIG when it
** would exceed max_bytes, or GA_QPART_STOP (lim: its stop only; NULL:
** none). */
int ga_qpart_encode(ga_qpart_head *h, ga_group *const *g, size_t n,
                    int64_t max_bytes, const ga_qpart_limit *lim,
                    unsigned char **out, int64_t *nout);

/* Read and check the header (rules 3 to 5; lim: its stop only, NULL:
** none): GA_OK, GA_NOMEM, GA_QPART_STOP, or GA_BADSTATE with *err set.
** h->byname is built. */
int ga_qpart_read_head(const void *blob, int64_t n, ga_qpart_head *h,
                       const ga_qpart_limit *lim, const char **err);

/* Rule 4: v[0..n) sorted by name as SQLite compares column and index
** names (sqlite3_stricmp); 1 when two share a name, else 0. */
int ga_qpart_sort_names(ga_qpart_name *v, int n);

/* Rule 4: the position of name in v[0..n) (sorted), or -1. */
int ga_qpart_find_name(const ga_qpart_name *v, int n, const char *name);

/* Rule 7: the table of h (h itself, or one of its dims) named name, or
** NULL. */
const ga_qpart_head *ga_qpart_table(const ga_qpart_head *h, const char *name);

/* Rule 4: h->byname (re)built over h->cols: GA_OK, GA_NOMEM, or
** GA_BADSTATE when two columns share a name. */
int ga_qpart_sort_cols(ga_qpart_head *h);

/* Every group of the partial (whose header h was read from it) into s,
** tagged `piece` (rule 2); *bytes grows by what s's memory grew, *rows by
** the groups' rows (both carried over the partials of one merge).  GA_OK,
** GA_NOMEM, GA_QPART_CAP (*bytes past lim->cap), GA_QPART_STOP, or
** GA_BADSTATE with *err set (s then holds some of them); rules 3 and 5. */
int ga_qpart_add_groups(const void *blob, int64_t n, const ga_qpart_head *h,
                        ga_group_shards *s, int64_t piece,
                        const ga_qpart_limit *lim, int64_t *bytes,
                        int64_t *rows, const char **err);

#endif
