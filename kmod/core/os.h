/* SPDX-License-Identifier: GPL-2.0 */
/*
 * os.h - the seam between the device core and the operating system.
 *
 * The core (everything in kmod/core/) is written once against this
 * interface. kmod/linux/os_linux.c implements it for the kernel module,
 * userspace/libdavinci_core/os_posix.c for the userspace library that the
 * FUSE daemon, the tests and the fuzzer run. Nothing else in the core may
 * include an OS header.
 *
 * As OpenZFS's zfs_context.h: the core includes "os_types.h" by that one
 * name, and each binding supplies its own on the include path (the basic
 * types u8..u64, s32, s64, bool, size_t, U64_MAX, the errno values,
 * memset/memcpy/memmove, __printf): kmod/linux/os_types.h for the kernel
 * (kmod/Kbuild), userspace/libdavinci_core/os_types.h for the userspace
 * library (the Makefile, setup.py). The core never names a binding's file.
 */
#ifndef _DAVINCI_OS_H
#define _DAVINCI_OS_H

#include "os_types.h"

#include "../include/uapi/davinci.h"

/* Memory for core objects. os_zalloc may sleep; NULL when out of memory. */
void *os_zalloc(size_t size);
/*
 * As os_zalloc, for memory a user makes the core allocate and can multiply
 * (contexts, streams, queued tasks, buffers, events): the kernel charges it
 * to the calling task's memory cgroup (GFP_KERNEL_ACCOUNT), so call it in
 * the context of the process on whose behalf it is made. Freed with
 * os_free().
 */
void *os_zalloc_account(size_t size);
void os_free(void *ptr);

/*
 * A cache of equal-sized objects the core allocates and frees at a high
 * rate (queued tasks): a kmem_cache in the kernel; in userspace a free
 * list, since malloc trims its heap after each burst of frees and the next
 * burst faults the pages in again. @name names it (slabinfo), unique per
 * device. os_cache_zalloc() charges the object to the caller's memory
 * cgroup when @account is set, as os_zalloc_account(); NULL when out of
 * memory. Every object goes back with os_cache_free() before
 * os_cache_destroy().
 */
struct os_cache;
struct os_cache *os_cache_create(const char *name, size_t size);
void os_cache_destroy(struct os_cache *c);
void *os_cache_zalloc(struct os_cache *c, bool account);
/* As os_cache_zalloc(), but only the first @zero bytes are zeroed. */
void *os_cache_alloc_head_zeroed(struct os_cache *c, bool account,
				 size_t zero);
void os_cache_free(struct os_cache *c, void *ptr);

/*
 * A sleeping lock. Its class names the lock's role so that a lock validator
 * (lockdep) tells nested locks of different roles apart: the registry lock
 * is taken before a device's, a device's before the event log's. The owners
 * lock (contexts per process and per user) is taken with no other lock
 * held and takes none.
 */
enum os_lock_class {
	OS_LOCK_REGISTRY,
	OS_LOCK_DEVICE,
	OS_LOCK_EVENTS,
	OS_LOCK_OWNERS,
	OS_LOCK_CLASSES,
};

struct os_mutex;
struct os_mutex *os_mutex_create(enum os_lock_class cls);
void os_mutex_destroy(struct os_mutex *m);
void os_mutex_lock(struct os_mutex *m);
void os_mutex_unlock(struct os_mutex *m);
/*
 * Assert that the calling thread holds @m: every function documented as
 * running with a lock held calls it. It checks where the binding's
 * os_types.h defines OS_LOCK_ASSERTS: lockdep_assert_held() in a kernel
 * with lockdep, an owner check in the userspace library's test and
 * sanitizer builds. Elsewhere it compiles to nothing, as
 * lockdep_assert_held() does without lockdep: it is called on every path
 * a task takes, several times a task.
 */
#ifdef OS_LOCK_ASSERTS
void os_mutex_assert_held(struct os_mutex *m);
#else
static inline void os_mutex_assert_held(struct os_mutex *m)
{
	(void)m;
}
#endif

/*
 * A wait queue used like a condition variable with an os_mutex: the waker
 * changes state and calls os_waitq_wake_all() with the mutex held; the
 * waiter calls os_waitq_wait() with the mutex held and re-checks its
 * condition in a loop.
 */
#define OS_NO_DEADLINE U64_MAX
struct os_waitq;
struct os_waitq *os_waitq_create(void);
void os_waitq_destroy(struct os_waitq *wq);
/*
 * Release @m, sleep until woken or until os_now_ns() >= @deadline_ns,
 * take @m again. Returns 0 when woken (perhaps spuriously), -ETIMEDOUT
 * past the deadline, -EINTR when the caller was interrupted: a signal is
 * pending (kernel), or the FUSE request being served was interrupted
 * (userspace, see libdavinci_core.h). An interrupted wait still sleeps a
 * short while, so loops that ignore -EINTR do not spin.
 */
int os_waitq_wait(struct os_waitq *wq, struct os_mutex *m, u64 deadline_ns);
void os_waitq_wake_all(struct os_waitq *wq);
/* Wake one sleeper of @wq (an idle worker: any of them will do). */
void os_waitq_wake_one(struct os_waitq *wq);

/*
 * Threads for the AI-core workers and the dispatcher. @fn runs until the core tells it to
 * return; os_thread_join() waits for that and frees the thread.
 */
struct os_thread;
struct os_thread *os_thread_start(int (*fn)(void *arg), void *arg,
				  const char *name);
void os_thread_join(struct os_thread *t);

/*
 * Copies between an ioctl's caller and the core. @uptr is the caller's
 * address: a user pointer in the kernel, plain memory in userspace.
 * Return 0, or -EFAULT when @uptr is not readable or writable.
 */
int os_copy_from_caller(void *dst, const void *uptr, size_t n);
int os_copy_to_caller(void *uptr, const void *src, size_t n);

/* Monotonic device clock in nanoseconds. */
u64 os_now_ns(void);

/* Bracket floating-point code (kernel_fpu_begin/end); keep sections short. */
void os_fpu_begin(void);
void os_fpu_end(void);
/*
 * SIMD levels of the op kernels: OS_SIMD_BASE is SSE2 on x86-64 and NEON
 * on arm64 (both always there); the others are x86-64 only. Every level
 * gives the same bits (NUMERICS.md), so this only changes the speed.
 */
enum os_simd_level {
	OS_SIMD_BASE,
	OS_SIMD_AVX2,
	OS_SIMD_AVX512,
	OS_SIMD_LEVELS,
};

/* The levels' names, and "auto" (no cap) at OS_SIMD_LEVELS: an initializer. */
#ifdef __aarch64__
#define OS_SIMD_BASE_NAME "neon"
#else
#define OS_SIMD_BASE_NAME "sse2"
#endif
#define OS_SIMD_NAMES { \
	[OS_SIMD_BASE] = OS_SIMD_BASE_NAME, \
	[OS_SIMD_AVX2] = "avx2", \
	[OS_SIMD_AVX512] = "avx512", \
	[OS_SIMD_LEVELS] = "auto", \
}

/*
 * The highest level this CPU (and the OS's saved FPU state) supports,
 * capped by the override: the module parameter simd in the kernel, the
 * environment variable DAVINCI_SIMD in userspace ("sse2", "neon", "avx2",
 * "avx512"; read at every call so tests can step through the levels).
 */
enum os_simd_level os_simd_level(void);

/*
 * os_fpu_scratch() - OS_FPU_SCRATCH_SIZE bytes, 64-byte aligned, of the
 * calling CPU (kernel) or thread (userspace), for an op kernel to pack
 * operands in. Valid only between os_fpu_begin() and os_fpu_end(), which
 * keep the caller on its CPU; never NULL.
 */
#define OS_FPU_SCRATCH_SIZE (384 * 1024)
void *os_fpu_scratch(void);

/* A point where a long task lets other work run (cond_resched). */
void os_yield(void);

/*
 * Another thread is ready to run on this CPU: a thread polling for work
 * should sleep rather than spin, as KVM's halt polling stops when
 * single_task_running() is false. The kernel checks its run queue;
 * userspace cannot ask cheaply and returns false (its os_yield() is
 * sched_yield(), which hands the CPU to such a thread anyway).
 */
bool os_cpu_wanted(void);

/*
 * An arena is a zeroed, page-aligned region of @size bytes that backs
 * device memory and can be mapped by clients. @dir, when not NULL, asks
 * the POSIX backend to back it with a file named @name there (the FUSE
 * daemon's clients map that file); the kernel ignores both.
 */
struct os_arena;
struct os_arena *os_arena_create(u64 size, const char *dir, const char *name);
void os_arena_destroy(struct os_arena *a);
void *os_arena_base(struct os_arena *a);
/* Path of the backing file, or NULL when clients map the device node. */
const char *os_arena_path(struct os_arena *a);

/* Diagnostics; the kernel prefixes "davinci: ". */
__printf(1, 2) void os_log_warn(const char *fmt, ...);

#endif /* _DAVINCI_OS_H */
