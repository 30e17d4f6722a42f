/*
** pool.c — the process-wide chunk pool (see chunk.h).
**
** One mutex guards two free lists.  CPU chunks come from sqlite3_malloc64 so
** that SQLite accounts for them (and SQLITE_CONFIG_MALLOC failure injection
** reaches them); pinned chunks from cudaHostAlloc, capped at GA_PINNED_CAP.
** The pool is emptied when the last connection using gpuagg closes.
**
** Freeing pinned memory (cudaFreeHost) synchronises the whole device, so it
** never happens under the mutex: chunks to free are unlinked under it and
** freed after it is released, and other threads keep their chunks moving.
*/
#include <pthread.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "chunk.h"
#include "gpu.h"

#define GA_POOL_MAX_CPU                                                        \
  160 /* cached CPU chunks kept: max/min history (GA_HISTORY_MAX)              \
         needs 128 of them; fresh ones cost page faults */

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static ga_chunk *free_cpu, *free_pinned;
static int n_free_cpu;
static int64_t pinned_bytes; /* allocated: in use + cached */

static ga_chunk *cpu_new(void) {
  int64_t cap = GA_CPU_CHUNK_VALUES;
  size_t bytes = sizeof(ga_chunk) + (size_t)cap * 8 + (size_t)cap / 8;
  ga_chunk *c = sqlite3_malloc64(bytes);
  if (!c)
    return NULL;
  memset(c, 0, sizeof(*c));
  c->vals = (uint64_t *)(c + 1);
  c->isint = c->vals + cap;
  c->cap = cap;
  c->bytes = bytes;
  return c;
}

/* Without pool_mu: the bytes were already taken off pinned_bytes. */
static void pinned_free(ga_chunk *c) {
  ga_gpu_event_destroy(c->event);
  for (int k = 0; k < 3; k++)
    ga_gpu_event_destroy(c->tev[k]);
  ga_gpu_host_free(c->vals);
  sqlite3_free(c);
}

/* Free a list of unlinked pinned chunks (pool_mu not held). */
static void pinned_free_list(ga_chunk *c) {
  while (c) {
    ga_chunk *next = c->next;
    pinned_free(c);
    c = next;
  }
}

static ga_chunk *pinned_new(int64_t bytes) {
  /* 64 values take 64 words plus one bitmap word */
  int64_t cap = (bytes - GA_OUT_BYTES) / (65 * 8) * 64;
  if (cap < 64)
    return NULL;
  ga_chunk *c = sqlite3_malloc64(sizeof(ga_chunk));
  if (!c)
    return NULL;
  memset(c, 0, sizeof(*c));
  void *mem = ga_gpu_host_alloc((size_t)bytes);
  if (!mem) {
    sqlite3_free(c);
    return NULL;
  }
  c->ev_dev = -1; /* events are made by the first submit, on its device */
  c->vals = mem;
  c->isint = c->vals + cap;
  c->h_out = c->isint + cap / 64;
  c->cap = cap;
  c->bytes = (size_t)bytes;
  c->pinned = 1;
  return c;
}

ga_chunk *ga_pool_get(int pinned, int64_t bytes) {
  ga_chunk *c = NULL, **pp, *victims = NULL;
  pthread_mutex_lock(&pool_mu);
  if (!pinned) {
    if ((c = free_cpu) != NULL) {
      free_cpu = c->next;
      n_free_cpu--;
    }
  } else {
    for (pp = &free_pinned; *pp; pp = &(*pp)->next)
      if ((*pp)->bytes == (size_t)bytes) {
        c = *pp;
        *pp = c->next;
        break;
      }
    if (!c) {
      /* make room under the cap from cached chunks of other sizes */
      while (free_pinned && pinned_bytes + bytes > GA_PINNED_CAP) {
        ga_chunk *v = free_pinned;
        free_pinned = v->next;
        pinned_bytes -= (int64_t)v->bytes;
        v->next = victims;
        victims = v;
      }
      if (pinned_bytes + bytes <= GA_PINNED_CAP) {
        pinned_bytes += bytes; /* reserve before dropping the lock */
        pthread_mutex_unlock(&pool_mu);
        pinned_free_list(victims); /* make the room before taking it */
        victims = NULL;
        c = pinned_new(bytes);
        pthread_mutex_lock(&pool_mu);
        if (!c)
          pinned_bytes -= bytes;
      }
    }
  }
  pthread_mutex_unlock(&pool_mu);
  pinned_free_list(victims);
  if (!c && !pinned)
    c = cpu_new();
  if (c) {
    ga_chunk_reset(c);
    c->next = NULL;
  }
  return c;
}

void ga_pool_put(ga_chunk *c) {
  if (!c)
    return;
  pthread_mutex_lock(&pool_mu);
  if (c->pinned) {
    c->next = free_pinned;
    free_pinned = c;
  } else if (n_free_cpu < GA_POOL_MAX_CPU) {
    c->next = free_cpu;
    free_cpu = c;
    n_free_cpu++;
  } else {
    sqlite3_free(c);
  }
  pthread_mutex_unlock(&pool_mu);
}

void ga_pool_trim(void) {
  pthread_mutex_lock(&pool_mu);
  ga_chunk *cpu = free_cpu, *pinned = free_pinned;
  free_cpu = free_pinned = NULL;
  n_free_cpu = 0;
  for (ga_chunk *c = pinned; c; c = c->next)
    pinned_bytes -= (int64_t)c->bytes;
  pthread_mutex_unlock(&pool_mu);
  while (cpu) {
    ga_chunk *c = cpu;
    cpu = c->next;
    sqlite3_free(c);
  }
  pinned_free_list(pinned);
}

int64_t ga_pool_pinned_bytes(void) {
  pthread_mutex_lock(&pool_mu);
  int64_t b = pinned_bytes;
  pthread_mutex_unlock(&pool_mu);
  return b;
}
