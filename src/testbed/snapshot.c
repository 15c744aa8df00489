/* The typed snapshot (snapshot.h): each part parsed once, as it is set, from collect or from the files. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/kv.h"
#include "testbed/snapshot.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"

static const char *const SYS_NAMES[VN_SNAP_NSYS] = {"vmstat", "cmdline", "version", "numactl-H", "dmesg"};
static const char *const NODE_NAMES[VN_SNAP_NNODE] = {"numastat", "meminfo", "vmstat", "distance", "cpulist"};

/* Bigger than any real one: dmesg is the largest part (a 1 MiB ring at most by default). */
#define PART_MAX (64u << 20)

const char *vn_snapshot_sys_name(enum vn_snap_sys i)
{
	return SYS_NAMES[i];
}

const char *vn_snapshot_node_name(enum vn_snap_nodefile i)
{
	return NODE_NAMES[i];
}

void vn_snapshot_init(struct vn_snapshot *s, const char *dir, const unsigned *ids, unsigned nnodes)
{
	memset(s, 0, sizeof(*s));
	s->dir = vn_xstrdup(dir);
	for (unsigned i = 0; i < VN_SNAP_NSYS; i++)
		s->sys[i].path = vn_xasprintf("%s/%s", dir, SYS_NAMES[i]);
	s->nnodes = nnodes;
	s->nodes = vn_xcalloc(nnodes ? nnodes : 1, sizeof(*s->nodes));
	for (unsigned k = 0; k < nnodes; k++) {
		s->nodes[k].id = ids[k];
		for (unsigned i = 0; i < VN_SNAP_NNODE; i++)
			s->nodes[k].part[i].path = vn_xasprintf("%s/node%u-%s", dir, ids[k], NODE_NAMES[i]);
	}
}

/* "name value", all of it: the one shape of every line of /proc/vmstat and nodeN/numastat. */
static bool counter_line(const char *s, size_t n)
{
	size_t k = 0, digits;

	while (k < n && (isalnum((unsigned char)s[k]) || s[k] == '_'))
		k++;
	if (!k || k >= n || s[k] != ' ')
		return false;
	digits = ++k;
	while (k < n && isdigit((unsigned char)s[k]))
		k++;
	/* Past INT64_MAX (19 digits) a counter would wrap negative where it is stored. */
	if (k - digits > 19 || (k - digits == 19 && strncmp(s + digits, "9223372036854775807", 19) > 0))
		return false;
	return k > digits && k == n;
}

/* vn_metrics_parse_kv skips what it cannot read; a counter part with a line it would skip has no counters. */
static void parse_counters(struct vn_snap_part *p)
{
	struct vn_error e = {0};
	size_t lines = 0;
	json_object *o = NULL;

	if (strlen(p->text) > VN_SNAP_COUNTERS_MAX) {
		p->bad = vn_xasprintf("%s: over %u MiB: not a counter file", p->path, VN_SNAP_COUNTERS_MAX >> 20);
		return;
	}
	for (const char *t = p->text; *t; lines++) {
		size_t n = strcspn(t, "\n");
		if (!counter_line(t, n)) {
			p->bad = vn_xasprintf("%s:%zu: not a \"name value\" counter line", p->path, lines + 1);
			return;
		}
		t += n + (t[n] == '\n');
	}
	if (!lines) {
		p->bad = vn_xasprintf("%s: empty: the snapshot holds no counters", p->path);
		return;
	}
	if (vn_metrics_parse_kv(p->text, &o, &e) < 0 || json_object_object_length(o) != (int)lines) {
		json_object_put(o);
		vn_error_clear(&e);
		p->bad = vn_xasprintf("%s: a counter is repeated or out of range", p->path);
		return;
	}
	p->counters = o;
}

static void set_part(struct vn_snap_part *p, char *text, const char *why)
{
	free(p->text);
	free(p->why);
	free(p->bad);
	json_object_put(p->counters);
	p->text = text;
	p->why = text ? NULL : vn_xstrdup(why ? why : "not collected");
	p->bad = NULL;
	p->counters = NULL;
}

void vn_snapshot_set_sys(struct vn_snapshot *s, enum vn_snap_sys i, char *text, const char *why)
{
	struct vn_error e = {0};

	set_part(&s->sys[i], text, why);
	if (i == VN_SNAP_VMSTAT && text)
		parse_counters(&s->sys[i]);
	if (i != VN_SNAP_DMESG)
		return;
	free(steal_pointer(&s->fallback));
	free(steal_pointer(&s->fallback_why));
	if (!text) {
		s->fallback_why = vn_xasprintf("No dmesg in %s.", s->dir);
		return;
	}
	s->fallback = vn_xcalloc(1, sizeof(*s->fallback));
	if (vn_fallback_parse_log(text, s->fallback, &e) < 0) {
		free(steal_pointer(&s->fallback));
		s->fallback_why = vn_xstrdup(e.msg);
		vn_error_clear(&e);
	}
}

/* Node n's row of the distance matrix, as far as it parses: "10 21 31\n". */
static void parse_distance(struct vn_snap_node *node, const char *text)
{
	const char *p = text;
	char *end;

	node->ndistance = 0;
	while (node->ndistance < VN_MAX_NODES) {
		unsigned long v = strtoul(p, &end, 10);
		if (end == p || v > 255)
			break;
		node->distance[node->ndistance++] = (unsigned)v;
		p = end;
	}
}

void vn_snapshot_set_node(struct vn_snapshot *s, unsigned k, enum vn_snap_nodefile i, char *text, const char *why)
{
	struct vn_snap_node *node = &s->nodes[k];

	set_part(&node->part[i], text, why);
	if (!text)
		return;
	if (i == VN_SNAP_NUMASTAT || i == VN_SNAP_NODE_VMSTAT)
		parse_counters(&node->part[i]);
	else if (i == VN_SNAP_DISTANCE)
		parse_distance(node, text);
}

/* A file of the snapshot, or why there is none. */
static char *load_file(const char *path, char **why)
{
	struct vn_error e = {0};
	char *text = NULL;
	size_t len;

	if (vn_file_read(path, PART_MAX, &text, &len, &e) < 0) {
		*why = vn_xstrdup(e.msg);
		vn_error_clear(&e);
		return NULL;
	}
	if (strlen(text) != len) {
		free(text);
		*why = vn_xasprintf("%s: not text: it holds a NUL byte", path);
		return NULL;
	}
	return text;
}

void vn_snapshot_load(const char *dir, unsigned nnodes, struct vn_snapshot *s)
{
	unsigned ids[VN_MAX_NODES];

	if (!nnodes)
		while (nnodes < VN_MAX_NODES) {
			_cleanup_free_ char *path = vn_xasprintf("%s/node%u-distance", dir, nnodes);
			if (!vn_is_file(path))
				break;
			nnodes++;
		}
	for (unsigned k = 0; k < nnodes && k < VN_MAX_NODES; k++)
		ids[k] = k;
	vn_snapshot_init(s, dir, ids, nnodes < VN_MAX_NODES ? nnodes : VN_MAX_NODES);
	for (unsigned i = 0; i < VN_SNAP_NSYS; i++) {
		_cleanup_free_ char *why = NULL;
		char *text = load_file(s->sys[i].path, &why);
		vn_snapshot_set_sys(s, i, text, why);
	}
	for (unsigned k = 0; k < s->nnodes; k++)
		for (unsigned i = 0; i < VN_SNAP_NNODE; i++) {
			_cleanup_free_ char *why = NULL;
			char *text = load_file(s->nodes[k].part[i].path, &why);
			vn_snapshot_set_node(s, k, i, text, why);
		}
}

const struct vn_snap_part *vn_snapshot_node_part(const struct vn_snapshot *s, unsigned id, enum vn_snap_nodefile i)
{
	for (unsigned k = 0; k < s->nnodes; k++)
		if (s->nodes[k].id == id)
			return &s->nodes[k].part[i];
	return NULL;
}

int vn_snapshot_text(const struct vn_snap_part *p, const char **text, struct vn_error *err)
{
	if (!p->text)
		return vn_infra_error(err, -ENODATA, "cannot read a snapshot the run took: %s", p->why);
	*text = p->text;
	return 0;
}

int vn_snapshot_counters(const struct vn_snap_part *p, json_object **out, struct vn_error *err)
{
	const char *text;
	int rc;

	if ((rc = vn_snapshot_text(p, &text, err)) < 0)
		return rc;
	if (!p->counters)
		return vn_infra_error(err, -EBADMSG, "%s", p->bad ? p->bad : "not a counter file");
	*out = p->counters;
	return 0;
}

static void part_clear(struct vn_snap_part *p)
{
	set_part(p, NULL, NULL);
	free(p->why);
	free(p->path);
	memset(p, 0, sizeof(*p));
}

void vn_snapshot_clear(struct vn_snapshot *s)
{
	for (unsigned i = 0; i < VN_SNAP_NSYS; i++)
		part_clear(&s->sys[i]);
	for (unsigned k = 0; s->nodes && k < s->nnodes; k++)
		for (unsigned i = 0; i < VN_SNAP_NNODE; i++)
			part_clear(&s->nodes[k].part[i]);
	free(s->nodes);
	free(s->fallback);
	free(s->fallback_why);
	free(s->dir);
	memset(s, 0, sizeof(*s));
}
