/*
 * The one rule for guest names, checked before anything else in every
 * command that takes one (up, down, status, exec, shell, collect, and the
 * names run derives): a name becomes STATE/guests/NAME/ and a libvirt domain,
 * so it must be one harmless path component.
 */
#pragma once

#include <stdbool.h>

#include "util/error.h"

/* 64: room for STATE/guests/NAME/agent.sock within a unix socket path in usual state dirs. */
#define VN_GUEST_NAME_MAX 64

/* 1-64 letters, digits, '-', '_', '.', starting with a letter or digit (so never ".", "..", "-x"). */
bool vn_guest_name_valid(const char *name);

/* 0, or VN_ERR_INPUT: "bad guest name '...': <the rule>". */
int vn_guest_name_check(const char *name, struct vn_error *err);
