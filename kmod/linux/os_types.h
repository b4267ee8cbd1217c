/* SPDX-License-Identifier: GPL-2.0 */
/*
 * os_types.h - the kernel binding's half of the seam: what kmod/core/os.h
 * needs from the kernel (basic types, errno values, string functions,
 * limits, ARRAY_SIZE and __printf). userspace/libdavinci_core/os_types.h
 * is the POSIX build's; kmod/Kbuild puts kmod/linux on the include path.
 */
#ifndef _DAVINCI_OS_TYPES_H
#define _DAVINCI_OS_TYPES_H

#include <linux/kernel.h>
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/limits.h>

/* os_mutex_assert_held() checks what lockdep can check. */
#ifdef CONFIG_LOCKDEP
#define OS_LOCK_ASSERTS
#endif

#endif /* _DAVINCI_OS_TYPES_H */
