/*
 * Internals of the in-guest agent (vnuma-agent). One process, one poll()
 * loop: requests are handled as they arrive and long-running ones (exec,
 * later sample) keep state in the loop so their streamed messages interleave
 * with replies to other requests.
 */
#pragma once

#include <json-c/json.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/protocol.h"

/* Output waiting for the host; past this we stop reading children's pipes. */
#define VN_AGENT_OUT_HIGH (4u << 20)
/* Stdin queued for commands; past this we stop reading the host until they catch up. */
#define VN_AGENT_STDIN_HIGH (8u << 20)

struct vn_buf {
	char *s;
	size_t off, len, cap; /* live bytes are s[off..len) */
};

struct vn_job {
	bool used;
	int64_t id;
	pid_t pid;  /* also the process group */
	int out_fd; /* read ends of the child's stdout/stderr, -1 once at EOF */
	int err_fd;
	int in_fd;  /* write end of the child's stdin, -1 when closed */
	int pty_fd; /* with "tty": the pseudo-terminal's master (out_fd and in_fd are dups of it); else -1 */
	struct vn_buf in_queue;
	bool in_eof;         /* host sent eof: close in_fd once in_queue drains */
	int64_t deadline_ms; /* 0: none */
	double timeout_s;
	bool exited, timed_out;
	bool silent; /* host went away: reap, but report nothing */
	int status;
};

struct vn_agentd {
	int fd;              /* channel to the host; -1 while the port is not open */
	bool fd_mode;        /* --fd: a test socket, EOF means exit */
	const char *device;  /* --device override */
	char port_name[32];  /* device mode without --device: the virtio-serial port looked up */
	int64_t retry_at_ms; /* device mode: when to look at the port again */
	bool hung_up;        /* device mode: last read said no host is connected */
	struct vn_buf in, out;
	size_t in_scan;  /* bytes of the partial line in "in" already searched for '\n' */
	bool in_discard; /* dropping the rest of an overlong line */
	struct vn_job jobs[VN_AGENT_MAX_JOBS];
	int sigchld_rd, sigchld_wr;
	bool quit, poweroff;
	bool favoured; /* device mode: main.c's favour(); commands are put back as they were */
};

int64_t vn_agentd_now_ms(void);
void vn_agentd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void vn_buf_append(struct vn_buf *b, const void *p, size_t n);
void vn_buf_consume(struct vn_buf *b, size_t n);
void vn_buf_free(struct vn_buf *b);
/*
 * Writes what b holds to the non-blocking fd until it is drained or the fd
 * would block: 0. A failed write: -errno (-EPIPE for a write of 0), with the
 * unwritten rest kept in b.
 */
int vn_buf_flush(struct vn_buf *b, int fd);

/* Queue one message (consumes obj). */
void vn_agentd_send(struct vn_agentd *d, struct json_object *obj);
void vn_agentd_reply_error(struct vn_agentd *d, struct json_object *id, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
struct json_object *vn_agentd_reply_new(struct json_object *id, bool ok);

/* ops.c */
/* A request's non-empty string field, or NULL after replying EINVAL. */
const char *vn_agentd_get_path(struct vn_agentd *d, struct json_object *id, struct json_object *req, const char *key,
			       const char *op);
/* An optional integer field 0..max: 0 absent, 1 set, -1 after replying EINVAL. */
int vn_agentd_get_u64(struct vn_agentd *d, struct json_object *id, struct json_object *req, const char *key,
		      const char *op, uint64_t max, uint64_t *out);
/* The optional "mode" (420 or "0644"): 1 with *mode set, 0 absent. */
int vn_agentd_get_mode(struct json_object *req, mode_t *mode);
void vn_agentd_op_hello(struct vn_agentd *d, struct json_object *id, struct json_object *req);
void vn_agentd_op_read(struct vn_agentd *d, struct json_object *id, struct json_object *req);
void vn_agentd_op_write(struct vn_agentd *d, struct json_object *id, struct json_object *req);

/* fs.c: what vnuma cp needs beyond read and write */
void vn_agentd_op_stat(struct vn_agentd *d, struct json_object *id, struct json_object *req);
void vn_agentd_op_readdir(struct vn_agentd *d, struct json_object *id, struct json_object *req);
void vn_agentd_op_mkdir(struct vn_agentd *d, struct json_object *id, struct json_object *req);
void vn_agentd_op_chmod(struct vn_agentd *d, struct json_object *id, struct json_object *req);
void vn_agentd_op_rename(struct vn_agentd *d, struct json_object *id, struct json_object *req);
void vn_agentd_op_remove(struct vn_agentd *d, struct json_object *id, struct json_object *req);
void vn_agentd_op_wake(struct vn_agentd *d, struct json_object *id, struct json_object *req);

/* exec.c */
/* The command's side of favour(): the scheduler's and the OOM killer's defaults (a forked child, before exec). */
void vn_agentd_unfavour(void);
void vn_agentd_op_exec(struct vn_agentd *d, struct json_object *id, struct json_object *req);
void vn_agentd_op_stdin(struct vn_agentd *d, struct json_object *id, struct json_object *req);
void vn_agentd_op_resize(struct vn_agentd *d, struct json_object *id, struct json_object *req);
void vn_agentd_op_signal(struct vn_agentd *d, struct json_object *id, struct json_object *req);
/* Reap exited children (after SIGCHLD). */
void vn_agentd_jobs_reap(struct vn_agentd *d);
/* Kill every job's process group; with silent, their results are dropped too. */
void vn_agentd_jobs_kill_all(struct vn_agentd *d, bool silent);
/* poll() integration: add fds, then handle revents; returns the next deadline (0: none). */
size_t vn_agentd_jobs_pollfds(struct vn_agentd *d, struct pollfd *pfd, size_t max, int64_t *next_deadline);
void vn_agentd_jobs_handle(struct vn_agentd *d, const struct pollfd *pfd, size_t n);
bool vn_agentd_jobs_stdin_full(const struct vn_agentd *d);
