/*
 * A guest's serial console: what its log shows (a kernel, a death), the
 * interactive attach, and the watch that notices a running guest die.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct vn_virt;
struct vn_virt_domain;

/* True once a console log shows a running kernel (its banner, a timestamped line, or our init's markers). */
bool vn_console_shows_kernel(const char *s, size_t n);
/* The same for a console log file (its first 64 KiB). */
bool vn_console_log_shows_kernel(const char *path);

/*
 * Interactive console: forward in_fd -> guest serial console -> out_fd until
 * the escape byte (0x1d, Ctrl-], is what `vnuma shell` passes) or the console
 * closes (guest gone). in_fd is put in raw mode if it is a terminal and
 * restored on every way out. EOF on in_fd stops input only; output keeps
 * flowing until the console closes, so a script can be piped in.
 */
#define VN_CONSOLE_ESCAPE 0x1d
int vn_virt_console_attach(struct vn_virt_domain *d, int in_fd, int out_fd, char escape, struct vn_error *err);

/*
 * At most this much of a guest's serial console reaches its local log:
 * through libvirt's stream (virDomainOpenConsole) for a guest on another
 * host, whose <log file=> would be on that host, or through the console
 * keeper that drains QEMU's FIFO for a local one. The last line of it says
 * the log is full; after it, only the kernel's last words.
 */
#define VN_CONSOLE_LOG_MAX (UINT64_C(64) << 20)

/* err->detail for a failed boot: the console tail (may be NULL) and where its logs were kept (may be NULL). */
void vn_console_failure_detail(struct vn_error *err, const char *tail, const char *kept);

/* How many console lines a boot failure shows. */
#define VN_CONSOLE_TAIL_LINES 20
/* Last nlines lines of a console log (for error details); "" if it is missing. */
int vn_console_log_tail(const char *path, unsigned nlines, char **out, struct vn_error *err);

/*
 * How a console says its guest died: the kernel's last line before the
 * machine went (a panic, then its reset under panic=-1, is a panic).
 */
enum vn_console_death { VN_DEATH_NONE, VN_DEATH_REBOOT, VN_DEATH_HALT, VN_DEATH_POWEROFF, VN_DEATH_PANIC };
/* The gravest death s[0..n) shows; *at (optional) gets where its marker starts. */
enum vn_console_death vn_console_death_scan(const char *s, size_t n, size_t *at);
/* "powered off", "panicked", ... */
const char *vn_console_death_name(enum vn_console_death d);

/*
 * A running guest's death, noticed without a libvirt connection (watch.c
 * says why): new console lines are scanned for the kernel's last words and,
 * under the embedded driver (state_dir non-NULL), QEMU's pid from
 * STATE_DIR/libvirt/run/qemu/NAME.pid is checked. Cheap enough to call
 * every second.
 */
struct vn_virt_watch;
struct vn_virt_watch *vn_virt_watch_new(const char *state_dir, const char *name, const char *console_log);
/* 0 while nothing says the guest died; else -EHOSTDOWN (infra) naming it and the cause, the console tail in detail. */
int vn_virt_watch_check(struct vn_virt_watch *w, struct vn_error *err);
void vn_virt_watch_free(struct vn_virt_watch *w);
/* A guest on another host: the loss of its connection v (borrowed, outliving w) counts as its death too. */
void vn_virt_watch_connection(struct vn_virt_watch *w, struct vn_virt *v);
