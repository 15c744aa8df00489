#include "util/name.h"

#include <ctype.h>
#include <string.h>

bool vn_guest_name_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > VN_GUEST_NAME_MAX || !isalnum((unsigned char)name[0]))
		return false;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_.", *p))
			return false;
	return true;
}

int vn_guest_name_check(const char *name, struct vn_error *err)
{
	if (vn_guest_name_valid(name))
		return 0;
	return vn_input_error(err,
			      "bad guest name '%.80s%s': a name is 1-%d letters, digits, '-', '_' and '.', "
			      "starting with a letter or digit",
			      name ? name : "", name && strlen(name) > 80 ? "..." : "", VN_GUEST_NAME_MAX);
}
