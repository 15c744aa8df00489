/* Command-line options: the value parsers and the one getopt_long loop. */
#include "inguest/opt.h"
#include "inguest/prog.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

uint64_t ig_opt_size(const char *opt, const char *val)
{
	char *end;
	double v;
	uint64_t mult;

	if (!val || !*val || !(isdigit((unsigned char)val[0]) || val[0] == '.'))
		ig_bad_option(opt, val, "expected a size such as 200M, 1G or 512K (bare number: MiB)");
	errno = 0;
	v = strtod(val, &end);
	if (errno || !isfinite(v) || v <= 0)
		ig_bad_option(opt, val, "expected a positive size");
	switch (toupper((unsigned char)*end)) {
	case '\0': mult = 1ULL << 20; break;
	case 'B':
		mult = 1;
		end++;
		goto tail_done;
	case 'K': mult = 1ULL << 10; break;
	case 'M': mult = 1ULL << 20; break;
	case 'G': mult = 1ULL << 30; break;
	case 'T': mult = 1ULL << 40; break;
	default: ig_bad_option(opt, val, "unknown size suffix (use K, M, G or T)");
	}
	if (*end) {
		end++;
		if (!strcasecmp(end, "iB") || !strcasecmp(end, "B"))
			end += strlen(end);
	}
tail_done:
	if (*end)
		ig_bad_option(opt, val, "trailing characters after the size");
	v *= (double)mult;
	if (v < 1 || v > (double)(1ULL << 50))
		ig_bad_option(opt, val, "size out of range");
	return (uint64_t)v;
}

uint64_t ig_opt_uint(const char *opt, const char *val, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long v;
	char why[96];

	if (!val || !isdigit((unsigned char)val[0]))
		ig_bad_option(opt, val, "expected a non-negative integer");
	errno = 0;
	v = strtoull(val, &end, 10);
	if (errno || *end)
		ig_bad_option(opt, val, "expected a non-negative integer");
	if (v < min || v > max) {
		snprintf(why, sizeof(why), "must be between %llu and %llu", (unsigned long long)min,
			 (unsigned long long)max);
		ig_bad_option(opt, val, why);
	}
	return v;
}

double ig_opt_seconds(const char *opt, const char *val, double min)
{
	char *end;
	double v;
	char why[64];

	if (!val || !*val || !(isdigit((unsigned char)val[0]) || val[0] == '.'))
		ig_bad_option(opt, val, "expected seconds such as 10, 1.5 or 250ms");
	errno = 0;
	v = strtod(val, &end);
	if (errno || !isfinite(v))
		ig_bad_option(opt, val, "expected seconds such as 10, 1.5 or 250ms");
	if (!strcmp(end, "ms"))
		v /= 1000.0;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		v *= 60.0;
	else if (*end && strcmp(end, "s"))
		ig_bad_option(opt, val, "unknown time unit (use s, ms or m)");
	if (v < min || v > 1e7) {
		snprintf(why, sizeof(why), "must be at least %g seconds", min);
		ig_bad_option(opt, val, why);
	}
	return v;
}

static void store(const struct ig_opt *o, const char *val)
{
	if (o->given)
		*o->given = val;
	switch (o->type) {
	case IG_OPT_SIZE: *(uint64_t *)o->dst = ig_opt_size(o->name, val); break;
	case IG_OPT_U64: *(uint64_t *)o->dst = ig_opt_uint(o->name, val, o->min, o->max); break;
	case IG_OPT_INT: *(int *)o->dst = (int)ig_opt_uint(o->name, val, o->min, o->max); break;
	case IG_OPT_SECONDS: *(double *)o->dst = ig_opt_seconds(o->name, val, o->min_s); break;
	case IG_OPT_STRING: *(const char **)o->dst = val; break;
	case IG_OPT_CHOICE:
		for (const struct ig_opt_choice *c = o->choices; c->name; c++) {
			if (!strcmp(c->name, val)) {
				*(int *)o->dst = c->value;
				return;
			}
		}
		ig_bad_option(o->name, val, o->why);
	case IG_OPT_CALL: o->call(o, val); break;
	}
}

/* "  -C, --name VALUE" into buf, the value named by .arg or by the type. */
static void format_option(const struct ig_opt *o, char *buf, size_t size)
{
	static const char *const by_type[] = {
		[IG_OPT_SIZE] = "SIZE", [IG_OPT_U64] = "N",       [IG_OPT_INT] = "N",
		[IG_OPT_SECONDS] = "S", [IG_OPT_STRING] = "PATH", [IG_OPT_CALL] = "N",
	};
	size_t n;

	if (o->short_name)
		n = (size_t)snprintf(buf, size, "  -%c, --%s ", o->short_name, o->name);
	else
		n = (size_t)snprintf(buf, size, "  --%s ", o->name);
	if (o->arg || o->type != IG_OPT_CHOICE) {
		snprintf(buf + n, size - n, "%s", o->arg ? o->arg : by_type[o->type]);
		return;
	}
	for (const struct ig_opt_choice *c = o->choices; c->name && n < size; c++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", c == o->choices ? "" : "|", c->name);
}

static void usage(const struct ig_opt *opts, const char *notes)
{
	char line[128];

	printf("usage: %s [options]\n", ig_prog);
	for (const struct ig_opt *o = opts; o->name; o++) {
		format_option(o, line, sizeof(line));
		if (o->help)
			printf("%-24s %s\n", line, o->help);
		else
			printf("%s\n", line);
	}
	if (notes)
		fputs(notes, stdout);
}

/* getopt_long's val for opts[i] without a short name: above every char. */
#define LONG_ONLY 256

void ig_opts_parse(int argc, char **argv, const struct ig_opt *opts, const char *notes)
{
	size_t n = 0;

	while (opts[n].name)
		n++;
	struct option *lo = ig_xcalloc(n + 2, sizeof(*lo), "option table");
	char *shorts = ig_xcalloc(2 * n + 2, 1, "option table"), *sp = shorts;
	/* ':' first: a missing value is reported like an unknown option, not by getopt. */
	*sp++ = ':';
	for (size_t i = 0; i < n; i++) {
		lo[i] = (struct option){opts[i].name, required_argument, NULL,
					opts[i].short_name ? opts[i].short_name : LONG_ONLY + (int)i};
		if (opts[i].short_name) {
			*sp++ = opts[i].short_name;
			*sp++ = ':';
		}
	}
	lo[n] = (struct option){"help", no_argument, NULL, 'h'};
	*sp++ = 'h';

	opterr = 0;
	for (int c; (c = getopt_long(argc, argv, shorts, lo, NULL)) != -1;) {
		const struct ig_opt *o = NULL;

		if (c == 'h') {
			usage(opts, notes);
			exit(IG_EXIT_OK);
		}
		if (c >= LONG_ONLY && c < LONG_ONLY + (int)n)
			o = &opts[c - LONG_ONLY];
		for (size_t i = 0; !o && c != '?' && c != ':' && i < n; i++)
			if (opts[i].short_name == c)
				o = &opts[i];
		if (!o)
			ig_unknown_option(argv[optind - 1]);
		store(o, optarg);
	}
	if (optind < argc)
		ig_unknown_option(argv[optind]);
	free(lo);
	free(shorts);
}
