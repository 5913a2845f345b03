// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu-replay: replay qgpu traces (docs/trace-format.md) for every victim
 * policy of kernel/qgpu_policy.c and compare them with the offline bounds.
 *
 * usage: qgpu-replay [-p POLICY] [--check] [--csv] [--why] [--log FILE]
 *                    [--visible SIZE] [--local SIZE] [--aperture SIZE]
 *                    [--hap SIZE] TRACE...
 *
 * For each trace: the kernel's own counters (from the trace's snapshots),
 * then per policy the bytes paged into VRAM ("in": transfers and zero
 * fills), out of it ("out"), moved within it, the evictions, the split
 * points taken and the submissions that failed, and its ratio to the
 * lower bound (Belady's MIN at page granularity over the references every
 * policy served from VRAM); then the oracle (the same memory manager
 * choosing victims by the whole trace's future: an offline reference, not
 * a policy), the bounds, and a last line per trace ending "best=R", the
 * best policy's ratio. Everything is deterministic.
 *
 * --check: replay with the policy the kernel used and require exactly the
 * kernel's counters (bytes into, out of and within VRAM, zero fills,
 * evictions), its moves one by one (allocation, from, to, offset) and its
 * books at the end (every range of every segment, the LRU order); exit
 * status 1 otherwise. Only on the configuration the trace was recorded on.
 *
 * --visible/--local/--aperture/--hap: replay on another device (sizes with
 * K, M or G); the books then start empty (what was resident starts in
 * system memory). --log FILE: the replay's moves with the kernel's policy.
 * --csv: the figures as comma-separated lines (tools/replay/plots.py).
 * --why: per policy, where its bytes went: what it paged in by why the
 * allocation was out of VRAM (first placement, a victim paged back by the
 * submission that evicted it or later, a forced eviction, migrating back),
 * and its victims: beyond the shortfall, evicted while another VRAM
 * segment had room, used again by the submission being walked.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "qgpu_policy.h"

static double mib(u64 b)
{
	return b / 1048576.0;
}

static u64 parse_size(const char *s)
{
	char *end;
	u64 v = strtoull(s, &end, 0);

	switch (*end) {
	case 'G': case 'g':
		v <<= 10;
		/* fall through */
	case 'M': case 'm':
		v <<= 10;
		/* fall through */
	case 'K': case 'k':
		v <<= 10;
		break;
	}
	return v;
}

static int parse_policy(const char *s)
{
	unsigned int i;
	char *end;
	long v;

	for (i = 0; i < QGPU_POLICY_COUNT; i++)
		if (!strcmp(s, qgpu_policy_name(i)))
			return i;
	v = strtol(s, &end, 0);
	if (*end || v < 0 || v >= QGPU_POLICY_COUNT)
		return -1;
	return v;
}

static u64 in_bytes(const struct rp_counters *c)
{
	return c->to_vram + c->filled;
}

static void ratio(char *buf, size_t len, u64 v, u64 bound)
{
	if (!bound)
		snprintf(buf, len, "%s", v ? "inf" : "1.000");
	else
		snprintf(buf, len, "%.3f", (double)v / bound);
}

/* --why: where a policy's bytes went */
static void print_why(const struct rp_waste *w)
{
	printf("  %-14s in: fill %.1f, first %.1f, victims back in the same submission %.1f, later %.1f, after forced evictions %.1f, migrated back %.1f\n",
	       "", mib(w->fill), mib(w->first), mib(w->back_same),
	       mib(w->back_later), mib(w->back_forced), mib(w->migrated));
	printf("  %-14s victims %.1f: beyond the shortfall %.1f, with room in another VRAM segment %.1f, used later by the same submission %.1f\n",
	       "", mib(w->victim), mib(w->excess), mib(w->other_room),
	       mib(w->same_sub));
}

struct args {
	int policy;		/* -1: all */
	bool check, csv, why, features_set;
	u32 features;
	const char *log;
	u64 visible, local, aperture, hap;
	bool other;
};

static int check_trace(const struct rp_trace *t, const struct rp_config *cfg,
		       const struct args *a)
{
	struct rp_counters k;
	struct rp_options opt = { .check = true };
	struct rp_result r;
	u64 changes = 0;
	size_t i;
	u32 policy;
	int bad = 0;
	FILE *log = NULL;

	if (rp_trace_kernel_counters(t, &k, &policy)) {
		printf("  check: FAIL: the trace has not both snapshots (start and end)\n");
		return 1;
	}
	if (t->lost) {
		printf("  check: FAIL: %llu events were lost while recording\n",
		       (unsigned long long)t->lost);
		return 1;
	}
	if (policy >= QGPU_POLICY_COUNT) {
		printf("  check: FAIL: the kernel's policy %u is not in this build's qgpu_policy.c\n",
		       policy);
		return 1;
	}
	if (a->log) {
		log = fopen(a->log, "w");
		opt.log = log;
	}
	for (i = 0; i < t->nev; i++)
		changes += t->ev[i].kind == EV_POLICY;
	if (changes)
		printf("  check: the kernel's policy changed %llu times in the trace; the replay follows it\n",
		       (unsigned long long)changes);
	rp_replay(t, cfg, policy, &opt, &r);
	if (log)
		fclose(log);
	if (memcmp(&k, &r.c, sizeof(k))) {
		printf("  check %s: FAIL: counters differ: kernel in %llu out %llu vram-to-vram %llu filled %llu evictions %llu; replay in %llu out %llu vram-to-vram %llu filled %llu evictions %llu\n",
		       qgpu_policy_name(policy),
		       (unsigned long long)k.to_vram,
		       (unsigned long long)k.from_vram,
		       (unsigned long long)k.vram_to_vram,
		       (unsigned long long)k.filled,
		       (unsigned long long)k.evictions,
		       (unsigned long long)r.c.to_vram,
		       (unsigned long long)r.c.from_vram,
		       (unsigned long long)r.c.vram_to_vram,
		       (unsigned long long)r.c.filled,
		       (unsigned long long)r.c.evictions);
		bad = 1;
	}
	if (r.move_mismatch) {
		printf("  check %s: FAIL: %llu of %llu moves differ; first: %s\n",
		       qgpu_policy_name(policy),
		       (unsigned long long)r.move_mismatch,
		       (unsigned long long)r.moves, r.mismatch);
		bad = 1;
	}
	if (r.tick_mismatch) {
		printf("  check %s: FAIL: %llu uses at another LRU tick than the kernel's; first: %s\n",
		       qgpu_policy_name(policy),
		       (unsigned long long)r.tick_mismatch, r.tick_diff);
		bad = 1;
	}
	if (!r.state_match) {
		printf("  check %s: FAIL: the books at the end differ: %s\n",
		       qgpu_policy_name(policy), r.state_diff);
		bad = 1;
	}
	if (!bad)
		printf("  check %s: exact: in %llu out %llu vram-to-vram %llu filled %llu bytes and %llu evictions as the kernel counted them; %llu moves, %llu uses (LRU ticks) and the books at the end as the kernel's\n",
		       qgpu_policy_name(policy),
		       (unsigned long long)k.to_vram,
		       (unsigned long long)k.from_vram,
		       (unsigned long long)k.vram_to_vram,
		       (unsigned long long)k.filled,
		       (unsigned long long)k.evictions,
		       (unsigned long long)r.moves,
		       (unsigned long long)r.uses);
	rp_result_free(&r);
	return bad;
}

static int one_trace(const char *path, const struct args *a)
{
	struct rp_result res[QGPU_POLICY_COUNT], orc;
	struct rp_options oo = { 0 };
	struct rp_bound min, fnu, min_free, min_pooled;
	struct rp_trace t;
	struct rp_config cfg;
	struct rp_counters k;
	u32 kpolicy = 0, p;
	u8 *served, *out;
	char err[512], rb[32];
	int bad = 0, best = -1;
	u64 i, nserved = 0, nout = 0, fewest = ~0ull;
	bool have_k;

	if (rp_trace_load(&t, path, err, sizeof(err))) {
		fprintf(stderr, "qgpu-replay: %s\n", err);
		return 2;
	}
	if (rp_config_from_trace(&t, &cfg)) {
		fprintf(stderr, "qgpu-replay: %s: no snapshot: not replayable\n",
			path);
		rp_trace_free(&t);
		return 2;
	}
	if (a->other) {
		cfg.as_recorded = false;
		if (a->visible)
			cfg.seg_size[1] = a->visible;
		if (a->local != ~0ull)
			cfg.seg_size[2] = a->local;
		if (a->aperture)
			cfg.seg_size[3] = a->aperture;
		if (a->hap != ~0ull)
			cfg.hap = a->hap;
		if (!cfg.seg_size[2])
			cfg.seg_reserved[1] += cfg.seg_reserved[2];
		cfg.visible = cfg.seg_size[1];
		cfg.vram = cfg.seg_size[1] + cfg.seg_size[2];
	}
	have_k = !rp_trace_kernel_counters(&t, &k, &kpolicy);
	if (!a->csv) {
		printf("trace %s%s%s%s: %zu events, %zu submissions, %llu references%s\n",
		       path, t.command[0] ? " (" : "", t.command,
		       t.command[0] ? ")" : "", t.nev, t.nsub,
		       (unsigned long long)t.nrefs,
		       t.lost ? " (EVENTS LOST: not exact)" : "");
		printf("  device%s: visible %.1f MiB, local %.1f MiB, aperture %.1f MiB, host aperture %.1f MiB\n",
		       cfg.as_recorded ? " as recorded" : " (replayed on)",
		       mib(cfg.seg_size[1]), mib(cfg.seg_size[2]),
		       mib(cfg.seg_size[3]), mib(cfg.hap));
		if (have_k && cfg.as_recorded)
			printf("  kernel (%s): in %.1f MiB, out %.1f MiB, vram-to-vram %.1f MiB, %llu evictions\n",
			       qgpu_policy_name(kpolicy), mib(in_bytes(&k)),
			       mib(k.from_vram), mib(k.vram_to_vram),
			       (unsigned long long)k.evictions);
	} else if (have_k && cfg.as_recorded) {
		printf("kernel,%s,%llu,%llu,%llu,%llu,%llu\n",
		       qgpu_policy_name(kpolicy),
		       (unsigned long long)in_bytes(&k),
		       (unsigned long long)k.from_vram,
		       (unsigned long long)k.vram_to_vram,
		       (unsigned long long)k.filled,
		       (unsigned long long)k.evictions);
	}

	/* every policy, then what every one of them served from VRAM */
	served = calloc(t.nrefs + 1, 1);
	for (i = 0; i < t.nrefs; i++)
		served[i] = RP_REF_VRAM;
	for (p = 0; p < QGPU_POLICY_COUNT; p++) {
		struct rp_options o = { .features_set = a->features_set,
					.features = a->features };

		rp_replay(&t, &cfg, p, &o, &res[p]);
		for (i = 0; i < t.nrefs; i++)
			if (res[p].ref[i] != RP_REF_VRAM)
				served[i] = RP_REF_SKIPPED;
	}
	for (i = 0; i < t.nrefs; i++)
		nserved += served[i] == RP_REF_VRAM;
	/* the oracle: the real memory manager knowing the whole future */
	oo.features_set = a->features_set;
	oo.features = a->features;
	oo.oracle = true;
	rp_replay(&t, &cfg, QGPU_POLICY_FUTURE_USE, &oo, &orc);
	/* the bound counts what the oracle served from VRAM too */
	for (i = 0; i < t.nrefs; i++)
		if (orc.ref[i] != RP_REF_VRAM && served[i] == RP_REF_VRAM) {
			served[i] = RP_REF_SKIPPED;
			nserved--;
		}
	/* where every one of them (and the oracle) had to leave VRAM */
	out = calloc(t.nev + 1, 1);
	if (!served || !out) {
		fprintf(stderr, "qgpu-replay: out of memory\n");
		exit(2);
	}
	for (i = 0; i < t.nev; i++) {
		out[i] = orc.out[i];
		for (p = 0; p < QGPU_POLICY_COUNT; p++)
			out[i] &= res[p].out[i];
		nout += out[i];
	}
	/* page tables never leave VRAM: the bound counts them if every
	 * replay placed every one */
	cfg.bound_pts = !orc.pt_failed;
	for (p = 0; p < QGPU_POLICY_COUNT; p++)
		cfg.bound_pts &= !res[p].pt_failed;
	rp_bound_min(&t, &cfg, served, out, &min);
	rp_bound_fnu(&t, &cfg, served, out, &fnu);
	rp_bound_min(&t, &cfg, served, NULL, &min_free);
	rp_bound_min_pooled(&t, &cfg, served, out, &min_pooled);

	if (!a->csv)
		printf("  %-14s %10s %10s %10s %9s %7s %7s %7s\n", "policy",
		       "in MiB", "out MiB", "v2v MiB", "evictions", "splits",
		       "failed", "ratio");
	/* the best: least paged in of those that failed fewest submissions */
	for (p = 0; p < QGPU_POLICY_COUNT; p++)
		if (res[p].failed_submits < fewest)
			fewest = res[p].failed_submits;
	for (p = 0; p < QGPU_POLICY_COUNT; p++) {
		struct rp_result *r = &res[p];

		if (r->failed_submits == fewest &&
		    (best < 0 || in_bytes(&r->c) < in_bytes(&res[best].c)))
			best = p;
		if (in_bytes(&r->c) < min.in_bytes) {
			fprintf(stderr, "qgpu-replay: %s: policy %s paged in %llu bytes, below the bound %llu\n",
				path, qgpu_policy_name(p),
				(unsigned long long)in_bytes(&r->c),
				(unsigned long long)min.in_bytes);
			bad = 1;
		}
		if (a->policy >= 0 && (u32)a->policy != p)
			continue;
		ratio(rb, sizeof(rb), in_bytes(&r->c), min.in_bytes);
		if (a->csv)
			printf("policy,%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%s\n",
			       qgpu_policy_name(p),
			       (unsigned long long)in_bytes(&r->c),
			       (unsigned long long)r->c.from_vram,
			       (unsigned long long)r->c.vram_to_vram,
			       (unsigned long long)r->c.filled,
			       (unsigned long long)r->c.evictions,
			       (unsigned long long)r->splits,
			       (unsigned long long)r->failed_submits, rb);
		else
			printf("  %-14s %10.1f %10.1f %10.1f %9llu %7llu %7llu %7s\n",
			       qgpu_policy_name(p), mib(in_bytes(&r->c)),
			       mib(r->c.from_vram), mib(r->c.vram_to_vram),
			       (unsigned long long)r->c.evictions,
			       (unsigned long long)r->splits,
			       (unsigned long long)r->failed_submits, rb);
		if (a->why && !a->csv)
			print_why(&r->w);
		if (r->unknown && !a->csv)
			printf("  %-14s (%llu requests on allocations it never saw)\n",
			       "", (unsigned long long)r->unknown);
	}
	ratio(rb, sizeof(rb), in_bytes(&orc.c), min.in_bytes);
	if (a->csv)
		printf("reference,oracle,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%s\n",
		       (unsigned long long)in_bytes(&orc.c),
		       (unsigned long long)orc.c.from_vram,
		       (unsigned long long)orc.c.vram_to_vram,
		       (unsigned long long)orc.c.filled,
		       (unsigned long long)orc.c.evictions,
		       (unsigned long long)orc.splits,
		       (unsigned long long)orc.failed_submits, rb);
	else
		printf("  %-14s %10.1f %10.1f %10.1f %9llu %7llu %7llu %7s\n",
		       "oracle (mm)", mib(in_bytes(&orc.c)),
		       mib(orc.c.from_vram), mib(orc.c.vram_to_vram),
		       (unsigned long long)orc.c.evictions,
		       (unsigned long long)orc.splits,
		       (unsigned long long)orc.failed_submits, rb);
	ratio(rb, sizeof(rb), fnu.in_bytes, min.in_bytes);
	if (a->csv) {
		printf("bound,min,%llu,%llu,%llu\n",
		       (unsigned long long)min.in_bytes,
		       (unsigned long long)min.out_bytes,
		       (unsigned long long)min.refs);
		printf("bound,fnu,%llu,%llu,%llu\n",
		       (unsigned long long)fnu.in_bytes,
		       (unsigned long long)fnu.out_bytes,
		       (unsigned long long)fnu.refs);
		printf("bound,min-requests-ignored,%llu,%llu,%llu\n",
		       (unsigned long long)min_free.in_bytes,
		       (unsigned long long)min_free.out_bytes,
		       (unsigned long long)min_free.refs);
		printf("bound,min-pooled,%llu,%llu,%llu\n",
		       (unsigned long long)min_pooled.in_bytes,
		       (unsigned long long)min_pooled.out_bytes,
		       (unsigned long long)min_pooled.refs);
	} else {
		printf("  %-14s %10.1f %10.1f %10s %9s %7s %7s %7s\n",
		       "bound min", mib(min.in_bytes), mib(min.out_bytes), "",
		       "", "", "", "1.000");
		printf("  %-14s %10.1f %10.1f %10s %9s %7s %7s %7s\n",
		       "fnu (whole)", mib(fnu.in_bytes), mib(fnu.out_bytes), "",
		       "", "", "", rb);
		if (nout) {
			ratio(rb, sizeof(rb), min_free.in_bytes, min.in_bytes);
			printf("  %-14s %10.1f %10.1f %10s %9s %7s %7s %7s\n",
			       "min, no reqs", mib(min_free.in_bytes),
			       mib(min_free.out_bytes), "", "", "", "", rb);
		}
		ratio(rb, sizeof(rb), min_pooled.in_bytes, min.in_bytes);
		printf("  %-14s %10.1f %10.1f %10s %9s %7s %7s %7s\n",
		       "min, pooled", mib(min_pooled.in_bytes),
		       mib(min_pooled.out_bytes), "", "", "", "", rb);
		printf("  (%llu of %llu references served from VRAM by every policy and the oracle; %llu eviction requests and Lock2s took the allocation out of VRAM in every one; pages of 4 KiB; the bound's capacity: %s%s; pooled: %.1f MiB)\n",
		       (unsigned long long)nserved,
		       (unsigned long long)t.nrefs,
		       (unsigned long long)nout,
		       min.pooled ? "VRAM pooled (too many allocations and references to sum the segments over)" :
		       "whole live allocations in each segment, those a group of entries uses together",
		       min.by_class ? "; the sum over the segment classes (allocations that may use only the CPU-visible segment, only the other, both), larger than MIN over all" : "",
		       mib(cfg.seg_size[1] + cfg.seg_size[2] -
			   cfg.seg_reserved[1] - cfg.seg_reserved[2]));
	}
	if (a->check && cfg.as_recorded && !a->csv)
		bad |= check_trace(&t, &cfg, a);
	else if (a->check && cfg.as_recorded)
		bad |= check_trace(&t, &cfg, a) ? 1 : 0;
	ratio(rb, sizeof(rb), best >= 0 ? in_bytes(&res[best].c) : 0,
	      min.in_bytes);
	printf("%s%s: min=%llu fnu=%llu best-policy=%s best=%s\n",
	       a->csv ? "summary," : "", path,
	       (unsigned long long)min.in_bytes,
	       (unsigned long long)fnu.in_bytes,
	       best >= 0 ? qgpu_policy_name(best) : "none",
	       best >= 0 ? rb : "inf");
	for (p = 0; p < QGPU_POLICY_COUNT; p++)
		rp_result_free(&res[p]);
	rp_result_free(&orc);
	free(served);
	free(out);
	rp_trace_free(&t);
	return bad;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "csv", no_argument, NULL, 'C' },
		{ "why", no_argument, NULL, 'W' },
		{ "features", required_argument, NULL, 'F' },
		{ "log", required_argument, NULL, 'l' },
		{ "visible", required_argument, NULL, 'V' },
		{ "local", required_argument, NULL, 'L' },
		{ "aperture", required_argument, NULL, 'A' },
		{ "hap", required_argument, NULL, 'H' },
		{ "policy", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct args a = { .policy = -1, .local = ~0ull, .hap = ~0ull };
	int opt, i, rc = 0;

	while ((opt = getopt_long(argc, argv, "p:h", lopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			a.check = true;
			break;
		case 'C':
			a.csv = true;
			break;
		case 'W':
			a.why = true;
			break;
		case 'F':
			a.features = strtoul(optarg, NULL, 0);
			a.features_set = true;
			break;
		case 'l':
			a.log = optarg;
			break;
		case 'V':
			a.visible = parse_size(optarg);
			a.other = true;
			break;
		case 'L':
			a.local = parse_size(optarg);
			a.other = true;
			break;
		case 'A':
			a.aperture = parse_size(optarg);
			a.other = true;
			break;
		case 'H':
			a.hap = parse_size(optarg);
			a.other = true;
			break;
		case 'p':
			a.policy = parse_policy(optarg);
			if (a.policy < 0) {
				fprintf(stderr, "qgpu-replay: no policy %s\n",
					optarg);
				return 2;
			}
			break;
		default:
			fprintf(stderr,
				"usage: qgpu-replay [-p POLICY] [--check] [--csv] [--why] [--features MASK] [--log FILE]\n"
				"                   [--visible SIZE] [--local SIZE] [--aperture SIZE] [--hap SIZE]\n"
				"                   TRACE...\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "qgpu-replay: no trace given\n");
		return 2;
	}
	if (a.log && !a.check) {
		fprintf(stderr, "qgpu-replay: --log writes the moves of the --check replay: give --check too\n");
		return 2;
	}
	for (i = optind; i < argc; i++) {
		int r = one_trace(argv[i], &a);

		if (r > rc)
			rc = r;
	}
	return rc;
}
