// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_dispatch.c - libFuzzer harness over dvc_ioctl().
 *
 * Each input is a program of operations against one fresh device with two
 * contexts: ioctls with fuzzed argument bytes and sizes (ids and handles
 * are often patched to live ones), doorbells over descriptors written into
 * a mapped submission ring, mmap/munmap, writes into mapped ring headers,
 * context close/reopen, device loss and allocation failures. At the end
 * everything is closed and the core's accounting (dv_core_stats) must be
 * zero.
 *
 *   clang-14 -g -O1 -fsanitize=fuzzer,address,undefined ... \
 *	tests/fuzz/fuzz_dispatch.c kmod/core/\*.c \
 *	userspace/libdavinci_core/\*.c -o fuzz_dispatch
 *   ./fuzz_dispatch -max_total_time=60
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dv_core.h"
#include "libdavinci_core.h"
#include "dvc_test.h"	/* os_posix_fault_zalloc_countdown */

#define NCTX 2
#define MAXH 16
#define MAXMAP 16

static const unsigned int cmds[] = {
	DAVINCI_IOCTL_GET_VERSION, DAVINCI_IOCTL_DEVICE_INFO,
	DAVINCI_IOCTL_MMAP_INFO, DAVINCI_IOCTL_CTX_RESET,
	DAVINCI_IOCTL_MEM_ALLOC, DAVINCI_IOCTL_MEM_FREE,
	DAVINCI_IOCTL_MEM_QUERY, DAVINCI_IOCTL_MEM_INFO,
	DAVINCI_IOCTL_STREAM_CREATE, DAVINCI_IOCTL_STREAM_DESTROY,
	DAVINCI_IOCTL_DOORBELL, DAVINCI_IOCTL_STREAM_WAIT,
	DAVINCI_IOCTL_STREAM_RESET, DAVINCI_IOCTL_STREAM_QUERY,
	DAVINCI_IOCTL_TASK_QUERY, DAVINCI_IOCTL_TASK_CANCEL,
	DAVINCI_IOCTL_SYNC, DAVINCI_IOCTL_EVENT_CREATE,
	DAVINCI_IOCTL_EVENT_DESTROY, DAVINCI_IOCTL_EVENT_QUERY,
	DAVINCI_IOCTL_EVENT_SIGNAL, DAVINCI_IOCTL_EVENT_WAIT,
	DAVINCI_IOCTL_NOTIFY_WAIT,
	_IOWR(DAVINCI_IOCTL_BASE, 0x50, struct davinci_sync),
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

struct fstream {
	uint32_t id;
	uint32_t entries;
	uint32_t tail;
	struct dv_mapping *sq;
	struct dv_mapping *cq;
};

struct fctx {
	struct dv_context *ctx;
	uint64_t handles[MAXH];
	uint64_t addrs[MAXH];
	uint64_t sizes[MAXH];
	uint64_t offsets[MAXH];
	unsigned int nh;
	struct fstream streams[MAXH];
	unsigned int ns;
	uint32_t events[MAXH];
	unsigned int ne;
};

struct input {
	const uint8_t *p;
	size_t n;
};

static uint8_t in_u8(struct input *in)
{
	uint8_t v;

	if (!in->n)
		return 0;
	v = *in->p++;
	in->n--;
	return v;
}

static uint64_t in_u64(struct input *in, unsigned int bytes)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < bytes; i++)
		v |= (uint64_t)in_u8(in) << (8 * i);
	return v;
}

static void in_bytes(struct input *in, void *dst, size_t len)
{
	size_t n = len < in->n ? len : in->n;

	memset(dst, 0, len);
	memcpy(dst, in->p, n);
	in->p += n;
	in->n -= n;
}

static struct dv_mapping *maps[MAXMAP];
static unsigned int nmaps;

static void add_map(struct dv_mapping *m)
{
	if (!m)
		return;
	if (nmaps == MAXMAP) {
		dvc_munmap(m);
		return;
	}
	maps[nmaps++] = m;
}

/* The blocking ioctls, and where each keeps its timeout. */
static const struct {
	unsigned int cmd;
	size_t timeout_off;
} waits[] = {
	{ DAVINCI_IOCTL_STREAM_WAIT,
	  offsetof(struct davinci_stream_wait, timeout_ms) },
	{ DAVINCI_IOCTL_SYNC, offsetof(struct davinci_sync, timeout_ms) },
	{ DAVINCI_IOCTL_EVENT_WAIT,
	  offsetof(struct davinci_event_wait, timeout_ms) },
	{ DAVINCI_IOCTL_NOTIFY_WAIT,
	  offsetof(struct davinci_notification, timeout_ms) },
};

/* A blocking ioctl waits 3 ms at the most. */
static void clamp_timeouts(unsigned int cmd, void *arg)
{
	size_t i;

	for (i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
		if (_IOC_NR(cmd) == _IOC_NR(waits[i].cmd))
			*(uint32_t *)((uint8_t *)arg + waits[i].timeout_off) %= 4;
}

static void patch_ids(struct fctx *f, unsigned int cmd, void *arg,
		      uint8_t sel)
{
	uint32_t *u32p = arg;
	uint64_t *u64p = arg;

	switch (_IOC_NR(cmd)) {
	case 0x11:	/* MEM_FREE */
	case 0x12:	/* MEM_QUERY */
		if (f->nh)
			u64p[0] = f->handles[sel % f->nh];
		break;
	case 0x21: case 0x22: case 0x23: case 0x24: case 0x25: case 0x26:
	case 0x27:
		if (f->ns)
			u32p[0] = f->streams[sel % f->ns].id;
		break;
	case 0x31: case 0x32: case 0x33: case 0x34:
		if (f->ne)
			u32p[0] = f->events[sel % f->ne];
		break;
	}
}

static void record(struct fctx *f, unsigned int cmd, void *arg)
{
	switch (_IOC_NR(cmd)) {
	case 0x10: {
		struct davinci_mem_alloc *a = arg;
		unsigned int i = f->nh < MAXH ? f->nh++ : a->handle % MAXH;

		f->handles[i] = a->handle;
		f->addrs[i] = a->dev_addr;
		f->sizes[i] = a->alloc_size;
		f->offsets[i] = a->mmap_offset;
		break;
	}
	case 0x20: {
		struct davinci_stream_create *c = arg;
		struct fstream *s;

		if (f->ns == MAXH)
			break;
		s = &f->streams[f->ns++];
		memset(s, 0, sizeof(*s));
		s->id = c->stream_id;
		s->entries = c->sq_entries;
		s->sq = dvc_mmap(f->ctx, c->sq_mmap_offset, c->sq_size);
		s->cq = dvc_mmap(f->ctx, c->cq_mmap_offset, c->cq_size);
		break;
	}
	case 0x30: {
		struct davinci_event_create *e = arg;

		if (f->ne < MAXH)
			f->events[f->ne++] = e->event_id;
		break;
	}
	}
}

static void op_ioctl(struct fctx *f, struct input *in)
{
	union {
		uint64_t align;
		uint8_t b[600];
	} arg;
	unsigned int cmd = cmds[in_u8(in) % NCMDS];
	uint8_t mode = in_u8(in);
	size_t size = _IOC_SIZE(cmd);
	int ret;

	/* Argument bytes: as many as the struct has, the rest zero. */
	in_bytes(in, arg.b, size);
	memset(arg.b + size, 0, sizeof(arg.b) - size);

	if (mode & 1) {		/* an older, shorter struct */
		size = in_u8(in) % (size + 1);
		cmd = (cmd & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)) |
		      ((unsigned int)size << _IOC_SIZESHIFT);
	}
	if (mode & 2)
		memset(arg.b + 8, 0, sizeof(arg.b) - 8);
	if (mode & 4)
		patch_ids(f, cmd, arg.b, in_u8(in));
	clamp_timeouts(cmd, arg.b);
	if (_IOC_NR(cmd) == 0x22)	/* doorbells go through op_doorbell */
		return;
	ret = dvc_ioctl(f->ctx, cmd, arg.b);
	if (!ret && !(mode & 1))
		record(f, cmd, arg.b);
	if (!ret && _IOC_NR(cmd) == 0x03) {	/* CTX_RESET */
		f->nh = 0;
		f->ne = 0;
		while (f->ns) {
			struct fstream *s = &f->streams[--f->ns];

			add_map(s->sq);
			add_map(s->cq);
		}
	}
}

/* A manager-node ioctl with fuzzed arguments, privileged or not. */
static void op_manager(struct input *in)
{
	static const unsigned int mcmds[] = {
		DAVINCI_IOCTL_GET_VERSION, DAVINCI_IOCTL_MGMT_LIST,
		DAVINCI_IOCTL_MGMT_INFO, DAVINCI_IOCTL_MGMT_PROCS,
		DAVINCI_IOCTL_MGMT_RESET, DAVINCI_IOCTL_MGMT_INJECT,
		DAVINCI_IOCTL_MGMT_EVENTS,
	};
	union {
		uint64_t align;
		uint8_t b[2048];
	} arg;
	unsigned int cmd = mcmds[in_u8(in) % 7];
	uint8_t mode = in_u8(in);
	size_t size = _IOC_SIZE(cmd);

	memset(arg.b, 0, sizeof(arg.b));
	in_bytes(in, arg.b, size < 48 ? size : 48);
	if (mode & 2)		/* device 0 mostly */
		memset(arg.b, 0, 4);
	if (cmd == DAVINCI_IOCTL_MGMT_INJECT) {
		struct davinci_mgmt_fault *f = (void *)arg.b;

		f->timeout_ms %= 64;
	}
	if (mode & 4)		/* an older, shorter struct */
		cmd = (cmd & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)) |
		      ((unsigned int)(in_u8(in) % (size + 1)) <<
		       _IOC_SIZESHIFT);
	dvc_manager_ioctl_priv(cmd, arg.b, mode & 1);
}

/*
 * An operand address: any 8 bytes, or a live buffer's address plus a
 * multiple of 64 and, when the offset byte's top two bits are set, 1 or 2
 * bytes more: misaligned for 2- and 4-byte elements, which a compute task
 * must refuse (DAVINCI_STATUS_MISALIGNED) without touching memory.
 */
static uint64_t pick_addr(struct fctx *f, struct input *in)
{
	uint8_t sel = in_u8(in), off;

	if (!f->nh || sel == 0xff)
		return in_u64(in, 8);
	off = in_u8(in);
	return f->addrs[sel % f->nh] + (off & 0x3f) * 64ULL +
	       ((off & 0xc0) == 0xc0 ? 1 + (off & 1) : 0);
}

static void op_doorbell(struct fctx *f, struct input *in)
{
	struct fstream *s;
	struct davinci_doorbell d;
	uint8_t *ring;
	unsigned int n, i;

	if (!f->ns)
		return;
	s = &f->streams[in_u8(in) % f->ns];
	if (!s->sq)
		return;
	ring = (uint8_t *)dvc_mapping_addr(s->sq) + DAVINCI_RING_ENTRIES_OFFSET;
	n = in_u8(in) % 9;
	for (i = 0; i < n; i++) {
		struct davinci_task t;
		uint8_t mode = in_u8(in);

		if (mode & 0x80) {
			in_bytes(in, &t, sizeof(t));
		} else {
			memset(&t, 0, sizeof(t));
			t.opcode = in_u8(in) % (DAVINCI_OP_COUNT + 1);
			t.dtype = in_u8(in) % (DAVINCI_DTYPE_COUNT + 1);
			if (t.opcode == DAVINCI_OP_CAST)
				t.dst_dtype = in_u8(in) % DAVINCI_DTYPE_COUNT;
			t.flags = in_u8(in) & 7;
			t.user_data = in_u64(in, 2);
			switch (t.opcode) {
			case DAVINCI_OP_NOP:
				t.count = in_u64(in, 2) % 3000;
				break;
			case DAVINCI_OP_EVENT_RECORD:
			case DAVINCI_OP_EVENT_WAIT:
				t.event_id = f->ne ?
					f->events[in_u8(in) % f->ne] : 1;
				break;
			case DAVINCI_OP_NOTIFY:
				break;
			case DAVINCI_OP_MEMSET:
				t.imm = in_u8(in);
				t.dst = pick_addr(f, in);
				t.count = in_u64(in, 3);
				break;
			default:
				t.dst = pick_addr(f, in);
				t.src0 = pick_addr(f, in);
				t.src1 = pick_addr(f, in);
				t.count = in_u64(in, 2);
				t.m = in_u8(in);
				t.n = in_u8(in);
				t.k = in_u8(in);
				if (t.opcode != DAVINCI_OP_MATMUL &&
				    t.opcode != DAVINCI_OP_SOFTMAX &&
				    t.opcode != DAVINCI_OP_REDUCE_SUM)
					t.m = t.n = t.k = 0;
				else
					t.count = 0;
				if (t.opcode == DAVINCI_OP_MEMCPY)
					t.src1 = 0;
				if (t.opcode == DAVINCI_OP_AXPY)
					t.imm = (uint32_t)in_u64(in, 4);
				if (t.opcode == DAVINCI_OP_COPY_VIEW) {
					/* a block in the fuzzer's memory, as
					 * its tasks last wrote it */
					t.params = pick_addr(f, in);
					t.params_size = mode & 2 ? in_u8(in) :
						sizeof(struct davinci_params_copy_view);
					t.params_version = mode & 4 ? in_u8(in) :
						DAVINCI_PARAMS_COPY_VIEW_VERSION;
				}
				break;
			}
			if (mode & 1)
				t.reserved[mode % (sizeof(t.reserved) /
						   sizeof(t.reserved[0]))] = 1;
		}
		memcpy(ring + ((s->tail + i) & (s->entries - 1)) * sizeof(t),
		       &t, sizeof(t));
	}
	memset(&d, 0, sizeof(d));
	d.stream_id = s->id;
	d.sq_tail = s->tail + n;
	if (in_u8(in) == 0xff)
		d.sq_tail = (uint32_t)in_u64(in, 4);
	if (!dvc_ioctl(f->ctx, DAVINCI_IOCTL_DOORBELL, &d))
		s->tail = d.sq_tail;
}

static void op_mmap(struct fctx *f, struct input *in)
{
	uint8_t sel = in_u8(in);
	uint64_t off, len;

	if (sel & 0x80 && nmaps) {
		unsigned int i = sel % nmaps;

		dvc_munmap(maps[i]);
		maps[i] = maps[--nmaps];
		return;
	}
	if (f->nh && !(sel & 0x40)) {
		unsigned int i = sel % f->nh;

		off = f->offsets[i] + (in_u8(in) % 4) * 4096ULL;
		len = in_u64(in, 3);
	} else {
		off = in_u64(in, 8);
		len = in_u64(in, 8);
	}
	add_map(dvc_mmap(f->ctx, off, len));
}

/* Scribble over a mapped ring header (head, tail, entries...). */
static void op_scribble(struct fctx *f, struct input *in)
{
	struct fstream *s;
	uint32_t *hdr;

	if (!f->ns)
		return;
	s = &f->streams[in_u8(in) % f->ns];
	if (!s->cq || !s->sq)
		return;
	hdr = dvc_mapping_addr(in_u8(in) & 1 ? s->cq : s->sq);
	hdr[in_u8(in) % 16] = (uint32_t)in_u64(in, 4);
}

static void fctx_drop(struct fctx *f)
{
	unsigned int i;

	for (i = 0; i < f->ns; i++) {
		if (f->streams[i].sq)
			dvc_munmap(f->streams[i].sq);
		if (f->streams[i].cq)
			dvc_munmap(f->streams[i].cq);
	}
	memset(f, 0, sizeof(*f));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct dv_device_config cfg = { .aicores = 2, .hbm_bytes = 4ULL << 20,
					.host_bytes = 1ULL << 20,
					.task_timeout_ms = 50,
					.backend = "fuzz" };
	struct dv_device *dev;
	struct fctx f[NCTX];
	struct dv_stats st;
	unsigned int i, steps = 0;

	os_posix_fault_zalloc_countdown = 0;
	dev = dvc_device_create(&cfg);
	if (!dev)
		abort();
	memset(f, 0, sizeof(f));
	for (i = 0; i < NCTX; i++) {
		f[i].ctx = dvc_context_open(dev, i);
		if (!f[i].ctx)
			abort();
	}
	while (in.n && steps++ < 256) {
		uint8_t op = in_u8(&in);
		struct fctx *c = &f[(op >> 7) & 1];

		if (!c->ctx)
			continue;
		switch (op % 16) {
		case 0: case 1: case 2: case 3: case 4: case 5:
			op_ioctl(c, &in);
			break;
		case 6: case 7: case 8: case 9:
			op_doorbell(c, &in);
			break;
		case 10: case 11:
			op_mmap(c, &in);
			break;
		case 12:
			op_scribble(c, &in);
			break;
		case 13:
			if (in_u8(&in) == 0x42) {
				struct dv_context *ctx = c->ctx;

				fctx_drop(c);
				dvc_context_close(ctx);
				c->ctx = dvc_context_open(dev, 9);
			}
			break;
		case 14: {
			uint8_t b = in_u8(&in);

			if (b == 0x99)
				dvc_device_lost(dev);
			else if (b < 0x80)
				op_manager(&in);
			break;
		}
		default:
			/* Fail one of the next few core allocations. */
			os_posix_fault_zalloc_countdown = in_u8(&in) % 8;
			break;
		}
	}
	os_posix_fault_zalloc_countdown = 0;
	for (i = 0; i < nmaps; i++)
		dvc_munmap(maps[i]);
	nmaps = 0;
	for (i = 0; i < NCTX; i++) {
		struct dv_context *ctx = f[i].ctx;

		fctx_drop(&f[i]);
		if (ctx)
			dvc_context_close(ctx);
	}
	dvc_device_destroy(dev);
	dvc_stats(&st);
	if (st.objects || st.devices || st.contexts || st.buffers ||
	    st.streams || st.events || st.tasks || st.mappings ||
	    st.hbm_used || st.host_used) {
		fprintf(stderr, "core accounting not zero: objects %llu "
			"buffers %llu mappings %llu tasks %llu\n",
			(unsigned long long)st.objects,
			(unsigned long long)st.buffers,
			(unsigned long long)st.mappings,
			(unsigned long long)st.tasks);
		abort();
	}
	return 0;
}
