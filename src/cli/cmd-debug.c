/* vnuma debug and vnuma dump: looking inside a running guest's kernel. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "testbed/debug.h"
#include "testbed/dump.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/interrupt.h"
#include "util/name.h"
#include "util/spawn.h"

/* One argument as a shell would need it typed, so the printed command can be pasted. */
static void print_quoted(FILE *f, const char *s)
{
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=+,@") == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++)
		fputs(*s == '\'' ? "'\\''" : (char[]){*s, 0}, f);
	fputc('\'', f);
}

static void debug_print(const struct vn_gdbstub *g, char **argv)
{
	_cleanup_free_ char *target = vn_gdbstub_target(g);

	printf("%s\n", target);
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			putchar(' ');
		print_quoted(stdout, argv[i]);
	}
	putchar('\n');
	fflush(stdout);
}

static int debug_session(const struct vn_gdbstub *g, bool print_only, struct vn_error *err)
{
	_cleanup_strv_ char **argv = vn_gdbstub_gdb_argv(g);
	int rc;

	if (g->vmlinux.path)
		fprintf(stderr, "vmlinux: %s%s%s\n", g->vmlinux.path, g->vmlinux.gdb_py ? " (with " : "",
			g->vmlinux.gdb_py ? "vmlinux-gdb.py: lx-symbols, lx-dmesg)" : "");
	else
		fprintf(stderr, "%s; gdb reads memory by address meanwhile\n", g->vmlinux.hint);
	if (!print_only) {
		rc = vn_spawn_foreground((const char *const *)argv, err);
		return rc < 0 ? rc : 0;
	}
	debug_print(g, argv);
	fprintf(stderr, "the gdbstub listens until vnuma debug ends (Ctrl-C)\n");
	/* Polled, not pause()d: a signal between the check and pause() would be slept through. */
	while (!vn_was_interrupted())
		usleep(100 * 1000);
	vn_interrupted = 0;
	return 0;
}

static int cmd_debug(int argc, char **argv, struct vn_error *err)
{
	struct vn_gdbstub g;
	struct vn_cli_args args;
	struct vn_testbed_ctx ctx;
	struct vn_error e = {0};
	bool print_only = false, resumed = false;
	int c, rc, stop;

	vn_cli_args_init(&args, &vn_cmd_debug, argc, argv);
	while ((c = vn_cli_next(&args, err)) > 0)
		if (c == 'p')
			print_only = true;
	if (c < 0 || vn_cli_operands(&args, 1, 1, err) < 0)
		return args.exit;
	const char *name = argv[optind];
	if ((rc = vn_guest_name_check(name, err)) < 0 || (rc = vn_cli_ctx(&args, &ctx, err)) < 0)
		return rc;
	if ((rc = vn_testbed_gdbstub_start(&ctx, name, "", &g, err)) == 0) {
		fprintf(stderr, "gdbstub of %s on 127.0.0.1:%u\n", name, g.port);
		rc = debug_session(&g, print_only, err);
		/* Whatever gdb did, the stub goes; its own failure is reported unless gdb's comes first. */
		stop = vn_testbed_gdbstub_stop(&ctx, name, &resumed, rc < 0 ? &e : err);
		if (rc == 0 && stop < 0)
			rc = stop;
		else if (stop == 0)
			fprintf(stderr, "gdbstub of %s stopped%s\n", name,
				resumed ? "; the guest, left stopped, resumed" : "");
		vn_gdbstub_clear(&g);
	}
	vn_error_clear(&e);
	vn_testbed_ctx_clear(&ctx);
	return rc < 0 ? rc : VN_EXIT_OK;
}

static const struct vn_cli_opt debug_opts[] = {
	{"print", 'p', true, NULL, VN_VAL_NONE, "print the target remote line and the gdb command; run no gdb"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_debug = {
	.name = "debug",
	.fn = cmd_debug,
	.summary = "gdb on a running guest's kernel (QEMU's gdbstub, localhost)",
	.synopsis = "NAME [--print]",
	.description = "Starts QEMU's gdbstub on the guest (through libvirt's monitor, on a free port of\n"
		       "127.0.0.1) and runs gdb on the vmlinux of the kernel it booted, with the\n"
		       "kernel's gdb scripts (lx-symbols, lx-dmesg) where its build has them: a\n"
		       "recipe's vmlinux beside its bzImage, or for Debian's kernel the\n"
		       "linux-image-RELEASE-dbg package's. Without one gdb still reads memory by\n"
		       "address (/proc/kallsyms in the guest). --print prints the `target remote` line\n"
		       "and the gdb command instead, and waits for Ctrl-C. The guest runs on when gdb\n"
		       "detaches; the stub is stopped when vnuma debug ends. See docs/debugging.md.",
	.opts = debug_opts,
	.common = VN_CLI_GUEST,
	.operand = VN_VAL_GUEST,
};

static int cmd_dump(int argc, char **argv, struct vn_error *err)
{
	struct vn_dump_req q = {.debug_root = ""};
	_cleanup_free_ char *deflt = NULL;
	struct vn_dump_result r;
	struct vn_cli_args args;
	struct vn_testbed_ctx ctx;
	int c, rc;

	vn_cli_args_init(&args, &vn_cmd_dump, argc, argv);
	while ((c = vn_cli_next(&args, err)) > 0) {
		if (c == 'o')
			q.out = optarg;
		else if (c == 'f' && (rc = vn_dump_format_parse(optarg, &q.format, err)) < 0)
			return rc;
	}
	if (c < 0 || vn_cli_operands(&args, 1, 1, err) < 0)
		return args.exit;
	q.name = argv[optind];
	if ((rc = vn_guest_name_check(q.name, err)) < 0 || (rc = vn_cli_ctx(&args, &ctx, err)) < 0)
		return rc;
	if (!q.out) {
		char when[32];
		time_t now = time(NULL);
		struct tm tm;
		strftime(when, sizeof(when), "%Y%m%d-%H%M%S", gmtime_r(&now, &tm));
		q.out = deflt = vn_xasprintf("%s-%s.vmcore", q.name, when);
	}
	rc = vn_testbed_dump(&ctx, &q, &r, err);
	vn_testbed_ctx_clear(&ctx);
	if (rc < 0)
		return rc;
	printf("%s (%s, %" PRIu64 " MiB)\n%s\n", r.path, vn_dump_format_name(q.format), r.bytes >> 20, r.meta);
	if (r.vmlinux.path)
		printf("vmlinux %s%s%s\n", r.vmlinux.path, r.vmlinux.build_id ? " build id " : "",
		       r.vmlinux.build_id ? r.vmlinux.build_id : "");
	else
		fprintf(stderr, "%s\n", r.vmlinux.hint);
	vn_dump_result_clear(&r);
	return VN_EXIT_OK;
}

static const struct vn_cli_opt dump_opts[] = {
	{"output", 'o', true, "FILE", VN_VAL_FILE, "the dump (default NAME-TIME.vmcore here); FILE.json beside it"},
	{"format", 'f', true, "FMT", VN_VAL_NONE, "elf (default: crash and drgn read it) or kdump-zlib (smaller)"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_dump = {
	.name = "dump",
	.fn = cmd_dump,
	.summary = "memory-only dump of a running or panicked guest, for crash and drgn",
	.synopsis = "NAME [-o FILE] [--format elf|kdump-zlib]",
	.description = "Writes the guest's memory through libvirt (virDomainCoreDumpWithFormat,\n"
		       "memory only) into FILE, and FILE.json beside it: the kernel's identity, the\n"
		       "vmlinux with symbols it belongs to (path, build id) or how to get one, the\n"
		       "topology it booted, the time and the format. The free space of FILE's\n"
		       "directory is checked against the guest's memory first: too little is refused\n"
		       "(exit 3) before anything is written. The dump is written as FILE.partial and\n"
		       "renamed when whole. The guest pauses while QEMU writes, and runs on after.",
	.opts = dump_opts,
	.common = VN_CLI_GUEST,
	.operand = VN_VAL_GUEST,
};
