/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dvc_test.h - test-only hooks of the userspace core, not part of the
 * API of libdavinci_core.h.
 *
 * The dvc_op_* functions (dvc_test.c) are exported by libdavinci_core.so
 * because the Python op tests (tests/ops) call them through ctypes; they
 * run the op kernels of ops.h on plain memory, without a device; the
 * dvc_jpegd_* ones, for tests/ops/jpegdlib.py, the JPEG decoder of jpegd.h;
 * the dvc_pngd_* ones, for tests/ops/pngdlib.py, the PNG decoder of pngd.h.
 * os_posix_fault_zalloc_countdown and os_posix_wake_one_calls are not
 * exported: only programs built from the core's sources (tests/core,
 * tests/fuzz) use them.
 */
#ifndef _DVC_TEST_H
#define _DVC_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct davinci_task;
struct dv_op_extent;
struct dv_jpegd_info;
struct dv_pngd_info;

/*
 * Fault injection (os_posix.c): when set to N > 0, the Nth os_zalloc()
 * from then on fails, once.
 */
extern long os_posix_fault_zalloc_countdown;
/* os_waitq_wake_one() calls so far (os_posix.c): threads woken one at a time. */
extern unsigned long os_posix_wake_one_calls;

/* dv_op_is_compute() ... dv_op_run() of ops.h, as they are. */
bool dvc_op_is_compute(uint16_t opcode);
int dvc_op_validate(const struct davinci_task *task);
int dvc_op_check_params(const struct davinci_task *task, const void *params);
int dvc_op_extent(const struct davinci_task *task, const void *params,
		  struct dv_op_extent *ext);
uint64_t dvc_op_units(const struct davinci_task *task);
uint64_t dvc_op_chunk_units(const struct davinci_task *task);
/* the same, for an op with a parameter block */
uint64_t dvc_op_units_of(const struct davinci_task *task, const void *params);
uint64_t dvc_op_chunk_units_of(const struct davinci_task *task,
			       const void *params);
void dvc_op_run(const struct davinci_task *task, const void *params,
		void *dst, const void *src0, const void *src1, void *src2,
		uint64_t begin, uint64_t end);
/* dv_logf() of numerics.h on @n floats, @y[i] = log(@x[i]). */
void dvc_num_logf(const float *x, float *y, uint64_t n);
/* os_simd_level(): the SIMD level the op kernels use now (os.h). */
int dvc_simd_level(void);

/* dv_jpegd_parse(), dv_jpegd_decode() and _planes() of jpegd.h, as they are. */
int dvc_jpegd_parse(const void *data, size_t size, uint32_t max_dim,
		    struct dv_jpegd_info *info);
int dvc_jpegd_decode(const void *data, size_t size, uint32_t max_dim,
		     void *out, size_t out_size, void *scratch,
		     size_t scratch_size, struct dv_jpegd_info *info);
int dvc_jpegd_decode_planes(const void *data, size_t size, uint32_t max_dim,
			    void *out, size_t out_size, void *scratch,
			    size_t scratch_size, struct dv_jpegd_info *info);

/* dv_pngd_parse() and dv_pngd_decode() of pngd.h, as they are. */
int dvc_pngd_parse(const void *data, size_t size, uint32_t max_dim,
		   uint32_t format, struct dv_pngd_info *info);
int dvc_pngd_decode(const void *data, size_t size, uint32_t max_dim,
		    uint32_t format, void *out, size_t out_size, void *scratch,
		    size_t scratch_size, struct dv_pngd_info *info);

#endif /* _DVC_TEST_H */
