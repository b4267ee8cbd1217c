// SPDX-License-Identifier: GPL-2.0
/*
 * stats.c - the core's own accounting (dv_core_stats).
 *
 * Every allocation the core makes goes through dv_zalloc()/dv_free(), so
 * the 'objects' counter returns to zero once everything is destroyed.
 */
#include "dv_internal.h"

static u64 dv_objects;
static u64 dv_counters[DV_STAT_COUNT];

/* Count @p, a new core object or NULL, in dv_objects; return it. */
static void *dv_counted(void *p)
{
	if (p)
		__atomic_add_fetch(&dv_objects, 1, __ATOMIC_RELAXED);
	return p;
}

/* Uncount @ptr, a core object about to be freed: false when NULL. */
static bool dv_uncount(const void *ptr)
{
	if (ptr)
		__atomic_sub_fetch(&dv_objects, 1, __ATOMIC_RELAXED);
	return ptr;
}

/**
 * dv_zalloc() - allocate zeroed memory for a core object
 * @size: bytes
 *
 * Return: the memory, or NULL when out of memory.
 */
void *dv_zalloc(size_t size)
{
	return dv_counted(os_zalloc(size));
}

/**
 * dv_zalloc_account() - dv_zalloc() charged to the caller's memory cgroup
 * @size: bytes
 *
 * For memory a user makes the core allocate and can multiply: contexts,
 * streams, queued tasks, buffers, events, id tables. Call it in the
 * context of the process it is allocated for (an ioctl or open), never in
 * an AI-core worker.
 *
 * Return: the memory, or NULL when out of memory.
 */
void *dv_zalloc_account(size_t size)
{
	return dv_counted(os_zalloc_account(size));
}

/**
 * dv_cache_zalloc() - dv_zalloc() of one object from an os_cache
 * @c: the cache
 * @account: charge it to the caller, as dv_zalloc_account()
 *
 * Return: the object, or NULL when out of memory.
 */
void *dv_cache_zalloc(struct os_cache *c, bool account)
{
	return dv_counted(os_cache_zalloc(c, account));
}

/**
 * dv_task_alloc() - a task object from the device's cache
 * @dev: the device
 * @account: charge it to the caller's memory cgroup
 *
 * Every field is zero but the parameter block copy, which
 * dv_task_resolve() fills for an op that has one: zeroing its 256 bytes
 * for every task cost a few percent of a stream of NOPs.
 *
 * Return: the task, or NULL when out of memory.
 */
struct dv_task *dv_task_alloc(struct dv_device *dev, bool account)
{
	return dv_counted(os_cache_alloc_head_zeroed(
		dev->task_cache, account, offsetof(struct dv_task, params)));
}

/**
 * dv_cache_free() - give an object from dv_cache_zalloc() back
 * @c: its cache
 * @ptr: the object, or NULL
 */
void dv_cache_free(struct os_cache *c, void *ptr)
{
	if (dv_uncount(ptr))
		os_cache_free(c, ptr);
}

/**
 * dv_free() - free memory from dv_zalloc() or dv_zalloc_account()
 * @ptr: the memory, or NULL
 */
void dv_free(void *ptr)
{
	if (dv_uncount(ptr))
		os_free(ptr);
}

/**
 * dv_stat_add() - adjust one counter of dv_core_stats()
 * @s: the counter
 * @delta: signed change
 */
void dv_stat_add(enum dv_stat s, s64 delta)
{
	__atomic_add_fetch(&dv_counters[s], (u64)delta, __ATOMIC_RELAXED);
}

static u64 dv_stat_read(const u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/**
 * dv_core_stats() - snapshot of the core's accounting, all devices
 * @out: filled in
 */
void dv_core_stats(struct dv_stats *out)
{
	out->objects = dv_stat_read(&dv_objects);
	out->devices = dv_stat_read(&dv_counters[DV_STAT_DEVICES]);
	out->contexts = dv_stat_read(&dv_counters[DV_STAT_CONTEXTS]);
	out->buffers = dv_stat_read(&dv_counters[DV_STAT_BUFFERS]);
	out->streams = dv_stat_read(&dv_counters[DV_STAT_STREAMS]);
	out->events = dv_stat_read(&dv_counters[DV_STAT_EVENTS]);
	out->tasks = dv_stat_read(&dv_counters[DV_STAT_TASKS]);
	out->mappings = dv_stat_read(&dv_counters[DV_STAT_MAPPINGS]);
	out->hbm_used = dv_stat_read(&dv_counters[DV_STAT_HBM_USED]);
	out->host_used = dv_stat_read(&dv_counters[DV_STAT_HOST_USED]);
}
