#include "guest/initramfs.h"

#include <archive.h>
#include <archive_entry.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "guest/init-sh.h"
#include "util/cleanup.h"
#include "util/sha256.h"
#include "util/strbuf.h"

/* Part of the cache key: bump when the layout changes in ways the inputs don't show. */
#define FORMAT_VERSION "vnuma-initramfs/1"

#if defined(__x86_64__)
#define MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#else
#define MULTIARCH "unknown-linux-gnu"
#endif

static const char *const lib_dirs[] = {
	"/lib/" MULTIARCH, "/usr/lib/" MULTIARCH, "/lib64", "/usr/lib64", "/lib", "/usr/lib",
};

/* Enough for init and for users at the prompt even if --install fails. */
static const char *const applets[] = {
	"sh", "ash", "awk", "cat", "chmod", "cp", "cttyhack", "cut", "date", "dd", "df", "dmesg", "echo",
	"env", "find", "free", "grep", "head", "hostname", "insmod", "ip", "kill", "ln", "ls", "lsmod",
	"mkdir", "mknod", "mount", "mv", "poweroff", "printf", "ps", "readlink", "reboot", "rm", "rmmod",
	"sed", "seq", "setsid", "sleep", "sort", "stat", "sync", "sysctl", "tail", "taskset", "tee",
	"test", "timeout", "top", "touch", "tr", "umount", "uname", "uptime", "vi", "watch", "wc",
	"xargs",
};

static const char etc_passwd[] = "root:x:0:0:root:/root:/bin/sh\n";
static const char etc_group[] = "root:x:0:\n";
static const char etc_profile[] =
	"export PATH=/usr/sbin:/usr/bin:/sbin:/bin\n"
	"export HOME=/root\n"
	"export PS1='vnuma:\\w# '\n"
	"cd /root 2>/dev/null\n";

static const char *const empty_dirs[] = {
	"/proc", "/sys", "/dev", "/tmp", "/run", "/mnt", "/root", "/bin", "/sbin", "/usr/bin", "/usr/sbin",
	"/etc/vnuma",
};

enum ent_kind { ENT_DIR, ENT_FILE, ENT_DATA, ENT_SYMLINK, ENT_CHARDEV };

struct ent {
	char *path; /* guest path, absolute */
	enum ent_kind kind;
	mode_t perm;
	char *host;   /* ENT_FILE: content source */
	char *real;   /* ENT_FILE: realpath(host), so aliases share one copy */
	char *target; /* ENT_SYMLINK */
	char *data;   /* ENT_DATA */
	size_t len;
	unsigned major, minor; /* ENT_CHARDEV */
};

struct plan {
	struct ent *v;
	size_t n, cap;
};

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		abort(); /* as strbuf: a CLI has no useful way on */
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		abort();
	return d;
}

static void plan_free(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].path);
		free(p->v[i].host);
		free(p->v[i].real);
		free(p->v[i].target);
		free(p->v[i].data);
	}
	free(p->v);
	p->v = NULL;
	p->n = p->cap = 0;
}

static struct ent *plan_find(struct plan *p, const char *path)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i].path, path) == 0)
			return &p->v[i];
	return NULL;
}

static struct ent *plan_add(struct plan *p, enum ent_kind kind, const char *path, mode_t perm)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->v = xrealloc(p->v, p->cap * sizeof(*p->v));
	}
	struct ent *e = &p->v[p->n++];
	memset(e, 0, sizeof(*e));
	e->path = xstrdup(path);
	e->kind = kind;
	e->perm = perm;
	return e;
}

static void plan_add_data(struct plan *p, const char *path, mode_t perm, const char *data, size_t len)
{
	struct ent *e = plan_add(p, ENT_DATA, path, perm);
	e->data = xrealloc(NULL, len + 1);
	memcpy(e->data, data, len);
	e->data[len] = '\0';
	e->len = len;
}

static void plan_add_symlink(struct plan *p, const char *path, const char *target)
{
	plan_add(p, ENT_SYMLINK, path, 0777)->target = xstrdup(target);
}

static const char *pkg_hint(const char *pkg, char *buf, size_t len)
{
	if (!pkg)
		return "";
	snprintf(buf, len, " (install the Debian package %s)", pkg);
	return buf;
}

/*
 * Add host file `host` at guest path `guest`. *added tells whether it is new
 * (callers stop recursing otherwise). A second guest name for a file already
 * in the image becomes a symlink, which keeps ld.so and friends single.
 */
static int plan_add_host(struct plan *p, const char *host, const char *guest, const char *pkg, bool *added,
			 struct vn_error *err)
{
	struct stat st;
	char hint[128];

	if (added)
		*added = false;
	if (plan_find(p, guest))
		return 0;
	if (stat(host, &st) < 0)
		return vn_infra_error(err, -errno, "%s: %s%s", host, strerror(errno), pkg_hint(pkg, hint, sizeof(hint)));
	if (!S_ISREG(st.st_mode))
		return vn_infra_error(err, -EINVAL, "%s: not a regular file", host);
	_cleanup_free_ char *real = realpath(host, NULL);
	if (!real)
		return vn_infra_error(err, -errno, "%s: %s", host, strerror(errno));
	for (size_t i = 0; i < p->n; i++) {
		if (p->v[i].kind == ENT_FILE && strcmp(p->v[i].real, real) == 0) {
			_cleanup_free_ char *target = xstrdup(p->v[i].path);
			plan_add_symlink(p, guest, target);
			if (added)
				*added = true;
			return 0;
		}
	}
	struct ent *e = plan_add(p, ENT_FILE, guest, st.st_mode & 0777);
	e->host = xstrdup(host);
	e->real = steal_pointer(&real);
	if (added)
		*added = true;
	return 0;
}

/* ---- ELF: what a dynamically linked program needs at run time ---- */

struct elf_deps {
	bool is_elf;
	char *interp;
	char **needed; /* NULL-terminated */
	size_t n_needed;
	char *runpath;
};

static void elf_deps_free(struct elf_deps *d)
{
	free(d->interp);
	vn_strvfreep(&d->needed);
	free(d->runpath);
	memset(d, 0, sizeof(*d));
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off, uint64_t size)
{
	if (off > size || len > size - off)
		return -EINVAL;
	ssize_t n = pread(fd, buf, len, (off_t)off);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static char *strtab_get(const char *tab, uint64_t size, uint64_t off)
{
	if (off >= size)
		return NULL;
	return strndup(tab + off, size - off);
}

static int elf_read_deps(const char *path, struct elf_deps *d, struct vn_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ Elf64_Phdr *ph = NULL;
	_cleanup_free_ Elf64_Dyn *dyn = NULL;
	_cleanup_free_ char *strtab = NULL;
	_cleanup_free_ uint64_t *needed = NULL;
	Elf64_Ehdr eh;
	struct stat st;
	uint64_t strtab_va = 0, strsz = 0, runpath = UINT64_MAX;
	size_t n_needed = 0, n_dyn = 0;
	int r;

	memset(d, 0, sizeof(*d));
	if (fd < 0 || fstat(fd, &st) < 0)
		return vn_infra_error(err, -errno, "%s: %s", path, strerror(errno));
	uint64_t size = (uint64_t)st.st_size;
	if (pread_all(fd, &eh, sizeof(eh), 0, size) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return 0; /* not ELF: a script or data, nothing to resolve */
	d->is_elf = true;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return vn_infra_error(err, -ENOTSUP, "%s: only 64-bit little-endian ELF files are supported", path);
	if (eh.e_phnum == 0)
		return 0;
	if (eh.e_phentsize != sizeof(Elf64_Phdr))
		return vn_infra_error(err, -EINVAL, "%s: malformed ELF program headers", path);
	ph = xrealloc(NULL, (size_t)eh.e_phnum * sizeof(*ph));
	if (pread_all(fd, ph, (size_t)eh.e_phnum * sizeof(*ph), eh.e_phoff, size) < 0)
		return vn_infra_error(err, -EINVAL, "%s: truncated ELF program headers", path);

	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_INTERP && !d->interp) {
			if (ph[i].p_filesz == 0 || ph[i].p_filesz > PATH_MAX)
				return vn_infra_error(err, -EINVAL, "%s: malformed PT_INTERP", path);
			char buf[PATH_MAX + 1];
			if (pread_all(fd, buf, ph[i].p_filesz, ph[i].p_offset, size) < 0)
				return vn_infra_error(err, -EINVAL, "%s: truncated PT_INTERP", path);
			buf[ph[i].p_filesz] = '\0';
			d->interp = xstrdup(buf);
		} else if (ph[i].p_type == PT_DYNAMIC && !dyn) {
			n_dyn = ph[i].p_filesz / sizeof(*dyn);
			dyn = xrealloc(NULL, n_dyn * sizeof(*dyn) + 1);
			if (pread_all(fd, dyn, n_dyn * sizeof(*dyn), ph[i].p_offset, size) < 0)
				return vn_infra_error(err, -EINVAL, "%s: truncated PT_DYNAMIC", path);
		}
	}
	if (!dyn)
		return 0;

	needed = xrealloc(NULL, (n_dyn + 1) * sizeof(*needed));
	for (size_t i = 0; i < n_dyn && dyn[i].d_tag != DT_NULL; i++) {
		switch (dyn[i].d_tag) {
		case DT_STRTAB:
			strtab_va = dyn[i].d_un.d_ptr;
			break;
		case DT_STRSZ:
			strsz = dyn[i].d_un.d_val;
			break;
		case DT_NEEDED:
			needed[n_needed++] = dyn[i].d_un.d_val;
			break;
		case DT_RUNPATH:
		case DT_RPATH:
			runpath = dyn[i].d_un.d_val;
			break;
		}
	}
	if (n_needed == 0 && runpath == UINT64_MAX)
		return 0;

	/* DT_STRTAB is an address; the PT_LOAD covering it gives the file offset. */
	uint64_t strtab_off = UINT64_MAX;
	for (unsigned i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && strtab_va >= ph[i].p_vaddr &&
		    strtab_va - ph[i].p_vaddr < ph[i].p_filesz)
			strtab_off = ph[i].p_offset + (strtab_va - ph[i].p_vaddr);
	if (strtab_off == UINT64_MAX || strsz == 0 || strsz > size)
		return vn_infra_error(err, -EINVAL, "%s: cannot locate the dynamic string table", path);
	strtab = xrealloc(NULL, strsz);
	r = pread_all(fd, strtab, strsz, strtab_off, size);
	if (r < 0)
		return vn_infra_error(err, r, "%s: truncated dynamic string table", path);

	d->needed = xrealloc(NULL, (n_needed + 1) * sizeof(char *));
	for (size_t i = 0; i < n_needed; i++) {
		char *s = strtab_get(strtab, strsz, needed[i]);
		if (!s)
			return vn_infra_error(err, -EINVAL, "%s: bad DT_NEEDED entry", path);
		d->needed[d->n_needed++] = s;
		d->needed[d->n_needed] = NULL;
	}
	d->needed[d->n_needed] = NULL;
	if (runpath != UINT64_MAX)
		d->runpath = strtab_get(strtab, strsz, runpath);
	return 0;
}

static char *find_lib(const char *name, const char *runpath, const char *origin)
{
	char buf[PATH_MAX];

	if (strchr(name, '/'))
		return access(name, F_OK) == 0 ? xstrdup(name) : NULL;
	if (runpath) {
		_cleanup_free_ char *copy = xstrdup(runpath);
		char *save = NULL;
		for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
			if (strncmp(dir, "$ORIGIN", 7) == 0)
				snprintf(buf, sizeof(buf), "%s%s/%s", origin, dir + 7, name);
			else
				snprintf(buf, sizeof(buf), "%s/%s", dir, name);
			if (access(buf, F_OK) == 0)
				return xstrdup(buf);
		}
	}
	for (size_t i = 0; i < VN_ARRAY_SIZE(lib_dirs); i++) {
		snprintf(buf, sizeof(buf), "%s/%s", lib_dirs[i], name);
		if (access(buf, F_OK) == 0)
			return xstrdup(buf);
	}
	return NULL;
}

/* Add a host program and, if it is dynamically linked, its loader and libraries. */
static int plan_add_program(struct plan *p, const char *host, const char *guest, const char *pkg,
			    struct vn_error *err)
{
	_cleanup_(elf_deps_free) struct elf_deps d = {0};
	bool added;
	int r;

	r = plan_add_host(p, host, guest, pkg, &added, err);
	if (r < 0 || !added)
		return r;
	r = elf_read_deps(host, &d, err);
	if (r < 0)
		return r;
	if (d.interp) {
		r = plan_add_program(p, d.interp, d.interp, NULL, err);
		if (r < 0)
			return vn_error_prefix(err, "ELF interpreter of %s", host);
	}
	_cleanup_free_ char *origin = xstrdup(host);
	char *slash = strrchr(origin, '/');
	if (slash)
		*slash = '\0';
	for (size_t i = 0; i < d.n_needed; i++) {
		_cleanup_free_ char *lib = find_lib(d.needed[i], d.runpath, origin);
		if (!lib)
			return vn_infra_error(err, -ENOENT, "%s needs %s, which is not in %s or the other library directories",
					      host, d.needed[i], lib_dirs[0]);
		r = plan_add_program(p, lib, lib, NULL, err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int plan_add_busybox(struct plan *p, const char *busybox, struct vn_error *err)
{
	_cleanup_(elf_deps_free) struct elf_deps d = {0};
	char path[64];
	int r;

	r = plan_add_host(p, busybox, "/bin/busybox", "busybox-static", NULL, err);
	if (r < 0)
		return r;
	r = elf_read_deps(busybox, &d, err);
	if (r < 0)
		return r;
	/* A dynamic busybox would need a libc before /init could even start. */
	if (!d.is_elf || d.interp || d.n_needed)
		return vn_infra_error(err, -EINVAL, "%s is not a statically linked busybox (install the Debian package busybox-static)",
				      busybox);
	for (size_t i = 0; i < VN_ARRAY_SIZE(applets); i++) {
		snprintf(path, sizeof(path), "/bin/%s", applets[i]);
		if (!plan_find(p, path))
			plan_add_symlink(p, path, "busybox");
	}
	return 0;
}

/* ---- kernel modules ---- */

struct moddep {
	char *rel;  /* path relative to the modules dir, points into the file buffer */
	char *deps; /* space-separated relative paths, ditto */
	int state;  /* 0 unvisited, 1 in progress, 2 ordered */
};

/* Module names treat '-' and '_' alike, as modprobe does. */
static bool modname_eq(const char *rel, const char *name)
{
	const char *base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	size_t n = strcspn(base, ".");
	if (strlen(name) != n || strncmp(base + n, ".ko", 3) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char a = base[i] == '-' ? '_' : base[i];
		char b = name[i] == '-' ? '_' : name[i];
		if (a != b)
			return false;
	}
	return true;
}

static int read_file(const char *path, char **out, struct vn_error *err, const char *pkg)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;
	char buf[65536], hint[128];
	size_t n;

	if (!f)
		return vn_infra_error(err, -errno, "cannot read %s: %s%s", path, strerror(errno),
				      pkg_hint(pkg, hint, sizeof(hint)));
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		vn_strbuf_append(&b, buf, n);
	if (ferror(f))
		return vn_infra_error(err, -EIO, "cannot read %s", path);
	*out = vn_strbuf_steal(&b);
	return 0;
}

static bool is_builtin(const char *moddir, const char *name)
{
	_cleanup_free_ char *path = NULL, *text = NULL;

	if (asprintf(&path, "%s/modules.builtin", moddir) < 0 || read_file(path, &text, NULL, NULL) < 0)
		return false;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (modname_eq(line, name))
			return true;
	return false;
}

static struct moddep *moddep_find(struct moddep *v, size_t n, const char *rel)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].rel, rel) == 0)
			return &v[i];
	return NULL;
}

/* Depth-first: a module is appended only after everything it depends on. */
static int moddep_visit(struct moddep *v, size_t n, struct moddep *m, struct vn_strbuf *order, const char *dep_path,
			struct vn_error *err)
{
	if (m->state == 2)
		return 0;
	if (m->state == 1)
		return vn_input_error(err, "%s: dependency cycle through %s", dep_path, m->rel);
	m->state = 1;
	_cleanup_free_ char *deps = xstrdup(m->deps);
	char *save = NULL;
	for (char *d = strtok_r(deps, " \t", &save); d; d = strtok_r(NULL, " \t", &save)) {
		struct moddep *dm = moddep_find(v, n, d);
		if (!dm)
			return vn_input_error(err, "%s: %s depends on %s, which has no entry", dep_path, m->rel, d);
		int r = moddep_visit(v, n, dm, order, dep_path, err);
		if (r < 0)
			return r;
	}
	m->state = 2;
	vn_strbuf_printf(order, "%s\n", m->rel);
	return 0;
}

static int plan_add_modules(struct plan *p, const struct vn_initramfs_spec *spec, struct vn_error *err)
{
	_cleanup_free_ char *moddir = NULL, *dep_path = NULL, *text = NULL, *order = NULL;
	_cleanup_free_ struct moddep *v = NULL;
	_cleanup_strbuf_ struct vn_strbuf ob = VN_STRBUF_INIT;
	_cleanup_strbuf_ struct vn_strbuf guest_order = VN_STRBUF_INIT;
	char pkg[128];
	size_t n = 0, cap = 0;
	int r;

	if (!spec->modules || !spec->modules[0]) {
		plan_add_data(p, "/etc/vnuma/modules", 0644, "", 0);
		return 0;
	}
	if (!spec->kernel_release)
		return vn_input_error(err, "kernel modules requested (%s, ...) but no kernel release given", spec->modules[0]);
	if (spec->modules_dir)
		moddir = xstrdup(spec->modules_dir);
	else if (asprintf(&moddir, "/lib/modules/%s", spec->kernel_release) < 0)
		abort();
	if (asprintf(&dep_path, "%s/modules.dep", moddir) < 0)
		abort();
	snprintf(pkg, sizeof(pkg), "linux-image-%s", spec->kernel_release);
	r = read_file(dep_path, &text, err, pkg);
	if (r < 0)
		return r;

	/* "kernel/a/b.ko: kernel/c.ko kernel/d.ko" per line; parsed in place. */
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[n++] = (struct moddep){.rel = line, .deps = colon + 1};
	}

	for (const char *const *name = spec->modules; *name; name++) {
		struct moddep *m = NULL;
		for (size_t i = 0; i < n && !m; i++)
			if (modname_eq(v[i].rel, *name))
				m = &v[i];
		if (!m) {
			if (is_builtin(moddir, *name))
				continue;
			return vn_input_error(err, "kernel module %s is not in %s", *name, dep_path);
		}
		r = moddep_visit(v, n, m, &ob, dep_path, err);
		if (r < 0)
			return r;
	}

	order = vn_strbuf_steal(&ob);
	save = NULL;
	for (char *rel = strtok_r(order, "\n", &save); rel; rel = strtok_r(NULL, "\n", &save)) {
		_cleanup_free_ char *host = NULL, *guest = NULL;
		if (asprintf(&host, "%s/%s", moddir, rel) < 0 ||
		    asprintf(&guest, "/lib/modules/%s/%s", spec->kernel_release, rel) < 0)
			abort();
		r = plan_add_host(p, host, guest, pkg, NULL, err);
		if (r < 0)
			return r;
		vn_strbuf_printf(&guest_order, "%s\n", guest);
	}
	plan_add_data(p, "/etc/vnuma/modules", 0644, guest_order.s ? guest_order.s : "", guest_order.len);
	return 0;
}

/* ---- extra files ---- */

/* Absolute, and no "." or ".." components that could climb out of place. */
static bool guest_path_ok(const char *g)
{
	if (g[0] != '/' || g[1] == '\0')
		return false;
	for (const char *c = g + 1; *c; c += strcspn(c, "/") + (c[strcspn(c, "/")] == '/')) {
		size_t n = strcspn(c, "/");
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
	}
	return true;
}

static int plan_add_extra(struct plan *p, const char *pair, struct vn_error *err)
{
	const char *colon = strrchr(pair, ':');

	if (!colon || colon == pair || colon[1] != '/')
		return vn_input_error(err, "extra file \"%s\": expected HOST_PATH:/GUEST_PATH", pair);
	_cleanup_free_ char *host = strndup(pair, (size_t)(colon - pair));
	_cleanup_free_ char *guest = NULL;
	const char *g = colon + 1;
	if (!host)
		abort();
	if (!guest_path_ok(g))
		return vn_input_error(err, "extra file \"%s\": guest path must be a plain absolute path", pair);
	/* "host:/dir/" puts the file into dir under its own name. */
	if (g[strlen(g) - 1] == '/') {
		const char *base = strrchr(host, '/');
		if (asprintf(&guest, "%s%s", g, base ? base + 1 : host) < 0)
			abort();
	} else {
		guest = xstrdup(g);
	}
	struct ent *old = plan_find(p, guest);
	if (old)
		return vn_input_error(err, "extra file \"%s\": %s is already in the image%s%s", pair, guest,
				      old->host ? " from " : "", old->host ? old->host : "");
	int r = plan_add_program(p, host, guest, NULL, err);
	if (r < 0)
		return vn_error_prefix(err, "extra file \"%s\"", pair);
	return 0;
}

/* ---- assembling the plan ---- */

static int cmp_ent(const void *a, const void *b)
{
	return strcmp(((const struct ent *)a)->path, ((const struct ent *)b)->path);
}

/* Every parent directory gets an entry; the kernel's unpacker does not create them. */
static void plan_add_parents(struct plan *p)
{
	for (size_t i = 0; i < VN_ARRAY_SIZE(empty_dirs); i++)
		if (!plan_find(p, empty_dirs[i]))
			plan_add(p, ENT_DIR, empty_dirs[i], strcmp(empty_dirs[i], "/tmp") == 0 ? 01777 : 0755);
	for (size_t i = 0; i < p->n; i++) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", p->v[i].path);
		for (char *s = strrchr(dir, '/'); s && s != dir; s = strrchr(dir, '/')) {
			*s = '\0';
			if (plan_find(p, dir))
				break;
			plan_add(p, ENT_DIR, dir, 0755);
		}
	}
	/* Sorted, parents precede children, and the image is reproducible. */
	qsort(p->v, p->n, sizeof(*p->v), cmp_ent);
}

static int plan_build(struct plan *p, const struct vn_initramfs_spec *spec, struct vn_error *err)
{
	int r;

	plan_add_data(p, "/init", 0755, (const char *)vn_init_sh, sizeof(vn_init_sh) - 1);
	plan_add_data(p, "/etc/passwd", 0644, etc_passwd, sizeof(etc_passwd) - 1);
	plan_add_data(p, "/etc/group", 0644, etc_group, sizeof(etc_group) - 1);
	plan_add_data(p, "/etc/profile", 0644, etc_profile, sizeof(etc_profile) - 1);
	/* Only matters for kernels without the built-in default initramfs. */
	struct ent *con = plan_add(p, ENT_CHARDEV, "/dev/console", 0600);
	con->major = 5;
	con->minor = 1;

	/* Caller files first: they may replace an applet symlink, never a library. */
	for (const char *const *x = spec->extra_files; x && *x; x++) {
		r = plan_add_extra(p, *x, err);
		if (r < 0)
			return r;
	}
	r = plan_add_busybox(p, spec->busybox ? spec->busybox : "/bin/busybox", err);
	if (r < 0)
		return r;
	r = plan_add_program(p, "/usr/bin/numactl", "/usr/bin/numactl", "numactl", err);
	if (r < 0)
		return r;
	r = plan_add_program(p, "/usr/bin/numastat", "/usr/bin/numastat", "numactl", err);
	if (r < 0)
		return r;
	r = plan_add_modules(p, spec, err);
	if (r < 0)
		return r;
	plan_add_parents(p);
	return 0;
}

static void hash_str(struct vn_sha256 *c, const char *s)
{
	vn_sha256_update(c, s, strlen(s) + 1); /* the NUL keeps fields apart */
}

static int plan_hash(const struct plan *p, const struct vn_initramfs_spec *spec, char hex[VN_SHA256_HEX_LEN + 1],
		     struct vn_error *err)
{
	struct vn_sha256 c;
	uint8_t d[VN_SHA256_LEN];
	char buf[64];
	int r;

	vn_sha256_init(&c);
	hash_str(&c, FORMAT_VERSION);
	hash_str(&c, spec->kernel_release ? spec->kernel_release : "");
	for (size_t i = 0; i < p->n; i++) {
		const struct ent *e = &p->v[i];
		snprintf(buf, sizeof(buf), "%d %o", (int)e->kind, (unsigned)e->perm);
		hash_str(&c, buf);
		hash_str(&c, e->path);
		switch (e->kind) {
		case ENT_FILE:
			r = vn_sha256_file(e->host, d, err);
			if (r < 0)
				return r;
			vn_sha256_update(&c, d, sizeof(d));
			break;
		case ENT_DATA:
			snprintf(buf, sizeof(buf), "%zu", e->len);
			hash_str(&c, buf);
			vn_sha256_update(&c, e->data, e->len);
			break;
		case ENT_SYMLINK:
			hash_str(&c, e->target);
			break;
		case ENT_CHARDEV:
			snprintf(buf, sizeof(buf), "%u:%u", e->major, e->minor);
			hash_str(&c, buf);
			break;
		case ENT_DIR:
			break;
		}
	}
	vn_sha256_final(&c, d);
	vn_sha256_hex(d, hex);
	return 0;
}

/* ---- writing ---- */

static void archive_writep(struct archive **a)
{
	if (*a)
		archive_write_free(*a);
}

static void archive_entryp(struct archive_entry **e)
{
	if (*e)
		archive_entry_free(*e);
}

/* A temp file that is removed unless it was renamed into place. */
static void unlink_tmpp(char **path)
{
	if (*path) {
		unlink(*path);
		free(*path);
	}
}

static int write_entry(struct archive *a, struct archive_entry *ae, const struct ent *e, unsigned ino,
		       const char *out, struct vn_error *err)
{
	_cleanup_close_ int fd = -1;
	mode_t type = 0;

	archive_entry_clear(ae);
	archive_entry_set_pathname(ae, e->path + 1); /* cpio names are relative */
	archive_entry_set_ino(ae, ino);
	archive_entry_set_nlink(ae, e->kind == ENT_DIR ? 2 : 1);
	archive_entry_set_uid(ae, 0);
	archive_entry_set_gid(ae, 0);
	archive_entry_set_mtime(ae, 0, 0);
	archive_entry_set_size(ae, 0);
	switch (e->kind) {
	case ENT_DIR:
		type = AE_IFDIR;
		break;
	case ENT_DATA:
		type = AE_IFREG;
		archive_entry_set_size(ae, (la_int64_t)e->len);
		break;
	case ENT_SYMLINK:
		type = AE_IFLNK;
		archive_entry_set_symlink(ae, e->target);
		break;
	case ENT_CHARDEV:
		type = AE_IFCHR;
		archive_entry_set_rdevmajor(ae, e->major);
		archive_entry_set_rdevminor(ae, e->minor);
		break;
	case ENT_FILE: {
		struct stat st;
		type = AE_IFREG;
		fd = open(e->host, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0)
			return vn_infra_error(err, -errno, "%s: %s", e->host, strerror(errno));
		archive_entry_set_size(ae, st.st_size);
		break;
	}
	}
	archive_entry_set_filetype(ae, type);
	archive_entry_set_perm(ae, e->perm);
	if (archive_write_header(a, ae) != ARCHIVE_OK)
		return vn_infra_error(err, -EIO, "%s: writing %s: %s", out, e->path, archive_error_string(a));

	if (e->kind == ENT_DATA && e->len &&
	    archive_write_data(a, e->data, e->len) != (la_ssize_t)e->len)
		return vn_infra_error(err, -EIO, "%s: writing %s: %s", out, e->path, archive_error_string(a));
	if (e->kind == ENT_FILE) {
		char buf[128 * 1024];
		la_int64_t left = archive_entry_size(ae);
		while (left > 0) {
			ssize_t n = read(fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return vn_infra_error(err, -errno, "%s: %s", e->host, strerror(errno));
			if (n == 0)
				return vn_infra_error(err, -EIO, "%s: changed while being copied", e->host);
			if (n > left)
				n = (ssize_t)left;
			if (archive_write_data(a, buf, (size_t)n) != n)
				return vn_infra_error(err, -EIO, "%s: writing %s: %s", out, e->path, archive_error_string(a));
			left -= n;
		}
	}
	return 0;
}

static int plan_write(const struct plan *p, const char *tmp, int fd, struct vn_error *err)
{
	_cleanup_(archive_writep) struct archive *a = archive_write_new();
	_cleanup_(archive_entryp) struct archive_entry *ae = archive_entry_new();
	int r;

	if (!a || !ae)
		abort();
	/* gzip level 1: a third the size of plain cpio at a fraction of level 6's time. */
	if (archive_write_set_format_cpio_newc(a) != ARCHIVE_OK || archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
	    archive_write_set_filter_option(a, "gzip", "compression-level", "1") != ARCHIVE_OK ||
	    archive_write_set_filter_option(a, "gzip", "timestamp", NULL) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK || archive_write_open_fd(a, fd) != ARCHIVE_OK)
		return vn_infra_error(err, -EIO, "%s: %s", tmp, archive_error_string(a));
	for (size_t i = 0; i < p->n; i++) {
		r = write_entry(a, ae, &p->v[i], (unsigned)i + 1, tmp, err);
		if (r < 0)
			return r;
	}
	if (archive_write_close(a) != ARCHIVE_OK)
		return vn_infra_error(err, -EIO, "%s: %s", tmp, archive_error_string(a));
	return 0;
}

static int mkdir_p(const char *path, struct vn_error *err)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return vn_infra_error(err, -ENAMETOOLONG, "%s: path too long", path);
	for (char *s = buf + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return vn_infra_error(err, -errno, "cannot create %s: %s", buf, strerror(errno));
		*s = c;
		if (!c)
			break;
	}
	return 0;
}

int vn_initramfs_build(const struct vn_initramfs_spec *spec, const char *cache_dir, char **out_path,
		       struct vn_error *err)
{
	_cleanup_(plan_free) struct plan p = {0};
	_cleanup_free_ char *final = NULL;
	_cleanup_(unlink_tmpp) char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	char hex[VN_SHA256_HEX_LEN + 1];
	struct stat st;
	int r;

	r = plan_build(&p, spec, err);
	if (r < 0)
		return r;
	r = plan_hash(&p, spec, hex, err);
	if (r < 0)
		return r;
	if (asprintf(&final, "%s/initramfs-%s.cpio.gz", cache_dir, hex) < 0)
		abort();
	if (stat(final, &st) == 0 && S_ISREG(st.st_mode)) {
		*out_path = steal_pointer(&final);
		return 0;
	}

	r = mkdir_p(cache_dir, err);
	if (r < 0)
		return r;
	char *t = NULL;
	if (asprintf(&t, "%s/.initramfs-%.16s.XXXXXX", cache_dir, hex) < 0)
		abort();
	fd = mkostemp(t, O_CLOEXEC);
	if (fd < 0) {
		r = vn_infra_error(err, -errno, "cannot create a file in %s: %s", cache_dir, strerror(errno));
		free(t);
		return r;
	}
	tmp = t;
	r = plan_write(&p, tmp, fd, err);
	if (r < 0)
		return r;
	/* libvirt may run QEMU as another user, which must be able to read it. */
	if (fchmod(fd, 0644) < 0 || fsync(fd) < 0)
		return vn_infra_error(err, -errno, "%s: %s", tmp, strerror(errno));
	if (rename(tmp, final) < 0)
		return vn_infra_error(err, -errno, "cannot rename %s to %s: %s", tmp, final, strerror(errno));
	free(steal_pointer(&tmp));
	*out_path = steal_pointer(&final);
	return 0;
}
