// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/davinciN and /dev/davinci_manager: the "davinci" class,
 * file operations and the lifetime of a bound device.
 *
 * One cdev covers every minor; open() looks the bound device up by minor
 * and takes a reference on it, so a device that is removed while files
 * are open stays a valid (lost) object until the last of them closes.
 */
#include <linux/capability.h>
#include <linux/cdev.h>
#include <linux/compat.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uidgid.h>

#include "compat.h"
#include "dv_linux.h"

struct class *dv_class;
static dev_t dv_devt;
static struct cdev dv_cdev;
static struct device *dv_manager_node;

/*
 * Bound devices by minor. dv_minor_lock protects dv_minors[] and the
 * writes of each kdev's removed: an open looks its device up and takes a
 * reference in one hold of it, a remove clears the slot and sets removed
 * in one, so an open either has its reference before the remove or finds
 * no device. Readers of removed (READ_ONCE) need not take it.
 */
static DEFINE_MUTEX(dv_minor_lock);
static struct dv_kdev *dv_minors[DV_MAX_DEVICES];

static void dv_kdev_release(struct kref *ref)
{
	struct dv_kdev *kdev = container_of(ref, struct dv_kdev, ref);

	dv_device_destroy(kdev->core);
	kfree(kdev);
	atomic_long_dec(&dv_live_kdevs);
}

void dv_kdev_put(struct dv_kdev *kdev)
{
	kref_put(&kdev->ref, dv_kdev_release);
}

/* Called by the bus's probe with the device lock held. */
int dv_kdev_probe(struct dv_bus_dev *bdev)
{
	struct dv_device_config cfg = {
		.index = bdev->id,
		.aicores = bdev->aicores,
		.hbm_bytes = (u64)bdev->hbm_mb << 20,
		.host_bytes = (u64)dv_param_host_mb << 20,
		.task_timeout_ms = dv_param_task_timeout_ms,
		.backend = "kmod",
		.poll_idle_us = dv_param_poll_idle_us,
		.poll_idle_max_us = dv_param_poll_idle_max_us,
	};
	struct dv_kdev *kdev;
	int ret;

	device_lock_assert(&bdev->dev);
	if (bdev->id >= DV_MAX_DEVICES)
		return -EINVAL;
	kdev = kzalloc(sizeof(*kdev), GFP_KERNEL);
	if (!kdev)
		return -ENOMEM;
	kref_init(&kdev->ref);
	kdev->id = bdev->id;
	ret = dv_device_create(&cfg, &kdev->core);
	if (ret) {
		kfree(kdev);
		return ret;
	}
	atomic_long_inc(&dv_live_kdevs);

	kdev->node = device_create_with_groups(dv_class, &bdev->dev,
					       MKDEV(MAJOR(dv_devt), bdev->id),
					       kdev, dv_node_groups,
					       "davinci%u", bdev->id);
	if (IS_ERR(kdev->node)) {
		ret = PTR_ERR(kdev->node);
		kdev->node = NULL;
		dv_kdev_put(kdev);
		return ret;
	}

	mutex_lock(&dv_minor_lock);
	if (dv_minors[bdev->id]) {
		mutex_unlock(&dv_minor_lock);
		device_destroy(dv_class, MKDEV(MAJOR(dv_devt), bdev->id));
		dv_kdev_put(kdev);
		return -EBUSY;
	}
	dv_minors[bdev->id] = kdev;
	mutex_unlock(&dv_minor_lock);

	dv_debugfs_add(kdev);
	dev_set_drvdata(&bdev->dev, kdev);
	return 0;
}

/*
 * Unbind or hot remove: no new opens, the node and its sysfs files go
 * away, open contexts see the device lost (-ENODEV); the core device is
 * destroyed when the last open file closes. Called by the bus's remove
 * with the device lock held.
 */
void dv_kdev_remove(struct dv_bus_dev *bdev)
{
	struct dv_kdev *kdev = dev_get_drvdata(&bdev->dev);

	device_lock_assert(&bdev->dev);
	if (!kdev)
		return;
	dv_debugfs_remove(kdev);
	mutex_lock(&dv_minor_lock);
	if (dv_minors[kdev->id] == kdev)
		dv_minors[kdev->id] = NULL;
	WRITE_ONCE(kdev->removed, true);
	mutex_unlock(&dv_minor_lock);

	device_destroy(dv_class, MKDEV(MAJOR(dv_devt), kdev->id));
	kdev->node = NULL;
	dv_device_lost(kdev->core);
	dev_set_drvdata(&bdev->dev, NULL);
	dv_kdev_put(kdev);
}

static int dv_open(struct inode *inode, struct file *filp)
{
	unsigned int minor = iminor(inode);
	struct dv_kdev *kdev = NULL;
	struct dv_file *df;
	int ret;

	if (minor == DV_MANAGER_MINOR) {
		filp->private_data = NULL;
		return 0;
	}
	if (minor >= DV_MAX_DEVICES)
		return -ENODEV;

	mutex_lock(&dv_minor_lock);
	kdev = dv_minors[minor];
	if (kdev)
		kref_get(&kdev->ref);
	mutex_unlock(&dv_minor_lock);
	if (!kdev)
		return -ENODEV;

	df = kzalloc(sizeof(*df), GFP_KERNEL);
	if (!df) {
		ret = -ENOMEM;
		goto err_put;
	}
	df->kdev = kdev;
	ret = dv_context_open(kdev->core, task_tgid_nr(current),
			      from_kuid(&init_user_ns, current_uid()),
			      &df->ctx);
	if (ret)
		goto err_free;
	/* who may read other users' trace records: as perf's paranoia */
	dv_context_set_trace_all(df->ctx, perfmon_capable());
	filp->private_data = df;
	atomic_long_inc(&dv_live_files);
	return 0;

err_free:
	kfree(df);
err_put:
	dv_kdev_put(kdev);
	return ret;
}

static int dv_release(struct inode *inode, struct file *filp)
{
	struct dv_file *df = filp->private_data;

	if (!df)
		return 0;
	dv_context_close(df->ctx);
	dv_kdev_put(df->kdev);
	kfree(df);
	atomic_long_dec(&dv_live_files);
	return 0;
}

static long dv_unlocked_ioctl(struct file *filp, unsigned int cmd,
			      unsigned long arg)
{
	struct dv_file *df = filp->private_data;

	if (df)
		return dv_ioctl_from_caller(df->ctx, cmd, (void *)arg, false);
	/* the manager node: reset and fault injection need CAP_SYS_ADMIN */
	return dv_ioctl_from_caller(NULL, cmd, (void *)arg,
				    capable(CAP_SYS_ADMIN));
}

static __poll_t dv_poll(struct file *filp, struct poll_table_struct *wait)
{
	struct dv_file *df = filp->private_data;
	__poll_t mask = 0;

	if (!df)
		return EPOLLERR;
	poll_wait(filp, os_waitq_head(dv_context_waitq(df->ctx)), wait);
	if (dv_context_pollable(df->ctx))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (READ_ONCE(df->kdev->removed))
		mask |= EPOLLHUP;
	return mask;
}

static int dv_file_mmap(struct file *filp, struct vm_area_struct *vma)
{
	if (!filp->private_data)
		return -ENODEV;
	return dv_mmap(filp, vma);
}

static const struct file_operations dv_fops = {
	.owner = THIS_MODULE,
	.open = dv_open,
	.release = dv_release,
	.unlocked_ioctl = dv_unlocked_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = dv_file_mmap,
	.poll = dv_poll,
	.llseek = noop_llseek,
};

static char *dv_devnode(dv_devnode_device *dev, umode_t *mode)
{
	/* udev's 60-davinci.rules sets group HwHiAiUser on top. */
	if (mode)
		*mode = 0660;
	return NULL;
}

int dv_cdev_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&dv_devt, 0, DV_MINORS, "davinci");
	if (ret)
		return ret;

	cdev_init(&dv_cdev, &dv_fops);
	dv_cdev.owner = THIS_MODULE;
	ret = cdev_add(&dv_cdev, dv_devt, DV_MINORS);
	if (ret)
		goto err_region;

	dv_class = dv_class_create("davinci");
	if (IS_ERR(dv_class)) {
		ret = PTR_ERR(dv_class);
		goto err_cdev;
	}
	dv_class->devnode = dv_devnode;

	dv_manager_node = device_create(dv_class, NULL,
					MKDEV(MAJOR(dv_devt), DV_MANAGER_MINOR),
					NULL, "davinci_manager");
	if (IS_ERR(dv_manager_node)) {
		ret = PTR_ERR(dv_manager_node);
		goto err_class;
	}
	return 0;

err_class:
	class_destroy(dv_class);
err_cdev:
	cdev_del(&dv_cdev);
err_region:
	unregister_chrdev_region(dv_devt, DV_MINORS);
	return ret;
}

void dv_cdev_exit(void)
{
	device_destroy(dv_class, MKDEV(MAJOR(dv_devt), DV_MANAGER_MINOR));
	class_destroy(dv_class);
	cdev_del(&dv_cdev);
	unregister_chrdev_region(dv_devt, DV_MINORS);
}
