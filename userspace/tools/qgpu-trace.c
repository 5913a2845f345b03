// SPDX-License-Identifier: MIT
/*
 * qgpu-trace: record the residency events of a run into a qgpu trace file
 * (the format: docs/trace-format.md), for qgpu-replay on the host.
 *
 * usage: qgpu-trace record -o FILE [-b KB] [-d NODE] [-r RAW] -- COMMAND [ARGS...]
 *        qgpu-trace convert [-o FILE] RAW      (a saved tracefs text dump)
 *        qgpu-trace cat FILE                   (print FILE for the host)
 *
 * record: enables the qgpu residency events in a tracefs instance of its
 * own (clock "global", a ring buffer of KB KiB per CPU, default 65536),
 * writes a snapshot of
 * the memory manager's books into it (debugfs qgpu_trace_snapshot, tag 1),
 * runs COMMAND, writes a second snapshot (tag 2), reads the buffer back and
 * converts it: a header with the format's name and version and the
 * device's segments, then one event per line. Events the ring buffer lost
 * are counted from tracefs's own figures and written into the file ("lost
 * N"); qgpu-trace says so on stderr and exits 3 when any were lost.
 * -r RAW keeps the tracefs text it converted (qgpu-trace convert RAW
 * converts it again).
 * Otherwise the exit status is COMMAND's.
 *
 * cat: prints FILE between "@@QGPU-FILE-BEGIN NAME@@" and
 * "@@QGPU-FILE-END lines=N bytes=M@@" lines, each line prefixed with
 * "@@ ", so that a host reading the guest's console can take it out again
 * and check it is whole (scripts/vm-fetch.py).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libqgpu.h"

#define TRACE_FORMAT	"qgpu-trace"
#define TRACE_VERSION	1

static char tdir[192];		/* tracefs */
static char snapfile[512];	/* debugfs qgpu_trace_snapshot */

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("qgpu-trace: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	exit(2);
}

/*
 * A tracefs instance of our own (instances/qgpu-trace-PID): its own ring
 * buffer, clock and event switches, so that other users of tracefs (a
 * program reading the top-level buffer, as qgpu-demo does) and qgpu-trace
 * do not disturb each other.
 */
static void find_tracefs(void)
{
	char top[64];
	struct stat st;

	if (stat("/sys/kernel/tracing/events", &st))
		mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
	if (!stat("/sys/kernel/tracing/events", &st))
		snprintf(top, sizeof(top), "/sys/kernel/tracing");
	else if (!stat("/sys/kernel/debug/tracing/events", &st))
		snprintf(top, sizeof(top), "/sys/kernel/debug/tracing");
	else
		die("no tracefs (mount -t tracefs nodev /sys/kernel/tracing)\n");
	snprintf(tdir, sizeof(tdir), "%s/instances/qgpu-trace-%d", top,
		 (int)getpid());
	if (mkdir(tdir, 0755) && errno != EEXIST)
		die("mkdir %s: %s\n", tdir, strerror(errno));
}

static void find_snapshot(void)
{
	struct dirent *d;
	struct stat st;
	DIR *dir;

	if (stat("/sys/kernel/debug/dri", &st))
		mount("nodev", "/sys/kernel/debug", "debugfs", 0, NULL);
	dir = opendir("/sys/kernel/debug/dri");
	if (!dir)
		die("no debugfs (mount -t debugfs nodev /sys/kernel/debug)\n");
	while ((d = readdir(dir))) {
		char p[512];

		if (d->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/sys/kernel/debug/dri/%s/qgpu_trace_snapshot",
			 d->d_name);
		if (!stat(p, &st)) {
			snprintf(snapfile, sizeof(snapfile), "%s", p);
			break;
		}
	}
	closedir(dir);
	if (!snapfile[0])
		die("no qgpu_trace_snapshot in /sys/kernel/debug/dri/*: is qgpu.ko loaded?\n");
}

static void twrite(const char *file, const char *val)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tdir, file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		die("open %s: %s\n", path, strerror(errno));
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		die("write %s to %s: %s\n", val, path, strerror(errno));
	close(fd);
}

static void snapshot(int tag)
{
	char buf[16];
	int fd = open(snapfile, O_WRONLY);

	if (fd < 0)
		die("open %s: %s\n", snapfile, strerror(errno));
	snprintf(buf, sizeof(buf), "%d", tag);
	if (write(fd, buf, strlen(buf)) < 0)
		die("write %s: %s\n", snapfile, strerror(errno));
	close(fd);
}

/* The tracefs events the format is made of */
static const char *const events[] = {
	"qgpu_bo_create", "qgpu_bo_destroy", "qgpu_move", "qgpu_evict",
	"qgpu_make_resident", "qgpu_split_portion", "qgpu_mm_req",
	"qgpu_touch", "qgpu_cpu_fault", "qgpu_submit_begin",
	"qgpu_submit_entry", "qgpu_submit_end", "qgpu_portion_use",
	"qgpu_pt_alloc", "qgpu_pt_free", "qgpu_snap_begin", "qgpu_snap_seg",
	"qgpu_snap_node", "qgpu_snap_hole", "qgpu_snap_bo",
	"qgpu_snap_bo_state", "qgpu_snap_end",
};

static void set_events(void)
{
	char file[128];
	size_t i;

	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(file, sizeof(file), "events/qgpu/%s/enable", events[i]);
		twrite(file, "1");
	}
}

/* --- conversion from tracefs text ----------------------------------------- */

/* One field of a tracefs line, by name ("" if absent) */
struct fields {
	char *k[32];
	char *v[32];
	int n;
};

static void split_fields(char *s, struct fields *f)
{
	char *tok, *save = NULL;

	f->n = 0;
	for (tok = strtok_r(s, " \t\n", &save); tok && f->n < 32;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			continue;
		*eq = 0;
		f->k[f->n] = tok;
		f->v[f->n] = eq + 1;
		f->n++;
	}
}

static const char *fv(const struct fields *f, const char *k)
{
	int i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->k[i], k))
			return f->v[i];
	return "";
}

static unsigned long long fu(const struct fields *f, const char *k)
{
	return strtoull(fv(f, k), NULL, 0);
}

static const char *why_name(unsigned long long w)
{
	static const char *const n[] = { "place", "victim", "request", "cpu" };

	return w < 4 ? n[w] : "?";
}

struct conv {
	FILE *out;
	int have_t0;
	unsigned long long t0;
	unsigned long long events;
	int snaps;
};

/* Convert one tracefs line; returns 1 if it was a qgpu event */
static int convert_line(struct conv *c, char *line)
{
	char *ev, *colon, *p, *ts_end, *ts;
	unsigned long long t, sec, usec;
	struct fields f;
	FILE *o = c->out;

	if (line[0] == '#')
		return 0;
	ev = strstr(line, ": qgpu_");
	if (!ev)
		return 0;
	*ev = 0;
	ev += 2;
	colon = strchr(ev, ':');
	if (!colon)
		return 0;
	*colon = 0;
	/* the timestamp is the last token before the event name */
	ts_end = ev - 2;
	while (ts_end > line && *ts_end == ' ')
		ts_end--;
	ts = ts_end;
	while (ts > line && ts[-1] != ' ')
		ts--;
	sec = strtoull(ts, &p, 10);
	usec = *p == '.' ? strtoull(p + 1, NULL, 10) : 0;
	t = sec * 1000000ull + usec;
	if (!c->have_t0) {
		c->t0 = t;
		c->have_t0 = 1;
	}
	t -= c->t0;
	split_fields(colon + 1, &f);
	c->events++;

	fprintf(o, "%llu ", t);
	if (!strcmp(ev, "qgpu_bo_create")) {
		fprintf(o, "create id=%llu size=%llu mask=%#llx flags=%#llx pref=%#llx\n",
			fu(&f, "id"), fu(&f, "size"), fu(&f, "segments"),
			fu(&f, "flags"), fu(&f, "preferred"));
	} else if (!strcmp(ev, "qgpu_bo_destroy")) {
		fprintf(o, "destroy id=%llu seg=%llu deferred=%llu\n",
			fu(&f, "id"), fu(&f, "segment"), fu(&f, "deferred"));
	} else if (!strcmp(ev, "qgpu_move")) {
		fprintf(o, "move id=%llu from=%llu to=%llu bytes=%llu why=%s offset=%llu fill=%llu\n",
			fu(&f, "id"), fu(&f, "from"), fu(&f, "to"),
			fu(&f, "bytes"), why_name(fu(&f, "why")),
			fu(&f, "offset"), fu(&f, "fill"));
	} else if (!strcmp(ev, "qgpu_evict")) {
		fprintf(o, "evict id=%llu from=%llu to_system=%llu why=%s dead=%llu\n",
			fu(&f, "id"), fu(&f, "from"), fu(&f, "to_system"),
			why_name(fu(&f, "why")), fu(&f, "destroyed"));
	} else if (!strcmp(ev, "qgpu_make_resident")) {
		fprintf(o, "place id=%llu want=%llu seg=%llu ret=%lld\n",
			fu(&f, "id"), fu(&f, "want"), fu(&f, "segment"),
			strtoll(fv(&f, "ret"), NULL, 0));
	} else if (!strcmp(ev, "qgpu_split_portion")) {
		fprintf(o, "portion seq=%llu ctx=%llu index=%llu start=%llu end=%llu uses=%llu\n",
			fu(&f, "seq"), fu(&f, "ctx"), fu(&f, "portion"),
			fu(&f, "start"), fu(&f, "end"), fu(&f, "uses"));
	} else if (!strcmp(ev, "qgpu_mm_req")) {
		unsigned long long id = fu(&f, "id"), arg = fu(&f, "arg");

		switch (fu(&f, "kind")) {
		case 1:
			fprintf(o, "reside id=%llu seg=%llu\n", id, arg);
			break;
		case 2:
			fprintf(o, "evict-req id=%llu system=%llu\n", id, arg);
			break;
		case 3:
			fprintf(o, "lock id=%llu\n", id);
			break;
		case 4:
			fprintf(o, "unlock id=%llu\n", id);
			break;
		case 5:
			fprintf(o, "attach id=%llu\n", id);
			break;
		case 6:
			fprintf(o, "detach id=%llu\n", id);
			break;
		case 7:
			fprintf(o, "make-resident id=%llu evict=%llu\n", id, arg);
			break;
		case 8:
			fprintf(o, "reap id=%llu\n", id);
			break;
		case 9:
			fprintf(o, "priority id=%llu value=%#llx\n", id, arg);
			break;
		case 10:
			fprintf(o, "policy value=%llu\n", arg);
			break;
		case 11:
			fprintf(o, "offer id=%llu priority=%llu\n", id, arg);
			break;
		case 12:
			fprintf(o, "reclaim id=%llu\n", id);
			break;
		case 13:
			fprintf(o, "gpu-map id=%llu linked=%llu\n", id, arg);
			break;
		case 14:
			fprintf(o, "owner id=%llu vidmem=%llu\n", id, arg);
			break;
		case 15:
			fprintf(o, "budget percent=%llu\n", arg);
			break;
		case 16:
			fprintf(o, "gpu-write id=%llu\n", id);
			break;
		default:
			fprintf(o, "# unknown request kind=%s id=%llu\n",
				fv(&f, "kind"), id);
		}
	} else if (!strcmp(ev, "qgpu_touch")) {
		fprintf(o, "touch id=%llu tick=%llu\n", fu(&f, "id"),
			fu(&f, "tick"));
	} else if (!strcmp(ev, "qgpu_cpu_fault")) {
		fprintf(o, "cpu-fault id=%llu write=%llu ret=%lld moving=%llu\n",
			fu(&f, "id"), fu(&f, "write"),
			strtoll(fv(&f, "ret"), NULL, 0), fu(&f, "moving"));
	} else if (!strcmp(ev, "qgpu_submit_begin")) {
		fprintf(o, "submit seq=%llu ctx=%llu allocs=%llu patches=%llu dma=%llu\n",
			fu(&f, "seq"), fu(&f, "ctx"), fu(&f, "allocs"),
			fu(&f, "patches"), fu(&f, "dma_size"));
	} else if (!strcmp(ev, "qgpu_submit_entry")) {
		fprintf(o, "entry seq=%llu i=%llu id=%llu slot=%llu split=%llu patch=%llu write=%llu alloc=%llu\n",
			fu(&f, "seq"), fu(&f, "index"), fu(&f, "id"),
			fu(&f, "slot"), fu(&f, "split"), fu(&f, "patch"),
			fu(&f, "write"), fu(&f, "alloc"));
	} else if (!strcmp(ev, "qgpu_submit_end")) {
		fprintf(o, "submit-end seq=%llu ret=%lld portions=%llu\n",
			fu(&f, "seq"), strtoll(fv(&f, "ret"), NULL, 0),
			fu(&f, "portions"));
	} else if (!strcmp(ev, "qgpu_portion_use")) {
		fprintf(o, "use seq=%llu portion=%llu id=%llu write=%llu\n",
			fu(&f, "seq"), fu(&f, "portion"), fu(&f, "id"),
			fu(&f, "write"));
	} else if (!strcmp(ev, "qgpu_pt_alloc")) {
		fprintf(o, "pt-alloc pt=%llu level=%llu seg=%llu start=%llu ret=%lld vidmem=%llu\n",
			fu(&f, "pt"), fu(&f, "level"), fu(&f, "segment"),
			fu(&f, "start"), strtoll(fv(&f, "ret"), NULL, 0),
			fu(&f, "vidmem"));
	} else if (!strcmp(ev, "qgpu_pt_free")) {
		fprintf(o, "pt-free pt=%llu\n", fu(&f, "pt"));
	} else if (!strcmp(ev, "qgpu_snap_begin")) {
		fprintf(o, "snap-begin tag=%llu to_vram=%llu from_vram=%llu vram_to_vram=%llu filled=%llu evictions=%llu tick=%llu policy=%llu next_id=%llu features=%#llx budget=%llu\n",
			fu(&f, "tag"), fu(&f, "to_vram"), fu(&f, "from_vram"),
			fu(&f, "vram_to_vram"), fu(&f, "filled"),
			fu(&f, "evictions"), fu(&f, "lru_tick"),
			fu(&f, "policy"), fu(&f, "next_id"),
			fu(&f, "features"), fu(&f, "budget"));
	} else if (!strcmp(ev, "qgpu_snap_seg")) {
		fprintf(o, "snap-seg seg=%llu size=%llu reserved=%llu used=%llu allocations=%llu\n",
			fu(&f, "segment"), fu(&f, "size"), fu(&f, "reserved"),
			fu(&f, "used"), fu(&f, "allocations"));
	} else if (!strcmp(ev, "qgpu_snap_node")) {
		unsigned long long kind = fu(&f, "kind");

		fprintf(o, "snap-node seg=%llu start=%llu size=%llu kind=%s id=%llu vidmem=%llu\n",
			fu(&f, "segment"), fu(&f, "start"), fu(&f, "size"),
			kind == 1 ? "pt" : kind == 2 ? "pbuf" : "bo",
			fu(&f, "id"), fu(&f, "vidmem"));
	} else if (!strcmp(ev, "qgpu_snap_hole")) {
		fprintf(o, "snap-hole seg=%llu start=%llu size=%llu\n",
			fu(&f, "segment"), fu(&f, "start"), fu(&f, "size"));
	} else if (!strcmp(ev, "qgpu_snap_bo")) {
		fprintf(o, "snap-bo id=%llu size=%llu mask=%#llx flags=%#llx pref=%#llx seg=%llu start=%llu tick=%llu state=%#llx locks=%llu attachments=%llu priority=%#llx\n",
			fu(&f, "id"), fu(&f, "size"), fu(&f, "segments"),
			fu(&f, "flags"), fu(&f, "preferred"),
			fu(&f, "segment"), fu(&f, "start"), fu(&f, "tick"),
			fu(&f, "state"), fu(&f, "locks"),
			fu(&f, "attachments"), fu(&f, "priority"));
	} else if (!strcmp(ev, "qgpu_snap_bo_state")) {
		fprintf(o, "snap-bo-state id=%llu offer=%llu mappings=%llu evicted=%llu owner=%llu\n",
			fu(&f, "id"), fu(&f, "offer"), fu(&f, "mappings"),
			fu(&f, "evicted"), fu(&f, "owner"));
	} else if (!strcmp(ev, "qgpu_snap_end")) {
		fprintf(o, "snap-end tag=%llu\n", fu(&f, "tag"));
		c->snaps++;
	} else {
		fprintf(o, "# %s\n", ev);
		c->events--;
	}
	return 1;
}

/* tracefs's own count of what the ring buffer dropped */
static unsigned long long lost_events(FILE *raw)
{
	unsigned long long in, written;
	char line[512];

	rewind(raw);
	while (fgets(line, sizeof(line), raw)) {
		char *p = strstr(line, "entries-in-buffer/entries-written:");

		if (line[0] != '#')
			break;
		if (p && sscanf(p + 35, "%llu/%llu", &in, &written) == 2)
			return written > in ? written - in : 0;
	}
	return 0;
}

static void convert(FILE *raw, struct conv *c)
{
	char *line = NULL;
	size_t cap = 0;

	rewind(raw);
	while (getline(&line, &cap, raw) > 0)
		convert_line(c, line);
	free(line);
}

static void header(FILE *o, const char *node, int argc, char **argv)
{
	struct drm_qgpu_segment *segs = NULL;
	struct qgpu_dev dev;
	unsigned int n = 0, i;
	int ret;

	fprintf(o, "%s %d\n", TRACE_FORMAT, TRACE_VERSION);
	ret = node ? qgpu_open_path(&dev, node) : qgpu_open(&dev, QGPU_NODE_RENDER);
	if (ret)
		die("no qgpu device: %s\n", strerror(-ret));
	fprintf(o, "device vram=%llu visible=%llu gart=%llu hap=%llu page=4096 slots=%u mmu=%u io_coherent=%u\n",
		(unsigned long long)dev.info.vram_size,
		(unsigned long long)dev.info.visible_vram_size,
		(unsigned long long)dev.info.gart_size,
		(unsigned long long)dev.info.host_aperture_size,
		dev.info.max_slots, !!(dev.info.caps & QGPU_INFO_CAP_MMU),
		!!(dev.info.caps & QGPU_INFO_CAP_IO_COHERENT));
	if (!qgpu_query_segments(dev.fd, &segs, &n))
		for (i = 0; i < n; i++)
			fprintf(o, "segment id=%u name=%s size=%llu flags=%#x\n",
				segs[i].id, qgpu_segment_name(segs[i].id),
				(unsigned long long)segs[i].size,
				segs[i].flags);
	free(segs);
	qgpu_close(&dev);
	fputs("command", o);
	for (i = 0; i < (unsigned int)argc; i++)
		fprintf(o, " %s", argv[i]);
	fputs("\nclock global\n", o);
}

static int do_record(int argc, char **argv)
{
	const char *out = NULL, *node = NULL, *bufkb = "65536", *keep = NULL;
	struct conv c = {};
	char rawname[] = "/tmp/qgpu-trace-raw.XXXXXX";
	int opt, status = 0, rawfd, rc;
	FILE *raw, *o;
	pid_t pid;
	unsigned long long lost;
	char line[4096];
	ssize_t n;
	int tfd;

	while ((opt = getopt(argc, argv, "+o:b:d:r:")) != -1) {
		switch (opt) {
		case 'r':
			keep = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'b':
			bufkb = optarg;
			break;
		case 'd':
			node = optarg;
			break;
		default:
			return 2;
		}
	}
	if (!out || optind >= argc)
		die("usage: qgpu-trace record -o FILE [-b KB] [-d NODE] -- COMMAND [ARGS...]\n");
	argv += optind;
	argc -= optind;

	find_tracefs();
	find_snapshot();
	o = fopen(out, "w");
	if (!o)
		die("%s: %s\n", out, strerror(errno));
	header(o, node, argc, argv);

	twrite("tracing_on", "0");
	twrite("buffer_size_kb", bufkb);
	twrite("trace_clock", "global");
	set_events();
	twrite("tracing_on", "1");
	snapshot(1);

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork: %s\n", strerror(errno));
	if (!pid) {
		execvp(argv[0], argv);
		fprintf(stderr, "qgpu-trace: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	snapshot(2);
	twrite("tracing_on", "0");

	/* the buffer, as tracefs prints it, into a file of our own first */
	rawfd = keep ? open(keep, O_RDWR | O_CREAT | O_TRUNC, 0644) :
		mkstemp(rawname);
	if (rawfd < 0)
		die("%s: %s\n", keep ? keep : rawname, strerror(errno));
	if (!keep)
		unlink(rawname);
	snprintf(line, sizeof(line), "%s/trace", tdir);
	tfd = open(line, O_RDONLY);
	if (tfd < 0)
		die("%s: %s\n", line, strerror(errno));
	while ((n = read(tfd, line, sizeof(line))) > 0)
		if (write(rawfd, line, n) != n)
			die("write: %s\n", strerror(errno));
	close(tfd);
	if (rmdir(tdir))
		fprintf(stderr, "qgpu-trace: rmdir %s: %s\n", tdir, strerror(errno));
	raw = fdopen(rawfd, "r");
	if (!raw)
		die("fdopen: %s\n", strerror(errno));
	lost = lost_events(raw);
	c.out = o;
	convert(raw, &c);
	fclose(raw);
	fprintf(o, "lost %llu\n", lost);
	fprintf(o, "exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) :
		128 + WTERMSIG(status));
	if (fclose(o))
		die("%s: %s\n", out, strerror(errno));
	fprintf(stderr, "qgpu-trace: %llu events in %s%s\n", c.events, out,
		c.snaps == 2 ? "" : " (snapshots missing: not replayable)");
	if (lost) {
		fprintf(stderr, "qgpu-trace: %llu events lost: give a larger buffer (-b KB)\n",
			lost);
		return 3;
	}
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return rc;
}

static int do_convert(int argc, char **argv)
{
	struct conv c = {};
	const char *out = NULL;
	FILE *raw;
	int opt;

	while ((opt = getopt(argc, argv, "o:")) != -1) {
		if (opt != 'o')
			return 2;
		out = optarg;
	}
	if (optind >= argc)
		die("usage: qgpu-trace convert [-o FILE] RAW\n");
	raw = fopen(argv[optind], "r");
	if (!raw)
		die("%s: %s\n", argv[optind], strerror(errno));
	c.out = out ? fopen(out, "w") : stdout;
	if (!c.out)
		die("%s: %s\n", out, strerror(errno));
	fprintf(c.out, "%s %d\n# converted from %s (no device header)\n",
		TRACE_FORMAT, TRACE_VERSION, argv[optind]);
	convert(raw, &c);
	fprintf(c.out, "lost %llu\n", lost_events(raw));
	fclose(raw);
	return fclose(c.out) ? 1 : 0;
}

static int do_cat(int argc, char **argv)
{
	unsigned long long lines = 0, bytes = 0;
	char *line = NULL, *base;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	if (argc < 2)
		die("usage: qgpu-trace cat FILE\n");
	f = fopen(argv[1], "r");
	if (!f)
		die("%s: %s\n", argv[1], strerror(errno));
	base = strrchr(argv[1], '/');
	base = base ? base + 1 : argv[1];
	printf("@@QGPU-FILE-BEGIN %s@@\n", base);
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] != '\n')
			printf("@@ %s\n", line);
		else
			printf("@@ %s", line);
		lines++;
		bytes += n;
	}
	printf("@@QGPU-FILE-END lines=%llu bytes=%llu@@\n", lines, bytes);
	free(line);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr,
			"usage: qgpu-trace record -o FILE [-b KB] [-d NODE] -- COMMAND [ARGS...]\n"
			"       qgpu-trace convert [-o FILE] RAW\n"
			"       qgpu-trace cat FILE\n");
		return 2;
	}
	if (!strcmp(argv[1], "record"))
		return do_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "convert"))
		return do_convert(argc - 1, argv + 1);
	if (!strcmp(argv[1], "cat"))
		return do_cat(argc - 1, argv + 1);
	die("unknown command %s\n", argv[1]);
	return 2;
}
