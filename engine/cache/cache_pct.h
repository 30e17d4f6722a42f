/*
** cache_pct.h — medians and percentiles on a host entry of the column
** cache (issue 39): each group's state keeps its values, as the parallel
** scan's does (engine/scan/scan_group.h rule 6).  cache_pct.c says why
** the answer is the scan's, bit for bit.
*/
#ifndef GA_CACHE_PCT_H
#define GA_CACHE_PCT_H

#include <stddef.h>
#include <stdint.h>

#include "scan_group.h"

/* One row's value (class cls: GA_IDR_*, word v) of a median's or
** percentile's value (ga_cquery.dist GA_DIST_PCT) into st: rows counts
** it, a number is kept as a double; *bytes grows by what the values'
** array grew.  GA_OK, GA_NOMEM, or GA_PCT_BAD (an infinity: SQLite
** raises "Inf input to F()", so the cache declines). */
int ga_cpct_step(ga_gstate *st, int cls, uint64_t v, int64_t *bytes);

/* A run's rc as the host query's: GA_PCT_BAD declines with why; any
** other rc is returned as it is. */
int ga_cpct_decline(int rc, char *why, size_t nwhy);

#endif
