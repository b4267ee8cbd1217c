// SPDX-License-Identifier: GPL-2.0
/*
 * test_locks.c - tests of lock assertions and lock order (fork-based death
 * tests).
 */
#define _GNU_SOURCE
#include "fixtures.h"

void dv_context_reset_locked(struct dv_context *ctx);

/*
 * A function documented to run with a lock held asserts it: called
 * without the lock, it aborts (os_mutex_assert_held()).
 */
void test_lock_assertions(void)
{
	struct fixture fx;
	int status = 0;
	pid_t pid;

	REQUIRE(fixture_init(&fx, 0) == 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, STDERR_FILENO);
		dv_context_reset_locked(fx.ctx);
		_exit(0);
	}
	REQUIRE(pid > 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
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
