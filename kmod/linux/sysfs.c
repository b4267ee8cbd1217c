// SPDX-License-Identifier: GPL-2.0
/*
 * Per-device attributes: /sys/class/davinci/davinciN/...
 *
 * The values come from the core's dv_device_query(), which fills struct
 * davinci_device_info as DAVINCI_IOCTL_DEVICE_INFO does, so sysfs reports
 * exactly what the ioctl ABI reports, without opening a context. The node
 * (and with it these files) is removed before the device is marked lost
 * by a hot remove, so a read never sees a dead device; after an injected
 * loss (health critical) a read fails with -ENODEV, as the ioctl does.
 */
#include <linux/device.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "dv_linux.h"

static int dv_node_info(struct device *node, struct davinci_device_info *info)
{
	struct dv_kdev *kdev = dev_get_drvdata(node);

	if (!kdev)
		return -ENODEV;
	dv_device_query(kdev->core, info, NULL);
	if (info->health == DAVINCI_HEALTH_CRITICAL)
		return -ENODEV;
	return 0;
}

#define DV_INFO_ATTR(_name, _fmt, _expr)				\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct davinci_device_info info;				\
	int ret = dv_node_info(dev, &info);				\
									\
	if (ret)							\
		return ret;						\
	return sysfs_emit(buf, _fmt "\n", _expr);			\
}									\
static DEVICE_ATTR_RO(_name)

DV_INFO_ATTR(hbm_total, "%llu", (unsigned long long)info.hbm_total);
DV_INFO_ATTR(hbm_used, "%llu",
	     (unsigned long long)(info.hbm_total - info.hbm_free));
DV_INFO_ATTR(hbm_free, "%llu", (unsigned long long)info.hbm_free);
DV_INFO_ATTR(aicores, "%u", info.aicores);
DV_INFO_ATTR(health, "%u", info.health);
DV_INFO_ATTR(serial, "%.32s", info.serial);
DV_INFO_ATTR(chip_name, "%.32s", info.name);
DV_INFO_ATTR(task_timeout_ms, "%u", info.task_timeout_ms);

/* AI-core utilization in percent, as npu-smi shows it (MGMT_INFO). */
static ssize_t utilization_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct dv_kdev *kdev = dev_get_drvdata(dev);
	struct davinci_mgmt_info *mi;
	int ret;

	if (!kdev)
		return -ENODEV;
	mi = kzalloc(sizeof(*mi), GFP_KERNEL);
	if (!mi)
		return -ENOMEM;
	mi->index = kdev->id;
	ret = dv_manager_ioctl(DAVINCI_IOCTL_MGMT_INFO, mi);
	if (!ret)
		ret = sysfs_emit(buf, "%u\n", mi->aicore_util);
	kfree(mi);
	return ret;
}
static DEVICE_ATTR_RO(utilization);

static struct attribute *dv_node_attrs[] = {
	&dev_attr_hbm_total.attr,
	&dev_attr_hbm_used.attr,
	&dev_attr_hbm_free.attr,
	&dev_attr_aicores.attr,
	&dev_attr_health.attr,
	&dev_attr_serial.attr,
	&dev_attr_chip_name.attr,
	&dev_attr_task_timeout_ms.attr,
	&dev_attr_utilization.attr,
	NULL,
};

static const struct attribute_group dv_node_group = {
	.attrs = dv_node_attrs,
};

const struct attribute_group *dv_node_groups[] = {
	&dv_node_group,
	NULL,
};
