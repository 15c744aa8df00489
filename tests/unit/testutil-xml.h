/*
 * junit.xml read as XML, not as text: how many nodes an XPath expression
 * selects, so a test states what the file holds (a testcase's failure) and
 * not how the writer happens to lay it out.
 */
#pragma once

#include <libxml/parser.h>
#include <libxml/xpath.h>

/* The number of nodes xpath selects in the XML file path (a parse failure fails the test). */
static inline int vn_test_xpath_count(const char *path, const char *xpath)
{
	xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	int n = -1;

	if (!doc)
		fail_msg("%s: not well-formed XML", path);
	xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
	xmlXPathObjectPtr o = ctx ? xmlXPathEvalExpression((const xmlChar *)xpath, ctx) : NULL;
	if (o && o->type == XPATH_NODESET)
		n = o->nodesetval ? o->nodesetval->nodeNr : 0;
	xmlXPathFreeObject(o);
	xmlXPathFreeContext(ctx);
	xmlFreeDoc(doc);
	if (n < 0)
		fail_msg("%s: %s is not a node set", path, xpath);
	return n;
}
