/* Mappings: anonymous (optionally THP-aligned), shared with forked children. */
#include "inguest/mem.h"
#include "inguest/prog.h"

#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define THP_ALIGN (2UL << 20)

void *ig_map_anon(size_t len, int thp)
{
	char *p, *aligned;
	size_t extra = thp ? THP_ALIGN : 0;

	p = mmap(NULL, len + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (!thp)
		return p;
	aligned = (char *)(((uintptr_t)p + THP_ALIGN - 1) & ~(uintptr_t)(THP_ALIGN - 1));
	if (aligned > p)
		munmap(p, (size_t)(aligned - p));
	if ((size_t)(aligned - p) < extra)
		munmap(aligned + len, extra - (size_t)(aligned - p));
#ifdef MADV_HUGEPAGE
	madvise(aligned, len, MADV_HUGEPAGE);
#endif
	return aligned;
}

void ig_unmap_anon(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

void *ig_map_shared(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		ig_die(IG_EXIT_ENV, errno, "mmap of %zu shared bytes failed", len);
	return p;
}

void ig_child_setup(void)
{
	ig_in_child = true;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
}
