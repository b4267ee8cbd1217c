// SPDX-License-Identifier: GPL-2.0
/*
 * test_graphs.c - task graphs: capture records without running, launch
 * replays with fresh operands, quiet completions, limits and cleanup.
 */
#define _GNU_SOURCE
#include "fixtures.h"

void test_graphs(void)
{
	struct davinci_task t[2];
	struct davinci_graph_capture c;
	struct davinci_graph_launch l;
	struct davinci_stream_wait w;
	struct davinci_graph_id gid;
	struct stream s, other;
	struct fixture fx;
	struct buf a, b;
	uint32_t graph;
	uint64_t last;
	int i, ret;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &a) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &b) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 16, 16, &s) == 0);
	REQUIRE(stream_create_flags(fx.ctx, 0, 16, 16,
				    DAVINCI_STREAM_F_POLLED, &other) == 0);
	memset(a.p, 1, 4096);
	t[0] = t_memset(a.a.dev_addr, 7, 4096);
	t[1] = t_memcpy(b.a.dev_addr, a.a.dev_addr, 4096);

	/* Capture: recorded, not run, no sequence numbers. */
	CHECK_EQ(graph_ioctl(fx.ctx, DAVINCI_IOCTL_GRAPH_CAPTURE, &s, &c), 0);
	CHECK_EQ(graph_ioctl(fx.ctx, DAVINCI_IOCTL_GRAPH_CAPTURE, &s, &c),
		 -EBUSY);
	CHECK_EQ(submit(fx.ctx, &s, t, 2, &last), 0);
	CHECK_EQ(last, 0);
	CHECK_EQ(graph_launch(fx.ctx, 1, &s, &l), -ENOENT);
	CHECK_EQ(graph_ioctl(fx.ctx, DAVINCI_IOCTL_GRAPH_END, &s, &c), 0);
	CHECK_EQ(c.tasks, 2);
	graph = c.graph_id;
	CHECK(graph > 0);
	CHECK(all_set(a.p, 1, 4096));
	CHECK_EQ(graph_ioctl(fx.ctx, DAVINCI_IOCTL_GRAPH_END, &s, &c), -EINVAL);

	/* Launch on another (polled) stream: both tasks, one completion. */
	CHECK_EQ(graph_launch(fx.ctx, graph, &other, &l), 0);
	CHECK_EQ(l.first_seq, 1);
	CHECK_EQ(l.last_seq, 2);
	CHECK_EQ(swait(fx.ctx, &other, 2, 10000, &w), 0);
	CHECK_EQ(w.status, 0);
	CHECK(all_set(b.p, 7, 4096));
	CHECK_EQ(other.cq->tail, 1);
	CHECK_EQ(cq_slot(&other, 0)->seq, 2);
	CHECK_EQ(tstatus(fx.ctx, &other, 1), DAVINCI_STATUS_OK);
	/* Replays see what memory holds then; many launches in a row. */
	memset(b.p, 0, 4096);
	for (i = 0, ret = 0; i < 100 && !ret; i++)
		ret = graph_launch(fx.ctx, graph, &s, &l);
	CHECK_EQ(ret, 0);
	CHECK_EQ(l.last_seq, 200);
	CHECK_EQ(swait(fx.ctx, &s, 200, 10000, &w), 0);
	CHECK_EQ(w.status, 0);
	CHECK(all_set(b.p, 7, 4096));

	/* A freed operand fails at the next launch, like any task. */
	buf_free(fx.ctx, &a);
	CHECK_EQ(graph_launch(fx.ctx, graph, &s, &l), 0);
	CHECK_EQ(swait(fx.ctx, &s, l.last_seq, 10000, &w), 0);
	CHECK_EQ(w.status, DAVINCI_STATUS_INVALID_ADDRESS);
	CHECK_EQ(stream_reset(fx.ctx, &s), 0);

	memset(&gid, 0, sizeof(gid));
	gid.graph_id = graph;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_GRAPH_DESTROY, &gid), 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_GRAPH_DESTROY, &gid),
		 -ENOENT);
	CHECK_EQ(graph_launch(fx.ctx, graph, &s, &l), -ENOENT);

	/* A capture or a graph left behind goes with the stream or context. */
	CHECK_EQ(graph_ioctl(fx.ctx, DAVINCI_IOCTL_GRAPH_CAPTURE, &other, &c),
		 0);
	CHECK_EQ(graph_ioctl(fx.ctx, DAVINCI_IOCTL_GRAPH_CAPTURE, &s, &c), 0);
	CHECK_EQ(submit(fx.ctx, &s, t + 1, 1, &last), 0);
	CHECK_EQ(graph_ioctl(fx.ctx, DAVINCI_IOCTL_GRAPH_END, &s, &c), 0);
	stream_destroy(fx.ctx, &other);
	stream_destroy(fx.ctx, &s);
	buf_free(fx.ctx, &b);
	fixture_exit(&fx);	/* checks that nothing is left */
}
