/* The one progress printer of the CLI: kernel builds, whether asked for or on first use. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli/progress.h"
#include "testbed/up.h"

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void vn_cli_progress_init(struct vn_cli_progress *p)
{
	struct winsize ws;

	memset(p, 0, sizeof(*p));
	p->tty = isatty(STDERR_FILENO);
	p->t0 = mono();
	p->width = 100;
	snprintf(p->what, sizeof(p->what), "kernel");
	if (p->tty && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		p->width = ws.ws_col;
}

double vn_cli_progress_elapsed(const struct vn_cli_progress *p)
{
	return mono() - p->t0;
}

/* On a TTY one status line, rewritten; elsewhere one line per stage, so logs stay short. */
void vn_cli_progress(void *data, const char *stage, const char *line)
{
	struct vn_cli_progress *p = data;
	int t = (int)(mono() - p->t0);

	p->used = true;
	if (!p->tty) {
		if (strcmp(p->stage, stage) != 0)
			fprintf(stderr, "%s: %s%s%s\n", p->what, stage, line ? ": " : "",
				line && strlen(line) < 120 ? line : "");
		snprintf(p->stage, sizeof(p->stage), "%s", stage);
		return;
	}
	snprintf(p->stage, sizeof(p->stage), "%s", stage);
	int room = p->width - 16 - (int)strlen(stage);
	if (room < 10)
		room = 10;
	while (line && (*line == ' ' || *line == '\t'))
		line++;
	fprintf(stderr, "\r\033[K[%02d:%02d] %s%s%.*s", t / 60, t % 60, stage, line ? ": " : "", room,
		line ? line : "");
	fflush(stderr);
}

/* Boot stages: the same status line on a TTY; a "note" is a line of its own that stays. */
void vn_cli_boot_progress(void *data, const char *stage, const char *detail)
{
	struct vn_cli_progress *p = data;
	int t = (int)(mono() - p->t0);
	bool note = strcmp(stage, "note") == 0;

	if (!p->tty || note) {
		if (p->tty && p->used)
			fprintf(stderr, "\r\033[K");
		if (note)
			fprintf(stderr, "%s\n", detail ? detail : "");
		else
			/* The run's own stages come through here too. */
			fprintf(stderr, "%s: %s%s%s\n",
				strcmp(stage, "step") == 0 || strcmp(stage, "hotplug") == 0 ||
						strcmp(stage, "collecting") == 0
					? "run"
					: "boot",
				stage, detail && *detail ? ": " : "", detail ? detail : "");
		p->used = p->used && !note;
		return;
	}
	p->used = true;
	int room = p->width - 16 - (int)strlen(stage) - (int)strlen(p->prefix);
	fprintf(stderr, "\r\033[K[%02d:%02d] %s%s%s%.*s", t / 60, t % 60, p->prefix, stage,
		detail && *detail ? ": " : "", room < 10 ? 10 : room, detail ? detail : "");
	fflush(stderr);
}

/* p->used may be stale: the boot reports from a child process (util/isolate.h), so clear regardless. */
void vn_cli_progress_done(struct vn_cli_progress *p)
{
	if (p->tty)
		fprintf(stderr, "\r\033[K");
}

struct vn_up_progress vn_cli_progress_up(struct vn_cli_progress *p)
{
	return (struct vn_up_progress){.build = vn_cli_progress, .stage = vn_cli_boot_progress, .data = p};
}
