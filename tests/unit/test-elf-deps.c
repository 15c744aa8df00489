/*
 * guest/elf-deps.h: what a program needs at run time. ELF files the test
 * writes itself in all four class and byte-order combinations (with no
 * section headers, as ld.so reads them), broken ones, and the host's own
 * programs and libraries against binutils' readelf -d.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest/elf-deps.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/strbuf.h"

static char dir[] = "/tmp/vn-test-elf-deps-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return vn_rm_rf(dir);
}

/* A field of n bytes at off, in the file's byte order. */
static void put(uint8_t *b, size_t off, size_t n, uint64_t v, bool msb)
{
	for (size_t i = 0; i < n; i++)
		b[off + (msb ? n - 1 - i : i)] = (uint8_t)(v >> (8 * i));
}

#define VADDR    0x400000u
#define INTERP   "/lib/ld-test.so.1"
#define STRTAB   "\0libfoo.so.1\0libbar.so.2\0$ORIGIN/../lib"
#define STRTAB_N sizeof(STRTAB)

/*
 * A program of the given class and byte order: a PT_LOAD of the whole file,
 * PT_INTERP and PT_DYNAMIC (two DT_NEEDED, DT_RUNPATH, the string table).
 * cut: bytes to drop from the end; dyn_at: where PT_DYNAMIC says it is.
 */
static char *write_elf(const char *name, bool is64, bool msb, uint16_t machine, size_t cut, uint64_t dyn_at)
{
	uint8_t b[1024] = {0};
	size_t w = is64 ? 8 : 4, ehsize = is64 ? 64 : 52, phsize = is64 ? 56 : 32, dynsize = 2 * w;
	const uint64_t interp_at = 256, strtab_at = 512;
	uint64_t dyn[][2] = {
		{DT_NEEDED, 1},       {DT_NEEDED, 13}, {DT_RUNPATH, 25}, {DT_STRTAB, VADDR + strtab_at},
		{DT_STRSZ, STRTAB_N}, {DT_NULL, 0},
	};

	memcpy(b, ELFMAG, SELFMAG);
	b[EI_CLASS] = is64 ? ELFCLASS64 : ELFCLASS32;
	b[EI_DATA] = msb ? ELFDATA2MSB : ELFDATA2LSB;
	b[EI_VERSION] = EV_CURRENT;
	put(b, 16, 2, ET_EXEC, msb);
	put(b, 18, 2, machine, msb);
	put(b, 20, 4, EV_CURRENT, msb);
	put(b, 24 + w, w, ehsize, msb); /* e_phoff, after e_entry */
	size_t o = 24 + 3 * w + 4;      /* past e_shoff and e_flags */
	put(b, o, 2, ehsize, msb);
	put(b, o + 2, 2, phsize, msb);
	put(b, o + 4, 2, 3, msb);
	/* p_type, p_offset, p_vaddr, p_filesz, p_memsz: their places differ between the classes. */
	struct {
		uint32_t type;
		uint64_t off, len;
	} ph[] = {{PT_LOAD, 0, sizeof(b)},
		  {PT_INTERP, interp_at, sizeof(INTERP)},
		  {PT_DYNAMIC, dyn_at, sizeof(dyn) / 16 * dynsize}};
	for (size_t i = 0; i < 3; i++) {
		size_t p = ehsize + i * phsize;
		put(b, p, 4, ph[i].type, msb);
		put(b, p + (is64 ? 8 : 4), w, ph[i].off, msb);
		put(b, p + (is64 ? 16 : 8), w, VADDR + ph[i].off, msb);
		put(b, p + (is64 ? 32 : 16), w, ph[i].len, msb);
		put(b, p + (is64 ? 40 : 20), w, ph[i].len, msb);
	}
	memcpy(b + interp_at, INTERP, sizeof(INTERP));
	memcpy(b + strtab_at, STRTAB, STRTAB_N);
	for (size_t i = 0; i < sizeof(dyn) / sizeof(dyn[0]); i++) {
		put(b, 768 + i * dynsize, w, dyn[i][0], msb);
		put(b, 768 + i * dynsize + w, w, dyn[i][1], msb);
	}
	char *path = vn_xasprintf("%s/%s", dir, name);
	struct vn_error err = {0};
	assert_int_equal(vn_file_write_atomic(path, b, sizeof(b) - cut, 0755, &err), 0);
	return path;
}

static void test_classes_and_byte_orders(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		bool is64, msb;
		uint16_t machine;
	} kinds[] = {
		{"x86_64", true, false, EM_X86_64},
		{"i386", false, false, EM_386},
		{"ppc64", true, true, EM_PPC64},
		{"s390", false, true, EM_S390},
	};

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		_cleanup_free_ char *path =
			write_elf(kinds[k].name, kinds[k].is64, kinds[k].msb, kinds[k].machine, 0, 768);
		_cleanup_(vn_elf_deps_free) struct vn_elf_deps d = {0};
		struct vn_error err = {0};
		int rc = vn_elf_read_deps(path, &d, &err);
		if (rc < 0)
			fail_msg("%s: %s", kinds[k].name, err.msg);
		assert_true(d.is_elf);
		assert_int_equal(d.elf_class, kinds[k].is64 ? ELFCLASS64 : ELFCLASS32);
		assert_int_equal(d.machine, kinds[k].machine);
		assert_string_equal(d.interp, INTERP);
		assert_int_equal(d.n_needed, 2);
		assert_string_equal(d.needed[0], "libfoo.so.1");
		assert_string_equal(d.needed[1], "libbar.so.2");
		assert_null(d.needed[2]);
		assert_string_equal(d.runpath, "$ORIGIN/../lib");
	}
}

static void test_find_lib_skips_other_machines(void **state)
{
	(void)state;
	/* $ORIGIN/../lib holds a libfoo.so.1 of another machine first, then ours further on the runpath. */
	_cleanup_free_ char *prog = write_elf("prog-x86_64", true, false, EM_X86_64, 0, 768);
	_cleanup_free_ char *other = vn_xasprintf("%s/other", dir);
	_cleanup_(vn_elf_deps_free) struct vn_elf_deps d = {0};
	struct vn_error err = {0};

	assert_int_equal(vn_elf_read_deps(prog, &d, &err), 0);
	free(d.runpath);
	d.runpath = vn_xasprintf("$ORIGIN/../%s:%s", strrchr(dir, '/') + 1, other);
	assert_int_equal(vn_mkdir_p(other, 0755, &err), 0);
	_cleanup_free_ char *ppc = write_elf("libfoo.so.1", true, true, EM_PPC64, 0, 768);
	_cleanup_free_ char *ours = write_elf("other/libfoo.so.1", true, false, EM_X86_64, 0, 768);
	_cleanup_free_ char *found = vn_elf_find_lib("libfoo.so.1", &d, dir, NULL);
	assert_non_null(found);
	assert_string_equal(found, ours);
	/* Without a program to match, the first file of the name. */
	_cleanup_free_ char *any = vn_elf_find_lib(ppc, NULL, dir, NULL);
	assert_string_equal(any, ppc);
}

static void test_broken(void **state)
{
	(void)state;
	struct vn_error err = {0};
	struct vn_elf_deps d;

	/* Not ELF: a script, data, an empty file. */
	_cleanup_free_ char *sh = vn_xasprintf("%s/script", dir), *empty = vn_xasprintf("%s/empty", dir);
	assert_int_equal(vn_file_write_atomic(sh, "#!/bin/sh\n", 10, 0755, &err), 0);
	assert_int_equal(vn_file_write_atomic(empty, "", 0, 0644, &err), 0);
	assert_int_equal(vn_elf_read_deps(sh, &d, &err), 0);
	assert_false(d.is_elf);
	assert_int_equal(vn_elf_read_deps(empty, &d, &err), 0);
	assert_false(d.is_elf);

	/* The file ends inside the dynamic section, or PT_DYNAMIC points past the end. */
	_cleanup_free_ char *cut = write_elf("cut", true, false, EM_X86_64, 1024 - 800, 768);
	assert_int_equal(vn_elf_read_deps(cut, &d, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "/cut: "));
	vn_error_clear(&err);
	vn_elf_deps_free(&d);
	_cleanup_free_ char *past = write_elf("past", false, true, EM_S390, 0, 1 << 20);
	assert_int_equal(vn_elf_read_deps(past, &d, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "/past: truncated PT_DYNAMIC"));
	vn_error_clear(&err);
	vn_elf_deps_free(&d);

	assert_int_equal(vn_elf_read_deps("/nonexistent/prog", &d, &err), -ENOENT);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	vn_error_clear(&err);
}

/* readelf -d's NEEDED and RUNPATH/RPATH of path, as "name name ... | runpath". */
static char *readelf_deps(const char *path)
{
	_cleanup_free_ char *cmd = vn_xasprintf("LC_ALL=C readelf -dW '%s' 2>/dev/null", path);
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;
	char line[4096], runpath[4096] = "";
	FILE *f = popen(cmd, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *l = strchr(line, '['), *r = l ? strchr(l, ']') : NULL;
		if (!r)
			continue;
		*r = '\0';
		if (strstr(line, "(NEEDED)"))
			vn_strbuf_printf(&b, "%s ", l + 1);
		else if (strstr(line, "(RUNPATH)") || strstr(line, "(RPATH)"))
			snprintf(runpath, sizeof(runpath), "%s", l + 1);
	}
	pclose(f);
	vn_strbuf_printf(&b, "| %s", runpath);
	return vn_strbuf_steal(&b);
}

static void test_host_files_as_readelf(void **state)
{
	(void)state;
	static const char *const globs[] = {"/usr/bin/*", "/usr/sbin/*", "/usr/lib/x86_64-linux-gnu/*.so.*"};
	size_t checked = 0;

	if (access("/usr/bin/readelf", X_OK) != 0) {
		print_message("skipped: no readelf (binutils)\n");
		return;
	}
	for (size_t g = 0; g < sizeof(globs) / sizeof(globs[0]); g++) {
		_cleanup_free_ char *cmd = vn_xasprintf("ls -d %s 2>/dev/null | head -150", globs[g]);
		char path[4096];
		FILE *ls = popen(cmd, "r");
		assert_non_null(ls);
		while (fgets(path, sizeof(path), ls)) {
			path[strcspn(path, "\n")] = '\0';
			_cleanup_(vn_elf_deps_free) struct vn_elf_deps d = {0};
			struct vn_error err = {0};
			if (vn_elf_read_deps(path, &d, &err) < 0) {
				vn_error_clear(&err);
				continue;
			}
			if (!d.is_elf)
				continue;
			_cleanup_strbuf_ struct vn_strbuf ours = VN_STRBUF_INIT;
			for (size_t i = 0; i < d.n_needed; i++)
				vn_strbuf_printf(&ours, "%s ", d.needed[i]);
			vn_strbuf_printf(&ours, "| %s", d.runpath ? d.runpath : "");
			_cleanup_free_ char *theirs = readelf_deps(path);
			if (strcmp(ours.s, theirs) != 0)
				fail_msg("%s: ours \"%s\", readelf's \"%s\"", path, ours.s, theirs);
			checked++;
		}
		pclose(ls);
	}
	print_message("%zu host ELF files as readelf reads them\n", checked);
	assert_true(checked > 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes_and_byte_orders),
		cmocka_unit_test(test_find_lib_skips_other_machines),
		cmocka_unit_test(test_broken),
		cmocka_unit_test(test_host_files_as_readelf),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
