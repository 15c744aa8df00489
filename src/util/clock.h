/* Monotonic time, for deadlines and durations (never wall-clock time). */
#pragma once

#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds. */
int64_t vn_now_ms(void);

/* CLOCK_MONOTONIC in seconds, with nanosecond resolution. */
double vn_now_s(void);

#include <pthread.h>

/* A condition variable whose timed waits run on CLOCK_MONOTONIC. */
void vn_cond_init_monotonic(pthread_cond_t *cond);

/*
 * One wait on cond (initialized by vn_cond_init_monotonic, lock held) until
 * it is signalled, deadline_ms (vn_now_ms) passes, or 100 ms go by: a
 * signal does not wake a condition wait, so callers loop, checking
 * vn_was_interrupted() and the deadline between slices.
 */
void vn_cond_wait_slice(pthread_cond_t *cond, pthread_mutex_t *lock, int64_t deadline_ms);
