/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dv_internal.h - private structures of the device core.
 *
 * Locking: one mutex per device (dev->lock) guards the state of the
 * device and of its contexts, buffers, streams, tasks, events, graphs and
 * notification queues; struct dv_device's @lock says exactly what it
 * covers and what not. It is never held while a chunk of an op runs.
 * Waiters use os_waitq_wait() with dev->lock held: dev->work_wq wakes
 * AI-core workers, dev->wq wakes host waiters (stream, sync, event and
 * close waits), ctx->wq wakes notification waiters. Beside it: the
 * registry lock and the event-log lock (manager.c) and the owners lock
 * (context.c); os.h gives their order. Every function documented as
 * running with a lock held asserts it with os_mutex_assert_held():
 * lockdep_assert_held() in the kernel, checked where lockdep is, and in
 * userspace by the test and sanitizer builds.
 */
#ifndef _DAVINCI_INTERNAL_H
#define _DAVINCI_INTERNAL_H

#include "dv_core.h"
#include "ops.h"

#define DV_PAGE_SIZE		4096ULL
#define DV_HUGE_SIZE		(2ULL << 20)
#define DV_HBM_VA_BASE		0x100000000ULL
#define DV_HOST_VA_BASE		0x800000000000ULL
#define DV_ARENA_HBM		0
#define DV_ARENA_HOST		1
#define DV_PRIORITIES		8
#define DV_MAX_AICORES		64
#define DV_NOTIFY_CAPACITY	1024
#define DV_TASK_HISTORY		1024
#define DV_MAX_QUEUED		16384	/* tasks queued per stream */
/*
 * Tasks a polled stream keeps taken in ahead of what runs: the dispatcher
 * takes in no more, and whoever runs its tasks takes in more when fewer
 * than a quarter are left. The ring holds the rest, so the host sees
 * backpressure there, and tasks run while their objects are still warm.
 */
#define DV_TAKE_IN_DEPTH	256
#define DV_MAX_STREAMS		256	/* per context */
#define DV_MAX_EVENTS		4096	/* per context */
#define DV_NOP_MAX_US		3600000000ULL
#define DV_COPY_CHUNK		(1ULL << 20)
#define DV_NOP_SLICE_NS		200000ULL
#define DV_SQ_ENTRY_SIZE	sizeof(struct davinci_task)
#define DV_CQ_ENTRY_SIZE	sizeof(struct davinci_completion)

#define DV_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define DV_CONTAINER_OF(ptr, type, member) \
	((type *)((char *)(ptr) - __builtin_offsetof(type, member)))

/* A minimal intrusive doubly linked list (portable list_head). */
struct dv_list {
	struct dv_list *next;
	struct dv_list *prev;
};

static inline void dv_list_init(struct dv_list *h)
{
	h->next = h;
	h->prev = h;
}

static inline bool dv_list_empty(const struct dv_list *h)
{
	return h->next == h;
}

static inline void dv_list_insert(struct dv_list *n, struct dv_list *prev,
				  struct dv_list *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}

static inline void dv_list_add_tail(struct dv_list *n, struct dv_list *h)
{
	dv_list_insert(n, h->prev, h);
}

static inline void dv_list_del(struct dv_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n;
	n->prev = n;
}

#define dv_list_for_each_safe(pos, tmp, head) \
	for (pos = (head)->next, tmp = pos->next; pos != (head); \
	     pos = tmp, tmp = pos->next)

/* list_for_each_entry(): @pos walks the objects linked by their @member. */
#define dv_list_entry(ptr, pos, member) \
	DV_CONTAINER_OF(ptr, typeof(*(pos)), member)
#define dv_list_for_each_entry(pos, head, member) \
	for (pos = dv_list_entry((head)->next, pos, member); \
	     &(pos)->member != (head); \
	     pos = dv_list_entry((pos)->member.next, pos, member))

/* Objects held in an id table: ids grow monotonically, never reused. */
struct dv_identry {
	u64 id;
	void *ptr;
};

struct dv_idtable {
	struct dv_identry *e;
	u32 n;
	u32 cap;
	u64 next_id;
	u64 max_id;
};

void dv_id_init(struct dv_idtable *t, u64 max_id);
int dv_id_reserve(struct dv_idtable *t);
u64 dv_id_alloc(struct dv_idtable *t, void *ptr);
void *dv_id_find(const struct dv_idtable *t, u64 id);
void *dv_id_remove(struct dv_idtable *t, u64 id);
void dv_id_destroy(struct dv_idtable *t);

/* A free range of a pool, sorted by address. */
struct dv_range {
	struct dv_list node;
	u64 start;
	u64 size;
};

/**
 * struct dv_pool - a range allocator over one arena
 * @arena: backing memory
 * @base: kernel address of the arena
 * @va_base: device virtual address of offset 0
 * @index: arena index in mmap offsets
 * @total: bytes in the pool
 * @free: bytes not allocated
 * @free_list: free ranges, sorted by address, never adjacent
 */
struct dv_pool {
	struct os_arena *arena;
	u8 *base;
	u64 va_base;
	u32 index;
	u64 total;
	u64 free;
	struct dv_list free_list;
};

int dv_pool_init(struct dv_pool *p, u32 index, u64 size, u64 va_base,
		 const char *dir, const char *name);
void dv_pool_fini(struct dv_pool *p);
int dv_pool_alloc(struct dv_pool *p, u64 size, u64 align,
		  struct dv_range *spare, u64 *off);
void dv_pool_free(struct dv_pool *p, u64 off, u64 size,
		  struct dv_range *spare);
u64 dv_pool_largest_free(const struct dv_pool *p);

struct dv_device;
struct dv_context;
struct dv_stream;

/**
 * struct dv_buffer - an allocation of device memory (or a ring)
 * @node: in ctx->buffers while live
 * @dev: owning device (outlives all buffers)
 * @ctx: owning context while live, NULL after free
 * @pool: pool the range came from
 * @handle: id in ctx->buf_ids
 * @off: offset in the pool's arena
 * @size: bytes requested
 * @alloc_size: bytes reserved
 * @flags: allocation flags
 * @refs: the context's reference while live, plus tasks and mappings
 * @is_ring: a stream ring, not a user allocation
 * @spare: range node handed to the pool when the range is freed
 */
struct dv_buffer {
	struct dv_list node;
	struct dv_device *dev;
	struct dv_context *ctx;
	struct dv_pool *pool;
	u64 handle;
	u64 off;
	u64 size;
	u64 alloc_size;
	u32 flags;
	u32 refs;
	bool is_ring;
	struct dv_range *spare;
};

/* Snapshot of a completed task, for TASK_QUERY. */
struct dv_task_result {
	u64 seq;
	u64 start_ns;
	u64 end_ns;
	u32 status;
	u32 pad;
};

/**
 * struct dv_task - a task taken in at the doorbell
 * @node: in stream->tasks, in sequence order
 * @desc: private copy of the descriptor
 * @seq: sequence number in its stream
 * @event_gen: EVENT_RECORD: generation it completes; EVENT_WAIT: target
 * @start_ns: when it started running, 0 before
 * @cancel: the host asked to cancel it
 * @running: a worker is running it
 * @abort: complete as ABORTED (queued before a STREAM_RESET)
 * @operand_status: DAVINCI_STATUS_* of resolving the operands at the
 *	doorbell; the task fails with it when it reaches the head
 * @buf: buffers of dst, src0, src1, src2 (NULL when unused), referenced from
 *	the doorbell until the task is freed, so memory freed by the host
 *	meanwhile stays in place for it
 * @len: bytes the task touches from each operand
 * @ctx: the submitting context, set when it starts running
 * @timeout_ms: watchdog for this task, 0 for the device's (injected hang)
 * @throttle_pct: thermal throttle sampled when it started
 * @hang: an injected hang: it makes no progress until the watchdog
 * @quiet: a graph's task that writes a completion entry only if it fails
 * @aicore: 1 + the AI-core slot it runs on (trace.c), 0 when on none
 * @help_node: in dev->helpable while idle AI cores may run its chunks
 * @units: work units of a compute task shared out that way
 * @chunk: units per chunk
 * @next_unit: first unit no AI core has claimed (claimed atomically)
 * @helpers: AI cores other than its own running its chunks now
 * @params: the copy of its parameter block dv_task_resolve() took (the
 *	op's params_size bytes of it; DOC: parameter blocks), which the op
 *	is checked against and run from
 */
/*
 * The largest parameter block any op takes, which each task holds a copy
 * of: not the ABI's DAVINCI_PARAMS_MAX, so that a task object stays as
 * small as the ops need (every queued task is one). opcodes.c asserts
 * that every op's block fits.
 */
#define DV_TASK_PARAMS_MAX	sizeof(struct davinci_params_strided)

/* Operands of a task: dst, src0, src1 and src2, in that order. */
#define DV_TASK_OPERANDS	4

struct dv_task {
	struct dv_list node;
	struct davinci_task desc;
	u64 seq;
	u64 event_gen;
	u64 start_ns;
	u32 operand_status;
	struct dv_buffer *buf[DV_TASK_OPERANDS];
	u64 len[DV_TASK_OPERANDS];
	struct dv_context *ctx;
	u32 stream_id;
	u32 timeout_ms;
	u32 throttle_pct;
	bool hang;
	bool cancel;
	bool running;
	bool abort;
	bool quiet;
	u16 aicore;
	struct dv_list help_node;
	u64 units;
	u64 chunk;
	u64 next_unit;
	u32 helpers;
	/*
	 * last: the fields above, which every task uses, share cache lines;
	 * u64s, aligned as the parameter structs' widest fields
	 */
	u64 params[DV_TASK_PARAMS_MAX / sizeof(u64)];
};

/**
 * struct dv_stream - one stream with its rings
 * @node: in ctx->streams
 * @run_node: in dev->runq[priority] while ready
 * @ctx: owner
 * @id: stream id
 * @priority: 0 highest
 * @sq_buf: submission ring memory
 * @cq_buf: completion ring memory
 * @sq: mapped submission ring header
 * @cq: mapped completion ring header
 * @sq_entries: submission ring size
 * @cq_entries: completion ring size
 * @sq_head: consumer index of the submission ring (trusted copy)
 * @cq_tail: producer index of the completion ring (trusted copy)
 * @submitted_seq: last sequence number taken in
 * @completed_seq: last sequence number completed
 * @abort_upto: tasks up to this sequence complete ABORTED
 * @error_status: status of the task that put it in error, or 0
 * @tasks: queued and running tasks
 * @nqueued: tasks in @tasks
 * @queued: on the run queue
 * @busy: a worker holds the stream
 * @parked: the head task (EVENT_WAIT) waits for an event
 * @dead: being destroyed
 * @polled: DAVINCI_STREAM_F_POLLED: the dispatcher reads the SQ tail
 * @cont: DAVINCI_STREAM_F_CONTINUE: a failed task does not put it in error
 * @sq_fault: a polled SQ tail was out of range; nothing is taken in
 *	until a reset
 * @poll_node: in dev->polled while @polled
 * @wq: host waiters on this stream's completions
 * @waiters: threads in a STREAM_WAIT on it; it is freed only at zero
 * @capture: the graph being captured from what it takes in, or NULL
 * @hist: results of the last DV_TASK_HISTORY tasks
 */
struct dv_stream {
	struct dv_list node;
	struct dv_list run_node;
	struct dv_context *ctx;
	u32 id;
	u32 priority;
	struct dv_buffer *sq_buf;
	struct dv_buffer *cq_buf;
	struct davinci_ring_header *sq;
	struct davinci_ring_header *cq;
	u32 sq_entries;
	u32 cq_entries;
	u32 sq_head;
	u32 cq_tail;
	u64 submitted_seq;
	u64 completed_seq;
	u64 abort_upto;
	u32 error_status;
	struct dv_list tasks;
	u32 nqueued;
	bool queued;
	bool busy;
	bool parked;
	bool dead;
	bool polled;
	bool cont;
	bool sq_fault;
	struct dv_list poll_node;
	struct os_waitq *wq;
	u32 waiters;
	struct dv_graph *capture;
	struct dv_task_result *hist;
};

/**
 * struct dv_event - an event
 * @node: in ctx->events
 * @id: event id
 * @flags: DAVINCI_EVENT_*
 * @submitted: records queued or signalled
 * @completed: records completed
 * @timestamp_ns: time of the last completed record
 */
struct dv_event {
	struct dv_list node;
	u32 id;
	u32 flags;
	u64 submitted;
	u64 completed;
	u64 timestamp_ns;
};

/**
 * struct dv_context - one open file
 * @node: in dev->contexts
 * @dev: the device
 * @pid: opener (its tgid), 0 when unknown
 * @uid: opener's user, DV_UID_NONE for the OS layer's own contexts
 * @owner_node: in the list of all contexts, for the per-process and
 *	per-user limits (context.c: protected by the owners lock, not by
 *	dev->lock)
 * @wq: notification waiters
 * @buffers: live buffers and rings
 * @streams: streams
 * @events: events
 * @graphs: captured task graphs (graph.c)
 * @buf_ids: buffer handles
 * @stream_ids: stream ids
 * @event_ids: event ids
 * @graph_ids: graph ids
 * @map_ids: holds of mappings the driver cannot see (DAVINCI_IOCTL_MAP_HOLD)
 * @used: bytes held per pool (HBM, host), rings excluded
 * @allocs: allocations per pool, rings excluded
 * @nq: notification queue (ring of DV_NOTIFY_CAPACITY)
 * @nq_head: oldest notification
 * @nq_count: notifications queued
 * @nq_dropped: dropped since the last wait
 * @closing: dv_context_close() runs
 * @lost: failed by a device reset: behaves as on a lost device
 * @trace_on: it asked the device's trace ring to record (trace.c)
 * @trace_all: it reads every user's trace records, not only its own
 *	user's (dv_context_set_trace_all())
 */
struct dv_context {
	struct dv_list node;
	struct dv_device *dev;
	u32 pid;
	u32 uid;
	struct dv_list owner_node;
	struct os_waitq *wq;
	struct dv_list buffers;
	struct dv_list streams;
	struct dv_list events;
	struct dv_list graphs;
	struct dv_idtable buf_ids;
	struct dv_idtable stream_ids;
	struct dv_idtable event_ids;
	struct dv_idtable graph_ids;
	struct dv_idtable map_ids;
	u64 used[DAVINCI_ARENAS];
	u64 allocs[DAVINCI_ARENAS];
	struct davinci_notification *nq;
	u32 nq_head;
	u32 nq_count;
	u32 nq_dropped;
	bool closing;
	bool lost;
	bool trace_on;
	bool trace_all;
};

#define DV_EVLOG_SIZE		64	/* management events kept per device */
#define DV_UTIL_WINDOW_NS	1000000000ULL

/**
 * struct dv_mgmt - management state of a device
 * @health: last health computed, for change events
 * @alarm: an ECC error or a hang fired since the last reset
 * @ecc_armed: an ECC fault waits for a task touching the region
 * @ecc_addr: start of the ECC region
 * @ecc_size: bytes of the region, 0 for all of HBM
 * @hang_armed: the next AI-core task hangs
 * @hang_timeout_ms: watchdog of the hung task, 0 for the device's
 * @throttle_pct: tasks take this many percent longer, 0 none
 * @resets: resets so far
 * @fired: per DAVINCI_FAULT_* kind, times it took effect
 * @tasks_completed: tasks completed
 * @util_t: start times of the last two utilization windows
 * @util_b: busy_ns at those times
 * @ev: the event log, a ring
 * @ev_count: events ever written to @ev
 * @ev_lost_seq: highest sequence number overwritten in @ev
 *
 * Protected by dev->lock, but for @ev, @ev_count and @ev_lost_seq: by the
 * event-log lock (manager.c), which dv_mgmt_event() takes inside dev->lock.
 */
struct dv_mgmt {
	u32 health;
	bool alarm;
	bool ecc_armed;
	u64 ecc_addr;
	u64 ecc_size;
	bool hang_armed;
	u32 hang_timeout_ms;
	u32 throttle_pct;
	u32 resets;
	u32 fired[DAVINCI_FAULT_KINDS];
	u64 tasks_completed;
	u64 util_t[2];
	u64 util_b[2];
	struct davinci_mgmt_event ev[DV_EVLOG_SIZE];
	u64 ev_count;
	u64 ev_lost_seq;
};


/**
 * struct dv_trace - the device's trace ring (trace.c), under dev->lock
 * @ring: DAVINCI_TRACE_CAPACITY records
 * @owner: per slot of @ring, the uid of the context its record concerns,
 *	or DV_TRACE_PUBLIC for the device's own: who may read it
 * @written: records ever written; record n is at n % capacity
 * @cores: AI-core slots running a task, a bit each
 * @enablers: contexts that asked for recording (DAVINCI_TRACE_F_ENABLE);
 *	the ring records while there is one. The OS layer's hook sees every
 *	record regardless.
 */
struct dv_trace {
	struct davinci_trace_record *ring;
	u64 *owner;
	u64 written;
	u64 cores;
	u32 enablers;
};

/**
 * struct dv_device - one simulated device
 * @cfg: configuration (strings copied)
 * @lock: the device mutex (after the registry lock, before the event-log
 *	lock). It protects every field here but those named below, and all
 *	state of the device's contexts, buffers, streams, tasks, events,
 *	graphs and notification queues: their lists (@contexts, @runq,
 *	@helpable, @polled, each context's and stream's), id tables,
 *	reference counts, counters, the pools' free lists and the trace
 *	records, and with them that a stream is on @runq exactly while
 *	queued, that @running is at most cfg.aicores and that a buffer lives
 *	while referenced. Not under it: @cfg, @lock, the wait queues,
 *	@task_cache (its own lock), the pools' arenas, @backend, @backing_dir
 *	and the trace ring's arrays (their addresses) are set at creation
 *	and never change; @workers, @nworkers and @dispatcher are the
 *	creating or destroying thread's; @reg_node is under the registry
 *	lock, @mg's event log under the event-log lock and a context's
 *	owner_node under the owners lock. @lost, a context's lost and a
 *	task's cancel are written under it but read without it, atomically,
 *	by the AI cores running the task, which also read its descriptor,
 *	operand buffers and extents, context, start time, watchdog, hang,
 *	throttle and chunk counts without it: nothing writes those while it
 *	runs, and its next_unit is claimed atomically. The rings' shared
 *	headers and the buffers' contents are the host's too and under no
 *	lock; a stream's trusted copies (sq_head, cq_tail) are under this.
 * @wq: host waiters for the whole context or device (sync, events,
 *	a stream's worker to let go of it); a stream's own waiters sleep on
 *	the stream's wq
 * @work_wq: idle workers, woken one per stream made ready
 * @poll_wq: the dispatcher, asleep after its idle time
 * @task_cache: where its struct dv_task objects come from
 * @pools: HBM and pinned host pools
 * @contexts: open contexts
 * @runq: ready streams per priority, FIFO
 * @helpable: running compute tasks whose chunks idle AI cores may take
 * @polled: polled streams, the dispatcher's to read
 * @workers: AI-core threads
 * @nworkers: started workers
 * @dispatcher: the thread that polls SQ tails and runs short tasks
 * @running: tasks executing now, on workers or the dispatcher; at most
 *	cfg.aicores
 * @poll_idle_ns: how long the dispatcher polls without work before it
 *	sleeps, at least
 * @poll_idle_max_ns: and at most, as its idle time (dispatch.idle_ns)
 *	adapts to how soon doorbells follow its sleeps
 * @dispatch: the dispatcher's sleeps, the doorbells that woke it and its
 *	idle time now
 * @stop: workers must return
 * @lost: dv_device_lost() was called
 * @busy_ns: AI-core time spent running tasks, summed over the cores (each
 *	core that ran chunks of a shared task counts its share)
 * @backend: backend name
 * @backing_dir: arena directory or empty
 * @removed: the OS removed it (dv_device_lost()); a reset cannot bring
 *	it back
 * @reg_node: in the registry of live devices
 * @mg: management state: health, faults, event log
 * @trace: the trace ring
 */
struct dv_device {
	struct dv_device_config cfg;
	struct os_mutex *lock;
	struct os_waitq *wq;
	struct os_waitq *work_wq;
	struct os_waitq *poll_wq;
	struct os_cache *task_cache;
	struct dv_pool pools[DAVINCI_ARENAS];
	struct dv_list contexts;
	struct dv_list runq[DV_PRIORITIES];
	struct dv_list helpable;
	struct dv_list polled;
	struct os_thread *workers[DV_MAX_AICORES];
	u32 nworkers;
	struct os_thread *dispatcher;
	u32 running;
	u64 poll_idle_ns;
	u64 poll_idle_max_ns;
	struct dv_dispatch_stats dispatch;
	bool stop;
	bool lost;
	u64 busy_ns;
	char backend[DAVINCI_NAME_LEN];
	char backing_dir[DAVINCI_PATH_LEN];
	bool removed;
	struct dv_list reg_node;
	struct dv_mgmt mg;
	struct dv_trace trace;
};

static inline bool dv_ctx_lost(const struct dv_context *ctx)
{
	return ctx->lost || ctx->dev->lost;
}

/* stats.c */
enum dv_stat {
	DV_STAT_DEVICES,
	DV_STAT_CONTEXTS,
	DV_STAT_BUFFERS,
	DV_STAT_STREAMS,
	DV_STAT_EVENTS,
	DV_STAT_TASKS,
	DV_STAT_MAPPINGS,
	DV_STAT_HBM_USED,
	DV_STAT_HOST_USED,
	DV_STAT_COUNT,
};

void *dv_zalloc(size_t size);
void *dv_zalloc_account(size_t size);
void dv_free(void *ptr);
void *dv_cache_zalloc(struct os_cache *c, bool account);
struct dv_task *dv_task_alloc(struct dv_device *dev, bool account);
void dv_cache_free(struct os_cache *c, void *ptr);
void dv_stat_add(enum dv_stat s, s64 delta);

/* util.c */
size_t dv_strscpy(char *dst, const char *src, size_t size);
void dv_fmt_hex32(char *dst, u32 v);
void dv_fmt_u32(char *dst, size_t size, u32 v);
bool dv_add_overflows(u64 a, u64 b, u64 *res);
bool dv_ranges_overlap(u64 a, u64 alen, u64 b, u64 blen);
void *dv_named(void *obj, u32 pad, int *ret);

/* buffer.c */
int dv_buffer_create(struct dv_context *ctx, u64 size, u32 flags,
		     bool is_ring, struct dv_buffer **out);
void dv_buffer_get(struct dv_buffer *buf);
void dv_buffer_put(struct dv_buffer *buf);
void dv_buffer_release(struct dv_buffer *buf);
struct dv_buffer *dv_buffer_lookup(struct dv_context *ctx, u64 addr,
				   u64 len);
u64 dv_buffer_dev_addr(const struct dv_buffer *buf);
u64 dv_buffer_mmap_offset(const struct dv_buffer *buf);
void *dv_buffer_kaddr(const struct dv_buffer *buf);
int dv_ioctl_mem_alloc(struct dv_context *ctx, void *arg);
int dv_ioctl_mem_free(struct dv_context *ctx, void *arg);
int dv_ioctl_mem_query(struct dv_context *ctx, void *arg);
int dv_ioctl_mem_info(struct dv_context *ctx, void *arg);

/* task.c */

/* Fields of a descriptor an opcode uses (struct dv_opcode_info). */
#define DV_U_DST	(1U << 0)
#define DV_U_SRC0	(1U << 1)
#define DV_U_SRC1	(1U << 2)
#define DV_U_COUNT	(1U << 3)
#define DV_U_MN		(1U << 4)	/* m and n */
#define DV_U_K		(1U << 5)
#define DV_U_IMM	(1U << 6)
#define DV_U_EVENT	(1U << 7)	/* event_id, required */
#define DV_U_DST_DTYPE	(1U << 8)
#define DV_U_SRC2	(1U << 9)

/* How an opcode's operand extents follow from its fields. */
enum dv_op_shape {
	DV_SHAPE_NONE,		/* touches no memory */
	DV_SHAPE_COPY,		/* dst and src0: count bytes */
	DV_SHAPE_FILL,		/* dst: count bytes */
	DV_SHAPE_BINARY,	/* dst, src0, src1: count elements, in place */
	DV_SHAPE_UNARY,		/* dst, src0: count elements, in place */
	DV_SHAPE_MATMUL,	/* dst m x n, src0 m x k, src1 k x n */
	DV_SHAPE_ROWS,		/* dst and src0: m x n */
	DV_SHAPE_REDUCE,	/* dst m, src0 m x n */
	DV_SHAPE_CAST,		/* dst count of dst_dtype, src0 count */
	DV_SHAPE_VIEW,		/* dst count, src0 the params' strided view */
	DV_SHAPE_CONV,		/* dst, src0, src1: the params' convolution */
	DV_SHAPE_POOL,		/* dst, src0: the params' pooling */
	DV_SHAPE_POOL_INDEX,	/* and src1: its int64 indices */
	DV_SHAPE_INDEX,		/* dst, src0: rows picked by src1's indices */
	DV_SHAPE_GENERATE,	/* dst: count elements, no source */
	DV_SHAPE_TRIANGLE,	/* dst and src0: m x n, matrices of k rows */
	DV_SHAPE_JPEGD,		/* the DVPP's JPEG decode (dvpp.c) */
	DV_SHAPE_VPC,		/* the DVPP's VPC: resize, crop, colour (vpc.c) */
	DV_SHAPE_JPEGE,		/* the DVPP's JPEG encode (dvpp.c) */
	DV_SHAPE_PNGD,		/* the DVPP's PNG decode (dvpp.c) */
	DV_SHAPE_AIPP,		/* dst, src0, src1: the params' pictures */
	DV_SHAPE_SORT,		/* dst m x k, src0 m x n */
	DV_SHAPE_OPTIMIZER,	/* dst, src0, src1, src2: count, disjoint */
	DV_SHAPE_MOMENTUM,	/* dst, src0, src1: count, disjoint */
	DV_SHAPE_CHANNELS,	/* batch norm's: [m, n, k] and per-channel rows */
};

/* True for the shapes of the DVPP engine's tasks, which run on no AI core. */
static inline bool dv_shape_is_dvpp(enum dv_op_shape shape)
{
	return shape == DV_SHAPE_JPEGD || shape == DV_SHAPE_VPC ||
	       shape == DV_SHAPE_JPEGE || shape == DV_SHAPE_PNGD;
}

/* An operand dtype an op fixes (struct dv_opcode_info): 0 is none. */
#define DV_OPD(x)	(DAVINCI_DTYPE_##x + 1)

/**
 * struct dv_opcode_info - what an opcode uses and allows
 * @uses: DV_U_* fields it uses; the others must be zero
 * @dtypes: allowed dtypes, a mask of 1 << DAVINCI_DTYPE_* (an opcode
 *	without a dtype allows 0 only)
 * @flags: allowed DAVINCI_TASK_F_* flags
 * @max_count: largest count, 0 for no bound
 * @max_imm: largest imm, 0 for no bound
 * @params_size: bytes of its parameter block, 0 for an op without one
 * @params_version: the block's layout version it takes
 * @check_params: for an op with a parameter block, its checker
 *	(dv_op_check_<op>(), ops.h), which dv_op_check_params() calls
 * @dst_fixed: DV_OPD() of the dtype its dst always has (ARGMAX's int64),
 *	0 for one that follows the task's dtypes
 * @src1_fixed: likewise for src1 (SELECT's bool condition)
 * @shape: its operand extents
 * @kernel: for a compute op, its kernel (ops_kernels.h), which dv_op_run()
 *	calls with units [@begin, @end) and an FPU section open; else NULL
 */
struct dv_opcode_info {
	u32 uses;
	u32 dtypes;
	u32 dst_dtypes;	/* dst_dtype values besides 0 (DV_U_DST_DTYPE) */
	u32 flags;
	u64 max_count;
	u32 max_imm;
	u32 params_size;
	u32 params_version;
	int (*check_params)(const struct davinci_task *t, const void *params);
	u8 dst_fixed;
	u8 src1_fixed;
	enum dv_op_shape shape;
	void (*kernel)(const struct davinci_task *t, const void *params,
		       void *dst, const void *src0, const void *src1,
		       void *src2, u64 begin, u64 end);
};

extern const struct dv_opcode_info dv_opcodes[DAVINCI_OP_COUNT];
/* bytes of an element of each dtype (opcodes.c, from the op schema) */
extern const u8 dv_dtype_bytes[DAVINCI_DTYPE_COUNT];
int dv_task_validate(const struct davinci_task *t);
void dv_task_resolve(struct dv_context *ctx, struct dv_task *t);
bool dv_task_is_short(struct dv_device *dev, const struct dv_task *t);
void dv_task_run(struct dv_device *dev, struct dv_stream *s,
		 struct dv_task *t);
u64 dv_task_complete(struct dv_stream *s, struct dv_task *t, u32 status,
		     u64 start_ns);
void dv_task_complete_at(struct dv_stream *s, struct dv_task *t, u32 status,
			 u64 start_ns, u64 end_ns);
void dv_task_free(struct dv_stream *s, struct dv_task *t);
void dv_task_release(struct dv_device *dev, struct dv_task *t);
u32 dv_exec_alone(struct dv_device *dev, struct dv_task *t);

/* stream.c */
struct dv_stream *dv_stream_find(struct dv_context *ctx, u32 id);
void dv_stream_destroy_locked(struct dv_stream *s);
void dv_stream_make_ready(struct dv_stream *s);
bool dv_stream_requeue(struct dv_stream *s);
void dv_stream_fault(struct dv_stream *s, u32 status);
int dv_ioctl_stream_create(struct dv_context *ctx, void *arg);
int dv_ioctl_stream_destroy(struct dv_context *ctx, void *arg);
int dv_ioctl_doorbell(struct dv_context *ctx, void *arg);
int dv_ioctl_stream_wait(struct dv_context *ctx, void *arg);
int dv_ioctl_stream_reset(struct dv_context *ctx, void *arg);
int dv_ioctl_stream_query(struct dv_context *ctx, void *arg);
int dv_ioctl_stream_set_flags(struct dv_context *ctx, void *arg);
int dv_ioctl_task_query(struct dv_context *ctx, void *arg);
int dv_ioctl_task_cancel(struct dv_context *ctx, void *arg);
int dv_ioctl_sync(struct dv_context *ctx, void *arg);

/* sched.c */
int dv_worker_main(void *arg);
bool dv_task_help(struct dv_device *dev);
struct dv_stream *dv_sched_pick(struct dv_device *dev, bool short_only);
u32 dv_sched_workers_wanted(struct dv_device *dev);
void dv_sched_run(struct dv_device *dev, struct dv_stream *s);

/* dispatch.c */
int dv_stream_take_in(struct dv_stream *s, u32 tail);
u32 dv_stream_take_in_polled(struct dv_stream *s, bool wake, u32 depth);
void dv_ctx_take_in_polled(struct dv_context *ctx);
u32 dv_stream_published(struct dv_stream *s);
void dv_task_enqueue(struct dv_stream *s, struct dv_task *t);
void dv_sq_publish(struct dv_stream *s);
void dv_dispatcher_kick(struct dv_device *dev);
void dv_poll_adapt(struct dv_device *dev, u64 idle_ns, bool kicked);
int dv_dispatcher_main(void *arg);

/* graph.c */
/**
 * struct dv_graph_task - one task of a captured graph
 * @desc: its descriptor
 * @malformed: it fails with DAVINCI_STATUS_INVALID_TASK
 */
struct dv_graph_task {
	struct davinci_task desc;
	bool malformed;
};

/**
 * struct dv_graph - a captured task graph
 * @node: in ctx->graphs
 * @id: graph id
 * @ntasks: tasks held
 * @cap: room in @tasks
 * @too_big: more than DAVINCI_GRAPH_MAX_TASKS were captured
 * @tasks: the tasks, in stream order
 */
struct dv_graph {
	struct dv_list node;
	u32 id;
	u32 ntasks;
	u32 cap;
	bool too_big;
	struct dv_graph_task *tasks;
};

void dv_graph_add(struct dv_graph *g, const struct dv_task *t);
void dv_graph_free(struct dv_graph *g);
void dv_graphs_destroy(struct dv_context *ctx);
int dv_ioctl_graph_capture(struct dv_context *ctx, void *arg);
int dv_ioctl_graph_end(struct dv_context *ctx, void *arg);
int dv_ioctl_graph_launch(struct dv_context *ctx, void *arg);
int dv_ioctl_graph_destroy(struct dv_context *ctx, void *arg);

/* trace.c */
int dv_trace_init(struct dv_trace *tr);
void dv_trace_fini(struct dv_trace *tr);
void dv_trace_doorbell(struct dv_context *ctx,
		       const struct davinci_doorbell *d);
void dv_trace_tasks_queued(struct dv_stream *s, u64 first_seq);
void dv_trace_take_core(struct dv_device *dev, struct dv_task *t);
void dv_trace_task_start(struct dv_stream *s, const struct dv_task *t);
u16 dv_trace_take_slot(struct dv_device *dev);
void dv_trace_task_help(struct dv_device *dev, const struct dv_task *t,
			u16 slot, u64 start_ns, u64 end_ns);
u16 dv_trace_aicore(const struct dv_task *t);
void dv_trace_task_complete(struct dv_stream *s, struct dv_task *t,
			    u32 status, u64 start_ns, u64 end_ns);
void dv_trace_mem(struct dv_buffer *buf, u32 type);
void dv_trace_event(struct dv_context *ctx, u32 type, u32 event_id, u64 gen);
void dv_trace_ctx(struct dv_context *ctx, u32 type);
void dv_trace_mgmt(struct dv_device *dev,
		   const struct davinci_mgmt_event *ev);
int dv_ioctl_trace_read(struct dv_context *ctx, void *arg);
void dv_trace_ctx_close(struct dv_context *ctx);

/* event.c */
struct dv_event *dv_event_find(struct dv_context *ctx, u32 id);
void dv_event_completed(struct dv_context *ctx, struct dv_event *ev);
void dv_event_destroy_locked(struct dv_context *ctx, struct dv_event *ev);
int dv_ioctl_event_create(struct dv_context *ctx, void *arg);
int dv_ioctl_event_destroy(struct dv_context *ctx, void *arg);
int dv_ioctl_event_query(struct dv_context *ctx, void *arg);
int dv_ioctl_event_signal(struct dv_context *ctx, void *arg);
int dv_ioctl_event_wait(struct dv_context *ctx, void *arg);

/* notify.c */
void dv_notify(struct dv_context *ctx, u32 type, u32 stream_id, u32 status,
	       u64 seq, u64 user_data);
int dv_ioctl_notify_wait(struct dv_context *ctx, void *arg);

/* context.c */
void dv_context_reset_locked(struct dv_context *ctx);
int dv_ioctl_ctx_reset(struct dv_context *ctx, void *arg);
void dv_limits_fill(struct davinci_limits *l);
int dv_ioctl_get_limits(struct dv_context *ctx, void *arg);
void dv_owners_exit(void);
u64 dv_deadline(u32 timeout_ms);
int dv_wait_locked(struct dv_context *ctx, struct os_waitq *wq,
		   u32 timeout_ms, int (*done)(struct dv_context *ctx, void *arg),
		   void *arg);

/* caps.c */
int dv_ioctl_get_cap(struct dv_context *ctx, void *arg);

/* device.c */
const char *dv_manager_backend(void);
void dv_version_fill(struct davinci_version *v, const char *backend);
int dv_ioctl_get_version(struct dv_context *ctx, void *arg);
int dv_ioctl_device_info(struct dv_context *ctx, void *arg);
int dv_ioctl_mmap_info(struct dv_context *ctx, void *arg);
int dv_ioctl_map_hold(struct dv_context *ctx, void *arg);
int dv_ioctl_map_release(struct dv_context *ctx, void *arg);
void dv_context_release_holds(struct dv_context *ctx);
bool dv_device_lost_locked(struct dv_device *dev);
void dv_context_fail_locked(struct dv_context *ctx);

/* ioctl.c */
#define DV_IOCTL_PRIVILEGED	(1U << 0)	/* manager: reset, inject */
#define DV_IOCTL_UNLOCKED	(1U << 1)	/* manager: no registry lock */

/**
 * struct dv_ioctl_desc - one ioctl, at index _IOC_NR(@cmd) of the table
 * @cmd: the command, with the ABI's direction and size
 * @fn: device-node handler (dev->lock held), or NULL
 * @mgmt_fn: manager-node handler (dv_reg_lock held unless
 *	DV_IOCTL_UNLOCKED), or NULL
 * @flags: DV_IOCTL_*
 */
struct dv_ioctl_desc {
	unsigned int cmd;
	int (*fn)(struct dv_context *ctx, void *arg);
	int (*mgmt_fn)(void *arg);
	u32 flags;
};

const struct dv_ioctl_desc *dv_ioctl_lookup(unsigned int cmd);

/* manager.c */
struct os_mutex *dv_global_mutex(struct os_mutex **slot,
				 enum os_lock_class cls);
void dv_global_mutex_free(struct os_mutex **slot);
int dv_mgmt_get_version(void *arg);
int dv_mgmt_get_limits(void *arg);
int dv_mgmt_list(void *arg);
int dv_mgmt_info(void *arg);
int dv_mgmt_procs(void *arg);
int dv_mgmt_reset(void *arg);
int dv_mgmt_inject(void *arg);
int dv_mgmt_events(void *arg);
int dv_mgmt_register(struct dv_device *dev);
void dv_mgmt_unregister(struct dv_device *dev);
u32 dv_mgmt_health(const struct dv_device *dev);
void dv_mgmt_health_update(struct dv_device *dev);
void dv_mgmt_event(struct dv_device *dev, u32 type, u32 fault, u32 status,
		   u32 old_health, u64 addr, u64 value);
u32 dv_mgmt_task_start(struct dv_device *dev, struct dv_task *t);
void dv_mgmt_task_failed(struct dv_device *dev, struct dv_task *t, u32 st);
void dv_device_query_locked(struct dv_device *dev,
			    struct davinci_device_info *info);

#endif /* _DAVINCI_INTERNAL_H */
