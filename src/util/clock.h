/* Monotonic time, for deadlines and durations (never wall-clock time). */
#pragma once

#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds. */
int64_t vn_now_ms(void);

/* CLOCK_MONOTONIC in seconds, with nanosecond resolution. */
double vn_now_s(void);
