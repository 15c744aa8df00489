#include "metrics/kv.h"
#include "util/alloc.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int vn_metrics_parse_kv(const char *text, struct json_object **out, struct vn_error *err)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		vn_oom();
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		char buf[512], key[256];
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = '\0';
		line = eol ? eol + 1 : NULL;

		char *p = buf;
		/* Per-node meminfo prefixes every line with "Node N ". */
		if (strncmp(p, "Node ", 5) == 0) {
			p += 5;
			while (isdigit((unsigned char)*p))
				p++;
			while (*p == ' ')
				p++;
		}
		size_t k = 0;
		while (*p && *p != ' ' && *p != ':' && *p != '\t' && k < sizeof(key) - 4)
			key[k++] = *p++;
		key[k] = '\0';
		while (*p == ':' || *p == ' ' || *p == '\t')
			p++;
		if (!k || !isdigit((unsigned char)*p))
			continue;
		char *end;
		errno = 0;
		unsigned long long v = strtoull(p, &end, 10);
		if (errno)
			continue;
		while (*end == ' ')
			end++;
		if (strncmp(end, "kB", 2) == 0)
			strcat(key, "_kB");
		json_object_object_add(o, key, json_object_new_int64((int64_t)v));
	}
	*out = o;
	return 0;
}

enum vn_counter_delta vn_metrics_counter_delta(struct json_object *before, struct json_object *after, const char *key,
					       double *out)
{
	struct json_object *b = NULL, *a = NULL;
	bool hb = json_object_object_get_ex(before, key, &b), ha = json_object_object_get_ex(after, key, &a);

	if (!hb || !ha)
		return hb ? VN_DELTA_BEFORE_ONLY : ha ? VN_DELTA_AFTER_ONLY : VN_DELTA_NEITHER;
	if (!json_object_is_type(b, json_type_int) || !json_object_is_type(a, json_type_int))
		return VN_DELTA_NOT_INT;
	int64_t vb = json_object_get_int64(b), va = json_object_get_int64(a), d;
	*out = __builtin_sub_overflow(va, vb, &d) ? (double)va - (double)vb : (double)d;
	return VN_DELTA_OK;
}
