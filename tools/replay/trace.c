// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu-replay: reading a qgpu trace file (docs/trace-format.md).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "qgpu_policy.h"

struct rp_ev_desc {
	const char *name;
	const char *keys[RP_EV_FIELDS + 1];
};

static const struct rp_ev_desc descs[EV_COUNT] = {
	[EV_SNAP_BEGIN] = { "snap-begin", { "tag", "to_vram", "from_vram",
		"vram_to_vram", "filled", "evictions", "tick", "policy",
		"next_id", "features", "budget" } },
	[EV_SNAP_SEG] = { "snap-seg", { "seg", "size", "reserved", "used",
		"allocations" } },
	[EV_SNAP_NODE] = { "snap-node", { "seg", "start", "size", "kind",
		"id", "vidmem" } },
	[EV_SNAP_HOLE] = { "snap-hole", { "seg", "start", "size" } },
	[EV_SNAP_BO] = { "snap-bo", { "id", "size", "mask", "flags", "pref",
		"seg", "start", "tick", "state", "locks", "attachments",
		"priority" } },
	[EV_SNAP_END] = { "snap-end", { "tag" } },
	[EV_CREATE] = { "create", { "id", "size", "mask", "flags", "pref" } },
	[EV_DESTROY] = { "destroy", { "id", "seg", "deferred" } },
	[EV_REAP] = { "reap", { "id" } },
	[EV_RESIDE] = { "reside", { "id", "seg" } },
	[EV_EVICT_REQ] = { "evict-req", { "id", "system" } },
	[EV_LOCK] = { "lock", { "id" } },
	[EV_UNLOCK] = { "unlock", { "id" } },
	[EV_ATTACH] = { "attach", { "id" } },
	[EV_DETACH] = { "detach", { "id" } },
	[EV_MAKE_RESIDENT] = { "make-resident", { "id", "evict" } },
	[EV_CPU_FAULT] = { "cpu-fault", { "id", "write", "ret", "moving" } },
	[EV_TOUCH] = { "touch", { "id", "tick" } },
	[EV_SUBMIT] = { "submit", { "seq", "ctx", "allocs", "patches",
		"dma" } },
	[EV_ENTRY] = { "entry", { "seq", "i", "id", "slot", "split", "patch",
		"write", "alloc" } },
	[EV_SUBMIT_END] = { "submit-end", { "seq", "ret", "portions" } },
	[EV_USE] = { "use", { "seq", "portion", "id", "write" } },
	[EV_PORTION] = { "portion", { "seq", "ctx", "index", "start", "end",
		"uses" } },
	[EV_PLACE] = { "place", { "id", "want", "seg", "ret" } },
	[EV_EVICT] = { "evict", { "id", "from", "to_system", "why",
		"dead" } },
	[EV_MOVE] = { "move", { "id", "from", "to", "bytes", "why", "offset",
		"fill" } },
	[EV_PT_ALLOC] = { "pt-alloc", { "pt", "level", "seg", "start",
		"ret", "vidmem" } },
	[EV_PT_FREE] = { "pt-free", { "pt" } },
	[EV_PRIORITY] = { "priority", { "id", "value" } },
	[EV_POLICY] = { "policy", { "value" } },
	[EV_OFFER] = { "offer", { "id", "priority" } },
	[EV_RECLAIM] = { "reclaim", { "id" } },
	[EV_GPU_MAP] = { "gpu-map", { "id", "linked" } },
	[EV_SNAP_BO_STATE] = { "snap-bo-state", { "id", "offer",
		"mappings", "evicted", "owner" } },
	[EV_OWNER] = { "owner", { "id", "vidmem" } },
	[EV_GPU_WRITE] = { "gpu-write", { "id" } },
	[EV_BUDGET] = { "budget", { "percent" } },
};

const char *rp_ev_name(u32 kind)
{
	return kind < EV_COUNT && descs[kind].name ? descs[kind].name : "?";
}

const char *const *rp_ev_keys(u32 kind)
{
	return descs[kind < EV_COUNT ? kind : 0].keys;
}

int rp_ev_field(u32 kind, const char *key)
{
	int i;

	if (kind >= EV_COUNT)
		return -1;
	for (i = 0; i < RP_EV_FIELDS && descs[kind].keys[i]; i++)
		if (!strcmp(descs[kind].keys[i], key))
			return i;
	return -1;
}

static u32 ev_kind(const char *name)
{
	u32 k;

	for (k = 1; k < EV_COUNT; k++)
		if (descs[k].name && !strcmp(descs[k].name, name))
			return k;
	return EV_NONE;
}

/*
 * A field's value: a name where the format has names, else a number (a
 * negative one, as an errno in ret=, wraps as the kernel's u64 would).
 * Return: false for anything else.
 */
static bool value(const char *key, const char *v, u64 *out)
{
	static const char *const why[] = { "place", "victim", "request",
					   "cpu" };
	unsigned int i;
	char *end;

	if (!strcmp(key, "why")) {
		for (i = 0; i < 4; i++)
			if (!strcmp(v, why[i])) {
				*out = i;
				return true;
			}
	}
	if (!strcmp(key, "kind")) {
		static const char *const kinds[] = { [RP_NODE_BO] = "bo",
			[RP_NODE_PT] = "pt", [RP_NODE_PBUF] = "pbuf" };

		for (i = 0; i < 3; i++)
			if (!strcmp(v, kinds[i])) {
				*out = i;
				return true;
			}
	}
	if (!*v || *v == ' ')
		return false;
	errno = 0;
	*out = *v == '-' ? (u64)strtoll(v, &end, 0) : strtoull(v, &end, 0);
	return !*end && !errno;
}

/*
 * The range of each field the replay uses as a size, an index or a count
 * (docs/trace-format.md, "Limits"): a trace outside them is refused with
 * its line, never replayed into arithmetic that wraps or arrays it cannot
 * hold. Fields not listed take any u64.
 */
struct rp_limit {
	const char *key;
	u64 max;
};

static const struct rp_limit limits[] = {
	{ "id", RP_ID_MAX - 1 },	{ "vidmem", RP_ID_MAX - 1 },
	{ "owner", RP_ID_MAX - 1 },	{ "pt", RP_ID_MAX - 1 },
	{ "seg", RP_SEG_MAX },		{ "from", RP_SEG_MAX },
	{ "to", RP_SEG_MAX },		{ "level", 7 },
	{ "size", RP_SIZE_MAX },	{ "reserved", RP_SIZE_MAX },
	{ "start", RP_SIZE_MAX },	{ "offset", RP_SIZE_MAX },
	{ "bytes", RP_SIZE_MAX },	{ "kind", RP_NODE_PBUF },
	{ "why", RP_WHY_CPU },		{ "allocs", RP_ALLOCS_MAX },
	{ "patches", RP_PATCHES_MAX },	{ "alloc", RP_ALLOCS_MAX - 1 },
	{ "i", RP_PATCHES_MAX - 1 },	{ "slot", RP_SLOTS_MAX - 1 },
	{ "dma", RP_DMA_MAX },		{ "split", RP_DMA_MAX },
	{ "patch", RP_DMA_MAX },	{ "index", RP_PATCHES_MAX },
	{ "portions", RP_PATCHES_MAX + 1 },
	{ "budget", 100 },		{ "percent", 100 },
	{ "policy", QGPU_POLICY_COUNT - 1 },
	{ "priority", 0xffffffffull },	{ "uses", 0xffffffffull },
	{ "locks", 0xffffffffull },	{ "attachments", 0xffffffffull },
	{ "mappings", 0xffffffffull },
};

static bool in_limits(u32 kind, const char *key, u64 v, u64 *max)
{
	unsigned int i;

	/* pref=: segment ids, one a byte */
	if (!strcmp(key, "pref")) {
		*max = 0x03030303;
		for (i = 0; i < 8; i++)
			if (((v >> (8 * i)) & 0xff) > (i < 4 ? RP_SEG_MAX : 0))
				return false;
		return true;
	}
	/* policy value= is a policy; priority value= a priority */
	if (!strcmp(key, "value"))
		key = kind == EV_POLICY ? "policy" : "priority";
	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
		if (!strcmp(limits[i].key, key)) {
			*max = limits[i].max;
			return v <= limits[i].max;
		}
	return true;
}

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* Header field @key of @s (0 if absent); *@bad if above @max */
static u64 kv(const char *s, const char *key, u64 max, bool *bad)
{
	char pat[64];
	const char *p;
	u64 v;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(s, pat);
	if (!p)
		return 0;
	errno = 0;
	v = strtoull(p + strlen(pat), NULL, 0);
	if (errno || v > max)
		*bad = true;
	return v;
}

/* Return: 1 for a header line, 0 for another, -1 for a header out of range */
static int header_line(struct rp_trace *t, char *line)
{
	bool bad = false;

	if (!strncmp(line, "device ", 7)) {
		t->have_device = true;
		t->vram = kv(line, "vram", RP_SIZE_MAX, &bad);
		t->visible = kv(line, "visible", RP_SIZE_MAX, &bad);
		t->gart = kv(line, "gart", RP_SIZE_MAX, &bad);
		t->hap = kv(line, "hap", RP_SIZE_MAX, &bad);
		t->slots = kv(line, "slots", RP_SLOTS_MAX, &bad);
		t->mmu = kv(line, "mmu", 1, &bad);
		return bad ? -1 : 1;
	}
	if (!strncmp(line, "segment ", 8)) {
		u64 id = kv(line, "id", ~0ull, &bad);

		if (id >= 1 && id <= RP_SEG_MAX)
			t->seg_size[id] = kv(line, "size", RP_SIZE_MAX, &bad);
		return bad ? -1 : 1;
	}
	if (!strncmp(line, "command", 7)) {
		snprintf(t->command, sizeof(t->command), "%s",
			 line[7] ? line + 8 : "");
		return 1;
	}
	if (!strncmp(line, "lost ", 5)) {
		t->lost = strtoull(line + 5, NULL, 0);
		t->have_lost = true;
		return 1;
	}
	if (!strncmp(line, "exit ", 5)) {
		t->exit_status = atoi(line + 5);
		return 1;
	}
	if (!strncmp(line, "clock ", 6))
		return 1;
	return 0;
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 1024;
	p = realloc(p, *cap * size);
	if (!p) {
		fprintf(stderr, "qgpu-replay: out of memory\n");
		exit(2);
	}
	return p;
}

/* Group each submission's entries (they follow its EV_SUBMIT) */
static int build_submits(struct rp_trace *t, char *err, size_t errlen)
{
	size_t i, cap = 0;
	u64 ref = 0;

	t->ev_sub = malloc((t->nev + 1) * sizeof(*t->ev_sub));
	if (!t->ev_sub)
		return fail(err, errlen, "out of memory");
	for (i = 0; i < t->nev; i++) {
		struct rp_ev *e = &t->ev[i];
		struct rp_submit *s;
		size_t j;

		t->ev_sub[i] = -1;
		if (e->kind == EV_RESIDE ||
		    (e->kind == EV_MAKE_RESIDENT && !e->v[1]))
			ref++;
		if (e->kind != EV_SUBMIT)
			continue;
		t->sub = grow(t->sub, &cap, t->nsub, sizeof(*t->sub));
		s = &t->sub[t->nsub];
		memset(s, 0, sizeof(*s));
		s->seq = e->v[0];
		s->ctx = e->v[1];
		s->nallocs = e->v[2];
		s->npatches = e->v[3];
		s->dma = e->v[4];
		s->e = calloc(s->npatches + 1, sizeof(*s->e));
		if (!s->e)
			return fail(err, errlen, "out of memory");
		s->ref0 = ref;
		for (j = i + 1; j < t->nev && s->ne < s->npatches; j++) {
			struct rp_ev *x = &t->ev[j];
			struct rp_entry *en;

			if (x->kind != EV_ENTRY || x->v[0] != s->seq)
				break;
			en = &s->e[s->ne++];
			en->id = x->v[2];
			en->slot = x->v[3];
			en->split = x->v[4];
			en->patch = x->v[5];
			en->write = x->v[6];
			en->alloc = x->v[7];
		}
		if (s->ne != s->npatches) {
			free(s->e);
			return fail(err, errlen,
				    "%s:%u: submission %llu has %u of its %u entries",
				    t->path, e->line,
				    (unsigned long long)s->seq, s->ne,
				    s->npatches);
		}
		ref += s->ne;
		t->ev_sub[i] = (long)t->nsub++;
	}
	t->nrefs = ref;
	return 0;
}

/* One bit per id below %RP_ID_MAX */
static bool seen(u8 *bits, u64 id)
{
	bool was = bits[id / 8] & (1u << (id % 8));

	bits[id / 8] |= 1u << (id % 8);
	return was;
}

/*
 * What the replay builds its books from must be books: in the first
 * snapshot each segment's ranges in order, apart and inside it, each
 * allocation, page table and the paging buffer once; and no allocation created twice (the
 * kernel never reuses an id). Anything else is refused with its line.
 */
static int check_books(struct rp_trace *t, char *err, size_t errlen)
{
	u64 size[RP_SEG_MAX + 1] = { 0 }, end[RP_SEG_MAX + 1] = { 0 };
	u8 *bos = calloc(RP_ID_MAX / 8, 1), *nodes = calloc(RP_ID_MAX / 8, 1);
	u8 *pts = calloc(RP_ID_MAX / 8, 1);
	bool first = true, pbuf = false;
	const char *why = NULL;
	size_t i;

	if (!bos || !nodes || !pts) {
		free(bos);
		free(nodes);
		free(pts);
		return fail(err, errlen, "out of memory");
	}
	for (i = 0; i < t->nev && !why; i++) {
		const struct rp_ev *e = &t->ev[i];
		u64 sg = e->v[0];

		switch (e->kind) {
		case EV_SNAP_END:
			first = false;
			break;
		case EV_CREATE:
			if (seen(bos, e->v[0]))
				why = "an allocation created twice";
			break;
		case EV_SNAP_SEG:
			if (!first)
				break;
			if (size[sg] || e->v[2] > e->v[1])
				why = "a segment twice, or reserving more than its size";
			size[sg] = e->v[1];
			break;
		case EV_SNAP_NODE:
		case EV_SNAP_HOLE:
			if (!first)
				break;
			if (e->v[1] < end[sg] || e->v[2] > size[sg] ||
			    e->v[1] > size[sg] - e->v[2]) {
				why = "a range out of order, overlapping another or outside its segment";
				break;
			}
			end[sg] = e->v[1] + e->v[2];
			if (e->kind == EV_SNAP_HOLE)
				break;
			if (e->v[3] == RP_NODE_BO && seen(nodes, e->v[4]))
				why = "an allocation in two ranges";
			if (e->v[3] == RP_NODE_PT && seen(pts, e->v[4]))
				why = "a page table in two ranges";
			if (e->v[3] != RP_NODE_BO && e->v[3] != RP_NODE_PT) {
				if (pbuf)
					why = "a paging buffer in two ranges";
				pbuf = true;
			}
			break;
		case EV_SNAP_BO:
			if (first && seen(bos, e->v[0]))
				why = "an allocation listed twice";
			break;
		}
	}
	free(bos);
	free(nodes);
	free(pts);
	if (why)
		return fail(err, errlen, "%s:%u: %s", t->path, t->ev[i - 1].line,
			    why);
	return 0;
}

int rp_trace_load(struct rp_trace *t, const char *path, char *err,
		  size_t errlen)
{
	char *line = NULL;
	size_t cap = 0, evcap = 0;
	unsigned int lineno = 0;
	ssize_t n;
	FILE *f;
	int ret = 0, h;

	memset(t, 0, sizeof(*t));
	t->path = path;
	f = fopen(path, "r");
	if (!f)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	while ((n = getline(&line, &cap, f)) > 0) {
		char *save = NULL, *tok, *name, *end;
		struct rp_ev *e;
		u32 kind;

		lineno++;
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if (!n || line[0] == '#')
			continue;
		if (lineno == 1) {
			if (sscanf(line, "qgpu-trace %d", &t->version) != 1) {
				ret = fail(err, errlen, "%s: not a qgpu trace (no \"qgpu-trace VERSION\" line)",
					   path);
				break;
			}
			if (t->version != 1) {
				ret = fail(err, errlen, "%s: format version %d, this replay reads 1",
					   path, t->version);
				break;
			}
			continue;
		}
		h = header_line(t, line);
		if (h < 0) {
			ret = fail(err, errlen, "%s:%u: a value out of range (docs/trace-format.md, \"Limits\")",
				   path, lineno);
			break;
		}
		if (h)
			continue;
		tok = strtok_r(line, " ", &save);
		name = strtok_r(NULL, " ", &save);
		if (!tok || !name)
			continue;
		kind = ev_kind(name);
		if (kind == EV_NONE)
			continue;	/* later versions may add events */
		t->ev = grow(t->ev, &evcap, t->nev, sizeof(*t->ev));
		e = &t->ev[t->nev++];
		memset(e, 0, sizeof(*e));
		e->kind = kind;
		e->line = lineno;
		e->t = strtoull(tok, &end, 10);
		while ((tok = strtok_r(NULL, " ", &save))) {
			char *eq = strchr(tok, '=');
			u64 v, max;
			int i;

			if (!eq)
				continue;
			*eq = 0;
			i = rp_ev_field(kind, tok);
			if (i < 0)
				continue;	/* later versions may add fields */
			if (!value(tok, eq + 1, &v)) {
				ret = fail(err, errlen, "%s:%u: %s=%s is not a value",
					   path, lineno, tok, eq + 1);
				break;
			}
			if (!in_limits(kind, tok, v, &max)) {
				ret = fail(err, errlen, "%s:%u: %s=%llu above its limit %llu (docs/trace-format.md, \"Limits\")",
					   path, lineno, tok,
					   (unsigned long long)v,
					   (unsigned long long)max);
				break;
			}
			e->v[i] = v;
		}
		if (ret)
			break;
	}
	free(line);
	fclose(f);
	if (!ret && !t->version)
		ret = fail(err, errlen, "%s: empty", path);
	if (!ret)
		ret = build_submits(t, err, errlen);
	if (!ret)
		ret = check_books(t, err, errlen);
	if (ret)
		rp_trace_free(t);
	return ret;
}

void rp_trace_free(struct rp_trace *t)
{
	size_t i;

	for (i = 0; i < t->nsub; i++)
		free(t->sub[i].e);
	free(t->sub);
	free(t->ev);
	free(t->ev_sub);
	t->sub = NULL;
	t->ev = NULL;
	t->ev_sub = NULL;
}

int rp_trace_kernel_counters(const struct rp_trace *t, struct rp_counters *c,
			     u32 *policy)
{
	const struct rp_ev *b = NULL, *e = NULL;
	size_t i;

	for (i = 0; i < t->nev; i++) {
		if (t->ev[i].kind != EV_SNAP_BEGIN)
			continue;
		if (!b)
			b = &t->ev[i];
		else
			e = &t->ev[i];
	}
	if (!b || !e)
		return -1;
	c->to_vram = e->v[1] - b->v[1];
	c->from_vram = e->v[2] - b->v[2];
	c->vram_to_vram = e->v[3] - b->v[3];
	c->filled = e->v[4] - b->v[4];
	c->evictions = e->v[5] - b->v[5];
	if (policy)
		*policy = b->v[7];
	return 0;
}

int rp_config_from_trace(const struct rp_trace *t, struct rp_config *cfg)
{
	size_t i;
	bool seen = false;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < t->nev; i++) {
		const struct rp_ev *e = &t->ev[i];

		if (e->kind == EV_SNAP_END)
			break;
		if (e->kind != EV_SNAP_SEG || e->v[0] < 1 ||
		    e->v[0] > RP_SEG_MAX)
			continue;
		cfg->seg_size[e->v[0]] = e->v[1];
		cfg->seg_reserved[e->v[0]] = e->v[2];
		seen = true;
	}
	if (!seen)
		return -1;
	cfg->hap = t->hap;
	cfg->slots = t->slots ? t->slots : 64;
	cfg->visible = cfg->seg_size[1];
	cfg->vram = cfg->seg_size[1] + cfg->seg_size[2];
	if (t->have_device) {
		cfg->visible = t->visible;
		cfg->vram = t->vram;
	}
	cfg->as_recorded = true;
	return 0;
}
