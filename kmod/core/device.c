// SPDX-License-Identifier: GPL-2.0
/*
 * device.c - devices: create, destroy, lost; the device-level ioctls.
 */
#include "dv_internal.h"

#define DV_CHIP_NAME	"Ascend910B-sim"
#define DV_SERIAL_BASE	0x5A000000U

/* Backend name for the manager node: the first device's. */
static char dv_backend_name[DAVINCI_NAME_LEN];
static u32 dv_backend_state;	/* 0 unset, 1 being written, 2 set */

static void dv_arena_name(char *dst, size_t size, u32 index,
			  const char *suffix)
{
	char num[11];
	size_t n;

	n = dv_strscpy(dst, "davinci", size);
	dv_fmt_u32(num, sizeof(num), index);
	n += dv_strscpy(dst + n, num, size - n);
	dv_strscpy(dst + n, suffix, size - n);
}

static void dv_device_free(struct dv_device *dev)
{
	u32 i;

	for (i = 0; i < DAVINCI_ARENAS; i++)
		dv_pool_fini(&dev->pools[i]);
	if (dev->poll_wq)
		os_waitq_destroy(dev->poll_wq);
	if (dev->work_wq)
		os_waitq_destroy(dev->work_wq);
	if (dev->wq)
		os_waitq_destroy(dev->wq);
	if (dev->lock)
		os_mutex_destroy(dev->lock);
	if (dev->task_cache)
		os_cache_destroy(dev->task_cache);
	dv_trace_fini(&dev->trace);
	dv_free(dev);
}

static void dv_device_stop_workers(struct dv_device *dev)
{
	u32 i;

	os_mutex_lock(dev->lock);
	dev->stop = true;
	os_waitq_wake_all(dev->work_wq);
	os_waitq_wake_all(dev->poll_wq);
	os_mutex_unlock(dev->lock);
	if (dev->dispatcher)
		os_thread_join(dev->dispatcher);
	dev->dispatcher = NULL;
	for (i = 0; i < dev->nworkers; i++)
		os_thread_join(dev->workers[i]);
	dev->nworkers = 0;
}

/**
 * dv_device_create() - create a simulated device
 * @cfg: its parameters
 * @out: the device
 *
 * Return: 0, -EINVAL for a bad configuration, or -ENOMEM.
 */
int dv_device_create(const struct dv_device_config *cfg,
		     struct dv_device **out)
{
	struct dv_device *dev;
	char name[40];
	u32 i, expected;
	int ret;

	if (!cfg || !cfg->aicores || cfg->aicores > DV_MAX_AICORES ||
	    !cfg->hbm_bytes || cfg->hbm_bytes % DV_HUGE_SIZE ||
	    !cfg->host_bytes || cfg->host_bytes % DV_PAGE_SIZE ||
	    cfg->hbm_bytes >= (1ULL << DAVINCI_MMAP_ARENA_SHIFT) ||
	    cfg->host_bytes >= (1ULL << DAVINCI_MMAP_ARENA_SHIFT))
		return -EINVAL;
	dev = dv_zalloc(sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->cfg = *cfg;
	dv_strscpy(dev->backend, cfg->backend ? cfg->backend : "lib",
		   sizeof(dev->backend));
	dv_strscpy(dev->backing_dir, cfg->backing_dir, sizeof(dev->backing_dir));
	dev->cfg.backend = dev->backend;
	dev->cfg.backing_dir = cfg->backing_dir ? dev->backing_dir : NULL;
	dv_list_init(&dev->contexts);
	for (i = 0; i < DV_PRIORITIES; i++)
		dv_list_init(&dev->runq[i]);
	dv_list_init(&dev->polled);
	dv_list_init(&dev->helpable);
	dev->poll_idle_ns = (u64)(cfg->poll_idle_us ? cfg->poll_idle_us :
				  DV_POLL_IDLE_US) * 1000ULL;
	dev->poll_idle_max_ns = cfg->poll_idle_max_us ?
		(u64)cfg->poll_idle_max_us * 1000ULL :
		dev->poll_idle_ns * DV_POLL_GROW_MAX;
	if (dev->poll_idle_max_ns < dev->poll_idle_ns)
		dev->poll_idle_max_ns = dev->poll_idle_ns;
	dev->dispatch.idle_ns = dev->poll_idle_ns;
	ret = -ENOMEM;
	dev->lock = os_mutex_create(OS_LOCK_DEVICE);
	dev->wq = os_waitq_create();
	dev->work_wq = os_waitq_create();
	dev->poll_wq = os_waitq_create();
	dv_arena_name(name, sizeof(name), cfg->index, "_task");
	dev->task_cache = os_cache_create(name, sizeof(struct dv_task));
	if (!dev->lock || !dev->wq || !dev->work_wq || !dev->poll_wq ||
	    !dev->task_cache || dv_trace_init(&dev->trace))
		goto fail;
	dv_arena_name(name, sizeof(name), cfg->index, "-hbm");
	ret = dv_pool_init(&dev->pools[DV_ARENA_HBM], DV_ARENA_HBM,
			   cfg->hbm_bytes, DV_HBM_VA_BASE, dev->cfg.backing_dir,
			   name);
	if (ret)
		goto fail;
	dv_arena_name(name, sizeof(name), cfg->index, "-host");
	ret = dv_pool_init(&dev->pools[DV_ARENA_HOST], DV_ARENA_HOST,
			   cfg->host_bytes, DV_HOST_VA_BASE,
			   dev->cfg.backing_dir, name);
	if (ret)
		goto fail;
	for (i = 0; i < cfg->aicores; i++) {
		dv_arena_name(name, sizeof(name), cfg->index, "-aicore");
		dev->workers[i] = os_thread_start(dv_worker_main, dev, name);
		if (!dev->workers[i]) {
			ret = -ENOMEM;
			dv_device_stop_workers(dev);
			goto fail;
		}
		dev->nworkers++;
	}
	dv_arena_name(name, sizeof(name), cfg->index, "-poll");
	dev->dispatcher = os_thread_start(dv_dispatcher_main, dev, name);
	if (!dev->dispatcher) {
		ret = -ENOMEM;
		dv_device_stop_workers(dev);
		goto fail;
	}
	ret = dv_mgmt_register(dev);
	if (ret) {
		dv_device_stop_workers(dev);
		goto fail;
	}
	expected = 0;
	if (__atomic_compare_exchange_n(&dv_backend_state, &expected, 1, false,
					__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		dv_strscpy(dv_backend_name, dev->backend,
			   sizeof(dv_backend_name));
		__atomic_store_n(&dv_backend_state, 2, __ATOMIC_RELEASE);
	}
	dv_stat_add(DV_STAT_DEVICES, 1);
	*out = dev;
	return 0;
fail:
	dv_device_free(dev);
	return ret;
}

/**
 * dv_device_destroy() - destroy a device
 * @dev: the device; its contexts should be closed already (any left are
 *	closed here)
 */
void dv_device_destroy(struct dv_device *dev)
{
	dv_mgmt_unregister(dev);
	for (;;) {
		struct dv_context *ctx = NULL;

		os_mutex_lock(dev->lock);
		if (!dv_list_empty(&dev->contexts))
			ctx = DV_CONTAINER_OF(dev->contexts.next,
					      struct dv_context, node);
		os_mutex_unlock(dev->lock);
		if (!ctx)
			break;
		os_log_warn("device %u destroyed with open contexts\n",
			    dev->cfg.index);
		dv_context_close(ctx);
	}
	dv_device_stop_workers(dev);
	dv_stat_add(DV_STAT_DEVICES, -1);
	dv_device_free(dev);
}

/**
 * dv_context_fail_locked() - fail everything of a context (dev->lock held)
 * @ctx: the context, already marked lost (ctx->lost or dev->lost)
 *
 * Queued tasks complete with DAVINCI_STATUS_DEVICE_LOST; a running task
 * stops at its next chunk boundary with it; the context gets
 * DAVINCI_NOTIFY_DEVICE_LOST.
 */
void dv_context_fail_locked(struct dv_context *ctx)
{
	struct dv_list *sp;

	os_mutex_assert_held(ctx->dev->lock);
	for (sp = ctx->streams.next; sp != &ctx->streams; sp = sp->next) {
		struct dv_stream *s = DV_CONTAINER_OF(sp, struct dv_stream,
						      node);

		/* A busy stream's worker finishes its tasks. */
		if (s->busy || s->dead)
			continue;
		s->parked = false;
		while (!dv_list_empty(&s->tasks)) {
			struct dv_task *t = DV_CONTAINER_OF(s->tasks.next,
							    struct dv_task,
							    node);

			dv_task_complete(s, t, DAVINCI_STATUS_DEVICE_LOST, 0);
		}
	}
	dv_trace_ctx(ctx, DAVINCI_TRACE_CTX_FAIL);
	dv_notify(ctx, DAVINCI_NOTIFY_DEVICE_LOST, 0,
		  DAVINCI_STATUS_DEVICE_LOST, 0, 0);
	os_waitq_wake_all(ctx->wq);
}

/**
 * dv_device_lost_locked() - mark the device lost (dev->lock held)
 * @dev: the device
 *
 * Return: false when it was lost already.
 */
bool dv_device_lost_locked(struct dv_device *dev)
{
	struct dv_list *cp;
	u32 old = dv_mgmt_health(dev);

	os_mutex_assert_held(dev->lock);
	if (dev->lost)
		return false;
	__atomic_store_n(&dev->lost, true, __ATOMIC_RELAXED);
	for (cp = dev->contexts.next; cp != &dev->contexts; cp = cp->next)
		dv_context_fail_locked(DV_CONTAINER_OF(cp, struct dv_context,
						       node));
	os_waitq_wake_all(dev->wq);
	os_waitq_wake_all(dev->work_wq);
	dv_mgmt_event(dev, DAVINCI_MGMT_EV_LOST, 0, DAVINCI_STATUS_DEVICE_LOST,
		      old, 0, 0);
	dv_mgmt_health_update(dev);
	return true;
}

/**
 * dv_device_lost() - the device is gone
 * @dev: the device
 *
 * Running tasks stop at their next chunk boundary with
 * DAVINCI_STATUS_DEVICE_LOST, queued ones complete with it, every context
 * gets DAVINCI_NOTIFY_DEVICE_LOST and -ENODEV from then on. A device
 * removed this way cannot be brought back by DAVINCI_IOCTL_MGMT_RESET.
 */
void dv_device_lost(struct dv_device *dev)
{
	os_mutex_lock(dev->lock);
	dev->removed = true;
	dv_device_lost_locked(dev);
	os_mutex_unlock(dev->lock);
}

/**
 * dv_manager_backend() - backend name the manager node reports
 *
 * Return: the backend of the first device created, or "lib".
 */
const char *dv_manager_backend(void)
{
	return __atomic_load_n(&dv_backend_state, __ATOMIC_ACQUIRE) == 2 ?
	       dv_backend_name : "lib";
}

/**
 * dv_version_fill() - fill a struct davinci_version
 * @v: the struct
 * @backend: backend name
 */
void dv_version_fill(struct davinci_version *v, const char *backend)
{
	memset(v, 0, sizeof(*v));
	v->abi_major = DAVINCI_ABI_MAJOR;
	v->abi_minor = DAVINCI_ABI_MINOR;
	v->features = DAVINCI_FEAT_USER_QUEUES | DAVINCI_FEAT_EVENTS |
		      DAVINCI_FEAT_NOTIFICATIONS | DAVINCI_FEAT_FP16 |
		      DAVINCI_FEAT_BF16 | DAVINCI_FEAT_PINNED_HOST |
		      DAVINCI_FEAT_POLL | DAVINCI_FEAT_MGMT |
		      DAVINCI_FEAT_MAP_HOLD |
		      DAVINCI_FEAT_LIMITS | DAVINCI_FEAT_SQ_POLL |
		      DAVINCI_FEAT_GRAPHS |
		      DAVINCI_FEAT_TRACE | DAVINCI_FEAT_RELU_GRAD |
		      DAVINCI_FEAT_TRAIN_OPS | DAVINCI_FEAT_DISPATCH_STATS |
		      DAVINCI_FEAT_CAPS | DAVINCI_FEAT_PARAMS |
		      DAVINCI_FEAT_STREAM_CONTINUE;
	dv_strscpy(v->driver_version, DV_DRIVER_VERSION,
		   sizeof(v->driver_version));
	dv_strscpy(v->backend, backend, sizeof(v->backend));
}

/**
 * dv_ioctl_get_version() - DAVINCI_IOCTL_GET_VERSION
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_version
 *
 * Return: 0.
 */
int dv_ioctl_get_version(struct dv_context *ctx, void *arg)
{
	os_mutex_assert_held(ctx->dev->lock);
	dv_version_fill(arg, ctx->dev->backend);
	return 0;
}

static void dv_device_fill_info(struct dv_device *dev,
				struct davinci_device_info *d)
{
	memset(d, 0, sizeof(*d));
	d->index = dev->cfg.index;
	d->aicores = dev->cfg.aicores;
	d->hbm_total = dev->pools[DV_ARENA_HBM].total;
	d->hbm_free = dev->pools[DV_ARENA_HBM].free;
	d->host_total = dev->pools[DV_ARENA_HOST].total;
	d->host_free = dev->pools[DV_ARENA_HOST].free;
	d->task_timeout_ms = dev->cfg.task_timeout_ms;
	d->health = dv_mgmt_health(dev);
	dv_strscpy(d->name, DV_CHIP_NAME, sizeof(d->name));
	d->serial[0] = 'D';
	d->serial[1] = 'V';
	dv_fmt_hex32(d->serial + 2, DV_SERIAL_BASE + dev->cfg.index);
}

/**
 * dv_device_query() - device information without a context
 * @dev: the device
 * @info: filled in as DAVINCI_IOCTL_DEVICE_INFO does
 * @busy_ns: if not NULL, total nanoseconds AI cores spent running tasks
 *	(for a utilization figure: its growth over time x aicores)
 *
 * Declared in dv_core.h, for the OS layers: sysfs and the userspace
 * library's dvc_device_info(). Works after device loss too (health then
 * reads DAVINCI_HEALTH_CRITICAL).
 */
void dv_device_query(struct dv_device *dev, struct davinci_device_info *info,
		     u64 *busy_ns)
{
	os_mutex_lock(dev->lock);
	dv_device_fill_info(dev, info);
	if (busy_ns)
		*busy_ns = dev->busy_ns;
	os_mutex_unlock(dev->lock);
}

/**
 * dv_device_query_locked() - dv_device_query() with dev->lock held
 * @dev: the device
 * @info: filled in as DAVINCI_IOCTL_DEVICE_INFO does
 */
void dv_device_query_locked(struct dv_device *dev,
			    struct davinci_device_info *info)
{
	os_mutex_assert_held(dev->lock);
	dv_device_fill_info(dev, info);
}

/**
 * dv_ioctl_device_info() - DAVINCI_IOCTL_DEVICE_INFO
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_device_info
 *
 * Return: 0.
 */
int dv_ioctl_device_info(struct dv_context *ctx, void *arg)
{
	os_mutex_assert_held(ctx->dev->lock);
	dv_device_fill_info(ctx->dev, arg);
	return 0;
}

/**
 * dv_ioctl_mmap_info() - DAVINCI_IOCTL_MMAP_INFO
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_mmap_info
 *
 * Return: 0.
 */
int dv_ioctl_mmap_info(struct dv_context *ctx, void *arg)
{
	struct davinci_mmap_info *m = arg;
	struct dv_device *dev = ctx->dev;
	u32 i;

	os_mutex_assert_held(dev->lock);
	memset(m, 0, sizeof(*m));
	m->method = DAVINCI_MMAP_NODE;
	for (i = 0; i < DAVINCI_ARENAS; i++) {
		const char *path = os_arena_path(dev->pools[i].arena);

		if (!path)
			continue;
		m->method = DAVINCI_MMAP_FILE;
		dv_strscpy(m->arena_path[i], path, DAVINCI_PATH_LEN);
	}
	return 0;
}
