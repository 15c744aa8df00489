/* Option tables and option values of the in-guest programs (opt.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Option values; each calls ig_bad_option on error. */
/* A size: N[KMGT] or N[KMGT]iB or N[K/M/G]B; a bare number means MiB. */
uint64_t ig_opt_size(const char *opt, const char *val);
/* An unsigned integer in [min, max]. */
uint64_t ig_opt_uint(const char *opt, const char *val, uint64_t min, uint64_t max);
/* Seconds: "1.5", "1.5s", "250ms", "2m"; must be >= min. */
double ig_opt_seconds(const char *opt, const char *val, double min);

enum ig_opt_type {
	IG_OPT_SIZE,    /* uint64_t *dst: ig_opt_size() */
	IG_OPT_U64,     /* uint64_t *dst: ig_opt_uint(min, max) */
	IG_OPT_INT,     /* int *dst: ig_opt_uint(min, max), max <= INT_MAX */
	IG_OPT_SECONDS, /* double *dst: ig_opt_seconds(min_s) */
	IG_OPT_STRING,  /* const char **dst: the argument itself */
	IG_OPT_CHOICE,  /* int *dst: the value of the choice named, else bad option (why) */
	IG_OPT_CALL,    /* call(opt, argument) */
};

struct ig_opt_choice {
	const char *name; /* NULL ends the list */
	int value;
};

/* One --name VALUE option. A table of them ends with a NULL name. */
struct ig_opt {
	const char *name;
	enum ig_opt_type type;
	void *dst;
	uint64_t min, max;                                       /* U64, INT */
	double min_s;                                            /* SECONDS */
	const struct ig_opt_choice *choices;                     /* CHOICE */
	const char *why;                                         /* CHOICE: the message when none matches */
	void (*call)(const struct ig_opt *opt, const char *val); /* CALL; opt->dst is its context */
	const char **given;                                      /* if set: the argument as given, for later checks */
	char short_name;                                         /* if set: also -C VALUE */
	const char *arg;  /* the value's name in --help (default from the type: SIZE, N, S, PATH, a|b) */
	const char *help; /* one line for --help */
};

/*
 * Parses argv against opts, storing each value as it comes (so defaults are
 * set before). --help prints the usage made from the table (then notes, if
 * any) on stdout and exits 0; an unknown option, a missing value or an
 * argument that is not an option exits 2 with one line naming it.
 */
void ig_opts_parse(int argc, char **argv, const struct ig_opt *opts, const char *notes);
