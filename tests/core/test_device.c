// SPDX-License-Identifier: GPL-2.0
/*
 * test_device.c - tests of the device: version and info, configuration, backing
 * files, ioctl copy rules, context limits.
 */
#define _GNU_SOURCE
#include "fixtures.h"

void test_version_info(void)
{
	struct fixture fx;
	struct davinci_version v;
	struct davinci_device_info di;
	struct davinci_mmap_info mi;

	REQUIRE(fixture_init(&fx, 0) == 0);
	memset(&v, 0xff, sizeof(v));
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_GET_VERSION, &v), 0);
	CHECK_EQ(v.abi_major, DAVINCI_ABI_MAJOR);
	CHECK_EQ(v.abi_minor, DAVINCI_ABI_MINOR);
	CHECK(v.features & DAVINCI_FEAT_USER_QUEUES);
	CHECK(!strcmp(v.driver_version, DV_DRIVER_VERSION));
	CHECK(!strcmp(v.backend, "lib"));
	memset(&v, 0xff, sizeof(v));
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_GET_VERSION, &v), 0);
	CHECK_EQ(v.abi_major, DAVINCI_ABI_MAJOR);
	CHECK(!strcmp(v.driver_version, DV_DRIVER_VERSION));
	CHECK(!strcmp(v.backend, "lib"));
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_DEVICE_INFO, &di), -ENOTTY);
	CHECK_EQ(dvc_manager_ioctl(_IOWR('x', 0, int), &di), -ENOTTY);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_DEVICE_INFO, &di), 0);
	CHECK_EQ(di.index, 0);
	CHECK_EQ(di.aicores, 2);
	CHECK_EQ(di.hbm_total, HBM_BYTES);
	CHECK_EQ(di.hbm_free, HBM_BYTES);
	CHECK_EQ(di.host_total, HOST_BYTES);
	CHECK_EQ(di.health, DAVINCI_HEALTH_OK);
	CHECK(!strcmp(di.name, "Ascend910B-sim"));
	CHECK(!strcmp(di.serial, "DV5A000000"));
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MMAP_INFO, &mi), 0);
	CHECK_EQ(mi.method, DAVINCI_MMAP_NODE);
	{
		struct davinci_device_info d2;
		uint64_t busy = 1;

		CHECK_EQ(dvc_device_info(fx.dev, &d2, &busy), 0);
		CHECK(!memcmp(&d2, &di, sizeof(di)));
		CHECK_EQ(busy, 0);
	}
	fixture_exit(&fx);
}

void test_backing_files(void)
{
	char dir[] = "/tmp/dvtest-XXXXXX";
	struct dv_device_config cfg = fx_device_config(3, 0);
	struct dv_device *dev;
	struct dv_context *ctx;
	struct davinci_mmap_info mi;
	struct buf b;
	struct stat st;
	uint8_t *fmap;
	int fd;

	REQUIRE(mkdtemp(dir));
	cfg.aicores = 1;
	cfg.hbm_bytes = 4 * MiB;
	cfg.host_bytes = 1 * MiB;
	cfg.backing_dir = dir;
	cfg.backend = "fuse";
	dev = dvc_device_create(&cfg);
	REQUIRE(dev);
	ctx = dvc_context_open(dev, 1);
	REQUIRE(ctx);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MMAP_INFO, &mi), 0);
	CHECK_EQ(mi.method, DAVINCI_MMAP_FILE);
	CHECK(strstr(mi.arena_path[0], "davinci3-hbm") != NULL);
	CHECK(strstr(mi.arena_path[1], "davinci3-host") != NULL);
	CHECK_EQ(stat(mi.arena_path[0], &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0600);
	CHECK_EQ(st.st_size, 4 * MiB);
	REQUIRE(buf_alloc(ctx, 8192, DAVINCI_MEM_NORMAL_ONLY, &b) == 0);
	b.p[100] = 0x5a;
	fd = open(mi.arena_path[0], O_RDWR);
	REQUIRE(fd >= 0);
	fmap = mmap(NULL, 4 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	REQUIRE(fmap != MAP_FAILED);
	CHECK_EQ(fmap[DAVINCI_MMAP_ARENA_OFFSET(b.a.mmap_offset) + 100], 0x5a);
	fmap[DAVINCI_MMAP_ARENA_OFFSET(b.a.mmap_offset) + 101] = 0xa5;
	CHECK_EQ(b.p[101], 0xa5);
	munmap(fmap, 4 * MiB);
	buf_free(ctx, &b);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(access(mi.arena_path[0], F_OK) != 0);
	rmdir(dir);
	CHECK(stats_zero());
}

/* dvc_device_create() of the fixtures' device with one field changed */
#define CREATE_WITH(field, value) ({					\
	struct dv_device_config _cfg = fx_device_config(0, 0);		\
									\
	_cfg.field = (value);						\
	dvc_device_create(&_cfg);					\
})

void test_device_config(void)
{
	CHECK(dvc_device_create(NULL) == NULL);
	CHECK_EQ(errno, EINVAL);
	CHECK(CREATE_WITH(aicores, 0) == NULL);
	CHECK_EQ(errno, EINVAL);
	CHECK(CREATE_WITH(aicores, 65) == NULL);
	CHECK(CREATE_WITH(hbm_bytes, MiB) == NULL);
	CHECK(CREATE_WITH(host_bytes, 100) == NULL);
	CHECK(CREATE_WITH(hbm_bytes, 0) == NULL);
	CHECK(CREATE_WITH(backing_dir, "/nonexistent/dir") == NULL);
	CHECK(stats_zero());
}

/*
 * The size rules of every backend's ioctl entry (dv_ioctl_from_caller):
 * out fields are written on success only, a shorter (older) or longer
 * (newer) struct than the core's is accepted and only the common part is
 * copied, NULL is -EFAULT.
 */
void test_ioctl_copy_rules(void)
{
	struct fixture fx;
	struct davinci_task gate = t_nop(20000000);
	struct davinci_stream_wait w;
	struct davinci_task_query q;
	struct {
		struct davinci_mem_alloc a;
		uint64_t newer;
	} longer;
	struct stream s;
	uint64_t last;

	REQUIRE(fixture_init_stream(&fx, 0, &s) == 0);
	REQUIRE(submit(fx.ctx, &s, &gate, 1, &last) == 0);

	/* a wait that times out leaves the caller's struct as it was */
	memset(&w, 0, sizeof(w));
	w.stream_id = s.c.stream_id;
	w.status = 0x5a5a;
	w.completed_seq = 0xdead;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_WAIT, &w), -ETIMEDOUT);
	CHECK_EQ(w.status, 0x5a5a);
	CHECK_EQ(w.completed_seq, 0xdead);

	/* a newer caller's longer struct: its tail is neither read nor written */
	memset(&longer, 0, sizeof(longer));
	longer.a.size = 4096;
	longer.newer = 0x77;
	CHECK_EQ(dvc_ioctl(fx.ctx, _IOC(_IOC_READ | _IOC_WRITE, DAVINCI_IOCTL_BASE,
				     _IOC_NR(DAVINCI_IOCTL_MEM_ALLOC),
				     sizeof(longer)), &longer), 0);
	CHECK(longer.a.handle != 0 && longer.a.alloc_size == 4096);
	CHECK_EQ(longer.newer, 0x77);
	/* an older caller's shorter struct: nothing past it is written */
	memset(&q, 0, sizeof(q));
	q.stream_id = s.c.stream_id;
	q.seq = last;
	q.state = 0xee;
	CHECK_EQ(dvc_ioctl(fx.ctx, _IOC(_IOC_READ | _IOC_WRITE, DAVINCI_IOCTL_BASE,
				     _IOC_NR(DAVINCI_IOCTL_TASK_QUERY),
				     offsetof(struct davinci_task_query, seq) +
				     sizeof(q.seq)), &q), 0);
	CHECK_EQ(q.state, 0xee);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_WAIT, NULL), -EFAULT);

	q.seq = last;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_TASK_CANCEL, &q), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 10000, NULL), 0);
	fixture_exit(&fx);
}

/*
 * Limits on open contexts, over all devices: per process (-EMFILE) and
 * per user (-EUSERS); pid 0 and DV_UID_NONE are not counted; a refused or
 * failed open leaves no slot taken; GET_LIMITS reports the values on the
 * manager and on a device node.
 */
void test_context_limits(void)
{
	struct dv_device *d0 = mkdev_idx(0, 0), *d1 = mkdev_idx(1, 0);
	struct dv_context *c[16], *x;
	struct davinci_limits l;
	int i, n = 0;

	REQUIRE(d0 && d1);
	memset(&l, 0xff, sizeof(l));
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_GET_LIMITS, &l), 0);
	CHECK_EQ(l.contexts_per_process, 64);
	CHECK_EQ(l.contexts_per_user, 256);
	CHECK_EQ(l.streams_per_context, 256);
	CHECK_EQ(l.events_per_context, 4096);
	CHECK_EQ(l.tasks_per_stream, 16384);
	CHECK_EQ(l.notifications_per_context, 1024);
	for (i = 0; i < 5; i++)
		CHECK_EQ(l.reserved[i], 0);

	CHECK_EQ(dvc_set_limits(3, 5), 0);
	CHECK_EQ(dvc_set_limits(1LL << 32, 5), -EINVAL);
	CHECK_EQ(dvc_set_limits(3, -2), -EINVAL);
	/* Per process, over both devices. */
	c[n++] = dvc_context_open_as(d0, 100, 1000);
	c[n++] = dvc_context_open_as(d1, 100, 1000);
	c[n++] = dvc_context_open_as(d0, 100, 1000);
	for (i = 0; i < n; i++)
		REQUIRE(c[i]);
	memset(&l, 0, sizeof(l));
	CHECK_EQ(dvc_ioctl(c[0], DAVINCI_IOCTL_GET_LIMITS, &l), 0);
	CHECK_EQ(l.contexts_per_process, 3);
	CHECK_EQ(l.contexts_per_user, 5);
	errno = 0;
	CHECK(dvc_context_open_as(d1, 100, 1000) == NULL);
	CHECK_EQ(errno, EMFILE);
	CHECK(dvc_context_open(d1, 100) == NULL);
	CHECK_EQ(errno, EMFILE);
	/* Per user: another process of the same user gets two more. */
	c[n++] = dvc_context_open_as(d1, 101, 1000);
	c[n++] = dvc_context_open_as(d0, 101, 1000);
	REQUIRE(c[3] && c[4]);
	errno = 0;
	CHECK(dvc_context_open_as(d0, 102, 1000) == NULL);
	CHECK_EQ(errno, EUSERS);
	/* The process limit is reported first when both apply. */
	CHECK(dvc_context_open_as(d0, 100, 1000) == NULL);
	CHECK_EQ(errno, EMFILE);
	/* Other users, uncounted users and unknown processes go on. */
	c[n++] = dvc_context_open_as(d0, 102, 1001);
	c[n++] = dvc_context_open(d0, 103);
	c[n++] = dvc_context_open_as(d0, 0, 1002);
	c[n++] = dvc_context_open_as(d0, 0, 1002);
	c[n++] = dvc_context_open_as(d0, 0, 1002);
	c[n++] = dvc_context_open_as(d0, 0, 1002);
	for (i = 5; i < n; i++)
		REQUIRE(c[i]);
	/* Closing one lets the user open one again, on any device. */
	dvc_context_close(c[3]);
	c[3] = dvc_context_open_as(d1, 102, 1000);
	CHECK(c[3] != NULL);
	CHECK(dvc_context_open_as(d1, 102, 1000) == NULL);
	CHECK_EQ(errno, EUSERS);
	/* A failed open leaves no slot taken. */
	dvc_context_close(c[4]);
	os_posix_fault_zalloc_countdown = 2;		/* the notification queue */
	CHECK(dvc_context_open_as(d0, 101, 1000) == NULL);
	CHECK_EQ(errno, ENOMEM);
	os_posix_fault_zalloc_countdown = 0;
	dvc_device_lost(d1);
	CHECK(dvc_context_open_as(d1, 101, 1000) == NULL);
	CHECK_EQ(errno, ENODEV);
	c[4] = dvc_context_open_as(d0, 101, 1000);
	CHECK(c[4] != NULL);
	/* Lowering a limit keeps what is open; 0 lifts it. */
	CHECK_EQ(dvc_set_limits(1, 0), 0);
	CHECK(dvc_context_open_as(d0, 101, 1000) == NULL);
	CHECK_EQ(errno, EMFILE);
	x = dvc_context_open_as(d0, 104, 1000);
	CHECK(x != NULL);
	dvc_context_close(x);
	CHECK_EQ(dvc_set_limits(0, 0), 0);
	x = dvc_context_open_as(d0, 100, 1000);
	CHECK(x != NULL);
	dvc_context_close(x);

	CHECK_EQ(dvc_set_limits(-1, -1), 0);
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_GET_LIMITS, &l), 0);
	CHECK_EQ(l.contexts_per_process, 64);
	CHECK_EQ(l.contexts_per_user, 256);
	for (i = 0; i < n; i++)
		dvc_context_close(c[i]);
	dvc_device_destroy(d0);
	dvc_device_destroy(d1);
	CHECK(stats_zero());
}
