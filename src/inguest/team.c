/* Forked worker processes that start their measured phase together. */
#include "inguest/buf.h"
#include "inguest/json.h"
#include "inguest/mem.h"
#include "inguest/prog.h"
#include "inguest/team.h"
#include "inguest/time.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void ig_team_init(struct ig_team *t, int n)
{
	memset(t, 0, sizeof(*t));
	t->n = n;
	t->pids = ig_xcalloc((size_t)n, sizeof(pid_t), "worker table");
	if (pipe2(t->ready, O_CLOEXEC) < 0 || pipe2(t->go, O_CLOEXEC) < 0)
		ig_die(IG_EXIT_ENV, errno, "pipe");
}

pid_t ig_team_fork(struct ig_team *t, int i)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		ig_die(IG_EXIT_ENV, errno, "fork of worker %d", i);
	if (pid == 0) {
		ig_child_setup();
		close(t->ready[0]);
		close(t->go[1]);
		return 0;
	}
	t->pids[i] = pid;
	return pid;
}

void ig_team_ready(struct ig_team *t)
{
	char c = 'r';
	ssize_t n;

	while ((n = write(t->ready[1], &c, 1)) < 0 && errno == EINTR)
		;
	while ((n = read(t->go[0], &c, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		_exit(1); /* parent gone */
}

void ig_team_go(struct ig_team *t, const char *pidfile)
{
	int got = 0;

	close(t->ready[1]);
	close(t->go[0]);
	while (got < t->n) {
		struct pollfd pfd = {.fd = t->ready[0], .events = POLLIN};
		int r = poll(&pfd, 1, 200);

		if (r < 0 && errno != EINTR)
			ig_die(IG_EXIT_ENV, errno, "poll");
		if (r > 0) {
			char buf[64];
			ssize_t k = read(t->ready[0], buf, sizeof(buf));
			if (k > 0)
				got += (int)k;
		}
		for (int i = 0; i < t->n; i++) {
			int st;
			if (t->pids[i] > 0 && waitpid(t->pids[i], &st, WNOHANG) == t->pids[i]) {
				t->pids[i] = -t->pids[i];
				for (int k = 0; k < t->n; k++)
					if (t->pids[k] > 0)
						kill(t->pids[k], SIGKILL);
				if (WIFEXITED(st))
					ig_die(WEXITSTATUS(st) ? WEXITSTATUS(st) : IG_EXIT_ENV, 0,
					       "worker %d (pid %d) exited with status %d before starting", i,
					       -t->pids[i], WEXITSTATUS(st));
				ig_die(IG_EXIT_ENV, 0, "worker %d (pid %d) killed by signal %d before starting", i,
				       -t->pids[i], WTERMSIG(st));
			}
		}
	}
	if (pidfile) {
		int r = ig_write_pidfile(pidfile, t->pids, (size_t)t->n);
		if (r < 0)
			fprintf(stderr, "%s: cannot write pidfile %s: %s\n", ig_prog, pidfile, strerror(-r));
	}
	char go[256];
	memset(go, 'g', sizeof(go));
	for (int left = t->n; left > 0;) {
		ssize_t k = write(t->go[1], go, left < 256 ? (size_t)left : 256);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		left -= (int)k;
	}
	close(t->go[1]);
}

int ig_team_wait(struct ig_team *t)
{
	int failed = 0;

	for (int i = 0; i < t->n; i++) {
		int st;
		pid_t pid = t->pids[i] > 0 ? t->pids[i] : -t->pids[i];

		while (waitpid(pid, &st, 0) < 0) {
			if (errno != EINTR) {
				st = -1;
				break;
			}
		}
		if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			failed++;
			if (st != -1 && WIFSIGNALED(st))
				fprintf(stderr, "%s: worker %d (pid %d) killed by signal %d (%s)\n", ig_prog, i,
					(int)pid, WTERMSIG(st), strsignal(WTERMSIG(st)));
			else
				fprintf(stderr, "%s: worker %d (pid %d) exited with status %d\n", ig_prog, i, (int)pid,
					st == -1 ? -1 : WEXITSTATUS(st));
		}
	}
	close(t->ready[0]);
	return failed;
}

double ig_team_run(int n, const char *pidfile, void (*worker)(struct ig_team *t, int i, const void *ctx, void *result),
		   const void *ctx, void *results, size_t result_size, int *failed)
{
	struct ig_team t;
	double t0;

	ig_team_init(&t, n);
	for (int i = 0; i < n; i++) {
		struct ig_worker *w = (struct ig_worker *)((char *)results + (size_t)i * result_size);
		pid_t pid = ig_team_fork(&t, i);

		if (pid == 0) {
			worker(&t, i, ctx, w);
			_exit(0);
		}
		w->pid = pid;
	}
	ig_team_go(&t, pidfile);
	t0 = ig_now();
	*failed = ig_team_wait(&t);
	free(t.pids);
	return ig_now() - t0;
}

void *ig_team_run_all(int n, const char *pidfile,
		      void (*worker)(struct ig_team *t, int i, const void *ctx, void *result), const void *ctx,
		      size_t result_size, const char *noun, const char *hint, double *elapsed)
{
	void *res = ig_map_shared(result_size * (size_t)n);
	int failed;

	*elapsed = ig_team_run(n, pidfile, worker, ctx, res, result_size, &failed);
	if (failed)
		ig_die(IG_EXIT_ENV, 0, "%d of %d %s failed%s", failed, n, noun, hint ? hint : "");
	return res;
}

struct ig_team_totals ig_team_totals(const void *results, int n, size_t result_size)
{
	struct ig_team_totals tot = {0};

	for (int i = 0; i < n; i++) {
		const struct ig_worker *w = (const struct ig_worker *)((const char *)results + (size_t)i * result_size);

		tot.ops += w->ops;
		tot.ops_per_s += ig_rate((double)w->ops, w->elapsed);
	}
	return tot;
}

void ig_json_worker(struct ig_json *j, const struct ig_worker *w)
{
	ig_json_int(j, "pid", w->pid);
	ig_json_uint(j, "ops", w->ops);
	ig_json_double(j, "elapsed_s", w->elapsed);
	ig_json_double(j, "ops_per_s", ig_rate((double)w->ops, w->elapsed));
}
