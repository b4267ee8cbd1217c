/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interfaces of the davinci kernel module.
 *
 * The module binds the OS-agnostic device core (kmod/core/) to the Linux
 * driver model: a "davinci" bus with hot add and remove, a driver that
 * binds its devices, character devices, mmap, poll, sysfs, generic
 * netlink and debugfs fault-injection knobs.
 */
#ifndef _DV_LINUX_H
#define _DV_LINUX_H

#include <linux/device.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/wait.h>

#include "dv_core.h"

/* Device indexes 0..DV_MAX_DEVICES - 1; the manager node uses the next minor. */
#define DV_MAX_DEVICES		64
#define DV_MANAGER_MINOR	DV_MAX_DEVICES
#define DV_MINORS		(DV_MAX_DEVICES + 1)

#define DV_HOST_MB		64

/* Module parameters (main.c). */
extern unsigned int dv_param_hbm_mb;
extern unsigned int dv_param_aicores;
extern unsigned int dv_param_task_timeout_ms;
extern unsigned int dv_param_poll_idle_us;
extern unsigned int dv_param_poll_idle_max_us;
extern unsigned int dv_param_host_mb;

/**
 * struct dv_bus_dev - a device on the davinci bus (new_device/del_device)
 * @dev: the driver-model device, named "davinciN"
 * @id: N
 * @hbm_mb: HBM size the bound device gets
 * @aicores: AI cores the bound device gets
 * @list: on the bus's device list (bus.c: under dv_bus_lock)
 */
struct dv_bus_dev {
	struct device dev;
	u32 id;
	u32 hbm_mb;
	u32 aicores;
	struct list_head list;
};

#define to_dv_bus_dev(d) container_of(d, struct dv_bus_dev, dev)

/**
 * struct dv_kdev - a bound device: the core device and its node
 * @ref: held by the binding and by each open file
 * @core: the core's device; destroyed on the last reference
 * @node: the class device behind /dev/davinciN, NULL once removed
 * @debugfs: the fault-injection knobs' directory (debugfs.c)
 * @id: N
 * @removed: set when the driver let go of the device (cdev.c: written
 *	under dv_minor_lock, read without it)
 */
struct dv_kdev {
	struct kref ref;
	struct dv_device *core;
	struct device *node;
	struct dentry *debugfs;
	u32 id;
	bool removed;
};

/* bus.c */
int dv_bus_init(void);
void dv_bus_exit(void);
int dv_bus_add_device(u32 id, u32 hbm_mb, u32 aicores);

/* cdev.c */
extern struct class *dv_class;
int dv_cdev_init(void);
void dv_cdev_exit(void);
int dv_kdev_probe(struct dv_bus_dev *bdev);
void dv_kdev_remove(struct dv_bus_dev *bdev);
void dv_kdev_put(struct dv_kdev *kdev);

/**
 * struct dv_file - one open file of a device node
 * @kdev: the device it was opened on (a reference)
 * @ctx: the core context; NULL on the manager node
 */
struct dv_file {
	struct dv_kdev *kdev;
	struct dv_context *ctx;
};

/* mmap.c */
int dv_mmap(struct file *filp, struct vm_area_struct *vma);

/* debugfs.c */
void dv_debugfs_init(void);
void dv_debugfs_exit(void);
void dv_debugfs_add(struct dv_kdev *kdev);
void dv_debugfs_remove(struct dv_kdev *kdev);

/* trace.c: the tracepoints, fed by the core's trace hook. */
void dv_trace_linux_init(void);
void dv_trace_linux_exit(void);

/* os_simd.c: per-CPU scratch of the op kernels (os_fpu_scratch()). */
int dv_simd_init(void);
void dv_simd_exit(void);

/* netlink.c */
int dv_netlink_init(void);
void dv_netlink_exit(void);

/* sysfs.c */
extern const struct attribute_group *dv_node_groups[];

/* os_linux.c */
wait_queue_head_t *os_waitq_head(struct os_waitq *wq);

/* main.c: the module's own accounting, reported at unload */
extern atomic_long_t dv_live_files;
extern atomic_long_t dv_live_vmas;
extern atomic_long_t dv_live_kdevs;

#endif /* _DV_LINUX_H */
