/*
** bigmem.c — large scratch buffers (bigmem.h).
*/
#include "bigmem.h"

/* Under a sanitizer, every buffer comes from the allocator: ASan then
** checks their bounds and lifetimes (it sees nothing inside a mapping of
** our own), and LeakSanitizer's scan at exit crashed on the mappings
** (CI at 93c216d: "Tracer caught signal 11" after fake:cache). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GA_BIG_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define GA_BIG_SANITIZED 1
#endif
#endif
#if (defined(__unix__) || defined(__APPLE__)) && !defined(GA_BIG_SANITIZED)
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
