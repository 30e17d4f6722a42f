/*
** dict.h — TEXT dictionaries of the column cache (issue 20): a column's
** distinct TEXT values, and a 32-bit code a row that sorts as they do.
**
** A load interns each sink's values on the sink's own thread
** (ga_dict_local), merges each sink's dictionary into the load's at the
** end of its piece (ga_dict_merge, under the load's mutex) and rewrites
** that piece's local ids into load ids; once every piece is in,
** ga_dict_seal sorts the values and gives each load id its code.
**
** Rules:
**   1. A value is a byte string: a TEXT value in the database's encoding,
**      as SQLite stores it.  Two values are one exactly when their bytes
**      are (SQLite's BINARY collation: the cache groups and compares TEXT
**      under BINARY only).
**   2. Codes are ranks in BINARY order: memcmp over the common length,
**      then the shorter first (sqlite3BinCompare's order).  So a code
**      compares with a code as the values compare, and a literal compares
**      with every value as its insertion point (ga_dict_find) does with
**      the codes.
**   3. Ids (local and load) follow arrival; codes exist once sealed.  A
**      sealed dictionary takes no more values.
**   4. Every byte is counted (ga_dict_bytes): the values once each, the
**      hash slots and the index arrays.
**   5. At most GA_DICT_MAX distinct values: past it, GA_DICT_FULL (the load
**      fails, naming the column).
**   6. A dictionary with a charge (ga_dict_charge, ga_dict_local_charge)
**      asks it for every byte before it allocates them, as the set grows
**      (the values, the id arrays, the slots): a refusal stops the growth
**      with GA_DICT_BUDGET, so a load over its budget fails as soon as the
**      dictionary passes it, not once the whole column is in.  What was
**      charged is ga_dict_charged / ga_dict_local_charged (to give back
**      when the dictionary is freed).
*/
#ifndef GA_DICT_H
#define GA_DICT_H

#include <stddef.h>
#include <stdint.h>

#define GA_DICT_MAX ((int64_t)0x7fffffff)
/* Besides GA_OK and GA_NOMEM (value.h). */
#define GA_DICT_FULL 50
#define GA_DICT_BUDGET 51

/* Rule 6: more > 0 bytes about to be allocated (0: granted, else refused),
** or more < 0 bytes given back (an allocation that failed). */
typedef int (*ga_dict_charge_fn)(void *arg, int64_t more);

/* One thread's values (a sink's). */
typedef struct ga_dict_local ga_dict_local;
ga_dict_local *ga_dict_local_new(void); /* NULL: out of memory */
void ga_dict_local_free(ga_dict_local *l);
/* The id of value (p, n) in l, a new one when it is new.  GA_OK, GA_NOMEM,
** GA_DICT_FULL or GA_DICT_BUDGET. */
int ga_dict_local_intern(ga_dict_local *l, const void *p, int n, uint32_t *id);
/* Values in l (ids 0 .. count - 1). */
uint32_t ga_dict_local_count(const ga_dict_local *l);
/* Forget l's values (a sink's next piece), keeping its memory. */
void ga_dict_local_clear(ga_dict_local *l);
int64_t ga_dict_local_bytes(const ga_dict_local *l);
/* Rule 6: charge l's growth to fn (set before its first value). */
void ga_dict_local_charge(ga_dict_local *l, ga_dict_charge_fn fn, void *arg);
int64_t ga_dict_local_charged(const ga_dict_local *l);

/* A load's values. */
typedef struct ga_dict ga_dict;
ga_dict *ga_dict_new(void); /* NULL: out of memory */
void ga_dict_free(ga_dict *d);
/* Add l's values to d (thread-safe): map[i] is the load id of l's id i
** (map has room for ga_dict_local_count(l)).  GA_OK, GA_NOMEM,
** GA_DICT_FULL or GA_DICT_BUDGET; d unsealed. */
int ga_dict_merge(ga_dict *d, const ga_dict_local *l, uint32_t *map);
/* Sort: codes from now on.  GA_OK or GA_NOMEM. */
int ga_dict_seal(ga_dict *d);
/* Distinct values. */
int64_t ga_dict_count(const ga_dict *d);
/* The code of load id `id` (sealed). */
uint32_t ga_dict_code(const ga_dict *d, uint32_t id);
/* The value of code `code` (sealed): its bytes stay d's. */
void ga_dict_value(const ga_dict *d, uint32_t code, const void **p, int *n);
/* The number of values below (p, n) in BINARY order: the code (p, n) has,
** or would have; *found says whether it is a value of d (sealed). */
int64_t ga_dict_find(const ga_dict *d, const void *p, int n, int *found);
int64_t ga_dict_bytes(const ga_dict *d);
/* Rule 6: charge d's growth to fn (set before its first merge; fn is then
** called under d's mutex). */
void ga_dict_charge(ga_dict *d, ga_dict_charge_fn fn, void *arg);
int64_t ga_dict_charged(const ga_dict *d);

/* sqlite3BinCompare's order of two byte strings: <0, 0, >0. */
int ga_dict_cmp(const void *a, int na, const void *b, int nb);

#endif
