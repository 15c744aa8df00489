/*
 * What `vnuma run` checks before it boots anything, in one place, so that
 * `vnuma scenario validate` checks exactly the same: the topology the
 * scenario names (resolved beside the scenario file), the nodes its steps,
 * actions, hugetlb pages and assertions name, the kernel it asks for, and
 * the guest name it derives. Errors: "FILE: $.json.path: message".
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "guest/image-recipe.h"
#include "kernel/recipe.h"
#include "topology/arch.h"
#include "scenario/runner.h"
#include "scenario/schema-priv.h"
#include "testbed/share.h"
#include "topology/find.h"
#include "util/cleanup.h"
#include "util/name.h"
#include "util/alloc.h"
#include "util/strbuf.h"

static int resolve_topology(const struct vn_scenario *s, char **path, struct vn_error *err)
{
	_cleanup_free_ char *copy = vn_xstrdup(s->path);
	char buf[PATH_MAX];

	if (strchr(s->topology, '/')) {
		snprintf(buf, sizeof(buf), "%s/%s", s->topology[0] == '/' ? "" : dirname(copy), s->topology);
		return vn_topology_find(s->topology[0] == '/' ? s->topology : buf, path, err);
	}
	/* A bare NAME: the scenario's ../topologies first, so an installed scenario takes the installed topology. */
	snprintf(buf, sizeof(buf), "%s/../topologies", dirname(copy));
	_cleanup_free_ char *near = realpath(buf, NULL);
	return vn_topology_find_near(s->topology, near ? near : buf, path, err);
}

/* Node n of topology t at JSON path p: it must exist (and, for moves, have CPUs). */
static int node_ok(const struct vn_scenario *s, const struct vn_topology *t, const char *topo, const char *p,
		   unsigned n, bool need_cpus, struct vn_error *err)
{
	return vn_scn_node_ok(s->path, t, topo, p, n, need_cpus, err);
}

/* A hotplug into node h->node: the topology must give that node hotplug memory or hot-pluggable vCPUs. */
static int hotplug_ok(const struct vn_scenario *s, const struct vn_topology *t, const char *topo, const char *p,
		      const struct vn_scn_hotplug *h, struct vn_error *err)
{
	int rc = node_ok(s, t, topo, p, h->node, false, err);

	if (rc < 0)
		return rc;
	const struct vn_node *nd = &t->nodes[h->node];
	if (h->memory && h->memory > nd->hotplug_memory)
		return vn_input_error(err,
				      "%s: %s: node %u takes at most %" PRIu64 "M of hotplug memory in %s (its "
				      "hotplug=), not %" PRIu64 "M",
				      s->path, p, h->node, nd->hotplug_memory >> 20, topo, h->memory >> 20);
	if (h->cpus > nd->nhotplug_cpus)
		return vn_input_error(err,
				      "%s: %s: node %u has %u hot-pluggable vCPUs in %s (its hotplug-cpus=), not %u",
				      s->path, p, h->node, nd->nhotplug_cpus, topo, h->cpus);
	return 0;
}

static int check_kernel(const struct vn_scenario *s, struct vn_error *err)
{
	_cleanup_free_ char *rpath = NULL;
	struct stat st;

	if (!s->kernel || strcmp(s->kernel, "stock") == 0)
		return 0;
	if (vn_recipe_find(s->kernel, &rpath, NULL) == 1) {
		_cleanup_recipe_ struct vn_recipe *r = NULL;
		struct vn_error e = {0};
		if (vn_recipe_load(rpath, &r, &e) < 0) {
			int rc = vn_input_error(err, "%s: $.kernel: %s", s->path, e.msg);
			vn_error_clear(&e);
			return rc;
		}
		return 0;
	}
	if (stat(s->kernel, &st) < 0 || !S_ISREG(st.st_mode))
		return vn_input_error(err,
				      "%s: $.kernel: \"%s\" is neither \"stock\", a recipe (kernels/NAME.json) nor a "
				      "kernel image file",
				      s->path, s->kernel);
	return 0;
}

/* A guest image recipe that exists and parses; building it is up's job. */
static int check_image(const struct vn_scenario *s, struct vn_error *err)
{
	_cleanup_free_ char *rpath = NULL;
	_cleanup_image_recipe_ struct vn_image_recipe *r = NULL;
	struct vn_error e = {0};

	if (!s->image)
		return 0;
	if (vn_image_recipe_find(s->image, &rpath, &e) < 0 || vn_image_recipe_load(rpath, &r, &e) < 0) {
		int rc = vn_input_error(err, "%s: $.image: %s", s->path, e.msg);
		vn_error_clear(&e);
		return rc;
	}
	return 0;
}

/* One architecture the scenario boots on ($.arch, or a variant's): the topology, kernel and image it can have. */
static int arch_ok(const struct vn_scenario *s, const struct vn_topology *t, const char *arch, const char *kernel,
		   const char *p, struct vn_error *err)
{
	struct vn_error e = {0};
	enum vn_arch a;

	if (!arch)
		return 0;
	int rc = vn_arch_parse(arch, p, &a, err);
	if (rc < 0 || a == vn_arch_host())
		return rc;
	if (vn_topology_arch_check(t, a, &e) < 0) {
		rc = vn_input_error(err, "%s: %s: %s", s->path, p, e.msg);
		vn_error_clear(&e);
		return rc;
	}
	if (s->locality)
		return vn_input_error(err,
				      "%s: %s: \"%s\" cannot count locality: the plugin reads x86-64 guests only "
				      "(docs/locality.md)",
				      s->path, p, arch);
	if (kernel && strcmp(kernel, "stock") != 0)
		return vn_input_error(err, "%s: %s: \"%s\" boots only Debian's stock kernel; the kernel is \"%s\"",
				      s->path, p, arch, kernel);
	if (s->image || (s->with && *s->with))
		return vn_input_error(err, "%s: %s: \"%s\" takes no image or host packages (they are %s programs)",
				      s->path, p, arch, vn_arch_name(vn_arch_host()));
	return 0;
}

static int check_arches(const struct vn_scenario *s, const struct vn_topology *t, struct vn_error *err)
{
	char p[64];
	int rc;

	if ((rc = arch_ok(s, t, s->arch, s->kernel, "$.arch", err)) < 0)
		return rc;
	for (unsigned i = 0; i < s->nvariants; i++) {
		const struct vn_scn_variant *v = &s->variants[i];
		snprintf(p, sizeof(p), "$.variants[%u].arch", i);
		if ((rc = arch_ok(s, t, v->arch ? v->arch : s->arch, v->kernel ? v->kernel : s->kernel, p, err)) < 0)
			return rc;
	}
	return 0;
}

char *vn_scenario_dir(const struct vn_scenario *s)
{
	_cleanup_free_ char *copy = vn_xstrdup(s->path ? s->path : ".");
	return vn_xstrdup(dirname(copy));
}

/* "share" and "files": their host paths, relative to the scenario's file, there and of the right kind. */
static int check_host_files(const struct vn_scenario *s, struct vn_error *err)
{
	_cleanup_free_ char *dir = vn_scenario_dir(s);
	struct vn_error e = {0};
	char p[64];
	int rc = 0;

	for (unsigned i = 0; s->share && s->share[i] && rc == 0; i++) {
		struct vn_domain_share sh;
		snprintf(p, sizeof(p), "$.share[%u]", i);
		if ((rc = vn_share_parse(s->share[i], dir, &sh, &e)) == 0)
			vn_free_all(sh.source, sh.guest_dir);
	}
	for (unsigned i = 0; s->files && s->files[i] && rc == 0; i++) {
		_cleanup_free_ char *h = NULL, *g = NULL;
		snprintf(p, sizeof(p), "$.files[%u]", i);
		rc = vn_file_spec_parse(s->files[i], dir, &h, &g, &e);
	}
	if (rc < 0) {
		rc = vn_error_set(err, e.kind, e.code, "%s: %s: %s", s->path, p, e.msg);
		vn_error_clear(&e);
	}
	return rc;
}

int vn_scenario_check(const struct vn_scenario *s, char **topo_path, struct vn_topology **topo, struct vn_error *err)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_topology_ struct vn_topology *t = NULL;
	struct vn_error e = {0};
	char p[256], guest[VN_GUEST_NAME_MAX + 64];
	int rc;

	snprintf(guest, sizeof(guest), VN_SCN_GUEST_PREFIX "%s", s->name);
	if (!vn_guest_name_valid(guest))
		return vn_input_error(err,
				      "%s: $.name: \"%s\" would make the guest name \"%s\", which is not a valid guest "
				      "name (at most %d characters)",
				      s->path, s->name, guest, VN_GUEST_NAME_MAX);
	if (resolve_topology(s, &path, &e) < 0 || vn_topology_load(path, &t, &e) < 0) {
		rc = vn_error_set(err, e.kind, e.code, "%s: $.topology: %s", s->path, e.msg);
		vn_error_clear(&e);
		return rc;
	}
	for (unsigned i = 0; i < s->nsteps; i++) {
		const struct vn_scn_step *st = &s->steps[i];
		const struct vn_scn_placement *pl = &st->placement;
		for (unsigned k = 0; k < pl->nnodes; k++) {
			snprintf(p, sizeof(p), "$.steps[%u].placement.nodes[%u]", i, k);
			if ((rc = node_ok(s, t, path, p, pl->nodes[k], false, err)) < 0)
				return rc;
		}
		for (unsigned k = 0; k < pl->ncpu_nodes; k++) {
			snprintf(p, sizeof(p), "$.steps[%u].placement.cpu_nodes[%u]", i, k);
			if ((rc = node_ok(s, t, path, p, pl->cpu_nodes[k], false, err)) < 0)
				return rc;
		}
		for (unsigned k = 0; k < st->nactions; k++) {
			if (st->actions[k].is_hotplug) {
				snprintf(p, sizeof(p), "$.steps[%u].actions[%u].hotplug.node", i, k);
				rc = hotplug_ok(s, t, path, p, &st->actions[k].hotplug, err);
			} else {
				snprintf(p, sizeof(p), "$.steps[%u].actions[%u].move.to_node", i, k);
				rc = node_ok(s, t, path, p, st->actions[k].to_node, true, err);
			}
			if (rc < 0)
				return rc;
		}
		snprintf(p, sizeof(p), "$.steps[%u].hotplug.node", i);
		if (st->is_hotplug && (rc = hotplug_ok(s, t, path, p, &st->hotplug, err)) < 0)
			return rc;
	}
	for (unsigned i = 0; i < s->nhugetlb; i++) {
		snprintf(p, sizeof(p), "$.hugetlb[\"%u\"]", s->hugetlb[i].node);
		if ((rc = node_ok(s, t, path, p, s->hugetlb[i].node, false, err)) < 0)
			return rc;
	}
	for (unsigned i = 0; i < s->nasserts; i++) {
		const struct vn_scn_assert *a = &s->asserts[i];
		snprintf(p, sizeof(p), "$.assertions[%u]", i);
		if ((rc = vn_assert_types[a->type].validate(a, t, path, s->path, p, err)) < 0)
			return rc;
	}
	if ((rc = check_kernel(s, err)) < 0 || (rc = check_image(s, err)) < 0 || (rc = check_arches(s, t, err)) < 0 ||
	    (rc = check_host_files(s, err)) < 0)
		return rc;
	if (topo_path)
		*topo_path = steal_pointer(&path);
	if (topo)
		*topo = steal_pointer(&t);
	return 0;
}

int vn_scenario_check_hosts(const struct vn_scenario *s, bool locality, const char *uri, const struct vn_host *hosts,
			    unsigned n, struct vn_error *err)
{
	if (!s->locality && !locality)
		return 0;
	for (unsigned i = 0; i <= n; i++) {
		const char *u = i < n ? hosts[i].uri : uri ? uri : getenv("VNUMA_URI");
		if (vn_testbed_uri_is_remote(u))
			return vn_input_error(err,
					      "%s: \"locality\" counts accesses on guests of this host only, not on %s "
					      "(docs/locality.md)",
					      s->path, u);
	}
	return 0;
}

/* Where share spec puts its directory in the guest (malloc'd): its GUESTDIR, else up's default for its host dir. */
static char *share_guest_dir(const char *spec)
{
	struct vn_error e = {0};
	char *guest = NULL;
	size_t hlen = 0;
	bool rw;

	if (vn_share_split(spec, &hlen, &guest, &rw, &e) < 0)
		return NULL; /* refused when the scenario was read */
	if (guest)
		return guest;
	_cleanup_free_ char *host = vn_xstrndup(spec, hlen);
	while (hlen > 1 && host[hlen - 1] == '/')
		host[--hlen] = '\0';
	const char *base = strrchr(host, '/');
	return vn_xasprintf("%s/%s", VN_SHARE_GUEST_ROOT, base ? base + 1 : host);
}

/* A share of s puts something at path (a guest directory it mounts is path or above it). */
static bool path_shared(const struct vn_scenario *s, const char *ltp)
{
	for (char **p = s->share; p && *p; p++) {
		_cleanup_free_ char *g = share_guest_dir(*p);
		size_t n = g ? strlen(g) : 0;
		if (g && strncmp(ltp, g, n) == 0 && (ltp[n] == '\0' || ltp[n] == '/'))
			return true;
	}
	return false;
}

int vn_scenario_check_ltp(const struct vn_scenario *s, struct vn_error *err)
{
	for (unsigned i = 0; i < s->nsteps; i++) {
		const struct vn_scn_suite *su = s->steps[i].suite;
		if (!su || su->format != VN_SCN_SUITE_LTP || path_shared(s, su->ltp))
			continue;
		/* Never a run that passes by running nothing: LTP is the user's to build, vnuma cannot ship it. */
		return vn_input_error(err,
				      "%s: step \"%s\" runs LTP from %s in the guest, and no LTP is given: build LTP "
				      "(docs/suites.md, \"Building LTP\": ./configure --prefix=/opt/ltp "
				      "LDFLAGS=-static && make && make install) and pass --ltp DIR, or share it there",
				      s->path, s->steps[i].name, su->ltp);
	}
	return 0;
}

/* The program a kselftest step runs from VN_SCN_KSELFTEST_GUEST_DIR, or NULL. */
static const char *kselftest_program(const struct vn_scn_step *st)
{
	const struct vn_scn_suite *su = st->suite;
	size_t n = strlen(VN_SCN_KSELFTEST_GUEST_DIR);
	if (!su || !su->command || !su->command[0] || strncmp(su->command[0], VN_SCN_KSELFTEST_GUEST_DIR, n) != 0 ||
	    su->command[0][n] != '/')
		return NULL;
	return su->command[0];
}

char *vn_scenario_kselftests(const struct vn_scenario *s)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;
	for (unsigned i = 0; i < s->nsteps; i++) {
		const char *p = kselftest_program(&s->steps[i]);
		const char *rel = p ? p + strlen(VN_SCN_KSELFTEST_GUEST_DIR) + 1 : NULL;
		if (!rel || (strncmp(rel, "vm/", 3) != 0 && strncmp(rel, "mm/", 3) != 0) || strchr(rel + 3, '/'))
			continue;
		/* Each name once: "a,b" must not hold b twice. */
		_cleanup_free_ char *with = vn_xasprintf(",%s,", rel + 3), *all = vn_xasprintf(",%s,", b.s ? b.s : "");
		if (!strstr(all, with))
			vn_strbuf_printf(&b, "%s%s", b.len ? "," : "", rel + 3);
	}
	return vn_strbuf_steal(&b);
}

int vn_scenario_check_kselftest(const struct vn_scenario *s, struct vn_error *err)
{
	for (unsigned i = 0; i < s->nsteps; i++) {
		const char *p = kselftest_program(&s->steps[i]);
		if (!p || path_shared(s, p))
			continue;
		/* Never a run that passes by running nothing, nor one that boots to find no test there. */
		return vn_input_error(err,
				      "%s: step \"%s\" runs %s, and no kselftest is given: pass --kselftest (built "
				      "from the kernel's tree, Debian's linux-source-6.1 for the stock kernel), or "
				      "build it with 'vnuma kernel selftests' and --share DIR:%s",
				      s->path, s->steps[i].name, p, VN_SCN_KSELFTEST_GUEST_DIR);
	}
	return 0;
}
