// SPDX-License-Identifier: GPL-2.0
/*
 * davinci.ko: a virtual Da Vinci NPU.
 *
 * Module parameters, init and exit, and the leak report at unload.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "dv_linux.h"

static unsigned int num_devices = 2;
module_param(num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "Devices created at load (0-64, default 2)");

unsigned int dv_param_hbm_mb = 256;
module_param_named(hbm_mb, dv_param_hbm_mb, uint, 0444);
MODULE_PARM_DESC(hbm_mb, "HBM per device in MiB, even (default 256)");

unsigned int dv_param_aicores = 2;
module_param_named(aicores, dv_param_aicores, uint, 0444);
MODULE_PARM_DESC(aicores, "AI cores (worker threads) per device (default 2)");

unsigned int dv_param_task_timeout_ms = 30000;
module_param_named(task_timeout_ms, dv_param_task_timeout_ms, uint, 0444);
MODULE_PARM_DESC(task_timeout_ms,
		 "Watchdog: a task running longer fails, 0 disables (default 30000)");

unsigned int dv_param_poll_idle_us;
module_param_named(poll_idle_us, dv_param_poll_idle_us, uint, 0444);
MODULE_PARM_DESC(poll_idle_us,
		 "How long the dispatcher polls idle rings before it sleeps and asks for a doorbell, in us, at first (default 0: 200)");

unsigned int dv_param_poll_idle_max_us;
module_param_named(poll_idle_max_us, dv_param_poll_idle_max_us, uint, 0444);
MODULE_PARM_DESC(poll_idle_max_us,
		 "How long that idle time may grow while doorbells come soon after the dispatcher slept, in us (default 0: 16 times poll_idle_us)");

unsigned int dv_param_host_mb = DV_HOST_MB;
module_param_named(host_mb, dv_param_host_mb, uint, 0444);
MODULE_PARM_DESC(host_mb,
		 "Pinned host memory and stream rings per device in MiB (default 64)");

/*
 * Limits on open device files (contexts), over all devices: writable at
 * runtime by root, for opens from then on.
 */
static unsigned int dv_param_ctx_process = DV_CTX_PER_PROCESS_DEFAULT;
static unsigned int dv_param_ctx_user = DV_CTX_PER_USER_DEFAULT;

static int dv_param_set_limit(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_uint(val, kp);

	if (!ret)
		dv_core_set_limits(READ_ONCE(dv_param_ctx_process),
				   READ_ONCE(dv_param_ctx_user));
	return ret;
}

static const struct kernel_param_ops dv_limit_ops = {
	.set = dv_param_set_limit,
	.get = param_get_uint,
};

module_param_cb(max_contexts_per_process, &dv_limit_ops,
		&dv_param_ctx_process, 0644);
MODULE_PARM_DESC(max_contexts_per_process,
		 "Open device files one process may hold, all devices; 0: no limit; beyond: EMFILE (default 64)");
module_param_cb(max_contexts_per_user, &dv_limit_ops, &dv_param_ctx_user,
		0644);
MODULE_PARM_DESC(max_contexts_per_user,
		 "Open device files one user may hold, all devices; 0: no limit; beyond: EUSERS (default 256)");

atomic_long_t dv_live_files = ATOMIC_LONG_INIT(0);
atomic_long_t dv_live_vmas = ATOMIC_LONG_INIT(0);
atomic_long_t dv_live_kdevs = ATOMIC_LONG_INIT(0);

static void dv_leak_report(void)
{
	long files = atomic_long_read(&dv_live_files);
	long vmas = atomic_long_read(&dv_live_vmas);
	long kdevs = atomic_long_read(&dv_live_kdevs);
	struct dv_stats s;

	dv_core_stats(&s);
	if (!s.objects && !s.devices && !s.contexts && !s.buffers &&
	    !s.streams && !s.events && !s.tasks && !s.mappings &&
	    !s.hbm_used && !s.host_used && !files && !vmas && !kdevs) {
		pr_info("davinci: unloaded, all allocations returned\n");
		return;
	}
	pr_err("davinci: leak at unload: objects=%llu devices=%llu contexts=%llu buffers=%llu streams=%llu events=%llu tasks=%llu mappings=%llu hbm_used=%llu host_used=%llu files=%ld vmas=%ld kdevs=%ld\n",
	       s.objects, s.devices, s.contexts, s.buffers, s.streams,
	       s.events, s.tasks, s.mappings, s.hbm_used, s.host_used,
	       files, vmas, kdevs);
}

static int __init dv_init(void)
{
	unsigned int i;
	int ret;

	if (num_devices > DV_MAX_DEVICES) {
		pr_err("davinci: num_devices %u > %u\n", num_devices,
		       DV_MAX_DEVICES);
		return -EINVAL;
	}
	if (!dv_param_host_mb || dv_param_host_mb % 2) {
		pr_err("davinci: host_mb must be even and non-zero\n");
		return -EINVAL;
	}

	dv_core_set_limits(dv_param_ctx_process, dv_param_ctx_user);
	ret = dv_simd_init();
	if (ret)
		return ret;
	dv_trace_linux_init();
	ret = dv_netlink_init();
	if (ret)
		goto err_simd;
	dv_debugfs_init();
	ret = dv_cdev_init();
	if (ret)
		goto err_netlink;
	ret = dv_bus_init();
	if (ret)
		goto err_cdev;

	for (i = 0; i < num_devices; i++) {
		ret = dv_bus_add_device(i, dv_param_hbm_mb, dv_param_aicores);
		if (ret) {
			pr_err("davinci: cannot add device %u: %d\n", i, ret);
			goto err_bus;
		}
	}
	pr_info("davinci: %s loaded, %u devices, %u MiB HBM, %u AI cores each\n",
		DV_DRIVER_VERSION, num_devices, dv_param_hbm_mb,
		dv_param_aicores);
	return 0;

err_bus:
	dv_bus_exit();
err_cdev:
	dv_cdev_exit();
err_netlink:
	dv_debugfs_exit();
	dv_netlink_exit();
	dv_trace_linux_exit();
	dv_core_exit();
err_simd:
	dv_simd_exit();
	return ret;
}

static void __exit dv_exit(void)
{
	dv_bus_exit();
	dv_cdev_exit();
	dv_debugfs_exit();
	dv_netlink_exit();
	dv_trace_linux_exit();
	dv_core_exit();
	dv_simd_exit();
	dv_leak_report();
}

module_init(dv_init);
module_exit(dv_exit);

MODULE_DESCRIPTION("Virtual Da Vinci (Ascend) NPU");
MODULE_AUTHOR("davinci project");
MODULE_LICENSE("GPL");
MODULE_VERSION(DV_DRIVER_VERSION);
