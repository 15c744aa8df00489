#include "util/git.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"

static unsigned deadline_s(enum vn_git_span span)
{
	const char *env = getenv("VNUMA_GIT_DEADLINE");
	char *end;
	unsigned long v = env ? strtoul(env, &end, 10) : 0;

	return env && *env && !*end && v > 0 && v <= 86400 ? (unsigned)v : (unsigned)span;
}

/* The subcommand, for messages: the first argument that is neither an option nor an option's value. */
static const char *subcommand(const char *const *args)
{
	for (size_t i = 0; args[i]; i++) {
		if (strcmp(args[i], "-C") == 0 || strcmp(args[i], "-c") == 0) {
			if (!args[++i])
				break;
		} else if (args[i][0] != '-') {
			return args[i];
		}
	}
	return "";
}

int vn_git_run(const char *const *args, enum vn_git_span span, const struct vn_spawn_opts *o, struct vn_error *err)
{
	static const char *const head[] = {"git", "-c", "core.fsmonitor=false"};
	struct vn_spawn_opts so = VN_SPAWN_OPTS_INIT;
	size_t n = 0, h = sizeof(head) / sizeof(head[0]);
	int rc;

	while (args[n])
		n++;
	_cleanup_free_ const char **argv = vn_xcalloc(h + n + 1, sizeof(*argv));
	memcpy(argv, head, sizeof(head));
	memcpy(argv + h, args, n * sizeof(*argv));
	if (o)
		so = *o;
	so.deadline_s = deadline_s(span);
	rc = vn_spawn_run(argv, &so, err);
	if (rc == -ETIMEDOUT) {
		vn_error_clear(err);
		rc = vn_infra_error(err, -ETIMEDOUT,
				    "git %s did not finish in %u s, so it was stopped: a git hook or the disk hangs?",
				    subcommand(args), so.deadline_s);
	}
	return rc;
}

bool vn_git_hash_ok(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");
	return (n == 40 || n == 64) && s[n] == '\0';
}
