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
	case DAVINCI_TRACE_TASK_QUEUED:
		trace_davinci_task_queued(device, r);
		break;
	case DAVINCI_TRACE_TASK_START:
		trace_davinci_task_start(device, r);
		break;
	case DAVINCI_TRACE_TASK_COMPLETE:
		trace_davinci_task_complete(device, r);
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

/* Before the first device is created. */
void dv_trace_linux_init(void)
{
	dv_trace_set_hook(dv_linux_trace);
}

/* After the last device is destroyed. */
void dv_trace_linux_exit(void)
{
	dv_trace_set_hook(NULL);
}
