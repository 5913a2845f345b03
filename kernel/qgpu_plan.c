// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: placement plans (see qgpu_plan.h). The dry run records, the
 * rollback restores the books exactly (same nodes at the same offsets), and
 * the replay therefore meets the same state at every decision and can
 * follow the recorded one. Everything here runs under mm_lock.
 */
#include <linux/slab.h>
#include <drm/drm_print.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_mm_priv.h"
#include "qgpu_plan.h"

/* Make room for one more element of @size bytes in *@arr. */
static int qgpu_plan_grow(void **arr, u32 n, u32 *cap, size_t size)
{
	void *p;
	u32 ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	p = kvmalloc_array(ncap, size, GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	if (*arr)
		memcpy(p, *arr, (size_t)n * size);
	kvfree(*arr);
	*arr = p;
	*cap = ncap;
	return 0;
}

void qgpu_plan_begin(struct qgpu_device *qdev, struct qgpu_plan *plan)
{
	lockdep_assert_held(&qdev->mm_lock);
	memset(plan, 0, sizeof(*plan));
	plan->mode = QGPU_PLAN_DRY;
	plan->lru_tick = qdev->lru_tick;
	qdev->plan = plan;
}

/**
 * qgpu_plan_save - record where @bo is before a dry-run move changes it
 * @qdev: device
 * @bo: the allocation about to move
 *
 * Return: 0 or -ENOMEM.
 */
int qgpu_plan_save(struct qgpu_device *qdev, struct qgpu_bo *bo)
{
	struct qgpu_plan *p = qdev->plan;
	struct qgpu_plan_undo *u;
	int ret;

	ret = qgpu_plan_grow((void **)&p->undo, p->nundo, &p->cap_undo,
			     sizeof(*p->undo));
	if (ret)
		return ret;
	u = &p->undo[p->nundo++];
	u->bo = bo;
	u->seg = bo->seg;
	u->start = bo->node.start;
	u->size = bo->node.size;
	u->tick = bo->lru_tick;
	u->pristine = bo->pristine;
	u->evicted = bo->evicted;
	return 0;
}

/**
 * qgpu_plan_record - record a placement decision of the dry run
 * @qdev: device
 * @ret: what the decision returned
 * @start: where the node went (when @ret is 0)
 * @victims: allocations chosen for eviction, or NULL
 * @count: number of @victims
 *
 * Return: 0 or -ENOMEM.
 */
int qgpu_plan_record(struct qgpu_device *qdev, int ret, u64 start,
		     struct qgpu_bo **victims, u32 count)
{
	struct qgpu_plan *p = qdev->plan;
	struct qgpu_plan_choice *c;
	int err;

	err = qgpu_plan_grow((void **)&p->choice, p->nchoice, &p->cap_choice,
			     sizeof(*p->choice));
	while (!err && p->nvictims + count > p->cap_victims)
		err = qgpu_plan_grow((void **)&p->victims, p->cap_victims,
				     &p->cap_victims, sizeof(*p->victims));
	if (err)
		return err;
	c = &p->choice[p->nchoice++];
	c->ret = ret;
	c->start = start;
	c->first = p->nvictims;
	c->count = count;
	if (count)
		memcpy(p->victims + p->nvictims, victims,
		       count * sizeof(*victims));
	p->nvictims += count;
	return 0;
}

/**
 * qgpu_plan_follow - the next decision of the replay
 * @qdev: device
 *
 * Return: the decision, or NULL when the replay asks for more decisions
 * than the dry run made (it cannot: the same walk meets the same state).
 */
struct qgpu_plan_choice *qgpu_plan_follow(struct qgpu_device *qdev)
{
	struct qgpu_plan *p = qdev->plan;

	if (p->next >= p->nchoice)
		return NULL;
	return &p->choice[p->next++];
}

/*
 * Put @bo's books back where the dry run found it: in segment @seg (or
 * system memory) at [@start, @start + @size). The rollback undoes moves
 * last first, so the range is free again.
 */
static void qgpu_plan_restore_bo(struct qgpu_bo *bo, u32 seg, u64 start,
				 u64 size)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);

	lockdep_assert_held(&to_qdev(bo->base.dev)->mm_lock);
	if (bo->seg != QGPU_SEG_SYSTEM) {
		qgpu_seg_account(qdev, bo, false);
		if (drm_mm_node_allocated(&bo->node))
			drm_mm_remove_node(&bo->node);
	}
	bo->seg = seg;
	if (seg == QGPU_SEG_SYSTEM)
		return;
	memset(&bo->node, 0, sizeof(bo->node));
	bo->node.start = start;
	bo->node.size = size;
	if (drm_WARN_ON(&qdev->drm,
			drm_mm_reserve_node(&qdev->seg[seg].mm, &bo->node))) {
		bo->seg = QGPU_SEG_SYSTEM;
		return;
	}
	qgpu_seg_account(qdev, bo, true);
}

/* Undo the dry run's moves, last first: every node back at its offset. */
void qgpu_plan_rollback(struct qgpu_device *qdev)
{
	struct qgpu_plan *p = qdev->plan;
	u32 i;

	lockdep_assert_held(&qdev->mm_lock);
	for (i = p->nundo; i--;) {
		struct qgpu_plan_undo *u = &p->undo[i];

		qgpu_plan_restore_bo(u->bo, u->seg, u->start, u->size);
		u->bo->lru_tick = u->tick;
		u->bo->pristine = u->pristine;
		u->bo->evicted = u->evicted;
	}
	p->nundo = 0;
	qdev->lru_tick = p->lru_tick;
}

void qgpu_plan_replay_start(struct qgpu_device *qdev)
{
	qdev->plan->mode = QGPU_PLAN_REPLAY;
	qdev->plan->next = 0;
}

void qgpu_plan_end(struct qgpu_device *qdev)
{
	struct qgpu_plan *p = qdev->plan;

	kvfree(p->undo);
	kvfree(p->choice);
	kvfree(p->victims);
	qdev->plan = NULL;
}
