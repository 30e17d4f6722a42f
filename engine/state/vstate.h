/*
** vstate.h — the variance state's BLOB (issue 39): gpu_var_state's
** output and gpu_var_merge's input, in the versioned family of state.h.
**
** Layout (little-endian, README "Aggregate states"): the 8-byte header
** "GAST", version 1, kind 5 (GA_STATE_VAR), two zero bytes; the sum
** section of a sum state (state.c: counts, integer total, Σx's digits);
** then Σx²: lo (1 byte), nd (1 byte) and nd 32-bit digits of the
** normalised magnitude from digit lo (xvar.h's window), nd = 0 for zero.
**
** Rules:
**   1. Equal states give equal bytes (canonical digits, state.c rule 2).
**   2. Decoding checks everything before it answers (state.c rule 3): the
**      sum section's checks, canonical digits, Σx² below n * 2^2048 (what
**      n finite values can give), and n Σx² >= (Σx)², so that a decoded or
**      merged state always has a variance.
*/
#ifndef GA_VSTATE_H
#define GA_VSTATE_H

#include <stdint.h>

#include "state.h"
#include "xvar.h"

/* The BLOB of p (sqlite3_malloc64).  GA_OK or GA_NOMEM. */
int ga_vstate_encode(const ga_var_partial *p, unsigned char **out, int64_t *n);
/* GA_OK, or GA_BADSTATE with *err a static text saying why. */
int ga_vstate_decode(const void *blob, int64_t n, ga_var_partial *out,
                     const char **err);

#endif
