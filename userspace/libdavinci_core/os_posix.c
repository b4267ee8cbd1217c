// SPDX-License-Identifier: GPL-2.0
/*
 * os_posix.c - the os.h seam for userspace: pthreads, CLOCK_MONOTONIC,
 * arenas in anonymous or file-backed shared mappings.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(addr, size)	((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size)	((void)(addr), (void)(size))
#endif

#include "os.h"
#include "os_posix.h"
#include "dvc_test.h"

/* Fault injection for tests (dvc_test.h). */
long os_posix_fault_zalloc_countdown;

/* Is this allocation the one the test asked to fail? */
static bool os_posix_fault_now(void)
{
	long *countdown = &os_posix_fault_zalloc_countdown;

	return __atomic_load_n(countdown, __ATOMIC_RELAXED) > 0 &&
	       __atomic_sub_fetch(countdown, 1, __ATOMIC_RELAXED) == 0;
}

void *os_zalloc(size_t size)
{
	if (os_posix_fault_now())
		return NULL;
	return calloc(1, size ? size : 1);
}

/* No memory cgroup to charge in userspace: as os_zalloc(). */
void *os_zalloc_account(size_t size)
{
	return os_zalloc(size);
}

void os_free(void *ptr)
{
	free(ptr);
}

/* Freed objects an os_cache keeps at most (tasks in flight on a device). */
#define OS_CACHE_KEEP	4096

/*
 * @lock protects @free and @nfree: a stack of freed objects, linked
 * through their first bytes. The sanitizer build poisons them there, so
 * a use after os_cache_free() is still caught.
 */
struct os_cache {
	pthread_mutex_t lock;
	size_t size;
	void *free;
	size_t nfree;
};

struct os_cache *os_cache_create(const char *name, size_t size)
{
	struct os_cache *c = calloc(1, sizeof(*c));

	(void)name;
	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->size = size < sizeof(void *) ? sizeof(void *) : size;
	return c;
}

void os_cache_destroy(struct os_cache *c)
{
	if (!c)
		return;
	while (c->free) {
		void *p = c->free;

		ASAN_UNPOISON_MEMORY_REGION(p, c->size);
		c->free = *(void **)p;
		free(p);
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void *os_cache_alloc_head_zeroed(struct os_cache *c, bool account,
				 size_t zero)
{
	void *p;

	(void)account;
	if (os_posix_fault_now())	/* a cached object counts too */
		return NULL;
	pthread_mutex_lock(&c->lock);
	p = c->free;
	if (p) {
		ASAN_UNPOISON_MEMORY_REGION(p, c->size);
		c->free = *(void **)p;
		c->nfree--;
	}
	pthread_mutex_unlock(&c->lock);
	if (!p)
		return calloc(1, c->size);
	memset(p, 0, zero < c->size ? zero : c->size);
	return p;
}

void *os_cache_zalloc(struct os_cache *c, bool account)
{
	return os_cache_alloc_head_zeroed(c, account, c->size);
}

void os_cache_free(struct os_cache *c, void *ptr)
{
	if (!ptr)
		return;
	pthread_mutex_lock(&c->lock);
	if (c->nfree < OS_CACHE_KEEP) {
		*(void **)ptr = c->free;
		c->free = ptr;
		c->nfree++;
		ASAN_POISON_MEMORY_REGION(ptr, c->size);
		ptr = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	free(ptr);
}

/*
 * A lock of the core: @m is the mutex, and what each one protects is said
 * where the core declares it (dev->lock in dv_internal.h, dv_reg_lock and
 * dv_ev_lock in manager.c, dv_owners_lock in context.c). @owner and
 * @owned say which thread holds @m, for os_mutex_assert_held() where it
 * checks (OS_LOCK_ASSERTS): set by the holder, read atomically by any
 * thread. @cls is the class the lock order check (DV_LOCK_ORDER_CHECK)
 * goes by, set at creation.
 */
struct os_mutex {
	pthread_mutex_t m;
	enum os_lock_class cls;
	pthread_t owner;
	bool owned;
};

/* What the checks (lock order, OS_LOCK_ASSERTS) call each class. */
static const char * const os_lock_names[OS_LOCK_CLASSES]
	__attribute__((unused)) = {
	[OS_LOCK_REGISTRY] = "registry",
	[OS_LOCK_DEVICE] = "device",
	[OS_LOCK_EVENTS] = "events",
	[OS_LOCK_OWNERS] = "owners",
};

#ifdef DV_LOCK_ORDER_CHECK
/*
 * A small lockdep for the sanitizer builds: a thread may only take a lock
 * of a class greater than every class it holds (the order os.h documents),
 * so a nesting that could deadlock aborts on the first run that does it,
 * not on the unlucky run that deadlocks.
 */
static __thread unsigned int os_locks_held[OS_LOCK_CLASSES];

static void os_lock_order_acquire(enum os_lock_class cls)
{
	int held;

	for (held = cls; held < OS_LOCK_CLASSES; held++) {
		if (!os_locks_held[held])
			continue;
		fprintf(stderr, "davinci: lock order violation: taking a %s lock while holding a %s lock\n",
			os_lock_names[cls], os_lock_names[held]);
		abort();
	}
	os_locks_held[cls]++;
}

static void os_lock_order_release(enum os_lock_class cls)
{
	os_locks_held[cls]--;
}
#else
static inline void os_lock_order_acquire(enum os_lock_class cls
					 __attribute__((unused))) { }
static inline void os_lock_order_release(enum os_lock_class cls
					 __attribute__((unused))) { }
#endif

struct os_mutex *os_mutex_create(enum os_lock_class cls)
{
	struct os_mutex *m = calloc(1, sizeof(*m));

	if (m && pthread_mutex_init(&m->m, NULL)) {
		free(m);
		m = NULL;
	}
	if (m)
		m->cls = cls;
	return m;
}

void os_mutex_destroy(struct os_mutex *m)
{
	pthread_mutex_destroy(&m->m);
	free(m);
}

#ifdef OS_LOCK_ASSERTS
static void os_mutex_owned(struct os_mutex *m, bool owned)
{
	if (owned)
		__atomic_store_n(&m->owner, pthread_self(), __ATOMIC_RELAXED);
	__atomic_store_n(&m->owned, owned, __ATOMIC_RELAXED);
}

void os_mutex_assert_held(struct os_mutex *m)
{
	if (__atomic_load_n(&m->owned, __ATOMIC_RELAXED) &&
	    pthread_equal(__atomic_load_n(&m->owner, __ATOMIC_RELAXED),
			  pthread_self()))
		return;
	fprintf(stderr, "davinci: %s lock not held by this thread\n",
		os_lock_names[m->cls]);
	abort();
}
#else
static void os_mutex_owned(struct os_mutex *m, bool owned)
{
	(void)m;
	(void)owned;
}
#endif

void os_mutex_lock(struct os_mutex *m)
{
	os_lock_order_acquire(m->cls);
	pthread_mutex_lock(&m->m);
	os_mutex_owned(m, true);
}

void os_mutex_unlock(struct os_mutex *m)
{
	os_mutex_owned(m, false);
	pthread_mutex_unlock(&m->m);
	os_lock_order_release(m->cls);
}

/*
 * The FUSE daemon serves each request on a thread of its own; while it
 * serves one, the request's interrupted() is set here (see
 * dvc_ioctl_interruptible()), so that waits end when the caller was
 * interrupted (a signal, SIGKILL) instead of holding it in the kernel.
 */
static __thread int (*os_interrupted)(void);

void os_posix_set_interrupt_check(int (*interrupted)(void))
{
	os_interrupted = interrupted;
}

/* How often an interruptible wait looks at os_interrupted(). */
#define OS_INTERRUPT_POLL_NS	50000000ULL
/* How long an interrupted wait still sleeps (the kernel's signal nap). */
#define OS_INTERRUPT_NAP_NS	10000000ULL

struct os_waitq {
	pthread_cond_t c;
};

struct os_waitq *os_waitq_create(void)
{
	struct os_waitq *wq = calloc(1, sizeof(*wq));
	pthread_condattr_t attr;

	if (!wq)
		return NULL;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (pthread_cond_init(&wq->c, &attr)) {
		free(wq);
		wq = NULL;
	}
	pthread_condattr_destroy(&attr);
	return wq;
}

void os_waitq_destroy(struct os_waitq *wq)
{
	pthread_cond_destroy(&wq->c);
	free(wq);
}

int os_waitq_wait(struct os_waitq *wq, struct os_mutex *m, u64 deadline_ns)
{
	bool interrupted = os_interrupted && os_interrupted();
	u64 now = os_now_ns(), until = deadline_ns;
	struct timespec ts;

	if (deadline_ns != OS_NO_DEADLINE && now >= deadline_ns)
		return -ETIMEDOUT;
	if (os_interrupted) {
		u64 poll = now + (interrupted ? OS_INTERRUPT_NAP_NS :
				  OS_INTERRUPT_POLL_NS);

		if (poll < until)
			until = poll;
	}
	if (until == OS_NO_DEADLINE) {
		pthread_cond_wait(&wq->c, &m->m);
	} else {
		ts.tv_sec = (time_t)(until / 1000000000ULL);
		ts.tv_nsec = (long)(until % 1000000000ULL);
		pthread_cond_timedwait(&wq->c, &m->m, &ts);
	}
	os_mutex_owned(m, true);
	if (interrupted || (os_interrupted && os_interrupted()))
		return -EINTR;
	return os_now_ns() >= deadline_ns ? -ETIMEDOUT : 0;
}

void os_waitq_wake_all(struct os_waitq *wq)
{
	pthread_cond_broadcast(&wq->c);
}

unsigned long os_posix_wake_one_calls;

void os_waitq_wake_one(struct os_waitq *wq)
{
	__atomic_add_fetch(&os_posix_wake_one_calls, 1, __ATOMIC_RELAXED);
	pthread_cond_signal(&wq->c);
}

struct os_thread {
	pthread_t t;
	int (*fn)(void *arg);
	void *arg;
};

static void *os_thread_trampoline(void *p)
{
	struct os_thread *t = p;

	t->fn(t->arg);
	return NULL;
}

struct os_thread *os_thread_start(int (*fn)(void *arg), void *arg,
				  const char *name)
{
	struct os_thread *t = calloc(1, sizeof(*t));
	char buf[16];

	if (!t)
		return NULL;
	t->fn = fn;
	t->arg = arg;
	if (pthread_create(&t->t, NULL, os_thread_trampoline, t)) {
		free(t);
		return NULL;
	}
	if (name) {
		snprintf(buf, sizeof(buf), "%s", name);
		pthread_setname_np(t->t, buf);
	}
	return t;
}

void os_thread_join(struct os_thread *t)
{
	pthread_join(t->t, NULL);
	free(t);
}

/* ioctl arguments are plain memory; NULL is the only address known bad. */
int os_copy_from_caller(void *dst, const void *uptr, size_t n)
{
	if (!uptr)
		return -EFAULT;
	memcpy(dst, uptr, n);
	return 0;
}

int os_copy_to_caller(void *uptr, const void *src, size_t n)
{
	if (!uptr)
		return -EFAULT;
	memcpy(uptr, src, n);
	return 0;
}

u64 os_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

void os_fpu_begin(void)
{
}

void os_fpu_end(void)
{
}

void os_yield(void)
{
	sched_yield();
}

bool os_cpu_wanted(void)
{
	return false;
}

struct os_arena {
	void *base;
	u64 size;
	char *path;
};

struct os_arena *os_arena_create(u64 size, const char *dir, const char *name)
{
	struct os_arena *a = calloc(1, sizeof(*a));
	int fd;

	if (!a)
		return NULL;
	a->size = size;
	if (!dir) {
		a->base = mmap(NULL, size, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (a->base == MAP_FAILED)
			goto fail;
		return a;
	}
	if (asprintf(&a->path, "%s/%s", dir, name) < 0) {
		a->path = NULL;
		goto fail;
	}
	fd = open(a->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		goto fail;
	if (ftruncate(fd, (off_t)size)) {
		close(fd);
		unlink(a->path);
		goto fail;
	}
	a->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (a->base == MAP_FAILED) {
		unlink(a->path);
		goto fail;
	}
	return a;
fail:
	free(a->path);
	free(a);
	return NULL;
}

void os_arena_destroy(struct os_arena *a)
{
	munmap(a->base, a->size);
	if (a->path) {
		unlink(a->path);
		free(a->path);
	}
	free(a);
}

void *os_arena_base(struct os_arena *a)
{
	return a->base;
}

const char *os_arena_path(struct os_arena *a)
{
	return a->path;
}

void os_log_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("davinci: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}
