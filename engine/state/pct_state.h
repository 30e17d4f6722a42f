/*
** pct_state.h — the state BLOB of a median or percentile (issue 39):
** every kept value, in the versioned state family of state.h (docs/
** states.md, "The state BLOB", kind 6).  The rules are at the top of
** engine/state/pct_state.c.
*/
#ifndef GA_PCT_STATE_H
#define GA_PCT_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "pct.h"

#define GA_STATE_PCT 6 /* the header's kind byte (state.h's GA_STATE_*) */

/* p's values as a state BLOB (malloc'd into *out, *n bytes); p->v is
** sorted.  stop(arg), when not NULL, is polled every 65,536 values the
** sort visits (rule 5).  GA_OK, GA_NOMEM or GA_INTERRUPTED. */
int ga_pct_state_encode(ga_pct *p, unsigned char **out, int64_t *n,
                        int (*stop)(void *), void *arg);

/* v[0..n) in rule 2's order (by value, -0.0 before 0.0; finite values),
** polling stop(arg) as ga_pct_state_encode does.  GA_OK, GA_NOMEM or
** GA_INTERRUPTED (v is then in some order of its values). */
int ga_pct_sort(double *v, size_t n, int (*stop)(void *), void *arg);

/* Validate blob (n bytes) completely, then add its values to *into.
** GA_OK; GA_BADSTATE (state.h) with *err a static text; GA_NOMEM; or
** GA_PCT_CAP (the values would pass into->cap_bytes; none added). */
int ga_pct_state_merge(const void *blob, int64_t n, ga_pct *into,
                       const char **err);

#endif
