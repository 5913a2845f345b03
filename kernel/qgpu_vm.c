// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: a process's GPU virtual address space ("GpuMmu Example
 * Scenarios", WDK), on the kernel's drm_gpuvm. Each DRM file gets one when
 * it first asks: reserved ranges (a drm_mm), mappings of allocations into
 * them (drm_gpuvm's tree, linked to each allocation's GEM object), and the
 * page tables the device walks (qgpu_pagetable.c), written only by paging
 * buffers. An allocation mapped here stays reachable at its virtual
 * addresses wherever the memory manager moves it: every move rewrites its
 * entries (qgpu_vm_bo_moved()).
 *
 * Locks: vm->lock, then mm_lock, then one reservation object at a time.
 * The tree changes only under both vm->lock and mm_lock, so the memory
 * manager reads it under mm_lock alone.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_exec.h>
#include <drm/drm_file.h>
#include <drm/drm_syncobj.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_paging.h"
#include "qgpu_trace.h"
#include "qgpu_vm.h"

/* Reservations one address space may hold (mappings: UAPI) */
#define QGPU_VM_MAX_RANGES	65536

struct qgpu_vm_unmap {
	struct qgpu_vm *vm;
	struct drm_gem_object **objs;	/* one reference each */
	u32 nobjs;
	u32 max;
	u64 bytes;
	bool at_once;	/* not behind the work queued on the allocations */
	bool kept;	/* qgpu_vm_unmap_range() kept them before the tree */
};

/**
 * struct qgpu_va - a mapping
 * @base: drm_gpuvm's
 * @seq: the VM_MAP that made it (&qgpu_vm.map_seq; the parts left of a
 *	mapping partly unmapped keep it), so that a deferred unmap takes
 *	only the mappings made before it was asked for
 */
struct qgpu_va {
	struct drm_gpuva base;
	u64 seq;
};

static struct qgpu_va *to_qva(struct drm_gpuva *va)
{
	return container_of(va, struct qgpu_va, base);
}

static void qgpu_va_free(struct drm_gpuva *va)
{
	kfree(va ? to_qva(va) : NULL);
}

static void qgpu_vm_free(struct drm_gpuvm *gpuvm)
{
	struct qgpu_vm *vm = to_qvm(gpuvm);

	drm_mm_takedown(&vm->reserved);
	dma_fence_put(vm->pt_fence);
	dma_fence_put(vm->paging_fence);
	dma_fence_put(vm->last_render);
	mutex_destroy(&vm->lock);
	kfree(vm);
}

/*
 * Remember @obj (referenced) so that the unmap's fence goes into it. One
 * unmap may take tens of thousands of mappings under mm_lock: only the
 * last allocation kept is looked at (the pieces of one mapping come in a
 * row), since a search of all would make it quadratic; an allocation kept
 * twice is harmless.
 */
static int qgpu_vm_unmap_keep(struct qgpu_vm_unmap *u,
			      struct drm_gem_object *obj)
{
	struct drm_gem_object **n;
	u32 max;

	if (u->nobjs && u->objs[u->nobjs - 1] == obj)
		return 0;
	if (u->nobjs == u->max) {
		max = u->max * 2 + 8;
		n = kvmalloc_array(max, sizeof(*n), GFP_KERNEL);
		if (!n)
			return -ENOMEM;
		if (u->nobjs)
			memcpy(n, u->objs, u->nobjs * sizeof(*n));
		kvfree(u->objs);
		u->objs = n;
		u->max = max;
	}
	drm_gem_object_get(obj);
	u->objs[u->nobjs++] = obj;
	return 0;
}

static int qgpu_vm_sm_unmap(struct drm_gpuva_op *op, void *priv)
{
	struct qgpu_vm_unmap *u = priv;
	struct drm_gpuva *va = op->unmap.va;
	struct drm_gem_object *obj = va->gem.obj;
	int ret;

	ret = u->kept ? 0 : qgpu_vm_unmap_keep(u, obj);
	if (ret)
		return ret;
	u->bytes += va->va.range;
	dma_resv_lock(obj->resv, NULL);
	drm_gpuva_unmap(&op->unmap);
	trace_qgpu_mm_req(QGPU_REQ_GPU_MAP, to_qbo(obj)->id, 0);
	drm_gpuva_unlink(va);
	to_qbo(obj)->nmappings--;
	dma_resv_unlock(obj->resv);
	qgpu_va_free(va);
	u->vm->nmappings--;
	return 0;
}

static int qgpu_vm_sm_remap(struct drm_gpuva_op *op, void *priv)
{
	struct qgpu_vm_unmap *u = priv;
	struct drm_gpuva_op_remap *r = &op->remap;
	struct drm_gpuva *va = r->unmap->va;
	struct drm_gem_object *obj = va->gem.obj;
	struct qgpu_va *qprev = NULL, *qnext = NULL;
	struct drm_gpuva *prev = NULL, *next = NULL;
	u64 start, range;
	int ret;

	ret = u->kept ? 0 : qgpu_vm_unmap_keep(u, obj);
	if (ret)
		return ret;
	qprev = r->prev ? kzalloc(sizeof(*qprev), GFP_KERNEL) : NULL;
	qnext = r->next ? kzalloc(sizeof(*qnext), GFP_KERNEL) : NULL;
	if ((r->prev && !qprev) || (r->next && !qnext)) {
		kfree(qprev);
		kfree(qnext);
		return -ENOMEM;
	}
	if (qprev) {
		qprev->seq = to_qva(va)->seq;
		prev = &qprev->base;
	}
	if (qnext) {
		qnext->seq = to_qva(va)->seq;
		next = &qnext->base;
	}
	drm_gpuva_op_remap_to_unmap_range(r, &start, &range);
	u->bytes += range;
	dma_resv_lock(obj->resv, NULL);
	drm_gpuva_remap(prev, next, r);
	if (prev) {
		prev->flags = va->flags;
		trace_qgpu_mm_req(QGPU_REQ_GPU_MAP, to_qbo(obj)->id, 1);
		drm_gpuva_link(prev, va->vm_bo);
	}
	if (next) {
		next->flags = va->flags;
		trace_qgpu_mm_req(QGPU_REQ_GPU_MAP, to_qbo(obj)->id, 1);
		drm_gpuva_link(next, va->vm_bo);
	}
	trace_qgpu_mm_req(QGPU_REQ_GPU_MAP, to_qbo(obj)->id, 0);
	drm_gpuva_unlink(va);
	to_qbo(obj)->nmappings += !!prev + !!next - 1;
	dma_resv_unlock(obj->resv);
	qgpu_va_free(va);
	u->vm->nmappings += !!prev + !!next - 1;
	return 0;
}

static const struct drm_gpuvm_ops qgpu_gpuvm_ops = {
	.vm_free = qgpu_vm_free,
	.sm_step_remap = qgpu_vm_sm_remap,
	.sm_step_unmap = qgpu_vm_sm_unmap,
};

u64 qgpu_vm_root_desc(struct qgpu_vm *vm)
{
	return qgpu_pt_desc(vm->root);
}

void qgpu_vm_set_fence(struct qgpu_vm *vm, struct dma_fence **slot,
		       struct dma_fence *f)
{
	struct dma_fence *old;

	spin_lock(&vm->fence_lock);
	old = *slot;
	*slot = dma_fence_get(f);
	spin_unlock(&vm->fence_lock);
	dma_fence_put(old);
}

struct dma_fence *qgpu_vm_fence(struct qgpu_vm *vm, struct dma_fence **slot)
{
	struct dma_fence *f;

	spin_lock(&vm->fence_lock);
	f = dma_fence_get(*slot);
	spin_unlock(&vm->fence_lock);
	return f;
}

static int qgpu_vm_create(struct drm_file *file, struct qgpu_vm **out)
{
	struct qgpu_device *qdev = to_qdev(file->minor->dev);
	struct qgpu_file *qf = file->driver_priv;
	struct drm_gem_object *r_obj;
	struct qgpu_vm *vm;
	int ret;

	vm = kzalloc(sizeof(*vm), GFP_KERNEL);
	if (!vm)
		return -ENOMEM;
	r_obj = drm_gpuvm_resv_object_alloc(&qdev->drm);
	if (!r_obj) {
		kfree(vm);
		return -ENOMEM;
	}
	drm_gpuvm_init(&vm->gpuvm, "qgpu", 0, &qdev->drm, r_obj,
		       QGPU_VM_USER_START,
		       QGPU_VM_USER_END - QGPU_VM_USER_START, 0, 0,
		       &qgpu_gpuvm_ops);
	drm_gem_object_put(r_obj);
	vm->qdev = qdev;
	/*
	 * one user's address spaces share a quarter of the window: the
	 * user who opened the file (whoever uses it first)
	 */
	vm->user = -1;
	if (!file_ns_capable(file->filp, &init_user_ns, CAP_SYS_ADMIN))
		vm->user = from_kuid(&init_user_ns, file->filp->f_cred->uid);
	mutex_init(&vm->lock);
	spin_lock_init(&vm->fence_lock);
	/* the file's; each virtual context takes one more */
	refcount_set(&vm->table_users, 1);
	drm_mm_init(&vm->reserved, QGPU_VM_USER_START,
		    QGPU_VM_USER_END - QGPU_VM_USER_START);
	vm->fence_context = dma_fence_context_alloc(1);
	qgpu_mm_lock(qdev, file->driver_priv);
	ret = qgpu_pt_root_new(vm, qf->vidmem);
	qgpu_mm_unlock(qdev);
	if (!ret)
		vm->page_tables = 1;
	if (!ret)
		ret = drm_syncobj_create(&vm->syncobj, 0, NULL);
	if (!ret)
		ret = drm_syncobj_get_handle(file, vm->syncobj,
					     &vm->syncobj_handle);
	if (ret) {
		if (vm->syncobj)
			drm_syncobj_put(vm->syncobj);
		if (vm->root) {
			qgpu_mm_lock(qdev, NULL);
			qgpu_pt_free(qdev, vm->root);
			qgpu_mm_unlock(qdev);
		}
		drm_gpuvm_put(&vm->gpuvm);
		return ret;
	}
	*out = vm;
	return 0;
}

/**
 * qgpu_vm_get - the file's address space, created on first use
 * @file: DRM file
 *
 * Client process initialisation ("GpuMmu Example Scenarios"): its root
 * page table is created here; it is initialised (zeroed, reachable through
 * the paging process's window) when the process first needs its tables.
 * Return: a reference, or an ERR_PTR (-ENODEV without an MMU).
 */
struct qgpu_vm *qgpu_vm_get(struct drm_file *file)
{
	struct qgpu_file *qf = file->driver_priv;
	struct qgpu_vm *vm;
	int ret = 0;

	if (!qf->qdev->pp)
		return ERR_PTR(-ENODEV);
	mutex_lock(&qf->vm_lock);
	if (!qf->vm) {
		ret = qgpu_vm_create(file, &vm);
		if (!ret)
			qf->vm = vm;
	}
	vm = qf->vm;
	if (!ret)
		drm_gpuvm_get(&vm->gpuvm);
	mutex_unlock(&qf->vm_lock);
	return ret ? ERR_PTR(ret) : vm;
}

void qgpu_vm_put(struct qgpu_vm *vm)
{
	if (vm)
		drm_gpuvm_put(&vm->gpuvm);
}

/* The file's address space if it has one (a reference), else NULL */
struct qgpu_vm *qgpu_vm_peek(struct qgpu_file *qf)
{
	struct qgpu_vm *vm;

	mutex_lock(&qf->vm_lock);
	vm = qf->vm && qf->vm->root ? qf->vm : NULL;
	if (vm)
		drm_gpuvm_get(&vm->gpuvm);
	mutex_unlock(&qf->vm_lock);
	return vm;
}

/*
 * The reservation objects of what an unmap takes out, all locked (they
 * may share one: the address space's own), with room for one fence each.
 */
static int qgpu_vm_lock_unmapped(struct drm_exec *exec,
				 struct qgpu_vm_unmap *u)
{
	int ret = 0;
	u32 i;

	drm_exec_until_all_locked(exec) {
		for (i = 0; i < u->nobjs; i++) {
			ret = drm_exec_prepare_obj(exec, u->objs[i], 1);
			drm_exec_retry_on_contention(exec);
			if (ret)
				break;
		}
	}
	return ret;
}

/* Build and queue: fresh tables, entries of [start, end), the TLB flush */
static int qgpu_vm_write(struct qgpu_vm *vm, u64 start, u64 end,
			 struct list_head *fresh, struct qgpu_vm_unmap *u)
{
	struct qgpu_paging pb;
	struct drm_exec exec;
	struct dma_fence *f;
	u32 i;
	int ret;

	ret = qgpu_paging_begin(vm->qdev, &pb);
	if (ret)
		return ret;
	/*
	 * An unmap's rewrite may span several buffers: the tree no longer
	 * holds what it unmaps, so every entry rewritten counts even if a
	 * later buffer fails. A map's does not: it must fail whole.
	 */
	pb.chain = !!u;
	/*
	 * An unmap goes behind the work queued on what it unmaps, and its
	 * fence goes into their reservation objects: they stay locked from
	 * before the build (room for the fence made while the job can still
	 * be dropped) until the fence is in, so nothing takes that room and
	 * nothing is ever waited for here. Building takes no reservation
	 * lock (the tables are in place already, qgpu_pt_prepare()).
	 */
	if (u) {
		drm_exec_init(&exec, DRM_EXEC_IGNORE_DUPLICATES, u->nobjs);
		ret = qgpu_vm_lock_unmapped(&exec, u);
	}
	for (i = 0; !ret && u && !u->at_once && i < u->nobjs; i++)
		ret = qgpu_paging_resv_deps(&pb, u->objs[i]->resv, 0);
	if (!ret)
		ret = qgpu_pt_commit_fresh(vm, &pb, fresh);
	/* an unmap's range: invalid, the mappings still in the tree */
	if (!ret && end > start)
		ret = u ? qgpu_pt_write_hole(vm, &pb, start, end) :
			  qgpu_pt_write_range(vm, &pb, start, end, NULL, 0, 0);
	if (!ret && end > start)
		ret = qgpu_paging_flush_tlb(&pb, qgpu_vm_root_desc(vm));
	if (ret) {
		qgpu_paging_abort(&pb);
		if (u)
			drm_exec_fini(&exec);
		return ret;
	}
	f = qgpu_paging_submit(&pb);
	if (f) {
		qgpu_vm_set_fence(vm, &vm->pt_fence, f);
		/* the memory of what was unmapped is reused only behind this */
		for (i = 0; u && i < u->nobjs; i++)
			dma_resv_add_fence(u->objs[i]->resv, f,
					   DMA_RESV_USAGE_KERNEL);
		dma_fence_put(f);
	}
	if (u)
		drm_exec_fini(&exec);
	return 0;
}

/**
 * qgpu_vm_ready - initialise @vm's root page table if it is not yet
 * @vm: address space
 *
 * Called before a context first runs in the VM, so that the device walks
 * a zeroed root. Return: 0 or an error from the memory manager.
 */
int qgpu_vm_ready(struct qgpu_vm *vm)
{
	struct qgpu_device *qdev = vm->qdev;
	LIST_HEAD(fresh);
	int ret;

	qgpu_mm_lock(qdev, NULL);
	ret = qgpu_pt_prepare(vm, 0, 0, &fresh);
	if (!ret)
		ret = qgpu_vm_write(vm, 0, 0, &fresh, NULL);
	qgpu_pt_fresh_done(vm, &fresh, !ret);
	qgpu_mm_unlock(qdev);
	return ret;
}

/*
 * Unmap [@addr, @addr + @size): first a paging buffer makes the entries
 * of the range invalid and flushes the TLB, the allocations it takes out
 * kept (a reference each) and their reservation objects given its fence;
 * only then do the mappings leave the tree. When the paging buffer cannot
 * be built nothing has changed; when the tree's change fails part way
 * (out of memory splitting a mapping), the mappings it left in the range
 * have invalid entries, which the device faults on (and which the next
 * move of their allocation rewrites): never an entry for memory the
 * kernel does not hold.
 */
static int qgpu_vm_unmap_range(struct qgpu_vm *vm, u64 addr, u64 size,
			       struct qgpu_vm_unmap *u)
{
	u64 before = u->bytes;
	struct drm_gpuva *va;
	LIST_HEAD(fresh);
	int ret;

	lockdep_assert_held(&vm->lock);
	lockdep_assert_held(&vm->qdev->mm_lock);
	/* a hole in the middle of one mapping makes two of it */
	va = drm_gpuva_find_first(&vm->gpuvm, addr, 1);
	if (va && va->va.addr < addr &&
	    va->va.addr + va->va.range > addr + size &&
	    QGPU_IOCTL_DBG(vm->qdev,
			   vm->nmappings >= QGPU_VM_MAX_MAPPINGS ||
			   to_qbo(va->gem.obj)->nmappings >=
			   QGPU_BO_MAX_MAPPINGS))
		return -ENOSPC;
	u->vm = vm;
	drm_gpuvm_for_each_va_range(va, &vm->gpuvm, addr, addr + size) {
		ret = qgpu_vm_unmap_keep(u, va->gem.obj);
		if (ret)
			return ret;
	}
	if (u->nobjs && vm->root_ready) {
		ret = qgpu_vm_write(vm, addr, addr + size, &fresh, u);
		if (ret)
			return ret;
	}
	u->kept = true;
	ret = drm_gpuvm_sm_unmap(&vm->gpuvm, u, addr, size);
	vm->mapped_bytes -= u->bytes - before;
	return ret;
}

/*
 * Drop the references an unmap kept, after mm_lock: the last one frees
 * the allocation, which takes mm_lock.
 */
static void qgpu_vm_unmap_done(struct qgpu_vm_unmap *u)
{
	u32 i;

	for (i = 0; i < u->nobjs; i++)
		drm_gem_object_put(u->objs[i]);
	kvfree(u->objs);
}

static bool qgpu_vm_range_bad(u64 addr, u64 size, u64 align)
{
	return !size || addr % align || size % align ||
	       addr < QGPU_VM_USER_START || addr > QGPU_VM_USER_END ||
	       size > QGPU_VM_USER_END - addr;
}

static struct qgpu_vm *qgpu_vm_ioctl_vm(struct drm_file *file)
{
	return qgpu_vm_get(file);
}

int qgpu_vm_reserve_ioctl(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_vm_reserve *args = data;
	bool fixed = args->flags & QGPU_VM_RESERVE_FIXED;
	struct drm_mm_node *node;
	struct qgpu_vm *vm;
	int ret;

	if (QGPU_IOCTL_DBG(qdev, args->flags & ~QGPU_VM_RESERVE_FIXED) ||
	    QGPU_IOCTL_DBG(qdev, args->pad) ||
	    QGPU_IOCTL_DBG(qdev, !fixed && args->addr) ||
	    QGPU_IOCTL_DBG(qdev, qgpu_vm_range_bad(fixed ? args->addr :
						   QGPU_VM_USER_START,
						   args->size,
						   QGPU_VM_RESERVE_ALIGN)))
		return -EINVAL;
	vm = qgpu_vm_ioctl_vm(file);
	if (IS_ERR(vm))
		return PTR_ERR(vm);
	node = kzalloc(sizeof(*node), GFP_KERNEL);
	if (!node) {
		qgpu_vm_put(vm);
		return -ENOMEM;
	}
	mutex_lock(&vm->lock);
	if (QGPU_IOCTL_DBG(qdev, vm->nranges >= QGPU_VM_MAX_RANGES)) {
		ret = -ENOSPC;
	} else if (fixed) {
		node->start = args->addr;
		node->size = args->size;
		ret = drm_mm_reserve_node(&vm->reserved, node);
		if (ret == -ENOSPC)
			ret = -EEXIST;
	} else {
		ret = drm_mm_insert_node_in_range(&vm->reserved, node,
						  args->size,
						  QGPU_VM_RESERVE_ALIGN, 0,
						  QGPU_VM_USER_START,
						  QGPU_VM_USER_END,
						  DRM_MM_INSERT_LOW);
	}
	if (!ret) {
		vm->reserved_bytes += args->size;
		vm->nranges++;
		args->addr = node->start;
	}
	mutex_unlock(&vm->lock);
	if (ret)
		kfree(node);
	qgpu_vm_put(vm);
	return ret;
}

/* The reservation holding all of [addr, addr + size), or NULL */
static struct drm_mm_node *qgpu_vm_reservation(struct qgpu_vm *vm, u64 addr,
					       u64 size)
{
	struct drm_mm_node *node;

	drm_mm_for_each_node(node, &vm->reserved)
		if (node->start <= addr && addr - node->start < node->size &&
		    size <= node->start + node->size - addr)
			return node;
	return NULL;
}

/*
 * VM_FREE and VM_UNMAP: unmap [addr, addr + size); with @release, the range
 * must be exactly one reservation, which goes too once its mappings are
 * gone. The references the unmap kept are dropped after both locks.
 */
static int qgpu_vm_range_ioctl(struct drm_file *file,
			       struct drm_qgpu_vm_range *args, bool release)
{
	struct qgpu_device *qdev = to_qdev(file->minor->dev);
	struct drm_mm_node *node = NULL;
	struct qgpu_vm_unmap u = {};
	struct qgpu_vm *vm;
	int ret = 0;

	if (QGPU_IOCTL_DBG(qdev, qgpu_vm_range_bad(args->addr, args->size,
						   QGPU_MMU_PAGE_4K)))
		return -EINVAL;
	vm = qgpu_vm_ioctl_vm(file);
	if (IS_ERR(vm))
		return PTR_ERR(vm);
	mutex_lock(&vm->lock);
	if (release) {
		node = qgpu_vm_reservation(vm, args->addr, args->size);
		if (QGPU_IOCTL_DBG(qdev, !node || node->start != args->addr ||
				   node->size != args->size))
			ret = -ENOENT;
	}
	if (!ret) {
		qgpu_mm_lock(qdev, file->driver_priv);
		ret = qgpu_vm_unmap_range(vm, args->addr, args->size, &u);
		qgpu_mm_unlock(qdev);
	}
	if (!ret && node) {
		drm_mm_remove_node(node);
		kfree(node);
		vm->reserved_bytes -= args->size;
		vm->nranges--;
	}
	mutex_unlock(&vm->lock);
	qgpu_vm_unmap_done(&u);
	qgpu_vm_put(vm);
	return ret;
}

int qgpu_vm_free_ioctl(struct drm_device *drm, void *data,
		       struct drm_file *file)
{
	return qgpu_vm_range_ioctl(file, data, true);
}

int qgpu_vm_unmap_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file)
{
	return qgpu_vm_range_ioctl(file, data, false);
}

/**
 * qgpu_vm_map_seq - the sequence number of @vm's last VM_MAP
 * @vm: the address space
 *
 * Return: what qgpu_vm_unmap_bo() takes to leave out later mappings.
 */
u64 qgpu_vm_map_seq(struct qgpu_vm *vm)
{
	u64 seq;

	mutex_lock(&vm->lock);
	seq = vm->map_seq;
	mutex_unlock(&vm->lock);
	return seq;
}

/**
 * qgpu_vm_unmap_bo - unmap the mappings of @obj in @vm, at once
 * @vm: the address space
 * @obj: the allocation
 * @max_seq: only those made by a VM_MAP up to this one
 *	(qgpu_vm_map_seq(); U64_MAX: all)
 *
 * As VM_UNMAP of each of its ranges, but not behind the work queued on
 * @obj (the caller waited for it, or was told it does not matter): the
 * entries become invalid and the TLB is flushed by one paging job each.
 * Return: 0 or an errno (what was unmapped before it stays unmapped).
 */
int qgpu_vm_unmap_bo(struct qgpu_vm *vm, struct drm_gem_object *obj,
		     u64 max_seq)
{
	struct qgpu_device *qdev = vm->qdev;
	struct qgpu_vm_unmap u = { .at_once = true };
	struct drm_gpuvm_bo *vm_bo;
	struct drm_gpuva *va, *it;
	u64 addr, range;
	int ret = 0;

	mutex_lock(&vm->lock);
	for (;;) {
		/* one range at a time: the unmap changes the list */
		va = NULL;
		dma_resv_lock(obj->resv, NULL);
		vm_bo = drm_gpuvm_bo_find(&vm->gpuvm, obj);
		if (vm_bo) {
			drm_gpuvm_bo_for_each_va(it, vm_bo) {
				if (to_qva(it)->seq <= max_seq) {
					va = it;
					break;
				}
			}
			if (va) {
				addr = va->va.addr;
				range = va->va.range;
			}
			drm_gpuvm_bo_put(vm_bo);
		}
		dma_resv_unlock(obj->resv);
		if (!va || ret)
			break;
		qgpu_mm_lock(qdev, NULL);
		ret = qgpu_vm_unmap_range(vm, addr, range, &u);
		qgpu_mm_unlock(qdev);
		if (ret)
			break;
	}
	mutex_unlock(&vm->lock);
	qgpu_vm_unmap_done(&u);
	return ret;
}

/**
 * qgpu_vm_written - a virtual submission is about to be queued in @vm
 * @vm: the address space (under its lock)
 * @qf: the submitting file (whose request mm_lock is taken for)
 *
 * Its DMA buffer may write every allocation mapped writable in @vm,
 * wherever it is (system memory included): those whose content was
 * known to be zero (&qgpu_bo.pristine) are not any more, so that their
 * next move into VRAM copies them instead of zero-filling them. Only
 * after a pristine allocation was mapped (&qgpu_vm.pristine_mapped).
 */
void qgpu_vm_written(struct qgpu_vm *vm, struct qgpu_file *qf)
{
	struct drm_gpuva *va;

	lockdep_assert_held(&vm->lock);
	if (!READ_ONCE(vm->pristine_mapped))
		return;
	qgpu_mm_lock(vm->qdev, qf);
	drm_gpuvm_for_each_va(va, &vm->gpuvm) {
		struct qgpu_bo *bo;

		if (!va->gem.obj || (va->flags & QGPU_GPUVA_READ_ONLY))
			continue;
		bo = to_qbo(va->gem.obj);
		if (bo->pristine) {
			bo->pristine = false;
			trace_qgpu_mm_req(QGPU_REQ_GPU_WRITE, bo->id, 0);
		}
	}
	vm->pristine_mapped = false;
	qgpu_mm_unlock(vm->qdev);
}

/*
 * Does a DMA buffer of @vm's virtual contexts, of any of them (destroyed
 * ones included), still wait or run? Each one's fence is in the VM's own
 * reservation object until it is done (qgpu_vsubmit_queue()).
 */
static bool qgpu_vm_busy(struct qgpu_vm *vm)
{
	return !dma_resv_test_signaled(drm_gpuvm_resv(&vm->gpuvm),
				       DMA_RESV_USAGE_BOOKKEEP);
}

static int qgpu_vm_map_check(struct qgpu_device *qdev,
			     struct drm_qgpu_vm_map *args, struct qgpu_bo *bo)
{
	if (QGPU_IOCTL_DBG(qdev, args->flags & ~QGPU_VM_MAP_FLAGS) ||
	    QGPU_IOCTL_DBG(qdev, qgpu_vm_range_bad(args->addr, args->size,
						   QGPU_MMU_PAGE_4K)) ||
	    QGPU_IOCTL_DBG(qdev, args->offset % QGPU_MMU_PAGE_4K) ||
	    QGPU_IOCTL_DBG(qdev, args->offset > bo->base.size ||
			   args->size > bo->base.size - args->offset) ||
	    QGPU_IOCTL_DBG(qdev, bo->sgt))
		return -EINVAL;
	return 0;
}

/* Insert the mapping into the tree and link it to @bo's GEM object */
static int qgpu_vm_insert(struct qgpu_vm *vm, struct qgpu_bo *bo,
			  struct drm_gpuva *va, struct drm_qgpu_vm_map *args)
{
	struct drm_gpuvm_bo *vm_bo;
	int ret;

	dma_resv_lock(bo->base.resv, NULL);
	vm_bo = drm_gpuvm_bo_obtain(&vm->gpuvm, &bo->base);
	if (IS_ERR(vm_bo)) {
		dma_resv_unlock(bo->base.resv);
		return PTR_ERR(vm_bo);
	}
	drm_gpuva_init(va, args->addr, args->size, &bo->base, args->offset);
	/*
	 * A mapping made after a destroy with AssumeNotInUse (the
	 * allocation got back through its dma-buf, or a VM_MAP racing the
	 * destroy) is not one the destroy unmapped: the release waits for
	 * everyone's work again (qgpu_bo_skip_client()).
	 */
	WRITE_ONCE(bo->assume_client, 0);
	if (args->flags & QGPU_VM_MAP_READ_ONLY)
		va->flags |= QGPU_GPUVA_READ_ONLY;
	/* every mapping is rewritten by each move of the allocation */
	ret = QGPU_IOCTL_DBG(vm->qdev, bo->nmappings >= QGPU_BO_MAX_MAPPINGS) ?
	      -ENOSPC : drm_gpuva_insert(&vm->gpuvm, va);
	if (!ret) {
		trace_qgpu_mm_req(QGPU_REQ_GPU_MAP, bo->id, 1);
		drm_gpuva_link(va, vm_bo);
		bo->nmappings++;
		/*
		 * The next virtual submission may write it
		 * (qgpu_vm_written()), and so may one queued already: it
		 * reaches the allocation through the new entries when it
		 * runs, and no later submission may come before the next
		 * move into VRAM, which would zero-fill it.
		 */
		if (bo->pristine && !(va->flags & QGPU_GPUVA_READ_ONLY) &&
		    qgpu_vm_busy(vm)) {
			bo->pristine = false;
			trace_qgpu_mm_req(QGPU_REQ_GPU_WRITE, bo->id, 0);
		} else if (bo->pristine) {
			vm->pristine_mapped = true;
		}
	}
	drm_gpuvm_bo_put(vm_bo);
	dma_resv_unlock(bo->base.resv);
	return ret;
}

static void qgpu_vm_remove(struct qgpu_bo *bo, struct drm_gpuva *va)
{
	dma_resv_lock(bo->base.resv, NULL);
	drm_gpuva_remove(va);
	trace_qgpu_mm_req(QGPU_REQ_GPU_MAP, bo->id, 0);
	drm_gpuva_unlink(va);
	bo->nmappings--;
	dma_resv_unlock(bo->base.resv);
}

static int qgpu_vm_map_locked(struct qgpu_vm *vm, struct qgpu_bo *bo,
			      struct drm_gpuva *va,
			      struct drm_qgpu_vm_map *args)
{
	struct qgpu_device *qdev = vm->qdev;
	LIST_HEAD(fresh);
	int ret;

	lockdep_assert_held(&qdev->mm_lock);
	/* the system pages, for entries of a non-resident allocation */
	ret = qgpu_bo_backing(bo);
	if (!ret)
		ret = qgpu_pt_prepare(vm, args->addr, args->addr + args->size,
				      &fresh);
	if (!ret)
		ret = qgpu_vm_insert(vm, bo, va, args);
	if (ret) {
		qgpu_pt_fresh_done(vm, &fresh, false);
		return ret;
	}
	ret = qgpu_vm_write(vm, args->addr, args->addr + args->size, &fresh,
			    NULL);
	qgpu_pt_fresh_done(vm, &fresh, !ret);
	if (ret)
		qgpu_vm_remove(bo, va);
	return ret;
}

int qgpu_vm_map_ioctl(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_vm_map *args = data;
	struct qgpu_va *qva;
	struct drm_gpuva *va;
	struct qgpu_vm *vm;
	struct qgpu_bo *bo;
	int ret;

	bo = qgpu_bo_lookup(file, args->handle);
	if (!bo)
		return -ENOENT;
	ret = qgpu_vm_map_check(qdev, args, bo);
	vm = ret ? NULL : qgpu_vm_ioctl_vm(file);
	if (IS_ERR(vm)) {
		ret = PTR_ERR(vm);
		vm = NULL;
	}
	qva = ret ? NULL : kzalloc(sizeof(*qva), GFP_KERNEL);
	if (!ret && !qva)
		ret = -ENOMEM;
	if (ret)
		goto out;
	va = &qva->base;
	mutex_lock(&vm->lock);
	if (QGPU_IOCTL_DBG(qdev, !qgpu_vm_reservation(vm, args->addr,
						      args->size)))
		ret = -EINVAL;
	else if (QGPU_IOCTL_DBG(qdev, !drm_gpuvm_interval_empty(&vm->gpuvm,
								args->addr,
								args->size)))
		ret = -EEXIST;
	else if (QGPU_IOCTL_DBG(qdev, vm->nmappings >= QGPU_VM_MAX_MAPPINGS))
		ret = -ENOSPC;
	if (!ret) {
		qva->seq = vm->map_seq + 1;
		qgpu_mm_lock(qdev, file->driver_priv);
		ret = qgpu_vm_map_locked(vm, bo, va, args);
		qgpu_mm_unlock(qdev);
	}
	if (!ret) {
		vm->map_seq++;
		vm->mapped_bytes += args->size;
		vm->nmappings++;
		qva = NULL;
	}
	mutex_unlock(&vm->lock);
out:
	kfree(qva);
	qgpu_vm_put(vm);
	drm_gem_object_put(&bo->base);
	return ret;
}

/**
 * qgpu_vm_bo_moved - the memory manager moves @bo: rewrite its entries
 * @pb: the move's paging buffer (the move's commands are already in it)
 * @bo: the allocation; its reservation object is locked
 * @seg: where it goes
 * @vram: its VRAM address there (VRAM segments)
 *
 * Every mapping of @bo, in every address space, gets entries for the new
 * place, and each address space's TLB is flushed, in the same paging
 * buffer: a DMA buffer queued after the move (it waits for the move's
 * fence) finds the same bytes at the same virtual addresses.
 */
int qgpu_vm_bo_moved(struct qgpu_paging *pb, struct qgpu_bo *bo, u32 seg,
		     u64 vram)
{
	struct drm_gpuvm_bo *vm_bo;
	struct drm_gpuva *va;
	int ret = 0;

	lockdep_assert_held(&to_qdev(bo->base.dev)->mm_lock);
	drm_gem_for_each_gpuvm_bo(vm_bo, &bo->base) {
		struct qgpu_vm *vm = to_qvm(vm_bo->vm);

		drm_gpuvm_bo_for_each_va(va, vm_bo) {
			ret = qgpu_pt_write_range(vm, pb, va->va.addr,
						  va->va.addr + va->va.range,
						  bo, seg, vram);
			if (ret)
				return ret;
		}
		ret = qgpu_paging_flush_tlb(pb, qgpu_vm_root_desc(vm));
		if (ret)
			return ret;
	}
	return 0;
}

static void qgpu_vm_free_tables(struct qgpu_device *qdev, struct qgpu_pt *pt)
{
	u32 i;

	for (i = 0; pt->child && i < QGPU_MMU_ENTRIES; i++)
		if (pt->child[i])
			qgpu_vm_free_tables(qdev, pt->child[i]);
	qgpu_pt_free(qdev, pt);
}

/*
 * Every mapping of @vm leaves the tree, its entries left as they are (the
 * tables go with them): under vm->lock and mm_lock, so that no move
 * rewrites entries of tables being freed. The allocations' references go
 * into @objs (one per mapping) for the caller to drop after mm_lock.
 * Return: the number of references, or -ENOMEM (nothing changed).
 */
static int qgpu_vm_drop_mappings(struct qgpu_vm *vm,
				 struct drm_gem_object ***objs)
{
	struct drm_gpuva *va, *next;
	u32 n = 0, i = 0;

	lockdep_assert_held(&vm->lock);
	lockdep_assert_held(&vm->qdev->mm_lock);
	drm_gpuvm_for_each_va(va, &vm->gpuvm)
		n++;
	*objs = kvmalloc_array(n ? n : 1, sizeof(**objs), GFP_KERNEL);
	if (!*objs)
		return -ENOMEM;
	drm_gpuvm_for_each_va_safe(va, next, &vm->gpuvm) {
		struct drm_gem_object *obj = va->gem.obj;

		drm_gem_object_get(obj);
		(*objs)[i++] = obj;
		qgpu_vm_remove(to_qbo(obj), va);
		qgpu_va_free(va);
	}
	vm->nmappings = 0;
	vm->mapped_bytes = 0;
	return i;
}

/*
 * After the VM's last work: its page tables go back to VRAM, and the
 * mappings left in it go with them (the allocations may go now).
 */
static void qgpu_vm_teardown(struct work_struct *work)
{
	struct qgpu_vm *vm = container_of(work, struct qgpu_vm, teardown);
	struct qgpu_device *qdev = vm->qdev;
	struct dma_fence **slots[] = {
		&vm->last_render, &vm->pt_fence, &vm->paging_fence,
	};
	struct drm_gem_object **objs;
	struct dma_fence *f;
	unsigned int i;
	int n;

	for (i = 0; i < ARRAY_SIZE(slots); i++) {
		f = qgpu_vm_fence(vm, slots[i]);
		if (f)
			dma_fence_wait(f, false);
		dma_fence_put(f);
	}
	mutex_lock(&vm->lock);
	mutex_lock(&qdev->mm_lock);
	n = qgpu_vm_drop_mappings(vm, &objs);
	if (n >= 0) {
		qgpu_vm_free_tables(qdev, vm->root);
		vm->root = NULL;
	}
	mutex_unlock(&qdev->mm_lock);
	mutex_unlock(&vm->lock);
	if (n < 0) {
		/* out of memory: the tables and mappings stay a while */
		msleep(20);
		queue_work(qdev->reap_wq, &vm->teardown);
		return;
	}
	while (n--)
		drm_gem_object_put(objs[n]);
	kvfree(objs);
	qgpu_vm_put(vm);
}

/**
 * qgpu_vm_file_fini - the file is closed: its address space goes
 * @qf: the file
 *
 * Its reservations go at once. Its mappings go at once too when none of
 * its virtual contexts is left (no DMA buffer of the file can run on its
 * page tables any more); else they stay, and the memory manager keeps
 * rewriting their entries when it moves the allocations, until the page
 * tables go: a buffer still queued reaches through the tables every
 * allocation mapped when it runs, also one mapped after it was queued,
 * whose reservation object does not hold its fence. The page tables are
 * freed by a worker once every virtual context of the file is released
 * and the VM's last paging is done (qgpu_vm_tables_put()), never waited
 * for here.
 */
void qgpu_vm_file_fini(struct qgpu_file *qf)
{
	struct qgpu_vm *vm = qf->vm;
	struct drm_mm_node *node, *next;
	struct qgpu_vm_unmap u = {};

	if (!vm)
		return;
	mutex_lock(&vm->lock);
	/* only the file uses the tables: no context is left to run on them */
	if (refcount_read(&vm->table_users) == 1) {
		mutex_lock(&vm->qdev->mm_lock);
		u.vm = vm;
		drm_gpuvm_sm_unmap(&vm->gpuvm, &u, QGPU_VM_USER_START,
				   QGPU_VM_USER_END - QGPU_VM_USER_START);
		mutex_unlock(&vm->qdev->mm_lock);
	}
	drm_mm_for_each_node_safe(node, next, &vm->reserved) {
		drm_mm_remove_node(node);
		kfree(node);
	}
	mutex_unlock(&vm->lock);
	qgpu_vm_unmap_done(&u);
	if (vm->syncobj)
		drm_syncobj_put(vm->syncobj);
	vm->syncobj = NULL;
	qf->vm = NULL;
	qgpu_vm_tables_put(vm);
}

/* A virtual context of the file runs in @vm: its page tables stay. */
void qgpu_vm_tables_get(struct qgpu_vm *vm)
{
	refcount_inc(&vm->table_users);
}

/**
 * qgpu_vm_tables_put - a user of @vm's page tables is gone
 * @vm: the address space
 *
 * The users are the file (until it is closed; its reference to @vm goes
 * with the last user) and each virtual context (until it is released,
 * when no job of it is left: every DMA buffer it queued ran or was
 * dropped). The vm's last queued buffer is not enough: another context's
 * buffer queued before it may still wait for a fence from elsewhere, and
 * runs on the tables once that signals. The last user queues the
 * teardown, which still waits for the VM's last paging. Any context.
 */
void qgpu_vm_tables_put(struct qgpu_vm *vm)
{
	if (!refcount_dec_and_test(&vm->table_users))
		return;
	if (!vm->root) {
		qgpu_vm_put(vm);
		return;
	}
	INIT_WORK(&vm->teardown, qgpu_vm_teardown);
	queue_work(vm->qdev->reap_wq, &vm->teardown);
}

/* The file's address space (created if it has none yet, with its syncobj) */
int qgpu_vm_info(struct drm_file *file, struct drm_qgpu_vm_info *info)
{
	struct qgpu_vm *vm = qgpu_vm_get(file);

	memset(info, 0, sizeof(*info));
	if (IS_ERR(vm))
		return PTR_ERR(vm);
	mutex_lock(&vm->lock);
	info->paging_fence_syncobj = vm->syncobj_handle;
	info->paging_fence = vm->paging_seqno;
	info->reserved_bytes = vm->reserved_bytes;
	info->mapped_bytes = vm->mapped_bytes;
	mutex_lock(&vm->qdev->mm_lock);
	info->page_tables = vm->page_tables;
	info->page_table_bytes = vm->page_tables * QGPU_MMU_TABLE_SIZE;
	info->root = vm->root_ready ? qgpu_vm_root_desc(vm) : 0;
	mutex_unlock(&vm->qdev->mm_lock);
	mutex_unlock(&vm->lock);
	qgpu_vm_put(vm);
	return 0;
}

/* Reservations and mappings in address order; *count: how many there are */
int qgpu_vm_layout(struct qgpu_file *qf, struct drm_qgpu_vm_layout_entry *e,
		   u32 max, u32 *count)
{
	struct qgpu_vm *vm = qgpu_vm_peek(qf);
	struct drm_mm_node *node;
	struct drm_gpuva *va;
	u32 n = 0;

	*count = 0;
	if (!vm)
		return 0;
	mutex_lock(&vm->lock);
	drm_mm_for_each_node(node, &vm->reserved) {
		if (e && n < max)
			e[n] = (struct drm_qgpu_vm_layout_entry) {
				.start = node->start, .size = node->size,
				.kind = QGPU_VM_LAYOUT_RESERVED,
			};
		n++;
		drm_gpuvm_for_each_va_range(va, &vm->gpuvm, node->start,
					    node->start + node->size) {
			if (e && n < max)
				e[n] = (struct drm_qgpu_vm_layout_entry) {
					.start = va->va.addr,
					.size = va->va.range,
					.kind = QGPU_VM_LAYOUT_MAPPING,
					.flags = va->flags & QGPU_GPUVA_READ_ONLY ?
						 QGPU_VM_MAP_READ_ONLY : 0,
					.offset = va->gem.offset,
					.segment = READ_ONCE(to_qbo(va->gem.obj)->seg),
				};
			n++;
		}
	}
	mutex_unlock(&vm->lock);
	qgpu_vm_put(vm);
	*count = n;
	return 0;
}
