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
#include "testbed/testbed.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/alloc.h"

/* Atomic and never through a symlink (util/file.h): a snapshot file is whole or absent. */
static int save(const char *dir, const char *name, const char *data, struct vn_error *err)
{
	_cleanup_free_ char *path = NULL;

	path = vn_xasprintf("%s/%s", dir, name);
	return vn_file_write_text(path, data, err);
}

static int fetch(struct vn_agent *a, const char *path, char **out, struct vn_error *err)
{
	size_t len;

	return vn_agent_read_file(a, path, VN_AGENT_REPLY_MS, out, &len, err);
}

int vn_testbed_collect(struct vn_agent *a, const char *dir, struct vn_error *err)
{
	json_object *snap = json_object_new_object(), *nodes = json_object_new_array();
	_cleanup_free_ char *vmstat = NULL, *possible = NULL, *numactl = NULL, *dmesg = NULL, *cmdline = NULL,
			    *version = NULL;
	int rc;

	if ((rc = vn_dir_create(dir, err)) < 0)
		goto cleanup;
	static const char *const numactl_argv[] = {"numactl", "-H", NULL};
	static const char *const dmesg_argv[] = {"dmesg", NULL};
	if ((rc = fetch(a, "/proc/vmstat", &vmstat, err)) < 0 || (rc = fetch(a, "/proc/cmdline", &cmdline, err)) < 0 ||
	    (rc = fetch(a, "/proc/version", &version, err)) < 0 ||
	    (rc = fetch(a, "/sys/devices/system/node/possible", &possible, err)) < 0 ||
	    (rc = vn_testbed_run(a, numactl_argv, 20, &numactl, err)) < 0 ||
	    (rc = vn_testbed_run(a, dmesg_argv, 20, &dmesg, err)) < 0)
		goto cleanup;
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

	struct vn_cpuset ids;
	struct vn_error e = {0};
	vn_cpulist_parse(possible, &ids, &e);
	vn_error_clear(&e);
	for (unsigned n = 0; n < VN_CPUSET_MAX; n++) {
		if (!vn_cpuset_has(&ids, n))
			continue;
		static const char *const files[] = {"numastat", "meminfo", "vmstat", "distance", "cpulist"};
		json_object *node = json_object_new_object();
		json_object_object_add(node, "node", json_object_new_int((int)n));
		json_object_array_add(nodes, node);
		for (size_t i = 0; i < VN_ARRAY_SIZE(files); i++) {
			char path[128], name[64];
			_cleanup_free_ char *text = NULL;
			snprintf(path, sizeof(path), "/sys/devices/system/node/node%u/%s", n, files[i]);
			if ((rc = fetch(a, path, &text, err)) < 0)
				goto cleanup;
			snprintf(name, sizeof(name), "node%u-%s", n, files[i]);
			if ((rc = save(dir, name, text, err)) < 0)
				goto cleanup;
			if (strcmp(files[i], "distance") == 0 || strcmp(files[i], "cpulist") == 0)
				text[strcspn(text, "\n")] = '\0';
			if (strcmp(files[i], "distance") == 0) {
				json_object *row = json_object_new_array();
				for (char *tok = strtok(text, " "); tok; tok = strtok(NULL, " "))
					json_object_array_add(row, json_object_new_int(atoi(tok)));
				json_object_object_add(node, "distance", row);
			} else if (strcmp(files[i], "cpulist") == 0) {
				json_object_object_add(node, "cpulist", json_object_new_string(text));
			} else {
				json_object *kv;
				if ((rc = vn_metrics_parse_kv(text, &kv, err)) < 0)
					goto cleanup;
				json_object_object_add(node, files[i], kv);
			}
		}
	}
	json_object_object_add(snap, "nodes", json_object_get(nodes));
	rc = save(dir, "snapshot.json",
		  json_object_to_json_string_ext(snap, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), err);
cleanup:
	json_object_put(nodes);
	json_object_put(snap);
	return rc;
}
