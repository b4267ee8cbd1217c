// SPDX-License-Identifier: GPL-2.0
/*
 * test_core.c - tests of the device core through libdavinci_core.
 *
 * Usage: test_core [substring-of-test-name]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dv_core.h"
#include "libdavinci_core.h"
#include "dvc_test.h"
#include "harness.h"

#define MiB (1ULL << 20)
#define HBM_BYTES (64 * MiB)
#define HOST_BYTES (16 * MiB)

/* ---- helpers ---------------------------------------------------------- */

static struct dv_device *mkdev(uint32_t timeout_ms)
{
	return dvc_device_create(0, 2, HBM_BYTES, HOST_BYTES, timeout_ms, NULL,
				 "lib");
}

static int stats_zero(void)
{
	struct dv_stats st;

	dvc_stats(&st);
	if (st.objects || st.devices || st.contexts || st.buffers ||
	    st.streams || st.events || st.tasks || st.mappings ||
	    st.hbm_used || st.host_used) {
		fprintf(stdout, "  stats: objects %llu devices %llu contexts %llu "
			"buffers %llu streams %llu events %llu tasks %llu "
			"mappings %llu hbm %llu host %llu\n",
			(unsigned long long)st.objects,
			(unsigned long long)st.devices,
			(unsigned long long)st.contexts,
			(unsigned long long)st.buffers,
			(unsigned long long)st.streams,
			(unsigned long long)st.events,
			(unsigned long long)st.tasks,
			(unsigned long long)st.mappings,
			(unsigned long long)st.hbm_used,
			(unsigned long long)st.host_used);
		return 0;
	}
	return 1;
}

struct buf {
	struct davinci_mem_alloc a;
	struct dv_mapping *map;
	uint8_t *p;
};

static int buf_alloc(struct dv_context *ctx, uint64_t size, uint32_t flags,
		     struct buf *b)
{
	int ret;

	memset(b, 0, sizeof(*b));
	b->a.size = size;
	b->a.flags = flags;
	ret = dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &b->a);
	if (ret)
		return ret;
	b->map = dvc_mmap(ctx, b->a.mmap_offset, b->a.alloc_size);
	if (!b->map)
		return -errno;
	b->p = dvc_mapping_addr(b->map);
	return 0;
}

static void buf_free(struct dv_context *ctx, struct buf *b)
{
	struct davinci_mem_free f = { .handle = b->a.handle };

	if (b->map)
		dvc_munmap(b->map);
	b->map = NULL;
	dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_FREE, &f);
}

struct stream {
	struct davinci_stream_create c;
	struct dv_mapping *sqm, *cqm;
	struct davinci_ring_header *sq, *cq;
	uint32_t tail;
};

static int stream_create(struct dv_context *ctx, uint32_t prio, uint32_t sqe,
			 uint32_t cqe, struct stream *s)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->c.priority = prio;
	s->c.sq_entries = sqe;
	s->c.cq_entries = cqe;
	ret = dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_CREATE, &s->c);
	if (ret)
		return ret;
	s->sqm = dvc_mmap(ctx, s->c.sq_mmap_offset, s->c.sq_size);
	s->cqm = dvc_mmap(ctx, s->c.cq_mmap_offset, s->c.cq_size);
	if (!s->sqm || !s->cqm)
		return -ENOMEM;
	s->sq = dvc_mapping_addr(s->sqm);
	s->cq = dvc_mapping_addr(s->cqm);
	return 0;
}

static void stream_unmap(struct stream *s)
{
	if (s->sqm)
		dvc_munmap(s->sqm);
	if (s->cqm)
		dvc_munmap(s->cqm);
	s->sqm = s->cqm = NULL;
}

static void stream_destroy(struct dv_context *ctx, struct stream *s)
{
	struct davinci_stream_id id = { .stream_id = s->c.stream_id };

	stream_unmap(s);
	dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_DESTROY, &id);
}

static struct davinci_task *sq_slot(struct stream *s, uint32_t idx)
{
	return (struct davinci_task *)((uint8_t *)s->sq +
		DAVINCI_RING_ENTRIES_OFFSET +
		(idx & (s->c.sq_entries - 1)) * sizeof(struct davinci_task));
}

static struct davinci_completion *cq_slot(struct stream *s, uint32_t idx)
{
	return (struct davinci_completion *)((uint8_t *)s->cq +
		DAVINCI_RING_ENTRIES_OFFSET +
		(idx & (s->c.cq_entries - 1)) *
		sizeof(struct davinci_completion));
}

/* Wait (at most 10 s after @t0) until the core holds no task at all. */
static void wait_tasks_gone(double t0)
{
	struct dv_stats st;

	for (;;) {
		dvc_stats(&st);
		if (!st.tasks || th_now() - t0 > 10)
			return;
		usleep(1000);
	}
}

/* Write @n tasks and ring the doorbell; returns the doorbell's result. */
static int submit(struct dv_context *ctx, struct stream *s,
		  const struct davinci_task *t, uint32_t n, uint64_t *last)
{
	struct davinci_doorbell d = { 0 };
	uint32_t i;
	int ret;

	if (last)
		*last = 0;
	for (i = 0; i < n; i++)
		*sq_slot(s, s->tail + i) = t[i];
	d.stream_id = s->c.stream_id;
	d.sq_tail = s->tail + n;
	ret = dvc_ioctl(ctx, DAVINCI_IOCTL_DOORBELL, &d);
	if (!ret) {
		s->tail += n;
		if (last)
			*last = d.last_seq;
	}
	return ret;
}

static int swait(struct dv_context *ctx, struct stream *s, uint64_t seq,
		 uint32_t timeout_ms, struct davinci_stream_wait *out)
{
	struct davinci_stream_wait w = {
		.stream_id = s->c.stream_id,
		.timeout_ms = timeout_ms,
		.seq = seq,
	};
	int ret = dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_WAIT, &w);

	if (out)
		*out = w;
	return ret;
}

static int tquery(struct dv_context *ctx, struct stream *s, uint64_t seq,
		  struct davinci_task_query *q)
{
	memset(q, 0, sizeof(*q));
	q->stream_id = s->c.stream_id;
	q->seq = seq;
	return dvc_ioctl(ctx, DAVINCI_IOCTL_TASK_QUERY, q);
}

/* Wait until task @seq of @s has left the queue (a worker took it). */
static void wait_running(struct dv_context *ctx, struct stream *s,
			 uint64_t seq)
{
	struct davinci_task_query q;
	int i;

	for (i = 0; i < 5000; i++) {
		if (tquery(ctx, s, seq, &q) || q.state != DAVINCI_TASK_QUEUED)
			return;
		usleep(1000);
	}
}

static uint32_t tstatus(struct dv_context *ctx, struct stream *s,
			uint64_t seq)
{
	struct davinci_task_query q;

	if (tquery(ctx, s, seq, &q) || q.state != DAVINCI_TASK_DONE)
		return 0xffff;
	return q.status;
}

static int stream_reset(struct dv_context *ctx, struct stream *s)
{
	struct davinci_stream_id id = { .stream_id = s->c.stream_id };

	return dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_RESET, &id);
}

static struct davinci_task t_nop(uint64_t us)
{
	struct davinci_task t = { .opcode = DAVINCI_OP_NOP, .count = us };

	return t;
}

static struct davinci_task t_memcpy(uint64_t dst, uint64_t src, uint64_t n)
{
	struct davinci_task t = { .opcode = DAVINCI_OP_MEMCPY, .dst = dst,
				  .src0 = src, .count = n };

	return t;
}

static struct davinci_task t_memset(uint64_t dst, uint8_t v, uint64_t n)
{
	struct davinci_task t = { .opcode = DAVINCI_OP_MEMSET, .dst = dst,
				  .imm = v, .count = n };

	return t;
}

static struct davinci_task t_event(uint16_t op, uint32_t ev)
{
	struct davinci_task t = { .opcode = op, .event_id = ev };

	return t;
}

static int mem_info(struct dv_context *ctx, uint32_t flags,
		    struct davinci_mem_info *m)
{
	memset(m, 0, sizeof(*m));
	m->flags = flags;
	return dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_INFO, m);
}

static int all_set(const uint8_t *p, uint8_t v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

/* ---- tests ------------------------------------------------------------ */

static void test_version_info(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx;
	struct davinci_version v;
	struct davinci_device_info di;
	struct davinci_mmap_info mi;

	REQUIRE(dev);
	ctx = dvc_context_open(dev, 1);
	REQUIRE(ctx);
	memset(&v, 0xff, sizeof(v));
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_GET_VERSION, &v), 0);
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
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_DEVICE_INFO, &di), 0);
	CHECK_EQ(di.index, 0);
	CHECK_EQ(di.aicores, 2);
	CHECK_EQ(di.hbm_total, HBM_BYTES);
	CHECK_EQ(di.hbm_free, HBM_BYTES);
	CHECK_EQ(di.host_total, HOST_BYTES);
	CHECK_EQ(di.health, DAVINCI_HEALTH_OK);
	CHECK(!strcmp(di.name, "Ascend910B-sim"));
	CHECK(!strcmp(di.serial, "DV5A000000"));
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MMAP_INFO, &mi), 0);
	CHECK_EQ(mi.method, DAVINCI_MMAP_NODE);
	{
		struct davinci_device_info d2;
		uint64_t busy = 1;

		CHECK_EQ(dvc_device_info(dev, &d2, &busy), 0);
		CHECK(!memcmp(&d2, &di, sizeof(di)));
		CHECK_EQ(busy, 0);
	}
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_backing_files(void)
{
	char dir[] = "/tmp/dvtest-XXXXXX";
	struct dv_device *dev;
	struct dv_context *ctx;
	struct davinci_mmap_info mi;
	struct buf b;
	struct stat st;
	uint8_t *fmap;
	int fd;

	REQUIRE(mkdtemp(dir));
	dev = dvc_device_create(3, 1, 4 * MiB, 1 * MiB, 0, dir, "fuse");
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

static void test_alloc_basic(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct davinci_mem_alloc a;
	struct davinci_mem_query q;
	struct davinci_mem_info mi;
	struct davinci_mem_free f;
	uint64_t h1, addr1;

	REQUIRE(ctx);
	memset(&a, 0, sizeof(a));
	a.size = 1;
	a.flags = DAVINCI_MEM_NORMAL_ONLY;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), 0);
	CHECK_EQ(a.alloc_size, 4096);
	CHECK(a.handle != 0);
	CHECK_EQ(a.dev_addr % 4096, 0);
	CHECK_EQ(DAVINCI_MMAP_ARENA(a.mmap_offset), 0);
	h1 = a.handle;
	addr1 = a.dev_addr;

	memset(&a, 0, sizeof(a));
	a.size = 3 * MiB;	/* HUGE_FIRST */
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), 0);
	CHECK_EQ(a.alloc_size, 4 * MiB);
	CHECK_EQ(a.dev_addr % (2 * MiB), 0);

	memset(&a, 0, sizeof(a));
	a.size = 5;
	a.flags = DAVINCI_MEM_HUGE_ONLY;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), 0);
	CHECK_EQ(a.alloc_size, 2 * MiB);
	CHECK_EQ(a.dev_addr % (2 * MiB), 0);

	memset(&a, 0, sizeof(a));
	a.size = 10000;
	a.flags = DAVINCI_MEM_HOST;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), 0);
	CHECK_EQ(a.alloc_size, 12288);
	CHECK_EQ(DAVINCI_MMAP_ARENA(a.mmap_offset), 1);

	CHECK_EQ(mem_info(ctx, 0, &mi), 0);
	CHECK_EQ(mi.total, HBM_BYTES);
	CHECK_EQ(mi.ctx_used, 4096 + 4 * MiB + 2 * MiB);
	CHECK_EQ(mi.ctx_allocations, 3);
	CHECK_EQ(mi.free, HBM_BYTES - mi.ctx_used);
	CHECK_EQ(mem_info(ctx, DAVINCI_MEM_HOST, &mi), 0);
	CHECK_EQ(mi.ctx_used, 12288);
	CHECK_EQ(mi.ctx_allocations, 1);

	memset(&q, 0, sizeof(q));
	q.handle = h1;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_QUERY, &q), 0);
	CHECK_EQ(q.dev_addr, addr1);
	CHECK_EQ(q.size, 1);
	CHECK_EQ(q.alloc_size, 4096);
	CHECK_EQ(q.flags, DAVINCI_MEM_NORMAL_ONLY);
	memset(&q, 0, sizeof(q));
	q.dev_addr = addr1 + 4000;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_QUERY, &q), 0);
	CHECK_EQ(q.handle, h1);
	CHECK_EQ(q.dev_addr, addr1);
	memset(&q, 0, sizeof(q));
	q.dev_addr = 0x1234;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_QUERY, &q), -ENOENT);

	f.handle = h1;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_FREE, &f), -ENOENT);
	memset(&q, 0, sizeof(q));
	q.handle = h1;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_QUERY, &q), -ENOENT);
	/* Handles are not reused. */
	memset(&a, 0, sizeof(a));
	a.size = 4096;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), 0);
	CHECK(a.handle != h1);
	CHECK_EQ(a.dev_addr, addr1);	/* first fit reuses the range */

	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_fragmentation_oom(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct davinci_mem_alloc a[16], big;
	struct davinci_mem_info before, after;
	struct dv_stats s1, s2;
	struct davinci_mem_free f;
	int i;

	REQUIRE(ctx);
	for (i = 0; i < 16; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		a[i].size = 4 * MiB;
		a[i].flags = DAVINCI_MEM_NORMAL_ONLY;
		CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &a[i]), 0);
	}
	CHECK_EQ(mem_info(ctx, 0, &before), 0);
	CHECK_EQ(before.free, 0);
	CHECK_EQ(before.largest_free, 0);
	memset(&big, 0, sizeof(big));
	big.size = 4096;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), -ENOMEM);
	/* Free every other one: 32 MiB free, but fragmented. */
	for (i = 0; i < 16; i += 2) {
		f.handle = a[i].handle;
		CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
	}
	CHECK_EQ(mem_info(ctx, 0, &before), 0);
	CHECK_EQ(before.free, 32 * MiB);
	CHECK_EQ(before.largest_free, 4 * MiB);
	CHECK_EQ(before.ctx_allocations, 8);
	dvc_stats(&s1);
	/* OOM from fragmentation, from size and from overflow: no change. */
	memset(&big, 0, sizeof(big));
	big.size = 8 * MiB;
	big.flags = DAVINCI_MEM_NORMAL_ONLY;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), -ENOMEM);
	CHECK_EQ(big.handle, 0);
	big.size = 128 * MiB;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), -ENOMEM);
	big.size = UINT64_MAX;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), -ENOMEM);
	big.size = UINT64_MAX - 4095;
	big.flags = DAVINCI_MEM_HUGE_ONLY;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), -ENOMEM);
	big.size = 4 * MiB + 1;
	big.flags = DAVINCI_MEM_HUGE_FIRST;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), -ENOMEM);
	CHECK_EQ(mem_info(ctx, 0, &after), 0);
	CHECK(!memcmp(&before, &after, sizeof(before)));
	dvc_stats(&s2);
	CHECK(!memcmp(&s1, &s2, sizeof(s1)));
	/* An exact fit still works; HUGE_FIRST falls back to 4 KiB. */
	big.size = 4 * MiB;
	big.flags = DAVINCI_MEM_HUGE_FIRST;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), 0);
	CHECK_EQ(big.dev_addr, a[0].dev_addr);
	f.handle = big.handle;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
	/* Free the rest: ranges coalesce into one. */
	for (i = 1; i < 16; i += 2) {
		f.handle = a[i].handle;
		CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
	}
	CHECK_EQ(mem_info(ctx, 0, &after), 0);
	CHECK_EQ(after.free, HBM_BYTES);
	CHECK_EQ(after.largest_free, HBM_BYTES);
	CHECK_EQ(after.ctx_used, 0);
	CHECK_EQ(after.ctx_allocations, 0);
	big.size = HBM_BYTES;
	big.flags = DAVINCI_MEM_HUGE_ONLY;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), 0);

	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

/* Random alloc/free against a shadow model of the free byte count. */
static void test_alloc_random(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct davinci_mem_alloc a[64];
	struct davinci_mem_info mi;
	uint64_t used = 0;
	unsigned int seed = 12345;
	int i, iter;

	REQUIRE(ctx);
	memset(a, 0, sizeof(a));
	for (iter = 0; iter < 4000; iter++) {
		i = rand_r(&seed) % 64;
		if (a[i].handle) {
			struct davinci_mem_free f = { .handle = a[i].handle };

			CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
			used -= a[i].alloc_size;
			a[i].handle = 0;
		} else {
			int ret;

			a[i].size = 1 + (uint64_t)(rand_r(&seed) % (3 * MiB));
			a[i].flags = (uint32_t)(rand_r(&seed) % 3);
			ret = dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &a[i]);
			CHECK(ret == 0 || ret == -ENOMEM);
			if (!ret) {
				used += a[i].alloc_size;
				CHECK(a[i].alloc_size >= a[i].size);
			} else {
				a[i].handle = 0;
			}
		}
		CHECK_EQ(mem_info(ctx, 0, &mi), 0);
		CHECK_EQ(mi.ctx_used, used);
		CHECK_EQ(mi.free, HBM_BYTES - used);
		if (th_failures)
			break;
	}
	/* No two live allocations overlap. */
	for (i = 0; i < 64; i++) {
		int j;

		for (j = 0; j < 64; j++)
			if (i != j && a[i].handle && a[j].handle)
				CHECK(a[i].dev_addr + a[i].alloc_size <=
				      a[j].dev_addr ||
				      a[j].dev_addr + a[j].alloc_size <=
				      a[i].dev_addr);
	}
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_CTX_RESET, NULL), 0);
	CHECK_EQ(mem_info(ctx, 0, &mi), 0);
	CHECK_EQ(mi.free, HBM_BYTES);
	CHECK_EQ(mi.largest_free, HBM_BYTES);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_memcpy_memset(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct buf h1, h2, d;
	struct stream s;
	struct davinci_task t[4];
	uint64_t last, n = 3 * MiB + 123, i;
	struct davinci_stream_wait w;

	REQUIRE(ctx);
	REQUIRE(buf_alloc(ctx, n, DAVINCI_MEM_HOST, &h1) == 0);
	REQUIRE(buf_alloc(ctx, n, DAVINCI_MEM_HOST, &h2) == 0);
	REQUIRE(buf_alloc(ctx, n, 0, &d) == 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	CHECK_EQ(s.c.sq_entries, 256);
	CHECK_EQ(s.sq->entries, 256);
	for (i = 0; i < n; i++)
		h1.p[i] = (uint8_t)(i * 7 + 3);
	t[0] = t_memcpy(d.a.dev_addr, h1.a.dev_addr, n);
	t[1] = t_memset(d.a.dev_addr + 1000, 0xab, 5000);
	t[2] = t_memcpy(h2.a.dev_addr, d.a.dev_addr, n);
	t[3] = t_memset(h1.a.dev_addr, 0, 0);	/* empty: fine */
	CHECK_EQ(submit(ctx, &s, t, 4, &last), 0);
	CHECK_EQ(last, 4);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	CHECK_EQ(w.completed_seq, 4);
	for (i = 0; i < n; i++) {
		uint8_t want = (i >= 1000 && i < 6000) ? 0xab :
			       (uint8_t)(i * 7 + 3);
		if (h2.p[i] != want || d.p[i] != want) {
			CHECK(0 && "memcpy/memset data");
			break;
		}
	}
	/* Completions in order with timestamps. */
	CHECK_EQ(s.cq->tail, 4);
	for (i = 0; i < 4; i++) {
		struct davinci_completion *c = cq_slot(&s, (uint32_t)i);

		CHECK_EQ(c->seq, i + 1);
		CHECK_EQ(c->status, 0);
		CHECK(c->end_ns >= c->start_ns);
		CHECK(c->start_ns != 0);
		CHECK_EQ(c->opcode, t[i].opcode);
	}
	/* Overlapping copy inside one buffer behaves like memmove. */
	for (i = 0; i < 8192; i++)
		d.p[i] = (uint8_t)i;
	t[0] = t_memcpy(d.a.dev_addr + 100, d.a.dev_addr, 8000);
	CHECK_EQ(submit(ctx, &s, t, 1, &last), 0);
	CHECK_EQ(swait(ctx, &s, last, 5000, NULL), 0);
	CHECK_EQ(tstatus(ctx, &s, last), 0);
	for (i = 0; i < 8000; i++)
		if (d.p[100 + i] != (uint8_t)i) {
			CHECK(0 && "overlapping memcpy");
			break;
		}
	stream_destroy(ctx, &s);
	buf_free(ctx, &h1);
	buf_free(ctx, &h2);
	buf_free(ctx, &d);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_operand_validation(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct dv_context *other = dvc_context_open(dev, 2);
	struct buf a, b, freed, foreign;
	struct stream s;
	struct davinci_task t;
	struct davinci_mem_free f;
	uint64_t seq;

	REQUIRE(ctx && other);
	REQUIRE(buf_alloc(ctx, 8192, 0, &a) == 0);
	REQUIRE(buf_alloc(ctx, 8192, 0, &b) == 0);
	REQUIRE(buf_alloc(ctx, 8192, 0, &freed) == 0);
	REQUIRE(buf_alloc(other, 8192, 0, &foreign) == 0);
	REQUIRE(stream_create(ctx, 0, 16, 16, &s) == 0);
	memset(a.p, 0x11, 8192);
	memset(b.p, 0x22, 8192);
	memset(foreign.p, 0x33, 8192);
	f.handle = freed.a.handle;
	dvc_munmap(freed.map);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);

	struct {
		struct davinci_task t;
		const char *what;
	} bad[] = {
		{ t_memcpy(b.a.dev_addr, a.a.dev_addr, 8193), "src past end" },
		{ t_memcpy(b.a.dev_addr + 1, a.a.dev_addr, 8192), "dst past end" },
		{ t_memcpy(b.a.dev_addr, a.a.dev_addr - 1, 16), "src before" },
		{ t_memcpy(b.a.dev_addr, freed.a.dev_addr, 16), "freed src" },
		{ t_memset(freed.a.dev_addr, 1, 16), "freed dst" },
		{ t_memcpy(b.a.dev_addr, foreign.a.dev_addr, 16), "foreign src" },
		{ t_memset(foreign.a.dev_addr, 0x44, 16), "foreign dst" },
		{ t_memcpy(b.a.dev_addr, a.a.dev_addr, UINT64_MAX), "overflow" },
		{ t_memset(0, 1, 16), "null" },
		{ t_memset(s.c.sq_mmap_offset, 1, 16), "offset not addr" },
		{ t_memcpy(b.a.dev_addr, a.a.dev_addr, 16384), "spans two" },
	};
	size_t i;

	/* a and b are adjacent: a copy spanning both must still fail. */
	CHECK_EQ(a.a.dev_addr + 8192, b.a.dev_addr);
	bad[10].t = t_memcpy(freed.a.dev_addr, a.a.dev_addr, 16384);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t = bad[i].t;
		CHECK_EQ(submit(ctx, &s, &t, 1, &seq), 0);
		CHECK_EQ(swait(ctx, &s, seq, 5000, NULL), 0);
		if (tstatus(ctx, &s, seq) != DAVINCI_STATUS_INVALID_ADDRESS) {
			fprintf(stdout, "  case %s\n", bad[i].what);
			CHECK_EQ(tstatus(ctx, &s, seq),
				 DAVINCI_STATUS_INVALID_ADDRESS);
		}
		CHECK_EQ(stream_reset(ctx, &s), 0);
	}
	CHECK(all_set(a.p, 0x11, 8192));
	CHECK(all_set(b.p, 0x22, 8192));
	CHECK(all_set(foreign.p, 0x33, 8192));
	/* The last byte of the allocation is fine. */
	t = t_memset(b.a.dev_addr + 8191, 0x55, 1);
	CHECK_EQ(submit(ctx, &s, &t, 1, &seq), 0);
	CHECK_EQ(swait(ctx, &s, seq, 5000, NULL), 0);
	CHECK_EQ(tstatus(ctx, &s, seq), 0);
	CHECK_EQ(b.p[8191], 0x55);
	/*
	 * Freed while queued behind a NOP: the task took its buffers at the
	 * doorbell, so it still runs on the memory it was given.
	 */
	{
		struct davinci_task tt[2] = { t_nop(50000),
					      t_memset(a.a.dev_addr, 9, 16) };

		CHECK_EQ(submit(ctx, &s, tt, 2, &seq), 0);
		dvc_munmap(a.map);
		a.map = NULL;
		f.handle = a.a.handle;
		CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
		CHECK_EQ(swait(ctx, &s, seq, 5000, NULL), 0);
		CHECK_EQ(tstatus(ctx, &s, seq), DAVINCI_STATUS_OK);
	}
	stream_destroy(ctx, &s);
	buf_free(ctx, &b);
	buf_free(other, &foreign);
	dvc_context_close(other);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_stream_ordering(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct buf a, b, c;
	struct stream s;
	struct davinci_task t[200];
	uint64_t last, prev_end = 0;
	uint32_t i, n = 0;

	REQUIRE(ctx);
	REQUIRE(buf_alloc(ctx, 4096, 0, &a) == 0);
	REQUIRE(buf_alloc(ctx, 4096 * 100, 0, &b) == 0);
	REQUIRE(buf_alloc(ctx, 4096, 0, &c) == 0);
	REQUIRE(stream_create(ctx, 3, 256, 256, &s) == 0);
	/* a = i; b[i] = a; repeated: b records the order of execution. */
	for (i = 0; i < 100; i++) {
		t[n++] = t_memset(a.a.dev_addr, (uint8_t)i, 4096);
		t[n++] = t_memcpy(b.a.dev_addr + 4096ULL * i, a.a.dev_addr,
				  4096);
	}
	CHECK_EQ(submit(ctx, &s, t, 100, &last), 0);
	CHECK_EQ(last, 100);
	CHECK_EQ(submit(ctx, &s, t + 100, 100, &last), 0);
	CHECK_EQ(last, 200);
	CHECK_EQ(s.sq->head, 200);
	CHECK_EQ(swait(ctx, &s, 0, 10000, NULL), 0);
	for (i = 0; i < 100; i++)
		CHECK(all_set(b.p + 4096ULL * i, (uint8_t)i, 4096));
	/* The CQ (256 entries) holds all 200, in order. */
	CHECK_EQ(s.cq->tail, 200);
	for (i = 0; i < 200; i++) {
		struct davinci_completion *e = cq_slot(&s, i);

		CHECK_EQ(e->seq, i + 1);
		CHECK(e->start_ns >= prev_end);
		prev_end = e->end_ns;
	}
	/* Empty doorbell. */
	{
		struct davinci_doorbell d = { .stream_id = s.c.stream_id,
					      .sq_tail = s.tail };

		CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_DOORBELL, &d), 0);
		CHECK_EQ(d.first_seq, 201);
		CHECK_EQ(d.last_seq, 200);
	}
	stream_destroy(ctx, &s);
	buf_free(ctx, &a);
	buf_free(ctx, &b);
	buf_free(ctx, &c);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_cq_overflow(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct stream s;
	struct davinci_task t[8];
	struct davinci_stream_wait w;
	uint64_t last;
	int i;

	REQUIRE(ctx);
	REQUIRE(stream_create(ctx, 0, 8, 4, &s) == 0);
	for (i = 0; i < 8; i++)
		t[i] = t_nop(0);
	CHECK_EQ(submit(ctx, &s, t, 8, &last), 0);
	CHECK_EQ(swait(ctx, &s, last, 5000, &w), 0);
	CHECK_EQ(w.completed_seq, 8);
	CHECK_EQ(s.cq->tail, 4);
	CHECK_EQ(s.cq->overflow, 4);
	/* Consume two; the next two fit. */
	s.cq->head = 2;
	CHECK_EQ(submit(ctx, &s, t, 2, &last), 0);
	CHECK_EQ(swait(ctx, &s, last, 5000, NULL), 0);
	CHECK_EQ(s.cq->tail, 6);
	CHECK_EQ(cq_slot(&s, 5)->seq, 10);
	/* A garbage head is clamped: entries dropped, nothing overwritten. */
	s.cq->head = 0x80000000u;
	CHECK_EQ(submit(ctx, &s, t, 1, &last), 0);
	CHECK_EQ(swait(ctx, &s, last, 5000, NULL), 0);
	CHECK_EQ(s.cq->tail, 6);
	stream_destroy(ctx, &s);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_parallel_streams(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct stream s1, s2;
	struct davinci_task t = t_nop(300000);
	struct davinci_task_query q1, q2;
	uint64_t l1, l2;

	REQUIRE(ctx);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s1) == 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s2) == 0);
	CHECK_EQ(submit(ctx, &s1, &t, 1, &l1), 0);
	CHECK_EQ(submit(ctx, &s2, &t, 1, &l2), 0);
	CHECK_EQ(swait(ctx, &s1, l1, 5000, NULL), 0);
	CHECK_EQ(swait(ctx, &s2, l2, 5000, NULL), 0);
	CHECK_EQ(tquery(ctx, &s1, l1, &q1), 0);
	CHECK_EQ(tquery(ctx, &s2, l2, &q2), 0);
	CHECK_EQ(q1.status, 0);
	CHECK_EQ(q2.status, 0);
	CHECK(q1.end_ns - q1.start_ns >= 300000000ULL);
	/* The two NOPs overlapped in time. */
	CHECK(q1.start_ns < q2.end_ns && q2.start_ns < q1.end_ns);
	{
		struct davinci_device_info di;
		uint64_t busy = 0;

		CHECK_EQ(dvc_device_info(dev, &di, &busy), 0);
		CHECK(busy >= 600000000ULL);
	}
	stream_destroy(ctx, &s1);
	stream_destroy(ctx, &s2);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_priority(void)
{
	/* One AI core: a high priority stream overtakes queued low ones. */
	struct dv_device *dev = dvc_device_create(1, 1, HBM_BYTES, HOST_BYTES,
						  0, NULL, NULL);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct stream busy, lo, hi;
	struct davinci_task t = t_nop(100000), z = t_nop(1000);
	struct davinci_task_query ql, qh;
	struct davinci_version v;
	uint64_t lb, ll, lh;

	REQUIRE(ctx);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_GET_VERSION, &v), 0);
	CHECK(!strcmp(v.backend, "lib"));
	REQUIRE(stream_create(ctx, 4, 0, 0, &busy) == 0);
	REQUIRE(stream_create(ctx, 7, 0, 0, &lo) == 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &hi) == 0);
	CHECK_EQ(submit(ctx, &busy, &t, 1, &lb), 0);
	usleep(20000);
	CHECK_EQ(submit(ctx, &lo, &z, 1, &ll), 0);
	CHECK_EQ(submit(ctx, &hi, &z, 1, &lh), 0);
	CHECK_EQ(swait(ctx, &lo, ll, 5000, NULL), 0);
	CHECK_EQ(swait(ctx, &hi, lh, 5000, NULL), 0);
	CHECK_EQ(tquery(ctx, &lo, ll, &ql), 0);
	CHECK_EQ(tquery(ctx, &hi, lh, &qh), 0);
	CHECK(qh.end_ns <= ql.start_ns);
	stream_unmap(&busy);
	stream_unmap(&lo);
	stream_unmap(&hi);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_events(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct stream a, b;
	struct davinci_event_create ec = { .flags = DAVINCI_EVENT_TIMING };
	struct davinci_event_query eq;
	struct davinci_event_id eid;
	struct davinci_event_wait ew;
	struct davinci_task ta[2], tb[2];
	struct davinci_task_query qa, qb;
	struct buf m;
	uint64_t la, lb;

	REQUIRE(ctx);
	REQUIRE(buf_alloc(ctx, 4096, 0, &m) == 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &a) == 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &b) == 0);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_CREATE, &ec), 0);
	CHECK(ec.event_id > 0);
	memset(&eq, 0, sizeof(eq));
	eq.event_id = ec.event_id;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_QUERY, &eq), 0);
	CHECK_EQ(eq.state, DAVINCI_EVENT_NOT_RECORDED);
	/* Host wait on a never recorded event returns at once. */
	ew.event_id = ec.event_id;
	ew.timeout_ms = 0;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_WAIT, &ew), 0);

	/* Cross-stream: B waits for A's record behind a 150 ms NOP. */
	ta[0] = t_nop(150000);
	ta[1] = t_event(DAVINCI_OP_EVENT_RECORD, ec.event_id);
	tb[0] = t_event(DAVINCI_OP_EVENT_WAIT, ec.event_id);
	tb[1] = t_memset(m.a.dev_addr, 7, 4096);
	CHECK_EQ(submit(ctx, &a, ta, 2, &la), 0);
	CHECK_EQ(submit(ctx, &b, tb, 2, &lb), 0);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_QUERY, &eq), 0);
	CHECK_EQ(eq.state, DAVINCI_EVENT_PENDING);
	CHECK_EQ(eq.records_submitted, 1);
	usleep(30000);
	CHECK_EQ(tquery(ctx, &b, 1, &qb), 0);
	CHECK(qb.state != DAVINCI_TASK_DONE);
	CHECK_EQ(m.p[0], 0);
	ew.timeout_ms = 5000;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_WAIT, &ew), 0);
	CHECK_EQ(swait(ctx, &b, lb, 5000, NULL), 0);
	CHECK_EQ(tquery(ctx, &a, la, &qa), 0);
	CHECK_EQ(tquery(ctx, &b, lb, &qb), 0);
	CHECK_EQ(qa.status, 0);
	CHECK_EQ(qb.status, 0);
	CHECK(qb.start_ns >= qa.end_ns);
	CHECK_EQ(m.p[0], 7);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_QUERY, &eq), 0);
	CHECK_EQ(eq.state, DAVINCI_EVENT_RECORDED);
	CHECK_EQ(eq.records_completed, 1);
	CHECK(eq.timestamp_ns >= qa.start_ns && eq.timestamp_ns <= qa.end_ns);

	/* Host signal releases a stream waiting behind a long record. */
	ta[0] = t_nop(3000000);
	tb[1] = t_memset(m.a.dev_addr, 8, 4096);
	CHECK_EQ(submit(ctx, &a, ta, 2, &la), 0);
	CHECK_EQ(submit(ctx, &b, tb, 2, &lb), 0);
	ew.timeout_ms = 50;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_WAIT, &ew), -ETIMEDOUT);
	CHECK_EQ(m.p[0], 7);
	eid.event_id = ec.event_id;
	eid.pad = 0;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_SIGNAL, &eid), 0);
	CHECK_EQ(swait(ctx, &b, lb, 2000, NULL), 0);
	CHECK_EQ(m.p[0], 8);
	CHECK_EQ(tquery(ctx, &a, la - 1, &qa), 0);
	CHECK(qa.state == DAVINCI_TASK_RUNNING);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_TASK_CANCEL, &qa), 0);
	CHECK_EQ(swait(ctx, &a, la, 2000, NULL), 0);
	CHECK_EQ(tstatus(ctx, &a, la - 1), DAVINCI_STATUS_CANCELLED);
	CHECK_EQ(tstatus(ctx, &a, la), 0);

	/* A wait on a destroyed event: INVALID_EVENT. */
	ta[0] = t_nop(100000);
	CHECK_EQ(submit(ctx, &a, ta, 2, &la), 0);
	CHECK_EQ(submit(ctx, &b, tb, 1, &lb), 0);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_DESTROY, &eid), 0);
	CHECK_EQ(swait(ctx, &b, lb, 2000, NULL), 0);
	CHECK_EQ(tstatus(ctx, &b, lb), DAVINCI_STATUS_INVALID_EVENT);
	CHECK_EQ(swait(ctx, &a, la, 2000, NULL), 0);
	CHECK_EQ(tstatus(ctx, &a, la), DAVINCI_STATUS_INVALID_EVENT);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_DESTROY, &eid), -ENOENT);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_SIGNAL, &eid), -ENOENT);
	eid.pad = 1;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_SIGNAL, &eid), -EINVAL);
	ec.flags = 2;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_CREATE, &ec), -EINVAL);
	stream_unmap(&a);
	stream_unmap(&b);
	dvc_munmap(m.map);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

/*
 * EVENT_WAIT with DAVINCI_TASK_F_WAIT_NEXT waits for a record made after
 * it, even when every earlier record has completed: the host releases the
 * stream with a signal (a blocking callback's shape).
 */
static void test_event_wait_next(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct davinci_event_create ec = { .flags = 0 };
	struct davinci_event_id eid = { 0, 0 };
	struct davinci_task t[3];
	struct stream s;
	struct buf m;
	uint64_t last;

	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_CREATE, &ec), 0);
	eid.event_id = ec.event_id;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_SIGNAL, &eid), 0);
	CHECK_EQ(stream_create(ctx, 0, 8, 8, &s), 0);
	CHECK_EQ(buf_alloc(ctx, 4096, 0, &m), 0);
	/* Without the flag the completed signal releases the wait at once. */
	t[0] = t_event(DAVINCI_OP_EVENT_WAIT, ec.event_id);
	t[1] = t_memset(m.a.dev_addr, 1, 64);
	CHECK_EQ(submit(ctx, &s, t, 2, &last), 0);
	CHECK_EQ(swait(ctx, &s, last, 2000, NULL), 0);
	CHECK_EQ(m.p[0], 1);
	/* With it the stream parks until the next signal. */
	t[0].flags = DAVINCI_TASK_F_WAIT_NEXT;
	t[1] = t_memset(m.a.dev_addr, 2, 64);
	CHECK_EQ(submit(ctx, &s, t, 2, &last), 0);
	CHECK_EQ(swait(ctx, &s, last, 50, NULL), -ETIMEDOUT);
	CHECK_EQ(m.p[0], 1);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_SIGNAL, &eid), 0);
	CHECK_EQ(swait(ctx, &s, last, 2000, NULL), 0);
	CHECK_EQ(tstatus(ctx, &s, last - 1), 0);
	CHECK_EQ(m.p[0], 2);
	/* The flag belongs to EVENT_WAIT only. */
	t[0] = t_event(DAVINCI_OP_EVENT_RECORD, ec.event_id);
	t[0].flags = DAVINCI_TASK_F_WAIT_NEXT;
	CHECK_EQ(submit(ctx, &s, t, 1, &last), -EINVAL);
	stream_destroy(ctx, &s);
	buf_free(ctx, &m);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_query_cancel(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct stream s;
	struct davinci_task t[3];
	struct davinci_task_query q;
	struct davinci_stream_query sq;
	struct buf m;
	uint64_t last;

	REQUIRE(ctx);
	REQUIRE(buf_alloc(ctx, 4096, 0, &m) == 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	t[0] = t_nop(2000000);
	t[1] = t_nop(1000000);
	t[2] = t_memset(m.a.dev_addr, 3, 4096);
	CHECK_EQ(submit(ctx, &s, t, 3, &last), 0);
	wait_running(ctx, &s, 1);
	CHECK_EQ(tquery(ctx, &s, 1, &q), 0);
	CHECK_EQ(q.state, DAVINCI_TASK_RUNNING);
	CHECK(q.start_ns != 0);
	CHECK_EQ(tquery(ctx, &s, 2, &q), 0);
	CHECK_EQ(q.state, DAVINCI_TASK_QUEUED);
	CHECK_EQ(q.start_ns, 0);
	memset(&sq, 0, sizeof(sq));
	sq.stream_id = s.c.stream_id;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_QUERY, &sq), 0);
	CHECK_EQ(sq.state, DAVINCI_STREAM_BUSY);
	CHECK_EQ(sq.submitted_seq, 3);
	CHECK_EQ(sq.completed_seq, 0);
	/* Cancel the queued one, then the running one. */
	CHECK_EQ(tquery(ctx, &s, 2, &q), 0);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_TASK_CANCEL, &q), 0);
	CHECK_EQ(tquery(ctx, &s, 1, &q), 0);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_TASK_CANCEL, &q), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, NULL), 0);
	CHECK_EQ(tquery(ctx, &s, 1, &q), 0);
	CHECK_EQ(q.state, DAVINCI_TASK_DONE);
	CHECK_EQ(q.status, DAVINCI_STATUS_CANCELLED);
	CHECK(q.end_ns - q.start_ns < 1000000000ULL);
	CHECK_EQ(tquery(ctx, &s, 2, &q), 0);
	CHECK_EQ(q.status, DAVINCI_STATUS_CANCELLED);
	CHECK_EQ(q.start_ns, 0);
	CHECK_EQ(tstatus(ctx, &s, 3), DAVINCI_STATUS_OK);	/* no error */
	CHECK_EQ(m.p[0], 3);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_QUERY, &sq), 0);
	CHECK_EQ(sq.state, DAVINCI_STREAM_IDLE);
	/* Cancel a completed task; unknown ones. */
	CHECK_EQ(tquery(ctx, &s, 3, &q), 0);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_TASK_CANCEL, &q), -EALREADY);
	CHECK_EQ(tquery(ctx, &s, 0, &q), -ENOENT);
	CHECK_EQ(tquery(ctx, &s, 4, &q), -ENOENT);
	q.stream_id = 999;
	q.seq = 1;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_TASK_QUERY, &q), -ENOENT);
	q.stream_id = s.c.stream_id;
	q.pad = 1;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_TASK_QUERY, &q), -EINVAL);
	stream_destroy(ctx, &s);
	buf_free(ctx, &m);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_sync(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct stream s1, s2;
	struct davinci_task t = t_nop(150000);
	struct davinci_sync y = { 0 };
	struct davinci_stream_query q;

	REQUIRE(ctx);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_SYNC, &y), 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s1) == 0);
	REQUIRE(stream_create(ctx, 1, 0, 0, &s2) == 0);
	CHECK_EQ(submit(ctx, &s1, &t, 1, NULL), 0);
	CHECK_EQ(submit(ctx, &s2, &t, 1, NULL), 0);
	CHECK_EQ(submit(ctx, &s2, &t, 1, NULL), 0);
	y.timeout_ms = 0;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_SYNC, &y), -ETIMEDOUT);
	y.timeout_ms = 20;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_SYNC, &y), -ETIMEDOUT);
	y.timeout_ms = 5000;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_SYNC, &y), 0);
	CHECK_EQ(y.status, 0);
	memset(&q, 0, sizeof(q));
	q.stream_id = s2.c.stream_id;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_QUERY, &q), 0);
	CHECK_EQ(q.completed_seq, 2);
	CHECK_EQ(q.priority, 1);
	/* A stream wait for a sequence never submitted. */
	CHECK_EQ(swait(ctx, &s1, 5, 0, NULL), -EINVAL);
	stream_unmap(&s1);
	stream_unmap(&s2);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_watchdog(void)
{
	struct dv_device *dev = mkdev(100);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct stream s;
	struct davinci_task t[2] = { t_nop(2000000), t_nop(10) };
	struct davinci_stream_wait w;
	struct davinci_notification n;
	struct davinci_task_query q;

	REQUIRE(ctx);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	CHECK_EQ(submit(ctx, &s, t, 2, NULL), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, DAVINCI_STATUS_TIMEOUT);
	CHECK_EQ(tquery(ctx, &s, 1, &q), 0);
	CHECK_EQ(q.status, DAVINCI_STATUS_TIMEOUT);
	CHECK(q.end_ns - q.start_ns >= 100000000ULL);
	CHECK_EQ(tstatus(ctx, &s, 2), DAVINCI_STATUS_ABORTED);
	memset(&n, 0, sizeof(n));
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), 0);
	CHECK_EQ(n.type, DAVINCI_NOTIFY_FAULT);
	CHECK_EQ(n.status, DAVINCI_STATUS_TIMEOUT);
	CHECK_EQ(n.seq, 1);
	CHECK_EQ(n.stream_id, s.c.stream_id);
	/* A short NOP under the limit is fine after a reset. */
	CHECK_EQ(stream_reset(ctx, &s), 0);
	t[0] = t_nop(20000);
	CHECK_EQ(submit(ctx, &s, t, 1, NULL), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	CHECK_EQ(tstatus(ctx, &s, 3), DAVINCI_STATUS_OK);
	stream_destroy(ctx, &s);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_error_recovery(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct stream s;
	struct buf m;
	struct davinci_task t[4];
	struct davinci_stream_wait w;
	struct davinci_stream_query q;
	uint64_t last;

	REQUIRE(ctx);
	REQUIRE(buf_alloc(ctx, 4096, 0, &m) == 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	t[0] = t_memset(m.a.dev_addr, 1, 4096);
	t[1] = t_memset(m.a.dev_addr, 2, 8192);		/* fails */
	t[2] = t_memset(m.a.dev_addr, 3, 4096);		/* aborted */
	t[3] = t_nop(0);				/* aborted */
	CHECK_EQ(submit(ctx, &s, t, 4, &last), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, DAVINCI_STATUS_INVALID_ADDRESS);
	CHECK_EQ(tstatus(ctx, &s, 1), 0);
	CHECK_EQ(tstatus(ctx, &s, 2), DAVINCI_STATUS_INVALID_ADDRESS);
	CHECK_EQ(tstatus(ctx, &s, 3), DAVINCI_STATUS_ABORTED);
	CHECK_EQ(tstatus(ctx, &s, 4), DAVINCI_STATUS_ABORTED);
	CHECK_EQ(cq_slot(&s, 2)->status, DAVINCI_STATUS_ABORTED);
	CHECK(all_set(m.p, 1, 4096));
	memset(&q, 0, sizeof(q));
	q.stream_id = s.c.stream_id;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_QUERY, &q), 0);
	CHECK_EQ(q.state, DAVINCI_STREAM_ERROR);
	CHECK_EQ(q.error_status, DAVINCI_STATUS_INVALID_ADDRESS);
	/* Still in error: new tasks abort. */
	CHECK_EQ(submit(ctx, &s, &t[2], 1, &last), 0);
	CHECK_EQ(swait(ctx, &s, last, 5000, NULL), 0);
	CHECK_EQ(tstatus(ctx, &s, last), DAVINCI_STATUS_ABORTED);
	CHECK(all_set(m.p, 1, 4096));
	/* Tasks queued before the reset stay aborted. */
	t[0] = t_nop(100000);
	CHECK_EQ(submit(ctx, &s, t, 1, NULL), 0);
	CHECK_EQ(submit(ctx, &s, &t[2], 1, &last), 0);
	CHECK_EQ(stream_reset(ctx, &s), 0);
	CHECK_EQ(swait(ctx, &s, last, 5000, &w), 0);
	CHECK_EQ(tstatus(ctx, &s, last), DAVINCI_STATUS_ABORTED);
	/* Recovered. */
	CHECK_EQ(submit(ctx, &s, &t[2], 1, &last), 0);
	CHECK_EQ(swait(ctx, &s, last, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	CHECK_EQ(tstatus(ctx, &s, last), DAVINCI_STATUS_OK);
	CHECK(all_set(m.p, 3, 4096));
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_QUERY, &q), 0);
	CHECK_EQ(q.state, DAVINCI_STREAM_IDLE);
	stream_destroy(ctx, &s);
	buf_free(ctx, &m);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_close_in_flight(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct dv_context *keep = dvc_context_open(dev, 2);
	struct stream s[3];
	struct buf m, big;
	struct dv_stats st;
	struct davinci_event_create ec = { 0 };
	struct davinci_task t[4];
	struct davinci_mem_info mi;
	int i;

	REQUIRE(ctx && keep);
	REQUIRE(buf_alloc(ctx, 4096, 0, &m) == 0);
	REQUIRE(buf_alloc(ctx, 48 * MiB, 0, &big) == 0);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_CREATE, &ec), 0);
	for (i = 0; i < 3; i++)
		REQUIRE(stream_create(ctx, (uint32_t)i, 0, 0, &s[i]) == 0);
	t[0] = t_nop(10000000);
	t[1] = t_memset(m.a.dev_addr, 1, 4096);
	t[2] = t_event(DAVINCI_OP_EVENT_RECORD, ec.event_id);
	t[3] = t_memset(big.a.dev_addr, 5, 48 * MiB);
	CHECK_EQ(submit(ctx, &s[0], t, 3, NULL), 0);
	t[0] = t_event(DAVINCI_OP_EVENT_WAIT, ec.event_id);
	CHECK_EQ(submit(ctx, &s[1], t, 2, NULL), 0);	/* parked */
	t[0] = t_nop(10000000);
	CHECK_EQ(submit(ctx, &s[2], t, 4, NULL), 0);
	usleep(30000);
	dvc_stats(&st);
	CHECK(st.tasks >= 7);
	/* Keep one mapping of a buffer past the close. */
	for (i = 0; i < 3; i++)
		stream_unmap(&s[i]);
	dvc_munmap(big.map);
	dvc_context_close(ctx);
	dvc_stats(&st);
	CHECK_EQ(st.tasks, 0);
	CHECK_EQ(st.streams, 0);
	CHECK_EQ(st.contexts, 1);
	CHECK_EQ(st.mappings, 1);
	CHECK_EQ(st.hbm_used, 4096);
	m.p[0] = 42;	/* still mapped */
	CHECK_EQ(mem_info(keep, 0, &mi), 0);
	CHECK_EQ(mi.free, HBM_BYTES - 4096);
	dvc_munmap(m.map);
	CHECK_EQ(mem_info(keep, 0, &mi), 0);
	CHECK_EQ(mi.free, HBM_BYTES);
	CHECK_EQ(mi.largest_free, HBM_BYTES);
	dvc_context_close(keep);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_ctx_reset(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct stream s;
	struct buf m;
	struct davinci_task t = t_nop(5000000);
	struct davinci_stream_id id;
	struct davinci_mem_info mi;
	struct dv_stats st;

	REQUIRE(ctx);
	REQUIRE(buf_alloc(ctx, 4096, DAVINCI_MEM_HOST, &m) == 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	CHECK_EQ(submit(ctx, &s, &t, 1, NULL), 0);
	stream_unmap(&s);
	dvc_munmap(m.map);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_CTX_RESET, NULL), 0);
	dvc_stats(&st);
	CHECK_EQ(st.streams, 0);
	CHECK_EQ(st.buffers, 0);
	CHECK_EQ(st.tasks, 0);
	CHECK_EQ(mem_info(ctx, DAVINCI_MEM_HOST, &mi), 0);
	CHECK_EQ(mi.free, HOST_BYTES);
	id.stream_id = s.c.stream_id;
	id.pad = 0;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_DESTROY, &id), -ENOENT);
	/* Usable afterwards. */
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	CHECK(s.c.stream_id != id.stream_id);
	stream_unmap(&s);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_notifications(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct stream s;
	struct davinci_task t[3];
	struct davinci_notification n;
	uint64_t last;
	int i;

	REQUIRE(ctx);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	memset(&n, 0, sizeof(n));
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), -ETIMEDOUT);
	n.timeout_ms = 20;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), -ETIMEDOUT);
	CHECK_EQ(dvc_pollable(ctx), 0);
	t[0] = t_nop(1000);
	t[0].flags = DAVINCI_TASK_F_NOTIFY;
	t[0].user_data = 0x1111;
	memset(&t[1], 0, sizeof(t[1]));
	t[1].opcode = DAVINCI_OP_NOTIFY;
	t[1].user_data = 0x2222;
	t[2] = t_nop(1);
	CHECK_EQ(submit(ctx, &s, t, 3, &last), 0);
	memset(&n, 0, sizeof(n));
	n.timeout_ms = 5000;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), 0);
	CHECK_EQ(n.type, DAVINCI_NOTIFY_COMPLETION);
	CHECK_EQ(n.user_data, 0x1111);
	CHECK_EQ(n.seq, 1);
	CHECK_EQ(n.stream_id, s.c.stream_id);
	CHECK_EQ(n.status, 0);
	CHECK(n.timestamp_ns != 0);
	CHECK_EQ(n.timeout_ms, 5000);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), 0);
	CHECK_EQ(n.type, DAVINCI_NOTIFY_USER);
	CHECK_EQ(n.user_data, 0x2222);
	CHECK_EQ(n.seq, 2);
	CHECK_EQ(swait(ctx, &s, last, 5000, NULL), 0);
	n.timeout_ms = 0;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), -ETIMEDOUT);
	n.pad = 1;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), -EINVAL);
	/* Overflow: 1100 notifications, 1024 kept, 76 dropped. */
	memset(t, 0, sizeof(t));
	t[0].opcode = DAVINCI_OP_NOTIFY;
	for (i = 0; i < 11; i++) {
		int j;

		for (j = 0; j < 100; j++) {
			t[0].user_data = (uint64_t)(i * 100 + j);
			*sq_slot(&s, s.tail + (uint32_t)j) = t[0];
		}
		struct davinci_doorbell d = { .stream_id = s.c.stream_id,
					      .sq_tail = s.tail + 100 };
		CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_DOORBELL, &d), 0);
		s.tail += 100;
		CHECK_EQ(swait(ctx, &s, 0, 5000, NULL), 0);
	}
	CHECK_EQ(dvc_pollable(ctx), 1);
	memset(&n, 0, sizeof(n));
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), 0);
	CHECK_EQ(n.user_data, 0);
	CHECK_EQ(n.dropped, 76);
	for (i = 1; i < 1024; i++) {
		if (dvc_ioctl(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n) ||
		    n.user_data != (uint64_t)i || n.dropped) {
			CHECK(0 && "notification order");
			break;
		}
	}
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), -ETIMEDOUT);
	stream_destroy(ctx, &s);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_device_lost(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct dv_context *c2 = dvc_context_open(dev, 2);
	struct stream s;
	struct davinci_task t[2] = { t_nop(5000000), t_nop(1) };
	struct davinci_task_query q;
	struct davinci_notification n;
	struct davinci_version v;
	struct davinci_device_info di;
	struct davinci_mem_alloc a = { .size = 4096 };
	struct buf m;
	double t0;

	REQUIRE(ctx && c2);
	REQUIRE(buf_alloc(ctx, 4096, 0, &m) == 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	CHECK_EQ(submit(ctx, &s, t, 2, NULL), 0);
	usleep(20000);
	t0 = th_now();
	dvc_device_lost(dev);
	/* The running task stopped at a chunk boundary. */
	wait_tasks_gone(t0);
	CHECK_EQ(__atomic_load_n(&s.cq->tail, __ATOMIC_ACQUIRE), 2);
	CHECK_EQ(cq_slot(&s, 0)->status, DAVINCI_STATUS_DEVICE_LOST);
	CHECK_EQ(cq_slot(&s, 1)->status, DAVINCI_STATUS_DEVICE_LOST);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_GET_VERSION, &v), 0);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_DEVICE_INFO, &di), -ENODEV);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), -ENODEV);
	CHECK_EQ(tquery(ctx, &s, 1, &q), -ENODEV);
	memset(&n, 0, sizeof(n));
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), -ENODEV);
	CHECK_EQ(dvc_pollable(ctx), 1);
	CHECK_EQ(dvc_pollable(c2), 1);
	CHECK(dvc_mmap(ctx, m.a.mmap_offset, 4096) == NULL);
	CHECK(dvc_context_open(dev, 3) == NULL);
	stream_unmap(&s);
	dvc_munmap(m.map);
	dvc_context_close(ctx);
	dvc_context_close(c2);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_compute_smoke(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct stream s;
	struct buf a, b, c;
	struct davinci_task t = { .opcode = DAVINCI_OP_ADD,
				  .dtype = DAVINCI_DTYPE_INT32 };
	uint64_t last;
	int32_t *pa, *pb, *pc;
	int i, n = 100000;

	REQUIRE(ctx);
	REQUIRE(buf_alloc(ctx, (uint64_t)n * 4, 0, &a) == 0);
	REQUIRE(buf_alloc(ctx, (uint64_t)n * 4, 0, &b) == 0);
	REQUIRE(buf_alloc(ctx, (uint64_t)n * 4, DAVINCI_MEM_HOST, &c) == 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	pa = (int32_t *)a.p;
	pb = (int32_t *)b.p;
	pc = (int32_t *)c.p;
	for (i = 0; i < n; i++) {
		pa[i] = i;
		pb[i] = 3 * i + 1;
	}
	t.dst = c.a.dev_addr;
	t.src0 = a.a.dev_addr;
	t.src1 = b.a.dev_addr;
	t.count = (uint64_t)n;
	CHECK_EQ(submit(ctx, &s, &t, 1, &last), 0);
	CHECK_EQ(swait(ctx, &s, last, 5000, NULL), 0);
	CHECK_EQ(tstatus(ctx, &s, last), 0);
	for (i = 0; i < n; i++)
		if (pc[i] != 4 * i + 1) {
			CHECK(0 && "add result");
			break;
		}
	/* Operands past their buffers: INVALID_ADDRESS, dst untouched. */
	CHECK_EQ(stream_reset(ctx, &s), 0);
	memset(c.p, 0x77, (size_t)n * 4);
	t.count = (uint64_t)n + 2000;
	CHECK_EQ(submit(ctx, &s, &t, 1, &last), 0);
	CHECK_EQ(swait(ctx, &s, last, 5000, NULL), 0);
	CHECK_EQ(tstatus(ctx, &s, last), DAVINCI_STATUS_INVALID_ADDRESS);
	CHECK(all_set(c.p, 0x77, (size_t)n * 4));
	/* Sizes that overflow. */
	CHECK_EQ(stream_reset(ctx, &s), 0);
	t.count = UINT64_MAX / 2;
	if (!submit(ctx, &s, &t, 1, &last)) {
		CHECK_EQ(swait(ctx, &s, last, 5000, NULL), 0);
		CHECK(tstatus(ctx, &s, last) == DAVINCI_STATUS_INVALID_TASK ||
		      tstatus(ctx, &s, last) ==
		      DAVINCI_STATUS_INVALID_ADDRESS);
	}
	CHECK(all_set(c.p, 0x77, (size_t)n * 4));
	stream_destroy(ctx, &s);
	buf_free(ctx, &a);
	buf_free(ctx, &b);
	buf_free(ctx, &c);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

/*
 * Every compute opcode, every operand it uses: an address that is not a
 * multiple of the operand's element size (dst of CAST: dst_dtype's) fails
 * the task with MISALIGNED at the head of its stream, writing nothing; the
 * aligned neighbour (one element further) runs.
 */
struct align_case {
	const char *what;
	uint16_t opcode;
	uint8_t dtype;
	uint8_t dst_dtype;
	uint32_t flags;
	uint64_t count;
	uint32_t m, n, k, imm;
	int src1;	/* uses src1 */
};

static uint64_t dt_size(uint8_t dt)
{
	return dt == DAVINCI_DTYPE_FLOAT16 || dt == DAVINCI_DTYPE_BFLOAT16 ?
	       2 : 4;
}

static void test_misaligned_operands(void)
{
	enum { F32 = DAVINCI_DTYPE_FLOAT32, F16 = DAVINCI_DTYPE_FLOAT16,
	       BF16 = DAVINCI_DTYPE_BFLOAT16, I32 = DAVINCI_DTYPE_INT32 };
	static const struct align_case cases[] = {
		{ "add f16", DAVINCI_OP_ADD, F16, 0, 0, 64, 0, 0, 0, 0, 1 },
		{ "sub f32", DAVINCI_OP_SUB, F32, 0, 0, 64, 0, 0, 0, 0, 1 },
		{ "mul bf16", DAVINCI_OP_MUL, BF16, 0, 0, 64, 0, 0, 0, 0, 1 },
		{ "div i32", DAVINCI_OP_DIV, I32, 0, 0, 64, 0, 0, 0, 0, 1 },
		{ "max f16", DAVINCI_OP_MAX, F16, 0, 0, 64, 0, 0, 0, 0, 1 },
		{ "min i32", DAVINCI_OP_MIN, I32, 0, 0, 64, 0, 0, 0, 0, 1 },
		{ "relu i32", DAVINCI_OP_RELU, I32, 0, 0, 64, 0, 0, 0, 0, 0 },
		{ "exp bf16", DAVINCI_OP_EXP, BF16, 0, 0, 64, 0, 0, 0, 0, 0 },
		{ "axpy f32", DAVINCI_OP_AXPY, F32, 0, 0, 64, 0, 0, 0,
		  0x3f800000, 1 },
		{ "matmul f16", DAVINCI_OP_MATMUL, F16, 0, DAVINCI_TASK_F_TRANS_B,
		  0, 8, 8, 8, 0, 1 },
		{ "matmul f32", DAVINCI_OP_MATMUL, F32, 0, 0, 0, 8, 8, 8, 0, 1 },
		{ "softmax f32", DAVINCI_OP_SOFTMAX, F32, 0, 0, 0, 4, 16, 0, 0,
		  0 },
		{ "softmax bf16", DAVINCI_OP_SOFTMAX, BF16, 0, 0, 0, 4, 16, 0, 0,
		  0 },
		{ "reduce_sum f16", DAVINCI_OP_REDUCE_SUM, F16, 0, 0, 0, 4, 16,
		  0, 0, 0 },
		{ "reduce_sum f32", DAVINCI_OP_REDUCE_SUM, F32, 0, 0, 0, 4, 16,
		  0, 0, 0 },
		{ "cast f16->f32", DAVINCI_OP_CAST, F16, F32, 0, 64, 0, 0, 0, 0,
		  0 },
		{ "cast f32->f16", DAVINCI_OP_CAST, F32, F16, 0, 64, 0, 0, 0, 0,
		  0 },
		{ "cast i32->bf16", DAVINCI_OP_CAST, I32, BF16, 0, 64, 0, 0, 0,
		  0, 0 },
		{ "cast bf16->i32", DAVINCI_OP_CAST, BF16, I32, 0, 64, 0, 0, 0,
		  0, 0 },
	};
	static const char *const opnd[3] = { "dst", "src0", "src1" };
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct stream s;
	struct buf bd, b0, b1;
	size_t c, nbad = 0;
	const size_t sz = 65536;
	uint64_t seq;
	int i;

	REQUIRE(ctx);
	REQUIRE(buf_alloc(ctx, sz, 0, &bd) == 0);
	REQUIRE(buf_alloc(ctx, sz, 0, &b0) == 0);
	REQUIRE(buf_alloc(ctx, sz, DAVINCI_MEM_HOST, &b1) == 0);
	REQUIRE(stream_create(ctx, 0, 16, 16, &s) == 0);
	/* finite, non-zero in every dtype: 0x3c3c... */
	memset(b0.p, 0x3c, sz);
	memset(b1.p, 0x3c, sz);
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct align_case *k = &cases[c];

		for (i = 0; i < (k->src1 ? 3 : 2); i++) {
			uint64_t es = dt_size(i == 0 && k->opcode ==
					      DAVINCI_OP_CAST ?
					      k->dst_dtype : k->dtype);
			uint64_t off;

			/* every misaligned offset, then the aligned one */
			for (off = 1; off <= es; off++) {
				struct davinci_task t = {
					.opcode = k->opcode,
					.dtype = k->dtype,
					.dst_dtype = k->dst_dtype,
					.flags = k->flags,
					.count = k->count,
					.m = k->m, .n = k->n, .k = k->k,
					.imm = k->imm,
					.dst = bd.a.dev_addr + 64,
					.src0 = b0.a.dev_addr + 64,
					.src1 = k->src1 ? b1.a.dev_addr + 64 : 0,
				};
				__u64 *addr[3] = { &t.dst, &t.src0, &t.src1 };
				uint32_t want = off == es ? DAVINCI_STATUS_OK :
					DAVINCI_STATUS_MISALIGNED;
				uint32_t got;

				*addr[i] += off;
				memset(bd.p, 0xee, sz);
				CHECK_EQ(submit(ctx, &s, &t, 1, &seq), 0);
				CHECK_EQ(swait(ctx, &s, seq, 5000, NULL), 0);
				got = tstatus(ctx, &s, seq);
				if (got != want) {
					fprintf(stdout, "  case %s, %s + %llu\n",
						k->what, opnd[i],
						(unsigned long long)off);
					CHECK_EQ(got, want);
				}
				if (want == DAVINCI_STATUS_OK) {
					CHECK(!all_set(bd.p, 0xee, sz));
				} else {
					nbad++;
					if (!all_set(bd.p, 0xee, sz)) {
						fprintf(stdout, "  case %s, %s + "
							"%llu wrote dst\n",
							k->what, opnd[i],
							(unsigned long long)off);
						CHECK(0 && "dst untouched");
					}
					CHECK_EQ(stream_reset(ctx, &s), 0);
				}
				CHECK(all_set(b0.p, 0x3c, sz));
				CHECK(all_set(b1.p, 0x3c, sz));
			}
		}
	}
	/* one misaligned offset per 2-byte operand, three per 4-byte one */
	CHECK_EQ(nbad, 97);
	/*
	 * A misaligned task queued behind good ones fails at the head of its
	 * stream only; the ones before it complete.
	 */
	{
		struct davinci_task tt[3] = {
			t_memset(bd.a.dev_addr, 1, 16),
			{ .opcode = DAVINCI_OP_REDUCE_SUM,
			  .dtype = DAVINCI_DTYPE_FLOAT16,
			  .dst = bd.a.dev_addr + 1024,
			  .src0 = b0.a.dev_addr + 1, .m = 4, .n = 16 },
			t_memset(bd.a.dev_addr + 16, 2, 16),
		};

		memset(bd.p, 0xee, sz);
		CHECK_EQ(submit(ctx, &s, tt, 3, &seq), 0);
		CHECK_EQ(swait(ctx, &s, seq, 5000, NULL), 0);
		CHECK_EQ(tstatus(ctx, &s, seq - 2), DAVINCI_STATUS_OK);
		CHECK_EQ(tstatus(ctx, &s, seq - 1), DAVINCI_STATUS_MISALIGNED);
		CHECK_EQ(tstatus(ctx, &s, seq), DAVINCI_STATUS_ABORTED);
		CHECK(all_set(bd.p, 1, 16));
		CHECK(all_set(bd.p + 16, 0xee, sz - 16));
		CHECK_EQ(stream_reset(ctx, &s), 0);
	}
	stream_destroy(ctx, &s);
	buf_free(ctx, &bd);
	buf_free(ctx, &b0);
	buf_free(ctx, &b1);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_mmap(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct dv_context *other = dvc_context_open(dev, 2);
	struct davinci_mem_alloc a = { .size = 3 * 4096,
				       .flags = DAVINCI_MEM_NORMAL_ONLY };
	struct davinci_mem_free f;
	struct davinci_mem_info mi;
	struct dv_mapping *map;

	REQUIRE(ctx && other);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), 0);
	map = dvc_mmap(ctx, a.mmap_offset + 4096, 8192);
	CHECK(map != NULL);
	dvc_munmap(map);
	CHECK(dvc_mmap(ctx, a.mmap_offset, 3 * 4096 + 1) == NULL);
	CHECK_EQ(errno, EINVAL);
	CHECK(dvc_mmap(ctx, a.mmap_offset + 1, 10) == NULL);
	CHECK(dvc_mmap(ctx, a.mmap_offset + 3 * 4096, 4096) == NULL);
	CHECK(dvc_mmap(ctx, a.mmap_offset, 0) == NULL);
	CHECK(dvc_mmap(ctx, a.mmap_offset, UINT64_MAX) == NULL);
	CHECK(dvc_mmap(ctx, a.mmap_offset | (5ULL << 40), 4096) == NULL);
	CHECK(dvc_mmap(other, a.mmap_offset, 4096) == NULL);
	/* A mapping keeps freed memory from reuse. */
	map = dvc_mmap(ctx, a.mmap_offset, 4096);
	REQUIRE(map);
	f.handle = a.handle;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
	CHECK(dvc_mmap(ctx, a.mmap_offset, 4096) == NULL);
	CHECK_EQ(mem_info(ctx, 0, &mi), 0);
	CHECK_EQ(mi.free, HBM_BYTES - 3 * 4096);
	CHECK_EQ(mi.ctx_used, 0);
	dvc_munmap(map);
	CHECK_EQ(mem_info(ctx, 0, &mi), 0);
	CHECK_EQ(mi.free, HBM_BYTES);
	dvc_context_close(other);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static int bad_task(struct dv_context *ctx, struct stream *s,
		    struct davinci_task t)
{
	struct davinci_doorbell d = { .stream_id = s->c.stream_id };
	uint32_t head = s->sq->head;
	int ret;

	/* A good task first: a batch with one bad task takes in none. */
	*sq_slot(s, s->tail) = t_nop(0);
	*sq_slot(s, s->tail + 1) = t;
	d.sq_tail = s->tail + 2;
	ret = dvc_ioctl(ctx, DAVINCI_IOCTL_DOORBELL, &d);
	if (ret == 0) {
		s->tail += 2;
		return 0;
	}
	if (s->sq->head != head)
		return 1;
	return ret;
}

static void test_malformed(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct stream s;
	struct davinci_task t;
	struct davinci_stream_create sc;
	struct davinci_stream_query sq;
	struct davinci_mem_alloc a;
	struct davinci_doorbell d;
	struct davinci_stream_id sid;
	struct buf m;
	unsigned int i;

	REQUIRE(ctx);
	REQUIRE(buf_alloc(ctx, 4096, 0, &m) == 0);
	REQUIRE(stream_create(ctx, 0, 16, 16, &s) == 0);

	/* Descriptors: every bad one is -EINVAL and nothing is taken. */
	t = t_nop(1);
	t.pad0 = 1;
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	for (i = 0; i < 7; i++) {
		t = t_nop(1);
		t.reserved[i] = 1;
		CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	}
	t = t_nop(1);
	t.flags = 1U << 7;
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	t.flags = DAVINCI_TASK_F_TRANS_A;
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	t = t_nop(1);
	t.opcode = DAVINCI_OP_COUNT;
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	t.opcode = 0xffff;
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	t = t_nop(1);
	t.dtype = DAVINCI_DTYPE_COUNT;
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	t = t_nop(1);
	t.dtype = DAVINCI_DTYPE_INT32;	/* NOP has no dtype */
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	t = t_nop(1);
	t.dst = m.a.dev_addr;		/* unused field */
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	t = t_nop(UINT64_MAX);		/* huge */
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	t = t_memset(m.a.dev_addr, 0, 16);
	t.imm = 256;
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	t = t_memcpy(m.a.dev_addr, m.a.dev_addr, 16);
	t.src1 = 8;
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	t = t_event(DAVINCI_OP_EVENT_RECORD, 0);
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	t = t_event(DAVINCI_OP_EVENT_WAIT, 1);
	t.count = 1;
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	memset(&t, 0, sizeof(t));
	t.opcode = DAVINCI_OP_ADD;
	t.dtype = DAVINCI_DTYPE_FLOAT32;
	t.count = 4;
	t.dst = t.src0 = t.src1 = m.a.dev_addr;
	t.dst_dtype = DAVINCI_DTYPE_INT32;	/* only for CAST */
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	t.dst_dtype = 0;
	t.event_id = 3;
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	t.event_id = 0;
	t.dtype = 9;
	CHECK_EQ(bad_task(ctx, &s, t), -EINVAL);
	memset(&sq, 0, sizeof(sq));
	sq.stream_id = s.c.stream_id;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_QUERY, &sq), 0);
	CHECK_EQ(sq.submitted_seq, 0);
	CHECK_EQ(s.sq->head, 0);

	/* Ring tails beyond the ring or behind the head. */
	memset(&d, 0, sizeof(d));
	d.stream_id = s.c.stream_id;
	d.sq_tail = 17;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_DOORBELL, &d), -EINVAL);
	d.sq_tail = 0xffffffffu;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_DOORBELL, &d), -EINVAL);
	d.sq_tail = 16;		/* exactly full: fine */
	for (i = 0; i < 16; i++)
		*sq_slot(&s, i) = t_nop(0);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_DOORBELL, &d), 0);
	CHECK_EQ(d.first_seq, 1);
	CHECK_EQ(d.last_seq, 16);
	s.tail = 16;
	d.sq_tail = 15;		/* behind the head */
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_DOORBELL, &d), -EINVAL);
	d.stream_id = 77;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_DOORBELL, &d), -ENOENT);

	/* Stream create. */
	memset(&sc, 0, sizeof(sc));
	sc.sq_entries = 3;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_CREATE, &sc), -EINVAL);
	sc.sq_entries = 8192;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_CREATE, &sc), -EINVAL);
	sc.sq_entries = 0;
	sc.cq_entries = 0x80000001u;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_CREATE, &sc), -EINVAL);
	sc.cq_entries = 0;
	sc.priority = 8;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_CREATE, &sc), -EINVAL);
	sc.priority = 0;
	sc.flags = 1;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_CREATE, &sc), -EINVAL);
	sc.flags = 0;
	sc.pad = 1;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_CREATE, &sc), -EINVAL);

	/* Memory. */
	memset(&a, 0, sizeof(a));
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), -EINVAL);
	a.size = 4096;
	a.flags = 3;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), -EINVAL);
	a.flags = 1U << 9;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), -EINVAL);
	a.flags = 0;
	a.pad = 1;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), -EINVAL);
	{
		struct davinci_mem_info mi = { .flags = 1 };

		CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_INFO, &mi), -EINVAL);
		mi.flags = 0;
		mi.pad = 1;
		CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_INFO, &mi), -EINVAL);
	}
	{
		struct davinci_mem_query q = { .handle = 12345 };

		CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_QUERY, &q), -ENOENT);
		q.handle = m.a.handle;
		q.pad = 1;
		CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_QUERY, &q), -EINVAL);
	}

	/* Stale and padded ids. */
	sid.stream_id = s.c.stream_id;
	sid.pad = 1;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_RESET, &sid), -EINVAL);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_DESTROY, &sid), -EINVAL);
	{
		struct davinci_stream_wait w = { .stream_id = s.c.stream_id,
						 .pad = 1 };

		CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_WAIT, &w),
			 -EINVAL);
	}
	sid.pad = 0;
	stream_destroy(ctx, &s);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_DESTROY, &sid), -ENOENT);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_RESET, &sid), -ENOENT);
	sid.stream_id = 0;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_DESTROY, &sid), -ENOENT);

	/* Unknown ioctls; wrong direction. */
	CHECK_EQ(dvc_ioctl(ctx, _IOWR(DAVINCI_IOCTL_BASE, 0x7f, int), &a),
		 -ENOTTY);
	CHECK_EQ(dvc_ioctl(ctx, _IOWR('x', 0x10, struct davinci_mem_alloc),
			   &a), -ENOTTY);
	{
		struct davinci_version v;

		memset(&v, 0, sizeof(v));
		CHECK_EQ(dvc_ioctl(ctx, _IOW(DAVINCI_IOCTL_BASE, 0x00,
					     struct davinci_version), &v),
			 -ENOTTY);
	}
	CHECK_EQ(dv_ioctl_size(_IO(DAVINCI_IOCTL_BASE, 0x99)), -ENOTTY);
	{
		/* A sign-extended command (ctypes, fusepy) still works. */
		struct davinci_version v;
		long cmd = (int)DAVINCI_IOCTL_GET_VERSION;

		CHECK(cmd < 0);
		CHECK_EQ(dvc_ioctl(ctx, (unsigned long)cmd, &v), 0);
		CHECK_EQ(v.abi_major, DAVINCI_ABI_MAJOR);
	}
	CHECK_EQ(dv_ioctl_size(DAVINCI_IOCTL_MEM_ALLOC),
		 (int)sizeof(struct davinci_mem_alloc));

	/* Short (older) and longer (newer) structs. */
	{
		uint64_t shortarg[1] = { 4096 };
		struct {
			struct davinci_mem_alloc a;
			uint64_t extra[4];
		} longarg;
		struct davinci_mem_info mi;

		CHECK_EQ(dvc_ioctl(ctx, _IOC(_IOC_READ | _IOC_WRITE,
					     DAVINCI_IOCTL_BASE, 0x10, 8),
				   shortarg), 0);
		CHECK_EQ(shortarg[0], 4096);
		CHECK_EQ(mem_info(ctx, 0, &mi), 0);
		CHECK_EQ(mi.ctx_allocations, 2);
		memset(&longarg, 0, sizeof(longarg));
		longarg.a.size = 4096;
		longarg.extra[0] = 0xdead;
		CHECK_EQ(dvc_ioctl(ctx, _IOC(_IOC_READ | _IOC_WRITE,
					     DAVINCI_IOCTL_BASE, 0x10,
					     sizeof(longarg)), &longarg), 0);
		CHECK(longarg.a.handle != 0);
		CHECK_EQ(longarg.extra[0], 0xdead);
		CHECK_EQ(dvc_ioctl(ctx, _IOC(_IOC_READ, DAVINCI_IOCTL_BASE, 0,
					     4), shortarg), 0);
		CHECK_EQ(shortarg[0] & 0xffffffffu, DAVINCI_ABI_MAJOR);
	}
	dvc_munmap(m.map);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_device_config(void)
{
	CHECK(dvc_device_create(0, 0, HBM_BYTES, HOST_BYTES, 0, NULL, NULL) ==
	      NULL);
	CHECK_EQ(errno, EINVAL);
	CHECK(dvc_device_create(0, 65, HBM_BYTES, HOST_BYTES, 0, NULL, NULL) ==
	      NULL);
	CHECK(dvc_device_create(0, 1, MiB, HOST_BYTES, 0, NULL, NULL) == NULL);
	CHECK(dvc_device_create(0, 1, HBM_BYTES, 100, 0, NULL, NULL) == NULL);
	CHECK(dvc_device_create(0, 1, 0, HOST_BYTES, 0, NULL, NULL) == NULL);
	CHECK(dvc_device_create(0, 1, HBM_BYTES, HOST_BYTES, 0,
				"/nonexistent/dir", NULL) == NULL);
	CHECK(stats_zero());
}

/* Many streams and contexts at once, closed with work in flight. */
static void test_stress(void)
{
	struct dv_device *dev = dvc_device_create(2, 4, HBM_BYTES, HOST_BYTES,
						  0, NULL, NULL);
	struct dv_context *ctx[4];
	struct stream s[4][4];
	struct buf m[4];
	int c, i, k;

	REQUIRE(dev);
	for (c = 0; c < 4; c++) {
		ctx[c] = dvc_context_open(dev, (uint32_t)c);
		REQUIRE(ctx[c]);
		REQUIRE(buf_alloc(ctx[c], 64 * 1024, DAVINCI_MEM_HOST,
				  &m[c]) == 0);
		for (i = 0; i < 4; i++)
			REQUIRE(stream_create(ctx[c], (uint32_t)i, 64, 64,
					      &s[c][i]) == 0);
	}
	for (k = 0; k < 20; k++)
		for (c = 0; c < 4; c++)
			for (i = 0; i < 4; i++) {
				struct davinci_task t[3] = {
					t_memset(m[c].a.dev_addr +
						 (uint64_t)i * 4096,
						 (uint8_t)k, 4096),
					t_nop(100),
					t_memcpy(m[c].a.dev_addr + 32768 +
						 (uint64_t)i * 4096,
						 m[c].a.dev_addr +
						 (uint64_t)i * 4096, 4096),
				};

				CHECK_EQ(submit(ctx[c], &s[c][i], t, 3, NULL),
					 0);
			}
	for (c = 0; c < 2; c++) {
		struct davinci_sync y = { .timeout_ms = 10000 };

		CHECK_EQ(dvc_ioctl(ctx[c], DAVINCI_IOCTL_SYNC, &y), 0);
		CHECK_EQ(y.status, 0);
		for (i = 0; i < 4; i++)
			CHECK(all_set(m[c].p + 32768 + i * 4096, 19, 4096));
	}
	for (c = 0; c < 4; c++) {
		for (i = 0; i < 4; i++)
			stream_unmap(&s[c][i]);
		dvc_munmap(m[c].map);
		dvc_context_close(ctx[c]);
	}
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

struct waiter {
	struct dv_context *ctx;
	unsigned long cmd;
	union {
		struct davinci_notification n;
		struct davinci_stream_wait w;
		struct davinci_event_wait e;
	} u;
	int ret;
};

static void *waiter_main(void *p)
{
	struct waiter *w = p;

	w->ret = dvc_ioctl(w->ctx, w->cmd, &w->u);
	return NULL;
}

/* Host threads blocked in waits are woken by other threads. */
static void test_blocking_waits(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct stream s;
	struct davinci_task t;
	struct davinci_event_create ec = { 0 };
	struct davinci_event_id eid = { 0 };
	struct waiter w1, w2, w3;
	pthread_t th1, th2, th3;

	REQUIRE(ctx);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_CREATE, &ec), 0);
	/* Event recorded behind a long NOP; a host thread waits for it. */
	t = t_nop(5000000);
	CHECK_EQ(submit(ctx, &s, &t, 1, NULL), 0);
	t = t_event(DAVINCI_OP_EVENT_RECORD, ec.event_id);
	CHECK_EQ(submit(ctx, &s, &t, 1, NULL), 0);
	memset(&w1, 0, sizeof(w1));
	w1.ctx = ctx;
	w1.cmd = DAVINCI_IOCTL_NOTIFY_WAIT;
	w1.u.n.timeout_ms = 5000;
	memset(&w2, 0, sizeof(w2));
	w2.ctx = ctx;
	w2.cmd = DAVINCI_IOCTL_STREAM_WAIT;
	w2.u.w.stream_id = s.c.stream_id;
	w2.u.w.timeout_ms = 5000;
	memset(&w3, 0, sizeof(w3));
	w3.ctx = ctx;
	w3.cmd = DAVINCI_IOCTL_EVENT_WAIT;
	w3.u.e.event_id = ec.event_id;
	w3.u.e.timeout_ms = 5000;
	pthread_create(&th1, NULL, waiter_main, &w1);
	pthread_create(&th2, NULL, waiter_main, &w2);
	pthread_create(&th3, NULL, waiter_main, &w3);
	usleep(50000);
	/* The host signal releases the event waiter. */
	eid.event_id = ec.event_id;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_SIGNAL, &eid), 0);
	pthread_join(th3, NULL);
	CHECK_EQ(w3.ret, 0);
	/* Destroying the stream fails the stream waiter with -ENOENT. */
	stream_destroy(ctx, &s);
	pthread_join(th2, NULL);
	CHECK_EQ(w2.ret, -ENOENT);
	/* Device loss wakes the notification waiter. */
	dvc_device_lost(dev);
	pthread_join(th1, NULL);
	CHECK_EQ(w1.ret, 0);
	CHECK_EQ(w1.u.n.type, DAVINCI_NOTIFY_DEVICE_LOST);
	CHECK_EQ(dvc_pollable(ctx), 1);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

/* Every allocation failure inside an operation: -ENOMEM, nothing changed. */
static void test_alloc_failures(void)
{
	struct dv_device *dev;
	struct dv_context *ctx, *c2 = NULL;
	struct stream s;
	int op, n;

	for (n = 1; n < 20; n++) {
		os_posix_fault_zalloc_countdown = n;
		dev = mkdev(0);
		os_posix_fault_zalloc_countdown = 0;
		if (dev) {
			dvc_device_destroy(dev);
			break;
		}
		CHECK(stats_zero());
	}
	dev = mkdev(0);
	ctx = dvc_context_open(dev, 1);
	REQUIRE(ctx);
	REQUIRE(stream_create(ctx, 0, 16, 16, &s) == 0);
	for (op = 0; op < 5; op++) {
		for (n = 1; n < 40; n++) {
			struct dv_stats before, after;
			struct davinci_mem_info mb, ma;
			struct davinci_stream_query qb, qa;
			int ret = 0;

			dvc_stats(&before);
			CHECK_EQ(mem_info(ctx, 0, &mb), 0);
			memset(&qb, 0, sizeof(qb));
			qb.stream_id = s.c.stream_id;
			CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_QUERY, &qb),
				 0);
			os_posix_fault_zalloc_countdown = n;
			switch (op) {
			case 0:
				c2 = dvc_context_open(dev, 2);
				ret = c2 ? 0 : -errno;
				break;
			case 1: {
				struct davinci_mem_alloc a = { .size = 4096 };

				ret = dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC,
						&a);
				break;
			}
			case 2: {
				struct davinci_stream_create c = { 0 };

				ret = dvc_ioctl(ctx,
						DAVINCI_IOCTL_STREAM_CREATE,
						&c);
				break;
			}
			case 3: {
				struct davinci_event_create e = { 0 };

				ret = dvc_ioctl(ctx, DAVINCI_IOCTL_EVENT_CREATE,
						&e);
				break;
			}
			case 4: {
				struct davinci_task t[4] = { t_nop(0), t_nop(0),
							     t_nop(0),
							     t_nop(0) };

				ret = submit(ctx, &s, t, 4, NULL);
				break;
			}
			}
			os_posix_fault_zalloc_countdown = 0;
			if (!ret) {
				/* The fault was not reached: op done. */
				if (op == 0)
					dvc_context_close(c2);
				break;
			}
			CHECK_EQ(ret, -ENOMEM);
			dvc_stats(&after);
			if (memcmp(&before, &after, sizeof(before)))
				printf("  op %d n %d: objects %llu -> %llu\n", op, n,
				       (unsigned long long)before.objects,
				       (unsigned long long)after.objects);
			CHECK(!memcmp(&before, &after, sizeof(before)));
			CHECK_EQ(mem_info(ctx, 0, &ma), 0);
			CHECK(!memcmp(&mb, &ma, sizeof(mb)));
			memset(&qa, 0, sizeof(qa));
			qa.stream_id = s.c.stream_id;
			CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_QUERY, &qa),
				 0);
			CHECK(!memcmp(&qa, &qb, sizeof(qa)));
			if (th_failures)
				break;
		}
		CHECK(n > 1);	/* each op allocates something */
	}
	CHECK_EQ(swait(ctx, &s, 0, 5000, NULL), 0);
	stream_unmap(&s);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

/* ---- management (manager node) ------------------------------------------ */

static int mgmt_info(uint32_t index, struct davinci_mgmt_info *m)
{
	memset(m, 0, sizeof(*m));
	m->index = index;
	return dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_INFO, m);
}

static int mgmt_inject(uint32_t index, uint32_t kind, uint64_t addr,
		       uint64_t size, uint32_t level, uint32_t timeout_ms)
{
	struct davinci_mgmt_fault f = {
		.index = index, .kind = kind, .addr = addr, .size = size,
		.level = level, .timeout_ms = timeout_ms,
	};

	return dvc_manager_ioctl_priv(DAVINCI_IOCTL_MGMT_INJECT, &f, 1);
}

static int mgmt_reset(uint32_t index, uint32_t *contexts)
{
	struct davinci_mgmt_reset r = { .index = index };
	int ret = dvc_manager_ioctl_priv(DAVINCI_IOCTL_MGMT_RESET, &r, 1);

	if (contexts)
		*contexts = r.contexts;
	return ret;
}

/* Latest event sequence number of all devices. */
static uint64_t mgmt_last_seq(void)
{
	struct davinci_mgmt_events e;
	uint64_t since = 0;

	for (;;) {
		memset(&e, 0, sizeof(e));
		e.since_seq = since;
		e.device = DAVINCI_MGMT_ALL_DEVICES;
		if (dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_EVENTS, &e) ||
		    !e.count)
			return since;
		since = e.next_seq;
	}
}

/* Does an event of @type (and @fault, if not 0) on @dev follow @since? */
static int mgmt_has_event(uint64_t since, uint32_t dev, uint32_t type,
			  uint32_t fault, struct davinci_mgmt_event *out)
{
	struct davinci_mgmt_events e;
	uint32_t i;

	for (;;) {
		memset(&e, 0, sizeof(e));
		e.since_seq = since;
		e.device = dev;
		if (dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_EVENTS, &e) ||
		    !e.count)
			return 0;
		for (i = 0; i < e.count; i++) {
			if (e.ev[i].type == type &&
			    (!fault || e.ev[i].fault == fault)) {
				if (out)
					*out = e.ev[i];
				return 1;
			}
		}
		since = e.next_seq;
	}
}

static struct dv_device *mkdev_idx(uint32_t index, uint32_t timeout_ms)
{
	return dvc_device_create(index, 2, HBM_BYTES, HOST_BYTES, timeout_ms,
				 NULL, "lib");
}

static void test_mgmt_list_info(void)
{
	struct dv_device *d0 = mkdev_idx(0, 0), *d1 = mkdev_idx(1, 0);
	struct dv_context *ctx = d0 ? dvc_context_open(d0, 4242) : NULL;
	struct davinci_mgmt_list l;
	struct davinci_mgmt_info m;
	struct davinci_mgmt_procs p;
	struct davinci_version v;
	struct buf b, h;
	struct stream s;

	REQUIRE(d0 && d1 && ctx);
	memset(&l, 0, sizeof(l));
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_LIST, &l), 0);
	CHECK_EQ(l.count, 2);
	CHECK_EQ(l.index[0], 0);
	CHECK_EQ(l.index[1], 1);
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_GET_VERSION, &v), 0);
	CHECK_EQ(v.abi_major, DAVINCI_ABI_MAJOR);

	CHECK_EQ(mgmt_info(1, &m), 0);
	CHECK_EQ(m.index, 1);
	CHECK(!strcmp(m.bus_id, "0000:81:00.0"));
	CHECK(!strcmp(m.serial, "DV5A000001"));
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK(!strcmp(m.bus_id, "0000:C1:00.0"));
	CHECK(!strcmp(m.name, "Ascend910B-sim"));
	CHECK(!strcmp(m.driver_version, DV_DRIVER_VERSION));
	CHECK(m.board_name[0] && m.firmware_version[0]);
	CHECK_EQ(m.health, DAVINCI_HEALTH_OK);
	CHECK_EQ(m.aicores, 2);
	/* Idle: deterministic simulated values. */
	CHECK_EQ(m.aicore_util, 0);
	CHECK_EQ(m.power_mw, 72500);
	CHECK_EQ(m.temp_mc, 36000);
	CHECK_EQ(m.hbm_total, HBM_BYTES);
	CHECK_EQ(m.hbm_used, 0);
	CHECK_EQ(m.huge_total, HBM_BYTES / (2 * MiB));
	CHECK_EQ(m.huge_used, 0);
	CHECK_EQ(m.processes, 1);
	CHECK_EQ(m.fault_armed, 0);

	REQUIRE(buf_alloc(ctx, 2 * MiB, DAVINCI_MEM_HUGE_ONLY, &b) == 0);
	REQUIRE(buf_alloc(ctx, 8192, DAVINCI_MEM_HOST, &h) == 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.hbm_used, 2 * MiB);
	CHECK_EQ(m.huge_used, 1);
	CHECK(m.host_used >= 8192);
	memset(&p, 0, sizeof(p));
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_PROCS, &p), 0);
	CHECK_EQ(p.count, 1);
	CHECK_EQ(p.total, 1);
	CHECK_EQ(p.proc[0].pid, 4242);
	CHECK_EQ(p.proc[0].streams, 1);
	CHECK_EQ(p.proc[0].hbm_bytes, 2 * MiB);
	CHECK_EQ(p.proc[0].host_bytes, 8192);
	p.index = 1;
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_PROCS, &p), 0);
	CHECK_EQ(p.count, 0);
	CHECK_EQ(mgmt_info(7, &m), -ENODEV);
	p.index = 7;
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_PROCS, &p), -ENODEV);
	/* Manager commands are not device commands, and vice versa. */
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MGMT_LIST, &l), -ENOTTY);
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MEM_INFO, &m), -ENOTTY);
	CHECK_EQ(dvc_manager_ioctl(_IOW(DAVINCI_IOCTL_BASE, 0x80,
					struct davinci_mgmt_list), &l), -ENOTTY);

	stream_destroy(ctx, &s);
	buf_free(ctx, &b);
	buf_free(ctx, &h);
	dvc_context_close(ctx);
	dvc_device_destroy(d0);
	dvc_device_destroy(d1);
	memset(&l, 0, sizeof(l));
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_LIST, &l), 0);
	CHECK_EQ(l.count, 0);
	CHECK(stats_zero());
}

static void test_mgmt_privilege(void)
{
	struct dv_device *d0 = mkdev_idx(0, 0);
	struct davinci_mgmt_fault f = { .index = 0,
					.kind = DAVINCI_FAULT_THROTTLE,
					.level = 50 };
	struct davinci_mgmt_reset r = { .index = 0 };
	struct davinci_mgmt_info m;

	REQUIRE(d0);
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_INJECT, &f), -EPERM);
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_RESET, &r), -EPERM);
	CHECK_EQ(dvc_manager_ioctl_priv(DAVINCI_IOCTL_MGMT_RESET, &r, 0),
		 -EPERM);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.throttle_pct, 0);
	CHECK_EQ(m.resets, 0);
	/* Malformed injections. */
	CHECK_EQ(mgmt_inject(0, 0, 0, 0, 0, 0), -EINVAL);
	CHECK_EQ(mgmt_inject(0, 9, 0, 0, 0, 0), -EINVAL);
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_THROTTLE, 0, 0, 1001, 0),
		 -EINVAL);
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_HANG, 4096, 0, 0, 0), -EINVAL);
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_ECC, ~0ULL, 2, 0, 0), -EINVAL);
	CHECK_EQ(mgmt_inject(3, DAVINCI_FAULT_HANG, 0, 0, 0, 0), -ENODEV);
	f.flags = 1;
	CHECK_EQ(dvc_manager_ioctl_priv(DAVINCI_IOCTL_MGMT_INJECT, &f, 1),
		 -EINVAL);
	r.flags = 1;
	CHECK_EQ(dvc_manager_ioctl_priv(DAVINCI_IOCTL_MGMT_RESET, &r, 1),
		 -EINVAL);
	CHECK_EQ(mgmt_reset(5, NULL), -ENODEV);
	dvc_device_destroy(d0);
	CHECK(stats_zero());
}

static void test_mgmt_ecc_reset(void)
{
	struct dv_device *d0 = mkdev_idx(0, 0), *d1 = mkdev_idx(1, 0);
	struct dv_context *ctx = d0 ? dvc_context_open(d0, 1) : NULL;
	struct dv_context *c1 = d1 ? dvc_context_open(d1, 2) : NULL;
	struct dv_context *ctx2;
	struct davinci_mgmt_info m;
	struct davinci_mgmt_event ev;
	struct davinci_notification n;
	struct davinci_stream_wait w;
	struct davinci_task t;
	struct stream s, s1;
	struct buf a, b, x;
	uint64_t since, seq;
	uint32_t nctx = 0;

	REQUIRE(ctx && c1);
	REQUIRE(buf_alloc(ctx, 8192, 0, &a) == 0);
	REQUIRE(buf_alloc(ctx, 8192, 0, &b) == 0);
	REQUIRE(buf_alloc(c1, 8192, 0, &x) == 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	REQUIRE(stream_create(c1, 0, 0, 0, &s1) == 0);
	since = mgmt_last_seq();
	/* An ECC error on the second page of b. */
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_ECC, b.a.dev_addr + 4096, 16, 0,
			     0), 0);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.fault_armed, 1U << DAVINCI_FAULT_ECC);
	CHECK_EQ(m.health, DAVINCI_HEALTH_OK);
	CHECK(mgmt_has_event(since, 0, DAVINCI_MGMT_EV_FAULT_INJECTED,
			     DAVINCI_FAULT_ECC, &ev));
	CHECK_EQ(ev.addr, b.a.dev_addr + 4096);
	CHECK_EQ(ev.value, 16);
	/* Tasks outside the region are fine. */
	t = t_memset(a.a.dev_addr, 1, 8192);
	CHECK_EQ(submit(ctx, &s, &t, 1, &seq), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	t = t_memset(b.a.dev_addr, 7, 4096);
	CHECK_EQ(submit(ctx, &s, &t, 1, &seq), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	/* The one touching it fails and touches nothing. */
	t = t_memset(b.a.dev_addr, 9, 8192);
	CHECK_EQ(submit(ctx, &s, &t, 1, &seq), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, DAVINCI_STATUS_ECC_ERROR);
	CHECK_EQ(tstatus(ctx, &s, seq), DAVINCI_STATUS_ECC_ERROR);
	CHECK(all_set(b.p, 7, 4096));
	CHECK(all_set(b.p + 4096, 0, 4096));
	memset(&n, 0, sizeof(n));
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), 0);
	CHECK_EQ(n.type, DAVINCI_NOTIFY_FAULT);
	CHECK_EQ(n.status, DAVINCI_STATUS_ECC_ERROR);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_ALARM);
	CHECK_EQ(m.fault_armed, 0);
	CHECK_EQ(m.faults_fired[DAVINCI_FAULT_ECC], 1);
	CHECK(mgmt_has_event(since, 0, DAVINCI_MGMT_EV_FAULT,
			     DAVINCI_FAULT_ECC, &ev));
	CHECK_EQ(ev.status, DAVINCI_STATUS_ECC_ERROR);
	CHECK(mgmt_has_event(since, 0, DAVINCI_MGMT_EV_HEALTH, 0, &ev));
	CHECK_EQ(ev.health, DAVINCI_HEALTH_ALARM);
	CHECK_EQ(ev.old_health, DAVINCI_HEALTH_OK);
	/* The other device is untouched. */
	CHECK_EQ(mgmt_info(1, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_OK);
	CHECK(!mgmt_has_event(since, 1, DAVINCI_MGMT_EV_HEALTH, 0, NULL));
	t = t_memset(x.a.dev_addr, 3, 8192);
	CHECK_EQ(submit(c1, &s1, &t, 1, NULL), 0);
	CHECK_EQ(swait(c1, &s1, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);

	/* Reset: the context is failed, the device healthy again. */
	CHECK_EQ(mgmt_reset(0, &nctx), 0);
	CHECK_EQ(nctx, 1);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_DEVICE_INFO, &m), -ENODEV);
	CHECK_EQ(submit(ctx, &s, &t, 1, NULL), -ENODEV);
	CHECK_EQ(dvc_pollable(ctx), 1);
	CHECK(dvc_mmap(ctx, a.a.mmap_offset, 4096) == NULL);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_OK);
	CHECK_EQ(m.resets, 1);
	CHECK_EQ(m.faults_fired[DAVINCI_FAULT_ECC], 1);
	CHECK(mgmt_has_event(since, 0, DAVINCI_MGMT_EV_RESET, 0, &ev));
	CHECK_EQ(ev.value, 1);
	ctx2 = dvc_context_open(d0, 3);
	REQUIRE(ctx2);
	{
		struct stream s2;
		struct buf c;

		REQUIRE(buf_alloc(ctx2, 8192, 0, &c) == 0);
		REQUIRE(stream_create(ctx2, 0, 0, 0, &s2) == 0);
		t = t_memset(c.a.dev_addr, 5, 8192);
		CHECK_EQ(submit(ctx2, &s2, &t, 1, NULL), 0);
		CHECK_EQ(swait(ctx2, &s2, 0, 5000, &w), 0);
		CHECK_EQ(w.status, 0);
		CHECK(all_set(c.p, 5, 8192));
		stream_destroy(ctx2, &s2);
		buf_free(ctx2, &c);
	}
	/* Reset again: only the live context counts. */
	CHECK_EQ(mgmt_reset(0, &nctx), 0);
	CHECK_EQ(nctx, 1);
	stream_unmap(&s);
	stream_destroy(c1, &s1);
	dvc_munmap(a.map);
	dvc_munmap(b.map);
	buf_free(c1, &x);
	dvc_context_close(ctx);
	dvc_context_close(ctx2);
	dvc_context_close(c1);
	dvc_device_destroy(d0);
	dvc_device_destroy(d1);
	CHECK(stats_zero());
}

static void test_mgmt_hang(void)
{
	struct dv_device *d0 = mkdev_idx(0, 0);
	struct dv_context *ctx = d0 ? dvc_context_open(d0, 1) : NULL;
	struct davinci_mgmt_info m;
	struct davinci_mgmt_event ev;
	struct davinci_stream_wait w;
	struct davinci_task t[2] = { t_nop(1), t_nop(1) };
	struct stream s;
	uint64_t since;

	REQUIRE(ctx);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	since = mgmt_last_seq();
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_HANG, 0, 0, 0, 100), 0);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.fault_armed, 1U << DAVINCI_FAULT_HANG);
	CHECK_EQ(submit(ctx, &s, t, 1, NULL), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, DAVINCI_STATUS_TIMEOUT);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_ALARM);
	CHECK_EQ(m.faults_fired[DAVINCI_FAULT_HANG], 1);
	CHECK_EQ(m.fault_armed, 0);
	CHECK(mgmt_has_event(since, 0, DAVINCI_MGMT_EV_FAULT,
			     DAVINCI_FAULT_HANG, &ev));
	CHECK_EQ(ev.status, DAVINCI_STATUS_TIMEOUT);
	/* Only one task hangs. */
	CHECK_EQ(stream_reset(ctx, &s), 0);
	CHECK_EQ(submit(ctx, &s, t + 1, 1, NULL), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	/* A hang without a watchdog ends with a reset. */
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_HANG, 0, 0, 0, 0), 0);
	CHECK_EQ(submit(ctx, &s, t, 1, NULL), 0);
	CHECK_EQ(swait(ctx, &s, 0, 50, &w), -ETIMEDOUT);
	CHECK_EQ(mgmt_reset(0, NULL), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), -ENODEV);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_OK);
	CHECK_EQ(__atomic_load_n(&s.cq->tail, __ATOMIC_ACQUIRE), 3);
	CHECK_EQ(cq_slot(&s, 2)->status, DAVINCI_STATUS_DEVICE_LOST);
	stream_unmap(&s);
	dvc_context_close(ctx);
	dvc_device_destroy(d0);
	CHECK(stats_zero());
}

static void test_mgmt_lost_throttle(void)
{
	struct dv_device *d0 = mkdev_idx(0, 0), *d1 = mkdev_idx(1, 0);
	struct dv_context *ctx = d0 ? dvc_context_open(d0, 1) : NULL;
	struct dv_context *c1 = d1 ? dvc_context_open(d1, 2) : NULL;
	struct davinci_mgmt_info m;
	struct davinci_notification n;
	struct davinci_stream_wait w;
	struct davinci_task t = t_nop(2000);
	struct stream s, s1;
	uint64_t since;

	REQUIRE(ctx && c1);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	REQUIRE(stream_create(c1, 0, 0, 0, &s1) == 0);
	since = mgmt_last_seq();
	/* Throttle: slower, warm, WARNING; results unchanged. */
	CHECK_EQ(mgmt_inject(1, DAVINCI_FAULT_THROTTLE, 0, 0, 100, 0), 0);
	CHECK_EQ(mgmt_info(1, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_WARNING);
	CHECK_EQ(m.throttle_pct, 100);
	CHECK(m.temp_mc >= 95000);
	CHECK_EQ(submit(c1, &s1, &t, 1, NULL), 0);
	CHECK_EQ(swait(c1, &s1, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	CHECK_EQ(mgmt_info(1, &m), 0);
	CHECK_EQ(m.faults_fired[DAVINCI_FAULT_THROTTLE], 1);
	CHECK(mgmt_has_event(since, 1, DAVINCI_MGMT_EV_HEALTH, 0, NULL));
	CHECK_EQ(mgmt_inject(1, DAVINCI_FAULT_THROTTLE, 0, 0, 0, 0), 0);
	CHECK_EQ(mgmt_info(1, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_OK);
	CHECK(m.temp_mc < 95000);

	/* Lost: every context of device 0 sees it; device 1 works on. */
	t = t_nop(5000000);
	CHECK_EQ(submit(ctx, &s, &t, 1, NULL), 0);
	usleep(10000);
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_LOST, 0, 0, 0, 0), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), -ENODEV);
	memset(&n, 0, sizeof(n));
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), -ENODEV);
	CHECK_EQ(dvc_pollable(ctx), 1);
	CHECK(dvc_context_open(d0, 5) == NULL);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_CRITICAL);
	CHECK_EQ(m.faults_fired[DAVINCI_FAULT_LOST], 1);
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_HANG, 0, 0, 0, 0), -ENODEV);
	CHECK(mgmt_has_event(since, 0, DAVINCI_MGMT_EV_LOST, 0, NULL));
	t = t_nop(10);
	CHECK_EQ(submit(c1, &s1, &t, 1, NULL), 0);
	CHECK_EQ(swait(c1, &s1, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	/* Reset brings it back; the old context stays lost. */
	CHECK_EQ(mgmt_reset(0, NULL), 0);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_OK);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), -ENODEV);
	{
		struct dv_context *c2 = dvc_context_open(d0, 6);

		CHECK(c2 != NULL);
		if (c2)
			dvc_context_close(c2);
	}
	/* A device the OS removed cannot be reset. */
	dvc_device_lost(d1);
	CHECK_EQ(mgmt_reset(1, NULL), -ENODEV);
	stream_unmap(&s);
	stream_unmap(&s1);
	dvc_context_close(ctx);
	dvc_context_close(c1);
	dvc_device_destroy(d0);
	dvc_device_destroy(d1);
	CHECK(stats_zero());
}

static int hook_calls;
static uint32_t hook_last_type;

static void count_hook(const struct davinci_mgmt_event *ev)
{
	hook_calls++;
	hook_last_type = ev->type;
}

static void test_mgmt_events(void)
{
	struct dv_device *d0 = mkdev_idx(0, 0), *d1 = mkdev_idx(1, 0);
	struct davinci_mgmt_events e;
	uint64_t since, seq, prev;
	uint32_t i, got = 0;

	REQUIRE(d0 && d1);
	since = mgmt_last_seq();
	/* 20 events on device 1, 100 on device 0: device 0 overflows. */
	for (i = 0; i < 10; i++) {
		CHECK_EQ(mgmt_inject(1, DAVINCI_FAULT_THROTTLE, 0, 0, 10, 0),
			 0);
		CHECK_EQ(mgmt_inject(1, DAVINCI_FAULT_THROTTLE, 0, 0, 0, 0), 0);
	}
	for (i = 0; i < 100; i++)
		CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_THROTTLE, 0, 0, 5 + i,
				     0), 0);
	memset(&e, 0, sizeof(e));
	e.since_seq = since;
	e.device = 1;
	seq = since;
	prev = since;
	for (;;) {
		CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_EVENTS, &e), 0);
		CHECK_EQ(e.overflow, 0);
		if (!e.count)
			break;
		for (i = 0; i < e.count; i++) {
			CHECK(e.ev[i].seq > prev);
			CHECK_EQ(e.ev[i].device, 1);
			prev = e.ev[i].seq;
			got++;
		}
		seq = e.next_seq;
		memset(&e, 0, sizeof(e));
		e.since_seq = seq;
		e.device = 1;
	}
	/* 20 injections, 20 health changes. */
	CHECK_EQ(got, 40);
	CHECK_EQ(e.next_seq, seq);
	memset(&e, 0, sizeof(e));
	e.since_seq = since;
	e.device = DAVINCI_MGMT_ALL_DEVICES;
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_EVENTS, &e), 0);
	CHECK_EQ(e.overflow, 1);
	CHECK_EQ(e.count, DAVINCI_MGMT_MAX_EVENTS);
	CHECK_EQ(e.ev[0].device, 1);
	e.device = 9;
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_EVENTS, &e), -ENODEV);
	/* The OS layer's hook sees every event, in order. */
	hook_calls = 0;
	dv_mgmt_set_event_hook(count_hook);
	CHECK_EQ(mgmt_inject(1, DAVINCI_FAULT_THROTTLE, 0, 0, 10, 0), 0);
	CHECK_EQ(hook_calls, 2);
	CHECK_EQ(hook_last_type, DAVINCI_MGMT_EV_HEALTH);
	dvc_device_destroy(d0);
	CHECK_EQ(hook_calls, 3);
	CHECK_EQ(hook_last_type, DAVINCI_MGMT_EV_REMOVE);
	dv_mgmt_set_event_hook(NULL);
	dvc_device_destroy(d1);
	CHECK_EQ(hook_calls, 3);
	/* Global state goes with the last device and comes back. */
	dv_core_exit();
	d0 = mkdev_idx(0, 0);
	CHECK(d0 != NULL);
	if (d0) {
		struct davinci_mgmt_info m;

		CHECK_EQ(mgmt_info(0, &m), 0);
		dvc_device_destroy(d0);
	}
	CHECK(stats_zero());
}

static void test_mgmt_reset_in_flight(void)
{
	struct dv_device *d0 = mkdev_idx(0, 0);
	struct dv_context *ctx = d0 ? dvc_context_open(d0, 1) : NULL;
	struct davinci_task t[3] = { t_nop(5000000), t_nop(1), t_nop(1) };
	struct davinci_stream_wait w;
	struct stream s, s2;
	double t0;

	REQUIRE(ctx);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	REQUIRE(stream_create(ctx, 1, 0, 0, &s2) == 0);
	CHECK_EQ(submit(ctx, &s, t, 3, NULL), 0);
	CHECK_EQ(submit(ctx, &s2, t, 2, NULL), 0);
	usleep(20000);
	t0 = th_now();
	CHECK_EQ(mgmt_reset(0, NULL), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), -ENODEV);
	wait_tasks_gone(t0);
	CHECK_EQ(__atomic_load_n(&s.cq->tail, __ATOMIC_ACQUIRE), 3);
	CHECK_EQ(cq_slot(&s, 0)->status, DAVINCI_STATUS_DEVICE_LOST);
	CHECK_EQ(cq_slot(&s, 2)->status, DAVINCI_STATUS_DEVICE_LOST);
	CHECK_EQ(__atomic_load_n(&s2.cq->tail, __ATOMIC_ACQUIRE), 2);
	stream_unmap(&s);
	stream_unmap(&s2);
	dvc_context_close(ctx);
	dvc_device_destroy(d0);
	CHECK(stats_zero());
}

/*
 * The size rules of every backend's ioctl entry (dv_ioctl_from_caller):
 * out fields are written on success only, a shorter (older) or longer
 * (newer) struct than the core's is accepted and only the common part is
 * copied, NULL is -EFAULT.
 */
static void test_ioctl_copy_rules(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct davinci_task gate = t_nop(20000000);
	struct davinci_stream_wait w;
	struct davinci_task_query q;
	struct {
		struct davinci_mem_alloc a;
		uint64_t newer;
	} longer;
	struct stream s;
	uint64_t last;

	REQUIRE(ctx);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	REQUIRE(submit(ctx, &s, &gate, 1, &last) == 0);

	/* a wait that times out leaves the caller's struct as it was */
	memset(&w, 0, sizeof(w));
	w.stream_id = s.c.stream_id;
	w.status = 0x5a5a;
	w.completed_seq = 0xdead;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_WAIT, &w), -ETIMEDOUT);
	CHECK_EQ(w.status, 0x5a5a);
	CHECK_EQ(w.completed_seq, 0xdead);

	/* a newer caller's longer struct: its tail is neither read nor written */
	memset(&longer, 0, sizeof(longer));
	longer.a.size = 4096;
	longer.newer = 0x77;
	CHECK_EQ(dvc_ioctl(ctx, _IOC(_IOC_READ | _IOC_WRITE, DAVINCI_IOCTL_BASE,
				     _IOC_NR(DAVINCI_IOCTL_MEM_ALLOC),
				     sizeof(longer)), &longer), 0);
	CHECK(longer.a.handle != 0 && longer.a.alloc_size == 4096);
	CHECK_EQ(longer.newer, 0x77);
	/* an older caller's shorter struct: nothing past it is written */
	memset(&q, 0, sizeof(q));
	q.stream_id = s.c.stream_id;
	q.seq = last;
	q.state = 0xee;
	CHECK_EQ(dvc_ioctl(ctx, _IOC(_IOC_READ | _IOC_WRITE, DAVINCI_IOCTL_BASE,
				     _IOC_NR(DAVINCI_IOCTL_TASK_QUERY),
				     offsetof(struct davinci_task_query, seq) +
				     sizeof(q.seq)), &q), 0);
	CHECK_EQ(q.state, 0xee);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_WAIT, NULL), -EFAULT);

	q.seq = last;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_TASK_CANCEL, &q), 0);
	CHECK_EQ(swait(ctx, &s, last, 10000, NULL), 0);
	stream_destroy(ctx, &s);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

/*
 * The sanitizer build checks lock order (os_posix.c): the order os.h
 * documents passes, taking the registry lock inside a device lock aborts.
 * Every other test of that build runs under the same check.
 */
/*
 * Holds (DAVINCI_IOCTL_MAP_HOLD) keep memory from reuse as a mapping of
 * the node does: after MEM_FREE and CTX_RESET, until released or the
 * context closes; bad ranges and handles are refused.
 */
static void test_map_holds(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct davinci_mem_alloc a = { .size = MiB }, again = { .size = MiB };
	struct davinci_map_hold h = { 0 }, bad;
	struct davinci_map_release r = { 0 };
	struct davinci_mem_free f = { 0 };
	struct davinci_mem_info mi;

	REQUIRE(ctx);
	REQUIRE(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &a) == 0);
	h.mmap_offset = a.mmap_offset;
	h.length = a.alloc_size;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MAP_HOLD, &h), 0);
	CHECK(h.handle != 0);
	bad = h;
	bad.length = a.alloc_size + 4096;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MAP_HOLD, &bad), -EINVAL);
	bad = h;
	bad.mmap_offset += 1;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MAP_HOLD, &bad), -EINVAL);
	bad.mmap_offset = a.mmap_offset + a.alloc_size;
	bad.length = 4096;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MAP_HOLD, &bad), -EINVAL);
	/* Freed but held: the next allocation lands elsewhere. */
	f.handle = a.handle;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, &again), 0);
	CHECK(again.dev_addr != a.dev_addr);
	CHECK_EQ(mem_info(ctx, 0, &mi), 0);
	CHECK_EQ(mi.free, HBM_BYTES - a.alloc_size - again.alloc_size);
	/* Released: the memory is back. */
	r.handle = h.handle;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MAP_RELEASE, &r), 0);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MAP_RELEASE, &r), -ENOENT);
	CHECK_EQ(mem_info(ctx, 0, &mi), 0);
	CHECK_EQ(mi.free, HBM_BYTES - again.alloc_size);
	/* A hold survives CTX_RESET and goes with the context. */
	h.mmap_offset = again.mmap_offset;
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MAP_HOLD, &h), 0);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_CTX_RESET, NULL), 0);
	CHECK_EQ(mem_info(ctx, 0, &mi), 0);
	CHECK_EQ(mi.free, HBM_BYTES - again.alloc_size);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static volatile int interrupt_flag;

static int interrupted(void)
{
	return interrupt_flag;
}

static void *interrupt_later(void *arg)
{
	(void)arg;
	usleep(50000);
	interrupt_flag = 1;
	return NULL;
}

/*
 * A wait made through dvc_ioctl_interruptible() ends with -EINTR once its
 * caller is interrupted (the FUSE daemon passes fuse_interrupted()), long
 * before its timeout; without an interrupt it times out as before.
 */
static void test_interruptible_waits(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	struct davinci_notification n = { .timeout_ms = 30000 };
	pthread_t th;

	REQUIRE(ctx);
	interrupt_flag = 0;
	pthread_create(&th, NULL, interrupt_later, NULL);
	CHECK_EQ(dvc_ioctl_interruptible(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n,
					 interrupted), -EINTR);
	pthread_join(th, NULL);
	/* Already interrupted: still -EINTR, at once. */
	CHECK_EQ(dvc_ioctl_interruptible(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n,
					 interrupted), -EINTR);
	interrupt_flag = 0;
	n.timeout_ms = 20;
	CHECK_EQ(dvc_ioctl_interruptible(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n,
					 interrupted), -ETIMEDOUT);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

void dv_context_reset_locked(struct dv_context *ctx);

/*
 * A function documented to run with a lock held asserts it: called
 * without the lock, it aborts (os_mutex_assert_held()).
 */
static void test_lock_assertions(void)
{
	struct dv_device *dev = mkdev(0);
	struct dv_context *ctx = dvc_context_open(dev, 1);
	int status = 0;
	pid_t pid;

	REQUIRE(ctx);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, STDERR_FILENO);
		dv_context_reset_locked(ctx);
		_exit(0);
	}
	REQUIRE(pid > 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

static void test_lock_order(void)
{
#ifdef DV_LOCK_ORDER_CHECK
	struct os_mutex *reg = os_mutex_create(OS_LOCK_REGISTRY);
	struct os_mutex *dev = os_mutex_create(OS_LOCK_DEVICE);
	int status = 0;
	pid_t pid;

	REQUIRE(reg && dev);
	os_mutex_lock(reg);
	os_mutex_lock(dev);
	os_mutex_unlock(dev);
	os_mutex_unlock(reg);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, STDERR_FILENO);
		os_mutex_lock(dev);
		os_mutex_lock(reg);
		_exit(0);
	}
	REQUIRE(pid > 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	os_mutex_destroy(dev);
	os_mutex_destroy(reg);
#else
	printf("  (lock order is checked in the sanitizer build only)\n");
#endif
}

/*
 * Limits on open contexts, over all devices: per process (-EMFILE) and
 * per user (-EUSERS); pid 0 and DV_UID_NONE are not counted; a refused or
 * failed open leaves no slot taken; GET_LIMITS reports the values on the
 * manager and on a device node.
 */
static void test_context_limits(void)
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

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;

	th_run("version_info", test_version_info, filter);
	th_run("device_config", test_device_config, filter);
	th_run("backing_files", test_backing_files, filter);
	th_run("alloc_basic", test_alloc_basic, filter);
	th_run("fragmentation_oom", test_fragmentation_oom, filter);
	th_run("alloc_random", test_alloc_random, filter);
	th_run("memcpy_memset", test_memcpy_memset, filter);
	th_run("operand_validation", test_operand_validation, filter);
	th_run("stream_ordering", test_stream_ordering, filter);
	th_run("cq_overflow", test_cq_overflow, filter);
	th_run("parallel_streams", test_parallel_streams, filter);
	th_run("priority", test_priority, filter);
	th_run("events", test_events, filter);
	th_run("event_wait_next", test_event_wait_next, filter);
	th_run("query_cancel", test_query_cancel, filter);
	th_run("sync", test_sync, filter);
	th_run("watchdog", test_watchdog, filter);
	th_run("error_recovery", test_error_recovery, filter);
	th_run("close_in_flight", test_close_in_flight, filter);
	th_run("ctx_reset", test_ctx_reset, filter);
	th_run("notifications", test_notifications, filter);
	th_run("device_lost", test_device_lost, filter);
	th_run("compute_smoke", test_compute_smoke, filter);
	th_run("misaligned_operands", test_misaligned_operands, filter);
	th_run("mmap", test_mmap, filter);
	th_run("malformed", test_malformed, filter);
	th_run("blocking_waits", test_blocking_waits, filter);
	th_run("alloc_failures", test_alloc_failures, filter);
	th_run("stress", test_stress, filter);
	th_run("mgmt_list_info", test_mgmt_list_info, filter);
	th_run("mgmt_privilege", test_mgmt_privilege, filter);
	th_run("mgmt_ecc_reset", test_mgmt_ecc_reset, filter);
	th_run("mgmt_hang", test_mgmt_hang, filter);
	th_run("mgmt_lost_throttle", test_mgmt_lost_throttle, filter);
	th_run("mgmt_events", test_mgmt_events, filter);
	th_run("mgmt_reset_in_flight", test_mgmt_reset_in_flight, filter);
	th_run("ioctl_copy_rules", test_ioctl_copy_rules, filter);
	th_run("context_limits", test_context_limits, filter);
	th_run("lock_order", test_lock_order, filter);
	th_run("map_holds", test_map_holds, filter);
	th_run("interruptible_waits", test_interruptible_waits, filter);
	th_run("lock_assertions", test_lock_assertions, filter);
	printf("%d passed, %d failed\n", th_passed, th_failed);
	return th_failed ? 1 : 0;
}
