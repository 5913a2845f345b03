// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu-replay: reading a qgpu trace file (docs/trace-format.md).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

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

/* Values that are names in the file */
static u64 value(const char *key, const char *v)
{
	static const char *const why[] = { "place", "victim", "request",
					   "cpu" };
	unsigned int i;

	if (!strcmp(key, "why")) {
		for (i = 0; i < 4; i++)
			if (!strcmp(v, why[i]))
				return i;
	}
	if (!strcmp(key, "kind")) {
		if (!strcmp(v, "bo"))
			return RP_NODE_BO;
		if (!strcmp(v, "pt"))
			return RP_NODE_PT;
		if (!strcmp(v, "pbuf"))
			return RP_NODE_PBUF;
	}
	return (u64)strtoll(v, NULL, 0);
}

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static u64 kv(const char *s, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(s, pat);
	return p ? strtoull(p + strlen(pat), NULL, 0) : 0;
}

static int header_line(struct rp_trace *t, char *line)
{
	if (!strncmp(line, "device ", 7)) {
		t->have_device = true;
		t->vram = kv(line, "vram");
		t->visible = kv(line, "visible");
		t->gart = kv(line, "gart");
		t->hap = kv(line, "hap");
		t->slots = kv(line, "slots");
		t->mmu = kv(line, "mmu");
		return 1;
	}
	if (!strncmp(line, "segment ", 8)) {
		u64 id = kv(line, "id");

		if (id >= 1 && id <= RP_SEG_MAX)
			t->seg_size[id] = kv(line, "size");
		return 1;
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
		if (s->ne != s->npatches)
			return fail(err, errlen,
				    "%s:%u: submission %llu has %u of its %u entries",
				    t->path, e->line,
				    (unsigned long long)s->seq, s->ne,
				    s->npatches);
		ref += s->ne;
		t->ev_sub[i] = (long)t->nsub++;
	}
	t->nrefs = ref;
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
	int ret = 0;

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
		if (header_line(t, line))
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
			int i;

			if (!eq)
				continue;
			*eq = 0;
			i = rp_ev_field(kind, tok);
			if (i >= 0)
				e->v[i] = value(tok, eq + 1);
		}
	}
	free(line);
	fclose(f);
	if (!ret && !t->version)
		ret = fail(err, errlen, "%s: empty", path);
	if (!ret)
		ret = build_submits(t, err, errlen);
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
