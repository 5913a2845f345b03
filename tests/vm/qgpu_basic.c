// SPDX-License-Identifier: MIT
/*
 * qgpu_basic: device identity and queries, dumb buffers, DRM nodes and
 * authentication, contexts.
 *
 * Arguments: the device properties the VM was booted with, as key=value
 * (see tests/vm/qgpu_test.h), e.g.
 *	qgpu_basic vram-size=96M visible-vram-size=32M host-aperture-size=16M
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "qgpu_test.h"

static struct qgpu_dev dev;
static struct qt_props props;

static int query(int fd, uint32_t type, uint32_t arg, uint64_t ptr,
		 uint32_t *size, uint32_t *count)
{
	struct drm_qgpu_query q = {
		.type = type, .arg = arg, .size = *size, .ptr = ptr,
	};
	int ret = igt_ioctl(fd, DRM_IOCTL_QGPU_QUERY, &q);

	*size = q.size;
	if (count)
		*count = q.count;
	return ret;
}

/* Child of the primary-node test: returns a bit set of failed checks. */
static int unauth_child(int master_fd, const char *card)
{
	struct drm_qgpu_device_info info;
	struct drm_qgpu_ctx_create cc = { 0 };
	struct drm_qgpu_gem_create gc = {
		.size = 4096, .segment_mask = QGPU_SEGBIT(QGPU_SEG_APERTURE),
	};
	drm_magic_t magic = 0;
	int fd, bad = 0;

	if (qt_drop_sys_admin()) {
		printf("child: cannot drop CAP_SYS_ADMIN\n");
		return 0x100;
	}
	fd = open(card, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0x200;
	/* not master, not authenticated: every qgpu ioctl is DRM_AUTH */
	if (qgpu_query_device(fd, &info) != -EACCES) {
		printf("child: QUERY on unauthenticated primary fd did not fail with EACCES\n");
		bad |= 1;
	}
	if (igt_ioctl(fd, DRM_IOCTL_QGPU_GEM_CREATE, &gc) != -EACCES) {
		printf("child: GEM_CREATE on unauthenticated primary fd did not fail with EACCES\n");
		bad |= 2;
	}
	if (igt_ioctl(fd, DRM_IOCTL_QGPU_CTX_CREATE, &cc) != -EACCES) {
		printf("child: CTX_CREATE on unauthenticated primary fd did not fail with EACCES\n");
		bad |= 4;
	}
	/* the master authenticates it (DRM's GetMagic/AuthMagic) */
	if (drmGetMagic(fd, &magic) || drmAuthMagic(master_fd, magic)) {
		printf("child: GetMagic/AuthMagic failed: %s\n", strerror(errno));
		bad |= 8;
	} else if (qgpu_query_device(fd, &info) ||
		   info.device_id != QGPU_PCI_DEVICE_ID) {
		printf("child: QUERY after authentication failed\n");
		bad |= 16;
	}
	close(fd);
	/* a render node needs no authentication at all */
	fd = open(dev.path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || qgpu_query_device(fd, &info)) {
		printf("child: render node unusable without CAP_SYS_ADMIN\n");
		bad |= 32;
	}
	if (fd >= 0)
		close(fd);
	return bad;
}

/*
 * Context ids are counted per user: user 65534, with two files, gets a
 * quarter of the device's contexts (at least one) and then ENOSPC from
 * either file, while root (CAP_SYS_ADMIN files are not counted) still
 * gets one; destroying one of the user's gives the user one back.
 */
static int ctx_user_child(uint32_t share)
{
	uint32_t c, n = 0;
	int a, b, ret;

	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 10;
	a = open(dev.path, O_RDWR | O_CLOEXEC);
	b = open(dev.path, O_RDWR | O_CLOEXEC);
	if (a < 0 || b < 0)
		return 11;
	while (n <= share) {
		ret = qgpu_ctx_create(n % 2 ? b : a, &c);
		if (ret == -ENOSPC)
			break;
		if (ret)
			return 12;
		n++;
	}
	if (n != share)
		return 13;
	if (qgpu_ctx_create(a, &c) != -ENOSPC ||
	    qgpu_ctx_create(b, &c) != -ENOSPC)
		return 14;
	/* one of the user's freed: one more for the user (ids go in turn) */
	close(b);
	for (n = 0; n < 200; n++) {
		ret = qgpu_ctx_create(a, &c);
		if (ret != -ENOSPC)
			break;
		usleep(50000);
	}
	if (ret)
		return 15;
	close(a);
	return 0;
}

static void ctx_ids_capped_per_user(void)
{
	uint32_t share = (dev.info.max_contexts - 1) / 4, c;
	struct stat node;
	pid_t pid;
	int st;

	if (!share)
		share = 1;
	igt_require(geteuid() == 0);
	igt_assert_eq(stat(dev.path, &node), 0);
	igt_assert_eq(chmod(dev.path, 0666), 0);
	fflush(stdout);
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0)
		_exit(ctx_user_child(share));
	st = qt_wait_child(pid);
	chmod(dev.path, node.st_mode & 07777);
	igt_assert_f(st == 0, "user 65534's child: status %d\n", st);
	/* root is not counted */
	igt_assert_eq(qgpu_ctx_create(dev.fd, &c), 0);
	igt_assert_eq(qgpu_ctx_destroy(dev.fd, c), 0);
}

igt_main
{
	igt_fixture {
		qt_props_read(&props);
		qt_open(&dev, QGPU_NODE_RENDER);
	}

	igt_subtest("query-device") {
		struct drm_qgpu_device_info in;
		uint32_t want_caps = QGPU_INFO_CAP_FENCE | QGPU_INFO_CAP_GART |
				     QGPU_INFO_CAP_PAGING | QGPU_INFO_CAP_RENDER;
		const struct drm_qgpu_segment *pb;

		igt_assert_eq(qgpu_query_device(dev.fd, &in), 0);
		igt_assert_eq(in.vendor_id, 0x1234);
		igt_assert_eq(in.device_id, 0x5147);
		igt_assert_eq(in.revision, QGPU_PCI_REVISION);
		igt_assert_eq(in.version >> 16, QGPU_VERSION_MAJOR);
		igt_assert_eq(in.caps & want_caps, want_caps);
		igt_assert_eq(!!(in.caps & QGPU_INFO_CAP_HOST_APERTURE),
			      !!props.hap);
		igt_assert_eq(in.num_engines, 2);
		igt_assert_eq(in.pad, 0);
		if (!props.given)
			igt_info("no device properties given: checking against the device defaults\n");
		igt_assert_eq_u64(in.vram_size, props.vram);
		igt_assert_eq_u64(in.visible_vram_size, props.visible);
		igt_assert_eq_u64(in.gart_size, props.gart);
		igt_assert_eq_u64(in.host_aperture_size, props.hap);
		igt_assert_eq(in.max_slots, props.slots);
		igt_assert_eq(in.max_contexts, props.contexts);
		igt_assert_eq(in.num_segments,
			      2 + (props.vram > props.visible));
		/* PagingBufferSegmentId names a segment that holds it */
		pb = qgpu_dev_segment(&dev, in.paging_buffer_segment);
		igt_assert(pb);
		igt_assert(pb->flags & QGPU_SEGF_PAGING_BUFFER);
		igt_assert_lt(0, in.paging_buffer_size);
		igt_assert_lte_u64(in.paging_buffer_size, pb->reserved_size);
	}

	igt_subtest("query-segments") {
		struct drm_qgpu_segment segs[8];
		uint32_t size = 0, count = 0, i;
		const struct drm_qgpu_segment *s;

		/* first call: count and size only */
		igt_assert_eq(query(dev.fd, QGPU_QUERY_SEGMENTS, 0, 0, &size,
				    &count), 0);
		igt_assert_eq(count, dev.info.num_segments);
		igt_assert_eq(size, count * sizeof(struct drm_qgpu_segment));
		igt_assert_lte(count, 8);
		memset(segs, 0xa5, sizeof(segs));
		igt_assert_eq(query(dev.fd, QGPU_QUERY_SEGMENTS, 0,
				    (uintptr_t)segs, &size, &count), 0);
		for (i = 0; i + 1 < count; i++)
			igt_assert_lt(segs[i].id, segs[i + 1].id);
		/* nothing written past the answer */
		igt_assert_eq(((uint8_t *)segs)[size], 0xa5);

		s = qgpu_dev_segment(&dev, QGPU_SEG_VISIBLE);
		igt_assert(s);
		igt_assert_eq_u64(s->base, 0);
		igt_assert_eq_u64(s->size, props.visible);
		igt_assert(s->flags & QGPU_SEGF_CPU_VISIBLE);
		igt_assert(!(s->flags & QGPU_SEGF_APERTURE));
		igt_assert_eq_u64(s->cpu_bar_offset, 0);

		s = qgpu_dev_segment(&dev, QGPU_SEG_LOCAL);
		if (props.vram > props.visible) {
			igt_assert(s);
			igt_assert_eq_u64(s->base, props.visible);
			igt_assert_eq_u64(s->size, props.vram - props.visible);
			igt_assert(!(s->flags & QGPU_SEGF_CPU_VISIBLE));
			igt_assert_eq(!!(s->flags & QGPU_SEGF_CPU_HOST_APERTURE),
				      !!props.hap);
		} else {
			igt_assert(!s);
		}

		s = qgpu_dev_segment(&dev, QGPU_SEG_APERTURE);
		igt_assert(s);
		igt_assert_eq_u64(s->base, QGPU_GART_BASE);
		igt_assert_eq_u64(s->size, props.gart);
		igt_assert(s->flags & QGPU_SEGF_APERTURE);
		igt_assert(s->flags & QGPU_SEGF_POPULATED_FROM_SYS);
		igt_assert(!(s->flags & QGPU_SEGF_USE_BANKING));
	}

	igt_subtest("query-stats") {
		uint32_t size = 0, count = 0, i;
		unsigned char buf[4096];
		struct drm_qgpu_segment_stats *ss;

		igt_assert_eq(query(dev.fd, QGPU_QUERY_STATS, 0, 0, &size,
				    &count), 0);
		igt_assert_eq(count, dev.info.num_segments);
		igt_assert_eq(size, sizeof(struct drm_qgpu_stats) +
			      count * sizeof(struct drm_qgpu_segment_stats));
		igt_assert_eq(query(dev.fd, QGPU_QUERY_STATS, 0,
				    (uintptr_t)buf, &size, &count), 0);
		ss = (void *)(buf + sizeof(struct drm_qgpu_stats));
		for (i = 0; i < count; i++) {
			const struct drm_qgpu_segment *s =
				qgpu_dev_segment(&dev, ss[i].id);

			igt_assert(s);
			igt_assert_eq_u64(ss[i].size, s->size);
			igt_assert_lte_u64(s->reserved_size, ss[i].used);
			igt_assert_lte_u64(ss[i].used, ss[i].size);
		}
		size = sizeof(struct drm_qgpu_stats);
		igt_assert_eq(query(dev.fd, QGPU_QUERY_FILE_STATS, 0,
				    (uintptr_t)buf, &size, &count), 0);
		igt_assert_eq(count, 1);
		igt_assert_eq(size, sizeof(struct drm_qgpu_stats));
	}

	igt_subtest("query-bad-type") {
		/* 1..QGPU_QUERY_VIDMEM_INFO (9) exist */
		uint32_t bad[] = { 0, 10, 11, 0x100, 0xffffffffu }, i, size;
		struct drm_qgpu_device_info in;

		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			size = sizeof(in);
			igt_assert_eq(query(dev.fd, bad[i], 0, (uintptr_t)&in,
					    &size, NULL), -EINVAL);
			size = 0;
			igt_assert_eq(query(dev.fd, bad[i], 0, 0, &size, NULL),
				      -EINVAL);
		}
	}

	igt_subtest("query-bad-arg") {
		struct drm_qgpu_device_info in;
		struct drm_qgpu_context_status cs;
		uint32_t types[] = { QGPU_QUERY_DEVICE, QGPU_QUERY_SEGMENTS,
				     QGPU_QUERY_STATS, QGPU_QUERY_FILE_STATS };
		unsigned char buf[4096];
		uint32_t i, size;

		for (i = 0; i < ARRAY_SIZE(types); i++) {
			size = sizeof(buf);
			igt_assert_eq(query(dev.fd, types[i], 1,
					    (uintptr_t)buf, &size, NULL),
				      -EINVAL);
			size = 0;
			igt_assert_eq(query(dev.fd, types[i], 0xffffffffu, 0,
					    &size, NULL), -EINVAL);
		}
		/* a context id that is not one of ours */
		size = sizeof(cs);
		igt_assert_eq(query(dev.fd, QGPU_QUERY_CONTEXT, 0,
				    (uintptr_t)&cs, &size, NULL), -ENOENT);
		size = sizeof(cs);
		igt_assert_eq(query(dev.fd, QGPU_QUERY_CONTEXT, 4000,
				    (uintptr_t)&cs, &size, NULL), -ENOENT);
		/* the size call too */
		size = 0;
		igt_assert_eq(query(dev.fd, QGPU_QUERY_CONTEXT, 0, 0, &size,
				    NULL), -ENOENT);
		size = 0;
		igt_assert_eq(query(dev.fd, QGPU_QUERY_CONTEXT, 4000, 0, &size,
				    NULL), -ENOENT);
		(void)in;
	}

	igt_subtest("query-size-too-small") {
		struct drm_qgpu_device_info in;
		unsigned char buf[4096];
		uint32_t need = 0, size, i, count;
		uint32_t types[] = { QGPU_QUERY_DEVICE, QGPU_QUERY_SEGMENTS,
				     QGPU_QUERY_STATS, QGPU_QUERY_FILE_STATS };

		for (i = 0; i < ARRAY_SIZE(types); i++) {
			need = 0;
			igt_assert_eq(query(dev.fd, types[i], 0, 0, &need,
					    NULL), 0);
			igt_assert_lt(0, need);
			/* too small by one byte, and zero: ENOSPC, nothing
			 * copied, the needed size reported */
			memset(buf, 0x5a, sizeof(buf));
			size = need - 1;
			igt_assert_eq(query(dev.fd, types[i], 0,
					    (uintptr_t)buf, &size, &count),
				      -ENOSPC);
			igt_assert_eq(size, need);
			size = 0;
			igt_assert_eq(query(dev.fd, types[i], 0,
					    (uintptr_t)buf, &size, &count),
				      -ENOSPC);
			igt_assert_eq(size, need);
			for (size = 0; size < sizeof(buf); size++)
				igt_assert_eq(buf[size], 0x5a);
			/* larger than needed is fine; reports what it used */
			size = sizeof(buf);
			igt_assert_eq(query(dev.fd, types[i], 0,
					    (uintptr_t)buf, &size, &count), 0);
			igt_assert_eq(size, need);
			igt_assert_eq(buf[need], 0x5a);
		}
		(void)in;
	}

	igt_subtest("query-bad-pointer") {
		uint32_t size = 4096;

		igt_assert_eq(query(dev.fd, QGPU_QUERY_DEVICE, 0, 16, &size,
				    NULL), -EFAULT);
		size = 4096;
		igt_assert_eq(query(dev.fd, QGPU_QUERY_SEGMENTS, 0,
				    0xffff800000000000ull, &size, NULL),
			      -EFAULT);
		size = 4096;
		igt_assert_eq(query(dev.fd, QGPU_QUERY_STATS, 0, 4096, &size,
				    NULL), -EFAULT);
	}

	igt_subtest("dumb-create-map-readback") {
		struct qgpu_dev card;
		uint32_t h, pitch, *p, y;
		uint64_t size, off;

		qt_open(&card, QGPU_NODE_PRIMARY);
		igt_assert_eq(qgpu_dumb_create(card.fd, 640, 480, 32, &h,
					       &pitch, &size), 0);
		igt_assert_lte(640 * 4, pitch);
		igt_assert_lte_u64((uint64_t)pitch * 480, size);
		igt_assert_eq(size % 4096, 0);
		igt_assert_eq(qgpu_dumb_map_offset(card.fd, h, &off), 0);
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 card.fd, off);
		igt_assert(p != MAP_FAILED);
		for (y = 0; y < 480; y++)
			qgpu_pattern_fill((char *)p + y * pitch, 640 * 4, y);
		/* move it around and read it back */
		qt_reside(card.fd, h, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_VISIBLE);
		for (y = 0; y < 480; y++)
			qt_check_pattern((char *)p + y * pitch, 640 * 4, y,
					 "dumb row (visible VRAM)");
		qt_reside(card.fd, h, QGPU_RESIDE_EVICT_SYSTEM, 0);
		for (y = 0; y < 480; y++)
			qt_check_pattern((char *)p + y * pitch, 640 * 4, y,
					 "dumb row (system)");
		igt_assert_eq(munmap(p, size), 0);
		/* a second mapping of the same object sees the same bytes */
		igt_assert_eq(qgpu_dumb_map_offset(card.fd, h, &off), 0);
		p = mmap(NULL, size, PROT_READ, MAP_SHARED, card.fd, off);
		igt_assert(p != MAP_FAILED);
		qt_check_pattern((char *)p + 7 * pitch, 640 * 4, 7,
				 "dumb row 7 (new mapping)");
		igt_assert_eq(munmap(p, size), 0);
		igt_assert_eq(qgpu_dumb_destroy(card.fd, h), 0);
		/* gone: the handle is no longer valid */
		igt_assert_eq(qgpu_dumb_map_offset(card.fd, h, &off), -ENOENT);
		qgpu_close(&card);
	}

	igt_subtest("dumb-bad-input") {
		struct qgpu_dev card;
		struct drm_mode_create_dumb c;
		uint32_t h;
		uint64_t off;

		qt_open(&card, QGPU_NODE_PRIMARY);
		igt_assert_eq(qgpu_dumb_create(card.fd, 0, 480, 32, &h, NULL,
					       NULL), -EINVAL);
		igt_assert_eq(qgpu_dumb_create(card.fd, 640, 0, 32, &h, NULL,
					       NULL), -EINVAL);
		igt_assert_eq(qgpu_dumb_create(card.fd, 640, 480, 0, &h, NULL,
					       NULL), -EINVAL);
		/* huge: larger than anything the device could hold, and
		 * sizes whose products overflow 32 and 64 bits */
		igt_assert_eq(qgpu_dumb_create(card.fd, 65536, 65536, 32, &h,
					       NULL, NULL), -EINVAL);
		igt_assert_eq(qgpu_dumb_create(card.fd, 16384, 16384, 32, &h,
					       NULL, NULL), -EINVAL);
		igt_assert_eq(qgpu_dumb_create(card.fd, 0xffffffffu,
					       0xffffffffu, 32, &h, NULL,
					       NULL), -EINVAL);
		igt_assert_eq(qgpu_dumb_create(card.fd, 1, 1, 0xffffffffu, &h,
					       NULL, NULL), -EINVAL);
		memset(&c, 0, sizeof(c));
		c.width = 64;
		c.height = 64;
		c.bpp = 32;
		c.flags = 1;
		do_ioctl_err(card.fd, DRM_IOCTL_MODE_CREATE_DUMB, &c, EINVAL);
		/* bad handles */
		igt_assert_eq(qgpu_dumb_map_offset(card.fd, 0, &off), -ENOENT);
		igt_assert_eq(qgpu_dumb_map_offset(card.fd, 0x7fffffff, &off),
			      -ENOENT);
		igt_assert_eq(qgpu_dumb_destroy(card.fd, 0x7fffffff), -EINVAL);
		igt_assert_eq(qgpu_dumb_destroy(card.fd, 0), -EINVAL);
		/* destroyed twice */
		igt_assert_eq(qgpu_dumb_create(card.fd, 16, 16, 32, &h, NULL,
					       NULL), 0);
		igt_assert_eq(qgpu_dumb_destroy(card.fd, h), 0);
		igt_assert_eq(qgpu_dumb_destroy(card.fd, h), -EINVAL);
		qgpu_close(&card);
		qt_assert_no_allocations(dev.fd);
	}

	igt_subtest("render-node") {
		struct drm_qgpu_device_info in;
		struct qgpu_cb *cb;
		uint32_t ctx, h, pitch;
		uint64_t size;
		drmVersionPtr v;

		igt_assert(!strncmp(dev.path, "/dev/dri/renderD", 16));
		igt_assert_eq(drmGetNodeTypeFromFd(dev.fd), DRM_NODE_RENDER);
		v = drmGetVersion(dev.fd);
		igt_assert(v);
		igt_assert(!strcmp(v->name, "qgpu"));
		drmFreeVersion(v);
		/* every qgpu ioctl works on the render node */
		igt_assert_eq(qgpu_query_device(dev.fd, &in), 0);
		h = qt_bo(dev.fd, 4096, QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0);
		ctx = qt_ctx(dev.fd);
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, h, 0, 4096);
		qgpu_cb_fence(cb, 0, 0, 1);
		qt_run(dev.fd, ctx, cb, 10);
		qt_cb_free(cb);
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, ctx), 0);
		qt_close(dev.fd, h);
		/* DRM's modesetting/dumb ioctls are not render-node ioctls */
		igt_assert_eq(qgpu_dumb_create(dev.fd, 16, 16, 32, &h, &pitch,
					       &size), -EACCES);
		/* a render client is never master */
		igt_assert_neq(drmSetMaster(dev.fd), 0);
	}

	igt_subtest("primary-node-auth") {
		struct qgpu_dev master;
		pid_t pid;
		int st;

		igt_require(geteuid() == 0);
		qt_open(&master, QGPU_NODE_PRIMARY);
		/* the first opener became master (or we make it so) */
		if (!drmIsMaster(master.fd))
			igt_require(drmSetMaster(master.fd) == 0);
		pid = fork();
		igt_assert(pid >= 0);
		if (pid == 0)
			_exit(unauth_child(master.fd, master.path));
		st = qt_wait_child(pid);
		igt_require_f(st != 0x100 && st != 0x200,
			      "cannot set up an unprivileged client\n");
		igt_assert_f(st == 0, "unauthenticated-client checks failed: %#x\n",
			     st);
		qgpu_close(&master);
	}

	igt_subtest("ctx-create-destroy") {
		struct drm_qgpu_ctx_create cc = { 0 };
		struct drm_qgpu_ctx_destroy cd = { 0 };
		uint32_t a, b;

		a = qt_ctx(dev.fd);
		b = qt_ctx(dev.fd);
		igt_assert_lte(1, a);
		igt_assert_lte(1, b);
		igt_assert_neq(a, b);
		igt_assert_lt(a, dev.info.max_contexts);
		igt_assert_lt(b, dev.info.max_contexts);
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, a), 0);
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, a), -ENOENT);
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, b), 0);
		/* unknown flags and pad must be zero */
		cc.flags = 2;
		do_ioctl_err(dev.fd, DRM_IOCTL_QGPU_CTX_CREATE, &cc, EINVAL);
		cc.flags = 0x80000000u;
		do_ioctl_err(dev.fd, DRM_IOCTL_QGPU_CTX_CREATE, &cc, EINVAL);
		a = qt_ctx(dev.fd);
		cd.ctx = a;
		cd.pad = 1;
		do_ioctl_err(dev.fd, DRM_IOCTL_QGPU_CTX_DESTROY, &cd, EINVAL);
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, a), 0);
	}

	/*
	 * A destroyed context's id is not handed out again at once (ids go
	 * round): a fault the device recorded for it is not taken for a new
	 * context of another process.
	 */
	igt_subtest("ctx-ids-not-reused-at-once") {
		uint32_t ids[16], i, j;

		igt_require(dev.info.max_contexts > ARRAY_SIZE(ids) + 8);
		for (i = 0; i < ARRAY_SIZE(ids); i++) {
			ids[i] = qt_ctx(dev.fd);
			igt_assert_eq(qgpu_ctx_destroy(dev.fd, ids[i]), 0);
			for (j = 0; j < i; j++)
				igt_assert_f(ids[j] != ids[i],
					     "context id %u handed out again after %u others\n",
					     ids[i], i - j - 1);
		}
	}

	igt_subtest("ctx-bad-ids") {
		struct drm_qgpu_context_status cs;
		uint32_t ids[] = { 0, 4096, 0x7fffffff, 0xffffffffu }, i;
		uint32_t a;
		int fd2;

		for (i = 0; i < ARRAY_SIZE(ids); i++) {
			igt_assert_eq(qgpu_ctx_destroy(dev.fd, ids[i]), -ENOENT);
			igt_assert_eq(qgpu_query_context(dev.fd, ids[i], &cs),
				      -ENOENT);
		}
		/* another file's context is not ours to use or destroy */
		fd2 = qt_reopen(&dev);
		a = qt_ctx(fd2);
		igt_assert_eq(qgpu_query_context(dev.fd, a, &cs), -ENOENT);
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, a), -ENOENT);
		igt_assert_eq(qgpu_query_context(fd2, a, &cs), 0);
		igt_assert_eq(cs.state, QGPU_CTX_OK);
		igt_assert_eq(qgpu_ctx_destroy(fd2, a), 0);
		/* a context left behind is cleaned up when its file closes */
		a = qt_ctx(fd2);
		close(fd2);
	}

	igt_subtest("ctx-ids-capped-per-user")
		ctx_ids_capped_per_user();

	igt_subtest("ctx-exhaustion") {
		uint32_t *ids = calloc(dev.info.max_contexts + 1, sizeof(*ids));
		uint32_t n = 0, i, c;
		int ret;

		igt_assert(ids);
		/* every hardware slot table but the driver's is available */
		while (n <= dev.info.max_contexts) {
			ret = qgpu_ctx_create(dev.fd, &c);
			if (ret) {
				igt_assert_eq(ret, -ENOSPC);
				break;
			}
			igt_assert_lt(c, dev.info.max_contexts);
			for (i = 0; i < n; i++)
				igt_assert_neq(ids[i], c);
			ids[n++] = c;
		}
		igt_assert_lt(n, dev.info.max_contexts);
		igt_assert_lte(dev.info.max_contexts - 1, n);
		/* freeing one makes room for one */
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, ids[n / 2]), 0);
		igt_assert_eq(qgpu_ctx_create(dev.fd, &ids[n / 2]), 0);
		igt_assert_eq(qgpu_ctx_create(dev.fd, &c), -ENOSPC);
		for (i = 0; i < n; i++)
			igt_assert_eq(qgpu_ctx_destroy(dev.fd, ids[i]), 0);
		free(ids);
	}

	igt_subtest("prime-self-import-and-dmabuf-mmap") {
		struct drm_qgpu_stats s0, s1;
		uint32_t h, h2, h3;
		int fd, fd2, other;
		void *p;

		qt_stats(dev.fd, &s0);
		h = qt_bo(dev.fd, 65536, QGPU_SEGBIT(QGPU_SEG_VISIBLE),
			  QGPU_GEM_CPU_ACCESS, 0);
		igt_assert_eq(drmPrimeHandleToFD(dev.fd, h, DRM_CLOEXEC | DRM_RDWR,
						 &fd), 0);
		/* the size, as dma-bufs tell it */
		igt_assert_eq(lseek(fd, 0, SEEK_END), 65536);
		/* back into the same file: the same handle */
		igt_assert_eq(drmPrimeFDToHandle(dev.fd, fd, &h2), 0);
		igt_assert_eq(h2, h);
		/* into another file: the same allocation, another handle */
		other = qt_reopen(&dev);
		igt_assert(other >= 0);
		igt_assert_eq(drmPrimeFDToHandle(other, fd, &h3), 0);
		igt_assert_eq(qt_info(other, h3).size, 65536);
		/*
		 * A CPU mapping through the dma-buf follows the allocation's
		 * moves like any other mapping of it.
		 */
		p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		igt_assert(p != MAP_FAILED);
		memset(p, 0x6b, 65536);
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
		igt_assert_eq(((volatile uint32_t *)p)[100], 0x6b6b6b6b);
		qt_reside(dev.fd, h, QGPU_RESIDE_EVICT_SYSTEM, 0);
		igt_assert_eq(((volatile uint32_t *)p)[16383], 0x6b6b6b6b);
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
		((volatile uint32_t *)p)[5] = 7;
		qt_reside(dev.fd, h, QGPU_RESIDE_EVICT_SYSTEM, 0);
		igt_assert_eq(((volatile uint32_t *)p)[5], 7);
		igt_assert_eq(munmap(p, 65536), 0);
		/* the dma-buf keeps the allocation after every handle is gone */
		qt_close(dev.fd, h);
		igt_assert_eq(drmCloseBufferHandle(other, h3), 0);
		igt_assert_eq(drmPrimeFDToHandle(dev.fd, fd, &h2), 0);
		igt_assert_eq(drmPrimeHandleToFD(dev.fd, h2, DRM_CLOEXEC, &fd2), 0);
		close(fd2);
		igt_assert_eq(drmCloseBufferHandle(dev.fd, h2), 0);
		close(fd);
		close(other);
		/* and nothing is left once the dma-buf is closed */
		qt_stats(dev.fd, &s1);
		igt_assert_eq_u64(s1.allocations, s0.allocations);
		igt_assert_eq_u64(s1.allocated_bytes, s0.allocated_bytes);
	}

	igt_subtest("no-leaks") {
		qt_assert_no_allocations(dev.fd);
	}

	igt_fixture
		qgpu_close(&dev);
}
