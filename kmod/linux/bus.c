// SPDX-License-Identifier: GPL-2.0
/*
 * The "davinci" bus: devices added and removed at runtime
 * (netdevsim style) and the driver that binds them.
 *
 *   echo "ID [HBM_MB [AICORES]]" > /sys/bus/davinci/new_device
 *   echo ID > /sys/bus/davinci/del_device
 *   echo davinciID > /sys/bus/davinci/drivers/davinci/unbind
 *   echo davinciID > /sys/bus/davinci/drivers/davinci/bind
 *
 * The driver model sends the add/remove/bind/unbind uevents.
 */
#include <linux/device.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "compat.h"
#include "dv_linux.h"

/*
 * dv_bus_lock protects dv_bus_devs (the added devices, linked by their
 * list) and dv_bus_enabled, and is held across each device_add() and
 * device_unregister(): an id is added or deleted once, and none after
 * dv_bus_exit() began.
 */
static DEFINE_MUTEX(dv_bus_lock);
static LIST_HEAD(dv_bus_devs);
static bool dv_bus_enabled;

static struct device_driver dv_driver;

static void dv_bus_dev_release(struct device *dev)
{
	kfree(to_dv_bus_dev(dev));
}

static ssize_t hbm_mb_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%u\n", to_dv_bus_dev(dev)->hbm_mb);
}
static DEVICE_ATTR_RO(hbm_mb);

static ssize_t aicores_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n", to_dv_bus_dev(dev)->aicores);
}
static DEVICE_ATTR_RO(aicores);

static struct attribute *dv_bus_dev_attrs[] = {
	&dev_attr_hbm_mb.attr,
	&dev_attr_aicores.attr,
	NULL,
};
ATTRIBUTE_GROUPS(dv_bus_dev);

static const struct device_type dv_bus_dev_type = {
	.groups = dv_bus_dev_groups,
	.release = dv_bus_dev_release,
};

static struct dv_bus_dev *dv_bus_find(u32 id)
{
	struct dv_bus_dev *bdev;

	list_for_each_entry(bdev, &dv_bus_devs, list)
		if (bdev->id == id)
			return bdev;
	return NULL;
}

static int dv_check_geometry(u32 hbm_mb, u32 aicores)
{
	/* The core wants HBM in whole 2 MiB pages. */
	if (!hbm_mb || hbm_mb % 2 || hbm_mb > 65536)
		return -EINVAL;
	if (!aicores || aicores > 64)
		return -EINVAL;
	return 0;
}

int dv_bus_add_device(u32 id, u32 hbm_mb, u32 aicores)
{
	struct dv_bus_dev *bdev;
	int ret;

	if (id >= DV_MAX_DEVICES)
		return -EINVAL;
	ret = dv_check_geometry(hbm_mb, aicores);
	if (ret)
		return ret;

	mutex_lock(&dv_bus_lock);
	if (!dv_bus_enabled) {
		ret = -EBUSY;
		goto unlock;
	}
	if (dv_bus_find(id)) {
		ret = -EEXIST;
		goto unlock;
	}
	bdev = kzalloc(sizeof(*bdev), GFP_KERNEL);
	if (!bdev) {
		ret = -ENOMEM;
		goto unlock;
	}
	bdev->id = id;
	bdev->hbm_mb = hbm_mb;
	bdev->aicores = aicores;
	bdev->dev.bus = dv_driver.bus;
	bdev->dev.type = &dv_bus_dev_type;
	device_initialize(&bdev->dev);
	ret = dev_set_name(&bdev->dev, "davinci%u", id);
	if (!ret)
		ret = device_add(&bdev->dev);
	if (ret) {
		put_device(&bdev->dev);
		goto unlock;
	}
	list_add_tail(&bdev->list, &dv_bus_devs);
unlock:
	mutex_unlock(&dv_bus_lock);
	return ret;
}

static void dv_bus_del(struct dv_bus_dev *bdev)
{
	list_del(&bdev->list);
	device_unregister(&bdev->dev);
}

static ssize_t new_device_store(dv_bus_attr_type *bus, const char *buf,
				size_t count)
{
	unsigned int id, hbm_mb = dv_param_hbm_mb, aicores = dv_param_aicores;
	char extra;
	int n, ret;

	n = sscanf(buf, "%u %u %u %c", &id, &hbm_mb, &aicores, &extra);
	if (n < 1 || n > 3)
		return -EINVAL;
	ret = dv_bus_add_device(id, hbm_mb, aicores);
	return ret ? ret : count;
}
static BUS_ATTR_WO(new_device);

static ssize_t del_device_store(dv_bus_attr_type *bus, const char *buf,
				size_t count)
{
	struct dv_bus_dev *bdev;
	unsigned int id;
	char extra;
	int ret = 0;

	if (sscanf(buf, "%u %c", &id, &extra) != 1)
		return -EINVAL;
	mutex_lock(&dv_bus_lock);
	bdev = dv_bus_enabled ? dv_bus_find(id) : NULL;
	if (bdev)
		dv_bus_del(bdev);
	else
		ret = -ENOENT;
	mutex_unlock(&dv_bus_lock);
	return ret ? ret : count;
}
static BUS_ATTR_WO(del_device);

static struct attribute *dv_bus_attrs[] = {
	&bus_attr_new_device.attr,
	&bus_attr_del_device.attr,
	NULL,
};
ATTRIBUTE_GROUPS(dv_bus);

static int dv_bus_probe(struct device *dev)
{
	return dv_kdev_probe(to_dv_bus_dev(dev));
}

static void dv_bus_remove(struct device *dev)
{
	dv_kdev_remove(to_dv_bus_dev(dev));
}

static struct bus_type dv_bus_type = {
	.name = "davinci",
	.bus_groups = dv_bus_groups,
	.probe = dv_bus_probe,
	.remove = dv_bus_remove,
};

static struct device_driver dv_driver = {
	.name = "davinci",
	.bus = &dv_bus_type,
	.owner = THIS_MODULE,
};

int dv_bus_init(void)
{
	int ret;

	ret = bus_register(&dv_bus_type);
	if (ret)
		return ret;
	ret = driver_register(&dv_driver);
	if (ret) {
		bus_unregister(&dv_bus_type);
		return ret;
	}
	mutex_lock(&dv_bus_lock);
	dv_bus_enabled = true;
	mutex_unlock(&dv_bus_lock);
	return 0;
}

void dv_bus_exit(void)
{
	struct dv_bus_dev *bdev, *tmp;

	mutex_lock(&dv_bus_lock);
	dv_bus_enabled = false;
	list_for_each_entry_safe(bdev, tmp, &dv_bus_devs, list)
		dv_bus_del(bdev);
	mutex_unlock(&dv_bus_lock);

	driver_unregister(&dv_driver);
	bus_unregister(&dv_bus_type);
}
