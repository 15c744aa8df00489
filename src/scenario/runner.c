/*
 * The scenario runner. One agent connection carries everything at once: the
 * in-guest sampler's stream, every workload process, and the timed actions,
 * each an exec request told apart by its id. Nothing waits on a round trip
 * per sample.
 */
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
#include "util/file.h"
#include "util/interrupt.h"
#include "util/strbuf.h"

#define RUN_DIR "/tmp/vnuma-run"
#define MAX_EXECS 300
/*
 * Nothing the guest sends is kept without a bound. A workload's stdout is
 * kept (its tail) for its result line; each step output file, the sampler's
 * lines and the outputs of our own helper commands are capped.
 */
#define KEEP_TAIL_MAX (1u << 20)
#define STEP_FILE_MAX (64u << 20)
#define AUX_OUT_MAX (1u << 20)
#define SAMPLE_LINE_MAX (4u << 20)
#define SAMPLES_MAX (256u << 20)

enum exec_kind { EX_SAMPLER, EX_WORKLOAD, EX_ACTION, EX_AUX };

struct exec {
	int64_t id;
	enum exec_kind kind;
	unsigned step, index; /* workload: which step, which process */
	unsigned move;        /* action: index into d->moves */
	FILE *out, *errf;
	size_t out_len, err_len; /* bytes written to out, errf */
	bool out_cut, err_cut;   /* a file reached STEP_FILE_MAX */
	struct vn_strbuf buf;  /* stdout kept (sampler: partial line; workload: its tail; action/aux: all) */
	struct vn_strbuf ebuf; /* stderr of actions and aux commands, for error messages */
	bool buf_cut;          /* action/aux output reached AUX_OUT_MAX */
	bool skip_line;        /* sampler: dropping a line longer than SAMPLE_LINE_MAX */
	bool done;
	int status; /* exit code, 128+signal, or -1 when it could not start */
	char *error;
};

struct run {
	struct vn_agent *a;
	const char *dir;
	struct vn_scenario *s;
	const struct vn_topology *t;
	struct vn_run_data *d;
	struct exec ex[MAX_EXECS];
	unsigned nex;
	double t0, deadline;
	bool stop; /* interrupted or timed out */
	char *stop_reason;
	struct vn_strbuf samples; /* samples.jsonl contents, for the assertions */
	bool samples_cut;         /* samples reached SAMPLES_MAX, or a line SAMPLE_LINE_MAX */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* DIR/NAME, malloc'd: result paths are the user's -o plus our names, any length. */
static char *path_join(const char *dir, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		abort();
	return p;
}

/* A result file that grows during the run: a fresh file, never a planted symlink (util/file.h). */
static int open_out(const char *dir, const char *name, FILE **f, struct vn_error *err)
{
	_cleanup_free_ char *path = path_join(dir, name);

	return vn_file_create_stream(path, f, err);
}

/* Start one command in the guest; its events arrive later through pump(). */
static int start_exec(struct run *r, enum exec_kind kind, const char *const *argv, struct exec **out,
		      struct vn_error *err)
{
	if (r->nex >= MAX_EXECS)
		return vn_input_error(err, "%s: more than %d processes in one run", r->s->path, MAX_EXECS);
	struct exec *e = &r->ex[r->nex];
	const struct vn_agent_cmd c = {.argv = argv};
	int rc;

	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->status = -1;
	if ((rc = vn_agent_exec_start(r->a, &c, 10000, &e->id, err)) < 0)
		return rc;
	r->nex++;
	*out = e;
	return 0;
}

static void send_signal(struct run *r, struct exec *e, int sig)
{
	struct vn_error err = {0};

	vn_agent_exec_signal(r->a, e->id, sig, 2000, &err);
	vn_error_clear(&err);
}

/* One complete sampler line gets the host's clock too, then goes to samples.jsonl. */
static void sample_line(struct run *r, struct exec *e, const char *line, size_t n)
{
	char head[64];
	size_t hn;

	/* Not a JSON object, or one with a NUL inside that the parsers would cut short: not a sample. */
	if (!n || line[0] != '{' || memchr(line, '\0', n))
		return;
	hn = (size_t)snprintf(head, sizeof(head), "{\"host_t\":%.3f,", now_s() - r->t0);
	if (r->samples.len + hn + n > SAMPLES_MAX) {
		r->samples_cut = true;
		return;
	}
	fwrite(head, 1, hn, e->out);
	fwrite(line + 1, 1, n - 1, e->out);
	fputc('\n', e->out);
	/* A full or failing results disk ends the run as an infrastructure failure. */
	if ((fflush(e->out) != 0 || ferror(e->out)) && !r->stop) {
		r->stop = true;
		if (asprintf(&r->stop_reason, "cannot write %s/samples.jsonl: %s", r->dir, strerror(errno)) < 0)
			r->stop_reason = NULL;
	}
	vn_strbuf_append(&r->samples, head, hn);
	vn_strbuf_append(&r->samples, line + 1, n - 1);
	vn_strbuf_append(&r->samples, "\n", 1);
}

/* Sampler output: whole lines, each scanned once; a line over SAMPLE_LINE_MAX is dropped. */
static void sampler_data(struct run *r, struct exec *e, const char *data, size_t len)
{
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

/* Keeps the last bytes of a stream, at most max (a workload prints its result line last). */
static void keep_tail(struct vn_strbuf *b, const char *s, size_t n, size_t max)
{
	if (b->len + n > max && b->len) {
		size_t keep = b->len < max / 2 ? b->len : max / 2;

		memmove(b->s, b->s + b->len - keep, keep);
		b->len = keep;
		b->s[keep] = '\0';
	}
	if (n > max - b->len) {
		s += n - (max - b->len);
		n = max - b->len;
	}
	vn_strbuf_append(b, s, n);
}

/* Appends up to max in all; *cut says something was dropped. */
static void append_capped(struct vn_strbuf *b, const char *s, size_t n, size_t max, bool *cut)
{
	size_t room = b->len < max ? max - b->len : 0;

	vn_strbuf_append(b, s, n < room ? n : room);
	if (n > room)
		*cut = true;
}

/* A step output file holds at most STEP_FILE_MAX bytes of the guest's, then says it was cut. */
static void write_capped(FILE *f, size_t *written, bool *cut, const char *s, size_t n)
{
	size_t room = STEP_FILE_MAX - *written;

	if (*cut)
		return;
	fwrite(s, 1, n < room ? n : room, f);
	*written += n < room ? n : room;
	if (n > room) {
		fprintf(f, "\n[vnuma: truncated here: the guest sent more than %u MiB]\n", STEP_FILE_MAX >> 20);
		*cut = true;
	}
	fflush(f);
}

static struct exec *find_exec(struct run *r, int64_t id)
{
	for (unsigned i = 0; i < r->nex; i++)
		if (r->ex[i].id == id)
			return &r->ex[i];
	return NULL;
}

/* One event, already decoded and type-checked by the protocol layer (src/guest/). */
static void handle(struct run *r, const struct vn_agent_event *ev)
{
	struct exec *e = find_exec(r, ev->id);

	if (!e)
		return;
	if (ev->kind == VN_AGENT_EV_EXIT) {
		e->done = true;
		e->status = ev->status;
		if (ev->error && !e->error)
			e->error = strdup(ev->error);
		return;
	}
	bool is_out = ev->kind == VN_AGENT_EV_STDOUT;
	if (e->kind == EX_SAMPLER && is_out)
		sampler_data(r, e, ev->data, ev->len);
	else if (e->kind != EX_WORKLOAD)
		append_capped(is_out ? &e->buf : &e->ebuf, ev->data, ev->len, AUX_OUT_MAX, &e->buf_cut);
	else if (is_out ? e->out : e->errf) {
		if (is_out) {
			keep_tail(&e->buf, ev->data, ev->len, KEEP_TAIL_MAX);
			write_capped(e->out, &e->out_len, &e->out_cut, ev->data, ev->len);
		} else {
			write_capped(e->errf, &e->err_len, &e->err_cut, ev->data, ev->len);
		}
	}
}

/* Process agent messages for up to ms milliseconds; notice interruption and the deadline. */
static int pump(struct run *r, int ms, struct vn_error *err)
{
	double until = now_s() + ms / 1000.0;

	do {
		struct vn_agent_event ev;
		struct vn_error e = {0};
		int rc = vn_agent_exec_wait(r->a, 100, &ev, &e);
		if (rc == 0) {
			handle(r, &ev);
		} else if (rc != -ETIMEDOUT) {
			*err = e;
			return rc;
		}
		vn_error_clear(&e);
		if (!r->stop && (vn_was_interrupted() || now_s() > r->deadline)) {
			r->stop = true;
			r->stop_reason = strdup(vn_was_interrupted() ? "interrupted" : "scenario timeout reached");
			for (unsigned i = 0; i < r->nex; i++)
				if (!r->ex[i].done && r->ex[i].kind != EX_SAMPLER)
					send_signal(r, &r->ex[i], SIGKILL);
		}
	} while (now_s() < until);
	return 0;
}

/* Run a shell command in the guest and wait for it (between steps, through the same pump). */
static int guest_sh(struct run *r, const char *script, char **out, struct vn_error *err)
{
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	struct exec *e;
	int rc;

	double give_up = 0;

	if ((rc = start_exec(r, EX_AUX, argv, &e, err)) < 0)
		return rc;
	/* Past the scenario's deadline (the command was killed) the guest has 10 s to say it ended. */
	while (!e->done) {
		if ((rc = pump(r, 100, err)) < 0)
			return rc;
		if (r->stop && !give_up)
			give_up = now_s() + 10;
		if (give_up && now_s() > give_up)
			return vn_infra_error(err, -ETIMEDOUT, "%s: a guest command did not end after it was killed",
					      vn_agent_guest(r->a));
	}
	if (e->buf_cut)
		return vn_infra_error(err, -EMSGSIZE, "%s: a guest command printed more than %u MiB", vn_agent_guest(r->a),
				      AUX_OUT_MAX >> 20);
	if (e->status != 0) {
		if (e->ebuf.len && e->ebuf.s[e->ebuf.len - 1] == '\n')
			e->ebuf.s[--e->ebuf.len] = '\0';
		return vn_infra_error(err, -EIO, "guest command failed (exit %d): %s", e->status,
				      e->ebuf.len ? e->ebuf.s : e->error ? e->error : script);
	}
	if (out)
		*out = vn_strbuf_steal(&e->buf);
	return 0;
}

static void nodelist(struct vn_strbuf *b, const unsigned *nodes, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		vn_strbuf_printf(b, "%s%u", i ? "," : "", nodes[i]);
}

/* sh wrapper (pidfile, cgroup) + numactl placement + the workload and its options. */
static char **step_argv(const struct run *r, const struct vn_scn_step *st, unsigned idx)
{
	struct vn_strbuf script = VN_STRBUF_INIT;
	char **v = calloc(64 + (st->argv ? 64 : 0), sizeof(char *));
	unsigned n = 0;
	const struct vn_scn_placement *p = &st->placement;

	vn_strbuf_printf(&script, "echo $$ > " RUN_DIR "/%s.%u.pid && ", st->name, idx);
	if (st->cgroup)
		vn_strbuf_printf(&script, "echo $$ > /sys/fs/cgroup/%s/cgroup.procs && ", st->cgroup);
	vn_strbuf_printf(&script, "exec \"$@\"");
	v[n++] = strdup("/bin/sh");
	v[n++] = strdup("-c");
	v[n++] = vn_strbuf_steal(&script);
	v[n++] = strdup("vnuma-step");
	if (p->policy != VN_PLACE_NONE) {
		struct vn_strbuf b = VN_STRBUF_INIT;
		v[n++] = strdup("numactl");
		if (p->policy == VN_PLACE_CPUNODEBIND || p->ncpu_nodes) {
			vn_strbuf_printf(&b, "--cpunodebind=");
			if (p->policy == VN_PLACE_CPUNODEBIND)
				nodelist(&b, p->nodes, p->nnodes);
			else
				nodelist(&b, p->cpu_nodes, p->ncpu_nodes);
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
		v[n++] = strdup("--");
	}
	if (strcmp(st->workload, "cmd") != 0) {
		if (asprintf(&v[n++], "/usr/lib/vnuma/vnuma-wl-%s", st->workload) < 0)
			abort();
		if (st->size && asprintf(&v[n++], "--size=%lluM", (unsigned long long)(st->size >> 20)) < 0)
			abort();
		if (st->duration_s > 0 && asprintf(&v[n++], "--duration=%g", st->duration_s) < 0)
			abort();
		if (st->threads && asprintf(&v[n++], "--threads=%u", st->threads) < 0)
			abort();
	}
	for (char **a = st->argv; a && *a && n < 126; a++)
		v[n++] = strdup(*a);
	(void)r;
	return v;
}

static int start_step(struct run *r, unsigned si, unsigned rep, struct vn_error *err)
{
	const struct vn_scn_step *st = &r->s->steps[si];

	for (unsigned i = 0; i < st->processes; i++) {
		_cleanup_strv_ char **argv = step_argv(r, st, i);
		char name[PATH_MAX];
		struct exec *e;
		int rc = start_exec(r, EX_WORKLOAD, (const char *const *)argv, &e, err);
		if (rc < 0)
			return rc;
		e->step = si;
		e->index = i;
		snprintf(name, sizeof(name), "steps/%s.r%u.p%u.out", st->name, rep, i);
		if ((rc = open_out(r->dir, name, &e->out, err)) < 0)
			return rc;
		snprintf(name, sizeof(name), "steps/%s.r%u.p%u.err", st->name, rep, i);
		if ((rc = open_out(r->dir, name, &e->errf, err)) < 0)
			return rc;
	}
	return 0;
}

/* The timed action: sched_setaffinity (taskset -a) of the first processes to a node's CPUs. */
static int start_move(struct run *r, unsigned si, const struct vn_scn_action *act, struct vn_error *err)
{
	const struct vn_scn_step *st = &r->s->steps[si];
	unsigned count = (unsigned)ceil(act->fraction * st->processes);
	_cleanup_free_ char *cpus = vn_cpulist_format(&r->t->nodes[act->to_node].cpus);
	struct vn_strbuf b = VN_STRBUF_INIT;
	struct exec *e;
	int rc;

	if (r->d->nmoves >= VN_ARRAY_SIZE(r->d->moves))
		return vn_input_error(err, "%s: too many move actions", r->s->path);
	vn_strbuf_printf(&b, "for i in $(seq 0 %u); do p=$(cat " RUN_DIR "/%s.$i.pid 2>/dev/null) || continue; "
			     "taskset -a -p -c %s $p >/dev/null && echo pid $p; done; cat /proc/uptime",
			 count - 1, st->name, cpus);
	const char *argv[] = {"/bin/sh", "-c", b.s, NULL};
	rc = start_exec(r, EX_ACTION, argv, &e, err);
	vn_strbuf_free(&b);
	if (rc < 0)
		return rc;
	e->move = r->d->nmoves;
	struct vn_run_move *mv = &r->d->moves[r->d->nmoves++];
	memset(mv, 0, sizeof(*mv));
	mv->step = si;
	mv->to_node = act->to_node;
	return 0;
}

/* Fill a move's pids and time from its action's output once it finished. */
static void finish_moves(struct run *r)
{
	for (unsigned i = 0; i < r->nex; i++) {
		struct exec *e = &r->ex[i];
		if (e->kind != EX_ACTION || !e->done || !e->buf.s)
			continue;
		struct vn_run_move *mv = &r->d->moves[e->move];
		mv->npids = 0;
		for (char *line = strtok(e->buf.s, "\n"); line; line = strtok(NULL, "\n")) {
			if (strncmp(line, "pid ", 4) == 0 && mv->npids < VN_ARRAY_SIZE(mv->pids))
				mv->pids[mv->npids++] = atoi(line + 4);
			else
				mv->uptime = atof(line);
		}
		vn_strbuf_free(&e->buf);
	}
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
		if (r->ex[i].kind == EX_WORKLOAD && r->ex[i].step == si && !r->ex[i].done)
			return true;
	return false;
}

static bool any_running(const struct run *r, enum exec_kind kind)
{
	for (unsigned i = 0; i < r->nex; i++)
		if (r->ex[i].kind == kind && !r->ex[i].done)
			return true;
	return false;
}

static int fire_due(struct run *r, struct pending *p, unsigned np, struct vn_error *err)
{
	for (unsigned i = 0; i < np; i++) {
		if (p[i].fired || now_s() < p[i].due || r->stop)
			continue;
		p[i].fired = true;
		int rc = start_move(r, p[i].step, p[i].act, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int run_steps(struct run *r, struct vn_error *err)
{
	struct pending pend[256];
	unsigned np = 0;
	int rc;

	for (unsigned rep = 0; rep < r->s->repeats && !r->stop; rep++) {
		for (unsigned si = 0; si < r->s->nsteps && !r->stop; si++) {
			const struct vn_scn_step *st = &r->s->steps[si];
			double start = now_s();

			if ((rc = start_step(r, si, rep, err)) < 0)
				return rc;
			for (unsigned k = 0; k < st->nactions && np < VN_ARRAY_SIZE(pend); k++)
				pend[np++] = (struct pending){.step = si, .act = &st->actions[k], .due = start + st->actions[k].at_s};
			while (!st->background && step_running(r, si) && !r->stop) {
				if ((rc = fire_due(r, pend, np, err)) < 0 || (rc = pump(r, 100, err)) < 0)
					return rc;
			}
		}
	}
	/* Background steps, and actions still due while they run. */
	while (any_running(r, EX_WORKLOAD) && !r->stop)
		if ((rc = fire_due(r, pend, np, err)) < 0 || (rc = pump(r, 100, err)) < 0)
			return rc;
	/* Killed processes still send their final message. */
	double until = now_s() + 10;
	while ((any_running(r, EX_WORKLOAD) || any_running(r, EX_ACTION)) && now_s() < until)
		if ((rc = pump(r, 100, err)) < 0)
			return rc;
	finish_moves(r);
	return 0;
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
	_cleanup_free_ char *key = strdup(sc->key), *path = NULL, *value = NULL;
	const char *moved = strncmp(sc->key, "kernel.numa_balancing_", 22) == 0 ? sc->key + 22 : NULL;
	struct vn_error e = {0};
	int rc;

	if (!key)
		return -ENOMEM;
	for (char *p = key; *p; p++)
		if (*p == '.')
			*p = '/';
	if (asprintf(&path, "/proc/sys/%s", key) < 0 || asprintf(&value, "%s\n", sc->value) < 0)
		return -ENOMEM;
	rc = vn_agent_write_file(r->a, path, value, strlen(value), -1, 0, 10000, &e);
	if (rc == -ENOENT && moved) {
		vn_error_clear(&e);
		free(path);
		if (asprintf(&path, "/sys/kernel/debug/sched/numa_balancing/%s", moved) < 0)
			return -ENOMEM;
		rc = vn_agent_write_file(r->a, path, value, strlen(value), -1, 0, 10000, &e);
	}
	if (rc < 0) {
		rc = vn_infra_error(err, rc, "cannot set sysctl %s to \"%s\" (%s)", sc->key, sc->value, e.msg);
		vn_error_clear(&e);
	}
	return rc;
}

/* Sysctls (agent writes), then THP, hugetlb pages per node, cgroups: one guest script, checked. */
static int prepare_guest(struct run *r, struct vn_error *err)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	int rc;

	for (unsigned i = 0; i < r->s->nsysctls; i++)
		if ((rc = set_sysctl(r, &r->s->sysctls[i], err)) < 0)
			return vn_error_prefix(err, "preparing the guest");
	vn_strbuf_printf(&b, "set -e; mkdir -p " RUN_DIR "; ");
	if (r->s->thp)
		vn_strbuf_printf(&b, "echo %s > /sys/kernel/mm/transparent_hugepage/enabled; ", r->s->thp);
	for (unsigned i = 0; i < r->s->nhugetlb; i++) {
		const struct vn_scn_hugetlb *h = &r->s->hugetlb[i];
		vn_strbuf_printf(&b,
				 "f=/sys/devices/system/node/node%u/hugepages/hugepages-2048kB/nr_hugepages; echo %u > $f; "
				 "[ $(cat $f) -ge %u ] || { echo \"node %u: only $(cat $f) of %u huge pages\" >&2; exit 1; }; ",
				 h->node, h->pages, h->pages, h->node, h->pages);
	}
	for (char **c = r->s->cgroups; c && *c; c++)
		vn_strbuf_printf(&b, "mkdir -p /sys/fs/cgroup/%s; ", *c);
	vn_strbuf_printf(&b, "true");
	rc = guest_sh(r, b.s, NULL, err);
	vn_strbuf_free(&b);
	return rc < 0 ? vn_error_prefix(err, "preparing the guest") : 0;
}

/* pids per step (from the wrappers' pidfiles) and each process's result line. */
static void gather_step_data(struct run *r)
{
	_cleanup_free_ char *pids = NULL;
	struct vn_error e = {0};

	if (guest_sh(r, "cd " RUN_DIR " && for f in *.pid; do [ -f \"$f\" ] && echo \"$f $(cat $f)\"; done; true", &pids,
		     &e) == 0) {
		for (char *line = strtok(pids, "\n"); line; line = strtok(NULL, "\n")) {
			char name[256];
			unsigned idx;
			int pid;
			char *dot = strrchr(line, ' ');
			if (!dot || sscanf(dot + 1, "%d", &pid) != 1)
				continue;
			*dot = '\0';
			/* "STEP.I.pid" */
			char *p = strrchr(line, '.');
			if (!p)
				continue;
			*p = '\0';
			p = strrchr(line, '.');
			if (!p || sscanf(p + 1, "%u", &idx) != 1)
				continue;
			*p = '\0';
			snprintf(name, sizeof(name), "%s", line);
			for (unsigned si = 0; si < r->s->nsteps; si++) {
				struct vn_run_step_data *sd = &r->d->steps[si];
				if (strcmp(r->s->steps[si].name, name) == 0 && sd->npids < VN_ARRAY_SIZE(sd->pids))
					sd->pids[sd->npids++] = pid;
			}
		}
	}
	vn_error_clear(&e);
	for (unsigned i = 0; i < r->nex; i++) {
		struct exec *x = &r->ex[i];
		if (x->kind != EX_WORKLOAD || !x->buf.s)
			continue;
		struct vn_run_step_data *sd = &r->d->steps[x->step];
		/* The last line that parses is the result: workloads print exactly one. */
		json_object *res = NULL;
		for (char *line = strtok(x->buf.s, "\n"); line; line = strtok(NULL, "\n")) {
			json_object *j = json_tokener_parse(line);
			if (j) {
				json_object_put(res);
				res = j;
			}
		}
		if (res && sd->nresults < VN_ARRAY_SIZE(sd->results))
			sd->results[sd->nresults++] = res;
		else
			json_object_put(res);
	}
}

static char *read_text(const char *dir, const char *name)
{
	_cleanup_free_ char *path = path_join(dir, name);
	struct vn_error e = {0};
	char *text = NULL;
	size_t len;

	if (vn_file_read(path, 64u << 20, &text, &len, &e) < 0)
		text = NULL;
	vn_error_clear(&e);
	return text;
}

static int read_vmstat(const char *dir, const char *sub, json_object **out)
{
	_cleanup_free_ char *subdir = path_join(dir, sub);
	_cleanup_free_ char *text = read_text(subdir, "vmstat");
	struct vn_error e = {0};

	if (!text)
		return -EIO;
	int rc = vn_metrics_parse_kv(text, out, &e);
	vn_error_clear(&e);
	return rc;
}

static int copy_file(const char *from, const char *dir, const char *name, struct vn_error *err)
{
	_cleanup_free_ char *path = path_join(dir, name);

	return vn_file_copy_atomic(from, path, err);
}

static char *utc_stamp(bool compact)
{
	char buf[64];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, sizeof(buf), compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &tm);
	return strdup(buf);
}

static void free_data(struct vn_run_data *d, unsigned nsteps)
{
	json_object_put(d->vmstat_before);
	json_object_put(d->vmstat_after);
	free(d->dmesg);
	for (unsigned i = 0; i < VN_MAX_NODES; i++)
		free(d->distances[i]);
	vn_samples_free(&d->samples);
	for (unsigned i = 0; d->steps && i < nsteps; i++)
		for (unsigned k = 0; k < d->steps[i].nresults; k++)
			json_object_put(d->steps[i].results[k]);
	free(d->steps);
}

static void sampling_cost(struct vn_report *rep, const struct vn_samples *s)
{
	double mean, max;

	vn_samples_cost(s, &mean, &max);
	if (s->n && asprintf(&rep->sampling_cost, "%.2f ms CPU per sample on average, %.2f ms at most (%u samples)",
			     1000 * mean, 1000 * max, s->n) < 0)
		rep->sampling_cost = NULL;
}

int vn_scenario_run(const struct vn_testbed_ctx *ctx, struct vn_scenario *s, const struct vn_run_opts *o,
		    struct vn_report *rep, char **dirp, struct vn_error *err)
{
	_cleanup_free_ char *topo_path = NULL, *dir = NULL, *stamp = NULL, *prefix = NULL;
	/* Declared before the first goto: cleanup runs on every way out. */
	_cleanup_free_ char *before = NULL, *after = NULL;
	_cleanup_topology_ struct vn_topology *t = NULL;
	struct vn_up_result up = {0};
	struct vn_run_data d = {.s = s};
	struct run r = {.s = s, .d = &d};
	bool booted = false;
	unsigned nsteps = s->nsteps;
	int rc;

	memset(rep, 0, sizeof(*rep));
	if (o->quick)
		vn_scenario_apply_quick(s);
	if ((rc = vn_scenario_check(s, &topo_path, &t, err)) < 0)
		return rc;
	d.t = t;
	r.t = t;

	stamp = utc_stamp(true);
	if (o->outdir)
		dir = strdup(o->outdir);
	else if (asprintf(&dir, "results/%s-%s", s->name, stamp) < 0)
		return -ENOMEM;
	/* A reused directory would mix this run's files with another's: refuse unless asked to. */
	if ((rc = vn_dir_nonempty(dir)) != 0 && !o->force) {
		if (rc < 0)
			return vn_infra_error(err, rc, "results directory %s: %s", dir, strerror(-rc));
		return vn_input_error(err,
				      "results directory %s is not empty: its files would mix with this run's; use "
				      "another -o or --force",
				      dir);
	}
	_cleanup_free_ char *steps_dir = path_join(dir, "steps");
	if ((rc = vn_dir_create(steps_dir, err)) < 0)
		return vn_error_prefix(err, "results directory");
	*dirp = strdup(dir);
	r.dir = dir;
	rep->scenario = strdup(s->name);
	rep->description = s->description ? strdup(s->description) : NULL;
	rep->started_utc = utc_stamp(false);
	rep->topology = strdup(topo_path);
	/*
	 * First of all, a result that says "incomplete": whatever kills this
	 * process from here on (SIGKILL, a crash, power) leaves that, never a
	 * previous run's result, and never one that looks finished.
	 */
	rep->error = strdup("the run did not finish (vnuma was killed or crashed, or it is still running)");
	if ((rc = vn_report_write(rep, dir, err)) < 0)
		return rc;
	free(steal_pointer(&rep->error));
	double t_start = now_s();
	_cleanup_free_ char *resolved = vn_scenario_to_json(s);
	_cleanup_free_ char *scn_path = path_join(dir, "scenario.json");
	/* From here on every way out rewrites the result with the reason. */
	if ((rc = vn_file_write_text(scn_path, resolved, err)) < 0 ||
	    (rc = copy_file(topo_path, dir, "topology.xml", err)) < 0)
		goto finish;

	if (asprintf(&prefix, VN_SCN_GUEST_PREFIX "%s", s->name) < 0)
		return -ENOMEM;
	struct vn_up_opts uo = {
		.topology = topo_path,
		.name_prefix = prefix,
		.kernel = o->kernel ? o->kernel : s->kernel,
		.append = s->append,
		.timeout_s = 300,
		.model = VN_FALLBACK_DEFAULT,
		.kernel_progress = o->kernel_progress,
		.kernel_progress_data = o->kernel_progress_data,
		.progress = o->boot_progress,
		.progress_data = o->boot_progress_data,
	};
	d.steps = calloc(s->nsteps, sizeof(*d.steps));
	if (!d.steps)
		return -ENOMEM;
	rc = vn_testbed_up(ctx, &uo, &up, err);
	if (up.name)
		booted = true;
	if (rc < 0)
		goto finish;
	rep->accel = strdup(vn_accel_name(up.accel));
	rep->accel_reason = up.accel_reason ? strdup(up.accel_reason) : NULL;
	rep->guest = strdup(up.name);
	rep->kernel_release = strdup(up.kernel_release);
	rep->kernel_version = up.kernel_version ? strdup(up.kernel_version) : NULL;
	rep->kernel_recipe = up.kernel_recipe ? strdup(up.kernel_recipe) : NULL;
	rep->kernel_config_sha256 = up.kernel_config_sha256 ? strdup(up.kernel_config_sha256) : NULL;
	rep->kernel_patches = up.kernel_patches ? strdup(up.kernel_patches) : NULL;
	rep->fidelity = strdup(up.fidelity_report);

	if ((rc = vn_testbed_agent(ctx, up.name, 10000, &r.a, err)) < 0)
		goto finish;
	r.t0 = now_s();
	r.deadline = t_start + s->timeout_s;
	if ((rc = prepare_guest(&r, err)) < 0)
		goto finish;
	before = path_join(dir, "before");
	after = path_join(dir, "after");
	if ((rc = vn_testbed_collect(r.a, before, err)) < 0)
		goto finish;

	char interval[32];
	snprintf(interval, sizeof(interval), "%g", s->sample_interval_s);
	const char *sampler_argv[] = {"/usr/lib/vnuma/vnuma-sample", "--interval", interval, NULL};
	struct exec *sampler;
	if ((rc = start_exec(&r, EX_SAMPLER, sampler_argv, &sampler, err)) < 0)
		goto finish;
	if ((rc = open_out(dir, "samples.jsonl", &sampler->out, err)) < 0)
		goto finish;
	if ((rc = run_steps(&r, err)) < 0)
		goto finish;
	/* One more sample after the workloads ended, then stop the sampler. */
	pump(&r, (int)(s->sample_interval_s * 1000), err);
	send_signal(&r, sampler, SIGTERM);
	for (double until = now_s() + 5; !sampler->done && now_s() < until;)
		if ((rc = pump(&r, 100, err)) < 0)
			goto finish;
	if (r.samples_cut) {
		rc = vn_infra_error(err, -EMSGSIZE, "%s: samples.jsonl truncated: the sampler sent more than %u MiB, or a line over %u MiB",
				    vn_agent_guest(r.a), SAMPLES_MAX >> 20, SAMPLE_LINE_MAX >> 20);
		goto finish;
	}
	gather_step_data(&r);

	if ((rc = vn_testbed_collect(r.a, after, err)) < 0)
		goto finish;

	/* Infrastructure, not the kernel: a workload that could not run at all. */
	for (unsigned i = 0; i < r.nex; i++) {
		const struct exec *e = &r.ex[i];
		if (e->kind == EX_WORKLOAD && !r.stop && e->status != 0) {
			rc = vn_infra_error(err, -EIO, "step %s process %u %s%s%s (see %s/steps/%s.r0.p%u.err)",
					    s->steps[e->step].name, e->index,
					    e->status < 0 ? "could not start" : "exited with an error",
					    e->error ? ": " : "", e->error ? e->error : "", dir, s->steps[e->step].name,
					    e->index);
			goto finish;
		}
	}
	if (r.stop) {
		rc = vn_infra_error(err, vn_was_interrupted() ? -EINTR : -ETIMEDOUT, "%s", r.stop_reason);
		goto finish;
	}

	read_vmstat(dir, "before", &d.vmstat_before);
	read_vmstat(dir, "after", &d.vmstat_after);
	d.dmesg = read_text(after, "dmesg");
	rep->kernel_cmdline = read_text(after, "cmdline");
	if (rep->kernel_cmdline)
		rep->kernel_cmdline[strcspn(rep->kernel_cmdline, "\n")] = '\0';
	for (unsigned i = 0; i < t->nnodes; i++) {
		char name[64];
		snprintf(name, sizeof(name), "node%u-distance", i);
		d.distances[i] = read_text(after, name);
	}
	struct vn_error pe = {0};
	if (vn_samples_parse(r.samples.s ? r.samples.s : "", "samples.jsonl", &d.samples, &pe) < 0) {
		rc = vn_infra_error(err, -EBADMSG, "samples.jsonl: %s", pe.msg);
		vn_error_clear(&pe);
		goto finish;
	}
	sampling_cost(rep, &d.samples);
	vn_scenario_assert(&d, rep);
	rep->complete = true;
	rc = 0;

finish:
	if (rc < 0) {
		rep->complete = false;
		rep->error = strdup(err->msg);
	}
	rep->duration_s = now_s() - t_start;
	for (unsigned i = 0; i < r.nex; i++) {
		if (r.ex[i].out)
			fclose(r.ex[i].out);
		if (r.ex[i].errf)
			fclose(r.ex[i].errf);
		vn_strbuf_free(&r.ex[i].buf);
		vn_strbuf_free(&r.ex[i].ebuf);
		free(r.ex[i].error);
	}
	if (r.a)
		vn_agent_close(r.a);
	if (booted) {
		struct vn_error ce = {0};
		copy_file(up.console_log, dir, "console.log", &ce);
		vn_error_clear(&ce);
		if (!o->keep) {
			unsigned n;
			struct vn_error de = {0};
			vn_testbed_down(ctx, up.name, &n, &de);
			vn_error_clear(&de);
		}
	}
	for (const char *p = r.samples.s; p && (p = strchr(p, '\n')); p++)
		rep->samples++;
	struct vn_error we = {0};
	if (vn_report_write(rep, dir, &we) < 0) {
		/* A result that cannot be written is a run CI cannot judge; the guest is gone all the same. */
		if (rc == 0)
			rc = vn_infra_error(err, we.code, "%s", we.msg);
		else if (!err->detail)
			vn_error_set_detail(err, we.msg);
	}
	vn_error_clear(&we);
	vn_strbuf_free(&r.samples);
	free(r.stop_reason);
	vn_up_result_clear(&up);
	free_data(&d, nsteps);
	return rc;
}
