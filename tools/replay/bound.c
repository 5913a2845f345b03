// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu-replay: offline bounds on the bytes paged into VRAM.
 *
 * The references are those of rp_refs_walk(): each use of an allocation
 * that every replayed policy and the oracle served from VRAM (a
 * patch-location entry of a physical submission, a make-resident
 * request). VRAM is counted in pages: every VRAM segment less its
 * reservation. A reference needs all of its allocation's pages in VRAM at
 * once; a destroyed allocation leaves VRAM for free.
 *
 * min: Belady's MIN at page granularity: on a miss, the pages evicted are
 * those whose next use is furthest (never used again first), any number
 * of an allocation's pages at a time. No schedule that keeps each
 * reference's allocation in VRAM while it is used pages in fewer bytes:
 * the placement rules, contiguity and whole-allocation moves of the real
 * memory manager only add constraints, so this is a lower bound for every
 * policy.
 *
 * The capacity MIN may fill at a reference is what the segments can hold
 * then (segment-aware, the default): an allocation lies whole in one
 * segment, so a segment holds at most the largest sum of sizes of the live
 * allocations that fits in it, and the allocations one group of entries
 * uses (the entries of one submission with one SplitOffset: no portion
 * boundary falls between them) are all in VRAM together, each whole in
 * some segment. The capacity at a reference of such a group is the largest,
 * over the ways of dealing the group's allocations to the segments, of the
 * group's bytes plus, per segment, the largest sum of the other live
 * allocations' sizes that fits beside them (one allocation may count in
 * several segments: too much capacity, never too little); and while its
 * references are served, no page of the group is a victim (MIN for a set
 * of pages requested at once). Page tables
 * (never evicted) are one page each that every group holds too, counted
 * when every replay placed every one (rp_config.bound_pts). Every schedule
 * of the real memory manager holds at most that much in VRAM at that
 * moment, and MIN (furthest next use first) stays optimal when the
 * capacity varies from one reference to the next, so the result is still
 * a lower bound; it only ignores less. With pooled capacity (every VRAM
 * segment less its reservation as one pool of pages: rp_bound_min_pooled())
 * the bound is looser where allocation sizes do not divide the segments.
 *
 * By segment class: an allocation may use only the VRAM segments of its
 * mask. The allocations that may use only the CPU-visible segment never
 * hold a page of the other, and those that may use only the other never
 * hold a visible page, so whatever the others do, the first class pages at
 * least MIN over its own references in the visible segment's pages, the
 * second at least MIN over its own in the other segment's, and the
 * allocations that may use both at least MIN over their own as above (the
 * segment-aware capacity, counting only them). The classes are disjoint:
 * their sum is a lower bound too, and min is the larger of the two (the
 * sum where a small segment is all a class may use, as the CPU-visible
 * segment for allocations with CPU access on a device with little of it).
 *
 * fnu: the same schedules with whole allocations (the furthest next use
 * first, until the allocation fits; over all, or the sum over the classes
 * where larger, as min): what an offline policy could do under the memory
 * manager's own rule that allocations move whole, still without
 * fragmentation. Not a bound, a reference point at or above MIN; with
 * allocations of different sizes furthest-next-use is not the optimum, so
 * an online policy may page less.
 */
#include <stdlib.h>
#include <string.h>

#include "replay.h"

#define NEVER	(~0ull)

struct op {
	u64 ref;	/* RP_REF_INIT, RP_REF_GONE or a reference */
	u32 a;		/* dense allocation index */
	u64 pages;
	u64 next;	/* the op index of its allocation's next reference */
	u64 group;	/* references: the first reference of its group */
	u64 pt;		/* RP_REF_PT, RP_REF_PT_FREE: the table's id */
};

/* The VRAM segments an allocation may use (by its mask) */
enum seg_class {
	CLS_ALL = -1,		/* every allocation, whatever its mask */
	CLS_VISIBLE = 0,	/* the CPU-visible segment only */
	CLS_LOCAL = 1,		/* the other VRAM segment only */
	CLS_BOTH = 2,		/* both (or neither: never served from VRAM) */
	CLS_COUNT = 3
};

struct ops {
	struct op *op;
	size_t n, cap;
	const u8 *served;
	int want;		/* enum seg_class: the allocations counted */
	u8 *cls;		/* by id: enum seg_class */
	size_t ncls;
	u64 *dense;	/* by id: index + 1 */
	size_t ndense;
	u32 nalloc;
	u64 *group;	/* by reference: the first reference of its group */
};

/* @t, a table of *@n zeroed entries of @elem bytes, grown to hold @id */
static void *grow_to(void *t, size_t *n, u64 id, size_t elem)
{
	size_t m = *n ? *n : 256;

	if (id < *n)
		return t;
	while (m <= id)
		m *= 2;
	t = realloc(t, m * elem);
	if (!t)
		exit(2);
	memset((char *)t + *n * elem, 0, (m - *n) * elem);
	*n = m;
	return t;
}

/* A new op at the end of @o */
static struct op *new_op(struct ops *o)
{
	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 1024;
		o->op = realloc(o->op, o->cap * sizeof(*o->op));
		if (!o->op)
			exit(2);
	}
	return &o->op[o->n++];
}

static void add_op(void *priv, u64 ref, u64 id, u64 size)
{
	struct ops *o = priv;
	struct op *op;

	if (ref < RP_REF_NONE && o->served && o->served[ref] != RP_REF_VRAM)
		return;
	if (ref == RP_REF_PT || ref == RP_REF_PT_FREE) {
		/* not an allocation: @a unused */
		op = new_op(o);
		op->ref = ref;
		op->a = 0;
		op->pages = (size + RP_PAGE - 1) / RP_PAGE;
		op->next = NEVER;
		op->group = NEVER;
		op->pt = id;
		return;
	}
	if (o->want != CLS_ALL &&
	    (id < o->ncls ? o->cls[id] : CLS_BOTH) != o->want)
		return;
	o->dense = grow_to(o->dense, &o->ndense, id, sizeof(*o->dense));
	if (!o->dense[id])
		o->dense[id] = ++o->nalloc;
	op = new_op(o);
	op->ref = ref;
	op->a = o->dense[id] - 1;
	op->pages = (size + RP_PAGE - 1) / RP_PAGE;
	op->next = NEVER;
	op->group = ref < RP_REF_NONE && o->group ? o->group[ref] : NEVER;
	op->pt = 0;
}

struct by_split {
	u32 split;
	u32 j;
};

static int cmp_split(const void *a, const void *b)
{
	const struct by_split *x = a, *y = b;

	if (x->split != y->split)
		return x->split < y->split ? -1 : 1;
	return x->j < y->j ? -1 : x->j > y->j;
}

/*
 * Each reference's group: the entries of one submission with one
 * SplitOffset share the first of them; any other reference is its own.
 */
static u64 *build_groups(const struct rp_trace *t)
{
	u64 *g = malloc((t->nrefs + 1) * sizeof(*g));
	struct by_split *b = NULL;
	size_t i, cap = 0;
	u32 j;

	if (!g)
		exit(2);
	for (i = 0; i < t->nrefs; i++)
		g[i] = i;
	for (i = 0; i < t->nsub; i++) {
		const struct rp_submit *s = &t->sub[i];

		if (s->ne > cap) {
			cap = s->ne;
			free(b);
			b = malloc(cap * sizeof(*b));
			if (!b)
				exit(2);
		}
		for (j = 0; j < s->ne; j++) {
			b[j].split = s->e[j].split;
			b[j].j = j;
		}
		qsort(b, s->ne, sizeof(*b), cmp_split);
		for (j = 1; j < s->ne; j++)
			if (b[j].split == b[j - 1].split)
				g[s->ref0 + b[j].j] = g[s->ref0 + b[j - 1].j];
	}
	free(b);
	return g;
}

/* Each op's next reference of the same allocation */
static void link_next(struct ops *o)
{
	u64 *last = malloc((o->nalloc + 1) * sizeof(*last));
	size_t i;

	if (!last)
		exit(2);
	for (i = 0; i < o->nalloc; i++)
		last[i] = NEVER;
	for (i = o->n; i--;) {
		struct op *op = &o->op[i];

		if (op->ref == RP_REF_PT || op->ref == RP_REF_PT_FREE)
			continue;
		op->next = last[op->a];
		/*
		 * Pages held up to a destroy, or up to a request that takes
		 * them out anyway, are of no more use than pages never used
		 * again: MIN evicts them first (with forced removals, still
		 * the optimum).
		 */
		if (op->ref == RP_REF_GONE || op->ref == RP_REF_OUT)
			last[op->a] = NEVER;
		else if (op->ref != RP_REF_INIT)
			last[op->a] = i;
	}
	free(last);
}

/* A VRAM segment's pages, less its reservation */
static u64 seg_pages(const struct rp_config *cfg, int s)
{
	if (cfg->seg_size[s] <= cfg->seg_reserved[s])
		return 0;
	return (cfg->seg_size[s] - cfg->seg_reserved[s]) / RP_PAGE;
}

static u64 capacity(const struct rp_config *cfg)
{
	return seg_pages(cfg, 1) + seg_pages(cfg, 2);
}

/* Every allocation's class, by id, from its create (or snapshot) mask */
static void build_classes(const struct rp_trace *t, struct ops *o)
{
	size_t i;

	for (i = 0; i < t->nev; i++) {
		const struct rp_ev *e = &t->ev[i];
		u64 vram = e->v[2] & (1u << 1 | 1u << 2);

		if (e->kind != EV_CREATE && e->kind != EV_SNAP_BO)
			continue;
		o->cls = grow_to(o->cls, &o->ncls, e->v[0], sizeof(*o->cls));
		o->cls[e->v[0]] = vram == 1u << 1 ? CLS_VISIBLE :
				  vram == 1u << 2 ? CLS_LOCAL : CLS_BOTH;
	}
}

static int collect(const struct rp_trace *t, const struct rp_config *cfg,
		   const u8 *served, const u8 *out, bool segments, int want,
		   struct ops *o)
{
	memset(o, 0, sizeof(*o));
	o->served = served;
	o->want = want;
	if (want != CLS_ALL)
		build_classes(t, o);
	if (segments)
		o->group = build_groups(t);
	rp_refs_walk(t, cfg->as_recorded, out, segments && cfg->bound_pts,
		     add_op, o);
	link_next(o);
	free(o->group);
	o->group = NULL;
	free(o->cls);
	o->cls = NULL;
	return 0;
}

/* Segment-aware capacity: subset sums of page counts up to @max pages */
#define SEG_MAX_PAGES	(1ull << 20)

struct sums {
	u64 max;	/* pages */
	u64 *bits;	/* bit x: a subset sums to x pages */
	u64 *best;	/* [x]: the largest subset sum <= x */
	size_t words;
};

static void sums_init(struct sums *z, u64 max)
{
	z->max = max;
	z->words = max / 64 + 1;
	z->bits = calloc(z->words, sizeof(*z->bits));
	z->best = calloc(max + 1, sizeof(*z->best));
	if (!z->bits || !z->best)
		exit(2);
}

static void sums_free(struct sums *z)
{
	free(z->bits);
	free(z->best);
}

static void sums_clear(struct sums *z)
{
	memset(z->bits, 0, z->words * sizeof(*z->bits));
	z->bits[0] = 1;
}

/* bits |= bits << @n */
static void sums_add(struct sums *z, u64 n)
{
	size_t w = n / 64, i;
	unsigned int b = n % 64;

	if (n > z->max)
		return;
	for (i = z->words; i-- > w;) {
		u64 v = z->bits[i - w] << b;

		if (b && i > w)
			v |= z->bits[i - w - 1] >> (64 - b);
		z->bits[i] |= v;
	}
	if (z->max % 64 != 63)
		z->bits[z->words - 1] &= (1ull << (z->max % 64 + 1)) - 1;
}

static bool sums_has(const struct sums *z, u64 x)
{
	return x <= z->max && (z->bits[x / 64] >> (x % 64)) & 1;
}

static void sums_finish(struct sums *z)
{
	u64 x, last = 0;

	for (x = 0; x <= z->max; x++) {
		if (sums_has(z, x))
			last = x;
		z->best[x] = last;
	}
}

struct segcap {
	u64 cap[2];		/* pages of the visible and local segments */
	struct sums rest, grp;
	u8 *live;		/* by allocation */
	u8 *in_group;		/* by allocation */
	u64 *pages;		/* by allocation */
	u64 group;		/* the group computed last */
	u64 value;		/* its capacity */
	u8 *cur;		/* by allocation: in the group being served */
	size_t cur_i;		/* that group's first op */
	u64 cur_g;		/* that group, or NEVER */
	u64 pt_pages;		/* page tables in VRAM */
	u64 *pt;		/* by table id: its pages while counted */
	size_t npt;
};

/*
 * The capacity at the references of group @g, whose ops start at @i: the
 * group's allocations each whole in a segment, together, and beside them
 * in each segment the largest sum of other live allocations that fits.
 */
static u64 group_capacity(struct segcap *sc, const struct ops *o, size_t i,
			  u64 pooled)
{
	u64 g = o->op[i].group, total = sc->pt_pages, best = 0, u1;
	size_t k;
	u32 a;

	if (g != sc->cur_g) {
		/* its allocations are in VRAM together: none is a victim */
		for (k = sc->cur_i; sc->cur_g != NEVER && k < o->n &&
		     o->op[k].group == sc->cur_g; k++)
			sc->cur[o->op[k].a] = 0;
		for (k = i; k < o->n && o->op[k].group == g; k++)
			sc->cur[o->op[k].a] = 1;
		sc->cur_i = i;
		sc->cur_g = g;
	}
	if (g == sc->group)
		return sc->value;
	sums_clear(&sc->rest);
	sums_clear(&sc->grp);
	/* the page tables are in VRAM with every group: pages of their own */
	for (u1 = 0; u1 < sc->pt_pages && u1 <= sc->cap[0]; u1++)
		sums_add(&sc->grp, 1);
	for (k = i; k < o->n && o->op[k].group == g; k++) {
		sc->live[o->op[k].a] = 1;
		sc->in_group[o->op[k].a] = 1;
	}
	for (a = 0; a < o->nalloc; a++) {
		if (sc->in_group[a]) {
			total += sc->pages[a];
			sums_add(&sc->grp, sc->pages[a]);
		} else if (sc->live[a]) {
			sums_add(&sc->rest, sc->pages[a]);
		}
	}
	sums_finish(&sc->rest);
	for (u1 = 0; u1 <= sc->cap[0] && u1 <= total; u1++) {
		u64 u2 = total - u1, v;

		if (u2 > sc->cap[1] || !sums_has(&sc->grp, u1))
			continue;
		v = total + sc->rest.best[sc->cap[0] - u1] +
		    sc->rest.best[sc->cap[1] - u2];
		if (v > best)
			best = v;
	}
	for (k = i; k < o->n && o->op[k].group == g; k++)
		sc->in_group[o->op[k].a] = 0;
	/* a group that fits no way was not in VRAM together: pooled */
	if (!best || best > pooled)
		best = pooled;
	else
		best -= sc->pt_pages;	/* what allocations may take */
	sc->group = g;
	sc->value = best;
	return best;
}

/* A page table taken (counted until given back) or given back */
static void pt_op(struct segcap *sc, const struct op *op)
{
	u64 id = op->pt;

	sc->group = NEVER;	/* the capacity changes */
	if (op->ref == RP_REF_PT_FREE) {
		if (id < sc->npt && sc->pt[id]) {
			sc->pt_pages -= sc->pt[id];
			sc->pt[id] = 0;
		}
		return;
	}
	sc->pt = grow_to(sc->pt, &sc->npt, id, sizeof(*sc->pt));
	if (!sc->pt[id]) {
		sc->pt[id] = op->pages;
		sc->pt_pages += op->pages;
	}
}

/*
 * Whether the segment-aware capacity is worth its cost here: each group of
 * references sums the sizes of the live allocations (a word per 64 pages
 * of the larger segment each), at most one group per reference.
 */
#define SEG_MAX_WORK	(4ull << 30)

static bool segments_affordable(const struct rp_trace *t,
				const struct rp_config *cfg)
{
	u64 cap = seg_pages(cfg, 1) > seg_pages(cfg, 2) ? seg_pages(cfg, 1) :
		  seg_pages(cfg, 2);
	u64 allocs = 0, per;
	size_t i;

	if (cap > SEG_MAX_PAGES)
		return false;
	for (i = 0; i < t->nev; i++)
		allocs += t->ev[i].kind == EV_CREATE ||
			  t->ev[i].kind == EV_SNAP_BO;
	per = allocs * (cap / 64 + 1) + 2 * cap;
	return !t->nrefs || per <= SEG_MAX_WORK / t->nrefs;
}

static int simulate(const struct rp_trace *t, const struct rp_config *cfg,
		    const u8 *served, const u8 *out, bool whole,
		    bool segments, int want, struct rp_bound *b)
{
	u64 pooled = want == CLS_VISIBLE ? seg_pages(cfg, 1) :
		     want == CLS_LOCAL ? seg_pages(cfg, 2) : capacity(cfg);
	u64 cap = pooled, used = 0;
	struct segcap sc = { .group = NEVER, .cur_g = NEVER };
	struct ops o;
	u64 *res, *next;
	size_t i;
	u32 a;

	memset(b, 0, sizeof(*b));
	/* too much to sum over: pooled, never too little */
	if (segments && !segments_affordable(t, cfg))
		segments = false;
	b->pooled = !segments;
	collect(t, cfg, served, out, segments, want, &o);
	res = calloc(o.nalloc + 1, sizeof(*res));
	next = calloc(o.nalloc + 1, sizeof(*next));
	if (!res || !next)
		exit(2);
	if (segments) {
		sc.cap[0] = seg_pages(cfg, 1);
		sc.cap[1] = seg_pages(cfg, 2);
		sums_init(&sc.rest, sc.cap[0] > sc.cap[1] ? sc.cap[0] :
				    sc.cap[1]);
		sums_init(&sc.grp, sc.cap[0]);
		sc.live = calloc(o.nalloc + 1, 1);
		sc.in_group = calloc(o.nalloc + 1, 1);
		sc.cur = calloc(o.nalloc + 1, 1);
		sc.pages = calloc(o.nalloc + 1, sizeof(*sc.pages));
		if (!sc.live || !sc.in_group || !sc.cur || !sc.pages)
			exit(2);
		for (i = 0; i < o.n; i++)
			if (o.op[i].ref != RP_REF_PT &&
			    o.op[i].ref != RP_REF_PT_FREE)
				sc.pages[o.op[i].a] = o.op[i].pages;
	}
	for (a = 0; a < o.nalloc; a++)
		next[a] = NEVER;
	for (i = 0; i < o.n; i++) {
		struct op *op = &o.op[i];
		u64 need;

		if (op->ref == RP_REF_GONE) {
			used -= res[op->a];
			res[op->a] = 0;
			next[op->a] = NEVER;
			if (segments)
				sc.live[op->a] = 0;
			continue;
		}
		if (op->ref == RP_REF_PT || op->ref == RP_REF_PT_FREE) {
			pt_op(&sc, op);
			continue;
		}
		if (segments)
			sc.live[op->a] = 1;
		if (op->ref == RP_REF_OUT) {
			/* every policy had it out of VRAM here */
			used -= res[op->a];
			b->out_bytes += res[op->a] * RP_PAGE;
			res[op->a] = 0;
			next[op->a] = op->next;
			continue;
		}
		if (op->ref == RP_REF_INIT) {
			if (used + op->pages <= cap) {
				res[op->a] = op->pages;
				used += op->pages;
			}
			next[op->a] = op->next;
			continue;
		}
		next[op->a] = op->next;
		if (op->pages > pooled)
			continue;	/* no schedule serves it from VRAM */
		cap = segments ? group_capacity(&sc, &o, i, pooled) : pooled;
		b->refs++;
		need = op->pages - res[op->a];
		while (used + need > cap) {
			u64 far = 0, take;
			u32 v = ~0u;

			for (a = 0; a < o.nalloc; a++) {
				if (a == op->a || !res[a] ||
				    (segments && sc.cur[a]))
					continue;
				if (v == ~0u || next[a] > far) {
					v = a;
					far = next[a];
				}
			}
			if (v == ~0u)
				break;
			take = whole ? res[v] : used + need - cap;
			if (take > res[v])
				take = res[v];
			res[v] -= take;
			used -= take;
			b->out_bytes += take * RP_PAGE;
		}
		res[op->a] += need;
		used += need;
		b->in_bytes += need * RP_PAGE;
	}
	if (segments) {
		sums_free(&sc.rest);
		sums_free(&sc.grp);
		free(sc.live);
		free(sc.in_group);
		free(sc.cur);
		free(sc.pages);
		free(sc.pt);
	}
	free(res);
	free(next);
	free(o.op);
	free(o.dense);
	return 0;
}

/* MIN (fnu: @whole) over all, or the sum over the classes where larger */
static int by_class(const struct rp_trace *t, const struct rp_config *cfg,
		    const u8 *served, const u8 *out, bool whole,
		    struct rp_bound *b)
{
	struct rp_bound part, sum = { 0 };
	int c;

	simulate(t, cfg, served, out, whole, true, CLS_ALL, b);
	for (c = 0; c < CLS_COUNT; c++) {
		/* one segment's class: that segment alone, pooled */
		simulate(t, cfg, served, out, whole, c == CLS_BOTH, c, &part);
		sum.refs += part.refs;
		sum.in_bytes += part.in_bytes;
		sum.out_bytes += part.out_bytes;
		sum.pooled |= c == CLS_BOTH && part.pooled;
	}
	if (sum.in_bytes > b->in_bytes) {
		sum.by_class = true;
		*b = sum;
	}
	return 0;
}

int rp_bound_min(const struct rp_trace *t, const struct rp_config *cfg,
		 const u8 *served, const u8 *out, struct rp_bound *b)
{
	return by_class(t, cfg, served, out, false, b);
}

int rp_bound_min_pooled(const struct rp_trace *t, const struct rp_config *cfg,
			const u8 *served, const u8 *out, struct rp_bound *b)
{
	return simulate(t, cfg, served, out, false, false, CLS_ALL, b);
}

int rp_bound_fnu(const struct rp_trace *t, const struct rp_config *cfg,
		 const u8 *served, const u8 *out, struct rp_bound *b)
{
	return by_class(t, cfg, served, out, true, b);
}

void rp_refs_walk(const struct rp_trace *t, bool initial, const u8 *out,
		  bool pts, rp_ref_fn fn, void *priv)
{
	u64 *size = NULL, ref = 0;
	size_t nsize = 0, i, j;
	bool first = true;

	for (i = 0; i < t->nev; i++) {
		const struct rp_ev *e = &t->ev[i];
		u64 id = e->v[0];

		if (e->kind == EV_CREATE || e->kind == EV_SNAP_BO) {
			size = grow_to(size, &nsize, id, sizeof(*size));
			size[id] = e->v[1];
		}
		if (out && out[i] && id < nsize && size[id])
			fn(priv, RP_REF_OUT, id, size[id]);
		switch (e->kind) {
		case EV_SNAP_NODE:
			/*
			 * a page table in a VRAM segment at the start; not the
			 * paging process's (no owner: vidmem=0), which is in
			 * the segment's reservation already
			 */
			if (pts && first && initial &&
			    e->v[3] == RP_NODE_PT && e->v[5] &&
			    (e->v[0] == 1 || e->v[0] == 2))
				fn(priv, RP_REF_PT, e->v[4], e->v[2]);
			break;
		case EV_PT_ALLOC:
			if (pts && !e->v[4] && (e->v[2] == 1 || e->v[2] == 2))
				fn(priv, RP_REF_PT, id, RP_PAGE);
			break;
		case EV_PT_FREE:
			if (pts)
				fn(priv, RP_REF_PT_FREE, id, RP_PAGE);
			break;
		case EV_SNAP_BO:
			/* in a VRAM segment at the start */
			if (first && initial && (e->v[5] == 1 || e->v[5] == 2) &&
			    !(e->v[8] & 2))
				fn(priv, RP_REF_INIT, id, e->v[1]);
			break;
		case EV_SNAP_END:
			first = false;
			break;
		case EV_SUBMIT: {
			const struct rp_submit *s = &t->sub[t->ev_sub[i]];

			for (j = 0; j < s->ne; j++)
				if (s->e[j].id && s->e[j].id < nsize &&
				    size[s->e[j].id])
					fn(priv, s->ref0 + j, s->e[j].id,
					   size[s->e[j].id]);
			ref += s->ne;
			break;
		}
		case EV_RESIDE:
			if (id < nsize && size[id])
				fn(priv, ref, id, size[id]);
			ref++;
			break;
		case EV_MAKE_RESIDENT:
			if (e->v[1])
				break;
			if (id < nsize && size[id])
				fn(priv, ref, id, size[id]);
			ref++;
			break;
		case EV_DESTROY:
			if (id < nsize && size[id])
				fn(priv, RP_REF_GONE, id, size[id]);
			break;
		}
	}
	free(size);
}
