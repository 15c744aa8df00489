/*
 * One run's result (result.json, docs/results.md) as a typed value: what
 * the runner fills in memory, what the one writer (vn_result_text,
 * vn_report_write) puts on disk and what the one reader (vn_result_load)
 * gives back, so that a field is one member here, written and read in
 * result.c. Files are the interface only between processes and hosts.
 */
#pragma once

#include <stdbool.h>

#include "util/error.h"

/* What kind of number an assertion observed, when it observed one (docs/results.md, "Metric names"). */
enum vn_observed_kind {
	VN_OBSERVED_NONE,  /* no one number: a list, a diff, a fraction per node */
	VN_OBSERVED_COUNT, /* a counter's change */
	VN_OBSERVED_RATIO, /* one counter's change over another's */
	VN_OBSERVED_VALUE, /* a workload's number */
};

struct vn_verdict {
	char *name;
	bool pass;
	bool undecided; /* not pass, not fail: the group's noise cannot show what it asks ("too noisy") */
	char *observed; /* what the kernel did, as text */
	char *expected; /* what the assertion asked for */
	char *detail;   /* optional: a diff, a time series summary */
	/* The observation as a number, for the metrics; not written to result.json (observed says it). */
	enum vn_observed_kind kind;
	double value; /* meaningful when kind is not NONE; NaN: none this time */
};

/* One recorded value (docs/results.md, "Metric names"): compare makes a row of each. */
struct vn_metric {
	char *name;
	double value;
};

/* One sysctl the run set, as the scenario named it. */
struct vn_result_sysctl {
	char *key, *value;
};

/* One file a guest on another host needed there, and whether this run sent it (else it was there already). */
struct vn_result_artifact {
	char *volume;
	bool uploaded;
};

/* A number per node that ran, in node order (a VN_FACT_NODES fact, report/result-facts.h). */
struct vn_result_nodes {
	unsigned n;
	unsigned *v;
};

/* Its facts (the members up to the verdicts) are written, read, shown and compared by report/result-facts.c's table. */
struct vn_result_run {
	char *scenario, *description;
	char *variant;       /* "default" when the scenario has none */
	unsigned repeat;     /* from 1 */
	char *host;          /* the libvirt URI the run used */
	unsigned nartifacts; /* on another host: per file that went there (result.json has "artifacts" then) */
	struct vn_result_artifact *artifacts;
	unsigned nsysctls;
	struct vn_result_sysctl *sysctls;
	unsigned nmetrics;
	struct vn_metric *metrics;
	char *started_utc;
	double duration_s;
	double boot_s;            /* QEMU's start (or the restore) until the agent answered (0: it did not) */
	char *boot;               /* "cold" or "restored" (from a booted snapshot), NULL: no guest yet */
	char *snapshot;           /* the booted snapshot's key (restored, or made by this boot), or NULL */
	bool complete;            /* false: interrupted or an infrastructure failure cut the run short */
	char *error;              /* why it is incomplete, or NULL */
	unsigned samples;         /* sample lines in samples.jsonl when the report was written */
	char *accel;              /* tcg / kvm */
	char *accel_reason;       /* why: proven, forced, cached, or why KVM was not usable */
	char *icount;             /* virtual time: QEMU's -icount value; NULL: real time (unless virtual_time) */
	bool virtual_time;        /* read back: the file said "time": "virtual" (vn_result_virtual_time) */
	double icount_lead_s;     /* and how far the guest's clock led the host's at the start (testbed/boot.c) */
	double icount_lead_min_s; /* and at its lowest in the run, from the samples' two clocks */
	char *arch;               /* the guest's architecture (docs/arches.md) */
	char *guest;              /* the guest's name (unique among the runs sharing a state dir) */
	char *kernel_release, *kernel_version, *kernel_cmdline, *kernel_recipe, *kernel_config_sha256;
	char **kernel_patches; /* patch names of a recipe kernel, NULL-terminated, or NULL */
	char *topology;
	char *fidelity;      /* the boot-time fidelity report */
	char *sampling_cost; /* e.g. "mean 3.1 ms CPU per sample (n=40)" */
	/* The guest's vCPUs and its host's CPUs (0: unknown; vn_up_result). */
	unsigned vcpus, host_cpus;
	struct vn_result_nodes node_memory_mib; /* each node's memory as the guest booted it (0: memory-less) */
	struct vn_result_nodes memory_tiers;    /* a tiered shape: each node's memory_tier id in the model (0: none) */
	unsigned nverdicts;
	struct vn_verdict *verdicts;
	unsigned ntests; /* a suite step's tests, each its verdict (result-suite.h) */
	struct vn_result_test *tests;
};

void vn_result_add(struct vn_result_run *r, const char *name, bool pass, const char *observed, const char *expected,
		   const char *detail);
/* vn_result_add, with the observation as a number of the given kind as well. */
void vn_result_add_observed(struct vn_result_run *r, const char *name, bool pass, const char *observed,
			    const char *expected, const char *detail, enum vn_observed_kind kind, double value);
void vn_result_clear(struct vn_result_run *r);
void vn_result_add_sysctl(struct vn_result_run *r, const char *key, const char *value);
void vn_result_add_artifact(struct vn_result_run *r, const char *volume, bool uploaded);
/* Records one metric; beyond VN_RESULT_METRICS_MAX (or a value that is not finite) it is dropped. */
#define VN_RESULT_METRICS_MAX 4096
void vn_result_metric(struct vn_result_run *r, const char *name, double value);
/* Verdicts that failed (undecided ones are not failures), and the undecided ones. */
unsigned vn_result_failures(const struct vn_result_run *r);
unsigned vn_result_undecided(const struct vn_result_run *r);
/* "pass", "fail" or "too noisy", as result.json, group.json and the table say it. */
const char *vn_verdict_word(const struct vn_verdict *v);

/* Whose clock times the run's figures: the guest's instructions (true) or the host's. */
bool vn_result_virtual_time(const struct vn_result_run *r);

/* result.json's object, as vn_report_write writes it (the guest's text cleaned): caller puts it. */
struct json_object;
struct json_object *vn_result_json(const struct vn_result_run *r);
/* result.json's bytes, the one writer's: what vn_report_write puts in DIR/result.json. */
char *vn_result_text(const struct vn_result_run *r);

/*
 * The one reader of result.json, for everything that reads a run back
 * (compare, the page, a matrix's cells): path's file, bounded and
 * type-checked, into *out (zeroed first; vn_result_clear it, also on error).
 * What the writer derives ("passed", "note") is checked but not kept.
 * A file without "version" is version 1, as every result.json before it
 * was; a later version is refused by name. Errors are input errors
 * "PATH: $.json.path: what is wrong".
 */
#define VN_RESULT_VERSION        1
#define VN_RESULT_FILE_MAX       (16u << 20)
#define VN_RESULT_ASSERTIONS_MAX 4096
#define VN_RESULT_LIST_MAX       4096 /* sysctls, artifacts, kernel patches */
int vn_result_load(const char *path, struct vn_result_run *out, struct vn_error *err);
/* The same from text already read; name is the file's name for messages. */
int vn_result_parse(const char *text, const char *name, struct vn_result_run *out, struct vn_error *err);
