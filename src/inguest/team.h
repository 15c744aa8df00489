/* Teams of forked worker processes started together (team.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ig_json;

/*
 * The parent forks n workers; each prepares (allocates, touches), calls
 * ig_team_ready() and blocks until the parent calls ig_team_go(), so all
 * start their measured phase together. The pidfile (if any) is written
 * once every worker is ready.
 */
struct ig_team {
	int n;
	pid_t *pids;
	int ready[2], go[2];
};
/*
 * The head of every team worker's result, the first member of the
 * workload's own result struct: the pid, filled in by the team; what the
 * worker did, in the workload's unit (transactions, random writes, measured
 * iterations), and the seconds it did it in, filled in by the worker.
 */
struct ig_worker {
	pid_t pid;
	uint64_t ops;
	double elapsed;
};
void ig_team_init(struct ig_team *t, int n);
/* Forks worker i; returns 0 in the child (which must end with _exit). */
pid_t ig_team_fork(struct ig_team *t, int i);
/* In the worker: report ready and wait for the start signal. */
void ig_team_ready(struct ig_team *t);
/* In the parent: wait until all are ready (dies with exit 3 if one exits first), write pidfile, start them. */
void ig_team_go(struct ig_team *t, const char *pidfile);
/* In the parent: reap all; returns the number of workers that failed (message on stderr). */
int ig_team_wait(struct ig_team *t);
/*
 * All of the above: forks n workers, worker i running
 * worker(team, i, ctx, results + i * result_size) (it calls ig_team_ready()
 * once prepared and ends with _exit; results is shared memory from
 * ig_map_shared(), each result beginning with its struct ig_worker, whose
 * pid is set here), starts them together, reaps them. Returns the seconds
 * from the start until the last one was reaped; *failed is how many failed.
 */
double ig_team_run(int n, const char *pidfile, void (*worker)(struct ig_team *t, int i, const void *ctx, void *result),
		   const void *ctx, void *results, size_t result_size, int *failed);
/*
 * ig_team_run for a workload's main(): maps the n results itself and returns
 * them, *elapsed gets the seconds. A failed worker ends the program (exit 3,
 * "F of n NOUN failed", then hint if not NULL).
 */
void *ig_team_run_all(int n, const char *pidfile,
		      void (*worker)(struct ig_team *t, int i, const void *ctx, void *result), const void *ctx,
		      size_t result_size, const char *noun, const char *hint, double *elapsed);

/* Over n results of result_size bytes, each beginning with its struct ig_worker. */
struct ig_team_totals {
	uint64_t ops;     /* summed */
	double ops_per_s; /* each worker's own rate, summed: the team's throughput */
};
struct ig_team_totals ig_team_totals(const void *results, int n, size_t result_size);
/* "pid", "ops", "elapsed_s", "ops_per_s": a worker's head as members of its object. */
void ig_json_worker(struct ig_json *j, const struct ig_worker *w);
