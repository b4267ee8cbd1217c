"""Generic netlink family "davinci": list, info and the events group.

Plain sockets (no pyroute2 needed); include/uapi/davinci_netlink.h has
the numbers.
"""
import os
import socket
import struct

import pytest

import dvk

NETLINK_GENERIC, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP = 16, 270, 1
GENL_ID_CTRL, CTRL_CMD_GETFAMILY = 0x10, 3
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME, CTRL_ATTR_MCAST_GROUPS = 1, 2, 7
NLM_F_REQUEST, NLMSG_ERROR = 1, 2
CMD_LIST, CMD_INFO, CMD_EVENT = 1, 2, 3
A_DEVICE, A_HEALTH, A_AICORES, A_HBM_TOTAL, A_NAME, A_SERIAL = 1, 2, 3, 7, 10, 11
A_EV_TYPE = 16
EV_ADD, EV_REMOVE = 1, 2


def attr(t, data):
    n = 4 + len(data)
    return struct.pack("=HH", n, t) + data + b"\0" * ((4 - n % 4) % 4)


def parse_attrs(data):
    out = []
    while len(data) >= 4:
        n, t = struct.unpack_from("=HH", data)
        if n < 4:
            break
        out.append((t & 0x3FFF, data[4:n]))
        data = data[(n + 3) & ~3:]
    return out


class Genl:
    def __init__(self):
        self.sk = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                                NETLINK_GENERIC)
        self.sk.bind((0, 0))
        self.sk.settimeout(10)
        self.seq = 0
        fam = self.request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                           attr(CTRL_ATTR_FAMILY_NAME, b"davinci\0"))[0]
        a = dict(fam)
        self.family = struct.unpack("=H", a[CTRL_ATTR_FAMILY_ID][:2])[0]
        self.groups = {}
        for _, grp in parse_attrs(a.get(CTRL_ATTR_MCAST_GROUPS, b"")):
            g = dict(parse_attrs(grp))
            self.groups[g[1].rstrip(b"\0").decode()] = \
                struct.unpack("=I", g[2][:4])[0]

    def request(self, typ, cmd, payload=b""):
        self.seq += 1
        body = struct.pack("=BBH", cmd, 1, 0) + payload
        self.sk.send(struct.pack("=IHHII", 16 + len(body), typ,
                                 NLM_F_REQUEST, self.seq, 0) + body)
        data = self.sk.recv(65536)
        n, t = struct.unpack_from("=IH", data)
        if t == NLMSG_ERROR:
            err = struct.unpack_from("=i", data, 16)[0]
            raise OSError(-err, os.strerror(-err))
        return [parse_attrs(data[20:n])]

    def join(self, name):
        self.sk.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
                           self.groups[name])

    def events(self):
        while True:
            try:
                data = self.sk.recv(65536)
            except socket.timeout:
                return
            while len(data) >= 20:
                n, t = struct.unpack_from("=IH", data)
                if t == self.family and data[16] == CMD_EVENT:
                    yield dict((k, v) for k, v in parse_attrs(data[20:n]))
                data = data[(n + 3) & ~3:]


def u32(v):
    return struct.unpack("=I", v[:4])[0]


def test_list_and_info():
    nl = Genl()
    assert "events" in nl.groups
    devs = [u32(v) for t, v in nl.request(nl.family, CMD_LIST)[0]
            if t == A_DEVICE]
    n = int(open("/sys/module/davinci/parameters/num_devices").read())
    assert devs == list(range(n))
    info = dict(nl.request(nl.family, CMD_INFO, attr(A_DEVICE,
                                                     struct.pack("=I", 0)))[0])
    assert u32(info[A_DEVICE]) == 0
    assert struct.unpack("=Q", info[A_HBM_TOTAL])[0] == \
        int(dvk.sysfs(0, "hbm_total"))
    assert info[A_SERIAL].rstrip(b"\0").decode() == dvk.sysfs(0, "serial")
    with pytest.raises(OSError):
        nl.request(nl.family, CMD_INFO, attr(A_DEVICE, struct.pack("=I", 63)))


def test_events_on_hot_add_remove():
    nl = Genl()
    nl.join("events")
    dvk.bus_write("new_device", "12 16 1")
    dvk.bus_write("del_device", "12")
    seen = []
    for ev in nl.events():
        if u32(ev[A_DEVICE]) == 12:
            seen.append(u32(ev[A_EV_TYPE]))
        if EV_ADD in seen and EV_REMOVE in seen:
            break
    assert EV_ADD in seen and EV_REMOVE in seen, seen
