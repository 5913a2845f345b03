/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qgpu: eviction victim policy. Plain C with no kernel headers so that the
 * same file builds into host unit tests; a policy only orders candidates.
 */
#ifndef QGPU_POLICY_H
#define QGPU_POLICY_H

/* &qgpu_victim.flags */
#define QGPU_VICTIM_OFFERED	(1u << 0)  /* offered: discarded, not copied */
#define QGPU_VICTIM_OVER_BUDGET	(1u << 1)  /* its process is over budget */

/* &qgpu_victim.next_use: not used again in the known future */
#define QGPU_VICTIM_NOT_NEEDED	(~0ull)

/* gdsf: each use is worth this many ticks of recency for one 4 KiB page */
#define QGPU_GDSF_TICKS		256ull
/* gdsf: uses beyond this many count no more (no allocation is immortal) */
#define QGPU_GDSF_MAX_USES	64ull

/**
 * struct qgpu_victim - an eviction candidate
 * @size: bytes the candidate occupies
 * @last_use: tick of its last use (larger = more recent)
 * @offset: its offset in the segment
 * @cookie: caller data, untouched by the policy
 * @uses: uses since it was placed in its segment (gdsf)
 * @next_use: how far ahead the known future uses it: 0 when the future is
 *	not known (treated as "needed now"), N >= 1 when it is needed N steps
 *	ahead, %QGPU_VICTIM_NOT_NEEDED when the known future does not use it
 *	(future-use)
 * @priority: its allocation priority (larger = evicted later); for an
 *	offered candidate its offer priority
 * @flags: QGPU_VICTIM_* classes
 * @use_tick: tick of its last use by the GPU or the CPU (reuse-interval;
 *	unlike @last_use, a move does not change it)
 * @use_gap: ticks between its last two uses (reuse-interval; 0: used
 *	once, or its uses are older than what the memory manager knows)
 * @now: the clock when the candidates were described (reuse-interval)
 *
 * Every policy first takes the classes in order: offered candidates
 * (their content is discarded, not copied), then those of a process over
 * its budget, then the rest; within a class, lower @priority first; then
 * the policy's own order. A candidate with @uses, @next_use, @priority,
 * @flags, @use_tick, @use_gap and @now all zero is ordered exactly as before
 * these fields existed.
 */
struct qgpu_victim {
	unsigned long long size;
	unsigned long long last_use;
	unsigned long long offset;
	void *cookie;
	unsigned long long uses;
	unsigned long long next_use;
	unsigned int priority;
	unsigned int flags;
	unsigned long long use_tick;
	unsigned long long use_gap;
	unsigned long long now;
};

/**
 * enum qgpu_policy_id - available victim policies
 * @QGPU_POLICY_LRU: least recently used first
 * @QGPU_POLICY_LARGEST: largest first (fewest evictions), LRU on ties
 * @QGPU_POLICY_LOWEST_OFFSET: lowest offset first (compacts the segment)
 * @QGPU_POLICY_GDSF: Greedy-Dual-Size-Frequency: lowest
 *	last_use + min(uses, %QGPU_GDSF_MAX_USES) * %QGPU_GDSF_TICKS / pages
 *	first: recency, plus a credit for frequency that shrinks with size
 *	(small, often used allocations stay; large, rarely used ones go)
 * @QGPU_POLICY_FUTURE_USE: Belady's MIN over the known future (the rest of
 *	the patch-location list of the DMA buffer being split): those not
 *	used again first, then the one used farthest ahead; LRU on ties and
 *	when the future is not known
 * @QGPU_POLICY_REUSE_INTERVAL: the predicted next use
 *	(qgpu_policy_reuse_key()): an allocation used at tick T, and before
 *	that at T - G, is predicted to be used again at T + G; those whose
 *	prediction has passed go first (least recent first), then the one
 *	predicted farthest ahead, those used once last. Within a
 *	submission's walk the known future comes first, as future-use: what
 *	the rest of the DMA buffer does not use before what it does, and of
 *	those the one it uses farthest ahead first
 * @QGPU_POLICY_COUNT: number of policies
 */
enum qgpu_policy_id {
	QGPU_POLICY_LRU = 0,
	QGPU_POLICY_LARGEST = 1,
	QGPU_POLICY_LOWEST_OFFSET = 2,
	QGPU_POLICY_GDSF = 3,
	QGPU_POLICY_FUTURE_USE = 4,
	QGPU_POLICY_REUSE_INTERVAL = 5,
	QGPU_POLICY_COUNT
};

const char *qgpu_policy_name(unsigned int policy);
unsigned long long qgpu_policy_gdsf_key(const struct qgpu_victim *v);
unsigned long long qgpu_policy_reuse_key(const struct qgpu_victim *v);
int qgpu_policy_before(unsigned int policy, const struct qgpu_victim *a,
		       const struct qgpu_victim *b);
int qgpu_policy_order(unsigned int policy, struct qgpu_victim *v,
		      unsigned int n);
unsigned int qgpu_policy_spare(struct qgpu_victim *v, unsigned int n);

#endif /* QGPU_POLICY_H */
