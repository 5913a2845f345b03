// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: page tables and the paging process ("GpuMmu Example Scenarios",
 * WDK). Page tables are 4 KiB allocations committed to a VRAM segment and
 * counted in its used bytes; the CPU never writes them. The paging process
 * is the kernel's own address space (address space 0): its page tables
 * are set up at probe with physical UpdatePageTable operations, and its
 * address space holds
 *
 *   - a window onto the page tables of every process: a process's table
 *     is reached at QGPU_PP_WINDOW + slot * 4 KiB once the paging process's
 *     entry for that slot points at it (scenario "Updating page table
 *     entries of a process", steps 1-4), so that the process's entries are
 *     written virtually (steps 5-6);
 *   - a scratch area, where the source and destination of a transfer or a
 *     fill are mapped before TransferVirtual and FillVirtual run (scenarios
 *     "Transferring allocation content" and "Filling an allocation").
 *
 * Everything here runs under mm_lock and builds paging buffers; the
 * page-table format is the device contract's (include/qgpu/qgpu_mmu.h).
 */
#include <linux/idr.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <drm/drm_print.h>

#include "qgpu_device.h"
#include "qgpu_hw.h"
#include "qgpu_mm.h"
#include "qgpu_mm_priv.h"
#include "qgpu_paging.h"
#include "qgpu_trace.h"
#include "qgpu_vm.h"

/* The paging process's address space: window, then scratch (src, dst) */
#define QGPU_PP_WINDOW		0x0ull
/* 16 MiB: one process's address space takes a quarter of it at most */
#define QGPU_PP_WINDOW_SLOTS	(4 * QGPU_VM_MAX_PAGE_TABLES)
#define QGPU_PP_SCRATCH_PAGES	2048			/* 8 MiB a side */
#define QGPU_PP_SCRATCH_SRC	(16ull << 20)
#define QGPU_PP_SCRATCH_DST	(24ull << 20)
#define QGPU_PP_END		(32ull << 20)
#define QGPU_PP_L0		(QGPU_PP_END >> 21)	/* leaf tables */

/**
 * struct qgpu_pp - the paging process
 * @root: its root table
 * @l1: its one level-1 table (the first GiB)
 * @l0: its leaf tables, one per 2 MiB of QGPU_PP_WINDOW..QGPU_PP_END
 * @slots: the window's slots in use
 * @users: slots each user's address spaces hold (uid: xa_mk_value)
 * @desc: its root descriptor (MMU_PAGING_ROOT)
 */
struct qgpu_pp {
	struct qgpu_pt *root;
	struct qgpu_pt *l1;
	struct qgpu_pt *l0[QGPU_PP_L0];
	struct ida slots;
	struct xarray users;
	u64 desc;
};

/* Slots user @uid holds */
static unsigned long qgpu_pp_user_slots(struct qgpu_pp *pp, s64 uid)
{
	void *v = xa_load(&pp->users, uid);

	return v ? xa_to_value(v) : 0;
}

/*
 * A window slot for @pt of @vm. One address space holds at most
 * QGPU_VM_MAX_PAGE_TABLES tables and so do all the address spaces of one
 * user together (a quarter of the window each), so that neither a process
 * nor a user with many files takes the slots every other needs.
 */
static int qgpu_pt_slot_get(struct qgpu_vm *vm, struct qgpu_pt *pt)
{
	struct qgpu_pp *pp = vm->qdev->pp;
	unsigned long n = 0;
	int slot, ret;

	if (vm->user >= 0) {
		n = qgpu_pp_user_slots(pp, vm->user);
		if (n >= QGPU_VM_MAX_PAGE_TABLES)
			return -ENOSPC;
	}
	slot = ida_alloc_max(&pp->slots, QGPU_PP_WINDOW_SLOTS - 1, GFP_KERNEL);
	if (slot < 0)
		return slot == -ENOSPC ? -ENOSPC : -ENOMEM;
	if (vm->user >= 0) {
		ret = xa_err(xa_store(&pp->users, vm->user,
				      xa_mk_value(n + 1), GFP_KERNEL));
		if (ret) {
			ida_free(&pp->slots, slot);
			return -ENOMEM;
		}
	}
	pt->slot = slot;
	pt->user = vm->user;
	return 0;
}

static void qgpu_pt_slot_put(struct qgpu_pp *pp, struct qgpu_pt *pt)
{
	unsigned long n;

	ida_free(&pp->slots, pt->slot);
	pt->slot = -1;
	if (pt->user < 0)
		return;
	n = qgpu_pp_user_slots(pp, pt->user);
	/* replacing a present entry allocates nothing */
	if (n > 1)
		xa_store(&pp->users, pt->user, xa_mk_value(n - 1), GFP_NOWAIT);
	else
		xa_erase(&pp->users, pt->user);
	pt->user = -1;
}

static u64 qgpu_pt_addr(struct qgpu_device *qdev, struct qgpu_pt *pt)
{
	return qdev->seg[pt->seg].base + pt->node.start;
}

/* The root descriptor, or directory entry, that points at @pt */
u64 qgpu_pt_desc(struct qgpu_pt *pt)
{
	return qgpu_mmu_pte(pt->node.start + pt->seg_base, QGPU_PTE_VALID);
}

/* Physical address of the paging process's entry for its VA @va */
static u64 qgpu_pp_entry(struct qgpu_device *qdev, u64 va)
{
	struct qgpu_pt *l0 = qdev->pp->l0[va >> 21];

	return qgpu_pt_addr(qdev, l0) + qgpu_mmu_index(va, 0) * 8;
}

static u64 qgpu_pt_window(struct qgpu_pt *pt)
{
	return QGPU_PP_WINDOW + (u64)pt->slot * QGPU_MMU_TABLE_SIZE;
}

/**
 * qgpu_pt_alloc - a page table in VRAM (the non-visible segment first)
 * @qdev: device
 * @level: its level
 * @owner: the video memory of the process whose table it is, whose usage
 *	it counts in (QueryVideoMemoryInfo); NULL for the paging process
 * @out: the table, not yet zeroed nor in the window
 *
 * May evict allocations to make room. Return: 0, -ENOSPC or -ENOMEM.
 */
int qgpu_pt_alloc(struct qgpu_device *qdev, u32 level,
		  struct qgpu_vidmem *owner, struct qgpu_pt **out)
{
	static const u32 order[] = { QGPU_SEG_LOCAL, QGPU_SEG_VISIBLE };
	struct qgpu_pt *pt;
	unsigned int i;
	int ret = -ENOSPC;

	lockdep_assert_held(&qdev->mm_lock);
	pt = kzalloc(sizeof(*pt), GFP_KERNEL);
	if (!pt)
		return -ENOMEM;
	pt->id = ++qdev->pt_ids;
	pt->level = level;
	pt->slot = -1;
	pt->user = -1;
	INIT_LIST_HEAD(&pt->fresh);
	if (level) {
		pt->child = kvcalloc(QGPU_MMU_ENTRIES, sizeof(*pt->child),
				     GFP_KERNEL);
		if (!pt->child) {
			kfree(pt);
			return -ENOMEM;
		}
	}
	for (i = 0; i < ARRAY_SIZE(order) && ret; i++) {
		if (!qgpu_mm_seg_present(qdev, order[i]))
			continue;
		ret = qgpu_mm_find_space(qdev, &qdev->seg[order[i]],
					 QGPU_MMU_TABLE_SIZE, &pt->node, NULL);
		if (!ret)
			pt->seg = order[i];
	}
	trace_qgpu_pt_alloc(pt->id, level, ret ? 0 : pt->seg,
			    ret ? 0 : pt->node.start, ret,
			    owner ? owner->id : 0);
	if (ret) {
		kvfree(pt->child);
		kfree(pt);
		return ret;
	}
	pt->seg_base = qdev->seg[pt->seg].base;
	qdev->seg[pt->seg].used += QGPU_MMU_TABLE_SIZE;
	qdev->page_tables++;
	if (owner) {
		pt->owner = qgpu_vidmem_get(owner);
		qgpu_budget_pt(qdev, pt->owner, pt->seg, true);
	}
	*out = pt;
	return 0;
}

/* Free @pt (not its children); the device must be done with it. */
void qgpu_pt_free(struct qgpu_device *qdev, struct qgpu_pt *pt)
{
	lockdep_assert_held(&qdev->mm_lock);
	if (pt->slot >= 0 && qdev->pp)
		qgpu_pt_slot_put(qdev->pp, pt);
	/* after the device is gone, the segments let go of every node */
	if (drm_mm_node_allocated(&pt->node)) {
		trace_qgpu_pt_free(pt->id);
		qdev->seg[pt->seg].used -= QGPU_MMU_TABLE_SIZE;
		drm_mm_remove_node(&pt->node);
		qgpu_budget_pt(qdev, pt->owner, pt->seg, false);
	}
	qgpu_vidmem_put(pt->owner);
	qdev->page_tables--;
	kvfree(pt->child);
	kfree(pt);
}

/*
 * A table of @vm's at @level with its window slot, counted in @vm's user's
 * %QGPU_VM_MAX_PAGE_TABLES (a user at its share evicts nothing for a table
 * it cannot have). Return: 0, -ENOSPC or -ENOMEM.
 */
static int qgpu_pt_new_counted(struct qgpu_vm *vm, u32 level,
			       struct qgpu_vidmem *owner, struct qgpu_pt **out)
{
	struct qgpu_device *qdev = vm->qdev;
	struct qgpu_pt *pt;
	int ret;

	if (vm->user >= 0 && qgpu_pp_user_slots(qdev->pp, vm->user) >=
	    QGPU_VM_MAX_PAGE_TABLES)
		return -ENOSPC;
	ret = qgpu_pt_alloc(qdev, level, owner, &pt);
	if (ret)
		return ret;
	ret = qgpu_pt_slot_get(vm, pt);
	if (ret) {
		qgpu_pt_free(qdev, pt);
		return ret;
	}
	*out = pt;
	return 0;
}

/**
 * qgpu_pt_root_new - an address space's root table and its window slot
 * @vm: the address space being created (its user known)
 * @owner: the process the root counts in (QueryVideoMemoryInfo)
 *
 * The slot is taken with the table, so that the root counts in its
 * user's %QGPU_VM_MAX_PAGE_TABLES from the start: an address space that
 * is only asked about (%QGPU_QUERY_VM_INFO creates it) holds its root's
 * VRAM too, and a user with many files may not hold more than its share.
 * Return: 0, -ENOSPC or -ENOMEM.
 */
int qgpu_pt_root_new(struct qgpu_vm *vm, struct qgpu_vidmem *owner)
{
	lockdep_assert_held(&vm->qdev->mm_lock);
	return qgpu_pt_new_counted(vm, 2, owner, &vm->root);
}

/* A new table, its window slot, hung under @parent at @index */
static int qgpu_pt_new(struct qgpu_vm *vm, struct qgpu_pt *parent,
		       u32 index, u32 level, struct list_head *fresh)
{
	struct qgpu_pt *pt;
	int ret;

	/* one process may not take the window's slots of every other */
	if (vm->page_tables >= QGPU_VM_MAX_PAGE_TABLES)
		return -ENOSPC;
	ret = qgpu_pt_new_counted(vm, level, vm->root->owner, &pt);
	if (ret)
		return ret;
	pt->parent = parent;
	pt->index = index;
	if (parent)
		parent->child[index] = pt;
	vm->page_tables++;
	list_add_tail(&pt->fresh, fresh);
	return 0;
}

/**
 * qgpu_pt_prepare - the page tables [@start, @end) of @vm needs
 * @vm: address space
 * @start: first VA
 * @end: end VA
 * @fresh: gets the tables created, parents first
 *
 * Only allocates (and may evict to do so): nothing is written to the
 * device until qgpu_pt_commit_fresh(). Called before any reservation
 * object is locked.
 */
int qgpu_pt_prepare(struct qgpu_vm *vm, u64 start, u64 end,
		    struct list_head *fresh)
{
	struct qgpu_pt *root = vm->root, *l1;
	u64 va;
	u32 i2, i1;
	int ret;

	lockdep_assert_held(&vm->qdev->mm_lock);
	if (!vm->root_ready && list_empty(&root->fresh)) {
		/* its slot is the root's from the start (qgpu_pt_root_new()) */
		if (root->slot < 0) {
			ret = qgpu_pt_slot_get(vm, root);
			if (ret)
				return ret;
		}
		list_add_tail(&root->fresh, fresh);
	}
	for (va = start & ~(qgpu_mmu_entry_span(1) - 1); va < end;
	     va += qgpu_mmu_entry_span(1)) {
		i2 = qgpu_mmu_index(va, 2);
		i1 = qgpu_mmu_index(va, 1);
		if (!root->child[i2]) {
			ret = qgpu_pt_new(vm, root, i2, 1, fresh);
			if (ret)
				return ret;
		}
		l1 = root->child[i2];
		if (!l1->child[i1]) {
			ret = qgpu_pt_new(vm, l1, i1, 0, fresh);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * Steps 1-4 of "Updating page table entries of a process" for the tables
 * qgpu_pt_prepare() created: each is zeroed, the paging process's window
 * entry for its slot is pointed at it, the paging process's TLB is
 * flushed, and then each table's entry in its parent is written through
 * the window.
 */
int qgpu_pt_commit_fresh(struct qgpu_vm *vm, struct qgpu_paging *pb,
			 struct list_head *fresh)
{
	struct qgpu_device *qdev = vm->qdev;
	u64 root = qgpu_vm_root_desc(vm);
	struct qgpu_pt *pt;
	u64 e;
	int ret = 0;

	if (list_empty(fresh))
		return 0;
	list_for_each_entry(pt, fresh, fresh) {
		ret = qgpu_paging_fill(pb, QGPU_MMU_TABLE_SIZE,
				       qgpu_pt_addr(qdev, pt), 0);
		e = qgpu_pt_desc(pt);
		if (!ret)
			ret = qgpu_paging_update_pt(pb, qdev->pp->desc,
						    qgpu_pp_entry(qdev, qgpu_pt_window(pt)),
						    &e, 1, false);
		if (ret)
			return ret;
	}
	ret = qgpu_paging_flush_tlb(pb, qdev->pp->desc);
	list_for_each_entry(pt, fresh, fresh) {
		if (ret || !pt->parent)
			continue;
		e = qgpu_pt_desc(pt);
		ret = qgpu_paging_update_pt(pb, root,
					    qgpu_pt_window(pt->parent) +
					    pt->index * 8, &e, 1, true);
	}
	/*
	 * A new address space: the TLBs tag what they cache by the root
	 * table's address (docs/hw-spec.md 15.5), and the root of a closed
	 * address space may have been here. Its translations, never flushed
	 * when it went, must not serve this one.
	 */
	if (!ret && !list_empty(&vm->root->fresh))
		ret = qgpu_paging_flush_tlb(pb, root);
	return ret;
}

/**
 * qgpu_pt_fresh_done - the paging buffer with the fresh tables was queued
 *	(@ok) or dropped
 * @vm: address space
 * @fresh: the tables of qgpu_pt_prepare()
 * @ok: queued; else the tables are freed again
 */
void qgpu_pt_fresh_done(struct qgpu_vm *vm, struct list_head *fresh, bool ok)
{
	struct qgpu_device *qdev = vm->qdev;
	struct qgpu_pt *pt, *tmp;

	list_for_each_entry_safe_reverse(pt, tmp, fresh, fresh) {
		list_del_init(&pt->fresh);
		if (ok) {
			if (pt == vm->root)
				vm->root_ready = true;
			continue;
		}
		if (pt == vm->root)
			continue;	/* it keeps its slot, tried again later */
		pt->parent->child[pt->index] = NULL;
		vm->page_tables--;
		qgpu_pt_free(qdev, pt);
	}
}

/* The leaf table of @va, if it exists */
static struct qgpu_pt *qgpu_pt_leaf(struct qgpu_vm *vm, u64 va)
{
	struct qgpu_pt *l1 = vm->root->child[qgpu_mmu_index(va, 2)];

	return l1 ? l1->child[qgpu_mmu_index(va, 1)] : NULL;
}

/**
 * struct qgpu_pt_where - where a mapped allocation's content is
 * @moved: an allocation being moved (its books still say where it was)
 * @seg: where @moved goes
 * @vram: its VRAM address there
 * @hole_start: start of a range being unmapped: invalid entries, whatever
 *	the mappings (still in the tree) say
 * @hole_end: its end (equal to @hole_start: none)
 */
struct qgpu_pt_where {
	struct qgpu_bo *moved;
	u32 seg;
	u64 vram;
	u64 hole_start;
	u64 hole_end;
};

/* The entry for the 4 KiB page at @addr of mapping @va (NULL: invalid) */
static u64 qgpu_pt_entry(struct drm_gpuva *va, u64 addr,
			 const struct qgpu_pt_where *w, bool *local)
{
	struct qgpu_bo *bo;
	u64 off, flags = QGPU_PTE_VALID, vram;
	u32 seg;

	*local = false;
	if (!va)
		return 0;
	bo = to_qbo(va->gem.obj);
	off = va->gem.offset + (addr - va->va.addr);
	if (va->flags & QGPU_GPUVA_READ_ONLY)
		flags |= QGPU_PTE_READ_ONLY;
	seg = bo == w->moved ? w->seg : bo->seg;
	vram = bo == w->moved ? w->vram :
	       to_qdev(bo->base.dev)->seg[seg].base + bo->node.start;
	if (seg == QGPU_SEG_VISIBLE || seg == QGPU_SEG_LOCAL) {
		*local = true;
		return qgpu_mmu_pte(vram + off, flags);
	}
	return qgpu_mmu_pte(bo->dma[off >> PAGE_SHIFT],
			    flags | QGPU_PTE_SYSTEM);
}

/* Does @va map the whole 64 KiB page at @g, in VRAM 64 KiB aligned? */
static bool qgpu_pt_big(struct drm_gpuva *va, u64 g, u64 entry, bool local)
{
	return local && va && va->va.addr <= g &&
	       g + QGPU_MMU_PAGE_64K <= va->va.addr + va->va.range &&
	       !((entry & QGPU_PTE_ADDR_MASK) & (QGPU_MMU_PAGE_64K - 1));
}

/* Entries for [@a, @b) (one leaf table) from the VM's mappings */
static void qgpu_pt_entries(struct qgpu_vm *vm, u64 a, u64 b, u64 *e,
			    const struct qgpu_pt_where *w)
{
	struct drm_gpuva *va = NULL;
	u64 addr;
	u32 i = 0;
	bool local;

	for (addr = a; addr < b; addr += QGPU_MMU_PAGE_4K, i++) {
		if (addr >= w->hole_start && addr < w->hole_end) {
			e[i] = 0;
			continue;
		}
		if (!va || addr < va->va.addr ||
		    addr >= va->va.addr + va->va.range)
			va = drm_gpuva_find_first(&vm->gpuvm, addr,
						  QGPU_MMU_PAGE_4K);
		e[i] = qgpu_pt_entry(va, addr, w, &local);
		/* a 64 KiB entry only where no page of the group is a hole */
		if (!(addr & (QGPU_MMU_PAGE_64K - 1)) &&
		    qgpu_pt_big(va, addr, e[i], local) &&
		    (w->hole_end <= addr ||
		     w->hole_start >= addr + QGPU_MMU_PAGE_64K))
			e[i] |= QGPU_PTE_64K;
	}
}

/* The entries of [@start, @end), where @w says */
static int qgpu_pt_write(struct qgpu_vm *vm, struct qgpu_paging *pb,
			 u64 start, u64 end, const struct qgpu_pt_where *w)
{
	u64 root = qgpu_vm_root_desc(vm), a, b, *e;
	struct qgpu_pt *leaf;
	int ret = 0;

	lockdep_assert_held(&vm->qdev->mm_lock);
	e = kvmalloc_array(QGPU_MMU_ENTRIES, sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	start &= ~(QGPU_MMU_PAGE_64K - 1);
	end = ALIGN(end, QGPU_MMU_PAGE_64K);
	for (a = start; a < end && !ret; a = b) {
		b = min(end, (a | (qgpu_mmu_entry_span(1) - 1)) + 1);
		leaf = qgpu_pt_leaf(vm, a);
		if (!leaf)
			continue;
		qgpu_pt_entries(vm, a, b, e, w);
		ret = qgpu_paging_update_pt(pb, root, qgpu_pt_window(leaf) +
					    qgpu_mmu_index(a, 0) * 8, e,
					    (b - a) >> 12, true);
	}
	kvfree(e);
	return ret;
}

/**
 * qgpu_pt_write_range - step 5: rewrite @vm's entries for [@start, @end)
 * @vm: address space
 * @pb: paging buffer being built
 * @start: first VA
 * @end: end VA
 * @moved: an allocation whose new place (@seg, @vram) its books do not
 *	show yet, or NULL
 * @seg: see @moved
 * @vram: see @moved
 *
 * The entries are computed from the VM's mappings, whole 64 KiB groups at
 * a time, so that 64 KiB entries are set exactly where a mapping covers
 * the group in VRAM. Ranges without a leaf table are skipped (nothing is
 * mapped there). The caller flushes the TLB (step 6).
 */
int qgpu_pt_write_range(struct qgpu_vm *vm, struct qgpu_paging *pb,
			u64 start, u64 end, struct qgpu_bo *moved, u32 seg,
			u64 vram)
{
	const struct qgpu_pt_where w = { moved, seg, vram, 0, 0 };

	return qgpu_pt_write(vm, pb, start, end, &w);
}

/**
 * qgpu_pt_write_hole - rewrite @vm's entries for [@start, @end) as invalid
 * @vm: address space
 * @pb: paging buffer being built
 * @start: first VA of the range being unmapped
 * @end: its end
 *
 * Before the mappings leave the tree: the rest of each 64 KiB group at the
 * edges keeps what the tree says. The caller flushes the TLB.
 */
int qgpu_pt_write_hole(struct qgpu_vm *vm, struct qgpu_paging *pb,
		       u64 start, u64 end)
{
	const struct qgpu_pt_where w = { NULL, 0, 0, start, end };

	return qgpu_pt_write(vm, pb, start, end, &w);
}

/* Map @n pages of one side of a move at scratch VA @base */
static int qgpu_pp_scratch_map(struct qgpu_paging *pb, struct qgpu_bo *bo,
			       u64 base, u32 first, u32 n, u64 vram,
			       bool in_vram)
{
	struct qgpu_device *qdev = pb->qdev;
	u64 *e, va;
	u32 i, k, m;
	int ret = 0;

	e = kvmalloc_array(QGPU_MMU_ENTRIES, sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	for (i = 0; i < n && !ret; i += m) {
		va = base + ((u64)i << PAGE_SHIFT);
		m = min_t(u32, n - i, QGPU_MMU_ENTRIES - qgpu_mmu_index(va, 0));
		for (k = 0; k < m; k++)
			e[k] = in_vram ?
			       qgpu_mmu_pte(vram + ((u64)(first + i + k) << PAGE_SHIFT),
					    QGPU_PTE_VALID) :
			       qgpu_mmu_pte(bo->dma[first + i + k],
					    QGPU_PTE_VALID | QGPU_PTE_SYSTEM);
		ret = qgpu_paging_update_pt(pb, qdev->pp->desc,
					    qgpu_pp_entry(qdev, va), e, m, false);
	}
	kvfree(e);
	return ret;
}

static bool qgpu_seg_is_vram(u32 seg)
{
	return seg == QGPU_SEG_VISIBLE || seg == QGPU_SEG_LOCAL;
}

/* Is a move of @bo from @src to @dst done through the paging process? */
bool qgpu_pp_can_move(struct qgpu_bo *bo, u32 src, u32 dst)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);

	if (!qdev->pp || list_empty(&bo->base.gpuva.list))
		return false;
	if (!qgpu_seg_is_vram(src) && src != QGPU_SEG_SYSTEM)
		return false;
	if (!qgpu_seg_is_vram(dst) && dst != QGPU_SEG_SYSTEM)
		return false;
	return qgpu_seg_is_vram(src) || qgpu_seg_is_vram(dst);
}

/**
 * qgpu_pp_build_move - a move through the paging process's scratch area
 * @pb: paging buffer being built
 * @bo: the allocation (backing pages present)
 * @src_addr: its VRAM address, if @src is a VRAM segment
 * @src: where it is
 * @dst_addr: the VRAM address it goes to, if @dst is a VRAM segment
 * @dst: where it goes
 *
 * "Transferring allocation content from one location to another": source
 * and destination are mapped into the scratch area, the paging process's
 * TLB is flushed, and TransferVirtual copies; "Filling an allocation with
 * a pattern" when the allocation is new in VRAM: FillVirtual with zeros.
 * Chunks of QGPU_PP_SCRATCH_PAGES; the paging engine runs them in order.
 */
int qgpu_pp_build_move(struct qgpu_paging *pb, struct qgpu_bo *bo,
		       u64 src_addr, u32 src, u64 dst_addr, u32 dst)
{
	struct qgpu_device *qdev = pb->qdev;
	bool fill = qgpu_seg_is_vram(dst) && bo->pristine;

	u32 i, n;
	u64 bytes;
	int ret = 0;

	for (i = 0; i < bo->npages && !ret; i += n) {
		n = min_t(u32, bo->npages - i, QGPU_PP_SCRATCH_PAGES);
		bytes = (u64)n << PAGE_SHIFT;
		ret = qgpu_pp_scratch_map(pb, bo, QGPU_PP_SCRATCH_DST, i, n,
					  dst_addr, qgpu_seg_is_vram(dst));
		if (!ret && !fill)
			ret = qgpu_pp_scratch_map(pb, bo, QGPU_PP_SCRATCH_SRC, i,
						  n, src_addr,
						  qgpu_seg_is_vram(src));
		if (!ret)
			ret = qgpu_paging_flush_tlb(pb, qdev->pp->desc);
		if (ret)
			break;
		if (fill)
			ret = qgpu_paging_fill_virtual(pb, bytes,
						       QGPU_PP_SCRATCH_DST, 0);
		else
			ret = qgpu_paging_transfer_virtual(pb, bytes,
							   QGPU_PP_SCRATCH_SRC,
							   QGPU_PP_SCRATCH_DST);
	}
	return ret;
}

/* "The paging process initialization": its tables, set up physically */
static int qgpu_pp_tables(struct qgpu_device *qdev, struct qgpu_paging *pb)
{
	struct qgpu_pp *pp = qdev->pp;
	u64 e[QGPU_PP_L0];
	u32 i;
	int ret;

	ret = qgpu_pt_alloc(qdev, 2, NULL, &pp->root);
	if (!ret)
		ret = qgpu_pt_alloc(qdev, 1, NULL, &pp->l1);
	for (i = 0; !ret && i < QGPU_PP_L0; i++)
		ret = qgpu_pt_alloc(qdev, 0, NULL, &pp->l0[i]);
	if (ret)
		return ret;
	/* the paging process's tables are the driver's own reservation */
	qdev->seg[pp->root->seg].reserved += QGPU_MMU_TABLE_SIZE;
	qdev->seg[pp->l1->seg].reserved += QGPU_MMU_TABLE_SIZE;
	for (i = 0; i < QGPU_PP_L0; i++)
		qdev->seg[pp->l0[i]->seg].reserved += QGPU_MMU_TABLE_SIZE;
	ret = qgpu_paging_fill(pb, QGPU_MMU_TABLE_SIZE,
			       qgpu_pt_addr(qdev, pp->root), 0);
	if (!ret)
		ret = qgpu_paging_fill(pb, QGPU_MMU_TABLE_SIZE,
				       qgpu_pt_addr(qdev, pp->l1), 0);
	for (i = 0; !ret && i < QGPU_PP_L0; i++) {
		ret = qgpu_paging_fill(pb, QGPU_MMU_TABLE_SIZE,
				       qgpu_pt_addr(qdev, pp->l0[i]), 0);
		e[i] = qgpu_pt_desc(pp->l0[i]);
	}
	pp->desc = qgpu_pt_desc(pp->root);
	if (!ret) {
		u64 l1 = qgpu_pt_desc(pp->l1);

		ret = qgpu_paging_update_pt(pb, pp->desc,
					    qgpu_pt_addr(qdev, pp->root), &l1, 1,
					    false);
	}
	if (!ret)
		ret = qgpu_paging_update_pt(pb, pp->desc,
					    qgpu_pt_addr(qdev, pp->l1), e,
					    QGPU_PP_L0, false);
	return ret;
}

/**
 * qgpu_pp_init - create the paging process (at probe)
 * @qdev: device; the segments and the paging buffer exist
 *
 * Its page tables are created, committed to VRAM and initialised with
 * UpdatePageTable, and MMU_PAGING_ROOT names its root. Without an MMU
 * there is no paging process and no virtual addressing.
 */
int qgpu_pp_init(struct qgpu_device *qdev)
{
	struct qgpu_paging pb;
	struct dma_fence *f;
	long t;
	int ret;

	/*
	 * One system page-table entry per CPU page (&qgpu_bo.dma), and the
	 * scratch area's moves count CPU pages: with larger CPU pages a move
	 * would run through stale scratch entries.
	 */
	BUILD_BUG_ON(PAGE_SIZE != QGPU_MMU_PAGE_4K);

	if (!qdev->has_mmu)
		return 0;
	qdev->pp = kzalloc(sizeof(*qdev->pp), GFP_KERNEL);
	if (!qdev->pp)
		return -ENOMEM;
	ida_init(&qdev->pp->slots);
	xa_init(&qdev->pp->users);
	qgpu_mm_lock(qdev, NULL);
	ret = qgpu_paging_begin(qdev, &pb);
	if (!ret) {
		ret = qgpu_pp_tables(qdev, &pb);
		if (ret)
			qgpu_paging_abort(&pb);
	}
	f = ret ? NULL : qgpu_paging_submit(&pb);
	qgpu_mm_unlock(qdev);
	if (ret)
		return ret;
	qgpu_hw_mmu_paging_root(qdev, qdev->pp->desc);
	t = dma_fence_wait_timeout(f, false, msecs_to_jiffies(10000));
	ret = t <= 0 ? -ETIMEDOUT : f->error;
	dma_fence_put(f);
	if (ret)
		drm_err(&qdev->drm, "paging process set-up failed (%d)\n", ret);
	return ret;
}

void qgpu_pp_fini(struct qgpu_device *qdev)
{
	struct qgpu_pp *pp = qdev->pp;
	u32 i;

	if (!pp)
		return;
	mutex_lock(&qdev->mm_lock);
	for (i = 0; i < QGPU_PP_L0 + 2; i++) {
		struct qgpu_pt *pt = i < QGPU_PP_L0 ? pp->l0[i] :
				     i == QGPU_PP_L0 ? pp->l1 : pp->root;

		if (!pt)
			continue;
		if (pp->desc)
			qdev->seg[pt->seg].reserved -= QGPU_MMU_TABLE_SIZE;
		qgpu_pt_free(qdev, pt);
	}
	/*
	 * Gone under mm_lock: an address space's tables freed later (its
	 * teardown, after the removal) test qdev->pp under it before giving
	 * their window slot back.
	 */
	qdev->pp = NULL;
	mutex_unlock(&qdev->mm_lock);
	ida_destroy(&pp->slots);
	xa_destroy(&pp->users);
	kfree(pp);
}
