/* Clocks, sleeping, and seeds for ig_rand_next(). */
#include "inguest/time.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>

static double clock_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double ig_now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

double ig_thread_cpu_time(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

void ig_sleep(double seconds)
{
	struct timespec ts;

	if (seconds <= 0)
		return;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

uint64_t ig_seed(uint64_t salt)
{
	struct timespec ts;
	uint64_t s;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ ((uint64_t)getpid() << 16) ^
	    (salt * 0x9E3779B97F4A7C15ULL);
	return s ? s : 0x1234567;
}

double ig_rate(double count, double seconds)
{
	return seconds > 0 ? count / seconds : 0;
}
