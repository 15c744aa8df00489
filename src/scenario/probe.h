/*
 * What watches a run besides the sampler: a probe. Each is one file of
 * src/scenario/ with its own state, and one line in vn_probes_builtin
 * (probe.c). The runner calls the list at the run's fixed points, in the
 * table's order (ends and frees in reverse), and knows nothing of what a
 * probe does. Nothing outside src/scenario/ (and its tests) includes this.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"
#include "util/strbuf.h"

struct run;
struct vn_result_run;
struct vn_html_run_in;
struct vn_hotplug_req;
struct vn_hotplug_result;

/* Every hook but name and size may be NULL; state is the probe's own, zeroed before start. */
struct vn_probe_ops {
	const char *name;
	size_t size; /* of its state */
	/* Whether this run asks for it (its scenario, its options); NULL: always. */
	bool (*wanted)(const struct run *r);
	/*
	 * Before the "before" snapshot, the guest prepared: what must be in
	 * place before the run's first observation. A failure stops the run
	 * with its error (then free, never end, for it and those started before).
	 */
	int (*start)(struct run *r, void *state, struct vn_error *err);
	/* After the "before" snapshot, as the sampler starts: the steps' window opens. */
	int (*window)(struct run *r, void *state, struct vn_error *err);
	/* Each sample, as it is written: head is samples.jsonl's line so far ("{...,"); add "key":value, pairs. */
	void (*sample)(struct run *r, void *state, struct vn_strbuf *head);
	/* A step that runs alone (no background step still running): at its start, and at its end. */
	void (*step_begin)(struct run *r, void *state, unsigned step);
	void (*step_end)(struct run *r, void *state, unsigned step);
	/* A hotplug the run made, done. */
	void (*hotplug)(struct run *r, void *state, const struct vn_hotplug_req *q,
			const struct vn_hotplug_result *res);
	/* The steps and the sampler ended: the window closes. A failure is the run's (every started probe's end runs). */
	int (*end)(struct run *r, void *state, struct vn_error *err);
	/* Its figures into the result, once the run is judged. */
	void (*metrics)(const struct run *r, const void *state, struct vn_result_run *rep);
	/* What report.html draws of it (borrowed until free). */
	void (*page)(const struct run *r, const void *state, struct vn_html_run_in *in);
	/* Every way out, for every started probe: what it leaves (a capture cut short says so), then its state. */
	void (*free)(struct run *r, void *state);
};

/* The probes a run has, in order. */
extern const struct vn_probe_ops *const vn_probes_builtin[];

/* The run's probes: those of a table that the run wanted, their state, how far each got. */
struct vn_probes {
	unsigned n;
	struct vn_probe {
		const struct vn_probe_ops *ops;
		void *state;
		bool started, ended;
	} * v;
};

/* The wanted probes of table (NULL-terminated; NULL: vn_probes_builtin), started in order; stops at a failure. */
int vn_probes_start(struct vn_probes *p, const struct vn_probe_ops *const *table, struct run *r, struct vn_error *err);
int vn_probes_window(struct vn_probes *p, struct run *r, struct vn_error *err);
void vn_probes_sample(struct vn_probes *p, struct run *r, struct vn_strbuf *head);
void vn_probes_step(struct vn_probes *p, struct run *r, unsigned step, bool end);
void vn_probes_hotplug(struct vn_probes *p, struct run *r, const struct vn_hotplug_req *q,
		       const struct vn_hotplug_result *res);
/* Every started probe's end, last first, even after one failed; the first failure is returned. */
int vn_probes_end(struct vn_probes *p, struct run *r, struct vn_error *err);
void vn_probes_metrics(const struct vn_probes *p, const struct run *r, struct vn_result_run *rep);
void vn_probes_page(const struct vn_probes *p, const struct run *r, struct vn_html_run_in *in);
/* Every started probe's free, last first, and the list's. */
void vn_probes_free(struct vn_probes *p, struct run *r);

/* The probes of vnuma itself (runner-trace.c, runner-locality.c). */
extern const struct vn_probe_ops vn_probe_trace, vn_probe_locality;
