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
#include "testbed/agent-session.h"
#include "testbed/collect.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/parse.h"
#include "util/alloc.h"

/* Atomic and never through a symlink (util/file.h): a snapshot file is whole or absent. */
static int save(const char *dir, const char *name, const char *data, struct vn_error *err)
{
	_cleanup_free_ char *path = NULL;

	path = vn_xasprintf("%s/%s", dir, name);
	return vn_file_write_text(path, data, err);
}

/* The guest files of a snapshot: the system's, then each node's (their names in FILES order). */
static const char *const SYSTEM_FILES[] = {"/proc/vmstat", "/proc/cmdline", "/proc/version"};
static const char *const NODE_FILES[] = {"numastat", "meminfo", "vmstat", "distance", "cpulist"};
#define NSYSTEM VN_ARRAY_SIZE(SYSTEM_FILES)
#define NNODE   VN_ARRAY_SIZE(NODE_FILES)

static void node_json(json_object *node, const char *file, char *text, struct vn_error *err, int *rc)
{
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

int vn_testbed_collect(struct vn_agent *a, const char *dir, struct vn_error *err)
{
	json_object *snap = json_object_new_object(), *nodes = json_object_new_array();
	_cleanup_free_ char *possible = NULL, *numactl = NULL, *dmesg = NULL;
	_cleanup_free_ const char **paths = NULL;
	_cleanup_free_ char **text = NULL;
	_cleanup_strv_ char **owned = NULL; /* the node files' paths */
	size_t n = 0, nnodes = 0;
	unsigned ids[VN_CPUSET_MAX];
	int rc;

	if ((rc = vn_dir_create(dir, err)) < 0)
		goto cleanup;
	static const char *const numactl_argv[] = {"numactl", "-H", NULL};
	static const char *const dmesg_argv[] = {"dmesg", NULL};
	size_t len;
	if ((rc = vn_agent_read_file(a, "/sys/devices/system/node/possible", VN_AGENT_REPLY_MS, &possible, &len, err)) <
		    0 ||
	    (rc = vn_testbed_run(a, numactl_argv, 20, &numactl, err)) < 0 ||
	    (rc = vn_testbed_run(a, dmesg_argv, 20, &dmesg, err)) < 0)
		goto cleanup;

	struct vn_cpuset possible_set;
	struct vn_error e = {0};
	vn_cpulist_parse(possible, &possible_set, &e);
	vn_error_clear(&e);
	for (unsigned i = 0; i < VN_CPUSET_MAX; i++)
		if (vn_cpuset_has(&possible_set, i))
			ids[nnodes++] = i;
	/* Every file in one round trip: under TCG each costs tens of ms. */
	paths = vn_xcalloc(NSYSTEM + NNODE * nnodes, sizeof(*paths));
	owned = vn_xcalloc(NNODE * nnodes + 1, sizeof(*owned));
	for (size_t i = 0; i < NSYSTEM; i++)
		paths[n++] = SYSTEM_FILES[i];
	for (size_t k = 0; k < nnodes; k++)
		for (size_t i = 0; i < NNODE; i++)
			paths[n++] = owned[k * NNODE + i] =
				vn_xasprintf("/sys/devices/system/node/node%u/%s", ids[k], NODE_FILES[i]);
	text = vn_xcalloc(n, sizeof(*text));
	if ((rc = vn_agent_read_files(a, paths, n, VN_AGENT_REPLY_MS, text, err)) < 0)
		goto cleanup;
	char *vmstat = text[0], *cmdline = text[1], *version = text[2];
	if ((rc = save(dir, "vmstat", vmstat, err)) < 0 || (rc = save(dir, "cmdline", cmdline, err)) < 0 ||
	    (rc = save(dir, "version", version, err)) < 0 || (rc = save(dir, "numactl-H", numactl, err)) < 0 ||
	    (rc = save(dir, "dmesg", dmesg, err)) < 0)
		goto cleanup;

	json_object *vm;
	if ((rc = vn_metrics_parse_kv(vmstat, &vm, err)) < 0)
		goto cleanup;
	json_object_object_add(snap, "time", json_object_new_int64((int64_t)time(NULL)));
	cmdline[strcspn(cmdline, "\n")] = '\0';
	version[strcspn(version, "\n")] = '\0';
	json_object_object_add(snap, "cmdline", json_object_new_string(cmdline));
	json_object_object_add(snap, "version", json_object_new_string(version));
	json_object_object_add(snap, "vmstat", vm);

	for (size_t k = 0; k < nnodes; k++) {
		json_object *node = json_object_new_object();
		json_object_object_add(node, "node", json_object_new_int((int)ids[k]));
		json_object_array_add(nodes, node);
		for (size_t i = 0; i < NNODE; i++) {
			char name[64];
			char *t = text[NSYSTEM + k * NNODE + i];
			snprintf(name, sizeof(name), "node%u-%s", ids[k], NODE_FILES[i]);
			if ((rc = save(dir, name, t, err)) < 0)
				goto cleanup;
			node_json(node, NODE_FILES[i], t, err, &rc);
			if (rc < 0)
				goto cleanup;
		}
	}
	json_object_object_add(snap, "nodes", json_object_get(nodes));
	rc = save(dir, "snapshot.json",
		  json_object_to_json_string_ext(snap, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), err);
cleanup:
	for (size_t i = 0; text && i < n; i++)
		free(text[i]);
	json_object_put(nodes);
	json_object_put(snap);
	return rc;
}
