/* SPDX-License-Identifier: GPL-2.0 */
/*
 * os_posix.h - what the POSIX binding of os.h offers its library beyond
 * the seam itself.
 */
#ifndef _DAVINCI_OS_POSIX_H
#define _DAVINCI_OS_POSIX_H

/*
 * Make the calling thread's core waits interruptible by @interrupted
 * (NULL: not interruptible): they poll it and return -EINTR once it
 * returns nonzero, as kernel waits do on a pending signal.
 */
void os_posix_set_interrupt_check(int (*interrupted)(void));

#endif /* _DAVINCI_OS_POSIX_H */
