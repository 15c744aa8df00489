/*
 * Kernel configs: the base target, the recipe's fragments through
 * merge_config.sh, olddefconfig, and the check that every option asked for
 * survived into the final .config.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/kernel-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/spawn.h"
#include "util/file.h"

/* What the guest needs on every architecture; then each one's firmware tables, serial console and PCI host. */
#define VN_KERNEL_REQUIRED_COMMON                                                                                      \
	"CONFIG_NUMA", "CONFIG_NUMA_BALANCING", "CONFIG_MIGRATION", "CONFIG_TRANSPARENT_HUGEPAGE", "CONFIG_HUGETLBFS", \
		"CONFIG_CGROUPS", "CONFIG_CGROUP_SCHED", "CONFIG_CPUSETS", "CONFIG_DEBUG_FS", "CONFIG_VIRTIO_PCI",     \
		"CONFIG_VIRTIO_CONSOLE", "CONFIG_VIRTIO_BLK", "CONFIG_BLK_DEV_INITRD", "CONFIG_DEVTMPFS",              \
		"CONFIG_PROC_FS", "CONFIG_SYSFS", "CONFIG_TMPFS", "CONFIG_BINFMT_ELF", "CONFIG_BINFMT_SCRIPT",         \
		"CONFIG_FUTEX", "CONFIG_EPOLL", "CONFIG_PRINTK"

static const char *const required_x86[] = {
	VN_KERNEL_REQUIRED_COMMON, "CONFIG_ACPI_NUMA",           "CONFIG_ACPI_HMAT",
	"CONFIG_SERIAL_8250",      "CONFIG_SERIAL_8250_CONSOLE", NULL,
};

/* The virt machine without UEFI: a device tree (OF_NUMA), a PL011, the generic PCIe host. */
static const char *const required_arm64[] = {
	VN_KERNEL_REQUIRED_COMMON,          "CONFIG_OF_NUMA",          "CONFIG_SERIAL_AMBA_PL011",
	"CONFIG_SERIAL_AMBA_PL011_CONSOLE", "CONFIG_PCI_HOST_GENERIC", NULL,
};

/*
 * pseries: ibm,associativity in the device tree, the hypervisor's console
 * (hvc0), prom_init, through which SLOF hands over (without it SLOF stops
 * at "Booting from memory..." with a program exception), and VSX, which
 * Debian's ppc64el programs use from their first instructions (busybox's
 * init dies of an illegal instruction without it).
 */
static const char *const required_ppc64le[] = {
	VN_KERNEL_REQUIRED_COMMON,
	"CONFIG_PPC64",
	"CONFIG_CPU_LITTLE_ENDIAN",
	"CONFIG_PPC_PSERIES",
	"CONFIG_HVC_CONSOLE",
	"CONFIG_PPC_OF_BOOT_TRAMPOLINE",
	NULL,
};

const char *const *vn_kernel_required_options(enum vn_arch arch)
{
	switch (arch) {
	case VN_ARCH_ARM64: return required_arm64;
	case VN_ARCH_PPC64LE: return required_ppc64le;
	default: return required_x86;
	}
}

/*
 * DWARF in the toolchain's default version (Debian's own kernel's choice:
 * gcc 12 writes DWARF 5, which gdb, crash 8 and drgn read), whole rather
 * than reduced (the gdb scripts refuse reduced info), uncompressed (as
 * Debian's -dbg vmlinux; crash reads it as is), and the gdb scripts. The
 * choice hangs under DEBUG_KERNEL, which tinyconfig leaves out. Names as in
 * 5.18+'s lib/Kconfig.debug (6.1's); older kernels spell DEBUG_INFO as a
 * plain option, which the check below names if it does not survive.
 */
#define VN_KERNEL_DEBUG_INFO                            \
	"CONFIG_DEBUG_KERNEL=y\n"                       \
	"CONFIG_DEBUG_INFO=y\n"                         \
	"CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y\n" \
	"# CONFIG_DEBUG_INFO_REDUCED is not set\n"      \
	"# CONFIG_DEBUG_INFO_SPLIT is not set\n"        \
	"# CONFIG_DEBUG_INFO_COMPRESSED is not set\n"   \
	"CONFIG_GDB_SCRIPTS=y\n"

static const char debug_fragment[] = VN_KERNEL_DEBUG_INFO;

/*
 * A debug kernel is the one a developer dumps, so on x86 (where the guest
 * has QEMU's ISA pvpanic and vmcoreinfo devices, virt/domain-xml.c) it also
 * gets what makes a dump of it readable, built in as a recipe has no
 * modules: PVPANIC_MMIO tells QEMU of a panic before panic=-1's reset
 * (without it the guest resets and nothing is kept); FW_CFG_SYSFS hands
 * QEMU the VMCOREINFO note, which crash and drgn need for KASLR's offset
 * and phys_base, and which the driver writes only with CRASH_CORE, selected
 * through KEXEC_CORE by KEXEC (6.1: nothing lighter selects it); and
 * MAGIC_SYSRQ for /proc/sysrq-trigger's 'c', the panic on demand.
 */
static const char debug_fragment_x86[] = VN_KERNEL_DEBUG_INFO "CONFIG_MAGIC_SYSRQ=y\n"
							      "CONFIG_KEXEC=y\n"
							      "CONFIG_FW_CFG_SYSFS=y\n"
							      "CONFIG_PVPANIC=y\n"
							      "CONFIG_PVPANIC_MMIO=y\n";

const char *vn_kernel_debug_fragment(enum vn_arch arch)
{
	return arch == VN_ARCH_X86_64 ? debug_fragment_x86 : debug_fragment;
}

/* The value of CONFIG_X in a .config text: "y", "64", "n" for "is not set" or absent. */
static void config_value(const char *text, const char *opt, char *val, size_t cap)
{
	size_t ol = strlen(opt);
	snprintf(val, cap, "n");
	for (const char *l = text; l && *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		if (len > ol && strncmp(l, opt, ol) == 0 && l[ol] == '=') {
			snprintf(val, cap, "%.*s", (int)(len - ol - 1), l + ol + 1);
			return;
		}
		l = e ? e + 1 : NULL;
	}
}

int vn_kernel_config_verify(const char *final_config, const char *wanted, char **report)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	int dropped = 0;

	*report = NULL;
	for (const char *l = wanted; l && *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		char opt[128] = "", want[256] = "", got[256];
		if (len > 7 && strncmp(l, "CONFIG_", 7) == 0 && memchr(l, '=', len)) {
			const char *eq = memchr(l, '=', len);
			snprintf(opt, sizeof(opt), "%.*s", (int)(eq - l), l);
			snprintf(want, sizeof(want), "%.*s", (int)(len - (size_t)(eq - l) - 1), eq + 1);
		} else if (len > 9 && strncmp(l, "# CONFIG_", 9) == 0 && len > 13 &&
			   strncmp(l + len - 11, " is not set", 11) == 0) {
			snprintf(opt, sizeof(opt), "%.*s", (int)(len - 2 - 11), l + 2);
			snprintf(want, sizeof(want), "n");
		}
		l = e ? e + 1 : NULL;
		if (!opt[0])
			continue;
		config_value(final_config, opt, got, sizeof(got));
		if (strcmp(want, got) == 0)
			continue;
		/* Asked for twice (a fragment and the built-in list): reported once. */
		char mark[140];
		snprintf(mark, sizeof(mark), "\n%s:", opt);
		if (b.s && (strncmp(b.s, mark + 1, strlen(mark + 1)) == 0 || strstr(b.s, mark)))
			continue;
		dropped++;
		vn_strbuf_printf(&b, "%s: wanted %s, got %s\n", opt, strcmp(want, "n") ? want : "not set",
				 strcmp(got, "n") ? got : "not set");
	}
	if (dropped)
		*report = vn_strbuf_steal(&b);
	vn_strbuf_free(&b);
	return dropped;
}

static int fragment_path(const struct vn_kernel_work *w, size_t i, char *buf, size_t cap)
{
	if (w->cf->fragments[i]) {
		snprintf(buf, cap, "%s", w->cf->fragments[i]);
		return 0;
	}
	snprintf(buf, cap, "%s/arch/%s/configs/%s", w->src, vn_arch_info(w->o->arch)->karch, w->cf->fragment_names[i]);
	if (access(buf, F_OK) == 0)
		return 0;
	snprintf(buf, cap, "%s/kernel/configs/%s", w->src, w->cf->fragment_names[i]);
	return access(buf, F_OK) == 0 ? 0 : -ENOENT;
}

/* Where the config in use sits in the recipe, for errors: written into p, which is returned. */
static const char *config_jpath(const struct vn_kernel_work *w, char p[64])
{
	if (w->cf == &w->r->kconfig)
		return "$.config";
	snprintf(p, 64, "$.config.arch.%s", vn_arch_name(w->o->arch));
	return p;
}

/*
 * merge_config.sh word-splits its file arguments (for f in $MERGE_LIST), so
 * a recipe folder with a space in its path would hand it halves of paths:
 * each fragment is copied into OBJ/vnuma-fragments/ as TAG-NAME, NAME with
 * anything but [A-Za-z0-9._-] made "_", and the script runs in OBJ with
 * relative paths only.
 */
static int stage_copy(const struct vn_kernel_work *w, const char *from, const char *dir, const char *tag,
		      const char *name, char **rel, struct vn_error *err)
{
	_cleanup_free_ char *plain = vn_xstrdup(name), *to = NULL;
	int rc;

	for (char *c = plain; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
		      *c == '_' || *c == '-'))
			*c = '_';
	*rel = vn_xasprintf("%s/%s-%s", dir, tag, plain);
	to = vn_xasprintf("%s/%s", w->obj, *rel);
	if ((rc = vn_file_copy(from, to)) < 0)
		return vn_infra_error(err, rc, "copying %s to %s: %s", from, to, strerror(-rc));
	return 0;
}

static int stage_fragment(const struct vn_kernel_work *w, size_t i, const char *dir, char **rel, struct vn_error *err)
{
	char from[PATH_MAX], jp[64], tag[32];

	if (fragment_path(w, i, from, sizeof(from)) < 0)
		return vn_input_error(err,
				      "%s: %s.fragments[%zu]: %s is neither beside the recipe (%s/) "
				      "nor in the kernel's arch/%s/configs or kernel/configs",
				      w->r->path, config_jpath(w, jp), i, w->cf->fragment_names[i], w->r->dir,
				      vn_arch_info(w->o->arch)->karch);
	snprintf(tag, sizeof(tag), "%02zu", i);
	return stage_copy(w, from, dir, tag, w->cf->fragment_names[i], rel, err);
}

/* The config of the recipe's selftest i in the tree being built (malloc'd). */
static char *selftest_config(const struct vn_kernel_work *w, size_t i)
{
	return vn_xasprintf("%s/tools/testing/selftests/%s/config", w->src, w->cf->selftests[i]);
}

/* 6.3 renamed selftests/vm to mm: a recipe written for one tree, built on the other, is told the tree's name. */
static const char *renamed_hint(const struct vn_kernel_work *w, const char *name)
{
	const char *other = !strcmp(name, "vm") ? "mm" : !strcmp(name, "mm") ? "vm" : NULL;
	if (!other)
		return "";
	_cleanup_free_ char *p = vn_xasprintf("%s/tools/testing/selftests/%s/config", w->src, other);
	if (!vn_is_file(p))
		return "";
	return !strcmp(other, "mm") ? " (this tree names it \"mm\")" : " (this tree names it \"vm\")";
}

/*
 * Whether the work tree's .config is current is told by a marker: the config
 * hash, and where the recipe names selftests also their configs' bytes, read
 * here from the tree being built (unpacked or checked out, and patched). A
 * git tree's work tree serves every commit, and patches share one too, so a
 * commit or a patch that changes a selftest's config must configure again
 * under the same config hash. A selftest the tree lacks is the recipe's error.
 */
static int config_mark(const struct vn_kernel_work *w, const char *chash, char **mark, struct vn_error *err)
{
	struct vn_sha256 c;
	uint8_t d[VN_SHA256_LEN];
	char hex[VN_SHA256_HEX_LEN + 1], jp[64];
	int rc;

	if (!w->cf->nselftests) {
		*mark = vn_xstrdup(chash);
		return 0;
	}
	vn_sha256_init(&c);
	for (size_t i = 0; i < w->cf->nselftests; i++) {
		const char *name = w->cf->selftests[i];
		_cleanup_free_ char *p = selftest_config(w, i);
		if (!vn_is_file(p))
			return vn_input_error(err,
					      "%s: %s.selftests[%zu]: \"%s\": the tree has no "
					      "tools/testing/selftests/%s/config%s",
					      w->r->path, config_jpath(w, jp), i, name, name, renamed_hint(w, name));
		if ((rc = vn_kernel_hash_file(&c, p, err)) < 0)
			return rc;
	}
	vn_sha256_final(&c, d);
	vn_sha256_hex(d, hex);
	*mark = vn_xasprintf("%s+selftests-%s", chash, hex);
	return 0;
}

/* sh merge_config.sh -m -O . .config vnuma-fragments/NN-NAME...: the fragments over the base, in OBJ. */
static int merge_fragments(const struct vn_kernel_work *w, struct vn_error *err)
{
	static const char dir[] = "vnuma-fragments";
	_cleanup_free_ char *script = vn_xasprintf("%s/scripts/kconfig/merge_config.sh", w->src);
	_cleanup_free_ char *staged = vn_xasprintf("%s/%s", w->obj, dir);
	size_t nf = w->cf->nfragments, ns = w->cf->nselftests;
	_cleanup_free_ const char **argv = vn_xcalloc(nf + ns + 8, sizeof(char *));
	_cleanup_(vn_strvfreep) char **paths = vn_xcalloc(nf + ns + 1, sizeof(char *));
	struct vn_kernel_watch mw = {.w = w};
	struct vn_spawn_opts so = {.cwd = w->obj, .log_fd = w->log_fd, .line = vn_kernel_watch_line, .line_data = &mw};
	size_t a = 0;
	int rc;

	vn_rm_rf(staged);
	if ((rc = vn_mkdir_p(staged, 0755, err)) < 0)
		return rc;
	argv[a++] = "sh";
	argv[a++] = script;
	argv[a++] = "-m";
	argv[a++] = "-O";
	argv[a++] = ".";
	argv[a++] = ".config";
	for (size_t i = 0; i < nf; i++) {
		if ((rc = stage_fragment(w, i, dir, &paths[i], err)) < 0)
			return rc;
		argv[a++] = paths[i];
	}
	/* After the recipe's fragments: a selftest's options (USERFAULTFD, TEST_HMM=m) sit over the config they need. */
	for (size_t i = 0; i < ns; i++) {
		char tag[32];
		_cleanup_free_ char *from = selftest_config(w, i),
				    *name = vn_xasprintf("%s.config", w->cf->selftests[i]);
		snprintf(tag, sizeof(tag), "selftest-%02zu", i);
		if ((rc = stage_copy(w, from, dir, tag, name, &paths[nf + i], err)) < 0)
			return rc;
		argv[a++] = paths[nf + i];
	}
	/* Last, so that a recipe's own fragment cannot turn debug info off again (no NN- prefix: no clash). */
	_cleanup_free_ char *dbg_rel = vn_xasprintf("%s/vnuma-debug.config", dir), *dbg = NULL;
	if (w->debug) {
		dbg = vn_xasprintf("%s/%s", w->obj, dbg_rel);
		if ((rc = vn_file_write(dbg, vn_kernel_debug_fragment(w->o->arch))) < 0)
			return vn_infra_error(err, rc, "writing %s: %s", dbg, strerror(-rc));
		argv[a++] = dbg_rel;
	}
	argv[a] = NULL;
	vn_kernel_say(w, "config", "merge_config.sh");
	rc = vn_spawn_run(argv, &so, err);
	return rc > 0 ? vn_kernel_step_failed(&mw, "merge_config.sh", rc, err) : rc;
}

int vn_kernel_configure(const struct vn_kernel_work *w, const char *chash, int jobs, struct vn_error *err)
{
	_cleanup_free_ char *marker = vn_xasprintf("%s/.vnuma-config", w->obj);
	_cleanup_free_ char *dotconfig = vn_xasprintf("%s/.config", w->obj), *cur = NULL, *mark = NULL;
	int rc;

	if ((rc = config_mark(w, chash, &mark, err)) < 0)
		return rc;
	size_t ml = strlen(mark);
	if (vn_file_read(marker, VN_FILE_STATE_MAX, &cur, &(size_t){0}, NULL) == 0 && strncmp(cur, mark, ml) == 0 &&
	    (cur[ml] == '\0' || cur[ml] == '\n') && access(dotconfig, F_OK) == 0)
		return 0;
	unlink(marker);
	unlink(dotconfig);
	if ((rc = vn_kernel_make(w, "config", w->cf->base, jobs, err)) < 0)
		return rc;
	if ((w->cf->nfragments || w->cf->nselftests || w->debug) && (rc = merge_fragments(w, err)) < 0)
		return rc;
	if ((rc = vn_kernel_make(w, "config", "olddefconfig", jobs, err)) < 0)
		return rc;
	if ((rc = vn_file_write(marker, mark)) < 0)
		return vn_infra_error(err, rc, "writing %s: %s", marker, strerror(-rc));
	return 0;
}

/* What the recipe asked for, as fragment text: its fragments, its selftests' configs, its require list, our own list. */
static int wanted_text(const struct vn_kernel_work *w, char **out, struct vn_error *err)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	int rc = 0;

	for (size_t i = 0; i < w->cf->nfragments && rc == 0; i++) {
		char p[PATH_MAX];
		_cleanup_free_ char *s = NULL;
		if (fragment_path(w, i, p, sizeof(p)) < 0 ||
		    vn_file_read(p, VN_FILE_STATE_MAX, &s, &(size_t){0}, NULL) < 0)
			rc = vn_input_error(err, "%s: fragment %s: cannot read", w->r->path, w->cf->fragment_names[i]);
		else
			vn_strbuf_printf(&b, "%s\n", s);
	}
	for (size_t i = 0; i < w->cf->nselftests && rc == 0; i++) {
		_cleanup_free_ char *p = selftest_config(w, i), *s = NULL;
		if (vn_file_read(p, VN_FILE_STATE_MAX, &s, &(size_t){0}, NULL) < 0)
			rc = vn_input_error(err, "%s: selftest %s's config: cannot read %s", w->r->path,
					    w->cf->selftests[i], p);
		else
			vn_strbuf_printf(&b, "%s\n", s);
	}
	if (w->debug)
		vn_strbuf_printf(&b, "%s", vn_kernel_debug_fragment(w->o->arch));
	for (size_t i = 0; i < w->cf->nrequire; i++)
		vn_strbuf_printf(&b, "%s=y\n", w->cf->require[i]);
	for (const char *const *o = vn_kernel_required_options(w->o->arch); *o; o++)
		vn_strbuf_printf(&b, "%s=y\n", *o);
	if (rc < 0) {
		vn_strbuf_free(&b);
		return rc;
	}
	*out = vn_strbuf_steal(&b);
	return 0;
}

int vn_kernel_config_check(const struct vn_kernel_work *w, struct vn_error *err)
{
	_cleanup_free_ char *dotconfig = NULL, *final = NULL, *wanted = NULL, *report = NULL;
	int rc;

	dotconfig = vn_xasprintf("%s/.config", w->obj);
	if ((rc = vn_file_read(dotconfig, VN_FILE_STATE_MAX, &final, &(size_t){0}, err)) < 0)
		return rc;
	if ((rc = wanted_text(w, &wanted, err)) < 0)
		return rc;
	int n = vn_kernel_config_verify(final, wanted, &report);
	if (n == 0)
		return 0;
	/* One line names them all; the detail lists what each became. */
	struct vn_strbuf names = VN_STRBUF_INIT;
	for (const char *l = report; *l;) {
		size_t len = strcspn(l, ":");
		vn_strbuf_printf(&names, "%s%.*s", names.len ? ", " : "", (int)len, l);
		l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l);
	}
	vn_input_error(err,
		       "%s: %d config option(s) did not survive merge_config.sh + olddefconfig "
		       "(a dependency is missing, or the option does not exist): %s",
		       w->r->path, n, names.s);
	vn_strbuf_free(&names);
	vn_error_set_detail(err, report);
	return -EINVAL;
}
