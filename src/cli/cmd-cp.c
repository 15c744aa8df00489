/* vnuma cp: files and trees between the host and a guest (guest/copy.h does the work). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "guest/copy.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/name.h"
#include "util/parse.h"

/* More than a guest's disk holds: a bigger budget is a typo. */
#define CP_MAX_BYTES_MAX (UINT64_C(1) << 44)

struct cp_progress {
	bool tty;
	double t0, last;
};

static double mb(uint64_t bytes)
{
	return (double)bytes / 1e6;
}

static double rate(uint64_t bytes, double s)
{
	return s > 0 ? mb(bytes) / s : 0;
}

static void on_progress(void *data, const struct vn_copy_stats *st)
{
	struct cp_progress *p = data;
	double now = vn_now_s();

	if (!p->tty || now - p->last < 0.2)
		return;
	p->last = now;
	fprintf(stderr, "\r%u file(s), %.1f MB, %.1f MB/s\033[K", st->files, mb(st->bytes),
		rate(st->bytes, now - p->t0));
}

/*
 * "NAME:PATH" names a guest path when NAME is a guest name; anything else,
 * "./a:b" included, is a host path (as in scp).
 */
/* A guest name as cp reads it from NAME:PATH, with its NUL. */
#define CP_NAME_MAX 256

static const char *guest_part(const char *arg, char *name, size_t size)
{
	const char *colon = strchr(arg, ':');
	struct vn_error ignored = {0};

	if (!colon || memchr(arg, '/', (size_t)(colon - arg)) || (size_t)(colon - arg) >= size || colon == arg)
		return NULL;
	snprintf(name, size, "%.*s", (int)(colon - arg), arg);
	return vn_guest_name_check(name, &ignored) < 0 ? NULL : colon + 1;
}

/*
 * The operands from optind: the last the destination, the others the
 * sources, one side a guest's NAME:PATH (into name, CP_NAME_MAX bytes). in: into the
 * guest; srcs (argc long) get the paths, n their count.
 */
static int cp_operands(int argc, char **argv, char *name, const char **srcs, size_t *n, const char **dst, bool *in,
		       struct vn_error *err)
{
	char other[CP_NAME_MAX];

	*dst = guest_part(argv[argc - 1], name, CP_NAME_MAX);
	*in = *dst != NULL;
	if (!*in)
		*dst = argv[argc - 1];
	for (int i = optind; i < argc - 1; i++) {
		const char *g = guest_part(argv[i], other, sizeof(other));

		if (*in && g)
			return vn_input_error(err, "%s: copy from the host into a guest, or out of one, not both",
					      argv[i]);
		if (!*in && !g)
			return vn_input_error(err, "%s: one side must be a guest path NAME:PATH", argv[i]);
		if (!*in && *name && strcmp(name, other))
			return vn_input_error(err, "%s: every source comes from one guest (%s)", argv[i], name);
		if (!*in)
			snprintf(name, CP_NAME_MAX, "%s", other);
		srcs[(*n)++] = g ? g : argv[i];
	}
	return 0;
}

/* What was copied, in s seconds, on stderr. */
static void cp_print(const struct vn_copy_stats *st, double s)
{
	fprintf(stderr, "copied %u file(s), %u dir(s), %.1f MB in %.1f s (%.1f MB/s)", st->files, st->dirs,
		mb(st->bytes), s, rate(st->bytes, s));
	if (st->skipped)
		fprintf(stderr, "; skipped %u symlink(s) or special file(s)", st->skipped);
	fputc('\n', stderr);
}

static int cmd_cp(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args args;
	struct vn_copy_opts o = {0};
	struct vn_copy_stats st;
	struct cp_progress p = {.tty = isatty(STDERR_FILENO)};
	char name[CP_NAME_MAX] = "";
	_cleanup_free_ const char **srcs = vn_xcalloc((size_t)argc, sizeof(*srcs));
	const char *dst;
	size_t n = 0;
	bool in;
	int c, rc;

	vn_cli_args_init(&args, &vn_cmd_cp, argc, argv);
	while ((c = vn_cli_next(&args, err)) > 0) {
		uint64_t files;

		switch (c) {
		case 'r': o.recursive = true; break;
		case 'p': o.preserve_mode = true; break;
		case 'B':
			if (vn_cli_size(&args, "max-bytes", optarg, 1, CP_MAX_BYTES_MAX, &o.max_bytes, err) < 0)
				return args.exit;
			break;
		case 'F':
			if (vn_cli_count(&args, "max-files", optarg, 1, UINT32_MAX, &files, err) < 0)
				return args.exit;
			o.max_files = (unsigned)files;
			break;
		}
	}
	if (c < 0 || vn_cli_operands(&args, 2, -1, err) < 0)
		return args.exit;
	if ((rc = cp_operands(argc, argv, name, srcs, &n, &dst, &in, err)) < 0)
		return rc;
	_cleanup_agent_ struct vn_agent *a = NULL;
	if ((rc = vn_cli_agent(&args, name, &a, err)) < 0)
		return rc;
	o.progress = on_progress;
	o.data = &p;
	p.t0 = p.last = vn_now_s();
	rc = in ? vn_copy_in(a, srcs, n, dst, &o, &st, err) : vn_copy_out(a, srcs, n, dst, &o, &st, err);
	if (p.tty)
		fputs("\r\033[K", stderr);
	if (rc < 0)
		return rc;
	cp_print(&st, vn_now_s() - p.t0);
	return VN_EXIT_OK;
}

static const struct vn_cli_opt cp_opts[] = {
	{"recursive", 'r', true, NULL, VN_VAL_NONE, "copy directories, their modes kept"},
	{"preserve-mode", 'p', false, NULL, VN_VAL_NONE,
	 "out of a guest: the guest's permission bits as they\nare, not through the umask"},
	{"max-bytes", 'B', false, "SIZE", VN_VAL_NONE, "out of a guest: at most SIZE bytes of files (4G)"},
	{"max-files", 'F', false, "N", VN_VAL_NONE, "out of a guest: at most N files and directories\n(100000)"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_cp = {
	.name = "cp",
	.fn = cmd_cp,
	.summary = "copy files and directories into a guest or out of it, checksummed",
	.synopsis = "[-r] SRC... NAME:DST\n[-r] [--preserve-mode] [--max-bytes SIZE] [--max-files N] NAME:SRC... DST",
	.description = "Copies like docker cp: when DST is a directory each SRC goes inside it under its\n"
		       "own name, else the one SRC becomes DST. Guest paths are absolute. Files stream\n"
		       "through the agent in 1 MiB chunks, modes kept; each lands at a temporary name,\n"
		       "and is renamed into place once the guest's sha256sum of it equals the host's\n"
		       "digest of the bytes sent. A failed copy leaves nothing. An existing directory\n"
		       "is not merged into. Symlinks inside a tree are skipped.\n"
		       "\n"
		       "Out of a guest nothing it says is believed. Modes lose setuid and setgid bits\n"
		       "and go through the umask, as cp and tar do for a non-owner: a guest's 0777\n"
		       "lands as 0755 and its 01777 as 01755 under umask 022 (a directory keeps its\n"
		       "sticky bit); --preserve-mode keeps the permission bits as they are. Each file's\n"
		       "claimed size is checked against the host's free space and the --max-bytes\n"
		       "budget before it is read, and files and directories count against --max-files;\n"
		       "over either the copy stops, exits 3 and leaves nothing. A tree\n"
		       "stays 0700 at its temporary name until verified and renamed.\n"
		       "\n"
		       "A missing source exits 2; a full guest file system exits 3 and says so.\n"
		       "Progress on a terminal, then a summary line with the throughput.",
	.opts = cp_opts,
	.common = VN_CLI_GUEST,
	.operand = VN_VAL_FILE,
};
