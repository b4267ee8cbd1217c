/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vpc.h - the DVPP VPC engine's tasks (DOC: DVPP VPC in davinci.h):
 * VPC_RESIZE, VPC_CROP (crop, crop-and-paste) and VPC_CONVERT_COLOR on
 * YUV420SP (NV12, NV21), YUYV packed 4:2:2 and RGB888 / BGR888 pictures.
 *
 * Integer code only (no FPU section), kernel style; the only allocation
 * is the resize's coordinate tables, made as the task starts
 * (dv_vpc_run()) by a worker that holds no lock.
 */
#ifndef _DAVINCI_VPC_H
#define _DAVINCI_VPC_H

#include "dv_internal.h"

/* fraction bits of the bilinear weights (NUMERICS.md, VPC) */
#define DV_VPC_FRAC_BITS	11

/* bytes of a picture of format @fmt and strides @ws x @hs, 0 if unknown */
u64 dv_vpc_picture_bytes(u32 fmt, u32 ws, u32 hs);

/* dv_op_check_vpc_crop(), dv_vpc_extent() and dv_vpc_run(): ops.h */

#endif /* _DAVINCI_VPC_H */
