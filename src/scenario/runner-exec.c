/*
 * The run's guest commands: one agent connection carries them all at once
 * (the sampler's stream, every workload process, the timed actions, the
 * probes' programs), each an exec request told apart by its id. Nothing
 * waits on a round trip per sample.
 */
#include "scenario/runner-exec.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/agent-exec.h"
#include "scenario/runner-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/interrupt.h"

/* DIR/NAME, malloc'd: result paths are the user's -o plus our names, any length. */
char *vn_run_path(const char *dir, const char *name)
{
	char *p;

	p = vn_xasprintf("%s/%s", dir, name);
	return p;
}

/* A result file that grows during the run: a fresh file, never a planted symlink (util/file.h). */
int vn_run_open_out(const char *dir, const char *name, FILE **f, struct vn_error *err)
{
	_cleanup_free_ char *path = vn_run_path(dir, name);

	return vn_file_create_stream(path, f, err);
}

/* Start one command in the guest; its events arrive later through vn_run_pump(). */
int vn_run_exec_start(struct run *r, enum exec_kind kind, const char *const *argv, struct exec **out,
		      struct vn_error *err)
{
	const struct vn_agent_cmd c = {.argv = argv};
	int64_t id;
	int rc;

	if ((rc = vn_agent_exec_start(r->a, &c, VN_AGENT_REPLY_MS, &id, err)) < 0)
		return rc;
	/* One allocation each: an event handler may hold one exec while another starts. */
	if (r->nex == r->ex_cap)
		r->ex = vn_xreallocarray(r->ex, r->ex_cap = r->ex_cap ? 2 * r->ex_cap : 32, sizeof(*r->ex));
	struct exec *e = r->ex[r->nex++] = vn_xcalloc(1, sizeof(*e));
	e->id = id;
	e->kind = kind;
	e->status = -1;
	*out = e;
	return 0;
}

void vn_run_signal(struct run *r, struct exec *e, int sig)
{
	struct vn_error err = {0};

	vn_agent_exec_signal(r->a, e->id, sig, VN_AGENT_CONTROL_MS, &err);
	vn_error_clear(&err);
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
		if (r->ex[i]->id == id)
			return r->ex[i];
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
			e->error = vn_xstrdup(ev->error);
		return;
	}
	bool is_out = ev->kind == VN_AGENT_EV_STDOUT;
	if (e->on_out && is_out)
		e->on_out(r, e, e->on_out_data, ev->data, ev->len);
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
int vn_run_pump(struct run *r, int ms, struct vn_error *err)
{
	double until = vn_now_s() + ms / 1000.0;

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
		if (!r->stop && (vn_was_interrupted() || vn_now_s() > r->deadline)) {
			r->stop = true;
			r->stop_reason = vn_xstrdup(vn_was_interrupted() ? "interrupted" : "scenario timeout reached");
			for (unsigned i = 0; i < r->nex; i++)
				if (!r->ex[i]->done && r->ex[i]->kind != EX_SAMPLER)
					vn_run_signal(r, r->ex[i], SIGKILL);
		}
	} while (vn_now_s() < until);
	return 0;
}

/* Run a shell command in the guest and wait for it (between steps, through the same pump). */
int vn_run_guest_sh(struct run *r, const char *script, char **out, struct vn_error *err)
{
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	struct exec *e;
	int rc;

	double give_up = 0;

	if ((rc = vn_run_exec_start(r, EX_AUX, argv, &e, err)) < 0)
		return rc;
	/* Past the scenario's deadline (the command was killed) the guest has 10 s to say it ended. */
	while (!e->done) {
		if ((rc = vn_run_pump(r, 100, err)) < 0)
			return rc;
		if (r->stop && !give_up)
			give_up = vn_now_s() + 10;
		if (give_up && vn_now_s() > give_up)
			return vn_infra_error(err, -ETIMEDOUT, "%s: a guest command did not end after it was killed",
					      vn_agent_guest(r->a));
	}
	if (e->buf_cut)
		return vn_infra_error(err, -EMSGSIZE, "%s: a guest command printed more than %u MiB",
				      vn_agent_guest(r->a), AUX_OUT_MAX >> 20);
	if (e->status != 0) {
		if (e->ebuf.len && e->ebuf.s[e->ebuf.len - 1] == '\n')
			e->ebuf.s[--e->ebuf.len] = '\0';
		return vn_infra_error(err, -EIO, "guest command failed (exit %d): %s", e->status,
				      e->ebuf.len ? e->ebuf.s
				      : e->error  ? e->error
						  : script);
	}
	if (out)
		*out = vn_strbuf_steal(&e->buf);
	return 0;
}

void vn_run_exec_clear(struct run *r)
{
	for (unsigned i = 0; i < r->nex; i++) {
		if (r->ex[i]->out)
			fclose(r->ex[i]->out);
		if (r->ex[i]->errf)
			fclose(r->ex[i]->errf);
		vn_strbuf_free(&r->ex[i]->buf);
		vn_strbuf_free(&r->ex[i]->ebuf);
		free(r->ex[i]->error);
		free(r->ex[i]);
	}
	free(r->ex);
	r->ex = NULL;
	r->nex = r->ex_cap = 0;
}
