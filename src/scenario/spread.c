/*
 * A matrix spread over hosts (`run --hosts FILE`): each run in a child
 * process of its own, with the host's URI, at most a host's capacity of them
 * at once. libvirt is the distributed engine: a child boots its guest
 * through the host's libvirtd, puts what boots there as volumes and talks to
 * the agent over a stream (testbed/remote.c), so nothing here knows where a
 * run goes but the URI. The parent never opens libvirt: it forks, and a
 * process with libvirt's threads must not.
 *
 * A run that could not run (exit 3) on a host that then does not answer is
 * the host's failure, not the run's: its directory is moved aside under
 * attempts/ (recorded in group.json, never compared) and the run starts
 * again on another host. A host found dead takes no more runs. So every cell
 * ends with exactly one run directory, and no run is counted twice.
 */
#include <json-c/json.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scenario/matrix-priv.h"
#include "testbed/remote.h"
#include "testbed/testbed.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/interrupt.h"
#include "util/isolate.h"
#include "util/json-members.h"

#define SPREAD_BUILD_ALLOW_MS (4.0 * 3600 * 1000)
#define SPREAD_STOP_MS        30000

struct host {
	const struct vn_host *h;
	struct vn_testbed_ctx ctx;
	unsigned capacity, running, runs;
	char *dead; /* why it is no longer used, or NULL */
};

struct job {
	struct vn_isolate_job iso;
	unsigned cell;
	struct host *host;
	/* What the child needs, in its copy of our memory. */
	struct group *g;
};

#define M(f, k) VN_JSON_MEMBER(struct vn_cell_end, f, VN_JSON_M_##k)
static const struct vn_json_member cell_end_members[] = {
	VN_JSON_MEMBER_ENUM(struct vn_cell_end, exit, 0, 3, "an exit code 0 to 3"),
	M(error, STR),
	M(topology, STR),
	M(host, STR),
	M(started, STR),
	M(accel, STR),
};
#undef M

char *vn_cell_end_text(const struct vn_cell_end *e)
{
	_cleanup_json_ json_object *o = vn_json_members_new(e, cell_end_members, VN_ARRAY_SIZE(cell_end_members));

	return vn_xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

int vn_cell_end_parse(const char *text, const char *name, struct vn_cell_end *e, struct vn_error *err)
{
	memset(e, 0, sizeof(*e));
	return vn_json_members_parse(text, name, VN_CELL_END_TEXT_MAX, cell_end_members,
				     VN_ARRAY_SIZE(cell_end_members), NULL, e, NULL, err);
}

static int cell_child(void *arg, char **out, struct vn_error *err)
{
	struct job *j = arg;
	struct vn_cell_end end = {0};

	vn_matrix_cell_run(j->g, j->cell, &j->host->ctx, &end);
	*out = vn_cell_end_text(&end);
	vn_cell_end_clear(&end);
	return 0;
}

/* The child's answer (our own child's, still checked); a child that died or answered wrong is a run that could not run. */
static void job_end(struct job *j, struct vn_cell_end *end)
{
	_cleanup_free_ char *out = NULL;
	struct vn_error e = {0};
	int rc = vn_isolate_finish(&j->iso, &out, &e);

	if (rc == 0 && !out)
		rc = vn_infra_error(&e, -EPROTO, "the run's process sent no answer");
	if (rc == 0)
		rc = vn_cell_end_parse(out, "the run's answer", end, &e);
	if (rc < 0) {
		vn_cell_end_clear(end);
		end->exit = 3;
		end->error = vn_xstrdup(e.msg);
	}
	vn_error_clear(&e);
}

/* How many hosts still take runs. */
static unsigned hosts_alive(const struct host *hosts, unsigned n)
{
	unsigned alive = 0;

	for (unsigned i = 0; i < n; i++)
		alive += !hosts[i].dead;
	return alive;
}

/* The free host with the most room, or NULL. */
static struct host *pick(struct host *hosts, unsigned n)
{
	struct host *best = NULL;

	for (unsigned i = 0; i < n; i++) {
		struct host *h = &hosts[i];
		if (!h->dead && h->running < h->capacity &&
		    (!best || h->capacity - h->running > best->capacity - best->running))
			best = h;
	}
	return best;
}

/*
 * The next run for host h: of the queued ones, the first of the variant
 * that has run least on h. Strict queue order would pin variants to hosts
 * (A B A B over two hosts puts every A on one and every B on the other),
 * and the comparison would then measure the hosts. The chosen one moves to
 * the queue's head, which the caller takes.
 */
unsigned vn_spread_take(const struct group *g, unsigned *queue, unsigned head, unsigned tail, const char *uri)
{
	unsigned best = head, best_n = UINT_MAX;

	/* A cell's host is set while it runs there, so running ones count too. */
	for (unsigned i = head; i < tail; i++) {
		const struct cell *c = &g->cells[queue[i % g->ncells]];
		unsigned n = 0;
		for (unsigned k = 0; k < g->ncells; k++)
			n += g->cells[k].host && strcmp(g->cells[k].host, uri) == 0 &&
			     strcmp(g->cells[k].variant, c->variant) == 0;
		if (n < best_n) {
			best = i;
			best_n = n;
		}
	}
	unsigned k = queue[best % g->ncells];
	for (unsigned i = best; i > head; i--)
		queue[i % g->ncells] = queue[(i - 1) % g->ncells];
	queue[head % g->ncells] = k;
	return k;
}

static void host_json(struct group *g, struct host *hosts, unsigned n)
{
	for (unsigned i = 0; i < g->nhosts; i++)
		vn_free_all(g->hosts[i].uri, g->hosts[i].state);
	free(g->hosts);
	g->hosts = vn_xcalloc(n ? n : 1, sizeof(*g->hosts));
	g->nhosts = n;
	for (unsigned i = 0; i < n; i++)
		g->hosts[i] = (struct vn_result_group_host){.uri = vn_xstrdup(hosts[i].h->uri),
							    .state = vn_xstrdup(hosts[i].dead ? hosts[i].dead : "ok"),
							    .capacity = hosts[i].capacity,
							    .runs = hosts[i].runs};
}

/* The cell's directory as the failed host left it, to attempts/VARIANT-REPEAT-N; its new name, relative. */
char *vn_spread_move_aside(const struct group *g, const struct cell *c)
{
	_cleanup_free_ char *from = vn_xasprintf("%s/%s", g->dir, c->dir);
	_cleanup_free_ char *att = vn_xasprintf("%s/attempts", g->dir);
	_cleanup_free_ char *name = vn_xasprintf("%s-%u-%u", c->variant, c->repeat, c->nattempts + 1);

	if (mkdir(att, 0755) < 0 && errno != EEXIST)
		return NULL;
	/* Into attempts itself, never through a symlink planted in its place. */
	_cleanup_close_ int afd = open(att, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (afd < 0 || renameat(AT_FDCWD, from, afd, name) < 0)
		return NULL;
	return vn_xasprintf("attempts/%s", name);
}

/* One spread matrix under way: its hosts, the runs going on, the queue of cells to start (retries go first). */
struct spread {
	struct group *g;
	struct vn_matrix_result *res;
	struct host *hosts;
	struct job *jobs;
	unsigned *queue;
	unsigned head, tail, njobs, started;
	struct vn_isolate_limits lim;
};

/* Each host's context and capacity for guests of t's size; one that does not answer is dead from the start. */
static void spread_probe(struct spread *sp, const struct vn_testbed_ctx *ctx, const struct vn_topology *t)
{
	const struct vn_matrix_opts *o = sp->g->o;

	for (unsigned i = 0; i < o->nhosts; i++) {
		struct host *h = &sp->hosts[i];
		struct vn_error e = {0};
		unsigned fits = 1;
		h->h = &o->hosts[i];
		h->ctx = *ctx;
		h->ctx.uri = h->h->uri;
		h->ctx.pool_dir = h->h->pool_dir;
		h->ctx.connect_timeout_ms = h->h->timeout_ms;
		if (vn_testbed_host_probe(&h->ctx, t->ncpus_total, vn_topology_total_memory(t), &fits, &e) < 0)
			h->dead = vn_xasprintf("unreachable before the first run: %s", e.msg);
		h->capacity = h->h->capacity ? h->h->capacity : fits;
		vn_error_clear(&e);
	}
}

/* Fill every free slot, the queue's order kept (retries go first) but for the host balance pick() keeps. */
static int spread_fill(struct spread *sp, struct vn_error *err)
{
	struct group *g = sp->g;
	const struct vn_matrix_opts *o = g->o;
	struct host *h;
	int rc = 0;

	while (!vn_was_interrupted() && sp->head < sp->tail && (h = pick(sp->hosts, o->nhosts))) {
		unsigned k = vn_spread_take(g, sp->queue, sp->head++, sp->tail, h->h->uri);
		struct job *j = &sp->jobs[sp->njobs];
		struct vn_error e = {0};
		*j = (struct job){.cell = k, .host = h, .g = g};
		/* A retry is counted as the run it repeats. */
		if (o->run_start)
			o->run_start(o->run_start_data, sp->started < g->ncells ? sp->started : g->ncells - 1,
				     g->ncells, g->cells[k].variant, g->cells[k].repeat, vn_now_s() - g->t0);
		sp->started++;
		if (vn_isolate_start(cell_child, j, &sp->lim, &j->iso, &e) < 0) {
			struct vn_cell_end end = {.exit = 3, .error = vn_xstrdup(e.msg)};
			vn_error_clear(&e);
			rc = vn_matrix_cell_ended(g, k, &end, sp->res, err);
			vn_cell_end_clear(&end);
			if (rc < 0)
				return rc;
			continue;
		}
		h->running++;
		sp->njobs++;
		free(g->cells[k].host);
		g->cells[k].host = vn_xstrdup(h->h->uri);
		/* group.json shows where each run is going on, not only where it ended. */
		if ((rc = vn_matrix_group_write(g, err)) < 0)
			return rc;
	}
	return 0;
}

/* A run that could not run on a host that no longer answers: the host is dead, the run queued again for another. */
static void spread_requeue(struct spread *sp, struct job *j, const struct vn_cell_end *end, const char *why_dead)
{
	struct group *g = sp->g;
	const struct vn_matrix_opts *o = g->o;
	struct cell *c = &g->cells[j->cell];

	free(j->host->dead);
	j->host->dead = vn_xasprintf("failed during the matrix: %s", why_dead);
	_cleanup_free_ char *moved = vn_spread_move_aside(g, c);
	c->attempts = vn_xreallocarray(c->attempts, c->nattempts + 1, sizeof(*c->attempts));
	c->attempts[c->nattempts++] =
		(struct vn_result_group_attempt){.host = vn_xstrdup(j->host->h->uri),
						 .error = vn_xstrdup(end->error ? end->error : ""),
						 .dir = moved ? vn_xstrdup(moved) : NULL};
	if (o->run_done) {
		_cleanup_free_ char *why =
			vn_xasprintf("%s on %s, which no longer answers; it runs again on another host",
				     end->error ? end->error : "", j->host->h->uri);
		o->run_done(o->run_start_data, j->cell, g->ncells, c->dir, 3, NULL, why);
	}
	sp->queue[--sp->head % g->ncells] = j->cell;
	free(c->host);
	c->host = NULL;
	host_json(g, sp->hosts, o->nhosts);
}

/* Wait (a slice at most) for runs to end, and take in those that did. */
static int spread_reap(struct spread *sp, struct vn_error *err)
{
	struct group *g = sp->g;
	const struct vn_matrix_opts *o = g->o;
	_cleanup_free_ struct pollfd *p = vn_xcalloc(sp->njobs, sizeof(*p));
	int wait = INT_MAX, rc = 0;

	/*
	 * Interrupted, we start no more runs and wait for those going on to
	 * end theirs cleanly (guest down, result marked incomplete). Ctrl-C
	 * reaches them from the terminal; a signal sent to us alone (a CI
	 * timeout's SIGTERM) is passed on, once (vn_isolate_wait_ms). A
	 * child past its time is finished anyway, which kills it.
	 */
	for (unsigned i = 0; i < sp->njobs; i++) {
		int w = vn_isolate_wait_ms(&sp->jobs[i].iso);
		p[i] = (struct pollfd){.fd = sp->jobs[i].iso.fd, .events = POLLIN};
		wait = w < wait ? w : wait;
	}
	/* In slices: a signal landing before poll() is seen within one. */
	if (wait && poll(p, sp->njobs, wait < 200 ? wait : 200) < 0 && errno != EINTR)
		return vn_infra_error(err, -errno, "poll: %s", strerror(errno));
	for (unsigned i = sp->njobs; i-- > 0;) {
		if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)) && vn_isolate_wait_ms(&sp->jobs[i].iso))
			continue;
		struct job j = sp->jobs[i];
		struct vn_cell_end end;
		sp->jobs[i] = sp->jobs[--sp->njobs];
		job_end(&j, &end);
		j.host->running--;
		struct vn_error e = {0};
		unsigned fits;
		/* Could not run: the run's fault, unless its host no longer answers. */
		if (end.exit == 3 && !vn_was_interrupted() &&
		    vn_testbed_host_probe(&j.host->ctx, 1, 1, &fits, &e) < 0) {
			spread_requeue(sp, &j, &end, e.msg);
			vn_error_clear(&e);
			vn_cell_end_clear(&end);
			continue;
		}
		vn_error_clear(&e);
		j.host->runs++;
		host_json(g, sp->hosts, o->nhosts);
		rc = vn_matrix_cell_ended(g, j.cell, &end, sp->res, err);
		vn_cell_end_clear(&end);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int vn_matrix_spread(struct group *g, const struct vn_testbed_ctx *ctx, struct vn_matrix_result *res,
		     struct vn_error *err)
{
	const struct vn_matrix_opts *o = g->o;
	_cleanup_topology_ struct vn_topology *t = NULL;
	_cleanup_free_ struct host *hosts = vn_xcalloc(o->nhosts, sizeof(*hosts));
	_cleanup_free_ struct job *jobs = vn_xcalloc(g->ncells, sizeof(*jobs));
	_cleanup_free_ unsigned *queue = vn_xcalloc(g->ncells, sizeof(*queue));
	struct spread sp = {.g = g, .res = res, .hosts = hosts, .jobs = jobs, .queue = queue};
	int rc = 0;

	if ((rc = vn_scenario_check(g->s, NULL, &t, err)) < 0)
		return rc;
	spread_probe(&sp, ctx, t);
	host_json(g, hosts, o->nhosts);
	if (!hosts_alive(hosts, o->nhosts)) {
		vn_matrix_group_write(g, err);
		rc = vn_infra_error(err, -EHOSTUNREACH, "none of the %u hosts answers: %s", o->nhosts, hosts[0].dead);
		for (unsigned i = 0; i < o->nhosts; i++)
			free(hosts[i].dead);
		return rc;
	}
	for (unsigned k = 0; k < g->ncells; k++)
		queue[sp.tail++] = k;
	/*
	 * A run ends itself by its scenario's timeout; this deadline is the
	 * backstop for a child stuck for good (twice that, and a first-use
	 * kernel build). Interrupted, a run writes its result and destroys its
	 * guest: SPREAD_STOP_MS for that.
	 */
	double run_ms = (g->s->timeout_s > 0 ? g->s->timeout_s : 900) * 2000.0 + SPREAD_BUILD_ALLOW_MS;
	sp.lim = (struct vn_isolate_limits){.timeout_ms = run_ms < INT_MAX ? (int)run_ms : INT_MAX,
					    .stop_ms = SPREAD_STOP_MS};

	for (;;) {
		if ((rc = spread_fill(&sp, err)) < 0 || !sp.njobs)
			break;
		if ((rc = spread_reap(&sp, err)) < 0)
			break;
		if (!hosts_alive(hosts, o->nhosts) && !sp.njobs)
			break;
	}
	/* Every host died under the matrix: the runs left over could not run anywhere. */
	for (; rc == 0 && sp.head < sp.tail && !vn_was_interrupted(); sp.head++) {
		struct vn_cell_end end = {.exit = 3, .error = vn_xstrdup("no host left to run it on")};
		rc = vn_matrix_cell_ended(g, queue[sp.head % g->ncells], &end, res, err);
		vn_cell_end_clear(&end);
	}
	/* A bookkeeping failure above left children running: they end with us, but are waited for. */
	for (unsigned i = 0; i < sp.njobs; i++) {
		struct vn_cell_end end;
		job_end(&jobs[i], &end);
		vn_cell_end_clear(&end);
	}
	for (unsigned i = 0; i < o->nhosts; i++)
		free(hosts[i].dead);
	return rc;
}
