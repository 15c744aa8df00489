/*
 * Parsers for what tracefs prints, as the guest's vnuma-trace forwards it:
 * an event's `format` file (events/SUBSYS/EVENT/format) and one line of
 * `trace_pipe`. Both come from a kernel under test through a guest we do
 * not trust, so every length is bounded and anything malformed is refused
 * with a message, never guessed at.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#define VN_TRACE_NAME_MAX   64          /* an event's or a field's name, NUL included */
#define VN_TRACE_TYPE_MAX   96          /* a field's C type as the format file writes it */
#define VN_TRACE_FIELDS_MAX 64          /* fields of one event, common_* ones not counted */
#define VN_TRACE_FORMAT_MAX (64u << 10) /* one format file */
#define VN_TRACE_LINE_MAX   4096        /* one trace_pipe line */
#define VN_TRACE_COMM_MAX   32          /* a task's comm as trace_pipe prints it ("<...>" too) */

struct vn_trace_field {
	char name[VN_TRACE_NAME_MAX];
	char type[VN_TRACE_TYPE_MAX]; /* "pid_t", "char[16]" (the brackets moved from the name), "__data_loc char[]" */
	unsigned offset, size;
	bool is_signed;
	bool numeric; /* a scalar integer (no array, no pointer, 1/2/4/8 bytes): a printed integer becomes a number */
	char printed
		[VN_TRACE_NAME_MAX]; /* the KEY of "KEY=%..." the print fmt prints it under ("nr_succeeded"); its name when none */
};

struct vn_trace_format {
	char name[VN_TRACE_NAME_MAX]; /* the event's name, as trace_pipe prints it */
	unsigned id;
	unsigned nfields;
	struct vn_trace_field fields[VN_TRACE_FIELDS_MAX]; /* in the file's order, without common_* */
};

/*
 * A format file (at most VN_TRACE_FORMAT_MAX bytes) into f: its "name:",
 * "ID:" and "field:" lines, and from its "print fmt:" the key each field is
 * printed under: the fmt's "KEY=%..." conversions are paired with its
 * arguments in order, and an argument naming REC->FIELD (plainly or inside
 * __print_symbolic(...) and the like) gives FIELD the KEY. A field the fmt
 * does not print that way keeps its own name as its key. Errors are
 * VN_ERR_INFRA naming the line ("line 7: ..."): the kernel's text is not the
 * user's input.
 */
int vn_trace_format_parse(const char *text, size_t len, struct vn_trace_format *f, struct vn_error *err);

struct vn_trace_event {
	unsigned format; /* index into the formats given */
	double ts;       /* the trace clock's seconds */
	unsigned cpu;
	int pid;
	char comm[VN_TRACE_COMM_MAX];
	struct json_object *fields; /* new object: the format's fields found in the printed text, typed */
};

/*
 * One trace_pipe line (no newline, at most VN_TRACE_LINE_MAX bytes, no NUL)
 * for one of the formats: "COMM-PID [CPU] FLAGS TS: EVENT: NAME=VALUE ...".
 * COMM may hold anything (spaces, brackets, dashes), so the header is read
 * backwards from the timestamp. Each format field printed as NAME=VALUE
 * (separated by spaces or commas) becomes a member of ev->fields: a number
 * when the field is numeric and the value an integer (decimal or 0x hex),
 * else the printed string (symbolic values such as mode=MIGRATE_ASYNC).
 * Returns 0, or -EBADMSG with err saying what was wrong.
 */
int vn_trace_line_parse(const char *line, size_t len, const struct vn_trace_format *formats, unsigned nformats,
			struct vn_trace_event *ev, struct vn_error *err);
