// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_ioctl - structure-aware random-ioctl fuzzer for davinci.ko.
 *
 * Run as root in the debug-kernel guest (scripts/vm-guest.sh, VM_DEBUG=1)
 * with the module loaded. A supervisor forks worker processes that drive
 * /dev/davinciN and /dev/davinci_manager with a random mix of calls built
 * from what earlier calls returned (real buffer handles, device addresses,
 * mmap offsets, stream ids and rings, events, map holds), valid-looking
 * task descriptors submitted through the mapped rings, mmap/munmap/close/
 * reopen, and plain garbage (random command numbers, sizes, contents, bad
 * user pointers). Meanwhile it hot adds and removes devices through the
 * bus's new_device/del_device, SIGKILLs workers mid-run and starts new
 * ones. With -f, failslab fails one of the first slab allocations of a
 * share of the calls into the module (open, ioctl, mmap of a node): the
 * worker writes N to its /proc/thread-self/fail-nth before the call, and
 * the kernel fails the N-th allocation the call makes (fail-nth, as
 * syzkaller does); reading back 0 afterwards means it was injected. The
 * failures so land in the module's paths and nowhere else (the guest's
 * root is 9p, whose client does not survive random allocation failures).
 * The caller sets failslab's ignore-gfp-wait to N, or only atomic
 * allocations could fail.
 *
 * Blocking calls get short timeouts, so every worker keeps moving.
 *
 * usage: fuzz_ioctl [-n IOCTLS] [-p WORKERS] [-s SEED] [-t SECONDS]
 *		     [-k KILL_MS] [-H HOTPLUG_MS] [-f PCT] [-u] [-o SUMMARY]
 *   -n: stop after this many ioctls in all (default 1000000)
 *   -p: workers running at a time (default 4)
 *   -t: stop after this many seconds anyway (default 3600)
 *   -k: SIGKILL a random worker every KILL_MS ms (default 2000, 0: never)
 *   -H: one hot add/remove step every HOTPLUG_MS ms (default 300, 0: none)
 *   -f: arm fail-nth for PCT percent of the calls into the module (0)
 *   -u: half of the workers drop to user nobody, group HwHiAiUser
 *   -o: also write the summary (key=value lines) to this file
 * Exit status: 0 when the target was reached and the devices still answer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uapi/davinci.h"

#define MAX_WORKERS	32
#define NERR		160
#define HOT_FIRST	20	/* hot-plugged device ids: HOT_FIRST.. */
#define HOT_COUNT	4
#define MAX_FDS		6
#define MAX_BUFS	16
#define MAX_STREAMS	4
#define MAX_EVENTS	8
#define MAX_HOLDS	8
#define MAX_MAPS	24

struct counters {
	unsigned long ioctls, calls, ok, opens, closes, mmaps, mmap_fail,
		munmaps, submits, tasks, polls, garbage, badptr, armed,
		injected;
	unsigned long err[NERR];
};

struct shared {
	struct counters w[MAX_WORKERS];	/* per worker slot, summed at the end */
	int stop;	/* read with __atomic_load_n */
};

static struct shared *sh;

/* xorshift64*: cheap, per worker */
static uint64_t rs;
static uint64_t rnd64(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return rs * 2685821657736338717ULL;
}

static uint32_t rnd(uint32_t n)
{
	return n ? (uint32_t)(rnd64() % n) : 0;
}

static int chance(int pct)
{
	return rnd(100) < (uint32_t)pct;
}

struct buf {
	uint64_t handle, dev_addr, mmap_offset, alloc_size;
};

struct stream {
	uint32_t id, entries, tail;
	uint64_t sq_off, cq_off, sq_size, cq_size;
	void *sq;		/* mapped submission ring, or NULL */
};

struct dfile {
	int fd, dev, manager, lost;
	struct buf bufs[MAX_BUFS];
	int nbufs;
	struct stream streams[MAX_STREAMS];
	int nstreams;
	uint32_t events[MAX_EVENTS];
	int nevents;
	uint64_t holds[MAX_HOLDS];
	int nholds;
};

struct map {
	void *addr;
	size_t len;
};

static struct dfile files[MAX_FDS];
static struct map maps[MAX_MAPS];
static struct counters *me;
static int fail_nth_fd = -1, fail_pct;

/* maybe make the call that follows fail one of its first allocations */
static int arm(void)
{
	char n[4];

	if (fail_nth_fd < 0 || !chance(fail_pct))
		return 0;
	n[0] = '1' + (chance(50) ? 0 : rnd(8));
	n[1] = 0;
	if (pwrite(fail_nth_fd, n, 1, 0) != 1)
		return 0;
	me->armed++;
	return 1;
}

static void disarm(int armed)
{
	char n[16] = "";

	if (!armed)
		return;
	if (pread(fail_nth_fd, n, sizeof(n) - 1, 0) > 0 && n[0] == '0')
		me->injected++;
	else if (pwrite(fail_nth_fd, "0", 1, 0) != 1)
		perror("fail-nth");
}

static void count_err(int e)
{
	me->err[e > 0 && e < NERR ? e : 0]++;
}

static int do_ioctl(struct dfile *f, unsigned long cmd, void *arg)
{
	int r, armed;

	me->ioctls++;
	me->calls++;
	armed = arm();
	r = ioctl(f->fd, cmd, arg);
	if (r < 0)
		r = -errno;
	disarm(armed);
	if (r < 0) {
		errno = -r;
		count_err(errno);
		/* the device is gone or was reset: reopen before long */
		if (errno == ENODEV)
			f->lost = 1;
		return -errno;
	}
	me->ok++;
	return r;
}

/*
 * A command whose argument starts with the u32 id of what it acts on (a
 * stream, an event, a device index) and brings nothing else in: @id and
 * zeros, in a union as large as the largest such argument.
 */
static int ioctl_on(struct dfile *f, unsigned long cmd, uint32_t id)
{
	union {
		uint32_t id;
		struct davinci_stream_id s;
		struct davinci_stream_query sq;
		struct davinci_event_id e;
		struct davinci_event_query eq;
		struct davinci_mgmt_info mi;
		struct davinci_mgmt_procs mp;
	} u;

	memset(&u, 0, sizeof(u));
	u.id = id;
	return do_ioctl(f, cmd, &u);
}

static int pick_dev(void)
{
	if (chance(70))
		return rnd(2);
	if (chance(85))
		return HOT_FIRST + rnd(HOT_COUNT);
	return rnd(64);
}

static void close_file(struct dfile *f)
{
	int i;

	if (f->fd < 0)
		return;
	/* ring mappings may stay after close: they are tracked in maps[] */
	for (i = 0; i < f->nstreams; i++)
		f->streams[i].sq = NULL;
	close(f->fd);
	me->closes++;
	me->calls++;
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

static void open_file(struct dfile *f)
{
	char path[64];
	int armed, e;

	close_file(f);
	f->manager = chance(15);
	f->dev = f->manager ? -1 : pick_dev();
	if (f->manager)
		snprintf(path, sizeof(path), "davinci_manager");
	else
		snprintf(path, sizeof(path), "davinci%d", f->dev);
	me->calls++;
	armed = arm();
	f->fd = open(path, O_RDWR | O_CLOEXEC);
	e = errno;
	disarm(armed);
	errno = e;
	if (f->fd < 0)
		count_err(errno);
	else
		me->opens++;
}

/* index for a new entry of an array holding *n of max: append or replace */
static int add_slot(int *n, int max)
{
	return *n < max ? (*n)++ : (int)rnd(max);
}

static struct dfile *pick_file(void)
{
	struct dfile *f = &files[rnd(MAX_FDS)];

	if (f->fd < 0 || (f->lost && chance(30)))
		open_file(f);
	return f->fd < 0 ? NULL : f;
}

/* unmap maps[i]; a ring unmapped is not written to afterwards */
static void unmap_slot(int i)
{
	struct dfile *f;
	int j, k;

	if (!maps[i].addr)
		return;
	for (j = 0; j < MAX_FDS; j++) {
		f = &files[j];
		for (k = 0; k < f->nstreams; k++)
			if (f->streams[k].sq == maps[i].addr)
				f->streams[k].sq = NULL;
	}
	munmap(maps[i].addr, maps[i].len);
	me->munmaps++;
	me->calls++;
	maps[i].addr = NULL;
}

static void *track_map(void *a, size_t len)
{
	int i = rnd(MAX_MAPS);

	unmap_slot(i);
	maps[i].addr = a;
	maps[i].len = len;
	return a;
}

static void *do_mmap(struct dfile *f, uint64_t off, size_t len)
{
	void *a;
	int armed, e;

	me->mmaps++;
	me->calls++;
	armed = arm();
	a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd,
		 (off_t)off);
	e = errno;
	disarm(armed);
	if (a == MAP_FAILED) {
		me->mmap_fail++;
		count_err(e);
		return NULL;
	}
	return track_map(a, len);
}

/* an address for a task operand: mostly inside own buffers */
static uint64_t task_addr(struct dfile *f)
{
	struct buf *b;

	if (!f->nbufs || chance(8))
		return chance(50) ? 0 : rnd64() & ((1ULL << 48) - 1);
	b = &f->bufs[rnd(f->nbufs)];
	switch (rnd(6)) {
	case 0:
		return b->dev_addr + b->alloc_size - rnd(64);
	case 1:
		return b->dev_addr + rnd(b->alloc_size);
	default:
		return b->dev_addr + (rnd(4) * 256);
	}
}

static uint64_t elems(void)
{
	switch (rnd(4)) {
	case 0:
		return 1 + rnd(16);
	case 1:
		return 1 + rnd(1024);
	case 2:
		return 1 + rnd(16384);
	default:
		return chance(95) ? rnd(256) : rnd64();
	}
}

/*
 * A descriptor that fills just the fields its opcode uses (what the
 * driver checks: others must be zero), from own buffers; one in ten gets a
 * random violation.
 */
static void random_task(struct dfile *f, struct davinci_task *t)
{
	memset(t, 0, sizeof(*t));
	t->opcode = rnd(DAVINCI_OP_COUNT);
	t->user_data = rnd64();
	if (chance(20))
		t->flags |= DAVINCI_TASK_F_NOTIFY;
	if (t->opcode >= DAVINCI_OP_ADD)
		t->dtype = rnd(DAVINCI_DTYPE_COUNT);
	switch (t->opcode) {
	case DAVINCI_OP_NOP:
		t->count = rnd(4) ? 0 : rnd(300);	/* microseconds */
		break;
	case DAVINCI_OP_MEMCPY:
		t->src0 = task_addr(f);
		/* fall through */
	case DAVINCI_OP_MEMSET:
		t->dst = task_addr(f);
		t->count = elems();
		if (t->opcode == DAVINCI_OP_MEMSET)
			t->imm = rnd(256);
		break;
	case DAVINCI_OP_EVENT_RECORD:
	case DAVINCI_OP_EVENT_WAIT:
		t->event_id = f->nevents && chance(85) ?
			f->events[rnd(f->nevents)] : rnd(4);
		if (t->opcode == DAVINCI_OP_EVENT_WAIT && chance(20))
			t->flags |= DAVINCI_TASK_F_WAIT_NEXT;
		break;
	case DAVINCI_OP_NOTIFY:
		break;
	case DAVINCI_OP_MATMUL:
		t->m = 1 + rnd(32);
		t->n = 1 + rnd(32);
		t->k = 1 + rnd(32);
		t->flags |= rnd(4) << 1;	/* TRANS_A, TRANS_B */
		t->dst = task_addr(f);
		t->src0 = task_addr(f);
		t->src1 = task_addr(f);
		break;
	case DAVINCI_OP_SOFTMAX:
	case DAVINCI_OP_REDUCE_SUM:
		t->m = 1 + rnd(32);
		t->n = 1 + rnd(64);
		t->dst = task_addr(f);
		t->src0 = task_addr(f);
		break;
	case DAVINCI_OP_CAST:
		t->dst_dtype = rnd(DAVINCI_DTYPE_COUNT);
		/* fall through */
	case DAVINCI_OP_RELU:
	case DAVINCI_OP_EXP:
	case DAVINCI_OP_SQRT:
	case DAVINCI_OP_ABS:
	case DAVINCI_OP_LEAKY_RELU:
	case DAVINCI_OP_TANH:
	case DAVINCI_OP_SIGMOID:
	case DAVINCI_OP_ERF:
	case DAVINCI_OP_LOG:
	case DAVINCI_OP_GELU:
	case DAVINCI_OP_SILU:
	case DAVINCI_OP_RECIPROCAL:
	case DAVINCI_OP_NEG:
		t->dst = task_addr(f);
		t->src0 = task_addr(f);
		t->count = elems();
		if (t->opcode == DAVINCI_OP_LEAKY_RELU)
			t->imm = rnd64();
		if (t->opcode == DAVINCI_OP_GELU)
			t->imm = rnd(DAVINCI_GELU_COUNT);
		break;
	case DAVINCI_OP_COPY_VIEW:
		/* a parameter block wherever the fuzzer's memory is */
		t->dst = task_addr(f);
		t->src0 = task_addr(f);
		t->count = elems();
		t->params = task_addr(f);
		t->params_size = sizeof(struct davinci_params_copy_view);
		t->params_version = DAVINCI_PARAMS_COPY_VIEW_VERSION;
		break;
	default:	/* binary element-wise and AXPY */
		t->dst = task_addr(f);
		t->src0 = task_addr(f);
		t->src1 = task_addr(f);
		t->count = elems();
		if (t->opcode == DAVINCI_OP_AXPY)
			t->imm = rnd64();
		if (t->opcode == DAVINCI_OP_GELU_GRAD)
			t->imm = rnd(DAVINCI_GELU_GRAD_COUNT);
	}
	if (!chance(10))
		return;
	switch (rnd(8)) {
	case 0:
		t->opcode = rnd(1 << 16); break;
	case 1:
		t->dtype = rnd(256); break;
	case 2:
		t->flags = rnd64(); break;
	case 3:
		t->reserved[rnd(sizeof(t->reserved) /
				 sizeof(t->reserved[0]))] = 1; break;
	case 4:
		t->pad0 = 1; break;
	case 5:
		t->m = rnd64(); t->n = rnd(1 << 16); break;
	case 6:
		t->count = rnd64(); break;
	default:
		t->imm = rnd64(); t->k = rnd(4); break;
	}
}

static void op_alloc(struct dfile *f)
{
	struct davinci_mem_alloc a = {0};
	static const uint64_t sizes[] = {1, 64, 4096, 65536, 1 << 20,
					 2 << 20, 3 << 20};

	a.size = chance(90) ? sizes[rnd(7)] + (chance(30) ? rnd(4096) : 0) :
		rnd64() >> rnd(64);
	a.flags = chance(90) ? (rnd(3) | (chance(30) ? DAVINCI_MEM_HOST : 0)) :
		(uint32_t)rnd64();
	if (do_ioctl(f, DAVINCI_IOCTL_MEM_ALLOC, &a) == 0) {
		struct buf *b = &f->bufs[add_slot(&f->nbufs, MAX_BUFS)];

		b->handle = a.handle;
		b->dev_addr = a.dev_addr;
		b->mmap_offset = a.mmap_offset;
		b->alloc_size = a.alloc_size;
	}
}

static void op_free(struct dfile *f)
{
	struct davinci_mem_free fr;

	if (f->nbufs && chance(85)) {
		int i = rnd(f->nbufs);

		fr.handle = f->bufs[i].handle;
		if (chance(80))
			f->bufs[i] = f->bufs[--f->nbufs];
	} else {
		fr.handle = rnd(8) ? rnd(16) : rnd64();
	}
	do_ioctl(f, DAVINCI_IOCTL_MEM_FREE, &fr);
}

static void op_mmap_buf(struct dfile *f)
{
	struct buf *b;
	uint64_t off;
	size_t len;
	char *p;

	if (!f->nbufs)
		return;
	b = &f->bufs[rnd(f->nbufs)];
	off = b->mmap_offset;
	len = b->alloc_size;
	if (chance(15))
		off += 4096 * rnd(4);
	if (chance(10))
		len += 4096 * (1 + rnd(4));
	if (chance(10) && len > 4096)
		len = 4096;
	if (len > (64 << 20))
		len = 64 << 20;
	p = do_mmap(f, off, len);
	if (p) {
		p[0] = (char)rnd(256);
		p[len - 1] ^= 1;
		if (chance(20))
			memset(p, rnd(256), len < 65536 ? len : 65536);
	}
}

static void op_munmap(void)
{
	unmap_slot(rnd(MAX_MAPS));
}

static void op_stream_create(struct dfile *f)
{
	struct davinci_stream_create c = {0};
	struct stream *s;

	c.sq_entries = chance(90) ? 1u << rnd(8) : (uint32_t)rnd64();
	c.cq_entries = chance(90) ? 1u << rnd(8) : (uint32_t)rnd64();
	c.priority = chance(95) ? rnd(8) : rnd(1000);
	c.flags = chance(97) ? 0 : 1;
	if (do_ioctl(f, DAVINCI_IOCTL_STREAM_CREATE, &c))
		return;
	s = &f->streams[add_slot(&f->nstreams, MAX_STREAMS)];
	memset(s, 0, sizeof(*s));
	s->id = c.stream_id;
	s->entries = c.sq_entries ? c.sq_entries : 256;
	s->sq_off = c.sq_mmap_offset;
	s->cq_off = c.cq_mmap_offset;
	s->sq_size = c.sq_size;
	s->cq_size = c.cq_size;
	if (chance(90))
		s->sq = do_mmap(f, s->sq_off, s->sq_size);
	if (chance(50))
		do_mmap(f, s->cq_off, s->cq_size);
}

static struct stream *pick_stream(struct dfile *f)
{
	return f->nstreams ? &f->streams[rnd(f->nstreams)] : NULL;
}

static uint32_t stream_id(struct dfile *f)
{
	struct stream *s = pick_stream(f);

	return s && chance(90) ? s->id : rnd(8);
}

static void op_submit(struct dfile *f)
{
	struct stream *s = pick_stream(f);
	struct davinci_doorbell db = {0};
	struct davinci_ring_header *h;
	uint32_t n, i, tail;

	if (!s || !s->sq)
		return;
	h = s->sq;
	n = 1 + rnd(chance(80) ? 4 : s->entries);
	tail = h->head;	/* the driver's head: what it has taken in */
	if (chance(5))
		tail = s->tail;
	for (i = 0; i < n && i < s->entries; i++) {
		struct davinci_task *t = (void *)((char *)s->sq +
			DAVINCI_RING_ENTRIES_OFFSET +
			((tail + i) & (s->entries - 1)) * sizeof(*t));

		random_task(f, t);
	}
	db.stream_id = chance(95) ? s->id : rnd(8);
	db.sq_tail = tail + i;
	if (chance(5))
		db.sq_tail = (uint32_t)rnd64();
	me->submits++;
	if (do_ioctl(f, DAVINCI_IOCTL_DOORBELL, &db) == 0) {
		s->tail = db.sq_tail;
		me->tasks += i;
	}
}

static void op_stream_misc(struct dfile *f)
{
	union {
		struct davinci_stream_wait w;
		struct davinci_task_query t;
		struct davinci_sync s;
	} u;

	memset(&u, 0, sizeof(u));
	switch (rnd(7)) {
	case 0:
		u.w.stream_id = stream_id(f);
		u.w.timeout_ms = chance(70) ? 0 : 1 + rnd(5);
		u.w.seq = chance(50) ? 0 : rnd(64);
		do_ioctl(f, DAVINCI_IOCTL_STREAM_WAIT, &u.w);
		break;
	case 1:
		ioctl_on(f, DAVINCI_IOCTL_STREAM_QUERY, stream_id(f));
		break;
	case 2:
		ioctl_on(f, DAVINCI_IOCTL_STREAM_RESET, stream_id(f));
		break;
	case 3:
	case 4:
		u.t.stream_id = stream_id(f);
		u.t.seq = rnd(64);
		do_ioctl(f, rnd(2) ? DAVINCI_IOCTL_TASK_QUERY :
			 DAVINCI_IOCTL_TASK_CANCEL, &u.t);
		break;
	case 5:
		u.s.timeout_ms = chance(80) ? 0 : 1 + rnd(5);
		do_ioctl(f, DAVINCI_IOCTL_SYNC, &u.s);
		break;
	default:
		if (!f->nstreams || chance(30))
			break;
		{
			int i = rnd(f->nstreams);

			ioctl_on(f, DAVINCI_IOCTL_STREAM_DESTROY,
				 f->streams[i].id);
			/* its ring mapping stays in maps[] until munmap */
			f->streams[i] = f->streams[--f->nstreams];
		}
	}
}

static void op_event(struct dfile *f)
{
	static const unsigned long on_event[] = {
		DAVINCI_IOCTL_EVENT_DESTROY, DAVINCI_IOCTL_EVENT_QUERY,
		DAVINCI_IOCTL_EVENT_SIGNAL,
	};
	union {
		struct davinci_event_create c;
		struct davinci_event_wait w;
	} u;
	uint32_t ev = f->nevents && chance(85) ?
		f->events[rnd(f->nevents)] : rnd(6);
	uint32_t k = rnd(6);

	memset(&u, 0, sizeof(u));
	switch (k) {
	case 0:
		u.c.flags = chance(95) ? rnd(2) : (uint32_t)rnd64();
		if (do_ioctl(f, DAVINCI_IOCTL_EVENT_CREATE, &u.c) == 0)
			f->events[add_slot(&f->nevents, MAX_EVENTS)] =
				u.c.event_id;
		break;
	case 1:
	case 2:
	case 3:
		ioctl_on(f, on_event[k - 1], ev);
		break;
	default:
		u.w.event_id = ev;
		u.w.timeout_ms = chance(70) ? 0 : 1 + rnd(5);
		do_ioctl(f, DAVINCI_IOCTL_EVENT_WAIT, &u.w);
	}
}

static void op_info(struct dfile *f)
{
	/* the queries that bring nothing in: u.v, u.d, u.l and u.m */
	static const unsigned long queries[] = {
		DAVINCI_IOCTL_GET_VERSION, DAVINCI_IOCTL_DEVICE_INFO,
		DAVINCI_IOCTL_GET_LIMITS, DAVINCI_IOCTL_MMAP_INFO,
	};
	union {
		struct davinci_version v;
		struct davinci_device_info d;
		struct davinci_limits l;
		struct davinci_mmap_info m;
		struct davinci_mem_info mi;
		struct davinci_mem_query mq;
		struct davinci_notification n;
		struct davinci_map_hold h;
		struct davinci_map_release r;
	} u;
	uint32_t k = rnd(11);

	memset(&u, 0, sizeof(u));
	if (k < 4) {
		do_ioctl(f, queries[k], &u);
		return;
	}
	switch (k) {
	case 4:
		u.mi.flags = chance(50) ? 0 : DAVINCI_MEM_HOST;
		do_ioctl(f, DAVINCI_IOCTL_MEM_INFO, &u.mi);
		break;
	case 5:
		if (f->nbufs && chance(50)) {
			struct buf *b = &f->bufs[rnd(f->nbufs)];

			u.mq.handle = chance(50) ? b->handle : 0;
			u.mq.dev_addr = b->dev_addr + rnd(b->alloc_size + 1);
		} else {
			u.mq.dev_addr = rnd64();
		}
		do_ioctl(f, DAVINCI_IOCTL_MEM_QUERY, &u.mq);
		break;
	case 6:
		u.n.timeout_ms = chance(80) ? 0 : 1 + rnd(3);
		do_ioctl(f, DAVINCI_IOCTL_NOTIFY_WAIT, &u.n);
		break;
	case 7:
	case 8:
		if (f->nbufs) {
			struct buf *b = &f->bufs[rnd(f->nbufs)];

			u.h.mmap_offset = b->mmap_offset +
				(chance(80) ? 0 : 4096 * rnd(4));
			u.h.length = chance(80) ? b->alloc_size : rnd64();
		} else {
			u.h.mmap_offset = rnd64();
			u.h.length = rnd(1 << 20);
		}
		if (do_ioctl(f, DAVINCI_IOCTL_MAP_HOLD, &u.h) == 0)
			f->holds[add_slot(&f->nholds, MAX_HOLDS)] =
				u.h.handle;
		break;
	case 9:
		if (f->nholds && chance(85)) {
			int i = rnd(f->nholds);

			u.r.handle = f->holds[i];
			f->holds[i] = f->holds[--f->nholds];
		} else {
			u.r.handle = rnd(16);
		}
		do_ioctl(f, DAVINCI_IOCTL_MAP_RELEASE, &u.r);
		break;
	default:
		if (chance(20)) {
			do_ioctl(f, DAVINCI_IOCTL_CTX_RESET, NULL);
			f->nbufs = f->nstreams = f->nevents = f->nholds = 0;
		}
	}
}

static void op_manager(struct dfile *f)
{
	union {
		struct davinci_mgmt_list l;
		struct davinci_mgmt_reset r;
		struct davinci_mgmt_fault fl;
		struct davinci_mgmt_events e;
	} u;
	uint32_t dev = chance(90) ? (uint32_t)pick_dev() : (uint32_t)rnd64();

	memset(&u, 0, sizeof(u));
	switch (rnd(10)) {
	case 0:
		do_ioctl(f, DAVINCI_IOCTL_MGMT_LIST, &u.l);
		break;
	case 1:
	case 2:
		ioctl_on(f, DAVINCI_IOCTL_MGMT_INFO, dev);
		break;
	case 3:
		ioctl_on(f, DAVINCI_IOCTL_MGMT_PROCS, dev);
		break;
	case 4:
	case 5:
		u.e.since_seq = chance(50) ? 0 : rnd64() >> rnd(64);
		u.e.device = chance(50) ? DAVINCI_MGMT_ALL_DEVICES : dev;
		do_ioctl(f, DAVINCI_IOCTL_MGMT_EVENTS, &u.e);
		break;
	case 6:
		if (!chance(20))	/* a reset fails every context */
			break;
		u.r.index = dev;
		u.r.flags = chance(95) ? 0 : 1;
		do_ioctl(f, DAVINCI_IOCTL_MGMT_RESET, &u.r);
		break;
	default:
		u.fl.index = dev;
		u.fl.kind = chance(95) ? 1 + rnd(4) : rnd64();
		if (u.fl.kind == DAVINCI_FAULT_LOST && !chance(5))
			u.fl.kind = DAVINCI_FAULT_THROTTLE;
		u.fl.addr = rnd64() >> rnd(64);
		u.fl.size = chance(50) ? 0 : rnd(1 << 20);
		u.fl.level = chance(90) ? rnd(200) : rnd(2000);
		u.fl.timeout_ms = 1 + rnd(50);	/* HANG: short watchdog */
		u.fl.flags = chance(97) ? 0 : 1;
		do_ioctl(f, DAVINCI_IOCTL_MGMT_INJECT, &u.fl);
	}
}

/* offset of a u32 timeout_ms in blocking commands' arguments, else -1 */
static int timeout_field(unsigned int nr)
{
	switch (nr) {
	case 0x23:
		return 4;
	case 0x28:
		return 0;
	case 0x34:
		return 4;
	case 0x40:
		return 0;
	}
	return -1;
}

static const unsigned char nrs[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x10, 0x11, 0x12, 0x13,
	0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x30, 0x31,
	0x32, 0x33, 0x34, 0x40, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85,
};

static unsigned char garbage_buf[16384 + 64];

static void op_garbage(struct dfile *f)
{
	unsigned int nr = chance(90) ? nrs[rnd(sizeof(nrs))] : rnd(256);
	unsigned int type = chance(95) ? DAVINCI_IOCTL_BASE : rnd(256);
	/*
	 * Other types reach the VFS's own commands first; keep clear of
	 * those that act on the file system (FIFREEZE is 'X') or the
	 * terminal layer.
	 */
	if (type == 'X' || type == 'T' || type == 'f' || type == 0x94)
		type = DAVINCI_IOCTL_BASE;
	unsigned int dir = rnd(4);
	static const unsigned int sizes[] = {0, 4, 8, 16, 24, 32, 40, 48, 56,
					     64, 72, 80, 96, 128, 520, 1040};
	unsigned int size = chance(85) ? sizes[rnd(16)] : rnd(1 << 14);
	unsigned long cmd;
	unsigned int i;
	int t;

	cmd = ((unsigned long)dir << 30) | ((unsigned long)size << 16) |
		(type << 8) | nr;
	for (i = 0; i < size && i < 256; i += 8) {
		uint64_t v = chance(50) ? rnd(4) : rnd64();

		memcpy(garbage_buf + i, &v, 8);
	}
	if (size > 256)
		memset(garbage_buf + 256, chance(50) ? 0 : 0xff, size - 256);
	t = timeout_field(nr);
	if (t >= 0)
		memset(garbage_buf + t, 0, 4);
	me->garbage++;
	if (chance(3)) {
		static const unsigned long bad[] = {
			0x10, 0xfff, 0xffff800000000000UL, 0xfffffffffffff000UL,
		};

		me->badptr++;
		do_ioctl(f, cmd, (void *)bad[rnd(4)]);
		return;
	}
	do_ioctl(f, cmd, size ? garbage_buf : NULL);
}

/*
 * What a worker does with a device node's file when its draw r of
 * rnd(1000) is 180 or more (below, every file gets the same calls): the
 * first op whose bound is above r.
 */
static const struct {
	uint32_t below;
	void (*op)(struct dfile *f);
} device_ops[] = {
	{ 300, op_alloc },
	{ 380, op_free },
	{ 440, op_mmap_buf },
	{ 500, op_stream_create },
	{ 700, op_submit },
	{ 820, op_stream_misc },
	{ 900, op_event },
	{ 1000, op_info },
};

static void worker(int slot, uint64_t seed, int unpriv)
{
	long target;
	int i;

	me = &sh->w[slot];
	rs = seed * 0x9E3779B97F4A7C15ULL + 1;
	signal(SIGPIPE, SIG_IGN);
	/* opened as root: the file is the task's, whoever it becomes */
	if (fail_pct) {
		fail_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
		if (fail_nth_fd < 0) {
			perror("fail-nth");
			_exit(4);
		}
	}
	/* device nodes by relative path: no lookups on the 9p root */
	if (chdir("/dev"))
		_exit(5);
	if (unpriv) {
		struct passwd *pw = getpwnam("nobody");
		struct group *gr = getgrnam("HwHiAiUser");

		if (pw && gr) {
			gid_t g = gr->gr_gid;

			if (setgroups(1, &g) || setgid(pw->pw_gid) ||
			    setuid(pw->pw_uid))
				_exit(3);
		}
	}
	for (i = 0; i < MAX_FDS; i++)
		files[i].fd = -1;
	target = 1L << 40;
	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED) && target--) {
		struct dfile *f;
		uint32_t r = rnd(1000);

		if (r < 8) {
			f = &files[rnd(MAX_FDS)];
			if (chance(50))
				close_file(f);
			else
				open_file(f);
			continue;
		}
		if (r < 20) {
			op_munmap();
			continue;
		}
		f = pick_file();
		if (!f)
			continue;
		if (r < 30) {
			struct pollfd p = { .fd = f->fd, .events = POLLIN };

			me->polls++;
			me->calls++;
			poll(&p, 1, 0);
		} else if (r < 180) {
			op_garbage(f);
		} else if (f->manager) {
			op_manager(f);
		} else {
			i = 0;
			while (r >= device_ops[i].below)
				i++;
			device_ops[i].op(f);
		}
	}
	_exit(0);
}

static unsigned long total_ioctls(void)
{
	unsigned long n = 0;
	int i;

	for (i = 0; i < MAX_WORKERS; i++)
		n += sh->w[i].ioctls;
	return n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int bus_write(const char *attr, const char *text)
{
	char path[64];
	int fd, r = 0;

	snprintf(path, sizeof(path), "/sys/bus/davinci/%s", attr);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		r = -errno;
	close(fd);
	return r;
}

static const char *const errnames[NERR] = {
	[0] = "other", [EPERM] = "EPERM", [ENOENT] = "ENOENT",
	[EINTR] = "EINTR", [EIO] = "EIO", [ENXIO] = "ENXIO",
	[EBADF] = "EBADF", [EAGAIN] = "EAGAIN", [ENOMEM] = "ENOMEM",
	[EACCES] = "EACCES", [EFAULT] = "EFAULT", [EBUSY] = "EBUSY",
	[EEXIST] = "EEXIST", [ENODEV] = "ENODEV", [EINVAL] = "EINVAL",
	[EMFILE] = "EMFILE", [ENOTTY] = "ENOTTY", [ENOSPC] = "ENOSPC",
	[ERANGE] = "ERANGE", [EOVERFLOW] = "EOVERFLOW",
	[ETIMEDOUT] = "ETIMEDOUT", [EALREADY] = "EALREADY",
	[EUSERS] = "EUSERS", [EOPNOTSUPP] = "EOPNOTSUPP",
	[ECANCELED] = "ECANCELED", [E2BIG] = "E2BIG",
};

int main(int argc, char **argv)
{
	unsigned long target = 1000000;
	int nworkers = 4, kill_ms = 2000, hot_ms = 300, unpriv = 0;
	double max_s = 3600, t0, next_kill, next_hot, last_print;
	uint64_t seed = (uint64_t)time(NULL);
	const char *summary = NULL;
	pid_t pids[MAX_WORKERS] = {0};
	int slot_of[MAX_WORKERS] = {0};
	unsigned long kills = 0, spawned = 0, exits_bad = 0;
	unsigned long hot_add = 0, hot_add_fail = 0, hot_del = 0,
		hot_del_fail = 0;
	int hot_live[HOT_COUNT] = {0};
	struct counters sum;
	int c, i, slot_gen = 0, ok = 1;
	FILE *out;

	while ((c = getopt(argc, argv, "n:p:s:t:k:H:f:uo:")) != -1) {
		switch (c) {
		case 'n':
			target = strtoul(optarg, NULL, 0); break;
		case 'p':
			nworkers = atoi(optarg); break;
		case 's':
			seed = strtoull(optarg, NULL, 0); break;
		case 't':
			max_s = atof(optarg); break;
		case 'k':
			kill_ms = atoi(optarg); break;
		case 'H':
			hot_ms = atoi(optarg); break;
		case 'f':
			fail_pct = atoi(optarg); break;
		case 'u':
			unpriv = 1; break;
		case 'o':
			summary = optarg; break;
		default:
			fprintf(stderr, "usage: see the comment at the top\n");
			return 2;
		}
	}
	if (nworkers < 1 || nworkers > MAX_WORKERS / 2)
		nworkers = 4;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	memset(sh, 0, sizeof(*sh));
	rs = seed ^ 0x5DEECE66DULL;	/* the supervisor's choices */
	printf("fuzz_ioctl: seed %llu, %d workers, target %lu ioctls\n",
	       (unsigned long long)seed, nworkers, target);
	fflush(stdout);

	/*
	 * Worker slots: a killed worker's counters stay in its slot; its
	 * replacement takes a fresh slot while there are any, then reuses
	 * (adds to) the oldest.
	 */
	t0 = now_s();
	next_kill = t0 + kill_ms / 1000.0;
	next_hot = t0 + hot_ms / 1000.0;
	last_print = t0;
	for (;;) {
		double t = now_s();
		int status;
		pid_t p;

		for (i = 0; i < nworkers; i++) {
			if (pids[i] > 0)
				continue;
			{
				uint64_t s = seed + spawned;
				int slot, j, busy;

				/* a slot no live worker writes to */
				do {
					slot = slot_gen++ % MAX_WORKERS;
					busy = 0;
					for (j = 0; j < nworkers; j++)
						busy |= pids[j] > 0 &&
							slot_of[j] == slot;
				} while (busy);
				spawned++;
				p = fork();
				if (p == 0)
					worker(slot, s, unpriv && (i & 1));
				pids[i] = p;
				slot_of[i] = slot;
			}
		}
		if (total_ioctls() >= target || t - t0 > max_s)
			break;
		if (kill_ms && t >= next_kill) {
			i = rnd(nworkers);
			if (pids[i] > 0 && kill(pids[i], SIGKILL) == 0)
				kills++;
			next_kill = t + (kill_ms / 2 + rnd(kill_ms)) / 1000.0;
		}
		if (hot_ms && t >= next_hot) {
			char txt[32];
			int h = rnd(HOT_COUNT);

			if (!hot_live[h]) {
				snprintf(txt, sizeof(txt), "%d 16 1",
					 HOT_FIRST + h);
				if (bus_write("new_device", txt) == 0) {
					hot_add++;
					hot_live[h] = 1;
				} else {
					hot_add_fail++;
				}
			} else {
				snprintf(txt, sizeof(txt), "%d", HOT_FIRST + h);
				if (bus_write("del_device", txt) == 0)
					hot_del++;
				else
					hot_del_fail++;
				hot_live[h] = 0;
			}
			next_hot = t + (hot_ms / 2 + rnd(hot_ms)) / 1000.0;
		}
		while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
			for (i = 0; i < nworkers; i++)
				if (pids[i] == p)
					pids[i] = 0;
			if (!(WIFSIGNALED(status) &&
			      WTERMSIG(status) == SIGKILL) &&
			    !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
				exits_bad++;
				fprintf(stderr,
					"fuzz_ioctl: worker %d: status 0x%x\n",
					p, status);
			}
		}
		if (t - last_print >= 30) {
			printf("fuzz_ioctl: %.0f s, %lu ioctls, %lu kills, %lu hot adds\n",
			       t - t0, total_ioctls(), kills, hot_add);
			fflush(stdout);
			last_print = t;
		}
		usleep(20000);
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < nworkers; i++) {
		int status;

		if (pids[i] <= 0)
			continue;
		waitpid(pids[i], &status, 0);
		if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
			exits_bad++;
			fprintf(stderr, "fuzz_ioctl: worker %d: status 0x%x\n",
				pids[i], status);
		}
	}
	for (i = 0; i < HOT_COUNT; i++) {
		char txt[16];

		if (!hot_live[i])
			continue;
		snprintf(txt, sizeof(txt), "%d", HOT_FIRST + i);
		if (bus_write("del_device", txt) == 0)
			hot_del++;
		else
			hot_del_fail++;
	}

	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < MAX_WORKERS; i++) {
		struct counters *w = &sh->w[i];
		int e;

		sum.ioctls += w->ioctls;
		sum.calls += w->calls;
		sum.ok += w->ok;
		sum.opens += w->opens;
		sum.closes += w->closes;
		sum.mmaps += w->mmaps;
		sum.mmap_fail += w->mmap_fail;
		sum.munmaps += w->munmaps;
		sum.submits += w->submits;
		sum.tasks += w->tasks;
		sum.polls += w->polls;
		sum.garbage += w->garbage;
		sum.badptr += w->badptr;
		sum.armed += w->armed;
		sum.injected += w->injected;
		for (e = 0; e < NERR; e++)
			sum.err[e] += w->err[e];
	}
	if (sum.ioctls < target) {
		fprintf(stderr, "fuzz_ioctl: only %lu of %lu ioctls in %.0f s\n",
			sum.ioctls, target, max_s);
		ok = 0;
	}
	if (exits_bad)
		ok = 0;
	for (out = stdout; out; out = out == stdout && summary ?
	     fopen(summary, "w") : NULL) {
		int e;

		fprintf(out, "seed=%llu\nseconds=%.0f\nworkers=%d\n"
			"workers_started=%lu\nkills=%lu\nworker_bad_exits=%lu\n"
			"ioctls=%lu\nioctls_ok=%lu\ncalls=%lu\nopens=%lu\n"
			"closes=%lu\nmmaps=%lu\nmmaps_failed=%lu\nmunmaps=%lu\n"
			"doorbells=%lu\ntasks_submitted=%lu\npolls=%lu\n"
			"garbage_ioctls=%lu\nbad_pointer_ioctls=%lu\n"
			"hotplug_adds=%lu\nhotplug_add_failures=%lu\n"
			"hotplug_dels=%lu\nhotplug_del_failures=%lu\n"
			"fail_nth_armed=%lu\nfail_nth_injected=%lu\n",
			(unsigned long long)seed, now_s() - t0, nworkers,
			spawned, kills, exits_bad, sum.ioctls, sum.ok,
			sum.calls, sum.opens, sum.closes, sum.mmaps,
			sum.mmap_fail, sum.munmaps, sum.submits, sum.tasks,
			sum.polls, sum.garbage, sum.badptr, hot_add,
			hot_add_fail, hot_del, hot_del_fail, sum.armed,
			sum.injected);
		for (e = 0; e < NERR; e++)
			if (sum.err[e] && errnames[e])
				fprintf(out, "errno_%s=%lu\n", errnames[e],
					sum.err[e]);
			else if (sum.err[e])
				fprintf(out, "errno_%d=%lu\n", e, sum.err[e]);
		if (out != stdout)
			fclose(out);
	}
	return ok ? 0 : 1;
}
