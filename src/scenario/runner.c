/*
 * The scenario runner: the phases of a run, from the boot to the result.
 * Its guest commands go through runner-exec.c, its steps through
 * runner-steps.c, and what watches it (the tracer, locality counting) is
 * its probe list (probe.h).
 */
#include "report/html.h"
#include "report/tiermove.h"
#include "scenario/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "metrics/kv.h"
#include "scenario/run-priv.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/interrupt.h"
#include "util/json.h"
#include "util/strbuf.h"

#include "scenario/runner-priv.h"
#include "testbed/agent-session.h"
#include "testbed/collect.h"
#include "testbed/down.h"
#include "testbed/image.h"
#include "testbed/locality.h"
#include "testbed/testbed.h"
#include "topology/node-memory.h"
#include "testbed/up.h"
#include "topology/tiers.h"
#include "util/alloc.h"
#include "util/state.h"

/* One complete sampler line gets the host's clock too, then goes to samples.jsonl. */
static void sample_line(struct run *r, struct exec *e, const char *line, size_t n)
{
	/* Not a JSON object, or one with a NUL inside that the parsers would cut short: not a sample. */
	if (!n || line[0] != '{' || memchr(line, '\0', n))
		return;
	_cleanup_strbuf_ struct vn_strbuf hb = VN_STRBUF_INIT;
	vn_strbuf_printf(&hb, "{\"host_t\":%.3f,", vn_now_s() - r->t0);
	vn_probes_sample(&r->probes, r, &hb);
	const char *head = hb.s;
	size_t hn = hb.len;
	if (r->samples.len + hn + n > VN_SAMPLES_MAX) {
		r->samples_cut = true;
		return;
	}
	fwrite(head, 1, hn, e->out);
	fwrite(line + 1, 1, n - 1, e->out);
	fputc('\n', e->out);
	/* A full or failing results disk ends the run as an infrastructure failure. */
	if ((fflush(e->out) != 0 || ferror(e->out)) && !r->stop) {
		r->stop = true;
		r->stop_reason = vn_xasprintf("cannot write %s/samples.jsonl: %s", r->dir, strerror(errno));
	}
	vn_strbuf_append(&r->samples, head, hn);
	vn_strbuf_append(&r->samples, line + 1, n - 1);
	vn_strbuf_append(&r->samples, "\n", 1);
}

/* Sampler output: whole lines, each scanned once; a line over SAMPLE_LINE_MAX is dropped. */
static void sampler_data(struct run *r, struct exec *e, void *unused, const char *data, size_t len)
{
	(void)unused;
	while (len) {
		const char *nl = memchr(data, '\n', len);
		size_t n = nl ? (size_t)(nl - data) : len;

		if (!e->skip_line && e->buf.len + n <= SAMPLE_LINE_MAX)
			vn_strbuf_append(&e->buf, data, n);
		else
			e->skip_line = r->samples_cut = true;
		data += n + (nl != NULL);
		len -= n + (nl != NULL);
		if (!nl)
			break;
		if (!e->skip_line)
			sample_line(r, e, e->buf.s ? e->buf.s : "", e->buf.len);
		e->skip_line = false;
		e->buf.len = 0;
	}
}

static int copy_file(const char *from, const char *dir, const char *name, struct vn_error *err)
{
	_cleanup_free_ char *path = vn_run_path(dir, name);

	return vn_file_copy_atomic(from, path, err);
}

/*
 * With --node-memory, the topology as the guest boots it (up makes the same
 * copy from the same text): the result's node sizes and the results' copy of
 * topology.xml say what ran, not what the file says. *text stays NULL without.
 */
static int run_topology(const struct vn_run_opts *o, const char *topo_path, struct vn_topology **t, char **text,
			struct vn_error *err)
{
	_cleanup_topology_ struct vn_topology *file = NULL, *scaled = NULL;
	_cleanup_free_ char *file_text = NULL;
	size_t file_len, len;
	int rc;

	if (!o->node_memory)
		return 0;
	if ((rc = vn_topology_load_text(topo_path, &file, &file_text, &file_len, err)) < 0 ||
	    (rc = vn_topology_node_memory(file_text, file_len, topo_path, o->node_memory, text, &len, &scaled, err)) <
		    0)
		return rc;
	vn_topology_free(*t);
	*t = scaled;
	scaled = NULL;
	return 0;
}

static int write_file(const char *dir, const char *name, const char *text, struct vn_error *err)
{
	_cleanup_free_ char *path = vn_run_path(dir, name);

	return vn_file_write_text(path, text, err);
}

static char *utc_stamp(bool compact)
{
	char buf[64];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, sizeof(buf), compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &tm);
	return vn_xstrdup(buf);
}

static void free_data(struct vn_run_data *d, unsigned nsteps)
{
	vn_snapshot_clear(&d->before);
	vn_snapshot_clear(&d->after);
	vn_loc_counts_clear(&d->loc);
	for (unsigned i = 0; d->loc_steps && i < nsteps; i++)
		vn_loc_counts_clear(&d->loc_steps[i]);
	free(d->loc_steps);
	free(d->loc_lat_ns);
	free(d->loc_proof);
	vn_samples_free(&d->samples);
	for (unsigned i = 0; d->steps && i < nsteps; i++) {
		for (unsigned k = 0; k < d->steps[i].nresults; k++)
			json_object_put(d->steps[i].results[k]);
		free(d->steps[i].results);
	}
	free(d->steps);
	free(d->moves);
	free(d->hotplugs);
}

static void sampling_cost(struct vn_result_run *rep, const struct vn_samples *s)
{
	double mean, max;

	vn_samples_cost(s, &mean, &max);
	if (s->n)
		rep->sampling_cost = vn_xasprintf("%.2f ms CPU per sample on average, %.2f ms at most (%u samples)",
						  1000 * mean, 1000 * max, s->n);
}

/* The results directory: fresh (or --force), and a result saying "incomplete" in it before anything else. */
/* result.json's memory_tiers: each node's tier by model m (a topology with slow memory only). */
static void record_tiers(struct vn_result_run *rep, const struct vn_topology *t, enum vn_tier_model m)
{
	if (!vn_topology_has_slow_memory(t))
		return;
	_cleanup_free_ struct vn_tiers *tr = vn_xcalloc(1, sizeof(*tr));
	vn_tiers_compute(t, m, tr);
	free(rep->memory_tiers.v);
	rep->memory_tiers = (struct vn_result_nodes){t->nnodes, vn_xcalloc(t->nnodes, sizeof(unsigned))};
	for (unsigned i = 0; i < t->nnodes; i++)
		rep->memory_tiers.v[i] = tr->tier_of[i] < 0 ? 0 : (unsigned)tr->tier[tr->tier_of[i]].id;
}

static int results_start(const struct vn_testbed_ctx *ctx, struct vn_scenario *s, const struct vn_run_opts *o,
			 const struct vn_topology *t, struct vn_result_run *rep, char **dirp, struct vn_error *err)
{
	_cleanup_free_ char *dir = NULL;
	int rc;

	dir = o->outdir ? vn_xstrdup(o->outdir) : vn_run_default_dir(s->name);
	if ((rc = vn_run_dir_refuse(dir, o->force, ": its files would mix with this run's", err)) < 0)
		return rc;
	_cleanup_free_ char *steps_dir = vn_run_path(dir, "steps");
	if ((rc = vn_dir_create(steps_dir, err)) < 0)
		return vn_error_prefix(err, "results directory");
	rep->scenario = vn_xstrdup(s->name);
	rep->description = vn_xstrdup_or_null(s->description);
	rep->started_utc = utc_stamp(false);
	rep->topology = vn_xstrdup(t->name);
	rep->node_memory_mib =
		(struct vn_result_nodes){t->nnodes, vn_xcalloc(t->nnodes ? t->nnodes : 1, sizeof(unsigned))};
	for (unsigned i = 0; i < t->nnodes; i++)
		rep->node_memory_mib.v[i] = (unsigned)(t->nodes[i].memory >> 20);
	record_tiers(rep, t, VN_TIER_MODEL_DEFAULT);
	rep->variant = vn_xstrdup(o->variant ? o->variant : "default");
	rep->repeat = o->repeat ? o->repeat : 1;
	const char *uri = ctx->uri ? ctx->uri : getenv("VNUMA_URI");
	_cleanup_free_ char *embed = vn_state_embed_root(ctx->state_dir);
	rep->host = uri && *uri && strcmp(uri, "qemu:///embed") != 0 ? vn_xstrdup(uri)
								     : vn_xasprintf("qemu:///embed?root=%s", embed);
	for (unsigned i = 0; i < s->nsysctls; i++)
		vn_result_add_sysctl(rep, s->sysctls[i].key, s->sysctls[i].value);
	/*
	 * First of all, a result that says "incomplete": whatever kills this
	 * process from here on (SIGKILL, a crash, power) leaves that, never a
	 * previous run's result, and never one that looks finished.
	 */
	rep->error = vn_xstrdup("the run did not finish (vnuma was killed or crashed, or it is still running)");
	if ((rc = vn_report_write(rep, dir, err)) < 0)
		return rc;
	free(steal_pointer(&rep->error));
	*dirp = steal_pointer(&dir);
	return 0;
}

char *vn_run_default_dir(const char *scenario)
{
	_cleanup_free_ char *stamp = utc_stamp(true);

	return vn_xasprintf("results/%s-%s", scenario, stamp);
}

int vn_run_dir_refuse(const char *dir, bool force, const char *reason, struct vn_error *err)
{
	int rc = vn_dir_nonempty(dir);

	if (rc == 0 || force)
		return 0;
	if (rc < 0)
		return vn_infra_error(err, rc, "results directory %s: %s", dir, strerror(-rc));
	return vn_input_error(err, "results directory %s is not empty%s; use another -o or --force", dir,
			      reason ? reason : "");
}

/* What the booted guest is, for the result. */
static void record_boot(struct vn_result_run *rep, const struct vn_up_result *up)
{
	rep->accel = vn_xstrdup(vn_up_result_accel_name(up));
	rep->accel_reason = vn_xstrdup_or_null(up->accel_reason);
	rep->icount = vn_xstrdup_or_null(up->icount);
	rep->icount_lead_s = up->icount_lead_s;
	rep->vcpus = up->vcpus;
	rep->host_cpus = up->host_cpus;
	rep->arch = vn_xstrdup_or_null(up->arch);
	rep->guest = vn_xstrdup(up->name);
	rep->kernel_release = vn_xstrdup(up->kernel_release);
	rep->kernel_version = vn_xstrdup_or_null(up->kernel_version);
	rep->kernel_recipe = vn_xstrdup_or_null(up->kernel_recipe);
	rep->kernel_config_sha256 = vn_xstrdup_or_null(up->kernel_config_sha256);
	rep->kernel_patches = up->kernel_patches ? vn_strv_copy(up->kernel_patches) : NULL;
	rep->fidelity = vn_xstrdup(up->fidelity_report);
	rep->boot_s = up->boot_s;
	rep->boot = vn_xstrdup(up->restored ? "restored" : "cold");
	rep->snapshot = vn_xstrdup_or_null(up->snapshot);
	for (unsigned i = 0; i < up->artifacts.n; i++)
		vn_result_add_artifact(rep, up->artifacts.v[i].volume, up->artifacts.v[i].how == VN_ARTIFACT_UPLOADED);
}

/*
 * The sampler runs from before the first step until the last has ended:
 * stopped, it takes one last sample (src/agent/sampler.c), so the samples
 * reach past the last step without waiting out an interval. Then each
 * step's data.
 */
static int sample_steps(struct run *r, struct vn_error *err)
{
	const struct vn_scenario *s = r->s;
	char interval[32];
	struct exec *sampler;
	int rc;

	snprintf(interval, sizeof(interval), "%g", s->sample_interval_s);
	_cleanup_free_ char *path = vn_xasprintf("%s/vnuma-sample", vn_run_libdir(r));
	const char *sampler_argv[] = {path, "--interval", interval, NULL};
	if ((rc = vn_probes_window(&r->probes, r, err)) < 0 ||
	    (rc = vn_run_exec_start(r, EX_SAMPLER, sampler_argv, &sampler, err)) < 0)
		return rc;
	sampler->on_out = sampler_data;
	if ((rc = vn_run_open_out(r->dir, "samples.jsonl", &sampler->out, err)) < 0 || (rc = vn_run_steps(r, err)) < 0)
		return rc;
	/* A sampler that ended before it was told to sampled only part of the run. */
	bool died = sampler->done;
	vn_run_signal(r, sampler, SIGTERM);
	for (double until = vn_now_s() + 5; !sampler->done && vn_now_s() < until;)
		if ((rc = vn_run_pump(r, 100, err)) < 0)
			return rc;
	/*
	 * Its exit may reach us only now, after the last step: told to stop, it
	 * exits 0 (143 if the signal beat its handler), so any other end was
	 * its own, before the run's.
	 */
	died |= sampler->done && sampler->status != 0 && sampler->status != 128 + SIGTERM;
	if (died || (sampler->done && sampler->status != 0))
		return vn_infra_error(err, -EIO, "%s: the sampler %s (exit %d)%s%.*s", vn_agent_guest(r->a),
				      died ? "ended before the run did" : "failed", sampler->status,
				      sampler->ebuf.len ? ": " : "",
				      (int)strcspn(sampler->ebuf.s ? sampler->ebuf.s : "", "\n"),
				      sampler->ebuf.s ? sampler->ebuf.s : "");
	if ((rc = vn_probes_end(&r->probes, r, err)) < 0)
		return rc;
	if (r->samples_cut)
		return vn_infra_error(
			err, -EMSGSIZE,
			"%s: samples.jsonl truncated: the sampler sent more than %u MiB, or a line over %u MiB",
			vn_agent_guest(r->a), VN_SAMPLES_MAX >> 20, SAMPLE_LINE_MAX >> 20);
	return vn_run_gather(r, err);
}

static int collect_after(struct run *r, const char *after, struct vn_error *err)
{
	if (r->progress)
		r->progress(r->progress_data, "collecting", "snapshots and results");
	return vn_testbed_collect(r->a, after, &r->d->after, err);
}

/* Infrastructure, not the kernel: a workload that could not run at all, a timeout, Ctrl-C. */
static int check_workloads(const struct run *r, struct vn_error *err)
{
	for (unsigned i = 0; i < r->nex; i++) {
		const struct exec *e = r->ex[i];
		const char *step = r->s->steps[e->step].name;
		if (e->kind == EX_WORKLOAD && !r->stop && e->status != 0)
			return vn_infra_error(err, -EIO, "step %s process %u %s%s%s (see %s/steps/%s.r0.p%u.err)", step,
					      e->index, e->status < 0 ? "could not start" : "exited with an error",
					      e->error ? ": " : "", e->error ? e->error : "", r->dir, step, e->index);
	}
	if (r->stop)
		return vn_infra_error(err, vn_was_interrupted() ? -EINTR : -ETIMEDOUT, "%s", r->stop_reason);
	return 0;
}

int vn_run_judge(struct vn_run_data *d, const char *samples, struct vn_result_run *rep, struct vn_error *err)
{
	struct vn_error pe = {0};
	const char *cmdline;
	int rc;

	if ((rc = vn_snapshot_counters(&d->before.sys[VN_SNAP_VMSTAT], &d->vmstat_before, err)) < 0 ||
	    (rc = vn_snapshot_counters(&d->after.sys[VN_SNAP_VMSTAT], &d->vmstat_after, err)) < 0 ||
	    (rc = vn_snapshot_text(&d->after.sys[VN_SNAP_DMESG], &d->dmesg, err)) < 0 ||
	    (rc = vn_snapshot_text(&d->after.sys[VN_SNAP_CMDLINE], &cmdline, err)) < 0)
		return rc;
	free(rep->kernel_cmdline);
	rep->kernel_cmdline = vn_xstrndup(cmdline, strcspn(cmdline, "\n"));
	for (unsigned i = 0; i < d->t->nnodes; i++) {
		const struct vn_snap_part *p = vn_snapshot_node_part(&d->after, i, VN_SNAP_DISTANCE);
		if (!p)
			return vn_infra_error(err, -ENODATA, "cannot read a snapshot the run took: %s has no node %u",
					      d->after.dir ? d->after.dir : "the after snapshot", i);
		if ((rc = vn_snapshot_text(p, &d->distances[i], err)) < 0)
			return rc;
	}
	if (vn_samples_parse(samples ? samples : "", "samples.jsonl", &d->samples, &pe) < 0) {
		rc = vn_infra_error(err, -EBADMSG, "samples.jsonl: %s", pe.msg);
		vn_error_clear(&pe);
		return rc;
	}
	sampling_cost(rep, &d->samples);
	/* Judged aside: a run one assertion or metric could not observe is incomplete, not judged in part. */
	struct vn_result_run judged = {0};
	if ((rc = vn_scenario_assert(d, &judged, err)) == 0 && (rc = vn_run_metrics(d, &judged, err)) == 0) {
		for (unsigned i = 0; i < judged.nverdicts; i++) {
			const struct vn_verdict *v = &judged.verdicts[i];
			vn_result_add_observed(rep, v->name, v->pass, v->observed, v->expected, v->detail, v->kind,
					       v->value);
		}
		for (unsigned i = 0; i < judged.nmetrics; i++)
			vn_result_metric(rep, judged.metrics[i].name, judged.metrics[i].value);
	}
	vn_result_clear(&judged);
	return rc;
}

bool vn_run_icount_lead(struct vn_result_run *rep, const struct vn_samples *s)
{
	/* A fixed shift (lead 0) has no lead to lose; real time has no shift. */
	if (!rep->icount || rep->icount_lead_s <= 0)
		return false;
	rep->icount_lead_min_s = rep->icount_lead_s + vn_samples_lead_drop(s);
	return rep->icount_lead_min_s <= 0;
}

/* The snapshots and the samples, as the run holds them, judged by every assertion. */
static int judge(struct run *r, struct vn_result_run *rep, struct vn_error *err)
{
	int rc = vn_run_judge(r->d, r->samples.s, rep, err);

	if (rc < 0)
		return rc;
	vn_probes_metrics(&r->probes, r, rep);
	if (vn_run_icount_lead(rep, &r->d->samples) && r->progress)
		r->progress(r->progress_data, "note",
			    "virtual time: the guest's clock fell behind the host's during the run: QEMU may "
			    "have retuned its shift, and rates the guest timed then count fewer instructions "
			    "a second (docs/noise.md)");
	rep->complete = true;
	return 0;
}

/* The snapshot a page draws from: after the run when it was taken, else before it (a run cut short). */
static const struct vn_snapshot *page_snapshot(const struct vn_run_data *d, bool (*has)(const struct vn_snapshot *))
{
	return has(&d->after) ? &d->after : has(&d->before) ? &d->before : NULL;
}

static bool has_distances(const struct vn_snapshot *s)
{
	for (unsigned k = 0; k < s->nnodes; k++)
		if (s->nodes[k].part[VN_SNAP_DISTANCE].text)
			return true;
	return false;
}

static bool has_dmesg(const struct vn_snapshot *s)
{
	return s->sys[VN_SNAP_DMESG].text != NULL;
}

void vn_run_page(const struct vn_run_data *d, struct vn_html_run_in *in)
{
	const struct vn_snapshot *ds = page_snapshot(d, has_distances), *fs = page_snapshot(d, has_dmesg);

	for (unsigned k = 0; ds && k < ds->nnodes && ds->nodes[k].id < VN_MAX_NODES; k++) {
		if (!ds->nodes[k].part[VN_SNAP_DISTANCE].text)
			continue;
		in->dist_ids[in->ndist] = ds->nodes[k].id;
		in->dist_len[in->ndist] = ds->nodes[k].ndistance;
		in->dist_row[in->ndist++] = ds->nodes[k].distance;
	}
	in->dist_from = ds == &d->after ? "after" : ds ? "before" : NULL;
	if (fs) {
		in->fallback = fs->fallback;
		in->fallback_why = fs->fallback_why;
		in->fallback_from = fs == &d->after ? "after" : "before";
	}
}

/* report.html from what the run holds, the same page `vnuma report DIR` draws from the files. */
static int write_page(const struct run *r, const struct vn_result_run *rep, bool sampled, struct vn_error *err)
{
	_cleanup_free_ char *why = NULL;
	struct vn_html_run_in in = {.dir = r->dir, .result = rep, .samples = r->samples.s ? r->samples.s : ""};

	if (!sampled) {
		in.samples = NULL;
		in.samples_why = why = vn_xasprintf("%s/samples.jsonl: cannot open: %s", r->dir, strerror(ENOENT));
	}
	vn_run_page(r->d, &in);
	vn_probes_page(&r->probes, r, &in);
	/* tiermove's results from steps/, as `vnuma report DIR` reads them. */
	struct vn_tiermove *tm = vn_xcalloc(VN_TM_FILES_MAX, sizeof(*tm));
	in.tiermove = tm;
	in.ntiermove = vn_tiermove_load_dir(r->dir, tm, VN_TM_FILES_MAX);
	int rc = vn_report_html_write_run(&in, err);
	for (unsigned i = 0; i < in.ntiermove; i++)
		vn_tiermove_clear(&tm[i]);
	free(tm);
	return rc;
}

/* Every way out: close what the run opened, keep the console, destroy the guest, write the final result. */
static int finish_run(const struct vn_testbed_ctx *ctx, const struct vn_run_opts *o, struct run *r,
		      const struct vn_up_result *up, struct vn_result_run *rep, int rc, struct vn_error *err)
{
	bool sampled = false; /* samples.jsonl was opened */
	for (unsigned i = 0; i < r->nex; i++)
		sampled |= r->ex[i]->kind == EX_SAMPLER && r->ex[i]->out;
	vn_run_exec_clear(r);
	/* A guest that died under the run failed like a boot does: its logs are kept under STATE/failed. */
	bool died = r->a && vn_agent_watch_fired(r->a);
	if (r->a)
		vn_agent_close(r->a);
	if (up->name) {
		struct vn_error ce = {0};
		copy_file(up->console_log, r->dir, "console.log", &ce);
		vn_error_clear(&ce);
		/* A disk guest that failed keeps its logs: its overlay outlives the guest just long enough. */
		_cleanup_free_ char *aside = vn_run_path(r->dir, ".root.qcow2");
		bool held = rc < 0 && !o->keep && !vn_was_interrupted() && up->guest_dir &&
			    r->be->postmortem_hold(r->be->data, up->guest_dir, aside, &ce) > 0;
		vn_error_clear(&ce);
		if (!vn_was_interrupted())
			vn_run_keep_dump(r, o->dump_on, died, rc == 0 ? vn_result_failures(rep) : 0);
		if (!o->keep) {
			/* Ctrl-C ends waits, but not this one: the guest must go even when interrupted. */
			sig_atomic_t sig = vn_interrupted;
			vn_interrupted = 0;
			r->be->down(r->be->data, ctx, up->name, died, err);
			vn_interrupted = sig;
		}
		if (held) {
			_cleanup_free_ char *pm = vn_run_path(r->dir, "postmortem");
			if (r->progress)
				r->progress(r->progress_data, "collecting",
					    "post-mortem: /var/log and /root from the disk");
			if (r->be->postmortem(r->be->data, ctx, aside, pm, &ce) < 0 && !err->detail)
				vn_error_set_detail(err, ce.msg);
			vn_error_clear(&ce);
		}
	}
	for (const char *p = r->samples.s; p && (p = strchr(p, '\n')); p++)
		rep->samples++;
	struct vn_error we = {0};
	if (vn_report_write(rep, r->dir, &we) < 0) {
		/* A result that cannot be written is a run CI cannot judge; the guest is gone all the same. */
		if (rc == 0)
			rc = vn_infra_error(err, we.code, "%s", we.msg);
		else if (!err->detail)
			vn_error_set_detail(err, we.msg);
	}
	vn_error_clear(&we);
	/* The page is for people; a run whose page cannot be drawn is still judged. */
	if (write_page(r, rep, sampled, &we) < 0 && rc == 0 && !err->detail)
		vn_error_set_detail(err, we.msg);
	vn_error_clear(&we);
	vn_probes_free(&r->probes, r);
	return rc;
}

int vn_scenario_run(const struct vn_testbed_ctx *ctx, const struct vn_scenario *parsed, const struct vn_run_opts *o,
		    struct vn_result_run *rep, char **dirp, struct vn_error *err)
{
	/* The run's own copy: --quick and --locality set over it, the caller's scenario as it was (a bisection reruns it). */
	const struct vn_scn_overrides over = {.quick = o->quick, .locality = o->locality};
	_cleanup_scenario_ struct vn_scenario *s = vn_scenario_override(parsed, &over);
	_cleanup_free_ char *topo_path = NULL, *dir = NULL, *prefix = NULL;
	/* Declared before the first goto: cleanup runs on every way out. */
	_cleanup_free_ char *before = NULL, *after = NULL, *resolved = NULL, *scn_path = NULL;
	_cleanup_topology_ struct vn_topology *t = NULL;
	_cleanup_strv_ char **with = NULL;
	_cleanup_free_ char *scn_dir = NULL, *topo_text = NULL;
	struct vn_up_result up = {0};
	struct vn_run_data d = {.s = s};
	struct run r = {.ctx = ctx,
			.be = o->backend ? o->backend : &vn_run_backend_testbed,
			.s = s,
			.d = &d,
			.progress = o->progress.stage,
			.progress_data = o->progress.data};
	unsigned nsteps = s->nsteps;
	int rc;

	memset(rep, 0, sizeof(*rep));
	if ((rc = vn_scenario_check(s, &topo_path, &t, err)) < 0 ||
	    (rc = run_topology(o, topo_path, &t, &topo_text, err)) < 0 ||
	    (rc = vn_scenario_check_hosts(s, o->locality, ctx->uri, NULL, 0, err)) < 0 ||
	    ((s->locality || o->locality) && (rc = vn_testbed_locality_supported(t, err)) < 0) ||
	    (rc = results_start(ctx, s, o, t, rep, &dir, err)) < 0)
		return rc;
	d.t = r.t = t;
	r.dir = dir;
	*dirp = vn_xstrdup(dir);
	d.steps = vn_xcalloc(s->nsteps ? s->nsteps : 1, sizeof(*d.steps));
	prefix = vn_xasprintf(VN_SCN_GUEST_PREFIX "%s", s->name);
	double t_start = vn_now_s();
	/* The scenario's packages, then the command line's. */
	size_t nw = 0;
	for (char **p = s->with; p && *p; p++)
		vn_strv_push(&with, &nw, *p);
	for (const char *const *p = o->with; p && *p; p++)
		vn_strv_push(&with, &nw, *p);
	resolved = vn_scenario_to_json(s);
	scn_path = vn_run_path(dir, "scenario.json");
	before = vn_run_path(dir, "before");
	after = vn_run_path(dir, "after");
	struct vn_up_opts uo = {
		.topology = topo_path,
		.name_prefix = prefix,
		.kernel = o->kernel ? o->kernel : s->kernel,
		.append = s->append,
		.arch = s->arch,
		.timeout_s = VN_SCN_BOOT_MS / 1000,
		.model = VN_FALLBACK_DEFAULT,
		.progress = o->progress,
		.with = (const char *const *)with,
		.image = s->image,
		.cold = o->cold || s->cold,
		.node_memory = o->node_memory,
		.virtual_time = o->virtual_time || s->virtual_time,
		.locality = s->locality || o->locality,
		.share = (const char *const *)s->share,
		.files = (const char *const *)s->files,
		.files_base = scn_dir = vn_scenario_dir(s),
	};

	/* From here on every way out rewrites the result with the reason. */
	if ((rc = vn_file_write_text(scn_path, resolved, err)) < 0 ||
	    (rc = topo_text ? write_file(dir, "topology.xml", topo_text, err)
			    : copy_file(topo_path, dir, "topology.xml", err)) < 0 ||
	    (rc = r.be->up(r.be->data, ctx, &uo, &up, err)) < 0)
		goto finish;
	record_boot(rep, &up);
	/*
	 * The tier assertions and memory_tiers follow the booted kernel's model.
	 * A release no model covers has no tiers to judge (its fidelity check
	 * said so); 6.1's stands in.
	 */
	struct vn_error no_model = {0};
	if (!up.kernel_release || vn_tier_model_for_release(up.kernel_release, &d.tier_model, &no_model) < 0) {
		vn_error_clear(&no_model);
		d.tier_model = VN_TIER_MODEL_DEFAULT;
	}
	record_tiers(rep, t, d.tier_model);
	r.guest = up.name;
	r.release = up.kernel_release;
	r.guest_dir = up.guest_dir;
	r.locality = uo.locality;
	if ((rc = r.be->agent(r.be->data, ctx, up.name, VN_TESTBED_AGENT_MS, &r.a, err)) < 0)
		goto finish;
	r.t0 = vn_now_s();
	r.deadline = t_start + s->timeout_s;
	if ((rc = vn_run_prepare(&r, err)) < 0 || (rc = vn_probes_start(&r.probes, o->probes, &r, err)) < 0 ||
	    (rc = vn_testbed_collect(r.a, before, &d.before, err)) < 0 || (rc = sample_steps(&r, err)) < 0 ||
	    (rc = collect_after(&r, after, err)) < 0 || (rc = check_workloads(&r, err)) < 0 ||
	    (rc = vn_run_suite_check(&r, err)) < 0 || (rc = judge(&r, rep, err)) < 0)
		goto finish;
finish:
	if (rc < 0) {
		rep->complete = false;
		rep->error = vn_xstrdup(err->msg);
	}
	rep->duration_s = vn_now_s() - t_start;
	vn_run_suite_report(&r, rep);
	rc = finish_run(ctx, o, &r, &up, rep, rc, err);
	vn_strbuf_free(&r.samples);
	free(r.stop_reason);
	vn_up_result_clear(&up);
	free_data(&d, nsteps);
	return rc;
}
