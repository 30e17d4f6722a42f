/*
** value.h — the engine's vocabulary, below every capability: the
** aggregates (GA_AGG_*), one SQL value as the engine sees it (ga_value:
** its storage class and its number, or its bytes), and the result codes.
*/
#ifndef GA_VALUE_H
#define GA_VALUE_H

#include <stdint.h>

#define GA_AGG_SUM 0
#define GA_AGG_TOTAL 1
#define GA_AGG_AVG 2
#define GA_AGG_MAX 3
#define GA_AGG_MIN 4

/* Value types, in max()'s order: NULL < numbers < TEXT < BLOB. */
#define GA_V_NULL 0
#define GA_V_INT 1
#define GA_V_REAL 2
#define GA_V_TEXT 3
#define GA_V_BLOB 4

typedef struct ga_value {
  int type;
  int n;         /* bytes of p */
  int64_t i;     /* GA_V_INT */
  double r;      /* GA_V_REAL */
  const void *p; /* GA_V_TEXT / GA_V_BLOB */
} ga_value;

/* Return codes. */
#define GA_OK 0
#define GA_NOMEM 1
#define GA_OVERFLOW 2    /* integer overflow (sum) */
#define GA_WINDOW_LOST 3 /* max/min: frame too large to slide, see README */
#define GA_INTERRUPTED                                                         \
  4 /* a long loop's poll said stop (engine/state/dset.h                       \
       rule 5) */

#endif
