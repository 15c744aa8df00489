/*
 * vnuma dump (dump.c): a memory-only dump of a running or panicked guest,
 * the vmlinux it belongs to, and FILE.json describing both. The dump is
 * written as FILE.partial and renamed once whole: FILE is never half a dump.
 */
#pragma once

#include <stdint.h>

#include "kernel/vmlinux.h"
#include "testbed/testbed.h"
#include "virt/debug.h"

/*
 * Room a dump needs beyond the guest's memory: ELF and kdump headers, and
 * pages the kdump format could not compress (its bitmaps are 1/32768 of
 * memory). What the free-space check asks for: memory + memory/64 + this.
 */
#define VN_DUMP_SLACK (UINT64_C(16) << 20)

struct vn_dump_req {
	const char *name;           /* the guest */
	const char *out;            /* the dump's path (an existing file is refused) */
	enum vn_dump_format format; /* VN_DUMP_ELF by default */
	const char *debug_root;     /* "" for this host's -dbg packages; a test's tree */
};

/* The guest as libvirt has it, before the dump. */
struct vn_dump_guest {
	uint64_t memory;                     /* bytes */
	char *state;                         /* "running", "paused", "crashed" */
	char *kernel, *kernel_id, *topology; /* what booted it; NULL: not said */
};
void vn_dump_guest_clear(struct vn_dump_guest *g);

/* The libvirt half; a test's fake stands in for it. */
struct vn_dump_ops {
	int (*probe)(void *data, const char *name, struct vn_dump_guest *g, struct vn_error *err);
	int (*write)(void *data, const char *name, const char *path, enum vn_dump_format f, struct vn_error *err);
	void *data;
};

struct vn_dump_result {
	char *path, *meta;         /* the dump, and its description (path + ".json") */
	uint64_t bytes;            /* the dump's size */
	struct vn_vmlinux vmlinux; /* its build id equals build_id, where both are known */
	char *release;
	char *build_id; /* the dumped kernel's, from its VMCOREINFO; NULL: not in the dump */
	char *topology; /* the topology file the guest booted (its guest dir's copy); NULL: not said */
};
void vn_dump_result_clear(struct vn_dump_result *r);

/*
 * The dump through ops: the guest probed, the free space of out's
 * directory checked against its memory (too little: -ENOSPC, an
 * infrastructure error, before anything is written), written to
 * out.partial, renamed, described. On failure nothing of it is left.
 */
int vn_testbed_dump_with(const struct vn_dump_req *q, const struct vn_dump_ops *ops, struct vn_dump_result *r,
			 struct vn_error *err);
/* The same through libvirt (each half in a child of its own with the embedded driver). */
int vn_testbed_dump(const struct vn_testbed_ctx *ctx, const struct vn_dump_req *q, struct vn_dump_result *r,
		    struct vn_error *err);
