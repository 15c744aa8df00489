/*
 * A boot's result (struct vn_up_result) as text, for the one place it
 * crosses a process: vn_testbed_up's child (child.c, util/isolate.h says
 * why there is one). One writer and one reader, each member once; the
 * reader is bounded and checks every type, so that a child's bug is an
 * error and not a crash or a wrong accelerator. A remote guest's artifacts
 * never cross (its work stays in the parent): they are not in the text.
 */
#pragma once

#include "testbed/up.h"
#include "util/error.h"

#define VN_UP_TEXT_MAX    (1u << 20)
#define VN_UP_PATCHES_MAX 4096

/* r's members as one line of JSON. Caller frees. */
char *vn_up_result_text(const struct vn_up_result *r);
/*
 * text into *r (zeroed first; vn_up_result_clear it, also on error). An
 * unknown key, a member of the wrong type, a number out of range or text
 * over the bounds is an input error "name: $.key: what is wrong".
 */
int vn_up_result_parse(const char *text, const char *name, struct vn_up_result *r, struct vn_error *err);
