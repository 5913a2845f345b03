// SPDX-License-Identifier: MIT
/*
 * Host unit tests for kernel/qgpu_policy.c: the eviction victim orderings
 * (lru, largest, lowest-offset, gdsf, future-use, reuse-interval), the
 * classes every
 * policy takes first (offered, over budget, priority), the heap sort
 * behind them, and the walk's first try that spares what its DMA buffer
 * uses later.
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
	memset(v, 0, sizeof(*v));
	v->size = size;
	v->last_use = last_use;
	v->offset = offset;
	v->cookie = (void *)id;
}

/* the gdsf key computed independently: 128-bit, clamped */
static unsigned long long gdsf_key(const struct qgpu_victim *v)
{
	unsigned __int128 pages = v->size / 4096, uses = v->uses, k;

	if (!pages)
		pages = 1;
	if (uses > QGPU_GDSF_MAX_USES)
		uses = QGPU_GDSF_MAX_USES;
	k = (unsigned __int128)v->last_use + uses * QGPU_GDSF_TICKS / pages;
	return k > ~0ull ? ~0ull : (unsigned long long)k;
}

/*
 * the reuse-interval key computed independently: 128-bit; a passed
 * prediction (or one beyond the clock's range) ~0, used once: its last use
 */
static unsigned long long reuse_key(const struct qgpu_victim *v)
{
	unsigned __int128 k = (unsigned __int128)v->use_tick + v->use_gap;

	if (!v->use_gap)
		return v->use_tick;
	if (k > ~0ull || k < v->now)
		return ~0ull;
	return (unsigned long long)k;
}

/* 0: offered, 1: over budget, 2: the rest */
static int victim_class(const struct qgpu_victim *v)
{
	if (v->flags & QGPU_VICTIM_OFFERED)
		return 0;
	return v->flags & QGPU_VICTIM_OVER_BUDGET ? 1 : 2;
}

static int lru_in_order(const struct qgpu_victim *a,
			const struct qgpu_victim *b)
{
	if (a->last_use != b->last_use)
		return a->last_use < b->last_use;
	return a->offset <= b->offset;
}

/* must @a come before (or tie with) @b in @policy's eviction order? */
static int in_order(unsigned int policy, const struct qgpu_victim *a,
		    const struct qgpu_victim *b)
{
	if (victim_class(a) != victim_class(b))
		return victim_class(a) < victim_class(b);
	if (a->priority != b->priority)
		return a->priority < b->priority;
	switch (policy) {
	case QGPU_POLICY_LRU:
		return lru_in_order(a, b);
	case QGPU_POLICY_LARGEST:
		if (a->size != b->size)
			return a->size > b->size;
		return a->last_use <= b->last_use;
	case QGPU_POLICY_LOWEST_OFFSET:
		return a->offset <= b->offset;
	case QGPU_POLICY_GDSF:
		if (gdsf_key(a) != gdsf_key(b))
			return gdsf_key(a) < gdsf_key(b);
		return lru_in_order(a, b);
	case QGPU_POLICY_FUTURE_USE:
		if (a->next_use != b->next_use)
			return a->next_use > b->next_use;
		return lru_in_order(a, b);
	case QGPU_POLICY_REUSE_INTERVAL:
		if (a->next_use != b->next_use)
			return a->next_use > b->next_use;
		if (reuse_key(a) != reuse_key(b))
			return reuse_key(a) > reuse_key(b);
		return lru_in_order(a, b);
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
			     "policy %s: element %u (size %llu use %llu off %llu uses %llu next %llu prio %#x flags %u) before %u (size %llu use %llu off %llu uses %llu next %llu prio %#x flags %u)\n",
			     qgpu_policy_name(policy), i, v[i].size,
			     v[i].last_use, v[i].offset, v[i].uses,
			     v[i].next_use, v[i].priority, v[i].flags, i + 1,
			     v[i + 1].size, v[i + 1].last_use, v[i + 1].offset,
			     v[i + 1].uses, v[i + 1].next_use,
			     v[i + 1].priority, v[i + 1].flags);
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
		igt_assert_eq_u64(v[i].uses, orig[id - 1].uses);
		igt_assert_eq_u64(v[i].next_use, orig[id - 1].next_use);
		igt_assert_eq(v[i].priority, orig[id - 1].priority);
		igt_assert_eq(v[i].flags, orig[id - 1].flags);
		igt_assert_eq_u64(v[i].use_tick, orig[id - 1].use_tick);
		igt_assert_eq_u64(v[i].use_gap, orig[id - 1].use_gap);
		igt_assert_eq_u64(v[i].now, orig[id - 1].now);
	}
	free(seen);
}

/*
 * @extended: the appended fields random too (uses, next use with its two
 * special values, priority, classes); else zero, as before they existed.
 */
static void random_case_ext(unsigned int policy, unsigned int n,
			    unsigned int spread, int extended)
{
	struct qgpu_victim *v = calloc(n ? n : 1, sizeof(*v));
	struct qgpu_victim *o = calloc(n ? n : 1, sizeof(*o));
	unsigned int i;

	igt_assert(v && o);
	for (i = 0; i < n; i++)
	for (i = 0; i < n; i++) {
		mk(&v[i], (rnd() % spread + 1) << 12, rnd() % spread,
		   (rnd() % spread) << 12, i + 1);
		if (!extended)
			continue;
		v[i].uses = rnd() % (spread < 200 ? spread : 200);
		switch (rnd() % 4) {
		case 0:
			v[i].next_use = 0;
			break;
		case 1:
			v[i].next_use = QGPU_VICTIM_NOT_NEEDED;
			break;
		default:
			v[i].next_use = 1 + rnd() % spread;
		}
		v[i].priority = rnd() % 3 ? 0x78000000u : rnd() % 4;
		v[i].flags = rnd() % 4 ? 0 : 1 + rnd() % 3;
		/* one clock for all; gaps of 0, small, and near wrapping */
		v[i].now = spread;
		v[i].use_tick = rnd() % (spread + 1);
		switch (rnd() % 4) {
		case 0:
			v[i].use_gap = 0;
			break;
		case 1:
			v[i].use_gap = ~0ull - rnd() % 4;
			break;
		default:
			v[i].use_gap = 1 + rnd() % spread;
		}
	}
	memcpy(o, v, n * sizeof(*v));
	igt_assert_eq(qgpu_policy_order(policy, v, n), 0);
	check_sorted(policy, v, n, o);
	free(v);
	free(o);
}

static void random_case(unsigned int policy, unsigned int n,
			unsigned int spread)
{
	random_case_ext(policy, n, spread, 0);
}

/* the cookies of @v in order, as a string of digits */
static const char *order_of(const struct qgpu_victim *v, unsigned int n)
{
	static char buf[64];
	unsigned int i;

	for (i = 0; i < n && i < sizeof(buf) - 1; i++)
		buf[i] = '0' + (char)(uintptr_t)v[i].cookie;
	buf[i] = 0;
	return buf;
}

igt_main
{
	igt_subtest("names") {
		igt_assert(!strcmp(qgpu_policy_name(QGPU_POLICY_LRU), "lru"));
		igt_assert(!strcmp(qgpu_policy_name(QGPU_POLICY_LARGEST),
				   "largest"));
		igt_assert(!strcmp(qgpu_policy_name(QGPU_POLICY_LOWEST_OFFSET),
				   "lowest-offset"));
		igt_assert(!strcmp(qgpu_policy_name(QGPU_POLICY_GDSF), "gdsf"));
		igt_assert(!strcmp(qgpu_policy_name(QGPU_POLICY_FUTURE_USE),
				   "future-use"));
		igt_assert(!strcmp(qgpu_policy_name(QGPU_POLICY_REUSE_INTERVAL),
				   "reuse-interval"));
		igt_assert_eq(QGPU_POLICY_COUNT, 6);
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

	igt_subtest("gdsf-order") {
		struct qgpu_victim v[5], o[5];

		/*
		 * 1: 4 KiB used 10 times at tick 100: key 100 + 10 * 256 = 2660
		 * 2: 1 MiB (256 pages) used 10 times at 2000: 2000 + 10 = 2010
		 * 3: 4 KiB not used since it came, tick 1000: 1000
		 * 4: 64 KiB (16 pages) used 64 times at 1500: 1500 + 1024
		 * 5: 4 KiB used 10000 times (capped at 64) at 0: 16384
		 * so 3 2 4 1 5, where lru says 5 1 3 4 2
		 */
		mk(&v[0], 4096, 100, 0x1000, 1);
		v[0].uses = 10;
		mk(&v[1], 1 << 20, 2000, 0x2000, 2);
		v[1].uses = 10;
		mk(&v[2], 4096, 1000, 0x3000, 3);
		mk(&v[3], 65536, 1500, 0x4000, 4);
		v[3].uses = 64;
		mk(&v[4], 4096, 0, 0x5000, 5);
		v[4].uses = 10000;
		memcpy(o, v, sizeof(v));
		igt_assert_eq_u64(qgpu_policy_gdsf_key(&v[0]), 2660);
		igt_assert_eq_u64(qgpu_policy_gdsf_key(&v[1]), 2010);
		igt_assert_eq_u64(qgpu_policy_gdsf_key(&v[3]), 2524);
		igt_assert_eq_u64(qgpu_policy_gdsf_key(&v[4]), 16384);
		igt_assert_eq(qgpu_policy_order(QGPU_POLICY_GDSF, v, 5), 0);
		igt_assert_f(!strcmp(order_of(v, 5), "32415"), "order %s\n",
			     order_of(v, 5));
		check_sorted(QGPU_POLICY_GDSF, v, 5, o);
		/* the same candidates under lru: 5 1 3 4 2 */
		memcpy(v, o, sizeof(v));
		igt_assert_eq(qgpu_policy_order(QGPU_POLICY_LRU, v, 5), 0);
		igt_assert_f(!strcmp(order_of(v, 5), "51342"), "order %s\n",
			     order_of(v, 5));
	}

	igt_subtest("gdsf-key-saturates") {
		struct qgpu_victim v;

		mk(&v, 0, ~0ull - 5, 0, 1);
		v.uses = 1;
		/* size 0 counts as one page; the sum clamps, never wraps */
		igt_assert_eq_u64(qgpu_policy_gdsf_key(&v), ~0ull);
		v.uses = 0;
		igt_assert_eq_u64(qgpu_policy_gdsf_key(&v), ~0ull - 5);
		mk(&v, 1ull << 40, 7, 0, 1);
		v.uses = ~0ull;
		/* a huge allocation's credit rounds down to nothing */
		igt_assert_eq_u64(qgpu_policy_gdsf_key(&v), 7);
	}

	igt_subtest("future-use-order") {
		struct qgpu_victim v[6], o[6];

		/*
		 * Belady: not needed again first (LRU among them), then the
		 * farthest next use; "unknown" (0) last, as if needed now.
		 */
		mk(&v[0], 4096, 10, 0x1000, 1);
		v[0].next_use = 3;
		mk(&v[1], 4096, 20, 0x2000, 2);
		v[1].next_use = QGPU_VICTIM_NOT_NEEDED;
		mk(&v[2], 4096, 5, 0x3000, 3);
		v[2].next_use = QGPU_VICTIM_NOT_NEEDED;
		mk(&v[3], 4096, 1, 0x4000, 4);
		v[3].next_use = 0;
		mk(&v[4], 4096, 30, 0x5000, 5);
		v[4].next_use = 100;
		mk(&v[5], 4096, 2, 0x6000, 6);
		v[5].next_use = 3;
		memcpy(o, v, sizeof(v));
		igt_assert_eq(qgpu_policy_order(QGPU_POLICY_FUTURE_USE, v, 6),
			      0);
		igt_assert_f(!strcmp(order_of(v, 6), "325614"), "order %s\n",
			     order_of(v, 6));
		check_sorted(QGPU_POLICY_FUTURE_USE, v, 6, o);
	}

	igt_subtest("reuse-interval-order") {
		struct qgpu_victim v[7], o[7];
		unsigned int i;

		/*
		 * The clock is at 100. 1: used at 90 and 60, predicted at
		 * 120; 2: used at 95 and 55, predicted at 135; 3: used at 70
		 * and 50, predicted at 90, passed; 4: used at 40 and 30,
		 * passed too, less recent than 3; 5: used once, at 80; 6:
		 * used once, at 85; 7: predicted at 150 but the walk's DMA
		 * buffer uses it again 2 entries ahead.
		 * Passed first (4 then 3, LRU), then the farthest prediction
		 * (2, 1), used once last, their last use the key (6, 5), then
		 * what the buffer needs.
		 */
		mk(&v[0], 4096, 90, 0x1000, 1);
		v[0].use_tick = 90;
		v[0].use_gap = 30;
		mk(&v[1], 4096, 95, 0x2000, 2);
		v[1].use_tick = 95;
		v[1].use_gap = 40;
		mk(&v[2], 4096, 70, 0x3000, 3);
		v[2].use_tick = 70;
		v[2].use_gap = 20;
		mk(&v[3], 4096, 40, 0x4000, 4);
		v[3].use_tick = 40;
		v[3].use_gap = 10;
		mk(&v[4], 4096, 80, 0x5000, 5);
		v[4].use_tick = 80;
		mk(&v[5], 4096, 85, 0x6000, 6);
		v[5].use_tick = 85;
		mk(&v[6], 4096, 99, 0x7000, 7);
		v[6].use_tick = 99;
		v[6].use_gap = 51;
		for (i = 0; i < 7; i++)
			v[i].now = 100;
		memcpy(o, v, sizeof(v));
		/* outside a walk: the buffer's future is not known */
		igt_assert_eq(qgpu_policy_order(QGPU_POLICY_REUSE_INTERVAL, v,
						7), 0);
		igt_assert_f(!strcmp(order_of(v, 7), "4372165"), "order %s\n",
			     order_of(v, 7));
		check_sorted(QGPU_POLICY_REUSE_INTERVAL, v, 7, o);
		/* in a walk: 7 is needed 2 entries ahead, the rest not */
		memcpy(v, o, sizeof(v));
		for (i = 0; i < 7; i++)
			v[i].next_use = QGPU_VICTIM_NOT_NEEDED;
		v[6].next_use = 2;
		memcpy(o, v, sizeof(v));
		igt_assert_eq(qgpu_policy_order(QGPU_POLICY_REUSE_INTERVAL, v,
						7), 0);
		igt_assert_f(!strcmp(order_of(v, 7), "4321657"), "order %s\n",
			     order_of(v, 7));
		check_sorted(QGPU_POLICY_REUSE_INTERVAL, v, 7, o);
		/* the walk's first try keeps only what the buffer does not use */
		igt_assert_eq(qgpu_policy_spare(v, 7), 6);
		igt_assert_f(!strcmp(order_of(v, 6), "432165"), "order %s\n",
			     order_of(v, 6));
	}

	igt_subtest("reuse-interval-without-history-is-lru") {
		struct qgpu_victim v[50], w[50];
		unsigned int i;

		/* no use noted: every key 0, LRU decides */
		for (i = 0; i < 50; i++)
			mk(&v[i], (rnd() % 64 + 1) << 12, rnd() % 1000,
			   (uint64_t)i << 12, i + 1);
		memcpy(w, v, sizeof(v));
		igt_assert_eq(qgpu_policy_order(QGPU_POLICY_REUSE_INTERVAL, v,
						50), 0);
		igt_assert_eq(qgpu_policy_order(QGPU_POLICY_LRU, w, 50), 0);
		for (i = 0; i < 50; i++)
			igt_assert(v[i].cookie == w[i].cookie);
	}

	igt_subtest("future-use-unknown-is-lru") {
		struct qgpu_victim v[50], w[50];
		unsigned int i;

		for (i = 0; i < 50; i++)
			mk(&v[i], (rnd() % 64 + 1) << 12, rnd() % 1000,
			   (uint64_t)i << 12, i + 1);
		memcpy(w, v, sizeof(v));
		igt_assert_eq(qgpu_policy_order(QGPU_POLICY_FUTURE_USE, v, 50),
			      0);
		igt_assert_eq(qgpu_policy_order(QGPU_POLICY_LRU, w, 50), 0);
		for (i = 0; i < 50; i++)
			igt_assert(v[i].cookie == w[i].cookie);
	}

	igt_subtest("classes-before-every-policy") {
		struct qgpu_victim v[6], o[6];
		unsigned int p;

		/*
		 * 1: plain, normal priority, oldest and largest, lowest offset
		 * 2: plain, low priority
		 * 3: over budget, high priority
		 * 4: over budget, normal priority
		 * 5: offered, offer priority 3 (high)
		 * 6: offered, offer priority 1 (low)
		 * every policy: 6 5 4 3 2 1
		 */
		mk(&v[0], 1 << 20, 0, 0, 1);
		v[0].priority = 0x78000000u;
		v[0].next_use = QGPU_VICTIM_NOT_NEEDED;
		mk(&v[1], 4096, 90, 0x200000, 2);
		v[1].priority = 0x50000000u;
		mk(&v[2], 4096, 91, 0x300000, 3);
		v[2].priority = 0xa0000000u;
		v[2].flags = QGPU_VICTIM_OVER_BUDGET;
		mk(&v[3], 4096, 92, 0x400000, 4);
		v[3].priority = 0x78000000u;
		v[3].flags = QGPU_VICTIM_OVER_BUDGET;
		mk(&v[4], 4096, 93, 0x500000, 5);
		v[4].priority = 3;
		v[4].flags = QGPU_VICTIM_OFFERED;
		mk(&v[5], 4096, 94, 0x600000, 6);
		v[5].priority = 1;
		/* offered wins over over-budget */
		v[5].flags = QGPU_VICTIM_OFFERED | QGPU_VICTIM_OVER_BUDGET;
		memcpy(o, v, sizeof(v));
		for (p = 0; p < QGPU_POLICY_COUNT; p++) {
			memcpy(v, o, sizeof(v));
			igt_assert_eq(qgpu_policy_order(p, v, 6), 0);
			igt_assert_f(!strcmp(order_of(v, 6), "654321"),
				     "policy %s: order %s\n",
				     qgpu_policy_name(p), order_of(v, 6));
			check_sorted(p, v, 6, o);
		}
	}

	igt_subtest("zero-extension-fields-change-nothing") {
		struct qgpu_victim v[64], w[64];
		unsigned int p, i;

		/* zero uses/next_use/priority/flags: the old orders exactly */
		for (p = 0; p < QGPU_POLICY_LOWEST_OFFSET + 1; p++) {
			for (i = 0; i < 64; i++)
				mk(&v[i], (rnd() % 8 + 1) << 12, rnd() % 16,
				   (rnd() % 64) << 12, i + 1);
			memcpy(w, v, sizeof(v));
			igt_assert_eq(qgpu_policy_order(p, v, 64), 0);
			check_sorted(p, v, 64, w);
		}
		/* and gdsf with no uses is lru */
		for (i = 0; i < 64; i++)
			mk(&v[i], (rnd() % 8 + 1) << 12, rnd() % 16,
			   (uint64_t)i << 12, i + 1);
		memcpy(w, v, sizeof(v));
		igt_assert_eq(qgpu_policy_order(QGPU_POLICY_GDSF, v, 64), 0);
		igt_assert_eq(qgpu_policy_order(QGPU_POLICY_LRU, w, 64), 0);
		for (i = 0; i < 64; i++)
			igt_assert(v[i].cookie == w[i].cookie);
	}

	igt_subtest("heap-sort-random-extended") {
		unsigned int p, t;

		for (p = 0; p < QGPU_POLICY_COUNT; p++)
			for (t = 0; t < 300; t++)
				random_case_ext(p, rnd() % 257,
						t % 3 ? 1000000 : 4, 1);
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

	/*
	 * A walk's first try: only the candidates its DMA buffer does not use
	 * again, in the order the policy gave them; nothing else, and none of
	 * them lost.
	 */
	igt_subtest("spare-keeps-order-of-the-not-needed") {
		struct qgpu_victim v[64];
		uintptr_t want[64];
		unsigned int t, i, n, k, got;

		for (t = 0; t < 200; t++) {
			n = rnd() % 65;
			for (i = 0, k = 0; i < n; i++) {
				mk(&v[i], 4096, rnd() % 100, i * 4096, i + 1);
				v[i].next_use = rnd() % 3 ?
						QGPU_VICTIM_NOT_NEEDED :
						1 + rnd() % 10;
			}
			igt_assert_eq(qgpu_policy_order(QGPU_POLICY_LRU, v, n),
				      0);
			for (i = 0; i < n; i++)
				if (v[i].next_use == QGPU_VICTIM_NOT_NEEDED)
					want[k++] = (uintptr_t)v[i].cookie;
			got = qgpu_policy_spare(v, n);
			igt_assert_eq(got, k);
			for (i = 0; i < got; i++) {
				igt_assert(v[i].cookie == (void *)want[i]);
				igt_assert(v[i].next_use ==
					   QGPU_VICTIM_NOT_NEEDED);
			}
		}
	}
}
