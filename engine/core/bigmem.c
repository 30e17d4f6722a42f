/*
** bigmem.c — large scratch buffers (bigmem.h).
*/
#include "bigmem.h"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#define GA_BIG_MMAP 1
#endif

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

void *ga_big_alloc(size_t bytes) {
#ifdef GA_BIG_MMAP
  if (bytes >= GA_BIG_MIN) { /* rule 1 */
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE); /* advice: fine if refused */
#endif
    return p;
  }
#endif
  return sqlite3_malloc64(bytes ? bytes : 1);
}

void ga_big_free(void *p, size_t bytes) {
  if (!p)
    return;
#ifdef GA_BIG_MMAP
  if (bytes >= GA_BIG_MIN) {
    munmap(p, bytes);
    return;
  }
#endif
  sqlite3_free(p);
}
