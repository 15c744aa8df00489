/* The busybox guest image: our in-guest programs and the files of --with packages in an initramfs. */
#include "testbed/guest-image.h"
#include "testbed/testbed-priv.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/initramfs.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/paths.h"
#include "util/spawn.h"
#include "util/strbuf.h"

/* In-guest programs (agent, sampler, tracer, workloads) from vnuma's helper dirs (util/paths.h). */
int vn_testbed_helper_files(enum vn_arch a, char ***out, struct vn_error *err)
{
	struct vn_paths p;
	char agent[PATH_MAX + 16] = "", sampler[PATH_MAX + 16] = "", tracer[PATH_MAX + 16] = "";
	int rc;

	if ((rc = vn_paths_self(&p, err)) < 0)
		return rc;
	/* Another architecture's are the cross-built ones (CMakeLists.txt, cmake/inguest), in one folder. */
	if (a != vn_arch_host()) {
		p.nhelper_dirs = 1;
		snprintf(p.helper_dirs[0], sizeof(p.helper_dirs[0]), "%.*s/%s", PATH_MAX - 16, p.arch_dir,
			 vn_arch_name(a));
	}
	glob_t g = {0};
	for (unsigned i = 0; i < p.nhelper_dirs; i++) {
		char pat[PATH_MAX + 16], f[PATH_MAX + 16];
		snprintf(f, sizeof(f), "%s/vnuma-agent", p.helper_dirs[i]);
		if (!agent[0] && access(f, X_OK) == 0)
			memcpy(agent, f, sizeof(f));
		snprintf(f, sizeof(f), "%s/vnuma-sample", p.helper_dirs[i]);
		if (!sampler[0] && access(f, X_OK) == 0)
			memcpy(sampler, f, sizeof(f));
		snprintf(f, sizeof(f), "%s/vnuma-trace", p.helper_dirs[i]);
		if (!tracer[0] && access(f, X_OK) == 0)
			memcpy(tracer, f, sizeof(f));
		snprintf(pat, sizeof(pat), "%s/vnuma-wl-*", p.helper_dirs[i]);
		glob(pat, i ? GLOB_APPEND : 0, NULL, &g);
	}
	if (!agent[0]) {
		globfree(&g);
		return vn_infra_error(
			err, -ENOENT,
			"guest agent vnuma-agent not found in %s%s%s (build the vnuma-agent target, or "
			"set VNUMA_HELPER_DIR%s)",
			p.helper_dirs[0], p.nhelper_dirs > 1 ? " or " : "", p.nhelper_dirs > 1 ? p.helper_dirs[1] : "",
			a != vn_arch_host() ? "; another architecture's needs its cross compiler and json-c: "
					      "scripts/setup.sh --arches, then rebuild"
					    : "");
	}

	char **v = vn_xcalloc(g.gl_pathc + 4, sizeof(char *));
	size_t k = 0;
	v[k++] = vn_xasprintf("%s:%s", agent, VN_INITRAMFS_AGENT_PATH);
	if (sampler[0])
		v[k++] = vn_xasprintf("%s:%s/vnuma-sample", sampler, VN_INITRAMFS_WORKLOAD_DIR);
	if (tracer[0])
		v[k++] = vn_xasprintf("%s:%s/vnuma-trace", tracer, VN_INITRAMFS_WORKLOAD_DIR);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *base = strrchr(g.gl_pathv[i], '/') + 1;
		v[k++] = vn_xasprintf("%s:%s/%s", g.gl_pathv[i], VN_INITRAMFS_WORKLOAD_DIR, base);
	}
	globfree(&g);
	*out = v;
	return 0;
}

/* Where a package's files may go into the guest: programs, libraries, their data; never docs. */
static bool package_path_ok(const char *path)
{
	static const char *const in[] = {"/bin/",   "/sbin/",    "/usr/bin/",     "/usr/sbin/",  "/lib/",
					 "/lib64/", "/usr/lib/", "/usr/libexec/", "/usr/share/", "/etc/"};
	static const char *const out[] = {"/usr/share/doc/",    "/usr/share/man/",     "/usr/share/info/",
					  "/usr/share/locale/", "/usr/share/lintian/", "/usr/share/bug/"};
	bool ok = false;

	for (size_t i = 0; i < VN_ARRAY_SIZE(in); i++)
		ok |= strncmp(path, in[i], strlen(in[i])) == 0;
	for (size_t i = 0; i < VN_ARRAY_SIZE(out); i++)
		ok &= strncmp(path, out[i], strlen(out[i])) != 0;
	/* The initramfs takes "HOST:GUEST" pairs: a name with a colon or a newline cannot be one. */
	return ok && !strpbrk(path, ":\n");
}

/*
 * A Debian package installed on the host, as "HOST:GUEST" pairs of its
 * regular files (same path in the guest; the builder brings ELF libraries
 * along). A static build (bash-static's /bin/bash-static) also answers to its
 * plain name, so "#!/bin/bash" scripts run.
 */
static int package_files(const char *pkg, char ***files, size_t *n, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf list = VN_STRBUF_INIT;
	struct vn_spawn_opts so = VN_SPAWN_OPTS_INIT;
	size_t added = 0;

	if (!*pkg || strspn(pkg, "abcdefghijklmnopqrstuvwxyz0123456789+.-") != strlen(pkg) ||
	    !isalnum((unsigned char)*pkg))
		return vn_input_error(err, "--with %s: not a Debian package name", pkg);
	so.capture = &list;
	const char *argv[] = {"dpkg-query", "-L", pkg, NULL};
	int rc = vn_spawn_run(argv, &so, err);
	if (rc < 0)
		return vn_error_prefix(err, "--with %s", pkg);
	if (rc != 0)
		return vn_input_error(err, "--with %s: the package is not installed on this host (apt-get install %s)",
				      pkg, pkg);
	for (char *save = NULL, *l = strtok_r(list.s ? list.s : (char[]){0}, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		struct stat st;
		if (!package_path_ok(l) || stat(l, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (added++ == VN_TESTBED_PACKAGE_FILES_MAX)
			return vn_input_error(err, "--with %s: more than %d files; too big for the guest image", pkg,
					      VN_TESTBED_PACKAGE_FILES_MAX);
		*files = vn_xreallocarray(*files, *n + 3, sizeof(char *));
		(*files)[(*n)++] = vn_xasprintf("%s:%s", l, l);
		size_t len = strlen(l);
		if (len > 7 && strcmp(l + len - 7, "-static") == 0 && strstr(l, "bin/"))
			(*files)[(*n)++] = vn_xasprintf("%s:%.*s", l, (int)(len - 7), l);
		(*files)[*n] = NULL;
	}
	if (!added)
		return vn_input_error(err, "--with %s: the package has no programs or libraries to add", pkg);
	return 0;
}

int vn_testbed_guest_image(const char *cache_dir, const struct vn_kernel *k, const struct vn_guest_arch *ga,
			   const char *const *with, bool disk_root, char **initrd, struct vn_error *err)
{
	/*
	 * 9p's, for --share (share.h): loaded whether or not a share is asked
	 * for, so one initramfs serves both; the same for the NVDIMM's, on x86
	 * only (slow nodes boot there alone; ppc64le's kernel has no nfit).
	 */
	static const char *const modules[] = {VN_INITRAMFS_DEFAULT_MODULES, "9pnet_virtio", "9p", NULL};
	static const char *const modules_x86[] = {VN_INITRAMFS_DEFAULT_MODULES, VN_INITRAMFS_X86_MODULES,
						  "9pnet_virtio", "9p", NULL};
	static const char *const share[] = {VN_INITRAMFS_SHARE_MODULES, NULL};
	/* A disk root: the initramfs mounts it and switches to it (ext4 is a module in Debian's kernel, and the
	 * crc32c it asks the crypto API for is one no modules.dep names). */
	static const char *const disk_modules[] = {
		VN_INITRAMFS_DEFAULT_MODULES, "9pnet_virtio", "9p", "ext4", "crc32c_generic", NULL};
	static const char *const disk_modules_x86[] = {VN_INITRAMFS_DEFAULT_MODULES,
						       VN_INITRAMFS_X86_MODULES,
						       "9pnet_virtio",
						       "9p",
						       "ext4",
						       "crc32c_generic",
						       NULL};
	bool x86 = (ga ? ga->arch : vn_arch_host()) == VN_ARCH_X86_64;
	_cleanup_strv_ char **files = NULL;
	int rc;

	if (ga && with && *with)
		return vn_input_error(err, "--with %s: the host's packages are %s programs; the guest is %s", *with,
				      vn_arch_name(vn_arch_host()), vn_arch_name(ga->arch));
	if ((rc = vn_testbed_helper_files(ga ? ga->arch : vn_arch_host(), &files, err)) < 0)
		return rc;
	size_t n = 0;
	while (files[n])
		n++;
	for (const char *const *p = with; p && *p; p++)
		if ((rc = package_files(*p, &files, &n, err)) < 0)
			return rc;
	/* LTP's tests look for the kernel's config there when it has no /proc/config.gz (IKCONFIG). */
	if (k->config && k->release && !strpbrk(k->config, ":\n")) {
		files = vn_xreallocarray(files, n + 2, sizeof(char *));
		files[n++] = vn_xasprintf("%s:/boot/config-%s", k->config, k->release);
		files[n] = NULL;
	}
	struct vn_initramfs_spec spec = {
		.kernel_release = k->modules_dir ? k->release : NULL,
		.modules_dir = k->modules_dir,
		.modules = !k->modules_dir ? NULL
			   : disk_root     ? (x86 ? disk_modules_x86 : disk_modules)
					   : (x86 ? modules_x86 : modules),
		.share_modules = k->modules_dir ? share : NULL,
		.extra_files = (const char *const *)files,
		.sysroot = ga ? ga->root : NULL,
	};
	if ((rc = vn_initramfs_build(&spec, cache_dir, initrd, err)) < 0)
		return vn_error_prefix(err, "building the guest initramfs");
	return 0;
}
