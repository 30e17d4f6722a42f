/*
** qvar.h — gpu_query and the exact variance (issue 39): which calls of a
** text are gpu_var_samp, gpu_var_pop, gpu_stddev_samp, gpu_stddev_pop,
** gpu_variance or gpu_stddev (qvar.c), and why such a text is serial.
*/
#ifndef GA_QVAR_H
#define GA_QVAR_H

/* The groups table's op of a variance call (query.h's GA_Q_* space). */
#define GA_Q_VAR 12

/* Is the name z[0..len) one of the six (ASCII case-insensitive)? */
int ga_qvar_is(const char *z, int len);

/* query.c rule 14's serial_why and partial_why. */
#define GA_QVAR_WHY                                                            \
  "an exact variance or standard deviation (gpu_var_*, gpu_stddev*) runs "     \
  "on the serial path: the parallel scan, the column cache and partials "      \
  "keep no sum of squares"

#endif
