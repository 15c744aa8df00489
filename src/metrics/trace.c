/*
 * tracefs text: an event's format file and trace_pipe lines. See trace.h.
 */
#include "metrics/trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* s[0..n) an unsigned decimal below 2^32 into *out. */
static bool parse_u32(const char *s, size_t n, unsigned *out)
{
	uint64_t v = 0;

	if (!n || n > 10)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX)
		return false;
	*out = (unsigned)v;
	return true;
}

/* "KEY:N;" at *p (after tabs or spaces): the number, *p moved past it. */
static bool attr(const char **p, const char *end, const char *key, unsigned *out)
{
	size_t kl = strlen(key);
	const char *s = *p;

	while (s < end && (*s == '\t' || *s == ' '))
		s++;
	if ((size_t)(end - s) < kl || memcmp(s, key, kl) != 0)
		return false;
	s += kl;
	const char *semi = memchr(s, ';', (size_t)(end - s));
	if (!semi || !parse_u32(s, (size_t)(semi - s), out))
		return false;
	*p = semi + 1;
	return true;
}

/*
 * "field:TYPE NAME;" or "field:TYPE NAME[N];" (the brackets go to the type)
 * then offset, size and signed.
 */
static int field_line(const char *s, const char *end, struct vn_trace_field *f, unsigned lineno, struct vn_error *err)
{
	const char *decl = s + strlen("field:");
	const char *semi = memchr(decl, ';', (size_t)(end - decl));
	unsigned sign;

	memset(f, 0, sizeof(*f));
	if (!semi)
		return vn_infra_error(err, -EBADMSG, "line %u: a field without ';'", lineno);
	const char *de = semi, *arr = NULL;
	while (de > decl && de[-1] == ' ')
		de--;
	if (de > decl && de[-1] == ']') {
		arr = de - 1;
		while (arr > decl && *arr != '[')
			arr--;
		if (*arr != '[')
			return vn_infra_error(err, -EBADMSG, "line %u: unbalanced ']' in a field", lineno);
	}
	const char *ne = arr ? arr : de, *nb = ne;
	while (nb > decl && is_ident(nb[-1]))
		nb--;
	size_t nl = (size_t)(ne - nb);
	if (!nl || nl >= sizeof(f->name) || is_digit(*nb))
		return vn_infra_error(err, -EBADMSG, "line %u: a field without a name (or one over %d bytes)", lineno,
				      VN_TRACE_NAME_MAX - 1);
	const char *te = nb;
	while (te > decl && te[-1] == ' ')
		te--;
	size_t tl = (size_t)(te - decl), al = arr ? (size_t)(de - arr) : 0;
	if (!tl || tl + al >= sizeof(f->type))
		return vn_infra_error(err, -EBADMSG, "line %u: field %.*s: no type, or one over %d bytes", lineno,
				      (int)nl, nb, VN_TRACE_TYPE_MAX - 1);
	for (const char *c = decl; c < te; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
			return vn_infra_error(err, -EBADMSG, "line %u: field %.*s: a type with a control byte", lineno,
					      (int)nl, nb);
	memcpy(f->name, nb, nl);
	f->name[nl] = '\0';
	memcpy(f->type, decl, tl);
	memcpy(f->type + tl, arr ? arr : "", al);
	f->type[tl + al] = '\0';
	const char *p = semi + 1;
	if (!attr(&p, end, "offset:", &f->offset) || !attr(&p, end, "size:", &f->size) ||
	    !attr(&p, end, "signed:", &sign) || sign > 1)
		return vn_infra_error(err, -EBADMSG, "line %u: field %s: expected offset:N; size:N; signed:0|1;",
				      lineno, f->name);
	f->is_signed = sign;
	f->numeric = !arr && !strchr(f->type, '*') && !strstr(f->type, "__data_loc") && !strstr(f->type, "__rel_loc") &&
		     (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8);
	return 0;
}

/* The string literal at s (s[0] == '"') without its quotes and escapes into out; the end past it. */
static const char *literal(const char *s, const char *end, char *out, size_t max, size_t *n)
{
	*n = 0;
	for (s++; s < end && *s != '"'; s++) {
		char c = *s;
		if (c == '\\' && s + 1 < end)
			c = *++s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
		if (*n + 1 < max)
			out[(*n)++] = c;
	}
	out[*n] = '\0';
	return s < end ? s + 1 : NULL;
}

/* The end of the argument at s: the next comma outside parentheses, brackets and strings. */
static const char *arg_end(const char *s, const char *end)
{
	int depth = 0;

	for (; s < end; s++) {
		if (*s == '"' || *s == '\'') {
			char q = *s;
			for (s++; s < end && *s != q; s++)
				if (*s == '\\')
					s++;
		} else if (*s == '(' || *s == '[' || *s == '{') {
			depth++;
		} else if (*s == ')' || *s == ']' || *s == '}') {
			depth--;
		} else if (*s == ',' && depth <= 0) {
			return s;
		}
	}
	return end;
}

static struct vn_trace_field *field_named(struct vn_trace_format *f, const char *s, size_t n)
{
	for (unsigned i = 0; i < f->nfields; i++)
		if (strlen(f->fields[i].name) == n && memcmp(f->fields[i].name, s, n) == 0)
			return &f->fields[i];
	return NULL;
}

/*
 * "print fmt: "K1=%d K2=%s", REC->a, __print_symbolic(REC->b, ...)": K1 is
 * a's key, K2 b's. Only what can be paired surely is taken: a conversion
 * with a KEY= before it and an argument naming one REC-> field.
 */
static void print_keys(const char *s, const char *end, struct vn_trace_format *f)
{
	enum { MAXCONV = VN_TRACE_FIELDS_MAX * 2 };
	char keys[MAXCONV][VN_TRACE_NAME_MAX];
	unsigned nconv = 0;
	size_t n;

	while (s < end && *s == ' ')
		s++;
	if (s == end || *s != '"')
		return;
	char *fmt = vn_xmalloc((size_t)(end - s) + 1);
	if (!(s = literal(s, end, fmt, (size_t)(end - s) + 1, &n))) {
		free(fmt);
		return;
	}
	for (size_t i = 0; i < n && nconv < MAXCONV; i++) {
		if (fmt[i] != '%')
			continue;
		if (i + 1 < n && fmt[i + 1] == '%') {
			i++;
			continue;
		}
		char key[VN_TRACE_NAME_MAX] = "";
		size_t ke = i, kb = i;
		if (kb > 0 && fmt[kb - 1] == '=') {
			ke = --kb;
			while (kb > 0 && is_ident(fmt[kb - 1]))
				kb--;
		}
		if (ke > kb && ke - kb < sizeof(key)) {
			memcpy(key, fmt + kb, ke - kb);
			key[ke - kb] = '\0';
		}
		/* Flags, width, precision and length, then the conversion; each '*' takes an argument first. */
		size_t j = i + 1;
		for (; j < n && strchr("-+ #0123456789.*hlLqjzt", fmt[j]); j++)
			if (fmt[j] == '*' && nconv < MAXCONV)
				keys[nconv++][0] = '\0';
		if (nconv < MAXCONV)
			snprintf(keys[nconv++], sizeof(keys[0]), "%s", key);
		i = j;
	}
	free(fmt);
	for (unsigned a = 0; a < nconv && s < end; a++) {
		while (s < end && (*s == ',' || *s == ' '))
			s++;
		const char *ae = arg_end(s, end);
		const char *rec = s;
		while ((rec = memchr(rec, 'R', (size_t)(ae - rec))) && (ae - rec < 6 || memcmp(rec, "REC->", 5) != 0))
			rec++;
		if (rec && keys[a][0]) {
			const char *nb = rec + 5, *ne = nb;
			while (ne < ae && is_ident(*ne))
				ne++;
			struct vn_trace_field *fl = field_named(f, nb, (size_t)(ne - nb));
			if (fl && !fl->printed[0])
				snprintf(fl->printed, sizeof(fl->printed), "%s", keys[a]);
		}
		s = ae;
	}
}

int vn_trace_format_parse(const char *text, size_t len, struct vn_trace_format *f, struct vn_error *err)
{
	bool have_id = false;
	unsigned lineno = 0;

	memset(f, 0, sizeof(*f));
	if (len > VN_TRACE_FORMAT_MAX)
		return vn_infra_error(err, -EMSGSIZE, "a format file over %u KiB", VN_TRACE_FORMAT_MAX >> 10);
	if (memchr(text, '\0', len))
		return vn_infra_error(err, -EBADMSG, "a NUL byte in a format file");
	for (const char *line = text, *end = text + len; line < end;) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *le = eol ? eol : end, *s = line;
		line = eol ? eol + 1 : end;
		lineno++;
		while (s < le && (*s == '\t' || *s == ' '))
			s++;
		size_t n = (size_t)(le - s);
		if (n >= 11 && memcmp(s, "print fmt: ", 11) == 0) {
			print_keys(s + 11, le, f);
			break;
		}
		if (n > 6 && memcmp(s, "name: ", 6) == 0) {
			size_t nl = n - 6;
			if (!nl || nl >= sizeof(f->name))
				return vn_infra_error(err, -EBADMSG, "line %u: an event name of %zu bytes", lineno, nl);
			for (size_t i = 0; i < nl; i++)
				if (!is_ident(s[6 + i]))
					return vn_infra_error(err, -EBADMSG,
							      "line %u: an event name that is not an identifier",
							      lineno);
			memcpy(f->name, s + 6, nl);
			f->name[nl] = '\0';
		} else if (n > 4 && memcmp(s, "ID: ", 4) == 0) {
			if (!parse_u32(s + 4, n - 4, &f->id))
				return vn_infra_error(err, -EBADMSG, "line %u: an ID that is not a number", lineno);
			have_id = true;
		} else if (n > 6 && memcmp(s, "field:", 6) == 0) {
			struct vn_trace_field fl;
			int rc = field_line(s, le, &fl, lineno, err);
			if (rc < 0)
				return rc;
			if (strncmp(fl.name, "common_", 7) == 0)
				continue;
			for (unsigned i = 0; i < f->nfields; i++)
				if (strcmp(f->fields[i].name, fl.name) == 0)
					return vn_infra_error(err, -EBADMSG, "line %u: field %s twice", lineno,
							      fl.name);
			if (f->nfields == VN_TRACE_FIELDS_MAX)
				return vn_infra_error(err, -EBADMSG, "more than %d fields", VN_TRACE_FIELDS_MAX);
			f->fields[f->nfields++] = fl;
		}
		/* Other lines ("format:", blank ones, what a later kernel adds) say nothing we need. */
	}
	if (!f->name[0] || !have_id)
		return vn_infra_error(err, -EBADMSG, "a format file without %s", f->name[0] ? "an ID" : "a name");
	for (unsigned i = 0; i < f->nfields; i++)
		if (!f->fields[i].printed[0])
			memcpy(f->fields[i].printed, f->fields[i].name, sizeof(f->fields[i].printed));
	return 0;
}

/* ---- trace_pipe lines ---- */

static int bad(struct vn_error *err, const char *what)
{
	return vn_infra_error(err, -EBADMSG, "trace line: %s", what);
}

/* The timestamp "SECONDS.FRACTION" ending at te (exclusive); its start in *tb. */
static bool timestamp_before(const char *line, const char *te, const char **tb, double *ts)
{
	const char *p = te;
	size_t frac = 0, whole = 0;

	while (p > line && is_digit(p[-1]))
		p--, frac++;
	if (!frac || frac > 9 || p == line || p[-1] != '.')
		return false;
	p--;
	while (p > line && is_digit(p[-1]))
		p--, whole++;
	if (!whole || whole > 12 || (p > line && p[-1] != ' '))
		return false;
	char buf[32];
	memcpy(buf, p, (size_t)(te - p));
	buf[te - p] = '\0';
	*ts = strtod(buf, NULL);
	*tb = p;
	return true;
}

/* Backwards from the timestamp: [FLAGS] [CPU] [(TGID)] COMM-PID. */
static bool header(const char *line, const char *tb, struct vn_trace_event *ev)
{
	const char *p = tb;

	while (p > line && p[-1] == ' ')
		p--;
	/* A flags token ("d..2."), present unless the irq-info option is off. */
	if (p > line && p[-1] != ']') {
		const char *q = p;
		while (q > line && q[-1] != ' ')
			q--;
		if ((size_t)(p - q) > 8)
			return false;
		p = q;
		while (p > line && p[-1] == ' ')
			p--;
	}
	if (p == line || p[-1] != ']')
		return false;
	const char *ce = --p;
	while (p > line && is_digit(p[-1]))
		p--;
	if (p == line || p[-1] != '[' || !parse_u32(p, (size_t)(ce - p), &ev->cpu))
		return false;
	p--;
	while (p > line && p[-1] == ' ')
		p--;
	/* "(  TGID)" with the record-tgid option. */
	if (p > line && p[-1] == ')') {
		while (p > line && p[-1] != '(')
			p--;
		if (p == line)
			return false;
		p--;
		while (p > line && p[-1] == ' ')
			p--;
	}
	const char *pe = p;
	while (p > line && is_digit(p[-1]))
		p--;
	unsigned pid;
	if (p == pe || p == line || p[-1] != '-' || !parse_u32(p, (size_t)(pe - p), &pid) || pid > INT32_MAX)
		return false;
	ev->pid = (int)pid;
	const char *cb = line, *cend = p - 1;
	while (cb < cend && *cb == ' ')
		cb++;
	if ((size_t)(cend - cb) >= sizeof(ev->comm))
		return false;
	memcpy(ev->comm, cb, (size_t)(cend - cb));
	ev->comm[cend - cb] = '\0';
	return true;
}

/* An integer as printed (decimal, optionally negative, or 0x hex), fitting 64 bits. */
static json_object *number(const char *s, size_t n)
{
	char buf[24];
	char *end;

	if (!n || n >= sizeof(buf))
		return NULL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	if (n > 2 && buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X')) {
		for (size_t i = 2; i < n; i++)
			if (!strchr("0123456789abcdefABCDEF", buf[i]))
				return NULL;
		uint64_t v = strtoull(buf + 2, &end, 16);
		return errno ? NULL : json_object_new_uint64(v);
	}
	size_t i = buf[0] == '-';
	if (i == n)
		return NULL;
	for (; i < n; i++)
		if (!is_digit(buf[i]))
			return NULL;
	if (buf[0] == '-') {
		int64_t v = strtoll(buf, &end, 10);
		return errno ? NULL : json_object_new_int64(v);
	}
	uint64_t v = strtoull(buf, &end, 10);
	if (errno)
		return NULL;
	return v <= INT64_MAX ? json_object_new_int64((int64_t)v) : json_object_new_uint64(v);
}

/* Where field name=... starts in s[0..n) at or after from, at a word boundary; -1 if nowhere. */
static long find_field(const char *s, size_t n, size_t from, const char *name)
{
	size_t nl = strlen(name);

	for (size_t i = from; i + nl < n; i++) {
		if ((i == 0 || s[i - 1] == ' ' || s[i - 1] == ',') && s[i + nl] == '=' && memcmp(s + i, name, nl) == 0)
			return (long)i;
	}
	return -1;
}

static void fields(const char *s, size_t n, const struct vn_trace_format *f, json_object *out)
{
	long pos[VN_TRACE_FIELDS_MAX];

	/* Each key's first appearance (the kernel prints each once). */
	for (unsigned i = 0; i < f->nfields; i++)
		pos[i] = find_field(s, n, 0, f->fields[i].printed);
	for (unsigned i = 0; i < f->nfields; i++) {
		if (pos[i] < 0)
			continue;
		size_t vb = (size_t)pos[i] + strlen(f->fields[i].printed) + 1, ve = n;
		/* A string runs to the next field found after it (a comm may hold spaces); a number to a space or comma. */
		for (unsigned k = 0; k < f->nfields; k++)
			if (pos[k] > pos[i] && (size_t)pos[k] < ve)
				ve = (size_t)pos[k];
		size_t tok = vb;
		while (tok < ve && s[tok] != ' ' && s[tok] != ',')
			tok++;
		json_object *v = f->fields[i].numeric ? number(s + vb, tok - vb) : NULL;
		while (ve > vb && (s[ve - 1] == ' ' || s[ve - 1] == ','))
			ve--;
		if (!v)
			v = json_object_new_string_len(s + vb, (int)(ve - vb));
		if (!v)
			vn_oom();
		json_object_object_add(out, f->fields[i].name, v);
	}
}

int vn_trace_line_parse(const char *line, size_t len, const struct vn_trace_format *formats, unsigned nformats,
			struct vn_trace_event *ev, struct vn_error *err)
{
	memset(ev, 0, sizeof(*ev));
	if (len > VN_TRACE_LINE_MAX)
		return bad(err, "longer than the bound");
	if (memchr(line, '\0', len) || memchr(line, '\n', len))
		return bad(err, "a NUL or newline inside");
	/*
	 * ": EVENT: " after a timestamp; a comm could hold something like it, so
	 * every occurrence is tried until one has a whole header before it.
	 */
	for (const char *p = line; (p = memchr(p, ':', len - (size_t)(p - line))); p++) {
		if ((size_t)(line + len - p) < 3 || p[1] != ' ')
			continue;
		const char *nb = p + 2, *ne = nb;
		while (ne < line + len && is_ident(*ne))
			ne++;
		if (ne == nb || ne >= line + len || *ne != ':')
			continue;
		unsigned k;
		for (k = 0; k < nformats; k++)
			if (strlen(formats[k].name) == (size_t)(ne - nb) && memcmp(formats[k].name, nb, ne - nb) == 0)
				break;
		const char *tb;
		if (k == nformats || !timestamp_before(line, p, &tb, &ev->ts) || !header(line, tb, ev))
			continue;
		ev->format = k;
		const char *text = ne + 1;
		if (text < line + len && *text == ' ')
			text++;
		ev->fields = json_object_new_object();
		if (!ev->fields)
			vn_oom();
		fields(text, (size_t)(line + len - text), &formats[k], ev->fields);
		return 0;
	}
	return bad(err, "no \"COMM-PID [CPU] TS: EVENT:\" header for a captured event");
}
