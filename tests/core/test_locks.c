// SPDX-License-Identifier: GPL-2.0
/*
 * test_locks.c - tests of lock assertions and lock order (fork-based death
 * tests).
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "dv_internal.h"	/* the functions that run under dev->lock */

/*
 * Run @call(@arg) in a child, which holds no lock: true when it died of
 * SIGABRT (os_mutex_assert_held()), false when it returned.
 */
static bool aborts_without_lock(void (*call)(void *arg), void *arg)
{
	int status = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, STDERR_FILENO);
		call(arg);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return false;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void reset_context(void *ctx)
{
	dv_context_reset_locked(ctx);
}

static void publish_sq(void *s)
{
	dv_sq_publish(s);
}

/* A NOP of no duration, which would complete at once if it ran. */
static void run_nop_alone(void *dev)
{
	struct dv_task t;

	memset(&t, 0, sizeof(t));
	t.desc.opcode = DAVINCI_OP_NOP;
	dv_exec_alone(dev, &t);
}

/* A take-in that queued nothing, which writes no record. */
static void trace_empty_take_in(void *arg)
{
	struct dv_stream *s = arg;

	dv_trace_tasks_queued(s, s->submitted_seq + 1);
}

/*
 * A function documented to run with a lock held asserts it: called
 * without the lock, it aborts (os_mutex_assert_held()), even on a path
 * that would not touch what the lock protects.
 */
void test_lock_assertions(void)
{
	struct dv_stream *core_stream;
	struct fixture fx;
	struct stream s;

	REQUIRE(fixture_init_stream(&fx, 0, &s) == 0);
	os_mutex_lock(fx.dev->lock);
	core_stream = dv_stream_find(fx.ctx, s.c.stream_id);
	os_mutex_unlock(fx.dev->lock);
	REQUIRE(core_stream);
	CHECK(aborts_without_lock(reset_context, fx.ctx));
	CHECK(aborts_without_lock(publish_sq, core_stream));
	CHECK(aborts_without_lock(run_nop_alone, fx.dev));
	CHECK(aborts_without_lock(trace_empty_take_in, core_stream));
	fixture_exit(&fx);
}

/*
 * The sanitizer build checks lock order (os_posix.c): the order os.h
 * documents passes, taking the registry lock inside a device lock aborts.
 * Every other test of that build runs under the same check.
 */
void test_lock_order(void)
{
#ifdef DV_LOCK_ORDER_CHECK
	struct os_mutex *reg = os_mutex_create(OS_LOCK_REGISTRY);
	struct os_mutex *dev = os_mutex_create(OS_LOCK_DEVICE);
	int status = 0;
	pid_t pid;

	REQUIRE(reg && dev);
	os_mutex_lock(reg);
	os_mutex_lock(dev);
	os_mutex_unlock(dev);
	os_mutex_unlock(reg);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, STDERR_FILENO);
		os_mutex_lock(dev);
		os_mutex_lock(reg);
		_exit(0);
	}
	REQUIRE(pid > 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	os_mutex_destroy(dev);
	os_mutex_destroy(reg);
#else
	printf("  (lock order is checked in the sanitizer build only)\n");
#endif
}
