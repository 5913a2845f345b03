// SPDX-License-Identifier: MIT
/*
 * Host unit tests for kernel/qgpu_policy.c: the eviction victim orderings
 * and the heap sort behind them.
 *
 * unit-sources: kernel/qgpu_policy.c */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "igt.h"
#include "qgpu_policy.h"

static uint64_t rng_state = 0x853c49e6748fea9bull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void mk(struct qgpu_victim *v, unsigned long long size,
	       unsigned long long last_use, unsigned long long offset,
	       uintptr_t id)
{
	v->size = size;
	v->last_use = last_use;
	v->offset = offset;
	v->cookie = (void *)id;
}

/* must @a come before (or tie with) @b in @policy's eviction order? */
static int in_order(unsigned int policy, const struct qgpu_victim *a,
		    const struct qgpu_victim *b)
{
	switch (policy) {
	case QGPU_POLICY_LRU:
		if (a->last_use != b->last_use)
			return a->last_use < b->last_use;
		return a->offset <= b->offset;
	case QGPU_POLICY_LARGEST:
		if (a->size != b->size)
			return a->size > b->size;
		return a->last_use <= b->last_use;
	case QGPU_POLICY_LOWEST_OFFSET:
		return a->offset <= b->offset;
	}
	return 0;
}

/* sorted by the policy, and a permutation of the input (cookies 1..n) */
static void check_sorted(unsigned int policy, const struct qgpu_victim *v,
			 unsigned int n, const struct qgpu_victim *orig)
{
	unsigned char *seen = calloc(n + 1, 1);
	unsigned int i;

	igt_assert(seen);
	for (i = 0; i + 1 < n; i++)
		igt_assert_f(in_order(policy, &v[i], &v[i + 1]),
			     "policy %s: element %u (size %llu use %llu off %llu) before %u (size %llu use %llu off %llu)\n",
			     qgpu_policy_name(policy), i, v[i].size,
			     v[i].last_use, v[i].offset, i + 1, v[i + 1].size,
			     v[i + 1].last_use, v[i + 1].offset);
	for (i = 0; i < n; i++) {
		uintptr_t id = (uintptr_t)v[i].cookie;

		igt_assert(id >= 1 && id <= n);
		igt_assert_f(!seen[id], "element %lu appears twice\n",
			     (unsigned long)id);
		seen[id] = 1;
		/* the element travelled whole */
		igt_assert_eq_u64(v[i].size, orig[id - 1].size);
		igt_assert_eq_u64(v[i].last_use, orig[id - 1].last_use);
		igt_assert_eq_u64(v[i].offset, orig[id - 1].offset);
	}
	free(seen);
}

static void random_case(unsigned int policy, unsigned int n,
			unsigned int spread)
{
	struct qgpu_victim *v = calloc(n ? n : 1, sizeof(*v));
	struct qgpu_victim *o = calloc(n ? n : 1, sizeof(*o));
	unsigned int i;

	igt_assert(v && o);
	for (i = 0; i < n; i++)
		mk(&v[i], (rnd() % spread + 1) << 12, rnd() % spread,
		   (rnd() % spread) << 12, i + 1);
	memcpy(o, v, n * sizeof(*v));
	igt_assert_eq(qgpu_policy_order(policy, v, n), 0);
	check_sorted(policy, v, n, o);
	free(v);
	free(o);
}

igt_main
{
	igt_subtest("names") {
		igt_assert(!strcmp(qgpu_policy_name(QGPU_POLICY_LRU), "lru"));
		igt_assert(!strcmp(qgpu_policy_name(QGPU_POLICY_LARGEST),
				   "largest"));
		igt_assert(!strcmp(qgpu_policy_name(QGPU_POLICY_LOWEST_OFFSET),
				   "lowest-offset"));
		igt_assert(!strcmp(qgpu_policy_name(QGPU_POLICY_COUNT), "?"));
		igt_assert(!strcmp(qgpu_policy_name(~0u), "?"));
	}

	igt_subtest("lru-order") {
		struct qgpu_victim v[5], o[5];

		/* least recently used first; equal ticks by lower offset */
		mk(&v[0], 4096, 50, 0x5000, 1);
		mk(&v[1], 8192, 10, 0x9000, 2);
		mk(&v[2], 4096, 30, 0x1000, 3);
		mk(&v[3], 4096, 10, 0x2000, 4);
		mk(&v[4], 65536, 99, 0x0, 5);
		memcpy(o, v, sizeof(v));
		igt_assert_eq(qgpu_policy_order(QGPU_POLICY_LRU, v, 5), 0);
		igt_assert_eq((uintptr_t)v[0].cookie, 4);
		igt_assert_eq((uintptr_t)v[1].cookie, 2);
		igt_assert_eq((uintptr_t)v[2].cookie, 3);
		igt_assert_eq((uintptr_t)v[3].cookie, 1);
		igt_assert_eq((uintptr_t)v[4].cookie, 5);
		check_sorted(QGPU_POLICY_LRU, v, 5, o);
	}

	igt_subtest("largest-order") {
		struct qgpu_victim v[5], o[5];

		/* largest first; equal sizes least recently used first */
		mk(&v[0], 4096, 50, 0x5000, 1);
		mk(&v[1], 1 << 20, 70, 0x9000, 2);
		mk(&v[2], 1 << 20, 20, 0x1000, 3);
		mk(&v[3], 8192, 10, 0x2000, 4);
		mk(&v[4], 4096, 5, 0x0, 5);
		memcpy(o, v, sizeof(v));
		igt_assert_eq(qgpu_policy_order(QGPU_POLICY_LARGEST, v, 5), 0);
		igt_assert_eq((uintptr_t)v[0].cookie, 3);
		igt_assert_eq((uintptr_t)v[1].cookie, 2);
		igt_assert_eq((uintptr_t)v[2].cookie, 4);
		igt_assert_eq((uintptr_t)v[3].cookie, 5);
		igt_assert_eq((uintptr_t)v[4].cookie, 1);
		check_sorted(QGPU_POLICY_LARGEST, v, 5, o);
	}

	igt_subtest("lowest-offset-order") {
		struct qgpu_victim v[4], o[4];

		mk(&v[0], 4096, 1, 0x7000, 1);
		mk(&v[1], 4096, 2, 0x0000, 2);
		mk(&v[2], 4096, 3, 0x3000, 3);
		mk(&v[3], 4096, 0, 0x1000, 4);
		memcpy(o, v, sizeof(v));
		igt_assert_eq(qgpu_policy_order(QGPU_POLICY_LOWEST_OFFSET, v,
						4), 0);
		igt_assert_eq((uintptr_t)v[0].cookie, 2);
		igt_assert_eq((uintptr_t)v[1].cookie, 4);
		igt_assert_eq((uintptr_t)v[2].cookie, 3);
		igt_assert_eq((uintptr_t)v[3].cookie, 1);
		check_sorted(QGPU_POLICY_LOWEST_OFFSET, v, 4, o);
	}

	igt_subtest("unknown-policy") {
		struct qgpu_victim v[3], o[3];

		mk(&v[0], 3, 3, 3, 1);
		mk(&v[1], 1, 1, 1, 2);
		mk(&v[2], 2, 2, 2, 3);
		memcpy(o, v, sizeof(v));
		igt_assert_eq(qgpu_policy_order(QGPU_POLICY_COUNT, v, 3), -1);
		igt_assert_eq(qgpu_policy_order(~0u, v, 3), -1);
		igt_assert(!memcmp(v, o, sizeof(v)));
	}

	igt_subtest("empty-and-single") {
		struct qgpu_victim v[1], o[1];
		unsigned int p;

		for (p = 0; p < QGPU_POLICY_COUNT; p++) {
			igt_assert_eq(qgpu_policy_order(p, NULL, 0), 0);
			mk(&v[0], 4096, 7, 0x1000, 1);
			memcpy(o, v, sizeof(v));
			igt_assert_eq(qgpu_policy_order(p, v, 1), 0);
			igt_assert(!memcmp(v, o, sizeof(v)));
		}
	}

	igt_subtest("all-equal") {
		struct qgpu_victim v[33], o[33];
		unsigned int p, i;

		for (p = 0; p < QGPU_POLICY_COUNT; p++) {
			for (i = 0; i < 33; i++)
				mk(&v[i], 4096, 9, 0x1000, i + 1);
			memcpy(o, v, sizeof(v));
			igt_assert_eq(qgpu_policy_order(p, v, 33), 0);
			check_sorted(p, v, 33, o);
		}
	}

	igt_subtest("already-sorted-and-reversed") {
		struct qgpu_victim v[100], o[100];
		unsigned int p, i;

		for (p = 0; p < QGPU_POLICY_COUNT; p++) {
			for (i = 0; i < 100; i++)
				mk(&v[i], (100 - i) << 12, i, (uint64_t)i << 12,
				   i + 1);
			memcpy(o, v, sizeof(v));
			igt_assert_eq(qgpu_policy_order(p, v, 100), 0);
			check_sorted(p, v, 100, o);
			for (i = 0; i < 100; i++)
				mk(&v[i], ((uint64_t)i + 1) << 12, 100 - i,
				   (uint64_t)(100 - i) << 12, i + 1);
			memcpy(o, v, sizeof(v));
			igt_assert_eq(qgpu_policy_order(p, v, 100), 0);
			check_sorted(p, v, 100, o);
		}
	}

	igt_subtest("heap-sort-random") {
		unsigned int p, n, t;

		for (p = 0; p < QGPU_POLICY_COUNT; p++)
			for (t = 0; t < 300; t++) {
				n = rnd() % 257;
				/* small spreads make many ties */
				random_case(p, n, t % 3 ? 1000000 : 4);
			}
	}

	igt_subtest("heap-sort-large") {
		unsigned int p;

		for (p = 0; p < QGPU_POLICY_COUNT; p++)
			random_case(p, 100000, 1u << 30);
	}
}
