/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qgpu: placement plans. A submission's walk runs twice: first as a dry run
 * that changes only the memory manager's books (segment allocators, where
 * each allocation is) and records every placement decision, then the books
 * are rolled back and the walk runs for real, following the recorded
 * decisions. A walk that fails in the dry run fails before anything ran or
 * changed ("ENOSPC means nothing happened").
 */
#ifndef QGPU_PLAN_H
#define QGPU_PLAN_H

#include "qgpu_device.h"

struct qgpu_bo;

enum qgpu_plan_mode {
	QGPU_PLAN_DRY = 1,	/* books only; decisions recorded */
	QGPU_PLAN_REPLAY = 2,	/* for real; decisions followed */
};

/**
 * struct qgpu_plan_undo - where an allocation was before a dry-run move
 * @bo: the allocation
 * @seg: its segment id (QGPU_SEG_SYSTEM: none)
 * @start: its node's start in that segment
 * @size: its node's size
 * @tick: its LRU tick
 * @pristine: its zero-content flag
 * @evicted: its evicted-to-make-room flag
 */
struct qgpu_plan_undo {
	struct qgpu_bo *bo;
	u32 seg;
	u64 start;
	u64 size;
	u64 tick;
	bool pristine;
	bool evicted;
};

/**
 * struct qgpu_plan_choice - one placement decision
 * @ret: 0 or the error the decision returned
 * @start: where the node went
 * @first: first victim in &qgpu_plan.victims (victim choices)
 * @count: number of victims
 */
struct qgpu_plan_choice {
	int ret;
	u64 start;
	u32 first;
	u32 count;
};

/**
 * struct qgpu_plan - a submission's placement plan
 * @mode: QGPU_PLAN_DRY or QGPU_PLAN_REPLAY
 * @undo: dry-run moves, in order
 * @nundo: entries in @undo
 * @choice: decisions, in order
 * @nchoice: entries in @choice
 * @next: next decision to follow in the replay
 * @victims: victims of the victim choices
 * @nvictims: entries in @victims
 * @lru_tick: the device's LRU clock when the dry run started
 * @cap_undo: capacity of @undo
 * @cap_choice: capacity of @choice
 * @cap_victims: capacity of @victims
 */
struct qgpu_plan {
	int mode;
	struct qgpu_plan_undo *undo;
	u32 nundo;
	struct qgpu_plan_choice *choice;
	u32 nchoice;
	u32 next;
	struct qgpu_bo **victims;
	u32 nvictims;
	u64 lru_tick;
	u32 cap_undo;
	u32 cap_choice;
	u32 cap_victims;
};

static inline bool qgpu_plan_dry(struct qgpu_device *qdev)
{
	return qdev->plan && qdev->plan->mode == QGPU_PLAN_DRY;
}

static inline bool qgpu_plan_replay(struct qgpu_device *qdev)
{
	return qdev->plan && qdev->plan->mode == QGPU_PLAN_REPLAY;
}

void qgpu_plan_begin(struct qgpu_device *qdev, struct qgpu_plan *plan);
void qgpu_plan_rollback(struct qgpu_device *qdev);
void qgpu_plan_replay_start(struct qgpu_device *qdev);
void qgpu_plan_end(struct qgpu_device *qdev);
int qgpu_plan_save(struct qgpu_device *qdev, struct qgpu_bo *bo);
int qgpu_plan_record(struct qgpu_device *qdev, int ret, u64 start,
		     struct qgpu_bo **victims, u32 count);
struct qgpu_plan_choice *qgpu_plan_follow(struct qgpu_device *qdev);

#endif /* QGPU_PLAN_H */
