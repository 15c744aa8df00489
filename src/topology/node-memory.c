/*
 * --node-memory: the topology rewritten as text (libxml2), not only as the
 * typed struct, because the guest dir's copy of it is what hotplug and the
 * results read back as the booted shape.
 */
#include "topology/node-memory.h"

#include <inttypes.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/parse.h"

static void doc_freep(xmlDocPtr *d)
{
	if (*d)
		xmlFreeDoc(*d);
}

/* The top level's <node> elements given bytes where their memory is not 0. */
static int set_sizes(xmlNodePtr root, const char *size, const char *name, struct vn_error *err)
{
	for (xmlNodePtr n = root->children; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, "node") != 0)
			continue;
		xmlChar *mem = xmlGetProp(n, (const xmlChar *)"memory");
		uint64_t bytes = 0;
		struct vn_error sub = {0};
		int rc = mem ? vn_size_parse((const char *)mem, &bytes, &sub) : 0;
		xmlFree(mem);
		vn_error_clear(&sub);
		if (rc < 0) /* the parser said so already; a stale text is the caller's bug */
			return vn_input_error(err, "%s:%ld: a node's memory does not parse", name, xmlGetLineNo(n));
		if (bytes)
			xmlSetProp(n, (const xmlChar *)"memory", (const xmlChar *)size);
	}
	return 0;
}

int vn_topology_node_memory(const char *text, size_t len, const char *name, uint64_t bytes, char **out_text,
			    size_t *out_len, struct vn_topology **out, struct vn_error *err)
{
	_cleanup_(doc_freep) xmlDocPtr doc = NULL;
	xmlChar *dump = NULL;
	char size[32], shown[32];
	int n = 0, rc;

	if (bytes % (UINT64_C(1) << 20))
		return vn_input_error(err, "node memory %s is not a whole number of MiB",
				      vn_size_format(bytes, shown, sizeof(shown)));
	if (bytes < VN_NODE_MEMORY_MIN)
		return vn_input_error(err, "node memory %s is under 128M: too small to boot a node's kernel",
				      vn_size_format(bytes, shown, sizeof(shown)));
	if (len > INT32_MAX || !(doc = xmlReadMemory(text, (int)len, name, "UTF-8",
						     XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)))
		return vn_input_error(err, "%s: not the topology it was", name);
	snprintf(size, sizeof(size), "%" PRIu64 "M", bytes >> 20);
	if ((rc = set_sizes(xmlDocGetRootElement(doc), size, name, err)) < 0)
		return rc;
	xmlDocDumpMemoryEnc(doc, &dump, &n, "UTF-8");
	if (!dump)
		vn_oom();
	_cleanup_free_ char *t = vn_xstrndup((const char *)dump, (size_t)n);
	xmlFree(dump);
	if ((rc = vn_topology_parse(t, (size_t)n, name, out, err)) < 0)
		return vn_error_prefix(err, "with every node's memory %s", size);
	*out_len = (size_t)n;
	*out_text = steal_pointer(&t);
	return 0;
}
