/*
 * The modules walker (libkmod) on a synthetic modules directory: order,
 * names, aliases, built-ins and broken trees; then an installed kernel
 * package's modules against modprobe --show-depends.
 *
 * libkmod reads depmod's binary indexes, never modules.dep's text, so the
 * fixture is a real one: each module a relocatable object the C compiler
 * makes from two lines (a __ksymtab_strings entry exports a symbol, an
 * undefined reference imports one, .modinfo carries aliases), indexed by
 * depmod -b, as a kernel package's postinst or make modules_install does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "guest/modules-dep.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/strbuf.h"

#define RELEASE "9.9.9-vntest"

static char base[] = "/tmp/vn-test-modules-dep-XXXXXX";
static char *dir; /* base/lib/modules/RELEASE */

static void put(const char *name, const char *text)
{
	_cleanup_free_ char *p = vn_xasprintf("%s/%s", dir, name);
	assert_int_equal(vn_file_write(p, text), 0);
}

/* A module at rel that exports the space-separated exports, calls uses, and carries alias. */
static void module(const char *rel, const char *exports, const char *uses, const char *alias)
{
	_cleanup_free_ char *src = vn_xasprintf("%s/m.c", base), *ko = vn_xasprintf("%s/%s", dir, rel);
	_cleanup_free_ char *sub = vn_xstrdup(ko);
	_cleanup_strbuf_ struct vn_strbuf c = VN_STRBUF_INIT, ks = VN_STRBUF_INIT;
	struct vn_error err = {0};

	*strrchr(sub, '/') = '\0';
	assert_int_equal(vn_mkdir_p(sub, 0755, &err), 0);
	_cleanup_free_ char *ex = vn_xstrdup(exports), *us = vn_xstrdup(uses);
	char *save = NULL;
	for (char *s = strtok_r(ex, " ", &save); s; s = strtok_r(NULL, " ", &save))
		vn_strbuf_printf(&ks, "%s\\0", s);
	vn_strbuf_printf(&c, "__attribute__((section(\"__ksymtab_strings\"), used)) static const char ks[] = \"%s\";\n",
			 ks.s ? ks.s : "");
	if (alias)
		vn_strbuf_printf(
			&c, "__attribute__((section(\".modinfo\"), used)) static const char mi[] = \"alias=%s\";\n",
			alias);
	vn_strbuf_printf(&c, "void f(void);\nvoid f(void) {\n");
	save = NULL;
	for (char *s = strtok_r(us, " ", &save); s; s = strtok_r(NULL, " ", &save))
		vn_strbuf_printf(&c, "\textern void %s(void); %s();\n", s, s);
	vn_strbuf_printf(&c, "}\n");
	assert_int_equal(vn_file_write(src, c.s), 0);
	_cleanup_free_ char *cmd = vn_xasprintf("'%s' -c -o '%s' '%s'", VN_CC, ko, src);
	assert_int_equal(system(cmd), 0);
}

static int depmod(void)
{
	_cleanup_free_ char *cmd =
		vn_xasprintf("PATH=/usr/sbin:/sbin:$PATH depmod -b '%s' %s 2>/dev/null", base, RELEASE);
	return system(cmd);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(base))
		return -1;
	dir = vn_xasprintf("%s/lib/modules/%s", base, RELEASE);
	module("kernel/drivers/virtio/virtio.ko", "virtio_x", "", NULL);
	module("kernel/drivers/virtio/virtio_ring.ko", "ring_x ring_y", "virtio_x", NULL);
	module("kernel/drivers/virtio/virtio_pci.ko", "", "ring_y", NULL);
	module("kernel/drivers/char/virtio_console.ko", "", "virtio_x", "vn-test-console");
	module("kernel/fs/fuse/cuse-x.ko", "", "", NULL);
	put("modules.builtin", "kernel/drivers/tty/serial/8250/8250.ko\n");
	return depmod() == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(dir);
	return vn_rm_rf(base);
}

static char *order_of(const char *moddir, const char *const *names, struct vn_error *err, int *rc)
{
	_cleanup_strv_ char **order = NULL;
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;

	*rc = vn_modules_dep_order(moddir, names, "linux-image-test", &order, err);
	if (*rc < 0)
		return NULL;
	for (char **o = order; *o; o++)
		vn_strbuf_printf(&b, "%s ", *o);
	return b.s ? vn_strbuf_steal(&b) : vn_xstrdup("");
}

static void test_order(void **state)
{
	(void)state;
	struct vn_error err = {0};
	int rc;

	/* Dependencies first (virtio_pci needs virtio_ring, which needs virtio), each once; '-' and '_' alike; a
	 * built-in needs nothing. */
	const char *names[] = {"virtio-pci", "virtio_console", "8250", "cuse_x", NULL};
	_cleanup_free_ char *o = order_of(dir, names, &err, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(o, "kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko "
			       "kernel/drivers/virtio/virtio_pci.ko kernel/drivers/char/virtio_console.ko "
			       "kernel/fs/fuse/cuse-x.ko ");
	const char *none[] = {"8250", NULL};
	_cleanup_free_ char *e = order_of(dir, none, &err, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(e, "");
	/* An alias (modules.alias, from the module's .modinfo), as modprobe resolves it. */
	const char *alias[] = {"vn-test-console", NULL};
	_cleanup_free_ char *a = order_of(dir, alias, &err, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(a, "kernel/drivers/virtio/virtio.ko kernel/drivers/char/virtio_console.ko ");
	/* A prefix of a name is not the name. */
	const char *prefix[] = {"virtio_p", NULL};
	assert_null(order_of(dir, prefix, &err, &rc));
	assert_int_equal(rc, -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "kernel module virtio_p is not in "));
	vn_error_clear(&err);
}

static void test_broken(void **state)
{
	(void)state;
	struct vn_error err = {0};
	int rc;
	const char *ring[] = {"virtio_ring", NULL};

	/* A dependency's file gone since depmod indexed it. */
	_cleanup_free_ char *ko = vn_xasprintf("%s/kernel/drivers/virtio/virtio.ko", dir);
	_cleanup_free_ char *kept = vn_xasprintf("%s/virtio.ko", base);
	assert_int_equal(rename(ko, kept), 0);
	assert_null(order_of(dir, ring, &err, &rc));
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "modules.dep: dependencies of virtio_ring: "));
	vn_error_clear(&err);
	assert_int_equal(rename(kept, ko), 0);

	/* modules.dep's text without depmod's index, and neither. */
	_cleanup_free_ char *bin = vn_xasprintf("%s/modules.dep.bin", dir), *txt = vn_xasprintf("%s/modules.dep", dir);
	assert_int_equal(vn_rm_rf(bin), 0);
	assert_null(order_of(dir, ring, &err, &rc));
	assert_int_equal(rc, -ENOENT);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg,
			       "modules.dep.bin: No such file or directory (only its text form is there: run depmod)"));
	vn_error_clear(&err);
	assert_int_equal(vn_rm_rf(txt), 0);
	assert_null(order_of(dir, ring, &err, &rc));
	assert_int_equal(rc, -ENOENT);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "(install the Debian package linux-image-test)"));
	vn_error_clear(&err);
	assert_int_equal(depmod(), 0);
	_cleanup_free_ char *again = order_of(dir, ring, &err, &rc);
	assert_string_equal(again, "kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko ");
}

/* The running kernel's modules directory, else the first one a kernel package installed (a container's host kernel has
 * none here). */
static bool host_release(char *out, size_t len)
{
	struct utsname u;
	char path[PATH_MAX];

	if (uname(&u) == 0) {
		snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep.bin", u.release);
		if (access(path, R_OK) == 0) {
			snprintf(out, len, "%s", u.release);
			return true;
		}
	}
	DIR *d = opendir("/lib/modules");
	bool found = false;
	for (struct dirent *de; d && !found && (de = readdir(d));) {
		snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep.bin", de->d_name);
		if (de->d_name[0] != '.' && access(path, R_OK) == 0) {
			snprintf(out, len, "%s", de->d_name);
			found = true;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* modprobe's own answer (kmod's tool; -C /dev/null: no configuration, as ours): what it would insmod, in its order. */
static void modprobe_list(const char *release, const char *moddir, const char *name, char ***out, size_t *n)
{
	_cleanup_free_ char *cmd = vn_xasprintf(
		"PATH=/usr/sbin:/sbin:$PATH modprobe -C /dev/null -S %s --show-depends %s 2>/dev/null", release, name);
	char line[PATH_MAX + 64];
	FILE *f = popen(cmd, "r");

	assert_non_null(f);
	*out = NULL;
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, moddir);
		if (strncmp(line, "insmod ", 7) != 0 || !p)
			continue;
		p[strcspn(p, " \n")] = '\0';
		vn_strv_push(out, n, p + strlen(moddir) + 1);
	}
	pclose(f);
}

static ssize_t index_of(char **v, const char *s)
{
	for (ssize_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return i;
	return -1;
}

/*
 * A kernel package's modules, where there is one, for the modules vnuma's
 * guests load: the same modules as modprobe would load, and each after
 * everything modprobe says it needs. (The orders may differ where two
 * modules are independent: ours walks modules.dep's lines forwards, as
 * vnuma always has, modprobe backwards.) Modules with soft dependencies are
 * left out: modprobe loads those too, vnuma does not.
 */
static void test_host_kernel_as_modprobe(void **state)
{
	(void)state;
	static const char *const mods[] = {"virtio_net", "virtio_blk", "virtio_console", "virtio_pci", "9pnet_virtio"};
	char release[256], moddir[PATH_MAX];
	size_t compared = 0;

	if (!host_release(release, sizeof(release)) ||
	    system("PATH=/usr/sbin:/sbin:$PATH modprobe -V >/dev/null 2>&1") != 0) {
		print_message("skipped: no /lib/modules/*/modules.dep.bin (linux-image-amd64) or no modprobe (kmod)\n");
		return;
	}
	snprintf(moddir, sizeof(moddir), "/lib/modules/%s", release);
	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		_cleanup_strv_ char **theirs = NULL, **ours = NULL;
		size_t n_theirs, n_ours = 0;
		modprobe_list(release, moddir, mods[i], &theirs, &n_theirs);
		if (!n_theirs)
			continue; /* not a module of this kernel (built in, or not built) */
		const char *names[] = {mods[i], NULL};
		struct vn_error err = {0};
		if (vn_modules_dep_order(moddir, names, NULL, &ours, &err) < 0)
			fail_msg("%s: %s", mods[i], err.msg);
		while (ours[n_ours])
			n_ours++;
		assert_int_equal(n_ours, n_theirs);
		for (size_t k = 0; k < n_ours; k++) {
			if (index_of(theirs, ours[k]) < 0)
				fail_msg("%s: we load %s, modprobe does not", mods[i], ours[k]);
			/* What modprobe loads for this one module must all be loaded by then. */
			_cleanup_strv_ char **needs = NULL;
			size_t n_needs;
			_cleanup_free_ char *mod = vn_xstrdup(strrchr(ours[k], '/') + 1);
			mod[strcspn(mod, ".")] = '\0';
			modprobe_list(release, moddir, mod, &needs, &n_needs);
			for (size_t j = 0; j < n_needs; j++) {
				ssize_t at = index_of(ours, needs[j]);
				if (at < 0 || (size_t)at > k)
					fail_msg("%s: %s is loaded after %s, which needs it", mods[i], needs[j],
						 ours[k]);
			}
		}
		compared++;
	}
	print_message("%zu modules of %s as modprobe resolves them\n", compared, release);
	assert_true(compared > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_broken),
		cmocka_unit_test(test_host_kernel_as_modprobe),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
