#include "util/paths.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"

/* Set by CMake: the source tree, and the installed dirs relative to the bin dir. */
#ifndef VN_SOURCE_DIR
#error "VN_SOURCE_DIR must be defined"
#endif
#ifndef VN_REL_DATADIR
#error "VN_REL_DATADIR must be defined"
#endif
#ifndef VN_REL_LIBEXECDIR
#error "VN_REL_LIBEXECDIR must be defined"
#endif

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* out = a/b in PATH_MAX bytes; false (out empty) when it does not fit. */
static bool path_join(char *out, const char *a, const char *b)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", a, b);

	if (n < 0 || n >= PATH_MAX) {
		out[0] = '\0';
		return false;
	}
	return true;
}

/* dir/rel, canonical when it exists. */
static void join(char *out, const char *dir, const char *rel)
{
	char buf[PATH_MAX];

	out[0] = '\0';
	if (path_join(buf, dir, rel) && !realpath(buf, out))
		memcpy(out, buf, PATH_MAX);
}

void vn_paths_locate(const char *exe, struct vn_paths *p)
{
	char dir[PATH_MAX], cache[PATH_MAX + 16];
	const char *over = getenv("VNUMA_HELPER_DIR");
	char *slash;

	memset(p, 0, sizeof(*p));
	snprintf(dir, sizeof(dir), "%s", exe);
	if ((slash = strrchr(dir, '/')))
		*(slash == dir ? slash + 1 : slash) = '\0';
	snprintf(cache, sizeof(cache), "%s/CMakeCache.txt", dir);
	p->build_tree = is_file(cache);
	if (p->build_tree) {
		snprintf(p->data_dir, sizeof(p->data_dir), "%s", VN_SOURCE_DIR);
		join(p->helper_dirs[p->nhelper_dirs++], dir, "src/agent");
		join(p->helper_dirs[p->nhelper_dirs++], dir, "src/workloads");
		join(p->arch_dir, dir, "arch");
		join(p->plugin_dir, dir, "src/plugin");
		join(p->core_dir, dir, ".");
	} else {
		join(p->data_dir, dir, VN_REL_DATADIR);
		join(p->helper_dirs[p->nhelper_dirs++], dir, VN_REL_LIBEXECDIR);
		join(p->arch_dir, dir, VN_REL_LIBEXECDIR);
		join(p->plugin_dir, dir, VN_REL_LIBEXECDIR);
		join(p->core_dir, dir, VN_REL_LIBEXECDIR);
	}
	if (over && *over) {
		p->nhelper_dirs = 1;
		snprintf(p->helper_dirs[0], sizeof(p->helper_dirs[0]), "%s", over);
	}
}

int vn_paths_self(struct vn_paths *p, struct vn_error *err)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return vn_infra_error(err, -errno, "cannot find own executable (/proc/self/exe): %s", strerror(errno));
	exe[n] = '\0';
	vn_paths_locate(exe, p);
	return 0;
}

size_t vn_paths_data_dirs(const char *subdir, const char *first_dir, char (*dirs)[PATH_MAX], size_t max)
{
	struct vn_paths p;
	struct vn_error e = {0};
	size_t n = 0;

	if (first_dir && n < max)
		snprintf(dirs[n++], PATH_MAX, "%s", first_dir);
	if (n < max)
		snprintf(dirs[n++], PATH_MAX, "./%s", subdir);
	/* Without /proc/self/exe there is no data dir, only the current directory. */
	if (vn_paths_self(&p, &e) == 0 && n < max && path_join(dirs[n], p.data_dir, subdir))
		n++;
	vn_error_clear(&e);
	return n;
}

static bool has_ext(const char *name, const char *ext)
{
	size_t n = strlen(name), k = strlen(ext);

	return n > k && strcmp(name + n - k, ext) == 0;
}

int vn_paths_search(const char *name, const char *subdir, const char *ext, const char *first_dir, char **path,
		    struct vn_strbuf *tried)
{
	char dirs[3][PATH_MAX], buf[PATH_MAX * 2];
	size_t n = vn_paths_data_dirs(subdir, first_dir, dirs, VN_ARRAY_SIZE(dirs));

	*path = NULL;
	if (!*name || strchr(name, '/'))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (tried)
			vn_strbuf_printf(tried, "%s%s", i ? ", " : "", dirs[i]);
		/* NAME.EXT first; NAME as written only when it has the extension already or none fits. */
		for (int with_ext = has_ext(name, ext) ? 0 : 1; with_ext >= 0; with_ext--) {
			snprintf(buf, sizeof(buf), "%s/%s%s", dirs[i], name, with_ext ? ext : "");
			if (!is_file(buf))
				continue;
			if (!(*path = realpath(buf, NULL))) {
				if (errno == ENOMEM)
					vn_oom();
				return 0;
			}
			return 1;
		}
	}
	return 0;
}

int vn_paths_find(const char *arg, const char *what, const char *subdir, const char *ext, const char *first_dir,
		  char **path, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf tried = VN_STRBUF_INIT;
	int rc;

	struct stat st;

	/* Anything that exists is taken as named: its reader then says what is wrong with a FIFO or a directory. */
	if (is_file(arg) || stat(arg, &st) == 0) {
		*path = realpath(arg, NULL);
		return *path ? 0 : vn_input_error(err, "%s: %s", arg, strerror(errno));
	}
	if (!*arg || strchr(arg, '/'))
		return vn_input_error(err, "%s: no such %s file", arg, what);
	if ((rc = vn_paths_search(arg, subdir, ext, first_dir, path, &tried)) < 0)
		return rc;
	if (rc == 0) {
		if (has_ext(arg, ext))
			return vn_input_error(err, "%s: no such %s (not a file, nor in %s)", arg, what, tried.s);
		return vn_input_error(err, "%s: no such %s (not a file, nor %s%s or %s in %s)", arg, what, arg, ext,
				      arg, tried.s);
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int vn_paths_list(const char *subdir, const char *ext, char ***names)
{
	char dirs[3][PATH_MAX];
	size_t ndirs = vn_paths_data_dirs(subdir, NULL, dirs, VN_ARRAY_SIZE(dirs));
	char **v = NULL;
	size_t n = 0, cap = 0, k = 0;

	for (size_t i = 0; i < ndirs; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;
		if (!d)
			continue;
		while ((de = readdir(d))) {
			char full[PATH_MAX * 2];
			if (de->d_name[0] == '.' || !has_ext(de->d_name, ext))
				continue;
			snprintf(full, sizeof(full), "%s/%s", dirs[i], de->d_name);
			if (!is_file(full))
				continue;
			if (n + 2 > cap)
				v = vn_xreallocarray(v, cap = cap ? cap * 2 : 16, sizeof(*v));
			v[n] = vn_xstrndup(de->d_name, strlen(de->d_name) - strlen(ext));
			v[++n] = NULL;
		}
		closedir(d);
	}
	if (!v)
		v = vn_xcalloc(1, sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (k && strcmp(v[k - 1], v[i]) == 0)
			free(v[i]);
		else
			v[k++] = v[i];
	}
	v[k] = NULL;
	*names = v;
	return (int)k;
}
