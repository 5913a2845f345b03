// SPDX-License-Identifier: MIT
/*
 * qgpu-info: print the device's identity (and the running kernel's
 * release), capabilities, segment
 * descriptors (two-call QUERYSEGMENT), the GPU MMU's capabilities and
 * counters with this process's GPU virtual address space (layout and page
 * tables), and the memory-manager counters.
 *
 * usage: qgpu-info [-d NODE] [-s] [-f] [-m SIZE]
 *   -d NODE  open this DRM node (default: first qgpu render node)
 *   -s       counters only
 *   -f       this file's counters too (QGPU_QUERY_FILE_STATS)
 *   -m SIZE  first map an allocation of SIZE into this process's address
 *            space and make it resident, so that the layout shows something
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "libqgpu.h"

#define SZ_64K	0x10000ull

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

/* Reserve, map and make resident an allocation of @size: an example layout */
static int map_example(int fd, uint64_t size)
{
	uint64_t va, fence;
	uint32_t h;
	int ret;

	size = (size + SZ_64K - 1) & ~(SZ_64K - 1);
	ret = qgpu_bo_create(fd, size, QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			     QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0, &h);
	if (!ret)
		ret = qgpu_vm_reserve(fd, 0, size, 0, &va);
	if (!ret)
		ret = qgpu_vm_map(fd, h, va, 0, size, 0);
	if (!ret)
		ret = qgpu_make_resident(fd, &h, 1, &fence);
	if (!ret)
		ret = qgpu_paging_fence_wait(fd, fence, 10ll * 1000000000);
	if (ret)
		fprintf(stderr, "qgpu-info: example mapping: %s\n",
			strerror(-ret));
	return ret;
}

static void print_vm(int fd)
{
	struct drm_qgpu_vm_layout_entry *e;
	struct drm_qgpu_vm_info vm;
	unsigned int n, i;
	int ret;

	ret = qgpu_query_vm_info(fd, &vm);
	if (ret) {
		fprintf(stderr, "qgpu-info: vm info: %s\n", strerror(-ret));
		return;
	}
	printf("this process's GPU address space\n");
	printf("  %-22s %#llx\n", "root page table",
	       (unsigned long long)vm.root);
	printf("  %-22s %llu (%llu KiB of VRAM)\n", "page tables",
	       (unsigned long long)vm.page_tables,
	       (unsigned long long)vm.page_table_bytes >> 10);
	printf("  %-22s %llu KiB\n", "reserved",
	       (unsigned long long)vm.reserved_bytes >> 10);
	printf("  %-22s %llu KiB\n", "mapped",
	       (unsigned long long)vm.mapped_bytes >> 10);
	printf("  %-22s syncobj %u, last value %llu\n", "paging fence",
	       vm.paging_fence_syncobj, (unsigned long long)vm.paging_fence);
	ret = qgpu_query_vm_layout(fd, &e, &n);
	if (ret) {
		fprintf(stderr, "qgpu-info: vm layout: %s\n", strerror(-ret));
		return;
	}
	printf("  layout (%u ranges)%s\n", n, n ? "" : ": nothing reserved");
	for (i = 0; i < n; i++) {
		if (e[i].kind == QGPU_VM_LAYOUT_MAPPING)
			printf("    %#012llx-%#012llx   mapping  offset %#llx %s in %s\n",
			       (unsigned long long)e[i].start,
			       (unsigned long long)(e[i].start + e[i].size),
			       (unsigned long long)e[i].offset,
			       e[i].flags & QGPU_VM_MAP_READ_ONLY ? "ro" : "rw",
			       qgpu_segment_name(e[i].segment));
		else
			printf("  %#012llx-%#012llx %s\n",
			       (unsigned long long)e[i].start,
			       (unsigned long long)(e[i].start + e[i].size),
			       qgpu_vm_layout_kind_name(e[i].kind));
	}
	free(e);
}

/* The MMU's capabilities and counters (QGPU_QUERY_MMU), then our VM. */
static int print_mmu(const struct qgpu_dev *dev, uint64_t example)
{
	struct drm_qgpu_mmu_info m;
	char sizes[64] = "";
	unsigned int i;
	int ret;

	if (!qgpu_dev_has_mmu(dev)) {
		printf("gpu mmu: none (no QGPU_INFO_CAP_MMU): physical addressing only\n");
		return 0;
	}
	ret = qgpu_query_mmu(dev->fd, &m);
	if (ret == -EINVAL || ret == -ENODEV) {
		/* a kernel older than the device: no QGPU_QUERY_MMU */
		printf("gpu mmu: the device has one, the driver does not use it (%s)\n",
		       strerror(-ret));
		return 0;
	}
	if (ret) {
		fprintf(stderr, "qgpu-info: mmu query: %s\n", strerror(-ret));
		return 1;
	}
	for (i = 0; i < 32; i++)
		if (m.page_sizes & (1u << i))
			snprintf(sizes + strlen(sizes),
				 sizeof(sizes) - strlen(sizes), "%s%u KiB",
				 sizes[0] ? ", " : "", 4u << i);
	printf("gpu mmu\n");
	printf("  %-22s %u\n", "va bits", m.va_bits);
	printf("  %-22s %u\n", "levels", m.levels);
	printf("  %-22s %s\n", "page sizes", sizes);
	printf("  %-22s %u bytes\n", "pte size", m.pte_size);
	printf("  %-22s %u per engine\n", "tlb entries", m.tlb_entries);
	printf("  %-22s %#llx-%#llx (%llu GiB)\n", "process va range",
	       (unsigned long long)m.va_start, (unsigned long long)m.va_end,
	       (unsigned long long)(m.va_end - m.va_start) >> 30);
	printf("  %-22s %llu (%llu KiB of VRAM)\n", "page tables",
	       (unsigned long long)m.page_tables,
	       (unsigned long long)m.page_table_bytes >> 10);
	printf("  %-22s %llu\n", "pte_writes", (unsigned long long)m.pte_writes);
	printf("  %-22s %llu\n", "update_pt_cmds",
	       (unsigned long long)m.update_pt_cmds);
	printf("  %-22s %llu\n", "tlb_flushes",
	       (unsigned long long)m.tlb_flushes);
	printf("  %-22s %llu\n", "transfer_virtual_bytes",
	       (unsigned long long)m.transfer_virtual_bytes);
	printf("  %-22s %llu\n", "fill_virtual_bytes",
	       (unsigned long long)m.fill_virtual_bytes);
	printf("  %-22s %llu\n", "make_resident_calls",
	       (unsigned long long)m.make_resident_calls);
	if (example && map_example(dev->fd, example))
		return 1;
	print_vm(dev->fd);
	return 0;
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
	int64_t example = 0;
	struct qgpu_dev dev;
	int c, ret, fail = 0;

	while ((c = getopt(argc, argv, "d:sfm:h")) != -1) {
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
		case 'm':
			example = qgpu_parse_size(optarg);
			if (example <= 0) {
				fprintf(stderr, "qgpu-info: bad size %s\n",
					optarg);
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: %s [-d NODE] [-s] [-f] [-m SIZE]\n",
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
	if (!stats_only) {
		print_info(&dev);
		fail |= print_mmu(&dev, (uint64_t)example);
	}
	fail |= print_stats(dev.fd, file);
	qgpu_close(&dev);
	return fail;
}
