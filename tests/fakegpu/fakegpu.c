/*
** fakegpu.c — a test-only backend of kernels/gak.h that runs on the CPU.
**
** It lets a machine without a GPU (CI) run the engine's GPU-path logic:
** submit, the merge of device partials, Inf/NaN counters, fallbacks at
** every stage, multi-device slot rotation, pool recycling and device
** restore.  It is linked instead of the CUDA backend into build/fake/
** (mk/fakegpu.mk); the shipped .so never contains it.
**
** What it models, and why:
**   1. Asynchrony: one worker thread per stream runs that stream's queue in
**      order, so host code that touches a buffer before its event completes
**      races with it (TSan sees it) and a result read too early is wrong.
**   2. Devices: GPUAGG_FAKE_DEVICES (default 2) devices with a per-thread
**      current device; a kernel or copy on a stream of another device than
**      the current one fails as CUDA's would; device memory is bounded
**      (GPUAGG_FAKE_MEM bytes per device, default 1 GiB) and every copy is
**      bounds-checked against its allocation (a violation aborts, like
**      compute-sanitizer would report it).
**   3. Partials like a GPU's: the sum kernel reduces in four interleaved
**      lanes and adds their digits without normalising, as the real
**      kernel's atomics do; max/min is computed independently of the
**      engine's CPU reducer.
**   4. Faults that surface late: GPUAGG_FAKE_KERNEL_FAULT=n[,n] makes the
**      n-th kernel fault while it "runs": it writes garbage into its output
**      and the error (class GAK_EKERNEL) surfaces at the next event or
**      stream sync.  GPUAGG_FAKE_DELAY_US delays every queued operation.
**   5. Start-up states: GPUAGG_FAKE_STATE=nodriver|olddriver|nodevice and
**      GPUAGG_FAKE_CC=major.minor (e.g. 7.5: a too-old device).
** Error codes are the gak classes themselves.
*/
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cx_run.h"
#include "gak.h"
#include "xacc.h"
#include "xvar.h"

#define FAKE_MAX_DEV 16
#define FAKE_MAX_FAULTS 16

/* ---- configuration ---- */
static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;
static int ndev = 2, cc_major = 8, cc_minor = 0, state_err;
static size_t dev_mem = (size_t)1 << 30;
static long delay_us;
static int64_t kfaults[FAKE_MAX_FAULTS];
static int nkfaults;
static int64_t nkernels; /* kernels run so far */

static void cfg_read(void) {
  const char *s;
  if ((s = getenv("GPUAGG_FAKE_DEVICES")))
    ndev = atoi(s) < 0 ? 0 : (atoi(s) > FAKE_MAX_DEV ? FAKE_MAX_DEV : atoi(s));
  if ((s = getenv("GPUAGG_FAKE_MEM")))
    dev_mem = (size_t)strtoull(s, NULL, 10);
  if ((s = getenv("GPUAGG_FAKE_CC")))
    sscanf(s, "%d.%d", &cc_major, &cc_minor);
  if ((s = getenv("GPUAGG_FAKE_DELAY_US")))
    delay_us = atol(s);
  if ((s = getenv("GPUAGG_FAKE_STATE"))) {
    if (!strcmp(s, "nodriver"))
      state_err = GAK_ENODRIVER;
    else if (!strcmp(s, "olddriver"))
      state_err = GAK_EOLDDRIVER;
    else if (!strcmp(s, "nodevice"))
      state_err = GAK_ENODEVICE;
  }
  for (s = getenv("GPUAGG_FAKE_KERNEL_FAULT");
       s && *s && nkfaults < FAKE_MAX_FAULTS;) {
    kfaults[nkfaults++] = strtoll(s, NULL, 10);
    s = strchr(s, ',');
    if (s)
      s++;
  }
}
static void cfg(void) { pthread_once(&cfg_once, cfg_read); }

static __thread int cur_dev;
static __thread int last_err;
static int fail(int err) {
  last_err = err;
  return err;
}

static void die(const char *what) {
  fprintf(stderr, "fakegpu: %s\n", what);
  abort();
}

/* ---- errors and versions ---- */
int gak_error_class(int err) {
  return err >= 0 && err <= GAK_EOTHER ? err : GAK_EOTHER;
}
const char *gak_error_string(int err) {
  static const char *txt[] = {
      "no error",       "not ready",          "no driver",
      "driver too old", "no device",          "out of memory",
      "kernel fault",   "built without CUDA", "other error"};
  return txt[gak_error_class(err)];
}
int gak_take_error(void) {
  int e = last_err;
  last_err = 0;
  return e;
}
const char *gak_backend(void) { return "fake"; }
int gak_runtime_version(int *v) {
  *v = 13000;
  return 0;
}
int gak_driver_version(int *v) {
  cfg();
  *v = state_err == GAK_ENODRIVER
           ? 0
           : (state_err == GAK_EOLDDRIVER ? 12000 : 13000);
  return 0;
}

/* ---- devices ---- */
int gak_device_count(int *n) {
  cfg();
  *n = 0;
  if (state_err)
    return fail(state_err);
  *n = ndev;
  return ndev ? 0 : fail(GAK_ENODEVICE);
}
int gak_device_props(int dev, gak_props *p) {
  cfg();
  if (dev < 0 || dev >= ndev)
    return fail(GAK_EOTHER);
  memset(p, 0, sizeof(*p));
  snprintf(p->name, sizeof p->name, "fake GPU %d", dev);
  p->major = cc_major;
  p->minor = cc_minor;
  p->mem = dev_mem;
  p->sms = 4;
  return 0;
}
int gak_get_device(int *dev) {
  *dev = cur_dev;
  return 0;
}
int gak_set_device(int dev) {
  cfg();
  if (dev < 0 || dev >= ndev)
    return fail(GAK_EOTHER);
  cur_dev = dev;
  return 0;
}

/* ---- memory: every block has a header, device blocks are tracked ---- */
#define MAGIC_DEV 0x6465766963656d31ull
#define MAGIC_HOST 0x686f73746d656d31ull
typedef struct blk {
  uint64_t magic;
  int dev;
  size_t size;
  struct blk *next, *prev;
  uint64_t pad; /* payload stays 16-byte aligned */
} blk;
static pthread_mutex_t mem_mu = PTHREAD_MUTEX_INITIALIZER;
static blk dev_list = {0, -1, 0, &dev_list, &dev_list, 0};
static size_t dev_used[FAKE_MAX_DEV];

int gak_malloc(void **p, size_t bytes) {
  cfg();
  *p = NULL;
  pthread_mutex_lock(&mem_mu);
  if (dev_used[cur_dev] + bytes > dev_mem) {
    pthread_mutex_unlock(&mem_mu);
    return fail(GAK_ENOMEM);
  }
  blk *b = malloc(sizeof(blk) + (bytes ? bytes : 1));
  if (!b) {
    pthread_mutex_unlock(&mem_mu);
    return fail(GAK_ENOMEM);
  }
  b->magic = MAGIC_DEV;
  b->dev = cur_dev;
  b->size = bytes;
  b->next = dev_list.next;
  b->prev = &dev_list;
  dev_list.next->prev = b;
  dev_list.next = b;
  dev_used[cur_dev] += bytes;
  pthread_mutex_unlock(&mem_mu);
  *p = b + 1;
  return 0;
}
int gak_free(void *p) {
  if (!p)
    return 0;
  blk *b = (blk *)p - 1;
  if (b->magic != MAGIC_DEV)
    die("gak_free of a pointer that is not device memory");
  pthread_mutex_lock(&mem_mu);
  b->prev->next = b->next;
  b->next->prev = b->prev;
  dev_used[b->dev] -= b->size;
  b->magic = 0;
  pthread_mutex_unlock(&mem_mu);
  free(b);
  return 0;
}
int gak_host_alloc(void **p, size_t bytes) {
  blk *b = malloc(sizeof(blk) + (bytes ? bytes : 1));
  *p = NULL;
  if (!b)
    return fail(GAK_ENOMEM);
  b->magic = MAGIC_HOST;
  b->size = bytes;
  *p = b + 1;
  return 0;
}
int gak_host_free(void *p) {
  if (!p)
    return 0;
  blk *b = (blk *)p - 1;
  if (b->magic != MAGIC_HOST)
    die("gak_host_free of a pointer that gak_host_alloc did not return");
  b->magic = 0;
  free(b);
  return 0;
}

/* The device block holding [p, p + n), which must be on device dev. */
static void dev_check(const void *p, size_t n, int dev, const char *what) {
  pthread_mutex_lock(&mem_mu);
  for (blk *b = dev_list.next; b != &dev_list; b = b->next) {
    const char *lo = (const char *)(b + 1);
    if ((const char *)p >= lo && (const char *)p <= lo + b->size) {
      int ok = (const char *)p + n <= lo + b->size && b->dev == dev;
      pthread_mutex_unlock(&mem_mu);
      if (!ok) {
        char m[160];
        snprintf(m, sizeof m,
                 "%s: %zu bytes out of bounds or on device %d "
                 "(stream on device %d)",
                 what, n, b->dev, dev);
        die(m);
      }
      return;
    }
  }
  pthread_mutex_unlock(&mem_mu);
  if (n)
    die(what);
}

/* ---- streams: a queue and a worker thread each ---- */
typedef struct op op;
typedef void (*op_fn)(op *);
struct op {
  op_fn fn;
  struct fstream *st;
  void *a, *b, *c, *d;
  size_t n;
  int64_t m, k;
  int layout, flag;
  struct fevent *ev;
  void *extra; /* the column cache's parameters, freed after the op */
  op *next;
};
typedef struct fstream {
  int dev;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  op *head, *tail;
  int64_t queued, done;
  int err; /* a kernel fault not yet reported by a stream sync */
  int quit;
  pthread_t th;
} fstream;
typedef struct fevent {
  int timing;
  fstream *st; /* the stream of the last record, NULL if never */
  int64_t seq; /* the op number of the record on that stream */
  int err;     /* the stream's fault when the record ran */
  struct timespec t;
} fevent;

static void *worker(void *arg) {
  fstream *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (!s->head && !s->quit)
      pthread_cond_wait(&s->cv, &s->mu);
    if (!s->head)
      break;
    op *o = s->head;
    pthread_mutex_unlock(&s->mu);
    if (delay_us > 0)
      usleep((useconds_t)delay_us);
    o->fn(o);
    pthread_mutex_lock(&s->mu);
    s->head = o->next;
    if (!s->head)
      s->tail = NULL;
    s->done++;
    free(o->extra);
    free(o);
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

int gak_stream_create(gak_stream *out) {
  cfg();
  *out = NULL;
  fstream *s = calloc(1, sizeof(*s));
  if (!s)
    return fail(GAK_ENOMEM);
  s->dev = cur_dev;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  if (pthread_create(&s->th, NULL, worker, s)) {
    free(s);
    return fail(GAK_EOTHER);
  }
  *out = (gak_stream)s;
  return 0;
}
int gak_stream_destroy(gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!s)
    return 0;
  pthread_mutex_lock(&s->mu);
  s->quit = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->th, NULL);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s);
  return 0;
}
static void wait_for(fstream *s, int64_t seq) {
  pthread_mutex_lock(&s->mu);
  while (s->done < seq)
    pthread_cond_wait(&s->cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
}
int gak_stream_sync(gak_stream gs) {
  fstream *s = (fstream *)gs;
  pthread_mutex_lock(&s->mu);
  while (s->done < s->queued)
    pthread_cond_wait(&s->cv, &s->mu);
  int err = s->err;
  s->err = 0;
  pthread_mutex_unlock(&s->mu);
  return err ? fail(err) : 0;
}

/* Queue o on s; the op number is its position.  An event record notes that
** number under the same lock, so no other op can slip in between. */
static int64_t enqueue(fstream *s, op *o) {
  o->st = s;
  o->next = NULL;
  pthread_mutex_lock(&s->mu);
  if (o->ev) {
    o->ev->st = s;
    o->ev->seq = s->queued + 1;
  }
  if (s->tail)
    s->tail->next = o;
  else
    s->head = o;
  s->tail = o;
  int64_t seq = ++s->queued;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return seq;
}

static op *op_new(op_fn fn) {
  op *o = calloc(1, sizeof(*o));
  if (!o)
    die("out of memory for an operation");
  o->fn = fn;
  return o;
}

/* Work on a stream must be issued with the stream's device current. */
static int stream_ok(fstream *s) {
  cfg();
  return s && s->dev == cur_dev;
}

/* ---- events ---- */
int gak_event_create(gak_event *out, int timing) {
  fevent *e = calloc(1, sizeof(*e));
  *out = (gak_event)e;
  if (!e)
    return fail(GAK_ENOMEM);
  e->timing = timing;
  return 0;
}
int gak_event_destroy(gak_event ge) {
  free(ge);
  return 0;
}
static void op_record(op *o) {
  fevent *e = o->ev;
  pthread_mutex_lock(&o->st->mu);
  e->err = o->st->err;
  pthread_mutex_unlock(&o->st->mu);
  clock_gettime(CLOCK_MONOTONIC, &e->t);
}
int gak_event_record(gak_event ge, gak_stream gs) {
  fevent *e = (fevent *)ge;
  fstream *s = (fstream *)gs;
  if (!e || !stream_ok(s))
    return fail(GAK_EOTHER);
  op *o = op_new(op_record);
  o->ev = e;
  enqueue(s, o);
  return 0;
}
int gak_event_query(gak_event ge) {
  fevent *e = (fevent *)ge;
  if (!e->st)
    return 0;                     /* never recorded: complete, as in CUDA */
  pthread_mutex_lock(&e->st->mu); /* e->st: written by the recording thread */
  int done = e->st->done >= e->seq, err = e->err;
  pthread_mutex_unlock(&e->st->mu);
  if (!done)
    return GAK_ENOTREADY;
  return err ? fail(err) : 0;
}
int gak_event_sync(gak_event ge) {
  fevent *e = (fevent *)ge;
  if (!e->st)
    return 0;
  wait_for(e->st, e->seq);
  return gak_event_query(ge);
}
int gak_event_elapsed(float *ms, gak_event a, gak_event b) {
  fevent *x = (fevent *)a, *y = (fevent *)b;
  if (!x->timing || !y->timing || !x->st || !y->st)
    return fail(GAK_EOTHER);
  *ms = (float)((y->t.tv_sec - x->t.tv_sec) * 1e3 +
                (y->t.tv_nsec - x->t.tv_nsec) / 1e6);
  return 0;
}

/* ---- copies ---- */
static void op_copy(op *o) { memcpy(o->a, o->b, o->n); }
int gak_memcpy_h2d(void *d, const void *h, size_t n, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s))
    return fail(GAK_EOTHER);
  dev_check(d, n, s->dev, "gak_memcpy_h2d destination");
  op *o = op_new(op_copy);
  o->a = d;
  o->b = (void *)h;
  o->n = n;
  enqueue(s, o);
  return 0;
}
int gak_memcpy_d2d(void *d, const void *src, size_t n, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s))
    return fail(GAK_EOTHER);
  dev_check(d, n, s->dev, "gak_memcpy_d2d destination");
  dev_check(src, n, s->dev, "gak_memcpy_d2d source");
  op *o = op_new(op_copy);
  o->a = d;
  o->b = (void *)src;
  o->n = n;
  enqueue(s, o);
  return 0;
}
int gak_memcpy_d2h(void *h, const void *d, size_t n, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s))
    return fail(GAK_EOTHER);
  dev_check(d, n, s->dev, "gak_memcpy_d2h source");
  op *o = op_new(op_copy);
  o->a = h;
  o->b = (void *)d;
  o->n = n;
  enqueue(s, o);
  return 0;
}

/* ---- kernels ---- */

/* Does this kernel fault (GPUAGG_FAKE_KERNEL_FAULT)?  Then its output is
** garbage and the stream carries the error until a sync reports it. */
static int kernel_faults(op *o, void *out, size_t bytes) {
  int64_t k = __atomic_add_fetch(&nkernels, 1, __ATOMIC_RELAXED);
  for (int i = 0; i < nkfaults; i++)
    if (kfaults[i] == k) {
      memset(out, 0x5a, bytes);
      pthread_mutex_lock(&o->st->mu);
      o->st->err = GAK_EKERNEL;
      pthread_mutex_unlock(&o->st->mu);
      return 1;
    }
  return 0;
}

static int bit(const uint64_t *isint, int64_t i) {
  return (int)((isint[i >> 6] >> (i & 63)) & 1);
}

size_t gak_scratch_bytes(int64_t n) {
  (void)n;
  return 64;
}

/* Four interleaved lanes, digits added unnormalised (rule 3). */
static void op_sum(op *o) {
  ga_sum_partial *out = o->c;
  if (kernel_faults(o, out, sizeof(*out)))
    return;
  const uint64_t *v = o->a, *isint = o->b;
  ga_sum_partial lane[4];
  for (int l = 0; l < 4; l++)
    ga_sum_init(&lane[l]);
  for (int64_t i = 0; i < o->m; i++) {
    int is_int = o->layout == GA_LAYOUT_INT ||
                 (o->layout == GA_LAYOUT_MIXED && bit(isint, i));
    if (is_int)
      ga_sum_add_int(&lane[i & 3], (int64_t)v[i], 1);
    else
      ga_sum_add_real(&lane[i & 3], ga_bitsd((int64_t)v[i]), 1);
  }
  memset(out, 0, sizeof(*out));
  for (int l = 0; l < 4; l++) {
    for (int d = 0; d < GA_XACC_DIGITS; d++)
      out->acc[d] += lane[l].acc[d];
    out->ilo += lane[l].ilo;
    out->ihi += lane[l].ihi;
    out->itop += lane[l].itop;
    out->nint += lane[l].nint;
    out->nreal += lane[l].nreal;
    out->npinf += lane[l].npinf;
    out->nninf += lane[l].nninf;
    out->nnan += lane[l].nnan;
  }
}

int gak_sum(const uint64_t *d_vals, const uint64_t *d_isint, int64_t n,
            int layout, ga_sum_partial *d_out, void *d_scratch, gak_stream gs) {
  fstream *s = (fstream *)gs;
  (void)d_scratch;
  if (!stream_ok(s) || n < 0 || layout < GA_LAYOUT_INT ||
      layout > GA_LAYOUT_MIXED)
    return fail(GAK_EOTHER);
  dev_check(d_vals, (size_t)n * 8, s->dev, "gak_sum values");
  if (layout == GA_LAYOUT_MIXED)
    dev_check(d_isint, (size_t)(n + 63) / 64 * 8, s->dev, "gak_sum bitmap");
  dev_check(d_out, sizeof(*d_out), s->dev, "gak_sum output");
  op *o = op_new(op_sum);
  o->a = (void *)d_vals;
  o->b = (void *)d_isint;
  o->c = d_out;
  o->m = n;
  o->layout = layout;
  enqueue(s, o);
  return 0;
}

/* max/min with the first occurrence, written apart from
 *engine/reduce/cpu_reduce.c
 ** so that the two check each other. */
static void op_best(op *o) {
  ga_best_partial *out = o->c;
  if (kernel_faults(o, out, sizeof(*out)))
    return;
  const uint64_t *v = o->a, *isint = o->b;
  ga_best_partial r = {GA_KIND_NONE, 0, 0, 0};
  for (int64_t i = 0; i < o->m; i++) {
    int kind = (o->layout == GA_LAYOUT_INT ||
                (o->layout == GA_LAYOUT_MIXED && bit(isint, i)))
                   ? GA_KIND_INT
                   : GA_KIND_REAL;
    int c = r.kind == GA_KIND_NONE
                ? 0
                : ga_num_cmp(kind, (int64_t)v[i], r.kind, r.bits);
    if (o->flag)
      c = -c;
    if (r.kind == GA_KIND_NONE || c > 0) {
      r.kind = kind;
      r.bits = (int64_t)v[i];
      r.idx = i;
    }
  }
  *out = r;
}

/* Issue 39: gak_var's twin.  The kernel adds each value's exact pieces
** (TwoSum residuals, error-free squares, 128-bit integer squares) into the
** same digits; the digits' value is the same, so the twin adds the values
** exactly with engine/reduce/xvar.c in four lanes, as op_sum does, and
** writes the lanes' digits summed (unnormalised, as the kernel's are). */
static void op_var(op *o) {
  ga_sum_partial *out = o->c;
  int64_t *sq = o->d;
  if (kernel_faults(o, out, sizeof(*out)))
    return;
  const uint64_t *v = o->a, *isint = o->b;
  static __thread ga_var_partial lane[4];
  for (int l = 0; l < 4; l++)
    ga_var_init(&lane[l]);
  for (int64_t i = 0; i < o->m; i++) {
    int is_int = o->layout == GA_LAYOUT_INT ||
                 (o->layout == GA_LAYOUT_MIXED && bit(isint, i));
    if (is_int)
      ga_var_add_int(&lane[i & 3], (int64_t)v[i], 1);
    else
      ga_var_add_real(&lane[i & 3], ga_bitsd((int64_t)v[i]), 1);
  }
  memset(out, 0, sizeof(*out));
  memset(sq, 0, sizeof(int64_t) * GA_XSQ_DIGITS);
  for (int l = 0; l < 4; l++) {
    ga_var_normalize(&lane[l]);
    ga_sum_partial *p = &lane[l].sum;
    for (int d = 0; d < GA_XACC_DIGITS; d++)
      out->acc[d] += p->acc[d];
    for (int d = 0; d < GA_XSQ_DIGITS; d++)
      sq[d] += lane[l].sq[d];
    out->ilo += p->ilo;
    out->ihi += p->ihi;
    out->itop += p->itop;
    out->nint += p->nint;
    out->nreal += p->nreal;
    out->npinf += p->npinf;
    out->nninf += p->nninf;
    out->nnan += p->nnan;
  }
}

int gak_var(const uint64_t *d_vals, const uint64_t *d_isint, int64_t n,
            int layout, ga_sum_partial *d_sum, int64_t *d_sq, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || n < 0 || n > GA_XACC_SAFE_ADDS ||
      layout < GA_LAYOUT_INT || layout > GA_LAYOUT_MIXED)
    return fail(GAK_EOTHER);
  dev_check(d_vals, (size_t)n * 8, s->dev, "gak_var values");
  if (layout == GA_LAYOUT_MIXED)
    dev_check(d_isint, (size_t)(n + 63) / 64 * 8, s->dev, "gak_var bitmap");
  dev_check(d_sum, sizeof(*d_sum), s->dev, "gak_var output");
  dev_check(d_sq, sizeof(int64_t) * GA_XSQ_DIGITS, s->dev, "gak_var squares");
  op *o = op_new(op_var);
  o->a = (void *)d_vals;
  o->b = (void *)d_isint;
  o->c = d_sum;
  o->d = d_sq;
  o->m = n;
  o->layout = layout;
  enqueue(s, o);
  return 0;
}

int gak_best(const uint64_t *d_vals, const uint64_t *d_isint, int64_t n,
             int layout, int want_min, ga_best_partial *d_out, void *d_scratch,
             gak_stream gs) {
  fstream *s = (fstream *)gs;
  (void)d_scratch;
  if (!stream_ok(s) || n < 0 || layout < GA_LAYOUT_INT ||
      layout > GA_LAYOUT_MIXED)
    return fail(GAK_EOTHER);
  dev_check(d_vals, (size_t)n * 8, s->dev, "gak_best values");
  if (layout == GA_LAYOUT_MIXED)
    dev_check(d_isint, (size_t)(n + 63) / 64 * 8, s->dev, "gak_best bitmap");
  dev_check(d_out, sizeof(*d_out), s->dev, "gak_best output");
  op *o = op_new(op_best);
  o->a = (void *)d_vals;
  o->b = (void *)d_isint;
  o->c = d_out;
  o->m = n;
  o->layout = layout;
  o->flag = want_min;
  enqueue(s, o);
  return 0;
}

static void op_add(op *o) {
  double *c = o->c;
  const double *a = o->a, *b = o->b;
  if (kernel_faults(o, c, (size_t)o->m * 8))
    return;
  for (int64_t i = 0; i < o->m; i++)
    c[i] = a[i] + b[i];
}

int gak_matadd(const double *d_a, const double *d_b, double *d_c, int64_t n,
               gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || n < 0)
    return fail(GAK_EOTHER);
  dev_check(d_a, (size_t)n * 8, s->dev, "gak_matadd a");
  dev_check(d_b, (size_t)n * 8, s->dev, "gak_matadd b");
  dev_check(d_c, (size_t)n * 8, s->dev, "gak_matadd c");
  op *o = op_new(op_add);
  o->a = (void *)d_a;
  o->b = (void *)d_b;
  o->c = d_c;
  o->m = n;
  enqueue(s, o);
  return 0;
}

int gak_matadd_2d(const double *d_a, const double *d_b, double *d_c,
                  int64_t rows, int64_t cols, gak_stream gs) {
  return gak_matadd(d_a, d_b, d_c, rows * cols, gs);
}

/* ---- the column cache (kernels/cache.cu's functions, on the CPU) ----
**
** Written apart from engine/cache/cache_host.c so that the two check each
*other:
** numbers compare as long double (exact for int64 and double on x86-64,
** where it has a 64-bit mantissa), the sort is a counting sort, slices sum
** in four lanes like op_sum, and max/min keep the first occurrence by
** position.  Every device pointer is bounds-checked at enqueue time. */

static int fk_bit64(const uint64_t *w, int64_t i) {
  return (int)((w[i >> 6] >> (i & 63)) & 1);
}

static long double fk_num(const gak_ccol *c, int64_t i) {
  uint64_t v = c->vals[i];
  if (fk_bit64(c->isint, i))
    return (long double)(int64_t)v;
  double d;
  memcpy(&d, &v, 8);
  return (long double)d;
}

static long double fk_lit(const gak_clit *l) {
  if (l->kind == GA_KIND_INT)
    return (long double)l->bits;
  double d;
  memcpy(&d, &l->bits, 8);
  return (long double)d;
}

static void check_col(const gak_ccol *c, int64_t n, int dev, const char *w) {
  dev_check(c->vals, (size_t)n * 8, dev, w);
  dev_check(c->isint, (size_t)(n + 63) / 64 * 8, dev, w);
  dev_check(c->notnull, (size_t)(n + 63) / 64 * 8, dev, w);
}

typedef struct fk_filter {
  gak_cfilter f;
} fk_filter;

static void op_cfilter(op *o) {
  const gak_cfilter *f = &((fk_filter *)o->extra)->f;
  uint32_t *sel = o->c;
  int64_t n = o->m;
  if (kernel_faults(o, sel, (size_t)(n + 31) / 32 * 4))
    return;
  memset(sel, 0, (size_t)(n + 31) / 32 * 4);
  for (int64_t i = 0; i < n; i++) {
    int pass = 1;
    for (int t = 0; pass && t < f->nterms; t++) {
      const gak_cterm *tm = &f->terms[t];
      const gak_ccol *c = &f->cols[tm->col];
      int nn = fk_bit64(c->notnull, i);
      if (tm->op == GAK_CMP_ISNULL) {
        pass = !nn;
        continue;
      }
      if (tm->op == GAK_CMP_NOTNULL) {
        pass = nn;
        continue;
      }
      if (!nn) {
        pass = 0;
        continue;
      }
      long double v = fk_num(c, i);
      if (tm->op == GAK_CMP_IN) {
        pass = 0;
        for (int k = 0; k < tm->nlit; k++)
          if (v == fk_lit(&f->lits[tm->lit + k]))
            pass = 1;
        continue;
      }
      long double l = fk_lit(&f->lits[tm->lit]);
      pass = tm->op == GAK_CMP_EQ   ? v == l
             : tm->op == GAK_CMP_NE ? v != l
             : tm->op == GAK_CMP_LT ? v < l
             : tm->op == GAK_CMP_LE ? v <= l
             : tm->op == GAK_CMP_GT ? v > l
             : tm->op == GAK_CMP_GE ? v >= l
                                    : 0;
    }
    if (pass)
      sel[i >> 5] |= 1u << (i & 31);
  }
}

int gak_cache_filter(const gak_cfilter *f, int64_t n, uint32_t *d_sel,
                     gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || n < 0 || f->nterms < 0 ||
      f->nterms > GAK_CACHE_MAX_TERMS)
    return fail(GAK_EOTHER);
  for (int t = 0; t < f->nterms; t++) {
    const gak_cterm *tm = &f->terms[t];
    if (tm->col < 0 || tm->col >= GAK_CACHE_MAX_TERMS || tm->op < 0 ||
        tm->op > GAK_CMP_IN ||
        (tm->op < GAK_CMP_ISNULL && (tm->lit < 0 || tm->lit >= f->nlits)) ||
        (tm->op == GAK_CMP_IN &&
         (tm->nlit < 0 || tm->lit < 0 || tm->lit + tm->nlit > f->nlits)))
      return fail(GAK_EOTHER); /* IN an empty list (nlit 0) is the term no
                               ** row passes (planner/cache_shape.c rule 8),
                               ** which the kernel takes too */
    check_col(&f->cols[tm->col], n, s->dev, "gak_cache_filter column");
  }
  dev_check(d_sel, (size_t)(n + 31) / 32 * 4, s->dev, "gak_cache_filter sel");
  op *o = op_new(op_cfilter);
  fk_filter *x = malloc(sizeof(*x));
  if (!x)
    die("out of memory for an operation");
  x->f = *f;
  o->extra = x;
  o->c = d_sel;
  o->m = n;
  enqueue(s, o);
  return 0;
}

size_t gak_cache_compact_scratch(int64_t n) {
  (void)n;
  return 16;
}

static void op_compact(op *o) {
  const uint32_t *sel = o->a;
  uint32_t *idx = o->b;
  int64_t *count = o->c, n = o->m, k = 0;
  if (kernel_faults(o, count, 8))
    return;
  for (int64_t i = 0; i < n; i++)
    if ((sel[i >> 5] >> (i & 31)) & 1)
      idx[k++] = (uint32_t)i;
  *count = k;
}

int gak_cache_compact(const uint32_t *d_sel, int64_t n, uint32_t *d_idx,
                      int64_t *d_count, void *d_scratch, gak_stream gs) {
  fstream *s = (fstream *)gs;
  (void)d_scratch;
  if (!stream_ok(s) || n < 0 || n > 0xffffffffll)
    return fail(GAK_EOTHER);
  dev_check(d_sel, (size_t)(n + 31) / 32 * 4, s->dev, "gak_cache_compact sel");
  dev_check(d_idx, (size_t)n * 4, s->dev, "gak_cache_compact idx");
  dev_check(d_count, 8, s->dev, "gak_cache_compact count");
  op *o = op_new(op_compact);
  o->a = (void *)d_sel;
  o->b = d_idx;
  o->c = d_count;
  o->m = n;
  enqueue(s, o);
  return 0;
}

size_t gak_cache_dict_scratch(int64_t n) {
  (void)n;
  return 16;
}

typedef struct fk_col {
  gak_ccol c;
} fk_col;

static int fk_cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* An int64 canonical key of a non-NULL value: 1 and *k, or 0. */
static int fk_canon(const gak_ccol *c, int64_t i, int64_t *k) {
  if (fk_bit64(c->isint, i)) {
    *k = (int64_t)c->vals[i];
    return 1;
  }
  double d;
  memcpy(&d, &c->vals[i], 8);
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
    return 0;
  int64_t t = (int64_t)d;
  if ((long double)t != (long double)d)
    return 0;
  *k = t;
  return 1;
}

static void op_dict(op *o) {
  const gak_ccol *c = &((fk_col *)o->extra)->c;
  int64_t *dict = o->a, *nd = o->c, n = o->m, k = 0;
  if (kernel_faults(o, nd, 8))
    return;
  for (int64_t i = 0; i < n; i++) {
    if (!fk_bit64(c->notnull, i))
      continue;
    if (k == o->k) {
      *nd = -2; /* more non-NULL values than the caller said */
      return;
    }
    if (!fk_canon(c, i, &dict[k])) {
      *nd = -1;
      return;
    }
    k++;
  }
  if (k != o->k) {
    *nd = -2;
    return;
  }
  qsort(dict, (size_t)k, 8, fk_cmp_i64);
  int64_t u = 0;
  for (int64_t i = 0; i < k; i++)
    if (i == 0 || dict[i] != dict[u - 1])
      dict[u++] = dict[i];
  *nd = u;
}

int gak_cache_dict(gak_ccol key, int64_t n, int64_t nn, int64_t *d_dict,
                   int64_t *d_ndict, void *d_scratch, gak_stream gs) {
  fstream *s = (fstream *)gs;
  (void)d_scratch;
  if (!stream_ok(s) || n < 0 || nn < 0 || nn > n)
    return fail(GAK_EOTHER);
  check_col(&key, n, s->dev, "gak_cache_dict key");
  dev_check(d_dict, (size_t)(nn ? nn : 1) * 8, s->dev, "gak_cache_dict dict");
  dev_check(d_ndict, 8, s->dev, "gak_cache_dict count");
  op *o = op_new(op_dict);
  fk_col *x = malloc(sizeof(*x));
  if (!x)
    die("out of memory for an operation");
  x->c = key;
  o->extra = x;
  o->a = d_dict;
  o->c = d_ndict;
  o->m = n;
  o->k = nn;
  enqueue(s, o);
  return 0;
}

size_t gak_cache_sort_scratch(int64_t m) {
  (void)m;
  return 16;
}

typedef struct fk_sort {
  const uint32_t *gid, *idx;
  uint32_t *gid_out, *idx_out;
} fk_sort;

/* A stable counting sort. */
static void op_csort(op *o) {
  fk_sort *x = o->extra;
  int64_t m = o->m, ng = (int64_t)1 << o->k;
  if (kernel_faults(o, x->gid_out, (size_t)m * 4))
    return;
  int64_t *cnt = calloc((size_t)ng + 1, sizeof(int64_t));
  if (!cnt)
    die("out of memory in the sort");
  for (int64_t j = 0; j < m; j++) {
    if ((int64_t)x->gid[j] >= ng)
      die("gak_cache_sort: a gid past 2^bits");
    cnt[x->gid[j] + 1]++;
  }
  for (int64_t g = 0; g < ng; g++)
    cnt[g + 1] += cnt[g];
  for (int64_t j = 0; j < m; j++) {
    int64_t p = cnt[x->gid[j]]++;
    x->gid_out[p] = x->gid[j];
    x->idx_out[p] = x->idx[j];
  }
  free(cnt);
}

int gak_cache_sort(const uint32_t *d_gid, const uint32_t *d_idx,
                   uint32_t *d_gid_out, uint32_t *d_idx_out, int64_t m,
                   int bits, void *d_scratch, gak_stream gs) {
  fstream *s = (fstream *)gs;
  (void)d_scratch;
  if (!stream_ok(s) || m < 0 || bits < 1 || bits > 32)
    return fail(GAK_EOTHER);
  dev_check(d_gid, (size_t)m * 4, s->dev, "gak_cache_sort gid");
  dev_check(d_idx, (size_t)m * 4, s->dev, "gak_cache_sort idx");
  dev_check(d_gid_out, (size_t)m * 4, s->dev, "gak_cache_sort gid_out");
  dev_check(d_idx_out, (size_t)m * 4, s->dev, "gak_cache_sort idx_out");
  op *o = op_new(op_csort);
  fk_sort *x = malloc(sizeof(*x));
  if (!x)
    die("out of memory for an operation");
  x->gid = d_gid;
  x->idx = d_idx;
  x->gid_out = d_gid_out;
  x->idx_out = d_idx_out;
  o->extra = x;
  o->m = m;
  o->k = bits;
  enqueue(s, o);
  return 0;
}

static void op_remap(op *o) {
  uint64_t *vals = o->a;
  const uint64_t *nn = o->b;
  const uint32_t *map = o->c;
  for (int64_t i = 0; i < o->m; i++)
    if ((nn[i >> 6] >> (i & 63)) & 1) {
      if (vals[i] >= (uint64_t)o->k)
        die("gak_cache_remap: a word past the map");
      vals[i] = map[vals[i]];
    }
}

int gak_cache_remap(uint64_t *d_vals, const uint64_t *d_notnull, int64_t n,
                    const uint32_t *d_map, int64_t nmap, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || n < 0 || nmap < 0)
    return fail(GAK_EOTHER);
  if (n == 0)
    return 0;
  dev_check(d_vals, (size_t)n * 8, s->dev, "gak_cache_remap vals");
  dev_check(d_notnull, (size_t)((n + 63) / 64) * 8, s->dev,
            "gak_cache_remap notnull");
  if (nmap)
    dev_check(d_map, (size_t)nmap * 4, s->dev, "gak_cache_remap map");
  op *o = op_new(op_remap);
  o->a = d_vals;
  o->b = (void *)d_notnull;
  o->c = (void *)d_map;
  o->m = n;
  o->k = nmap;
  enqueue(s, o);
  return 0;
}

static void op_bounds(op *o) {
  const uint32_t *gid = o->a;
  uint32_t *start = o->b, *end = o->c;
  int64_t m = o->m, ng = o->k;
  if (kernel_faults(o, start, (size_t)ng * 4))
    return;
  memset(start, 0, (size_t)ng * 4);
  memset(end, 0, (size_t)ng * 4);
  for (int64_t j = 0; j < m; j++) {
    if ((int64_t)gid[j] >= ng)
      die("gak_cache_bounds: a gid past ngroups");
    if (j == 0 || gid[j - 1] != gid[j])
      start[gid[j]] = (uint32_t)j;
    end[gid[j]] = (uint32_t)(j + 1);
  }
}

int gak_cache_bounds(const uint32_t *d_gid, int64_t m, int64_t ngroups,
                     uint32_t *d_start, uint32_t *d_end, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || m < 0 || ngroups < 1)
    return fail(GAK_EOTHER);
  dev_check(d_gid, (size_t)m * 4, s->dev, "gak_cache_bounds gid");
  dev_check(d_start, (size_t)ngroups * 4, s->dev, "gak_cache_bounds start");
  dev_check(d_end, (size_t)ngroups * 4, s->dev, "gak_cache_bounds end");
  op *o = op_new(op_bounds);
  o->a = (void *)d_gid;
  o->b = d_start;
  o->c = d_end;
  o->m = m;
  o->k = ngroups;
  enqueue(s, o);
  return 0;
}

static void op_group_counts(op *o) {
  const uint32_t *gid = o->a, *sel = o->c;
  uint32_t *counts = o->b, *firsts = o->d;
  int64_t m = o->m, ng = o->k;
  if (kernel_faults(o, counts, (size_t)ng * 4))
    return;
  memset(counts, 0, (size_t)ng * 4);
  if (firsts)
    memset(firsts, 0xff, (size_t)ng * 4);
  for (int64_t j = 0; j < m; j++)
    if ((int64_t)gid[j] < ng && (!sel || ((sel[j >> 5] >> (j & 31)) & 1))) {
      if (firsts && !counts[gid[j]])
        firsts[gid[j]] = (uint32_t)j;
      counts[gid[j]]++;
    }
}

int gak_cache_group_counts(const uint32_t *d_gid, const uint32_t *d_sel,
                           int64_t m, int64_t ngroups, uint32_t *d_counts,
                           uint32_t *d_firsts, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || m < 0 || m > 0xffffffffll || ngroups < 1 ||
      ngroups > GAK_CACHE_COUNT_MAX)
    return fail(GAK_EOTHER);
  dev_check(d_gid, (size_t)(m ? m : 1) * 4, s->dev,
            "gak_cache_group_counts gid");
  dev_check(d_counts, (size_t)ngroups * 4, s->dev,
            "gak_cache_group_counts counts");
  if (d_sel)
    dev_check(d_sel, (size_t)(m + 31) / 32 * 4, s->dev,
              "gak_cache_group_counts sel");
  op *o = op_new(op_group_counts);
  o->a = (void *)d_gid;
  o->b = d_counts;
  o->c = (void *)d_sel;
  o->d = d_firsts;
  if (d_firsts)
    dev_check(d_firsts, (size_t)ngroups * 4, s->dev,
              "gak_cache_group_counts firsts");
  o->m = m;
  o->k = ngroups;
  enqueue(s, o);
  return 0;
}

/* Best of (value, position): a strictly better value replaces, so the first
** position wins among equals (positions are visited in increasing order). */
static void fk_best(ga_best_partial *b, const gak_ccol *c, int64_t i,
                    int want_min) {
  long double v = fk_num(c, i), cur;
  if (b->kind != GA_KIND_NONE) {
    if (b->kind == GA_KIND_INT)
      cur = (long double)b->bits;
    else {
      double d;
      memcpy(&d, &b->bits, 8);
      cur = (long double)d;
    }
    if (want_min ? !(v < cur) : !(v > cur))
      return;
  }
  b->kind = fk_bit64(c->isint, i) ? GA_KIND_INT : GA_KIND_REAL;
  b->bits = (int64_t)c->vals[i];
  b->idx = i;
}

/* Carries out of digits 0..N-2 into the next, as the kernel's reduce does
** at the end of a slice. */
static void fk_carry(ga_sum_partial *p) {
  for (int d = 0; d < GA_XACC_DIGITS - 1; d++) {
    int64_t c = p->acc[d] >> 32;
    p->acc[d] -= c * ((int64_t)1 << 32);
    p->acc[d + 1] += c;
  }
  int64_t c = p->ilo >> 32;
  p->ilo -= c * ((int64_t)1 << 32);
  p->ihi += c;
  c = p->ihi >> 32;
  p->ihi -= c * ((int64_t)1 << 32);
  p->itop += c;
}

typedef struct fk_reduce {
  gak_ccol x;
  const uint32_t *idx, *gid, *sel;
  const gak_cslice *sl;
  gak_cstate *out;
} fk_reduce;

static void op_creduce(op *o) {
  fk_reduce *r = o->extra;
  int64_t ns = o->m;
  if (kernel_faults(o, r->out, sizeof(gak_cstate) * (size_t)ns))
    return;
  for (int64_t k = 0; k < ns; k++) {
    const gak_cslice *sl = &r->sl[k];
    gak_cstate *st = &r->out[k];
    ga_sum_partial lane[4];
    memset(st, 0, sizeof(*st));
    for (int l = 0; l < 4; l++)
      ga_sum_init(&lane[l]);
    st->rows = r->gid ? 0 : sl->len;
    st->first = r->gid ? INT64_MAX : r->idx ? r->idx[sl->start] : sl->start;
    for (uint32_t p = 0; p < sl->len; p++) {
      uint32_t at = sl->start + p; /* few groups: another group's row */
      if (r->gid && (r->gid[at] != sl->group ||
                     (r->sel && !((r->sel[at >> 5] >> (at & 31)) & 1))))
        continue;
      int64_t i = r->idx ? r->idx[sl->start + p] : (int64_t)sl->start + p;
      if (r->gid && !st->rows++)
        st->first = i;
      if (!fk_bit64(r->x.notnull, i))
        continue;
      st->count++;
      int64_t v = (int64_t)r->x.vals[i];
      if (fk_bit64(r->x.isint, i))
        ga_sum_add_int(&lane[p & 3], v, 1);
      else
        ga_sum_add_real(&lane[p & 3], ga_bitsd(v), 1);
      fk_best(&st->max, &r->x, i, 0);
      fk_best(&st->min, &r->x, i, 1);
    }
    for (int l = 0; l < 4; l++) {
      for (int d = 0; d < GA_XACC_DIGITS; d++)
        st->sum.acc[d] += lane[l].acc[d];
      st->sum.ilo += lane[l].ilo;
      st->sum.ihi += lane[l].ihi;
      st->sum.itop += lane[l].itop;
      st->sum.nint += lane[l].nint;
      st->sum.nreal += lane[l].nreal;
      st->sum.npinf += lane[l].npinf;
      st->sum.nninf += lane[l].nninf;
      st->sum.nnan += lane[l].nnan;
    }
    fk_carry(&st->sum);
  }
}

int gak_cache_reduce(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_gid,
                     const uint32_t *d_sel, const gak_cslice *d_slices,
                     int64_t nslices, gak_cstate *d_out, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || nslices < 0)
    return fail(GAK_EOTHER);
  dev_check(x.vals, 8, s->dev, "gak_cache_reduce x");
  dev_check(d_slices, sizeof(gak_cslice) * (size_t)nslices, s->dev,
            "gak_cache_reduce slices");
  dev_check(d_out, sizeof(gak_cstate) * (size_t)nslices, s->dev,
            "gak_cache_reduce out");
  if (d_idx)
    dev_check(d_idx, 4, s->dev, "gak_cache_reduce idx");
  if (d_gid)
    dev_check(d_gid, 4, s->dev, "gak_cache_reduce gid");
  if (d_sel)
    dev_check(d_sel, 4, s->dev, "gak_cache_reduce sel");
  op *o = op_new(op_creduce);
  fk_reduce *r = malloc(sizeof(*r));
  if (!r)
    die("out of memory for an operation");
  r->x = x;
  r->idx = d_idx;
  r->gid = d_gid;
  r->sel = d_gid ? d_sel : NULL;
  r->sl = d_slices;
  r->out = d_out;
  o->extra = r;
  o->m = nslices;
  enqueue(s, o);
  return 0;
}

/* ---- ORDER BY an aggregate ... LIMIT k (kernels/cache_topk.cu) ---- */

typedef struct fk_order {
  gak_ccol x;
  const uint32_t *idx, *start, *end;
  int mode, desc;
  uint64_t *key;
  uint32_t *flag;
} fk_order;

/* a double's key, as cache_topk.cu's rule 3 */
static uint64_t fk_real_key(double d) {
  uint64_t u = (uint64_t)ga_dbits(d == 0.0 ? 0.0 : d);
  return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}

/* gak_cache_group_order: each group's exact sum by the engine's own
** accumulator, rounded once (ga_sum_round); the same declines */
static void op_group_order(op *o) {
  fk_order *r = o->extra;
  int64_t ng = o->m;
  int want_int = !(r->mode & GAK_ORDER_REAL), total = r->mode & GAK_ORDER_TOTAL;
  if (kernel_faults(o, r->key, (size_t)ng * 8))
    return;
  for (int64_t g = 0; g < ng; g++) {
    uint32_t a = r->start[g], b = r->end[g];
    if (a >= b) {
      r->key[g] = 0;
      continue;
    }
    int bad = 0;
    int64_t isum = 0, nn = 0;
    ga_sum_partial sum;
    ga_sum_init(&sum);
    for (uint32_t p = a; p < b; p++) {
      int64_t i = r->idx ? (int64_t)r->idx[p] : (int64_t)p;
      if (!fk_bit64(r->x.notnull, i))
        continue;
      nn++;
      int64_t v = (int64_t)r->x.vals[i];
      if (fk_bit64(r->x.isint, i) != want_int) {
        bad = 1;
      } else if (want_int) {
        if (__builtin_add_overflow(isum, v, &isum) ||
            isum > ((int64_t)1 << 62) || isum < -((int64_t)1 << 62))
          bad = 1;
      } else {
        double d = ga_bitsd(v);
        if (d != d || d - d != 0)
          bad = 1; /* NaN or an infinity */
        else
          ga_sum_add_real(&sum, d, 1);
      }
    }
    int null = nn == 0 && !total;
    double d = 0;
    if (!bad && !null) {
      d = want_int ? (double)isum : ga_sum_round(&sum);
      if (d - d != 0 || (d != 0 && d < 2.2250738585072014e-308 &&
                         d > -2.2250738585072014e-308))
        bad = 1; /* past the largest, or subnormal */
    }
    if (bad) {
      __atomic_or_fetch(r->flag, 1u, __ATOMIC_RELAXED);
      r->key[g] = 0;
      continue;
    }
    uint64_t k = null                 ? 1
                 : want_int && !total ? ((uint64_t)isum ^ 0x8000000000000000ull)
                                      : fk_real_key(d);
    r->key[g] = r->desc ? k : ~k;
  }
}

int gak_cache_group_order(gak_ccol x, const uint32_t *d_idx,
                          const uint32_t *d_start, const uint32_t *d_end,
                          int64_t ngroups, int mode, int desc, uint64_t *d_key,
                          uint32_t *d_flag, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || ngroups < 0 || mode < 0 ||
      mode > (GAK_ORDER_REAL | GAK_ORDER_TOTAL))
    return fail(GAK_EOTHER);
  if (ngroups == 0)
    return 0;
  dev_check(x.vals, 8, s->dev, "gak_cache_group_order x");
  dev_check(d_start, (size_t)ngroups * 4, s->dev,
            "gak_cache_group_order start");
  dev_check(d_end, (size_t)ngroups * 4, s->dev, "gak_cache_group_order end");
  dev_check(d_key, (size_t)ngroups * 8, s->dev, "gak_cache_group_order key");
  dev_check(d_flag, 4, s->dev, "gak_cache_group_order flag");
  op *o = op_new(op_group_order);
  fk_order *r = malloc(sizeof(*r));
  if (!r)
    die("out of memory for an operation");
  r->x = x;
  r->idx = d_idx;
  r->start = d_start;
  r->end = d_end;
  r->mode = mode;
  r->desc = desc;
  r->key = d_key;
  r->flag = d_flag;
  o->extra = r;
  o->m = ngroups;
  enqueue(s, o);
  return 0;
}

/* gak_cache_group_count (kernels/cache_many.cu): a group's count(*) from
** its bounds, or count(x) from its rows' bits, as the key */
typedef struct fk_count {
  const uint64_t *notnull;
  const uint32_t *idx, *start, *end;
  int desc;
  uint64_t *key;
} fk_count;

static void op_group_count(op *o) {
  fk_count *r = o->extra;
  if (kernel_faults(o, r->key, (size_t)o->m * 8))
    return;
  for (int64_t g = 0; g < o->m; g++) {
    uint32_t a = r->start[g], b = r->end[g];
    if (a >= b) {
      r->key[g] = 0;
      continue;
    }
    uint64_t n = b - a;
    if (r->notnull) {
      n = 0;
      for (uint32_t p = a; p < b; p++)
        n += fk_bit64(r->notnull, r->idx ? (int64_t)r->idx[p] : (int64_t)p);
    }
    uint64_t k = 0x8000000000000000ull | n;
    r->key[g] = r->desc ? k : ~k;
  }
}

int gak_cache_group_count(gak_ccol x, const uint32_t *d_idx,
                          const uint32_t *d_start, const uint32_t *d_end,
                          int64_t ngroups, int desc, uint64_t *d_key,
                          gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || ngroups < 0)
    return fail(GAK_EOTHER);
  if (ngroups == 0)
    return 0;
  if (x.notnull)
    dev_check(x.notnull, 8, s->dev, "gak_cache_group_count notnull");
  dev_check(d_start, (size_t)ngroups * 4, s->dev,
            "gak_cache_group_count start");
  dev_check(d_end, (size_t)ngroups * 4, s->dev, "gak_cache_group_count end");
  dev_check(d_key, (size_t)ngroups * 8, s->dev, "gak_cache_group_count key");
  op *o = op_new(op_group_count);
  fk_count *r = malloc(sizeof(*r));
  if (!r)
    die("out of memory for an operation");
  r->notnull = x.notnull;
  r->idx = d_idx;
  r->start = d_start;
  r->end = d_end;
  r->desc = desc;
  r->key = d_key;
  o->extra = r;
  o->m = ngroups;
  enqueue(s, o);
  return 0;
}

/* gak_cache_many_compact (kernels/cache_many.cu rule 4): a group's rows in
** row order, each add checked before it is made, as the kernel does. */
typedef struct fk_many {
  gak_ccol x;
  const uint32_t *idx, *bounds;
  gak_cmany *out;
  uint32_t *first, *flag;
} fk_many;

static int64_t fk_add_ck(int64_t a, int64_t b, int *bad) {
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) {
    *bad = 1;
    return a;
  }
  return a + b;
}

static void op_many_compact(op *o) {
  fk_many *r = o->extra;
  if (kernel_faults(o, r->out, (size_t)o->m * sizeof(gak_cmany)))
    return;
  for (int64_t g = 0; g < o->m; g++) {
    uint32_t a = r->bounds[2 * g], b = r->bounds[2 * g + 1];
    int64_t ni = 0, nr = 0, is = 0, rs = 0;
    int bad = 0;
    for (uint32_t p = a; p < b && !bad; p++) {
      int64_t i = r->idx ? (int64_t)r->idx[p] : (int64_t)p;
      if (!fk_bit64(r->x.notnull, i))
        continue;
      int64_t v = (int64_t)r->x.vals[i];
      if (fk_bit64(r->x.isint, i)) {
        ni++;
        is = fk_add_ck(is, v, &bad);
      } else {
        double d;
        memcpy(&d, &v, 8);
        if (!(fabs(d) < 9007199254740992.0) || d != trunc(d)) {
          bad = 1;
          break;
        }
        nr++;
        rs = fk_add_ck(rs, (int64_t)d, &bad);
      }
    }
    if (bad)
      *r->flag |= 1u;
    r->out[g].nint = ni;
    r->out[g].nreal = nr;
    r->out[g].isum = is;
    r->out[g].rsum = rs;
    if (r->first)
      r->first[g] = r->idx && a < b ? r->idx[a] : a;
  }
}

int gak_cache_many_compact(gak_ccol x, const uint32_t *d_idx,
                           const uint32_t *d_bounds, int64_t ngr,
                           gak_cmany *d_out, uint32_t *d_first,
                           uint32_t *d_flag, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || ngr < 0)
    return fail(GAK_EOTHER);
  if (ngr == 0)
    return 0;
  dev_check(x.notnull, 8, s->dev, "gak_cache_many_compact notnull");
  dev_check(d_bounds, (size_t)ngr * 8, s->dev, "gak_cache_many_compact bounds");
  dev_check(d_out, (size_t)ngr * sizeof(gak_cmany), s->dev,
            "gak_cache_many_compact out");
  dev_check(d_flag, 4, s->dev, "gak_cache_many_compact flag");
  if (d_first)
    dev_check(d_first, (size_t)ngr * 4, s->dev, "gak_cache_many_compact first");
  op *o = op_new(op_many_compact);
  fk_many *r = malloc(sizeof(*r));
  if (!r)
    die("out of memory for an operation");
  r->x = x;
  r->idx = d_idx;
  r->bounds = d_bounds;
  r->out = d_out;
  r->first = d_first;
  r->flag = d_flag;
  o->extra = r;
  o->m = ngr;
  enqueue(s, o);
  return 0;
}

size_t gak_cache_topk_scratch(int64_t ngroups) {
  return (size_t)(ngroups < 1 ? 1 : ngroups) * 12;
}

typedef struct fk_topk {
  const uint64_t *key;
  const uint32_t *start, *end;
  int64_t k, cap;
  uint32_t *ids, *bounds;
  int64_t *count;
  void *scratch;
} fk_topk;

static const uint64_t *fk_topk_keys; /* qsort's: one op at a time (mutex) */
static pthread_mutex_t fk_topk_mu = PTHREAD_MUTEX_INITIALIZER;

static int fk_topk_cmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  uint64_t kx = fk_topk_keys[x], ky = fk_topk_keys[y];
  if (kx != ky)
    return kx < ky ? 1 : -1; /* descending */
  return x < y ? -1 : x > y; /* CUB's radix sort is stable */
}

/* gak_cache_topk: a stable descending sort of the ids by key, then the
** prefix at least the k-th key (at least 1) */
static void op_topk(op *o) {
  fk_topk *r = o->extra;
  int64_t n = o->m;
  if (kernel_faults(o, r->count, 8))
    return;
  uint32_t *ids = r->scratch;
  for (int64_t j = 0; j < n; j++)
    ids[j] = (uint32_t)j;
  pthread_mutex_lock(&fk_topk_mu);
  fk_topk_keys = r->key;
  qsort(ids, (size_t)n, 4, fk_topk_cmp);
  pthread_mutex_unlock(&fk_topk_mu);
  uint64_t t = r->key[ids[(r->k < n ? r->k : n) - 1]];
  if (t == 0)
    t = 1;
  int64_t c = 0;
  while (c < n && r->key[ids[c]] >= t)
    c++;
  *r->count = c;
  for (int64_t j = 0; j < c && j < r->cap; j++) {
    r->ids[j] = ids[j];
    r->bounds[2 * j] = r->start[ids[j]];
    r->bounds[2 * j + 1] = r->end[ids[j]];
  }
}

int gak_cache_topk(const uint64_t *d_key, const uint32_t *d_start,
                   const uint32_t *d_end, int64_t ngroups, int64_t k,
                   int64_t cap, uint32_t *d_ids, uint32_t *d_bounds,
                   int64_t *d_count, void *d_scratch, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || ngroups < 1 || ngroups > 0x7fffffffll || k < 1 ||
      cap < 0)
    return fail(GAK_EOTHER);
  dev_check(d_key, (size_t)ngroups * 8, s->dev, "gak_cache_topk key");
  dev_check(d_scratch, gak_cache_topk_scratch(ngroups), s->dev,
            "gak_cache_topk scratch");
  dev_check(d_count, 8, s->dev, "gak_cache_topk count");
  if (cap)
    dev_check(d_bounds, (size_t)cap * 8, s->dev, "gak_cache_topk bounds");
  op *o = op_new(op_topk);
  fk_topk *r = malloc(sizeof(*r));
  if (!r)
    die("out of memory for an operation");
  r->key = d_key;
  r->start = d_start;
  r->end = d_end;
  r->k = k;
  r->cap = cap;
  r->ids = d_ids;
  r->bounds = d_bounds;
  r->count = d_count;
  r->scratch = d_scratch;
  o->extra = r;
  o->m = ngroups;
  enqueue(s, o);
  return 0;
}

typedef struct fk_rgroups {
  gak_ccol x;
  const uint32_t *gid, *sel;
  const gak_cslice *sl;
  gak_cgids gids;
  gak_cstate *out;
} fk_rgroups;

/* gak_cache_reduce_groups: each slice's rows once per group, in row order */
static void op_creduce_groups(op *o) {
  fk_rgroups *r = o->extra;
  int64_t ns = o->m;
  if (kernel_faults(o, r->out, sizeof(gak_cstate) * (size_t)ns * r->gids.n))
    return;
  for (uint32_t q = 0; q < r->gids.n; q++)
    for (int64_t k = 0; k < ns; k++) {
      const gak_cslice *sl = &r->sl[k];
      gak_cstate *st = &r->out[(size_t)q * (size_t)ns + (size_t)k];
      ga_sum_partial sum;
      memset(st, 0, sizeof(*st));
      ga_sum_init(&sum);
      st->first = INT64_MAX;
      for (uint32_t p = 0; p < sl->len; p++) {
        int64_t i = (int64_t)sl->start + p;
        if (r->gid[i] != r->gids.g[q] || !((r->sel[i >> 5] >> (i & 31)) & 1) ||
            !fk_bit64(r->x.notnull, i))
          continue;
        st->count++;
        int64_t v = (int64_t)r->x.vals[i];
        if (fk_bit64(r->x.isint, i))
          ga_sum_add_int(&sum, v, 1);
        else
          ga_sum_add_real(&sum, ga_bitsd(v), 1);
      }
      st->sum = sum;
      fk_carry(&st->sum);
    }
}

int gak_cache_reduce_groups(gak_ccol x, const uint32_t *d_gid,
                            const uint32_t *d_sel, const gak_cslice *d_slices,
                            int64_t nslices, const gak_cgids *gids,
                            gak_cstate *d_out, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || nslices < 0 || !gids || gids->n < 1 ||
      gids->n > GAK_CACHE_FEW || !d_sel)
    return fail(GAK_EOTHER);
  dev_check(x.vals, 8, s->dev, "gak_cache_reduce_groups x");
  dev_check(d_gid, 4, s->dev, "gak_cache_reduce_groups gid");
  dev_check(d_sel, 4, s->dev, "gak_cache_reduce_groups sel");
  dev_check(d_slices, sizeof(gak_cslice) * (size_t)nslices, s->dev,
            "gak_cache_reduce_groups slices");
  dev_check(d_out, sizeof(gak_cstate) * (size_t)nslices * gids->n, s->dev,
            "gak_cache_reduce_groups out");
  op *o = op_new(op_creduce_groups);
  fk_rgroups *r = malloc(sizeof(*r));
  if (!r)
    die("out of memory for an operation");
  r->x = x;
  r->gid = d_gid;
  r->sel = d_sel;
  r->sl = d_slices;
  r->gids = *gids;
  r->out = d_out;
  o->extra = r;
  o->m = nslices;
  enqueue(s, o);
  return 0;
}

typedef struct fk_merge {
  const gak_cstate *in;
  const gak_cgroup *gr;
  gak_ccol key;
  gak_cstate *out;
} fk_merge;

static void fk_best_merge(ga_best_partial *into, const ga_best_partial *from,
                          int want_min) {
  if (from->kind == GA_KIND_NONE)
    return;
  if (into->kind != GA_KIND_NONE) {
    long double a, b;
    double d;
    if (into->kind == GA_KIND_INT)
      a = (long double)into->bits;
    else {
      memcpy(&d, &into->bits, 8);
      a = d;
    }
    if (from->kind == GA_KIND_INT)
      b = (long double)from->bits;
    else {
      memcpy(&d, &from->bits, 8);
      b = d;
    }
    int better = want_min ? b < a : b > a;
    if (!better && !(b == a && from->idx < into->idx))
      return;
  }
  *into = *from;
}

static void op_cmerge(op *o) {
  fk_merge *r = o->extra;
  int64_t ng = o->m;
  if (kernel_faults(o, r->out, sizeof(gak_cstate) * (size_t)ng))
    return;
  for (int64_t g = 0; g < ng; g++) {
    gak_cstate *st = &r->out[g];
    memset(st, 0, sizeof(*st));
    const gak_cgroup *gr = &r->gr[g];
    for (uint32_t k = 0; k < gr->nslices; k++) {
      const gak_cstate *in = &r->in[gr->first_slice + k];
      for (int d = 0; d < GA_XACC_DIGITS; d++)
        st->sum.acc[d] += in->sum.acc[d];
      st->sum.ilo += in->sum.ilo;
      st->sum.ihi += in->sum.ihi;
      st->sum.itop += in->sum.itop;
      st->sum.nint += in->sum.nint;
      st->sum.nreal += in->sum.nreal;
      st->sum.npinf += in->sum.npinf;
      st->sum.nninf += in->sum.nninf;
      st->sum.nnan += in->sum.nnan;
      st->rows += in->rows;
      st->count += in->count;
      fk_best_merge(&st->max, &in->max, 0);
      fk_best_merge(&st->min, &in->min, 1);
      if (k == 0 || in->first < st->first)
        st->first = in->first;
    }
    st->key_kind = GA_KIND_NONE;
    if (r->key.vals && fk_bit64(r->key.notnull, st->first)) {
      st->key_kind =
          fk_bit64(r->key.isint, st->first) ? GA_KIND_INT : GA_KIND_REAL;
      st->key_bits = (int64_t)r->key.vals[st->first];
    }
  }
}

int gak_cache_merge(const gak_cstate *d_slice_states,
                    const gak_cgroup *d_groups, int64_t ngroups, gak_ccol key,
                    gak_cstate *d_out, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || ngroups < 0)
    return fail(GAK_EOTHER);
  dev_check(d_groups, sizeof(gak_cgroup) * (size_t)ngroups, s->dev,
            "gak_cache_merge groups");
  dev_check(d_out, sizeof(gak_cstate) * (size_t)ngroups, s->dev,
            "gak_cache_merge out");
  dev_check(d_slice_states, sizeof(gak_cstate), s->dev,
            "gak_cache_merge states");
  op *o = op_new(op_cmerge);
  fk_merge *r = malloc(sizeof(*r));
  if (!r)
    die("out of memory for an operation");
  r->in = d_slice_states;
  r->gr = d_groups;
  r->key = key;
  r->out = d_out;
  o->extra = r;
  o->m = ngroups;
  enqueue(s, o);
  return 0;
}

/* ---- expressions and keys (kernels/cache_expr.cu, kernels/cache.cu) ---- */

typedef struct fk_eval {
  gak_cprog p;
  const uint32_t *rows, *sel;
  uint64_t *vals, *isint, *notnull;
  uint32_t *err;
} fk_eval;

static void op_eval(op *o) {
  fk_eval *x = o->extra;
  int64_t n = o->m, nw = (n + 63) / 64;
  if (kernel_faults(o, x->vals, (size_t)n * 8))
    return;
  for (int64_t w = 0; w < nw; w++)
    x->isint[w] = x->notnull[w] = 0;
  for (int64_t i = 0; i < n; i++) { /* the kernel's interpreter itself */
    int e = 0;
    int64_t row = x->rows ? (int64_t)x->rows[i] : i;
    ga_cxr_v r = ga_cx_run(&x->p, row, &e);
    x->vals[i] = r.v;
    if (r.t != GA_CX_TNULL)
      x->notnull[i >> 6] |= 1ull << (i & 63);
    if (r.t == GA_CX_TINT)
      x->isint[i >> 6] |= 1ull << (i & 63);
    if (e && (!x->sel || ((x->sel[row >> 5] >> (row & 31)) & 1)))
      *x->err = 1;
  }
}

int gak_cache_eval(const gak_cprog *p, int64_t n, const uint32_t *d_rows,
                   const uint32_t *d_sel, uint64_t *d_vals, uint64_t *d_isint,
                   uint64_t *d_notnull, uint32_t *d_err, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || !p || n < 0 || p->depth > GAK_CX_DEPTH || p->n < 1 ||
      p->n > GAK_CX_MAX)
    return fail(GAK_EOTHER);
  if (n == 0)
    return 0;
  size_t bw = (size_t)((n + 63) / 64) * 8;
  dev_check(d_vals, (size_t)n * 8, s->dev, "gak_cache_eval vals");
  dev_check(d_isint, bw, s->dev, "gak_cache_eval isint");
  dev_check(d_notnull, bw, s->dev, "gak_cache_eval notnull");
  dev_check(d_err, 4, s->dev, "gak_cache_eval err");
  if (d_rows)
    dev_check(d_rows, (size_t)n * 4, s->dev, "gak_cache_eval rows");
  else if (d_sel)
    dev_check(d_sel, (size_t)((n + 31) / 32) * 4, s->dev, "gak_cache_eval sel");
  for (int k = 0; k < p->n; k++) /* the columns it reads, at their base */
    if (p->ins[k].op == GA_CX_COL)
      dev_check(p->cols[p->ins[k].col].vals, d_rows ? 8 : (size_t)n * 8, s->dev,
                "gak_cache_eval column");
  op *o = op_new(op_eval);
  fk_eval *x = malloc(sizeof(*x));
  if (!x)
    die("out of memory for an operation");
  x->p = *p;
  x->rows = d_rows;
  x->sel = d_sel;
  x->vals = d_vals;
  x->isint = d_isint;
  x->notnull = d_notnull;
  x->err = d_err;
  o->extra = x;
  o->m = n;
  enqueue(s, o);
  return 0;
}

static void op_eval_filter(op *o) {
  fk_eval *x = o->extra;
  int64_t n = o->m, nw = (n + 31) / 32;
  uint32_t *sel = (uint32_t *)x->vals;
  if (kernel_faults(o, sel, (size_t)nw * 4))
    return;
  for (int64_t w = 0; w < nw; w++)
    sel[w] = 0;
  for (int64_t i = 0; i < n; i++) {
    int e = 0;
    ga_cxr_v r = ga_cx_run(&x->p, i, &e);
    if (r.t != GA_CX_TNULL && ga_cx_true(r.t, r.v))
      sel[i >> 5] |= 1u << (i & 31);
    if (e)
      *x->err = 1;
  }
}

int gak_cache_eval_filter(const gak_cprog *p, int64_t n, uint32_t *d_sel,
                          uint32_t *d_err, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || !p || n < 0 || p->depth > GAK_CX_DEPTH || p->n < 1 ||
      p->n > GAK_CX_MAX)
    return fail(GAK_EOTHER);
  if (n == 0)
    return 0;
  dev_check(d_sel, (size_t)((n + 31) / 32) * 4, s->dev,
            "gak_cache_eval_filter sel");
  dev_check(d_err, 4, s->dev, "gak_cache_eval_filter err");
  for (int k = 0; k < p->n; k++)
    if (p->ins[k].op == GA_CX_COL)
      dev_check(p->cols[p->ins[k].col].vals, (size_t)n * 8, s->dev,
                "gak_cache_eval_filter column");
  op *o = op_new(op_eval_filter);
  fk_eval *x = malloc(sizeof(*x));
  if (!x)
    die("out of memory for an operation");
  memset(x, 0, sizeof(*x));
  x->p = *p;
  x->vals = (uint64_t *)d_sel; /* the selection's words */
  x->err = d_err;
  o->extra = x;
  o->m = n;
  enqueue(s, o);
  return 0;
}

typedef struct fk_keys {
  gak_ckeys k;
  const uint32_t *idx;
  uint32_t *gid;
} fk_keys;

static void op_key_ids(op *o) {
  fk_keys *x = o->extra;
  int64_t m = o->m;
  if (kernel_faults(o, x->gid, (size_t)m * 4))
    return;
  for (int64_t j = 0; j < m; j++) {
    int64_t i = x->idx ? x->idx[j] : j;
    uint32_t g = 0;
    for (int q = 0; q < x->k.n && g != 0xffffffffu; q++) {
      const gak_ckey *kk = &x->k.k[q];
      int64_t id = -1, key;
      int nn = fk_bit64(kk->col.notnull, i);
      if (kk->map) {
        int64_t code = nn ? (int64_t)kk->col.vals[i] : kk->nmap - 1;
        if (code >= 0 && code < kk->nmap)
          id = kk->map[code];
      } else if (!nn) {
        id = kk->ndict;
      } else if (fk_canon(&kk->col, i, &key)) {
        const int64_t *hit =
            bsearch(&key, kk->dict, (size_t)kk->ndict, 8, fk_cmp_i64);
        id = hit ? hit - kk->dict : -1;
      }
      g = id < 0 ? 0xffffffffu : g + (uint32_t)id * kk->stride;
    }
    x->gid[j] = g;
  }
}

int gak_cache_key_ids(const gak_ckeys *k, const uint32_t *d_idx, int64_t m,
                      uint32_t *d_gid, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || !k || m < 0 || k->n < 1 || k->n > GAK_CACHE_MAX_KEYS)
    return fail(GAK_EOTHER);
  if (m == 0)
    return 0;
  if (d_idx)
    dev_check(d_idx, (size_t)m * 4, s->dev, "gak_cache_key_ids idx");
  dev_check(d_gid, (size_t)m * 4, s->dev, "gak_cache_key_ids gid");
  for (int q = 0; q < k->n; q++) {
    dev_check(k->k[q].col.vals, 8, s->dev, "gak_cache_key_ids key");
    if (k->k[q].map)
      dev_check(k->k[q].map, (size_t)k->k[q].nmap * 4, s->dev,
                "gak_cache_key_ids map");
    else if (k->k[q].ndict)
      dev_check(k->k[q].dict, (size_t)k->k[q].ndict * 8, s->dev,
                "gak_cache_key_ids dict");
  }
  op *o = op_new(op_key_ids);
  fk_keys *x = malloc(sizeof(*x));
  if (!x)
    die("out of memory for an operation");
  x->k = *k;
  x->idx = d_idx;
  x->gid = d_gid;
  o->extra = x;
  o->m = m;
  enqueue(s, o);
  return 0;
}

static void op_gather(op *o) {
  const gak_ccol *c = &((fk_col *)o->extra)->c;
  const uint32_t *rows = o->a;
  gak_cval *out = o->c;
  if (kernel_faults(o, out, (size_t)o->m * sizeof(gak_cval)))
    return;
  const uint32_t *through = o->b;
  for (int64_t j = 0; j < o->m; j++) {
    int64_t i = through ? through[rows[j]] : rows[j];
    out[j].pad = 0;
    out[j].type = !fk_bit64(c->notnull, i) ? GA_CX_TNULL
                  : fk_bit64(c->isint, i)  ? GA_CX_TINT
                                           : GA_CX_TREAL;
    out[j].bits = out[j].type ? (int64_t)c->vals[i] : 0;
  }
}

int gak_cache_gather(gak_ccol col, const uint32_t *d_rows,
                     const uint32_t *d_through, int64_t n, gak_cval *d_out,
                     gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || n < 0)
    return fail(GAK_EOTHER);
  if (n == 0)
    return 0;
  dev_check(col.vals, 8, s->dev, "gak_cache_gather column");
  dev_check(d_rows, (size_t)n * 4, s->dev, "gak_cache_gather rows");
  dev_check(d_out, (size_t)n * sizeof(gak_cval), s->dev,
            "gak_cache_gather out");
  op *o = op_new(op_gather);
  fk_col *x = malloc(sizeof(*x));
  if (!x)
    die("out of memory for an operation");
  x->c = col;
  o->extra = x;
  o->a = (void *)d_rows;
  o->b = (void *)d_through;
  o->c = d_out;
  o->m = n;
  enqueue(s, o);
  return 0;
}

/* ---- DISTINCT inside aggregates (kernels/cache_distinct.cu) ----
**
** The kernel's algorithm on one thread: the same classification of a
** value (NULL, INTEGER, a REAL that is an integer within int64, another
** REAL), the same bit v - lo of the group's row, the same misses.  Shared
** or global memory makes no difference to the bits, so the twin has one
** loop. */

typedef struct fk_cdist {
  gak_ccol x;
  const uint32_t *idx, *gid, *sel;
  int64_t lo, range, ngroups;
  int fold;
  uint64_t *bits;
  int64_t *out; /* domain: 4 words; bits: the misses */
} fk_cdist;

/* cache_distinct.cu's value_at. */
static int fk_cd_value(const fk_cdist *p, int64_t j, int64_t *v) {
  if (p->sel && !((p->sel[j >> 5] >> (j & 31)) & 1))
    return 0;
  int64_t r = p->idx ? (int64_t)p->idx[j] : j;
  if (!fk_bit64(p->x.notnull, r))
    return 0;
  uint64_t w = p->x.vals[r];
  if (fk_bit64(p->x.isint, r)) {
    *v = (int64_t)w;
    return 1;
  }
  double d;
  memcpy(&d, &w, 8);
  if (d >= -0x1p63 && d < 0x1p63 && d == trunc(d)) {
    *v = (int64_t)d;
    return 2;
  }
  return 3;
}

static void op_cdist_domain(op *o) {
  fk_cdist *p = o->extra;
  if (kernel_faults(o, p->out, 32))
    return;
  int64_t out[4] = {0, 0, INT64_MAX, INT64_MIN}, v = 0;
  for (int64_t j = 0; j < o->m; j++) {
    int k = fk_cd_value(p, j, &v);
    out[0] += k == 3;
    out[1] += k == 2;
    if (k == 1 || k == 2) {
      out[2] = v < out[2] ? v : out[2];
      out[3] = v > out[3] ? v : out[3];
    }
  }
  memcpy(p->out, out, sizeof out);
}

static fk_cdist *fk_cd_new(op *o) {
  fk_cdist *p = calloc(1, sizeof(*p));
  if (!p)
    die("out of memory for an operation");
  o->extra = p;
  return p;
}

int gak_cdist_domain(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_sel,
                     int64_t m, int64_t *d_out, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || m < 0 || !d_out)
    return fail(GAK_EOTHER);
  dev_check(d_out, 32, s->dev, "gak_cdist_domain out");
  if (m) {
    dev_check(x.vals, 8, s->dev, "gak_cdist_domain x");
    if (d_idx)
      dev_check(d_idx, (size_t)m * 4, s->dev, "gak_cdist_domain idx");
    if (d_sel)
      dev_check(d_sel, (size_t)(m + 31) / 32 * 4, s->dev,
                "gak_cdist_domain sel");
  }
  op *o = op_new(op_cdist_domain);
  fk_cdist *p = fk_cd_new(o);
  p->x = x;
  p->idx = d_idx;
  p->sel = d_sel;
  p->out = d_out;
  o->m = m;
  enqueue(s, o);
  return 0;
}

static void op_cdist_bits(op *o) {
  fk_cdist *p = o->extra;
  int64_t words = (p->range + 63) / 64, lost = 0, v = 0;
  if (kernel_faults(o, p->bits, (size_t)(p->ngroups * words) * 8 + 8))
    return;
  memset(p->bits, 0, (size_t)(p->ngroups * words) * 8 + 8);
  for (int64_t j = 0; j < o->m; j++) {
    int k = fk_cd_value(p, j, &v);
    if (!k)
      continue;
    uint64_t g = p->gid ? p->gid[j] : 0;
    uint64_t d = (uint64_t)v - (uint64_t)p->lo;
    if (g >= (uint64_t)p->ngroups)
      continue;
    if (k == 3 || (k == 2 && !p->fold) || d >= (uint64_t)p->range) {
      lost++;
      continue;
    }
    p->bits[(int64_t)g * words + (int64_t)(d >> 6)] |= 1ull << (d & 63);
  }
  *p->out = lost;
}

int gak_cdist_bits(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_gid,
                   const uint32_t *d_sel, int64_t m, int64_t lo, int64_t range,
                   int64_t ngroups, int flags, uint64_t *d_bits,
                   int64_t *d_miss, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || m < 0 || range < 0 || range > ((int64_t)1 << 32) ||
      ngroups < 1 || !d_bits || !d_miss)
    return fail(GAK_EOTHER);
  int64_t words = (range + 63) / 64;
  dev_check(d_bits, (size_t)(ngroups * words) * 8 + 8, s->dev,
            "gak_cdist_bits bits");
  dev_check(d_miss, 8, s->dev, "gak_cdist_bits miss");
  if (m) {
    dev_check(x.vals, 8, s->dev, "gak_cdist_bits x");
    if (d_idx)
      dev_check(d_idx, (size_t)m * 4, s->dev, "gak_cdist_bits idx");
    if (d_gid)
      dev_check(d_gid, (size_t)m * 4, s->dev, "gak_cdist_bits gid");
    if (d_sel)
      dev_check(d_sel, (size_t)(m + 31) / 32 * 4, s->dev, "gak_cdist_bits sel");
  }
  op *o = op_new(op_cdist_bits);
  fk_cdist *p = fk_cd_new(o);
  p->x = x;
  p->idx = d_idx;
  p->gid = d_gid;
  p->sel = d_sel;
  p->lo = lo;
  p->range = range;
  p->ngroups = ngroups;
  p->fold = (flags & GAK_CDIST_FOLD) != 0;
  p->bits = d_bits;
  p->out = d_miss;
  o->m = m;
  enqueue(s, o);
  return 0;
}

static void op_cdist_count(op *o) {
  fk_cdist *p = o->extra;
  int64_t words = (p->range + 63) / 64;
  if (kernel_faults(o, p->out, (size_t)p->ngroups * 8))
    return;
  for (int64_t g = 0; g < p->ngroups; g++) {
    int64_t n = 0;
    for (int64_t w = 0; w < words; w++)
      n += __builtin_popcountll(p->bits[g * words + w]);
    p->out[g] = n;
  }
}

int gak_cdist_count(const uint64_t *d_bits, int64_t range, int64_t ngroups,
                    int64_t *d_counts, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || range < 0 || range > ((int64_t)1 << 32) || ngroups < 1 ||
      !d_counts)
    return fail(GAK_EOTHER);
  int64_t words = (range + 63) / 64;
  dev_check(d_bits, (size_t)(ngroups * words) * 8 + 8, s->dev,
            "gak_cdist_count bits");
  dev_check(d_counts, (size_t)ngroups * 8, s->dev, "gak_cdist_count counts");
  op *o = op_new(op_cdist_count);
  fk_cdist *p = fk_cd_new(o);
  p->bits = (uint64_t *)d_bits;
  p->range = range;
  p->ngroups = ngroups;
  p->out = d_counts;
  enqueue(s, o);
  return 0;
}

/* gak_cdist_sort's twin: the same keys (group << 1 | class, and the
** integer or the REAL's bits; positions with no value left out), sorted
** by key then position (the kernel's stable radix sort), the first of
** each key its representative. */
typedef struct fk_pair {
  uint32_t hi;
  uint32_t pos;
  uint64_t v;
} fk_pair;

static int fk_pair_cmp(const void *a, const void *b) {
  const fk_pair *x = a, *y = b;
  if (x->hi != y->hi)
    return x->hi < y->hi ? -1 : 1;
  if (x->v != y->v)
    return x->v < y->v ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

typedef struct fk_csort {
  fk_cdist p;
  uint32_t *rgid;
  gak_cval *rval;
  int64_t *n;
} fk_csort;

static void op_cdist_sort(op *o) {
  fk_csort *q = o->extra;
  fk_cdist *p = &q->p;
  if (kernel_faults(o, p->out, (size_t)p->ngroups * 8))
    return;
  fk_pair *a = malloc(sizeof(fk_pair) * (size_t)(o->m ? o->m : 1));
  if (!a)
    die("out of memory for an operation");
  int64_t n = 0, v = 0, out = 0;
  for (int64_t j = 0; j < o->m; j++) {
    int k = fk_cd_value(p, j, &v);
    uint64_t g = p->gid ? p->gid[j] : 0;
    if (!k || g >= (uint64_t)p->ngroups)
      continue;
    a[n].hi = (uint32_t)(g << 1 | (k == 3));
    a[n].pos = (uint32_t)j;
    a[n].v = k == 3 ? p->x.vals[p->idx ? (int64_t)p->idx[j] : j] : (uint64_t)v;
    n++;
  }
  qsort(a, (size_t)n, sizeof(fk_pair), fk_pair_cmp);
  memset(p->out, 0, (size_t)p->ngroups * 8);
  for (int64_t j = 0; j < n; j++) {
    if (j && a[j].hi == a[j - 1].hi && a[j].v == a[j - 1].v)
      continue;
    int64_t r = p->idx ? (int64_t)p->idx[a[j].pos] : (int64_t)a[j].pos;
    q->rgid[out] = a[j].hi >> 1;
    q->rval[out].type = fk_bit64(p->x.isint, r) ? GA_CX_TINT : GA_CX_TREAL;
    q->rval[out].pad = 0;
    q->rval[out].bits = (int64_t)p->x.vals[r];
    p->out[a[j].hi >> 1]++;
    out++;
  }
  *q->n = out;
  free(a);
}

size_t gak_cdist_sort_scratch(int64_t m) { return (size_t)(m + 1) * 40; }

int gak_cdist_sort(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_gid,
                   const uint32_t *d_sel, int64_t m, int64_t ngroups,
                   uint32_t *d_rgid, gak_cval *d_rval, int64_t *d_n,
                   int64_t *d_counts, void *d_scratch, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || m < 0 || m >= INT32_MAX || ngroups < 1 ||
      ngroups > (1 << 30) || !d_n || !d_counts || !d_scratch)
    return fail(GAK_EOTHER);
  dev_check(d_n, 8, s->dev, "gak_cdist_sort n");
  dev_check(d_counts, (size_t)ngroups * 8, s->dev, "gak_cdist_sort counts");
  dev_check(d_scratch, gak_cdist_sort_scratch(m), s->dev,
            "gak_cdist_sort scratch");
  if (m) {
    dev_check(x.vals, 8, s->dev, "gak_cdist_sort x");
    dev_check(d_rgid, (size_t)m * 4, s->dev, "gak_cdist_sort rgid");
    dev_check(d_rval, (size_t)m * sizeof(gak_cval), s->dev,
              "gak_cdist_sort rval");
    if (d_idx)
      dev_check(d_idx, (size_t)m * 4, s->dev, "gak_cdist_sort idx");
    if (d_gid)
      dev_check(d_gid, (size_t)m * 4, s->dev, "gak_cdist_sort gid");
    if (d_sel)
      dev_check(d_sel, (size_t)(m + 31) / 32 * 4, s->dev, "gak_cdist_sort sel");
  }
  op *o = op_new(op_cdist_sort);
  fk_csort *q = calloc(1, sizeof(*q));
  if (!q)
    die("out of memory for an operation");
  o->extra = q;
  q->p.x = x;
  q->p.idx = d_idx;
  q->p.gid = d_gid;
  q->p.sel = d_sel;
  q->p.ngroups = ngroups;
  q->p.out = d_counts;
  q->rgid = d_rgid;
  q->rval = d_rval;
  q->n = d_n;
  o->m = m;
  enqueue(s, o);
  return 0;
}

/* ---- star joins (kernels/cache_star.cu) ----
**
** The kernel's algorithm on one thread: the same steps a row (each
** dimension's key, then its probe of the host's lookup with the same
** hash, a miss clearing the row), the same gathers, bitmaps written a
** 32-row word at a time over n rounded up to 64 (bits past n 0), and the
** same counts. */

static uint64_t fk_cs_mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

static int fk_cs_key(const gak_cstar_dim *d, int64_t i, int64_t *k) {
  for (int c = 0; c < d->nkeys; c++) {
    const gak_ccol *col = &d->key[c];
    if (!fk_bit64(col->notnull, i))
      return 0;
    uint64_t v = col->vals[i];
    if (d->map[c]) {
      if (v >= (uint64_t)d->nmap[c] || d->map[c][v] < 0)
        return 0;
      k[c] = d->map[c][v];
    } else if (fk_bit64(col->isint, i)) {
      k[c] = (int64_t)v;
    } else {
      double x;
      memcpy(&x, &v, 8);
      if (!(x >= -0x1p63 && x < 0x1p63) || (double)(int64_t)x != x)
        return 0;
      k[c] = (int64_t)x;
    }
  }
  return 1;
}

static int fk_cs_lookup(const gak_cstar_dim *d, const int64_t *k) {
  if (d->dense) {
    uint64_t o = (uint64_t)k[0] - (uint64_t)d->base;
    return o < (uint64_t)d->span ? d->slot[o] : -1;
  }
  uint64_t h = 0;
  for (int c = 0; c < d->nkeys; c++)
    h = fk_cs_mix(h ^ (uint64_t)k[c]) + (uint64_t)c;
  for (h &= d->hmask;; h = (h + 1) & d->hmask) {
    int r = d->slot[h];
    if (r == -1)
      return -1;
    const int64_t *at = d->hkey + h * (uint64_t)d->nkeys;
    int eq = 1;
    for (int c = 0; c < d->nkeys; c++)
      eq &= at[c] == k[c];
    if (eq)
      return r;
  }
}

static void op_cstar_probe(op *o) {
  const gak_cstar *p = o->extra;
  int64_t n = o->m, n64 = (n + 63) / 64 * 64;
  uint32_t *sel = o->a;
  int64_t *stats = o->b;
  if (kernel_faults(o, sel, (size_t)(n64 / 32) * 4))
    return;
  for (int64_t w0 = 0; w0 < n64; w0 += 32) {
    uint32_t m = 0, mi[GAK_CSTAR_COLS], mn[GAK_CSTAR_COLS];
    memset(mi, 0, sizeof mi);
    memset(mn, 0, sizeof mn);
    for (int64_t i = w0; i < w0 + 32; i++) {
      int in = i < n, rows[GAK_CSTAR_DIMS];
      for (int d = 0; d < p->ndims; d++) {
        rows[d] = -1;
        if (!in)
          continue;
        int64_t k[GAK_CSTAR_KEYS];
        int r =
            fk_cs_key(&p->dims[d], i, k) ? fk_cs_lookup(&p->dims[d], k) : -1;
        if (r == -2 || (r < 0 && p->dims[d].miss_drops))
          in = 0;
        rows[d] = r < 0 ? -1 : r;
      }
      m |= (uint32_t)in << (i - w0);
      stats[0] += in;
      for (int c = 0; c < p->ncols; c++) {
        const gak_cstar_col *col = &p->cols[c];
        int r = in ? rows[col->dim] : -1;
        uint8_t f = r >= 0 ? col->f[r] : 0;
        uint64_t v = (f & 2) ? col->v[r] : 0;
        if (i < n)
          col->vals[i] = v;
        mi[c] |= (uint32_t)((f & 3) == 3) << (i - w0);
        mn[c] |= (uint32_t)((f & 2) != 0) << (i - w0);
        stats[1 + 4 * c] += (f & 2) != 0;
        if ((f & 3) == 3) {
          int64_t x = (int64_t)v;
          stats[2 + 4 * c]++;
          stats[3 + 4 * c] = x < stats[3 + 4 * c] ? x : stats[3 + 4 * c];
          stats[4 + 4 * c] = x > stats[4 + 4 * c] ? x : stats[4 + 4 * c];
        }
      }
    }
    sel[w0 >> 5] = m;
    for (int c = 0; c < p->ncols; c++) {
      ((uint32_t *)p->cols[c].isint)[w0 >> 5] = mi[c];
      ((uint32_t *)p->cols[c].notnull)[w0 >> 5] = mn[c];
    }
  }
}

int gak_cstar_probe(const gak_cstar *p, int64_t n, uint64_t *d_sel,
                    int64_t *d_stats, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || !p || n < 0 || p->ndims < 0 ||
      p->ndims > GAK_CSTAR_DIMS || p->ncols < 0 || p->ncols > GAK_CSTAR_COLS)
    return fail(GAK_EOTHER);
  if (n == 0)
    return 0;
  size_t words = (size_t)(n + 63) / 64 * 8;
  dev_check(d_sel, words, s->dev, "gak_cstar_probe sel");
  dev_check(d_stats, (size_t)(1 + 4 * p->ncols) * 8, s->dev,
            "gak_cstar_probe stats");
  for (int d = 0; d < p->ndims; d++) {
    const gak_cstar_dim *x = &p->dims[d];
    if (x->nkeys < 1 || x->nkeys > GAK_CSTAR_KEYS)
      return fail(GAK_EOTHER);
    for (int c = 0; c < x->nkeys; c++) {
      dev_check(x->key[c].vals, (size_t)n * 8, s->dev, "gak_cstar_probe key");
      dev_check(x->key[c].isint, words, s->dev, "gak_cstar_probe key isint");
      dev_check(x->key[c].notnull, words, s->dev,
                "gak_cstar_probe key notnull");
      if (x->map[c])
        dev_check(x->map[c], (size_t)x->nmap[c] * 8, s->dev,
                  "gak_cstar_probe map");
    }
    if (x->dense) {
      dev_check(x->slot, (size_t)x->span * 4, s->dev, "gak_cstar_probe slot");
    } else {
      dev_check(x->slot, (size_t)(x->hmask + 1) * 4, s->dev,
                "gak_cstar_probe slot");
      dev_check(x->hkey, (size_t)(x->hmask + 1) * (size_t)x->nkeys * 8, s->dev,
                "gak_cstar_probe hkey");
    }
  }
  for (int c = 0; c < p->ncols; c++) {
    const gak_cstar_col *x = &p->cols[c];
    if (x->dim < 0 || x->dim >= p->ndims)
      return fail(GAK_EOTHER);
    dev_check(x->v, 8, s->dev, "gak_cstar_probe column");
    dev_check(x->f, 1, s->dev, "gak_cstar_probe flags");
    dev_check(x->vals, (size_t)n * 8, s->dev, "gak_cstar_probe out");
    dev_check(x->isint, words, s->dev, "gak_cstar_probe out isint");
    dev_check(x->notnull, words, s->dev, "gak_cstar_probe out notnull");
  }
  op *o = op_new(op_cstar_probe);
  gak_cstar *q = malloc(sizeof(*q));
  if (!q)
    die("out of memory for an operation");
  *q = *p;
  o->extra = q;
  o->a = d_sel;
  o->b = d_stats;
  o->m = n;
  enqueue(s, o);
  return 0;
}

static void op_cstar_and(op *o) {
  uint32_t *sel = o->a;
  const uint32_t *and32 = o->b;
  if (kernel_faults(o, sel, (size_t)o->m * 4))
    return;
  for (int64_t w = 0; w < o->m; w++)
    sel[w] &= and32[w];
}

int gak_cstar_and(uint32_t *d_sel, const uint64_t *d_and, int64_t n,
                  gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || n < 0 || (n && (!d_sel || !d_and)))
    return fail(GAK_EOTHER);
  int64_t words = (n + 31) / 32;
  if (!words)
    return 0;
  dev_check(d_sel, (size_t)words * 4, s->dev, "gak_cstar_and sel");
  dev_check(d_and, (size_t)words * 4, s->dev, "gak_cstar_and and");
  op *o = op_new(op_cstar_and);
  o->a = d_sel;
  o->b = (void *)d_and;
  o->m = words;
  enqueue(s, o);
  return 0;
}

/* ---- variance and medians on a GPU entry (kernels/cache_stat.cu) ---- */

typedef struct fk_stat {
  gak_ccol x;
  const uint32_t *idx, *gid, *sel, *slout;
  const gak_cslice *sl;
  int64_t ngr;
  int64_t *out;        /* sq: ngr * GA_XSQ_DIGITS; count: ngr + 1 */
  const int64_t *offs; /* pick: the places */
  double *vals;
  double *pick;  /* pick: the picked values (ngr: their count) */
  int64_t nvals; /* pick: the values' count (each place below it) */
  int dev;       /* pick: the device */
} fk_stat;

/* Position p of slice sl: its row, or -1 (cache_stat.cu's st_row). */
static int64_t fk_stat_row(const fk_stat *r, const gak_cslice *sl, uint32_t p) {
  uint32_t q = sl->start + p;
  if (r->gid && (r->gid[q] != sl->group ||
                 (r->sel && !((r->sel[q >> 5] >> (q & 31)) & 1))))
    return -1;
  return r->idx ? (int64_t)r->idx[q] : (int64_t)q;
}

/* gak_cache_sq's twin: a block a slice, its squares exact (xvar.c's adds
** into a fresh window, the same value as the kernel's expansions and
** digits), carried into [0, 2^32) as the kernel's thread 0 carries them,
** then added to its group's digits. */
static void op_cache_sq(op *o) {
  fk_stat *r = o->extra;
  size_t bytes = sizeof(int64_t) * GA_XSQ_DIGITS * (size_t)r->ngr;
  if (kernel_faults(o, r->out, bytes))
    return;
  memset(r->out, 0, bytes);
  static __thread ga_var_partial b;
  for (int64_t k = 0; k < o->m; k++) {
    const gak_cslice *sl = &r->sl[k];
    ga_var_init(&b);
    for (uint32_t p = 0; p < sl->len; p++) {
      int64_t i = fk_stat_row(r, sl, p);
      if (i < 0 || !fk_bit64(r->x.notnull, i))
        continue;
      uint64_t w = r->x.vals[i];
      if (fk_bit64(r->x.isint, i))
        ga_var_add_int(&b, (int64_t)w, 1);
      else if (((w >> 52) & 0x7ff) != 0x7ff)
        ga_var_add_real(&b, ga_bitsd((int64_t)w), 1);
    }
    int64_t carry = 0;
    for (int d = 0; d < GA_XSQ_DIGITS - 1; d++) {
      int64_t v = b.sq[d] + carry;
      carry = v >> 32;
      b.sq[d] = v & 0xffffffffll;
    }
    b.sq[GA_XSQ_DIGITS - 1] += carry;
    int64_t *out = r->out + (size_t)r->slout[k] * GA_XSQ_DIGITS;
    for (int d = 0; d < GA_XSQ_DIGITS; d++)
      out[d] = (int64_t)((uint64_t)out[d] + (uint64_t)b.sq[d]);
  }
}

static fk_stat *fk_stat_new(gak_ccol x, const uint32_t *d_idx,
                            const uint32_t *d_gid, const uint32_t *d_sel,
                            const gak_cslice *d_slices, const uint32_t *d_slout,
                            int64_t nslices, int64_t ngr, fstream *s,
                            const char *what) {
  if (nslices) {
    dev_check(x.vals, 8, s->dev, what);
    dev_check(d_slices, sizeof(gak_cslice) * (size_t)nslices, s->dev, what);
    dev_check(d_slout, 4 * (size_t)nslices, s->dev, what);
  }
  if (d_idx)
    dev_check(d_idx, 4, s->dev, what);
  if (d_gid)
    dev_check(d_gid, 4, s->dev, what);
  if (d_sel)
    dev_check(d_sel, 4, s->dev, what);
  fk_stat *r = calloc(1, sizeof(*r));
  if (!r)
    die("out of memory for an operation");
  r->x = x;
  r->idx = d_idx;
  r->gid = d_gid;
  r->sel = d_gid ? d_sel : NULL;
  r->sl = d_slices;
  r->slout = d_slout;
  r->ngr = ngr;
  return r;
}

int gak_cache_sq(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_gid,
                 const uint32_t *d_sel, const gak_cslice *d_slices,
                 const uint32_t *d_slout, int64_t nslices, int64_t ngr,
                 int64_t *d_sq, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || nslices < 0 || nslices > INT32_MAX || ngr < 0)
    return fail(GAK_EOTHER);
  if (ngr)
    dev_check(d_sq, sizeof(int64_t) * GA_XSQ_DIGITS * (size_t)ngr, s->dev,
              "gak_cache_sq out");
  fk_stat *r = fk_stat_new(x, d_idx, d_gid, d_sel, d_slices, d_slout, nslices,
                           ngr, s, "gak_cache_sq");
  r->out = d_sq;
  op *o = op_new(op_cache_sq);
  o->extra = r;
  o->m = nslices;
  enqueue(s, o);
  return 0;
}

/* gak_cache_pct_count's twin: each slice's values and infinities. */
static void op_pct_count(op *o) {
  fk_stat *r = o->extra;
  if (kernel_faults(o, r->out, sizeof(int64_t) * (size_t)(r->ngr + 1)))
    return;
  memset(r->out, 0, sizeof(int64_t) * (size_t)(r->ngr + 1));
  for (int64_t k = 0; k < o->m; k++) {
    const gak_cslice *sl = &r->sl[k];
    for (uint32_t p = 0; p < sl->len; p++) {
      int64_t i = fk_stat_row(r, sl, p);
      if (i < 0 || !fk_bit64(r->x.notnull, i))
        continue;
      uint64_t w = r->x.vals[i];
      r->out[r->slout[k]]++;
      r->out[r->ngr] +=
          !fk_bit64(r->x.isint, i) && ((w >> 52) & 0x7ff) == 0x7ff;
    }
  }
}

/* gak_cache_pct_gather's twin: blocks in reverse order (the kernel's run
** in any), each chunk of 256 positions placed by its group's cursor. */
static void op_pct_gather(op *o) {
  fk_stat *r = o->extra;
  int64_t *cur = calloc((size_t)(r->ngr ? r->ngr : 1), sizeof(int64_t));
  if (!cur)
    die("out of memory for an operation");
  if (kernel_faults(o, cur, 8)) {
    free(cur);
    return;
  }
  for (int64_t k = o->m - 1; k >= 0; k--) {
    const gak_cslice *sl = &r->sl[k];
    uint32_t g = r->slout[k];
    for (uint32_t p = 0; p < sl->len; p++) {
      int64_t i = fk_stat_row(r, sl, p);
      if (i < 0 || !fk_bit64(r->x.notnull, i))
        continue;
      uint64_t w = r->x.vals[i];
      r->vals[r->offs[g] + cur[g]++] =
          fk_bit64(r->x.isint, i) ? (double)(int64_t)w : ga_bitsd((int64_t)w);
    }
  }
  free(cur);
}

int gak_cache_pct_count(gak_ccol x, const uint32_t *d_idx,
                        const uint32_t *d_gid, const uint32_t *d_sel,
                        const gak_cslice *d_slices, const uint32_t *d_slout,
                        int64_t nslices, int64_t ngr, int64_t *d_counts,
                        gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || nslices < 0 || nslices > INT32_MAX || ngr < 0)
    return fail(GAK_EOTHER);
  dev_check(d_counts, 8 * (size_t)(ngr + 1), s->dev, "gak_cache_pct_count");
  fk_stat *r = fk_stat_new(x, d_idx, d_gid, d_sel, d_slices, d_slout, nslices,
                           ngr, s, "gak_cache_pct_count");
  r->out = d_counts;
  op *o = op_new(op_pct_count);
  o->extra = r;
  o->m = nslices;
  enqueue(s, o);
  return 0;
}

int gak_cache_pct_gather(gak_ccol x, const uint32_t *d_idx,
                         const uint32_t *d_gid, const uint32_t *d_sel,
                         const gak_cslice *d_slices, const uint32_t *d_slout,
                         int64_t nslices, int64_t ngr, const int64_t *d_offs,
                         int64_t *d_cursor, double *d_out, gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || nslices < 0 || nslices > INT32_MAX || ngr < 0)
    return fail(GAK_EOTHER);
  dev_check(d_offs, 8 * (size_t)(ngr + 1), s->dev, "gak_cache_pct_gather offs");
  dev_check(d_cursor, 8 * (size_t)(ngr ? ngr : 1), s->dev,
            "gak_cache_pct_gather cursor");
  dev_check(d_out, 8, s->dev, "gak_cache_pct_gather out");
  fk_stat *r = fk_stat_new(x, d_idx, d_gid, d_sel, d_slices, d_slout, nslices,
                           ngr, s, "gak_cache_pct_gather");
  r->offs = d_offs;
  r->vals = d_out;
  op *o = op_new(op_pct_gather);
  o->extra = r;
  o->m = nslices;
  enqueue(s, o);
  return 0;
}

size_t gak_cache_pct_sort_scratch(int64_t total, int64_t ngr) {
  (void)total;
  (void)ngr;
  return 256;
}

/* cache_stat.cu's order-preserving key: -0.0 before 0.0 */
static uint64_t fk_pct_key(double d) {
  uint64_t u = (uint64_t)ga_dbits(d);
  return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}

static int fk_pct_cmp(const void *a, const void *b) {
  uint64_t x = fk_pct_key(*(const double *)a),
           y = fk_pct_key(*(const double *)b);
  return x < y ? -1 : x > y;
}

/* gak_cache_pct_sort's twin: each run sorted by the kernel's keys. */
static void op_pct_sort(op *o) {
  fk_stat *r = o->extra;
  if (kernel_faults(o, r->vals, 8))
    return;
  for (int64_t g = 0; g < r->ngr; g++)
    qsort(r->vals + r->offs[g], (size_t)(r->offs[g + 1] - r->offs[g]), 8,
          fk_pct_cmp);
}

int gak_cache_pct_sort(double *d_vals, double *d_tmp, const int64_t *d_offs,
                       const int64_t *h_offs, int64_t ngr, int64_t total,
                       void *d_scratch, gak_stream gs) {
  fstream *s = (fstream *)gs;
  (void)h_offs;
  if (!stream_ok(s) || total < 0 || total > INT32_MAX || ngr < 0)
    return fail(GAK_EOTHER);
  if (total == 0)
    return 0;
  dev_check(d_vals, 8 * (size_t)total, s->dev, "gak_cache_pct_sort vals");
  dev_check(d_tmp, 8 * (size_t)total, s->dev, "gak_cache_pct_sort tmp");
  dev_check(d_offs, 8 * (size_t)(ngr + 1), s->dev, "gak_cache_pct_sort offs");
  dev_check(d_scratch, gak_cache_pct_sort_scratch(total, ngr), s->dev,
            "gak_cache_pct_sort scratch");
  fk_stat *r = calloc(1, sizeof(*r));
  if (!r)
    die("out of memory for an operation");
  r->ngr = ngr;
  r->offs = d_offs;
  r->vals = d_vals;
  op *o = op_new(op_pct_sort);
  o->extra = r;
  enqueue(s, o);
  return 0;
}

/* gak_cache_pct_pick's twin (cache_stat.cu rule 6): each place's value. */
static void op_pct_pick(op *o) {
  fk_stat *r = o->extra;
  if (kernel_faults(o, r->pick, 8 * (size_t)r->ngr))
    return;
  for (int64_t j = 0; j < r->ngr; j++) { /* a place past the values: die */
    if (r->offs[j] < 0 || r->offs[j] >= r->nvals)
      die("gak_cache_pct_pick: a place outside the values");
    r->pick[j] = r->vals[r->offs[j]];
  }
}

int gak_cache_pct_pick(const double *d_vals, int64_t nvals,
                       const int64_t *d_pos, int64_t npos, double *d_out,
                       gak_stream gs) {
  fstream *s = (fstream *)gs;
  if (!stream_ok(s) || npos < 0 || nvals < 0)
    return fail(GAK_EOTHER);
  if (npos == 0)
    return 0;
  dev_check(d_vals, 8 * (size_t)(nvals ? nvals : 1), s->dev,
            "gak_cache_pct_pick vals");
  dev_check(d_pos, 8 * (size_t)npos, s->dev, "gak_cache_pct_pick pos");
  dev_check(d_out, 8 * (size_t)npos, s->dev, "gak_cache_pct_pick out");
  fk_stat *r = calloc(1, sizeof(*r));
  if (!r)
    die("out of memory for an operation");
  r->ngr = npos;
  r->nvals = nvals;
  r->offs = d_pos;
  r->vals = (double *)d_vals;
  r->pick = d_out;
  r->dev = s->dev;
  op *o = op_new(op_pct_pick);
  o->extra = r;
  enqueue(s, o);
  return 0;
}
