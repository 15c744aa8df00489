/*
 * a topologies/ XML file -> struct vn_topology, with every check a user needs to
 * see before a guest is booted on a shape that is not the one they meant.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>

#include "topology/topology.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/alloc.h"

/* q35's max_cpus in QEMU 7.2. */
#define VN_MAX_CPUS 288

struct ctx {
	const char *file;
	struct vn_topology *t;
	struct vn_error *err;
	bool node_seen[VN_MAX_NODES];
	bool row_seen[VN_MAX_NODES];
};

VN_DEFINE_CLEANUP(xmlChar *, xmlFree);
#define _cleanup_xmlfree_ _cleanup_(xmlFreep)
VN_DEFINE_CLEANUP(xmlDocPtr, xmlFreeDoc);
VN_DEFINE_CLEANUP(xmlParserCtxtPtr, xmlFreeParserCtxt);

static int line_of(xmlNodePtr n)
{
	return (int)xmlGetLineNo(n);
}

/* FILE:LINE: message — the one format every input error uses. */
__attribute__((format(printf, 3, 0))) static int vfail_at(struct ctx *c, int line, const char *fmt, va_list ap)
{
	char msg[2048];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (line > 0)
		return vn_input_error(c->err, "%s:%d: %s", c->file, line, msg);
	return vn_input_error(c->err, "%s: %s", c->file, msg);
}

__attribute__((format(printf, 3, 4))) static int fail_at(struct ctx *c, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int rc = vfail_at(c, line, fmt, ap);
	va_end(ap);
	return rc;
}

__attribute__((format(printf, 3, 4))) static int fail(struct ctx *c, xmlNodePtr n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int rc = vfail_at(c, n ? line_of(n) : 0, fmt, ap);
	va_end(ap);
	return rc;
}

/* Pull the message out of a sub-parser's vn_error and re-raise it with context. */
static int fail_sub(struct ctx *c, xmlNodePtr n, const char *what, struct vn_error *sub)
{
	return fail(c, n, "%s: %s", what, sub->msg);
}

static bool is_elem(xmlNodePtr n)
{
	return n->type == XML_ELEMENT_NODE;
}

/* Unknown attributes are errors: a typo must not silently become a default. */
static int check_attrs(struct ctx *c, xmlNodePtr n, const char *const *allowed)
{
	for (xmlAttrPtr a = n->properties; a; a = a->next) {
		bool ok = false;
		for (const char *const *p = allowed; *p; p++)
			if (strcmp((const char *)a->name, *p) == 0)
				ok = true;
		if (!ok)
			return fail(c, n, "unknown attribute '%s' on <%s>", (const char *)a->name,
				    (const char *)n->name);
	}
	return 0;
}

/* A section that stands once at most in <topology> (<cpu>, <distances>, <hmat>): its attributes, and once. */
static int check_once(struct ctx *c, xmlNodePtr n, const char *const *allowed, bool *given)
{
	int rc;

	if ((rc = check_attrs(c, n, allowed)) < 0)
		return rc;
	if (*given)
		return fail(c, n, "<%s> given twice", (const char *)n->name);
	*given = true;
	return 0;
}

/* Only whitespace and comments may sit between elements. */
static int check_no_text(struct ctx *c, xmlNodePtr parent)
{
	for (xmlNodePtr n = parent->children; n; n = n->next) {
		if (n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE) {
			for (const xmlChar *p = n->content; p && *p; p++)
				if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
					return fail(c, n, "unexpected text in <%s>", (const char *)parent->name);
		}
	}
	return 0;
}

static int get_uint_attr(struct ctx *c, xmlNodePtr n, const char *name, bool required, long min, long max, long *out)
{
	_cleanup_xmlfree_ xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	struct vn_error sub = {0};

	if (!v) {
		if (required)
			return fail(c, n, "<%s> needs a '%s' attribute", (const char *)n->name, name);
		return 1;
	}
	if (vn_int_parse((const char *)v, min, max, out, &sub) < 0)
		return fail(c, n, "<%s %s='%s'>: %s", (const char *)n->name, name, (const char *)v, sub.msg);
	return 0;
}

static int parse_cpu(struct ctx *c, xmlNodePtr n)
{
	static const char *const attrs[] = {"sockets", "dies", "cores", "threads", NULL};
	struct vn_topology *t = c->t;
	long v;
	int rc;

	if ((rc = check_once(c, n, attrs, &t->cpu_topology_given)) < 0)
		return rc;
	const struct {
		const char *name;
		bool required;
		unsigned *to;
	} dims[] = {
		{"sockets", true, &t->sockets},
		{"dies", false, &t->dies},
		{"cores", true, &t->cores},
		{"threads", false, &t->threads},
	};
	t->sockets = t->dies = t->cores = t->threads = 1;
	for (size_t i = 0; i < VN_ARRAY_SIZE(dims); i++) {
		if ((rc = get_uint_attr(c, n, dims[i].name, dims[i].required, 1, VN_MAX_CPUS, &v)) < 0)
			return rc;
		if (rc == 0)
			*dims[i].to = (unsigned)v;
	}
	t->cpu_line = line_of(n);
	return 0;
}

/* An element that must be empty: no children, no text. */
static int check_empty(struct ctx *c, xmlNodePtr n)
{
	for (xmlNodePtr k = n->children; k; k = k->next)
		if (is_elem(k))
			return fail(c, k, "unexpected element <%s> in <%s>", (const char *)k->name,
				    (const char *)n->name);
	return check_no_text(c, n);
}

static int parse_disk_size(struct ctx *c, xmlNodePtr n, const struct vn_node *node, uint64_t *size)
{
	_cleanup_xmlfree_ xmlChar *v = xmlGetProp(n, (const xmlChar *)"size");
	struct vn_error sub = {0};

	if (!v)
		return fail(c, n, "node %u: <disk> needs a 'size' attribute (e.g. size=\"1G\")", node->id);
	const char *s = (const char *)v;
	if (vn_size_parse(s, size, &sub) < 0)
		return fail_sub(c, n, "disk size", &sub);
	/* A bare number would be bytes, which nobody means for a disk. */
	if (!*s || isdigit((unsigned char)s[strlen(s) - 1]))
		return fail(c, n, "node %u: disk size '%s' needs a unit (K, M, G or T)", node->id, s);
	if (*size < VN_DISK_MIN_BYTES || *size > VN_DISK_MAX_BYTES)
		return fail(c, n, "node %u: disk size '%s' must be 1M..1T", node->id, s);
	if (*size % VN_DISK_MIN_BYTES)
		return fail(c, n, "node %u: disk size '%s' is not a whole number of MiB", node->id, s);
	return 0;
}

/* <devices>: <disk size="1G"/> and <nic/>, in the order the node's PCI root ports get them. */
static int parse_devices(struct ctx *c, xmlNodePtr n, struct vn_node *node)
{
	static const char *const none[] = {NULL};
	static const char *const disk_attrs[] = {"size", "root", NULL};
	int rc;

	if ((rc = check_attrs(c, n, none)) < 0 || (rc = check_no_text(c, n)) < 0)
		return rc;
	for (xmlNodePtr k = n->children; k; k = k->next) {
		if (!is_elem(k))
			continue;
		bool disk = strcmp((const char *)k->name, "disk") == 0;
		if (!disk && strcmp((const char *)k->name, "nic") != 0)
			return fail(c, k, "unknown element <%s> in <devices> (expected <disk> or <nic>)",
				    (const char *)k->name);
		if ((rc = check_attrs(c, k, disk ? disk_attrs : none)) < 0 || (rc = check_empty(c, k)) < 0)
			return rc;
		if (node->ndevices == VN_NODE_MAX_DEVICES)
			return fail(c, k, "node %u: more than %d devices", node->id, VN_NODE_MAX_DEVICES);
		struct vn_device *d = &node->devices[node->ndevices++];
		*d = (struct vn_device){.kind = disk ? VN_DEVICE_DISK : VN_DEVICE_NIC, .line = line_of(k)};
		if (disk && (rc = parse_disk_size(c, k, node, &d->size)) < 0)
			return rc;
		_cleanup_xmlfree_ xmlChar *root = disk ? xmlGetProp(k, (const xmlChar *)"root") : NULL;
		if (root && strcmp((const char *)root, "yes") != 0 && strcmp((const char *)root, "no") != 0)
			return fail(c, k, "node %u: root='%s': expected yes or no", node->id, (const char *)root);
		d->root = root && strcmp((const char *)root, "yes") == 0;
	}
	return 0;
}

/*
 * hotplug="SIZE": memory the node can take at run time, in whole memory
 * blocks. hotplug-cpus="LIST": CPUs of the node that are absent at boot and
 * can be plugged in later (vCPU 0 never: QEMU and Linux boot on it).
 */
static int parse_hotplug(struct ctx *c, xmlNodePtr n, struct vn_node *node)
{
	_cleanup_xmlfree_ xmlChar *mem = xmlGetProp(n, (const xmlChar *)"hotplug");
	_cleanup_xmlfree_ xmlChar *cpus = xmlGetProp(n, (const xmlChar *)"hotplug-cpus");
	struct vn_error sub = {0};

	if (mem) {
		const char *s = (const char *)mem;
		if (vn_size_parse(s, &node->hotplug_memory, &sub) < 0)
			return fail_sub(c, n, "hotplug", &sub);
		if (!*s || isdigit((unsigned char)s[strlen(s) - 1]))
			return fail(c, n, "node %u: hotplug size '%s' needs a unit (M or G)", node->id, s);
		if (!node->hotplug_memory || node->hotplug_memory % VN_HOTPLUG_BLOCK_BYTES)
			return fail(c, n,
				    "node %u: hotplug size '%s' is not a whole number of 128M memory blocks (the "
				    "unit Linux onlines hot-added memory in)",
				    node->id, s);
		if (node->hotplug_memory > VN_HOTPLUG_MAX_BYTES)
			return fail(c, n, "node %u: hotplug size '%s' is more than 64G", node->id, s);
	}
	if (!cpus)
		return 0;
	if (vn_cpulist_parse((const char *)cpus, &node->hotplug_cpus, &sub) < 0)
		return fail_sub(c, n, "hotplug-cpus", &sub);
	node->nhotplug_cpus = vn_cpuset_count(&node->hotplug_cpus);
	if (!node->nhotplug_cpus)
		return fail(c, n, "node %u: hotplug-cpus is empty (leave it out instead)", node->id);
	for (unsigned cpu = 0; cpu < VN_CPUSET_MAX; cpu++) {
		if (!vn_cpuset_has(&node->hotplug_cpus, cpu))
			continue;
		if (!vn_cpuset_has(&node->cpus, cpu))
			return fail(c, n, "node %u: hotplug cpu %u is not one of the node's cpus", node->id, cpu);
		if (cpu == 0)
			return fail(c, n, "node %u: cpu 0 cannot be hot-plugged (the guest boots on it)", node->id);
	}
	return 0;
}

/*
 * memory-kind="pmem|cxl": slow memory, which the guest gets as real slow
 * memory is onlined on 6.1 (device-dax and kmem, after boot). Refused where
 * the kernel would not make it a lower tier, or real hardware has no such
 * thing (docs/tiering.md).
 */
static int parse_memory_kind(struct ctx *c, xmlNodePtr n, struct vn_node *node)
{
	static const char *const names[] = {
		[VN_MEMORY_DRAM] = "dram", [VN_MEMORY_PMEM] = "pmem", [VN_MEMORY_CXL] = "cxl"};
	_cleanup_xmlfree_ xmlChar *kind = xmlGetProp(n, (const xmlChar *)"memory-kind");
	const char *k = (const char *)kind;
	unsigned i = 0;

	if (!kind)
		return 0;
	while (i < VN_ARRAY_SIZE(names) && strcmp(k, names[i]) != 0)
		i++;
	if (i == VN_ARRAY_SIZE(names))
		return fail(c, n, "node %u: memory-kind '%s' is not dram, pmem or cxl", node->id, k);
	node->memory_kind = (enum vn_memory_kind)i;
	if (node->memory_kind == VN_MEMORY_DRAM)
		return 0;
	if (node->id == 0)
		return fail(
			c, n,
			"node 0: memory-kind '%s': node 0 boots with DRAM, because the guest's low memory and "
			"kernel image lie in node 0's cell; give slow memory to CPU-less nodes with the highest ids",
			k);
	if (node->ncpus)
		return fail(c, n,
			    "node %u: memory-kind '%s' on a node with CPUs: slow memory sits on CPU-less nodes on "
			    "real hardware, and 6.1 makes a tier holding a node with CPUs a top tier (no promotion "
			    "from it)",
			    node->id, k);
	if (node->memory % VN_HOTPLUG_BLOCK_BYTES)
		return fail(c, n,
			    "node %u: memory-kind '%s' needs memory in whole 128M memory blocks (kmem onlines whole "
			    "blocks and drops a partial one)",
			    node->id, k);
	if (node->hotplug_memory)
		return fail(c, n,
			    "node %u: memory-kind '%s' with hotplug memory: 6.1 sets a node's memory type once, so "
			    "a DIMM onlined there before kmem would make the node DRAM for good",
			    node->id, k);
	return 0;
}

static int parse_node(struct ctx *c, xmlNodePtr n)
{
	static const char *const attrs[] = {"id", "cpus", "memory", "memory-kind", "hotplug", "hotplug-cpus", NULL};
	struct vn_topology *t = c->t;
	struct vn_error sub = {0};
	long id;
	int rc;

	if ((rc = check_attrs(c, n, attrs)) < 0)
		return rc;
	if ((rc = get_uint_attr(c, n, "id", true, 0, 1000000, &id)) < 0)
		return rc;
	if (id >= VN_MAX_NODES)
		return fail(c, n, "node id %ld: QEMU supports at most %d nodes (ids 0..%d)", id, VN_MAX_NODES,
			    VN_MAX_NODES - 1);
	if (c->node_seen[id])
		return fail(c, n, "node id %ld defined twice (first at line %d)", id, t->nodes[id].line);
	c->node_seen[id] = true;

	struct vn_node *node = &t->nodes[id];
	node->id = (unsigned)id;
	node->line = line_of(n);

	_cleanup_xmlfree_ xmlChar *cpus = xmlGetProp(n, (const xmlChar *)"cpus");
	if (!cpus)
		return fail(c, n, "node %ld needs a 'cpus' attribute (cpus=\"\" for a CPU-less node)", id);
	if (vn_cpulist_parse((const char *)cpus, &node->cpus, &sub) < 0)
		return fail_sub(c, n, "cpus", &sub);
	node->ncpus = vn_cpuset_count(&node->cpus);

	_cleanup_xmlfree_ xmlChar *mem = xmlGetProp(n, (const xmlChar *)"memory");
	if (!mem)
		return fail(c, n, "node %ld needs a 'memory' attribute (memory=\"0\" for a memory-less node)", id);
	if (vn_size_parse((const char *)mem, &node->memory, &sub) < 0)
		return fail_sub(c, n, "memory", &sub);
	if (node->memory % (1 << 20))
		return fail(c, n, "node %ld: memory '%s' is not a whole number of MiB", id, (const char *)mem);
	if (!node->ncpus && !node->memory)
		return fail(c, n, "node %ld has neither CPUs nor memory", id);
	if ((rc = parse_hotplug(c, n, node)) < 0 || (rc = parse_memory_kind(c, n, node)) < 0)
		return rc;

	if ((rc = check_no_text(c, n)) < 0)
		return rc;
	bool devices_seen = false;
	for (xmlNodePtr k = n->children; k; k = k->next) {
		if (!is_elem(k))
			continue;
		if (strcmp((const char *)k->name, "devices") != 0)
			return fail(c, k, "unknown element <%s> in <node> (expected <devices>)", (const char *)k->name);
		if (devices_seen)
			return fail(c, k, "node %ld: <devices> given twice", id);
		devices_seen = true;
		if ((rc = parse_devices(c, k, node)) < 0)
			return rc;
	}
	return 0;
}

/* Row text: whitespace-separated integers. */
static int parse_row(struct ctx *c, xmlNodePtr n)
{
	static const char *const attrs[] = {"node", NULL};
	struct vn_topology *t = c->t;
	long from;
	int rc;

	if ((rc = check_attrs(c, n, attrs)) < 0)
		return rc;
	for (xmlNodePtr k = n->children; k; k = k->next)
		if (is_elem(k))
			return fail(c, k, "unexpected element <%s> in <row>", (const char *)k->name);
	if ((rc = get_uint_attr(c, n, "node", true, 0, VN_MAX_NODES - 1, &from)) < 0)
		return rc;
	if (c->row_seen[from])
		return fail(c, n, "distance row for node %ld given twice", from);
	c->row_seen[from] = true;

	_cleanup_xmlfree_ xmlChar *text = xmlNodeGetContent(n);
	const char *p = text ? (const char *)text : "";
	unsigned col = 0;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p)
			break;
		const char *start = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			p++;
		char tok[32];
		size_t len = (size_t)(p - start);
		if (len >= sizeof(tok))
			return fail(c, n, "row %ld: value '%.*s' is not an integer", from, (int)len, start);
		memcpy(tok, start, len);
		tok[len] = '\0';
		long v;
		struct vn_error sub = {0};
		if (vn_int_parse(tok, 0, 1000000, &v, &sub) < 0)
			return fail(c, n, "row %ld: value '%s' is not a distance", from, tok);
		if (col >= VN_MAX_NODES)
			return fail(c, n, "row %ld: more than %d values", from, VN_MAX_NODES);
		if (v > VN_DISTANCE_UNREACHABLE)
			return fail(c, n, "row %ld, column %u: distance %ld is above %d (255 means unreachable)", from,
				    col, v, VN_DISTANCE_UNREACHABLE);
		t->distance[from][col] = (uint8_t)v;
		col++;
	}
	t->row_len[from] = col;
	t->row_line[from] = line_of(n);
	return 0;
}

static int parse_distances(struct ctx *c, xmlNodePtr n)
{
	int rc;
	static const char *const none[] = {NULL};

	if ((rc = check_once(c, n, none, &c->t->distances_given)) < 0)
		return rc;
	c->t->distances_line = line_of(n);
	if ((rc = check_no_text(c, n)) < 0)
		return rc;
	for (xmlNodePtr k = n->children; k; k = k->next) {
		if (!is_elem(k))
			continue;
		if (strcmp((const char *)k->name, "row") != 0)
			return fail(c, k, "unknown element <%s> in <distances> (expected <row>)",
				    (const char *)k->name);
		if ((rc = parse_row(c, k)) < 0)
			return rc;
	}
	return 0;
}

static int parse_hmat(struct ctx *c, xmlNodePtr n)
{
	static const char *const none[] = {NULL};
	static const char *const lat[] = {"initiator", "target", "ns", NULL};
	static const char *const bw[] = {"initiator", "target", "mbps", NULL};
	struct vn_topology *t = c->t;
	int rc;

	if ((rc = check_once(c, n, none, &t->hmat_given)) < 0)
		return rc;
	if ((rc = check_no_text(c, n)) < 0)
		return rc;
	for (xmlNodePtr k = n->children; k; k = k->next) {
		if (!is_elem(k))
			continue;
		bool is_lat = strcmp((const char *)k->name, "latency") == 0;
		bool is_bw = strcmp((const char *)k->name, "bandwidth") == 0;
		if (!is_lat && !is_bw)
			return fail(c, k, "unknown element <%s> in <hmat> (expected <latency> or <bandwidth>)",
				    (const char *)k->name);
		if ((rc = check_attrs(c, k, is_lat ? lat : bw)) < 0)
			return rc;
		long ini, tgt, val;
		if ((rc = get_uint_attr(c, k, "initiator", true, 0, VN_MAX_NODES - 1, &ini)) < 0 ||
		    (rc = get_uint_attr(c, k, "target", true, 0, VN_MAX_NODES - 1, &tgt)) < 0 ||
		    (rc = get_uint_attr(c, k, is_lat ? "ns" : "mbps", true, 1, 100000000, &val)) < 0)
			return rc;
		struct vn_hmat_entry *e = vn_xreallocarray(t->hmat, t->nhmat + 1, sizeof(*e));
		t->hmat = e;
		e = &t->hmat[t->nhmat++];
		*e = (struct vn_hmat_entry){.initiator = (unsigned)ini,
					    .target = (unsigned)tgt,
					    .type = is_lat ? VN_HMAT_LATENCY : VN_HMAT_BANDWIDTH,
					    .value = (uint64_t)val,
					    .line = line_of(k)};
	}
	return 0;
}

/* Node ids dense 0..n-1: sets t->nnodes. */
static int validate_dense(struct ctx *c, xmlNodePtr root)
{
	struct vn_topology *t = c->t;
	unsigned n = 0;

	for (unsigned i = 0; i < VN_MAX_NODES; i++)
		if (c->node_seen[i])
			n = i + 1;
	if (n == 0)
		return fail(c, root, "no <node> elements");
	for (unsigned i = 0; i < n; i++)
		if (!c->node_seen[i])
			return fail(c, root, "node ids must be dense 0..%u: node %u is missing", n - 1, i);
	t->nnodes = n;
	return 0;
}

/* Each CPU in one node, the devices' count and root disk, the totals; CPUs and memory somewhere, node 0 with memory. */
static int validate_nodes(struct ctx *c, xmlNodePtr root)
{
	struct vn_topology *t = c->t;
	unsigned n = t->nnodes, with_cpus = 0, with_mem = 0, disks_seen = 0;
	struct vn_cpuset all = {0};

	for (unsigned i = 0; i < n; i++) {
		struct vn_node *node = &t->nodes[i];
		for (unsigned cpu = 0; cpu < VN_CPUSET_MAX; cpu++) {
			if (!vn_cpuset_has(&node->cpus, cpu))
				continue;
			if (vn_cpuset_has(&all, cpu))
				return fail_at(c, node->line, "node %u: cpu %u already belongs to node %d", i, cpu,
					       vn_topology_cpu_node(t, cpu));
			vn_cpuset_set(&all, cpu);
		}
		with_cpus += node->ncpus > 0;
		with_mem += node->memory > 0;
		t->ncpus_total += node->ncpus;
		t->hotplug_memory_total += node->hotplug_memory;
		t->nhotplug_cpus_total += node->nhotplug_cpus;
		for (unsigned k = 0; k < node->ndevices; k++) {
			const struct vn_device *d = &node->devices[k];
			if (++t->ndevices_total > VN_TOPOLOGY_MAX_DEVICES)
				return fail_at(c, d->line,
					       "node %u: device %u of the topology: at most %d devices in all (each "
					       "takes a PCI bus number and the nodes' expander buses share q35's)",
					       i, t->ndevices_total, VN_TOPOLOGY_MAX_DEVICES);
			/*
			 * The image's init and fstab name the root /dev/vda: the guest probes the expanders'
			 * buses in node order, so only the first disk of the topology is sure to be vda.
			 */
			if (d->kind == VN_DEVICE_DISK && d->root && disks_seen)
				return fail_at(c, d->line,
					       "node %u: root='yes' on a disk that is not the topology's first (the "
					       "root disk must be vda, the first the guest finds)",
					       i);
			disks_seen += d->kind == VN_DEVICE_DISK;
		}
	}
	if (!with_cpus)
		return fail(c, root, "no node has CPUs");
	if (!with_mem)
		return fail(c, root, "no node has memory");
	/* The guest's low memory (below 1 MiB, the kernel image) always lies in node 0's cell. */
	if (!t->nodes[0].memory)
		return fail_at(c, t->nodes[0].line,
			       "node 0 has no memory: vnuma cannot boot that, because the guest's low memory (below 1 "
			       "MiB, the "
			       "kernel image) always lies in node 0's cell; renumber the nodes so a node with memory "
			       "comes first");
	if (t->ncpus_total > VN_MAX_CPUS)
		return fail(c, root, "%u CPUs: QEMU's q35 machine supports at most %d", t->ncpus_total, VN_MAX_CPUS);
	for (unsigned cpu = 0; cpu < t->ncpus_total; cpu++)
		if (!vn_cpuset_has(&all, cpu))
			return fail(c, root, "CPUs must cover 0..%u: cpu %u is in no node", t->ncpus_total - 1, cpu);
	return 0;
}

/* The order x86 Linux numbers nodes in, so the guest sees the file's numbers. */
static int validate_srat_order(struct ctx *c)
{
	struct vn_topology *t = c->t;
	unsigned n = t->nnodes;

	/*
	 * x86 Linux numbers nodes in the order SRAT names their proximity
	 * domains: processor entries first (in CPU order), then memory. A file
	 * numbered otherwise boots as a renumbered machine, so refuse it.
	 */
	int last_first_cpu = -1;
	for (unsigned i = 0; i < n; i++) {
		const struct vn_node *node = &t->nodes[i];
		if (!node->ncpus)
			continue;
		for (unsigned j = 0; j < i; j++)
			if (!t->nodes[j].ncpus)
				return fail_at(c, t->nodes[j].line,
					       "node %u has no CPUs but node %u after it has: x86 Linux numbers nodes "
					       "with CPUs first (SRAT lists processors before memory), so the guest "
					       "would call it node %u; give CPU-less nodes the highest ids",
					       j, i, n - 1);
		int first = vn_cpuset_first(&node->cpus);
		if (first < last_first_cpu)
			return fail_at(
				c, node->line,
				"node %u's CPUs start at %d, before those of a lower-numbered node: x86 Linux numbers "
				"nodes in CPU order, so the guest would renumber them; number CPUs in node order",
				i, first);
		last_first_cpu = first;
	}
	return 0;
}

/* <cpu>'s sockets*dies*cores*threads against the nodes. */
static int validate_sockets(struct ctx *c)
{
	struct vn_topology *t = c->t;
	unsigned n = t->nnodes;

	if (t->cpu_topology_given) {
		unsigned per_socket = t->dies * t->cores * t->threads;
		if (t->sockets * per_socket != t->ncpus_total)
			return fail_at(
				c, t->cpu_line,
				"<cpu> sockets*dies*cores*threads = %u*%u*%u*%u = %u, but the nodes have %u CPUs",
				t->sockets, t->dies, t->cores, t->threads, t->sockets * per_socket, t->ncpus_total);
		/* The guest kernel warns when a socket is split oddly across nodes. */
		for (unsigned i = 0; i < n; i++) {
			const struct vn_node *node = &t->nodes[i];
			if (!node->ncpus)
				continue;
			unsigned first = (unsigned)vn_cpuset_first(&node->cpus);
			unsigned last = (unsigned)vn_cpuset_last(&node->cpus);
			bool one_socket = first / per_socket == last / per_socket;
			bool whole_sockets = first % per_socket == 0 && node->ncpus % per_socket == 0 &&
					     last - first + 1 == node->ncpus;
			if (!one_socket && !whole_sockets)
				return fail_at(c, node->line,
					       "node %u's CPUs %u-%u straddle sockets of %u CPUs; a node must sit "
					       "inside one socket or hold whole sockets",
					       i, first, last, per_socket);
		}
	}
	return 0;
}

/* The distance matrix: the default one, or every row given and sane. */
static int validate_distances(struct ctx *c)
{
	struct vn_topology *t = c->t;
	unsigned n = t->nnodes;

	if (!t->distances_given) {
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = 0; j < n; j++)
				t->distance[i][j] = i == j ? VN_DISTANCE_LOCAL : VN_DISTANCE_DEFAULT_REMOTE;
	} else {
		for (unsigned i = 0; i < n; i++) {
			if (!c->row_seen[i])
				return fail_at(c, t->distances_line, "<distances> has no row for node %u", i);
			if (t->row_len[i] != n)
				return fail_at(c, t->row_line[i], "row %u has %u values, expected %u (one per node)", i,
					       t->row_len[i], n);
		}
		for (unsigned i = n; i < VN_MAX_NODES; i++)
			if (c->row_seen[i])
				return fail_at(c, t->row_line[i], "row for node %u, but there are only %u nodes", i, n);
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = 0; j < n; j++) {
				unsigned d = t->distance[i][j];
				if (i == j && d != VN_DISTANCE_LOCAL)
					return fail_at(c, t->row_line[i], "row %u: local distance is %u, must be %d", i,
						       d, VN_DISTANCE_LOCAL);
				if (i != j && d <= VN_DISTANCE_LOCAL)
					return fail_at(c, t->row_line[i],
						       "row %u, column %u: remote distance %u must be 11..255", i, j,
						       d);
			}
	}
	return 0;
}

/* The HMAT entries: nodes that exist, initiators with CPUs, targets with memory, each pair once. */
static int validate_hmat(struct ctx *c)
{
	struct vn_topology *t = c->t;
	unsigned n = t->nnodes;

	for (unsigned k = 0; k < t->nhmat; k++) {
		const struct vn_hmat_entry *e = &t->hmat[k];
		if (e->initiator >= n || e->target >= n)
			return fail_at(c, e->line, "hmat entry names node %u, but there are only %u nodes",
				       e->initiator >= n ? e->initiator : e->target, n);
		if (!t->nodes[e->initiator].ncpus)
			return fail_at(c, e->line, "hmat initiator %u has no CPUs", e->initiator);
		if (!t->nodes[e->target].memory)
			return fail_at(c, e->line, "hmat target %u has no memory", e->target);
		for (unsigned m = 0; m < k; m++) {
			const struct vn_hmat_entry *a = &t->hmat[m];
			const char *type = e->type == VN_HMAT_LATENCY ? "latency" : "bandwidth";
			if (a->initiator == e->initiator && a->target == e->target && a->type == e->type)
				return fail_at(c, e->line, "hmat %s %u->%u given twice (first at line %d)", type,
					       e->initiator, e->target, a->line);
			/* libvirt 9.0 refuses the second direction at define time ("Link already defined"). */
			if (a->type == e->type && a->initiator == e->target && a->target == e->initiator &&
			    a->initiator != a->target)
				return fail_at(c, e->line,
					       "hmat %s %u->%u and %u->%u (line %d): libvirt 9.0 accepts only one "
					       "direction between two nodes",
					       type, e->initiator, e->target, a->initiator, a->target, a->line);
		}
	}
	return 0;
}

/* Whole-file checks that need every node: dense ids, the nodes, SRAT order, sockets, distances, HMAT. */
static int validate(struct ctx *c, xmlNodePtr root)
{
	int rc;

	if ((rc = validate_dense(c, root)) < 0 || (rc = validate_nodes(c, root)) < 0 ||
	    (rc = validate_srat_order(c)) < 0 || (rc = validate_sockets(c)) < 0 || (rc = validate_distances(c)) < 0 ||
	    (rc = validate_hmat(c)) < 0)
		return rc;
	return 0;
}

static int parse_root(struct ctx *c, xmlNodePtr root)
{
	static const char *const attrs[] = {"name", NULL};
	struct vn_topology *t = c->t;
	int rc;

	if (!root || strcmp((const char *)root->name, "topology") != 0)
		return fail(c, root, "root element must be <topology>, not <%s>", root ? (const char *)root->name : "");
	if ((rc = check_attrs(c, root, attrs)) < 0)
		return rc;
	_cleanup_xmlfree_ xmlChar *name = xmlGetProp(root, (const xmlChar *)"name");
	if (!name || !*name)
		return fail(c, root, "<topology> needs a non-empty 'name' attribute");
	for (const xmlChar *p = name; *p; p++)
		if (!(isalnum(*p) || *p == '-' || *p == '_' || *p == '.'))
			return fail(c, root, "topology name '%s' may only hold letters, digits, '-', '_' and '.'",
				    (const char *)name);
	t->name = vn_xstrdup((const char *)name);
	if ((rc = check_no_text(c, root)) < 0)
		return rc;

	for (xmlNodePtr k = root->children; k; k = k->next) {
		if (!is_elem(k))
			continue;
		const char *en = (const char *)k->name;
		if (strcmp(en, "description") == 0) {
			static const char *const none[] = {NULL};
			if ((rc = check_attrs(c, k, none)) < 0)
				return rc;
			if (t->description)
				return fail(c, k, "<description> given twice");
			_cleanup_xmlfree_ xmlChar *d = xmlNodeGetContent(k);
			t->description = vn_xstrdup(d ? (const char *)d : "");
		} else if (strcmp(en, "cpu") == 0) {
			rc = parse_cpu(c, k);
		} else if (strcmp(en, "node") == 0) {
			rc = parse_node(c, k);
		} else if (strcmp(en, "distances") == 0) {
			rc = parse_distances(c, k);
		} else if (strcmp(en, "hmat") == 0) {
			rc = parse_hmat(c, k);
		} else {
			return fail(c, k, "unknown element <%s> in <topology>", en);
		}
		if (rc < 0)
			return rc;
	}
	return validate(c, root);
}

/* libxml2 reports encoding failures through its global handler (stderr) whatever the parse options. */
static void quiet_generic(void *ctx, const char *msg, ...)
{
}

/*
 * Topologies are UTF-8 (ASCII is a subset). A file that declares, or starts
 * with the byte order mark of, anything else is refused before libxml2
 * tries to convert it: the user sees FILE:1 and what was declared, never a
 * raw libxml2 message.
 */
static int check_encoding(const char *buf, size_t len, const char *name, struct vn_error *err)
{
	const unsigned char *u = (const unsigned char *)buf;

	if (len >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF) {
		buf += 3;
		len -= 3;
	} else if (len >= 2 && ((u[0] == 0xFE && u[1] == 0xFF) || (u[0] == 0xFF && u[1] == 0xFE) || !u[0] || !u[1])) {
		return vn_input_error(err, "%s:1: not UTF-8 (UTF-16 or UTF-32 text); topology files are UTF-8", name);
	} else if (len >= 4 && memcmp(u, "\x4C\x6F\xA7\x94", 4) == 0) {
		return vn_input_error(err, "%s:1: not UTF-8 (EBCDIC text); topology files are UTF-8", name);
	}
	if (len < 5 || memcmp(buf, "<?xml", 5) != 0)
		return 0;
	const char *end = memmem(buf, len < 1024 ? len : 1024, "?>", 2);
	if (!end)
		return 0; /* libxml2 reports the broken declaration */
	size_t dlen = (size_t)(end - buf);
	const char *e = memmem(buf, dlen, "encoding", 8);
	if (!e)
		return 0;
	const char *p = e + 8;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '='))
		p++;
	if (p >= end || (*p != '"' && *p != '\''))
		return 0;
	char q = *p++;
	const char *v = p;
	while (p < end && *p != q)
		p++;
	size_t vlen = (size_t)(p - v);
	static const char *const ok[] = {"UTF-8", "UTF8", "US-ASCII", "ASCII"};
	for (size_t i = 0; i < VN_ARRAY_SIZE(ok); i++)
		if (vlen == strlen(ok[i]) && strncasecmp(v, ok[i], vlen) == 0)
			return 0;
	int line = 1;
	for (const char *c = buf; c < e; c++)
		line += *c == '\n';
	return vn_input_error(err, "%s:%d: declared encoding '%.*s' is not supported; topology files are UTF-8", name,
			      line, (int)(vlen > 40 ? 40 : vlen), v);
}

int vn_topology_parse(const char *buf, size_t len, const char *name, struct vn_topology **out, struct vn_error *err)
{
	_cleanup_(xmlFreeParserCtxtp) xmlParserCtxtPtr pctx = xmlNewParserCtxt();
	_cleanup_(xmlFreeDocp) xmlDocPtr doc = NULL;
	_cleanup_topology_ struct vn_topology *t = vn_xcalloc(1, sizeof(*t));
	struct ctx c = {.file = name, .err = err};
	int rc;

	if (!pctx)
		vn_oom();
	if (len > INT32_MAX)
		return vn_input_error(err, "%s: file too large", name);
	if ((rc = check_encoding(buf, len, name, err)) < 0)
		return rc;
	/* No network, no entity expansion, no DTD: a topology is plain data. Nothing reaches stderr. */
	xmlGenericErrorFunc old_handler = xmlGenericError;
	void *old_ctx = xmlGenericErrorContext;
	xmlSetGenericErrorFunc(NULL, quiet_generic);
	doc = xmlCtxtReadMemory(pctx, buf, (int)len, name, "UTF-8",
				XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	xmlSetGenericErrorFunc(old_ctx, old_handler);
	if (!doc) {
		xmlErrorPtr e = xmlCtxtGetLastError(pctx);
		if (e && e->message) {
			char msg[512];
			snprintf(msg, sizeof(msg), "%s", e->message);
			size_t l = strlen(msg);
			while (l && msg[l - 1] == '\n')
				msg[--l] = '\0';
			/* One line, as every input error: libxml2 appends "\nBytes: ..." to some. */
			for (char *p = msg; *p; p++)
				if (*p == '\n' || *p == '\r')
					*p = ' ';
			return vn_input_error(err, "%s:%d: malformed XML: %s", name, e->line, msg);
		}
		return vn_input_error(err, "%s: malformed XML", name);
	}
	if (doc->intSubset)
		return vn_input_error(err, "%s: DOCTYPE declarations are not allowed", name);
	c.t = t;
	rc = parse_root(&c, xmlDocGetRootElement(doc));
	if (rc < 0)
		return rc;
	t->path = vn_xstrdup(name);
	*out = steal_pointer(&t);
	return 0;
}

int vn_topology_load_text(const char *path, struct vn_topology **out, char **text, size_t *len, struct vn_error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t n = 0;
	int rc;

	/* A regular file only: a FIFO or device named by mistake must not block or stream forever. */
	if ((rc = vn_file_read(path, 64u << 20, &buf, &n, err)) == -EFBIG) {
		vn_error_clear(err);
		return vn_input_error(err, "%s: larger than 64 MiB, not a topology", path);
	}
	if (rc < 0 || (rc = vn_topology_parse(buf, n, path, out, err)) < 0)
		return rc;
	if (text) {
		*text = steal_pointer(&buf);
		*len = n;
	}
	return 0;
}

int vn_topology_load(const char *path, struct vn_topology **out, struct vn_error *err)
{
	return vn_topology_load_text(path, out, NULL, NULL, err);
}
