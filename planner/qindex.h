/*
** qindex.h — rule 14 of planner/path.c: a filter that an index (or the
** rowid) answers, decided by a bounded count through it (planner/qindex.c).
*/
#ifndef GA_QINDEX_H
#define GA_QINDEX_H

#include "planner.h"

#define GA_QINDEX_NONE 0   /* no index range: the whole table's rowids */
#define GA_QINDEX_SERIAL 1 /* few rows, scattered: SQLite's own plan */
#define GA_QINDEX_BAND 2   /* the workers read the range's rowid band */

/* A row read through an index whose rowids are scattered costs about this
** many rows of a scan (bench/RESULTS.md, "Indexed ranges": 1.5 us against
** 0.045 us a row on 2 cores, then a margin for the parallel path's start;
** on more cores the scan's share, S, shrinks with the threads). */
#define GA_QINDEX_LOOKUP_COST 16
/* A band of fewer than scan_min_rows / this rowids is read serially, with
** SQLite's own plan: its rows through the index cost less than starting
** the workers (bench/RESULTS.md, "Indexed ranges": at 2e7 rows in date
** order, one week, 77,000 rows, took 0.9x SQLite's time serially and
** 1.37x faster as a band on 2 threads; at 2e6 rows, 7,700 rows, the band
** was the slower). */
#define GA_QINDEX_BAND_MIN_DIV 8
/* The band is found by a skip over the range's distinct keys, at most this
** many (three index seeks each); more keys: no band. */
#define GA_QINDEX_MAX_KEYS 2048

typedef struct ga_qindex {
  int choice; /* GA_QINDEX_* */
  /* the band's statement, worker 0 runs it in the workers' snapshot (its
  ** parameters as the pieces'): one row (exact, lo, hi); exact 0: no band,
  ** lo NULL: no row in the range (engine/scan/scan.h sql_range).  NULL
  ** when choice is not GA_QINDEX_BAND. */
  char *sql_range;
  int64_t rows;   /* rows counted in the range; -1: more than counted */
  int64_t lo, hi; /* the band seen on the caller's connection */
  char why[200];  /* the decision, for last_scan.why */
} ga_qindex;

/* Decide for p's filter over t (est rows at most, threads workers,
** min_rows: scan_min_rows, below which a range is read serially).
** serial_ok: the serial path can run SQLite's own plan (gpu_query); else
** a GA_QINDEX_SERIAL range is read as a band when one is known.
** SQLITE_OK (q filled; choice NONE on anything unexpected) or
** SQLITE_NOMEM. */
int ga_qindex_plan(sqlite3 *db, const ga_target *t, const ga_parts *p,
                   int threads, int64_t est, int64_t min_rows, int serial_ok,
                   ga_qindex *q);
void ga_qindex_free(ga_qindex *q);

#endif
