/*
 * Errors travel up as a negative errno plus a struct vn_error that carries the
 * human-readable context; only the CLI prints them, once.
 */
#pragma once

#include <errno.h>
#include <stdarg.h>

/* What went wrong decides the exit code, so the kind is part of the error. */
enum vn_error_kind {
	VN_ERR_NONE = 0,
	VN_ERR_ASSERT = 1, /* the kernel misbehaved */
	VN_ERR_INPUT = 2,  /* bad file, bad argument */
	VN_ERR_INFRA = 3,  /* could not boot, libvirt error, timeout */
};

#define VN_ERROR_MSG_MAX 4096

struct vn_error {
	enum vn_error_kind kind;
	int code; /* negative errno */
	char msg[VN_ERROR_MSG_MAX];
	char *detail; /* optional multi-line context, e.g. a console log tail */
};

/* Fill err (if not NULL, and if not already set) and return -abs(code). */
int vn_error_set(struct vn_error *err, enum vn_error_kind kind, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Prefix an existing message with more context: "ctx: old message". */
int vn_error_prefix(struct vn_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Attach a detail block (copied). */
void vn_error_set_detail(struct vn_error *err, const char *detail);

void vn_error_clear(struct vn_error *err);

/* Shorthands: input errors carry FILE:LINE: in the message by convention. */
#define vn_input_error(err, ...)       vn_error_set((err), VN_ERR_INPUT, -EINVAL, __VA_ARGS__)
#define vn_infra_error(err, code, ...) vn_error_set((err), VN_ERR_INFRA, (code), __VA_ARGS__)
