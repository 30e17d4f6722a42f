/*
** malloc_count.c — counts the process's malloc() calls (LD_PRELOAD), for
** bench/keymemo_bench.py: every sqlite3_malloc of SQLite's default
** allocator is one, and each takes SQLite's global allocator mutex while
** SQLITE_CONFIG_MEMSTATUS is on (the default), so calls a row tell how
** much the workers of a scan contend for it.
**
**   cc -shared -fPIC -O2 -o /tmp/malloc_count.so bench/malloc_count.c -ldl
**   LD_PRELOAD=/tmp/malloc_count.so python3 ...   (ctypes: mc_count())
**
** A benchmark tool, never loaded by the tests.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

static long n_malloc;
static void *(*real_malloc)(size_t);

void *malloc(size_t s) {
  if (!real_malloc)
    real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
  __atomic_add_fetch(&n_malloc, 1, __ATOMIC_RELAXED);
  return real_malloc(s);
}

long mc_count(void) { return __atomic_load_n(&n_malloc, __ATOMIC_RELAXED); }
