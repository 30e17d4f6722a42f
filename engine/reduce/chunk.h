/*
** chunk.h — host buffers of numeric values, and the process-wide pool that
** recycles them.
**
** A chunk holds values in row order as 64-bit words (int64 or double bits)
** with a bitmap of which are integers, so one buffer serves every op and a
** reducer sees a plain array.  Chunks are recycled, never grown: first-touch
** page faults cost more than SQLite's whole per-row work (README, "Host
** memory"), and a fixed set of buffers bounds memory at any row count.
**
** Two kinds: small heap chunks (sqlite3_malloc64) for the CPU path, and large
** pinned chunks (cudaHostAlloc) that the GPU copies from at full PCIe speed.
*/
#ifndef GA_CHUNK_H
#define GA_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#include "ga_partial.h"

/* Values in a CPU chunk: 64 KiB, small enough to stay in L2 between the
** appends of xStep and the reduction that follows. */
#define GA_CPU_CHUNK_VALUES 8192

typedef struct ga_chunk ga_chunk;
struct ga_chunk {
  uint64_t *vals;  /* cap 64-bit words */
  uint64_t *isint; /* cap/64 words: bit i set = vals[i] is an int64; kept
                      only once the chunk is mixed (ga_chunk_push) */
  int64_t cap;     /* values it can hold (a multiple of 64) */
  int64_t n;       /* values held */
  int kind;        /* GA_KIND_NONE/INT/REAL, or GA_CHUNK_MIXED */
  int64_t base;    /* position of vals[0] in the aggregate's value stream */
  int pinned;      /* from cudaHostAlloc: the GPU may read it */
  size_t bytes;    /* size of the allocation (the pool's key) */
  void *h_out;     /* pinned only: where the GPU's partial comes back */
  void *event;     /* pinned only: cudaEvent_t, recorded after the partial */
  void *tev[3];    /* pinned only: timing events before H2D, after H2D,
                      after the kernel (gpuagg_info's h2d_ms, kernel_ms) */
  int dev, slot;   /* pinned only: where it was last sent */
  int ev_dev;      /* device the events belong to, -1 before the first
                      submit (events are per device, so they follow it) */
  ga_chunk *next;  /* pool free list, or an aggregate's queue */
};

/* What a chunk holds so far: GA_KIND_NONE (empty), GA_KIND_INT or
** GA_KIND_REAL (one kind only), or GA_CHUNK_MIXED. */
#define GA_CHUNK_MIXED 3

static inline int ga_chunk_layout(const ga_chunk *c) {
  return c->kind == GA_KIND_INT      ? GA_LAYOUT_INT
         : c->kind == GA_CHUNK_MIXED ? GA_LAYOUT_MIXED
                                     : GA_LAYOUT_REAL;
}

/* The slow path of ga_chunk_push: the first value, the first value of the
** other kind (from then on the bitmap is kept), and every value of a mixed
** chunk.  A column of one type (the usual case) never gets here after its
** first value, so it costs no bitmap work per row.  Out of line: inlined,
** its registers would be saved and restored on every row of the xStep. */
__attribute__((noinline, unused)) static void
ga_chunk_push_slow(ga_chunk *c, uint64_t bits, int kind) {
  int64_t n = c->n;
  int is_int = kind == GA_KIND_INT;
  if (c->kind == GA_KIND_NONE) {
    c->kind = kind;
  } else {
    if (c->kind != GA_CHUNK_MIXED) { /* materialise the bitmap so far */
      uint64_t fill = c->kind == GA_KIND_INT ? ~0ull : 0;
      for (int64_t w = 0; w < (n + 63) >> 6; w++)
        c->isint[w] = fill;
      c->kind = GA_CHUNK_MIXED;
    }
    if ((n & 63) == 0)
      c->isint[n >> 6] = 0;
    c->isint[n >> 6] = (c->isint[n >> 6] & ~(1ull << (n & 63))) |
                       ((uint64_t)is_int << (n & 63));
  }
  c->vals[n] = bits;
  c->n = n + 1;
}

/* Append one value of kind GA_KIND_INT or GA_KIND_REAL. */
static inline void ga_chunk_push(ga_chunk *c, uint64_t bits, int kind) {
  if (c->kind == kind)
    c->vals[c->n++] = bits;
  else
    ga_chunk_push_slow(c, bits, kind);
}

static inline int ga_chunk_is_int(const ga_chunk *c, int64_t i) {
  if (c->kind != GA_CHUNK_MIXED)
    return c->kind == GA_KIND_INT;
  return (int)((c->isint[i >> 6] >> (i & 63)) & 1);
}

static inline void ga_chunk_reset(ga_chunk *c) {
  c->n = c->base = 0;
  c->kind = GA_KIND_NONE;
}

/* A chunk from the pool, or a new one: a CPU chunk (pinned = 0, cap
** GA_CPU_CHUNK_VALUES) or a pinned one of about `bytes`.  NULL when memory
** (or the pinned cap, GA_PINNED_CAP) runs out.  n, kind, base are reset. */
ga_chunk *ga_pool_get(int pinned, int64_t bytes);
void ga_pool_put(ga_chunk *c);
/* Free every cached chunk (when the last connection closes). */
void ga_pool_trim(void);
/* Pinned bytes allocated now (in use and cached), for gpuagg_info(). */
int64_t ga_pool_pinned_bytes(void);

/* Room after a pinned chunk's bitmap for the partial the GPU sends back
** (engine/reduce/pool.c lays it out, engine/reduce/gpu.c's device output
*matches). */
#define GA_OUT_BYTES 1024
_Static_assert(sizeof(ga_sum_partial) <= GA_OUT_BYTES &&
                   sizeof(ga_best_partial) <= GA_OUT_BYTES,
               "a partial must fit its output area");

/* Cap on pinned host memory for the whole process. */
#define GA_PINNED_CAP ((int64_t)512 << 20)

#endif
