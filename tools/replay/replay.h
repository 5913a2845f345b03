/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qgpu-replay: replays qgpu traces (docs/trace-format.md) through the
 * kernel's own victim policies (kernel/qgpu_policy.c) and split check
 * (kernel/qgpu_split.c), built for the host, on a model of the memory
 * manager that mirrors the driver's placement and eviction exactly:
 * drm_mm's range allocator (best fit, the hole stack, the eviction scan),
 * the LRU lists and clock, the plans of a submission's walk (dry run,
 * rollback, replay) and the walk of "Splitting a DMA Buffer". And the
 * offline bounds: Belady's MIN at page granularity and the whole-allocation
 * furthest-next-use schedule. See docs/trace-format.md, "Replay".
 */
#ifndef QGPU_REPLAY_H
#define QGPU_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t u64;
typedef uint32_t u32;
typedef uint8_t u8;

#define RP_PAGE		4096ull
#define RP_SEG_MAX	3	/* QGPU_SEG_MAX */

/*
 * What a trace may hold (docs/trace-format.md, "Limits"); rp_trace_load()
 * refuses the rest. Ids index the replay's tables: allocations, page
 * tables and processes below 2^24 each; sizes and offsets below 2^48;
 * the counts of a submission as the UAPI allows them.
 */
#define RP_ID_MAX	(1ull << 24)
#define RP_SIZE_MAX	(1ull << 48)
#define RP_SLOTS_MAX	4096ull		/* the device's max-slots */
#define RP_ALLOCS_MAX	4096ull		/* QGPU_MAX_ALLOCS */
#define RP_PATCHES_MAX	16384ull	/* QGPU_MAX_PATCHES */
#define RP_DMA_MAX	(1ull << 20)	/* QGPU_MAX_DMA_SIZE */

/* --- the trace ------------------------------------------------------------ */

enum rp_ev_kind {
	EV_NONE = 0,
	EV_SNAP_BEGIN, EV_SNAP_SEG, EV_SNAP_NODE, EV_SNAP_HOLE, EV_SNAP_BO,
	EV_SNAP_END,
	EV_CREATE, EV_DESTROY, EV_REAP, EV_RESIDE, EV_EVICT_REQ, EV_LOCK,
	EV_UNLOCK, EV_ATTACH, EV_DETACH, EV_MAKE_RESIDENT, EV_CPU_FAULT,
	EV_TOUCH, EV_SUBMIT, EV_ENTRY, EV_SUBMIT_END, EV_USE, EV_PORTION,
	EV_PLACE, EV_EVICT, EV_MOVE, EV_PT_ALLOC, EV_PT_FREE, EV_PRIORITY,
	EV_POLICY, EV_OFFER, EV_RECLAIM, EV_GPU_MAP, EV_SNAP_BO_STATE,
	EV_OWNER, EV_BUDGET, EV_GPU_WRITE,
	EV_COUNT
};

#define RP_EV_FIELDS	12

/* One event; its fields by position, as rp_ev_keys() names them */
struct rp_ev {
	u32 kind;
	u32 line;
	u64 t;
	u64 v[RP_EV_FIELDS];
};

const char *rp_ev_name(u32 kind);
const char *const *rp_ev_keys(u32 kind);
/* the index of field @key of events of @kind, or -1 */
int rp_ev_field(u32 kind, const char *key);

/* why=: enum qgpu_move_why */
enum { RP_WHY_PLACE, RP_WHY_VICTIM, RP_WHY_REQUEST, RP_WHY_CPU };
/* snap-node kind= */
enum { RP_NODE_BO, RP_NODE_PT, RP_NODE_PBUF };
/* snap-begin features=: what the recorded memory manager does */
#define RP_FEATURE_MIGRATE_BACK	0x1
/* an allocation with no segment asked for takes room as it is in a VRAM
 * segment of its order before any eviction */
#define RP_FEATURE_ROOM_FIRST	0x2
/* a submission's walk evicts what its DMA buffer uses later only when
 * nothing else makes room, and splits early to release what it no longer
 * needs */
#define RP_FEATURE_SPLIT_EARLY	0x4
/* room as it is goes to the VRAM segment of the order whose best-fit hole
 * for the allocation is the smallest, not to the first that has one */
#define RP_FEATURE_BEST_SEGMENT	0x8
/* a process's page tables count in its usage (budgets) */
#define RP_FEATURE_PT_BUDGET	0x10
/* split by choice: a submission's walk offers the victim policy what a
 * split would release beside the other candidates, and splits when the
 * policy picks one of them */
#define RP_FEATURE_SPLIT_CHOICE	0x20
#define RP_FEATURE_VICTIM_SEGMENT	0x40

/* A physical submission: its patch-location entries */
struct rp_entry {
	u64 id;			/* allocation, 0: none */
	u32 slot, split, patch, alloc;
	bool write;
};

struct rp_submit {
	u64 seq;
	u32 ctx, nallocs, npatches, dma;
	struct rp_entry *e;
	u32 ne;
	u64 ref0;		/* its first reference (rp_trace.refs) */
};

struct rp_trace {
	const char *path;
	int version;
	/* device line (0: not in the file) */
	u64 vram, visible, gart, hap;
	u32 slots;
	bool mmu, have_device;	/* mmu: moves of GPU-mapped allocations
				 * go through the paging process */
	u64 seg_size[RP_SEG_MAX + 1];
	char command[512];
	u64 lost;
	bool have_lost;
	int exit_status;

	struct rp_ev *ev;
	size_t nev;
	struct rp_submit *sub;
	size_t nsub;
	/* per EV_SUBMIT event: its index in @sub; other events: -1 */
	long *ev_sub;

	/* the references of the bounds, in order (rp_refs_build()) */
	u64 nrefs;
};

int rp_trace_load(struct rp_trace *t, const char *path, char *err,
		  size_t errlen);
void rp_trace_free(struct rp_trace *t);
/* the kernel's counters over the trace: snap-end minus snap-begin */
struct rp_counters {
	u64 to_vram, from_vram, vram_to_vram, filled, evictions;
};
int rp_trace_kernel_counters(const struct rp_trace *t, struct rp_counters *c,
			     u32 *policy);

/* --- the device a replay runs on ------------------------------------------ */

struct rp_config {
	u64 seg_size[RP_SEG_MAX + 1];	/* 0: segment absent */
	u64 seg_reserved[RP_SEG_MAX + 1];
	u64 hap;
	u64 visible, vram;		/* for Lock2's cached rule */
	u32 slots;
	bool as_recorded;		/* the trace's own books at the start */
	bool bound_pts;			/* the bounds count the page tables in
					 * VRAM (never evicted): set when no
					 * replayed policy failed to place one */
};

/* The configuration the trace was recorded on (from its snapshot) */
int rp_config_from_trace(const struct rp_trace *t, struct rp_config *cfg);

/* --- a replay ----------------------------------------------------------- */

/*
 * Where a policy's bytes went (--why): what it paged into VRAM, by why the
 * allocation had been out of it, and how its victims were chosen.
 */
struct rp_waste {
	u64 fill;		/* zero fills (first placements) */
	u64 first;		/* first transfers of allocations never in VRAM here */
	u64 back_same;		/* victims paged back in by the submission that evicted them */
	u64 back_later;		/* victims paged back in later */
	u64 back_forced;	/* paged back in after a forced eviction (Lock2, requests) */
	u64 migrated;		/* migrated back from the aperture */
	u64 victim;		/* bytes evicted by victim choices */
	u64 excess;		/* of them, beyond the shortfall (the segment's free bytes short of the size) */
	u64 other_room;		/* of them, while another VRAM segment the allocation may use had the room free */
	u64 same_sub;		/* of them, allocations the submission being walked uses later */
};

/* What a replay served, per reference of the bounds */
enum { RP_REF_SKIPPED = 0, RP_REF_VRAM = 1, RP_REF_OTHER = 2 };

struct rp_result {
	u32 policy;
	struct rp_counters c;
	u64 portions, splits, submits, failed_submits;
	u64 pt_failed;		/* page tables it could not place */
	u64 unknown;		/* requests on allocations it never saw */
	u8 *ref;		/* per reference: RP_REF_* */
	u8 *out;		/* per event: an eviction request or a Lock2
				 * that must leave VRAM, after which the
				 * allocation is out of VRAM */
	/* the check against the kernel (--check) */
	u64 moves, move_mismatch;
	long first_mismatch_line;
	char mismatch[256];
	u64 uses;		/* uses (LRU ticks) */
	u64 tick_mismatch;	/* uses whose LRU tick is not the kernel's */
	char tick_diff[160];
	bool state_match;	/* the books at snap-end equal the kernel's */
	char state_diff[256];
	struct rp_waste w;
};

struct rp_options {
	bool check;		/* compare every move with the kernel's, and
				 * follow the kernel's policy changes */
	bool verbose;
	FILE *log;		/* the replay's own moves, one a line (or NULL) */
	bool features_set;	/* replay as a memory manager with @features,
				 * whatever the trace's snapshot says */
	u32 features;
	bool oracle;		/* victims by the whole trace's future (with
				 * the future-use policy): an offline reference
				 * in the real memory manager, not a policy the
				 * kernel can run */
};

int rp_replay(const struct rp_trace *t, const struct rp_config *cfg,
	      u32 policy, const struct rp_options *opt, struct rp_result *r);
void rp_result_free(struct rp_result *r);

/* --- the offline bounds ------------------------------------------------- */

struct rp_bound {
	u64 refs;		/* references counted */
	u64 in_bytes;		/* paged into VRAM */
	u64 out_bytes;		/* live pages paged out */
	bool pooled;		/* VRAM pooled (asked for, or the segments
				 * were too much work to sum over) */
	bool by_class;		/* rp_bound_min(): the sum over the segment
				 * classes, larger than MIN over all */
};

/*
 * @served: per reference, whether it counts (every policy served it from
 * VRAM); NULL: all of them. @out: per event, whether every policy had the
 * allocation of an eviction request or a Lock2 that must leave VRAM out of
 * VRAM after it (rp_result.out, all of them); the bounds then drop its
 * pages there too. NULL: requests are ignored. The capacity at a reference
 * is what the VRAM segments of @cfg (less their reservations) can hold of
 * whole live allocations beside those of its group (bound.c);
 * rp_bound_min_pooled(): every VRAM segment pooled into one.
 */
int rp_bound_min(const struct rp_trace *t, const struct rp_config *cfg,
		 const u8 *served, const u8 *out, struct rp_bound *b);
int rp_bound_min_pooled(const struct rp_trace *t, const struct rp_config *cfg,
			const u8 *served, const u8 *out, struct rp_bound *b);
int rp_bound_fnu(const struct rp_trace *t, const struct rp_config *cfg,
		 const u8 *served, const u8 *out, struct rp_bound *b);

/*
 * The references of the bounds, in trace order: every patch-location entry
 * of a physical submission (numbered from rp_submit.ref0, an entry without
 * an allocation included), every GEM_RESIDE make-resident, every
 * MakeResident (not Evict). rp_refs_walk() calls @fn for each reference
 * that names an allocation (@ref its number), for each destroyed allocation
 * (@ref RP_REF_GONE), with @initial, for each allocation in VRAM at the
 * start (@ref RP_REF_INIT), for each event @out marks (@ref
 * RP_REF_OUT: the allocation leaves VRAM there; @out NULL: none), and with
 * @pts for each page table taken in a VRAM segment (@ref RP_REF_PT: every
 * pt-alloc that succeeded, with @initial those of the snapshot) and given
 * back (@ref RP_REF_PT_FREE).
 */
typedef void (*rp_ref_fn)(void *priv, u64 ref, u64 id, u64 size);
void rp_refs_walk(const struct rp_trace *t, bool initial, const u8 *out,
		  bool pts, rp_ref_fn fn, void *priv);

#define RP_REF_GONE	(~0ull)
#define RP_REF_INIT	(~0ull - 1)
#define RP_REF_OUT	(~0ull - 2)
/* with @pts: a page table (@id, @size bytes) taken in VRAM, given back */
#define RP_REF_PT	(~0ull - 3)
#define RP_REF_PT_FREE	(~0ull - 4)
/* every code above is not a reference */
#define RP_REF_NONE	RP_REF_PT_FREE

#endif /* QGPU_REPLAY_H */
