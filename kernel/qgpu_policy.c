// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: eviction victim policies (pure C, also built into host tests).
 */
#include "qgpu_policy.h"

static const char * const qgpu_policy_names[QGPU_POLICY_COUNT] = {
	[QGPU_POLICY_LRU] = "lru",
	[QGPU_POLICY_LARGEST] = "largest",
	[QGPU_POLICY_LOWEST_OFFSET] = "lowest-offset",
	[QGPU_POLICY_GDSF] = "gdsf",
	[QGPU_POLICY_FUTURE_USE] = "future-use",
	[QGPU_POLICY_REUSE_INTERVAL] = "reuse-interval",
};

const char *qgpu_policy_name(unsigned int policy)
{
	return policy < QGPU_POLICY_COUNT ? qgpu_policy_names[policy] : "?";
}

/**
 * qgpu_policy_gdsf_key - a candidate's Greedy-Dual-Size-Frequency value
 * @v: the candidate
 *
 * last_use + min(uses, QGPU_GDSF_MAX_USES) * QGPU_GDSF_TICKS / pages: the
 * clock (recency) plus the frequency credit, which is worth less the
 * larger the allocation (the cost of bringing it back per byte it takes).
 * Saturates instead of wrapping.
 *
 * Return: the key; the smallest is evicted first.
 */
unsigned long long qgpu_policy_gdsf_key(const struct qgpu_victim *v)
{
	unsigned long long pages = v->size >> 12, uses = v->uses, credit;

	if (!pages)
		pages = 1;
	if (uses > QGPU_GDSF_MAX_USES)
		uses = QGPU_GDSF_MAX_USES;
	credit = uses * QGPU_GDSF_TICKS / pages;
	if (v->last_use > ~0ull - credit)
		return ~0ull;
	return v->last_use + credit;
}

/**
 * qgpu_policy_reuse_key - when a candidate is predicted to be used again
 * @v: the candidate
 *
 * An allocation used at tick T (&qgpu_victim.use_tick) and before that at
 * T - G (&qgpu_victim.use_gap) is predicted to be used again at T + G. A
 * prediction already passed (T + G before &qgpu_victim.now: the pattern
 * that gave G has ended) is worth nothing: ~0, evicted first. An
 * allocation used once has no interval: T, after every prediction still
 * ahead (it may be the start of a pattern that has not shown itself).
 *
 * Return: the key; the largest is evicted first.
 */
unsigned long long qgpu_policy_reuse_key(const struct qgpu_victim *v)
{
	if (!v->use_gap)
		return v->use_tick;
	if (v->use_tick > ~0ull - v->use_gap ||
	    v->use_tick + v->use_gap < v->now)
		return ~0ull;
	return v->use_tick + v->use_gap;
}

/* LRU, lower offset on ties */
static int qgpu_before_lru(const struct qgpu_victim *a,
			   const struct qgpu_victim *b)
{
	if (a->last_use != b->last_use)
		return a->last_use < b->last_use;
	return a->offset < b->offset;
}

/* The classes, in eviction order: offered, over budget, the rest */
static unsigned int qgpu_victim_class(const struct qgpu_victim *v)
{
	if (v->flags & QGPU_VICTIM_OFFERED)
		return 0;
	return v->flags & QGPU_VICTIM_OVER_BUDGET ? 1 : 2;
}

/* Return non-zero when @a must be evicted before @b. */
int qgpu_policy_before(unsigned int policy, const struct qgpu_victim *a,
		       const struct qgpu_victim *b)
{
	unsigned int ca = qgpu_victim_class(a), cb = qgpu_victim_class(b);
	unsigned long long ka, kb;

	if (ca != cb)
		return ca < cb;
	if (a->priority != b->priority)
		return a->priority < b->priority;
	switch (policy) {
	case QGPU_POLICY_GDSF:
		ka = qgpu_policy_gdsf_key(a);
		kb = qgpu_policy_gdsf_key(b);
		if (ka != kb)
			return ka < kb;
		return qgpu_before_lru(a, b);
	case QGPU_POLICY_FUTURE_USE:
		/* farthest next use first; 0 (unknown) counts as "now" */
		if (a->next_use != b->next_use)
			return a->next_use > b->next_use;
		return qgpu_before_lru(a, b);
	case QGPU_POLICY_REUSE_INTERVAL:
		/* the known future first: not needed, then farthest ahead */
		if (a->next_use != b->next_use)
			return a->next_use > b->next_use;
		ka = qgpu_policy_reuse_key(a);
		kb = qgpu_policy_reuse_key(b);
		if (ka != kb)
			return ka > kb;
		return qgpu_before_lru(a, b);
	case QGPU_POLICY_LARGEST:
		if (a->size != b->size)
			return a->size > b->size;
		return a->last_use < b->last_use;
	case QGPU_POLICY_LOWEST_OFFSET:
		return a->offset < b->offset;
	default:
		return qgpu_before_lru(a, b);
	}
}

static void qgpu_sift(unsigned int policy, struct qgpu_victim *v,
		      unsigned int root, unsigned int n)
{
	for (;;) {
		unsigned int child = 2 * root + 1;
		struct qgpu_victim t;

		if (child >= n)
			return;
		/* max-heap on "evicted later" so the sort ends in order */
		if (child + 1 < n && qgpu_policy_before(policy, &v[child], &v[child + 1]))
			child++;
		if (!qgpu_policy_before(policy, &v[root], &v[child]))
			return;
		t = v[root];
		v[root] = v[child];
		v[child] = t;
		root = child;
	}
}

/**
 * qgpu_policy_order - sort candidates into eviction order
 * @policy: an &enum qgpu_policy_id
 * @v: candidates; on return v[0] is the first to evict
 * @n: number of candidates
 *
 * Every policy takes the candidates' classes first (see &struct
 * qgpu_victim: offered, over budget, then by priority), then its own order.
 * Heap sort: O(n log n), no allocation, no recursion.
 * Return: 0, or -1 for an unknown policy (array untouched).
 */
int qgpu_policy_order(unsigned int policy, struct qgpu_victim *v,
		      unsigned int n)
{
	unsigned int i;

	if (policy >= QGPU_POLICY_COUNT)
		return -1;
	for (i = n / 2; i-- > 0;)
		qgpu_sift(policy, v, i, n);
	for (i = n; i-- > 1;) {
		struct qgpu_victim t = v[0];

		v[0] = v[i];
		v[i] = t;
		qgpu_sift(policy, v, 0, i);
	}
	return 0;
}

/**
 * qgpu_policy_spare - keep the candidates that the known future does not use
 * @v: candidates in eviction order (qgpu_policy_order())
 * @n: number of candidates
 *
 * A submission's walk first looks for room among the allocations that the
 * rest of its DMA buffer does not use (&qgpu_victim.next_use
 * %QGPU_VICTIM_NOT_NEEDED): they move to the front of @v in the order they
 * had, the others are dropped.
 * Return: how many are left.
 */
unsigned int qgpu_policy_spare(struct qgpu_victim *v, unsigned int n)
{
	unsigned int i, k = 0;

	for (i = 0; i < n; i++)
		if (v[i].next_use == QGPU_VICTIM_NOT_NEEDED)
			v[k++] = v[i];
	return k;
}
