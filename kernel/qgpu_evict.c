// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: finding room in a segment and eviction. The victim policy orders
 * the unpinned allocations, drm_mm's eviction scan says when enough are
 * chosen, and each victim moves to the aperture segment or to system
 * memory. Every placement decision is recorded by a plan's dry run and
 * followed by its replay.
 */
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <drm/drm_mm.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_mm_priv.h"
#include "qgpu_plan.h"
#include "qgpu_policy.h"
#include "qgpu_trace.h"

/**
 * qgpu_policy_parse - a victim policy by name or by number
 * @buf: "lru", "gdsf"... or "0", "3"... (enum qgpu_policy_id)
 * @policy: returns the policy
 *
 * Return: 0, or -EINVAL for anything else.
 */
int qgpu_policy_parse(const char *buf, unsigned int *policy)
{
	unsigned int i;

	for (i = 0; i < QGPU_POLICY_COUNT; i++)
		if (sysfs_streq(buf, qgpu_policy_name(i))) {
			*policy = i;
			return 0;
		}
	if (kstrtouint(buf, 0, &i) || i >= QGPU_POLICY_COUNT)
		return -EINVAL;
	*policy = i;
	return 0;
}

/* The policy every device starts with (module parameter "policy"). */
static unsigned int qgpu_default_policy = QGPU_POLICY_LRU;

static int qgpu_policy_param_set(const char *val,
				 const struct kernel_param *kp)
{
	return qgpu_policy_parse(val, kp->arg);
}

static int qgpu_policy_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  qgpu_policy_name(*(unsigned int *)kp->arg));
}

static const struct kernel_param_ops qgpu_policy_param_ops = {
	.set = qgpu_policy_param_set,
	.get = qgpu_policy_param_get,
};

module_param_cb(policy, &qgpu_policy_param_ops, &qgpu_default_policy, 0444);
MODULE_PARM_DESC(policy,
		 "victim policy of every device at probe: lru, largest, lowest-offset, gdsf, future-use, reuse-interval (or 0-5; per device at run time: debugfs qgpu_policy)");

unsigned int qgpu_mm_default_policy(void)
{
	return qgpu_default_policy;
}

/**
 * qgpu_mm_mark_future - mark what the rest of the walk uses
 * @qdev: device, its walk's known future set (&qgpu_device.future)
 *
 * Every allocation that the entries from &qgpu_future.pos on use gets the
 * position of its next use; the stamp returned says which allocations
 * those are (&qgpu_bo.future_stamp equal to it). Under mm_lock.
 * Return: the stamp.
 */
u64 qgpu_mm_mark_future(struct qgpu_device *qdev)
{
	const struct qgpu_future *f = qdev->future;
	u64 stamp = ++qdev->future_stamp;
	u32 j;

	lockdep_assert_held(&qdev->mm_lock);
	for (j = f->n; j-- > f->pos;) {
		struct qgpu_bo *bo = f->bos[f->pe[j].alloc_index];

		if (bo) {
			bo->future_stamp = stamp;
			bo->future_pos = j;
		}
	}
	return stamp;
}

/* What the victim policy knows of @bo (qgpu_policy.h) */
static void qgpu_mm_victim(struct qgpu_device *qdev, struct qgpu_bo *bo,
			   u64 stamp, struct qgpu_victim *v)
{
	memset(v, 0, sizeof(*v));
	v->size = bo->node.size;
	v->last_use = bo->lru_tick;
	v->offset = bo->node.start;
	v->cookie = bo;
	v->uses = bo->uses;
	v->use_tick = bo->use_tick;
	v->use_gap = bo->use_gap;
	v->now = qdev->lru_tick;
	v->priority = bo->priority;
	if (bo->offered) {
		/* offered: discarded, not copied; lower offer priority first */
		v->flags |= QGPU_VICTIM_OFFERED;
		v->priority = bo->offer_priority;
	}
	if (stamp)
		v->next_use = bo->future_stamp == stamp ?
			      bo->future_pos - qdev->future->pos + 1 :
			      QGPU_VICTIM_NOT_NEEDED;
	/* what a split would release: its DMA buffer used it just now */
	if (bo->pin_count) {
		v->last_use = qdev->lru_tick;
		v->use_tick = qdev->lru_tick;
	}
}

/* May the eviction for room weigh pinned @bo (qgpu_future.release)? */
static bool qgpu_mm_weighs_pinned(struct qgpu_device *qdev,
				  struct qgpu_bo *bo)
{
	return qdev->future && qdev->future->release &&
	       !qgpu_future_keeps(qdev->future, bo);
}

/*
 * Insert @node for @size bytes into @mm: a placement decision. The dry run
 * of a plan records it, the replay makes the same one.
 */
static int qgpu_mm_insert(struct qgpu_device *qdev, struct drm_mm *mm,
			  struct drm_mm_node *node, u64 size,
			  enum drm_mm_insert_mode mode)
{
	struct qgpu_plan_choice *c;
	int ret;

	if (qgpu_plan_replay(qdev)) {
		c = qgpu_plan_follow(qdev);
		if (!c || c->count)
			return -EIO;
		if (c->ret)
			return c->ret;
		node->start = c->start;
		node->size = size;
		return drm_mm_reserve_node(mm, node);
	}
	ret = drm_mm_insert_node_generic(mm, node, size, PAGE_SIZE, 0, mode);
	if (qgpu_plan_dry(qdev)) {
		int err = qgpu_plan_record(qdev, ret, ret ? 0 : node->start,
					   NULL, 0);

		if (err) {
			if (!ret)
				drm_mm_remove_node(node);
			return err;
		}
	}
	return ret;
}

/*
 * Choose the allocations to evict from @seg so that @size bytes fit: the
 * victim policy orders the unpinned ones, drm_mm's eviction scan says when
 * enough of them are chosen. Returns the victims in @out (*@n of them), or
 * -ENOSPC when evicting everything evictable would not help. During a
 * walk's split by choice (&qgpu_future.release) the allocations a split
 * would release are candidates too: -EAGAIN, evicting nothing, when the
 * chosen victims include one of them (the walk splits first). @worst, if
 * not NULL, gets the victim the policy would give up last.
 */
static int qgpu_mm_pick_victims(struct qgpu_device *qdev,
				struct qgpu_segment *seg, u64 size,
				struct qgpu_bo *self, struct qgpu_bo ***out,
				u32 *n, struct qgpu_victim *worst)
{
	struct qgpu_bo *bo, **victims;
	struct qgpu_victim *v;
	struct drm_mm_scan scan;
	u32 cand = 0, added, i;
	bool found = false;
	u64 stamp = 0;

	list_for_each_entry(bo, &seg->lru, lru)
		cand++;
	v = kvmalloc_array(cand ? cand : 1, sizeof(*v), GFP_KERNEL);
	victims = kvmalloc_array(cand ? cand : 1, sizeof(*victims), GFP_KERNEL);
	if (!v || !victims) {
		kvfree(v);
		kvfree(victims);
		return -ENOMEM;
	}
	if (qdev->future)
		stamp = qgpu_mm_mark_future(qdev);
	cand = 0;
	list_for_each_entry(bo, &seg->lru, lru) {
		if (bo == self ||
		    (bo->pin_count && !qgpu_mm_weighs_pinned(qdev, bo)))
			continue;
		qgpu_mm_victim(qdev, bo, stamp, &v[cand++]);
	}
	qgpu_policy_order(qdev->policy, v, cand);
	/* processes over their budget are trimmed first (qgpu_budget.c) */
	qgpu_budget_flag(qdev, seg->id, v, cand);
	/* the walk's first try spares what its DMA buffer uses later */
	if (stamp && qdev->future->spare)
		cand = qgpu_policy_spare(v, cand);

	drm_mm_scan_init(&scan, &seg->mm, size, PAGE_SIZE, 0, 0);
	for (added = 0; added < cand && !found; added++)
		found = drm_mm_scan_add_block(&scan, &((struct qgpu_bo *)
						       v[added].cookie)->node);
	/* Every added block is removed again, last first. */
	*n = 0;
	for (i = added; i--;) {
		bo = v[i].cookie;
		if (drm_mm_scan_remove_block(&scan, &bo->node) && found) {
			if (!*n && worst)
				*worst = v[i];
			victims[(*n)++] = bo;
		}
	}
	kvfree(v);
	if (!found) {
		kvfree(victims);
		return -ENOSPC;
	}
	for (i = 0; i < *n; i++) {
		if (victims[i]->pin_count) {
			kvfree(victims);
			*n = 0;
			return -EAGAIN;
		}
	}
	*out = victims;
	return 0;
}

/*
 * Room for @size bytes in @seg as it is, evicting nothing (a placement
 * decision, recorded and replayed as any other): 0 or -ENOSPC.
 */
int qgpu_mm_find_room(struct qgpu_device *qdev, struct qgpu_segment *seg,
		      u64 size, struct drm_mm_node *node)
{
	if (size > seg->size - seg->reserved)
		return -ENOSPC;
	return qgpu_mm_insert(qdev, &seg->mm, node, size, DRM_MM_INSERT_BEST);
}

/*
 * Find room for @size bytes in @seg, evicting unpinned allocations chosen
 * by the victim policy. @self is never evicted. -EAGAIN: a walk's split by
 * choice, nothing evicted (qgpu_mm_pick_victims()).
 */
int qgpu_mm_find_space(struct qgpu_device *qdev, struct qgpu_segment *seg,
		       u64 size, struct drm_mm_node *node,
		       struct qgpu_bo *self)
{
	struct qgpu_plan_choice *c;
	struct qgpu_bo **victims = NULL;
	u32 n = 0, i;
	int ret;

	ret = qgpu_mm_insert(qdev, &seg->mm, node, size, DRM_MM_INSERT_BEST);
	if (ret != -ENOSPC)
		return ret;
	if (size > seg->size - seg->reserved)
		return -ENOSPC;

	if (qgpu_plan_replay(qdev)) {
		c = qgpu_plan_follow(qdev);
		if (!c)
			return -EIO;
		ret = c->ret;
		if (!ret) {
			victims = qdev->plan->victims + c->first;
			n = c->count;
		}
	} else {
		ret = qgpu_mm_pick_victims(qdev, seg, size, self, &victims, &n,
					   NULL);
		if (ret && ret != -ENOSPC && ret != -EAGAIN)
			return ret;
		if (qgpu_plan_dry(qdev)) {
			int err = qgpu_plan_record(qdev, ret, 0, victims, n);

			if (err)
				ret = err;
		}
	}
	for (i = 0; !ret && i < n; i++) {
		ret = qgpu_mm_evict_one(victims[i], false, QGPU_WHY_VICTIM);
		/* under pressure: it may migrate back when room returns */
		if (!ret)
			victims[i]->evicted = true;
	}
	if (!qgpu_plan_replay(qdev))
		kvfree(victims);
	if (ret)
		return ret;
	return qgpu_mm_insert(qdev, &seg->mm, node, size, DRM_MM_INSERT_EVICT);
}

/**
 * qgpu_mm_victim_segment - where an eviction for @bo costs least
 * @bo: the allocation to place
 * @order: its segment order (qgpu_mm_order())
 * @n: how many
 * @out: the index in @order of the segment, or @n when none would make
 *	room
 *
 * When no VRAM segment has room, the one whose victims the victim policy
 * would give up first: each segment's victims are chosen as for the
 * eviction itself, and the victim each set would give up last is compared
 * with the others' in the policy's order. Evicting in a preferred segment
 * an allocation the policy values more than one in another VRAM segment
 * the allocation may use pages bytes for nothing. A decision, recorded
 * and replayed as any other.
 *
 * Return: 0 or a negative errno.
 */
int qgpu_mm_victim_segment(struct qgpu_bo *bo, const u32 *order,
			   unsigned int n, unsigned int *out)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	u64 size = (u64)bo->npages << PAGE_SHIFT;
	struct qgpu_victim worst, best_worst;
	struct qgpu_plan_choice *c;
	struct qgpu_bo **victims;
	unsigned int i, best = n;
	u32 cnt;
	int ret;

	if (qgpu_plan_replay(qdev)) {
		c = qgpu_plan_follow(qdev);
		if (!c || c->count || c->ret || c->start > n)
			return -EIO;
		*out = c->start;
		return 0;
	}
	for (i = 0; i < n && order[i] != QGPU_SEG_APERTURE; i++) {
		struct qgpu_segment *seg = &qdev->seg[order[i]];

		if (qgpu_mm_allowed(bo, order[i]) ||
		    size > seg->size - seg->reserved)
			continue;
		victims = NULL;
		cnt = 0;
		ret = qgpu_mm_pick_victims(qdev, seg, size, bo, &victims, &cnt,
					   &worst);
		if (ret == -ENOMEM)
			return ret;
		if (ret)
			continue;
		kvfree(victims);
		if (!cnt)
			continue;
		if (best == n ||
		    qgpu_policy_before(qdev->policy, &worst, &best_worst)) {
			best = i;
			best_worst = worst;
		}
	}
	if (qgpu_plan_dry(qdev)) {
		ret = qgpu_plan_record(qdev, 0, best, NULL, 0);
		if (ret)
			return ret;
	}
	*out = best;
	return 0;
}

/*
 * Evict @bo out of its VRAM segment: to the aperture segment when it
 * supports one and there is room, else to system memory. @why: an enum
 * qgpu_move_why, for the tracepoints.
 */
int qgpu_mm_evict_one(struct qgpu_bo *bo, bool to_system, u32 why)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	struct drm_mm_node node = {};
	u64 size = (u64)bo->npages << PAGE_SHIFT;
	int ret;

	lockdep_assert_held(&to_qdev(bo->base.dev)->mm_lock);
	if (bo->seg == QGPU_SEG_SYSTEM)
		return 0;
	if (!qgpu_plan_dry(qdev))
		trace_qgpu_evict(bo, bo->seg, to_system, qdev->policy, bo->dead,
				 bo->id, why);
	if (bo->dead)
		return qgpu_mm_drop(bo);
	if (!qgpu_plan_dry(qdev))
		qgpu_budget_trim(qdev, bo);
	/* OfferAllocations: out of VRAM, an offered one is discarded */
	if (bo->offered && bo->seg != QGPU_SEG_APERTURE)
		to_system = true;
	if (!to_system && bo->seg != QGPU_SEG_APERTURE &&
	    !qgpu_mm_allowed(bo, QGPU_SEG_APERTURE) &&
	    !qgpu_mm_insert(qdev, &qdev->seg[QGPU_SEG_APERTURE].mm, &node,
			    size, DRM_MM_INSERT_BEST)) {
		ret = qgpu_mm_move_into(bo, QGPU_SEG_APERTURE, &node, why);
	} else {
		ret = qgpu_mm_move(bo, QGPU_SEG_SYSTEM, NULL, why);
	}
	if (!ret && !qgpu_plan_dry(qdev))
		qgpu_stat_add(qdev, qdev->mm_requester, QGPU_STAT(evictions), 1);
	return ret;
}

int qgpu_mm_evict(struct qgpu_bo *bo, bool to_system, u32 why)
{
	lockdep_assert_held(&to_qdev(bo->base.dev)->mm_lock);
	if (bo->pin_count)
		return -EBUSY;
	if (bo->seg == QGPU_SEG_APERTURE && !to_system)
		return 0;
	return qgpu_mm_evict_one(bo, to_system, why);
}
