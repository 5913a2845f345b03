/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qgpu: eviction victim policy. Plain C with no kernel headers so that the
 * same file builds into host unit tests; a policy only orders candidates.
 */
#ifndef QGPU_POLICY_H
#define QGPU_POLICY_H

/**
 * struct qgpu_victim - an eviction candidate
 * @size: bytes the candidate occupies
 * @last_use: tick of its last use (larger = more recent)
 * @offset: its offset in the segment
 * @cookie: caller data, untouched by the policy
 */
struct qgpu_victim {
	unsigned long long size;
	unsigned long long last_use;
	unsigned long long offset;
	void *cookie;
};

/**
 * enum qgpu_policy_id - available victim policies
 * @QGPU_POLICY_LRU: least recently used first
 * @QGPU_POLICY_LARGEST: largest first (fewest evictions), LRU on ties
 * @QGPU_POLICY_LOWEST_OFFSET: lowest offset first (compacts the segment)
 * @QGPU_POLICY_COUNT: number of policies
 */
enum qgpu_policy_id {
	QGPU_POLICY_LRU = 0,
	QGPU_POLICY_LARGEST = 1,
	QGPU_POLICY_LOWEST_OFFSET = 2,
	QGPU_POLICY_COUNT
};

const char *qgpu_policy_name(unsigned int policy);
int qgpu_policy_order(unsigned int policy, struct qgpu_victim *v,
		      unsigned int n);

#endif /* QGPU_POLICY_H */
