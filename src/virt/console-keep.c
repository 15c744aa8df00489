/*
 * The console log's cap, for every guest. A guest on another host has its
 * console streamed into the log (stream.c); a local one has QEMU write its
 * serial console's <log> into a FIFO, drained into the log by the console
 * keeper: a process forked before the domain starts that lives as long as
 * QEMU holds the FIFO open. `up` holds the embedded driver only in a
 * short-lived child, so no process of ours with a libvirt stream lives as
 * long as a local guest does; and QEMU's own log file has no size limit.
 *
 * Both write through one sink: the log grows to its cap, ends with a line
 * saying so, and after that only the kernel's last words (watch.c's death
 * markers, each up to a line, a few of them) still reach it, so that the
 * death watch of a guest that flooded its console still works. The guest
 * itself never waits for the log: past the cap its output is read and dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/file.h"
#include "util/parse.h"
#include "virt/virt-priv.h"

/* The smallest cap $VNUMA_CONSOLE_LOG_MAX may ask for: the full line fits with room to spare. */
#define LOG_MAX_MIN (UINT64_C(4) << 10)
#define LOG_MAX_MAX (UINT64_C(1) << 30)

/* watch.c's longest marker, less one: what a scan keeps from before new bytes, so none is split unseen. */
#define CARRY VN_CONSOLE_SINK_CARRY

/* The keeper's pause between reads of a FIFO it emptied, and how much the FIFO holds meanwhile. */
#define KEEPER_NAP_NS (10 * 1000 * 1000)
#define FIFO_SIZE     (1 << 20)

/* How much of a death marker's line, and how many such lines, pass the cap. */
#define LATE_LINE_MAX  256
#define LATE_LINES_MAX 8

int vn_console_log_max(uint64_t *max, struct vn_error *err)
{
	const char *env = getenv("VNUMA_CONSOLE_LOG_MAX");

	*max = VN_CONSOLE_LOG_MAX;
	if (!env || !*env)
		return 0;
	if (vn_size_parse_range(env, LOG_MAX_MIN, LOG_MAX_MAX, max, err) < 0)
		return vn_error_prefix(err, "$VNUMA_CONSOLE_LOG_MAX");
	return 0;
}

void vn_console_sink_init(struct vn_console_sink *s, int fd, uint64_t max)
{
	char size[32];

	*s = (struct vn_console_sink){.fd = fd, .max = max};
	/* Nothing in it a death marker or vn_console_shows_kernel() would match. */
	s->full_len = (size_t)snprintf(s->full_line, sizeof(s->full_line),
				       "\r\n[vnuma: console log full at %s; the guest runs on, its console output "
				       "past here is dropped but for the kernel's last words]\r\n",
				       vn_size_format(max, size, sizeof(size)));
	s->budget = max > s->full_len ? max - s->full_len : 0;
}

/* Past the cap: the gravest death marker in what came (and the bytes before it), up to its line's end. */
static int sink_late(struct vn_console_sink *s, const char *buf, size_t n)
{
	char scan[CARRY + LATE_LINE_MAX];

	while (n) {
		size_t chunk = n < LATE_LINE_MAX ? n : LATE_LINE_MAX;
		size_t len = s->carry_len;
		memcpy(scan, s->carry, len);
		memcpy(scan + len, buf, chunk);
		len += chunk;
		size_t at = 0;
		if (s->late < LATE_LINES_MAX && vn_console_death_scan(scan, len, &at) != VN_DEATH_NONE) {
			size_t end = at;
			while (end < len && scan[end] != '\n' && scan[end] != '\r')
				end++;
			s->late++;
			if (vn_write_all(s->fd, scan + at, end - at) < 0 || vn_write_all(s->fd, "\r\n", 2) < 0)
				return -1;
			s->carry_len = 0; /* seen: not again from the carry */
		} else {
			size_t keep = len < CARRY ? len : CARRY;
			memmove(s->carry, scan + len - keep, keep);
			s->carry_len = keep;
		}
		buf += chunk;
		n -= chunk;
	}
	return 0;
}

int vn_console_sink_write(struct vn_console_sink *s, const char *buf, size_t n)
{
	if (!s->full) {
		size_t keep = s->logged + n <= s->budget ? n : (size_t)(s->budget - s->logged);
		if (keep && vn_write_all(s->fd, buf, keep) < 0)
			return -1;
		s->logged += keep;
		if (keep == n)
			return 0;
		s->full = true;
		if (vn_write_all(s->fd, s->full_line, s->full_len) < 0)
			return -1;
		buf += keep;
		n -= keep;
	}
	return sink_late(s, buf, n);
}

/*
 * The keeper's loop, in a child of a process with libvirt's threads: only
 * async-signal-safe calls from fork to _exit. The dummy writer keeps the
 * FIFO from reading as ended before QEMU opens it; it goes when ctl does
 * (the starter closed it, or exited), and then the FIFO ends with QEMU.
 */
static void __attribute__((noreturn)) keeper_run(int fifo, int dummy, int ctl, struct vn_console_sink *s)
{
	char buf[64 * 1024];
	bool sink_ok = true;

	for (;;) {
		struct pollfd p[2] = {{.fd = fifo, .events = POLLIN}, {.fd = ctl, .events = POLLIN}};
		if (poll(p, ctl >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (ctl >= 0 && p[1].revents) {
			close(ctl);
			close(dummy);
			ctl = dummy = -1;
		}
		if (!p[0].revents)
			continue;
		ssize_t n = read(fifo, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n == 0 && dummy >= 0)
			continue;
		if (n <= 0)
			_exit(0);
		/* A log that cannot be written (disk full) still has the FIFO drained: the guest never waits. */
		if (sink_ok && vn_console_sink_write(s, buf, (size_t)n) < 0)
			sink_ok = false;
		/*
		 * QEMU writes the serial console a byte at a time: woken for each,
		 * the keeper would cost the guest a context switch per byte. A
		 * short nap lets the FIFO gather them (its 1 MiB hold 10 ms of a
		 * 100 MB/s flood; the death watch and the KVM proof look at the
		 * log every few hundred ms).
		 */
		if ((size_t)n < sizeof(buf))
			nanosleep(&(struct timespec){.tv_nsec = KEEPER_NAP_NS}, NULL);
	}
}

/* In the child: fds to 3.. in the order given, 0-2 on /dev/null, nothing else open (not the embed root's lock). */
static void keeper_fds(int *fds, int n)
{
	int null = open("/dev/null", O_RDWR);

	/* Above every target first, so that no dup2 below lands on an fd still to be moved. */
	for (int i = 0; i < n; i++)
		fds[i] = fcntl(fds[i], F_DUPFD, 3 + n);
	for (int i = 0; i < 3 && null >= 0; i++)
		dup2(null, i);
	for (int i = 0; i < n; i++)
		fds[i] = dup2(fds[i], 3 + i);
	close_range((unsigned)(3 + n), ~0U, 0);
}

int vn_console_keeper_start(const char *fifo_path, const char *log_path, uint64_t max, bool keep, int *ctl_out,
			    struct vn_error *err)
{
	_cleanup_close_ int fifo = -1, dummy = -1, log = -1;
	int ctl[2];
	struct vn_console_sink sink;

	*ctl_out = -1;
	/* A new FIFO each time: a previous attempt's keeper may still drain the old one. */
	if ((unlink(fifo_path) < 0 && errno != ENOENT) || mkfifo(fifo_path, 0600) < 0)
		return vn_infra_error(err, -errno, "cannot make the console FIFO %s: %s", fifo_path, strerror(errno));
	fifo = open(fifo_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fifo >= 0)
		dummy = open(fifo_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fifo < 0 || dummy < 0)
		return vn_infra_error(err, -errno, "cannot open the console FIFO %s: %s", fifo_path, strerror(errno));
	/* Best effort: the default 64 KiB only makes QEMU wait sooner on a flood. */
	(void)fcntl(fifo, F_SETPIPE_SZ, FIFO_SIZE);
	log = open(log_path, O_WRONLY | O_CREAT | (keep ? 0 : O_TRUNC) | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (log < 0)
		return vn_infra_error(err, -errno, "cannot create %s: %s", log_path, strerror(errno));
	if (pipe2(ctl, O_CLOEXEC) < 0)
		return vn_infra_error(err, -errno, "pipe: %s", strerror(errno));
	vn_console_sink_init(&sink, log, max);
	/* A restored guest's log goes on from its boot's: what is there counts against the same cap. */
	struct stat sb;
	if (keep && fstat(log, &sb) == 0)
		sink.logged = (uint64_t)sb.st_size < sink.budget ? (uint64_t)sb.st_size : sink.budget;

	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(ctl[0]);
		close(ctl[1]);
		return vn_infra_error(err, -e, "cannot fork the console keeper: %s", strerror(e));
	}
	if (pid == 0) {
		/* A session of its own (no terminal's Ctrl-C), and a grandchild, so that nobody need reap it. */
		struct sigaction ign = {.sa_handler = SIG_IGN};
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		sigaction(SIGINT, &ign, NULL);
		sigaction(SIGHUP, &ign, NULL);
		setsid();
		if (fork() != 0)
			_exit(0);
		int fds[] = {fifo, dummy, ctl[0], log};
		close(ctl[1]);
		keeper_fds(fds, 4);
		sink.fd = fds[3];
		if (chdir("/") < 0)
			_exit(1);
		keeper_run(fds[0], fds[1], fds[2], &sink);
	}
	close(ctl[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	*ctl_out = ctl[1];
	return 0;
}
