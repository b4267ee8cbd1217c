// SPDX-License-Identifier: GPL-2.0
/*
 * lib.c - libdavinci_core: the device core as a flat C API (ctypes).
 *
 * Built on the core's public entry points (dv_core.h) only. The shared
 * library exports the dvc_* functions of libdavinci_core.h and nothing
 * else (libdavinci_core.map).
 */
#include <errno.h>
#include <string.h>

#include "dv_core.h"
#include "libdavinci_core.h"
#include "os_posix.h"

/* @obj when @ret is 0; else NULL with errno set from the -errno @ret. */
static void *dvc_obj_or_errno(int ret, void *obj)
{
	if (ret) {
		errno = -ret;
		return NULL;
	}
	return obj;
}

struct dv_device *dvc_device_create(const struct dv_device_config *cfg)
{
	struct dv_device *dev = NULL;
	int ret = cfg ? dv_device_create(cfg, &dev) : -EINVAL;

	return dvc_obj_or_errno(ret, dev);
}

void dvc_device_destroy(struct dv_device *dev)
{
	if (dev)
		dv_device_destroy(dev);
}

void dvc_device_lost(struct dv_device *dev)
{
	if (dev)
		dv_device_lost(dev);
}

struct dv_context *dvc_context_open_as(struct dv_device *dev, uint32_t pid,
				       uint32_t uid)
{
	struct dv_context *ctx = NULL;
	int ret = dev ? dv_context_open(dev, pid, uid, &ctx) : -EINVAL;

	return dvc_obj_or_errno(ret, ctx);
}

struct dv_context *dvc_context_open(struct dv_device *dev, uint32_t pid)
{
	return dvc_context_open_as(dev, pid, DV_UID_NONE);
}

int dvc_set_limits(int64_t ctx_per_process, int64_t ctx_per_user)
{
	if (ctx_per_process > UINT32_MAX || ctx_per_user > UINT32_MAX ||
	    ctx_per_process < -1 || ctx_per_user < -1)
		return -EINVAL;
	dv_core_set_limits(ctx_per_process < 0 ? DV_CTX_PER_PROCESS_DEFAULT :
			   (u32)ctx_per_process,
			   ctx_per_user < 0 ? DV_CTX_PER_USER_DEFAULT :
			   (u32)ctx_per_user);
	return 0;
}

void dvc_context_close(struct dv_context *ctx)
{
	if (ctx)
		dv_context_close(ctx);
}

int dvc_context_trace_all(struct dv_context *ctx, int all)
{
	if (!ctx)
		return -EINVAL;
	dv_context_set_trace_all(ctx, all != 0);
	return 0;
}

/*
 * Only the low 32 bits are the command, as in the kernel; callers such as
 * ctypes may pass a sign-extended value.
 */
static int dvc_dispatch(struct dv_context *ctx, unsigned long cmd, void *arg,
			bool privileged)
{
	return dv_ioctl_from_caller(ctx, (unsigned int)cmd, arg, privileged);
}

int dvc_ioctl(struct dv_context *ctx, unsigned long cmd, void *arg)
{
	if (!ctx)
		return -EINVAL;
	return dvc_dispatch(ctx, cmd, arg, false);
}

int dvc_ioctl_interruptible(struct dv_context *ctx, unsigned long cmd,
			    void *arg, int (*interrupted)(void))
{
	int ret;

	if (!ctx)
		return -EINVAL;
	os_posix_set_interrupt_check(interrupted);
	ret = dvc_dispatch(ctx, cmd, arg, false);
	os_posix_set_interrupt_check(NULL);
	return ret;
}

int dvc_manager_ioctl(unsigned long cmd, void *arg)
{
	return dvc_dispatch(NULL, cmd, arg, false);
}

int dvc_manager_ioctl_priv(unsigned long cmd, void *arg, int privileged)
{
	return dvc_dispatch(NULL, cmd, arg, privileged != 0);
}

int dvc_pollable(struct dv_context *ctx)
{
	return ctx && dv_context_pollable(ctx) ? 1 : 0;
}

struct dv_mapping *dvc_mmap(struct dv_context *ctx, uint64_t offset,
			    uint64_t len)
{
	struct dv_mapping *map = NULL;
	int ret = ctx ? dv_mmap_get(ctx, offset, len, &map) : -EINVAL;

	return dvc_obj_or_errno(ret, map);
}

void *dvc_mapping_addr(struct dv_mapping *map)
{
	return map ? dv_mapping_addr(map) : NULL;
}

void dvc_munmap(struct dv_mapping *map)
{
	if (map)
		dv_mmap_put(map);
}

uint32_t dvc_ring_publish(struct davinci_ring_header *sq, uint32_t tail)
{
	__atomic_store_n(&sq->tail, tail, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&sq->flags, __ATOMIC_RELAXED);
}

uint32_t dvc_ring_acquire_tail(const struct davinci_ring_header *cq)
{
	return __atomic_load_n(&cq->tail, __ATOMIC_ACQUIRE);
}

uint64_t dvc_ring_acquire_seq(const struct davinci_ring_header *cq)
{
	return __atomic_load_n(&cq->seq, __ATOMIC_ACQUIRE);
}

void dvc_ring_release_head(struct davinci_ring_header *cq, uint32_t head)
{
	__atomic_store_n(&cq->head, head, __ATOMIC_RELEASE);
}

void dvc_stats(struct dv_stats *out)
{
	if (out)
		dv_core_stats(out);
}

int dvc_device_info(struct dv_device *dev, struct davinci_device_info *info,
		    uint64_t *busy_ns)
{
	if (!dev || !info)
		return -EINVAL;
	dv_device_query(dev, info, busy_ns);
	return 0;
}
