// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl.c - the ioctl dispatch table of both nodes.
 *
 * Commands are matched on type and number, by direct index; the OS layer
 * copies the argument in and out size-tolerantly (see dv_ioctl_size()).
 * Every device-node handler runs with dev->lock held.
 */
#include "dv_internal.h"

#define DV_IOCTL(c, f) \
	[_IOC_NR(c)] = { .cmd = (c), .fn = (f) }
#define DV_IOCTL_MGMT(c, f, flags_) \
	[_IOC_NR(c)] = { .cmd = (c), .mgmt_fn = (f), .flags = (flags_) }
/* Served on both nodes, without the manager's registry lock. */
#define DV_IOCTL_BOTH(c, f, mf) \
	[_IOC_NR(c)] = { .cmd = (c), .fn = (f), .mgmt_fn = (mf), \
			 .flags = DV_IOCTL_UNLOCKED }

/*
 * The ioctls of both nodes, indexed by _IOC_NR (as habanalabs does): the
 * device nodes' (fn) and the manager node's (mgmt_fn, manager.c). An
 * unused number has neither.
 */
static const struct dv_ioctl_desc dv_ioctls[] = {
	DV_IOCTL_BOTH(DAVINCI_IOCTL_GET_VERSION, dv_ioctl_get_version,
		      dv_mgmt_get_version),
	DV_IOCTL(DAVINCI_IOCTL_DEVICE_INFO, dv_ioctl_device_info),
	DV_IOCTL(DAVINCI_IOCTL_MMAP_INFO, dv_ioctl_mmap_info),
	DV_IOCTL_BOTH(DAVINCI_IOCTL_GET_LIMITS, dv_ioctl_get_limits,
		      dv_mgmt_get_limits),
	DV_IOCTL(DAVINCI_IOCTL_CTX_RESET, dv_ioctl_ctx_reset),
	DV_IOCTL(DAVINCI_IOCTL_TRACE_READ, dv_ioctl_trace_read),
	DV_IOCTL(DAVINCI_IOCTL_GET_CAP, dv_ioctl_get_cap),
	DV_IOCTL(DAVINCI_IOCTL_MAP_HOLD, dv_ioctl_map_hold),
	DV_IOCTL(DAVINCI_IOCTL_MAP_RELEASE, dv_ioctl_map_release),
	DV_IOCTL(DAVINCI_IOCTL_MEM_ALLOC, dv_ioctl_mem_alloc),
	DV_IOCTL(DAVINCI_IOCTL_MEM_FREE, dv_ioctl_mem_free),
	DV_IOCTL(DAVINCI_IOCTL_MEM_QUERY, dv_ioctl_mem_query),
	DV_IOCTL(DAVINCI_IOCTL_MEM_INFO, dv_ioctl_mem_info),
	DV_IOCTL(DAVINCI_IOCTL_STREAM_CREATE, dv_ioctl_stream_create),
	DV_IOCTL(DAVINCI_IOCTL_STREAM_DESTROY, dv_ioctl_stream_destroy),
	DV_IOCTL(DAVINCI_IOCTL_DOORBELL, dv_ioctl_doorbell),
	DV_IOCTL(DAVINCI_IOCTL_STREAM_WAIT, dv_ioctl_stream_wait),
	DV_IOCTL(DAVINCI_IOCTL_STREAM_RESET, dv_ioctl_stream_reset),
	DV_IOCTL(DAVINCI_IOCTL_STREAM_QUERY, dv_ioctl_stream_query),
	DV_IOCTL(DAVINCI_IOCTL_STREAM_SET_FLAGS, dv_ioctl_stream_set_flags),
	DV_IOCTL(DAVINCI_IOCTL_TASK_QUERY, dv_ioctl_task_query),
	DV_IOCTL(DAVINCI_IOCTL_TASK_CANCEL, dv_ioctl_task_cancel),
	DV_IOCTL(DAVINCI_IOCTL_SYNC, dv_ioctl_sync),
	DV_IOCTL(DAVINCI_IOCTL_GRAPH_CAPTURE, dv_ioctl_graph_capture),
	DV_IOCTL(DAVINCI_IOCTL_GRAPH_END, dv_ioctl_graph_end),
	DV_IOCTL(DAVINCI_IOCTL_GRAPH_LAUNCH, dv_ioctl_graph_launch),
	DV_IOCTL(DAVINCI_IOCTL_GRAPH_DESTROY, dv_ioctl_graph_destroy),
	DV_IOCTL(DAVINCI_IOCTL_EVENT_CREATE, dv_ioctl_event_create),
	DV_IOCTL(DAVINCI_IOCTL_EVENT_DESTROY, dv_ioctl_event_destroy),
	DV_IOCTL(DAVINCI_IOCTL_EVENT_QUERY, dv_ioctl_event_query),
	DV_IOCTL(DAVINCI_IOCTL_EVENT_SIGNAL, dv_ioctl_event_signal),
	DV_IOCTL(DAVINCI_IOCTL_EVENT_WAIT, dv_ioctl_event_wait),
	DV_IOCTL(DAVINCI_IOCTL_NOTIFY_WAIT, dv_ioctl_notify_wait),
	DV_IOCTL_MGMT(DAVINCI_IOCTL_MGMT_LIST, dv_mgmt_list, 0),
	DV_IOCTL_MGMT(DAVINCI_IOCTL_MGMT_INFO, dv_mgmt_info, 0),
	DV_IOCTL_MGMT(DAVINCI_IOCTL_MGMT_PROCS, dv_mgmt_procs, 0),
	DV_IOCTL_MGMT(DAVINCI_IOCTL_MGMT_RESET, dv_mgmt_reset,
		      DV_IOCTL_PRIVILEGED),
	DV_IOCTL_MGMT(DAVINCI_IOCTL_MGMT_INJECT, dv_mgmt_inject,
		      DV_IOCTL_PRIVILEGED),
	DV_IOCTL_MGMT(DAVINCI_IOCTL_MGMT_EVENTS, dv_mgmt_events, 0),
};

/**
 * dv_ioctl_lookup() - the table entry of @cmd
 * @cmd: ioctl number; only its type and number are matched
 *
 * Return: the entry (with fn, mgmt_fn or both set), or NULL.
 */
const struct dv_ioctl_desc *dv_ioctl_lookup(unsigned int cmd)
{
	const struct dv_ioctl_desc *d;

	if (_IOC_TYPE(cmd) != DAVINCI_IOCTL_BASE ||
	    _IOC_NR(cmd) >= DV_ARRAY_SIZE(dv_ioctls))
		return NULL;
	d = &dv_ioctls[_IOC_NR(cmd)];
	return d->fn || d->mgmt_fn ? d : NULL;
}

/**
 * dv_ioctl_size() - argument size of @cmd
 * @cmd: ioctl number; only its type and number are matched. Covers the
 *	manager node's DAVINCI_IOCTL_MGMT_* commands too.
 *
 * Return: the size of the core's argument struct, or -ENOTTY.
 */
int dv_ioctl_size(unsigned int cmd)
{
	const struct dv_ioctl_desc *d = dv_ioctl_lookup(cmd);

	return d ? (int)_IOC_SIZE(d->cmd) : -ENOTTY;
}

/**
 * dv_ioctl_from_caller() - size-tolerant dispatch, as drm_ioctl() does it
 * @ctx: the context, or NULL for the manager node
 * @cmd: the ioctl number the caller passed
 * @uarg: the caller's argument, reached through os_copy_*_caller()
 * @privileged: manager node only: the caller may reset and inject faults
 *
 * Copies in min(_IOC_SIZE(@cmd), the core's size) bytes when the command
 * writes, zero-extending an older, shorter struct; dispatches; on success
 * copies the same bytes back when the command reads. Out fields are valid
 * on success only, on every backend.
 *
 * Return: 0 or a negative errno.
 */
int dv_ioctl_from_caller(struct dv_context *ctx, unsigned int cmd,
			 void *uarg, bool privileged)
{
	u64 stack_buf[16];
	void *kbuf = stack_buf;
	unsigned int copy;
	int ksize;
	int ret;

	ksize = dv_ioctl_size(cmd);
	if (ksize < 0)
		return ksize;
	if ((size_t)ksize > sizeof(stack_buf)) {
		kbuf = os_zalloc(ksize);
		if (!kbuf)
			return -ENOMEM;
	} else {
		memset(stack_buf, 0, sizeof(stack_buf));
	}
	copy = _IOC_SIZE(cmd);
	if (copy > (unsigned int)ksize)
		copy = ksize;

	ret = 0;
	if ((_IOC_DIR(cmd) & _IOC_WRITE) && copy)
		ret = os_copy_from_caller(kbuf, uarg, copy);
	if (!ret) {
		if (ctx)
			ret = dv_ioctl(ctx, cmd, kbuf);
		else
			ret = dv_manager_ioctl_priv(cmd, kbuf, privileged);
	}
	if (!ret && (_IOC_DIR(cmd) & _IOC_READ) && copy)
		ret = os_copy_to_caller(uarg, kbuf, copy);
	if (kbuf != stack_buf)
		os_free(kbuf);
	return ret;
}

/**
 * dv_ioctl() - dispatch one ioctl
 * @ctx: the context
 * @cmd: ioctl number; its direction must match the ABI's
 * @arg: dv_ioctl_size(@cmd) bytes, copied in and out by the OS layer
 *
 * After dv_device_lost() only DAVINCI_IOCTL_GET_VERSION works; the rest
 * fail with -ENODEV.
 *
 * Return: 0 or a negative errno.
 */
int dv_ioctl(struct dv_context *ctx, unsigned int cmd, void *arg)
{
	const struct dv_ioctl_desc *d = dv_ioctl_lookup(cmd);
	struct dv_device *dev = ctx->dev;
	int ret;

	if (!d || !d->fn || _IOC_DIR(cmd) != _IOC_DIR(d->cmd))
		return -ENOTTY;
	os_mutex_lock(dev->lock);
	if (dv_ctx_lost(ctx) && d->cmd != DAVINCI_IOCTL_GET_VERSION)
		ret = -ENODEV;
	else
		ret = d->fn(ctx, arg);
	os_mutex_unlock(dev->lock);
	return ret;
}
