/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_VM_H
#define QGPU_VM_H

#include <linux/dma-fence.h>
#include <linux/refcount.h>
#include <drm/drm_gpuvm.h>
#include <drm/drm_mm.h>
#include <qgpu/qgpu_mmu.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"

struct qgpu_paging;
struct drm_syncobj;

/**
 * struct qgpu_pt - one 4 KiB page table, committed to a VRAM segment
 * @node: its range in the segment
 * @id: its id in the tracepoints (&qgpu_device.pt_ids)
 * @seg: the segment
 * @level: 2 (root), 1 or 0 (leaf)
 * @seg_base: the segment's GPU address
 * @slot: its page in the paging process's page-table window, or -1
 * @child: the next level's tables (levels 2 and 1), by index
 * @parent: the table whose entry @index points at it (NULL: a root)
 * @index: see @parent
 * @fresh: link in the list of tables created but not yet written
 * @owner: the video memory of the file whose address space it belongs to,
 *	whose usage it counts in (NULL: the paging process's)
 * @user: the user whose share of the window @slot counts in, or -1
 */
struct qgpu_pt {
	struct drm_mm_node node;
	u64 id;
	u32 seg;
	u64 seg_base;
	u32 level;
	int slot;
	struct qgpu_pt **child;
	struct qgpu_pt *parent;
	u32 index;
	struct list_head fresh;
	struct qgpu_vidmem *owner;
	s64 user;
};

/* drm_gpuva.flags: the mapping is read-only for the device */
#define QGPU_GPUVA_READ_ONLY	DRM_GPUVA_USERBITS

/**
 * struct qgpu_vm - a process's GPU virtual address space
 * @gpuvm: the mappings (drm_gpuvm); changed under @lock and mm_lock
 * @qdev: the device
 * @lock: the VA books: reservations, mappings, paging fences handed out
 * @reserved: reserved ranges
 * @reserved_bytes: their bytes (under @lock)
 * @mapped_bytes: mapped bytes (under @lock)
 * @nranges: reservations (under @lock)
 * @nmappings: mappings (under @lock)
 * @map_seq: the sequence number of the last VM_MAP (&qgpu_va.seq; under
 *	@lock)
 * @root: the root page table (under mm_lock)
 * @root_ready: the root is zeroed and in the paging window (under mm_lock)
 * @pristine_mapped: an allocation whose content is known to be zero
 *	(&qgpu_bo.pristine) was mapped since the last virtual submission
 *	(under @lock and mm_lock)
 * @page_tables: tables, the root included (under mm_lock)
 * @user: the user whose share of the paging process's window its tables
 *	take (the real uid of the file's opener), or -1 (opened with
 *	CAP_SYS_ADMIN)
 * @fence_lock: protects the fences below
 * @pt_fence: the last paging job that wrote this VM's tables
 * @paging_fence: the last paging fence handed out (MakeResident)
 * @last_render: the last DMA buffer queued in this VM
 * @fence_context: the paging fences' context
 * @paging_seqno: the last paging fence value (under @lock)
 * @syncobj: the paging-fence timeline
 * @syncobj_handle: its handle in the owning file
 * @teardown: frees the page tables once the VM's work is done
 * @table_users: the file and each of its virtual contexts: every DMA
 *	buffer of a context walks the tables, so they are freed only when
 *	the file is closed and every context is released (all its jobs
 *	freed), not when the buffer queued last is done
 */
struct qgpu_vm {
	struct drm_gpuvm gpuvm;
	struct qgpu_device *qdev;
	struct mutex lock;		/* the VA books */
	struct drm_mm reserved;
	u64 reserved_bytes;
	u64 mapped_bytes;
	u32 nranges;
	u32 nmappings;
	u64 map_seq;
	struct qgpu_pt *root;
	bool root_ready;
	bool pristine_mapped;
	u64 page_tables;
	s64 user;
	spinlock_t fence_lock;		/* the fences below */
	struct dma_fence *pt_fence;
	struct dma_fence *paging_fence;
	struct dma_fence *last_render;
	u64 fence_context;
	u64 paging_seqno;
	struct drm_syncobj *syncobj;
	u32 syncobj_handle;
	struct work_struct teardown;
	refcount_t table_users;
};

static inline struct qgpu_vm *to_qvm(struct drm_gpuvm *gpuvm)
{
	return container_of(gpuvm, struct qgpu_vm, gpuvm);
}

/* The process part of every address space (the rest is the kernel's) */
#define QGPU_VM_USER_START	0x10000ull
#define QGPU_VM_USER_END	QGPU_MMU_VA_SIZE
#define QGPU_VM_RESERVE_ALIGN	0x10000ull

/* qgpu_pagetable.c: page tables and the paging process */
int qgpu_pp_init(struct qgpu_device *qdev);
void qgpu_pp_fini(struct qgpu_device *qdev);
u64 qgpu_pt_desc(struct qgpu_pt *pt);
int qgpu_pt_alloc(struct qgpu_device *qdev, u32 level,
		  struct qgpu_vidmem *owner, struct qgpu_pt **out);
void qgpu_pt_free(struct qgpu_device *qdev, struct qgpu_pt *pt);
int qgpu_pt_root_new(struct qgpu_vm *vm, struct qgpu_vidmem *owner);
int qgpu_pt_prepare(struct qgpu_vm *vm, u64 start, u64 end,
		    struct list_head *fresh);
int qgpu_pt_commit_fresh(struct qgpu_vm *vm, struct qgpu_paging *pb,
			 struct list_head *fresh);
void qgpu_pt_fresh_done(struct qgpu_vm *vm, struct list_head *fresh, bool ok);
int qgpu_pt_write_range(struct qgpu_vm *vm, struct qgpu_paging *pb,
			u64 start, u64 end, struct qgpu_bo *moved, u32 seg,
			u64 vram);
int qgpu_pt_write_hole(struct qgpu_vm *vm, struct qgpu_paging *pb,
		       u64 start, u64 end);
bool qgpu_pp_can_move(struct qgpu_bo *bo, u32 src, u32 dst);
int qgpu_pp_build_move(struct qgpu_paging *pb, struct qgpu_bo *bo,
		       u64 src_addr, u32 src, u64 dst_addr, u32 dst);

/* qgpu_vm.c */
struct qgpu_vm *qgpu_vm_get(struct drm_file *file);
void qgpu_vm_put(struct qgpu_vm *vm);
void qgpu_vm_tables_get(struct qgpu_vm *vm);
void qgpu_vm_tables_put(struct qgpu_vm *vm);
void qgpu_vm_file_fini(struct qgpu_file *qf);
void qgpu_vm_written(struct qgpu_vm *vm, struct qgpu_file *qf);
int qgpu_vm_ready(struct qgpu_vm *vm);
u64 qgpu_vm_root_desc(struct qgpu_vm *vm);
int qgpu_vm_bo_moved(struct qgpu_paging *pb, struct qgpu_bo *bo, u32 seg,
		     u64 vram);
int qgpu_vm_reserve_ioctl(struct drm_device *drm, void *data,
			  struct drm_file *file);
int qgpu_vm_free_ioctl(struct drm_device *drm, void *data,
		       struct drm_file *file);
int qgpu_vm_map_ioctl(struct drm_device *drm, void *data,
		      struct drm_file *file);
int qgpu_vm_unmap_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file);
int qgpu_vm_info(struct drm_file *file, struct drm_qgpu_vm_info *info);
int qgpu_vm_layout(struct qgpu_file *qf, struct drm_qgpu_vm_layout_entry *e,
		   u32 max, u32 *count);
void qgpu_vm_set_fence(struct qgpu_vm *vm, struct dma_fence **slot,
		       struct dma_fence *f);
struct dma_fence *qgpu_vm_fence(struct qgpu_vm *vm, struct dma_fence **slot);

/* qgpu_make_resident.c */
struct qgpu_vm *qgpu_vm_peek(struct qgpu_file *qf);
int qgpu_vm_unmap_bo(struct qgpu_vm *vm, struct drm_gem_object *obj,
		     u64 max_seq);
u64 qgpu_vm_map_seq(struct qgpu_vm *vm);
int qgpu_make_resident_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file);

#endif /* QGPU_VM_H */
