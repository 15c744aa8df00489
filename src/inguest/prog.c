/* The program's name, and the one way each of its errors ends it. */
#include "inguest/prog.h"
#include "inguest/topo.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ig_prog = "vnuma-guest";
bool ig_in_child;
const char *ig_workload = "";

void ig_init(const char *prog)
{
	ig_prog = prog;
	/* The result line must not be interleaved with a child's stdio buffer. */
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
}

void ig_workload_init(const char *name, struct ig_topo *t)
{
	static char prog[64];

	snprintf(prog, sizeof(prog), "vnuma-wl-%s", name);
	ig_workload = name;
	ig_init(prog);
	ig_topo_load(t);
}

volatile sig_atomic_t ig_stop_requested;

static void on_stop(int sig)
{
	ig_stop_requested = sig;
}

void ig_stop_on_signals(void)
{
	struct sigaction sa = {.sa_handler = on_stop};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

void ig_die(int code, int errnum, const char *fmt, ...)
{
	va_list ap;

	/* A worker's stdout buffer is a copy of its parent's: the parent writes it, once. */
	if (!ig_in_child)
		fflush(stdout);
	fprintf(stderr, "%s: ", ig_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
	if (ig_in_child)
		_exit(code);
	exit(code);
}

void ig_oom(const char *what)
{
	ig_die(IG_EXIT_ENV, ENOMEM, "%s", what);
}

void *ig_xcalloc(size_t n, size_t size, const char *what)
{
	if (size && n > SIZE_MAX / size)
		ig_oom(what);
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		ig_oom(what);
	return p;
}

void *ig_xrealloc(void *p, size_t n, size_t size, const char *what)
{
	if (size && n > SIZE_MAX / size)
		ig_oom(what);
	size_t len = n * size;
	void *q = realloc(p, len ? len : 1);
	if (!q)
		ig_oom(what);
	return q;
}

void ig_bad_option(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "%s: invalid value '%s' for --%s: %s\n", ig_prog, val ? val : "", opt, why);
	exit(IG_EXIT_USAGE);
}

void ig_check_size(const char *opt, const char *given, uint64_t size, uint64_t per, uint64_t count, const char *noun)
{
	char why[96];

	if (size >= per * count)
		return;
	if (count == 1)
		snprintf(why, sizeof(why), "too small: need at least %" PRIu64 " bytes (one %s)", per, noun);
	else
		snprintf(why, sizeof(why), "too small: need at least %" PRIu64 " bytes (%" PRIu64 " per %s)",
			 per * count, per, noun);
	ig_bad_option(opt, given, why);
}

void ig_unknown_option(const char *arg)
{
	fprintf(stderr, "%s: unknown or incomplete option '%s' (try --help)\n", ig_prog, arg ? arg : "?");
	exit(IG_EXIT_USAGE);
}
