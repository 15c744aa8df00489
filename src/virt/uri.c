/* What a libvirt URI says about where the guests are: pure string tests, no libvirt (cli/front.c links them). */
#include <stdlib.h>
#include <string.h>

#include "virt/connect.h"

bool vn_virt_uri_is_remote(const char *uri)
{
	if (!uri)
		uri = getenv("VNUMA_URI");
	const char *sep = uri ? strstr(uri, "://") : NULL;
	if (!sep)
		return false;
	/* A host in the URI (qemu://big1/system), or a transport that goes to one (qemu+ssh://, not qemu+unix://). */
	const char *auth = sep + 3;
	if (*auth && *auth != '/' && *auth != '?')
		return true;
	const char *plus = memchr(uri, '+', (size_t)(sep - uri));
	return plus && strncmp(plus + 1, "unix", 4) != 0;
}

bool vn_virt_uri_is_embedded(const char *uri)
{
	if (!uri)
		uri = getenv("VNUMA_URI");
	return !uri || !*uri || strncmp(uri, "qemu:///embed", 13) == 0;
}
