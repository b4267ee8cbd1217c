/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h - the kernel API differences between the kernels the module is
 * built and tested on (Debian 12's 6.1 and bookworm-backports' 6.12), as
 * small macros keyed on LINUX_VERSION_CODE. The code is written against
 * the newer API where the older one can be mapped onto it; the rest are
 * dv_* names that expand to whichever the kernel has.
 */
#ifndef _DV_COMPAT_H
#define _DV_COMPAT_H

#include <linux/device.h>
#include <linux/mm.h>
#include <linux/version.h>

/* 6.2: a class's devnode() takes a const struct device. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define dv_devnode_device const struct device
#else
#define dv_devnode_device struct device
#endif

/* 6.3: vma->vm_flags is read-only; vm_flags_set() and vm_flags_clear(). */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
#define vm_flags_set(vma, flags)	((vma)->vm_flags |= (flags))
#define vm_flags_clear(vma, flags)	((vma)->vm_flags &= ~(flags))
#endif

/* 6.4: bus attributes' show() and store() take a const struct bus_type. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define dv_bus_attr_type const struct bus_type
#else
#define dv_bus_attr_type struct bus_type
#endif

/* 6.4: class_create() lost its owner argument. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define dv_class_create(name)	class_create(name)
#else
#define dv_class_create(name)	class_create(THIS_MODULE, name)
#endif

#endif /* _DV_COMPAT_H */
