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
**   5. Freed mappings are kept for the next query (issue 37, d4 of
**      bench/query_bench.py from the host cache: the same 70 MB of groups
**      and 15 MB of records mapped, faulted in, zeroed by the kernel and
**      unmapped at every call, about a tenth of its CPU time): a mapping
**      freed goes to the process's pool, which holds at most
**      GA_BIG_KEEP_N mappings and GA_BIG_KEEP_BYTES bytes (a full pool
**      unmaps its oldest to make room); an allocation takes a kept mapping
**      of its size class (rule 6) before it maps a new one.  A mapping is
**      kept only when the kernel accepts MADV_FREE for it (else, and on a
**      system without it, it is unmapped): under memory pressure the
**      kernel takes its pages back (they read as zero then), so the pool
**      holds no memory the system needs.  A caller never relies on a
**      buffer's contents: every user writes before it reads (idrows.c,
**      scan_group.c's group_reset).  ga_big_stats says how many
**      allocations the pool served and what it keeps (gpuagg_info's
**      cache object: big_reused, big_kept); GPUAGG_BIG_KEEP=0 in the
**      environment turns the pool off (A/B runs).
**   6. Size classes: a mapping's bytes are the request's rounded up to
**      whole GA_BIG_MIN (2 MiB) units, so requests of one class share
**      mappings; ga_big_free rounds the size given the same way.
*/
#ifndef GA_BIGMEM_H
#define GA_BIGMEM_H

#include <stddef.h>

#define GA_BIG_MIN ((size_t)2 << 20)
#define GA_BIG_KEEP_N 64                      /* rule 5 */
#define GA_BIG_KEEP_BYTES ((size_t)256 << 20) /* rule 5 */

void *ga_big_alloc(size_t bytes); /* NULL when out of memory */
void ga_big_free(void *p, size_t bytes);
/* Rule 5: allocations the pool served so far (*reused), and the bytes it
** keeps now (*kept; -1 where the build keeps none: rule 4, or no mmap). */
void ga_big_stats(long long *reused, long long *kept);

#endif
