/*
 * kselftest's mm tests built from the kernel under test's own tree
 * (tools/testing/selftests/vm in 6.1, mm from 6.3), statically, for the
 * guest's architecture, and cached as kernels are:
 *
 * CACHE/src/<source-id>/tree            the pristine tree, shared with kernel builds
 * CACHE/selftests/work/<tree>-<arch>/   src/ (a hardlink farm, or a git tree's clone),
 *                                       hdr/ (make O=hdr headers), lock
 * CACHE/selftests/<key>/                SUBDIR/<test>..., selftests.json, build.log
 *
 * key = sha256(source identity, arch, the sorted test list). An entry is
 * served only when whole (its json's key, each test a program of its arch).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "kernel/build.h"
#include "kernel/recipe.h"
#include "util/arch.h"
#include "util/cleanup.h"
#include "util/error.h"

/* What the shipped kselftest scenario runs. */
#define VN_SELFTESTS_DEFAULT "migration,ksm_tests"
/* Debian's kernel source (package linux-source-6.1), for the stock kernel. */
#define VN_SELFTESTS_STOCK_TREE "/usr/src/linux-source-6.1.tar.xz"
/* Where the tests are shared in the guest; the scenario's commands name it. */
#define VN_SELFTESTS_GUEST_DIR "/opt/kselftest"
#define VN_SELFTESTS_MAX       64

struct vn_selftests_opts {
	const char *cache_dir;  /* STATE/cache/kernels: its src/ trees are the kernel builds' */
	enum vn_arch arch;      /* zero: x86_64 */
	const char *tests;      /* comma-separated test names; NULL: VN_SELFTESTS_DEFAULT */
	const char *stock_tree; /* the tarball for the stock kernel; NULL: VN_SELFTESTS_STOCK_TREE */
	int jobs;               /* make -j; 0: the online CPUs */
	unsigned deadline_s;    /* each make; 0: 3600 */
	vn_kernel_progress_fn progress;
	void *progress_data;
};

struct vn_selftests {
	char *dir;    /* CACHE/selftests/<key>: what is shared at VN_SELFTESTS_GUEST_DIR */
	char *subdir; /* "vm" or "mm" (an mm entry also has vm -> mm) */
	char *key;
	char *source_id;
	char *tree; /* the tarball or checkout built from */
	char **tests;
	size_t ntests;
	enum vn_arch arch;
	double build_s;
	bool cached; /* this call found it in the cache */
};

/*
 * Build (or find) the tests of o->tests from r's tree (a source recipe), or
 * from o->stock_tree when r is NULL (the stock kernel). A bad test name, a
 * test the tree has no source for, or a tree without selftests is an input
 * error; a missing tool, library or cross compiler, a full disk, and a test
 * that does not compile are infrastructure errors (the last with the log's
 * tail: a selftest that does not build says nothing of the kernel).
 */
int vn_selftests_build(const struct vn_recipe *r, const struct vn_selftests_opts *o, struct vn_selftests **out,
		       struct vn_error *err);

/* "a,b": names of letters, digits and "._+-" (not first "." or "-"), sorted, each once; input error naming one. */
int vn_selftests_parse_list(const char *list, char ***out, size_t *n, struct vn_error *err);

/* A program at path that runs on arch: an ELF of its machine, or a "#!" script. */
bool vn_selftests_program_ok(const char *path, enum vn_arch arch);

/* ---- selftests-cache.c, shared with selftests.c ---- */

/* The cache key of (source id, arch, tests) as hex. */
void vn_selftests_key(const char *source_id, enum vn_arch arch, char *const *tests, size_t n, char out[65]);
/* CACHE/selftests/<key>, when whole and key's: 0 with *out; -ENOENT otherwise (a broken one moved to .bad/). */
int vn_selftests_cache_get(const char *final, const char *key, struct vn_selftests **out);
/* selftests.json into staging, everything synced, staging renamed to final. */
int vn_selftests_cache_install(const struct vn_selftests *t, const char *staging, const char *final,
			       struct vn_error *err);

void vn_selftests_free(struct vn_selftests *t);
VN_DEFINE_CLEANUP(struct vn_selftests *, vn_selftests_free);
#define _cleanup_selftests_ _cleanup_(vn_selftests_freep)
