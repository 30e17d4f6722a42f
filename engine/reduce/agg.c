/*
** agg.c — the aggregate engine (see agg.h).
**
** Life of a value: xStep appends it to the current chunk.  A full chunk is
** dispatched: reduced on the CPU at once, or queued on a GPU stream (copy in,
** kernel, partial back) while xStep keeps filling the next chunk.  Partials
** are merged as they come back, and a chunk whose partial is back is reused,
** so an aggregate holds at most streams*devices+1 chunks whatever the row
** count.  Finalize dispatches the tail, waits, merges, answers.
**
** Which path: CPU while the input has at most cfg.cpu_max_rows values (or
** cfg.device = 'cpu', or no usable GPU), or at most cfg.gpu_start_rows while
** this process has not started CUDA yet; GPU for chunks past that.  Every
** partial is exact (ga_partial.h), so a mix of CPU and GPU chunks, any chunk
** size and any completion order give the same bits.  A failed GPU step sends
** that chunk, and every later one of this aggregate, to the CPU.
**
** Windows: the first xValue or xInverse switches the aggregate to direct
** mode.  Sums then add and subtract exactly in the partial.  Max/min keep a
** monotonic deque, built from the history of the rows so far: for that, the
** first GA_HISTORY_MAX values are kept in order (chunks held back, text and
** blob values copied) rather than reduced.  A frame that holds more rows than
** that before its first result cannot slide; README documents the error.
*/
#include "agg.h"

#include <string.h>
#include <time.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "bestval.h"
#include "chunk.h"
#include "cpu_reduce.h"
#include "gpu.h"
#include "xacc.h"

/* A text or blob value seen while the history is kept, and how many numbers
** came before it. */
typedef struct ga_hist_text {
  int64_t pos;
  ga_bval v;
} ga_hist_text;

struct ga_agg {
  int op, kop, want_min;
  ga_config cfg;
  ga_last *last;
  int64_t nnum;   /* numbers pushed into chunks so far (stream position) */
  int64_t nrows;  /* non-NULL values seen */
  ga_chunk *cur;  /* being filled */
  ga_chunk *held; /* max/min history: full chunks not yet reduced */
  ga_chunk **held_tail;
  int64_t nheld;
  ga_chunk *fly, **fly_tail; /* queued on the GPU, oldest first */
  int nfly;
  int ndev; /* usable GPUs, -1 until first asked */
  int gpu_off;
  int next_dev, next_slot[GA_MAX_DEV]; /* ndev <= GA_MAX_DEV (gpu.c) */
  /* results */
  ga_sum_partial sum;
  int64_t sum_direct; /* direct adds since the last normalisation */
  ga_best_partial best;
  ga_bval tb; /* best text/blob (they beat every number) */
  /* max/min history and window state */
  int history;
  ga_hist_text *ht;
  int64_t nht, capht, htbytes;
  int window;      /* xValue/xInverse seen: direct mode */
  int window_lost; /* history was gone when the window started */
  ga_deque dq;
  /* info */
  int64_t chunks_cpu, chunks_gpu, fallbacks;
  double h2d_ms, kernel_ms;
  double t0;
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* noinline: the flattened xStep would otherwise inline it into the per-row
** path, with its stack frame and stack-protector check. */
__attribute__((noinline, cold)) ga_agg *ga_agg_new(int op, const ga_config *cfg,
                                                   ga_last *last) {
  ga_agg *a = sqlite3_malloc64(sizeof(*a));
  if (!a)
    return NULL;
  memset(a, 0, sizeof(*a));
  a->op = op;
  a->kop = op == GA_AGG_MAX   ? GA_OP_MAX
           : op == GA_AGG_MIN ? GA_OP_MIN
                              : GA_OP_SUM;
  a->want_min = op == GA_AGG_MIN;
  a->cfg = *cfg;
  a->last = last;
  a->held_tail = &a->held;
  a->fly_tail = &a->fly;
  a->ndev = -1;
  a->history = a->kop != GA_OP_SUM;
  a->t0 = now_ms();
  return a;
}

int ga_agg_op(const ga_agg *a) { return a->op; }

/* ---- reducing chunks ---- */

static void merge_best(ga_agg *a, ga_best_partial p, int64_t base) {
  p.idx += base;
  ga_best_merge(&a->best, &p, a->want_min);
}

static void reduce_cpu(ga_agg *a, ga_chunk *c) {
  int layout = ga_chunk_layout(c);
  if (a->kop == GA_OP_SUM) {
    ga_cpu_sum(c->vals, c->isint, c->n, layout, &a->sum);
    ga_sum_normalize(&a->sum);
  } else {
    ga_best_partial p;
    ga_cpu_best(c->vals, c->isint, c->n, layout, a->want_min, &p);
    merge_best(a, p, c->base);
  }
  a->chunks_cpu++;
}

/* How many GPUs this aggregate may use; starts CUDA on the first ask. */
static int agg_ndev(ga_agg *a) {
  if (a->ndev < 0)
    a->ndev = ga_gpu_ndev(&a->cfg);
  return a->gpu_off ? 0 : a->ndev;
}

/* Do the values seen so far (plus `more`) belong on the GPU? */
static int wants_gpu(ga_agg *a, int64_t more) {
  if (a->cfg.device == GA_DEVICE_CPU || a->gpu_off)
    return 0;
  if (a->cfg.device != GA_DEVICE_GPU) {
    int64_t n = a->nnum + more;
    if (n <= a->cfg.cpu_max_rows)
      return 0;
    if (n <= a->cfg.gpu_start_rows && !ga_gpu_warm())
      return 0;
  }
  return agg_ndev(a) > 0;
}

static void gpu_failed(ga_agg *a) {
  if (!a->gpu_off) {
    a->gpu_off = 1;
    a->fallbacks++;
    ga_counter_add(&ga_counters_global()->fallbacks, 1);
  }
}

/* The oldest queued chunk is done (ok) or failed: merge its partial or
** reduce it here.  Returns the chunk, now free to reuse. */
static ga_chunk *retire(ga_agg *a, int ok) {
  ga_chunk *c = a->fly;
  a->fly = c->next;
  if (!a->fly)
    a->fly_tail = &a->fly;
  a->nfly--;
  c->next = NULL;
  if (ok) {
    if (a->kop == GA_OP_SUM)
      ga_sum_merge(&a->sum, (const ga_sum_partial *)c->h_out);
    else
      merge_best(a, *(const ga_best_partial *)c->h_out, c->base);
    a->chunks_gpu++;
    double h, k;
    ga_gpu_chunk_times(c, &h, &k);
    a->h2d_ms += h;
    a->kernel_ms += k;
  } else {
    gpu_failed(a);
    reduce_cpu(a, c);
  }
  return c;
}

/* Merge whatever has come back, without waiting. */
static void poll_fly(ga_agg *a) {
  while (a->fly) {
    int r = ga_gpu_poll(a->fly);
    if (r == 0)
      break;
    ga_pool_put(retire(a, r > 0));
  }
}

/* Reduce c (full, or the tail) now or queue it; c is given away. */
static void dispatch(ga_agg *a, ga_chunk *c) {
  if (c->n == 0) {
    ga_pool_put(c);
    return;
  }
  if (c->pinned && wants_gpu(a, 0)) {
    int dev = a->next_dev++ % a->ndev;
    int slot = a->next_slot[dev]++ % a->cfg.streams;
    if (ga_gpu_submit(c, a->kop, dev, slot)) {
      *a->fly_tail = c;
      a->fly_tail = &c->next;
      a->nfly++;
      poll_fly(a);
      return;
    }
    gpu_failed(a);
  }
  reduce_cpu(a, c);
  ga_pool_put(c);
}

static void wait_all(ga_agg *a) {
  while (a->fly)
    ga_pool_put(retire(a, ga_gpu_wait(a->fly)));
}

/* A chunk to fill: pinned when the GPU will take it, reusing the oldest
** queued chunk once streams*devices are in flight (this is what bounds host
** memory); a CPU chunk otherwise. */
__attribute__((noinline, cold)) static ga_chunk *next_chunk(ga_agg *a) {
  if (wants_gpu(a, GA_CPU_CHUNK_VALUES)) {
    ga_chunk *c = NULL;
    if (a->nfly >= a->cfg.streams * a->ndev)
      c = retire(a, ga_gpu_wait(a->fly)); /* same size: same aggregate */
    if (!c)
      c = ga_pool_get(1, a->cfg.chunk_bytes);
    if (!c && a->fly)
      c = retire(a, ga_gpu_wait(a->fly));
    if (c) {
      ga_chunk_reset(c);
      return c;
    }
    /* no pinned memory (cudaHostAlloc failed, or the process-wide cap is
    ** reached with nothing of ours in flight): a counted fallback, and the
    ** rest of this aggregate runs on the CPU */
    gpu_failed(a);
  }
  return ga_pool_get(0, 0);
}

/* ---- max/min history ---- */

static void history_end(ga_agg *a) {
  if (!a->history)
    return;
  a->history = 0;
  while (a->held) {
    ga_chunk *c = a->held;
    a->held = c->next;
    c->next = NULL;
    dispatch(a, c);
  }
  a->held_tail = &a->held;
  a->nheld = 0;
  for (int64_t k = 0; k < a->nht; k++)
    ga_bval_clear(&a->ht[k].v);
  sqlite3_free(a->ht);
  a->ht = NULL;
  a->nht = a->capht = a->htbytes = 0;
}

static int history_text(ga_agg *a, const ga_value *v) {
  if (a->htbytes + v->n > GA_HISTORY_TEXT_BYTES || a->nht >= GA_HISTORY_MAX) {
    history_end(a);
    return GA_OK;
  }
  if (a->nht == a->capht) {
    int64_t ncap = a->capht ? 2 * a->capht : 16;
    ga_hist_text *n = sqlite3_realloc64(a->ht, (uint64_t)ncap * sizeof(*n));
    if (!n)
      return GA_NOMEM;
    a->ht = n;
    a->capht = ncap;
  }
  ga_hist_text *h = &a->ht[a->nht];
  memset(h, 0, sizeof(*h));
  if (ga_bval_set(&h->v, v))
    return GA_NOMEM;
  h->pos = a->nnum;
  a->nht++;
  a->htbytes += v->n;
  return GA_OK;
}

/* ---- stepping ---- */

/* Out of line, as next_chunk: once a chunk, and kept out of the per-row
** path so that path needs no stack frame of its own (xStep is flattened). */
__attribute__((noinline, cold)) static int chunk_full(ga_agg *a) {
  ga_chunk *c = a->cur;
  a->cur = NULL;
  c->base = a->nnum - c->n;
  if (a->history) {
    c->next = NULL;
    *a->held_tail = c;
    a->held_tail = &c->next;
    a->nheld += c->n;
    if (a->nheld + a->nht > GA_HISTORY_MAX)
      history_end(a);
    return GA_OK;
  }
  dispatch(a, c);
  return GA_OK;
}

/* The per-row path: a few instructions unless a chunk fills. */
static inline __attribute__((always_inline)) int
push_num(ga_agg *a, uint64_t bits, int kind) {
  ga_chunk *c = a->cur;
  if (!c && !(c = a->cur = next_chunk(a)))
    return GA_NOMEM;
  ga_chunk_push(c, bits, kind);
  a->nnum++;
  return c->n == c->cap ? chunk_full(a) : GA_OK;
}

static void sum_direct(ga_agg *a, const ga_value *v, int sign) {
  if (v->type == GA_V_INT)
    ga_sum_add_int(&a->sum, v->i, sign);
  else
    ga_sum_add_real(&a->sum, v->r, sign);
  if (++a->sum_direct >= GA_XACC_SAFE_ADDS / 4) {
    ga_sum_normalize(&a->sum);
    a->sum_direct = 0;
  }
}

/* The pushes' window path, out of line: the per-row path then keeps no
** value in memory, so it needs no stack frame (xStep is flattened). */
__attribute__((noinline, cold)) static int push_window(ga_agg *a, int type,
                                                       int64_t i, double r) {
  ga_value x = {type, 0, i, r, NULL};
  sum_direct(a, &x, 1);
  return GA_OK;
}

int ga_agg_push_int(ga_agg *a, int64_t v) {
  a->nrows++;
  if (a->window)
    return push_window(a, GA_V_INT, v, 0);
  return push_num(a, (uint64_t)v, GA_KIND_INT);
}

int ga_agg_push_real(ga_agg *a, double v) {
  a->nrows++;
  if (a->window)
    return push_window(a, GA_V_REAL, 0, v);
  return push_num(a, (uint64_t)ga_dbits(v), GA_KIND_REAL);
}

int ga_agg_best_num(ga_agg *a, uint64_t bits, int kind) {
  if (a->window || a->tb.type != GA_V_NULL) { /* rare: the general path */
    ga_value v = {kind == GA_KIND_INT ? GA_V_INT : GA_V_REAL, 0, (int64_t)bits,
                  ga_bitsd((int64_t)bits), NULL};
    return ga_agg_step(a, &v);
  }
  a->nrows++;
  return push_num(a, bits, kind);
}

int ga_agg_step(ga_agg *a, const ga_value *v) {
  if (v->type == GA_V_NULL)
    return GA_OK;
  if (a->kop == GA_OP_SUM)
    return v->type == GA_V_INT ? ga_agg_push_int(a, v->i)
                               : ga_agg_push_real(a, v->r);
  a->nrows++;
  if (a->window && !a->window_lost)
    return ga_deque_push(&a->dq, v, a->want_min);
  if (v->type == GA_V_TEXT || v->type == GA_V_BLOB) {
    ga_value cur;
    ga_bval_view(&a->tb, &cur);
    int c = ga_value_cmp(v, &cur);
    if ((a->want_min ? c < 0 : c > 0) || a->tb.type == GA_V_NULL) {
      if (ga_bval_set(&a->tb, v))
        return GA_NOMEM;
    }
    return a->history ? history_text(a, v) : GA_OK;
  }
  /* a number loses to any text or blob under max, wins over them under min */
  if (!a->want_min && a->tb.type != GA_V_NULL && !a->history && !a->window)
    return GA_OK;
  if (a->window) { /* window_lost: keep the overall best current */
    ga_best_partial p = {v->type == GA_V_INT ? GA_KIND_INT : GA_KIND_REAL, 0,
                         a->nnum++,
                         v->type == GA_V_INT ? v->i : ga_dbits(v->r)};
    ga_best_merge(&a->best, &p, a->want_min);
    return GA_OK;
  }
  return v->type == GA_V_INT
             ? push_num(a, (uint64_t)v->i, GA_KIND_INT)
             : push_num(a, (uint64_t)ga_dbits(v->r), GA_KIND_REAL);
}

/* Reduce everything buffered or in flight (sum: into a->sum; max/min: into
** a->best). */
static void flush_all(ga_agg *a) {
  history_end(a);
  if (a->cur) {
    a->cur->base = a->nnum - a->cur->n;
    ga_chunk *c = a->cur;
    a->cur = NULL;
    dispatch(a, c);
  }
  wait_all(a);
}

/* Replay the kept history, in row order, into the deque. */
static int build_deque(ga_agg *a) {
  int64_t t = 0;
  ga_chunk *list[2] = {a->held, a->cur};
  for (int l = 0; l < 2; l++) {
    for (ga_chunk *c = list[l]; c; c = l ? NULL : c->next) {
      for (int64_t i = 0; i < c->n; i++) {
        int64_t pos = (l ? a->nnum - c->n : c->base) + i;
        for (; t < a->nht && a->ht[t].pos <= pos; t++) {
          ga_value tv;
          ga_bval_view(&a->ht[t].v, &tv);
          if (ga_deque_push(&a->dq, &tv, a->want_min))
            return GA_NOMEM;
        }
        ga_value nv = {GA_V_REAL, 0, 0, 0, NULL};
        if (ga_chunk_is_int(c, i)) {
          nv.type = GA_V_INT;
          nv.i = (int64_t)c->vals[i];
        } else {
          nv.r = ga_bitsd((int64_t)c->vals[i]);
        }
        if (ga_deque_push(&a->dq, &nv, a->want_min))
          return GA_NOMEM;
      }
    }
  }
  for (; t < a->nht; t++) {
    ga_value tv;
    ga_bval_view(&a->ht[t].v, &tv);
    if (ga_deque_push(&a->dq, &tv, a->want_min))
      return GA_NOMEM;
  }
  return GA_OK;
}

static int enter_window(ga_agg *a) {
  if (a->window)
    return GA_OK;
  a->window = 1;
  if (a->kop == GA_OP_SUM) {
    flush_all(a);
    return GA_OK;
  }
  if (!a->history) {
    a->window_lost = 1;
    flush_all(a);
    return GA_OK;
  }
  int rc = build_deque(a);
  /* the history now lives in the deque; drop the chunks and copies */
  a->history = 0;
  while (a->held) {
    ga_chunk *c = a->held;
    a->held = c->next;
    ga_pool_put(c);
  }
  a->held_tail = &a->held;
  ga_pool_put(a->cur);
  a->cur = NULL;
  for (int64_t k = 0; k < a->nht; k++)
    ga_bval_clear(&a->ht[k].v);
  sqlite3_free(a->ht);
  a->ht = NULL;
  a->nht = a->capht = 0;
  wait_all(a);
  return rc;
}

int ga_agg_inverse(ga_agg *a, const ga_value *v) {
  int rc = enter_window(a);
  if (rc)
    return rc;
  if (v->type == GA_V_NULL)
    return GA_OK;
  a->nrows--;
  if (a->kop == GA_OP_SUM) {
    sum_direct(a, v, -1);
    return GA_OK;
  }
  if (a->window_lost)
    return GA_WINDOW_LOST;
  ga_deque_leave(&a->dq, v);
  return GA_OK;
}

/* ---- results ---- */

static int sum_result(ga_agg *a, ga_value *out) {
  return ga_sum_value(&a->sum, a->op, out);
}

static void best_result(ga_agg *a, ga_value *out) {
  memset(out, 0, sizeof(*out));
  if (a->window && !a->window_lost) {
    const ga_bval *f = ga_deque_front(&a->dq);
    if (f)
      ga_bval_view(f, out);
    return;
  }
  /* texts and blobs rank above numbers: max takes them first, min last */
  if (a->tb.type != GA_V_NULL &&
      (!a->want_min || a->best.kind == GA_KIND_NONE)) {
    ga_bval_view(&a->tb, out);
    return;
  }
  if (a->best.kind == GA_KIND_INT) {
    out->type = GA_V_INT;
    out->i = a->best.bits;
  } else if (a->best.kind == GA_KIND_REAL) {
    out->type = GA_V_REAL;
    out->r = ga_bitsd(a->best.bits);
  }
}

int ga_agg_value(ga_agg *a, ga_value *out) {
  int rc = enter_window(a);
  if (rc)
    return rc;
  if (a->kop == GA_OP_SUM)
    return sum_result(a, out);
  if (a->window_lost)
    flush_all(a);
  best_result(a, out);
  return GA_OK;
}

static void record_last(ga_agg *a, double t_final) {
  ga_last *l = a->last;
  ga_counters *g = ga_counters_global();
  if (a->chunks_gpu)
    ga_counter_add(&g->agg_gpu, 1);
  else
    ga_counter_add(&g->agg_cpu, 1);
  ga_counter_add(&g->chunks_cpu, a->chunks_cpu);
  ga_counter_add(&g->chunks_gpu, a->chunks_gpu);
  if (!l)
    return;
  l->path = a->chunks_gpu ? (a->chunks_cpu ? "mixed" : "gpu") : "cpu";
  l->rows = a->nrows;
  l->chunks_cpu = a->chunks_cpu;
  l->chunks_gpu = a->chunks_gpu;
  l->fallbacks = a->fallbacks;
  l->h2d_ms = a->h2d_ms;
  l->kernel_ms = a->kernel_ms;
  double t1 = now_ms();
  l->finalize_ms = t1 - t_final;
  l->total_ms = t1 - a->t0;
}

int ga_agg_final(ga_agg *a, ga_value *out) {
  double tf = now_ms();
  int rc = GA_OK;
  if (!a->window || a->kop == GA_OP_SUM || a->window_lost)
    flush_all(a);
  if (a->kop == GA_OP_SUM)
    rc = sum_result(a, out);
  else
    best_result(a, out);
  record_last(a, tf);
  return rc;
}

void ga_agg_free(ga_agg *a) {
  if (!a)
    return;
  wait_all(a); /* a statement aborted mid-aggregate: drain the GPU first */
  ga_pool_put(a->cur);
  while (a->held) {
    ga_chunk *c = a->held;
    a->held = c->next;
    ga_pool_put(c);
  }
  for (int64_t k = 0; k < a->nht; k++)
    ga_bval_clear(&a->ht[k].v);
  sqlite3_free(a->ht);
  ga_deque_free(&a->dq);
  ga_bval_clear(&a->tb);
  sqlite3_free(a);
}
