// SPDX-License-Identifier: GPL-2.0
/*
 * The core's OS seam (kmod/core/os.h) for the Linux kernel.
 */
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#ifdef CONFIG_ARM64
#include <asm/neon.h>
#else
#include <asm/fpu/api.h>
#endif

#include "dv_linux.h"

void *os_zalloc(size_t size)
{
	return kvzalloc(size, GFP_KERNEL);
}

/* Charged to the caller's memory cgroup: the user who makes us allocate. */
void *os_zalloc_account(size_t size)
{
	return kvzalloc(size, GFP_KERNEL_ACCOUNT);
}

void os_free(void *ptr)
{
	kvfree(ptr);
}

struct os_cache *os_cache_create(const char *name, size_t size)
{
	return (struct os_cache *)kmem_cache_create(name, size, 0, 0, NULL);
}

void os_cache_destroy(struct os_cache *c)
{
	kmem_cache_destroy((struct kmem_cache *)c);
}

void *os_cache_zalloc(struct os_cache *c, bool account)
{
	return kmem_cache_zalloc((struct kmem_cache *)c,
				 account ? GFP_KERNEL_ACCOUNT : GFP_KERNEL);
}

void *os_cache_alloc_head_zeroed(struct os_cache *c, bool account,
				 size_t zero)
{
	struct kmem_cache *k = (struct kmem_cache *)c;
	void *p = kmem_cache_alloc(k, account ? GFP_KERNEL_ACCOUNT :
					       GFP_KERNEL);

	if (p)
		memset(p, 0, min_t(size_t, zero, kmem_cache_size(k)));
	return p;
}

void os_cache_free(struct os_cache *c, void *ptr)
{
	kmem_cache_free((struct kmem_cache *)c, ptr);
}

/*
 * A lock of the core as a kernel mutex, with the lockdep class of its
 * enum os_lock_class. What each one protects is said where the core
 * declares it: dev->lock (dv_internal.h), dv_reg_lock and dv_ev_lock
 * (manager.c), dv_owners_lock (context.c).
 */
struct os_mutex {
	struct mutex lock;
};

static struct lock_class_key os_lock_keys[OS_LOCK_CLASSES];
static const char * const os_lock_names[OS_LOCK_CLASSES] = {
	[OS_LOCK_REGISTRY] = "davinci_registry",
	[OS_LOCK_DEVICE] = "davinci_device",
	[OS_LOCK_EVENTS] = "davinci_events",
	[OS_LOCK_OWNERS] = "davinci_owners",
};

struct os_mutex *os_mutex_create(enum os_lock_class cls)
{
	struct os_mutex *m = kzalloc(sizeof(*m), GFP_KERNEL);

	if (m)
		__mutex_init(&m->lock, os_lock_names[cls], &os_lock_keys[cls]);
	return m;
}

void os_mutex_destroy(struct os_mutex *m)
{
	if (!m)
		return;
	mutex_destroy(&m->lock);
	kfree(m);
}

void os_mutex_lock(struct os_mutex *m)
{
	mutex_lock(&m->lock);
}

void os_mutex_unlock(struct os_mutex *m)
{
	mutex_unlock(&m->lock);
}

#ifdef OS_LOCK_ASSERTS
void os_mutex_assert_held(struct os_mutex *m)
{
	lockdep_assert_held(&m->lock);
}
#endif

struct os_waitq {
	wait_queue_head_t head;
};

struct os_waitq *os_waitq_create(void)
{
	struct os_waitq *wq = kzalloc(sizeof(*wq), GFP_KERNEL);

	if (wq)
		init_waitqueue_head(&wq->head);
	return wq;
}

void os_waitq_destroy(struct os_waitq *wq)
{
	kfree(wq);
}

wait_queue_head_t *os_waitq_head(struct os_waitq *wq)
{
	return &wq->head;
}

/*
 * The waker changes state and wakes with @m held, and we queue ourselves
 * before dropping @m, so no wakeup is lost between the caller's check of
 * its condition and the sleep.
 *
 * With a signal already pending (a process killed while its file is being
 * released, say) an interruptible sleep would return at once and a caller
 * that waits in a loop for a worker would spin holding @m. Then we sleep
 * uninterruptibly (TASK_IDLE: no load, no hung-task report) until woken or
 * for at most DV_SIGNAL_NAP, with @m released, and report -EINTR: callers
 * that give up on it return promptly, callers that must wait still sleep.
 */
#define DV_SIGNAL_NAP_MS 10

int os_waitq_wait(struct os_waitq *wq, struct os_mutex *m, u64 deadline_ns)
{
	long timeout = MAX_SCHEDULE_TIMEOUT;
	bool pending = signal_pending(current);
	DEFINE_WAIT(wait);
	int ret = 0;

	if (deadline_ns != OS_NO_DEADLINE) {
		u64 now = ktime_get_ns();
		u64 left;

		if (now >= deadline_ns)
			return -ETIMEDOUT;
		left = deadline_ns - now;
		/* Round up so that we never wake before the deadline. */
		if (left >= (u64)jiffies_to_nsecs(MAX_SCHEDULE_TIMEOUT - 2))
			timeout = MAX_SCHEDULE_TIMEOUT - 1;
		else
			timeout = nsecs_to_jiffies(left) + 1;
	}
	if (pending)
		timeout = min_t(long, timeout,
				msecs_to_jiffies(DV_SIGNAL_NAP_MS) + 1);

	/* Exclusive, so that os_waitq_wake_one() wakes just one of us. */
	prepare_to_wait_exclusive(&wq->head, &wait,
				  pending ? TASK_IDLE : TASK_INTERRUPTIBLE);
	mutex_unlock(&m->lock);
	timeout = schedule_timeout(timeout);
	finish_wait(&wq->head, &wait);
	mutex_lock(&m->lock);
	if (signal_pending(current))
		ret = -EINTR;
	else if (!timeout && deadline_ns != OS_NO_DEADLINE &&
		 ktime_get_ns() >= deadline_ns)
		ret = -ETIMEDOUT;
	return ret;
}

void os_waitq_wake_all(struct os_waitq *wq)
{
	wake_up_all(&wq->head);
}

void os_waitq_wake_one(struct os_waitq *wq)
{
	wake_up(&wq->head);
}

struct os_thread {
	struct task_struct *task;
};

struct os_thread *os_thread_start(int (*fn)(void *arg), void *arg,
				  const char *name)
{
	struct os_thread *t = kzalloc(sizeof(*t), GFP_KERNEL);
	struct task_struct *task;

	if (!t)
		return NULL;
	task = kthread_create(fn, arg, "%s", name);
	if (IS_ERR(task)) {
		kfree(t);
		return NULL;
	}
	get_task_struct(task);
	t->task = task;
	wake_up_process(task);
	return t;
}

/* The core has told the worker to return; wait for that and reap it. */
void os_thread_join(struct os_thread *t)
{
	if (!t)
		return;
	kthread_stop(t->task);
	put_task_struct(t->task);
	kfree(t);
}

int os_copy_from_caller(void *dst, const void *uptr, size_t n)
{
	return copy_from_user(dst, (const void __user __force *)uptr, n) ?
		-EFAULT : 0;
}

int os_copy_to_caller(void *uptr, const void *src, size_t n)
{
	return copy_to_user((void __user __force *)uptr, src, n) ? -EFAULT : 0;
}

u64 os_now_ns(void)
{
	return ktime_get_ns();
}

/* The op kernels' FP/SIMD registers: SSE on x86, NEON on arm64. */
void os_fpu_begin(void)
{
#ifdef CONFIG_ARM64
	kernel_neon_begin();
#else
	kernel_fpu_begin();
#endif
}

void os_fpu_end(void)
{
#ifdef CONFIG_ARM64
	kernel_neon_end();
#else
	kernel_fpu_end();
#endif
}

void os_yield(void)
{
	cond_resched();
}

bool os_cpu_wanted(void)
{
	return !single_task_running() || need_resched();
}

struct os_arena {
	void *base;
	u64 size;
};

struct os_arena *os_arena_create(u64 size, const char *dir, const char *name)
{
	struct os_arena *a;

	if (!size || size > SIZE_MAX - PAGE_SIZE)
		return NULL;
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return NULL;
	/* Zeroed, page aligned, and marked as mappable to userspace. */
	a->base = vmalloc_user(size);
	if (!a->base) {
		kfree(a);
		return NULL;
	}
	a->size = size;
	return a;
}

void os_arena_destroy(struct os_arena *a)
{
	if (!a)
		return;
	vfree(a->base);
	kfree(a);
}

void *os_arena_base(struct os_arena *a)
{
	return a->base;
}

const char *os_arena_path(struct os_arena *a)
{
	return NULL;
}

void os_log_warn(const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_warn("davinci: %pV", &vaf);
	va_end(args);
}
