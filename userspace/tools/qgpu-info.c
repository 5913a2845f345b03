// SPDX-License-Identifier: MIT
/*
 * qgpu-info: print the device's identity (and the running kernel's
 * release), capabilities, segment
 * descriptors (two-call QUERYSEGMENT) and memory-manager counters.
 *
 * usage: qgpu-info [-d NODE] [-s] [-c CTX]
 *   -d NODE  open this DRM node (default: first qgpu render node)
 *   -s       counters only
 *   -f       this file's counters too (QGPU_QUERY_FILE_STATS)
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "libqgpu.h"

static void print_size(const char *name, unsigned long long v)
{
	if (v >= (1ull << 20) && !(v & ((1ull << 20) - 1)))
		printf("  %-22s %llu MiB (%llu bytes)\n", name, v >> 20, v);
	else
		printf("  %-22s %llu bytes\n", name, v);
}

static void print_info(const struct qgpu_dev *dev)
{
	const struct drm_qgpu_device_info *in = &dev->info;
	struct utsname u;
	char buf[256];
	unsigned int i;

	printf("device %s\n", dev->path);
	if (!uname(&u))
		printf("  %-22s %s %s\n", "kernel", u.sysname, u.release);
	printf("  %-22s %04x:%04x rev %02x\n", "pci id", in->vendor_id,
	       in->device_id, in->revision);
	printf("  %-22s %u.%u\n", "version", in->version >> 16,
	       in->version & 0xffff);
	printf("  %-22s 0x%x %s\n", "caps", in->caps,
	       qgpu_format_caps(in->caps, buf, sizeof(buf)));
	printf("  %-22s %u\n", "engines", in->num_engines);
	printf("  %-22s %u\n", "max slots", in->max_slots);
	printf("  %-22s %u\n", "max contexts", in->max_contexts);
	print_size("vram", in->vram_size);
	print_size("visible vram", in->visible_vram_size);
	print_size("gart", in->gart_size);
	print_size("host aperture", in->host_aperture_size);
	printf("  %-22s %u (%s)\n", "paging buffer segment",
	       in->paging_buffer_segment,
	       qgpu_segment_name(in->paging_buffer_segment));
	print_size("paging buffer size", in->paging_buffer_size);
	printf("segments (%u)\n", dev->nsegs);
	for (i = 0; i < dev->nsegs; i++) {
		const struct drm_qgpu_segment *s = &dev->segs[i];

		printf("  [%u] %-13s base 0x%012llx size %8llu KiB reserved %6llu KiB bar-offset 0x%llx\n",
		       s->id, qgpu_segment_name(s->id),
		       (unsigned long long)s->base,
		       (unsigned long long)s->size >> 10,
		       (unsigned long long)s->reserved_size >> 10,
		       (unsigned long long)s->cpu_bar_offset);
		printf("      flags 0x%x %s\n", s->flags,
		       qgpu_format_segment_flags(s->flags, buf, sizeof(buf)));
	}
}

static int print_stats(int fd, bool file)
{
	struct drm_qgpu_segment_stats seg[8];
	struct drm_qgpu_stats st;
	unsigned int n = 0, i;
	const __u64 *v = (const __u64 *)&st;
	int ret;

	ret = qgpu_query_stats(fd, &st, seg, 8, &n);
	if (ret) {
		fprintf(stderr, "qgpu-info: stats query: %s\n", strerror(-ret));
		return 1;
	}
	printf("segment usage\n");
	for (i = 0; i < n && i < 8; i++)
		printf("  [%u] %-13s %8llu / %8llu KiB used, %u allocations\n",
		       seg[i].id, qgpu_segment_name(seg[i].id),
		       (unsigned long long)seg[i].used >> 10,
		       (unsigned long long)seg[i].size >> 10,
		       seg[i].allocations);
	printf("counters\n");
	for (i = 0; i < QGPU_NUM_STATS; i++)
		printf("  %-22s %llu\n", qgpu_stat_name(i),
		       (unsigned long long)v[i]);
	if (file) {
		ret = qgpu_query_file_stats(fd, &st);
		if (ret) {
			fprintf(stderr, "qgpu-info: file stats: %s\n",
				strerror(-ret));
			return 1;
		}
		printf("this file's counters\n");
		for (i = 0; i < QGPU_NUM_STATS; i++)
			printf("  %-22s %llu\n", qgpu_stat_name(i),
			       (unsigned long long)v[i]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *node = NULL;
	bool stats_only = false, file = false;
	struct qgpu_dev dev;
	int c, ret;

	while ((c = getopt(argc, argv, "d:sfh")) != -1) {
		switch (c) {
		case 'd':
			node = optarg;
			break;
		case 's':
			stats_only = true;
			break;
		case 'f':
			file = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-d NODE] [-s] [-f]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	ret = node ? qgpu_open_path(&dev, node) :
		     qgpu_open(&dev, QGPU_NODE_RENDER);
	if (ret) {
		fprintf(stderr, "qgpu-info: cannot open a qgpu device%s%s: %s\n",
			node ? " at " : "", node ? node : "", strerror(-ret));
		return 1;
	}
	if (!stats_only)
		print_info(&dev);
	ret = print_stats(dev.fd, file);
	qgpu_close(&dev);
	return ret;
}
