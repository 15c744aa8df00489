/*
 * vnuma exec: a command in a running guest. Also linked into the light
 * front (front.c), so nothing here may need libvirt.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <termios.h>
#include <signal.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "guest/agent-exec.h"
#include "guest/agent-client.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/interrupt.h"

#define MAX_ENV 64
/* A month: longer is a typo, and the guest agent's deadline arithmetic stays far from overflow. */
#define EXEC_TIMEOUT_MAX_S (30.0 * 86400)

/* What exec's own options ask for. */
struct exec_args {
	double timeout;
	bool interactive, tty, as_user;
	unsigned uid, gid;
	const char *cwd;
	const char *env[MAX_ENV + 1];
	unsigned nenv;
};

static int exec_opt(struct vn_cli_args *a, int c, void *data, struct vn_error *err)
{
	struct exec_args *x = data;

	switch (c) {
	case 'T':
		if (vn_cli_duration(a, "timeout", optarg, EXEC_TIMEOUT_MAX_S, &x->timeout, err) < 0)
			return -1;
		break;
	case 'i': x->interactive = true; break;
	case 't': x->tty = true; break;
	case 'w': x->cwd = optarg; break;
	case 'e':
		if (!strchr(optarg, '=') || optarg[0] == '=')
			return vn_cli_bad_arg(a, "env", "is not KEY=VALUE", err);
		if (x->nenv == MAX_ENV)
			return vn_cli_bad_arg(a, "env", "is one too many (64 at most)", err);
		x->env[x->nenv++] = optarg;
		break;
	case 'u': {
		/* Numeric only: the guest has no user database the host could trust to name them. */
		_cleanup_free_ char *uid_text = vn_xstrdup(optarg);
		char *gid_text = strchr(uid_text, ':');
		uint64_t uid, gid;
		if (gid_text)
			*gid_text++ = '\0';
		if (vn_cli_count(a, "user", uid_text, 0, 65534, &uid, err) < 0)
			return -1;
		gid = uid;
		if (gid_text && vn_cli_count(a, "user", gid_text, 0, 65534, &gid, err) < 0)
			return -1;
		x->as_user = true, x->uid = (unsigned)uid, x->gid = (unsigned)gid;
		break;
	}
	}
	return 0;
}

static volatile sig_atomic_t winch;

static void on_winch(int sig)
{
	(void)sig;
	winch = 1;
}

/* The host terminal in raw mode while a guest terminal runs (every key goes to the guest), restored after. */
struct raw_term {
	int fd;
	struct termios saved;
};

static void raw_term_restore(struct raw_term *t)
{
	if (t->fd >= 0)
		tcsetattr(t->fd, TCSADRAIN, &t->saved);
}

static void raw_term_enter(struct raw_term *t, int fd)
{
	struct termios raw;

	t->fd = -1;
	if (!isatty(fd) || tcgetattr(fd, &t->saved) < 0)
		return;
	raw = t->saved;
	cfmakeraw(&raw);
	if (tcsetattr(fd, TCSADRAIN, &raw) == 0)
		t->fd = fd;
}

static int cmd_exec(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args args;
	struct exec_args x = {0};
	const char *name;
	int rc, status = 0;

	if (vn_cli_guest_args(&args, &vn_cmd_exec, argc, argv, exec_opt, &x, &name, err) < 0)
		return args.exit;
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		return vn_input_error(err, "missing the command to run (see 'vnuma exec --help')");
	_cleanup_agent_ struct vn_agent *a = NULL;
	if ((rc = vn_cli_agent(&args, name, &a, err)) < 0)
		return rc;
	/* A guest terminal takes the keyboard (a tty on stdin) like -i would. */
	bool in = x.interactive || (x.tty && isatty(STDIN_FILENO));
	struct vn_agent_exec_opts o = {
		.argv = (const char *const *)argv + optind,
		/* Only with -i: a command in a shell loop must not swallow the loop's input (ssh -n, docker exec). */
		.stdin_fd = in ? STDIN_FILENO : -1,
		.stdout_fd = STDOUT_FILENO,
		.stderr_fd = STDERR_FILENO,
		.timeout_s = x.timeout,
		.forward_signal = &vn_interrupted,
		.env = x.nenv ? x.env : NULL,
		.cwd = x.cwd,
		.as_user = x.as_user,
		.uid = x.uid,
		.gid = x.gid,
		.tty = x.tty,
		.winsize_fd = STDOUT_FILENO,
		.resized = &winch,
	};
	struct raw_term term = {.fd = -1};
	if (x.tty) {
		signal(SIGWINCH, on_winch);
		raw_term_enter(&term, STDIN_FILENO);
	}
	rc = vn_agent_exec(a, &o, &status, err);
	raw_term_restore(&term);
	if (rc < 0)
		return rc;
	return status;
}

static const struct vn_cli_opt exec_opts[] = {
	{"interactive", 'i', true, NULL, VN_VAL_NONE, "forward stdin to the command (otherwise it reads /dev/null)"},
	{"tty", 't', true, NULL, VN_VAL_NONE,
	 "a pseudo-terminal in the guest (full-screen programs: top, less);\n"
	 "the local terminal goes raw, keys and window size are passed on"},
	{"env", 'e', true, "K=V", VN_VAL_NONE, "set K in the command's environment (repeatable)"},
	{"cwd", 'w', true, "DIR", VN_VAL_DIR, "run in the guest directory DIR"},
	{"user", 'u', true, "UID[:GID]", VN_VAL_NONE, "run as this numeric user (and group; default: root)"},
	{"timeout", 'T', false, "S", VN_VAL_NONE,
	 "kill the command after S seconds (or 500ms, 10m, 2h; at most 30 days; default: no limit)"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_exec = {
	.name = "exec",
	.fn = cmd_exec,
	.summary = "run a command in a guest, mirroring its output and exit code",
	.synopsis = "[-i] [-t] [-e K=V]... [-w DIR] [-u UID[:GID]] [--timeout S] NAME -- CMD [ARGS...]",
	.description = "Runs CMD through the guest agent: its stdout and stderr arrive apart, Ctrl-C is\n"
		       "passed on, and vnuma exits with CMD's exit code. stdin is forwarded only with -i\n"
		       "(as docker exec -i), so a command in a shell 'while read' loop leaves the loop's\n"
		       "input alone; -t gives it a terminal (and the keyboard, when stdin is one). A\n"
		       "program the guest does not have is bad input (exit 2).",
	.opts = exec_opts,
	.common = VN_CLI_GUEST,
	.operand = VN_VAL_GUEST,
	.stop_at_operand = true,
};
