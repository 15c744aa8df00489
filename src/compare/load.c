/*
 * Reading result groups and run directories (docs/results.md) for compare.
 * Result directories may be reused or someone else's (docs/security.md):
 * every value is type-checked, every file is read bounded and only when
 * regular, a run's "dir" must stay inside its group, and text that reaches
 * the table (names, kernel strings) is printable ASCII.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "compare/compare-priv.h"
#include "report/result-facts.h"
#include "report/result-group.h"
#include "report/result.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/strmap.h"
#include "util/file.h"
#include "util/json.h"
#include "util/strbuf.h"

/* Header strings (a kernel command line) are cut at this. */
#define TEXT_MAX        512
#define METRIC_NAME_MAX 200

struct loader {
	struct vn_compare *c;
	bool force;
	struct vn_compare_obs *obs;
	size_t nobs, cap;
	/* Where the first topology, accelerator, architecture and time came from, for a mismatch's message. */
	char *topology_file, *accel_file, *arch_file, *time_file;
	struct vn_error *err;
	/* The variants' names so far (to c->variants' positions), and c->variants' room: no scan per variant. */
	struct vn_strmap names;
	size_t variants_cap;
};

static void loader_clear(struct loader *ld)
{
	for (size_t i = 0; i < ld->nobs; i++)
		free(ld->obs[i].metric);
	vn_free_all(ld->obs, ld->topology_file, ld->accel_file, ld->arch_file, ld->time_file);
	vn_strmap_free(&ld->names);
}

/* Printable ASCII only: these strings go to a terminal. */
static char *printable(const char *s)
{
	char buf[TEXT_MAX + 4];
	return vn_xstrdup(vn_excerpt(s, strlen(s), TEXT_MAX, buf));
}

static bool has_item(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *p = list; p; p = strstr(p, ", ") ? strstr(p, ", ") + 2 : NULL)
		if (strncmp(p, item, n) == 0 && (p[n] == '\0' || strncmp(p + n, ", ", 2) == 0))
			return true;
	return false;
}

static void add_item(char **list, const char *item)
{
	if (!*list) {
		*list = vn_xstrdup(item);
	} else if (!has_item(*list, item)) {
		char *s = vn_xasprintf("%s, %s", *list, item);
		free(*list);
		*list = s;
	}
}

/*
 * The topology, the accelerator and the time (real or virtual) must be the
 * same everywhere: a kernel compared across different machines, TCG against
 * KVM, or a figure timed by the host's clock against one timed by
 * instructions, measures the machine. --force mixes them, and the header
 * lists every value. what names the key in the message; dflt stands for an
 * absent key (a result from before "time" was written ran in real time).
 */
static int same_value(struct loader *ld, const struct vn_json_reader *r, const char *value, const char *key,
		      const char *what, const char *dflt, char **joined, char **first_file)
{
	_cleanup_free_ char *v = value ? printable(value) : NULL;
	char p[VN_JSON_PATH_MAX];

	if (!v && !dflt)
		return 0;
	if (!v)
		v = vn_xstrdup(dflt);
	if (!*joined) {
		*first_file = vn_xstrdup(r->file);
	} else if (!has_item(*joined, v) && !ld->force) {
		return vn_json_bad(r, vn_json_path_key(p, "$", key),
				   "\"%s\", but %s has \"%s\": results of different %s do not compare (--force "
				   "compares them anyway)",
				   v, *first_file, *joined, what);
	}
	add_item(joined, v);
	return 0;
}

/* The machine a run or a group ran on; group.json names no clock (its runs do): time is NULL there. */
static int same_machine(struct loader *ld, const struct vn_json_reader *r, const char *topology, const char *accel,
			const char *arch, const char *time)
{
	int rc = same_value(ld, r, topology, "topology", "topologies", NULL, &ld->c->topology, &ld->topology_file);
	if (rc < 0 ||
	    (rc = same_value(ld, r, accel, "accelerator", "accelerators", NULL, &ld->c->accelerator, &ld->accel_file)) <
		    0 ||
	    /* A result from before architectures names none: it is not compared on it. */
	    (rc = same_value(ld, r, arch, "arch", "architectures", NULL, &ld->c->arch, &ld->arch_file)) < 0 || !time)
		return rc;
	return same_value(ld, r, time, "time", "clocks (real or virtual time)", "real", &ld->c->time, &ld->time_file);
}

/* A real-time run's vCPUs and its host's CPUs, kept where they are the most vCPUs per host CPU so far. */
static void read_cpus(struct loader *ld, const struct vn_result_run *res)
{
	struct vn_compare *c = ld->c;
	unsigned vcpus = res->vcpus, host_cpus = res->host_cpus;

	/* In virtual time every vCPU shares one host thread anyway: compare says so on its own line. */
	if (!vcpus || !host_cpus || vcpus <= host_cpus || vn_result_virtual_time(res))
		return;
	if (!c->shared_vcpus || (uint64_t)vcpus * c->shared_host_cpus > (uint64_t)c->shared_vcpus * host_cpus) {
		c->shared_vcpus = vcpus;
		c->shared_host_cpus = host_cpus;
	}
}

static bool name_taken(const struct loader *ld, const char *name)
{
	return vn_strmap_get(&ld->names, name, NULL);
}

/* A new variant named name, else fallback, else fallback-2, -3, ...: names are unique. */
static size_t add_variant(struct loader *ld, const char *name, const char *fallback, const char *source)
{
	struct vn_compare *c = ld->c;
	char *n = name_taken(ld, name) ? vn_xstrdup(fallback) : vn_xstrdup(name);

	for (unsigned i = 2; name_taken(ld, n); i++) {
		free(n);
		n = vn_xasprintf("%s-%u", fallback, i);
	}
	if (c->nvariants == ld->variants_cap) {
		ld->variants_cap = ld->variants_cap ? 2 * ld->variants_cap : 16;
		c->variants = vn_xreallocarray(c->variants, ld->variants_cap, sizeof(*c->variants));
	}
	c->variants[c->nvariants] = (struct vn_compare_variant){.name = n, .source = vn_xstrdup(source)};
	vn_strmap_put(&ld->names, n, c->nvariants);
	return c->nvariants++;
}

static bool metric_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > METRIC_NAME_MAX)
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s >= 0x7f)
			return false;
	return true;
}

static int read_metrics(struct loader *ld, const struct vn_json_reader *r, const struct vn_result_run *res, size_t vi)
{
	char p[VN_JSON_PATH_MAX];

	for (unsigned i = 0; i < res->nmetrics; i++) {
		const struct vn_metric *m = &res->metrics[i];
		if (!metric_name_ok(m->name))
			return vn_json_bad(r, vn_json_path_key(p, "$.metrics", m->name),
					   "a metric name is printable ASCII without spaces, at most %d bytes",
					   METRIC_NAME_MAX);
		if (ld->nobs == ld->cap) {
			ld->cap = ld->cap ? 2 * ld->cap : 256;
			ld->obs = vn_xreallocarray(ld->obs, ld->cap, sizeof(*ld->obs));
		}
		ld->obs[ld->nobs++] =
			(struct vn_compare_obs){.metric = vn_xstrdup(m->name), .variant = vi, .value = m->value};
	}
	return 0;
}

/* s made printable into *out, when there is s. */
static void set_text(char **out, const char *s)
{
	if (!s)
		return;
	free(*out);
	*out = printable(s);
}

/* The facts compare shows of a run ("label value, label value", report/result-facts.h), or NULL. */
static char *facts_text(const struct vn_result_run *res)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;

	for (size_t i = 0; i < vn_result_nfacts; i++) {
		const struct vn_result_fact *f = &vn_result_facts[i];
		_cleanup_free_ char *text = f->flags & VN_FACT_COMPARE ? vn_result_fact_text(f, res) : NULL;
		if (text)
			vn_strbuf_printf(&b, "%s%s %s", b.len ? ", " : "", f->label, text);
	}
	return b.len ? printable(b.s) : NULL;
}

/*
 * One run's result.json (vn_result_load), for variant vi. group_variant:
 * the variant the group lists the run under (its "variant" must agree), or
 * NULL.
 */
static int read_run(struct loader *ld, const struct vn_json_reader *r, const struct vn_result_run *res, size_t vi,
		    const char *group_variant)
{
	struct vn_compare_variant *v = &ld->c->variants[vi];
	int rc;

	v->runs++;
	if (!res->complete)
		return 0;
	if (group_variant && res->variant && strcmp(res->variant, group_variant) != 0)
		return vn_json_bad(r, "$.variant", "\"%s\", but group.json lists this run under \"%s\"", res->variant,
				   group_variant);
	/* A result from before "time" was written ran in real time. */
	if ((rc = same_machine(ld, r, res->topology, res->accel, res->arch,
			       vn_result_virtual_time(res) ? "virtual" : "real")) < 0)
		return rc;
	read_cpus(ld, res);
	_cleanup_free_ char *sc = printable(res->scenario);
	add_item(&ld->c->scenario, sc);

	/* The first complete run names the variant's kernel; its repeats boot the same one. */
	if (!v->release) {
		set_text(&v->release, res->kernel_release);
		set_text(&v->cmdline, res->kernel_cmdline);
	}
	if (!v->kernel)
		set_text(&v->kernel, res->kernel_recipe);
	if (!v->complete)
		v->facts = facts_text(res);
	if (!v->sysctls && res->nsysctls) {
		_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;
		for (unsigned i = 0; i < res->nsysctls; i++)
			vn_strbuf_printf(&b, "%s%s=%s", i ? " " : "", res->sysctls[i].key, res->sysctls[i].value);
		v->sysctls = printable(b.s);
	}
	if ((rc = read_metrics(ld, r, res, vi)) < 0)
		return rc;
	v->complete++;
	return 0;
}

static const char *base_name(const char *dir, char *buf, size_t len)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	size_t s = n;
	while (s > 0 && dir[s - 1] != '/')
		s--;
	snprintf(buf, len, "%.*s", (int)(n - s), dir + s);
	return buf;
}

static int load_single(struct loader *ld, const char *dir, const char *path)
{
	_cleanup_(vn_result_clear) struct vn_result_run res = {0};
	const struct vn_json_reader r = {.file = path, .err = ld->err};
	char base[256];
	int rc;

	if ((rc = vn_result_load(path, &res, ld->err)) < 0)
		return rc;
	base_name(dir, base, sizeof(base));
	_cleanup_free_ char *fallback = printable(base);
	size_t vi = add_variant(ld, res.variant ? res.variant : fallback, fallback, dir);
	if (ld->c->repeats < 1)
		ld->c->repeats = 1;
	return read_run(ld, &r, &res, vi, NULL);
}

/* A run's directory inside its group: names joined by '/', none of them "..". */
static bool run_dir_ok(const char *d)
{
	_cleanup_free_ char *s = vn_xstrdup(d);
	char *save = NULL;

	if (!*d || *d == '/')
		return false;
	for (char *p = strtok_r(s, "/", &save); p; p = strtok_r(NULL, "/", &save))
		if (!vn_json_name_ok(p))
			return false;
	return true;
}

static int load_group_run(struct loader *ld, const struct vn_json_reader *r, const struct vn_result_group_run *run,
			  const char *path, const char *dir, const struct vn_strmap *gnames, size_t first)
{
	char p[VN_JSON_PATH_MAX];
	int rc;

	/* By group.json's names: a variant's own name may have been made unique across the inputs. */
	size_t gi;
	if (!vn_strmap_get(gnames, run->variant, &gi))
		return vn_json_bad(r, vn_json_path_key(p, path, "variant"), "\"%s\" is not one of $.variants",
				   run->variant);
	size_t vi = first + gi;
	if (!run_dir_ok(run->dir))
		return vn_json_bad(r, vn_json_path_key(p, path, "dir"),
				   "\"%s\" is not a directory inside the group (names joined by '/', no '..')",
				   run->dir);

	_cleanup_free_ char *rel = vn_xasprintf("%s/result.json", run->dir);
	/* A symlink planted in a reused group would pass another run's results off as this one's. */
	if (vn_path_has_symlink(dir, rel))
		return vn_json_bad(r, vn_json_path_key(p, path, "dir"),
				   "\"%s\" is or passes through a symlink, not a directory inside the group", run->dir);
	_cleanup_free_ char *rpath = vn_xasprintf("%s/%s/result.json", dir, run->dir);
	_cleanup_(vn_result_clear) struct vn_result_run res = {0};
	const struct vn_json_reader rr = {.file = rpath, .err = ld->err};
	/* A run that never wrote its result.json (cut short, or not started yet) is incomplete. */
	if (access(rpath, F_OK) < 0 && errno == ENOENT) {
		ld->c->variants[vi].runs++;
		return 0;
	}
	if ((rc = vn_result_load(rpath, &res, ld->err)) < 0)
		return rc;
	return read_run(ld, &rr, &res, vi, run->variant);
}

/* A variant's sysctls as "key=value key=value" (NULL when it has none). */
static char *sysctls_text(const struct vn_result_group_variant *v)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;

	for (unsigned i = 0; i < v->nsysctls; i++)
		vn_strbuf_printf(&b, "%s%s=%s", i ? " " : "", v->sysctls[i].key, v->sysctls[i].value);
	return b.len ? printable(b.s) : NULL;
}

/*
 * group.json's variants, after those of the inputs before it; gnames maps
 * its own names to their index. add false: a later slice of a matrix, whose
 * variants the first slice added (the slices' identity says they are the same).
 */
static int load_group_variants(struct loader *ld, const struct vn_json_reader *r, const struct vn_result_group *g,
			       const char *dir, bool add, struct vn_strmap *gnames)
{
	struct vn_compare *c = ld->c;
	char p[VN_JSON_PATH_MAX], pv[VN_JSON_PATH_MAX], gname[256];

	if (!g->nvariants)
		return vn_json_bad(r, "$.variants", "expected at least one variant");
	base_name(dir, gname, sizeof(gname));
	for (unsigned i = 0; i < g->nvariants; i++) {
		const struct vn_result_group_variant *v = &g->variants[i];
		vn_json_path_idx(pv, "$.variants", i);
		/* The key is the group's string, which lives as long as gnames. */
		if (!vn_strmap_put(gnames, v->name, i))
			return vn_json_bad(r, vn_json_path_key(p, pv, "name"), "\"%s\" is listed twice", v->name);
		if (!add)
			continue;
		_cleanup_free_ char *fallback = vn_xasprintf("%s/%s", gname, v->name);
		size_t vi = add_variant(ld, v->name, fallback, dir);
		set_text(&c->variants[vi].kernel, v->kernel);
		c->variants[vi].sysctls = sysctls_text(v);
	}
	if (g->base && strcmp(g->base, g->variants[0].name))
		return vn_json_bad(r, "$.base", "\"%s\", but the base is the first variant", g->base);
	return 0;
}

/*
 * The group g read from dir's path. *first: where its variants start among
 * c's, SIZE_MAX to add them (then set); a later slice of a matrix passes the
 * first slice's.
 */
static int load_group(struct loader *ld, const char *dir, const char *path, const struct vn_result_group *gp,
		      size_t *firstp)
{
	const struct vn_result_group g = *gp;
	const struct vn_json_reader r = {.file = path, .err = ld->err};
	struct vn_compare *c = ld->c;
	char p[VN_JSON_PATH_MAX];
	_cleanup_(vn_strmap_free) struct vn_strmap gnames = {0}; /* group.json's variant names to their index */
	int rc;

	/* A group whose topology is null ran nowhere yet: nothing in it compares. */
	if (!g.topology)
		return vn_json_missing(&r, "$", "topology");
	if ((rc = same_machine(ld, &r, g.topology, g.accel, g.arch, NULL)) < 0)
		return rc;
	_cleanup_free_ char *sc = printable(g.scenario);
	add_item(&c->scenario, sc);
	c->incomplete |= !g.complete;
	bool add = *firstp == SIZE_MAX;
	size_t first = add ? c->nvariants : *firstp;
	*firstp = first;
	if ((rc = load_group_variants(ld, &r, &g, dir, add, &gnames)) < 0)
		return rc;
	for (unsigned i = 0; i < g.nruns; i++)
		if ((rc = load_group_run(ld, &r, &g.runs[i], vn_json_path_idx(p, "$.runs", i), dir, &gnames, first)) <
		    0)
			return rc;
	for (size_t i = first; i < c->nvariants; i++)
		if (c->variants[i].runs > c->repeats)
			c->repeats = c->variants[i].runs;
	return 0;
}

/* dirs' group.json files, where they have one, into g[i] (has[i] true). */
static int load_groups(const char *const *dirs, size_t n, struct vn_result_group *g, bool *has, struct vn_error *err)
{
	int rc;

	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *gpath = vn_xasprintf("%s/group.json", dirs[i]);
		if ((has[i] = access(gpath, F_OK) == 0) && (rc = vn_result_group_load(gpath, &g[i], err)) < 0)
			return rc;
	}
	return 0;
}

static void groups_free(struct vn_result_group *g, size_t n)
{
	for (size_t i = 0; g && i < n; i++)
		vn_result_group_clear(&g[i]);
	free(g);
}

int vn_compare_load(const char *const *dirs, size_t n, const struct vn_compare_opts *o, struct vn_compare **out,
		    struct vn_error *err)
{
	_cleanup_compare_ struct vn_compare *c = vn_xcalloc(1, sizeof(*c));
	__attribute__((cleanup(loader_clear))) struct loader ld = {.c = c, .force = o && o->force, .err = err};
	bool group = false;
	int rc;

	if (!n)
		return vn_input_error(err, "nothing to compare: give a result group, or two or more run directories");
	struct vn_result_group *groups = vn_xcalloc(n, sizeof(*groups));
	_cleanup_free_ bool *has = vn_xcalloc(n, sizeof(*has));
	_cleanup_free_ size_t *order = vn_xcalloc(n, sizeof(*order));
	size_t first = SIZE_MAX;
	/* The slices of one matrix (vnuma run --shard) are read as its one group, in their order. */
	if ((rc = load_groups(dirs, n, groups, has, err)) < 0 ||
	    (rc = vn_result_group_shards(dirs, n, groups, order, err)) < 0)
		goto out;
	bool sliced = rc == 1;
	for (size_t k = 0; k < n; k++) {
		size_t i = sliced ? order[k] : k;
		_cleanup_free_ char *gpath = vn_xasprintf("%s/group.json", dirs[i]);
		_cleanup_free_ char *rpath = vn_xasprintf("%s/result.json", dirs[i]);
		if (!sliced)
			first = SIZE_MAX;
		if (has[i]) {
			group = true;
			rc = load_group(&ld, dirs[i], gpath, &groups[i], &first);
		} else if (access(rpath, F_OK) == 0) {
			rc = load_single(&ld, dirs[i], rpath);
		} else {
			rc = vn_input_error(err,
					    "%s: neither a result group (no group.json) nor a run directory (no "
					    "result.json)",
					    dirs[i]);
		}
		if (rc < 0)
			goto out;
	}
	rc = 0;
out:
	groups_free(groups, n);
	if (rc < 0)
		return rc;
	if (n == 1 && !group)
		return vn_input_error(err,
				      "%s: one run has nothing to compare with: give a result group, or two or "
				      "more run directories",
				      dirs[0]);
	vn_compare_rows_build(c, ld.obs, ld.nobs);
	ld.nobs = 0; /* the rows own the metric names now */
	*out = steal_pointer(&c);
	return 0;
}

void vn_compare_free(struct vn_compare *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nvariants; i++) {
		struct vn_compare_variant *v = &c->variants[i];
		vn_free_all(v->name, v->source, v->kernel, v->release, v->cmdline, v->sysctls, v->facts);
	}
	free(c->variants);
	for (size_t i = 0; i < c->nrows; i++) {
		free(c->rows[i].metric);
		free(c->rows[i].cells);
	}
	vn_free_all(c->rows, c->scenario, c->topology, c->accelerator, c->arch, c->time, c);
}
