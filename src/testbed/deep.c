/* vnuma collect --deep (deep.h): a dump, drgn on it, the model beside it; the dump removed after. */
#include "testbed/deep.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testbed/deep-py.h"
#include "kernel/vmlinux.h"
#include "testbed/dump.h"
#include "topology/arch.h"
#include "util/arch.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/json.h"
#include "util/spawn.h"
#include "util/strbuf.h"

/* drgn reads a 512 MiB dump in seconds; ten minutes is a drgn stuck on a corrupt one. */
#define DRGN_DEADLINE_S 600
/* drgn's other lines kept for messages: its last few KiB. */
#define DRGN_TAIL_MAX 4096

void vn_deep_result_clear(struct vn_deep_result *r)
{
	free(r->report);
	free(r->topology);
	free(r->vmlinux);
	memset(r, 0, sizeof(*r));
}

/* drgn's output, bounded: the marker line apart, the rest only as a tail for messages. */
struct drgn_out {
	struct vn_strbuf marker, tail;
	bool too_long;
};

static void drgn_line(void *data, const char *line)
{
	struct drgn_out *o = data;
	size_t len = strlen(line);

	if (strncmp(line, VN_DEEP_MARKER, strlen(VN_DEEP_MARKER)) == 0) {
		o->marker.len = 0;
		o->too_long = len > VN_DEEP_LINE_MAX + strlen(VN_DEEP_MARKER);
		if (!o->too_long)
			vn_strbuf_printf(&o->marker, "%s\n", line);
		return;
	}
	if (o->tail.len + len > DRGN_TAIL_MAX)
		o->tail.len = 0;
	vn_strbuf_printf(&o->tail, "%.*s\n", DRGN_TAIL_MAX - 1, line);
}

/* The script run by drgn on the dump (env sets the one variable drgn reads; no shell). */
static int run_drgn(const char *dir, const char *core, const char *vmlinux, char **json, struct vn_error *err)
{
	_cleanup_free_ char *script = vn_xasprintf("%s/deep.py", dir);
	/* drgn 0.0.22 mis-translates QEMU's ELF dumps (phys_base 0); libkdumpfile reads them right. */
	const char *argv[] = {"env",
			      "DRGN_USE_LIBKDUMPFILE_FOR_ELF=1",
			      "drgn",
			      "-q",
			      "-c",
			      core,
			      "-s",
			      vmlinux,
			      "--no-default-symbols",
			      script,
			      NULL};
	struct drgn_out o = {VN_STRBUF_INIT, VN_STRBUF_INIT, false};
	struct vn_spawn_opts so = VN_SPAWN_OPTS_INIT;
	char shown[DRGN_TAIL_MAX + 4];
	int rc;

	if ((rc = vn_file_write_text(script, (const char *)vn_deep_py, err)) < 0)
		return rc;
	so.line = drgn_line;
	so.line_data = &o;
	so.deadline_s = DRGN_DEADLINE_S;
	if ((rc = vn_spawn_run(argv, &so, err)) < 0)
		goto cleanup;
	const char *tail = vn_text_clean(o.tail.s ? o.tail.s : "", o.tail.len, DRGN_TAIL_MAX, VN_TEXT_LINES, shown);
	if (rc == 127)
		rc = vn_infra_error(err, -ENOENT, "drgn is not installed: 'apt-get install python3-drgn' (%s)", tail);
	else if (rc != 0)
		rc = vn_infra_error(err, -EPROTO, "drgn on the dump exited %d", rc);
	else if (o.too_long)
		rc = vn_infra_error(err, -EBADMSG, "drgn's reading of the dump is over 1 MiB: not read");
	if (rc != 0 && rc != -ENOENT)
		vn_error_set_detail(err, tail);
	if (rc == 0) {
		vn_strbuf_append(&o.tail, o.marker.s ? o.marker.s : "", o.marker.len);
		*json = vn_strbuf_steal(&o.tail);
	}
cleanup:
	vn_strbuf_free(&o.marker);
	vn_strbuf_free(&o.tail);
	return rc;
}

static int judge(const struct vn_deep_req *q, const char *output, struct vn_deep_result *r, struct vn_error *err)
{
	_cleanup_topology_ struct vn_topology *t = NULL;
	struct vn_fallback_opts fo = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_deep *d = NULL;
	unsigned observed;
	int rc;

	if ((rc = vn_deep_parse(output, &d, err)) < 0)
		return rc;
	if (d->zonelists_absent) {
		rc = vn_infra_error(err, -EBADMSG, "drgn could not read %s's zonelists: %s", q->name,
				    d->zonelists_absent);
		goto cleanup;
	}
	if (!r->topology || (rc = vn_topology_load(r->topology, &t, err)) < 0) {
		rc = r->topology
			     ? vn_error_prefix(err, "the topology %s booted", q->name)
			     : vn_infra_error(err, -ENOENT, "guest %s does not say which topology it booted", q->name);
		err->kind = VN_ERR_INFRA; /* the guest's own record, not the user's input */
		goto cleanup;
	}
	vn_topology_arch_fallback(vn_arch_host(), &fo);
	fo.model = q->model;
	r->report = vn_deep_compare(d, t, &fo, &r->ok, &observed);
	if (q->save_dir) {
		_cleanup_free_ char *path = vn_xasprintf("%s/deep.json", q->save_dir);
		size_t len = 0;
		const char *line = vn_deep_marker_line(output, &len);
		_cleanup_free_ char *text = vn_xasprintf("%.*s\n", (int)len, line);
		if ((rc = vn_dir_create(q->save_dir, err)) == 0)
			rc = vn_file_write_text(path, text, err);
	}
cleanup:
	vn_deep_free(d);
	return rc;
}

int vn_testbed_collect_deep(const struct vn_testbed_ctx *ctx, const struct vn_deep_req *q, struct vn_deep_result *r,
			    struct vn_error *err)
{
	const char *base = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp";
	_cleanup_free_ char *dir = vn_xasprintf("%s/vnuma-deep.XXXXXX", base), *core = NULL, *output = NULL;
	struct vn_dump_result dr = {0};
	int rc;

	memset(r, 0, sizeof(*r));
	if (!mkdtemp(dir))
		return vn_infra_error(err, -errno, "cannot make a directory for the dump under %s: %s", base,
				      strerror(errno));
	core = vn_xasprintf("%s/%s.vmcore", dir, q->name);
	struct vn_dump_req dq = {.name = q->name, .out = core, .format = VN_DUMP_ELF, .debug_root = q->debug_root};
	if ((rc = vn_testbed_dump(ctx, &dq, &dr, err)) < 0) {
		vn_error_prefix(err, "%s's memory for drgn", q->name);
		goto cleanup;
	}
	r->topology = dr.topology ? vn_xstrdup(dr.topology) : NULL;
	if (!dr.vmlinux.path) {
		rc = vn_infra_error(err, -ENOENT, "cannot read %s's kernel structures: %s", q->name, dr.vmlinux.hint);
		goto cleanup;
	}
	r->vmlinux = vn_xstrdup(dr.vmlinux.path);
	if ((rc = run_drgn(dir, core, dr.vmlinux.path, &output, err)) == 0)
		rc = judge(q, output, r, err);
cleanup:
	vn_dump_result_clear(&dr);
	vn_rm_rf(dir);
	return rc;
}

/*
 * A kept dump travels (CI's artifacts) and FILE.json names a path on the
 * host that wrote it: the vmlinux there now must still be the dumped
 * kernel's, by build id (the dump's VMCOREINFO, the guest's word: hex only).
 * Either unknown: nothing to hold it to.
 */
static int same_kernel(const char *core, const char *vmlinux, struct vn_error *err)
{
	_cleanup_free_ char *dumped = NULL, *have = NULL;
	int rc;

	if ((rc = vn_elf_vmcoreinfo(core, "BUILD-ID", &dumped, err)) < 0 ||
	    (rc = vn_elf_build_id(vmlinux, &have, err)) < 0)
		return rc;
	if (!dumped || !have || strlen(dumped) > 128 || strspn(dumped, "0123456789abcdef") != strlen(dumped) ||
	    strcmp(dumped, have) == 0)
		return 0;
	return vn_infra_error(err, -ESTALE, "%s has build id %s, the kernel dumped in %s %s: not its vmlinux", vmlinux,
			      have, core, dumped);
}

/* CORE.json's kernel.vmlinux (vnuma dump wrote it: found by build id), or its hint as the error. */
static int kept_vmlinux(const char *core, char **vmlinux, struct vn_error *err)
{
	_cleanup_free_ char *meta = vn_xasprintf("%s.json", core), *text = NULL;
	struct json_object *o = NULL;
	int rc;

	if ((rc = vn_file_read(meta, VN_FILE_STATE_MAX, &text, &(size_t){0}, err)) < 0) {
		vn_error_prefix(err, "%s, which names the dump's vmlinux", meta);
		return rc;
	}
	if ((rc = vn_json_parse(text, meta, &o, err)) < 0)
		return rc;
	struct json_object *k = vn_json_member(o, "kernel", json_type_object);
	const char *v = k ? vn_json_str(k, "vmlinux") : NULL, *hint = k ? vn_json_str(k, "hint") : NULL;
	if (v && vn_is_file(v)) {
		if ((rc = same_kernel(core, v, err)) == 0)
			*vmlinux = vn_xstrdup(v);
	} else if (v)
		rc = vn_infra_error(err, -ENOENT, "cannot read %s's kernel structures: its vmlinux %s is gone", core,
				    v);
	else
		rc = vn_infra_error(err, -ENOENT, "cannot read %s's kernel structures: %s", core,
				    hint ? hint : "its .json names no vmlinux");
	json_object_put(o);
	return rc;
}

int vn_deep_check_dump(const struct vn_deep_req *q, const char *core, const char *topology, struct vn_deep_result *r,
		       struct vn_error *err)
{
	const char *base = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp";
	_cleanup_free_ char *dir = vn_xasprintf("%s/vnuma-deep.XXXXXX", base), *output = NULL, *copy = vn_xstrdup(core);
	int rc;

	memset(r, 0, sizeof(*r));
	if (!vn_is_file(core))
		return vn_input_error(err, "%s: no such dump", core);
	r->topology = topology ? vn_xstrdup(topology) : vn_xasprintf("%s/topology.xml", dirname(copy));
	if (!vn_is_file(r->topology)) {
		rc = vn_input_error(err,
				    "%s: no topology.xml beside it (a run's directory has one): say which "
				    "topology the guest booted with --topology",
				    core);
		vn_deep_result_clear(r);
		return rc;
	}
	if ((rc = kept_vmlinux(core, &r->vmlinux, err)) < 0)
		return rc;
	/* deep.py is written apart: the dump's directory may be a read-only copy. */
	if (!mkdtemp(dir))
		return vn_infra_error(err, -errno, "cannot make a directory for drgn's script under %s: %s", base,
				      strerror(errno));
	if ((rc = run_drgn(dir, core, r->vmlinux, &output, err)) == 0)
		rc = judge(q, output, r, err);
	vn_rm_rf(dir);
	return rc;
}
