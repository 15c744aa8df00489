/*
 * The JSON writer: members and array elements appended to one buffer, with
 * the commas kept track of per depth, so callers write values, not syntax.
 */
#include "inguest/buf.h"
#include "inguest/json.h"
#include "inguest/prog.h"
#include "inguest/topo.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEPTH ((int)(sizeof(((struct ig_json *)0)->first) / sizeof(bool)))

void ig_json_init(struct ig_json *j)
{
	memset(j, 0, sizeof(*j));
	ig_json_reset(j);
}

void ig_json_reset(struct ig_json *j)
{
	ig_buf_clear(&j->b);
	j->depth = 0;
	j->first[0] = true;
}

void ig_json_free(struct ig_json *j)
{
	ig_buf_free(&j->b);
	memset(j, 0, sizeof(*j));
}

/* Length of the valid UTF-8 sequence at s (at most n bytes) starting with a byte >= 0x80, or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;

	if (c < 0xC2)
		return 0; /* continuation byte, or an overlong 2-byte lead */
	if (c < 0xE0) {
		len = 2;
		cp = c & 0x1F;
	} else if (c < 0xF0) {
		len = 3;
		cp = c & 0x0F;
	} else if (c < 0xF5) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0;
	return len;
}

void ig_json_escape(struct ig_buf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	ig_buf_add(b, "\"", 1);
	while (i < n) {
		size_t run = i;
		/* The common case, printable ASCII, in one copy. */
		while (run < n && s[run] >= 0x20 && s[run] < 0x7F && s[run] != '"' && s[run] != '\\')
			run++;
		if (run > i) {
			ig_buf_add(b, str + i, run - i);
			i = run;
			continue;
		}
		unsigned char c = s[i];
		size_t l;
		switch (c) {
		case '"': ig_buf_add(b, "\\\"", 2); break;
		case '\\': ig_buf_add(b, "\\\\", 2); break;
		case '\n': ig_buf_add(b, "\\n", 2); break;
		case '\r': ig_buf_add(b, "\\r", 2); break;
		case '\t': ig_buf_add(b, "\\t", 2); break;
		case '\b': ig_buf_add(b, "\\b", 2); break;
		case '\f': ig_buf_add(b, "\\f", 2); break;
		default:
			if (c < 0x80) { /* other control characters and DEL */
				ig_buf_printf(b, "\\u%04x", c);
			} else if ((l = utf8_len(s + i, n - i)) != 0) {
				ig_buf_add(b, str + i, l);
				i += l;
				continue;
			} else {
				ig_buf_add(b, "\\ufffd", 6); /* invalid byte */
			}
		}
		i++;
	}
	ig_buf_add(b, "\"", 1);
}

static void key(struct ig_json *j, const char *k)
{
	if (!j->first[j->depth])
		ig_buf_add(&j->b, ",", 1);
	j->first[j->depth] = false;
	if (k) {
		ig_json_escape(&j->b, k, strlen(k));
		ig_buf_add(&j->b, ":", 1);
	}
}

void ig_json_raw(struct ig_json *j, const char *k, size_t klen, const char *suffix, const char *text, size_t n)
{
	size_t slen = suffix ? strlen(suffix) : 0;

	if (!j->first[j->depth])
		ig_buf_add(&j->b, ",", 1);
	j->first[j->depth] = false;
	ig_buf_reserve(&j->b, klen + slen + n + 3);
	ig_buf_add(&j->b, "\"", 1);
	ig_buf_add(&j->b, k, klen);
	if (suffix)
		ig_buf_add(&j->b, suffix, slen);
	ig_buf_add(&j->b, "\":", 2);
	ig_buf_add(&j->b, text, n);
}

static void open_(struct ig_json *j, const char *k, const char *bracket)
{
	key(j, k);
	ig_buf_add(&j->b, bracket, 1);
	if (j->depth + 1 < MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

static void close_(struct ig_json *j, const char *bracket)
{
	ig_buf_add(&j->b, bracket, 1);
	if (j->depth > 0)
		j->depth--;
}

void ig_json_obj_begin(struct ig_json *j, const char *k)
{
	open_(j, k, "{");
}

void ig_json_obj_end(struct ig_json *j)
{
	close_(j, "}");
}

void ig_json_arr_begin(struct ig_json *j, const char *k)
{
	open_(j, k, "[");
}

void ig_json_arr_end(struct ig_json *j)
{
	close_(j, "]");
}

void ig_json_str(struct ig_json *j, const char *k, const char *v)
{
	if (v) {
		ig_json_str_n(j, k, v, strlen(v));
	} else {
		ig_json_null(j, k);
	}
}

void ig_json_str_n(struct ig_json *j, const char *k, const char *v, size_t n)
{
	key(j, k);
	ig_json_escape(&j->b, v, n);
}

void ig_json_int(struct ig_json *j, const char *k, long long v)
{
	key(j, k);
	ig_buf_printf(&j->b, "%lld", v);
}

void ig_json_uint(struct ig_json *j, const char *k, unsigned long long v)
{
	key(j, k);
	ig_buf_printf(&j->b, "%llu", v);
}

void ig_json_double(struct ig_json *j, const char *k, double v)
{
	key(j, k);
	if (!isfinite(v))
		ig_buf_add(&j->b, "null", 4);
	else
		ig_buf_printf(&j->b, "%.10g", v); /* may be "1e+20": valid JSON */
}

void ig_json_fixed(struct ig_json *j, const char *k, double v, int decimals)
{
	key(j, k);
	if (!isfinite(v))
		ig_buf_add(&j->b, "null", 4);
	else
		ig_buf_printf(&j->b, "%.*f", decimals, v);
}

void ig_json_bool(struct ig_json *j, const char *k, bool v)
{
	key(j, k);
	ig_buf_add(&j->b, v ? "true" : "false", v ? 4 : 5);
}

void ig_json_null(struct ig_json *j, const char *k)
{
	key(j, k);
	ig_buf_add(&j->b, "null", 4);
}

struct ig_json_mark ig_json_mark(const struct ig_json *j)
{
	return (struct ig_json_mark){.len = j->b.len, .depth = j->depth, .first = j->first[j->depth]};
}

void ig_json_rewind(struct ig_json *j, struct ig_json_mark m)
{
	j->b.len = m.len;
	j->b.s[m.len] = '\0';
	j->depth = m.depth;
	j->first[m.depth] = m.first;
}

/*
 * {"N":value,...} over the online nodes and any other with a count: a node
 * the topology missed still shows where its counts went. The value is the
 * count, or with shares its part of all counts.
 */
static void node_members(struct ig_json *j, const char *k, const struct ig_topo *t, const uint64_t *counts, bool shares)
{
	uint64_t total = 0;
	char name[16];

	for (int n = 0; shares && n < VN_MAX_NODES; n++)
		total += counts[n];
	ig_json_obj_begin(j, k);
	for (int n = 0; n < VN_MAX_NODES; n++) {
		if (!(n < t->nr_nodes && t->online[n]) && !counts[n])
			continue;
		snprintf(name, sizeof(name), "%d", n);
		if (shares)
			ig_json_double(j, name, total ? (double)counts[n] / (double)total : 0);
		else
			ig_json_uint(j, name, counts[n]);
	}
	ig_json_obj_end(j);
}

void ig_json_node_counts(struct ig_json *j, const char *k, const struct ig_topo *t, const uint64_t *counts)
{
	node_members(j, k, t, counts, false);
}

void ig_json_node_shares(struct ig_json *j, const char *k, const struct ig_topo *t, const uint64_t *counts)
{
	node_members(j, k, t, counts, true);
}

void ig_json_time(struct ig_json *j, const char *key, double v)
{
	if (v >= 0)
		ig_json_double(j, key, v);
	else
		ig_json_null(j, key);
}

void ig_json_result_begin(struct ig_json *j, const struct ig_topo *t)
{
	int nodes = 0;

	ig_json_init(j);
	ig_json_obj_begin(j, NULL);
	for (int n = 0; n < t->nr_nodes; n++)
		nodes += t->online[n];
	ig_json_str(j, "workload", ig_workload);
	ig_json_int(j, "version", 1);
	ig_json_int(j, "pid", getpid());
	ig_json_int(j, "nodes", nodes);
	ig_json_int(j, "cpus", t->nr_cpus);
	ig_json_bool(j, "numa", t->numa);
}

void ig_json_result_end(struct ig_json *j)
{
	int r;

	ig_json_obj_end(j);
	r = ig_json_print(j);
	ig_json_free(j);
	if (r < 0)
		ig_die(IG_EXIT_ENV, -r, "writing the result");
}

int ig_json_print(struct ig_json *j)
{
	int r;

	fflush(stdout);
	ig_buf_add(&j->b, "\n", 1);
	r = ig_write_all(STDOUT_FILENO, j->b.s, j->b.len);
	j->b.len--;
	j->b.s[j->b.len] = '\0';
	return r;
}
