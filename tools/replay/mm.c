// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu-replay: the memory manager, mirrored. Every function below is the
 * driver's function of the same name (kernel/qgpu_evict.c,
 * qgpu_residency.c, qgpu_migrate.c, qgpu_destroy.c, qgpu_plan.c,
 * qgpu_segment.c, qgpu_submit.c, qgpu_pagetable.c, qgpu_cpu_map.c) with
 * the paging left out and the counters kept, on a copy of drm_mm's range
 * allocator (drivers/gpu/drm/drm_mm.c of Linux 6.12) that keeps what
 * decides placement: the address-ordered node list, each hole's size and
 * its place in the hole stack (the order holes were last added, which is
 * also how the best-fit tree breaks ties between holes of one size), and
 * the eviction scan's roster. The victim policy is kernel/qgpu_policy.c
 * itself, the split check kernel/qgpu_split.c itself.
 *
 * Where it may differ from the kernel (docs/trace-format.md, "Replay"):
 * the host aperture is modelled only as "an allocation larger than it is
 * evicted on a CPU fault"; allocations created before the recording that
 * were not resident at its start are unknown; use counts (gdsf) of the
 * allocations of the snapshot start at 0.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "qgpu_policy.h"
#include "qgpu_split.h"
#include "qgpu_drm.h"

#define SEG_SYSTEM	0
#define SEG_VISIBLE	1
#define SEG_LOCAL	2
#define SEG_APERTURE	3
#define PT_SIZE		4096ull

/* --- drm_mm --------------------------------------------------------------- */

struct mm_node {
	u64 start, size;
	u64 hole_size;		/* the hole after it; 0: none */
	u64 stamp;		/* when that hole was last added */
	struct mm_node *prev, *next;
	bool allocated;
};

struct mm {
	struct mm_node head;	/* start = end of range, size = -size */
	u64 clock;
};

static u64 hole_start(const struct mm_node *n)
{
	return n->start + n->size;
}

static void add_hole(struct mm *mm, struct mm_node *n)
{
	n->hole_size = n->next->start - hole_start(n);
	n->stamp = ++mm->clock;
}

static void rm_hole(struct mm_node *n)
{
	n->hole_size = 0;
	n->stamp = 0;
}

static void mm_init(struct mm *mm, u64 start, u64 size)
{
	memset(mm, 0, sizeof(*mm));
	mm->head.start = start + size;
	mm->head.size = -size;
	mm->head.prev = mm->head.next = &mm->head;
	mm->head.allocated = true;
	add_hole(mm, &mm->head);
}

static void link_after(struct mm_node *at, struct mm_node *n)
{
	n->prev = at;
	n->next = at->next;
	at->next->prev = n;
	at->next = n;
}

static void unlink_node(struct mm_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
}

/* DRM_MM_INSERT_BEST: the smallest hole that fits, the latest of a size */
static struct mm_node *best_hole(struct mm *mm, u64 size)
{
	struct mm_node *n = &mm->head, *best = NULL;

	do {
		if (n->hole_size >= size && n->hole_size &&
		    (!best || n->hole_size < best->hole_size ||
		     (n->hole_size == best->hole_size &&
		      n->stamp > best->stamp)))
			best = n;
		n = n->next;
	} while (n != &mm->head);
	return best;
}

/* DRM_MM_INSERT_EVICT: the hole stack, latest first */
static struct mm_node *evict_hole(struct mm *mm, u64 size)
{
	struct mm_node *n = &mm->head, *best = NULL;

	do {
		if (n->hole_size && n->hole_size >= size &&
		    (!best || n->stamp > best->stamp))
			best = n;
		n = n->next;
	} while (n != &mm->head);
	return best;
}

enum { INSERT_BEST, INSERT_EVICT };

/* drm_mm_insert_node_generic() with PAGE_SIZE alignment (always met) */
static int mm_insert(struct mm *mm, struct mm_node *node, u64 size,
		     int mode)
{
	struct mm_node *h = mode == INSERT_EVICT ? evict_hole(mm, size) :
			    best_hole(mm, size);
	u64 hs, he;

	if (!size || !h)
		return -ENOSPC;
	hs = hole_start(h);
	he = hs + h->hole_size;
	node->start = hs;
	node->size = size;
	node->hole_size = 0;
	node->allocated = true;
	link_after(h, node);
	rm_hole(h);
	if (hs + size < he)
		add_hole(mm, node);
	return 0;
}

/* drm_mm_reserve_node() */
static int mm_reserve(struct mm *mm, struct mm_node *node, u64 start,
		      u64 size)
{
	struct mm_node *h = &mm->head;
	u64 end = start + size, hs, he;

	if (end <= start)
		return -ENOSPC;
	do {
		hs = hole_start(h);
		he = hs + h->hole_size;
		if (h->hole_size && hs <= start && end <= he)
			break;
		h = h->next;
	} while (h != &mm->head);
	if (!h->hole_size || hs > start || end > he)
		return -ENOSPC;
	node->start = start;
	node->size = size;
	node->hole_size = 0;
	node->allocated = true;
	link_after(h, node);
	rm_hole(h);
	if (start > hs)
		add_hole(mm, h);
	if (end < he)
		add_hole(mm, node);
	return 0;
}

/* drm_mm_remove_node() */
static void mm_remove(struct mm *mm, struct mm_node *node)
{
	struct mm_node *prev = node->prev;

	if (node->hole_size)
		rm_hole(node);
	unlink_node(node);
	if (prev->hole_size)
		rm_hole(prev);
	add_hole(mm, prev);
	node->allocated = false;
}

/* drm_mm's eviction scan (mode 0, no range, alignment always met) */
struct mm_scan {
	u64 size, hit_start, hit_end;
};

static bool scan_add_block(struct mm_scan *s, struct mm_node *node)
{
	struct mm_node *hole = node->prev;
	u64 hs, he;

	/* out of the list, its own links kept for the way back */
	hole->next = node->next;
	node->next->prev = hole;
	hs = hole_start(hole);
	he = hole->next->start;
	if (he <= hs || he - hs < s->size)
		return false;
	s->hit_start = hs;
	s->hit_end = hs + s->size;
	return true;
}

static bool scan_remove_block(struct mm_scan *s, struct mm_node *node)
{
	struct mm_node *prev = node->prev;

	link_after(prev, node);
	return node->start + node->size > s->hit_start &&
	       node->start < s->hit_end;
}

/* --- the memory manager's books ------------------------------------------- */

/* A file's video memory (QueryVideoMemoryInfo; qgpu_budget.c) */
struct owner {
	u64 id;
	u64 usage[2];		/* resident bytes: local VRAM, the aperture */
	u64 trim_left;
};

struct bo {
	u64 id, size;
	struct owner *owner;
	u32 mask, flags;
	u8 pref[4];
	u32 seg;
	struct mm_node node;
	struct bo *lru_prev, *lru_next;
	u64 tick, uses, future_stamp;
	u64 use_tick, use_gap;	/* last use, interval of the last two */
	u32 future_pos;
	u64 canon_stamp;	/* precheck(): its list index, @canon, is */
	u32 canon;		/* the one of this stamp */
	u32 lock_count, pin_count, attachments, priority;
	u32 offer_priority, mappings;
	bool pristine, dead, import, submit_write, offered;
	bool releasable;	/* qgpu_bo.releasable */
	bool evicted;		/* an eviction for room put it where it is */
	/* --why: why it last left VRAM, during which event */
	bool was_vram;
	int out_why;
	const struct rp_ev *out_ev;
};

struct pt {
	u64 id;
	u32 seg;
	struct mm_node node;
	struct owner *owner;	/* whose usage it counts in, or NULL */
};

struct seg {
	bool present;
	u64 size, reserved, used;
	u32 allocations;
	struct mm mm;
	struct bo lru;		/* list head */
};

struct undo {
	struct bo *bo;
	u32 seg;
	u64 start, size, tick;
	bool pristine, evicted;
};

struct choice {
	int ret;
	u64 start;
	u32 first, count;
};

enum { PLAN_DRY = 1, PLAN_REPLAY = 2 };

struct plan {
	int mode;
	struct undo *undo;
	size_t nundo, cap_undo;
	struct choice *choice;
	size_t nchoice, cap_choice, next;
	struct bo **victims;
	size_t nvictims, cap_victims;
	u64 lru_tick;
};

/* The known future of a walk (the future-use policy) */
struct future {
	struct bo **bos;	/* per entry */
	u32 n, pos;
	bool spare;		/* qgpu_future.spare */
	bool release;		/* qgpu_future.release */
};

struct dev {
	const struct rp_trace *t;
	struct rp_config cfg;
	const struct rp_options *opt;
	struct rp_result *r;
	u32 policy;
	struct seg seg[RP_SEG_MAX + 1];
	struct mm_node pbuf;
	u64 lru_tick;
	struct bo **bos;	/* by id */
	size_t nbos;
	struct pt **pts;	/* by id */
	size_t npts;
	struct plan *plan;
	struct future *future;
	u64 future_stamp;
	/* --check: the kernel's moves and uses, in order */
	const struct rp_ev **kmoves;
	size_t nkmoves, kmove;
	const struct rp_ev **ktouches;
	size_t nktouches, ktouch;
	const struct rp_ev *cur;	/* the event being replayed */
	bool migrate_back;	/* the kernel migrates evicted allocations back */
	u32 features;		/* RP_FEATURE_*: the recorded memory manager's */
	u32 budget_pct;		/* every process's budget */
	struct owner **owners;	/* by id */
	size_t nowners;
	/* --- rp_options.oracle: every reference of the trace, by id --- */
	u64 canon_stamp;	/* precheck()'s, per submission */
	u64 now_ref;		/* the reference being replayed */
	u64 *oref;		/* reference numbers, ascending per id */
	size_t *ostart;		/* by id: its first in @oref; [id + 1]: end */
	size_t noid;		/* ids in @ostart */
};

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		fprintf(stderr, "qgpu-replay: out of memory\n");
		exit(2);
	}
	return p;
}

static void *xgrow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 64;
	if (*cap <= n)
		*cap = n + 1;
	p = realloc(p, *cap * size);
	if (!p) {
		fprintf(stderr, "qgpu-replay: out of memory\n");
		exit(2);
	}
	return p;
}

static bool seg_is_vram(u32 id)
{
	return id == SEG_VISIBLE || id == SEG_LOCAL;
}

static bool plan_dry(struct dev *d)
{
	return d->plan && d->plan->mode == PLAN_DRY;
}

static bool plan_replay(struct dev *d)
{
	return d->plan && d->plan->mode == PLAN_REPLAY;
}

static struct bo *bo_get(struct dev *d, u64 id)
{
	return id < d->nbos ? d->bos[id] : NULL;
}

static struct bo *bo_new(struct dev *d, u64 id)
{
	struct bo *bo;

	if (id >= d->nbos) {
		size_t n = d->nbos ? d->nbos : 64;

		while (n <= id)
			n *= 2;
		d->bos = realloc(d->bos, n * sizeof(*d->bos));
		if (!d->bos)
			exit(2);
		memset(d->bos + d->nbos, 0, (n - d->nbos) * sizeof(*d->bos));
		d->nbos = n;
	}
	free(d->bos[id]);
	bo = xcalloc(1, sizeof(*bo));
	bo->id = id;
	bo->seg = SEG_SYSTEM;
	bo->pristine = true;
	bo->priority = QGPU_PRIORITY_NORMAL;
	bo->lru_prev = bo->lru_next = bo;
	d->bos[id] = bo;
	return bo;
}

static struct pt *pt_get(struct dev *d, u64 id, bool create)
{
	if (id >= d->npts) {
		size_t n = d->npts ? d->npts : 64;

		if (!create)
			return NULL;
		while (n <= id)
			n *= 2;
		d->pts = realloc(d->pts, n * sizeof(*d->pts));
		if (!d->pts)
			exit(2);
		memset(d->pts + d->npts, 0, (n - d->npts) * sizeof(*d->pts));
		d->npts = n;
	}
	if (create && !d->pts[id]) {
		d->pts[id] = xcalloc(1, sizeof(struct pt));
		d->pts[id]->id = id;
	}
	return d->pts[id];
}

static void lru_del(struct bo *bo)
{
	bo->lru_prev->lru_next = bo->lru_next;
	bo->lru_next->lru_prev = bo->lru_prev;
	bo->lru_prev = bo->lru_next = bo;
}

static void lru_add_tail(struct seg *s, struct bo *bo)
{
	bo->lru_prev = s->lru.lru_prev;
	bo->lru_next = &s->lru;
	s->lru.lru_prev->lru_next = bo;
	s->lru.lru_prev = bo;
}

/* qgpu_seg_group(): local VRAM 0, the aperture 1 */
static u32 seg_group(u32 seg)
{
	return seg == SEG_APERTURE;
}

static struct owner *owner_get(struct dev *d, u64 id)
{
	if (!id)
		return NULL;
	if (id >= d->nowners) {
		size_t n = d->nowners ? d->nowners : 16;

		while (n <= id)
			n *= 2;
		d->owners = realloc(d->owners, n * sizeof(*d->owners));
		if (!d->owners)
			exit(2);
		memset(d->owners + d->nowners, 0,
		       (n - d->nowners) * sizeof(*d->owners));
		d->nowners = n;
	}
	if (!d->owners[id]) {
		d->owners[id] = xcalloc(1, sizeof(struct owner));
		d->owners[id]->id = id;
	}
	return d->owners[id];
}

/* qgpu_group_size(), qgpu_budget() */
static u64 budget(struct dev *d, u32 group)
{
	unsigned __int128 size = 0;
	u32 id;

	for (id = SEG_VISIBLE; id <= RP_SEG_MAX; id++)
		if (d->seg[id].present && seg_group(id) == group)
			size += d->seg[id].size - d->seg[id].reserved;
	return (u64)(size * d->budget_pct / 100) & ~(RP_PAGE - 1);
}

/* qgpu_seg_account(), with qgpu_budget_account() */
static void seg_account(struct dev *d, struct bo *bo, bool add)
{
	struct seg *s = &d->seg[bo->seg];

	if (bo->owner) {
		if (add)
			bo->owner->usage[seg_group(bo->seg)] += bo->node.size;
		else
			bo->owner->usage[seg_group(bo->seg)] -= bo->node.size;
	}
	if (add) {
		s->allocations++;
		s->used += bo->node.size;
		lru_add_tail(s, bo);
	} else {
		s->allocations--;
		s->used -= bo->node.size;
		lru_del(bo);
	}
}

/* --check: a use, against the kernel's next one (allocation, LRU tick) */
static void check_touch(struct dev *d, struct bo *bo)
{
	const struct rp_ev *k;
	struct rp_result *r = d->r;

	r->uses++;
	if (!d->opt->check)
		return;
	k = d->ktouch < d->nktouches ? d->ktouches[d->ktouch] : NULL;
	d->ktouch++;
	if (k && k->v[0] == bo->id && k->v[1] == bo->tick)
		return;
	if (!r->tick_mismatch++)
		snprintf(r->tick_diff, sizeof(r->tick_diff),
			 "the replay used allocation %llu at tick %llu (replaying line %u), the kernel %s%llu at tick %llu",
			 (unsigned long long)bo->id,
			 (unsigned long long)bo->tick,
			 d->cur ? d->cur->line : 0,
			 k ? "allocation " : "nothing more: ",
			 (unsigned long long)(k ? k->v[0] : 0),
			 (unsigned long long)(k ? k->v[1] : 0));
}

/* qgpu_mm_note_use(): the reuse-interval policy's use history */
static void mm_note_use(struct bo *bo, u64 tick)
{
	bo->use_gap = bo->use_tick ? tick - bo->use_tick : 0;
	bo->use_tick = tick;
}

/* qgpu_mm_touch() */
static void mm_touch(struct dev *d, struct bo *bo)
{
	bo->tick = ++d->lru_tick;
	check_touch(d, bo);
	bo->uses++;
	/* a submission's later portions are the same use */
	if (!d->plan || bo->use_tick <= d->plan->lru_tick)
		mm_note_use(bo, bo->tick);
	if (bo->seg != SEG_SYSTEM) {
		lru_del(bo);
		lru_add_tail(&d->seg[bo->seg], bo);
	}
}

/* qgpu_bo_lock_outside_vram() */
static bool lock_outside_vram(struct dev *d, struct bo *bo)
{
	if (!(bo->flags & QGPU_GEM_CPU_ACCESS))
		return true;
	return bo->flags & QGPU_GEM_CPU_CACHED && d->cfg.visible < d->cfg.vram;
}

/* qgpu_mm_allowed() */
static int mm_allowed(struct dev *d, struct bo *bo, u32 id)
{
	bool memory_seg = seg_is_vram(id);

	if (id > RP_SEG_MAX || !(bo->mask & (1u << id)) || !d->seg[id].present)
		return -EINVAL;
	if (memory_seg && bo->lock_count && lock_outside_vram(d, bo))
		return -EBUSY;
	if (memory_seg && bo->attachments)
		return -EBUSY;
	return 0;
}

/* --- plans (qgpu_plan.c) -------------------------------------------------- */

static void plan_begin(struct dev *d, struct plan *p)
{
	memset(p, 0, sizeof(*p));
	p->mode = PLAN_DRY;
	p->lru_tick = d->lru_tick;
	d->plan = p;
}

static void plan_save(struct dev *d, struct bo *bo)
{
	struct plan *p = d->plan;
	struct undo *u;

	p->undo = xgrow(p->undo, &p->cap_undo, p->nundo, sizeof(*p->undo));
	u = &p->undo[p->nundo++];
	u->bo = bo;
	u->seg = bo->seg;
	u->start = bo->node.start;
	u->size = bo->node.size;
	u->tick = bo->tick;
	u->pristine = bo->pristine;
	u->evicted = bo->evicted;
}

static void plan_record(struct dev *d, int ret, u64 start, struct bo **victims,
			u32 count)
{
	struct plan *p = d->plan;
	struct choice *c;

	p->choice = xgrow(p->choice, &p->cap_choice, p->nchoice,
			  sizeof(*p->choice));
	while (p->nvictims + count >= p->cap_victims)
		p->victims = xgrow(p->victims, &p->cap_victims,
				   p->cap_victims, sizeof(*p->victims));
	c = &p->choice[p->nchoice++];
	c->ret = ret;
	c->start = start;
	c->first = p->nvictims;
	c->count = count;
	if (count)
		memcpy(p->victims + p->nvictims, victims,
		       count * sizeof(*victims));
	p->nvictims += count;
}

static struct choice *plan_follow(struct dev *d)
{
	struct plan *p = d->plan;

	if (p->next >= p->nchoice)
		return NULL;
	return &p->choice[p->next++];
}

static void plan_restore_bo(struct dev *d, struct bo *bo, u32 seg, u64 start,
			    u64 size)
{
	if (bo->seg != SEG_SYSTEM) {
		seg_account(d, bo, false);
		if (bo->node.allocated)
			mm_remove(&d->seg[bo->seg].mm, &bo->node);
	}
	bo->seg = seg;
	if (seg == SEG_SYSTEM)
		return;
	if (mm_reserve(&d->seg[seg].mm, &bo->node, start, size)) {
		bo->seg = SEG_SYSTEM;
		return;
	}
	seg_account(d, bo, true);
}

static void plan_rollback(struct dev *d)
{
	struct plan *p = d->plan;
	size_t i;

	for (i = p->nundo; i--;) {
		struct undo *u = &p->undo[i];

		plan_restore_bo(d, u->bo, u->seg, u->start, u->size);
		u->bo->tick = u->tick;
		u->bo->pristine = u->pristine;
		u->bo->evicted = u->evicted;
	}
	p->nundo = 0;
	d->lru_tick = p->lru_tick;
}

static void plan_end(struct dev *d)
{
	struct plan *p = d->plan;

	free(p->undo);
	free(p->choice);
	free(p->victims);
	d->plan = NULL;
}

/* --- moves (qgpu_migrate.c, qgpu_destroy.c) -------------------------------- */

static void check_move(struct dev *d, struct bo *bo, u32 dst, u64 offset)
{
	struct rp_result *r = d->r;
	const struct rp_ev *k;

	r->moves++;
	if (d->opt->log)
		fprintf(d->opt->log, "move id=%llu from=%u to=%u offset=%llu (line %u)\n",
			(unsigned long long)bo->id, bo->seg, dst,
			(unsigned long long)offset, d->cur ? d->cur->line : 0);
	if (!d->opt->check)
		return;
	k = d->kmove < d->nkmoves ? d->kmoves[d->kmove] : NULL;
	d->kmove++;
	if (k && k->v[0] == bo->id && k->v[1] == bo->seg && k->v[2] == dst &&
	    k->v[5] == offset)
		return;
	if (!r->move_mismatch++) {
		r->first_mismatch_line = k ? (long)k->line : -1;
		snprintf(r->mismatch, sizeof(r->mismatch),
			 "replay moved id=%llu %u->%u at %llu (replaying line %u); the kernel: %s id=%llu %llu->%llu at %llu",
			 (unsigned long long)bo->id, bo->seg, dst,
			 (unsigned long long)offset, d->cur ? d->cur->line : 0,
			 k ? "" : "nothing more,",
			 (unsigned long long)(k ? k->v[0] : 0),
			 (unsigned long long)(k ? k->v[1] : 0),
			 (unsigned long long)(k ? k->v[2] : 0),
			 (unsigned long long)(k ? k->v[5] : 0));
	}
}

/* @bo->node takes over @node's range (qgpu_mm_take_node()) */
static void take_node(struct mm *mm, struct bo *bo, struct mm_node *node)
{
	u64 start = node->start, size = node->size;

	mm_remove(mm, node);
	memset(&bo->node, 0, sizeof(bo->node));
	mm_reserve(mm, &bo->node, start, size);
}

/* qgpu_mm_book_move() */
static void book_move(struct dev *d, struct bo *bo, u32 dst,
		      struct mm_node *dst_node)
{
	bo->evicted = false;
	if (bo->seg != SEG_SYSTEM) {
		bool from_vram = bo->seg != SEG_APERTURE;

		seg_account(d, bo, false);
		if (bo->node.allocated)
			mm_remove(&d->seg[bo->seg].mm, &bo->node);
		if (from_vram)
			bo->pristine = false;
	}
	bo->seg = dst;
	if (dst != SEG_SYSTEM) {
		take_node(&d->seg[dst].mm, bo, dst_node);
		seg_account(d, bo, true);
	}
	bo->tick = ++d->lru_tick;
}

/* --why: what a move into VRAM pays for */
static void waste_in(struct dev *d, struct bo *bo)
{
	struct rp_waste *w = &d->r->w;

	if (bo->pristine)
		w->fill += bo->size;
	else if (bo->seg == SEG_APERTURE && bo->evicted)
		w->migrated += bo->size;
	else if (!bo->was_vram)
		w->first += bo->size;
	else if (bo->out_why != RP_WHY_VICTIM)
		w->back_forced += bo->size;
	else if (bo->out_ev == d->cur)
		w->back_same += bo->size;
	else
		w->back_later += bo->size;
	bo->was_vram = true;
}

/* qgpu_mm_move(): the books, and what the paging buffer would count */
static int mm_move(struct dev *d, struct bo *bo, u32 dst,
		   struct mm_node *dst_node)
{
	bool src_vram = seg_is_vram(bo->seg), dst_vram = seg_is_vram(dst);
	struct rp_counters *c = &d->r->c;

	if (plan_dry(d)) {
		plan_save(d, bo);
		book_move(d, bo, dst, dst_node);
		return 0;
	}
	/* an offered allocation leaving VRAM is discarded, unless GPU-mapped */
	if (dst_vram && !src_vram)
		waste_in(d, bo);
	if (bo->offered && src_vram && dst == SEG_SYSTEM &&
	    !(d->t->mmu && bo->mappings))
		;
	else if (dst_vram && bo->pristine)
		c->filled += bo->size;
	else if (src_vram && dst_vram)
		c->vram_to_vram += bo->size;
	else if (src_vram)
		c->from_vram += bo->size;
	else if (dst_vram)
		c->to_vram += bo->size;
	check_move(d, bo, dst, dst_node ? dst_node->start : 0);
	book_move(d, bo, dst, dst_node);
	bo->uses = 0;
	return 0;
}

/* qgpu_mm_drop() */
static int mm_drop(struct dev *d, struct bo *bo)
{
	if (bo->seg == SEG_SYSTEM)
		return 0;
	if (plan_dry(d)) {
		plan_save(d, bo);
		book_move(d, bo, SEG_SYSTEM, NULL);
		return 0;
	}
	seg_account(d, bo, false);
	if (bo->node.allocated)
		mm_remove(&d->seg[bo->seg].mm, &bo->node);
	bo->seg = SEG_SYSTEM;
	return 0;
}

/* --- eviction (qgpu_evict.c) ---------------------------------------------- */

/* qgpu_mm_insert(): a placement decision of a plan */
static int plan_insert(struct dev *d, struct mm *mm, struct mm_node *node,
		       u64 size, int mode)
{
	struct choice *c;
	int ret;

	if (plan_replay(d)) {
		c = plan_follow(d);
		if (!c || c->count)
			return -EIO;
		if (c->ret)
			return c->ret;
		memset(node, 0, sizeof(*node));
		return mm_reserve(mm, node, c->start, size);
	}
	ret = mm_insert(mm, node, size, mode);
	if (plan_dry(d))
		plan_record(d, ret, ret ? 0 : node->start, NULL, 0);
	return ret;
}

/* qgpu_mm_mark_future() */
/* --- the oracle (rp_options.oracle) ------------------------------------- */

struct oracle_fill {
	struct dev *d;
	size_t *pos;		/* NULL: counting */
};

static void oracle_ref(void *priv, u64 ref, u64 id, u64 size)
{
	struct oracle_fill *f = priv;
	struct dev *d = f->d;

	(void)size;
	if (ref >= RP_REF_NONE || id >= d->noid)
		return;
	if (f->pos)
		d->oref[f->pos[id]++] = ref;
	else
		d->ostart[id + 1]++;
}

/* Every reference of the trace by allocation (rp_refs_walk()) */
static void oracle_init(struct dev *d)
{
	struct oracle_fill f = { .d = d };
	size_t i;

	d->noid = 1;
	for (i = 0; i < d->t->nev; i++)
		if ((d->t->ev[i].kind == EV_CREATE ||
		     d->t->ev[i].kind == EV_SNAP_BO) &&
		    d->t->ev[i].v[0] >= d->noid)
			d->noid = d->t->ev[i].v[0] + 1;
	d->ostart = xcalloc(d->noid + 1, sizeof(*d->ostart));
	rp_refs_walk(d->t, false, NULL, false, oracle_ref, &f);
	for (i = 0; i < d->noid; i++)
		d->ostart[i + 1] += d->ostart[i];
	d->oref = xcalloc(d->ostart[d->noid] + 1, sizeof(*d->oref));
	f.pos = xcalloc(d->noid, sizeof(*f.pos));
	memcpy(f.pos, d->ostart, d->noid * sizeof(*f.pos));
	rp_refs_walk(d->t, false, NULL, false, oracle_ref, &f);
	free(f.pos);
}

/*
 * How far ahead of the reference being replayed the trace uses @bo next
 * (1: now), or QGPU_VICTIM_NOT_NEEDED
 */
static u64 oracle_next(struct dev *d, const struct bo *bo)
{
	size_t lo, hi;

	if (bo->id >= d->noid)
		return QGPU_VICTIM_NOT_NEEDED;
	lo = d->ostart[bo->id];
	hi = d->ostart[bo->id + 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->oref[mid] < d->now_ref)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == d->ostart[bo->id + 1])
		return QGPU_VICTIM_NOT_NEEDED;
	return d->oref[lo] - d->now_ref + 1;
}

static u64 mark_future(struct dev *d)
{
	const struct future *f = d->future;
	u64 stamp = ++d->future_stamp;
	u32 j;

	for (j = f->n; j-- > f->pos;) {
		struct bo *bo = f->bos[j];

		if (bo) {
			bo->future_stamp = stamp;
			bo->future_pos = j;
		}
	}
	return stamp;
}

/* qgpu_mm_victim(): what the policy knows of @bo */
static void mm_victim(struct dev *d, struct bo *bo, u64 stamp,
		      struct qgpu_victim *v)
{
	memset(v, 0, sizeof(*v));
	v->size = bo->node.size;
	v->last_use = bo->tick;
	v->offset = bo->node.start;
	v->cookie = bo;
	v->priority = bo->priority;
#ifdef QGPU_VICTIM_OFFERED
	if (bo->offered) {
		v->flags |= QGPU_VICTIM_OFFERED;
		v->priority = bo->offer_priority;
	}
#endif
#ifdef QGPU_GDSF_TICKS
	v->uses = bo->uses;
#endif
	v->use_tick = bo->use_tick;
	v->use_gap = bo->use_gap;
	v->now = d->lru_tick;
#ifdef QGPU_VICTIM_NOT_NEEDED
	if (d->opt->oracle)
		v->next_use = oracle_next(d, bo);
	else if (stamp)
		v->next_use = bo->future_stamp == stamp ?
			      bo->future_pos - d->future->pos + 1 :
			      QGPU_VICTIM_NOT_NEEDED;
#else
	(void)d;
	(void)stamp;
#endif
	/* what a split would release: its DMA buffer used it just now */
	if (bo->pin_count) {
		v->last_use = d->lru_tick;
		v->use_tick = d->lru_tick;
	}
}

/*
 * qgpu_budget_flag(): the candidates that trim a process over its budget
 * in @seg's group go first, in the policy's order, until its excess
 */
static void budget_flag(struct dev *d, struct seg *seg, struct qgpu_victim *v,
			u32 n)
{
#ifdef QGPU_VICTIM_OVER_BUDGET
	u32 g = seg_group((u32)(seg - d->seg)), i;
	u64 b = budget(d, g);
	bool any = false;

	for (i = 0; i < n; i++) {
		struct owner *o = ((struct bo *)v[i].cookie)->owner;

		if (o)
			o->trim_left = o->usage[g] > b ? o->usage[g] - b : 0;
	}
	for (i = 0; i < n; i++) {
		struct owner *o = ((struct bo *)v[i].cookie)->owner;

		if (!o || !o->trim_left)
			continue;
		v[i].flags |= QGPU_VICTIM_OVER_BUDGET;
		o->trim_left -= o->trim_left < v[i].size ? o->trim_left :
				v[i].size;
		any = true;
	}
	if (any)
		qgpu_policy_order(d->policy, v, n);
#else
	(void)d;
	(void)seg;
	(void)v;
	(void)n;
#endif
}

static int pick_victims(struct dev *d, struct seg *seg, u64 size,
			struct bo *self, struct bo ***out, u32 *n,
			struct qgpu_victim *worst)
{
	struct bo *bo, **victims;
	struct qgpu_victim *v;
	struct mm_scan scan = { .size = size, .hit_start = ~0ull };
	u32 cand = 0, added, i;
	bool found = false;
	u64 stamp = 0;

	for (bo = seg->lru.lru_next; bo != &seg->lru; bo = bo->lru_next)
		cand++;
	v = xcalloc(cand, sizeof(*v));
	victims = xcalloc(cand, sizeof(*victims));
	if (d->future)
		stamp = mark_future(d);
	cand = 0;
	for (bo = seg->lru.lru_next; bo != &seg->lru; bo = bo->lru_next) {
		/* qgpu_mm_weighs_pinned() */
		if (bo == self || (bo->pin_count &&
				   !(d->future && d->future->release &&
				     bo->releasable)))
			continue;
		mm_victim(d, bo, stamp, &v[cand++]);
	}
	qgpu_policy_order(d->policy, v, cand);
	budget_flag(d, seg, v, cand);
	if (stamp && d->future->spare && d->opt->oracle) {
		/* qgpu_policy_spare() by the DMA buffer, not the oracle */
		for (i = 0, added = 0; i < cand; i++)
			if (((struct bo *)v[i].cookie)->future_stamp != stamp)
				v[added++] = v[i];
		cand = added;
	} else if (stamp && d->future->spare) {
		cand = qgpu_policy_spare(v, cand);
	}
	for (added = 0; added < cand && !found; added++)
		found = scan_add_block(&scan,
				       &((struct bo *)v[added].cookie)->node);
	*n = 0;
	for (i = added; i--;) {
		bo = v[i].cookie;
		if (scan_remove_block(&scan, &bo->node) && found) {
			if (!*n && worst)
				*worst = v[i];
			victims[(*n)++] = bo;
		}
	}
	free(v);
	if (!found) {
		free(victims);
		*out = NULL;
		return -ENOSPC;
	}
	for (i = 0; i < *n; i++) {
		if (victims[i]->pin_count) {
			free(victims);
			*out = NULL;
			*n = 0;
			return -EAGAIN;
		}
	}
	*out = victims;
	return 0;
}

static int evict_one(struct dev *d, struct bo *bo, bool to_system, int why);

/* --why: how the victims of one eviction for @size bytes in @seg were chosen */
static void waste_victims(struct dev *d, struct seg *seg, u64 size,
			  struct bo *self, struct bo **victims, u32 n)
{
	struct rp_waste *w = &d->r->w;
	u64 free_b = seg->size - seg->used, sum = 0;
	u64 short_b = size > free_b ? size - free_b : 0;
	bool other = false;
	u32 i, j, s;

	for (s = SEG_VISIBLE; self && s <= SEG_LOCAL; s++)
		if (&d->seg[s] != seg && d->seg[s].present &&
		    !mm_allowed(d, self, s) && best_hole(&d->seg[s].mm, size))
			other = true;
	for (i = 0; i < n; i++) {
		sum += victims[i]->size;
		for (j = d->future ? d->future->pos : 0;
		     d->future && j < d->future->n; j++)
			if (d->future->bos[j] == victims[i]) {
				w->same_sub += victims[i]->size;
				break;
			}
	}
	w->victim += sum;
	if (sum > short_b)
		w->excess += sum - short_b;
	if (other)
		w->other_room += sum;
}

/* qgpu_mm_find_space() */
static int find_space(struct dev *d, struct seg *seg, u64 size,
		      struct mm_node *node, struct bo *self)
{
	struct choice *c;
	struct bo **victims = NULL;
	u32 n = 0, i;
	int ret;

	ret = plan_insert(d, &seg->mm, node, size, INSERT_BEST);
	if (ret != -ENOSPC)
		return ret;
	if (size > seg->size - seg->reserved)
		return -ENOSPC;
	if (plan_replay(d)) {
		c = plan_follow(d);
		if (!c)
			return -EIO;
		ret = c->ret;
		if (!ret) {
			victims = d->plan->victims + c->first;
			n = c->count;
		}
	} else {
		ret = pick_victims(d, seg, size, self, &victims, &n, NULL);
		if (plan_dry(d))
			plan_record(d, ret, 0, victims, n);
	}
	if (!ret && !plan_dry(d))
		waste_victims(d, seg, size, self, victims, n);
	for (i = 0; !ret && i < n; i++) {
		ret = evict_one(d, victims[i], false, RP_WHY_VICTIM);
		/* under pressure: it may migrate back when room returns */
		if (!ret && d->migrate_back)
			victims[i]->evicted = true;
	}
	if (!plan_replay(d))
		free(victims);
	if (ret)
		return ret;
	return plan_insert(d, &seg->mm, node, size, INSERT_EVICT);
}

/* qgpu_mm_evict_one() */
static int evict_one(struct dev *d, struct bo *bo, bool to_system, int why)
{
	struct mm_node node = { 0 };
	int ret;

	if (bo->seg == SEG_SYSTEM)
		return 0;
	if (bo->dead)
		return mm_drop(d, bo);
	if (!plan_dry(d) && bo->seg != SEG_APERTURE) {
		bo->out_why = why;
		bo->out_ev = d->cur;
	}
	/* OfferAllocations: out of VRAM, an offered one is discarded */
	if (bo->offered && bo->seg != SEG_APERTURE)
		to_system = true;
	if (!to_system && bo->seg != SEG_APERTURE &&
	    !mm_allowed(d, bo, SEG_APERTURE) &&
	    !plan_insert(d, &d->seg[SEG_APERTURE].mm, &node, bo->size,
			 INSERT_BEST))
		ret = mm_move(d, bo, SEG_APERTURE, &node);
	else
		ret = mm_move(d, bo, SEG_SYSTEM, NULL);
	if (!ret && !plan_dry(d))
		d->r->c.evictions++;
	return ret;
}

/* qgpu_mm_evict() */
static int mm_evict(struct dev *d, struct bo *bo, bool to_system, int why)
{
	if (bo->pin_count)
		return -EBUSY;
	if (bo->seg == SEG_APERTURE && !to_system)
		return 0;
	return evict_one(d, bo, to_system, why);
}

/* --- residency (qgpu_residency.c) ----------------------------------------- */

static int mm_place(struct dev *d, struct bo *bo, u32 id)
{
	struct mm_node node = { 0 };
	int ret;

	ret = mm_allowed(d, bo, id);
	if (ret)
		return ret;
	if (bo->seg == id)
		return 0;
	ret = find_space(d, &d->seg[id], bo->size, &node, bo);
	if (ret)
		return ret;
	return mm_move(d, bo, id, &node);
}

/* qgpu_mm_order(): its preferred segments, then its set by id */
static unsigned int mm_order(struct bo *bo, u32 *order)
{
	unsigned int n = 0, i;

	for (i = 0; i < 4 && bo->pref[i]; i++)
		order[n++] = bo->pref[i];
	for (i = SEG_VISIBLE; i <= RP_SEG_MAX; i++)
		if (bo->mask & (1u << i))
			order[n++] = i;
	return n;
}

static int find_room(struct dev *d, struct seg *seg, u64 size,
		     struct mm_node *node);

/*
 * qgpu_mm_best_segment(): the VRAM segment of @order, before the aperture,
 * whose best-fit hole for @bo is the smallest (the first of them on a
 * tie); @n when none has room
 */
static unsigned int mm_best_segment(struct dev *d, struct bo *bo,
				    const u32 *order, unsigned int n)
{
	unsigned int i, best = n;
	u64 best_hole_size = 0;

	for (i = 0; i < n && order[i] != SEG_APERTURE; i++) {
		struct seg *seg = &d->seg[order[i]];
		struct mm_node *h;

		if (mm_allowed(d, bo, order[i]) ||
		    bo->size > seg->size - seg->reserved)
			continue;
		h = best_hole(&seg->mm, bo->size);
		if (h && (best == n || h->hole_size < best_hole_size)) {
			best = i;
			best_hole_size = h->hole_size;
		}
	}
	return best;
}

/*
 * qgpu_mm_place_free(): the first VRAM segment of @bo's order, before the
 * aperture, that has room as it is (evicting nothing); with features bit
 * 3, of those, the one whose best-fit hole is the smallest
 * (qgpu_mm_best_segment()); 1 when none has.
 * Migrating back, and, when the trace's features say so, every placement
 * before its evicting walk (qgpu_mm_choose())
 */
static int mm_place_free(struct dev *d, struct bo *bo, const u32 *order,
			 unsigned int n)
{
	unsigned int i = 0;
	int ret;

	if (d->features & RP_FEATURE_BEST_SEGMENT) {
		i = mm_best_segment(d, bo, order, n);
		if (i == n)
			return 1;
	}
	for (; i < n && order[i] != SEG_APERTURE; i++) {
		struct mm_node node = { 0 };

		if (mm_allowed(d, bo, order[i]))
			continue;
		ret = find_room(d, &d->seg[order[i]], bo->size, &node);
		if (ret == -ENOSPC)
			continue;
		if (ret)
			return ret;
		return mm_move(d, bo, order[i], &node);
	}
	return 1;
}

/*
 * qgpu_mm_victim_segment(): with features bit 6, when no VRAM segment has
 * room, the one of @order whose victims the policy would give up first
 * (the victim each segment's set would give up last, compared in the
 * policy's order); *@out = @n when none would make room. A decision,
 * recorded and replayed.
 */
static int mm_victim_segment(struct dev *d, struct bo *bo, const u32 *order,
			     unsigned int n, unsigned int *out)
{
	struct qgpu_victim worst, best_worst;
	unsigned int i, best = n;
	struct choice *c;

	if (plan_replay(d)) {
		c = plan_follow(d);
		if (!c || c->count || c->ret || c->start > n)
			return -EIO;
		*out = (unsigned int)c->start;
		return 0;
	}
	for (i = 0; i < n && order[i] != SEG_APERTURE; i++) {
		struct seg *seg = &d->seg[order[i]];
		struct bo **victims = NULL;
		u32 cnt = 0;

		if (mm_allowed(d, bo, order[i]) ||
		    bo->size > seg->size - seg->reserved)
			continue;
		if (pick_victims(d, seg, bo->size, bo, &victims, &cnt, &worst))
			continue;
		free(victims);
		if (!cnt)
			continue;
		if (best == n ||
		    qgpu_policy_before(d->policy, &worst, &best_worst)) {
			best = i;
			best_worst = worst;
		}
	}
	if (plan_dry(d))
		plan_record(d, 0, best, NULL, 0);
	*out = best;
	return 0;
}

static int mm_choose(struct dev *d, struct bo *bo, u32 seg)
{
	u32 order[RP_SEG_MAX + 4];
	unsigned int n, i;
	int ret = -ENOSPC, r;

	if (seg)
		return mm_place(d, bo, seg);
	if (bo->seg != SEG_SYSTEM)
		return 0;
	n = mm_order(bo, order);
	if (d->features & RP_FEATURE_ROOM_FIRST) {
		r = mm_place_free(d, bo, order, n);
		if (r <= 0)
			return r;
	}
	if (d->features & RP_FEATURE_VICTIM_SEGMENT) {
		r = mm_victim_segment(d, bo, order, n, &i);
		if (r)
			return r;
		if (i < n) {
			r = mm_place(d, bo, order[i]);
			if (!r)
				return 0;
			if (r != -ENOSPC && r != -EBUSY && r != -EINVAL &&
			    r != -EAGAIN)
				return r;
		}
	}
	for (i = 0; i < n; i++) {
		r = mm_place(d, bo, order[i]);
		if (!r)
			return 0;
		/* a split by choice: another segment may still have room */
		if (r == -EAGAIN) {
			ret = r;
			continue;
		}
		if (r != -ENOSPC && r != -EBUSY && r != -EINVAL)
			return r;
		if (r == -EBUSY && ret != -EAGAIN)
			ret = r;
	}
	return ret;
}

static int make_resident(struct dev *d, struct bo *bo, u32 seg)
{
	return mm_choose(d, bo, seg);
}

/* qgpu_mm_find_room(): room as the segment is, evicting nothing */
static int find_room(struct dev *d, struct seg *seg, u64 size,
		     struct mm_node *node)
{
	if (size > seg->size - seg->reserved)
		return -ENOSPC;
	return plan_insert(d, &seg->mm, node, size, INSERT_BEST);
}

/*
 * qgpu_mm_migrate_back(): an allocation an eviction for room left in the
 * aperture segment moves back to a VRAM segment before the aperture in
 * its order that has room now, evicting nothing
 */
static int migrate_back(struct dev *d, struct bo *bo)
{
	u32 order[RP_SEG_MAX + 4];
	int ret;

	if (bo->seg != SEG_APERTURE || !bo->evicted || bo->pin_count)
		return 0;
	ret = mm_place_free(d, bo, order, mm_order(bo, order));
	return ret < 0 ? ret : 0;
}

/* qgpu_mm_use_resident(): a use (a submission's walk, MakeResident) */
static int use_resident(struct dev *d, struct bo *bo)
{
	int ret = make_resident(d, bo, 0);

	if (!ret && d->migrate_back)
		ret = migrate_back(d, bo);
	return ret;
}

/* qgpu_mm_cpu_prepare(), without the waiting */
static int cpu_prepare(struct dev *d, struct bo *bo)
{
	bool vram = seg_is_vram(bo->seg);

	if (vram && lock_outside_vram(d, bo)) {
		if (bo->pin_count)
			return -EBUSY;
		return evict_one(d, bo, false, RP_WHY_CPU);
	}
	/* qgpu_hap_map() fails only for what the whole aperture cannot map */
	if (bo->seg == SEG_LOCAL && (!d->cfg.hap || bo->size > d->cfg.hap))
		return evict_one(d, bo, false, RP_WHY_CPU);
	return 0;
}

/* --- the walk of a physical submission (qgpu_submit.c) --------------------- */

struct walk {
	struct dev *d;
	const struct rp_submit *sub;
	struct bo **bos;	/* per entry */
	struct bo **table;	/* per slot */
	struct bo **undo;	/* per entry */
	struct bo **devslot;	/* per slot */
	u32 *slots, nslots;
	u32 *mark, gen;
	u32 ran;
	bool dry;
	struct bo **pinned;
	u32 npinned;
	u32 portions;
	struct future future;
};

static void unpin_all(struct walk *s)
{
	u32 i;

	for (i = 0; i < s->npinned; i++)
		s->pinned[i]->pin_count--;
	s->npinned = 0;
}

static void pin(struct walk *s, struct bo *bo)
{
	if (bo->pin_count)
		return;
	bo->pin_count++;
	s->pinned[s->npinned++] = bo;
}

static void portion(struct walk *s)
{
	u32 i;

	if (s->dry) {
		s->portions++;
		return;
	}
	for (i = 0; i < s->npinned; i++)
		mm_touch(s->d, s->pinned[i]);
	s->portions++;
}

static void split_state(struct walk *s, u32 i0, u32 x)
{
	const struct rp_entry *e = s->sub->e;
	u32 n = s->sub->ne, j, k;

	for (; s->ran < n && e[s->ran].patch < x; s->ran++)
		s->devslot[e[s->ran].slot] = s->bos[s->ran];
	unpin_all(s);
	s->gen++;
	for (j = i0; j < n && e[j].split == x; j++)
		s->mark[e[j].slot] = s->gen;
	for (k = 0; k < s->nslots; k++) {
		u32 slot = s->slots[k];

		if (s->table[slot] && s->mark[slot] != s->gen)
			pin(s, s->table[slot]);
	}
	for (j = s->ran; j < i0; j++)
		if (s->bos[j])
			pin(s, s->bos[j]);
	for (k = 0; k < s->nslots; k++) {
		u32 slot = s->slots[k];
		struct bo *bo = s->devslot[slot];

		if (bo && !bo->pin_count)
			s->devslot[slot] = NULL;
	}
}

struct group_bo {
	struct bo *bo;
	u32 nsegs;
};

static int cmp_group(const struct group_bo *x, const struct group_bo *y)
{
	if (x->nsegs != y->nsegs)
		return x->nsegs < y->nsegs ? -1 : 1;
	if (x->bo->size != y->bo->size)
		return x->bo->size > y->bo->size ? -1 : 1;
	return 0;
}

static void swap_group(struct group_bo *a, struct group_bo *b)
{
	struct group_bo t = *a;

	*a = *b;
	*b = t;
}

static size_t sort_parent(size_t i)
{
	i -= 1;
	i -= 1 & -(i & 1);
	return i / 2;
}

/*
 * The kernel's sort() (lib/sort.c, Linux 6.12): a bottom-up heapsort,
 * not stable, so that ties come out in the same order as in the kernel.
 */
static void kernel_sort(struct group_bo *v, size_t num)
{
	size_t n = num, a = num / 2;
	size_t shift = 0;

	if (!a)
		return;
	for (;;) {
		size_t b, c, dd;

		if (a) {
			a -= 1 << shift;
		} else if (n > 3) {
			n -= 1;
			swap_group(&v[0], &v[n]);
			shift = cmp_group(&v[1], &v[2]) <= 0;
			a = 1 << shift;
			n -= 1;
			swap_group(&v[a], &v[n]);
		} else {
			break;
		}
		for (b = a; c = 2 * b + 1, (dd = c + 1) < n;)
			b = cmp_group(&v[c], &v[dd]) > 0 ? c : dd;
		if (dd == n)
			b = c;
		while (b != a && cmp_group(&v[a], &v[b]) >= 0)
			b = sort_parent(b);
		c = b;
		while (b != a) {
			b = sort_parent(b);
			swap_group(&v[b], &v[c]);
		}
	}
	n -= 1;
	swap_group(&v[0], &v[n]);
	if (n == 2 && cmp_group(&v[0], &v[1]) > 0)
		swap_group(&v[0], &v[1]);
}

static int popcount32(u32 x)
{
	int n = 0;

	for (; x; x &= x - 1)
		n++;
	return n;
}

static int place_group(struct walk *s, u32 i)
{
	const struct rp_entry *e = s->sub->e;
	u32 n = s->sub->ne, split = e[i].split, j, k = 0;
	struct group_bo *g;
	int ret = 0;

	for (j = i; j < n && e[j].split == split; j++)
		k++;
	if (k < 2)
		return 0;
	g = xcalloc(k, sizeof(*g));
	for (k = 0, j = i; j < n && e[j].split == split; j++) {
		if (!s->bos[j])
			continue;
		g[k].bo = s->bos[j];
		g[k].nsegs = popcount32(s->bos[j]->mask);
		k++;
	}
	kernel_sort(g, k);
	for (j = 0; j < k && !ret; j++) {
		ret = use_resident(s->d, g[j].bo);
		if (!ret && g[j].bo->seg != SEG_SYSTEM)
			pin(s, g[j].bo);
	}
	free(g);
	return ret;
}

/* qgpu_submit_split_frees() */
static bool split_frees(struct walk *s, u32 i, u32 start, u64 *stampp)
{
	const struct rp_entry *e = s->sub->e;
	u32 n = s->sub->ne, x = e[i].split, i0 = i, ran = s->ran, j, k;
	u64 stamp;

	if (x <= start)
		return false;
	while (i0 && e[i0 - 1].split == x)
		i0--;
	s->future.pos = i0;
	stamp = mark_future(s->d);
	s->future.pos = i;
	while (ran < n && e[ran].patch < x)
		ran++;
	s->gen++;
	for (j = i0; j < n && e[j].split == x; j++)
		s->mark[e[j].slot] = s->gen;
	for (k = 0; k < s->nslots; k++) {
		struct bo *bo = s->table[s->slots[k]];

		if (bo && s->mark[s->slots[k]] != s->gen)
			bo->future_stamp = stamp;
	}
	for (j = ran; j < i0; j++)
		if (s->bos[j])
			s->bos[j]->future_stamp = stamp;
	*stampp = stamp;
	for (k = 0; k < s->npinned; k++)
		if (s->pinned[k]->future_stamp != stamp)
			return true;
	return false;
}

/* qgpu_submit_releasable() */
static void releasable(struct walk *s, u64 stamp, bool on)
{
	u32 k;

	for (k = 0; k < s->npinned; k++)
		s->pinned[k]->releasable = on &&
					   s->pinned[k]->future_stamp != stamp;
}

static int place_one(struct walk *s, u32 i, bool group)
{
	return group ? place_group(s, i) : use_resident(s->d, s->bos[i]);
}

/* qgpu_submit_place(); as before the features: the victim policy's order */
static int place(struct walk *s, u32 i, u32 start, bool group)
{
	u64 stamp;
	int ret;

	if (!(s->d->features & RP_FEATURE_SPLIT_EARLY))
		return place_one(s, i, group);
	if (s->d->features & RP_FEATURE_SPLIT_CHOICE) {
		if (split_frees(s, i, start, &stamp)) {
			releasable(s, stamp, true);
			s->future.spare = true;
			s->future.release = true;
			ret = place_one(s, i, group);
			s->future.release = false;
			s->future.spare = false;
			releasable(s, stamp, false);
			return ret == -EAGAIN || ret == -ENOSPC ? 1 : ret;
		}
		s->future.spare = true;
		ret = place_one(s, i, group);
		s->future.spare = false;
		if (ret != -ENOSPC)
			return ret;
		return place_one(s, i, group);
	}
	s->future.spare = true;
	ret = place_one(s, i, group);
	s->future.spare = false;
	if (ret != -ENOSPC)
		return ret;
	if (split_frees(s, i, start, &stamp))
		return 1;
	return place_one(s, i, group);
}

static int walk(struct walk *s)
{
	const struct rp_entry *e = s->sub->e;
	struct rp_result *r = s->d->r;
	u32 i = 0, start = 0, n = s->sub->ne;
	int ret;

	while (i < n) {
		struct bo *bo = s->bos[i];

		s->future.pos = i;
		s->d->now_ref = s->sub->ref0 + i;
		ret = 0;
		if (!i || e[i].split != e[i - 1].split) {
			ret = place(s, i, start, true);
			if (ret == -ENOSPC)
				ret = 0;
			if (ret < 0)
				return ret;
		}
		if (bo && !ret)
			ret = place(s, i, start, false);
		if (ret == 1 || (ret == -ENOSPC && e[i].split > start)) {
			u32 x = e[i].split;

			portion(s);
			start = x;
			while (i && e[i - 1].split == x) {
				i--;
				s->table[e[i].slot] = s->undo[i];
			}
			split_state(s, i, x);
			continue;
		}
		if (ret)
			return ret;
		if (bo) {
			if (bo->seg == SEG_SYSTEM)
				return -EBUSY;
			pin(s, bo);
			if (!s->dry) {
				bo->pristine = false;
				r->ref[s->sub->ref0 + i] = seg_is_vram(bo->seg) ?
					RP_REF_VRAM : RP_REF_OTHER;
			}
		}
		s->undo[i] = s->table[e[i].slot];
		s->table[e[i].slot] = bo;
		i++;
	}
	portion(s);
	return 0;
}

static void walk_reset(struct walk *s)
{
	u32 k;

	unpin_all(s);
	for (k = 0; k < s->nslots; k++) {
		s->table[s->slots[k]] = NULL;
		s->devslot[s->slots[k]] = NULL;
	}
	s->ran = 0;
	s->portions = 0;
}

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* qgpu_submit_precheck() */
static int precheck(struct dev *d, struct walk *s)
{
	const struct rp_submit *sub = s->sub;
	unsigned long long cap[RP_SEG_MAX + 1] = { 0 };
	struct qgpu_split_entry *e = xcalloc(sub->ne, sizeof(*e));
	struct qgpu_split_alloc *al = xcalloc(sub->nallocs, sizeof(*al));
	unsigned int *refs = xcalloc(sub->nallocs, sizeof(*refs));
	int *table = xcalloc(d->cfg.slots, sizeof(*table));
	u32 i;
	int bad;

	for (i = SEG_VISIBLE; i <= RP_SEG_MAX; i++)
		if (d->seg[i].present)
			cap[i] = d->seg[i].size - d->seg[i].reserved;
	/* qgpu_submit_canon(): one index per allocation, however listed */
	d->canon_stamp++;
	for (i = 0; i < sub->ne; i++) {
		struct bo *bo = s->bos[i];

		if (bo && bo->canon_stamp != d->canon_stamp) {
			bo->canon_stamp = d->canon_stamp;
			bo->canon = sub->e[i].alloc;
		}
		e[i].alloc = bo ? (int)bo->canon : -1;
		e[i].slot = sub->e[i].slot;
		e[i].split_offset = sub->e[i].split;
		if (bo && sub->e[i].alloc < sub->nallocs) {
			al[sub->e[i].alloc].size = bo->size;
			al[sub->e[i].alloc].mask = bo->mask;
		}
	}
	bad = qgpu_split_check(e, sub->ne, al, sub->nallocs, cap,
			       RP_SEG_MAX + 1, table, d->cfg.slots, refs);
	free(e);
	free(al);
	free(refs);
	free(table);
	return bad == -1 ? 0 : -ENOSPC;
}

static int submit(struct dev *d, const struct rp_submit *sub)
{
	struct walk s = { .d = d, .sub = sub };
	u32 n = sub->ne, i, slots = d->cfg.slots;
	struct plan plan;
	int ret;

	s.bos = xcalloc(n, sizeof(*s.bos));
	s.undo = xcalloc(n, sizeof(*s.undo));
	s.slots = xcalloc(n, sizeof(*s.slots));
	s.pinned = xcalloc(n + sub->nallocs, sizeof(*s.pinned));
	for (i = 0; i < n; i++) {
		if (sub->e[i].slot >= slots)
			slots = sub->e[i].slot + 1;
		if (!sub->e[i].id)
			continue;
		s.bos[i] = bo_get(d, sub->e[i].id);
		if (!s.bos[i])
			d->r->unknown++;
	}
	s.table = xcalloc(slots, sizeof(*s.table));
	s.devslot = xcalloc(slots, sizeof(*s.devslot));
	s.mark = xcalloc(slots, sizeof(*s.mark));
	for (i = 0; i < n; i++) {
		if (!s.mark[sub->e[i].slot]) {
			s.mark[sub->e[i].slot] = 1;
			s.slots[s.nslots++] = sub->e[i].slot;
		}
	}
	qsort(s.slots, s.nslots, sizeof(*s.slots), cmp_u32);
	for (i = 0; i < s.nslots; i++)
		s.mark[s.slots[i]] = 0;
	ret = precheck(d, &s);
	/* OfferAllocations: a DMA buffer may not use an offered allocation */
	for (i = 0; !ret && i < n; i++)
		if (s.bos[i] && s.bos[i]->offered)
			ret = -EINVAL;
	if (!ret) {
		for (i = 0; i < n; i++)
			if (s.bos[i])
				s.bos[i]->submit_write = false;
		for (i = 0; i < n; i++)
			if (s.bos[i] && sub->e[i].write)
				s.bos[i]->submit_write = true;
		s.future.bos = s.bos;
		s.future.n = n;
		d->future = &s.future;
		plan_begin(d, &plan);
		s.dry = true;
		ret = walk(&s);
		walk_reset(&s);
		plan_rollback(d);
		s.dry = false;
		if (!ret) {
			d->plan->mode = PLAN_REPLAY;
			d->plan->next = 0;
			ret = walk(&s);
			unpin_all(&s);
		}
		plan_end(d);
		d->future = NULL;
	}
	d->r->submits++;
	if (ret) {
		d->r->failed_submits++;
	} else {
		d->r->portions += s.portions;
		d->r->splits += s.portions - 1;
	}
	free(s.bos);
	free(s.undo);
	free(s.slots);
	free(s.pinned);
	free(s.table);
	free(s.devslot);
	free(s.mark);
	return ret;
}

/* --- page tables (qgpu_pagetable.c) --------------------------------------- */

/* qgpu_budget_pt(): with features bit 4, @pt counts in its owner's usage */
static void pt_charge(struct dev *d, struct pt *pt, u64 vidmem)
{
	if (!(d->features & RP_FEATURE_PT_BUDGET) || !vidmem)
		return;
	pt->owner = owner_get(d, vidmem);
	pt->owner->usage[seg_group(pt->seg)] += PT_SIZE;
}

/* qgpu_pt_alloc() */
static void pt_alloc(struct dev *d, u64 id, int kret, u64 vidmem)
{
	static const u32 order[] = { SEG_LOCAL, SEG_VISIBLE };
	struct pt *pt = pt_get(d, id, true);
	unsigned int i;
	int ret = -ENOSPC;

	if (pt->node.allocated)
		mm_remove(&d->seg[pt->seg].mm, &pt->node);
	if (pt->owner)
		pt->owner->usage[seg_group(pt->seg)] -= PT_SIZE;
	pt->owner = NULL;
	memset(&pt->node, 0, sizeof(pt->node));
	for (i = 0; i < 2 && ret; i++) {
		if (!d->seg[order[i]].present)
			continue;
		ret = find_space(d, &d->seg[order[i]], PT_SIZE, &pt->node,
				 NULL);
		if (!ret)
			pt->seg = order[i];
	}
	if (!ret)
		d->seg[pt->seg].used += PT_SIZE;
	else
		d->r->pt_failed++;
	/* the kernel could not: it gave the table back at once */
	if (!ret && kret) {
		mm_remove(&d->seg[pt->seg].mm, &pt->node);
		d->seg[pt->seg].used -= PT_SIZE;
	} else if (!ret) {
		pt_charge(d, pt, vidmem);
	}
}

static void pt_free(struct dev *d, u64 id)
{
	struct pt *pt = pt_get(d, id, false);

	if (!pt || !pt->node.allocated)
		return;
	d->seg[pt->seg].used -= PT_SIZE;
	mm_remove(&d->seg[pt->seg].mm, &pt->node);
	if (pt->owner)
		pt->owner->usage[seg_group(pt->seg)] -= PT_SIZE;
	pt->owner = NULL;
}

/* --- the books at a snapshot ---------------------------------------------- */

static void seg_init(struct dev *d, u32 id, u64 size, u64 reserved)
{
	struct seg *s = &d->seg[id];

	s->present = true;
	s->size = size;
	s->reserved = reserved;
	s->used = 0;
	s->allocations = 0;
	mm_init(&s->mm, 0, size);
	s->lru.lru_prev = s->lru.lru_next = &s->lru;
}

static void bo_from_snap(struct bo *bo, const struct rp_ev *e)
{
	u32 i;

	bo->size = e->v[1];
	bo->mask = e->v[2];
	bo->flags = e->v[3];
	for (i = 0; i < 4; i++)
		bo->pref[i] = (e->v[4] >> (8 * i)) & 0xff;
	bo->tick = e->v[7];
	bo->pristine = e->v[8] & 1;
	bo->dead = e->v[8] & 2;
	bo->import = e->v[8] & 4;
	bo->lock_count = e->v[9];
	bo->attachments = e->v[10];
	bo->priority = e->v[11] ? e->v[11] : QGPU_PRIORITY_NORMAL;
}

static void bo_state_from_snap(struct dev *d, struct bo *bo,
			       const struct rp_ev *e)
{
	if (!bo)
		return;
	bo->offered = e->v[1];
	bo->offer_priority = e->v[1];
	bo->mappings = e->v[2];
	bo->evicted = e->v[3];
	bo->owner = owner_get(d, e->v[4]);
}

/* The books exactly as the snapshot has them; returns the event after it */
static size_t load_snapshot(struct dev *d, size_t i)
{
	const struct rp_trace *t = d->t;
	struct mm_node *last[RP_SEG_MAX + 1];
	u64 stamps[RP_SEG_MAX + 1];
	u32 id;

	for (id = 0; id <= RP_SEG_MAX; id++) {
		last[id] = NULL;
		stamps[id] = 0;
	}
	d->lru_tick = t->ev[i].v[6];
	for (i++; i < t->nev && t->ev[i].kind != EV_SNAP_END; i++) {
		const struct rp_ev *e = &t->ev[i];
		u32 s = e->v[0] <= RP_SEG_MAX ? e->v[0] : 0;
		struct mm_node *node = NULL;
		struct bo *bo;

		switch (e->kind) {
		case EV_SNAP_SEG:
			if (!s)
				break;
			seg_init(d, s, e->v[1], e->v[2]);
			d->seg[s].used = e->v[3];
			last[s] = &d->seg[s].mm.head;
			/* holes get their stamps from the hole lines below */
			rm_hole(&d->seg[s].mm.head);
			break;
		case EV_SNAP_NODE:
			if (!s || !last[s])
				break;
			if (e->v[3] == RP_NODE_BO) {
				bo = bo_get(d, e->v[4]);
				if (!bo)
					bo = bo_new(d, e->v[4]);
				bo->seg = s;
				node = &bo->node;
			} else if (e->v[3] == RP_NODE_PT) {
				struct pt *pt = pt_get(d, e->v[4], true);

				pt->seg = s;
				pt_charge(d, pt, e->v[5]);
				node = &pt->node;
			} else {
				node = &d->pbuf;
			}
			memset(node, 0, sizeof(*node));
			node->start = e->v[1];
			node->size = e->v[2];
			node->allocated = true;
			link_after(last[s], node);
			last[s] = node;
			break;
		case EV_SNAP_HOLE:
			if (!s)
				break;
			stamps[s]++;
			break;
		case EV_SNAP_BO:
			bo = bo_get(d, e->v[0]);
			if (!bo)
				bo = bo_new(d, e->v[0]);
			bo_from_snap(bo, e);
			if (bo->seg && bo->seg <= RP_SEG_MAX) {
				struct seg *sg = &d->seg[bo->seg];

				sg->allocations++;
				lru_add_tail(sg, bo);
			}
			break;
		case EV_SNAP_BO_STATE:
			bo_state_from_snap(d, bo_get(d, e->v[0]), e);
			break;
		}
	}
	/* each file's usage: its resident allocations */
	for (id = 1; id <= RP_SEG_MAX; id++) {
		struct bo *bo;

		if (!d->seg[id].present)
			continue;
		for (bo = d->seg[id].lru.lru_next; bo != &d->seg[id].lru;
		     bo = bo->lru_next)
			if (bo->owner)
				bo->owner->usage[seg_group(id)] +=
					bo->node.size;
	}
	/* load_holes() numbers the holes 1..N: the clock goes on from there */
	for (id = 1; id <= RP_SEG_MAX; id++)
		if (d->seg[id].present)
			d->seg[id].mm.clock = stamps[id];
	return i;
}

/* The holes of the snapshot starting at event @i: set their stack order */
static void load_holes(struct dev *d, size_t first, size_t end)
{
	const struct rp_trace *t = d->t;
	u64 left[RP_SEG_MAX + 1] = { 0 };
	size_t i;

	for (i = first; i < end; i++)
		if (t->ev[i].kind == EV_SNAP_HOLE && t->ev[i].v[0] <= RP_SEG_MAX)
			left[t->ev[i].v[0]]++;
	for (i = first; i < end; i++) {
		const struct rp_ev *e = &t->ev[i];
		struct mm_node *n;
		struct mm *mm;

		if (e->kind != EV_SNAP_HOLE || e->v[0] > RP_SEG_MAX ||
		    !d->seg[e->v[0]].present)
			continue;
		mm = &d->seg[e->v[0]].mm;
		n = &mm->head;
		do {
			if (hole_start(n) == e->v[1] &&
			    n->next->start - hole_start(n) == e->v[2]) {
				n->hole_size = e->v[2];
				n->stamp = left[e->v[0]]--;
				break;
			}
			n = n->next;
		} while (n != &mm->head);
	}
}

/*
 * A device of another configuration: empty segments with their
 * reservations (the paging buffer; the page tables of the snapshot, the
 * paging process's first, placed as the kernel places page tables); what
 * the snapshot had resident starts in system memory.
 */
static size_t fresh_books(struct dev *d, size_t i)
{
	const struct rp_trace *t = d->t;
	u32 id;

	for (id = 1; id <= RP_SEG_MAX; id++)
		if (d->cfg.seg_size[id])
			seg_init(d, id, d->cfg.seg_size[id],
				 d->cfg.seg_reserved[id]);
	if (d->seg[SEG_APERTURE].present && d->cfg.seg_reserved[SEG_APERTURE])
		mm_reserve(&d->seg[SEG_APERTURE].mm, &d->pbuf, 0,
			   d->cfg.seg_reserved[SEG_APERTURE]);
	d->lru_tick = t->ev[i].v[6];
	for (i++; i < t->nev && t->ev[i].kind != EV_SNAP_END; i++) {
		const struct rp_ev *e = &t->ev[i];
		struct bo *bo;

		if (e->kind == EV_SNAP_BO) {
			bo = bo_new(d, e->v[0]);
			bo_from_snap(bo, e);
			bo->seg = SEG_SYSTEM;
			if (e->v[5] && e->v[5] != SEG_APERTURE)
				bo->pristine = false;
		}
		if (e->kind == EV_SNAP_BO_STATE)
			bo_state_from_snap(d, bo_get(d, e->v[0]), e);
		/* page tables (the paging process's first) placed anew */
		if (e->kind == EV_SNAP_NODE && e->v[3] == RP_NODE_PT)
			pt_alloc(d, e->v[4], 0, e->v[5]);
	}
	return i;
}

/* Compare the books with the kernel's at the snapshot starting at @i */
static void compare_books(struct dev *d, size_t i)
{
	const struct rp_trace *t = d->t;
	struct rp_result *r = d->r;
	struct mm_node *at[RP_SEG_MAX + 1];
	struct bo *lru[RP_SEG_MAX + 1];
	u32 id;

	r->state_match = true;
	for (id = 0; id <= RP_SEG_MAX; id++) {
		at[id] = d->seg[id].present ? d->seg[id].mm.head.next : NULL;
		lru[id] = d->seg[id].present ? d->seg[id].lru.lru_next : NULL;
	}
	for (i++; i < t->nev && t->ev[i].kind != EV_SNAP_END; i++) {
		const struct rp_ev *e = &t->ev[i];
		u32 s = e->v[0] <= RP_SEG_MAX ? e->v[0] : 0;

		if (e->kind == EV_SNAP_NODE && s && at[s]) {
			struct mm_node *n = at[s];

			if (n == &d->seg[s].mm.head || n->start != e->v[1] ||
			    n->size != e->v[2]) {
				snprintf(r->state_diff, sizeof(r->state_diff),
					 "segment %u: the kernel has a range at %llu (%llu bytes), the replay %s %llu",
					 s, (unsigned long long)e->v[1],
					 (unsigned long long)e->v[2],
					 n == &d->seg[s].mm.head ? "none from" : "one at",
					 (unsigned long long)(n == &d->seg[s].mm.head ? 0 : n->start));
				r->state_match = false;
				return;
			}
			at[s] = n->next;
		} else if (e->kind == EV_SNAP_BO) {
			struct bo *bo = bo_get(d, e->v[0]);
			u32 ks = e->v[5];

			if (!bo || bo->seg != ks || (ks && bo->node.start != e->v[6])) {
				snprintf(r->state_diff, sizeof(r->state_diff),
					 "allocation %llu: the kernel has it in segment %u at %llu, the replay in %u at %llu",
					 (unsigned long long)e->v[0], ks,
					 (unsigned long long)e->v[6],
					 bo ? bo->seg : 0,
					 (unsigned long long)(bo ? bo->node.start : 0));
				r->state_match = false;
				return;
			}
			if (ks && ks <= RP_SEG_MAX && lru[ks] != bo) {
				snprintf(r->state_diff, sizeof(r->state_diff),
					 "segment %u: LRU order differs at allocation %llu",
					 ks, (unsigned long long)e->v[0]);
				r->state_match = false;
				return;
			}
			if (ks && ks <= RP_SEG_MAX)
				lru[ks] = bo->lru_next;
		}
	}
	for (id = 1; id <= RP_SEG_MAX; id++) {
		if (at[id] && at[id] != &d->seg[id].mm.head) {
			snprintf(r->state_diff, sizeof(r->state_diff),
				 "segment %u: the replay has a range at %llu the kernel has not",
				 id, (unsigned long long)at[id]->start);
			r->state_match = false;
			return;
		}
	}
}

/* --- the replay ----------------------------------------------------------- */

static void mark_ref(struct dev *d, u64 ref, struct bo *bo, int ret)
{
	if (ref < d->t->nrefs)
		d->r->ref[ref] = ret ? RP_REF_SKIPPED :
				 seg_is_vram(bo->seg) ? RP_REF_VRAM :
				 RP_REF_OTHER;
}

int rp_replay(const struct rp_trace *t, const struct rp_config *cfg,
	      u32 policy, const struct rp_options *opt, struct rp_result *r)
{
	static const struct rp_options none;
	struct dev dv = { 0 }, *d = &dv;
	bool started = false;
	u64 ref = 0;
	size_t i, j;
	int snaps = 0;

	memset(r, 0, sizeof(*r));
	r->policy = policy;
	r->first_mismatch_line = -1;
	r->ref = xcalloc(t->nrefs + 1, 1);
	r->out = xcalloc(t->nev + 1, 1);
	d->t = t;
	d->cfg = *cfg;
	d->opt = opt ? opt : &none;
	d->r = r;
	d->policy = policy;
	if (d->opt->oracle)
		oracle_init(d);
	if (d->opt->check) {
		d->kmoves = xcalloc(t->nev, sizeof(*d->kmoves));
		d->ktouches = xcalloc(t->nev, sizeof(*d->ktouches));
		for (i = 0; i < t->nev; i++) {
			if (t->ev[i].kind == EV_MOVE)
				d->kmoves[d->nkmoves++] = &t->ev[i];
			if (t->ev[i].kind == EV_TOUCH)
				d->ktouches[d->nktouches++] = &t->ev[i];
		}
	}
	for (i = 0; i < t->nev; i++) {
		const struct rp_ev *e = &t->ev[i];
		struct bo *bo = NULL;
		int ret;

		d->cur = e;
		d->now_ref = ref;
		switch (e->kind) {
		case EV_SNAP_BEGIN:
			snaps++;
			if (!started) {
				started = true;
				/* decisions of the recorded memory manager */
				d->features = d->opt->features_set ?
					      d->opt->features : e->v[9];
				d->migrate_back = d->features &
						  RP_FEATURE_MIGRATE_BACK;
				/* 0: a trace from before budgets (100 %) */
				d->budget_pct = e->v[10] ? e->v[10] : 100;
				j = cfg->as_recorded ? load_snapshot(d, i) :
				    fresh_books(d, i);
				if (cfg->as_recorded)
					load_holes(d, i, j);
				i = j;
			} else if (cfg->as_recorded && d->opt->check) {
				compare_books(d, i);
			}
			continue;
		default:
			break;
		}
		if (!started)
			continue;
		switch (e->kind) {
		case EV_CREATE:
			bo = bo_new(d, e->v[0]);
			bo->size = e->v[1];
			bo->mask = e->v[2];
			bo->flags = e->v[3];
			for (j = 0; j < 4; j++)
				bo->pref[j] = (e->v[4] >> (8 * j)) & 0xff;
			continue;
		case EV_SUBMIT:
			submit(d, &t->sub[t->ev_sub[i]]);
			ref += t->sub[t->ev_sub[i]].ne;
			continue;
		case EV_PT_ALLOC:
			pt_alloc(d, e->v[0], (int)e->v[4], e->v[5]);
			continue;
		case EV_PT_FREE:
			pt_free(d, e->v[0]);
			continue;
		case EV_BUDGET:
			d->budget_pct = e->v[0];
			continue;
		case EV_POLICY:
			/* the kernel's run changed policy; a policy's own does not */
			if (d->opt->check && e->v[0] < QGPU_POLICY_COUNT)
				d->policy = e->v[0];
			continue;
		case EV_DESTROY: case EV_REAP: case EV_RESIDE:
		case EV_EVICT_REQ: case EV_LOCK: case EV_UNLOCK:
		case EV_ATTACH: case EV_DETACH: case EV_MAKE_RESIDENT:
		case EV_CPU_FAULT: case EV_PRIORITY: case EV_OFFER:
		case EV_RECLAIM: case EV_GPU_MAP: case EV_OWNER:
		case EV_GPU_WRITE:
			bo = bo_get(d, e->v[0]);
			if (!bo) {
				r->unknown++;
				if (e->kind == EV_RESIDE ||
				    (e->kind == EV_MAKE_RESIDENT && !e->v[1]))
					ref++;
				continue;
			}
			break;
		default:
			continue;
		}
		switch (e->kind) {
		case EV_DESTROY:
			bo->dead = true;
			if (!e->v[2])
				mm_drop(d, bo);
			break;
		case EV_REAP:
			mm_drop(d, bo);
			break;
		case EV_RESIDE:
			/* an offered allocation is reclaimed first */
			ret = bo->offered ? -EINVAL :
			      make_resident(d, bo, e->v[1]);
			if (!ret)
				mm_touch(d, bo);
			mark_ref(d, ref++, bo, ret);
			break;
		case EV_EVICT_REQ:
			if (!mm_evict(d, bo, e->v[1], RP_WHY_REQUEST))
				mm_touch(d, bo);
			r->out[i] = !seg_is_vram(bo->seg);
			break;
		case EV_LOCK:
			ret = bo->offered ? -EINVAL : 0;
			if (!ret && lock_outside_vram(d, bo) &&
			    seg_is_vram(bo->seg)) {
				if (bo->mask & (1u << SEG_APERTURE) ||
				    bo->flags & QGPU_GEM_CPU_ACCESS)
					ret = mm_evict(d, bo, false, RP_WHY_CPU);
				else
					ret = -EBUSY;
			}
			if (!ret)
				bo->lock_count++;
			r->out[i] = !ret && lock_outside_vram(d, bo) &&
				    !seg_is_vram(bo->seg);
			break;
		case EV_UNLOCK:
			if (bo->lock_count)
				bo->lock_count--;
			break;
		case EV_ATTACH:
			ret = 0;
			if (bo->seg != SEG_SYSTEM && bo->seg != SEG_APERTURE)
				ret = mm_evict(d, bo, false, RP_WHY_REQUEST);
			if (!ret)
				bo->attachments++;
			break;
		case EV_DETACH:
			if (bo->attachments)
				bo->attachments--;
			break;
		case EV_PRIORITY:
			bo->priority = e->v[1];
			break;
		case EV_OFFER:
			bo->offered = true;
			bo->offer_priority = e->v[1];
			break;
		case EV_RECLAIM:
			bo->offered = false;
			break;
		case EV_OWNER:
			bo->owner = owner_get(d, e->v[1]);
			break;
		case EV_GPU_WRITE:
			/* qgpu_vm_written(), qgpu_dmabuf_attach() */
			bo->pristine = false;
			break;
		case EV_GPU_MAP:
			if (e->v[1])
				bo->mappings++;
			else if (bo->mappings)
				bo->mappings--;
			break;
		case EV_MAKE_RESIDENT:
			if (e->v[1]) {
				mm_evict(d, bo, true, RP_WHY_REQUEST);
			} else {
				ret = use_resident(d, bo);
				if (!ret)
					mm_note_use(bo, d->lru_tick);
				mark_ref(d, ref++, bo, ret);
			}
			break;
		case EV_CPU_FAULT:
			ret = cpu_prepare(d, bo);
			/* the kernel waited for a move in flight: no use yet */
			if (!ret && !e->v[2] && !e->v[3]) {
				mm_touch(d, bo);
				bo->pristine = false;
			}
			break;
		}
	}
	if (d->opt->check && d->ktouch < d->nktouches && !r->tick_mismatch++)
		snprintf(r->tick_diff, sizeof(r->tick_diff),
			 "the kernel used allocations %zu times more than the replay, the first at line %u",
			 d->nktouches - d->ktouch, d->ktouches[d->ktouch]->line);
	if (d->opt->check && d->kmove < d->nkmoves && !r->move_mismatch) {
		r->move_mismatch++;
		r->first_mismatch_line = d->kmoves[d->kmove]->line;
		snprintf(r->mismatch, sizeof(r->mismatch),
			 "the kernel made %zu moves more than the replay, the first at line %u",
			 d->nkmoves - d->kmove, d->kmoves[d->kmove]->line);
	}
	for (i = 0; i < d->nbos; i++)
		free(d->bos[i]);
	free(d->bos);
	for (i = 0; i < d->npts; i++)
		free(d->pts[i]);
	free(d->pts);
	for (i = 0; i < d->nowners; i++)
		free(d->owners[i]);
	free(d->owners);
	free(d->kmoves);
	free(d->ktouches);
	free(d->oref);
	free(d->ostart);
	return snaps ? 0 : -1;
}

void rp_result_free(struct rp_result *r)
{
	free(r->ref);
	free(r->out);
	r->ref = NULL;
	r->out = NULL;
}
