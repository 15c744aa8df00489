/*
 * QEMU's monitor text (virt/hmp-parse.c): where a hot-plugged DIMM lies in
 * the locality plugin's addresses. The fixtures are QEMU 7.2's own replies,
 * through libvirt, on 4node-amd-hotplug with a 256M DIMM in node 3
 * (tests/fixtures/hmp/): its RAM block comes after the ROMs', not after the
 * cells', which is why the range is asked for and not computed. And how far
 * virtual time's guest clock leads the host's (`info jit` under -icount
 * shift=auto,sleep=off, the same QEMU, a 2node guest idle after a restore).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "virt/hmp.h"

static char *fixture(const char *name)
{
	const char *src = getenv("VN_SOURCE_DIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/fixtures/hmp/%s", src ? src : ".", name);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *buf = vn_xcalloc(1, 1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	assert_true(n > 0);
	return buf;
}

static void test_dimm_range(void **state)
{
	char *rb = fixture("info-ramblock.txt"), *mt = fixture("info-mtree.txt");
	struct vn_error err = {0};
	uint64_t lo = 0, hi = 0, off, used, first, last;

	assert_int_equal(vn_hmp_ramblock(rb, "memdimm0", &off, &used, &err), 0);
	assert_true(off == 0x30500000 && used == 0x10000000);
	assert_int_equal(vn_hmp_ramblock(rb, "ram-node3", &off, &used, &err), 0);
	assert_true(off == 0x30000000 && used == 0x200000);
	assert_int_equal(vn_hmp_mtree_region(mt, "device-memory", &first, &last, &err), 0);
	assert_true(first == UINT64_C(0x100000000) && last == UINT64_C(0x51fffffff));
	/* Block offset + the region's place in device memory (its first DIMM: 0). */
	assert_int_equal(vn_hmp_dimm_plugin_range(rb, mt, "memdimm0", UINT64_C(0x100000000), &lo, &hi, &err), 0);
	assert_true(lo == 0x30500000 && hi == 0x40500000);
	/* libvirt and the monitor disagree on where the DIMM is: not trusted. */
	err = (struct vn_error){0};
	assert_int_not_equal(vn_hmp_dimm_plugin_range(rb, mt, "memdimm0", UINT64_C(0x110000000), &lo, &hi, &err), 0);
	assert_non_null(strstr(err.msg, "libvirt at 0x110000000"));
	err = (struct vn_error){0};
	assert_int_not_equal(vn_hmp_dimm_plugin_range(rb, mt, "memdimm1", UINT64_C(0x100000000), &lo, &hi, &err), 0);
	assert_non_null(strstr(err.msg, "no block memdimm1"));
	free(rb);
	free(mt);
}

/* A later DIMM sits past the first in device memory: its offset there is added. */
static void test_second_dimm(void **state)
{
	const char *rb = "  Block Name PSize Offset Used Total\r\n"
			 "  memdimm1    4 KiB  0x0000000050600000 0x0000000008000000 0x0000000008000000\r\n";
	const char *mt = "memory-region: system\n"
			 "    0000000100000000-000000051fffffff (prio 0, i/o): device-memory\n"
			 "      0000000110000000-0000000117ffffff (prio 0, ram): memdimm1\n";
	struct vn_error err = {0};
	uint64_t lo, hi;
	assert_int_equal(vn_hmp_dimm_plugin_range(rb, mt, "memdimm1", UINT64_C(0x110000000), &lo, &hi, &err), 0);
	assert_true(lo == 0x50600000 + 0x10000000 && hi == lo + 0x8000000);
}

static void test_refuses(void **state)
{
	struct vn_error err = {0};
	uint64_t a, b;
	/* A name that only ends like the block's is another block; a path ending in /block is it. */
	assert_int_not_equal(vn_hmp_ramblock("xmemdimm0 4 KiB 0x0 0x1000 0x1000\n", "memdimm0", &a, &b, &err), 0);
	assert_int_equal(vn_hmp_ramblock("/objects/memdimm0 4 KiB 0x10 0x1000\n", "memdimm0", &a, &b, &err), 0);
	assert_true(a == 0x10 && b == 0x1000);
	/* Numbers that are not whole hex words, or a zero length. */
	err = (struct vn_error){0};
	assert_int_not_equal(vn_hmp_ramblock("memdimm0 4 KiB 0x10zz 0x1000\n", "memdimm0", &a, &b, &err), 0);
	assert_int_not_equal(vn_hmp_ramblock("memdimm0 4 KiB 0x10 0x0\n", "memdimm0", &a, &b, &err), 0);
	assert_int_not_equal(vn_hmp_ramblock("memdimm0 4 KiB 0xffffffffffffffffff 0x10\n", "memdimm0", &a, &b, &err),
			     0);
	/* mtree: last before first, or no dash, is no region. */
	assert_int_not_equal(vn_hmp_mtree_region("  20-10 (prio 0, ram): r\n", "r", &a, &b, &err), 0);
	assert_int_not_equal(vn_hmp_mtree_region("  20 (prio 0, ram): r\n", "r", &a, &b, &err), 0);
	assert_int_equal(vn_hmp_mtree_region("  10-20 (prio 0, ram): r\n", "r", &a, &b, &err), 0);
	/* A line past the bound is skipped, not cut into a match. */
	char *longl = vn_xcalloc(1, 2048);
	memset(longl, ' ', 1000);
	strcpy(longl + 1000, "10-20 (prio 0, ram): r\n");
	assert_int_not_equal(vn_hmp_mtree_region(longl, "r", &a, &b, &err), 0);
	free(longl);
	/* A reply past VN_HMP_TEXT_MAX is refused whole. */
	char *big = vn_xcalloc(1, VN_HMP_TEXT_MAX + 2);
	memset(big, 'a', VN_HMP_TEXT_MAX + 1);
	err = (struct vn_error){0};
	assert_int_not_equal(vn_hmp_ramblock(big, "memdimm0", &a, &b, &err), 0);
	assert_non_null(strstr(err.msg, "more than"));
	free(big);
	/* Offset and length that overflow the address space. */
	const char *rb = "memdimm0 4 KiB 0xfffffffffffff000 0x2000\n";
	const char *mt = "  100-1ff (prio 0, i/o): device-memory\n  100-1ff (prio 0, ram): memdimm0\n";
	err = (struct vn_error){0};
	assert_int_not_equal(vn_hmp_dimm_plugin_range(rb, mt, "memdimm0", 0x100, &a, &b, &err), 0);
}

static void test_icount_lead(void **state)
{
	(void)state;
	struct vn_error err = {0};
	double lead = -1;
	char *jit = fixture("info-jit-icount.txt");

	assert_int_equal(vn_hmp_icount_lead(jit, &lead, &err), 0);
	assert_true(lead > 1800 && lead < 100000);
	free(jit);
	/* Host minus guest: negative while the guest leads, positive while it lags. */
	assert_int_equal(vn_hmp_icount_lead("Host - Guest clock  -24144804 ms\r\n", &lead, &err), 0);
	assert_true(lead == 24144.804);
	assert_int_equal(vn_hmp_icount_lead("x\nHost - Guest clock  1500 ms\n", &lead, &err), 0);
	assert_true(lead == -1.5);
	/* Without icount QEMU prints no such line: an error that says so, not a lead of 0. */
	err = (struct vn_error){0};
	assert_int_not_equal(vn_hmp_icount_lead("TB count 10\n[TCG profiler not compiled]\n", &lead, &err), 0);
	assert_non_null(strstr(err.msg, "virtual time"));
	/* Not a number, another unit, past a year: refused. */
	static const char *const bad[] = {
		"Host - Guest clock  ms\n",
		"Host - Guest clock  12 s\n",
		"Host - Guest clock  12 ms trailing\n",
		"Host - Guest clock  -99999999999999 ms\n",
		"Host - Guest clock  99999999999999999999999 ms\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = (struct vn_error){0};
		assert_int_not_equal(vn_hmp_icount_lead(bad[i], &lead, &err), 0);
		assert_non_null(strstr(err.msg, "info jit"));
	}
	/*
	 * What QEMU printed reaches the message through the one sanitizer
	 * (vn_excerpt): at most 64 bytes, its ESC and BEL each as '?'.
	 */
	char wild[400] = "Host - Guest clock  12\x1b[2J\a";
	memset(wild + strlen(wild), 'x', 300);
	err = (struct vn_error){0};
	assert_int_not_equal(vn_hmp_icount_lead(wild, &lead, &err), 0);
	assert_non_null(strstr(err.msg, "'12?[2J?xxx"));
	assert_null(strchr(err.msg, '\x1b'));
	assert_null(strstr(err.msg, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dimm_range),
		cmocka_unit_test(test_second_dimm),
		cmocka_unit_test(test_refuses),
		cmocka_unit_test(test_icount_lead),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
