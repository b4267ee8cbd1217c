// SPDX-License-Identifier: GPL-2.0
/*
 * Fault-injection knobs (and the dispatcher's counters) in debugfs, in the
 * style of netdevsim:
 *
 *   /sys/kernel/debug/davinci/davinciN/
 *     inject_ecc	write "ADDR [SIZE]": the next task touching the region
 *			fails with an ECC error (SIZE 0 or absent: all of HBM)
 *     inject_hang	write "[TIMEOUT_MS]": the next task hangs until the
 *			watchdog (TIMEOUT_MS, or the device's) fails it
 *     inject_lost	write "1": the device is lost to every context
 *     throttle		write a percentage (1-1000) tasks run slower; 0 ends it
 *     reset		write "1": reset the device, disarming every fault
 *     faults		read: armed faults and how often each fired
 *     dispatcher	read: how often the dispatcher slept, how often
 *			because another thread wanted its CPU, the
 *			doorbells that woke it, how often its idle time
 *			grew and shrank, and that time now (as KVM's
 *			halt-poll stats)
 *
 * Each knob is the manager's DAVINCI_IOCTL_MGMT_INJECT or _RESET for that
 * device, so it has the same effect, health change and event (netlink
 * group "events") as npu-smi's fault injection. debugfs is root's only.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "dv_linux.h"

static struct dentry *dv_debugfs_root;

static const char * const dv_fault_names[DAVINCI_FAULT_KINDS] = {
	[DAVINCI_FAULT_ECC] = "ecc",
	[DAVINCI_FAULT_HANG] = "hang",
	[DAVINCI_FAULT_LOST] = "lost",
	[DAVINCI_FAULT_THROTTLE] = "throttle",
};

static int dv_inject(struct dv_kdev *kdev, struct davinci_mgmt_fault *f)
{
	f->index = kdev->id;
	return dv_manager_ioctl_priv(DAVINCI_IOCTL_MGMT_INJECT, f, true);
}

static int dv_knob_ecc(struct dv_kdev *kdev, char *arg)
{
	struct davinci_mgmt_fault f = { .kind = DAVINCI_FAULT_ECC };
	char *addr = strsep(&arg, " \t");

	if (kstrtou64(addr, 0, &f.addr))
		return -EINVAL;
	if (arg && kstrtou64(skip_spaces(arg), 0, &f.size))
		return -EINVAL;
	return dv_inject(kdev, &f);
}

static int dv_knob_hang(struct dv_kdev *kdev, char *arg)
{
	struct davinci_mgmt_fault f = { .kind = DAVINCI_FAULT_HANG };

	if (*arg && kstrtou32(arg, 0, &f.timeout_ms))
		return -EINVAL;
	return dv_inject(kdev, &f);
}

static int dv_knob_lost(struct dv_kdev *kdev, char *arg)
{
	struct davinci_mgmt_fault f = { .kind = DAVINCI_FAULT_LOST };
	bool on;

	if (kstrtobool(arg, &on) || !on)
		return -EINVAL;
	return dv_inject(kdev, &f);
}

static int dv_knob_throttle(struct dv_kdev *kdev, char *arg)
{
	struct davinci_mgmt_fault f = { .kind = DAVINCI_FAULT_THROTTLE };

	if (kstrtou32(arg, 0, &f.level))
		return -EINVAL;
	return dv_inject(kdev, &f);
}

static int dv_knob_reset(struct dv_kdev *kdev, char *arg)
{
	struct davinci_mgmt_reset r = { .index = kdev->id };
	bool on;

	if (kstrtobool(arg, &on) || !on)
		return -EINVAL;
	return dv_manager_ioctl_priv(DAVINCI_IOCTL_MGMT_RESET, &r, true);
}

/* One line of text in, a knob applied; the whole write or an error. */
static ssize_t dv_knob_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos,
			     int (*apply)(struct dv_kdev *kdev, char *arg))
{
	char buf[64];
	int ret;

	if (*ppos || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	ret = apply(file->private_data, strim(buf));
	return ret ? ret : len;
}

#define DV_KNOB(_name)							\
static ssize_t dv_##_name##_write(struct file *file,			\
				  const char __user *ubuf,		\
				  size_t len, loff_t *ppos)		\
{									\
	return dv_knob_write(file, ubuf, len, ppos, dv_knob_##_name);	\
}									\
static const struct file_operations dv_##_name##_fops = {		\
	.owner = THIS_MODULE,						\
	.open = simple_open,						\
	.write = dv_##_name##_write,					\
}

DV_KNOB(ecc);
DV_KNOB(hang);
DV_KNOB(lost);
DV_KNOB(throttle);
DV_KNOB(reset);

static int dv_faults_show(struct seq_file *m, void *unused)
{
	struct dv_kdev *kdev = m->private;
	struct davinci_mgmt_info *mi;
	int kind, ret;

	mi = kzalloc(sizeof(*mi), GFP_KERNEL);
	if (!mi)
		return -ENOMEM;
	mi->index = kdev->id;
	ret = dv_manager_ioctl(DAVINCI_IOCTL_MGMT_INFO, mi);
	if (!ret) {
		for (kind = 0; kind < DAVINCI_FAULT_KINDS; kind++) {
			if (!dv_fault_names[kind])
				continue;
			seq_printf(m, "%-8s armed %u fired %u\n",
				   dv_fault_names[kind],
				   !!(mi->fault_armed & BIT(kind)),
				   mi->faults_fired[kind]);
		}
	}
	kfree(mi);
	return ret;
}
DEFINE_SHOW_ATTRIBUTE(dv_faults);

static int dv_dispatcher_show(struct seq_file *m, void *unused)
{
	struct dv_kdev *kdev = m->private;
	struct dv_dispatch_stats st;

	dv_device_dispatch_stats(kdev->core, &st);
	seq_printf(m,
		   "sleeps %llu\ncpu_wanted %llu\nkicks %llu\ngrows %llu\nshrinks %llu\nidle_ns %llu\n",
		   st.sleeps, st.cpu_wanted, st.kicks, st.grows, st.shrinks,
		   st.idle_ns);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dv_dispatcher);

/**
 * dv_debugfs_add() - create davinciN/ and its knobs
 * @kdev: the bound device
 *
 * Like every debugfs user, ignores failures: the knobs are for testing.
 */
void dv_debugfs_add(struct dv_kdev *kdev)
{
	char name[16];
	struct dentry *dir;

	snprintf(name, sizeof(name), "davinci%u", kdev->id);
	dir = debugfs_create_dir(name, dv_debugfs_root);
	debugfs_create_file("inject_ecc", 0200, dir, kdev, &dv_ecc_fops);
	debugfs_create_file("inject_hang", 0200, dir, kdev, &dv_hang_fops);
	debugfs_create_file("inject_lost", 0200, dir, kdev, &dv_lost_fops);
	debugfs_create_file("throttle", 0200, dir, kdev, &dv_throttle_fops);
	debugfs_create_file("reset", 0200, dir, kdev, &dv_reset_fops);
	debugfs_create_file("faults", 0400, dir, kdev, &dv_faults_fops);
	debugfs_create_file("dispatcher", 0400, dir, kdev,
			    &dv_dispatcher_fops);
	kdev->debugfs = dir;
}

/**
 * dv_debugfs_remove() - remove davinciN/; waits for writers in progress
 * @kdev: the device being unbound or removed
 */
void dv_debugfs_remove(struct dv_kdev *kdev)
{
	debugfs_remove(kdev->debugfs);
	kdev->debugfs = NULL;
}

void dv_debugfs_init(void)
{
	dv_debugfs_root = debugfs_create_dir("davinci", NULL);
}

void dv_debugfs_exit(void)
{
	debugfs_remove(dv_debugfs_root);
	dv_debugfs_root = NULL;
}
