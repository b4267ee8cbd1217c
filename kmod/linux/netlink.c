// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "davinci": device list and info, and the
 * multicast group "events" mirroring the core's management event log
 * (include/uapi/davinci_netlink.h).
 */
#include <linux/slab.h>
#include <net/genetlink.h>

#include "dv_linux.h"
#include "uapi/davinci_netlink.h"

static const struct nla_policy dv_nl_policy[DAVINCI_NL_A_MAX + 1] = {
	[DAVINCI_NL_A_DEVICE] = { .type = NLA_U32 },
};

static struct genl_family dv_nl_family;

/*
 * Reply to @info with command @cmd, its attributes put by @put from @arg.
 * Return: what genlmsg_reply() returns, or -ENOMEM when the message could
 * not be made or did not hold them.
 */
static int dv_nl_reply(struct genl_info *info, u8 cmd,
		       int (*put)(struct sk_buff *msg, const void *arg),
		       const void *arg)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &dv_nl_family, 0, cmd);
	if (!hdr || put(msg, arg)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int dv_nl_put_list(struct sk_buff *msg, const void *arg)
{
	const struct davinci_mgmt_list *list = arg;
	u32 i;

	for (i = 0; i < list->count && i < DAVINCI_MGMT_MAX_DEVICES; i++)
		if (nla_put_u32(msg, DAVINCI_NL_A_DEVICE, list->index[i]))
			return -EMSGSIZE;
	return 0;
}

static int dv_nl_list(struct sk_buff *skb, struct genl_info *info)
{
	struct davinci_mgmt_list *list;
	int ret;

	list = kzalloc(sizeof(*list), GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	ret = dv_manager_ioctl(DAVINCI_IOCTL_MGMT_LIST, list);
	if (!ret)
		ret = dv_nl_reply(info, DAVINCI_NL_CMD_LIST, dv_nl_put_list,
				  list);
	kfree(list);
	return ret;
}

/* A u64 attribute, padded to 8 bytes as the family asks. */
static int dv_nla_put_u64(struct sk_buff *msg, int attr, u64 value)
{
	return nla_put_u64_64bit(msg, attr, value, DAVINCI_NL_A_PAD);
}

static int dv_nl_put_info(struct sk_buff *msg, const void *arg)
{
	const struct davinci_mgmt_info *mi = arg;

	if (nla_put_u32(msg, DAVINCI_NL_A_DEVICE, mi->index) ||
	    nla_put_u32(msg, DAVINCI_NL_A_HEALTH, mi->health) ||
	    nla_put_u32(msg, DAVINCI_NL_A_AICORES, mi->aicores) ||
	    nla_put_u32(msg, DAVINCI_NL_A_AICORE_UTIL, mi->aicore_util) ||
	    nla_put_u32(msg, DAVINCI_NL_A_POWER_MW, mi->power_mw) ||
	    nla_put_u32(msg, DAVINCI_NL_A_TEMP_MC, mi->temp_mc) ||
	    dv_nla_put_u64(msg, DAVINCI_NL_A_HBM_TOTAL, mi->hbm_total) ||
	    dv_nla_put_u64(msg, DAVINCI_NL_A_HBM_USED, mi->hbm_used) ||
	    nla_put_u32(msg, DAVINCI_NL_A_PROCESSES, mi->processes) ||
	    nla_put_string(msg, DAVINCI_NL_A_NAME, mi->name) ||
	    nla_put_string(msg, DAVINCI_NL_A_SERIAL, mi->serial) ||
	    nla_put_string(msg, DAVINCI_NL_A_BUS_ID, mi->bus_id) ||
	    nla_put_string(msg, DAVINCI_NL_A_DRIVER_VERSION,
			   mi->driver_version))
		return -EMSGSIZE;
	return 0;
}

static int dv_nl_info(struct sk_buff *skb, struct genl_info *info)
{
	struct davinci_mgmt_info *mi;
	int ret;

	if (!info->attrs[DAVINCI_NL_A_DEVICE])
		return -EINVAL;
	mi = kzalloc(sizeof(*mi), GFP_KERNEL);
	if (!mi)
		return -ENOMEM;
	mi->index = nla_get_u32(info->attrs[DAVINCI_NL_A_DEVICE]);
	ret = dv_manager_ioctl(DAVINCI_IOCTL_MGMT_INFO, mi);
	if (ret)
		goto out;
	/* The strings are NUL-terminated by the core; make sure. */
	mi->name[sizeof(mi->name) - 1] = '\0';
	mi->serial[sizeof(mi->serial) - 1] = '\0';
	mi->bus_id[sizeof(mi->bus_id) - 1] = '\0';
	mi->driver_version[sizeof(mi->driver_version) - 1] = '\0';
	ret = dv_nl_reply(info, DAVINCI_NL_CMD_INFO, dv_nl_put_info, mi);
out:
	kfree(mi);
	return ret;
}

static const struct genl_small_ops dv_nl_ops[] = {
	{
		.cmd = DAVINCI_NL_CMD_LIST,
		.doit = dv_nl_list,
	},
	{
		.cmd = DAVINCI_NL_CMD_INFO,
		.doit = dv_nl_info,
	},
};

static const struct genl_multicast_group dv_nl_mcgrps[] = {
	{ .name = DAVINCI_NL_MCGRP_EVENTS },
};

/* A new family: strict validation of every command (resv_start_op 0). */
static struct genl_family dv_nl_family __ro_after_init = {
	.name = DAVINCI_NL_FAMILY,
	.version = DAVINCI_NL_VERSION,
	.maxattr = DAVINCI_NL_A_MAX,
	.policy = dv_nl_policy,
	.module = THIS_MODULE,
	.small_ops = dv_nl_ops,
	.n_small_ops = ARRAY_SIZE(dv_nl_ops),
	.mcgrps = dv_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(dv_nl_mcgrps),
};

/*
 * Called by the core with a device lock held, from any of its threads:
 * build and send without sleeping.
 */
static void dv_nl_event(const struct davinci_mgmt_event *ev)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_ATOMIC);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &dv_nl_family, 0, DAVINCI_NL_CMD_EVENT);
	if (!hdr)
		goto err;
	if (nla_put_u32(msg, DAVINCI_NL_A_DEVICE, ev->device) ||
	    nla_put_u32(msg, DAVINCI_NL_A_EV_TYPE, ev->type) ||
	    nla_put_u32(msg, DAVINCI_NL_A_EV_FAULT, ev->fault) ||
	    nla_put_u32(msg, DAVINCI_NL_A_EV_STATUS, ev->status) ||
	    nla_put_u32(msg, DAVINCI_NL_A_EV_HEALTH, ev->health) ||
	    nla_put_u32(msg, DAVINCI_NL_A_EV_OLD_HEALTH, ev->old_health) ||
	    dv_nla_put_u64(msg, DAVINCI_NL_A_EV_SEQ, ev->seq) ||
	    dv_nla_put_u64(msg, DAVINCI_NL_A_EV_TIMESTAMP, ev->timestamp_ns) ||
	    dv_nla_put_u64(msg, DAVINCI_NL_A_EV_ADDR, ev->addr) ||
	    dv_nla_put_u64(msg, DAVINCI_NL_A_EV_VALUE, ev->value))
		goto err;
	genlmsg_end(msg, hdr);
	/* -ESRCH just means nobody listens. */
	genlmsg_multicast(&dv_nl_family, msg, 0, 0, GFP_ATOMIC);
	return;
err:
	nlmsg_free(msg);
}

int dv_netlink_init(void)
{
	int ret = genl_register_family(&dv_nl_family);

	if (ret)
		return ret;
	dv_mgmt_set_event_hook(dv_nl_event);
	return 0;
}

void dv_netlink_exit(void)
{
	dv_mgmt_set_event_hook(NULL);
	genl_unregister_family(&dv_nl_family);
}
