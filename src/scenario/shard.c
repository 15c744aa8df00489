/*
 * A matrix cut into slices (vnuma run --shard I/N; scenario/shard.h): which
 * runs a slice takes, and the identity that tells the slices of one matrix
 * from those of another when vnuma compare merges them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/matrix-priv.h"
#include "scenario/shard.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/parse.h"
#include "util/sha256.h"

int vn_shard_parse(const char *text, struct vn_shard *out, struct vn_error *err)
{
	const char *slash = strchr(text, '/');
	uint64_t i = 0, n = 0;
	struct vn_error e = {0};

	*out = (struct vn_shard){0};
	if (slash) {
		_cleanup_free_ char *head = vn_xstrndup(text, (size_t)(slash - text));
		if (vn_count_parse(head, 1, VN_SHARD_MAX, &i, &e) < 0 ||
		    vn_count_parse(slash + 1, 1, VN_SHARD_MAX, &n, &e) < 0)
			i = n = 0;
		vn_error_clear(&e);
	}
	if (!slash || n < 1 || n > VN_SHARD_MAX || i < 1 || i > n)
		return vn_input_error(err,
				      "--shard \"%s\": expected I/N, the I-th of N slices (1 <= I <= N <= %u), "
				      "as in 1/4",
				      text, VN_SHARD_MAX);
	*out = (struct vn_shard){.index = (unsigned)i, .count = (unsigned)n};
	return 0;
}

void vn_shard_slice(const struct vn_shard *sh, unsigned total, unsigned *first, unsigned *end)
{
	if (!sh->count) {
		*first = 0;
		*end = total;
		return;
	}
	*first = (unsigned)((uint64_t)(sh->index - 1) * total / sh->count);
	*end = (unsigned)((uint64_t)sh->index * total / sh->count);
}

static void hash_str(struct vn_sha256 *h, const char *key, const char *value)
{
	/* Each string with its length: "a" "bc" and "ab" "c" hash apart. */
	_cleanup_free_ char *s = vn_xasprintf("%s %zu:%s\n", key, value ? strlen(value) : 0, value ? value : "(null)");
	vn_sha256_update(h, s, strlen(s));
}

/*
 * What makes two groups slices of one matrix: the same scenario file, the
 * same variants as group.json lists them, the same repeats, and the same
 * options that change every run.
 */
static int matrix_identity(const struct group *g, char hex[VN_SHA256_HEX_LEN + 1], struct vn_error *err)
{
	_cleanup_(vn_result_group_clear) struct vn_result_group value = {0};
	uint8_t d[VN_SHA256_LEN];
	char file[VN_SHA256_HEX_LEN + 1], buf[128];
	struct vn_sha256 h;
	int rc;

	if ((rc = vn_sha256_file(g->s->path, d, err)) < 0)
		return rc;
	vn_sha256_init(&h);
	hash_str(&h, "scenario", vn_sha256_hex(d, file));
	snprintf(buf, sizeof(buf), "repeats=%u quick=%d virtual_time=%d locality=%d cold=%d", g->repeats,
		 g->o->run.quick, g->o->run.virtual_time, g->o->run.locality || g->s->locality, g->o->run.cold);
	hash_str(&h, "runs", buf);
	hash_str(&h, "arch", g->s->arch);
	vn_matrix_group_value(g, &value);
	for (unsigned i = 0; i < value.nvariants; i++) {
		const struct vn_result_group_variant *v = &value.variants[i];
		hash_str(&h, "variant", v->name);
		hash_str(&h, "kernel", v->kernel);
		hash_str(&h, "append", v->append);
		for (unsigned k = 0; k < v->nsysctls; k++) {
			hash_str(&h, "sysctl", v->sysctls[k].key);
			hash_str(&h, "value", v->sysctls[k].value);
		}
	}
	vn_sha256_final(&h, d);
	vn_sha256_hex(d, hex);
	return 0;
}

int vn_matrix_shard(struct group *g, struct vn_error *err)
{
	const struct vn_shard *sh = &g->o->shard;
	char hex[VN_SHA256_HEX_LEN + 1];
	unsigned first, end;
	int rc;

	if (!sh->count)
		return 0;
	if (g->o->repeats_auto)
		return vn_input_error(err, "--shard %u/%u: not with --repeats auto, whose rounds a slice cannot know",
				      sh->index, sh->count);
	if (sh->count > g->ncells)
		return vn_input_error(err,
				      "--shard %u/%u: the matrix has %u runs (%u variants x %u repeats), fewer than "
				      "%u slices: some would be empty",
				      sh->index, sh->count, g->ncells, g->s->nvariants, g->repeats, sh->count);
	if ((rc = matrix_identity(g, hex, err)) < 0)
		return rc;
	vn_shard_slice(sh, g->ncells, &first, &end);
	for (unsigned k = 0; k < g->ncells; k++)
		if (k < first || k >= end)
			vn_free_all(g->cells[k].variant, g->cells[k].dir);
	memmove(g->cells, g->cells + first, (end - first) * sizeof(*g->cells));
	g->shard = (struct vn_result_group_shard){
		.index = sh->index, .count = sh->count, .runs = g->ncells, .matrix = vn_xstrdup(hex)};
	g->ncells = end - first;
	return 0;
}
