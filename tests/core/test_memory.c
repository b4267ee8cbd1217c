// SPDX-License-Identifier: GPL-2.0
/*
 * test_memory.c - tests of memory: allocation, fragmentation, mappings, holds,
 * allocation failures.
 */
#define _GNU_SOURCE
#include "fixtures.h"

void test_alloc_basic(void)
{
	struct fixture fx;
	struct davinci_mem_alloc a;
	struct davinci_mem_query q;
	struct davinci_mem_info mi;
	struct davinci_mem_free f;
	uint64_t h1, addr1;

	REQUIRE(fixture_init(&fx, 0) == 0);
	CHECK_EQ(mem_alloc(fx.ctx, 1, DAVINCI_MEM_NORMAL_ONLY, &a), 0);
	CHECK_EQ(a.alloc_size, 4096);
	CHECK(a.handle != 0);
	CHECK_EQ(a.dev_addr % 4096, 0);
	CHECK_EQ(DAVINCI_MMAP_ARENA(a.mmap_offset), 0);
	h1 = a.handle;
	addr1 = a.dev_addr;

	CHECK_EQ(mem_alloc(fx.ctx, 3 * MiB, 0, &a), 0);	/* HUGE_FIRST */
	CHECK_EQ(a.alloc_size, 4 * MiB);
	CHECK_EQ(a.dev_addr % (2 * MiB), 0);

	CHECK_EQ(mem_alloc(fx.ctx, 5, DAVINCI_MEM_HUGE_ONLY, &a), 0);
	CHECK_EQ(a.alloc_size, 2 * MiB);
	CHECK_EQ(a.dev_addr % (2 * MiB), 0);

	CHECK_EQ(mem_alloc(fx.ctx, 10000, DAVINCI_MEM_HOST, &a), 0);
	CHECK_EQ(a.alloc_size, 12288);
	CHECK_EQ(DAVINCI_MMAP_ARENA(a.mmap_offset), 1);

	CHECK_EQ(mem_info(fx.ctx, 0, &mi), 0);
	CHECK_EQ(mi.total, HBM_BYTES);
	CHECK_EQ(mi.ctx_used, 4096 + 4 * MiB + 2 * MiB);
	CHECK_EQ(mi.ctx_allocations, 3);
	CHECK_EQ(mi.free, HBM_BYTES - mi.ctx_used);
	CHECK_EQ(mem_info(fx.ctx, DAVINCI_MEM_HOST, &mi), 0);
	CHECK_EQ(mi.ctx_used, 12288);
	CHECK_EQ(mi.ctx_allocations, 1);

	memset(&q, 0, sizeof(q));
	q.handle = h1;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_QUERY, &q), 0);
	CHECK_EQ(q.dev_addr, addr1);
	CHECK_EQ(q.size, 1);
	CHECK_EQ(q.alloc_size, 4096);
	CHECK_EQ(q.flags, DAVINCI_MEM_NORMAL_ONLY);
	memset(&q, 0, sizeof(q));
	q.dev_addr = addr1 + 4000;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_QUERY, &q), 0);
	CHECK_EQ(q.handle, h1);
	CHECK_EQ(q.dev_addr, addr1);
	memset(&q, 0, sizeof(q));
	q.dev_addr = 0x1234;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_QUERY, &q), -ENOENT);

	f.handle = h1;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_FREE, &f), -ENOENT);
	memset(&q, 0, sizeof(q));
	q.handle = h1;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_QUERY, &q), -ENOENT);
	/* Handles are not reused. */
	CHECK_EQ(mem_alloc(fx.ctx, 4096, 0, &a), 0);
	CHECK(a.handle != h1);
	CHECK_EQ(a.dev_addr, addr1);	/* first fit reuses the range */

	fixture_exit(&fx);
}

void test_fragmentation_oom(void)
{
	struct fixture fx;
	struct davinci_mem_alloc a[16], big;
	struct davinci_mem_info before, after;
	struct dv_stats s1, s2;
	struct davinci_mem_free f;
	int i;

	REQUIRE(fixture_init(&fx, 0) == 0);
	for (i = 0; i < 16; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		a[i].size = 4 * MiB;
		a[i].flags = DAVINCI_MEM_NORMAL_ONLY;
		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &a[i]), 0);
	}
	CHECK_EQ(mem_info(fx.ctx, 0, &before), 0);
	CHECK_EQ(before.free, 0);
	CHECK_EQ(before.largest_free, 0);
	memset(&big, 0, sizeof(big));
	big.size = 4096;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), -ENOMEM);
	/* Free every other one: 32 MiB free, but fragmented. */
	for (i = 0; i < 16; i += 2) {
		f.handle = a[i].handle;
		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
	}
	CHECK_EQ(mem_info(fx.ctx, 0, &before), 0);
	CHECK_EQ(before.free, 32 * MiB);
	CHECK_EQ(before.largest_free, 4 * MiB);
	CHECK_EQ(before.ctx_allocations, 8);
	dvc_stats(&s1);
	/* OOM from fragmentation, from size and from overflow: no change. */
	memset(&big, 0, sizeof(big));
	big.size = 8 * MiB;
	big.flags = DAVINCI_MEM_NORMAL_ONLY;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), -ENOMEM);
	CHECK_EQ(big.handle, 0);
	big.size = 128 * MiB;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), -ENOMEM);
	big.size = UINT64_MAX;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), -ENOMEM);
	big.size = UINT64_MAX - 4095;
	big.flags = DAVINCI_MEM_HUGE_ONLY;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), -ENOMEM);
	big.size = 4 * MiB + 1;
	big.flags = DAVINCI_MEM_HUGE_FIRST;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), -ENOMEM);
	CHECK_EQ(mem_info(fx.ctx, 0, &after), 0);
	CHECK(!memcmp(&before, &after, sizeof(before)));
	dvc_stats(&s2);
	CHECK(!memcmp(&s1, &s2, sizeof(s1)));
	/* An exact fit still works; HUGE_FIRST falls back to 4 KiB. */
	big.size = 4 * MiB;
	big.flags = DAVINCI_MEM_HUGE_FIRST;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), 0);
	CHECK_EQ(big.dev_addr, a[0].dev_addr);
	f.handle = big.handle;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
	/* Free the rest: ranges coalesce into one. */
	for (i = 1; i < 16; i += 2) {
		f.handle = a[i].handle;
		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
	}
	CHECK_EQ(mem_info(fx.ctx, 0, &after), 0);
	CHECK_EQ(after.free, HBM_BYTES);
	CHECK_EQ(after.largest_free, HBM_BYTES);
	CHECK_EQ(after.ctx_used, 0);
	CHECK_EQ(after.ctx_allocations, 0);
	big.size = HBM_BYTES;
	big.flags = DAVINCI_MEM_HUGE_ONLY;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &big), 0);

	fixture_exit(&fx);
}

/* Random alloc/free against a shadow model of the free byte count. */
void test_alloc_random(void)
{
	struct fixture fx;
	struct davinci_mem_alloc a[64];
	struct davinci_mem_info mi;
	uint64_t used = 0;
	unsigned int seed = 12345;
	int i, iter;

	REQUIRE(fixture_init(&fx, 0) == 0);
	memset(a, 0, sizeof(a));
	for (iter = 0; iter < 4000; iter++) {
		i = rand_r(&seed) % 64;
		if (a[i].handle) {
			struct davinci_mem_free f = { .handle = a[i].handle };

			CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
			used -= a[i].alloc_size;
			a[i].handle = 0;
		} else {
			int ret;

			a[i].size = 1 + (uint64_t)(rand_r(&seed) % (3 * MiB));
			a[i].flags = (uint32_t)(rand_r(&seed) % 3);
			ret = dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &a[i]);
			CHECK(ret == 0 || ret == -ENOMEM);
			if (!ret) {
				used += a[i].alloc_size;
				CHECK(a[i].alloc_size >= a[i].size);
			} else {
				a[i].handle = 0;
			}
		}
		CHECK_EQ(mem_info(fx.ctx, 0, &mi), 0);
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
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_CTX_RESET, NULL), 0);
	CHECK_HBM_WHOLE(fx.ctx);
	fixture_exit(&fx);
}

void test_memcpy_memset(void)
{
	struct fixture fx;
	struct buf h1, h2, d;
	struct stream s;
	struct davinci_task t[4];
	uint64_t last, n = 3 * MiB + 123, i;
	struct davinci_stream_wait w;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(fx_bufs(&fx, n, DAVINCI_MEM_HOST, &h1, &h2, NULL) == 0);
	REQUIRE(fx_buf(&fx, n, 0, &d) == 0);
	REQUIRE(fx_stream(&fx, 0, 0, 0, &s) == 0);
	CHECK_EQ(s.c.sq_entries, 256);
	CHECK_EQ(s.sq->entries, 256);
	for (i = 0; i < n; i++)
		h1.p[i] = (uint8_t)(i * 7 + 3);
	t[0] = t_memcpy(d.a.dev_addr, h1.a.dev_addr, n);
	t[1] = t_memset(d.a.dev_addr + 1000, 0xab, 5000);
	t[2] = t_memcpy(h2.a.dev_addr, d.a.dev_addr, n);
	t[3] = t_memset(h1.a.dev_addr, 0, 0);	/* empty: fine */
	CHECK_EQ(submit(fx.ctx, &s, t, 4, &last), 0);
	CHECK_EQ(last, 4);
	CHECK_EQ(swait(fx.ctx, &s, 0, 5000, &w), 0);
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
	CHECK_EQ(submit(fx.ctx, &s, t, 1, &last), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 5000, NULL), 0);
	CHECK_EQ(tstatus(fx.ctx, &s, last), 0);
	for (i = 0; i < 8000; i++)
		if (d.p[100 + i] != (uint8_t)i) {
			CHECK(0 && "overlapping memcpy");
			break;
		}
	fixture_exit(&fx);
}

void test_mmap(void)
{
	struct fixture fx;
	struct davinci_mem_alloc a = { .size = 3 * 4096,
				       .flags = DAVINCI_MEM_NORMAL_ONLY };
	struct davinci_mem_free f;
	struct davinci_mem_info mi;
	struct dv_mapping *map;

	REQUIRE(fixture_init2(&fx, 0) == 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), 0);
	map = dvc_mmap(fx.ctx, a.mmap_offset + 4096, 8192);
	CHECK(map != NULL);
	dvc_munmap(map);
	CHECK(dvc_mmap(fx.ctx, a.mmap_offset, 3 * 4096 + 1) == NULL);
	CHECK_EQ(errno, EINVAL);
	CHECK(dvc_mmap(fx.ctx, a.mmap_offset + 1, 10) == NULL);
	CHECK(dvc_mmap(fx.ctx, a.mmap_offset + 3 * 4096, 4096) == NULL);
	CHECK(dvc_mmap(fx.ctx, a.mmap_offset, 0) == NULL);
	CHECK(dvc_mmap(fx.ctx, a.mmap_offset, UINT64_MAX) == NULL);
	CHECK(dvc_mmap(fx.ctx, a.mmap_offset | (5ULL << 40), 4096) == NULL);
	CHECK(dvc_mmap(fx.ctx2, a.mmap_offset, 4096) == NULL);
	/* A mapping keeps freed memory from reuse. */
	map = dvc_mmap(fx.ctx, a.mmap_offset, 4096);
	REQUIRE(map);
	f.handle = a.handle;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
	CHECK(dvc_mmap(fx.ctx, a.mmap_offset, 4096) == NULL);
	CHECK_EQ(mem_info(fx.ctx, 0, &mi), 0);
	CHECK_EQ(mi.free, HBM_BYTES - 3 * 4096);
	CHECK_EQ(mi.ctx_used, 0);
	dvc_munmap(map);
	CHECK_EQ(mem_info(fx.ctx, 0, &mi), 0);
	CHECK_EQ(mi.free, HBM_BYTES);
	fixture_exit(&fx);
}

/* Every allocation failure inside an operation: -ENOMEM, nothing changed. */
void test_alloc_failures(void)
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
	{
		/* op 4's tasks then come from the device's task cache */
		struct davinci_task t[8];
		uint64_t last;

		for (n = 0; n < 8; n++)
			t[n] = t_nop(0);
		REQUIRE(submit(ctx, &s, t, 8, &last) == 0);
		REQUIRE(swait(ctx, &s, last, 5000, NULL) == 0);
	}
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

/*
 * Holds (DAVINCI_IOCTL_MAP_HOLD) keep memory from reuse as a mapping of
 * the node does: after MEM_FREE and CTX_RESET, until released or the
 * context closes; bad ranges and handles are refused.
 */
void test_map_holds(void)
{
	struct fixture fx;
	struct davinci_mem_alloc a = { .size = MiB }, again = { .size = MiB };
	struct davinci_map_hold h = { 0 }, bad;
	struct davinci_map_release r = { 0 };
	struct davinci_mem_free f = { 0 };
	struct davinci_mem_info mi;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &a) == 0);
	h.mmap_offset = a.mmap_offset;
	h.length = a.alloc_size;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MAP_HOLD, &h), 0);
	CHECK(h.handle != 0);
	bad = h;
	bad.length = a.alloc_size + 4096;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MAP_HOLD, &bad), -EINVAL);
	bad = h;
	bad.mmap_offset += 1;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MAP_HOLD, &bad), -EINVAL);
	bad.mmap_offset = a.mmap_offset + a.alloc_size;
	bad.length = 4096;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MAP_HOLD, &bad), -EINVAL);
	/* Freed but held: the next allocation lands elsewhere. */
	f.handle = a.handle;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &again), 0);
	CHECK(again.dev_addr != a.dev_addr);
	CHECK_EQ(mem_info(fx.ctx, 0, &mi), 0);
	CHECK_EQ(mi.free, HBM_BYTES - a.alloc_size - again.alloc_size);
	/* Released: the memory is back. */
	r.handle = h.handle;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MAP_RELEASE, &r), 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MAP_RELEASE, &r), -ENOENT);
	CHECK_EQ(mem_info(fx.ctx, 0, &mi), 0);
	CHECK_EQ(mi.free, HBM_BYTES - again.alloc_size);
	/* A hold survives CTX_RESET and goes with the context. */
	h.mmap_offset = again.mmap_offset;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MAP_HOLD, &h), 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_CTX_RESET, NULL), 0);
	CHECK_EQ(mem_info(fx.ctx, 0, &mi), 0);
	CHECK_EQ(mi.free, HBM_BYTES - again.alloc_size);
	fixture_exit(&fx);
}
