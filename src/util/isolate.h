/*
 * Running a piece of work in a child process of its own, for work whose
 * resources outlive it in the process that did it. libvirt's embedded driver
 * is the case: once a process has opened it, that process holds the state
 * dir's driver lock until it exits, closing the connection or not. A long
 * `vnuma run` (or a matrix of them) would shut every other vnuma out of the
 * state dir for hours; with its libvirt work done in short-lived children,
 * it holds the lock only while it boots or destroys a guest.
 */
#pragma once

#include <signal.h>
#include <stdint.h>

#include "util/error.h"

/* The work: its return value, *out (malloc'd text, may stay NULL) and *err cross back to the parent. */
typedef int (*vn_isolated_fn)(void *arg, char **out, struct vn_error *err);

/*
 * How long a child may take. Every child has a deadline: work that waits on
 * something outside (a libvirt host that accepts and never answers) must not
 * hang its caller, so past timeout_ms from its start the child is killed
 * (SIGKILL: a child stuck inside libvirt does not see its interrupt flag).
 * After a signal passed on to it, it has stop_ms to clean up and answer
 * before it is killed the same way.
 */
struct vn_isolate_limits {
	int timeout_ms; /* > 0 */
	int stop_ms;    /* 0: VN_ISOLATE_STOP_MS */
};
/* Short enough that Ctrl-C ends a command within 2 s, whatever its child is doing. */
#define VN_ISOLATE_STOP_MS 1500

/*
 * Fork, run fn(arg) in the child, wait for it within lim. The parent should
 * not have started threads (libvirt's event loop): only the forking thread
 * lives on in the child. The child dies with the parent (PR_SET_PDEATHSIG
 * SIGTERM, which its interrupt handler turns into a clean stop); a signal
 * that interrupts the parent's wait is passed on to the child. A child that
 * dies without answering is an infrastructure error; so is one killed at its
 * deadline (-ETIMEDOUT) or for not stopping after a signal (-EINTR).
 */
int vn_isolate(vn_isolated_fn fn, void *arg, const struct vn_isolate_limits *lim, char **out, struct vn_error *err);

/*
 * The same in two halves, for several children at once (a matrix spread
 * over hosts): start forks and returns at once; job->fd becomes readable
 * when the child answers or dies, and finish then collects what vn_isolate
 * returns. Whoever polls job->fd waits at most vn_isolate_wait_ms(job) and
 * then finishes the job anyway (finish kills a child past its time). Every
 * started job must be finished.
 */
struct vn_isolate_job {
	int pid;
	int fd;
	int timeout_ms, stop_ms;
	/* The limits as vn_now_ms() times: the deadline, and once a signal was passed on, the stop's (else 0). */
	int64_t deadline_ms, stop_at_ms;
	sig_atomic_t passed; /* the last signal passed on, or 0 */
};
int vn_isolate_start(vn_isolated_fn fn, void *arg, const struct vn_isolate_limits *lim, struct vn_isolate_job *job,
		     struct vn_error *err);
/*
 * Passes on to the child a signal that reached us since the last call (once
 * per signal), and says how long its parent may still wait for it: 0 when
 * its time is up.
 */
int vn_isolate_wait_ms(struct vn_isolate_job *job);
int vn_isolate_finish(struct vn_isolate_job *job, char **out, struct vn_error *err);
