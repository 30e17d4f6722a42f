/*
** sqlite_api.c — the one definition of sqlite3_api: the routines SQLite
** hands a loadable extension (SQLITE_EXTENSION_INIT1).
**
** It sits at the bottom of the layers (mk/layers.txt) because every file
** that calls SQLite, the engine's and the glue's alike, reads it
** (SQLITE_EXTENSION_INIT3); ext/init.c sets it when the extension loads
** (SQLITE_EXTENSION_INIT2).  Built with SQLITE_CORE (the C tests link
** SQLite itself), it defines nothing.
*/
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT1

typedef int ga_sqlite_api_unit; /* (no empty translation unit) */
