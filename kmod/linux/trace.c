// SPDX-License-Identifier: GPL-2.0
/*
 * trace.c - the Linux side of the core's trace hooks: each record the
 * core writes to a device's trace ring fires the matching tracepoint of
 * davinci_trace.h.
 */
#include "dv_linux.h"

#define CREATE_TRACE_POINTS
#include "davinci_trace.h"

static void dv_linux_trace_mgmt(u32 device,
				const struct davinci_trace_record *r)
{
	switch (r->status) {
	case DAVINCI_MGMT_EV_FAULT_INJECTED:
	case DAVINCI_MGMT_EV_FAULT:
	case DAVINCI_MGMT_EV_LOST:
		trace_davinci_fault(device, r);
		break;
	case DAVINCI_MGMT_EV_RESET:
		trace_davinci_reset(device, r);
		break;
	default:
		trace_davinci_mgmt(device, r);
		break;
	}
}

/* The core's trace hook: called with the device's lock held. */
static void dv_linux_trace(u32 device, const struct davinci_trace_record *r)
{
	switch (r->type) {
	case DAVINCI_TRACE_DOORBELL:
		trace_davinci_doorbell(device, r);
		break;
	case DAVINCI_TRACE_TASKS_QUEUED:
		trace_davinci_tasks_queued(device, r);
		break;
	case DAVINCI_TRACE_TASK_START:
		trace_davinci_task_start(device, r);
		break;
	case DAVINCI_TRACE_TASK_COMPLETE:
		trace_davinci_task_complete(device, r);
		break;
	case DAVINCI_TRACE_TASK_HELP:
		trace_davinci_task_help(device, r);
		break;
	case DAVINCI_TRACE_MEM_ALLOC:
		trace_davinci_mem_alloc(device, r);
		break;
	case DAVINCI_TRACE_MEM_FREE:
		trace_davinci_mem_free(device, r);
		break;
	case DAVINCI_TRACE_EVENT_RECORD:
		trace_davinci_event_record(device, r);
		break;
	case DAVINCI_TRACE_EVENT_WAIT:
		trace_davinci_event_wait(device, r);
		break;
	case DAVINCI_TRACE_MGMT:
		dv_linux_trace_mgmt(device, r);
		break;
	case DAVINCI_TRACE_CTX_RESET:
		trace_davinci_ctx_reset(device, r);
		break;
	case DAVINCI_TRACE_CTX_FAIL:
		trace_davinci_ctx_fail(device, r);
		break;
	}
}

/*
 * The core's question before it builds a record: is the tracepoint of
 * that type enabled? Each is a static key, so asking is nearly free.
 */
static bool dv_linux_trace_wants(u32 type)
{
	switch (type) {
	case DAVINCI_TRACE_DOORBELL:
		return trace_davinci_doorbell_enabled();
	case DAVINCI_TRACE_TASKS_QUEUED:
		return trace_davinci_tasks_queued_enabled();
	case DAVINCI_TRACE_TASK_START:
		return trace_davinci_task_start_enabled();
	case DAVINCI_TRACE_TASK_COMPLETE:
		return trace_davinci_task_complete_enabled();
	case DAVINCI_TRACE_TASK_HELP:
		return trace_davinci_task_help_enabled();
	case DAVINCI_TRACE_MEM_ALLOC:
		return trace_davinci_mem_alloc_enabled();
	case DAVINCI_TRACE_MEM_FREE:
		return trace_davinci_mem_free_enabled();
	case DAVINCI_TRACE_EVENT_RECORD:
		return trace_davinci_event_record_enabled();
	case DAVINCI_TRACE_EVENT_WAIT:
		return trace_davinci_event_wait_enabled();
	case DAVINCI_TRACE_MGMT:
		return trace_davinci_fault_enabled() ||
		       trace_davinci_reset_enabled() ||
		       trace_davinci_mgmt_enabled();
	case DAVINCI_TRACE_CTX_RESET:
		return trace_davinci_ctx_reset_enabled();
	case DAVINCI_TRACE_CTX_FAIL:
		return trace_davinci_ctx_fail_enabled();
	}
	return true;
}

/* Before the first device is created. */
void dv_trace_linux_init(void)
{
	dv_trace_set_hook(dv_linux_trace, dv_linux_trace_wants);
}

/* After the last device is destroyed. */
void dv_trace_linux_exit(void)
{
	dv_trace_set_hook(NULL, NULL);
}
