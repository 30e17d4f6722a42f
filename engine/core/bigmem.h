/*
** bigmem.h — large scratch buffers that a query fills once and frees: the
** host cache's sorted records (engine/cache/idrows.h) and the blocks of
** groups (engine/scan/scan_group.c).
**
** Why: such a buffer is fresh memory every query, and every 4 KiB page of
** it costs a page fault when first written.  On the 2-core VM (a PVM guest)
** the faults of d2 (bench/query_bench.py) took more time than its rows:
** sorting 1.7 million records of 32 bytes spent 400 ms, nearly all of it
** faulting in the second buffer.
**
** Rules:
**   1. A buffer of GA_BIG_MIN bytes or more is mapped on its own (mmap)
**      and asked for transparent huge pages (madvise MADV_HUGEPAGE, where
**      the system has it): one fault per 2 MiB.  Unwritten pages cost
**      nothing, so a caller may ask for an upper bound.
**   2. Smaller ones, and every buffer where there is no mmap, come from
**      sqlite3_malloc64.
**   3. ga_big_free needs the size given to ga_big_alloc.
**   4. Built with ASan or TSan, every buffer is rule 2's (bigmem.c says
**      why).
*/
#ifndef GA_BIGMEM_H
#define GA_BIGMEM_H

#include <stddef.h>

#define GA_BIG_MIN ((size_t)2 << 20)

void *ga_big_alloc(size_t bytes); /* NULL when out of memory */
void ga_big_free(void *p, size_t bytes);

#endif
