/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dv_core.h - entry points of the device core for its OS layers.
 *
 * The kernel module (kmod/linux/) and the userspace library
 * (userspace/libdavinci_core/) call only these. Every function returns
 * 0 or a negative errno.
 */
#ifndef _DAVINCI_CORE_H
#define _DAVINCI_CORE_H

#include "os.h"

#define DV_DRIVER_VERSION "1.0.0"

struct dv_device;
struct dv_context;
struct dv_mapping;

/**
 * struct dv_device_config - parameters of one simulated device
 * @index: N of davinciN
 * @aicores: AI cores, i.e. scheduler worker threads (1..64)
 * @hbm_bytes: HBM pool size, a multiple of 2 MiB
 * @host_bytes: pinned host pool size (also holds the stream rings)
 * @task_timeout_ms: watchdog; 0 disables it
 * @backing_dir: POSIX only: directory for the arena files, or NULL
 * @backend: reported by DAVINCI_IOCTL_GET_VERSION ("kmod", "fuse", "lib")
 * @poll_idle_us: how long the dispatcher polls the rings of polled streams
 *	without finding work before it sleeps, at first; 0 selects
 *	DV_POLL_IDLE_US
 * @poll_idle_max_us: how long that idle time may grow while doorbells
 *	come soon after the dispatcher slept (dispatch.c); 0 selects
 *	DV_POLL_GROW_MAX times @poll_idle_us, and less than @poll_idle_us
 *	counts as @poll_idle_us (no growth)
 */
struct dv_device_config {
	u32 index;
	u32 aicores;
	u64 hbm_bytes;
	u64 host_bytes;
	u32 task_timeout_ms;
	const char *backing_dir;
	const char *backend;
	u32 poll_idle_us;
	u32 poll_idle_max_us;
};

#define DV_POLL_IDLE_US	200
#define DV_POLL_GROW_MAX	16

int dv_device_create(const struct dv_device_config *cfg,
		     struct dv_device **out);
/* Only after every context of the device is closed. */
void dv_device_destroy(struct dv_device *dev);
/*
 * Device information without a context (sysfs, the FUSE daemon): @info is
 * filled in as DAVINCI_IOCTL_DEVICE_INFO fills it; @busy_ns, when not
 * NULL, gets the nanoseconds AI cores spent running tasks (a utilization
 * figure is its growth over time, divided by aicores). Works after
 * dv_device_lost() too: health then reads DAVINCI_HEALTH_CRITICAL.
 */
void dv_device_query(struct dv_device *dev, struct davinci_device_info *info,
		     u64 *busy_ns);
/*
 * The device is gone (hot remove, unbind): running tasks stop, every
 * context gets DAVINCI_NOTIFY_DEVICE_LOST and -ENODEV from then on, until
 * it is closed. Contexts stay valid objects until dv_context_close().
 */
void dv_device_lost(struct dv_device *dev);

/*
 * A context is one open file. @pid (a process: the tgid) and @uid (its
 * user) are recorded for per-process usage and count against the limits
 * of dv_core_set_limits(), over all devices: -EMFILE when process @pid
 * holds ctx_per_process contexts already, -EUSERS when user @uid holds
 * ctx_per_user. @pid 0 (unknown, e.g. a FUSE caller in another pid
 * namespace) is not counted per process, @uid DV_UID_NONE (a caller with
 * no user, such as the tests' contexts) not per user.
 */
#define DV_UID_NONE		0xFFFFFFFFU
int dv_context_open(struct dv_device *dev, u32 pid, u32 uid,
		    struct dv_context **out);
/* Frees everything the context owns; waits for its running tasks to stop. */
void dv_context_close(struct dv_context *ctx);
/*
 * Let @ctx read the trace records of every user's contexts
 * (DAVINCI_IOCTL_TRACE_READ), not only those of its own user: the OS
 * layer sets it at open for a privileged opener (the kernel:
 * perfmon_capable(); FUSE: the daemon's owner).
 */
void dv_context_set_trace_all(struct dv_context *ctx, bool all);

/*
 * Size of the argument struct of @cmd, matched on its type and number
 * only, or -ENOTTY.
 */
int dv_ioctl_size(unsigned int cmd);
/*
 * The ioctl entry of both bindings: a size-tolerant copy of the caller's
 * argument (see ioctl.c), then dv_ioctl() on @ctx or, when @ctx is NULL,
 * dv_manager_ioctl_priv().
 */
int dv_ioctl_from_caller(struct dv_context *ctx, unsigned int cmd,
			 void *uarg, bool privileged);
/* @arg points at dv_ioctl_size(cmd) bytes the core may read and write. */
int dv_ioctl(struct dv_context *ctx, unsigned int cmd, void *arg);

/*
 * ioctls on the manager node (davinci_manager), which has no context:
 * GET_VERSION and the DAVINCI_IOCTL_MGMT_* commands. Same size rules as
 * dv_ioctl(). dv_manager_ioctl() is an unprivileged caller: reset and
 * fault injection fail with -EPERM. The OS layer passes @privileged true
 * for CAP_SYS_ADMIN (kernel) or the daemon's owner (FUSE).
 */
int dv_manager_ioctl(unsigned int cmd, void *arg);
int dv_manager_ioctl_priv(unsigned int cmd, void *arg, bool privileged);

/*
 * A hook the OS layer may set to mirror the management event log (health
 * changes, faults, resets, device add and remove), e.g. to a generic
 * netlink multicast group. Called with the device's lock held, in any
 * thread of the core, including AI-core workers: it must not sleep for
 * long nor call back into the core. NULL removes it.
 */
void dv_mgmt_set_event_hook(void (*hook)(const struct davinci_mgmt_event *ev));

/*
 * Hooks the OS layer may set to mirror each record of the devices' trace
 * rings as it is written (the kernel module fires its tracepoints).
 * @wants says whether anyone listens for records of a DAVINCI_TRACE_*
 * type now (a tracepoint is enabled): a record neither a ring nor the OS
 * layer wants is not built. Both are called with the device's lock held,
 * in any thread of the core: they must not sleep nor call back into the
 * core. Set them before the first device is created; NULLs remove them.
 */
void dv_trace_set_hook(void (*hook)(u32 device,
				    const struct davinci_trace_record *rec),
		       bool (*wants)(u32 type));

/* Frees the core's global state; call after the last device is destroyed. */
void dv_core_exit(void);

/*
 * Limits on open contexts, global to the core (all devices): at most
 * @ctx_per_process per process and @ctx_per_user per user; 0 means no
 * limit. Applies to opens from then on: contexts already open stay.
 * DAVINCI_IOCTL_GET_LIMITS reports them. A context reserves about 50 KiB
 * (its notification queue) before it makes anything: the
 * defaults allow one context per device on the largest configuration (64
 * devices) for a process, and four such processes per user.
 */
#define DV_CTX_PER_PROCESS_DEFAULT	64
#define DV_CTX_PER_USER_DEFAULT		256
void dv_core_set_limits(u32 ctx_per_process, u32 ctx_per_user);

/* True when a notification is waiting (poll() reports POLLIN). */
bool dv_context_pollable(struct dv_context *ctx);
/* Woken whenever a notification is queued or the device is lost. */
struct os_waitq *dv_context_waitq(struct dv_context *ctx);

/*
 * Map @len bytes at mmap offset @offset: the range must start inside one
 * live buffer or ring of @ctx and not run past it. The mapping holds a
 * reference, so the memory is not reused while mapped, even if freed.
 */
int dv_mmap_get(struct dv_context *ctx, u64 offset, u64 len,
		struct dv_mapping **out);
/* Kernel address of the mapping's first byte (page aligned). */
void *dv_mapping_addr(struct dv_mapping *map);
void dv_mmap_put(struct dv_mapping *map);

/**
 * struct dv_stats - the core's own accounting, global over all devices
 * @objects: live allocations made by the core (os_zalloc)
 * @devices: live devices
 * @contexts: live contexts
 * @buffers: live buffers (freed ones still referenced count too)
 * @streams: live streams
 * @events: live events
 * @tasks: tasks queued or running
 * @mappings: live mappings
 * @hbm_used: HBM bytes allocated, all devices
 * @host_used: pinned host bytes allocated, all devices
 */
struct dv_stats {
	u64 objects;
	u64 devices;
	u64 contexts;
	u64 buffers;
	u64 streams;
	u64 events;
	u64 tasks;
	u64 mappings;
	u64 hbm_used;
	u64 host_used;
};

void dv_core_stats(struct dv_stats *out);

/**
 * struct dv_dispatch_stats - how a device's dispatcher went to sleep
 * @sleeps: times it slept until a doorbell
 * @cpu_wanted: of those, the times it stopped polling before its idle
 *	time was up because another thread wanted its CPU (os.h)
 * @kicks: doorbells (and new polled streams) that told it of work
 * @grows: sleeps after which its idle time doubled: a doorbell ended
 *	them soon enough that a longer idle time would have seen its tail
 * @shrinks: sleeps after which its idle time halved: no doorbell, or a
 *	late one, ended them
 * @idle_ns: how long it polls without work before it sleeps, now
 */
struct dv_dispatch_stats {
	u64 sleeps;
	u64 cpu_wanted;
	u64 kicks;
	u64 grows;
	u64 shrinks;
	u64 idle_ns;
};

void dv_device_dispatch_stats(struct dv_device *dev,
			      struct dv_dispatch_stats *out);

#endif /* _DAVINCI_CORE_H */
