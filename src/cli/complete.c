/*
 * vnuma complete CWORD WORD...: the candidates for bash completion
 * (share/bash-completion/completions/vnuma), one per line, from the same
 * command records as --help and the man page. WORD... are COMP_WORDS (the
 * first is vnuma itself) and CWORD is COMP_CWORD. A line "@files" or "@dirs"
 * asks the shell to add file or directory names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "testbed/testbed.h"
#include "topology/fallback.h"
#include "util/cleanup.h"
#include "util/parse.h"
#include "util/paths.h"

struct cand {
	const char *cur; /* the word being completed */
};

static void offer(const struct cand *k, const char *word)
{
	if (strncmp(word, k->cur, strlen(k->cur)) == 0)
		printf("%s\n", word);
}

static void offer_names(const struct cand *k, const char *subdir, const char *ext)
{
	_cleanup_strv_ char **names = NULL;

	if (vn_paths_list(subdir, ext, &names) < 0)
		return;
	for (char **n = names; *n; n++)
		offer(k, *n);
}

static void offer_value(const struct cand *k, enum vn_cli_value v, const char *state_dir)
{
	switch (v) {
	case VN_VAL_NONE: break;
	case VN_VAL_FILE: printf("@files\n"); break;
	case VN_VAL_DIR: printf("@dirs\n"); break;
	case VN_VAL_TOPOLOGY:
		offer_names(k, "topologies", ".xml");
		printf("@files\n");
		break;
	case VN_VAL_SCENARIO:
		offer_names(k, "scenarios", ".json");
		printf("@files\n");
		break;
	case VN_VAL_KERNEL: {
		_cleanup_strv_ char **names = NULL;
		bool stock = false;
		if (vn_paths_list("kernels", ".json", &names) >= 0)
			for (char **n = names; *n; n++) {
				stock |= strcmp(*n, "stock") == 0;
				offer(k, *n);
			}
		if (!stock)
			offer(k, "stock");
		printf("@files\n");
		break;
	}
	case VN_VAL_GUEST: {
		_cleanup_strv_ char **names = NULL;
		struct vn_error e = {0};
		if (vn_testbed_guest_names(state_dir, &names, &e) >= 0)
			for (char **n = names; *n; n++)
				offer(k, *n);
		vn_error_clear(&e);
		break;
	}
	case VN_VAL_MODEL:
		for (const struct vn_fallback_model_info *m = vn_fallback_models; m->name; m++)
			offer(k, m->name);
		break;
	case VN_VAL_COMMAND:
		for (const struct vn_cmd *const *c = vn_cli_commands; *c; c++)
			if (!(*c)->hidden)
				offer(k, (*c)->name);
		break;
	}
}

static const struct vn_cli_opt *find_opt(const struct vn_cmd *c, const char *word)
{
	const struct vn_cli_opt *o;

	for (size_t i = 0; (o = vn_cli_opt_at(c, i)); i++) {
		if (word[0] == '-' && word[1] == '-' && strcmp(word + 2, o->name) == 0)
			return o;
		if (o->has_short && word[0] == '-' && word[1] == o->val && !word[2])
			return o;
	}
	return NULL;
}

static const struct vn_cmd *find_sub(const struct vn_cmd *const *list, const char *name)
{
	for (; list && *list; list++)
		if (strcmp((*list)->name, name) == 0)
			return *list;
	return NULL;
}

/* The candidates after command c's name (words from first on): an option's value, an option, an operand. */
static void complete_args(struct cand *k, const struct vn_cmd *c, char **words, int nwords, int first, long cword)
{
	/* What the words before the cursor already say. */
	const char *state_dir = NULL;
	int operands = 0;
	for (int i = first; i < cword && i < nwords; i++) {
		const struct vn_cli_opt *o = find_opt(c, words[i]);
		if (strcmp(words[i], "--") == 0)
			return; /* the guest command's own words */
		if (o && o->arg) {
			if (i + 1 == cword) {
				offer_value(k, o->value, state_dir);
				return;
			}
			if (o->val == 'S' && i + 1 < nwords)
				state_dir = words[i + 1];
			i++;
		} else if (words[i][0] != '-') {
			operands++;
		}
	}
	if (k->cur[0] == '-') {
		const struct vn_cli_opt *o;
		for (size_t i = 0; (o = vn_cli_opt_at(c, i)); i++) {
			char buf[64];
			snprintf(buf, sizeof(buf), "--%s", o->name);
			offer(k, buf);
		}
		offer(k, "--help");
		if (c->stop_at_operand && operands)
			offer(k, "--");
		return;
	}
	/* exec NAME <TAB>: what follows is the guest's command, after "--". */
	if (c->stop_at_operand && operands) {
		offer(k, "--");
		return;
	}
	offer_value(k, c->operand, state_dir);
}

static int cmd_complete(int argc, char **argv, struct vn_error *err)
{
	long cword;
	int rc;

	if (argc < 3)
		return vn_input_error(err, "usage: vnuma complete CWORD WORD... (for the bash completion)");
	if ((rc = vn_int_parse(argv[1], 0, 1000, &cword, err)) < 0)
		return vn_error_prefix(err, "CWORD");
	char **words = argv + 2;
	int nwords = argc - 2;
	struct cand k = {cword < nwords ? words[cword] : ""};

	if (cword == 0)
		return VN_EXIT_OK;
	if (cword == 1) {
		offer_value(&k, VN_VAL_COMMAND, NULL);
		return VN_EXIT_OK;
	}
	const struct vn_cmd *c = find_sub(vn_cli_commands, words[1]);
	int first = 2;
	if (!c || c->hidden)
		return VN_EXIT_OK;
	if (c->subs) {
		if (cword == 2) {
			for (const struct vn_cmd *const *s = c->subs; *s; s++)
				offer(&k, (*s)->name);
			return VN_EXIT_OK;
		}
		if (!(c = find_sub(c->subs, words[2])))
			return VN_EXIT_OK;
		first = 3;
	}

	complete_args(&k, c, words, nwords, first, cword);
	return VN_EXIT_OK;
}

const struct vn_cmd vn_cmd_complete = {
	.name = "complete",
	.fn = cmd_complete,
	.summary = "candidates for bash completion",
	.synopsis = "CWORD WORD...",
	.hidden = true,
};
