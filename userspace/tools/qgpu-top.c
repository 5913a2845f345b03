// SPDX-License-Identifier: MIT
/*
 * qgpu-top: a live view of the device, in the spirit of intel_gpu_top and
 * nvtop. Every interval it shows:
 *   - per segment: occupancy as a bar, used and total bytes, allocations;
 *   - paging bandwidth to VRAM, from VRAM and within VRAM (MiB/s), bytes
 *     filled, evictions, paging buffers, submissions and split portions
 *     per second, faults and resets;
 *   - the victim policy in use (debugfs qgpu_policy);
 *   - per process (every DRM file on a qgpu node, from
 *     /proc/PID/fdinfo): the render engine's busy share over the interval
 *     and its memory in VRAM, the GART aperture and system memory.
 *
 * usage: qgpu-top [-d NODE] [-i MS] [-b] [-n COUNT]
 *   -i MS     refresh interval (default 1000)
 *   -b        batch mode: plain "top:" key=value lines, no screen control,
 *             for scripts (every sample; the first one is the baseline)
 *   -n COUNT  stop after COUNT samples (default: until q or Ctrl-C; batch
 *             mode: 5)
 * Interactive: q quits.
 */
#include <ctype.h>
#include <dirent.h>
#include <getopt.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "libqgpu.h"

#define MiB		(1024.0 * 1024.0)
#define MAX_CLIENTS	256
#define BAR_WIDTH	40

/* One DRM file of a qgpu node, as its fdinfo shows it */
struct client {
	unsigned long long id;		/* drm-client-id */
	int pid;
	char comm[32];
	unsigned long long busy_ns;	/* drm-engine-render */
	unsigned long long vram, gart, sys;	/* drm-total-* (bytes) */
	bool seen;
};

struct sample {
	int64_t t;
	struct drm_qgpu_stats st;
	struct drm_qgpu_segment_stats seg[QGPU_SEG_MAX + 1];
	unsigned int nseg;
	struct client cl[MAX_CLIENTS];
	unsigned int ncl;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* "123 KiB" / "4 MiB" / "17" -> bytes */
static unsigned long long parse_mem(const char *v)
{
	char *end;
	unsigned long long n = strtoull(v, &end, 10);

	while (*end == ' ' || *end == '\t')
		end++;
	if (!strncmp(end, "KiB", 3))
		n <<= 10;
	else if (!strncmp(end, "MiB", 3))
		n <<= 20;
	else if (!strncmp(end, "GiB", 3))
		n <<= 30;
	return n;
}

static struct client *client_of(struct sample *s, unsigned long long id)
{
	unsigned int i;

	for (i = 0; i < s->ncl; i++)
		if (s->cl[i].id == id)
			return &s->cl[i];
	if (s->ncl == MAX_CLIENTS)
		return NULL;
	memset(&s->cl[s->ncl], 0, sizeof(s->cl[0]));
	s->cl[s->ncl].id = id;
	return &s->cl[s->ncl++];
}

/* Parse one fdinfo file; adds the client if it is a qgpu DRM file. */
static void read_fdinfo(struct sample *s, int pid, const char *comm,
			const char *path)
{
	unsigned long long id = 0, busy = 0, vram = 0, gart = 0, sys = 0;
	bool qgpu = false, have_id = false;
	char line[256];
	struct client *c;
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		*v++ = 0;
		while (*v == ' ' || *v == '\t')
			v++;
		if (!strcmp(line, "drm-driver"))
			qgpu = !strncmp(v, "qgpu", 4);
		else if (!strcmp(line, "drm-client-id"))
			have_id = true, id = strtoull(v, NULL, 10);
		else if (!strcmp(line, "drm-engine-render"))
			busy = strtoull(v, NULL, 10);
		else if (!strcmp(line, "drm-total-vram"))
			vram = parse_mem(v);
		else if (!strcmp(line, "drm-total-gart"))
			gart = parse_mem(v);
		else if (!strcmp(line, "drm-total-system"))
			sys = parse_mem(v);
	}
	fclose(f);
	if (!qgpu || !have_id)
		return;
	/* one file may be open several times (dup, fork): counted once */
	c = client_of(s, id);
	if (!c || c->seen)
		return;
	c->seen = true;
	c->pid = pid;
	snprintf(c->comm, sizeof(c->comm), "%s", comm);
	c->busy_ns = busy;
	c->vram = vram;
	c->gart = gart;
	c->sys = sys;
}

static void read_clients(struct sample *s)
{
	DIR *proc = opendir("/proc");
	struct dirent *p;

	s->ncl = 0;
	if (!proc)
		return;
	while ((p = readdir(proc))) {
		char path[600], comm[32] = "?";
		struct dirent *fd;
		DIR *fds;
		FILE *f;

		if (!isdigit((unsigned char)p->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", p->d_name);
		f = fopen(path, "r");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/%s/fdinfo", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((fd = readdir(fds))) {
			if (!isdigit((unsigned char)fd->d_name[0]))
				continue;
			snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s",
				 p->d_name, fd->d_name);
			read_fdinfo(s, atoi(p->d_name), comm, path);
		}
		closedir(fds);
	}
	closedir(proc);
}

/* The selected policy's name from debugfs ("[lru] largest ..."), or "?" */
static void read_policy(char *out, size_t len)
{
	char buf[256], *a, *b;
	glob_t g;
	FILE *f;
	struct stat st;

	snprintf(out, len, "?");
	if (stat("/sys/kernel/debug/dri", &st))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (glob("/sys/kernel/debug/dri/*/qgpu_policy", 0, NULL, &g))
		return;
	f = fopen(g.gl_pathv[0], "r");
	globfree(&g);
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f)) {
		a = strchr(buf, '[');
		b = a ? strchr(a, ']') : NULL;
		if (a && b) {
			*b = 0;
			snprintf(out, len, "%s", a + 1);
		}
	}
	fclose(f);
}

static int take(struct qgpu_dev *dev, struct sample *s)
{
	int ret;

	s->t = qgpu_now_ns();
	ret = qgpu_query_stats(dev->fd, &s->st, s->seg,
			       QGPU_SEG_MAX + 1, &s->nseg);
	if (ret)
		return ret;
	if (s->nseg > QGPU_SEG_MAX + 1)
		s->nseg = QGPU_SEG_MAX + 1;
	read_clients(s);
	return 0;
}

static const struct client *prev_client(const struct sample *p,
					unsigned long long id)
{
	unsigned int i;

	for (i = 0; i < p->ncl; i++)
		if (p->cl[i].id == id)
			return &p->cl[i];
	return NULL;
}

#define RATE(f) ((double)(s->st.f - p->st.f) / dt)

static void show(const struct sample *p, const struct sample *s,
		 const char *policy, bool batch)
{
	double dt = (s->t - p->t) / 1e9;
	unsigned int i, k;

	if (dt <= 0)
		dt = 1e-9;
	if (batch) {
		printf("top: interval_ms=%.0f policy=%s to_vram_mib_s=%.2f from_vram_mib_s=%.2f vram_to_vram_mib_s=%.2f filled_mib_s=%.2f evictions_s=%.1f paging_buffers_s=%.1f submissions_s=%.1f split_portions_s=%.1f faults=%llu resets=%llu allocations=%llu allocated_bytes=%llu\n",
		       dt * 1e3, policy, RATE(bytes_to_vram) / MiB,
		       RATE(bytes_from_vram) / MiB,
		       RATE(bytes_vram_to_vram) / MiB,
		       RATE(bytes_filled) / MiB, RATE(evictions),
		       RATE(paging_buffers), RATE(submissions),
		       RATE(split_portions),
		       (unsigned long long)s->st.faults,
		       (unsigned long long)s->st.resets,
		       (unsigned long long)s->st.allocations,
		       (unsigned long long)s->st.allocated_bytes);
		for (i = 0; i < s->nseg; i++)
			printf("top: segment=%s size=%llu used=%llu allocations=%u\n",
			       qgpu_segment_name(s->seg[i].id),
			       (unsigned long long)s->seg[i].size,
			       (unsigned long long)s->seg[i].used,
			       s->seg[i].allocations);
	} else {
		printf("\033[H\033[2J");
		printf("qgpu-top   interval %.0f ms   policy %s   (q quits)\n\n",
		       dt * 1e3, policy);
		for (i = 0; i < s->nseg; i++) {
			const struct drm_qgpu_segment_stats *g = &s->seg[i];
			unsigned int fill = g->size ?
				(unsigned int)(BAR_WIDTH * g->used / g->size) : 0;

			printf("%-9s [", qgpu_segment_name(g->id));
			for (k = 0; k < BAR_WIDTH; k++)
				putchar(k < fill ? '#' : '.');
			printf("] %7.1f / %7.1f MiB  %5u allocations\n",
			       g->used / MiB, g->size / MiB, g->allocations);
		}
		printf("\npaging   to VRAM %8.1f MiB/s   from VRAM %8.1f MiB/s   within VRAM %8.1f MiB/s   filled %8.1f MiB/s\n",
		       RATE(bytes_to_vram) / MiB, RATE(bytes_from_vram) / MiB,
		       RATE(bytes_vram_to_vram) / MiB,
		       RATE(bytes_filled) / MiB);
		printf("per s    evictions %7.1f   paging buffers %7.1f   submissions %7.1f   split portions %7.1f\n",
		       RATE(evictions), RATE(paging_buffers),
		       RATE(submissions), RATE(split_portions));
		printf("total    faults %llu   resets %llu   allocations %llu (%.1f MiB)\n\n",
		       (unsigned long long)s->st.faults,
		       (unsigned long long)s->st.resets,
		       (unsigned long long)s->st.allocations,
		       s->st.allocated_bytes / MiB);
		printf("%7s %-16s %8s %6s %10s %10s %10s\n", "PID", "COMMAND",
		       "CLIENT", "BUSY%", "VRAM MiB", "GART MiB", "SYS MiB");
	}
	for (i = 0; i < s->ncl; i++) {
		const struct client *c = &s->cl[i], *o = prev_client(p, c->id);
		double busy = o && c->busy_ns >= o->busy_ns ?
			      100.0 * (c->busy_ns - o->busy_ns) / (dt * 1e9) : 0;

		if (batch)
			printf("top: pid=%d comm=%s client=%llu busy_pct=%.1f vram=%llu gart=%llu system=%llu\n",
			       c->pid, c->comm, c->id, busy, c->vram, c->gart,
			       c->sys);
		else
			printf("%7d %-16s %8llu %6.1f %10.1f %10.1f %10.1f\n",
			       c->pid, c->comm, c->id, busy, c->vram / MiB,
			       c->gart / MiB, c->sys / MiB);
	}
	fflush(stdout);
}

/* Sleep @ms, or less when q is typed (interactive). */
static void pause_ms(int ms, bool batch)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	char ch;

	if (batch || !isatty(0)) {
		usleep(ms * 1000);
		return;
	}
	if (poll(&pfd, 1, ms) > 0 && read(0, &ch, 1) == 1 &&
	    (ch == 'q' || ch == 'Q'))
		stop = 1;
}

int main(int argc, char **argv)
{
	struct sample *a = calloc(2, sizeof(*a));
	struct termios saved, raw;
	const char *node = NULL;
	bool batch = false, tty;
	int interval = 1000, count = -1, c, i, ret;
	char policy[64];
	struct qgpu_dev dev;

	while ((c = getopt(argc, argv, "d:i:bn:h")) != -1) {
		switch (c) {
		case 'd':
			node = optarg;
			break;
		case 'i':
			interval = atoi(optarg);
			break;
		case 'b':
			batch = true;
			break;
		case 'n':
			count = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-d NODE] [-i MS] [-b] [-n COUNT]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (interval < 10)
		interval = 10;
	if (count < 0 && batch)
		count = 5;
	if (!a)
		return 1;
	ret = node ? qgpu_open_path(&dev, node) :
		     qgpu_open(&dev, QGPU_NODE_RENDER);
	if (ret) {
		fprintf(stderr, "qgpu-top: no qgpu device: %s\n",
			strerror(-ret));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	tty = !batch && isatty(0);
	if (tty) {
		tcgetattr(0, &saved);
		raw = saved;
		raw.c_lflag &= ~(ICANON | ECHO);
		tcsetattr(0, TCSANOW, &raw);
	}
	ret = take(&dev, &a[0]);
	for (i = 1; !ret && !stop && (count < 0 || i <= count); i++) {
		struct sample *p = &a[(i - 1) & 1], *s = &a[i & 1];

		pause_ms(interval, batch);
		ret = take(&dev, s);
		if (ret)
			break;
		read_policy(policy, sizeof(policy));
		show(p, s, policy, batch);
	}
	if (tty)
		tcsetattr(0, TCSANOW, &saved);
	if (ret)
		fprintf(stderr, "qgpu-top: %s\n", strerror(-ret));
	qgpu_close(&dev);
	free(a);
	return ret ? 1 : 0;
}
