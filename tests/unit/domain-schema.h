/*
 * What virt-xml-validate does, in process, for the domain-XML tests:
 * libvirt's RELAX NG schema of a domain. Include after cmocka.h.
 */
#pragma once

#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/relaxng.h>

#define VN_TEST_DOMAIN_RNG "/usr/share/libvirt/schemas/domain.rng"

static void vn_test_schema_silent(void *ctx, const char *msg, ...)
{
}

/* 0 when xml is a valid domain. */
static inline int vn_test_domain_schema_check(const char *xml)
{
	if (access(VN_TEST_DOMAIN_RNG, R_OK) != 0)
		fail_msg("%s is missing (Debian package libvirt-daemon)", VN_TEST_DOMAIN_RNG);
	xmlRelaxNGParserCtxtPtr pc = xmlRelaxNGNewParserCtxt(VN_TEST_DOMAIN_RNG);
	xmlRelaxNGPtr rng = xmlRelaxNGParse(pc);
	assert_non_null(rng);
	xmlRelaxNGValidCtxtPtr vc = xmlRelaxNGNewValidCtxt(rng);
	xmlRelaxNGSetValidErrors(vc, vn_test_schema_silent, vn_test_schema_silent, NULL);
	xmlDocPtr doc = xmlReadMemory(xml, (int)strlen(xml), "domain.xml", NULL, XML_PARSE_NONET);
	assert_non_null(doc);
	int rc = xmlRelaxNGValidateDoc(vc, doc);
	xmlFreeDoc(doc);
	xmlRelaxNGFreeValidCtxt(vc);
	xmlRelaxNGFree(rng);
	xmlRelaxNGFreeParserCtxt(pc);
	return rc;
}
