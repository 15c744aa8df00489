/* vnuma dump (dump.h). */
#include "testbed/dump.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "testbed/debug.h"
#include "testbed/testbed-priv.h"
#include "topology/topology.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/json.h"
#include "util/parse.h"
#include "util/state.h"

/* Writing a dump of many GiB under TCG takes minutes; an hour is a stuck QEMU. */
#define DUMP_WRITE_MS (3600 * 1000)

void vn_dump_guest_clear(struct vn_dump_guest *g)
{
	free(g->state);
	free(g->kernel);
	free(g->kernel_id);
	free(g->topology);
	memset(g, 0, sizeof(*g));
}

void vn_dump_result_clear(struct vn_dump_result *r)
{
	free(r->path);
	free(r->meta);
	free(r->release);
	free(r->build_id);
	free(r->topology);
	vn_vmlinux_clear(&r->vmlinux);
	memset(r, 0, sizeof(*r));
}

/* Refused before a byte is written: a dump that fills the disk breaks more than itself. */
static int space_check(const char *out, uint64_t memory, struct vn_error *err)
{
	const char *slash = strrchr(out, '/');
	_cleanup_free_ char *dir = slash ? vn_xstrndup(out, slash == out ? 1 : (size_t)(slash - out)) : vn_xstrdup(".");
	uint64_t need = memory + memory / 64 + VN_DUMP_SLACK;
	struct statvfs sv;

	if (statvfs(dir, &sv) < 0)
		return vn_infra_error(err, -errno, "cannot see the free space of %s: %s", dir, strerror(errno));
	uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (avail < need)
		return vn_infra_error(err, -ENOSPC,
				      "a dump of %" PRIu64 " MiB of guest memory needs %" PRIu64 " MiB; %s has %" PRIu64
				      " MiB free: nothing written",
				      memory >> 20, need >> 20, dir, avail >> 20);
	return 0;
}

static struct json_object *topology_json(const char *path)
{
	_cleanup_topology_ struct vn_topology *t = NULL;
	struct json_object *o = json_object_new_object(), *nodes = json_object_new_array();
	struct vn_error e = {0};

	vn_json_add_str(o, "path", path);
	if (!path || vn_topology_load(path, &t, &e) < 0) {
		vn_json_add_str(o, "error", path ? e.msg : "the guest does not say which topology it booted");
		vn_error_clear(&e);
		json_object_put(nodes);
		return o;
	}
	vn_json_add_str(o, "name", t->name);
	for (unsigned i = 0; i < t->nnodes; i++) {
		struct json_object *n = json_object_new_object(), *dist = json_object_new_array();
		_cleanup_free_ char *cpus = vn_cpulist_format(&t->nodes[i].cpus);
		json_object_object_add(n, "node", json_object_new_int((int)t->nodes[i].id));
		vn_json_add_str(n, "cpus", cpus);
		json_object_object_add(n, "memory_mib", json_object_new_int64((int64_t)(t->nodes[i].memory >> 20)));
		for (unsigned j = 0; j < t->nnodes; j++)
			json_object_array_add(dist, json_object_new_int(t->distance[i][j]));
		json_object_object_add(n, "distances", dist);
		json_object_array_add(nodes, n);
	}
	json_object_object_add(o, "nodes", nodes);
	return o;
}

static int describe(const struct vn_dump_req *q, const struct vn_dump_guest *g, struct vn_dump_result *r,
		    struct vn_error *err)
{
	struct json_object *o = json_object_new_object(), *k = json_object_new_object();
	char when[32];
	time_t now = time(NULL);
	struct tm tm;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	vn_json_add_str(o, "guest", q->name);
	vn_json_add_str(o, "time", when);
	vn_json_add_str(o, "state", g->state);
	vn_json_add_str(o, "format", vn_dump_format_name(q->format));
	vn_json_add_str(o, "file", r->path);
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)r->bytes));
	json_object_object_add(o, "memory_bytes", json_object_new_int64((int64_t)g->memory));
	vn_json_add_str(k, "image", g->kernel);
	vn_json_add_str(k, "id", g->kernel_id);
	vn_json_add_str(k, "release", r->release);
	vn_json_add_str(k, "vmlinux", r->vmlinux.path);
	vn_json_add_str(k, "build_id", r->build_id);
	vn_json_add_str(k, "vmlinux_build_id", r->vmlinux.build_id);
	vn_json_add_str(k, "gdb_scripts", r->vmlinux.gdb_py);
	vn_json_add_str(k, "hint", r->vmlinux.hint);
	json_object_object_add(o, "kernel", k);
	json_object_object_add(o, "topology", topology_json(g->topology));
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	r->meta = vn_xasprintf("%s.json", r->path);
	int rc = vn_file_write_atomic(r->meta, text, strlen(text), 0644, err);
	json_object_put(o);
	return rc;
}

/*
 * The dumped kernel's own build id (its VMCOREINFO, in an ELF dump of a guest
 * with qemu_fw_cfg), hex checked: the guest wrote it. A vmlinux found with
 * another is not this kernel's, and is given up with why.
 */
static int running_build_id(struct vn_dump_result *r, struct vn_error *err)
{
	_cleanup_free_ char *id = NULL;
	int rc;

	if ((rc = vn_elf_vmcoreinfo(r->path, "BUILD-ID", &id, err)) < 0)
		return rc;
	if (!id || !*id || strlen(id) > 128 || strspn(id, "0123456789abcdef") != strlen(id))
		return 0;
	r->build_id = steal_pointer(&id);
	if (!r->vmlinux.path || !r->vmlinux.build_id || strcmp(r->vmlinux.build_id, r->build_id) == 0)
		return 0;
	_cleanup_free_ char *why = vn_xasprintf("%s has build id %s, the dumped kernel %s: not its vmlinux",
						r->vmlinux.path, r->vmlinux.build_id, r->build_id);
	vn_vmlinux_clear(&r->vmlinux);
	r->vmlinux.hint = steal_pointer(&why);
	return 0;
}

int vn_testbed_dump_with(const struct vn_dump_req *q, const struct vn_dump_ops *ops, struct vn_dump_result *r,
			 struct vn_error *err)
{
	_cleanup_free_ char *tmp = vn_xasprintf("%s.partial", q->out);
	struct vn_dump_guest g = {0};
	struct stat st;
	int rc;

	memset(r, 0, sizeof(*r));
	if (lstat(q->out, &st) == 0 || errno != ENOENT)
		return vn_input_error(err, "%s exists already: a dump does not replace a file", q->out);
	if ((rc = ops->probe(ops->data, q->name, &g, err)) < 0 || (rc = space_check(q->out, g.memory, err)) < 0)
		goto cleanup;
	if ((rc = ops->write(ops->data, q->name, tmp, q->format, err)) < 0 || (rc = lstat(tmp, &st)) < 0 ||
	    (rc = rename(tmp, q->out)) < 0) {
		if (rc == -1)
			rc = vn_infra_error(err, -errno, "dump %s: %s", tmp, strerror(errno));
		unlink(tmp);
		goto cleanup;
	}
	r->path = vn_xstrdup(q->out);
	r->bytes = (uint64_t)st.st_size;
	r->release = vn_testbed_kernel_release(g.kernel_id);
	r->topology = g.topology ? vn_xstrdup(g.topology) : NULL;
	if ((rc = vn_vmlinux_find(q->debug_root, g.kernel, r->release, &r->vmlinux, err)) < 0 ||
	    (rc = running_build_id(r, err)) < 0 || (rc = describe(q, &g, r, err)) < 0) {
		/* A dump without its description is one nobody can match to a vmlinux: both go. */
		unlink(q->out);
		vn_dump_result_clear(r);
	}
cleanup:
	vn_dump_guest_clear(&g);
	return rc;
}

/* Through libvirt: each half opens its own connection (in a child with the embedded driver). */
struct dump_call {
	const struct vn_testbed_ctx *ctx;
	const char *name, *path;
	enum vn_dump_format format;
	bool write;
};

static int dump_probe_here(const struct dump_call *c, struct vn_virt_domain *d, char **out, struct vn_error *err)
{
	_cleanup_free_ char *copy = vn_state_guest_file(c->ctx->state_dir, c->name, VN_GUEST_TOPOLOGY);
	struct vn_domain_meta m = {0};
	const char *state;
	uint64_t memory;
	int rc;

	if ((rc = vn_virt_domain_state_name(d, &state, err)) < 0 ||
	    (rc = vn_virt_domain_memory_bytes(d, &memory, err)) < 0 || (rc = vn_virt_domain_metadata(d, &m, err)) < 0)
		return rc;
	/* The guest dir's copy is the topology that booted; the up's file may have changed since. */
	const char *topo = vn_is_file(copy) ? copy : m.topology_path;
	*out = vn_xasprintf("%" PRIu64 "\n%s\n%s\n%s\n%s\n", memory, state, m.kernel ? m.kernel : "",
			    m.kernel_id ? m.kernel_id : "", topo ? topo : "");
	vn_domain_meta_clear(&m);
	return 0;
}

static int dump_child(void *arg, char **out, struct vn_error *err)
{
	const struct dump_call *c = arg;
	struct vn_virt *v = NULL;
	struct vn_virt_domain *d = NULL;
	const char *state = NULL;
	int rc;

	if ((rc = vn_virt_open_within(c->ctx->uri, c->ctx->state_dir, c->ctx->lock_timeout_ms,
				      c->ctx->connect_timeout_ms, &v, err)) < 0)
		return rc;
	/* A panicked guest is "crashed" (on_crash preserve): its QEMU, paused, holds its memory. */
	if ((rc = vn_testbed_lookup(v, c->name, &d, err)) == 0 &&
	    (rc = vn_virt_domain_state_name(d, &state, err)) == 0) {
		if (strcmp(state, "shutoff") == 0 || strcmp(state, "nostate") == 0)
			rc = vn_input_error(err, "guest '%s' is not running: nothing in memory to dump", c->name);
		else if (c->write)
			rc = vn_virt_domain_dump(d, c->path, c->format, err);
		else
			rc = dump_probe_here(c, d, out, err);
	}
	vn_virt_domain_free(d);
	vn_virt_close(v);
	return rc;
}

static int dump_call(struct dump_call *c, char **out, int64_t work_ms, struct vn_error *err)
{
	struct vn_isolate_limits lim = vn_testbed_libvirt_limits(c->ctx, work_ms);

	*out = NULL;
	if (vn_testbed_uri_is_remote(c->ctx->uri))
		return vn_input_error(err, "vnuma dump writes this host's guests' dumps only, not '%s''s", c->name);
	return vn_virt_uri_is_embedded(c->ctx->uri) ? vn_isolate(dump_child, c, &lim, out, err)
						    : dump_child(c, out, err);
}

/* The child's next line (strsep: an empty one is a field not said, not one skipped), or NULL. */
static char *line_or_null(char **rest)
{
	char *s = *rest ? strsep(rest, "\n") : NULL;
	return s && *s ? vn_xstrdup(s) : NULL;
}

static int lv_probe(void *data, const char *name, struct vn_dump_guest *g, struct vn_error *err)
{
	struct dump_call c = {.ctx = data, .name = name};
	_cleanup_free_ char *out = NULL;
	char *rest, *mem, *end = NULL;
	int rc;

	if ((rc = dump_call(&c, &out, VN_TESTBED_LIBVIRT_MS, err)) < 0)
		return rc;
	rest = out;
	if (!out || !*(mem = strsep(&rest, "\n")) || (g->memory = strtoull(mem, &end, 10), *end))
		return vn_infra_error(err, -EPROTO, "guest %s: its memory size did not come back from the child", name);
	g->state = line_or_null(&rest);
	g->kernel = line_or_null(&rest);
	g->kernel_id = line_or_null(&rest);
	g->topology = line_or_null(&rest);
	return 0;
}

static int lv_write(void *data, const char *name, const char *path, enum vn_dump_format f, struct vn_error *err)
{
	struct dump_call c = {.ctx = data, .name = name, .path = path, .format = f, .write = true};
	_cleanup_free_ char *out = NULL;

	return dump_call(&c, &out, DUMP_WRITE_MS, err);
}

int vn_testbed_dump(const struct vn_testbed_ctx *ctx, const struct vn_dump_req *q, struct vn_dump_result *r,
		    struct vn_error *err)
{
	struct vn_dump_ops ops = {.probe = lv_probe, .write = lv_write, .data = (void *)ctx};

	return vn_testbed_dump_with(q, &ops, r, err);
}
