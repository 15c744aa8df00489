/*
 * A run's facts, described once (result-facts.c, vn_result_facts): what
 * ran, on what, for how long. result.json's writer and reader, the run
 * page's header table and compare's line per variant all walk this table,
 * so a new fact is one member of struct vn_result_run and one row here.
 * Lists of their own (assertions, metrics, sysctls, artifacts) are not
 * facts: they have their own writers and readers in result.c.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "report/result.h"
#include "util/json.h"

enum vn_fact_type {
	VN_FACT_STR,   /* char *: a string, or null */
	VN_FACT_UINT,  /* unsigned: an integer in [min, max] */
	VN_FACT_NUM,   /* double: a number in range */
	VN_FACT_BOOL,  /* bool */
	VN_FACT_STRV,  /* char **, NULL-terminated or NULL: an array of strings */
	VN_FACT_NODES, /* struct vn_result_nodes: an array of integers in [min, max], one per node */
	VN_FACT_OWN,   /* neither: the row's get and set say it */
};

enum {
	VN_FACT_REQUIRED = 1 << 0, /* a file without it is refused */
	VN_FACT_NONZERO = 1 << 1,  /* written only when not 0 (a list: not empty) */
	VN_FACT_ZERO_MIN = 1 << 2, /* 0 (unset) is written and shown as min */
	VN_FACT_NAME = 1 << 3,     /* a string that names a directory (vn_json_name_ok) */
	VN_FACT_COMPARE = 1 << 4,  /* compare shows it per variant, from the variant's first complete run */
};

struct vn_result_fact {
	const char *key; /* result.json's; "kernel.release" is "release" in the object "kernel" */
	enum vn_fact_type type;
	size_t offset; /* of the member in struct vn_result_run (not VN_FACT_OWN) */
	unsigned flags;
	const char *dflt;  /* a string written and shown for NULL */
	const char *label; /* its name on the run page and in compare; NULL: on neither */
	unsigned page;     /* its place in the run page's table, smallest first (steps of 10); 0: not there */
	const char *unit;  /* after a number on the page and in compare */
	/* The reader's bounds: VN_FACT_NUM's range, VN_FACT_UINT's and VN_FACT_NODES' min, max, and them in words. */
	enum vn_json_range range;
	int64_t min, max;
	const char *what;
	/* Written only when this says so (NULL: by flags alone). */
	bool (*when)(const struct vn_result_run *r);
	/* VN_FACT_OWN: the value written (a new reference), and v (not null) read back into r. */
	struct json_object *(*get)(const struct vn_result_run *r);
	int (*set)(const struct vn_json_reader *rd, struct json_object *v, const char *path, struct vn_result_run *r);
	/* The page's and compare's text when not the value's own (caller frees; NULL: no row). */
	char *(*text)(const struct vn_result_run *r);
};

extern const struct vn_result_fact vn_result_facts[];
extern const size_t vn_result_nfacts;

/* Every fact of r into o (result.json's object), in the table's order. */
void vn_result_facts_write(const struct vn_result_run *r, struct json_object *o);
/* Every fact of root back into r, each checked as its row says. */
int vn_result_facts_read(const struct vn_json_reader *rd, struct json_object *root, struct vn_result_run *r);
/* Frees what r's facts hold. */
void vn_result_facts_clear(struct vn_result_run *r);
/* f's value in r as the page and compare show it ("12.3 s", "1024, 1024 MiB"), or NULL where r has none. */
char *vn_result_fact_text(const struct vn_result_fact *f, const struct vn_result_run *r);
