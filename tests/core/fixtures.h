/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fixtures.h - what the core tests (tests/core/test_*.c) share: helpers
 * over libdavinci_core and a KUnit-style fixture.
 *
 * A test with the standard prologue/epilogue:
 *
 *	struct fixture fx;
 *
 *	REQUIRE(fixture_init(&fx, 0) == 0);
 *	... fx.dev, fx.ctx ...
 *	fixture_exit(&fx);
 *
 * fixture_init() creates device 0 (2 AI cores, HBM_BYTES, HOST_BYTES, the
 * given watchdog timeout, backend "lib") and opens context 1 on it;
 * fixture_init2() also opens context 2 (another process) as fx.ctx2, and
 * fixture_init_stream() also creates a stream (priority 0, default rings)
 * that the fixture owns. fx_stream() and fx_buf() create a stream and a
 * buffer on fx.ctx that the fixture owns (KUnit's managed resources),
 * fx_bufs() several buffers of one size. fx_has_feature() tells whether
 * the device lists a DAVINCI_FEAT_* bit. fixture_exit() destroys those
 * streams, then frees those buffers, closes fx.ctx2, then the context
 * (unless the test closed it and set fx.ctx to NULL), destroys the device
 * and checks that the core holds no object any more (stats_zero()).
 */
#ifndef _DV_TEST_FIXTURES_H
#define _DV_TEST_FIXTURES_H

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <stdarg.h>
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

struct buf {
	struct davinci_mem_alloc a;
	struct dv_mapping *map;
	uint8_t *p;
};

struct stream {
	struct davinci_stream_create c;
	struct dv_mapping *sqm, *cqm;
	struct davinci_ring_header *sq, *cq;
	uint32_t tail;
};

#define FX_MAX_OWNED 8	/* streams, and buffers, a fixture owns at most */

struct fixture {
	struct dv_device *dev;
	struct dv_context *ctx;
	struct dv_context *ctx2;
	struct stream *streams[FX_MAX_OWNED];
	struct buf *bufs[FX_MAX_OWNED];
	unsigned int nstreams, nbufs;
};

int fixture_init(struct fixture *f, uint32_t timeout_ms);
int fixture_init_cfg(struct fixture *f, const struct dv_device_config *cfg);
int fixture_init2(struct fixture *f, uint32_t timeout_ms);
int fixture_init_stream(struct fixture *f, uint32_t timeout_ms,
			struct stream *s);
int fx_stream(struct fixture *f, uint32_t prio, uint32_t sqe, uint32_t cqe,
	      struct stream *s);
int fx_buf(struct fixture *f, uint64_t size, uint32_t flags, struct buf *b);
int fx_bufs(struct fixture *f, uint64_t size, uint32_t flags, ...)
	__attribute__((sentinel));
int fx_has_feature(struct fixture *f, uint64_t feature);
void fixture_exit(struct fixture *f);

struct dv_device *mkdev(uint32_t timeout_ms);
int stats_zero(void);
/* MEM_ALLOC of @size bytes with @flags into a zeroed @a: 0 or -errno. */
int mem_alloc(struct dv_context *ctx, uint64_t size, uint32_t flags,
	      struct davinci_mem_alloc *a);
int buf_alloc(struct dv_context *ctx, uint64_t size, uint32_t flags,
	      struct buf *b);
void buf_free(struct dv_context *ctx, struct buf *b);
int stream_create(struct dv_context *ctx, uint32_t prio, uint32_t sqe,
		  uint32_t cqe, struct stream *s);
int stream_create_flags(struct dv_context *ctx, uint32_t prio, uint32_t sqe,
			uint32_t cqe, uint32_t flags, struct stream *s);
void stream_unmap(struct stream *s);
void stream_destroy(struct dv_context *ctx, struct stream *s);
struct davinci_task *sq_slot(struct stream *s, uint32_t idx);
struct davinci_completion *cq_slot(struct stream *s, uint32_t idx);
/* Wait (at most 10 s after @t0) until the core holds no task at all. */
void wait_tasks_gone(double t0);
int submit(struct dv_context *ctx, struct stream *s,
	   const struct davinci_task *t, uint32_t n, uint64_t *last);
void publish(struct stream *s, const struct davinci_task *t, uint32_t n);
int graph_ioctl(struct dv_context *ctx, unsigned long cmd,
		struct stream *s, struct davinci_graph_capture *c);
int graph_launch(struct dv_context *ctx, uint32_t graph, struct stream *s,
		 struct davinci_graph_launch *l);
int swait(struct dv_context *ctx, struct stream *s, uint64_t seq,
	  uint32_t timeout_ms, struct davinci_stream_wait *out);
int tquery(struct dv_context *ctx, struct stream *s, uint64_t seq,
	   struct davinci_task_query *q);
/* Wait until task @seq of @s has left the queue (a worker took it). */
void wait_running(struct dv_context *ctx, struct stream *s,
		  uint64_t seq);
uint32_t tstatus(struct dv_context *ctx, struct stream *s,
		 uint64_t seq);
int stream_reset(struct dv_context *ctx, struct stream *s);
struct davinci_task t_nop(uint64_t us);
struct davinci_task t_memcpy(uint64_t dst, uint64_t src, uint64_t n);
struct davinci_task t_memset(uint64_t dst, uint8_t v, uint64_t n);
struct davinci_task t_event(uint16_t op, uint32_t ev);
int mem_info(struct dv_context *ctx, uint32_t flags,
	     struct davinci_mem_info *m);
/* The HBM arena, as @ctx sees it, is all free and in one piece again. */
#define CHECK_HBM_WHOLE(ctx) do {					\
	struct davinci_mem_info _mi;					\
									\
	CHECK_EQ(mem_info(ctx, 0, &_mi), 0);				\
	CHECK_EQ(_mi.free, HBM_BYTES);					\
	CHECK_EQ(_mi.largest_free, HBM_BYTES);				\
} while (0)
int all_set(const uint8_t *p, uint8_t v, size_t n);
/* Device @index as the fixtures make it: 2 AI cores, HBM_BYTES, HOST_BYTES. */
struct dv_device_config fx_device_config(uint32_t index, uint32_t timeout_ms);
struct dv_device *mkdev_idx(uint32_t index, uint32_t timeout_ms);

#endif /* _DV_TEST_FIXTURES_H */
