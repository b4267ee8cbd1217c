/* SPDX-License-Identifier: GPL-2.0 */
/*
 * davinci_trace.h - the module's tracepoints (include/trace/events style),
 * one per kind of record of the core's trace ring (trace.c of the core),
 * fired by kmod/linux/trace.c as each record is written. With tracefs:
 *   echo 1 > /sys/kernel/tracing/events/davinci/enable
 * or trace-cmd record -e davinci, perf trace -e 'davinci:*'.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM davinci

#if !defined(_DAVINCI_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DAVINCI_TRACE_H

#include <linux/tracepoint.h>

#include "dv_core.h"

/* Every event takes the device index and the record the core wrote. */
#define DV_TP_PROTO \
	TP_PROTO(u32 device, const struct davinci_trace_record *r)
#define DV_TP_ARGS TP_ARGS(device, r)
#define DV_EVENT_CLASS(class, tstruct, assign, print) \
	DECLARE_EVENT_CLASS(class, DV_TP_PROTO, DV_TP_ARGS, \
			    PARAMS(tstruct), PARAMS(assign), PARAMS(print))
#define DV_DEFINE_EVENT(class, name) \
	DEFINE_EVENT(class, name, DV_TP_PROTO, DV_TP_ARGS)

DV_EVENT_CLASS(davinci_doorbell,
	TP_STRUCT__entry(
		__field(u32, device)
		__field(u32, pid)
		__field(u32, stream)
		__field(u32, sq_tail)
	),
	TP_fast_assign(
		__entry->device = device;
		__entry->pid = r->pid;
		__entry->stream = r->id;
		__entry->sq_tail = (u32)r->arg0;
	),
	TP_printk("dev=%u pid=%u stream=%u sq_tail=%u", __entry->device,
		  __entry->pid, __entry->stream, __entry->sq_tail)
);

DV_DEFINE_EVENT(davinci_doorbell, davinci_doorbell);

DV_EVENT_CLASS(davinci_tasks,
	TP_STRUCT__entry(
		__field(u32, device)
		__field(u32, pid)
		__field(u32, stream)
		__field(u64, seq)
		__field(u64, count)
	),
	TP_fast_assign(
		__entry->device = device;
		__entry->pid = r->pid;
		__entry->stream = r->id;
		__entry->seq = r->seq;
		__entry->count = r->arg0;
	),
	TP_printk("dev=%u pid=%u stream=%u seq=%llu count=%llu",
		  __entry->device, __entry->pid, __entry->stream,
		  __entry->seq, __entry->count)
);

/* One take-in: tasks seq .. seq + count - 1 of the stream were queued. */
DV_DEFINE_EVENT(davinci_tasks, davinci_tasks_queued);

DV_EVENT_CLASS(davinci_task,
	TP_STRUCT__entry(
		__field(u32, device)
		__field(u32, pid)
		__field(u32, stream)
		__field(u64, seq)
		__field(u16, opcode)
		__field(u16, aicore)
		__field(u32, status)
		__field(u64, start_ns)
		__field(u64, end_ns)
	),
	TP_fast_assign(
		__entry->device = device;
		__entry->pid = r->pid;
		__entry->stream = r->id;
		__entry->seq = r->seq;
		__entry->opcode = r->opcode;
		__entry->aicore = r->aicore;
		__entry->status = r->status;
		__entry->start_ns = r->arg0;
		__entry->end_ns = r->arg1;
	),
	TP_printk("dev=%u pid=%u stream=%u seq=%llu opcode=%u aicore=%u status=%u start_ns=%llu end_ns=%llu",
		  __entry->device, __entry->pid, __entry->stream,
		  __entry->seq, __entry->opcode, __entry->aicore,
		  __entry->status, __entry->start_ns, __entry->end_ns)
);

DV_DEFINE_EVENT(davinci_task, davinci_task_start);
DV_DEFINE_EVENT(davinci_task, davinci_task_complete);
DV_DEFINE_EVENT(davinci_task, davinci_task_help);

DV_EVENT_CLASS(davinci_mem,
	TP_STRUCT__entry(
		__field(u32, device)
		__field(u32, pid)
		__field(u32, arena)
		__field(u64, addr)
		__field(u64, size)
		__field(u64, used)
	),
	TP_fast_assign(
		__entry->device = device;
		__entry->pid = r->pid;
		__entry->arena = r->id;
		__entry->addr = r->arg0;
		__entry->size = r->arg1;
		__entry->used = r->arg2;
	),
	TP_printk("dev=%u pid=%u arena=%u addr=0x%llx size=%llu used=%llu",
		  __entry->device, __entry->pid, __entry->arena,
		  __entry->addr, __entry->size, __entry->used)
);

DV_DEFINE_EVENT(davinci_mem, davinci_mem_alloc);
DV_DEFINE_EVENT(davinci_mem, davinci_mem_free);

DV_EVENT_CLASS(davinci_event,
	TP_STRUCT__entry(
		__field(u32, device)
		__field(u32, pid)
		__field(u32, event)
		__field(u64, gen)
	),
	TP_fast_assign(
		__entry->device = device;
		__entry->pid = r->pid;
		__entry->event = r->id;
		__entry->gen = r->seq;
	),
	TP_printk("dev=%u pid=%u event=%u gen=%llu", __entry->device,
		  __entry->pid, __entry->event, __entry->gen)
);

DV_DEFINE_EVENT(davinci_event, davinci_event_record);
DV_DEFINE_EVENT(davinci_event, davinci_event_wait);

DV_EVENT_CLASS(davinci_mgmt,
	TP_STRUCT__entry(
		__field(u32, device)
		__field(u32, type)
		__field(u32, health)
		__field(u32, fault)
		__field(u64, addr)
		__field(u64, value)
	),
	TP_fast_assign(
		__entry->device = device;
		__entry->type = r->status;
		__entry->health = r->id;
		__entry->fault = (u32)r->arg0;
		__entry->addr = r->arg1;
		__entry->value = r->arg2;
	),
	TP_printk("dev=%u type=%u health=%u fault=%u addr=0x%llx value=%llu",
		  __entry->device, __entry->type, __entry->health,
		  __entry->fault, __entry->addr, __entry->value)
);

/* DAVINCI_MGMT_EV_FAULT_INJECTED, _FAULT and _LOST */
DV_DEFINE_EVENT(davinci_mgmt, davinci_fault);
/* DAVINCI_MGMT_EV_RESET */
DV_DEFINE_EVENT(davinci_mgmt, davinci_reset);
/* DAVINCI_MGMT_EV_ADD, _REMOVE and _HEALTH */
DV_DEFINE_EVENT(davinci_mgmt, davinci_mgmt);

DV_EVENT_CLASS(davinci_ctx,
	TP_STRUCT__entry(
		__field(u32, device)
		__field(u32, pid)
	),
	TP_fast_assign(
		__entry->device = device;
		__entry->pid = r->pid;
	),
	TP_printk("dev=%u pid=%u", __entry->device, __entry->pid)
);

DV_DEFINE_EVENT(davinci_ctx, davinci_ctx_reset);
DV_DEFINE_EVENT(davinci_ctx, davinci_ctx_fail);

#endif /* _DAVINCI_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE davinci_trace
#include <trace/define_trace.h>
