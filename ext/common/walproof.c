/*
** walproof.c — a WAL's frames and pages read through the caller's open
** files (walproof.h, whose header states the rules).
*/
#include "walproof.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "filestamp.h"

SQLITE_EXTENSION_INIT3

static int rd(sqlite3_file *f, void *buf, int n, sqlite3_int64 off) {
  if (!f || !f->pMethods)
    return 0;
  int rc = f->pMethods->xRead(f, buf, n, off);
  return rc == SQLITE_OK;
}

static sqlite3_file *file_of(sqlite3 *db, const char *schema, int op) {
  sqlite3_file *f = NULL;
  if (sqlite3_file_control(db, schema, op, &f) != SQLITE_OK)
    f = NULL;
  return f;
}

static sqlite3_int64 frame_off(const ga_walview *v, uint32_t f) {
  return 32 + (sqlite3_int64)(f - 1) * (24 + (sqlite3_int64)v->pgsz);
}

int ga_walview_open(sqlite3 *db, const char *schema, const ga_fstamp *s,
                    uint32_t from, int (*intr)(void *), void *iarg,
                    ga_walview *v, char *why, size_t nwhy) {
  memset(v, 0, sizeof(*v));
  v->mincommit = 0xffffffffu;
  if (!s->ok || !s->wal || !s->walprov || !s->mxframe) {
    snprintf(why, nwhy, "the WAL proves no state (%s)",
             s->why ? s->why : "no committed frame");
    return SQLITE_NOTFOUND;
  }
  v->db = file_of(db, schema, SQLITE_FCNTL_FILE_POINTER);
  v->wal = file_of(db, schema, SQLITE_FCNTL_JOURNAL_POINTER);
  unsigned char wh[32];
  if (!rd(v->wal, wh, 32, 0) || memcmp(wh + 16, s->salt, 8)) {
    snprintf(why, nwhy, "the -wal file cannot be read, or its salts moved");
    return SQLITE_NOTFOUND;
  }
  v->pgsz = ga_be4(wh + 8);
  if (v->pgsz < 512 || v->pgsz > 65536 || (v->pgsz & (v->pgsz - 1)) ||
      v->pgsz != s->pagesize + (s->pagesize == 1 ? 65535u : 0)) {
    snprintf(why, nwhy, "the -wal file's page size is not the database's");
    return SQLITE_NOTFOUND;
  }
  memcpy(v->salt, s->salt, 8);
  v->mx = s->mxframe;
  uint32_t *pg = sqlite3_malloc64(sizeof(uint32_t) * (size_t)v->mx);
  if (!pg)
    return SQLITE_NOMEM;
  uint32_t maxsize = 0, maxpg = 0;
  unsigned char fh[24];
  for (uint32_t f = 1; f <= v->mx; f++) {
    if ((f & 4095) == 0 && intr && intr(iarg)) {
      sqlite3_free(pg);
      return SQLITE_INTERRUPT;
    }
    if (!rd(v->wal, fh, 24, frame_off(v, f)) || memcmp(fh + 8, s->salt, 8) ||
        !ga_be4(fh)) {
      sqlite3_free(pg);
      snprintf(why, nwhy, "frame %u of the -wal is not of this WAL (salts)", f);
      return SQLITE_NOTFOUND;
    }
    pg[f - 1] = ga_be4(fh);
    uint32_t commit = ga_be4(fh + 4);
    if (commit > maxsize)
      maxsize = commit;
    if (commit && f > from && commit < v->mincommit)
      v->mincommit = commit;
    if (f == from) /* a commit frame: the entry's state ends there */
      v->from_npage = commit;
    if (f == v->mx)
      v->npage = commit;
    if (pg[f - 1] > maxpg)
      maxpg = pg[f - 1];
    if (f == v->mx && (ga_be4(fh + 16) != s->cksum[0] ||
                       ga_be4(fh + 20) != s->cksum[1] || !commit)) {
      sqlite3_free(pg);
      snprintf(why, nwhy, "the WAL's last frame is not the stamp's");
      return SQLITE_NOTFOUND;
    }
  }
  /* rule 3; and below 2^24 pages, the most a proof reads a type byte of
  ** (cache_extend.c rule 4): last[] then takes at most 64 MiB, never what
  ** a hostile -wal names */
  if (maxpg > maxsize || maxpg >= (1u << 24)) {
    sqlite3_free(pg);
    snprintf(why, nwhy,
             "a frame names a page past every commit's size or 2^24");
    return SQLITE_NOTFOUND;
  }
  v->nlast = maxpg + 1;
  v->last = sqlite3_malloc64(sizeof(uint32_t) * (size_t)v->nlast);
  if (!v->last) {
    sqlite3_free(pg);
    return SQLITE_NOMEM;
  }
  memset(v->last, 0, sizeof(uint32_t) * (size_t)v->nlast);
  for (uint32_t f = 1; f <= v->mx; f++)
    v->last[pg[f - 1]] = f;
  sqlite3_free(pg);
  return SQLITE_OK;
}

void ga_walview_close(ga_walview *v) {
  sqlite3_free(v->last);
  memset(v, 0, sizeof(*v));
}

int ga_walview_frame_is(const ga_walview *v, uint32_t f,
                        const uint32_t cksum[2]) {
  unsigned char fh[24], wh[32];
  if (f < 1 || f > v->mx || !rd(v->wal, wh, 32, 0) ||
      !rd(v->wal, fh, 24, frame_off(v, f)))
    return 0;
  return !memcmp(fh + 8, wh + 16, 8) && ga_be4(fh + 16) == cksum[0] &&
         ga_be4(fh + 20) == cksum[1];
}

int ga_walview_page(const ga_walview *v, uint32_t pg, unsigned char *buf) {
  if (pg < 1)
    return 0;
  if (pg < v->nlast && v->last[pg]) {
    /* rule 2, again at the read: the frame still names pg under this
    ** WAL's salts (a reader on read-mark 0 does not stop a restart from
    ** writing a new generation over the frames) */
    unsigned char fh[24];
    sqlite3_int64 off = frame_off(v, v->last[pg]);
    return rd(v->wal, fh, 24, off) && ga_be4(fh) == pg &&
           !memcmp(fh + 8, v->salt, 8) &&
           rd(v->wal, buf, (int)v->pgsz, off + 24);
  }
  return rd(v->db, buf, (int)v->pgsz,
            (sqlite3_int64)(pg - 1) * (sqlite3_int64)v->pgsz);
}

/* ---- b-tree pages (rule 4) ---- */

static uint32_t hdr_off(uint32_t pgno) { return pgno == 1 ? 100 : 0; }

int ga_btree_type(const unsigned char *p, uint32_t pgno, uint32_t pgsz) {
  uint32_t h = hdr_off(pgno);
  if (h + 12 > pgsz)
    return -1;
  int t = p[h];
  return t == 0x02 || t == 0x05 || t == 0x0a || t == 0x0d ? t : -1;
}

int ga_btree_right(const unsigned char *p, uint32_t pgno, uint32_t pgsz,
                   uint32_t *child) {
  uint32_t h = hdr_off(pgno);
  if (ga_btree_type(p, pgno, pgsz) != 0x05)
    return 0;
  *child = ga_be4(p + h + 8);
  return *child != 0;
}

/* A varint at p (at most end - p bytes): its length, or 0. */
static int varint(const unsigned char *p, const unsigned char *end,
                  uint64_t *out) {
  uint64_t v = 0;
  for (int i = 0; i < 9; i++) {
    if (p + i >= end)
      return 0;
    if (i == 8) {
      *out = v << 8 | p[i];
      return 9;
    }
    v = v << 7 | (p[i] & 0x7f);
    if (!(p[i] & 0x80)) {
      *out = v;
      return i + 1;
    }
  }
  return 0;
}

static int cell_rowid(const unsigned char *p, uint32_t pgsz, uint32_t h, int i,
                      int64_t *rowid) {
  uint32_t ptr = h + 8 + 2 * (uint32_t)i;
  if (ptr + 2 > pgsz)
    return 0;
  uint32_t off = (uint32_t)p[ptr] << 8 | p[ptr + 1];
  if (off < h + 8 || off >= pgsz)
    return 0;
  const unsigned char *c = p + off, *end = p + pgsz;
  uint64_t size = 0, rid = 0;
  int n = varint(c, end, &size);
  if (!n || !varint(c + n, end, &rid))
    return 0;
  *rowid = (int64_t)rid;
  return 1;
}

int ga_btree_leaf(const unsigned char *p, uint32_t pgno, uint32_t pgsz,
                  int *ncell, int64_t *first, int64_t *last) {
  uint32_t h = hdr_off(pgno);
  if (ga_btree_type(p, pgno, pgsz) != 0x0d)
    return 0;
  *ncell = (int)((uint32_t)p[h + 3] << 8 | p[h + 4]);
  if (*ncell == 0)
    return 1;
  return cell_rowid(p, pgsz, h, 0, first) &&
         cell_rowid(p, pgsz, h, *ncell - 1, last);
}

int ga_btree_last_children(const unsigned char *p, uint32_t pgno, uint32_t pgsz,
                           uint32_t *kids, int max, int *n) {
  uint32_t h = hdr_off(pgno);
  *n = 0;
  if (ga_btree_type(p, pgno, pgsz) != 0x05 || max < 1)
    return 0;
  int ncell = (int)((uint32_t)p[h + 3] << 8 | p[h + 4]);
  int from = ncell - (max - 1) < 0 ? 0 : ncell - (max - 1);
  for (int i = from; i < ncell; i++) {
    uint32_t ptr = h + 12 + 2 * (uint32_t)i;
    if (ptr + 2 > pgsz)
      return 0;
    uint32_t off = (uint32_t)p[ptr] << 8 | p[ptr + 1];
    if (off < h + 12 || off + 4 > pgsz)
      return 0;
    kids[(*n)++] = ga_be4(p + off);
  }
  kids[(*n)++] = ga_be4(p + h + 8);
  for (int i = 0; i < *n; i++)
    if (!kids[i])
      return 0;
  return 1;
}

/* ---- rule 5: idle notes ---- */

/* The wal-index header of (db, schema) at the last moment db had no
** transaction open on it, with the file's identity: a transaction open
** now began after that moment, so where the header is still the same,
** its snapshot is that header's state.  A slot reused by a connection at
** the same address proves the same (its transactions began after it
** opened, after the note). */
#define GA_IDLE_NOTES 64
typedef struct idle_note {
  const void *db;
  char schema[64];
  uint64_t dev, ino;
  unsigned char hdr[GA_FSTAMP_WALIDX];
  int64_t tick;
} idle_note;
static idle_note g_notes[GA_IDLE_NOTES];
static int64_t g_tick;
static pthread_mutex_t g_notes_mu = PTHREAD_MUTEX_INITIALIZER;

/* The schema's file is in WAL mode (its header says so): only then is the
** wal-index read (xShmMap would create a -shm beside a rollback file). */
static int is_wal_file(sqlite3 *db, const char *schema) {
  unsigned char h[100];
  return rd(file_of(db, schema, SQLITE_FCNTL_FILE_POINTER), h, 100, 0) &&
         h[18] == 2 && h[19] == 2;
}

/* The connection's pager has its WAL open (the journal it names begins
** with a WAL header's magic, 0x377f0682 or 0x377f0683): the wal-index is then
*mapped already, by the
** pager.  A mapping made before the pager's first read is adopted by that
** read, but a connection that closes without one (gpuagg_info() and a
** close) would leave it to the file until the process ends: a note needs
** no mapping of its own. */
static int wal_opened(sqlite3 *db, const char *schema) {
  unsigned char m[4];
  return rd(file_of(db, schema, SQLITE_FCNTL_JOURNAL_POINTER), m, 4, 0) &&
         (ga_be4(m) | 1) == 0x377f0683u;
}

void ga_walnote_idle(sqlite3 *db, const char *schema) {
  unsigned char h[GA_FSTAMP_WALIDX];
  uint64_t dev = 0, ino = 0;
  if (!schema || strlen(schema) >= sizeof g_notes[0].schema ||
      sqlite3_txn_state(db, schema) != SQLITE_TXN_NONE ||
      !ga_fstamp_ident(db, schema, &dev, &ino) || !is_wal_file(db, schema) ||
      !wal_opened(db, schema) || !ga_fstamp_walidx(db, schema, h))
    return;
  pthread_mutex_lock(&g_notes_mu);
  idle_note *slot = &g_notes[0];
  for (int i = 0; i < GA_IDLE_NOTES; i++) {
    idle_note *n = &g_notes[i];
    if (n->db == db && !sqlite3_stricmp(n->schema, schema)) {
      slot = n;
      break;
    }
    if (n->tick < slot->tick)
      slot = n;
  }
  slot->db = db;
  snprintf(slot->schema, sizeof slot->schema, "%s", schema);
  slot->dev = dev;
  slot->ino = ino;
  memcpy(slot->hdr, h, sizeof h);
  slot->tick = ++g_tick;
  pthread_mutex_unlock(&g_notes_mu);
}

int ga_walnote_get(sqlite3 *db, const char *schema, uint64_t dev, uint64_t ino,
                   unsigned char *h) {
  int found = 0;
  pthread_mutex_lock(&g_notes_mu);
  for (int i = 0; i < GA_IDLE_NOTES && !found; i++) {
    idle_note *n = &g_notes[i];
    if (n->db == db && n->tick && !sqlite3_stricmp(n->schema, schema) &&
        n->dev == dev && n->ino == ino) {
      memcpy(h, n->hdr, GA_FSTAMP_WALIDX);
      found = 1;
    }
  }
  pthread_mutex_unlock(&g_notes_mu);
  return found;
}
