/*
** qpartial_pct.h — a median's or percentile's values in a query partial
** (qpartial.h rule 9, issue 39): the bytes of one group's values, written
** and read.  The rules are at the top of engine/scan/qpartial_pct.c.
*/
#ifndef GA_QPARTIAL_PCT_H
#define GA_QPARTIAL_PCT_H

#include <stdint.h>

#include "dset.h"

/* The state byte's flag of a median's or percentile's values (rule 1). */
#define GA_QPART_PCT 0x40

/* The values of set (NULL: none) as u64 n and n doubles (rule 1),
** sqlite3_malloc64'd into *out (*n bytes); the values are sorted in place.
** stop(arg) (NULL: none) is polled by the sort.  GA_OK, GA_NOMEM or
** GA_INTERRUPTED. */
int ga_qpp_encode(ga_dset *set, int (*stop)(void *), void *arg,
                  unsigned char **out, int64_t *n);

/* Read one group's values from p (avail bytes; *used: what they took)
** into *out (NULL when none), checked (rule 2): at most rows, the fused
** state's; budget (< 0: none) the bytes they may take, else
** GA_QPART_CAP (qpartial.h).  GA_OK, GA_NOMEM, GA_QPART_STOP (stop said
** so), or GA_BADSTATE with *err. */
int ga_qpp_decode(const unsigned char *p, int64_t avail, int64_t *used,
                  int64_t rows, int64_t budget, int (*stop)(void *), void *arg,
                  ga_dset **out, const char **err);

#endif
