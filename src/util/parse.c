#include "util/parse.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

unsigned vn_cpuset_count(const struct vn_cpuset *s)
{
	unsigned n = 0;

	for (size_t i = 0; i < VN_CPUSET_MAX / 64; i++)
		n += (unsigned)__builtin_popcountll(s->bits[i]);
	return n;
}

int vn_cpuset_first(const struct vn_cpuset *s)
{
	for (unsigned i = 0; i < VN_CPUSET_MAX; i++)
		if (vn_cpuset_has(s, i))
			return (int)i;
	return -1;
}

int vn_cpuset_last(const struct vn_cpuset *s)
{
	for (int i = VN_CPUSET_MAX - 1; i >= 0; i--)
		if (vn_cpuset_has(s, (unsigned)i))
			return i;
	return -1;
}

/* Reads one unsigned decimal at *p; no sign, no leading junk. */
static int parse_cpu_number(const char **p, unsigned *out)
{
	const char *s = *p;
	unsigned long v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v >= VN_CPUSET_MAX)
			return -ERANGE;
		s++;
	}
	*p = s;
	*out = (unsigned)v;
	return 0;
}

int vn_cpulist_parse(const char *text, struct vn_cpuset *out, struct vn_error *err)
{
	const char *p = text;

	memset(out, 0, sizeof(*out));
	while (*p == ' ')
		p++;
	if (*p == '\0')
		return 0;
	for (;;) {
		unsigned lo, hi;
		const char *start = p;
		int rc = parse_cpu_number(&p, &lo);

		if (rc == -ERANGE)
			return vn_input_error(err, "cpu number out of range (max %d) in cpulist '%s'",
					      VN_CPUSET_MAX - 1, text);
		if (rc < 0)
			return vn_input_error(err, "malformed cpulist '%s' at '%s'", text, start);
		hi = lo;
		if (*p == '-') {
			p++;
			rc = parse_cpu_number(&p, &hi);
			if (rc == -ERANGE)
				return vn_input_error(err, "cpu number out of range (max %d) in cpulist '%s'",
						      VN_CPUSET_MAX - 1, text);
			if (rc < 0)
				return vn_input_error(err, "malformed cpulist '%s' at '%s'", text, start);
			if (hi < lo)
				return vn_input_error(err, "descending range '%.*s' in cpulist '%s'", (int)(p - start),
						      start, text);
		}
		for (unsigned c = lo; c <= hi; c++) {
			if (vn_cpuset_has(out, c))
				return vn_input_error(err, "cpu %u listed twice in cpulist '%s'", c, text);
			vn_cpuset_set(out, c);
		}
		while (*p == ' ')
			p++;
		if (*p == '\0')
			return 0;
		if (*p != ',')
			return vn_input_error(err, "malformed cpulist '%s' at '%s'", text, p);
		p++;
		while (*p == ' ')
			p++;
	}
}

char *vn_cpulist_format(const struct vn_cpuset *s)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	int i = 0;
	bool first = true;

	while (i < VN_CPUSET_MAX) {
		if (!vn_cpuset_has(s, (unsigned)i)) {
			i++;
			continue;
		}
		int j = i;
		while (j + 1 < VN_CPUSET_MAX && vn_cpuset_has(s, (unsigned)j + 1))
			j++;
		vn_strbuf_printf(&b, "%s%d", first ? "" : ",", i);
		if (j > i)
			vn_strbuf_printf(&b, "-%d", j);
		first = false;
		i = j + 1;
	}
	return vn_strbuf_steal(&b);
}

int vn_size_parse(const char *text, uint64_t *bytes, struct vn_error *err)
{
	const char *p = text;
	uint64_t v = 0;
	unsigned shift = 0;

	while (*p == ' ')
		p++;
	if (*p == '-')
		return vn_input_error(err, "negative size '%s'", text);
	if (!isdigit((unsigned char)*p))
		return vn_input_error(err, "malformed size '%s' (want a number with K/M/G/T suffix)", text);
	while (isdigit((unsigned char)*p)) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return vn_input_error(err, "size '%s' overflows", text);
		v = v * 10 + d;
		p++;
	}
	switch (toupper((unsigned char)*p)) {
	case '\0': break;
	case 'K':
		shift = 10;
		p++;
		break;
	case 'M':
		shift = 20;
		p++;
		break;
	case 'G':
		shift = 30;
		p++;
		break;
	case 'T':
		shift = 40;
		p++;
		break;
	default: return vn_input_error(err, "unknown size suffix in '%s' (use K, M, G or T)", text);
	}
	if (shift && (*p == 'i' || *p == 'I'))
		p++;
	if (*p == 'B' || *p == 'b')
		p++;
	while (*p == ' ')
		p++;
	if (*p != '\0')
		return vn_input_error(err, "trailing junk in size '%s'", text);
	if (shift && v > (UINT64_MAX >> shift))
		return vn_input_error(err, "size '%s' overflows", text);
	*bytes = v << shift;
	return 0;
}

const char *vn_size_format(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (u < 3 && bytes && (bytes & 1023) == 0) {
		bytes >>= 10;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%" PRIu64, bytes);
	else
		snprintf(buf, len, "%" PRIu64 "%c", bytes, units[u]);
	return buf;
}

int vn_int_parse(const char *text, long min, long max, long *out, struct vn_error *err)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (end == text || *end != '\0' || errno == ERANGE)
		return vn_input_error(err, "'%s' is not an integer", text);
	if (v < min || v > max)
		return vn_input_error(err, "%ld is out of range %ld..%ld", v, min, max);
	*out = v;
	return 0;
}

int vn_duration_parse(const char *text, double max_s, double *out_s, struct vn_error *err)
{
	static const struct {
		const char *name;
		double s;
	} units[] = {{"", 1}, {"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600}};
	char max_text[32];
	const char *p = text;
	char *end;
	double v, scale = -1;

	snprintf(max_text, sizeof(max_text), "%.15g", max_s);
	/* strtod alone would take "inf", "nan", " 5", "+5" and "0x1p3". */
	if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
		goto bad;
	while (isdigit((unsigned char)*p) || *p == '.')
		p++;
	if ((*p == 'e' || *p == 'E') &&
	    (isdigit((unsigned char)p[1]) || ((p[1] == '-' || p[1] == '+') && isdigit((unsigned char)p[2])))) {
		p += 2;
		while (isdigit((unsigned char)*p))
			p++;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(p, units[i].name) == 0)
			scale = units[i].s;
	if (scale < 0)
		goto bad;
	v = strtod(text, &end);
	if (end != p)
		goto bad;
	v *= scale;
	if (!isfinite(v) || v <= 0 || v > max_s)
		return vn_input_error(err, "'%s' is out of range (more than 0, at most %s s)", text, max_text);
	*out_s = v;
	return 0;
bad:
	return vn_input_error(err, "'%s' is not a duration (seconds, or a number with ms, s, m or h; at most %s s)",
			      text, max_text);
}

int vn_count_parse(const char *text, uint64_t min, uint64_t max, uint64_t *out, struct vn_error *err)
{
	uint64_t v = 0;
	bool over = false;

	if (!*text)
		goto bad;
	for (const char *p = text; *p; p++) {
		if (!isdigit((unsigned char)*p))
			goto bad;
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			over = true;
		else
			v = v * 10 + d;
	}
	if (over || v < min || v > max)
		return vn_input_error(err, "'%s' is out of range %" PRIu64 "..%" PRIu64, text, min, max);
	*out = v;
	return 0;
bad:
	return vn_input_error(err, "'%s' is not a number (decimal digits, %" PRIu64 "..%" PRIu64 ")", text, min, max);
}

int vn_size_parse_range(const char *text, uint64_t min, uint64_t max, uint64_t *out, struct vn_error *err)
{
	char lo[32], hi[32];
	uint64_t v;
	int rc = vn_size_parse(text, &v, err);

	if (rc < 0)
		return rc;
	if (v < min || v > max)
		return vn_input_error(err, "size '%s' is out of range %s..%s", text,
				      vn_size_format(min, lo, sizeof(lo)), vn_size_format(max, hi, sizeof(hi)));
	*out = v;
	return 0;
}
