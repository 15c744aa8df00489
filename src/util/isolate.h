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

#include "util/error.h"

/* The work: its return value, *out (malloc'd text, may stay NULL) and *err cross back to the parent. */
typedef int (*vn_isolated_fn)(void *arg, char **out, struct vn_error *err);

/*
 * Fork, run fn(arg) in the child, wait for it. The parent should not have
 * started threads (libvirt's event loop): only the forking thread lives on in
 * the child. The child dies with the parent (PR_SET_PDEATHSIG SIGTERM, which
 * its interrupt handler turns into a clean stop); a signal that interrupts
 * the parent's wait is passed on to the child, and the parent waits for it
 * to finish. A child that dies without answering is an infrastructure error.
 */
int vn_isolate(vn_isolated_fn fn, void *arg, char **out, struct vn_error *err);

/*
 * The same in two halves, for several children at once (a matrix spread
 * over hosts): start forks and returns at once; job->fd becomes readable
 * when the child answers or dies, and finish then collects what vn_isolate
 * returns. Every started job must be finished.
 */
struct vn_isolate_job {
	int pid;
	int fd;
};
int vn_isolate_start(vn_isolated_fn fn, void *arg, struct vn_isolate_job *job, struct vn_error *err);
int vn_isolate_finish(struct vn_isolate_job *job, char **out, struct vn_error *err);
