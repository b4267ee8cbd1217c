/* SPDX-License-Identifier: GPL-2.0 */
/*
 * os_types.h - the POSIX binding's half of the seam: what kmod/core/os.h
 * needs from <linux/types.h>, <linux/errno.h>, <linux/string.h> and the
 * kernel's compiler attributes, for the userspace build of the core.
 * kmod/linux/os_types.h is the kernel's; each build puts its own
 * directory on the include path (the Makefile and setup.py: -I
 * userspace/libdavinci_core).
 */
#ifndef _DAVINCI_OS_TYPES_H
#define _DAVINCI_OS_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#ifndef U64_MAX
#define U64_MAX UINT64_MAX
#endif

#define __printf(a, b) __attribute__((format(printf, a, b)))

/*
 * os_mutex_assert_held() checks in the builds that check locks (the
 * Makefile's test, sanitizer and fuzzer builds define DV_LOCK_CHECKS), not
 * in the library users run, as a kernel without lockdep.
 */
#ifdef DV_LOCK_CHECKS
#define OS_LOCK_ASSERTS
#endif

#endif /* _DAVINCI_OS_TYPES_H */
