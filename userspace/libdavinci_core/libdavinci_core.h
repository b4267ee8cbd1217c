/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libdavinci_core.h - the device core as a userspace shared library.
 *
 * A flat C API over kmod/core/dv_core.h for ctypes: the FUSE daemon, the
 * in-process test backend and the fuzzer use it. Functions returning int
 * return 0 or a negative errno; functions returning a pointer return NULL
 * and set errno on failure. libdavinci_core.so exports these dvc_*
 * functions only (libdavinci_core.map); the tests' hooks are in
 * dvc_test.h, for programs linked with the core's sources.
 */
#ifndef _LIBDAVINCI_CORE_H
#define _LIBDAVINCI_CORE_H

#include <stdint.h>

struct dv_device;
struct dv_context;
struct dv_mapping;
struct dv_stats;
struct davinci_device_info;
struct davinci_ring_header;
struct dv_device_config;

/*
 * A device made from @cfg, the core's struct dv_device_config
 * (kmod/core/dv_core.h, whose kernel-doc gives its fields and their
 * bounds); NULL with errno EINVAL for a @cfg out of bounds or NULL.
 */
struct dv_device *dvc_device_create(const struct dv_device_config *cfg);
void dvc_device_destroy(struct dv_device *dev);
void dvc_device_lost(struct dv_device *dev);
/*
 * Fill @info as DAVINCI_IOCTL_DEVICE_INFO does, without a context; when
 * @busy_ns is not NULL, store the nanoseconds the AI cores spent running
 * tasks. Works on a lost device too (health DAVINCI_HEALTH_CRITICAL).
 * 0, or -EINVAL when @dev or @info is NULL.
 */
int dvc_device_info(struct dv_device *dev, struct davinci_device_info *info,
		    uint64_t *busy_ns);

/*
 * Open a context for process @pid. dvc_context_open() does not count it
 * per user; dvc_context_open_as() counts it for user @uid too (the FUSE
 * daemon passes its caller's). NULL with errno EMFILE or EUSERS past the
 * limits of dvc_set_limits().
 */
struct dv_context *dvc_context_open(struct dv_device *dev, uint32_t pid);
struct dv_context *dvc_context_open_as(struct dv_device *dev, uint32_t pid,
				       uint32_t uid);
/*
 * Limits on open contexts per process and per user, over all devices of
 * this library: 0 no limit, -1 the default (64 and 256). 0 or -EINVAL.
 */
int dvc_set_limits(int64_t ctx_per_process, int64_t ctx_per_user);
void dvc_context_close(struct dv_context *ctx);
/*
 * Let @ctx read every user's trace records (nonzero @all), as a privileged
 * opener does (the FUSE daemon passes it for its owner); 0 or -EINVAL.
 */
int dvc_context_trace_all(struct dv_context *ctx, int all);

/*
 * Dispatch @cmd with its argument at @arg, which holds _IOC_SIZE(cmd)
 * bytes: size-tolerant exactly as the kernel's ioctl path.
 */
int dvc_ioctl(struct dv_context *ctx, unsigned long cmd, void *arg);

/*
 * dvc_ioctl() on behalf of a caller that can be interrupted: a wait it
 * makes polls @interrupted (the FUSE daemon passes libfuse's
 * fuse_interrupted()) and fails with -EINTR once it returns nonzero, so a
 * client killed or interrupted while the daemon waits for it is let go.
 */
int dvc_ioctl_interruptible(struct dv_context *ctx, unsigned long cmd,
			    void *arg, int (*interrupted)(void));

/*
 * The manager node's ioctls (no context), as dvc_ioctl. dvc_manager_ioctl
 * is an unprivileged caller (reset and fault injection: -EPERM);
 * dvc_manager_ioctl_priv passes @privileged (nonzero: allowed).
 */
int dvc_manager_ioctl(unsigned long cmd, void *arg);
int dvc_manager_ioctl_priv(unsigned long cmd, void *arg, int privileged);

/* 1 when a notification is waiting, else 0. */
int dvc_pollable(struct dv_context *ctx);

/* Map and unmap as mmap() at @offset would; dvc_mapping_addr() is the data. */
struct dv_mapping *dvc_mmap(struct dv_context *ctx, uint64_t offset,
			    uint64_t len);
void *dvc_mapping_addr(struct dv_mapping *map);
void dvc_munmap(struct dv_mapping *map);

/*
 * Publish @tail as the new tail of the submission ring @sq (a release
 * store: the descriptors written before it are seen first), then order
 * that store before every later load (a full barrier) and return the
 * ring's flags read after it. A host that publishes a tail and a
 * dispatcher that sets DAVINCI_RING_F_NEED_WAKEUP before its last look at
 * the tails cannot then both miss each other (io_uring's SQPOLL: liburing
 * puts the same barrier between its tail store and its flags load). For
 * every backend's client, not only this library's devices.
 */
uint32_t dvc_ring_publish(struct davinci_ring_header *sq, uint32_t tail);

/*
 * The consumer's half, for the completion ring @cq: its tail and its
 * completed sequence number read with acquire (the entries and the task
 * results the device wrote before them are seen after them), and a new
 * head stored with release (the entries are read before the device may
 * reuse their slots). Plain loads and stores order so on x86; a client
 * elsewhere (arm64) needs these.
 */
uint32_t dvc_ring_acquire_tail(const struct davinci_ring_header *cq);
uint64_t dvc_ring_acquire_seq(const struct davinci_ring_header *cq);
void dvc_ring_release_head(struct davinci_ring_header *cq, uint32_t head);

/* Fill @out (struct dv_stats: ten uint64_t) with the core's accounting. */
void dvc_stats(struct dv_stats *out);

#endif /* _LIBDAVINCI_CORE_H */
