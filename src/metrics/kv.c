#include "metrics/kv.h"
#include "util/alloc.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
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

struct json_object *vn_metrics_delta(struct json_object *before, struct json_object *after)
{
	struct json_object *d = json_object_new_object();

	json_object_object_foreach(after, key, val)
	{
		struct json_object *b;
		if (!json_object_object_get_ex(before, key, &b))
			continue;
		json_object_object_add(d, key,
				       json_object_new_int64(json_object_get_int64(val) - json_object_get_int64(b)));
	}
	return d;
}
