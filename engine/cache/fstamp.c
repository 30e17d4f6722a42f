/*
** fstamp.c — the comparison of two file stamps (fstamp.h rule 1).
*/
#include "fstamp.h"

#include <string.h>

static const char *diff(const ga_fstamp *a, const ga_fstamp *b, int held) {
  if (!a->ok && !(held && a->walempty))
    return a->why ? a->why : "the file's state cannot be proven";
  if (!b->ok && !(held && b->walempty))
    return b->why ? b->why : "the file's state cannot be proven";
  if (a->walempty != b->walempty)
    return "the WAL changed (the wal-index header: a commit)";
  if (a->st_dev != b->st_dev || a->st_ino != b->st_ino)
    return "another file under the name (device, inode)";
  if (a->has_btime != b->has_btime || a->st_btime_ns != b->st_btime_ns)
    return "another file under the name (its birth time)";
  if (a->st_ctime_ns != b->st_ctime_ns || a->size != b->size)
    return "the file was written (its change time or size moved)";
  if (a->counter != b->counter || a->npages != b->npages ||
      a->cookie != b->cookie || a->pagesize != b->pagesize || a->wal != b->wal)
    return "the database header changed (change counter, pages, schema "
           "cookie)";
  if (a->wal &&
      (a->mxframe != b->mxframe || memcmp(a->salt, b->salt, sizeof a->salt) ||
       memcmp(a->cksum, b->cksum, sizeof a->cksum) ||
       memcmp(a->walidx, b->walidx, sizeof a->walidx)))
    return "the WAL changed (the wal-index header: a commit, a checkpoint's "
           "restart)";
  return NULL;
}

const char *ga_fstamp_diff(const ga_fstamp *a, const ga_fstamp *b) {
  return diff(a, b, 0);
}

const char *ga_fstamp_diff_held(const ga_fstamp *a, const ga_fstamp *b) {
  return diff(a, b, 1);
}
