/* Clocks and seeds (time.c). */
#pragma once

#include <stdint.h>

double ig_now(void);             /* CLOCK_MONOTONIC seconds */
double ig_thread_cpu_time(void); /* CLOCK_THREAD_CPUTIME_ID seconds */
void ig_sleep(double seconds);

static inline uint64_t ig_rand_next(uint64_t *s)
{
	/* xorshift64* */
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}
uint64_t ig_seed(uint64_t salt);
/* count / seconds, or 0 when no time passed (a worker that never ran). */
double ig_rate(double count, double seconds);
