/*
 * A running guest's death, noticed without libvirt. `up` and `run`'s boot
 * hold the embedded driver only in a short-lived child, so while a scenario
 * runs nothing reacts to QEMU's SHUTDOWN event: libvirt 9.0 starts QEMU 7.2
 * with -no-shutdown (and sets `reboot=shutdown` over QMP for
 * <on_reboot>destroy), so a guest that powers off, resets or panics (panic=-1
 * resets) leaves QEMU paused in its "shutdown" state, its agent socket open
 * and silent, until the next process that opens the driver reconnects and
 * finishes the shutdown. libvirt's XML has no way to make QEMU exit by itself
 * (only the <qemu:commandline> passthrough could, a hand-built argument that
 * taints the domain; the <panic> device x86 guests have pauses it at the
 * panic instead, for vnuma dump: docs/debugging.md), and QEMU being paused
 * looks from outside like a quiet guest.
 * What does tell: the kernel's last words on the serial console, which reach
 * the log file (console-keep.c) even past its cap, and, for a QEMU that was killed or
 * crashed, its pid file under the embedded root.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/state.h"
#include "util/strbuf.h"
#include "virt/connect.h"
#include "virt/console.h"
#include "virt/virt-priv.h"

/*
 * The kernel prints these just before the machine goes (kernel/reboot.c,
 * drivers/tty/sysrq.c, kernel/panic.c). A panic is followed by its reset
 * (panic=-1), so the gravest marker wins. Only root in the guest can print
 * them on the console, and root there can as well power the guest off: a
 * forged line ends its own run and nothing else.
 */
static const struct {
	const char *text;
	enum vn_console_death death;
} markers[] = {
	{"Kernel panic - not syncing", VN_DEATH_PANIC}, {"reboot: Power down", VN_DEATH_POWEROFF},
	{"reboot: System halted", VN_DEATH_HALT},       {"reboot: Restarting system", VN_DEATH_REBOOT},
	{"sysrq: Resetting", VN_DEATH_REBOOT}, /* an emergency restart prints nothing else */
};

/* Longest marker, less one: what a scan keeps of the text before the new bytes, so none is split unseen. */
#define MARKER_OVERLAP 32

enum vn_console_death vn_console_death_scan(const char *s, size_t n, size_t *at)
{
	enum vn_console_death worst = VN_DEATH_NONE;

	for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]); i++) {
		size_t len = strlen(markers[i].text);
		const char *p = memmem(s, n, markers[i].text, len);

		if (p && markers[i].death > worst) {
			worst = markers[i].death;
			if (at)
				*at = (size_t)(p - s);
		}
	}
	return worst;
}

const char *vn_console_death_name(enum vn_console_death d)
{
	switch (d) {
	case VN_DEATH_POWEROFF: return "powered off";
	case VN_DEATH_REBOOT: return "rebooted (the domain ends on reboot)";
	case VN_DEATH_HALT: return "halted";
	case VN_DEATH_PANIC: return "panicked";
	case VN_DEATH_NONE: break;
	}
	return "is alive";
}

/* New console bytes read per check at most: a flooding guest is caught up with over a few checks. */
#define SCAN_MAX (1u << 20)

struct vn_virt_watch {
	char *name, *console_log;
	off_t off;            /* console bytes scanned so far */
	pid_t qemu;           /* 0: not watched */
	char *cmdline;        /* what QEMU's /proc/PID/cmdline holds: "guest=NAME," */
	bool dead;            /* once dead, every check says so again */
	struct vn_virt *conn; /* a remote guest's connection, borrowed: its loss is the host's death; or NULL */
	bool (*conn_alive)(struct vn_virt *);
	const char *conn_uri;
	char msg[1024]; /* why */
	char *tail;
};

/* Whether pid is still the QEMU of this guest (a pid reused by another process, or a zombie, is not). */
static bool qemu_alive(const struct vn_virt_watch *w)
{
	char path[64], buf[4096];

	if (kill(w->qemu, 0) < 0 && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)w->qemu);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return true; /* cannot tell: not evidence of death */
	/* -name guest=NAME,debug-threads=on comes early in libvirt's command line. */
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = '\0';
	return strstr(buf, w->cmdline) != NULL;
}

static void read_pidfile(struct vn_virt_watch *w, const char *state_dir)
{
	_cleanup_free_ char *path = vn_state_embed_pidfile(state_dir, w->name);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	int pid = 0;

	if (f && fscanf(f, "%d", &pid) == 1 && pid > 1) {
		w->qemu = (pid_t)pid;
		/* A pid file left from another life of the name: not this QEMU, so not watched. */
		if (!qemu_alive(w))
			w->qemu = 0;
	}
}

struct vn_virt_watch *vn_virt_watch_new(const char *state_dir, const char *name, const char *console_log)
{
	struct vn_virt_watch *w = vn_xcalloc(1, sizeof(*w));

	w->name = vn_xstrdup(name);
	w->console_log = vn_xstrdup(console_log);
	w->cmdline = vn_xasprintf("guest=%s,", name);
	/*
	 * A dead guest prints nothing more, so its last words are within the
	 * log's last read's worth: a long-lived guest's megabytes of console
	 * before that need no scan.
	 */
	struct stat sb;
	if (stat(console_log, &sb) == 0 && sb.st_size > (off_t)SCAN_MAX)
		w->off = sb.st_size - (off_t)SCAN_MAX;
	if (state_dir)
		read_pidfile(w, state_dir);
	return w;
}

void vn_virt_watch_free(struct vn_virt_watch *w)
{
	if (!w)
		return;
	vn_free_all(w->name, w->console_log, w->cmdline, w->tail, w);
}

/* The new part of the console (with a little before it): its gravest marker and that line. */
static enum vn_console_death scan_console(struct vn_virt_watch *w, char *line, size_t size)
{
	_cleanup_close_ int fd = open(w->console_log, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat sb;

	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))
		return VN_DEATH_NONE;
	if (sb.st_size < w->off)
		w->off = 0; /* truncated: a new boot's log */
	off_t from = w->off > MARKER_OVERLAP ? w->off - MARKER_OVERLAP : 0;
	size_t want = (size_t)(sb.st_size - from);
	if (want > SCAN_MAX + MARKER_OVERLAP)
		want = SCAN_MAX + MARKER_OVERLAP;
	if (!want)
		return VN_DEATH_NONE;
	_cleanup_free_ char *buf = vn_xmalloc(want + 1);
	ssize_t n = pread(fd, buf, want, from);
	if (n <= 0)
		return VN_DEATH_NONE;
	if (from + n > w->off)
		w->off = from + n;
	size_t at = 0;
	enum vn_console_death d = vn_console_death_scan(buf, (size_t)n, &at);
	if (d != VN_DEATH_NONE) {
		size_t len = strcspn(buf + at, "\r\n");
		vn_excerpt(buf + at, len, size - 4, line);
	}
	return d;
}

void vn_virt_watch_link(struct vn_virt_watch *w, struct vn_virt *v, bool (*alive)(struct vn_virt *), const char *uri)
{
	w->conn = v;
	w->conn_alive = alive;
	w->conn_uri = uri;
}

int vn_virt_watch_check(struct vn_virt_watch *w, struct vn_error *err)
{
	if (!w->dead) {
		char line[256] = "";
		enum vn_console_death d = scan_console(w, line, sizeof(line));

		if (d != VN_DEATH_NONE) {
			snprintf(w->msg, sizeof(w->msg), "guest %s %s (console: \"%s\")", w->name,
				 vn_console_death_name(d), line);
		} else if (w->qemu && !qemu_alive(w)) {
			snprintf(w->msg, sizeof(w->msg), "guest %s: its QEMU process (pid %d) ended", w->name,
				 (int)w->qemu);
		} else if (w->conn && !w->conn_alive(w->conn)) {
			snprintf(w->msg, sizeof(w->msg),
				 "guest %s: the connection to %s was lost (its host or its libvirtd went away)",
				 w->name, w->conn_uri);
		} else {
			return 0;
		}
		struct vn_error e = {0};
		w->dead = true;
		/* A moment for the console's last lines (a panic's trace follows its first line). */
		if (d == VN_DEATH_PANIC)
			usleep(200 * 1000);
		vn_console_log_tail(w->console_log, VN_CONSOLE_TAIL_LINES, &w->tail, &e);
		vn_error_clear(&e);
	}
	vn_infra_error(err, -EHOSTDOWN, "%s", w->msg);
	vn_console_failure_detail(err, w->tail, NULL);
	return -EHOSTDOWN;
}
