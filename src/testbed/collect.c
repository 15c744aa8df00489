/* vnuma collect: one snapshot of the guest's NUMA state, as files plus one JSON. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "metrics/kv.h"
#include "testbed/snapshot.h"
#include "testbed/testbed.h"
#include "testbed/agent-session.h"
#include "testbed/collect.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/parse.h"
#include "util/strbuf.h"
#include "util/alloc.h"
#include "util/json.h"

/* Atomic and never through a symlink (util/file.h): a snapshot file is whole or absent. */
static int save(const char *dir, const char *name, const char *data, struct vn_error *err)
{
	_cleanup_free_ char *path = NULL;

	path = vn_xasprintf("%s/%s", dir, name);
	return vn_file_write_text(path, data, err);
}

/* The guest files of a snapshot: the system's, then each node's (their names in FILES order). */
static const char *const SYSTEM_FILES[] = {"/proc/vmstat", "/proc/cmdline", "/proc/version"};
static const enum vn_snap_sys SYSTEM_PARTS[] = {VN_SNAP_VMSTAT, VN_SNAP_CMDLINE, VN_SNAP_VERSION};
#define NSYSTEM VN_ARRAY_SIZE(SYSTEM_FILES)
#define NNODE   VN_SNAP_NNODE

static void node_json(json_object *node, const char *file, const char *orig, struct vn_error *err, int *rc)
{
	_cleanup_free_ char *text = vn_xstrdup(orig);

	if (strcmp(file, "distance") == 0 || strcmp(file, "cpulist") == 0)
		text[strcspn(text, "\n")] = '\0';
	if (strcmp(file, "distance") == 0) {
		json_object *row = json_object_new_array();
		for (char *tok = strtok(text, " "); tok; tok = strtok(NULL, " "))
			json_object_array_add(row, json_object_new_int(atoi(tok)));
		json_object_object_add(node, "distance", row);
	} else if (strcmp(file, "cpulist") == 0) {
		json_object_object_add(node, "cpulist", json_object_new_string(text));
	} else {
		json_object *kv;
		if ((*rc = vn_metrics_parse_kv(text, &kv, err)) == 0)
			json_object_object_add(node, file, kv);
	}
}

/* The first line of a part, for snapshot.json. */
static json_object *first_line(const struct vn_snap_part *p)
{
	return json_object_new_string_len(p->text, (int)strcspn(p->text, "\n"));
}

/* Every file of the snapshot, as the guest gave it, then snapshot.json: for people and tools. */
static int save_all(const struct vn_snapshot *s, const char *dir, struct vn_error *err)
{
	static const enum vn_snap_sys order[] = {VN_SNAP_VMSTAT, VN_SNAP_CMDLINE, VN_SNAP_VERSION, VN_SNAP_NUMACTL,
						 VN_SNAP_DMESG};
	_cleanup_json_ json_object *snap = json_object_new_object();
	json_object *nodes = json_object_new_array(), *vm;
	int rc;

	for (size_t i = 0; i < VN_ARRAY_SIZE(order); i++)
		if ((rc = save(dir, vn_snapshot_sys_name(order[i]), s->sys[order[i]].text, err)) < 0)
			goto cleanup;
	if ((rc = vn_metrics_parse_kv(s->sys[VN_SNAP_VMSTAT].text, &vm, err)) < 0)
		goto cleanup;
	json_object_object_add(snap, "time", json_object_new_int64(s->time));
	json_object_object_add(snap, "cmdline", first_line(&s->sys[VN_SNAP_CMDLINE]));
	json_object_object_add(snap, "version", first_line(&s->sys[VN_SNAP_VERSION]));
	json_object_object_add(snap, "vmstat", vm);
	for (size_t k = 0; k < s->nnodes; k++) {
		json_object *node = json_object_new_object();
		json_object_object_add(node, "node", json_object_new_int((int)s->nodes[k].id));
		json_object_array_add(nodes, node);
		for (size_t i = 0; i < NNODE; i++) {
			char name[64];
			const char *t = s->nodes[k].part[i].text;
			snprintf(name, sizeof(name), "node%u-%s", s->nodes[k].id, vn_snapshot_node_name(i));
			if ((rc = save(dir, name, t, err)) < 0)
				goto cleanup;
			node_json(node, vn_snapshot_node_name(i), t, err, &rc);
			if (rc < 0)
				goto cleanup;
		}
	}
	json_object_object_add(snap, "nodes", json_object_get(nodes));
	rc = save(dir, "snapshot.json",
		  json_object_to_json_string_ext(snap, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), err);
cleanup:
	json_object_put(nodes);
	return rc;
}

/* The guest's node ids (/sys/devices/system/node/possible): a list we cannot read, or past the model's nodes, is not observed. */
static int possible_nodes(struct vn_agent *a, char *possible, unsigned *ids, unsigned *n, struct vn_error *err)
{
	struct vn_cpuset set;
	struct vn_error e = {0};
	char shown[96];

	*n = 0;
	size_t len = strlen(possible);
	if (len && possible[len - 1] == '\n')
		possible[len - 1] = '\0'; /* sysfs ends its one line with a newline */
	if (vn_cpulist_parse(possible, &set, &e) < 0) {
		vn_error_clear(&e);
		return vn_infra_error(err, -EBADMSG, "%s: /sys/devices/system/node/possible is not a node list: '%s'",
				      vn_agent_guest(a), vn_excerpt(possible, strlen(possible), 80, shown));
	}
	for (unsigned i = 0; i < VN_CPUSET_MAX; i++) {
		if (!vn_cpuset_has(&set, i))
			continue;
		if (i >= VN_MAX_NODES)
			return vn_infra_error(err, -EBADMSG,
					      "%s: /sys/devices/system/node/possible names node %u (at most %d)",
					      vn_agent_guest(a), i, VN_MAX_NODES - 1);
		ids[(*n)++] = i;
	}
	return 0;
}

/* Every file in one round trip: under TCG each costs tens of ms. */
static int read_parts(struct vn_agent *a, struct vn_snapshot *s, struct vn_error *err)
{
	_cleanup_free_ const char **paths = NULL;
	_cleanup_free_ char **text = NULL;
	_cleanup_strv_ char **owned = NULL; /* the node files' paths */
	size_t n = 0;
	int rc;

	paths = vn_xcalloc(NSYSTEM + NNODE * s->nnodes, sizeof(*paths));
	owned = vn_xcalloc(NNODE * s->nnodes + 1, sizeof(*owned));
	for (size_t i = 0; i < NSYSTEM; i++)
		paths[n++] = SYSTEM_FILES[i];
	for (size_t k = 0; k < s->nnodes; k++)
		for (size_t i = 0; i < NNODE; i++)
			paths[n++] = owned[k * NNODE + i] = vn_xasprintf("/sys/devices/system/node/node%u/%s",
									 s->nodes[k].id, vn_snapshot_node_name(i));
	text = vn_xcalloc(n, sizeof(*text));
	if ((rc = vn_agent_read_files(a, paths, n, VN_AGENT_REPLY_MS, text, err)) < 0)
		return rc;
	for (size_t i = 0; i < NSYSTEM; i++)
		vn_snapshot_set_sys(s, SYSTEM_PARTS[i], text[i], NULL);
	for (size_t k = 0; k < s->nnodes; k++)
		for (size_t i = 0; i < NNODE; i++)
			vn_snapshot_set_node(s, (unsigned)k, i, text[NSYSTEM + k * NNODE + i], NULL);
	return 0;
}

int vn_testbed_collect(struct vn_agent *a, const char *dir, struct vn_snapshot *snap, struct vn_error *err)
{
	_cleanup_free_ char *possible = NULL, *numactl = NULL, *dmesg = NULL;
	static const char *const numactl_argv[] = {"numactl", "-H", NULL};
	static const char *const dmesg_argv[] = {"dmesg", NULL};
	unsigned ids[VN_MAX_NODES], nnodes;
	size_t len;
	int rc;

	vn_snapshot_clear(snap);
	if ((rc = vn_dir_create(dir, err)) < 0)
		return rc;
	if ((rc = vn_agent_read_file(a, "/sys/devices/system/node/possible", VN_AGENT_REPLY_MS, &possible, &len, err)) <
		    0 ||
	    (rc = vn_testbed_run(a, numactl_argv, 20, &numactl, err)) < 0 ||
	    (rc = vn_testbed_run(a, dmesg_argv, 20, &dmesg, err)) < 0 ||
	    (rc = possible_nodes(a, possible, ids, &nnodes, err)) < 0)
		return rc;
	vn_snapshot_init(snap, dir, ids, nnodes);
	snap->time = (int64_t)time(NULL);
	vn_snapshot_set_sys(snap, VN_SNAP_NUMACTL, steal_pointer(&numactl), NULL);
	vn_snapshot_set_sys(snap, VN_SNAP_DMESG, steal_pointer(&dmesg), NULL);
	if ((rc = read_parts(a, snap, err)) < 0 || (rc = save_all(snap, dir, err)) < 0)
		vn_snapshot_clear(snap);
	return rc;
}
