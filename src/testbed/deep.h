/*
 * vnuma collect --deep (deep.c, deep-check.c): what the guest kernel built,
 * read by drgn from a dump of its memory with the kernel's debug vmlinux,
 * against the model: each node's zonelist (ZONELIST_FALLBACK), the SLIT it
 * parsed, its memory tiers and node_demotion targets, and its sched
 * domains' NUMA levels. A second witness beside dmesg's fallback lines,
 * for kernels that print nothing and for what the kernel did since boot.
 */
#pragma once

#include <stdbool.h>

#include "testbed/testbed.h"
#include "topology/fallback.h"
#include "topology/limits.h"
#include "topology/topology.h"

/* What the script prints its JSON after, on a line of its own. */
#define VN_DEEP_MARKER "VNUMA-DEEP "
/* drgn's line is bounded: a longer one is refused unread. */
#define VN_DEEP_LINE_MAX (1 << 20)
/* More memory tiers than a kernel makes (6.1: one per abstract distance chunk in use). */
#define VN_DEEP_TIERS_MAX 64

/* What drgn read. A section the kernel lacks (or drgn could not read) has its why in *_absent. */
struct vn_deep {
	unsigned nnodes;
	unsigned nodes[VN_MAX_NODES]; /* node_online_map, ascending */

	char *zonelists_absent;
	struct vn_fallback zonelists; /* nodes in order of first appearance; present[] per node read */

	char *distance_absent;
	unsigned ndistance; /* numa_distance_cnt */
	unsigned distance[VN_MAX_NODES][VN_MAX_NODES];

	char *tiers_absent;
	unsigned ntiers; /* in the kernel's list order */
	int tier_start[VN_DEEP_TIERS_MAX];
	bool tier_nodes[VN_DEEP_TIERS_MAX][VN_MAX_NODES];

	char *demotion_absent;
	bool demotion_read[VN_MAX_NODES];
	bool preferred[VN_MAX_NODES][VN_MAX_NODES];

	char *sched_absent;
	unsigned nlevels;                             /* sched_domains_numa_levels */
	unsigned level_distance[VN_MAX_NODES];        /* sched_domains_numa_distance[] */
	char *level_cpus[VN_MAX_NODES][VN_MAX_NODES]; /* sched_domains_numa_masks[level][node], a cpulist; NULL: none */
};

/*
 * The script's output (drgn's stdout and stderr): the last VN_DEEP_MARKER
 * line's JSON, checked member by member (the dump is the guest's memory and
 * the script's reading of it is trusted for nothing). *out malloc'd; an
 * output without the line, or a line of the wrong shape: -EBADMSG, an
 * infrastructure error quoting a bounded excerpt.
 */
int vn_deep_parse(const char *output, struct vn_deep **out, struct vn_error *err);
void vn_deep_free(struct vn_deep *d);
/* The JSON after the last marker line in output (*len its length), or NULL. */
const char *vn_deep_marker_line(const char *output, size_t *len);

/*
 * d against the model of t (fo: the fallback model and arch options). The
 * report has one "SECTION: ok|MISMATCH|not observed (why)" line per
 * section and, under a mismatch, both sides ("model ..., kernel ...").
 * *ok is false only for a mismatch; a section not observed is not one.
 * *observed counts the sections compared (zonelists always are: without
 * them nothing was observed). Malloc'd.
 */
char *vn_deep_compare(const struct vn_deep *d, const struct vn_topology *t, const struct vn_fallback_opts *fo, bool *ok,
		      unsigned *observed);

struct vn_deep_req {
	const char *name;             /* the guest */
	const char *debug_root;       /* "" for this host's -dbg packages; a test's tree */
	enum vn_fallback_model model; /* the fallback model the zonelists are held to */
	const char *save_dir;         /* optional: drgn's JSON kept there as deep.json */
};

struct vn_deep_result {
	char *report;   /* vn_deep_compare's */
	bool ok;        /* no section differs from the model */
	char *topology; /* the topology the guest booted (its guest dir's copy) */
	char *vmlinux;  /* the debug vmlinux drgn read */
};
void vn_deep_result_clear(struct vn_deep_result *r);

/*
 * The whole check on a running or panicked guest of this host: a dump into
 * a fresh directory under $TMPDIR (else /var/tmp), drgn run on it with the
 * guest kernel's debug vmlinux, the dump removed whatever happens. No
 * vmlinux, no drgn, no room for the dump, a script that fails: infrastructure
 * errors (the kernel could not be observed), with how to get what is missing.
 */
int vn_testbed_collect_deep(const struct vn_testbed_ctx *ctx, const struct vn_deep_req *q, struct vn_deep_result *r,
			    struct vn_error *err);

/*
 * The same check on a dump already kept (vnuma dump -o, run --dump-on: a
 * developer's copy of a CI failure, its guest long gone): drgn on core with
 * the vmlinux that CORE.json names, held to topology (NULL: the
 * topology.xml a run's directory keeps beside its vmcore). q->name names
 * the dump in messages. The dump is left as it was. No CORE.json, no
 * vmlinux named there: infrastructure errors with the hint it holds; no
 * topology: an input error asking for one.
 */
int vn_deep_check_dump(const struct vn_deep_req *q, const char *core, const char *topology, struct vn_deep_result *r,
		       struct vn_error *err);
