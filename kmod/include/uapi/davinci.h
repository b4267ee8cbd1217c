/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * davinci.h - ioctl ABI of the davinci virtual NPU.
 *
 * One ABI serves both backends: the kernel module (/dev/davinciN) and the
 * FUSE daemon (davinci-fused), which run the same device core.
 *
 * Rules (Documentation/process/botching-up-ioctls.rst):
 *  - every struct has a fixed size, explicit padding and __u64 handles;
 *  - reserved fields and unknown flags must be zero, else -EINVAL;
 *  - a shorter (older) struct from userspace is zero-extended;
 *  - no field is a pointer the driver follows: bulk data lives in mmap'd
 *    device memory, addressed by device virtual address.
 *
 * Device memory, pinned host memory and the stream rings are reached with
 * mmap() at the offset an ioctl returns. The offset encodes (arena, offset
 * in arena); see DAVINCI_MMAP_ARENA().
 */
#ifndef _UAPI_DAVINCI_H
#define _UAPI_DAVINCI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define DAVINCI_ABI_MAJOR 1
/*
 * Minors only add. 1: management ioctls. 2: DAVINCI_STATUS_MISALIGNED,
 * for a compute operand not aligned to its element size; map holds
 * (DAVINCI_IOCTL_MAP_HOLD/RELEASE) and DAVINCI_IOCTL_GET_LIMITS, each
 * also announced by its feature bit. 3: polled submission rings
 * (DAVINCI_STREAM_F_POLLED; the ring header's @flags, @status and @seq;
 * DAVINCI_STATUS_QUEUE_FAULT), task graphs (DAVINCI_IOCTL_GRAPH_*), the
 * trace ring (DAVINCI_IOCTL_TRACE_READ), a completion entry's @aicore
 * (was @pad), DAVINCI_OP_RELU_GRAD and the training ops
 * DAVINCI_OP_LOG_SOFTMAX, DAVINCI_OP_SQRT and DAVINCI_OP_CMP, each
 * announced by its feature bit. 4: the trace records a take-in in one
 * DAVINCI_TRACE_TASKS_QUEUED, not each task it queued. 5: the dispatcher's
 * counters and idle time in struct davinci_mgmt_info
 * (DAVINCI_FEAT_DISPATCH_STATS). 6: the capability query
 * (DAVINCI_IOCTL_GET_CAP, DAVINCI_FEAT_CAPS), which announces the ops,
 * their dtypes and parameter blocks from then on: an op added after it
 * gets no feature bit; parameter blocks (struct davinci_task's @params,
 * @params_size and @params_version, were reserved; DAVINCI_FEAT_PARAMS).
 * 7: the dtypes INT64, BOOL, INT8 and UINT8; CMP's bool result
 * (@dst_dtype BOOL); strided operands (DAVINCI_TASK_F_STRIDED, struct
 * davinci_params_strided); DAVINCI_CAP_OP_FLAGS and DAVINCI_CAP_STRIDED;
 * DAVINCI_PARAMS_MAX 512 (was 256). 8: DAVINCI_TRACE_TASK_HELP, the
 * share of a task's chunks another AI core ran. 9: struct davinci_task's
 * @src2 (was @reserved[0]), the third operand of an op whose kind has
 * one (DAVINCI_IOCTL_GET_CAP announces the op). 10: CONV2D's bias at
 * @src2 and its epilogue in @imm (DAVINCI_CONV2D_RELU);
 * DAVINCI_CAP_OP_SRC2, which announces an op's third operand; streams
 * that go on after a failed task (DAVINCI_STREAM_F_CONTINUE, switched on
 * a live stream by DAVINCI_IOCTL_STREAM_SET_FLAGS;
 * DAVINCI_FEAT_STREAM_CONTINUE).
 */
#define DAVINCI_ABI_MINOR 10

/*
 * Feature bits reported by DAVINCI_IOCTL_GET_VERSION. The ops and dtypes a
 * driver serves are answered by DAVINCI_IOCTL_GET_CAP (DAVINCI_FEAT_CAPS):
 * DAVINCI_FEAT_FP16, _BF16, _RELU_GRAD and _TRAIN_OPS stay set for the
 * runtimes that read them, but no new op or dtype gets a bit of its own.
 */
#define DAVINCI_FEAT_USER_QUEUES	(1ULL << 0)
#define DAVINCI_FEAT_EVENTS		(1ULL << 1)
#define DAVINCI_FEAT_NOTIFICATIONS	(1ULL << 2)
#define DAVINCI_FEAT_FP16		(1ULL << 3)
#define DAVINCI_FEAT_BF16		(1ULL << 4)
#define DAVINCI_FEAT_PINNED_HOST	(1ULL << 5)
#define DAVINCI_FEAT_POLL		(1ULL << 6)
#define DAVINCI_FEAT_MGMT		(1ULL << 7)	/* DAVINCI_IOCTL_MGMT_* */
#define DAVINCI_FEAT_MAP_HOLD		(1ULL << 8)	/* DAVINCI_IOCTL_MAP_* */
#define DAVINCI_FEAT_LIMITS		(1ULL << 9)	/* DAVINCI_IOCTL_GET_LIMITS */
#define DAVINCI_FEAT_SQ_POLL		(1ULL << 10)	/* DAVINCI_STREAM_F_POLLED */
#define DAVINCI_FEAT_GRAPHS		(1ULL << 11)	/* DAVINCI_IOCTL_GRAPH_* */
#define DAVINCI_FEAT_TRACE		(1ULL << 12)	/* DAVINCI_IOCTL_TRACE_READ */
#define DAVINCI_FEAT_RELU_GRAD		(1ULL << 13)	/* DAVINCI_OP_RELU_GRAD */
/* DAVINCI_OP_LOG_SOFTMAX, DAVINCI_OP_SQRT and DAVINCI_OP_CMP */
#define DAVINCI_FEAT_TRAIN_OPS		(1ULL << 14)
/* struct davinci_mgmt_info's @dispatch_* fields */
#define DAVINCI_FEAT_DISPATCH_STATS	(1ULL << 15)
#define DAVINCI_FEAT_CAPS		(1ULL << 16)	/* DAVINCI_IOCTL_GET_CAP */
/* struct davinci_task's @params (DOC: parameter blocks) */
#define DAVINCI_FEAT_PARAMS		(1ULL << 17)
/* DAVINCI_STREAM_F_CONTINUE, DAVINCI_IOCTL_STREAM_SET_FLAGS */
#define DAVINCI_FEAT_STREAM_CONTINUE	(1ULL << 18)

#define DAVINCI_NAME_LEN	32
#define DAVINCI_VERSION_LEN	32
#define DAVINCI_PATH_LEN	256

/**
 * struct davinci_version - driver and ABI version (DAVINCI_IOCTL_GET_VERSION)
 * @abi_major: incompatible ABI changes bump this; runtimes refuse other majors
 * @abi_minor: compatible additions bump this
 * @features: DAVINCI_FEAT_* bits
 * @driver_version: NUL-terminated driver version, e.g. "1.0.0"
 * @backend: NUL-terminated backend name: "kmod" or "fuse"
 */
struct davinci_version {
	__u32 abi_major;
	__u32 abi_minor;
	__u64 features;
	char driver_version[DAVINCI_VERSION_LEN];
	char backend[DAVINCI_NAME_LEN];
};

/* Device health, as npu-smi reports it. */
#define DAVINCI_HEALTH_OK	0
#define DAVINCI_HEALTH_WARNING	1
#define DAVINCI_HEALTH_ALARM	2
#define DAVINCI_HEALTH_CRITICAL	3

/**
 * struct davinci_device_info - one device (DAVINCI_IOCTL_DEVICE_INFO)
 * @index: device index N of /dev/davinciN
 * @aicores: number of AI cores (scheduler worker threads)
 * @hbm_total: HBM size in bytes
 * @hbm_free: HBM bytes not allocated by anyone
 * @host_total: pinned host memory pool in bytes
 * @host_free: pinned host bytes not allocated
 * @task_timeout_ms: watchdog: a task running longer fails with
 *	DAVINCI_STATUS_TIMEOUT
 * @health: DAVINCI_HEALTH_*
 * @name: NUL-terminated chip name, e.g. "Ascend910B-sim"
 * @serial: NUL-terminated serial number
 */
struct davinci_device_info {
	__u32 index;
	__u32 aicores;
	__u64 hbm_total;
	__u64 hbm_free;
	__u64 host_total;
	__u64 host_free;
	__u32 task_timeout_ms;
	__u32 health;
	char name[DAVINCI_NAME_LEN];
	char serial[DAVINCI_NAME_LEN];
};

/**
 * struct davinci_limits - the driver's limits (DAVINCI_IOCTL_GET_LIMITS)
 * @contexts_per_process: open device files (contexts) one process may hold
 *	over all devices; opening another fails with EMFILE. 0: no limit.
 *	Module parameter max_contexts_per_process, davinci-fused
 *	--max-contexts-per-process
 * @contexts_per_user: the same for all processes of one user; opening
 *	another fails with EUSERS. 0: no limit. Module parameter
 *	max_contexts_per_user, davinci-fused --max-contexts-per-user
 * @streams_per_context: DAVINCI_IOCTL_STREAM_CREATE beyond: ENOSPC
 * @events_per_context: DAVINCI_IOCTL_EVENT_CREATE beyond: ENOSPC
 * @tasks_per_stream: tasks queued or running on one stream; a doorbell
 *	that would take in more fails with EBUSY, taking none
 * @notifications_per_context: notifications queued before the oldest
 *	are dropped (reported in &struct davinci_notification.dropped)
 * @reserved: zero
 *
 * Answered by device nodes and the manager node alike (feature
 * DAVINCI_FEAT_LIMITS), so that a runtime refused an open can say which
 * limit it hit and its value.
 */
struct davinci_limits {
	__u32 contexts_per_process;
	__u32 contexts_per_user;
	__u32 streams_per_context;
	__u32 events_per_context;
	__u32 tasks_per_stream;
	__u32 notifications_per_context;
	__u64 reserved[5];
};

/*
 * Capability queries (struct davinci_cap.query) and what each answers in
 * @value. Opcodes and dtypes are the ABI's DAVINCI_OP_* and DAVINCI_DTYPE_*.
 *
 * DAVINCI_CAP_OPCODES: how many opcodes the driver knows, 0 .. @value - 1
 * (DAVINCI_OP_COUNT of its header), so that a runtime built against a
 * newer header learns which of its ops the driver lacks.
 *
 * DAVINCI_CAP_OP_DTYPES, @index an opcode: a mask of 1 << DAVINCI_DTYPE_*,
 * the dtypes it takes in struct davinci_task's @dtype; 0 when the driver
 * does not serve it (the doorbell refuses a task with it). An op without
 * a dtype (NOP, MEMCPY, the events) answers 1 << DAVINCI_DTYPE_FLOAT32:
 * its @dtype must be 0.
 *
 * DAVINCI_CAP_OP_PARAMS, @index an opcode: a mask of the parameter-block
 * versions it takes (bit v: version v; DOC: parameter blocks), 0 for an
 * op without one.
 *
 * DAVINCI_CAP_DTYPES: how many dtypes the driver knows, 0 .. @value - 1
 * (DAVINCI_DTYPE_COUNT of its header).
 *
 * DAVINCI_CAP_OP_FLAGS, @index an opcode: the DAVINCI_TASK_F_* it takes
 * (DAVINCI_TASK_F_STRIDED among them for an op that reads strided
 * operands).
 *
 * DAVINCI_CAP_STRIDED: a mask of the struct davinci_params_strided
 * versions the driver takes (bit v: version v), 0 before ABI 1.7.
 *
 * DAVINCI_CAP_OP_SRC2, @index an opcode: 1 when it takes a third operand
 * at struct davinci_task's @src2 (CONV2D's bias, ABI 1.10), else 0; a
 * driver before ABI 1.10 answers -EINVAL: no op of it takes one.
 */
#define DAVINCI_CAP_OPCODES	0
#define DAVINCI_CAP_OP_DTYPES	1
#define DAVINCI_CAP_OP_PARAMS	2
#define DAVINCI_CAP_DTYPES	3
#define DAVINCI_CAP_OP_FLAGS	4
#define DAVINCI_CAP_STRIDED	5
#define DAVINCI_CAP_OP_SRC2	6

/**
 * struct davinci_cap - one capability of the driver (DAVINCI_IOCTL_GET_CAP)
 * @query: in: DAVINCI_CAP_*; -EINVAL for any other
 * @index: in: the opcode for DAVINCI_CAP_OP_DTYPES, DAVINCI_CAP_OP_PARAMS,
 *	DAVINCI_CAP_OP_FLAGS and DAVINCI_CAP_OP_SRC2,
 *	below DAVINCI_CAP_OPCODES' answer, else -EINVAL; zero for the other
 *	queries, else -EINVAL
 * @value: out: the answer (see DAVINCI_CAP_*)
 * @reserved: must be zero, else -EINVAL
 *
 * As ivpu's DRM_IOCTL_IVPU_GET_PARAM, one answer per call: a runtime asks
 * DAVINCI_CAP_OPCODES, then each opcode. The answers come from the
 * driver's op table, which is generated from the op schema
 * (kmod/core/ops.toml): an op the schema gains is announced here, by no
 * feature bit. Answered by device nodes (DAVINCI_FEAT_CAPS), alike on
 * every device of one driver.
 */
struct davinci_cap {
	__u32 query;
	__u32 index;
	__u64 value;
	__u64 reserved[2];
};

/* Allocation policy, after pyACL's aclrtMemMallocPolicy. */
#define DAVINCI_MEM_HUGE_FIRST	0	/* 2 MiB aligned when >= 2 MiB */
#define DAVINCI_MEM_HUGE_ONLY	1	/* 2 MiB aligned, size rounded up */
#define DAVINCI_MEM_NORMAL_ONLY	2	/* 4 KiB granules */
#define DAVINCI_MEM_POLICY_MASK	0x3
/* Allocate pinned host memory instead of HBM (aclrtMallocHost). */
#define DAVINCI_MEM_HOST	(1U << 8)
#define DAVINCI_MEM_FLAGS_ALL	(DAVINCI_MEM_POLICY_MASK | DAVINCI_MEM_HOST)

/**
 * struct davinci_mem_alloc - allocate device or pinned host memory
 * @size: in: bytes requested, > 0
 * @flags: in: DAVINCI_MEM_* policy and DAVINCI_MEM_HOST
 * @pad: must be zero
 * @handle: out: handle for free and query
 * @dev_addr: out: device virtual address tasks use
 * @mmap_offset: out: offset to mmap() the buffer at
 * @alloc_size: out: bytes actually reserved (size rounded to the granule)
 *
 * Fails with -ENOMEM, changing nothing, when the pool has no free range
 * of that size; -EINVAL for a zero size, unknown flags or policy 3.
 */
struct davinci_mem_alloc {
	__u64 size;
	__u32 flags;
	__u32 pad;
	__u64 handle;
	__u64 dev_addr;
	__u64 mmap_offset;
	__u64 alloc_size;
};

/**
 * struct davinci_mem_free - free an allocation (DAVINCI_IOCTL_MEM_FREE)
 * @handle: from &struct davinci_mem_alloc; -ENOENT when not live in this
 *	context. Tasks still using the memory keep it until they finish.
 */
struct davinci_mem_free {
	__u64 handle;
};

/**
 * struct davinci_mem_query - look up an allocation (DAVINCI_IOCTL_MEM_QUERY)
 * @handle: in: the allocation, or 0 to look up by @dev_addr
 * @dev_addr: in (when @handle is 0): any address inside the allocation;
 *	out: its start
 * @size: out: bytes requested at allocation
 * @alloc_size: out: bytes reserved
 * @mmap_offset: out: offset to mmap() it at
 * @flags: out: flags it was allocated with
 * @pad: must be zero
 */
struct davinci_mem_query {
	__u64 handle;
	__u64 dev_addr;
	__u64 size;
	__u64 alloc_size;
	__u64 mmap_offset;
	__u32 flags;
	__u32 pad;
};

/**
 * struct davinci_mem_info - memory usage (DAVINCI_IOCTL_MEM_INFO)
 * @flags: in: 0 for HBM, DAVINCI_MEM_HOST for the pinned host pool
 * @pad: must be zero
 * @total: out: pool size in bytes
 * @free: out: bytes free in the pool
 * @largest_free: out: largest single free range (fragmentation)
 * @ctx_used: out: bytes of this context's buffers in the pool (its
 *	streams' rings, also in the pinned host pool, are not counted)
 * @ctx_allocations: out: live buffers of this context in the pool
 */
struct davinci_mem_info {
	__u32 flags;
	__u32 pad;
	__u64 total;
	__u64 free;
	__u64 largest_free;
	__u64 ctx_used;
	__u64 ctx_allocations;
};

/**
 * DOC: ring protocol
 *
 * Each stream (DAVINCI_IOCTL_STREAM_CREATE) has a submission ring (SQ)
 * and a completion ring (CQ) in the pinned host pool, which userspace
 * maps at sq_mmap_offset and cq_mmap_offset. A ring starts with a struct
 * davinci_ring_header; its entries follow at DAVINCI_RING_ENTRIES_OFFSET:
 * struct davinci_task (128 bytes) in the SQ, struct davinci_completion
 * (64 bytes) in the CQ. @entries is a power of two (at most
 * DAVINCI_RING_MAX_ENTRIES), written by the driver at creation. @head
 * and @tail are free-running 32-bit indices: index i lives in slot
 * i & (entries - 1), and tail - head (modulo 2^32) entries are in use.
 *
 * Submission: userspace writes descriptors into the slots from its tail
 * on, stores the new @tail, and rings the doorbell: DAVINCI_IOCTL_DOORBELL
 * with sq_tail, the new tail (the driver goes by sq_tail, not by the
 * header's @tail). The driver keeps its own copy of the SQ head, never
 * trusting the mapped one: it fails with -EINVAL when sq_tail is more
 * than @entries ahead of it; otherwise it copies every descriptor from
 * head to sq_tail out of the ring, validates all of them and takes them
 * all in, or none (-EINVAL, -ENOMEM, -EBUSY). It then publishes the new
 * @head (a release store) and returns the sequence numbers given. The
 * descriptors were copied: the slots may be reused at once. Userspace
 * keeps at most @entries descriptors between the SQ head and its tail.
 * One doorbell serves a batch.
 *
 * Polled submission (DAVINCI_STREAM_F_POLLED, DAVINCI_FEAT_SQ_POLL), as
 * io_uring's SQPOLL: a dispatcher on the device side reads the SQ @tail
 * of every polled stream, once per pass, while it has had work within its
 * idle time; userspace publishes @tail with a release store and needs no
 * system call. Before the dispatcher sleeps it sets
 * DAVINCI_RING_F_NEED_WAKEUP in the SQ @flags and looks at the tails once
 * more; userspace that sees the flag after publishing a tail (with a full
 * barrier between its store of @tail and its load of @flags, as liburing
 * has for SQPOLL) rings the doorbell, which takes in whatever the ring
 * holds (sq_tail is ignored), clears the flag in every polled ring of the
 * device and wakes the dispatcher: one doorbell serves until the
 * dispatcher sets the flag again. DAVINCI_IOCTL_STREAM_WAIT, DAVINCI_IOCTL_SYNC,
 * DAVINCI_IOCTL_TASK_QUERY, DAVINCI_IOCTL_TASK_CANCEL and
 * DAVINCI_IOCTL_MEM_FREE take in what the context's polled rings hold
 * first: what the host published before them counts as submitted (memory
 * freed afterwards stays in place for those tasks), and a missed flag
 * delays work only until the host waits. The dispatcher copies each descriptor out of the
 * ring before it looks at it. Every slot taken in gets the next sequence
 * number, in ring order, so userspace knows them without asking: a
 * malformed descriptor is taken in too and completes with
 * DAVINCI_STATUS_INVALID_TASK, putting the stream in its error state (see
 * "stream failure modes"). A
 * @tail more than @entries ahead of the head is a fault of that stream
 * alone: it enters the error state with DAVINCI_STATUS_QUEUE_FAULT and
 * nothing more is taken in from it until DAVINCI_IOCTL_STREAM_RESET,
 * which discards what the ring holds. The device takes in a polled
 * ring's descriptors as it gets near them, a few hundred ahead of what
 * completed, and leaves the rest in the ring: the SQ @head shows how far
 * it has come, and a full ring holds the host back. A doorbell and the
 * ioctls above take in everything (up to 16384 tasks queued).
 * @seq in the SQ header is the sequence number of the last task taken in.
 *
 * Completion: every task taken in completes exactly once, in sequence
 * order within its stream, whatever its status (including CANCELLED,
 * ABORTED and DEVICE_LOST). For each, the driver reads the CQ @head
 * (acquire), writes a struct davinci_completion into the slot at its
 * tail and publishes the new @tail (a release store). Userspace reads
 * the entries from @head to @tail and then stores @head = @tail,
 * returning the slots. When the CQ is full (tail - head == entries)
 * the entry is not written and @overflow counts it; the task's result
 * stays available through DAVINCI_IOCTL_TASK_QUERY (the last 1024 tasks
 * of the stream) and DAVINCI_IOCTL_STREAM_WAIT. Userspace drains the CQ
 * before submitting more work than it has room for.
 *
 * The driver also stores, after each completion, the stream's last
 * completed sequence number in the CQ header's @seq and its error status
 * in @status (release stores), so a host can wait for a task by watching
 * @seq in shared memory (spinning) before it sleeps in a wait ioctl.
 *
 * The rings raise no interrupt of their own: a host waits with
 * DAVINCI_IOCTL_STREAM_WAIT or DAVINCI_IOCTL_SYNC, or sets
 * DAVINCI_TASK_F_NOTIFY on a task to get a DAVINCI_NOTIFY_COMPLETION
 * notification (poll() and DAVINCI_IOCTL_NOTIFY_WAIT) as it completes.
 */

/**
 * DOC: stream failure modes
 *
 * By default a task that fails (any status but OK, CANCELLED and
 * ABORTED) puts its stream in the error state: the tasks queued behind it
 * complete DAVINCI_STATUS_ABORTED without running, and so does everything
 * taken in afterwards, until DAVINCI_IOCTL_STREAM_RESET (tasks taken in
 * before the reset stay aborted). DAVINCI_IOCTL_STREAM_WAIT, the CQ
 * header's @status, DAVINCI_IOCTL_STREAM_QUERY and DAVINCI_IOCTL_SYNC
 * report the status of the task that put it there. This is CANN's
 * ACL_STOP_ON_FAILURE.
 *
 * A stream with DAVINCI_STREAM_F_CONTINUE (DAVINCI_FEAT_STREAM_CONTINUE)
 * goes on instead, as CANN's default ACL_CONTINUE_ON_FAILURE: the failed
 * task completes with its status and the next task runs; nothing is
 * aborted and no reset is needed. The failure is reported by the task
 * alone: its completion entry (written even for a graph's task), its
 * result in DAVINCI_IOCTL_TASK_QUERY, a DAVINCI_NOTIFY_FAULT notification
 * and its DAVINCI_NOTIFY_COMPLETION if asked. The stream never enters the
 * error state for it, so the wait and query ioctls report 0: the host
 * finds the failures in the completion entries it reads (and drains the
 * CQ before it is full, or a dropped entry takes its failure with it).
 * What is not one task's failure still puts such a stream in the error
 * state: a polled ring's DAVINCI_STATUS_QUEUE_FAULT and
 * DAVINCI_STATUS_DEVICE_LOST. Graphs launched on such a stream, and
 * polled streams, go on the same way.
 *
 * DAVINCI_IOCTL_STREAM_SET_FLAGS switches the mode of a live stream, for
 * the tasks that complete from then on; a stream already in the error
 * state stays there until DAVINCI_IOCTL_STREAM_RESET.
 */

/**
 * struct davinci_ring_header - start of each mapped ring
 * @head: consumer index (free running, wraps at 2^32)
 * @tail: producer index (free running)
 * @entries: ring size, a power of two
 * @overflow: completions dropped because the completion ring was full
 * @flags: DAVINCI_RING_F_* (SQ of a polled stream), written by the driver
 * @status: CQ: the stream's error status (DAVINCI_STATUS_*), 0 when none
 * @seq: SQ: sequence number of the last task taken in; CQ: of the last
 *	task completed
 * @reserved: zero
 *
 * Entries follow at DAVINCI_RING_ENTRIES_OFFSET. In the submission ring
 * userspace writes entries and @tail, the driver advances @head when it
 * has taken tasks in at the doorbell. In the completion ring the driver
 * writes entries and @tail, userspace advances @head as it reads.
 */
struct davinci_ring_header {
	__u32 head;
	__u32 tail;
	__u32 entries;
	__u32 overflow;
	__u32 flags;
	__u32 status;
	__u64 seq;
	__u32 reserved[8];
};

/* The dispatcher sleeps: ring the doorbell after publishing a tail. */
#define DAVINCI_RING_F_NEED_WAKEUP	(1U << 0)

#define DAVINCI_RING_ENTRIES_OFFSET 64
#define DAVINCI_RING_MAX_ENTRIES 4096

/**
 * struct davinci_stream_create - create a stream (DAVINCI_IOCTL_STREAM_CREATE)
 * @sq_entries: in: submission ring entries, power of two, 1..4096
 *	(0 selects 256)
 * @cq_entries: in: completion ring entries, likewise
 * @priority: in: 0 (highest) .. 7 (lowest); higher priority streams are
 *	picked first by idle AI cores
 * @flags: in: DAVINCI_STREAM_F_* (DAVINCI_STREAM_F_POLLED needs
 *	DAVINCI_FEAT_SQ_POLL, DAVINCI_STREAM_F_CONTINUE
 *	DAVINCI_FEAT_STREAM_CONTINUE)
 * @stream_id: out: stream id, > 0
 * @pad: zero
 * @sq_mmap_offset: out: mmap() offset of the submission ring
 * @cq_mmap_offset: out: mmap() offset of the completion ring
 * @sq_size: out: bytes to map for the submission ring
 * @cq_size: out: bytes to map for the completion ring
 */
struct davinci_stream_create {
	__u32 sq_entries;
	__u32 cq_entries;
	__u32 priority;
	__u32 flags;
	__u32 stream_id;
	__u32 pad;
	__u64 sq_mmap_offset;
	__u64 cq_mmap_offset;
	__u64 sq_size;
	__u64 cq_size;
};

/* The device polls the stream's SQ tail (see "ring protocol"). */
#define DAVINCI_STREAM_F_POLLED		(1U << 0)
/* A failed task does not stop the stream (see "stream failure modes"). */
#define DAVINCI_STREAM_F_CONTINUE	(1U << 1)
#define DAVINCI_STREAM_FLAGS_ALL \
	(DAVINCI_STREAM_F_POLLED | DAVINCI_STREAM_F_CONTINUE)
/* The flags DAVINCI_IOCTL_STREAM_SET_FLAGS may change. */
#define DAVINCI_STREAM_FLAGS_MUTABLE	DAVINCI_STREAM_F_CONTINUE

/**
 * struct davinci_stream_flags - switch a live stream's mode
 *	(DAVINCI_IOCTL_STREAM_SET_FLAGS)
 * @stream_id: in: the stream; -ENOENT when this context has no such stream
 * @flags: in: its new DAVINCI_STREAM_FLAGS_MUTABLE bits (0: stop on
 *	failure, DAVINCI_STREAM_F_CONTINUE: go on); any other bit -EINVAL
 *
 * The mode counts for the tasks that complete from then on (see "stream
 * failure modes"); the stream's other flags stay as they were created.
 */
struct davinci_stream_flags {
	__u32 stream_id;
	__u32 flags;
};

/**
 * struct davinci_stream_id - a stream, for destroy and reset
 * @stream_id: the stream; -ENOENT when this context has no such stream
 * @pad: must be zero
 */
struct davinci_stream_id {
	__u32 stream_id;
	__u32 pad;
};

/**
 * struct davinci_doorbell - submit tasks (DAVINCI_IOCTL_DOORBELL)
 * @stream_id: in: the stream
 * @sq_tail: in: new submission ring tail; tasks from the ring's head up to
 *	it are taken in. -EINVAL when it is more than the ring size ahead of
 *	the head or behind it, or when any of those tasks is malformed
 *	(unknown opcode, dtype or flags, non-zero reserved field): then no
 *	task is taken in. Ignored for a polled stream, whose ring's own @tail
 *	counts (see "ring protocol").
 * @first_seq: out: sequence number of the first task taken in
 * @last_seq: out: sequence number of the last (first_seq - 1 when none)
 *
 * Sequence numbers count the tasks of one stream from 1. The descriptors
 * are copied at the doorbell: the ring slots may be reused at once.
 * -EBUSY when more than 16384 tasks would be queued on the stream;
 * -ENOMEM, taking no task in, when the driver runs out of memory.
 */
struct davinci_doorbell {
	__u32 stream_id;
	__u32 sq_tail;
	__u64 first_seq;
	__u64 last_seq;
};

/**
 * struct davinci_stream_wait - wait for a stream (DAVINCI_IOCTL_STREAM_WAIT)
 * @stream_id: in: the stream
 * @timeout_ms: in: 0 does not block; -ETIMEDOUT when it runs out
 * @seq: in: wait until this task has completed; 0 means the last task
 *	submitted (on a polled stream: the last one its ring holds)
 * @status: out: DAVINCI_STATUS_* of the stream: 0, or the status of the
 *	task that put it into the error state (a DAVINCI_STREAM_F_CONTINUE
 *	stream's failed task does not: see "stream failure modes")
 * @pad: zero
 * @completed_seq: out: tasks completed so far
 */
struct davinci_stream_wait {
	__u32 stream_id;
	__u32 timeout_ms;
	__u64 seq;
	__u32 status;
	__u32 pad;
	__u64 completed_seq;
};

/* Stream states (struct davinci_stream_query.state). */
#define DAVINCI_STREAM_IDLE	0
#define DAVINCI_STREAM_BUSY	1
#define DAVINCI_STREAM_ERROR	2

/**
 * struct davinci_stream_query - stream state (DAVINCI_IOCTL_STREAM_QUERY)
 * @stream_id: in: the stream
 * @state: out: DAVINCI_STREAM_*
 * @submitted_seq: out: tasks taken in so far
 * @completed_seq: out: tasks completed so far
 * @error_status: out: status of the task that put it in the error
 *	state, or 0 (see "stream failure modes")
 * @priority: out: the stream's priority
 */
struct davinci_stream_query {
	__u32 stream_id;
	__u32 state;
	__u64 submitted_seq;
	__u64 completed_seq;
	__u32 error_status;
	__u32 priority;
};

/* Task states (struct davinci_task_query.state). */
#define DAVINCI_TASK_QUEUED	0
#define DAVINCI_TASK_RUNNING	1
#define DAVINCI_TASK_DONE	2

/**
 * struct davinci_task_query - query or cancel one task
 * @stream_id: in: the stream
 * @pad: must be zero
 * @seq: in: the task's sequence number; -ENOENT when never submitted
 * @state: out: DAVINCI_TASK_*
 * @status: out: DAVINCI_STATUS_* once done
 * @start_ns: out: device time the task started, 0 before
 * @end_ns: out: device time it completed, 0 before
 *
 * DAVINCI_IOCTL_TASK_CANCEL: a queued task completes as
 * DAVINCI_STATUS_CANCELLED without running; a running one stops at its
 * next chunk boundary; a completed one is left as it is (-EALREADY).
 * A cancelled task does not put its stream into the error state.
 */
struct davinci_task_query {
	__u32 stream_id;
	__u32 pad;
	__u64 seq;
	__u32 state;
	__u32 status;
	__u64 start_ns;
	__u64 end_ns;
};

/**
 * struct davinci_sync - wait for all streams of this context
 * @timeout_ms: in: 0 does not block; -ETIMEDOUT when it runs out
 * @status: out: DAVINCI_STATUS_* of the first stream found in error, or 0
 */
struct davinci_sync {
	__u32 timeout_ms;
	__u32 status;
};

/**
 * DOC: task graphs
 *
 * A stream's tasks can be captured once and replayed with one ioctl, as
 * CUDA graphs and CANN's model-run capture do. DAVINCI_IOCTL_GRAPH_CAPTURE
 * starts capturing on a stream: from then on what the stream takes in
 * (at a doorbell or from its polled ring) is recorded, not run, and gets
 * no sequence number. DAVINCI_IOCTL_GRAPH_END ends it and returns the
 * graph. DAVINCI_IOCTL_GRAPH_LAUNCH queues the graph's tasks on any stream
 * of the context, in order, after what that stream's ring holds; their
 * operands are resolved at each launch, as at a doorbell, and event
 * records and waits take their generations then. A graph's tasks complete
 * without completion entries, except a task that fails and the launch's
 * last task, whose entry stands for the launch; every task is still in
 * the stream's results (DAVINCI_IOCTL_TASK_QUERY). A malformed descriptor
 * is refused at capture (on a polled stream it fails at each launch with
 * DAVINCI_STATUS_INVALID_TASK). Graphs belong to their context and go
 * with it or with DAVINCI_IOCTL_GRAPH_DESTROY.
 */

/**
 * struct davinci_graph_capture - start or end a capture
 *	(DAVINCI_IOCTL_GRAPH_CAPTURE, DAVINCI_IOCTL_GRAPH_END)
 * @stream_id: in: the stream
 * @graph_id: out (END): the captured graph, > 0
 * @tasks: out (END): tasks it holds, at most DAVINCI_GRAPH_MAX_TASKS
 * @pad: zero
 *
 * CAPTURE: -EBUSY when the stream is capturing already or its ring holds
 * tasks the device could not take in yet. END: -EINVAL when the stream is
 * not capturing, -E2BIG when more than DAVINCI_GRAPH_MAX_TASKS were
 * captured (the capture is dropped), -ENOSPC past DAVINCI_GRAPH_MAX
 * graphs in the context.
 */
struct davinci_graph_capture {
	__u32 stream_id;
	__u32 graph_id;
	__u32 tasks;
	__u32 pad;
};

#define DAVINCI_GRAPH_MAX_TASKS	16384	/* a stream's queue */
#define DAVINCI_GRAPH_MAX	1024	/* per context */

/**
 * struct davinci_graph_launch - replay a graph (DAVINCI_IOCTL_GRAPH_LAUNCH)
 * @graph_id: in: the graph
 * @stream_id: in: the stream to queue it on (not capturing)
 * @first_seq: out: sequence number of its first task on that stream
 * @last_seq: out: of its last task
 *
 * -ENOENT for an unknown graph or stream, -EBUSY when the stream's queue
 * has no room for the whole graph now (wait for the stream and retry).
 */
struct davinci_graph_launch {
	__u32 graph_id;
	__u32 stream_id;
	__u64 first_seq;
	__u64 last_seq;
};

/**
 * struct davinci_graph_id - a graph, for DAVINCI_IOCTL_GRAPH_DESTROY
 * @graph_id: the graph
 * @pad: zero
 */
struct davinci_graph_id {
	__u32 graph_id;
	__u32 pad;
};

/* Event flags (struct davinci_event_create.flags). */
#define DAVINCI_EVENT_TIMING	(1U << 0)	/* record device timestamps */
#define DAVINCI_EVENT_FLAGS_ALL	DAVINCI_EVENT_TIMING

/**
 * struct davinci_event_create - create an event (DAVINCI_IOCTL_EVENT_CREATE)
 * @flags: in: DAVINCI_EVENT_*
 * @event_id: out: event id, > 0
 */
struct davinci_event_create {
	__u32 flags;
	__u32 event_id;
};

/**
 * struct davinci_event_id - an event, for destroy and host signal
 * @event_id: the event; -ENOENT when this context has no such event
 * @pad: must be zero
 *
 * DAVINCI_IOCTL_EVENT_SIGNAL records the event from the host: it counts as
 * a record that completed now, releasing streams waiting on it.
 */
struct davinci_event_id {
	__u32 event_id;
	__u32 pad;
};

/* Event states (struct davinci_event_query.state). */
#define DAVINCI_EVENT_NOT_RECORDED	0	/* never recorded */
#define DAVINCI_EVENT_PENDING		1	/* a record is queued */
#define DAVINCI_EVENT_RECORDED		2	/* the last record completed */

/**
 * struct davinci_event_query - event state (DAVINCI_IOCTL_EVENT_QUERY)
 * @event_id: in: the event
 * @state: out: DAVINCI_EVENT_*
 * @timestamp_ns: out: device time of the last completed record
 * @records_submitted: out: records queued or signalled so far
 * @records_completed: out: records completed so far
 */
struct davinci_event_query {
	__u32 event_id;
	__u32 state;
	__u64 timestamp_ns;
	__u64 records_submitted;
	__u64 records_completed;
};

/**
 * struct davinci_event_wait - wait on the host (DAVINCI_IOCTL_EVENT_WAIT)
 * @event_id: in: the event; returns at once when it was never recorded
 * @timeout_ms: in: 0 does not block; -ETIMEDOUT when it runs out
 *
 * Waits until every record submitted before the call has completed.
 */
struct davinci_event_wait {
	__u32 event_id;
	__u32 timeout_ms;
};

/* Notification types (struct davinci_notification.type). */
#define DAVINCI_NOTIFY_COMPLETION	1	/* task with DAVINCI_TASK_F_NOTIFY */
#define DAVINCI_NOTIFY_USER		2	/* DAVINCI_OP_NOTIFY ran */
#define DAVINCI_NOTIFY_FAULT		3	/* a task failed */
#define DAVINCI_NOTIFY_DEVICE_LOST	4	/* the device is gone */

/**
 * struct davinci_notification - wait for the next notification
 * @timeout_ms: in: 0 does not block; -ETIMEDOUT when it runs out
 * @type: out: DAVINCI_NOTIFY_*
 * @stream_id: out: stream of the task that raised it
 * @status: out: DAVINCI_STATUS_* of that task
 * @seq: out: that task's sequence number
 * @user_data: out: the task's user_data
 * @timestamp_ns: out: device time it was raised
 * @dropped: out: notifications lost to a full queue since the last wait
 * @pad: zero
 *
 * This is the interrupt path: each context has a queue of notifications;
 * DAVINCI_IOCTL_NOTIFY_WAIT takes the oldest, and poll() on the node
 * reports POLLIN while the queue is not empty.
 */
struct davinci_notification {
	__u32 timeout_ms;
	__u32 type;
	__u32 stream_id;
	__u32 status;
	__u64 seq;
	__u64 user_data;
	__u64 timestamp_ns;
	__u32 dropped;
	__u32 pad;
};

/* mmap() of backends that cannot map through their node. */
#define DAVINCI_MMAP_NODE	0	/* map the node at the offset */
#define DAVINCI_MMAP_FILE	1	/* map arena_path[arena] instead */
#define DAVINCI_ARENAS		2	/* 0: HBM; 1: pinned host and rings */

/**
 * struct davinci_mmap_info - how to map memory (DAVINCI_IOCTL_MMAP_INFO)
 * @method: out: DAVINCI_MMAP_NODE for the kernel module; DAVINCI_MMAP_FILE
 *	for the FUSE daemon, whose page cache would serve stale pages: the
 *	client maps arena_path[DAVINCI_MMAP_ARENA(off)] at
 *	DAVINCI_MMAP_ARENA_OFFSET(off) instead, coherent with the device
 * @pad: zero
 * @arena_path: out: for DAVINCI_MMAP_FILE, NUL-terminated paths of the
 *	files backing each arena
 */
struct davinci_mmap_info {
	__u32 method;
	__u32 pad;
	char arena_path[DAVINCI_ARENAS][DAVINCI_PATH_LEN];
};

/**
 * struct davinci_map_hold - hold memory a client maps (DAVINCI_IOCTL_MAP_HOLD)
 * @mmap_offset: in: page aligned mmap offset inside one live buffer or
 *	ring of this context, as DAVINCI_IOCTL_MEM_ALLOC returned it
 * @length: in: bytes mapped from there, > 0, within that buffer
 * @handle: out: the hold, for DAVINCI_IOCTL_MAP_RELEASE
 *
 * With DAVINCI_MMAP_FILE the client maps a backing file and the driver
 * never sees the mapping. A hold does for it what a vma does for a
 * mapping of the node: the buffer's memory stays out of the pool, after
 * DAVINCI_IOCTL_MEM_FREE and DAVINCI_IOCTL_CTX_RESET too, until the hold
 * is released or the context is closed, so a view that outlives its
 * buffer never sees another allocation's bytes. Take a hold before
 * mapping and release it once the mapping is gone; keep the node open
 * meanwhile. Works with DAVINCI_MMAP_NODE too, where it is not needed.
 * -EINVAL for a range outside this context's buffers, -ENOSPC past
 * DAVINCI_MAX_MAP_HOLDS holds.
 */
struct davinci_map_hold {
	__u64 mmap_offset;
	__u64 length;
	__u64 handle;
};

#define DAVINCI_MAX_MAP_HOLDS	65536	/* per context */

/**
 * struct davinci_map_release - drop a hold (DAVINCI_IOCTL_MAP_RELEASE)
 * @handle: from &struct davinci_map_hold; -ENOENT when not held
 */
struct davinci_map_release {
	__u64 handle;
};

#define DAVINCI_MMAP_ARENA_SHIFT	40
#define DAVINCI_MMAP_ARENA(off)		((off) >> DAVINCI_MMAP_ARENA_SHIFT)
#define DAVINCI_MMAP_ARENA_OFFSET(off)	\
	((off) & ((1ULL << DAVINCI_MMAP_ARENA_SHIFT) - 1))

/* BEGIN GENERATED by scripts/gen_ops.py from kmod/core/ops.toml */
/* Task opcodes (struct davinci_task.opcode). */
enum davinci_opcode {
	DAVINCI_OP_NOP = 0,	/* busy for @count microseconds (0: none) */
	DAVINCI_OP_MEMCPY = 1,	/* @count bytes @src0 -> @dst, any memory */
	DAVINCI_OP_MEMSET = 2,	/* @count bytes of @dst set to byte @imm */
	DAVINCI_OP_EVENT_RECORD = 3,	/* record @event_id */
	DAVINCI_OP_EVENT_WAIT = 4,	/* wait for @event_id's last record */
	DAVINCI_OP_NOTIFY = 5,	/* raise DAVINCI_NOTIFY_USER with @user_data */
	DAVINCI_OP_ADD = 6,	/* dst = src0 + src1, @count elements */
	DAVINCI_OP_SUB = 7,	/* dst = src0 - src1 */
	DAVINCI_OP_MUL = 8,	/* dst = src0 * src1 */
	DAVINCI_OP_DIV = 9,	/* dst = src0 / src1 */
	DAVINCI_OP_MAX = 10,	/* dst = max(src0, src1) */
	DAVINCI_OP_MIN = 11,	/* dst = min(src0, src1) */
	DAVINCI_OP_RELU = 12,	/* dst = max(src0, 0) */
	DAVINCI_OP_EXP = 13,	/* dst = exp(src0), float types only */
	DAVINCI_OP_AXPY = 14,	/* dst = alpha * src0 + src1, alpha: @imm */
	DAVINCI_OP_MATMUL = 15,	/* dst[m,n] = op(src0)[m,k] x op(src1)[k,n] */
	DAVINCI_OP_SOFTMAX = 16,	/* dst[m,n] = softmax of each row of src0 */
	DAVINCI_OP_REDUCE_SUM = 17,	/* dst[m] = sum of each row of src0[m,n] */
	DAVINCI_OP_CAST = 18,	/* dst (@dst_dtype) = src0 (@dtype), @count */
	DAVINCI_OP_RELU_GRAD = 19,	/* dst = src1 <= 0 ? 0 : src0, @count */
	DAVINCI_OP_LOG_SOFTMAX = 20,	/* dst[m,n] = log_softmax of each row */
	DAVINCI_OP_SQRT = 21,	/* dst = sqrt(src0), float types only */
	DAVINCI_OP_CMP = 22,	/* dst = src0 @imm src1 ? 1 : 0, @count; in bool with @dst_dtype BOOL */
	DAVINCI_OP_ABS = 23,	/* dst = |src0| (+0 for -0), @count */
	DAVINCI_OP_LEAKY_RELU = 24,	/* dst = src0 >= 0 ? src0 : slope * src0, slope: @imm */
	DAVINCI_OP_COPY_VIEW = 25,	/* dst[@count] = the strided view of src0 its parameter block describes */
	DAVINCI_OP_IDENTITY = 26,	/* dst = src0, @count elements */
	DAVINCI_OP_CONV2D = 27,	/* dst[n,k,oh,ow] = conv of src0 x[n,c,h,w] by src1 w[k,c/groups,r,s], + src2 bias[k] if set, then @imm's epilogue */
	DAVINCI_OP_CONV2D_BACKWARD_INPUT = 28,	/* dst dx[n,c,h,w] = CONV2D's input gradient from src0 dy[n,k,oh,ow] and src1 w */
	DAVINCI_OP_CONV2D_BACKWARD_WEIGHT = 29,	/* dst dw[k,c/groups,r,s] = CONV2D's weight gradient from src0 x and src1 dy */
	DAVINCI_OP_MAXPOOL2D = 30,	/* dst[n,c,oh,ow] = max of each window of src0 x[n,c,h,w]; int64 argmax indices with @dst_dtype INT64 */
	DAVINCI_OP_MAXPOOL2D_BACKWARD = 31,	/* dst dx[n,c,h,w] = MAXPOOL2D's input gradient from src0 dy[n,c,oh,ow] and src1 its int64 indices */
	DAVINCI_OP_AVGPOOL2D = 32,	/* dst[n,c,oh,ow] = mean of each window of src0 x[n,c,h,w] */
	DAVINCI_OP_AVGPOOL2D_BACKWARD = 33,	/* dst dx[n,c,h,w] = AVGPOOL2D's input gradient from src0 dy[n,c,oh,ow] */
	DAVINCI_OP_TANH = 34,	/* dst = tanh(src0), float types only */
	DAVINCI_OP_SIGMOID = 35,	/* dst = 1 / (1 + exp(-src0)), float types only */
	DAVINCI_OP_ERF = 36,	/* dst = erf(src0), float types only */
	DAVINCI_OP_LOG = 37,	/* dst = log(src0) (natural), float types only */
	DAVINCI_OP_GELU = 38,	/* dst = src0 * Phi(src0) (Phi: the normal CDF), or its tanh form */
	DAVINCI_OP_SILU = 39,	/* dst = src0 / (1 + exp(-src0)), float types only */
	DAVINCI_OP_RECIPROCAL = 40,	/* dst = 1 / src0, float types only */
	DAVINCI_OP_POW = 41,	/* dst = src0 ** src1 (C99 pow's special cases), float types only */
	DAVINCI_OP_NEG = 42,	/* dst = -src0, @count (integers wrap) */
	DAVINCI_OP_TANH_GRAD = 43,	/* dst = src0 * (1 - src1 * src1): tanh's gradient dy from its result y */
	DAVINCI_OP_SIGMOID_GRAD = 44,	/* dst = src0 * (1 - src1) * src1: sigmoid's gradient dy from its result y */
	DAVINCI_OP_GELU_GRAD = 45,	/* dst = src0 * GELU'(src1): GELU's gradient dy at its input x, @imm as GELU's */
	DAVINCI_OP_SILU_GRAD = 46,	/* dst = src0 * s * (1 + src1 * (1 - s)), s = sigmoid(src1): SiLU's gradient */
	DAVINCI_OP_INDEX_SELECT = 47,	/* dst[b,i,:] = src0[b,src1[b,i],:]: @m batches of @count indices into @n rows of @k */
	DAVINCI_OP_INDEX_ADD = 48,	/* dst[b,src1[b,i],:] += src0[b,i,:], i in order: @m batches of @count indices into @n rows of @k */
	DAVINCI_OP_SELECT = 49,	/* dst = src1 ? src0 : dst, src1 bool, @count elements */
	DAVINCI_OP_MASK_SCALE = 50,	/* dst = (src0 * src1) * scale, src1 bool, scale: @imm */
	DAVINCI_OP_ARGMAX = 51,	/* dst[m] (int64) = index of the first largest element of each row of src0[m,n] (a NaN is largest) */
	DAVINCI_OP_ARGMIN = 52,	/* dst[m] (int64) = index of the first smallest element of each row of src0[m,n] (a NaN is smallest) */
	DAVINCI_OP_CUMSUM = 53,	/* dst[m,n] = running sums of each row of src0, in order */
	DAVINCI_OP_FILL = 54,	/* dst[@count] = the element its parameter block holds */
	DAVINCI_OP_ARANGE = 55,	/* dst[i] = start + i * step, @count elements */
	DAVINCI_OP_RANDOM_UNIFORM = 56,	/* dst[i] = Philox4x32-10 uniform in [0, 1) of (seed, offset, i) */
	DAVINCI_OP_BERNOULLI = 57,	/* dst[i] = RANDOM_UNIFORM's value of (seed, offset, i) < p ? 1 : 0, p: @imm */
	DAVINCI_OP_TRIL = 58,	/* dst[m,n] = src0 where j - i <= @imm (row i of each matrix of @k rows), else 0 */
	DAVINCI_OP_TRIU = 59,	/* dst[m,n] = src0 where j - i >= @imm (row i of each matrix of @k rows), else 0 */
	DAVINCI_OP_JPEGD_DECODE = 60,	/* DVPP JPEGD: the JPEG of @count bytes at src0 -> dst (NV12 or NV21 by @imm), its struct davinci_jpegd_result at src1 */
	DAVINCI_OP_VPC_RESIZE = 61,	/* DVPP VPC: the picture at src0 resized to the one at dst (bilinear or nearest), as struct davinci_params_vpc_crop describes them */
	DAVINCI_OP_VPC_CROP = 62,	/* DVPP VPC: the crop rect of the picture at src0 resized into the paste rect of the one at dst, the rest of dst untouched */
	DAVINCI_OP_VPC_CONVERT_COLOR = 63,	/* DVPP VPC: the picture at src0 converted to dst's format (YUV420SP, YUYV, RGB888, BGR888; JFIF full-range BT.601), the same size */
	DAVINCI_OP_RANDOM_NORMAL = 64,	/* dst[i] = @mean + @std * Box-Muller normal of Philox4x32-10's words of (seed, offset, i) */
	DAVINCI_OP_JPEGE_ENCODE = 65,	/* DVPP JPEGE: the NV12 or NV21 picture (@imm) of @count bytes at src0 -> a JPEG at dst, its struct davinci_jpege_result at src1 */
	DAVINCI_OP_PNGD_DECODE = 66,	/* DVPP PNGD: the PNG of @count bytes at src0 -> dst (RGB888 or RGBA8888 by @imm), its struct davinci_pngd_result at src1 */
	DAVINCI_OP_AIPP = 67,	/* ATC's AI pre-processing: the @params batch pictures at src0 (u8, the struct davinci_aipp_config at src1 says their format and size) cropped, colour-converted, padded and normalised into dst, NCHW of @dtype */
	DAVINCI_OP_BN_TRAINING_REDUCE = 68,	/* batch norm's statistics: x[@m,@n,@k] at src0 (N images of C channels of HW elements) -> dst float32 [6,@n]: mean, invstd = 1/sqrt(var + eps) (the biased variance), alpha = invstd * w, beta = b - mean * alpha, momentum * mean, momentum * the unbiased variance; w float32 [@n] at src1 (0: ones), b at src2 (0: zeros) */
	DAVINCI_OP_BN_TRAINING_UPDATE = 69,	/* batch norm's output: dst[@m,@n,@k] = x * alpha[c] + beta[c] (two roundings in float32, then one to @dtype), x at src0, alpha and beta float32 [2,@n] at src1 (BN_TRAINING_REDUCE's rows 2 and 3); in place allowed */
	DAVINCI_OP_BN_TRAINING_UPDATE_GRAD = 70,	/* batch norm's parameter gradients: dy[@m,@n,@k] at src0, x at src1, float32 [2,@n] mean and invstd at src2 -> dst float32 [4,@n]: gw = sum((x - mean) * dy) * invstd (the weight's), gb = sum(dy) (the bias's), then mean and invstd (BN_TRAINING_REDUCE_GRAD's rows) */
	DAVINCI_OP_BN_TRAINING_REDUCE_GRAD = 71,	/* batch norm's input gradient: dst[@m,@n,@k] = ((dy - gb / M) - (x - mean) * (gw * invstd / M)) * invstd * w, M = @m * @k, dy at src0, x at src1, float32 [5,@n] gw, gb, mean, invstd, w at src2 */
	DAVINCI_OP_ADAM = 72,	/* one Adam (AdamW) step of @count elements in place: param @dst, grad @src0, exp_avg @src1, exp_avg_sq @src2; writes dst, src1 and src2 */
	DAVINCI_OP_SGD_MOMENTUM = 73,	/* one SGD step with momentum of @count elements in place: param @dst, grad @src0, momentum_buffer @src1; writes dst and src1 */
	DAVINCI_OP_ARGSORT = 74,	/* dst[m,k] (int64) = the indices of the first @k elements of each row of src0[m,n] in stable sorted order (@imm: ascending or descending; equal elements keep their order, -0 equals +0, a NaN is largest) */
	DAVINCI_OP_COUNT = 75,
};

/*
 * DAVINCI_OP_CMP's predicate (struct davinci_task.imm). The result is 1 or
 * 0 in the operands' dtype (1.0 for the float types), or a bool with
 * @dst_dtype DAVINCI_DTYPE_BOOL; a NaN operand compares false, except for
 * DAVINCI_CMP_NE.
 */
#define DAVINCI_CMP_EQ	0	/* src0 == src1 */
#define DAVINCI_CMP_NE	1	/* src0 != src1 */
#define DAVINCI_CMP_LT	2	/* src0 < src1 */
#define DAVINCI_CMP_LE	3	/* src0 <= src1 */
#define DAVINCI_CMP_GT	4	/* src0 > src1 */
#define DAVINCI_CMP_GE	5	/* src0 >= src1 */
#define DAVINCI_CMP_COUNT	6

/*
 * DAVINCI_OP_CONV2D's epilogue (struct davinci_task.imm). What runs on each
 * output after its sum (and the bias, added as ADD adds: rounded once to
 * @dtype), on each tile of y as the kernel stores it: the bytes of CONV2D,
 * ADD of the broadcast bias, then the epilogue's op.
 */
#define DAVINCI_CONV2D_NONE	0	/* the sum (plus bias) as it is */
#define DAVINCI_CONV2D_RELU	1	/* then RELU: max(y, 0), NaN and -0 kept */
#define DAVINCI_CONV2D_COUNT	2

/*
 * DAVINCI_OP_GELU's approximate (struct davinci_task.imm). Which GELU: torch's
 * approximate= argument.
 */
#define DAVINCI_GELU_NONE	0	/* x Phi(x) = x (1 + erf(x / sqrt(2))) / 2 */
#define DAVINCI_GELU_TANH	1	/* x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2 */
#define DAVINCI_GELU_COUNT	2

/*
 * DAVINCI_OP_GELU_GRAD's approximate (struct davinci_task.imm). As GELU's.
 */
#define DAVINCI_GELU_GRAD_NONE	0	/* the gradient of x Phi(x) */
#define DAVINCI_GELU_GRAD_TANH	1	/* the gradient of GELU's tanh form */
#define DAVINCI_GELU_GRAD_COUNT	2

/*
 * DAVINCI_OP_INDEX_SELECT's index_dtype (struct davinci_task.imm). The dtype of the
 * indices src1 holds. An index outside [0, @n) fails the task with
 * DAVINCI_STATUS_INVALID_TASK before it writes anything (DOC: indexed ops).
 */
#define DAVINCI_INDEX_SELECT_INT64	0	/* int64 indices */
#define DAVINCI_INDEX_SELECT_INT32	1	/* int32 indices */
#define DAVINCI_INDEX_SELECT_COUNT	2

/*
 * DAVINCI_OP_INDEX_ADD's index_dtype (struct davinci_task.imm).
 */
#define DAVINCI_INDEX_ADD_INT64	0	/* int64 indices */
#define DAVINCI_INDEX_ADD_INT32	1	/* int32 indices */
#define DAVINCI_INDEX_ADD_COUNT	2

/*
 * DAVINCI_OP_JPEGD_DECODE's format (struct davinci_task.imm). The output's pixel format
 * (DOC: DVPP JPEGD): YUV420SP at 128 x 16 alignment, U first or V first.
 */
#define DAVINCI_JPEGD_DECODE_NV12	0	/* Y plane, then interleaved U, V (PIXEL_FORMAT_YUV_SEMIPLANAR_420) */
#define DAVINCI_JPEGD_DECODE_NV21	1	/* Y plane, then interleaved V, U (PIXEL_FORMAT_YVU_SEMIPLANAR_420) */
#define DAVINCI_JPEGD_DECODE_COUNT	2

/*
 * DAVINCI_OP_JPEGE_ENCODE's format (struct davinci_task.imm). The picture's pixel format
 * (DOC: DVPP JPEGE): YUV420SP, U first or V first.
 */
#define DAVINCI_JPEGE_ENCODE_NV12	0	/* Y plane, then interleaved U, V (PIXEL_FORMAT_YUV_SEMIPLANAR_420) */
#define DAVINCI_JPEGE_ENCODE_NV21	1	/* Y plane, then interleaved V, U (PIXEL_FORMAT_YVU_SEMIPLANAR_420) */
#define DAVINCI_JPEGE_ENCODE_COUNT	2

/*
 * DAVINCI_OP_PNGD_DECODE's format (struct davinci_task.imm). The output's pixel format
 * (DOC: DVPP PNGD): packed 8-bit samples, rows of ALIGN(width, 128) pixels,
 * ALIGN(height, 16) rows.
 */
#define DAVINCI_PNGD_DECODE_RGB888	0	/* R, G, B per pixel, any alpha dropped (PIXEL_FORMAT_RGB_888) */
#define DAVINCI_PNGD_DECODE_RGBA8888	1	/* R, G, B, A per pixel (PIXEL_FORMAT_RGBA_8888) */
#define DAVINCI_PNGD_DECODE_AUTO	2	/* RGBA8888 for a file with alpha, else RGB888 (PIXEL_FORMAT_UNKNOWN) */
#define DAVINCI_PNGD_DECODE_COUNT	3

/*
 * DAVINCI_OP_ARGSORT's order (struct davinci_task.imm). The order of the indices: of
 * ascending or descending values. @k < @n keeps the first @k:
 * torch.topk's smallest or largest.
 */
#define DAVINCI_ARGSORT_ASCENDING	0	/* smallest first (torch.sort, topk(largest=False)) */
#define DAVINCI_ARGSORT_DESCENDING	1	/* largest first (sort(descending=True), topk) */
#define DAVINCI_ARGSORT_COUNT	2

/**
 * struct davinci_params_copy_view - DAVINCI_OP_COPY_VIEW's parameter block
 * @ndim: dimensions of the view, 1 .. 8
 * @pad: zero
 * @sizes: elements along each dimension, outermost first; their product is
 *	@count, those past @ndim zero
 * @strides: elements of src0 between neighbours along each dimension (0
 *	repeats one, as an expanded tensor), those past @ndim zero
 */
struct davinci_params_copy_view {
	__u32 ndim;
	__u32 pad;
	__u64 sizes[8];
	__u64 strides[8];
};

#define DAVINCI_PARAMS_COPY_VIEW_VERSION	1

/**
 * struct davinci_params_conv2d - DAVINCI_OP_CONV2D's parameter block
 * @n: images
 * @c: input channels, a multiple of @groups
 * @h: input height (1 for a 1-D convolution)
 * @w: input width
 * @k: output channels, a multiple of @groups
 * @r: filter height
 * @s: filter width
 * @stride_h: rows between two outputs' windows, >= 1
 * @stride_w: columns between two outputs' windows, >= 1
 * @pad_h: zero rows above and below the input
 * @pad_w: zero columns left and right of the input
 * @dilation_h: rows between two filter taps, >= 1
 * @dilation_w: columns between two filter taps, >= 1
 * @groups: channel groups, >= 1 (@c: depthwise); output height oh = (h + 2
 *	pad_h - dilation_h (r - 1) - 1) / stride_h + 1, likewise ow, both >= 1
 */
struct davinci_params_conv2d {
	__u32 n;
	__u32 c;
	__u32 h;
	__u32 w;
	__u32 k;
	__u32 r;
	__u32 s;
	__u32 stride_h;
	__u32 stride_w;
	__u32 pad_h;
	__u32 pad_w;
	__u32 dilation_h;
	__u32 dilation_w;
	__u32 groups;
};

#define DAVINCI_PARAMS_CONV2D_VERSION	1

/**
 * struct davinci_params_maxpool2d - DAVINCI_OP_MAXPOOL2D's parameter block
 * @n: images
 * @c: channels
 * @h: input height (1 for a 1-D pooling)
 * @w: input width
 * @r: window height (@h for a global pooling)
 * @s: window width
 * @stride_h: rows between two windows, >= 1
 * @stride_w: columns between two windows, >= 1
 * @pad_h: rows of padding above and below, at most r / 2
 * @pad_w: columns of padding left and right, at most s / 2
 * @dilation_h: rows between two taps of a window, >= 1 (1 for the average
 *	ops; at most h unless r is 1)
 * @dilation_w: columns between two taps, >= 1 (1 for the average ops; at
 *	most w unless s is 1)
 * @ceil_mode: 0: oh = (h + 2 pad_h - dilation_h (r - 1) - 1) / stride_h +
 *	1; 1: that division rounded up, less one if the last window would start
 *	at or past h + pad_h (torch's rule); likewise ow; both >= 1
 * @count_include_pad: average ops: 1 divides by the window clipped to the
 *	padded input, 0 by its elements inside the input; 0 for the max ops
 * @divisor: average ops: the divisor of every window (torch's
 *	divisor_override), 0 for none; 0 for the max ops
 * @adaptive: average ops: 1 divides each sum by r and then by s (torch's
 *	adaptive_avg_pool2d), with no padding, count_include_pad 0 and divisor 0;
 *	0 for the max ops
 */
struct davinci_params_maxpool2d {
	__u32 n;
	__u32 c;
	__u32 h;
	__u32 w;
	__u32 r;
	__u32 s;
	__u32 stride_h;
	__u32 stride_w;
	__u32 pad_h;
	__u32 pad_w;
	__u32 dilation_h;
	__u32 dilation_w;
	__u32 ceil_mode;
	__u32 count_include_pad;
	__u32 divisor;
	__u32 adaptive;
};

#define DAVINCI_PARAMS_MAXPOOL2D_VERSION	1

/**
 * struct davinci_params_fill - DAVINCI_OP_FILL's parameter block
 * @value: the element's bits, in the low bytes of the dtype's size (little
 *	endian); the bytes above zero
 */
struct davinci_params_fill {
	__u64 value;
};

#define DAVINCI_PARAMS_FILL_VERSION	1

/**
 * struct davinci_params_arange - DAVINCI_OP_ARANGE's parameter block
 * @start: the first value: an int64 for the integer dtypes, a float64's
 *	bits for the float ones
 * @step: the difference of neighbours, as @start (DOC: ARANGE's arithmetic
 *	in NUMERICS.md)
 */
struct davinci_params_arange {
	__u64 start;
	__u64 step;
};

#define DAVINCI_PARAMS_ARANGE_VERSION	1

/**
 * struct davinci_params_random_uniform - DAVINCI_OP_RANDOM_UNIFORM's parameter block
 * @seed: the Philox key: low word k0, high word k1
 * @offset: the counter of dst[0]: element i takes word i % 4 of the block
 *	at counter @offset + i / 4 (NUMERICS.md)
 */
struct davinci_params_random_uniform {
	__u64 seed;
	__u64 offset;
};

#define DAVINCI_PARAMS_RANDOM_UNIFORM_VERSION	1

/**
 * struct davinci_params_jpegd_decode - DAVINCI_OP_JPEGD_DECODE's parameter block
 * @dst_size: bytes of dst the decode may write: at least the picture's
 *	out_size, else the task fails before it writes
 * @max_dim: the largest width and height taken, 1 .. 8192 (0: 8192, DVPP
 *	JPEGD's)
 * @pad: zero
 */
struct davinci_params_jpegd_decode {
	__u64 dst_size;
	__u32 max_dim;
	__u32 pad;
};

#define DAVINCI_PARAMS_JPEGD_DECODE_VERSION	1

/**
 * struct davinci_params_vpc_crop - DAVINCI_OP_VPC_CROP's parameter block
 * @src_format: the input's DAVINCI_VPC_FMT_* (DOC: DVPP VPC)
 * @src_width: the input's pixels per row, 10 .. 4096 (NV12, NV21: 10 ..
 *	8192, DVPP's 8K mode)
 * @src_height: its rows, 6 .. 4096 (NV12, NV21: 6 .. 8192)
 * @src_width_stride: bytes from one row to the next, a multiple of 16, 32
 *	.. 16384, at least its width's bytes
 * @src_height_stride: rows of each plane, even, 6 .. 4096 (NV12, NV21: 6 ..
 *	16384), at least its height
 * @dst_format: the output's DAVINCI_VPC_FMT_*
 * @dst_width: the output's pixels per row, 10 .. 4096 (even for YUV420SP)
 * @dst_height: its rows, 6 .. 4096 (even for YUV420SP)
 * @dst_width_stride: as src_width_stride
 * @dst_height_stride: rows of each plane, even, 6 .. 4096, at least its
 *	height
 * @crop_left: the input's first column read, even (VPC_CROP)
 * @crop_top: its first row read, even
 * @crop_right: its last column read, odd, below src_width; the crop at most
 *	4096 x 4096 (VPC_CROP)
 * @crop_bottom: its last row read, odd, below src_height
 * @paste_left: the output's first column written, a multiple of 16
 *	(VPC_CROP)
 * @paste_top: its first row written, even
 * @paste_right: its last column written, odd, below dst_width
 * @paste_bottom: its last row written, odd, below dst_height
 * @interpolation: DAVINCI_VPC_BILINEAR or DAVINCI_VPC_NEAREST
 * @pad: zero
 */
struct davinci_params_vpc_crop {
	__u32 src_format;
	__u32 src_width;
	__u32 src_height;
	__u32 src_width_stride;
	__u32 src_height_stride;
	__u32 dst_format;
	__u32 dst_width;
	__u32 dst_height;
	__u32 dst_width_stride;
	__u32 dst_height_stride;
	__u32 crop_left;
	__u32 crop_top;
	__u32 crop_right;
	__u32 crop_bottom;
	__u32 paste_left;
	__u32 paste_top;
	__u32 paste_right;
	__u32 paste_bottom;
	__u32 interpolation;
	__u32 pad;
};

#define DAVINCI_PARAMS_VPC_CROP_VERSION	1

/**
 * struct davinci_params_random_normal - DAVINCI_OP_RANDOM_NORMAL's parameter block
 * @seed: the Philox key, as RANDOM_UNIFORM's
 * @offset: the counter of dst[0]: element i is one of the two normals of
 *	the pair of words (i % 4) / 2 of the block at counter @offset + i / 4
 *	(NUMERICS.md)
 * @mean: a float64's bits
 * @std: a float64's bits: finite and not negative
 */
struct davinci_params_random_normal {
	__u64 seed;
	__u64 offset;
	__u64 mean;
	__u64 std;
};

#define DAVINCI_PARAMS_RANDOM_NORMAL_VERSION	1

/**
 * struct davinci_params_jpege_encode - DAVINCI_OP_JPEGE_ENCODE's parameter block
 * @dst_size: bytes of dst the file may take: the task fails with nothing
 *	written past them when it needs more
 * @width: pixels per row, 1 .. 8192
 * @height: rows, 1 .. 8192
 * @width_stride: bytes per row of each plane: a multiple of 16, at least
 *	@width
 * @height_stride: rows of the Y plane: a multiple of 2, at least @height;
 *	@count at least width_stride * height_stride * 3 / 2
 * @quality: 1 .. 100, libjpeg's quality scaling of Annex K's tables
 * @pad: zero
 */
struct davinci_params_jpege_encode {
	__u64 dst_size;
	__u32 width;
	__u32 height;
	__u32 width_stride;
	__u32 height_stride;
	__u32 quality;
	__u32 pad;
};

#define DAVINCI_PARAMS_JPEGE_ENCODE_VERSION	1

/**
 * struct davinci_params_pngd_decode - DAVINCI_OP_PNGD_DECODE's parameter block
 * @dst_size: bytes of dst the decode may write: at least the picture's
 *	out_size, else the task fails before it writes
 * @max_dim: the largest width and height taken, 1 .. 4096 (0: 4096, DVPP
 *	PNGD's)
 * @pad: zero
 */
struct davinci_params_pngd_decode {
	__u64 dst_size;
	__u32 max_dim;
	__u32 pad;
};

#define DAVINCI_PARAMS_PNGD_DECODE_VERSION	1

/**
 * struct davinci_params_aipp - DAVINCI_OP_AIPP's parameter block
 * @batch: pictures at src0, 1 .. 1024, each @src_size bytes apart; dst
 *	holds as many images
 * @channels: dst's channels: 3
 * @height: dst's rows, 1 .. 8192: the crop's height plus the top and bottom
 *	padding
 * @width: dst's columns, 1 .. 8192: the crop's width plus the left and
 *	right padding
 * @src_size: bytes of one picture src0 holds, the largest the config may
 *	describe (dynamic AIPP's max_src_image_size), 1 .. 2^28
 */
struct davinci_params_aipp {
	__u32 batch;
	__u32 channels;
	__u32 height;
	__u32 width;
	__u64 src_size;
};

#define DAVINCI_PARAMS_AIPP_VERSION	1

/**
 * struct davinci_params_bn_training_reduce - DAVINCI_OP_BN_TRAINING_REDUCE's parameter block
 * @eps: the float32 added to the variance, its bits: finite, not negative
 * @momentum: the float32 rows 4 and 5 scale the batch statistics by, its
 *	bits: finite
 */
struct davinci_params_bn_training_reduce {
	__u32 eps;
	__u32 momentum;
};

#define DAVINCI_PARAMS_BN_TRAINING_REDUCE_VERSION	1

/**
 * struct davinci_params_adam - DAVINCI_OP_ADAM's parameter block
 * @step_size: float32 bits of lr / (1 - beta1^step), computed in float64
 *	and rounded once (as CPU torch's fused Adam)
 * @bias_correction2_sqrt: float32 bits of sqrt(1 - beta2^step), computed in
 *	float64 and rounded once
 * @eps: float32 bits of eps
 * @exp_avg_weight: float32 bits of 1 - beta1 (float64, rounded):
 *	exp_avg.lerp_(grad, it)
 * @beta2: float32 bits of beta2
 * @exp_avg_sq_weight: float32 bits of 1 - beta2 (float64, rounded)
 * @weight_decay: float32 bits of Adam's weight decay, grad += param * it
 *	first; 0 (either sign): none
 * @decay: float32 bits of AdamW's decoupled decay, param *= it first: 1 -
 *	lr * weight_decay in float64, rounded; 1.0 for Adam
 * @maximize: 1: the gradient negated first (torch's maximize), else 0
 * @amsgrad: 0: AMSGrad's max_exp_avg_sq would be a fifth operand, which a
 *	task does not have (refused)
 */
struct davinci_params_adam {
	__u32 step_size;
	__u32 bias_correction2_sqrt;
	__u32 eps;
	__u32 exp_avg_weight;
	__u32 beta2;
	__u32 exp_avg_sq_weight;
	__u32 weight_decay;
	__u32 decay;
	__u32 maximize;
	__u32 amsgrad;
};

#define DAVINCI_PARAMS_ADAM_VERSION	1

/**
 * struct davinci_params_sgd_momentum - DAVINCI_OP_SGD_MOMENTUM's parameter block
 * @lr: float32 bits of lr
 * @momentum: float32 bits of momentum
 * @dampening_weight: float32 bits of 1 - dampening (float64, rounded)
 * @weight_decay: float32 bits of the weight decay, grad += param * it
 *	first; 0 (either sign): none
 * @nesterov: 1: Nesterov momentum (the gradient plus momentum times the
 *	buffer), else 0
 * @maximize: 1: the gradient negated first, else 0
 * @first_step: 1: the buffer is set to the gradient (torch's is_first_step:
 *	src1's contents are not read), else 0
 * @pad: zero
 */
struct davinci_params_sgd_momentum {
	__u32 lr;
	__u32 momentum;
	__u32 dampening_weight;
	__u32 weight_decay;
	__u32 nesterov;
	__u32 maximize;
	__u32 first_step;
	__u32 pad;
};

#define DAVINCI_PARAMS_SGD_MOMENTUM_VERSION	1
/* END GENERATED */

/*
 * Element types (struct davinci_task.dtype and .dst_dtype), stored little
 * endian: 4, 2, 2, 4, 8, 1, 1 and 1 bytes. A BOOL is 0 or 1; an op reads
 * any other byte as 1 (true).
 */
enum davinci_dtype {
	DAVINCI_DTYPE_FLOAT32 = 0,
	DAVINCI_DTYPE_FLOAT16,
	DAVINCI_DTYPE_BFLOAT16,
	DAVINCI_DTYPE_INT32,
	DAVINCI_DTYPE_INT64,	/* ABI 1.7 */
	DAVINCI_DTYPE_BOOL,	/* ABI 1.7 */
	DAVINCI_DTYPE_INT8,	/* ABI 1.7 */
	DAVINCI_DTYPE_UINT8,	/* ABI 1.7 */
	DAVINCI_DTYPE_COUNT,
};

/* Task flags (struct davinci_task.flags). */
#define DAVINCI_TASK_F_NOTIFY	(1U << 0)	/* notify when it completes */
#define DAVINCI_TASK_F_TRANS_A	(1U << 1)	/* MATMUL: src0 is [k,m] */
#define DAVINCI_TASK_F_TRANS_B	(1U << 2)	/* MATMUL: src1 is [n,k] */
/*
 * EVENT_WAIT: wait for the event's next record, one taken in or signalled
 * from the host after this task, instead of the last one before it. A
 * host that must act before a stream goes on (a blocking callback) makes
 * the stream wait this way and signals the event when done.
 */
#define DAVINCI_TASK_F_WAIT_NEXT (1U << 3)
/*
 * The operands are strided tensors that @params describes (struct
 * davinci_params_strided, DOC: strided operands), not dense runs of
 * @count elements. Ops that take it: DAVINCI_CAP_OP_FLAGS. ABI 1.7.
 */
#define DAVINCI_TASK_F_STRIDED	(1U << 4)
#define DAVINCI_TASK_FLAGS_ALL	(DAVINCI_TASK_F_NOTIFY | \
				 DAVINCI_TASK_F_TRANS_A | \
				 DAVINCI_TASK_F_TRANS_B | \
				 DAVINCI_TASK_F_WAIT_NEXT | \
				 DAVINCI_TASK_F_STRIDED)

/**
 * struct davinci_task - a task descriptor in the submission ring (128 bytes)
 * @opcode: DAVINCI_OP_*
 * @dtype: DAVINCI_DTYPE_* of the operands
 * @dst_dtype: DAVINCI_DTYPE_* of @dst for DAVINCI_OP_CAST; for
 *	DAVINCI_OP_CMP, DAVINCI_DTYPE_BOOL for a bool result or zero for one
 *	in @dtype; else zero
 * @pad0: must be zero
 * @flags: DAVINCI_TASK_F_*
 * @event_id: event of EVENT_RECORD and EVENT_WAIT, else zero
 * @user_data: copied to the completion and any notification
 * @dst: device virtual address of the output
 * @src0: device virtual address of the first input
 * @src1: device virtual address of the second input
 * @count: elements (bytes for MEMCPY and MEMSET, microseconds for NOP)
 * @m: rows (MATMUL, SOFTMAX, REDUCE_SUM, LOG_SOFTMAX)
 * @n: columns (MATMUL, SOFTMAX, REDUCE_SUM, LOG_SOFTMAX)
 * @k: inner dimension (MATMUL)
 * @imm: the op's attribute that fits 32 bits: MEMSET's byte, AXPY's
 *	alpha and LEAKY_RELU's slope as float32 bits, CMP's predicate
 *	(DAVINCI_CMP_*)
 * @params: device virtual address of the op's parameter block, for an op
 *	that has one (DOC: parameter blocks), or of its struct
 *	davinci_params_strided with DAVINCI_TASK_F_STRIDED, else zero
 * @params_size: its bytes: sizeof the op's struct davinci_params_*
 * @params_version: its layout, DAVINCI_PARAMS_<OP>_VERSION
 * @src2: device virtual address of the third operand of an op that has
 *	one (an input, or a second output, as its kind says), else zero
 * @reserved: must be zero
 *
 * Fields an opcode does not use must be zero. Every address range a task
 * touches must lie inside one live allocation of the submitting context
 * (HBM or pinned host) when the doorbell takes it in, else the task fails
 * with DAVINCI_STATUS_INVALID_ADDRESS when it reaches the head of its
 * stream, touching nothing. The operands of a compute task (DAVINCI_OP_ADD
 * .. DAVINCI_OP_CMP) must be aligned to their element size: @dst to
 * that of @dst_dtype for CAST and of @dtype otherwise, @src0 and @src1 to that
 * of @dtype (8 bytes for INT64, 4 for FLOAT32 and INT32, 2 for FLOAT16
 * and BFLOAT16, 1 for BOOL, INT8 and UINT8),
 * else the task fails the same way with DAVINCI_STATUS_MISALIGNED. The
 * task holds those allocations from the doorbell until it completes:
 * memory freed meanwhile stays in place for it and returns to the pool
 * afterwards.
 */
struct davinci_task {
	__u16 opcode;
	__u8 dtype;
	__u8 dst_dtype;
	__u32 pad0;
	__u32 flags;
	__u32 event_id;
	__u64 user_data;
	__u64 dst;
	__u64 src0;
	__u64 src1;
	__u64 count;
	__u32 m;
	__u32 n;
	__u32 k;
	__u32 imm;
	__u64 params;
	__u32 params_size;
	__u32 params_version;
	__u64 src2;
	__u64 reserved[4];
};

/**
 * DOC: parameter blocks
 *
 * An op whose attributes do not fit a descriptor (the sizes and strides of
 * a view; a convolution's shapes, strides, pads and groups) takes them from
 * a parameter block in device memory, as Ascend's kernels take their
 * arguments: @params names it, @params_size and @params_version must be
 * those of the op's struct davinci_params_* (the op schema declares them;
 * DAVINCI_FEAT_PARAMS; DAVINCI_CAP_OP_PARAMS answers them). The
 * driver copies the block when it takes the task in, checks the copy and
 * runs the task from the copy only, so the memory may change or be freed
 * once the task is taken in (a graph's tasks copy theirs again at each
 * launch, as they resolve their operands). A block that does not lie
 * inside one live allocation of the context fails the task with
 * DAVINCI_STATUS_INVALID_ADDRESS, one whose contents the op refuses with
 * DAVINCI_STATUS_INVALID_TASK, touching nothing. An op without a parameter
 * block takes zero in all three fields (EINVAL otherwise).
 */
#define DAVINCI_PARAMS_MAX	512	/* bytes of the largest block */

/**
 * DOC: indexed ops
 *
 * DAVINCI_OP_INDEX_SELECT and DAVINCI_OP_INDEX_ADD address memory with the
 * contents of src1: @m batches of @count indices (int64 or int32, by @imm)
 * into a table of @n rows of @k elements per batch. Their extents follow
 * from the descriptor (dst @m x @count x @k elements and src0 @m x @n x @k
 * for INDEX_SELECT, the other way round for INDEX_ADD, src1 @m x @count
 * indices); the indices themselves are read when the task starts, and one
 * outside [0, @n) fails the task with DAVINCI_STATUS_INVALID_TASK before
 * it writes anything (the stream enters its error state, as for any
 * failed task). INDEX_ADD adds in index order: duplicate indices give the
 * same bytes on every backend. ABI 1.7.
 */

/**
 * DOC: DVPP JPEGD
 *
 * DAVINCI_OP_JPEGD_DECODE runs on the device's DVPP engine, not an AI
 * core (its completion entry and trace records name no AI core): it
 * decodes the baseline, extended or progressive Huffman JPEG of @count
 * bytes at src0 (grey, 4:4:4, 4:2:2, 4:2:0 or 4:4:0; restart markers) into
 * YUV420SP at dst, NV12 or NV21 by @imm, as DVPP JPEGD writes it:
 * width_stride = ALIGN(width, 128), height_stride = ALIGN(height, 16), a Y
 * plane of width_stride x height_stride bytes, then half as many of
 * interleaved chroma pairs, the picture edge-extended to the strides
 * (kmod/core/NUMERICS.md, JPEGD). Its parameter block (struct
 * davinci_params_jpegd_decode) gives the bytes of dst it may write and
 * the largest side it takes (8192 at most). It reads the file when it
 * starts, so an earlier task of the stream may write it, and always
 * writes the struct davinci_jpegd_result at src1 (which must not meet
 * src0 or dst): the header's geometry and @error, 0 or the decoder's
 * negative errno: -EINVAL for data that is not a JPEG the standard allows
 * (a truncated file among them), -EOPNOTSUPP for a JPEG the engine does
 * not take (arithmetic coding, 12-bit, 4:1:1 ...), -E2BIG for a side
 * above @max_dim, -ENOSPC for a picture whose output needs more than
 * @dst_size bytes (found from the header, before anything is written).
 * A failed decode fails the task with DAVINCI_STATUS_INVALID_TASK
 * (the stream enters its error state, as for any failed task); dst's
 * contents are then unspecified, but for -ENOSPC, -E2BIG and a header
 * error, where it is untouched. The engine's scratch memory is the
 * driver's, allocated as the task starts and freed as it ends.
 */

/* struct davinci_jpegd_result's @subsampling */
#define DAVINCI_JPEGD_GREY	0
#define DAVINCI_JPEGD_444	1
#define DAVINCI_JPEGD_422	2
#define DAVINCI_JPEGD_420	3
#define DAVINCI_JPEGD_440	4

/**
 * struct davinci_jpegd_result - what a JPEGD_DECODE task writes at src1
 * @error: 0 when the picture was decoded, else a negative errno (DOC: DVPP
 *	JPEGD)
 * @width: pixels per row (0 when the header could not be read)
 * @height: rows
 * @components: 1 (grey) or 3 (YCbCr)
 * @subsampling: DAVINCI_JPEGD_*
 * @width_stride: ALIGN(@width, 128)
 * @height_stride: ALIGN(@height, 16)
 * @progressive: 1 for a progressive (SOF2) file
 * @out_size: bytes of the output, @width_stride * @height_stride * 3 / 2
 */
struct davinci_jpegd_result {
	__s32 error;
	__u32 width;
	__u32 height;
	__u32 components;
	__u32 subsampling;
	__u32 width_stride;
	__u32 height_stride;
	__u32 progressive;
	__u64 out_size;
};

/**
 * DOC: DVPP VPC
 *
 * DAVINCI_OP_VPC_RESIZE, _VPC_CROP and _VPC_CONVERT_COLOR run on the
 * device's DVPP engine (VPC, its vision pre-processing core), not an AI
 * core, as JPEGD_DECODE does: src0 is the input picture, dst the output,
 * each as the struct davinci_params_vpc_crop all three take describes it:
 * a DAVINCI_VPC_FMT_* (acldvppPixelFormat's numbers), width and height in
 * pixels, width stride in bytes and height stride in rows.
 *
 *	NV12, NV21  a Y plane of width_stride x height_stride bytes, then
 *		    width_stride x height_stride / 2 of interleaved U, V (NV12)
 *		    or V, U (NV21) pairs, one per 2 x 2 pixels: ws * hs * 3 / 2
 *		    bytes
 *	YUYV	    Y0 U Y1 V per two pixels (YUV422 packed): ws * hs bytes
 *	RGB, BGR    three bytes a pixel: ws * hs bytes
 *
 * A picture is 10 .. 4096 pixels wide and 6 .. 4096 high; its width
 * stride a multiple of 16, 32 .. 16384 and at least a row's bytes
 * (width, 2 * width for YUYV, 3 * width for RGB and BGR); its height
 * stride even, 6 .. 4096 and at least its height. An input in NV12 or
 * NV21 may be up to 8192 x 8192 with a height stride up to 16384
 * (DVPP's 8K mode, DAVINCI_VPC_MAX_DIM_8K); VPC_CROP's crop rect in it
 * stays within 4096 x 4096, and every output within 4096. A YUYV picture has an
 * even width; an output in NV12 or NV21 an even width and height (an
 * input may be odd: its chroma then covers ceil(w / 2) x ceil(h / 2)).
 *
 * VPC_CROP reads the crop rect of the input (crop_left, _top even,
 * crop_right, _bottom odd and inside the picture, so at least 10 x 6) and
 * resizes it into the paste rect of the output (paste_left a multiple of
 * 16, paste_top even, paste_right, _bottom odd and inside the picture,
 * at least 10 x 6, or the whole output): every output byte outside the
 * paste rect, the strides' padding among them, is left as it was
 * (crop-and-paste; a crop alone pastes into the whole output). The scale, paste over crop size
 * in each direction, is 1/32 .. 16. VPC_RESIZE is VPC_CROP of the whole
 * input into the whole output (its rects must say so), without the
 * rects' parity rules. Both resample each channel on its own plane (Y at
 * full size, U and V at their subsampled size, each of R, G and B) with
 * the parameter block's interpolation: DAVINCI_VPC_BILINEAR, OpenCV's
 * INTER_LINEAR (pixel centres aligned, src = (dst + 0.5) * in / out -
 * 0.5, clamped at the edges) in 11-bit fixed point, or DAVINCI_VPC_NEAREST,
 * OpenCV's INTER_NEAREST (src = floor(dst * in / out)), exactly
 * (kmod/core/NUMERICS.md, VPC). Input and output formats are of one
 * family: NV12, NV21 and YUYV, or RGB and BGR.
 *
 * VPC_CONVERT_COLOR converts between any two of the five formats at the
 * same width and height (its rects the whole pictures, interpolation 0):
 * JFIF's full-range BT.601 (libjpeg's and Pillow's YCbCr) in 16-bit fixed
 * point, subsampled chroma repeated over the pixels it covers when read
 * and the rounded mean of those it covers when written.
 *
 * A block that breaks a rule fails the task with DAVINCI_STATUS_INVALID_TASK
 * as the driver takes it in (DOC: parameter blocks): nothing is written.
 * The resize tables are allocated as the task starts (outside
 * any lock); -ENOMEM there fails the task with DAVINCI_STATUS_INVALID_TASK
 * before anything is written.
 */

/* a VPC picture's format (struct davinci_params_vpc_crop's src_format) */
#define DAVINCI_VPC_FMT_NV12	1	/* PIXEL_FORMAT_YUV_SEMIPLANAR_420 */
#define DAVINCI_VPC_FMT_NV21	2	/* PIXEL_FORMAT_YVU_SEMIPLANAR_420 */
#define DAVINCI_VPC_FMT_YUYV	7	/* PIXEL_FORMAT_YUYV_PACKED_422 */
#define DAVINCI_VPC_FMT_RGB	12	/* PIXEL_FORMAT_RGB_888 */
#define DAVINCI_VPC_FMT_BGR	13	/* PIXEL_FORMAT_BGR_888 */

/* struct davinci_params_vpc_crop's interpolation */
#define DAVINCI_VPC_BILINEAR	0
#define DAVINCI_VPC_NEAREST	1
#define DAVINCI_VPC_INTERP_COUNT	2

/* VPC's picture limits */
#define DAVINCI_VPC_MIN_WIDTH	10
#define DAVINCI_VPC_MIN_HEIGHT	6
#define DAVINCI_VPC_MAX_DIM	4096
#define DAVINCI_VPC_MIN_WSTRIDE	32
#define DAVINCI_VPC_MAX_WSTRIDE	16384
/* a YUV420SP input's (DVPP's 8K mode): sides and height stride */
#define DAVINCI_VPC_MAX_DIM_8K	8192
#define DAVINCI_VPC_MAX_HSTRIDE_8K	16384

/**
 * DOC: DVPP JPEGE
 *
 * DAVINCI_OP_JPEGE_ENCODE runs on the DVPP engine, as JPEGD_DECODE does
 * (no AI core): it encodes the YUV420SP picture of @count bytes at src0,
 * NV12 or NV21 by @imm, into a baseline JFIF 4:2:0 JPEG at dst. Its
 * parameter block (struct davinci_params_jpege_encode) gives the size,
 * the strides (width_stride a multiple of 16, height_stride of 2, as DVPP
 * JPEGE takes them: a Y plane of width_stride x height_stride bytes, then
 * half as many of interleaved chroma pairs), the quality (1 .. 100:
 * Annex K's tables scaled as libjpeg's jpeg_quality_scaling) and the
 * bytes of dst the file may take. The bytes are exactly reproducible
 * (kmod/core/NUMERICS.md, JPEGE), and no picture of a given size
 * encodes to more than 625 + 2 * ceil(6 * MCUs * 1665 / 8) bytes, MCUs =
 * ceil(width / 16) * ceil(height / 16): a @dst_size of that never fails.
 * A block the engine does not take (a size, stride or quality out of
 * range, a @count short of the strides' picture) fails the task with
 * DAVINCI_STATUS_INVALID_TASK as it is taken in, before it runs and
 * without writing src1. Once it runs, it writes the struct
 * davinci_jpege_result at src1 (which must
 * not meet src0 or dst): @error 0 and the file's @size, or a negative
 * errno: -ENOSPC for a file larger than @dst_size (nothing is written
 * past it), -ENOMEM when the engine's scratch could not be allocated;
 * the task then fails with DAVINCI_STATUS_INVALID_TASK.
 */

/**
 * struct davinci_jpege_result - what a JPEGE_ENCODE task writes at src1
 * @error: 0 when the picture was encoded, else a negative errno (DOC:
 *	DVPP JPEGE)
 * @pad: zero
 * @size: bytes of the file at dst (0 after an error)
 */
struct davinci_jpege_result {
	__s32 error;
	__u32 pad;
	__u64 size;
};

/**
 * DOC: DVPP PNGD
 *
 * DAVINCI_OP_PNGD_DECODE runs on the device's DVPP engine, as JPEGD_DECODE
 * does (no AI core): it decodes the PNG of @count bytes at src0 (every
 * colour type and bit depth, Adam7, tRNS; every chunk's CRC and the zlib
 * stream's Adler-32 checked) into packed 8-bit pixels at dst, by @imm
 * RGB888, RGBA8888 or AUTO (RGBA8888 for a file with alpha, else RGB888),
 * as DVPP PNGD writes them: width_stride = ALIGN(width, 128) * 3 or 4
 * bytes, height_stride = ALIGN(height, 16) rows, the padding zeros; 16-bit
 * samples become their high byte, grey of 1, 2 or 4 bits is scaled to 8,
 * grey is R = G = B (kmod/core/NUMERICS.md, PNGD). Its parameter block
 * (struct davinci_params_pngd_decode) gives the bytes of dst it may write
 * and the largest side it takes (4096 at most). It reads the file when it
 * starts and always writes the struct davinci_pngd_result at src1 (which
 * must not meet src0 or dst): the header's geometry and @error, 0 or the
 * decoder's negative errno: -EINVAL for data that is not a PNG the
 * standard allows (a bad CRC, a corrupt or truncated zlib stream, a bad
 * Adler-32, a truncated file among them), -EOPNOTSUPP for an unknown
 * critical chunk, -E2BIG for a side above @max_dim, -ENOSPC for a picture
 * whose output needs more than @dst_size bytes (found from the header,
 * before anything is written). A failed decode fails the task with
 * DAVINCI_STATUS_INVALID_TASK; dst's contents are then unspecified, but
 * for -ENOSPC, -E2BIG and an error in the chunks' layout or a CRC other
 * than an IDAT's (found before decoding), where it is untouched.
 */

/**
 * struct davinci_pngd_result - what a PNGD_DECODE task writes at src1
 * @error: 0 when the picture was decoded, else a negative errno (DOC: DVPP
 *	PNGD)
 * @width: pixels per row (0 when the chunks could not be read)
 * @height: rows
 * @bit_depth: the file's, 1 .. 16
 * @colour_type: the file's: 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6
 *	RGBA
 * @interlace: 1 for Adam7
 * @components: the file's colour type's: 1 grey, 2 grey + alpha, 3 RGB or
 *	palette, 4 RGBA
 * @channels: of the output, 3 (RGB888) or 4 (RGBA8888)
 * @width_stride: bytes per output row, ALIGN(@width, 128) * @channels
 * @height_stride: ALIGN(@height, 16)
 * @out_size: bytes of the output, @width_stride * @height_stride
 */
struct davinci_pngd_result {
	__s32 error;
	__u32 width;
	__u32 height;
	__u32 bit_depth;
	__u32 colour_type;
	__u32 interlace;
	__u32 components;
	__u32 channels;
	__u32 width_stride;
	__u32 height_stride;
	__u64 out_size;
};

/**
 * DOC: AIPP
 *
 * DAVINCI_OP_AIPP is ATC's AI pre-processing stage on an AI core: each of
 * the @batch pictures at src0 (u8, @src_size bytes apart) is cropped,
 * channel-swapped, colour-converted, normalised and padded into an NCHW
 * image of @dtype (float32, float16 or bfloat16) at dst, as the struct
 * davinci_aipp_config at src1 says (one config for every picture). The
 * config is device memory read as the task starts, so an earlier task
 * (or the host, for dynamic AIPP) may write it; a config the op does not
 * take (an unknown format or switch, a picture larger than @src_size, a
 * crop outside the picture, a crop plus padding that is not dst's
 * @height x @width, a non-finite float) fails the task with
 * DAVINCI_STATUS_INVALID_TASK before anything is written. Formats: NV12
 * (YUV420SP_U8: w x h Y bytes, then w x h / 2 of interleaved U, V; NV21
 * with DAVINCI_AIPP_RBUV_SWAP; even sizes and crop offsets), RGB888_U8
 * (3 bytes a pixel) and XRGB8888_U8 (4, the X first; RGBX with
 * DAVINCI_AIPP_AX_SWAP). The formulas are kmod/core/NUMERICS.md's (AIPP).
 */

/* struct davinci_aipp_config's @input_format */
#define DAVINCI_AIPP_YUV420SP_U8	1
#define DAVINCI_AIPP_XRGB8888_U8	2
#define DAVINCI_AIPP_RGB888_U8		3

/* struct davinci_aipp_config's @switches */
#define DAVINCI_AIPP_CSC		(1U << 0)	/* the colour matrix */
#define DAVINCI_AIPP_RBUV_SWAP		(1U << 1)	/* R with B, U with V */
#define DAVINCI_AIPP_AX_SWAP		(1U << 2)	/* RGBX, not XRGB */
#define DAVINCI_AIPP_CROP		(1U << 3)	/* the crop fields */
#define DAVINCI_AIPP_PADDING		(1U << 4)	/* the padding fields */

#define DAVINCI_AIPP_CONFIG_VERSION	1

/**
 * struct davinci_aipp_config - what a DAVINCI_OP_AIPP task reads at src1
 * @version: DAVINCI_AIPP_CONFIG_VERSION
 * @input_format: DAVINCI_AIPP_*_U8
 * @src_w: the picture's width, 1 .. 8192 (even for YUV420SP)
 * @src_h: its height, 1 .. 8192 (even for YUV420SP)
 * @switches: DAVINCI_AIPP_CSC .. DAVINCI_AIPP_PADDING
 * @matrix: the CSC matrix, row-major, each -32768 .. 32767 (CSC)
 * @input_bias: subtracted from the channels before the matrix, 0 .. 255
 * @output_bias: added after it, 0 .. 255
 * @crop_x: the crop's first column (CROP; else the whole picture)
 * @crop_y: its first row
 * @crop_w: its width, >= 1
 * @crop_h: its height, >= 1
 * @pad_left: columns of @padding_value left of the crop (PADDING)
 * @pad_right: right of it
 * @pad_top: rows above it
 * @pad_bottom: rows below it
 * @padding_value: float32 bits, the padded elements of every channel
 * @mean: mean_chn_0..3, -32768 .. 32767
 * @min: min_chn_0..3, float32 bits
 * @var_reci: var_reci_chn_0..3, float32 bits (CANN's float16 values are
 *	exact in float32)
 * @reserved: zero
 */
struct davinci_aipp_config {
	__u32 version;
	__u32 input_format;
	__u32 src_w;
	__u32 src_h;
	__u32 switches;
	__s32 matrix[9];
	__u32 input_bias[3];
	__u32 output_bias[3];
	__u32 crop_x;
	__u32 crop_y;
	__u32 crop_w;
	__u32 crop_h;
	__u32 pad_left;
	__u32 pad_right;
	__u32 pad_top;
	__u32 pad_bottom;
	__u32 padding_value;
	__s32 mean[4];
	__u32 min[4];
	__u32 var_reci[4];
	__u32 reserved[3];
};

/**
 * DOC: strided operands
 *
 * With DAVINCI_TASK_F_STRIDED an elementwise op (ADD .. CAST, IDENTITY:
 * DAVINCI_CAP_OP_FLAGS) reads and writes tensors of @ndim dimensions
 * instead of @count dense elements: element (i0, .., in) of operand o is
 * at its address + sum(i_d * strides[o][d]) elements (of @dst_dtype for a
 * CAST's dst, else of @dtype). A stride of 0 repeats an element along a
 * dimension, so a source broadcasts without a copy; a transposed or
 * sliced view is its strides. @count must be the product of @sizes, and
 * the units of work are its elements in row-major order, so any chunking
 * gives the same bytes. The task is refused (DAVINCI_STATUS_INVALID_TASK)
 * when: @ndim is not 1..8; a size, stride or row past @ndim or of an
 * operand the op does not use is not zero; an operand's span overflows;
 * dst overlaps itself (two elements at one address); or dst overlaps a
 * source other than as the same tensor (same address, same strides),
 * which runs in place.
 */

/**
 * struct davinci_params_strided - the operands of a strided task
 * @ndim: dimensions, 1..8
 * @pad: must be zero
 * @sizes: elements along each dimension, outermost first
 * @strides: elements between neighbours along each dimension, for dst,
 *	src0 and src1 in that order
 */
struct davinci_params_strided {
	__u32 ndim;
	__u32 pad;
	__u64 sizes[8];
	__u64 strides[3][8];
};

#define DAVINCI_PARAMS_STRIDED_VERSION	1

/* Completion and task status codes. */
#define DAVINCI_STATUS_OK		0
#define DAVINCI_STATUS_INVALID_ADDRESS	1	/* operand outside own memory */
#define DAVINCI_STATUS_INVALID_TASK	2	/* shape/dtype not allowed */
#define DAVINCI_STATUS_ABORTED		3	/* stream was in error state */
#define DAVINCI_STATUS_CANCELLED	4	/* cancelled by the host */
#define DAVINCI_STATUS_TIMEOUT		5	/* watchdog fired */
#define DAVINCI_STATUS_ECC_ERROR	6	/* memory error */
#define DAVINCI_STATUS_DEVICE_LOST	7	/* device removed or failed */
#define DAVINCI_STATUS_INVALID_EVENT	8	/* event destroyed */
#define DAVINCI_STATUS_MISALIGNED	9	/* operand not element aligned */
#define DAVINCI_STATUS_QUEUE_FAULT	10	/* polled SQ tail out of range */

/**
 * struct davinci_completion - a completion ring entry (64 bytes)
 * @seq: the task's sequence number in its stream
 * @user_data: the task's user_data
 * @start_ns: device time the task started (0 when it never ran)
 * @end_ns: device time it completed: @start_ns for one that completed as
 *	it started (an event, a notification, a NOP without a duration)
 * @status: DAVINCI_STATUS_*
 * @opcode: the task's opcode
 * @aicore: the AI core (0..aicores-1) that ran it, as the trace's
 *	TASK_COMPLETE record says, or DAVINCI_TRACE_NO_CORE when no AI core
 *	ran it; with DAVINCI_FEAT_TRACE only (zero before ABI 1.3)
 * @reserved: zero
 */
struct davinci_completion {
	__u64 seq;
	__u64 user_data;
	__u64 start_ns;
	__u64 end_ns;
	__u32 status;
	__u16 opcode;
	__u16 aicore;
	__u64 reserved[3];
};

/**
 * DOC: device trace
 *
 * Each device keeps a ring of struct davinci_trace_record: what it did,
 * on the clock of the completion entries' start_ns and end_ns (the host's
 * CLOCK_MONOTONIC on every backend). Records are numbered from 0 in the
 * order they were written; the ring keeps the last
 * DAVINCI_TRACE_CAPACITY, a full ring overwrites its oldest.
 *
 * The ring records while at least one open file of the device asks for
 * it: DAVINCI_TRACE_F_ENABLE is that file's request, DAVINCI_TRACE_F_DISABLE
 * takes it back, and closing the file does too. A device nobody traces
 * records nothing, and one user turning recording off does not stop
 * another's trace. The module's tracepoints (events/davinci in tracefs)
 * fire for every record whether the ring keeps it or not.
 *
 * The tasks one doorbell, one pass over a polled ring or one graph launch
 * takes in on a stream share one TASKS_QUEUED record, which names the
 * first one's sequence number and how many followed it (until ABI 1.3,
 * each had a record of type 2 of its own). Each task then has a
 * TASK_COMPLETE record, which carries its start, end and AI core, and
 * before it a TASK_START record when it runs with the device's lock
 * dropped, so that a reader may see it running; a task that completes as
 * it starts (a NOP without a duration, an injected failure) has none. A
 * batch of such tasks costs one record a task and one a batch. A task
 * whose chunks idle AI cores share (a large MATMUL, a batch-1 CONV2D)
 * has, before its TASK_COMPLETE, a TASK_HELP record from each other AI
 * core that ran some of them: that core's @aicore and the span it spent
 * on them (ABI 1.8).
 *
 * A reader sees the records of its own user's contexts (each carries its
 * context's @pid: a tracer reads the processes it started) and the
 * device's own (MGMT, and a MEM_FREE after its context closed); a
 * privileged opener (CAP_PERFMON or CAP_SYS_ADMIN on the kernel module,
 * the daemon's owner on FUSE) sees every user's. Records it may not see
 * are skipped, but they count in @written.
 */
#define DAVINCI_TRACE_CAPACITY		16384
#define DAVINCI_TRACE_NO_CORE		0xFFFF	/* @aicore: no AI core ran it */

#define DAVINCI_TRACE_DOORBELL		1	/* @id stream, @arg0 SQ tail */
#define DAVINCI_TRACE_TASK_START	3	/* running on AI core @aicore */
#define DAVINCI_TRACE_TASK_COMPLETE	4	/* @arg0 start_ns, @arg1 end_ns */
#define DAVINCI_TRACE_MEM_ALLOC		5	/* @id arena, @arg0 address, */
#define DAVINCI_TRACE_MEM_FREE		6	/* @arg1 bytes, @arg2 in use */
#define DAVINCI_TRACE_EVENT_RECORD	7	/* @id event, @seq generation */
#define DAVINCI_TRACE_EVENT_WAIT	8	/* host wait for @seq begins */
#define DAVINCI_TRACE_MGMT		9	/* @status DAVINCI_MGMT_EV_* */
#define DAVINCI_TRACE_CTX_RESET		10	/* DAVINCI_IOCTL_CTX_RESET */
#define DAVINCI_TRACE_CTX_FAIL		11	/* context failed: lost, reset */
#define DAVINCI_TRACE_TASKS_QUEUED	12	/* @seq first, @arg0 how many */
#define DAVINCI_TRACE_TASK_HELP		13	/* @arg0 start_ns, @arg1 end_ns */

/**
 * struct davinci_trace_record - one record of a device's trace (64 bytes)
 * @timestamp_ns: when it happened (a completion: its end_ns)
 * @seq: task records: the task's sequence number in its stream
 *	(TASKS_QUEUED: the first task's); event records: the record's
 *	generation (EVENT_WAIT: the one waited for)
 * @arg0: per @type: DOORBELL the SQ tail rung; TASKS_QUEUED the tasks
 *	queued, @seq to @seq + @arg0 - 1; TASK_COMPLETE the start_ns (0 when
 *	it never ran), TASK_HELP when the core began on the task's chunks;
 *	MEM_* the device address; MGMT the fault kind (DAVINCI_FAULT_*)
 * @arg1: TASK_COMPLETE the end_ns, TASK_HELP when the core left the
 *	task; MEM_* the bytes reserved; MGMT the event's address
 * @arg2: TASK_START, TASK_COMPLETE, TASK_HELP: the task's user_data;
 *	MEM_* the arena's bytes in use after it; MGMT the event's value
 * @type: DAVINCI_TRACE_*
 * @pid: the process of the context it concerns; 0 for the device's own
 *	(MGMT) and for MEM_FREE (memory returns when its last user lets go,
 *	which may be after its context closed)
 * @id: the stream (DOORBELL, TASK*), the event (EVENT_*), the arena
 *	(MEM_*: 0 HBM, 1 pinned host and rings), the device's health
 *	(MGMT: DAVINCI_HEALTH_*)
 * @status: TASK_COMPLETE: DAVINCI_STATUS_*; MGMT: DAVINCI_MGMT_EV_*
 * @opcode: TASK_START, TASK_COMPLETE, TASK_HELP: the task's DAVINCI_OP_*
 * @aicore: TASK_START, TASK_COMPLETE: the AI core (0..aicores-1) that
 *	ran it; DAVINCI_TRACE_NO_CORE for a task no AI core ran (events,
 *	notifications, failures the scheduler completes itself); TASK_HELP:
 *	the AI core that ran some of its chunks
 * @pad: zero
 */
struct davinci_trace_record {
	__u64 timestamp_ns;
	__u64 seq;
	__u64 arg0;
	__u64 arg1;
	__u64 arg2;
	__u32 type;
	__u32 pid;
	__u32 id;
	__u32 status;
	__u16 opcode;
	__u16 aicore;
	__u32 pad;
};

#define DAVINCI_TRACE_READ_MAX		48

#define DAVINCI_TRACE_F_ENABLE		(1U << 0)	/* start recording */
#define DAVINCI_TRACE_F_DISABLE		(1U << 1)	/* stop recording */

/**
 * struct davinci_trace_read - read the device's trace (DAVINCI_IOCTL_TRACE_READ)
 * @since: in: number of the first record wanted (0, then the @next of
 *	the last call)
 * @next: out: number of the record after the last one returned
 * @dropped: out: records from @since on that the ring overwrote before
 *	this read (anyone's): the records returned start at @since +
 *	@dropped, or later past records this file may not read
 * @written: out: records written since the device was created
 * @flags: in: DAVINCI_TRACE_F_ENABLE or DAVINCI_TRACE_F_DISABLE (not
 *	both, no other bit), applied before the read; 0 leaves recording as
 *	it is. Each is this open file's request only: the ring records
 *	while any file has one.
 * @count: out: records returned in @rec, at most DAVINCI_TRACE_READ_MAX
 * @enabled: out: 1 while the device's ring records (some open file asked
 *	for it, maybe another), else 0
 * @capacity: out: records the ring keeps, DAVINCI_TRACE_CAPACITY
 * @rec: out: records @next - @count .. @next - 1, oldest first, each one
 *	this file may read
 *
 * Reading does not consume: readers each keep their own @since. Announced
 * by DAVINCI_FEAT_TRACE. Return: 0, or -EINVAL for unknown flags or both.
 */
struct davinci_trace_read {
	__u64 since;
	__u64 next;
	__u64 dropped;
	__u64 written;
	__u32 flags;
	__u32 count;
	__u32 enabled;
	__u32 capacity;
	struct davinci_trace_record rec[DAVINCI_TRACE_READ_MAX];
};

#define DAVINCI_IOCTL_BASE 0xDA

/* Version; answered by device nodes and the manager node. */
#define DAVINCI_IOCTL_GET_VERSION \
	_IOR(DAVINCI_IOCTL_BASE, 0x00, struct davinci_version)
#define DAVINCI_IOCTL_DEVICE_INFO \
	_IOR(DAVINCI_IOCTL_BASE, 0x01, struct davinci_device_info)
#define DAVINCI_IOCTL_MMAP_INFO \
	_IOR(DAVINCI_IOCTL_BASE, 0x02, struct davinci_mmap_info)
/* Free everything this open file owns: memory, streams, events. */
#define DAVINCI_IOCTL_CTX_RESET \
	_IO(DAVINCI_IOCTL_BASE, 0x03)
#define DAVINCI_IOCTL_MAP_HOLD \
	_IOWR(DAVINCI_IOCTL_BASE, 0x04, struct davinci_map_hold)
#define DAVINCI_IOCTL_MAP_RELEASE \
	_IOW(DAVINCI_IOCTL_BASE, 0x05, struct davinci_map_release)
/* Limits; answered by device nodes and the manager node. */
#define DAVINCI_IOCTL_GET_LIMITS \
	_IOR(DAVINCI_IOCTL_BASE, 0x06, struct davinci_limits)
#define DAVINCI_IOCTL_TRACE_READ \
	_IOWR(DAVINCI_IOCTL_BASE, 0x07, struct davinci_trace_read)
/* What the driver serves: see struct davinci_cap. */
#define DAVINCI_IOCTL_GET_CAP \
	_IOWR(DAVINCI_IOCTL_BASE, 0x08, struct davinci_cap)
#define DAVINCI_IOCTL_MEM_ALLOC \
	_IOWR(DAVINCI_IOCTL_BASE, 0x10, struct davinci_mem_alloc)
#define DAVINCI_IOCTL_MEM_FREE \
	_IOW(DAVINCI_IOCTL_BASE, 0x11, struct davinci_mem_free)
#define DAVINCI_IOCTL_MEM_QUERY \
	_IOWR(DAVINCI_IOCTL_BASE, 0x12, struct davinci_mem_query)
#define DAVINCI_IOCTL_MEM_INFO \
	_IOWR(DAVINCI_IOCTL_BASE, 0x13, struct davinci_mem_info)
#define DAVINCI_IOCTL_STREAM_CREATE \
	_IOWR(DAVINCI_IOCTL_BASE, 0x20, struct davinci_stream_create)
#define DAVINCI_IOCTL_STREAM_DESTROY \
	_IOW(DAVINCI_IOCTL_BASE, 0x21, struct davinci_stream_id)
#define DAVINCI_IOCTL_DOORBELL \
	_IOWR(DAVINCI_IOCTL_BASE, 0x22, struct davinci_doorbell)
#define DAVINCI_IOCTL_STREAM_WAIT \
	_IOWR(DAVINCI_IOCTL_BASE, 0x23, struct davinci_stream_wait)
/* Leave the error state; tasks queued after the failure stay aborted. */
#define DAVINCI_IOCTL_STREAM_RESET \
	_IOW(DAVINCI_IOCTL_BASE, 0x24, struct davinci_stream_id)
#define DAVINCI_IOCTL_STREAM_QUERY \
	_IOWR(DAVINCI_IOCTL_BASE, 0x25, struct davinci_stream_query)
#define DAVINCI_IOCTL_TASK_QUERY \
	_IOWR(DAVINCI_IOCTL_BASE, 0x26, struct davinci_task_query)
#define DAVINCI_IOCTL_TASK_CANCEL \
	_IOWR(DAVINCI_IOCTL_BASE, 0x27, struct davinci_task_query)
#define DAVINCI_IOCTL_SYNC \
	_IOWR(DAVINCI_IOCTL_BASE, 0x28, struct davinci_sync)
#define DAVINCI_IOCTL_GRAPH_CAPTURE \
	_IOWR(DAVINCI_IOCTL_BASE, 0x29, struct davinci_graph_capture)
#define DAVINCI_IOCTL_GRAPH_END \
	_IOWR(DAVINCI_IOCTL_BASE, 0x2a, struct davinci_graph_capture)
#define DAVINCI_IOCTL_GRAPH_LAUNCH \
	_IOWR(DAVINCI_IOCTL_BASE, 0x2b, struct davinci_graph_launch)
#define DAVINCI_IOCTL_GRAPH_DESTROY \
	_IOW(DAVINCI_IOCTL_BASE, 0x2c, struct davinci_graph_id)
/* Switch a stream between stopping and going on after a failed task. */
#define DAVINCI_IOCTL_STREAM_SET_FLAGS \
	_IOW(DAVINCI_IOCTL_BASE, 0x2d, struct davinci_stream_flags)
#define DAVINCI_IOCTL_EVENT_CREATE \
	_IOWR(DAVINCI_IOCTL_BASE, 0x30, struct davinci_event_create)
#define DAVINCI_IOCTL_EVENT_DESTROY \
	_IOW(DAVINCI_IOCTL_BASE, 0x31, struct davinci_event_id)
#define DAVINCI_IOCTL_EVENT_QUERY \
	_IOWR(DAVINCI_IOCTL_BASE, 0x32, struct davinci_event_query)
#define DAVINCI_IOCTL_EVENT_SIGNAL \
	_IOW(DAVINCI_IOCTL_BASE, 0x33, struct davinci_event_id)
#define DAVINCI_IOCTL_EVENT_WAIT \
	_IOW(DAVINCI_IOCTL_BASE, 0x34, struct davinci_event_wait)
#define DAVINCI_IOCTL_NOTIFY_WAIT \
	_IOWR(DAVINCI_IOCTL_BASE, 0x40, struct davinci_notification)

/*
 * Management: ioctls of the manager node (/dev/davinci_manager), which has
 * no context. They serve npu-smi: the device list, per-device management
 * information, per-process usage, reset, fault injection and an event log.
 * Reset and fault injection are privileged (CAP_SYS_ADMIN on the kernel
 * module, the daemon's owner on FUSE): -EPERM otherwise. A device index
 * that names no live device gives -ENODEV.
 */
#define DAVINCI_MGMT_MAX_DEVICES	64
#define DAVINCI_MGMT_MAX_PROCS		32
#define DAVINCI_MGMT_MAX_EVENTS		16
#define DAVINCI_MGMT_ALL_DEVICES	0xFFFFFFFFU

/**
 * struct davinci_mgmt_list - live devices (DAVINCI_IOCTL_MGMT_LIST)
 * @count: out: number of live devices (at most DAVINCI_MGMT_MAX_DEVICES
 *	are listed)
 * @pad: zero
 * @index: out: their indices, ascending
 */
struct davinci_mgmt_list {
	__u32 count;
	__u32 pad;
	__u32 index[DAVINCI_MGMT_MAX_DEVICES];
};

/* Fault kinds (struct davinci_mgmt_fault.kind), also bit numbers. */
#define DAVINCI_FAULT_ECC	1	/* next task touching a region fails */
#define DAVINCI_FAULT_HANG	2	/* next AI-core task hangs */
#define DAVINCI_FAULT_LOST	3	/* the device is lost */
#define DAVINCI_FAULT_THROTTLE	4	/* tasks slow down (thermal) */
#define DAVINCI_FAULT_KINDS	8	/* size of the per-kind arrays */

/**
 * struct davinci_mgmt_info - one device, for npu-smi (DAVINCI_IOCTL_MGMT_INFO)
 * @index: in: the device
 * @health: out: DAVINCI_HEALTH_*: CRITICAL when lost, ALARM after an ECC
 *	error or a hang fired, WARNING while throttled, else OK; a reset
 *	brings it back to OK
 * @aicores: out: AI cores
 * @aicore_util: out: percent of AI-core time busy over the last second or
 *	so (0 on an idle device)
 * @power_mw: out: simulated board power in milliwatts, a function of
 *	@aicore_util and the throttle
 * @temp_mc: out: simulated chip temperature in millidegrees Celsius, a
 *	function of @aicore_util and the throttle
 * @hbm_total: out: HBM bytes
 * @hbm_used: out: HBM bytes allocated
 * @host_total: out: pinned host pool bytes
 * @host_used: out: pinned host bytes allocated (stream rings included)
 * @huge_total: out: 2 MiB pages of HBM
 * @huge_used: out: 2 MiB pages held by 2 MiB aligned allocations
 * @processes: out: open contexts (open files) of the device
 * @task_timeout_ms: out: the watchdog
 * @throttle_pct: out: current thermal throttle: tasks take this many
 *	percent longer (0: none)
 * @board_id: out: board id
 * @fault_armed: out: bit (1 << DAVINCI_FAULT_*) for each armed fault
 * @resets: out: device resets so far
 * @faults_fired: out: per DAVINCI_FAULT_* kind, times it took effect
 *	(THROTTLE: tasks slowed down); index 0 is zero
 * @tasks_completed: out: tasks completed since the device was created
 * @busy_ns: out: AI-core nanoseconds spent running tasks, summed over the
 *	cores (a task shared out across cores counts each core's share)
 * @name: out: chip name, e.g. "Ascend910B-sim"
 * @serial: out: serial number
 * @board_name: out: board name
 * @firmware_version: out: firmware version
 * @driver_version: out: driver version
 * @bus_id: out: PCI-style bus id, e.g. "0000:C1:00.0"
 * @dispatch_sleeps: out: times the device's dispatcher, which polls the
 *	rings of polled streams, went to sleep and asked for a doorbell
 *	(DAVINCI_RING_F_NEED_WAKEUP); with DAVINCI_FEAT_DISPATCH_STATS only
 * @dispatch_cpu_wanted: out: of those, the sleeps begun before its idle
 *	time was up because another thread wanted its CPU
 * @dispatch_kicks: out: doorbells (and new polled streams) that woke it
 * @dispatch_grows: out: sleeps after which its idle time doubled: a
 *	doorbell came soon enough that polling longer would have seen it
 * @dispatch_shrinks: out: sleeps after which its idle time halved
 * @dispatch_idle_ns: out: how long it polls without work before it
 *	sleeps, now
 */
struct davinci_mgmt_info {
	__u32 index;
	__u32 health;
	__u32 aicores;
	__u32 aicore_util;
	__u32 power_mw;
	__u32 temp_mc;
	__u64 hbm_total;
	__u64 hbm_used;
	__u64 host_total;
	__u64 host_used;
	__u32 huge_total;
	__u32 huge_used;
	__u32 processes;
	__u32 task_timeout_ms;
	__u32 throttle_pct;
	__u32 board_id;
	__u32 fault_armed;
	__u32 resets;
	__u32 faults_fired[DAVINCI_FAULT_KINDS];
	__u64 tasks_completed;
	__u64 busy_ns;
	char name[DAVINCI_NAME_LEN];
	char serial[DAVINCI_NAME_LEN];
	char board_name[DAVINCI_NAME_LEN];
	char firmware_version[DAVINCI_VERSION_LEN];
	char driver_version[DAVINCI_VERSION_LEN];
	char bus_id[DAVINCI_NAME_LEN];
	__u64 dispatch_sleeps;
	__u64 dispatch_cpu_wanted;
	__u64 dispatch_kicks;
	__u64 dispatch_grows;
	__u64 dispatch_shrinks;
	__u64 dispatch_idle_ns;
};

/**
 * struct davinci_mgmt_proc - one context (open file) of a device
 * @pid: process that opened it
 * @streams: its streams
 * @hbm_bytes: HBM it holds
 * @host_bytes: pinned host memory it holds (rings excluded)
 */
struct davinci_mgmt_proc {
	__u32 pid;
	__u32 streams;
	__u64 hbm_bytes;
	__u64 host_bytes;
};

/**
 * struct davinci_mgmt_procs - per-process usage (DAVINCI_IOCTL_MGMT_PROCS)
 * @index: in: the device
 * @count: out: entries filled in @proc
 * @total: out: contexts of the device (may exceed @count)
 * @pad: zero
 * @proc: out: one entry per context, oldest first
 */
struct davinci_mgmt_procs {
	__u32 index;
	__u32 count;
	__u32 total;
	__u32 pad;
	struct davinci_mgmt_proc proc[DAVINCI_MGMT_MAX_PROCS];
};

/**
 * struct davinci_mgmt_reset - reset a device (DAVINCI_IOCTL_MGMT_RESET)
 * @index: in: the device
 * @flags: in: must be zero
 * @contexts: out: contexts that were failed
 * @pad: zero
 *
 * Privileged. Every open context of the device fails as on device loss:
 * its tasks complete DAVINCI_STATUS_DEVICE_LOST, it gets
 * DAVINCI_NOTIFY_DEVICE_LOST and -ENODEV from then on and must be reopened.
 * Armed faults and the throttle are cleared and health returns to OK; a
 * device lost by fault injection comes back. -ENODEV for a device the OS
 * removed.
 */
struct davinci_mgmt_reset {
	__u32 index;
	__u32 flags;
	__u32 contexts;
	__u32 pad;
};

/**
 * struct davinci_mgmt_fault - inject a fault (DAVINCI_IOCTL_MGMT_INJECT)
 * @index: in: the device
 * @kind: in: DAVINCI_FAULT_*
 * @addr: in: ECC: first device address of the region
 * @size: in: ECC: bytes of the region; 0 means all of HBM
 * @level: in: THROTTLE: tasks take this many percent longer, 1..1000;
 *	0 ends the throttle
 * @timeout_ms: in: HANG: the watchdog for the hung task; 0 uses the
 *	device's (a device without a watchdog hangs until cancel or reset)
 * @flags: in: must be zero
 * @pad: must be zero
 *
 * Privileged. ECC: the next task whose operands touch the region fails
 * with DAVINCI_STATUS_ECC_ERROR, touching nothing, and health becomes
 * ALARM. HANG: the next task that runs on an AI core does not progress
 * until the watchdog fails it with DAVINCI_STATUS_TIMEOUT; health becomes
 * ALARM. LOST: as a hot remove, every context sees device lost; health
 * CRITICAL until a reset. THROTTLE: health WARNING, temperature high,
 * tasks slowed down. Each injection and each fault that fires is logged
 * (DAVINCI_IOCTL_MGMT_EVENTS).
 */
struct davinci_mgmt_fault {
	__u32 index;
	__u32 kind;
	__u64 addr;
	__u64 size;
	__u32 level;
	__u32 timeout_ms;
	__u32 flags;
	__u32 pad;
};

/* Management event types (struct davinci_mgmt_event.type). */
#define DAVINCI_MGMT_EV_ADD		1	/* device created */
#define DAVINCI_MGMT_EV_REMOVE		2	/* device destroyed */
#define DAVINCI_MGMT_EV_HEALTH		3	/* health changed */
#define DAVINCI_MGMT_EV_FAULT_INJECTED	4	/* a fault was armed */
#define DAVINCI_MGMT_EV_FAULT		5	/* a fault fired */
#define DAVINCI_MGMT_EV_RESET		6	/* device reset */
#define DAVINCI_MGMT_EV_LOST		7	/* device lost */

/**
 * struct davinci_mgmt_event - one record of a device's event log
 * @seq: sequence number, increasing over all devices, from 1
 * @timestamp_ns: device time of the event
 * @device: device index
 * @type: DAVINCI_MGMT_EV_*
 * @fault: DAVINCI_FAULT_* for fault events, else 0
 * @status: DAVINCI_STATUS_* a fault gave a task, else 0
 * @health: health after the event
 * @old_health: health before it
 * @addr: ECC: region start; FAULT: address of the task's first operand
 * @value: type specific: ECC region size, HANG timeout, THROTTLE level,
 *	RESET contexts failed
 * @reserved: zero
 */
struct davinci_mgmt_event {
	__u64 seq;
	__u64 timestamp_ns;
	__u32 device;
	__u32 type;
	__u32 fault;
	__u32 status;
	__u32 health;
	__u32 old_health;
	__u64 addr;
	__u64 value;
	__u64 reserved;
};

/**
 * struct davinci_mgmt_events - read the event log (DAVINCI_IOCTL_MGMT_EVENTS)
 * @since_seq: in: return events with a sequence number above this
 * @device: in: a device index, or DAVINCI_MGMT_ALL_DEVICES
 * @count: out: events in @ev, oldest first
 * @next_seq: out: pass as @since_seq to read on (@since_seq when none)
 * @overflow: out: nonzero when events after @since_seq were overwritten
 *	before they were read (each device keeps its last 64)
 * @pad: zero
 * @ev: out: the events
 *
 * Does not block: followers poll. The OS layer may also mirror each event
 * as it is logged (the kernel module to a generic netlink multicast group).
 */
struct davinci_mgmt_events {
	__u64 since_seq;
	__u32 device;
	__u32 count;
	__u64 next_seq;
	__u32 overflow;
	__u32 pad;
	struct davinci_mgmt_event ev[DAVINCI_MGMT_MAX_EVENTS];
};

/* Manager node only. */
#define DAVINCI_IOCTL_MGMT_LIST \
	_IOR(DAVINCI_IOCTL_BASE, 0x80, struct davinci_mgmt_list)
#define DAVINCI_IOCTL_MGMT_INFO \
	_IOWR(DAVINCI_IOCTL_BASE, 0x81, struct davinci_mgmt_info)
#define DAVINCI_IOCTL_MGMT_PROCS \
	_IOWR(DAVINCI_IOCTL_BASE, 0x82, struct davinci_mgmt_procs)
#define DAVINCI_IOCTL_MGMT_RESET \
	_IOWR(DAVINCI_IOCTL_BASE, 0x83, struct davinci_mgmt_reset)
#define DAVINCI_IOCTL_MGMT_INJECT \
	_IOW(DAVINCI_IOCTL_BASE, 0x84, struct davinci_mgmt_fault)
#define DAVINCI_IOCTL_MGMT_EVENTS \
	_IOWR(DAVINCI_IOCTL_BASE, 0x85, struct davinci_mgmt_events)

#endif /* _UAPI_DAVINCI_H */
