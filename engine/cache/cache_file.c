/*
** cache_file.c — the cache file's format, its writer and its mapper
** (cache_file.h, whose rules this file keeps).
*/
#include "cache_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#define CF_VERSION 1
#define CF_BOM 0x01020304u

typedef struct cf_hdr {
  char magic[8]; /* "GPUAGGC1" */
  uint32_t version, bom;
  uint64_t len; /* the file's length */
  ga_cfstamp st;
  uint32_t ntables, pad;
  uint64_t dir_off;
  uint64_t sum[2]; /* of the header (sum zeroed) and the directory */
} cf_hdr;

typedef struct cf_dir {
  uint64_t off, len;
} cf_dir;

typedef struct cf_shdr {
  char magic[8];     /* "GATABLE1" */
  uint64_t meta_len; /* bytes of meta after this header, a multiple of 8 */
  int64_t rows, nsegs;
  uint32_t ncols, enc;
  uint64_t sum[2]; /* of the meta */
} cf_shdr;

/* Per column in the meta, after its name. */
typedef struct cf_col {
  int32_t aff, mixed;
  int64_t nnull, nint, nreal, ntext, nnow, imin, imax;
  uint64_t dict_off, dict_len, dict_count; /* dict_off: from the section */
  uint64_t dsum[2];
} cf_col;

/* Per segment in the meta, then ncols pairs of sums. */
typedef struct cf_seg {
  int64_t n;
  uint64_t off; /* from the section */
} cf_seg;

static void say(char *why, size_t nwhy, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, nwhy, fmt, ap);
  va_end(ap);
}

void ga_cfile_sum(const uint64_t *w, size_t n, uint64_t s[2]) {
  uint64_t a = s[0], b = s[1];
  for (size_t i = 0; i < n; i++) {
    a += w[i];
    b += a;
  }
  s[0] = a;
  s[1] = b;
}

static int64_t seg_words(int ncols, int64_t n) {
  return (int64_t)ncols * n + (int64_t)ncols * 2 * GA_BW(n);
}

/* ---- a growing byte buffer (the meta, a dictionary) ---- */

typedef struct cf_buf {
  unsigned char *p;
  size_t n, cap;
  int oom;
} cf_buf;

static void buf_put(cf_buf *b, const void *p, size_t n) {
  if (b->oom)
    return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->n + n)
      cap *= 2;
    unsigned char *q = sqlite3_realloc64(b->p, cap);
    if (!q) {
      b->oom = 1;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, p, n);
  b->n += n;
}

static void buf_pad8(cf_buf *b) {
  static const unsigned char z[8];
  if (b->n % 8)
    buf_put(b, z, 8 - b->n % 8);
}

static void buf_str(cf_buf *b, const char *s) {
  uint32_t n = (uint32_t)strlen(s);
  buf_put(b, &n, 4);
  buf_put(b, s, n);
  buf_pad8(b);
}

/* A bounded reader of the meta. */
typedef struct cf_rd {
  const unsigned char *p;
  size_t n, at;
  int bad;
} cf_rd;

static const void *rd_get(cf_rd *r, size_t n) {
  if (r->bad || n > r->n - r->at) {
    r->bad = 1;
    return NULL;
  }
  const void *p = r->p + r->at;
  r->at += n;
  return p;
}

static void rd_pad8(cf_rd *r) {
  if (r->at % 8)
    rd_get(r, 8 - r->at % 8);
}

/* A name of the meta: *p (not NUL-terminated) and *n. */
static int rd_str(cf_rd *r, const char **p, uint32_t *n) {
  const uint32_t *len = rd_get(r, 4);
  if (!len)
    return 0;
  *n = *len;
  *p = rd_get(r, *n);
  rd_pad8(r);
  return *p != NULL && !r->bad;
}

/* ---- the writer ---- */

static int write_all(int fd, const void *p, size_t n) {
  const unsigned char *q = p;
  while (n) {
    ssize_t w = write(fd, q, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return 0;
    q += w;
    n -= (size_t)w;
  }
  return 1;
}

static int pwrite_all(int fd, const void *p, size_t n, off_t off) {
  const unsigned char *q = p;
  while (n) {
    ssize_t w = pwrite(fd, q, n, off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return 0;
    q += w;
    n -= (size_t)w;
    off += w;
  }
  return 1;
}

/* Column c's dictionary serialized (its values in code order). */
static int dict_bytes_of(const ga_dict *d, cf_buf *b) {
  int64_t n = ga_dict_count(d);
  for (int64_t k = 0; k < n; k++) {
    const void *p;
    int len;
    ga_dict_value(d, (uint32_t)k, &p, &len);
    uint32_t l = (uint32_t)len;
    buf_put(b, &l, 4);
    buf_put(b, p, (size_t)len);
  }
  buf_pad8(b);
  return !b->oom;
}

/* The meta of e's section, its segments' and dictionaries' places from
** data_at (section-relative) on. */
static void build_meta(cf_buf *m, const ga_centry *e, const char *table,
                       uint64_t data_at, cf_buf *dicts, uint64_t (*sums)[2]) {
  buf_str(m, table);
  uint64_t at = data_at;
  for (int64_t s = 0; s < e->nsegs; s++)
    at += (uint64_t)seg_words(e->ncols, e->segs[s]->n) * 8;
  for (int c = 0; c < e->ncols; c++) {
    const ga_ccol *k = &e->cols[c];
    buf_str(m, k->name);
    cf_col cc;
    memset(&cc, 0, sizeof cc);
    cc.aff = k->aff;
    cc.mixed = k->mixed;
    cc.nnull = k->nnull;
    cc.nint = k->nint;
    cc.nreal = k->nreal;
    cc.ntext = k->ntext;
    cc.nnow = k->nnow;
    cc.imin = k->imin;
    cc.imax = k->imax;
    if (k->dict) {
      cc.dict_off = at;
      cc.dict_len = dicts[c].n;
      cc.dict_count = (uint64_t)ga_dict_count(k->dict);
      cc.dsum[0] = 1;
      ga_cfile_sum((const uint64_t *)dicts[c].p, dicts[c].n / 8, cc.dsum);
      at += dicts[c].n;
    }
    buf_put(m, &cc, sizeof cc);
  }
  uint64_t off = data_at;
  for (int64_t s = 0; s < e->nsegs; s++) {
    cf_seg sg = {e->segs[s]->n, off};
    buf_put(m, &sg, sizeof sg);
    buf_put(m, sums[s * e->ncols], sizeof(uint64_t) * 2 * (size_t)e->ncols);
    off += (uint64_t)seg_words(e->ncols, e->segs[s]->n) * 8;
  }
  buf_pad8(m);
}

/* Column c's block of segment b, as the file holds it (cap = n): the sum
** of its values, then of its two bitmaps. */
static void block_sum(const ga_cblock *b, int c, uint64_t s[2]) {
  s[0] = 1;
  s[1] = 0;
  ga_cfile_sum(ga_cb_vals(b, c), (size_t)b->n, s);
  ga_cfile_sum(ga_cb_isint(b, c), (size_t)GA_BW(b->n), s);
  ga_cfile_sum(ga_cb_notnull(b, c), (size_t)GA_BW(b->n), s);
}

/* Segment b written as a block of cap = b->n. */
static int write_seg(int fd, const ga_cblock *b) {
  for (int c = 0; c < b->ncols; c++)
    if (!write_all(fd, ga_cb_vals(b, c), (size_t)b->n * 8))
      return 0;
  for (int c = 0; c < b->ncols; c++) {
    if (!write_all(fd, ga_cb_isint(b, c), (size_t)GA_BW(b->n) * 8) ||
        !write_all(fd, ga_cb_notnull(b, c), (size_t)GA_BW(b->n) * 8))
      return 0;
  }
  return 1;
}

typedef struct cf_map {
  unsigned char *p;
  size_t len;
} cf_map;

static int open_checked(const char *path, cf_map *m, char *why, size_t nwhy);
static const cf_hdr *hdr_checked(const cf_map *m, char *why, size_t nwhy);
static int section_checked(const cf_map *m, const cf_dir *d, cf_shdr *sh,
                           cf_rd *meta, char *why, size_t nwhy);

int ga_cfile_write(const char *path, const ga_cfstamp *st, const char *table,
                   const ga_centry *e, mode_t mode, int (*stop)(void *),
                   void *arg, char *why, size_t nwhy) {
  if (e->where != GA_CACHE_HOST || !e->nsegs) {
    say(why, nwhy, "%s", e->nsegs ? "not a host entry" : "no rows");
    return GA_CFILE_BAD;
  }
  /* the old file's other tables, when it is for the same state (rule 4) */
  cf_map old = {NULL, 0};
  char owhy[200];
  const cf_hdr *oh = NULL;
  if (open_checked(path, &old, owhy, sizeof owhy) == GA_CFILE_OK) {
    oh = hdr_checked(&old, owhy, sizeof owhy);
    if (oh && memcmp(&oh->st, st, sizeof *st))
      oh = NULL;
  }
  int rc = GA_CFILE_NOMEM;
  int fd = -1;
  char *tmp = NULL;
  cf_buf meta = {0}, *dicts = NULL;
  uint64_t(*sums)[2] = NULL;
  cf_dir *dir = NULL;
  uint32_t nkeep = 0;
  const cf_dir *odir = oh ? (const cf_dir *)(old.p + oh->dir_off) : NULL;
  for (uint32_t i = 0; oh && i < oh->ntables; i++) {
    cf_shdr sh;
    cf_rd r;
    const char *nm;
    uint32_t nn;
    char w2[100];
    if (section_checked(&old, &odir[i], &sh, &r, w2, sizeof w2) ==
            GA_CFILE_OK &&
        rd_str(&r, &nm, &nn) &&
        !(nn == strlen(table) && !sqlite3_strnicmp(nm, table, (int)nn)))
      nkeep++;
  }
  dir = sqlite3_malloc64(sizeof(cf_dir) * (nkeep + 1));
  dicts = sqlite3_malloc64(sizeof(cf_buf) * (size_t)e->ncols);
  sums = sqlite3_malloc64(sizeof(uint64_t) * 2 * (size_t)e->ncols *
                          (size_t)e->nsegs);
  if (!dir || !dicts || !sums)
    goto done;
  memset(dicts, 0, sizeof(cf_buf) * (size_t)e->ncols);
  for (int c = 0; c < e->ncols; c++)
    if (e->cols[c].dict && !dict_bytes_of(e->cols[c].dict, &dicts[c]))
      goto done;
  for (int64_t s = 0; s < e->nsegs; s++) {
    if (stop && stop(arg)) {
      say(why, nwhy, "interrupted");
      rc = GA_CFILE_BAD;
      goto done;
    }
    for (int c = 0; c < e->ncols; c++)
      block_sum(e->segs[s], c, sums[s * e->ncols + c]);
  }
  /* the meta's length does not depend on the offsets it holds */
  build_meta(&meta, e, table, 0, dicts, sums);
  if (meta.oom)
    goto done;
  uint64_t data_at = sizeof(cf_shdr) + meta.n;
  meta.n = 0;
  build_meta(&meta, e, table, data_at, dicts, sums);
  if (meta.oom)
    goto done;
  /* the temporary file (rule 3) */
  static unsigned seq;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  tmp = sqlite3_mprintf("%s.tmp-%ld-%u-%ld", path, (long)getpid(),
                        __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED),
                        (long)ts.tv_nsec);
  if (!tmp)
    goto done;
  fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
            mode & 0600);
  if (fd < 0) {
    say(why, nwhy, "cannot create %s: %s", tmp, strerror(errno));
    rc = GA_CFILE_BAD;
    sqlite3_free(tmp);
    tmp = NULL;
    goto done;
  }
  rc = GA_CFILE_BAD;
  cf_hdr h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, "GPUAGGC1", 8);
  h.version = CF_VERSION;
  h.bom = CF_BOM;
  h.st = *st;
  h.ntables = nkeep + 1;
  h.dir_off = sizeof h;
  uint64_t at = sizeof h + sizeof(cf_dir) * h.ntables;
  /* header and directory last (pwrite); the sections from `at` */
  if (lseek(fd, (off_t)at, SEEK_SET) < 0)
    goto io;
  uint32_t k = 0;
  for (uint32_t i = 0; oh && i < oh->ntables; i++) {
    cf_shdr sh;
    cf_rd r;
    const char *nm;
    uint32_t nn;
    char w2[100];
    if (section_checked(&old, &odir[i], &sh, &r, w2, sizeof w2) !=
            GA_CFILE_OK ||
        !rd_str(&r, &nm, &nn) ||
        (nn == strlen(table) && !sqlite3_strnicmp(nm, table, (int)nn)))
      continue;
    if (k == nkeep || !write_all(fd, old.p + odir[i].off, odir[i].len))
      goto io;
    dir[k].off = at;
    dir[k++].len = odir[i].len; /* a multiple of 8 (section_checked) */
    at += odir[i].len;
  }
  cf_shdr sh;
  memset(&sh, 0, sizeof sh);
  memcpy(sh.magic, "GATABLE1", 8);
  sh.meta_len = meta.n;
  sh.rows = e->rows;
  sh.nsegs = e->nsegs;
  sh.ncols = (uint32_t)e->ncols;
  sh.enc = (uint32_t)e->enc;
  sh.sum[0] = 1;
  ga_cfile_sum((const uint64_t *)meta.p, meta.n / 8, sh.sum);
  dir[k].off = at;
  if (!write_all(fd, &sh, sizeof sh) || !write_all(fd, meta.p, meta.n))
    goto io;
  uint64_t len = sizeof sh + meta.n;
  for (int64_t s = 0; s < e->nsegs; s++) {
    if (stop && stop(arg)) {
      say(why, nwhy, "interrupted");
      goto fail;
    }
    if (!write_seg(fd, e->segs[s]))
      goto io;
    len += (uint64_t)seg_words(e->ncols, e->segs[s]->n) * 8;
  }
  for (int c = 0; c < e->ncols; c++) {
    if (dicts[c].n && !write_all(fd, dicts[c].p, dicts[c].n))
      goto io;
    len += dicts[c].n;
  }
  dir[k].len = len;
  at += len;
  h.len = at;
  h.sum[0] = 1;
  ga_cfile_sum((const uint64_t *)&h, sizeof h / 8, h.sum);
  ga_cfile_sum((const uint64_t *)dir, 2 * (size_t)h.ntables, h.sum);
  if (!pwrite_all(fd, dir, sizeof(cf_dir) * h.ntables, sizeof h) ||
      !pwrite_all(fd, &h, sizeof h, 0))
    goto io;
  /* the database's mode, past the umask, never writable by others */
  if (fchmod(fd, mode & 0666 & ~(mode_t)S_IWOTH) != 0 || close(fd) != 0) {
    fd = -1;
    goto io;
  }
  fd = -1;
  if (rename(tmp, path) != 0)
    goto io;
  rc = GA_CFILE_OK;
  goto done;
io:
  say(why, nwhy, "cannot write %s: %s", tmp, strerror(errno));
fail:
  rc = GA_CFILE_BAD;
done:
  if (fd >= 0)
    close(fd);
  if (tmp && rc != GA_CFILE_OK)
    unlink(tmp);
  sqlite3_free(tmp);
  if (rc == GA_CFILE_NOMEM)
    say(why, nwhy, "out of memory");
  for (int c = 0; dicts && c < e->ncols; c++)
    sqlite3_free(dicts[c].p);
  sqlite3_free(dicts);
  sqlite3_free(meta.p);
  sqlite3_free(sums);
  sqlite3_free(dir);
  if (old.p)
    munmap(old.p, old.len);
  return rc;
}

/* ---- the mapper ---- */

/* Rule 1: open and map the file.  GA_CFILE_OK with *m, else a code. */
static int open_checked(const char *path, cf_map *m, char *why, size_t nwhy) {
  m->p = NULL;
  m->len = 0;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) {
      say(why, nwhy, "no file %s", path);
      return GA_CFILE_ABSENT;
    }
    say(why, nwhy, "%s: %s", path,
        errno == ELOOP ? "a symbolic link (never followed)" : strerror(errno));
    return GA_CFILE_BAD;
  }
  struct stat sb;
  int rc = GA_CFILE_BAD;
  if (fstat(fd, &sb) != 0)
    say(why, nwhy, "%s: %s", path, strerror(errno));
  else if (!S_ISREG(sb.st_mode))
    say(why, nwhy, "%s is not a regular file", path);
  else if (sb.st_uid != geteuid())
    say(why, nwhy, "%s is owned by user %ld, not by this process's user %ld",
        path, (long)sb.st_uid, (long)geteuid());
  else if (sb.st_mode & S_IWOTH)
    say(why, nwhy, "%s is writable by others (mode %03o)", path,
        (unsigned)(sb.st_mode & 0777));
  else if ((uint64_t)sb.st_size < sizeof(cf_hdr))
    say(why, nwhy, "%s is too short (%lld bytes): truncated", path,
        (long long)sb.st_size);
  else {
    void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
      say(why, nwhy, "cannot map %s: %s", path, strerror(errno));
    else {
      m->p = p;
      m->len = (size_t)sb.st_size;
      rc = GA_CFILE_OK;
    }
  }
  close(fd);
  return rc;
}

/* Rule 2: the header and the directory, checked; NULL with why. */
static const cf_hdr *hdr_checked(const cf_map *m, char *why, size_t nwhy) {
  cf_hdr h;
  memcpy(&h, m->p, sizeof h);
  if (memcmp(h.magic, "GPUAGGC1", 8)) {
    say(why, nwhy, "not a gpuagg cache file (its magic)");
    return NULL;
  }
  if (h.version != CF_VERSION || h.bom != CF_BOM) {
    say(why, nwhy, "a cache file of another version (%u) or byte order",
        (unsigned)h.version);
    return NULL;
  }
  if (h.len != m->len) {
    say(why, nwhy,
        "the file is %llu bytes, its header says %llu: truncated "
        "or extended",
        (unsigned long long)m->len, (unsigned long long)h.len);
    return NULL;
  }
  if (h.dir_off != sizeof h || h.ntables == 0 ||
      h.ntables > (m->len - sizeof h) / sizeof(cf_dir)) {
    say(why, nwhy, "the header's directory is out of bounds");
    return NULL;
  }
  uint64_t want[2] = {h.sum[0], h.sum[1]};
  h.sum[0] = 1;
  h.sum[1] = 0;
  uint64_t got[2] = {1, 0};
  ga_cfile_sum((const uint64_t *)&h, sizeof h / 8, got);
  ga_cfile_sum((const uint64_t *)(m->p + sizeof h), 2 * (size_t)h.ntables, got);
  if (got[0] != want[0] || got[1] != want[1]) {
    say(why, nwhy, "the header's checksum does not match: damaged");
    return NULL;
  }
  return (const cf_hdr *)m->p;
}

/* Rule 2: one section's bounds and meta.  GA_CFILE_OK with *sh and a
** reader of the meta, else GA_CFILE_BAD with why. */
static int section_checked(const cf_map *m, const cf_dir *d, cf_shdr *sh,
                           cf_rd *meta, char *why, size_t nwhy) {
  if (d->off % 8 || d->len % 8 || d->off > m->len || d->len > m->len - d->off ||
      d->len < sizeof *sh) {
    say(why, nwhy, "a table's section is out of bounds");
    return GA_CFILE_BAD;
  }
  memcpy(sh, m->p + d->off, sizeof *sh);
  if (memcmp(sh->magic, "GATABLE1", 8) || sh->meta_len % 8 ||
      sh->meta_len > d->len - sizeof *sh) {
    say(why, nwhy, "a table's section is damaged (its header)");
    return GA_CFILE_BAD;
  }
  uint64_t s[2] = {1, 0};
  ga_cfile_sum((const uint64_t *)(m->p + d->off + sizeof *sh), sh->meta_len / 8,
               s);
  if (s[0] != sh->sum[0] || s[1] != sh->sum[1]) {
    say(why, nwhy,
        "a table's description does not match its checksum: "
        "damaged");
    return GA_CFILE_BAD;
  }
  meta->p = m->p + d->off + sizeof *sh;
  meta->n = sh->meta_len;
  meta->at = 0;
  meta->bad = 0;
  return GA_CFILE_OK;
}

static void unmap_entry(ga_centry *e) {
  if (e->map)
    munmap(e->map, e->map_len);
  e->map = NULL;
}

/* A sealed dictionary from count values in code order (len, bytes), or
** NULL: damaged (why) or out of memory (*nomem). */
static ga_dict *dict_rebuild(const unsigned char *p, uint64_t len,
                             uint64_t count, int *nomem, char *why,
                             size_t nwhy) {
  ga_dict_local *l = ga_dict_local_new();
  ga_dict *d = ga_dict_new();
  uint32_t *map = NULL;
  int ok = 0;
  *nomem = 0;
  if (!l || !d || count > GA_DICT_MAX ||
      !(map = sqlite3_malloc64(sizeof(uint32_t) * (count ? count : 1)))) {
    *nomem = count <= GA_DICT_MAX;
    goto out;
  }
  uint64_t at = 0;
  for (uint64_t k = 0; k < count; k++) {
    uint32_t n;
    if (len - at < 4)
      goto bad;
    memcpy(&n, p + at, 4);
    at += 4;
    if (n > len - at || n > 0x7fffffff)
      goto bad;
    uint32_t id;
    int rc = ga_dict_local_intern(l, p + at, (int)n, &id);
    if (rc) {
      *nomem = rc == GA_NOMEM;
      goto out;
    }
    if (id != k)
      goto bad; /* a value twice */
    at += n;
  }
  if (ga_dict_merge(d, l, map) || ga_dict_seal(d)) {
    *nomem = 1;
    goto out;
  }
  /* in code order: load id k has code k */
  for (uint64_t k = 0; k < count; k++)
    if (ga_dict_code(d, map[k]) != k)
      goto bad;
  ok = 1;
  goto out;
bad:
  say(why, nwhy, "a dictionary is not in code order: damaged");
out:
  sqlite3_free(map);
  ga_dict_local_free(l);
  if (!ok) {
    ga_dict_free(d);
    d = NULL;
  }
  return d;
}

int ga_cfile_map(ga_cache *c, int64_t budget, const char *path,
                 const ga_cfstamp *st, const char *table,
                 const char *const *names, const int *affs, int ncols,
                 int (*stop)(void *), void *arg, ga_centry **out, char *why,
                 size_t nwhy) {
  *out = NULL;
  cf_map m;
  int rc = open_checked(path, &m, why, nwhy);
  if (rc != GA_CFILE_OK)
    return rc;
  ga_centry *e = NULL;
  int64_t reserved = 0;
  rc = GA_CFILE_BAD;
  const cf_hdr *h = hdr_checked(&m, why, nwhy);
  if (!h)
    goto fail;
  if (memcmp(&h->st, st, sizeof *st)) {
    say(why, nwhy, "the file was written for another state of the database");
    rc = GA_CFILE_OTHER;
    goto fail;
  }
  const cf_dir *dir = (const cf_dir *)(m.p + h->dir_off);
  cf_shdr sh;
  cf_rd r;
  const cf_dir *d = NULL;
  for (uint32_t i = 0; i < h->ntables && !d; i++) {
    const char *nm;
    uint32_t nn;
    if (section_checked(&m, &dir[i], &sh, &r, why, nwhy) != GA_CFILE_OK)
      goto fail;
    if (!rd_str(&r, &nm, &nn))
      goto meta_bad;
    if (nn == strlen(table) && !sqlite3_strnicmp(nm, table, (int)nn))
      d = &dir[i];
  }
  if (!d) {
    say(why, nwhy, "the file holds no entry of %s", table);
    rc = GA_CFILE_ABSENT;
    goto fail;
  }
  if (sh.ncols != (uint32_t)ncols || sh.rows < 1 || sh.nsegs < 1 ||
      (uint64_t)sh.nsegs > d->len / 8 || (uint64_t)sh.rows > d->len) {
    if (sh.ncols != (uint32_t)ncols) {
      say(why, nwhy,
          "the file holds other columns of %s (%u of them, not "
          "these %d)",
          table, (unsigned)sh.ncols, ncols);
      rc = GA_CFILE_OTHER;
      goto fail;
    }
    goto meta_bad;
  }
  /* the entry, its columns from the meta */
  e = sqlite3_malloc64(sizeof *e);
  if (!e)
    goto nomem;
  memset(e, 0, sizeof *e);
  e->where = GA_CACHE_HOST;
  e->dev = -1;
  e->enc = (int)sh.enc;
  e->rows = sh.rows;
  e->cols = sqlite3_malloc64(sizeof(ga_ccol) * (size_t)ncols);
  e->segs = sqlite3_malloc64(sizeof(ga_cblock *) * (size_t)sh.nsegs);
  e->seg_base = sqlite3_malloc64(sizeof(int64_t) * (size_t)sh.nsegs);
  if (!e->cols || !e->segs || !e->seg_base)
    goto nomem;
  memset(e->cols, 0, sizeof(ga_ccol) * (size_t)ncols);
  e->ncols = ncols;
  const cf_col *cc[GA_CACHE_MAX_COLS];
  if (ncols > GA_CACHE_MAX_COLS)
    goto meta_bad;
  for (int k = 0; k < ncols; k++) {
    const char *nm;
    uint32_t nn;
    if (!rd_str(&r, &nm, &nn) || !(cc[k] = rd_get(&r, sizeof(cf_col))))
      goto meta_bad;
    if (nn != strlen(names[k]) || sqlite3_strnicmp(nm, names[k], (int)nn) ||
        cc[k]->aff != affs[k]) {
      say(why, nwhy,
          "the file holds other columns of %s (or other "
          "declared types): column %d is %.*s",
          table, k + 1, (int)(nn > 64 ? 64 : nn), nm);
      rc = GA_CFILE_OTHER;
      goto fail;
    }
    const cf_col *x = cc[k];
    ga_ccol *col = &e->cols[k];
    if (x->nnull < 0 || x->nint < 0 || x->nreal < 0 || x->ntext < 0 ||
        x->nnow < 0 || x->nnow > x->ntext ||
        x->nnull + x->nint + x->nreal + x->ntext != sh.rows ||
        (x->mixed != 0 && x->mixed != 1) ||
        (x->dict_len && (x->dict_off % 8 || x->dict_off > d->len ||
                         x->dict_len > d->len - x->dict_off)))
      goto meta_bad;
    col->aff = x->aff;
    col->mixed = x->mixed;
    col->nnull = x->nnull;
    col->nint = x->nint;
    col->nreal = x->nreal;
    col->ntext = x->ntext;
    col->nnow = x->nnow;
    col->imin = x->imin;
    col->imax = x->imax;
  }
  /* the segments: bounds first, then the budget, then the checksums */
  int64_t bytes = 0, base = 0;
  size_t seg_meta = sizeof(cf_seg) + sizeof(uint64_t) * 2 * (size_t)ncols;
  size_t seg_at = r.at;
  for (int64_t s = 0; s < sh.nsegs; s++) {
    const cf_seg *g = rd_get(&r, seg_meta);
    if (!g || g->n < 1 || g->n > sh.rows - base || g->off % 8 ||
        g->off > d->len ||
        (uint64_t)seg_words(ncols, g->n) > (d->len - g->off) / 8)
      goto meta_bad;
    bytes += seg_words(ncols, g->n) * 8;
    base += g->n;
  }
  if (base != sh.rows)
    goto meta_bad;
  if (!ga_cache_reserve(c, budget, bytes, NULL)) {
    say(why, nwhy, "its %lld bytes do not fit in cache_bytes = %lld",
        (long long)bytes, (long long)budget);
    rc = GA_CFILE_BUDGET;
    goto fail;
  }
  reserved = bytes;
  const unsigned char *sec = m.p + d->off;
  base = 0;
  for (int64_t s = 0; s < sh.nsegs; s++) {
    const cf_seg *g = (const cf_seg *)(r.p + seg_at + (size_t)s * seg_meta);
    const uint64_t *want = (const uint64_t *)(g + 1);
    if (stop && stop(arg)) {
      say(why, nwhy, "interrupted");
      goto fail;
    }
    ga_cblock *b = sqlite3_malloc64(sizeof *b);
    if (!b)
      goto nomem;
    memset(b, 0, sizeof *b);
    b->ncols = ncols;
    b->n = b->cap = g->n;
    b->mem = (uint64_t *)(void *)(sec + g->off);
    b->bytes = seg_words(ncols, g->n) * 8;
    b->mapped = 1;
    e->segs[e->nsegs] = b;
    e->seg_base[e->nsegs++] = base;
    base += g->n;
    madvise((void *)((uintptr_t)b->mem & ~(uintptr_t)4095),
            (size_t)b->bytes + 4096, MADV_WILLNEED);
    for (int k = 0; k < ncols; k++) {
      uint64_t got[2];
      block_sum(b, k, got);
      if (got[0] != want[2 * k] || got[1] != want[2 * k + 1]) {
        say(why, nwhy,
            "column %s's block at row %lld does not match its "
            "checksum: damaged",
            names[k], (long long)e->seg_base[e->nsegs - 1]);
        goto fail;
      }
    }
  }
  /* the dictionaries: checksum, rebuild, and every code in range */
  for (int k = 0; k < ncols; k++) {
    const cf_col *x = cc[k];
    ga_ccol *col = &e->cols[k];
    if (!x->dict_len)
      continue;
    uint64_t s2[2] = {1, 0};
    ga_cfile_sum((const uint64_t *)(sec + x->dict_off), x->dict_len / 8, s2);
    if (x->dict_len % 8 || s2[0] != x->dsum[0] || s2[1] != x->dsum[1]) {
      say(why, nwhy,
          "column %s's dictionary does not match its checksum: "
          "damaged",
          names[k]);
      goto fail;
    }
    int nomem = 0;
    col->dict = dict_rebuild(sec + x->dict_off, x->dict_len, x->dict_count,
                             &nomem, why, nwhy);
    if (!col->dict) {
      if (nomem)
        goto nomem;
      goto fail;
    }
    int64_t db = ga_dict_bytes(col->dict);
    if (!ga_cache_reserve(c, budget, db, NULL)) {
      say(why, nwhy, "it does not fit in cache_bytes = %lld",
          (long long)budget);
      rc = GA_CFILE_BUDGET;
      goto fail;
    }
    reserved += db;
    if (!col->mixed)
      for (int64_t s = 0; s < e->nsegs; s++) {
        const ga_cblock *b = e->segs[s];
        const uint64_t *v = ga_cb_vals(b, k), *nn = ga_cb_notnull(b, k);
        for (int64_t i = 0; i < b->n; i++)
          if (ga_bit(nn, i) && v[i] >= x->dict_count) {
            say(why, nwhy,
                "column %s holds a code past its dictionary: "
                "damaged",
                names[k]);
            goto fail;
          }
      }
  }
  e->map = m.p;
  e->map_len = m.len;
  e->free_map = unmap_entry;
  e->from_file = 1;
  e->bytes = reserved;
  *out = e;
  return GA_CFILE_OK;
meta_bad:
  say(why, nwhy, "the table's description is inconsistent: damaged");
  rc = GA_CFILE_BAD;
  goto fail;
nomem:
  rc = GA_CFILE_NOMEM;
  say(why, nwhy, "out of memory");
fail:
  if (reserved) {
    pthread_mutex_lock(&c->mu);
    c->used -= reserved;
    pthread_mutex_unlock(&c->mu);
  }
  ga_centry_free(e); /* its mapped blocks are not freed one by one */
  munmap(m.p, m.len);
  return rc;
}
