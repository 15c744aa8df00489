/* Mappings: private and THP memory, results shared with forked children (mem.c). */
#pragma once

#include <stddef.h>

/* Anonymous private mapping; thp: 0 normal, 1 THP (aligned + MADV_HUGEPAGE). NULL on failure. */
void *ig_map_anon(size_t len, int thp);
void ig_unmap_anon(void *p, size_t len);
/* Shared anonymous memory for results from forked children (zeroed). Dies on failure. */
void *ig_map_shared(size_t len);
/* In a forked child: die with SIGKILL when the parent goes away. */
void ig_child_setup(void);
