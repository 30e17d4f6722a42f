/*
** qschema.h — the parts of a table's schema that a query partial carries
** (qpartial.h rule 1: declared types, collations, indexes), checked so
** that no text taken from a file ever reaches SQL as anything but a quoted
** identifier or a type name of SQLite's grammar (issue 36, defect 1).
**
** Rules:
**   1. A declared type is "plain" when it is SQLite's type-name grammar
**      with bare words only: one or more words [A-Za-z_][A-Za-z0-9_]* that
**      are no SQLite keyword (sqlite3_keyword_check: a keyword such as AS,
**      NOT, DEFAULT or GENERATED would change the column's meaning) and
**      not HIDDEN in any case (no keyword, but sqlite3_declare_vtab hides
**      a column whose type holds that word: gpu_query's groups table would
**      lose it), then optionally (signed-number) or (signed-number,
**      signed-number).  A plain type can be spliced into a column
**      definition, of a table or of a virtual table's declaration, as it
**      is;
**      any other (a comma, a quote, a parenthesis, a semicolon, ...) is
**      replaced by the name of its affinity (SQLite's rules of section
**      3.1 of datatype3.html), which is all that a finishing or internal
**      table needs of it.
**   2. A collation is one of SQLite's own: BINARY, NOCASE, RTRIM (any
**      case), written in capitals; any other name is refused.
**   3. An index is carried as the text ga_qs_index_text writes from its
**      parts (quoted identifiers, known collations, UNIQUE, DESC) and read
**      back by ga_qs_index_parse, which accepts exactly that form, over
**      the partial's table and columns; never the file's own CREATE text.
*/
#ifndef GA_QSCHEMA_H
#define GA_QSCHEMA_H

/* Rule 1: 1 when z is a plain declared type ("" included). */
int ga_qs_type_plain(const char *z);

/* Rule 1: the name of z's affinity: "" for "", else "INTEGER", "TEXT",
** "BLOB", "REAL" or "NUMERIC". */
const char *ga_qs_type_affinity(const char *z);

/* Rule 1: z when plain, else its affinity's name. */
const char *ga_qs_type_safe(const char *z);

/* Rule 2: "BINARY", "NOCASE" or "RTRIM" for z in any case; NULL else. */
const char *ga_qs_coll(const char *z);

/* An index from its parts (rule 3). */
typedef struct ga_qs_index {
  int unique, ncol;
  char *name, *table; /* sqlite3_malloc'd, like each col[] */
  char **col;
  const char **coll; /* ga_qs_coll's names */
  int *desc;
} ga_qs_index;

void ga_qs_index_free(ga_qs_index *x);

/* x as text (rule 3; sqlite3_malloc'd, NULL when out of memory). */
char *ga_qs_index_text(const ga_qs_index *x);

/* Parse text of ga_qs_index_text into *x: 0, 1 when it is not exactly that
** form, or 2 when out of memory (x then holds nothing to free). */
int ga_qs_index_parse(const char *text, ga_qs_index *x);

#endif
