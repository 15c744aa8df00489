/*
 * The run's guest commands (runner-exec.c): every command it starts on the
 * one agent connection, told apart by exec id, and the pump that hands
 * their events to whoever started them. It calls nothing of the runner's:
 * output goes where the command's kind or its on_out says.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"
#include "util/strbuf.h"

/*
 * Nothing the guest sends is kept without a bound. A workload's stdout is
 * kept (its tail) for its result line; each step output file, the sampler's
 * lines and the outputs of our own helper commands are capped.
 */
#define KEEP_TAIL_MAX   (1u << 20)
#define STEP_FILE_MAX   (64u << 20)
#define AUX_OUT_MAX     (1u << 20)
#define SAMPLE_LINE_MAX (4u << 20)

struct run;

enum exec_kind { EX_SAMPLER, EX_WORKLOAD, EX_ACTION, EX_AUX, EX_TRACER, EX_SUITE };

struct exec {
	int64_t id;
	enum exec_kind kind;
	unsigned step, index; /* workload: which step, which process */
	unsigned move;        /* action: index into d->moves */
	FILE *out, *errf;
	size_t out_len, err_len; /* bytes written to out, errf */
	bool out_cut, err_cut;   /* a file reached STEP_FILE_MAX */
	struct vn_strbuf buf;    /* stdout kept (sampler: partial line; workload: its tail; action/aux: all) */
	struct vn_strbuf ebuf;   /* stderr of actions and aux commands, for error messages */
	bool buf_cut;            /* action/aux output reached AUX_OUT_MAX */
	bool skip_line;          /* sampler: dropping a line longer than SAMPLE_LINE_MAX */
	bool done;
	int status; /* exit code, 128+signal, or -1 when it could not start */
	char *error;
	/* Its stdout, as it comes, to whoever started it (the sampler, a probe's program); NULL: kept as its kind says. */
	void (*on_out)(struct run *r, struct exec *e, void *data, const char *s, size_t n);
	void *on_out_data;
};

/* DIR/NAME, malloc'd. */
char *vn_run_path(const char *dir, const char *name);
/* DIR/NAME created for a stream that grows during the run (util/file.h). */
int vn_run_open_out(const char *dir, const char *name, FILE **f, struct vn_error *err);
/* One more guest command on the run's connection; *out points into r->ex. */
int vn_run_exec_start(struct run *r, enum exec_kind kind, const char *const *argv, struct exec **out,
		      struct vn_error *err);
void vn_run_signal(struct run *r, struct exec *e, int sig);
/* Handle the guest's events for up to ms (the deadline and Ctrl-C set r->stop). */
int vn_run_pump(struct run *r, int ms, struct vn_error *err);
/* A helper shell script in the guest (fixed text of ours, never scenario input); its stdout in *out. */
int vn_run_guest_sh(struct run *r, const char *script, char **out, struct vn_error *err);

/* Every command's files and buffers closed and freed, the table emptied. */
void vn_run_exec_clear(struct run *r);
