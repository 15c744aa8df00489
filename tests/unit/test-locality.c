#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "metrics/locality.h"

#define NV 4
#define NR 2

/* A counters file as the plugin writes it: 2 ranges (nodes 0, 1), 4 vCPUs. */
static unsigned char *fake_file(size_t *len, const struct vn_loc_map *map)
{
	*len = VN_LOC_FILE_BYTES(NV, NR);
	unsigned char *b = calloc(1, *len);
	struct vn_loc_header *h = (struct vn_loc_header *)b;
	h->magic = VN_LOC_MAGIC;
	h->layout = VN_LOC_LAYOUT;
	h->api = 1;
	h->nvcpus = NV;
	h->nranges = NR;
	h->vcpu_bytes = VN_LOC_VCPU_BYTES(NR);
	h->counters_at = sizeof(*h);
	memcpy(h->ranges, map->ranges, sizeof(h->ranges[0]) * NR);
	return b;
}

static uint64_t *counter(unsigned char *b, unsigned vcpu, unsigned slot, unsigned kind)
{
	return (uint64_t *)(b + sizeof(struct vn_loc_header) + vcpu * VN_LOC_VCPU_BYTES(NR)) + slot * VN_LOC_NKINDS +
	       kind;
}

static void two_nodes(struct vn_loc_map *m)
{
	memset(m, 0, sizeof(*m));
	m->nnodes = 2;
	m->nranges = NR;
	m->ranges[0] = (struct vn_loc_range){0, 256 << 20, 0};
	m->ranges[1] = (struct vn_loc_range){512 << 20, 768 << 20, 1};
	m->ncpus = 3; /* vCPU 3 has no node: a hotplugged one the model does not place */
	m->cpu_node[0] = 0;
	m->cpu_node[1] = 0;
	m->cpu_node[2] = 1;
}

static void test_fold_adds_up(void **state)
{
	struct vn_loc_map map;
	struct vn_error err = {0};
	size_t len;
	two_nodes(&map);
	unsigned char *b = fake_file(&len, &map);
	*counter(b, 0, 0, VN_LOC_USER_LOAD) = 90;    /* node 0 -> node 0 */
	*counter(b, 1, 1, VN_LOC_USER_STORE) = 10;   /* node 0 -> node 1 */
	*counter(b, 2, 1, VN_LOC_KERNEL_LOAD) = 30;  /* node 1 -> node 1 */
	*counter(b, 2, 0, VN_LOC_KERNEL_STORE) = 70; /* node 1 -> node 0 */
	*counter(b, 3, 0, VN_LOC_USER_LOAD) = 5;     /* unplaced */
	*counter(b, 0, VN_LOC_SLOT_UNMAPPED(NR), VN_LOC_USER_LOAD) = 3;
	*counter(b, 1, VN_LOC_SLOT_IO(NR), VN_LOC_KERNEL_LOAD) = 7;
	assert_int_equal(vn_loc_check(b, len, &map, &err), 0);
	struct vn_loc_counts c;
	vn_loc_counts_init(&c, 2);
	vn_loc_fold(b, &map, &c);
	assert_int_equal(*vn_loc_at(&c, 0, 0, VN_LOC_USER_LOAD), 90);
	assert_int_equal(*vn_loc_at(&c, 1, 0, VN_LOC_KERNEL_STORE), 70);
	assert_int_equal(c.unplaced[VN_LOC_USER_LOAD], 5);
	assert_int_equal(c.unmapped[VN_LOC_USER_LOAD], 3);
	assert_int_equal(c.io[VN_LOC_KERNEL_LOAD], 7);
	/* The matrix plus what sits outside it is the plugin's total. */
	uint64_t outside = 0;
	for (unsigned k = 0; k < VN_LOC_NKINDS; k++)
		outside += c.unmapped[k] + c.io[k] + c.unplaced[k];
	assert_int_equal(vn_loc_sum(&c, VN_LOC_ALL, NULL) + outside, c.total);
	assert_int_equal(c.total, 215);
	assert_float_equal(vn_loc_remote_fraction(&c, VN_LOC_USER), 0.1, 1e-12);
	assert_float_equal(vn_loc_remote_fraction(&c, VN_LOC_KERNEL), 0.7, 1e-12);
	assert_float_equal(vn_loc_remote_fraction(&c, VN_LOC_ALL), 0.4, 1e-12);
	/* Node 1's CPUs alone: 70 of 100 remote, all kernel. */
	assert_float_equal(vn_loc_remote_fraction_row(&c, VN_LOC_ALL, 1), 0.7, 1e-12);
	assert_float_equal(vn_loc_remote_fraction_row(&c, VN_LOC_USER, 0), 0.1, 1e-12);
	assert_true(isnan(vn_loc_remote_fraction_row(&c, VN_LOC_USER, 1)));
	assert_true(isnan(vn_loc_remote_fraction_row(&c, VN_LOC_ALL, 2)));
	/* Folding again starts from zero. */
	vn_loc_fold(b, &map, &c);
	assert_int_equal(c.total, 215);
	vn_loc_counts_clear(&c);
	free(b);
}

static void test_model_arithmetic(void **state)
{
	struct vn_loc_counts c;
	vn_loc_counts_init(&c, 2);
	*vn_loc_at(&c, 0, 0, VN_LOC_USER_LOAD) = 1000000;
	*vn_loc_at(&c, 0, 1, VN_LOC_USER_STORE) = 500000;
	*vn_loc_at(&c, 1, 0, VN_LOC_KERNEL_LOAD) = 250000;
	const double lat[4] = {100, 210, 210, 100};
	/* 1e6*100 + 5e5*210 + 2.5e5*210 ns = 1e8 + 1.05e8 + 5.25e7 ns */
	assert_float_equal(vn_loc_model_s(&c, lat), 0.2575, 1e-12);
	assert_true(isnan(
		vn_loc_remote_fraction(&(struct vn_loc_counts){.nnodes = 2, .ram = (uint64_t[32]){0}}, VN_LOC_ALL)));
	vn_loc_counts_clear(&c);
}

static void test_check_refuses(void **state)
{
	struct vn_loc_map map;
	struct vn_error err = {0};
	size_t len;
	two_nodes(&map);
	unsigned char *b = fake_file(&len, &map);
	struct vn_loc_header *h = (struct vn_loc_header *)b;
	assert_int_not_equal(vn_loc_check(b, sizeof(*h) - 1, &map, &err), 0);
	err = (struct vn_error){0};
	assert_int_not_equal(vn_loc_check(b, len - 8, &map, &err), 0);
	assert_non_null(strstr(err.msg, "the header needs"));
	h->nvcpus = VN_LOC_MAX_VCPUS + 1;
	assert_int_not_equal(vn_loc_check(b, len, &map, &err), 0);
	h->nvcpus = NV;
	h->ranges[1].node = 0;
	err = (struct vn_error){0};
	assert_int_not_equal(vn_loc_check(b, len, &map, &err), 0);
	assert_non_null(strstr(err.msg, "range 1"));
	h->ranges[1].node = 1;
	h->magic = 0;
	assert_int_not_equal(vn_loc_check(b, len, &map, &err), 0);
	h->magic = VN_LOC_MAGIC;
	assert_int_equal(vn_loc_check(b, len, &map, &err), 0);
	free(b);
}

static void test_delta_and_proof(void **state)
{
	struct vn_loc_map map;
	struct vn_error err = {0};
	size_t len;
	two_nodes(&map);
	unsigned char *b = fake_file(&len, &map);
	struct vn_loc_counts before, after, d;
	vn_loc_counts_init(&before, 2);
	vn_loc_counts_init(&after, 2);
	vn_loc_counts_init(&d, 2);
	*counter(b, 0, 0, VN_LOC_USER_LOAD) = 1000;
	vn_loc_fold(b, &map, &before);
	/* The guest touched memory bound to node 1 from vCPU 0: range 1 is node 1's addresses. */
	*counter(b, 0, 1, VN_LOC_USER_STORE) += 2000000;
	*counter(b, 0, 0, VN_LOC_USER_LOAD) += 5000;       /* the agent, meanwhile */
	*counter(b, 0, 0, VN_LOC_KERNEL_STORE) += 9000000; /* kernel work (zeroing) is not judged */
	vn_loc_fold(b, &map, &after);
	assert_int_equal(vn_loc_delta(&after, &before, &d, &err), 0);
	assert_int_equal(vn_loc_proof_judge(&d, 1, 1000000, &err), 0);
	/* Too few accesses, or the wrong node: not proven. */
	assert_int_not_equal(vn_loc_proof_judge(&d, 1, 3000000, &err), 0);
	err = (struct vn_error){0};
	assert_int_not_equal(vn_loc_proof_judge(&d, 0, 1000, &err), 0);
	assert_non_null(strstr(err.msg, "not proven"));
	/* Counters that went back are not a delta. */
	err = (struct vn_error){0};
	assert_int_not_equal(vn_loc_delta(&before, &after, &d, &err), 0);
	assert_non_null(strstr(err.msg, "went back"));
	vn_loc_counts_clear(&before);
	vn_loc_counts_clear(&after);
	vn_loc_counts_clear(&d);
	free(b);
}

/* The proof fed a wrong map: the file's ranges swapped, so node 1's accesses count as node 0's. */
static void test_proof_wrong_map_fails(void **state)
{
	struct vn_loc_map map, wrong;
	struct vn_error err = {0};
	size_t len;
	two_nodes(&map);
	wrong = map;
	wrong.ranges[0].node = 1;
	wrong.ranges[1].node = 0;
	unsigned char *b = fake_file(&len, &wrong);
	struct vn_loc_counts before, after, d;
	vn_loc_counts_init(&before, 2);
	vn_loc_counts_init(&after, 2);
	vn_loc_counts_init(&d, 2);
	vn_loc_fold(b, &wrong, &before);
	/*
	 * The guest touched node 1's memory, at node 1's true addresses: the
	 * plugin, given the wrong map, finds them in its range 1, which that map
	 * calls node 0.
	 */
	*counter(b, 2, 1, VN_LOC_USER_STORE) += 4000000;
	vn_loc_fold(b, &wrong, &after);
	assert_int_equal(vn_loc_delta(&after, &before, &d, &err), 0);
	/* Under the wrong map, the node-1 touch shows on node 0: the proof for node 1 fails loudly. */
	assert_int_not_equal(vn_loc_proof_judge(&d, 1, 1000000, &err), 0);
	assert_non_null(strstr(err.msg, "node 1 took 0 of 4000000"));
	vn_loc_counts_clear(&before);
	vn_loc_counts_clear(&after);
	vn_loc_counts_clear(&d);
	free(b);
}

static void test_open_read(void **state)
{
	struct vn_loc_map map;
	struct vn_error err = {0};
	size_t len;
	two_nodes(&map);
	unsigned char *b = fake_file(&len, &map);
	*counter(b, 2, 1, VN_LOC_USER_LOAD) = 42;
	char path[] = "/tmp/vn-test-locality-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, len), (ssize_t)len);
	close(fd);
	struct vn_loc_reader *r;
	assert_int_equal(vn_loc_open(path, &map, &r, &err), 0);
	struct vn_loc_counts c;
	vn_loc_counts_init(&c, 2);
	assert_int_equal(vn_loc_read(r, &c, &err), 0);
	assert_int_equal(*vn_loc_at(&c, 1, 1, VN_LOC_USER_LOAD), 42);
	vn_loc_close(r);
	/* A map naming a node past its side is bad input, before any file is read. */
	map.ranges[1].node = 2;
	assert_int_not_equal(vn_loc_open(path, &map, &r, &err), 0);
	assert_null(r);
	vn_loc_counts_clear(&c);
	unlink(path);
	free(b);
}

/* The reader's file, for the tests that write through it. */
static struct vn_loc_reader *open_file(const struct vn_loc_map *map, char *path, unsigned char **b, size_t *len)
{
	struct vn_error err = {0};
	struct vn_loc_reader *r;
	*b = fake_file(len, map);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, *b, *len), (ssize_t)*len);
	close(fd);
	assert_int_equal(vn_loc_open(path, map, &r, &err), 0);
	/* The file as the plugin sees it: a shared mapping, so the host's writes show in it. */
	free(*b);
	fd = open(path, O_RDWR);
	*b = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(*b != MAP_FAILED);
	return r;
}

/*
 * A hot-plugged DIMM's range: published to the plugin's header (slot, then
 * the count), unmapped until proven, its node's from the proof on, and the
 * counts before the proof stay unmapped, so no folded counter goes back.
 */
static void test_extra_range(void **state)
{
	struct vn_loc_map map;
	struct vn_error err = {0};
	char path[] = "/tmp/vn-test-locality-XXXXXX";
	unsigned char *b;
	size_t len;
	unsigned slot;
	two_nodes(&map);
	struct vn_loc_reader *r = open_file(&map, path, &b, &len);
	struct vn_loc_header *h = (struct vn_loc_header *)b;
	const uint64_t lo = UINT64_C(3) << 30, hi = lo + (128 << 20);

	assert_int_equal(vn_loc_extra_add(r, lo, hi, 1, &slot, &err), 0);
	assert_int_equal(slot, 0);
	assert_int_equal(h->nextra, 1);
	assert_true(h->extra[0].lo == lo && h->extra[0].hi == hi && h->extra[0].node == 1);
	struct vn_loc_counts c0, c1, c2, d;
	vn_loc_counts_init(&c0, 2);
	vn_loc_counts_init(&c1, 2);
	vn_loc_counts_init(&c2, 2);
	vn_loc_counts_init(&d, 2);
	assert_int_equal(vn_loc_read(r, &c0, &err), 0);
	/* The proof's touch from vCPU 0 (node 0), in the new range's slot: unmapped while unproven. */
	*counter(b, 0, VN_LOC_SLOT_EXTRA(NR, 0), VN_LOC_USER_STORE) += 2000000;
	*counter(b, 0, 0, VN_LOC_USER_STORE) += 1000;
	assert_int_equal(vn_loc_read(r, &c1, &err), 0);
	assert_int_equal(c1.unmapped[VN_LOC_USER_STORE], 2000000);
	assert_int_equal(*vn_loc_at(&c1, 0, 1, VN_LOC_USER_STORE), 0);
	assert_int_equal(vn_loc_delta(&c1, &c0, &d, &err), 0);
	assert_int_equal(vn_loc_proof_judge_extra(&d, &slot, 1, 1000000, &err), 0);
	/* Another slot took none of it: the slots' own counts, not the node's, prove the range. */
	err = (struct vn_error){0};
	assert_int_not_equal(vn_loc_proof_judge_extra(&d, (unsigned[]){1}, 1, 1000000, &err), 0);
	assert_non_null(strstr(err.msg, "stay unmapped"));
	assert_int_equal(vn_loc_extra_settle(r, slot, true, &err), 0);
	/* From the proof on: node 0's CPUs reaching node 1's new memory. */
	*counter(b, 0, VN_LOC_SLOT_EXTRA(NR, 0), VN_LOC_USER_LOAD) += 300;
	*counter(b, 3, VN_LOC_SLOT_EXTRA(NR, 0), VN_LOC_USER_LOAD) += 7; /* vCPU 3: no node */
	assert_int_equal(vn_loc_read(r, &c2, &err), 0);
	assert_int_equal(*vn_loc_at(&c2, 0, 1, VN_LOC_USER_LOAD), 300);
	assert_int_equal(*vn_loc_at(&c2, 0, 1, VN_LOC_USER_STORE), 0);
	assert_int_equal(c2.unmapped[VN_LOC_USER_STORE], 2000000);
	assert_int_equal(c2.unplaced[VN_LOC_USER_LOAD], 7);
	assert_int_equal(vn_loc_delta(&c2, &c1, &d, &err), 0);
	uint64_t outside = 0;
	for (unsigned k = 0; k < VN_LOC_NKINDS; k++)
		outside += c2.unmapped[k] + c2.io[k] + c2.unplaced[k];
	assert_int_equal(vn_loc_sum(&c2, VN_LOC_ALL, NULL) + outside, c2.total);
	/* Overlaps and bad nodes are refused; retiring stops the plugin matching it. */
	err = (struct vn_error){0};
	assert_int_not_equal(vn_loc_extra_add(r, hi - 4096, hi + 4096, 1, &slot, &err), 0);
	assert_non_null(strstr(err.msg, "overlaps"));
	assert_int_not_equal(vn_loc_extra_add(r, hi, hi + 4096, 2, &slot, &err), 0);
	/* A part of a boot range two memories share: carved out of node 0, nobody's, unmapped. */
	assert_int_equal(vn_loc_extra_add(r, 0, 4096, VN_LOC_NODE_NONE, &slot, &err), 0);
	assert_int_not_equal(vn_loc_extra_settle(r, slot, true, &err), 0);
	*counter(b, 0, VN_LOC_SLOT_EXTRA(NR, slot), VN_LOC_USER_LOAD) += 11;
	assert_int_equal(vn_loc_read(r, &c2, &err), 0);
	assert_int_equal(c2.unmapped[VN_LOC_USER_LOAD], 11);
	assert_int_equal(vn_loc_extra_retire(r, 0, &err), 0);
	assert_int_equal(h->extra[0].hi, 0);
	assert_int_equal(vn_loc_read(r, &c2, &err), 0);
	assert_int_equal(*vn_loc_at(&c2, 0, 1, VN_LOC_USER_LOAD), 300);
	/* A header whose extra ranges the host did not write is not the plugin's file. */
	h->nextra = 3;
	err = (struct vn_error){0};
	assert_int_not_equal(vn_loc_read(r, &c2, &err), 0);
	assert_non_null(strstr(err.msg, "extra ranges"));
	h->nextra = 2;
	h->extra[0].lo = 0;
	assert_int_not_equal(vn_loc_read(r, &c2, &err), 0);
	vn_loc_counts_clear(&c0);
	vn_loc_counts_clear(&c1);
	vn_loc_counts_clear(&c2);
	vn_loc_counts_clear(&d);
	vn_loc_close(r);
	munmap(b, len);
	unlink(path);
}

/* A range whose proof failed stays unmapped for good. */
static void test_extra_unproven(void **state)
{
	struct vn_loc_map map;
	struct vn_error err = {0};
	char path[] = "/tmp/vn-test-locality-XXXXXX";
	unsigned char *b;
	size_t len;
	unsigned slot;
	two_nodes(&map);
	struct vn_loc_reader *r = open_file(&map, path, &b, &len);
	assert_int_equal(vn_loc_extra_add(r, UINT64_C(1) << 32, (UINT64_C(1) << 32) + 4096, 0, &slot, &err), 0);
	assert_int_equal(vn_loc_extra_settle(r, slot, false, &err), 0);
	*counter(b, 2, VN_LOC_SLOT_EXTRA(NR, slot), VN_LOC_USER_STORE) += 50;
	struct vn_loc_counts c;
	vn_loc_counts_init(&c, 2);
	assert_int_equal(vn_loc_read(r, &c, &err), 0);
	assert_int_equal(c.unmapped[VN_LOC_USER_STORE], 50);
	assert_int_equal(vn_loc_sum(&c, VN_LOC_ALL, NULL), 0);
	vn_loc_counts_clear(&c);
	vn_loc_close(r);
	munmap(b, len);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fold_adds_up),          cmocka_unit_test(test_model_arithmetic),
		cmocka_unit_test(test_check_refuses),         cmocka_unit_test(test_delta_and_proof),
		cmocka_unit_test(test_proof_wrong_map_fails), cmocka_unit_test(test_open_read),
		cmocka_unit_test(test_extra_range),           cmocka_unit_test(test_extra_unproven),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
