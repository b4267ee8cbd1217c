// SPDX-License-Identifier: GPL-2.0
/*
 * Mapping device memory, pinned host memory and stream rings.
 *
 * The core validates the range and hands back a referenced dv_mapping,
 * so the memory cannot be reused while any VMA maps it, even after the
 * buffer is freed or the context reset. Pages are inserted lazily from
 * the vmalloc'd arena by the fault handler.
 */
#include <linux/mm.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "dv_linux.h"

/**
 * struct dv_vma - shared by the VMAs split from one mmap() call
 * @refs: one per VMA
 * @map: the core's mapping reference
 * @base_pgoff: file page offset of the mapping's first byte
 * @pages: length of the mapping in pages
 */
struct dv_vma {
	refcount_t refs;
	struct dv_mapping *map;
	unsigned long base_pgoff;
	unsigned long pages;
};

static void dv_vma_open(struct vm_area_struct *vma)
{
	struct dv_vma *dvma = vma->vm_private_data;

	refcount_inc(&dvma->refs);
}

static void dv_vma_close(struct vm_area_struct *vma)
{
	struct dv_vma *dvma = vma->vm_private_data;

	if (refcount_dec_and_test(&dvma->refs)) {
		dv_mmap_put(dvma->map);
		kfree(dvma);
		atomic_long_dec(&dv_live_vmas);
	}
}

static vm_fault_t dv_vma_fault(struct vm_fault *vmf)
{
	struct dv_vma *dvma = vmf->vma->vm_private_data;
	unsigned long page;
	struct page *pg;

	if (vmf->pgoff < dvma->base_pgoff)
		return VM_FAULT_SIGBUS;
	page = vmf->pgoff - dvma->base_pgoff;
	if (page >= dvma->pages)
		return VM_FAULT_SIGBUS;
	pg = vmalloc_to_page((u8 *)dv_mapping_addr(dvma->map) +
			     (page << PAGE_SHIFT));
	if (!pg)
		return VM_FAULT_SIGBUS;
	get_page(pg);
	vmf->page = pg;
	return 0;
}

static const struct vm_operations_struct dv_vm_ops = {
	.open = dv_vma_open,
	.close = dv_vma_close,
	.fault = dv_vma_fault,
};

int dv_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct dv_file *df = filp->private_data;
	unsigned long len = vma->vm_end - vma->vm_start;
	struct dv_mapping *map;
	struct dv_vma *dvma;
	int ret;

	/* Device memory is shared with the device and never executable. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	/* vm_pgoff << PAGE_SHIFT must not lose the arena bits. */
	if (vma->vm_pgoff > (U64_MAX >> PAGE_SHIFT))
		return -EINVAL;

	ret = dv_mmap_get(df->ctx, (u64)vma->vm_pgoff << PAGE_SHIFT, len,
			  &map);
	if (ret)
		return ret;

	dvma = kzalloc(sizeof(*dvma), GFP_KERNEL);
	if (!dvma) {
		dv_mmap_put(map);
		return -ENOMEM;
	}
	refcount_set(&dvma->refs, 1);
	dvma->map = map;
	dvma->base_pgoff = vma->vm_pgoff;
	dvma->pages = len >> PAGE_SHIFT;
	atomic_long_inc(&dv_live_vmas);

	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vm_flags_clear(vma, VM_MAYEXEC);
	vma->vm_private_data = dvma;
	vma->vm_ops = &dv_vm_ops;
	return 0;
}
