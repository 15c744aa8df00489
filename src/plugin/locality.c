/*
 * vnuma's locality plugin, loaded into QEMU (-plugin, through libvirt's
 * qemu:commandline): counts every guest memory access by vCPU and by the
 * range of QEMU's plugin physical addresses it falls in (one range per NUMA
 * node, given by the host as nN=LO:HI, and the extra ranges the host adds to
 * the file's header while the guest runs: hot-plugged DIMMs), loads and
 * stores, kernel and user
 * apart, device accesses apart, into the shared counters file of
 * locality-shm.h named by out=PATH.
 *
 * The memory callback runs on every access from several TCG threads at once:
 * it takes no lock, allocates nothing and makes no syscall; each vCPU writes
 * only its own block of the file. libc only; no vnuma library, as this runs
 * inside QEMU.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "plugin/locality-shm.h"
#include "plugin/qemu-plugin-abi.h"

VN_QEMU_PLUGIN_EXPORT int qemu_plugin_version = VN_QEMU_PLUGIN_API;

static struct {
	unsigned char *base; /* the mapped file */
	uint64_t size, vcpu_bytes;
	unsigned nvcpus, nranges;
	struct vn_loc_range
		ranges[VN_LOC_MAX_RANGES]; /* a private copy; of the header, only nextra is read per access */
} g;

static void say(const char *what, const char *detail)
{
	/* stderr is QEMU's log, which libvirt quotes when the guest fails to start. */
	fprintf(stderr, "vnuma-locality: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
}

static void count(unsigned vcpu, unsigned slot, unsigned kind)
{
	uint64_t *c =
		(uint64_t *)(g.base + sizeof(struct vn_loc_header) + vcpu * g.vcpu_bytes) + slot * VN_LOC_NKINDS + kind;
	/* One writer per counter: a plain add, published whole. */
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/*
 * The slot of an address in an extra range the host added (a hot-plugged
 * DIMM, or the part of one that QEMU 7.2's addresses make indistinguishable
 * from a boot cell's: docs/locality.md), or -1. Extra ranges come before the
 * boot ones, so the host can carve such a part out of a cell. The header's
 * line is read-mostly (the host writes it once per hotplug), so every
 * core keeps it cached: nextra loaded with acquire, then the slots below it
 * whole; a slot retired meanwhile (hi stored 0) matches nothing.
 */
static int extra_slot(uint64_t pa)
{
	const struct vn_loc_header *h = (const struct vn_loc_header *)g.base;
	unsigned n = __atomic_load_n(&h->nextra, __ATOMIC_ACQUIRE);
	if (n > VN_LOC_MAX_EXTRA)
		n = VN_LOC_MAX_EXTRA;
	for (unsigned e = 0; e < n; e++) {
		uint64_t lo = __atomic_load_n(&h->extra[e].lo, __ATOMIC_RELAXED);
		uint64_t hi = __atomic_load_n(&h->extra[e].hi, __ATOMIC_RELAXED);
		if (pa >= lo && pa < hi)
			return (int)VN_LOC_SLOT_EXTRA(g.nranges, e);
	}
	return -1;
}

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *userdata)
{
	if (vcpu >= g.nvcpus)
		return;
	/* x86-64: kernel addresses are the upper canonical half. */
	unsigned kind =
		(vaddr >> 63 ? VN_LOC_KERNEL_LOAD : VN_LOC_USER_LOAD) + (qemu_plugin_mem_is_store(info) ? 1 : 0);
	struct qemu_plugin_hwaddr *h = qemu_plugin_get_hwaddr(info, vaddr);
	if (!h) {
		count(vcpu, VN_LOC_SLOT_UNMAPPED(g.nranges), kind);
		return;
	}
	if (qemu_plugin_hwaddr_is_io(h)) {
		count(vcpu, VN_LOC_SLOT_IO(g.nranges), kind);
		return;
	}
	uint64_t pa = qemu_plugin_hwaddr_phys_addr(h);
	int e = extra_slot(pa);
	if (e >= 0) {
		count(vcpu, (unsigned)e, kind);
		return;
	}
	for (unsigned r = 0; r < g.nranges; r++) {
		if (pa >= g.ranges[r].lo && pa < g.ranges[r].hi) {
			count(vcpu, r, kind);
			return;
		}
	}
	count(vcpu, VN_LOC_SLOT_UNMAPPED(g.nranges), kind);
}

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	for (size_t i = 0; i < n; i++)
		qemu_plugin_register_vcpu_mem_cb(qemu_plugin_tb_get_insn(tb, i), on_mem, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, NULL);
}

static void on_exit_cb(qemu_plugin_id_t id, void *userdata)
{
	/*
	 * No munmap: another vCPU thread may still be counting while QEMU exits,
	 * and the mapping goes with the process.
	 */
	g.nvcpus = 0;
}

/* nN=LO:HI, N a node id, LO < HI numbers (0x for hex). */
static int parse_range(const char *arg, struct vn_loc_range *r)
{
	char *end;
	errno = 0;
	unsigned long node = strtoul(arg + 1, &end, 10);
	if (end == arg + 1 || *end != '=' || node >= VN_LOC_MAX_RANGES)
		return -1;
	const char *p = end + 1;
	unsigned long long lo = strtoull(p, &end, 0);
	if (end == p || *end != ':')
		return -1;
	p = end + 1;
	unsigned long long hi = strtoull(p, &end, 0);
	if (end == p || *end || errno || lo >= hi)
		return -1;
	*r = (struct vn_loc_range){.lo = lo, .hi = hi, .node = node};
	return 0;
}

static int parse_args(int argc, char **argv, const char **out)
{
	*out = NULL;
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "out=", 4) == 0 && argv[i][4]) {
			*out = argv[i] + 4;
		} else if (argv[i][0] == 'n' && g.nranges < VN_LOC_MAX_RANGES &&
			   parse_range(argv[i], &g.ranges[g.nranges]) == 0) {
			g.nranges++;
		} else {
			say("bad argument (want out=PATH and nN=LO:HI, at most 128)", argv[i]);
			return -1;
		}
	}
	if (!*out || !g.nranges) {
		say("needs out=PATH and at least one nN=LO:HI", NULL);
		return -1;
	}
	return 0;
}

static int map_file(const char *path, int api)
{
	g.vcpu_bytes = VN_LOC_VCPU_BYTES(g.nranges);
	g.size = VN_LOC_FILE_BYTES(g.nvcpus, g.nranges);
	/* A fresh file: the host removed any old one, and a link planted there is refused. */
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)g.size) < 0) {
		say(strerror(errno), path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	void *m = mmap(NULL, g.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		say(strerror(errno), path);
		return -1;
	}
	g.base = m;
	struct vn_loc_header *h = m;
	h->layout = VN_LOC_LAYOUT;
	h->api = (uint32_t)api;
	h->nvcpus = g.nvcpus;
	h->nranges = g.nranges;
	h->vcpu_bytes = g.vcpu_bytes;
	h->counters_at = sizeof(*h);
	memcpy(h->ranges, g.ranges, sizeof(g.ranges[0]) * g.nranges);
	/* The magic last: a reader that sees it sees the whole header. */
	__atomic_store_n(&h->magic, VN_LOC_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

VN_QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	char api[64];
	snprintf(api, sizeof(api), "QEMU offers plugin API %d (oldest %d), this plugin speaks %d", info->version.cur,
		 info->version.min, VN_QEMU_PLUGIN_API);
	/* Our declarations are 7.2's; a QEMU on another API may lay them out differently. */
	if (info->version.cur != VN_QEMU_PLUGIN_API) {
		say("refusing to load", api);
		return -1;
	}
	if (!info->system_emulation || !info->target_name || strcmp(info->target_name, "x86_64") != 0) {
		say("refusing to load: needs qemu-system-x86_64 (the user/kernel split is x86-64's)",
		    info->target_name);
		return -1;
	}
	if (info->system.max_vcpus <= 0 || info->system.max_vcpus > VN_LOC_MAX_VCPUS) {
		say("refusing to load: vCPU count out of range (1..1024)", NULL);
		return -1;
	}
	g.nvcpus = (unsigned)info->system.max_vcpus;
	const char *out;
	if (parse_args(argc, argv, &out) < 0 || map_file(out, info->version.cur) < 0)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
	qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
	return 0;
}
