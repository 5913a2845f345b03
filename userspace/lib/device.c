// SPDX-License-Identifier: MIT
/*
 * libqgpu: opening the device, queries and printable names.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qgpu_priv.h"

/* Is @fd a node of DRM driver @driver? */
static bool qgpu_fd_is_driver(int fd, const char *driver)
{
	drmVersionPtr v = drmGetVersion(fd);
	bool ok;

	if (!v)
		return false;
	ok = v->name && !strcmp(v->name, driver);
	drmFreeVersion(v);
	return ok;
}

bool qgpu_is_qgpu_fd(int fd)
{
	return qgpu_fd_is_driver(fd, "qgpu");
}

static int qgpu_node_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int qgpu_find_driver_node(const char *driver, enum qgpu_node node,
			  unsigned int index, char *path, size_t len)
{
	const char *prefix = node == QGPU_NODE_RENDER ? "renderD" : "card";
	size_t plen = strlen(prefix);
	int nums[256], n = 0, i;
	struct dirent *de;
	DIR *d;

	d = opendir("/dev/dri");
	if (!d)
		return -ENODEV;
	while ((de = readdir(d)) && n < 256) {
		char *end;
		long v;

		if (strncmp(de->d_name, prefix, plen))
			continue;
		v = strtol(de->d_name + plen, &end, 10);
		if (end == de->d_name + plen || *end || v < 0)
			continue;
		nums[n++] = (int)v;
	}
	closedir(d);
	qsort(nums, n, sizeof(nums[0]), qgpu_node_cmp);
	for (i = 0; i < n; i++) {
		char p[64];
		int fd;

		snprintf(p, sizeof(p), "/dev/dri/%s%d", prefix, nums[i]);
		fd = open(p, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (qgpu_fd_is_driver(fd, driver)) {
			if (index == 0) {
				close(fd);
				snprintf(path, len, "%s", p);
				return 0;
			}
			index--;
		}
		close(fd);
	}
	errno = ENODEV;
	return -ENODEV;
}

int qgpu_find_node(enum qgpu_node node, unsigned int index, char *path,
		   size_t len)
{
	return qgpu_find_driver_node("qgpu", node, index, path, len);
}

int qgpu_dev_from_fd(struct qgpu_dev *dev, int fd)
{
	struct drm_qgpu_segment *segs = NULL;
	unsigned int n = 0, i;
	int ret;

	memset(dev, 0, sizeof(*dev));
	dev->fd = fd;
	if (!qgpu_is_qgpu_fd(fd)) {
		errno = ENODEV;
		return -ENODEV;
	}
	ret = qgpu_query_device(fd, &dev->info);
	if (ret)
		return ret;
	ret = qgpu_query_segments(fd, &segs, &n);
	if (ret)
		return ret;
	for (i = 0; i < n && i < QGPU_SEG_MAX; i++)
		dev->segs[i] = segs[i];
	dev->nsegs = i;
	free(segs);
	return 0;
}

int qgpu_open_path(struct qgpu_dev *dev, const char *path)
{
	int fd, ret;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = qgpu_dev_from_fd(dev, fd);
	if (ret) {
		close(fd);
		dev->fd = -1;
		errno = -ret;
		return ret;
	}
	snprintf(dev->path, sizeof(dev->path), "%s", path);
	return 0;
}

int qgpu_open(struct qgpu_dev *dev, enum qgpu_node node)
{
	const char *env = getenv("QGPU_DEVICE");
	char path[64];
	int ret;

	if (env && *env)
		return qgpu_open_path(dev, env);
	ret = qgpu_find_node(node, 0, path, sizeof(path));
	if (ret) {
		memset(dev, 0, sizeof(*dev));
		dev->fd = -1;
		return ret;
	}
	return qgpu_open_path(dev, path);
}

void qgpu_close(struct qgpu_dev *dev)
{
	if (dev->fd >= 0)
		close(dev->fd);
	dev->fd = -1;
}

const struct drm_qgpu_segment *qgpu_dev_segment(const struct qgpu_dev *dev,
						uint32_t id)
{
	unsigned int i;

	for (i = 0; i < dev->nsegs; i++)
		if (dev->segs[i].id == id)
			return &dev->segs[i];
	return NULL;
}

uint64_t qgpu_vram_usable(const struct qgpu_dev *dev)
{
	uint64_t total = 0;
	unsigned int i;

	for (i = 0; i < dev->nsegs; i++)
		if (dev->segs[i].id == QGPU_SEG_VISIBLE ||
		    dev->segs[i].id == QGPU_SEG_LOCAL)
			total += dev->segs[i].size - dev->segs[i].reserved_size;
	return total;
}

/* ------------------------------------------------------------------------ */

int qgpu_query(int fd, uint32_t type, uint32_t arg, void *buf,
	       uint32_t *size, uint32_t *count)
{
	struct drm_qgpu_query q = {
		.type = type,
		.arg = arg,
		.size = buf ? *size : 0,
		.ptr = (uintptr_t)buf,
	};
	int ret = qgpu_ioctl(fd, DRM_IOCTL_QGPU_QUERY, &q);

	if (!ret || ret == -ENOSPC) {
		*size = q.size;
		if (count)
			*count = q.count;
	}
	return ret;
}

int qgpu_query_device(int fd, struct drm_qgpu_device_info *info)
{
	uint32_t size = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return qgpu_query(fd, QGPU_QUERY_DEVICE, 0, info, &size, NULL);
}

int qgpu_ping(int fd, uint64_t *seqno)
{
	struct drm_qgpu_ping a = { 0 };
	int ret = qgpu_ioctl(fd, DRM_IOCTL_QGPU_PING, &a);

	if (!ret && seqno)
		*seqno = a.seqno;
	return ret;
}

/*
 * An array answer of query @type, the two-call pattern: size it, then fetch
 * it into a malloc'ed buffer; the answer may grow between the two calls
 * (try again then).
 */
int qgpu_query_array(int fd, uint32_t type, void **out, unsigned int *count)
{
	uint32_t size = 0, n = 0;
	void *buf;
	int ret, tries;

	*out = NULL;
	*count = 0;
	for (tries = 0; tries < 4; tries++) {
		ret = qgpu_query(fd, type, 0, NULL, &size, &n);
		if (ret)
			return ret;
		buf = calloc(1, size ? size : 1);
		if (!buf)
			return -ENOMEM;
		ret = qgpu_query(fd, type, 0, buf, &size, &n);
		if (!ret) {
			*out = buf;
			*count = n;
			return 0;
		}
		free(buf);
		if (ret != -ENOSPC)
			return ret;
	}
	return -ENOSPC;
}

int qgpu_query_segments(int fd, struct drm_qgpu_segment **segs,
			unsigned int *count)
{
	return qgpu_query_array(fd, QGPU_QUERY_SEGMENTS, (void **)segs, count);
}

int qgpu_query_stats(int fd, struct drm_qgpu_stats *st,
		     struct drm_qgpu_segment_stats *seg, unsigned int max,
		     unsigned int *nseg)
{
	uint32_t size = 0, n = 0;
	unsigned char *buf;
	int ret;

	ret = qgpu_query(fd, QGPU_QUERY_STATS, 0, NULL, &size, &n);
	if (ret)
		return ret;
	if (size < sizeof(*st))
		return -EPROTO;
	buf = calloc(1, size);
	if (!buf)
		return -ENOMEM;
	ret = qgpu_query(fd, QGPU_QUERY_STATS, 0, buf, &size, &n);
	if (!ret) {
		unsigned int avail = (size - sizeof(*st)) / sizeof(*seg);
		size_t at;

		if (n > avail)
			n = avail;
		/* the segment array ends the answer (the counters may grow) */
		at = size - n * sizeof(*seg);
		memcpy(st, buf, sizeof(*st));
		if (seg && max)
			memcpy(seg, buf + at,
			       (n < max ? n : max) * sizeof(*seg));
		if (nseg)
			*nseg = n;
	}
	free(buf);
	return ret;
}

int qgpu_query_file_stats(int fd, struct drm_qgpu_stats *st)
{
	uint32_t size = sizeof(*st);

	memset(st, 0, sizeof(*st));
	return qgpu_query(fd, QGPU_QUERY_FILE_STATS, 0, st, &size, NULL);
}

int qgpu_query_vidmem(int fd, uint32_t group,
		      struct drm_qgpu_vidmem_info *info)
{
	struct drm_qgpu_vidmem_info all[2];
	uint32_t size = sizeof(all), n = 0;
	int ret;

	memset(info, 0, sizeof(*info));
	ret = qgpu_query(fd, QGPU_QUERY_VIDMEM_INFO, 0, all, &size, &n);
	if (ret)
		return ret;
	if (group >= n)
		return -EINVAL;
	*info = all[group];
	return 0;
}

int qgpu_query_context(int fd, uint32_t ctx,
		       struct drm_qgpu_context_status *st)
{
	uint32_t size = sizeof(*st);

	memset(st, 0, sizeof(*st));
	return qgpu_query(fd, QGPU_QUERY_CONTEXT, ctx, st, &size, NULL);
}

/* ------------------------------------------------------------------------ */

const char *qgpu_segment_name(uint32_t id)
{
	switch (id) {
	case QGPU_SEG_SYSTEM:
		return "system";
	case QGPU_SEG_VISIBLE:
		return "vram-visible";
	case QGPU_SEG_LOCAL:
		return "vram-local";
	case QGPU_SEG_APERTURE:
		return "aperture";
	default:
		return "?";
	}
}

const char *qgpu_fault_name(uint32_t reason)
{
	if (reason == QGPU_FAULT_ENGINE_MMIO)
		return "mmio";
	return qgpu_fault_reason_name(reason);
}

const char *qgpu_ctx_state_name(uint32_t state)
{
	switch (state) {
	case QGPU_CTX_OK:
		return "ok";
	case QGPU_CTX_LOST_HANG:
		return "lost-hang";
	case QGPU_CTX_LOST_FAULT:
		return "lost-fault";
	case QGPU_CTX_LOST_DEVICE:
		return "lost-device";
	default:
		return "?";
	}
}

const char *qgpu_cpu_path_name(uint32_t path)
{
	switch (path) {
	case QGPU_CPU_PATH_NONE:
		return "none";
	case QGPU_CPU_PATH_BAR:
		return "bar2";
	case QGPU_CPU_PATH_HAP:
		return "host-aperture";
	case QGPU_CPU_PATH_SYSTEM:
		return "system";
	default:
		return "?";
	}
}

const char *qgpu_stat_name(unsigned int index)
{
	static const char *const names[] = {
		"allocations", "allocated_bytes", "bytes_to_vram",
		"bytes_from_vram", "bytes_vram_to_vram", "bytes_filled",
		"evictions", "aperture_maps", "aperture_unmaps", "hap_maps",
		"hap_unmaps", "paging_buffers", "submissions",
		"split_portions", "faults", "resets", "cache_invalidations",
		"cache_invalidated_bytes", "offer_discards",
		"offer_discarded_bytes", "migrations_back",
		"migrated_back_bytes", "vram_discards", "vram_discarded_bytes",
		"vram_committed", "device_lost",
	};
	_Static_assert(sizeof(names) / sizeof(names[0]) == QGPU_NUM_STATS,
		       "stat names out of step with struct drm_qgpu_stats");

	return index < QGPU_NUM_STATS ? names[index] : "?";
}

static char *qgpu_format_bits(uint32_t v, const char *const *names,
			      unsigned int n, char *buf, size_t len)
{
	size_t used = 0;
	unsigned int i;

	if (!len)
		return buf;
	buf[0] = 0;
	for (i = 0; i < 32; i++) {
		char unk[16];
		const char *s;
		int w;

		if (!(v & (1u << i)))
			continue;
		s = i < n && names[i] ? names[i] : NULL;
		if (!s) {
			snprintf(unk, sizeof(unk), "bit%u", i);
			s = unk;
		}
		w = snprintf(buf + used, len - used, "%s%s", used ? "|" : "",
			     s);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += w;
	}
	if (!used)
		snprintf(buf, len, "-");
	return buf;
}

char *qgpu_format_segment_flags(uint32_t flags, char *buf, size_t len)
{
	static const char *const names[] = {
		"APERTURE", "CPU_VISIBLE", "CACHE_COHERENT", "USE_BANKING",
		"CPU_HOST_APERTURE", "POPULATED_FROM_SYSTEM", "PAGING_BUFFER",
	};

	return qgpu_format_bits(flags, names, sizeof(names) / sizeof(names[0]),
				buf, len);
}

char *qgpu_format_caps(uint32_t caps, char *buf, size_t len)
{
	static const char *const names[] = {
		"FENCE", "GART", "HOST_APERTURE", "PAGING", "RENDER",
		"CTX_SAVE", "FAULT_QUEUE", "MMU", "TILING", "IO_COHERENT",
		"PING", "VRAM_COMMITTED",
	};

	return qgpu_format_bits(caps, names, sizeof(names) / sizeof(names[0]),
				buf, len);
}
