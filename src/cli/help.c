/*
 * Help, the man page and getopt tables, all made from the command records
 * (struct vn_cmd), so `vnuma CMD --help`, vnuma(1) and the parser agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "topology/fallback.h"

static const struct vn_cli_opt help_opt = {"help", 'h', true, NULL, VN_VAL_NONE, "print this help and exit"};

/* The common options, in the order of their VN_CLI_* bits. */
static const struct vn_cli_opt common_opts[] = {
	{"state-dir", 'S', false, "DIR", VN_VAL_DIR,
	 "state directory (default $VNUMA_STATE_DIR, else\n"
	 "$XDG_STATE_HOME/vnuma, /var/lib/vnuma as root, ~/.local/state/vnuma)"},
	{"connect", 'C', false, "URI", VN_VAL_NONE, "libvirt URI (default $VNUMA_URI, else qemu:///embed)"},
};

const struct vn_cli_opt *vn_cli_opt_at(const struct vn_cmd *cmd, size_t i)
{
	for (const struct vn_cli_opt *o = cmd->opts; o && o->name; o++, i--)
		if (i == 0)
			return o;
	for (size_t k = 0; k < sizeof(common_opts) / sizeof(common_opts[0]); k++)
		if ((cmd->common & (1u << k)) && i-- == 0)
			return &common_opts[k];
	return NULL;
}

static const struct {
	int code;
	const char *meaning;
} exit_codes[] = {
	{VN_EXIT_OK, "success; every assertion about the kernel held"},
	{VN_EXIT_ASSERT,
	 "an assertion about the kernel failed (e.g. the guest's fallback lists differ from the model)"},
	{VN_EXIT_INPUT, "bad input: a bad option, or a bad file (the message names FILE:LINE or the value)"},
	{VN_EXIT_INFRA, "infrastructure failure: could not boot, libvirt error, timeout (the console tail is printed)"},
};

static const struct {
	const char *name, *meaning;
} environment[] = {
	{"VNUMA_STATE_DIR", "state directory: guests, caches, the embedded libvirt root (else $XDG_STATE_HOME/vnuma, "
			    "/var/lib/vnuma as root, ~/.local/state/vnuma)"},
	{"VNUMA_URI", "libvirt URI (default: libvirt's embedded QEMU driver, qemu:///embed?root=STATE/libvirt)"},
	{"VNUMA_ACCEL", "tcg or kvm: force the accelerator instead of probing"},
	{"VNUMA_BOOT", "bzimage: boot the bzImage under SeaBIOS instead of the kernel's own PVH vmlinux under qboot "
		       "(the default, proven per kernel); pvh: try PVH even where it stalled before"},
	{"VNUMA_KERNELS_DIR", "also look kernel recipe names up in this directory (before ./kernels)"},
	{"VNUMA_HELPER_DIR", "take the in-guest programs (vnuma-agent, vnuma-sample, vnuma-wl-*) from this directory"},
};

void vn_cli_getopt_init(struct vn_cli_getopt *g, const struct vn_cmd *cmd)
{
	size_t n = 0, k = 0;

	memset(g, 0, sizeof(*g));
	if (cmd->stop_at_operand)
		g->so[k++] = '+';
	for (const struct vn_cli_opt *o; (o = vn_cli_opt_at(cmd, n)); n++) {
		if (n == VN_CLI_MAX_OPTS) {
			fprintf(stderr, "vnuma %s: more than VN_CLI_MAX_OPTS options; raise it in cli.h\n", cmd->name);
			abort();
		}
		g->lo[n] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL, o->val};
		if (o->has_short) {
			g->so[k++] = (char)o->val;
			if (o->arg)
				g->so[k++] = ':';
		}
	}
	g->lo[n] = (struct option){help_opt.name, no_argument, NULL, help_opt.val};
	g->so[k++] = 'h';
}

/* "-k, --kernel K" or "    --name N" */
static int opt_label(char *buf, size_t size, const struct vn_cli_opt *o)
{
	char sh[8] = "    ";

	if (o->has_short)
		snprintf(sh, sizeof(sh), "-%c, ", o->val);
	return snprintf(buf, size, "%s--%s%s%s", sh, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

static void usage_opt(FILE *out, const struct vn_cli_opt *o)
{
	char label[64];
	int w = opt_label(label, sizeof(label), o);

	fprintf(out, "  %s%*s", label, w < 22 ? 22 - w : 1, "");
	for (const char *p = o->help; *p; p++) {
		fputc(*p, out);
		if (*p == '\n')
			fprintf(out, "%24s", "");
	}
	fputc('\n', out);
	if (o->value == VN_VAL_MODEL) {
		for (const struct vn_fallback_model_info *m = vn_fallback_models; m->name; m++)
			fprintf(out, "%26s%-9s %s%s\n%36saliases: %s\n", "", m->name, m->kernels,
				m->model == VN_FALLBACK_DEFAULT ? " (the default)" : "", "", m->aliases);
	}
}

static void usage_opts(FILE *out, const struct vn_cmd *c)
{
	const struct vn_cli_opt *o;

	for (size_t i = 0; (o = vn_cli_opt_at(c, i)); i++)
		usage_opt(out, o);
}

/* Each synopsis form prefixed by "usage: vnuma NAME" (or "       vnuma NAME"). */
static void usage_synopsis(FILE *out, const char *group, const struct vn_cmd *c, bool *first)
{
	const char *s = c->synopsis ? c->synopsis : "";

	do {
		size_t n = strcspn(s, "\n");
		fprintf(out, "%s vnuma %s%s%s%s%.*s\n", *first ? "usage:" : "      ", group ? group : "",
			group ? " " : "", c->name, n ? " " : "", (int)n, s);
		*first = false;
		s += n;
	} while (*s++);
}

void vn_cli_usage(FILE *out, const struct vn_cmd *cmd)
{
	bool first = true;

	if (cmd->subs) {
		for (const struct vn_cmd *const *s = cmd->subs; *s; s++)
			usage_synopsis(out, cmd->name, *s, &first);
	} else {
		usage_synopsis(out, NULL, cmd, &first);
	}
	if (cmd->description)
		fprintf(out, "\n%s\n", cmd->description);
	for (const struct vn_cmd *const *s = cmd->subs; s && *s; s++) {
		fprintf(out, "\n%s %s: %s\n", cmd->name, (*s)->name, (*s)->summary);
		if ((*s)->description)
			fprintf(out, "%s\n", (*s)->description);
		usage_opts(out, *s);
	}
	if (!cmd->subs)
		fprintf(out, "\n");
	usage_opts(out, cmd);
	usage_opt(out, &help_opt);
}

void vn_cli_main_usage(FILE *out)
{
	fprintf(out, "usage: vnuma <command> [options]\n\n"
		     "Virtual NUMA testbeds: boot stock or patched kernels on any node shape under\n"
		     "QEMU/libvirt and check what the kernel does with it.\n\ncommands:\n");
	for (const struct vn_cmd *const *c = vn_cli_commands; *c; c++)
		if (!(*c)->hidden)
			fprintf(out, "  %-10s %s\n", (*c)->name, (*c)->summary);
	fprintf(out, "\nRun 'vnuma <command> --help' for a command's options, 'man vnuma' for all of it.\nExit codes:");
	for (size_t i = 0; i < sizeof(exit_codes) / sizeof(exit_codes[0]); i++) {
		size_t n = strcspn(exit_codes[i].meaning, ";:(");
		while (n && exit_codes[i].meaning[n - 1] == ' ')
			n--;
		fprintf(out, "%s %d %.*s", i ? "," : "", exit_codes[i].code, (int)n, exit_codes[i].meaning);
	}
	fprintf(out, ".\n");
}

int vn_cli_run(const struct vn_cmd *cmd, int argc, char **argv, struct vn_error *err)
{
	char names[256] = "";

	if (!cmd->subs)
		return cmd->fn(argc, argv, err);
	if (argc < 2 || vn_cli_wants_help(argc, argv)) {
		vn_cli_usage(argc < 2 ? stderr : stdout, cmd);
		return argc < 2 ? VN_EXIT_INPUT : VN_EXIT_OK;
	}
	for (const struct vn_cmd *const *s = cmd->subs; *s; s++) {
		if (strcmp(argv[1], (*s)->name) == 0)
			return vn_cli_run(*s, argc - 1, argv + 1, err);
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", s == cmd->subs ? "" : ", ",
			 (*s)->name);
	}
	return vn_input_error(err, "unknown %s subcommand '%s' (%s)", cmd->name, argv[1], names);
}

/* man(7) text: escapes, and a '.' or '\'' starting a line made literal. */
static void man_text(FILE *out, const char *s, size_t n)
{
	bool bol = true;

	for (size_t i = 0; i < n && s[i]; i++) {
		char c = s[i];
		if (bol && (c == '.' || c == '\''))
			fputs("\\&", out);
		if (c == '\\')
			fputs("\\e", out);
		else if (c == '-')
			fputs("\\-", out);
		else
			fputc(c, out);
		bol = c == '\n';
	}
}

/* Paragraphs (blank-line separated) of pre-wrapped text; indented lines kept as they are. */
static void man_paragraphs(FILE *out, const char *s)
{
	while (*s) {
		size_t n = strcspn(s, "\n");
		if (n == 0) {
			fputs(".PP\n", out);
		} else if (s[0] == ' ') {
			fputs(".nf\n", out);
			man_text(out, s, n);
			fputs("\n.fi\n", out);
		} else {
			man_text(out, s, n);
			fputc('\n', out);
		}
		s += n;
		if (*s)
			s++;
	}
}

static void man_opts(FILE *out, const struct vn_cmd *c)
{
	const struct vn_cli_opt *o;

	for (size_t i = 0; (o = vn_cli_opt_at(c, i)); i++) {
		fputs(".TP\n.B ", out);
		if (o->has_short)
			fprintf(out, "\\-%c\\fR, \\fB", o->val);
		fputs("\\-\\-", out);
		man_text(out, o->name, strlen(o->name));
		if (o->arg) {
			fputs(" \\fI", out);
			man_text(out, o->arg, strlen(o->arg));
			fputs("\\fR", out);
		}
		fputc('\n', out);
		/* Option help is wrapped for the terminal; let roff fill it. */
		for (const char *p = o->help; *p;) {
			size_t n = strcspn(p, "\n");
			man_text(out, p, n);
			fputc('\n', out);
			p += n + (p[n] == '\n');
		}
		if (o->value == VN_VAL_MODEL) {
			for (const struct vn_fallback_model_info *m = vn_fallback_models; m->name; m++) {
				fputs(".RS\n.TP\n.B ", out);
				man_text(out, m->name, strlen(m->name));
				fputc('\n', out);
				man_text(out, m->kernels, strlen(m->kernels));
				fprintf(out, "%s (aliases: ", m->model == VN_FALLBACK_DEFAULT ? ", the default" : "");
				man_text(out, m->aliases, strlen(m->aliases));
				fputs("); ", out);
				man_text(out, m->source, strlen(m->source));
				fputs("\n.RE\n", out);
			}
		}
	}
}

static void man_synopsis(FILE *out, const char *group, const struct vn_cmd *c)
{
	const char *s = c->synopsis ? c->synopsis : "";

	do {
		size_t n = strcspn(s, "\n");
		fprintf(out, "\\fBvnuma %s%s%s\\fR ", group ? group : "", group ? " " : "", c->name);
		man_text(out, s, n);
		fputs("\n.br\n", out);
		s += n;
	} while (*s++);
}

static void man_cmd(FILE *out, const char *group, const struct vn_cmd *c)
{
	fprintf(out, group ? ".TP\n.B %s %s\n" : ".SS %s%s\n", group ? group : "", c->name);
	if (group) {
		man_text(out, c->summary, strlen(c->summary));
		fputs(".\n.br\n", out);
	}
	man_synopsis(out, group, c);
	if (!group) {
		man_text(out, c->summary, strlen(c->summary));
		fputs(".\n", out);
	}
	if (c->description) {
		fputs(".PP\n", out);
		man_paragraphs(out, c->description);
	}
	if (group) {
		fputs(".RS\n", out);
		man_opts(out, c);
		fputs(".RE\n", out);
	} else {
		man_opts(out, c);
	}
}

/* fn for every listed command and subcommand; a command group itself only when with_groups. */
static void man_each(FILE *out, bool with_groups, void (*fn)(FILE *, const char *, const struct vn_cmd *))
{
	for (const struct vn_cmd *const *c = vn_cli_commands; *c; c++) {
		if ((*c)->hidden)
			continue;
		if (!(*c)->subs || with_groups)
			fn(out, NULL, *c);
		for (const struct vn_cmd *const *s = (*c)->subs; s && *s; s++)
			fn(out, (*c)->name, *s);
	}
}

void vn_cli_man(FILE *out)
{
	fprintf(out,
		".\\\" Generated by 'vnuma help --man' from the command table in src/cli; do not edit.\n"
		".TH VNUMA 1 \"\" \"vnuma %s\" \"User Commands\"\n"
		".nh\n.ad l\n"
		".SH NAME\nvnuma \\- virtual NUMA testbeds for kernel developers\n"
		".SH SYNOPSIS\n",
		VN_VERSION);
	man_each(out, false, man_synopsis);
	fputs("\\fBvnuma \\-\\-version\\fR\n"
	      ".SH DESCRIPTION\n"
	      "vnuma defines 2\\-, 4\\-, 8\\-node (or any) machine shapes with arbitrary ACPI SLIT distance\n"
	      "matrices, boots stock or patched guest kernels on them under QEMU through libvirt,\n"
	      "and checks what the kernel does with them: fallback lists, distances, CPU placement,\n"
	      "automatic NUMA balancing.\n"
	      ".PP\n"
	      "A TOPOLOGY, SCENARIO or kernel RECIPE is a file, or a name without a '/' that is\n"
	      "looked up as NAME.xml (NAME.json) in ./topologies (./scenarios, ./kernels), then\n"
	      "among the shipped files in the data directory (see FILES).\n"
	      "Every command takes \\fB\\-\\-help\\fR.\n"
	      ".SH COMMANDS\n",
	      out);
	man_each(out, true, man_cmd);
	fputs(".SH EXIT STATUS\n", out);
	for (size_t i = 0; i < sizeof(exit_codes) / sizeof(exit_codes[0]); i++) {
		fprintf(out, ".TP\n.B %d\n", exit_codes[i].code);
		man_text(out, exit_codes[i].meaning, strlen(exit_codes[i].meaning));
		fputc('\n', out);
	}
	fputs(".SH ENVIRONMENT\n", out);
	for (size_t i = 0; i < sizeof(environment) / sizeof(environment[0]); i++) {
		fprintf(out, ".TP\n.B %s\n", environment[i].name);
		man_text(out, environment[i].meaning, strlen(environment[i].meaning));
		fputc('\n', out);
	}
	fputs(".SH FILES\n"
	      ".TP\n.I PREFIX/share/vnuma/topologies, scenarios, kernels\n"
	      "The shipped topologies, scenarios and kernel recipes, found relative to the vnuma\n"
	      "executable (PREFIX/bin/vnuma); run from a build tree, the source tree's.\n"
	      ".TP\n.I PREFIX/libexec/vnuma\n"
	      "The in\\-guest programs packed into every guest: vnuma\\-agent, vnuma\\-sample, vnuma\\-wl\\-*.\n"
	      ".TP\n.I STATE/guests/NAME\n"
	      "A running guest: console.log, agent.sock, the domain XML.\n"
	      ".TP\n.I STATE/cache\n"
	      "Guest initramfs images and kernels built from recipes, keyed by content hash.\n"
	      ".SH SEE ALSO\n"
	      ".BR numactl (8),\n.BR virsh (1),\n.BR qemu\\-system\\-x86_64 (1)\n",
	      out);
}
