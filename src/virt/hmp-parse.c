/* QEMU's monitor text: a DIMM's place in the locality plugin's addresses, virtual time's lead (hmp.h). */
#include "virt/hmp.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

/* Lines longer than this are not QEMU's `info` lines: skipped. */
#define LINE_MAX_BYTES 512

/* One line of text at *s into line (NUL-terminated); false at the end. Too long: an empty line. */
static bool next_line(const char **s, char *line)
{
	if (!**s)
		return false;
	size_t len = strcspn(*s, "\n");
	if (len < LINE_MAX_BYTES) {
		memcpy(line, *s, len);
		/* The monitor ends its lines with "\r\n". */
		line[len && (*s)[len - 1] == '\r' ? len - 1 : len] = '\0';
	} else {
		line[0] = '\0';
	}
	*s += len + ((*s)[len] == '\n');
	return true;
}

static int too_long(const char *text, const char *what, struct vn_error *err)
{
	if (strnlen(text, VN_HMP_TEXT_MAX + 1) > VN_HMP_TEXT_MAX)
		return vn_infra_error(err, -E2BIG, "QEMU's %s: more than %u bytes", what, VN_HMP_TEXT_MAX);
	return 0;
}

static bool name_is(const char *have, size_t len, const char *want)
{
	size_t wl = strlen(want);
	return (len == wl || (len > wl && have[len - wl - 1] == '/')) && memcmp(have + len - wl, want, wl) == 0;
}

/* A 0x-prefixed hex number filling the whole word at p (up to a space or the end). */
static bool hex_word(const char *p, uint64_t *v)
{
	char *end;
	if (p[0] != '0' || p[1] != 'x' || !((p[2] >= '0' && p[2] <= '9') || (p[2] >= 'a' && p[2] <= 'f')))
		return false;
	errno = 0;
	unsigned long long x = strtoull(p + 2, &end, 16);
	if (errno || (*end && *end != ' '))
		return false;
	*v = x;
	return true;
}

int vn_hmp_ramblock(const char *text, const char *block, uint64_t *offset, uint64_t *used, struct vn_error *err)
{
	char line[LINE_MAX_BYTES];
	int rc;

	if ((rc = too_long(text, "info ramblock", err)) < 0)
		return rc;
	for (const char *s = text; next_line(&s, line);) {
		/* "  NAME  4 KiB  0xOFFSET 0xUSED 0xTOTAL ...": the first two 0x words after the name. */
		const char *p = line + strspn(line, " ");
		size_t nl = strcspn(p, " ");
		if (!nl || !name_is(p, nl, block))
			continue;
		uint64_t v[2];
		unsigned got = 0;
		for (const char *w = p + nl; *w && got < 2;) {
			w += strspn(w, " ");
			if (hex_word(w, &v[got]))
				got++;
			w += strcspn(w, " ");
		}
		if (got < 2 || v[1] == 0)
			return vn_infra_error(err, -EBADMSG, "QEMU's info ramblock: block %s: no offset and length",
					      block);
		*offset = v[0];
		*used = v[1];
		return 0;
	}
	return vn_infra_error(err, -ENOENT, "QEMU's info ramblock has no block %s", block);
}

int vn_hmp_mtree_region(const char *text, const char *name, uint64_t *first, uint64_t *last, struct vn_error *err)
{
	char line[LINE_MAX_BYTES];
	int rc;

	if ((rc = too_long(text, "info mtree", err)) < 0)
		return rc;
	for (const char *s = text; next_line(&s, line);) {
		/* "    FIRST-LAST (prio P, KIND): NAME", addresses in hex without 0x. */
		const char *p = line + strspn(line, " "), *n = strstr(line, "): ");
		char *end;
		if (!n)
			continue;
		n += 3;
		size_t nl = strcspn(n, " ");
		if (nl != strlen(name) || memcmp(n, name, nl) != 0)
			continue;
		errno = 0;
		unsigned long long a = strtoull(p, &end, 16);
		if (end == p || *end != '-' || errno)
			continue;
		const char *q = end + 1;
		unsigned long long b = strtoull(q, &end, 16);
		if (end == q || *end != ' ' || errno || b < a)
			continue;
		*first = a;
		*last = b;
		return 0;
	}
	return vn_infra_error(err, -ENOENT, "QEMU's info mtree has no region %s", name);
}

int vn_hmp_dimm_plugin_range(const char *ramblock, const char *mtree, const char *memdev, uint64_t gpa, uint64_t *lo,
			     uint64_t *hi, struct vn_error *err)
{
	uint64_t off, used, first, last, dm_first, dm_last;
	int rc;

	if ((rc = vn_hmp_ramblock(ramblock, memdev, &off, &used, err)) < 0 ||
	    (rc = vn_hmp_mtree_region(mtree, memdev, &first, &last, err)) < 0 ||
	    (rc = vn_hmp_mtree_region(mtree, "device-memory", &dm_first, &dm_last, err)) < 0)
		return rc;
	if (first != gpa || last - first + 1 != used || first < dm_first || last > dm_last)
		return vn_infra_error(err, -EBADMSG,
				      "QEMU's monitor places %s at 0x%llx-0x%llx (%llu bytes used, device memory "
				      "0x%llx-0x%llx), libvirt at 0x%llx",
				      memdev, (unsigned long long)first, (unsigned long long)last,
				      (unsigned long long)used, (unsigned long long)dm_first,
				      (unsigned long long)dm_last, (unsigned long long)gpa);
	/* mr->addr is the region's address in its container, device memory. */
	uint64_t mr_addr = first - dm_first;
	if (off > UINT64_MAX - mr_addr - used)
		return vn_infra_error(err, -EOVERFLOW, "QEMU's monitor: %s's offset 0x%llx overflows", memdev,
				      (unsigned long long)off);
	*lo = off + mr_addr;
	*hi = *lo + used;
	return 0;
}

int vn_hmp_icount_lead(const char *text, double *lead_s, struct vn_error *err)
{
	static const char key[] = "Host - Guest clock";
	char line[LINE_MAX_BYTES];
	int rc;

	if ((rc = too_long(text, "info jit", err)) < 0)
		return rc;
	for (const char *s = text; next_line(&s, line);) {
		/* "Host - Guest clock  -24144804 ms": host time minus guest time, negative while the guest leads. */
		if (strncmp(line, key, sizeof(key) - 1) != 0)
			continue;
		const char *p = line + sizeof(key) - 1;
		char *end;
		p += strspn(p, " ");
		errno = 0;
		long long ms = strtoll(p, &end, 10);
		if (end == p || errno || strcmp(end, " ms") != 0 || ms < -VN_HMP_LEAD_MS_MAX ||
		    ms > VN_HMP_LEAD_MS_MAX) {
			char shown[64 + 4];
			vn_excerpt(p, strlen(p), 64, shown);
			return vn_infra_error(err, -EBADMSG, "QEMU's info jit: \"%s\" is not a clock difference: '%s'",
					      key, shown);
		}
		*lead_s = (double)-ms / 1000;
		return 0;
	}
	return vn_infra_error(err, -ENOENT, "QEMU's info jit has no \"%s\" line (is virtual time on?)", key);
}
