#include "util/clock.h"

#include <time.h>

int64_t vn_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void vn_cond_init_monotonic(pthread_cond_t *cond)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &ca);
	pthread_condattr_destroy(&ca);
}

void vn_cond_wait_slice(pthread_cond_t *cond, pthread_mutex_t *lock, int64_t deadline_ms)
{
	int64_t now = vn_now_ms();
	int64_t until = deadline_ms - now < 100 ? deadline_ms : now + 100;
	struct timespec ts;

	if (until <= now)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t ns = ts.tv_nsec + (until - now) * 1000000;
	ts.tv_sec += ns / 1000000000;
	ts.tv_nsec = ns % 1000000000;
	pthread_cond_timedwait(cond, lock, &ts);
}

double vn_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
