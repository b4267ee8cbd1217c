// SPDX-License-Identifier: GPL-2.0
/*
 * dvc_test.c - test hooks of libdavinci_core (dvc_test.h): the op
 * kernels' validation, extents, work units and dispatch, for the Python
 * op tests (tests/ops/opslib.py) that run them on numpy arrays without a
 * device, and the JPEG and PNG decoders (tests/ops/jpegdlib.py, pngdlib.py). Exported under
 * the dvc_ prefix like the rest of the API.
 */
#include "dvc_test.h"
#include "jpegd.h"
#include "numerics.h"
#include "pngd.h"
#include "ops.h"

bool dvc_op_is_compute(u16 opcode)
{
	return dv_op_is_compute(opcode);
}

int dvc_op_validate(const struct davinci_task *task)
{
	return dv_op_validate(task);
}

int dvc_op_check_params(const struct davinci_task *task, const void *params)
{
	return dv_op_check_params(task, params);
}

int dvc_op_extent(const struct davinci_task *task, const void *params,
		  struct dv_op_extent *ext)
{
	return dv_op_extent(task, params, ext);
}

u64 dvc_op_units(const struct davinci_task *task)
{
	return dv_op_units(task, NULL);
}

u64 dvc_op_chunk_units(const struct davinci_task *task)
{
	return dv_op_chunk_units(task, NULL);
}

u64 dvc_op_units_of(const struct davinci_task *task, const void *params)
{
	return dv_op_units(task, params);
}

u64 dvc_op_chunk_units_of(const struct davinci_task *task, const void *params)
{
	return dv_op_chunk_units(task, params);
}

void dvc_op_run(const struct davinci_task *task, const void *params,
		void *dst, const void *src0, const void *src1, void *src2,
		u64 begin, u64 end)
{
	dv_op_run(task, params, dst, src0, src1, src2, begin, end);
}

void dvc_num_logf(const float *x, float *y, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		y[i] = dv_logf(x[i]);
}

int dvc_simd_level(void)
{
	return os_simd_level();
}

int dvc_jpegd_parse(const void *data, size_t size, u32 max_dim,
		    struct dv_jpegd_info *info)
{
	return dv_jpegd_parse(data, size, max_dim, info);
}

int dvc_jpegd_decode(const void *data, size_t size, u32 max_dim,
		     void *out, size_t out_size, void *scratch,
		     size_t scratch_size, struct dv_jpegd_info *info)
{
	return dv_jpegd_decode(data, size, max_dim, out, out_size, scratch,
			       scratch_size, info);
}

int dvc_jpegd_decode_planes(const void *data, size_t size, u32 max_dim,
			    void *out, size_t out_size, void *scratch,
			    size_t scratch_size, struct dv_jpegd_info *info)
{
	return dv_jpegd_decode_planes(data, size, max_dim, out, out_size,
				      scratch, scratch_size, info);
}

int dvc_pngd_parse(const void *data, size_t size, u32 max_dim, u32 format,
		   struct dv_pngd_info *info)
{
	return dv_pngd_parse(data, size, max_dim, format, info);
}

int dvc_pngd_decode(const void *data, size_t size, u32 max_dim, u32 format,
		    void *out, size_t out_size, void *scratch,
		    size_t scratch_size, struct dv_pngd_info *info)
{
	return dv_pngd_decode(data, size, max_dim, format, out, out_size,
			      scratch, scratch_size, info);
}
