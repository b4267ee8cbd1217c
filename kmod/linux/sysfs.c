// SPDX-License-Identifier: GPL-2.0
/*
 * Per-device attributes: /sys/class/davinci/davinciN/...
 *
 * The values come from the core through DAVINCI_IOCTL_DEVICE_INFO on a
 * short-lived internal context, so sysfs reports exactly what the ioctl
 * ABI reports. The node (and with it these files) is removed before the
 * device is marked lost, so a read never sees a dead device.
 */
#include <linux/device.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "dv_linux.h"

static int dv_node_info(struct device *node, struct davinci_device_info *info)
{
	struct dv_kdev *kdev = dev_get_drvdata(node);
	struct dv_context *ctx;
	int ret;

	if (!kdev)
		return -ENODEV;
	/* Not counted against the open limits: no process holds it. */
	ret = dv_context_open(kdev->core, 0, DV_UID_NONE, &ctx);
	if (ret)
		return ret;
	memset(info, 0, sizeof(*info));
	ret = dv_ioctl(ctx, DAVINCI_IOCTL_DEVICE_INFO, info);
	dv_context_close(ctx);
	return ret;
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
