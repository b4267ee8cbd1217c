/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Generic netlink family "davinci" of the kernel module.
 *
 * DAVINCI_NL_CMD_LIST answers with one DAVINCI_NL_A_DEVICE per live device;
 * DAVINCI_NL_CMD_INFO (DAVINCI_NL_A_DEVICE set) with that device's
 * management information. The multicast group "events" carries one
 * DAVINCI_NL_CMD_EVENT message per management event (health changes,
 * faults, resets, hot add and remove: struct davinci_mgmt_event).
 */
#ifndef _UAPI_DAVINCI_NETLINK_H
#define _UAPI_DAVINCI_NETLINK_H

#define DAVINCI_NL_FAMILY	"davinci"
#define DAVINCI_NL_VERSION	1
#define DAVINCI_NL_MCGRP_EVENTS	"events"

enum davinci_nl_cmd {
	DAVINCI_NL_CMD_UNSPEC,
	DAVINCI_NL_CMD_LIST,	/* reply: DEVICE per live device */
	DAVINCI_NL_CMD_INFO,	/* in: DEVICE; reply: the INFO attributes */
	DAVINCI_NL_CMD_EVENT,	/* multicast: the EV attributes */
	__DAVINCI_NL_CMD_MAX,
};

#define DAVINCI_NL_CMD_MAX (__DAVINCI_NL_CMD_MAX - 1)

enum davinci_nl_attr {
	DAVINCI_NL_A_UNSPEC,
	DAVINCI_NL_A_DEVICE,		/* u32: device index */
	/* CMD_INFO */
	DAVINCI_NL_A_HEALTH,		/* u32: DAVINCI_HEALTH_* */
	DAVINCI_NL_A_AICORES,		/* u32 */
	DAVINCI_NL_A_AICORE_UTIL,	/* u32: percent */
	DAVINCI_NL_A_POWER_MW,		/* u32 */
	DAVINCI_NL_A_TEMP_MC,		/* u32 */
	DAVINCI_NL_A_HBM_TOTAL,		/* u64: bytes */
	DAVINCI_NL_A_HBM_USED,		/* u64: bytes */
	DAVINCI_NL_A_PROCESSES,		/* u32 */
	DAVINCI_NL_A_NAME,		/* string */
	DAVINCI_NL_A_SERIAL,		/* string */
	DAVINCI_NL_A_BUS_ID,		/* string */
	DAVINCI_NL_A_DRIVER_VERSION,	/* string */
	/* CMD_EVENT */
	DAVINCI_NL_A_EV_SEQ,		/* u64 */
	DAVINCI_NL_A_EV_TIMESTAMP,	/* u64: ns */
	DAVINCI_NL_A_EV_TYPE,		/* u32: DAVINCI_MGMT_EV_* */
	DAVINCI_NL_A_EV_FAULT,		/* u32: DAVINCI_FAULT_* */
	DAVINCI_NL_A_EV_STATUS,		/* u32: DAVINCI_STATUS_* */
	DAVINCI_NL_A_EV_HEALTH,		/* u32 */
	DAVINCI_NL_A_EV_OLD_HEALTH,	/* u32 */
	DAVINCI_NL_A_EV_ADDR,		/* u64 */
	DAVINCI_NL_A_EV_VALUE,		/* u64 */
	DAVINCI_NL_A_PAD,
	__DAVINCI_NL_A_MAX,
};

#define DAVINCI_NL_A_MAX (__DAVINCI_NL_A_MAX - 1)

#endif /* _UAPI_DAVINCI_NETLINK_H */
