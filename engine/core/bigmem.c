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

#ifdef GA_BIG_MMAP
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Rule 5: the kept mappings (any order), each of a size class (rule 6),
** under big_mu; big_reused counts the allocations they served. */
static pthread_mutex_t big_mu = PTHREAD_MUTEX_INITIALIZER;
static void *big_kept[GA_BIG_KEEP_N];
static size_t big_kept_sz[GA_BIG_KEEP_N];
static int big_nkept;
static size_t big_kept_bytes;
static long long big_reused;

/* Rule 6: whole 2 MiB units. */
static size_t big_class(size_t bytes) {
  return (bytes + GA_BIG_MIN - 1) / GA_BIG_MIN * GA_BIG_MIN;
}

/* Rule 5: GPUAGG_BIG_KEEP=0 turns the pool off; read at each call, so a
** test or an A/B run may switch it within a process. */
static int big_keep_on(void) {
  const char *e = getenv("GPUAGG_BIG_KEEP");
  return !(e && !strcmp(e, "0"));
}

/* A kept mapping of sz bytes, taken out of the pool, or NULL. */
static void *big_take(size_t sz) {
  void *p = NULL;
  pthread_mutex_lock(&big_mu);
  for (int i = big_nkept - 1; i >= 0; i--)
    if (big_kept_sz[i] == sz) {
      p = big_kept[i];
      big_kept[i] = big_kept[big_nkept - 1];
      big_kept_sz[i] = big_kept_sz[big_nkept - 1];
      big_nkept--;
      big_kept_bytes -= sz;
      big_reused++;
      break;
    }
  pthread_mutex_unlock(&big_mu);
  return p;
}

/* 1 when the pool took mapping p of sz bytes (rule 5's bounds), else 0.
** A full pool gives up its oldest mappings to make room (queries of other
** sizes must not leave it holding classes nobody asks for again). */
static int big_put(void *p, size_t sz) {
  int kept = 0, nold = 0;
  void *old[GA_BIG_KEEP_N];
  size_t oldsz[GA_BIG_KEEP_N];
  if (sz > GA_BIG_KEEP_BYTES)
    return 0;
  pthread_mutex_lock(&big_mu);
  while (big_nkept > 0 && (big_nkept >= GA_BIG_KEEP_N ||
                           sz > GA_BIG_KEEP_BYTES - big_kept_bytes)) {
    old[nold] = big_kept[0];
    oldsz[nold++] = big_kept_sz[0];
    big_kept_bytes -= big_kept_sz[0];
    big_nkept--;
    memmove(big_kept, big_kept + 1, sizeof(big_kept[0]) * (size_t)big_nkept);
    memmove(big_kept_sz, big_kept_sz + 1,
            sizeof(big_kept_sz[0]) * (size_t)big_nkept);
  }
  big_kept[big_nkept] = p;
  big_kept_sz[big_nkept++] = sz;
  big_kept_bytes += sz;
  kept = 1;
  pthread_mutex_unlock(&big_mu);
  for (int i = 0; i < nold; i++) /* outside the lock */
    munmap(old[i], oldsz[i]);
  return kept;
}
#endif

void ga_big_stats(long long *reused, long long *kept) {
#ifdef GA_BIG_MMAP
  pthread_mutex_lock(&big_mu);
  *reused = big_reused;
  *kept = (long long)big_kept_bytes;
  pthread_mutex_unlock(&big_mu);
#else
  *reused = 0;
  *kept = -1; /* rule 5: this build keeps none (rule 4, or no mmap) */
#endif
}

void *ga_big_alloc(size_t bytes) {
#ifdef GA_BIG_MMAP
  if (bytes >= GA_BIG_MIN) {                       /* rule 1 */
    size_t sz = big_class(bytes);                  /* rule 6 */
    void *p = big_keep_on() ? big_take(sz) : NULL; /* rule 5 */
    if (p)
      return p;
    p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
             0);
    if (p == MAP_FAILED)
      return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, sz, MADV_HUGEPAGE); /* advice: fine if refused */
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
    size_t sz = big_class(bytes); /* rule 6 */
#ifdef MADV_FREE
    /* rule 5: kept only where the kernel may take its pages back under
    ** pressure (MADV_FREE, before the pool has it: another thread may take
    ** it at once); a kernel that refuses the advice gets it unmapped */
    if (big_keep_on() && madvise(p, sz, MADV_FREE) == 0 && big_put(p, sz))
      return;
#endif
    munmap(p, sz);
    return;
  }
#endif
  sqlite3_free(p);
}
