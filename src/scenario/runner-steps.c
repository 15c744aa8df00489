/*
 * The guest side of a run: prepare the guest, start each step's processes
 * and each timed move when due, and gather what they left for the
 * assertions. All of it travels over the run's one agent connection
 * (runner.c).
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/guest-lines.h"
#include "scenario/runner-priv.h"
#include "testbed/hotplug-guest.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/parse.h"
#include "util/alloc.h"

static void nodelist(struct vn_strbuf *b, const unsigned *nodes, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		vn_strbuf_printf(b, "%s%u", i ? "," : "", nodes[i]);
}

char **vn_run_step_argv(const struct run *r, const struct vn_scn_step *st, unsigned idx)
{
	struct vn_strbuf script = VN_STRBUF_INIT;
	size_t nargs = 0;
	for (char **a = st->argv; a && *a; a++)
		nargs++;
	/* Ours: sh -c SCRIPT NAME, numactl and its 3, the workload and its 3, the terminating NULL. */
	char **v = vn_xcalloc(16 + nargs, sizeof(char *));
	size_t n = 0;
	const struct vn_scn_placement *p = &st->placement;

	vn_strbuf_printf(&script, "echo $$ > %s/%s.%u.pid && ", vn_run_rundir(r), st->name, idx);
	if (st->cgroup)
		vn_strbuf_printf(&script, "echo $$ > /sys/fs/cgroup/%s/cgroup.procs && ", st->cgroup);
	vn_strbuf_printf(&script, "exec \"$@\"");
	v[n++] = vn_xstrdup("/bin/sh");
	v[n++] = vn_xstrdup("-c");
	v[n++] = vn_strbuf_steal(&script);
	v[n++] = vn_xstrdup("vnuma-step");
	if (p->policy != VN_PLACE_NONE) {
		struct vn_strbuf b = VN_STRBUF_INIT;
		v[n++] = vn_xstrdup("numactl");
		if (p->policy == VN_PLACE_CPUNODEBIND || p->ncpu_nodes) {
			const unsigned *cn = p->policy == VN_PLACE_CPUNODEBIND ? p->nodes : p->cpu_nodes;
			unsigned ncn = p->policy == VN_PLACE_CPUNODEBIND ? p->nnodes : p->ncpu_nodes;
			bool memless = false;
			for (unsigned i = 0; i < ncn; i++)
				memless |= !vn_node_has_memory(&r->t->nodes[cn[i]]);
			if (memless) {
				/*
				 * libnuma checks --cpunodebind's nodes against Mems_allowed, which
				 * leaves out a node booted without memory: name its CPUs instead
				 * (those present at boot; hot-plugged ones may still be absent).
				 */
				struct vn_cpuset cpus = {0};
				for (unsigned i = 0; i < ncn; i++) {
					struct vn_cpuset bc = vn_node_boot_cpus(&r->t->nodes[cn[i]]);
					for (unsigned w = 0; w < VN_CPUSET_MAX / 64; w++)
						cpus.bits[w] |= bc.bits[w];
				}
				_cleanup_free_ char *list = vn_cpulist_format(&cpus);
				vn_strbuf_printf(&b, "--physcpubind=%s", list);
			} else {
				vn_strbuf_printf(&b, "--cpunodebind=");
				nodelist(&b, cn, ncn);
			}
			v[n++] = vn_strbuf_steal(&b);
		}
		static const char *const flag[] = {[VN_PLACE_MEMBIND] = "--membind=",
						   [VN_PLACE_PREFERRED] = "--preferred=",
						   [VN_PLACE_INTERLEAVE] = "--interleave="};
		if (p->policy != VN_PLACE_CPUNODEBIND) {
			vn_strbuf_printf(&b, "%s", flag[p->policy]);
			nodelist(&b, p->nodes, p->nnodes);
			v[n++] = vn_strbuf_steal(&b);
		}
		v[n++] = vn_xstrdup("--");
	}
	if (strcmp(st->workload, "cmd") != 0 && !st->suite) {
		v[n++] = vn_xasprintf("%s/vnuma-wl-%s", vn_run_libdir(r), st->workload);
		if (st->size)
			v[n++] = vn_xasprintf("--size=%lluM", (unsigned long long)(st->size >> 20));
		if (st->duration_s > 0)
			v[n++] = vn_xasprintf("--duration=%g", st->duration_s);
		if (st->threads)
			v[n++] = vn_xasprintf("--threads=%u", st->threads);
	}
	for (char **a = st->argv; a && *a; a++)
		v[n++] = vn_xstrdup(*a);
	return v;
}

static int start_step(struct run *r, unsigned si, struct vn_error *err)
{
	const struct vn_scn_step *st = &r->s->steps[si];

	if (r->progress)
		r->progress(r->progress_data, "step", st->name);
	for (unsigned i = 0; i < st->processes; i++) {
		_cleanup_strv_ char **argv = vn_run_step_argv(r, st, i);
		char name[PATH_MAX];
		struct exec *e;
		int rc = vn_run_exec_start(r, EX_WORKLOAD, (const char *const *)argv, &e, err);
		if (rc < 0)
			return rc;
		e->step = si;
		e->index = i;
		/* ".r0": the name docs/ci.md gives, from when one run could repeat its steps. */
		snprintf(name, sizeof(name), "steps/%s.r0.p%u.out", st->name, i);
		if ((rc = vn_run_open_out(r->dir, name, &e->out, err)) < 0)
			return rc;
		snprintf(name, sizeof(name), "steps/%s.r0.p%u.err", st->name, i);
		if ((rc = vn_run_open_out(r->dir, name, &e->errf, err)) < 0)
			return rc;
	}
	return 0;
}

/*
 * The timed action: sched_setaffinity (taskset -a) of the first processes
 * to a node's CPUs, at_s after the step's start by the guest's clock. The
 * guest sleeps, not the host: in virtual time the guest's second is not the
 * host's (a busy start can take ten host seconds a guest second), and a
 * move timed by the host would land elsewhere in what the guest did.
 */
static int start_move(struct run *r, unsigned si, const struct vn_scn_action *act, struct vn_error *err)
{
	const struct vn_scn_step *st = &r->s->steps[si];
	unsigned count = (unsigned)ceil(act->fraction * st->processes);
	_cleanup_free_ char *cpus = vn_cpulist_format(&r->t->nodes[act->to_node].cpus);
	struct vn_strbuf b = VN_STRBUF_INIT;
	struct exec *e;
	int rc;

	vn_strbuf_printf(&b,
			 "sleep %.3f; for i in $(seq 0 %u); do p=$(cat %s/%s.$i.pid 2>/dev/null) || continue; "
			 "taskset -a -p -c %s $p >/dev/null && echo pid $p; done; cat /proc/uptime",
			 act->at_s, count - 1, vn_run_rundir(r), st->name, cpus);
	const char *argv[] = {"/bin/sh", "-c", b.s, NULL};
	rc = vn_run_exec_start(r, EX_ACTION, argv, &e, err);
	vn_strbuf_free(&b);
	if (rc < 0)
		return rc;
	if (r->d->nmoves == r->d->moves_cap)
		r->d->moves =
			vn_xreallocarray(r->d->moves, r->d->moves_cap = r->d->moves_cap ? 2 * r->d->moves_cap : 16,
					 sizeof(*r->d->moves));
	e->move = r->d->nmoves;
	struct vn_run_move *mv = &r->d->moves[r->d->nmoves++];
	memset(mv, 0, sizeof(*mv));
	mv->step = si;
	mv->to_node = act->to_node;
	return 0;
}

static int sh_over_run(void *data, const char *script, char **out, struct vn_error *err)
{
	return vn_run_guest_sh(data, script, out, err);
}

/*
 * A hotplug step or timed action: libvirt's half in a child process, the
 * guest's over the run's own connection (which keeps the sampler's and the
 * workloads' events flowing meanwhile). Recorded for the fallback assertion.
 */
static int do_hotplug(struct run *r, unsigned si, const struct vn_scn_hotplug *h, struct vn_error *err)
{
	struct vn_hotplug_req q = {
		.name = r->guest,
		.node = h->node,
		.memory = h->memory,
		.cpus = h->cpus,
		.remove = h->remove,
		.online = h->online_kernel ? VN_ONLINE_KERNEL : VN_ONLINE_MOVABLE,
		.timeout_ms = VN_HOTPLUG_TIMEOUT_MS,
		.locality = r->locality,
	};
	struct vn_hotplug_result res;
	char what[64], sz[32];

	if (h->memory)
		snprintf(what, sizeof(what), "%s%s node %u", h->remove ? "-" : "+",
			 vn_size_format(h->memory, sz, sizeof(sz)), h->node);
	else
		snprintf(what, sizeof(what), "+%u vCPU%s node %u", h->cpus, h->cpus == 1 ? "" : "s", h->node);
	if (r->progress)
		r->progress(r->progress_data, "hotplug", what);
	const struct vn_run_backend *be = r->be ? r->be : &vn_run_backend_testbed;
	int rc = be->hotplug ? be->hotplug(be->data, r->ctx, &q, sh_over_run, r, &res, err)
			     : vn_infra_error(err, -EOPNOTSUPP, "this run's guest cannot be hot-plugged");
	if (rc < 0)
		return vn_error_prefix(err, "step %s: hotplug %s", r->s->steps[si].name, what);
	if (r->d->nhotplugs == r->d->hotplugs_cap)
		r->d->hotplugs = vn_xreallocarray(r->d->hotplugs,
						  r->d->hotplugs_cap = r->d->hotplugs_cap ? 2 * r->d->hotplugs_cap : 8,
						  sizeof(*r->d->hotplugs));
	r->d->hotplugs[r->d->nhotplugs++] = (struct vn_run_hotplug){
		.step = si,
		.what = *h,
		.t_s = vn_now_s() - r->t0,
		.rebuilds = res.rebuilds,
		.seen = res.seen,
		.node_memtotal = res.node_memtotal,
	};
	vn_probes_hotplug(&r->probes, r, &q, &res);
	return 0;
}

/* Fill a move's pids and time from its action's output once it finished. */
static int finish_moves(struct run *r, struct vn_error *err)
{
	for (unsigned i = 0; i < r->nex; i++) {
		struct exec *e = r->ex[i];
		if (e->kind != EX_ACTION || !e->done || !e->buf.s)
			continue;
		struct vn_run_move *mv = &r->d->moves[e->move];
		struct vn_guest_move_line ml;
		char *save = NULL;
		mv->npids = 0;
		for (char *line = strtok_r(e->buf.s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			if (vn_guest_move_line_parse(r->guest, line, &ml, err) < 0)
				return vn_error_prefix(err, "step %s's move", r->s->steps[mv->step].name);
			if (!ml.is_pid)
				mv->uptime = ml.uptime;
			else if (mv->npids < VN_ARRAY_SIZE(mv->pids))
				mv->pids[mv->npids++] = ml.pid;
		}
		vn_strbuf_free(&e->buf);
	}
	return 0;
}

struct pending {
	unsigned step;
	const struct vn_scn_action *act;
	double due;
	bool fired;
};

static bool step_running(const struct run *r, unsigned si)
{
	for (unsigned i = 0; i < r->nex; i++)
		if (r->ex[i]->kind == EX_WORKLOAD && r->ex[i]->step == si && !r->ex[i]->done)
			return true;
	return false;
}

static bool any_running(const struct run *r, enum exec_kind kind)
{
	for (unsigned i = 0; i < r->nex; i++)
		if (r->ex[i]->kind == kind && !r->ex[i]->done)
			return true;
	return false;
}

static int fire_due(struct run *r, struct pending *p, size_t np, struct vn_error *err)
{
	for (size_t i = 0; i < np; i++) {
		if (p[i].fired || vn_now_s() < p[i].due || r->stop)
			continue;
		p[i].fired = true;
		int rc = do_hotplug(r, p[i].step, &p[i].act->hotplug, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int vn_run_steps(struct run *r, struct vn_error *err)
{
	_cleanup_free_ struct pending *pend = NULL;
	size_t np = 0, cap = 0;
	int rc;

	for (unsigned si = 0; si < r->s->nsteps && !r->stop; si++) {
		const struct vn_scn_step *st = &r->s->steps[si];
		double start = vn_now_s();

		if (st->is_hotplug) {
			if ((rc = do_hotplug(r, si, &st->hotplug, err)) < 0)
				return rc;
			continue;
		}
		if (st->suite) {
			if ((rc = vn_run_suite_step(r, si, err)) < 0)
				return rc;
			continue;
		}
		/* A step alone in the guest (no background step still running) gets its own locality figures. */
		bool alone = !st->background && !any_running(r, EX_WORKLOAD);
		if (alone)
			vn_probes_step(&r->probes, r, si, false);
		if ((rc = start_step(r, si, err)) < 0)
			return rc;
		for (unsigned k = 0; k < st->nactions; k++) {
			/* A move waits in the guest; a hotplug is libvirt's, timed here (docs/scenarios.md). */
			if (!st->actions[k].is_hotplug) {
				if ((rc = start_move(r, si, &st->actions[k], err)) < 0)
					return rc;
				continue;
			}
			if (np == cap)
				pend = vn_xreallocarray(pend, cap = cap ? 2 * cap : 16, sizeof(*pend));
			pend[np++] = (struct pending){
				.step = si, .act = &st->actions[k], .due = start + st->actions[k].at_s};
		}
		while (!st->background && step_running(r, si) && !r->stop) {
			if ((rc = fire_due(r, pend, np, err)) < 0 || (rc = vn_run_pump(r, 100, err)) < 0)
				return rc;
		}
		if (alone && !r->stop)
			vn_probes_step(&r->probes, r, si, true);
	}
	/* Background steps, and actions still due while they run. */
	while (any_running(r, EX_WORKLOAD) && !r->stop)
		if ((rc = fire_due(r, pend, np, err)) < 0 || (rc = vn_run_pump(r, 100, err)) < 0)
			return rc;
	/* A move still waiting for its time has no process left to move. */
	for (unsigned i = 0; i < r->nex; i++)
		if (r->ex[i]->kind == EX_ACTION && !r->ex[i]->done)
			vn_run_signal(r, r->ex[i], SIGKILL);
	/* Killed processes still send their final message. */
	double until = vn_now_s() + 10;
	while ((any_running(r, EX_WORKLOAD) || any_running(r, EX_ACTION)) && vn_now_s() < until)
		if ((rc = vn_run_pump(r, 100, err)) < 0)
			return rc;
	return finish_moves(r, err);
}

/*
 * One sysctl, written with the agent's write op: the value goes to the file
 * as bytes, never through a shell, so a quote or "$(...)" in it is just a
 * value the kernel accepts or refuses. Since 5.13 the
 * kernel.numa_balancing_scan_* knobs live in debugfs
 * (sched/numa_balancing/scan_*); the sysctl names work for both.
 */
static int set_sysctl(struct run *r, const struct vn_scn_sysctl *sc, struct vn_error *err)
{
	_cleanup_free_ char *key = vn_xstrdup(sc->key), *path = NULL, *value = NULL;
	const char *moved = strncmp(sc->key, "kernel.numa_balancing_", 22) == 0 ? sc->key + 22 : NULL;
	struct vn_error e = {0};
	int rc;

	for (char *p = key; *p; p++)
		if (*p == '.')
			*p = '/';
	path = vn_xasprintf("/proc/sys/%s", key);
	value = vn_xasprintf("%s\n", sc->value);
	rc = vn_agent_write_file(r->a, path, value, strlen(value), -1, 0, VN_AGENT_REPLY_MS, &e);
	if (rc == -ENOENT && moved) {
		vn_error_clear(&e);
		free(path);
		path = vn_xasprintf("/sys/kernel/debug/sched/numa_balancing/%s", moved);
		rc = vn_agent_write_file(r->a, path, value, strlen(value), -1, 0, VN_AGENT_REPLY_MS, &e);
	}
	if (rc < 0) {
		rc = vn_infra_error(err, rc, "cannot set sysctl %s to \"%s\" (%s)", sc->key, sc->value, e.msg);
		vn_error_clear(&e);
	}
	return rc;
}

/*
 * demotion_enabled is a sysfs file (mm/memory-tiers.c since 6.1, mm/migrate.c
 * in 5.15-6.0), not a sysctl; a kernel without it (before 5.15, or built
 * without CONFIG_NUMA/MIGRATION) cannot run the scenario as written.
 */
static int set_demotion(struct run *r, struct vn_error *err)
{
	static const char path[] = "/sys/kernel/mm/numa/demotion_enabled";
	const char *value = r->s->demotion_enabled > 0 ? "true\n" : "false\n";
	struct vn_error e = {0};
	int rc;

	if (!r->s->demotion_enabled)
		return 0;
	rc = vn_agent_write_file(r->a, path, value, strlen(value), -1, 0, VN_AGENT_REPLY_MS, &e);
	if (rc < 0) {
		rc = vn_infra_error(err, rc, "cannot set %s to %.*s (%s)%s", path, (int)strlen(value) - 1, value, e.msg,
				    rc == -ENOENT ? ": the kernel has no demotion (5.15 or later with CONFIG_MIGRATION)"
						  : "");
		vn_error_clear(&e);
	}
	return rc;
}

/* Sysctls (agent writes), then THP, hugetlb pages per node, cgroups: one guest script, checked. */
int vn_run_prepare(struct run *r, struct vn_error *err)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	int rc;

	for (unsigned i = 0; i < r->s->nsysctls; i++)
		if ((rc = set_sysctl(r, &r->s->sysctls[i], err)) < 0)
			return vn_error_prefix(err, "preparing the guest");
	if ((rc = set_demotion(r, err)) < 0)
		return vn_error_prefix(err, "preparing the guest");
	vn_strbuf_printf(&b, "set -e; mkdir -p %s; ", vn_run_rundir(r));
	if (r->s->thp)
		vn_strbuf_printf(&b, "echo %s > /sys/kernel/mm/transparent_hugepage/enabled; ", r->s->thp);
	for (unsigned i = 0; i < r->s->nhugetlb; i++) {
		const struct vn_scn_hugetlb *h = &r->s->hugetlb[i];
		vn_strbuf_printf(
			&b,
			"f=/sys/devices/system/node/node%u/hugepages/hugepages-2048kB/nr_hugepages; echo %u > $f; "
			"[ $(cat $f) -ge %u ] || { echo \"node %u: only $(cat $f) of %u huge pages\" >&2; exit 1; }; ",
			h->node, h->pages, h->pages, h->node, h->pages);
	}
	for (char **c = r->s->cgroups; c && *c; c++)
		vn_strbuf_printf(&b, "mkdir -p /sys/fs/cgroup/%s; ", *c);
	vn_strbuf_printf(&b, "true");
	rc = vn_run_guest_sh(r, b.s, NULL, err);
	vn_strbuf_free(&b);
	return rc < 0 ? vn_error_prefix(err, "preparing the guest") : 0;
}

/* pids per step (from the wrappers' pidfiles) and each process's result line. */
int vn_run_gather(struct run *r, struct vn_error *err)
{
	_cleanup_free_ char *pids = NULL;
	int rc;

	/* Without the pids no sample can be told to be the steps': that is a run we cannot judge. */
	_cleanup_free_ char *list = vn_xasprintf(
		"cd %s && for f in *.pid; do [ -f \"$f\" ] && echo \"$f $(cat $f)\"; done; true", vn_run_rundir(r));
	if ((rc = vn_run_guest_sh(r, list, &pids, err)) < 0)
		return vn_error_prefix(err, "the steps' pids");
	char *save = NULL;
	for (char *line = pids ? strtok_r(pids, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		struct vn_guest_pidfile_line pl;
		if ((rc = vn_guest_pidfile_line_parse(r->guest, line, &pl, err)) < 0)
			return vn_error_prefix(err, "the steps' pids");
		for (unsigned si = 0; si < r->s->nsteps; si++) {
			struct vn_run_step_data *sd = &r->d->steps[si];
			if (strcmp(r->s->steps[si].name, pl.step) == 0 && sd->npids < VN_ARRAY_SIZE(sd->pids))
				sd->pids[sd->npids++] = pl.pid;
		}
	}
	for (unsigned i = 0; i < r->nex; i++) {
		struct exec *x = r->ex[i];
		if (x->kind != EX_WORKLOAD)
			continue;
		struct vn_run_step_data *sd = &r->d->steps[x->step];
		if (!x->buf.s) {
			if (!sd->nmissing++)
				sd->missing_first = x->index;
			continue;
		}
		/* The last line that parses is the result: workloads print exactly one. */
		json_object *res = NULL;
		for (char *line = strtok_r(x->buf.s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			json_object *j = json_tokener_parse(line);
			if (j) {
				json_object_put(res);
				res = j;
			}
		}
		if (res) {
			if (sd->nresults == sd->results_cap)
				sd->results = vn_xreallocarray(
					sd->results, sd->results_cap = sd->results_cap ? 2 * sd->results_cap : 8,
					sizeof(*sd->results));
			sd->results[sd->nresults++] = res;
		} else if (!sd->nmissing++) {
			sd->missing_first = x->index;
		}
	}
	return 0;
}
