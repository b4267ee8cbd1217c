# SPDX-License-Identifier: GPL-2.0
"""Who may open the device nodes, and what to tell someone who may not.

On the kernel module the nodes are character devices of group
``HwHiAiUser``, mode 0660: a user outside that group gets EACCES and must
join it. On FUSE the mount belongs to the user who started davinci-fused
and the kernel refuses everyone else (root included): another user must
start their own daemon.
"""

from __future__ import annotations

import errno as _errno
import grp
import os
import pwd
import stat

from . import fuse_layout
from .errors import DevicePermissionError

__all__ = ["node_permission_error", "foreign_mounts", "foreign_mounts_hint",
           "user_name", "group_name"]


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return "uid %d" % uid


def group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def _my_groups() -> str:
    return ", ".join(group_name(g) for g in os.getgroups()) or "none"


def _mount_of(path: str):
    """(mountpoint, uid) of the davinci-fused mount holding ``path``."""
    path = os.path.abspath(path)
    best = None
    for mp, uid in fuse_layout.davinci_mounts():
        if path == mp or path.startswith(mp.rstrip("/") + "/"):
            if best is None or len(mp) > len(best[0]):
                best = (mp, uid)
    return best


def node_permission_error(path: str, err: int = _errno.EACCES
                          ) -> DevicePermissionError:
    """The error for ``path`` (a node, or the directory of a FUSE mount)
    that exists but that this user may not open."""
    me = os.getuid()
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and stat.S_ISCHR(st.st_mode):
        group = group_name(st.st_gid)
        return DevicePermissionError(
            "cannot open %s: permission denied: the node is mode %04o, owner "
            "%s, group %s, and you (%s) are not in group %s (your groups: %s);"
            " join it: sudo usermod -aG %s $USER, then log out and in again "
            "(or run newgrp %s); or, without the module, run your own "
            "davinci-fused" % (path, stat.S_IMODE(st.st_mode),
                               user_name(st.st_uid), group, user_name(me),
                               group, _my_groups(), group, group),
            err, path=path, group=group)
    m = _mount_of(path)
    if m is not None or st is None:
        mp, uid = m if m is not None else (path, None)
        if uid is None and st is not None:
            uid = st.st_uid
        owner = user_name(uid) if uid is not None else "another user"
        return DevicePermissionError(
            "cannot open %s: permission denied: %s is the FUSE mount of a "
            "davinci-fused run by %s, and only the user who starts "
            "davinci-fused can use its nodes; start your own: davinci-fused "
            "(it mounts at %s; unset DAVINCI_DEV_DIR or point it there)"
            % (path, mp, owner, fuse_layout.default_mountpoint()),
            err, path=path, owner=None if uid is None else user_name(uid))
    return DevicePermissionError(
        "cannot open %s: permission denied: it is mode %04o, owner %s, group "
        "%s, and you are %s (groups: %s); ask its owner for access or run "
        "your own davinci-fused" % (path, stat.S_IMODE(st.st_mode),
                                    user_name(st.st_uid),
                                    group_name(st.st_gid), user_name(me),
                                    _my_groups()),
        err, path=path, group=group_name(st.st_gid))


def foreign_mounts():
    """[(mountpoint, user name)] of davinci-fused mounts of other users."""
    me = os.getuid()
    return [(mp, user_name(uid)) for mp, uid in fuse_layout.davinci_mounts()
            if uid is not None and uid != me]


def foreign_mounts_hint() -> str:
    """A sentence about other users' daemons, or "" when there are none."""
    other = foreign_mounts()
    if not other:
        return ""
    return ("; other users' davinci-fused serve %s, but only the user who "
            "starts a davinci-fused can open its nodes: start your own"
            % ", ".join("%s (%s)" % (mp, u) for mp, u in other))
