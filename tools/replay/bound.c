// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu-replay: offline bounds on the bytes paged into VRAM.
 *
 * The references are those of rp_refs_walk(): each use of an allocation
 * that every replayed policy served from VRAM (a patch-location entry of
 * a physical submission, a make-resident request). VRAM is one pool of
 * pages: every VRAM segment less its reservation (page tables, ...). A
 * reference needs all of its allocation's pages in VRAM at once; a
 * destroyed allocation leaves VRAM for free.
 *
 * min: Belady's MIN at page granularity: on a miss, the pages evicted are
 * those whose next use is furthest (never used again first), any number
 * of an allocation's pages at a time. No schedule that keeps each
 * reference's allocation in VRAM while it is used pages in fewer bytes:
 * the placement rules, contiguity and whole-allocation moves of the real
 * memory manager only add constraints, so this is a lower bound for every
 * policy.
 *
 * fnu: the same schedule with whole allocations (the furthest next use
 * first, until the allocation fits): what an offline policy could do under
 * the memory manager's own rule that allocations move whole, still without
 * fragmentation. Not a bound, a reference point between MIN and the
 * online policies.
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
};

struct ops {
	struct op *op;
	size_t n, cap;
	const u8 *served;
	u64 *dense;	/* by id: index + 1 */
	size_t ndense;
	u32 nalloc;
};

static void add_op(void *priv, u64 ref, u64 id, u64 size)
{
	struct ops *o = priv;
	struct op *op;

	if (ref != RP_REF_INIT && ref != RP_REF_GONE && ref != RP_REF_OUT &&
	    o->served && o->served[ref] != RP_REF_VRAM)
		return;
	if (id >= o->ndense) {
		size_t n = o->ndense ? o->ndense : 256;

		while (n <= id)
			n *= 2;
		o->dense = realloc(o->dense, n * sizeof(*o->dense));
		if (!o->dense)
			exit(2);
		memset(o->dense + o->ndense, 0,
		       (n - o->ndense) * sizeof(*o->dense));
		o->ndense = n;
	}
	if (!o->dense[id])
		o->dense[id] = ++o->nalloc;
	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 1024;
		o->op = realloc(o->op, o->cap * sizeof(*o->op));
		if (!o->op)
			exit(2);
	}
	op = &o->op[o->n++];
	op->ref = ref;
	op->a = o->dense[id] - 1;
	op->pages = (size + RP_PAGE - 1) / RP_PAGE;
	op->next = NEVER;
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

static u64 capacity(const struct rp_config *cfg)
{
	u64 c = 0;
	int s;

	for (s = 1; s <= 2; s++)
		if (cfg->seg_size[s] > cfg->seg_reserved[s])
			c += cfg->seg_size[s] - cfg->seg_reserved[s];
	return c / RP_PAGE;
}

static int collect(const struct rp_trace *t, const struct rp_config *cfg,
		   const u8 *served, const u8 *out, struct ops *o)
{
	memset(o, 0, sizeof(*o));
	o->served = served;
	rp_refs_walk(t, cfg->as_recorded, out, add_op, o);
	link_next(o);
	return 0;
}

static int simulate(const struct rp_trace *t, const struct rp_config *cfg,
		    const u8 *served, const u8 *out, bool whole,
		    struct rp_bound *b)
{
	u64 cap = capacity(cfg), used = 0;
	struct ops o;
	u64 *res, *next;
	size_t i;
	u32 a;

	memset(b, 0, sizeof(*b));
	collect(t, cfg, served, out, &o);
	res = calloc(o.nalloc + 1, sizeof(*res));
	next = calloc(o.nalloc + 1, sizeof(*next));
	if (!res || !next)
		exit(2);
	for (a = 0; a < o.nalloc; a++)
		next[a] = NEVER;
	for (i = 0; i < o.n; i++) {
		struct op *op = &o.op[i];
		u64 need;

		if (op->ref == RP_REF_GONE) {
			used -= res[op->a];
			res[op->a] = 0;
			next[op->a] = NEVER;
			continue;
		}
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
		if (op->pages > cap)
			continue;	/* no schedule serves it from VRAM */
		b->refs++;
		need = op->pages - res[op->a];
		while (need > cap - used) {
			u64 far = 0, take;
			u32 v = ~0u;

			for (a = 0; a < o.nalloc; a++) {
				if (a == op->a || !res[a])
					continue;
				if (v == ~0u || next[a] > far) {
					v = a;
					far = next[a];
				}
			}
			if (v == ~0u)
				break;
			take = whole ? res[v] : need - (cap - used);
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
	free(res);
	free(next);
	free(o.op);
	free(o.dense);
	return 0;
}

int rp_bound_min(const struct rp_trace *t, const struct rp_config *cfg,
		 const u8 *served, const u8 *out, struct rp_bound *b)
{
	return simulate(t, cfg, served, out, false, b);
}

int rp_bound_fnu(const struct rp_trace *t, const struct rp_config *cfg,
		 const u8 *served, const u8 *out, struct rp_bound *b)
{
	return simulate(t, cfg, served, out, true, b);
}

void rp_refs_walk(const struct rp_trace *t, bool initial, const u8 *out,
		  rp_ref_fn fn, void *priv)
{
	u64 *size = NULL, ref = 0;
	size_t nsize = 0, i, j;
	bool first = true;

	for (i = 0; i < t->nev; i++) {
		const struct rp_ev *e = &t->ev[i];
		u64 id = e->v[0];

		if (e->kind == EV_CREATE || e->kind == EV_SNAP_BO) {
			if (id >= nsize) {
				size_t n = nsize ? nsize : 256;

				while (n <= id)
					n *= 2;
				size = realloc(size, n * sizeof(*size));
				if (!size)
					exit(2);
				memset(size + nsize, 0,
				       (n - nsize) * sizeof(*size));
				nsize = n;
			}
			size[id] = e->v[1];
		}
		if (out && out[i] && id < nsize && size[id])
			fn(priv, RP_REF_OUT, id, size[id]);
		switch (e->kind) {
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
