// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: eviction victim policies (pure C, also built into host tests).
 */
#include "qgpu_policy.h"

static const char * const qgpu_policy_names[QGPU_POLICY_COUNT] = {
	[QGPU_POLICY_LRU] = "lru",
	[QGPU_POLICY_LARGEST] = "largest",
	[QGPU_POLICY_LOWEST_OFFSET] = "lowest-offset",
};

const char *qgpu_policy_name(unsigned int policy)
{
	return policy < QGPU_POLICY_COUNT ? qgpu_policy_names[policy] : "?";
}

/* Return non-zero when @a must be evicted before @b. */
static int qgpu_before(unsigned int policy, const struct qgpu_victim *a,
		       const struct qgpu_victim *b)
{
	switch (policy) {
	case QGPU_POLICY_LARGEST:
		if (a->size != b->size)
			return a->size > b->size;
		return a->last_use < b->last_use;
	case QGPU_POLICY_LOWEST_OFFSET:
		return a->offset < b->offset;
	default:
		if (a->last_use != b->last_use)
			return a->last_use < b->last_use;
		return a->offset < b->offset;
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
		if (child + 1 < n && qgpu_before(policy, &v[child], &v[child + 1]))
			child++;
		if (!qgpu_before(policy, &v[root], &v[child]))
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
