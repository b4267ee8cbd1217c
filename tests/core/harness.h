/* SPDX-License-Identifier: GPL-2.0 */
/*
 * harness.h - a tiny test harness: one line per test, a summary line
 * "N passed, N failed", non-zero exit on failure.
 */
#ifndef _DV_TEST_HARNESS_H
#define _DV_TEST_HARNESS_H

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Defined once, in the file with main(). */
extern int th_failures;		/* checks failed in the current test */
extern int th_passed, th_failed;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		th_failures++;						\
		fprintf(stdout, "  %s:%d: check failed: %s\n",		\
			__FILE__, __LINE__, #cond);			\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	if (_a != _b) {							\
		th_failures++;						\
		fprintf(stdout, "  %s:%d: %s == %lld, expected %s == %lld\n", \
			__FILE__, __LINE__, #a, _a, #b, _b);		\
	}								\
} while (0)

/* Stop the test when a precondition fails (to avoid cascades). */
#define REQUIRE(cond) do {						\
	if (!(cond)) {							\
		th_failures++;						\
		fprintf(stdout, "  %s:%d: required: %s\n",		\
			__FILE__, __LINE__, #cond);			\
		return;							\
	}								\
} while (0)

static inline double th_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void th_run(const char *name, void (*fn)(void),
			  const char *filter)
{
	double t0;

	if (filter && !strstr(name, filter))
		return;
	th_failures = 0;
	t0 = th_now();
	fn();
	if (th_failures) {
		th_failed++;
		printf("FAIL %s (%.2fs)\n", name, th_now() - t0);
	} else {
		th_passed++;
		printf("ok   %s (%.2fs)\n", name, th_now() - t0);
	}
	fflush(stdout);
}

#endif /* _DV_TEST_HARNESS_H */
