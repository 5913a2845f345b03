// SPDX-License-Identifier: MIT
/*
 * Host unit test of the UAPI header, include/uapi/drm/qgpu_drm.h, as user
 * space gets it:
 *
 * - includes: it includes nothing but "drm.h" (the DRM core's, which user
 *   space takes from libdrm and the kernel from its own uapi directory);
 * - compiles-CC-STD: included first and alone, with every ioctl number
 *   used, it compiles in C89, C99, C11, C++98, C++11 and C++17 (gcc, g++,
 *   and clang when present) with -Wall -Wextra -Werror -pedantic -Wpadded.
 *   libdrm's drm.h comes in with -isystem: its own pedantic lapses (the
 *   anonymous unions of drm_mode.h in C99) are not this header's, while
 *   every warning about qgpu_drm.h, implicit padding included, fails;
 * - layout: every struct's size and member offsets are the ABI's, every
 *   member naturally aligned, no hole and no tail padding (a struct that
 *   grows at its end, as "DOC: qgpu UAPI growth" allows, adds its new
 *   members to the table here);
 * - ioctl-numbers, constants: the ioctl numbers and the values user space
 *   and the kernel share are the ABI's ("DOC: qgpu UAPI growth": nothing
 *   that exists changes).
 *
 * Run from the checkout's root (the harness does). The compilers are run
 * at test time, so a broken header is a failed subtest, not a build error.
 */
#include <errno.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "igt.h"
#include "qgpu_drm.h"

#define UAPI_DIR	"include/uapi/drm"
#define UAPI_HEADER	UAPI_DIR "/qgpu_drm.h"
#define LIBDRM_DIR	"/usr/include/libdrm"

extern char **environ;

/* ------------------------------------------------------------------------ */
/* includes */

static void check_includes(void)
{
	FILE *f = fopen(UAPI_HEADER, "r");
	char line[512];
	unsigned int n = 0, lineno = 0;

	igt_assert_f(f, "cannot open %s (run from the checkout's root): %s\n",
		     UAPI_HEADER, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		const char *p = line;

		lineno++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '#')
			continue;
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, "include", 7))
			continue;
		n++;
		igt_assert_f(!strcmp(line, "#include \"drm.h\"\n"),
			     "%s:%u: includes something else than \"drm.h\": %s",
			     UAPI_HEADER, lineno, line);
	}
	fclose(f);
	igt_assert_f(n == 1, "%s: %u #include lines, expected 1\n",
		     UAPI_HEADER, n);
}

/* ------------------------------------------------------------------------ */
/* compiles-CC-STD */

/* The translation unit: the header first and alone, every ioctl used. */
static const char tu[] =
	"#include \"qgpu_drm.h\"\n"
	"int main(void)\n"
	"{\n"
	"\tstatic const unsigned long ioctls[] = {\n"
	"\t\tDRM_IOCTL_QGPU_QUERY, DRM_IOCTL_QGPU_GEM_CREATE,\n"
	"\t\tDRM_IOCTL_QGPU_GEM_LOCK, DRM_IOCTL_QGPU_GEM_UNLOCK,\n"
	"\t\tDRM_IOCTL_QGPU_GEM_RESIDE, DRM_IOCTL_QGPU_GEM_INFO,\n"
	"\t\tDRM_IOCTL_QGPU_SUBMIT, DRM_IOCTL_QGPU_CTX_CREATE,\n"
	"\t\tDRM_IOCTL_QGPU_CTX_DESTROY\n"
	"\t};\n"
	"\tstruct drm_qgpu_submit s;\n"
	"\n"
	"\ts.flags = QGPU_CPU_PATH_NONE + QGPU_GEM_CREATE_FLAGS;\n"
	"\treturn (int)(ioctls[0] & 1) + (int)s.flags;\n"
	"}\n";

static char tu_path[] = "/tmp/qgpu-uapi-XXXXXX";

static void write_tu(void)
{
	int fd = mkstemp(tu_path);
	size_t len = strlen(tu);

	igt_assert_f(fd >= 0, "mkstemp: %s\n", strerror(errno));
	igt_assert(write(fd, tu, len) == (ssize_t)len);
	close(fd);
}

static int run(char *const argv[])
{
	pid_t pid;
	int st, i;

	printf("$");
	for (i = 0; argv[i]; i++)
		printf(" %s", argv[i]);
	printf("\n");
	fflush(stdout);
	if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ))
		return -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int have(const char *prog)
{
	char *argv[] = { (char *)prog, (char *)"--version", NULL };
	pid_t pid;
	int st;
	posix_spawn_file_actions_t fa;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
	if (posix_spawnp(&pid, prog, &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		return 0;
	}
	posix_spawn_file_actions_destroy(&fa);
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       !WEXITSTATUS(st);
}

static void compiles(const char *cc, const char *lang, const char *std)
{
	char stdopt[32];
	char *argv[] = {
		(char *)cc, (char *)"-fsyntax-only", (char *)"-x", (char *)lang,
		stdopt, (char *)"-Wall", (char *)"-Wextra", (char *)"-Werror",
		(char *)"-pedantic", (char *)"-pedantic-errors",
		(char *)"-Wpadded", (char *)"-I" UAPI_DIR,
		(char *)"-isystem", (char *)LIBDRM_DIR, tu_path, NULL,
	};
	int rc;

	igt_require_f(have(cc), "%s not installed\n", cc);
	igt_require_f(access(LIBDRM_DIR "/drm.h", R_OK) == 0,
		      "no %s/drm.h (libdrm-dev)\n", LIBDRM_DIR);
	snprintf(stdopt, sizeof(stdopt), "-std=%s", std);
	rc = run(argv);
	igt_assert_f(rc == 0, "%s -std=%s: %s does not compile alone (exit %d)\n",
		     cc, std, UAPI_HEADER, rc);
}

/* ------------------------------------------------------------------------ */
/* layout */

struct member {
	const char *name;
	size_t offset, size, want;
};

#define M(s, m, at) { #s "." #m, offsetof(struct s, m), \
		      sizeof(((struct s *)0)->m), at }
#define END(s, size) { #s, sizeof(struct s), 0, size }

/* Per struct: its members in order, with the ABI's offsets, then END. */
static const struct member layout[] = {
	M(drm_qgpu_query, type, 0), M(drm_qgpu_query, arg, 4),
	M(drm_qgpu_query, count, 8), M(drm_qgpu_query, size, 12),
	M(drm_qgpu_query, ptr, 16), END(drm_qgpu_query, 24),

	M(drm_qgpu_device_info, vendor_id, 0),
	M(drm_qgpu_device_info, device_id, 4),
	M(drm_qgpu_device_info, revision, 8),
	M(drm_qgpu_device_info, version, 12),
	M(drm_qgpu_device_info, caps, 16),
	M(drm_qgpu_device_info, num_engines, 20),
	M(drm_qgpu_device_info, max_slots, 24),
	M(drm_qgpu_device_info, max_contexts, 28),
	M(drm_qgpu_device_info, vram_size, 32),
	M(drm_qgpu_device_info, visible_vram_size, 40),
	M(drm_qgpu_device_info, gart_size, 48),
	M(drm_qgpu_device_info, host_aperture_size, 56),
	M(drm_qgpu_device_info, paging_buffer_segment, 64),
	M(drm_qgpu_device_info, paging_buffer_size, 68),
	M(drm_qgpu_device_info, num_segments, 72),
	M(drm_qgpu_device_info, pad, 76), END(drm_qgpu_device_info, 80),

	M(drm_qgpu_segment, id, 0), M(drm_qgpu_segment, flags, 4),
	M(drm_qgpu_segment, base, 8), M(drm_qgpu_segment, size, 16),
	M(drm_qgpu_segment, cpu_bar_offset, 24),
	M(drm_qgpu_segment, reserved_size, 32), END(drm_qgpu_segment, 40),

	M(drm_qgpu_segment_stats, id, 0),
	M(drm_qgpu_segment_stats, allocations, 4),
	M(drm_qgpu_segment_stats, size, 8), M(drm_qgpu_segment_stats, used, 16),
	END(drm_qgpu_segment_stats, 24),

	M(drm_qgpu_stats, allocations, 0),
	M(drm_qgpu_stats, allocated_bytes, 8),
	M(drm_qgpu_stats, bytes_to_vram, 16),
	M(drm_qgpu_stats, bytes_from_vram, 24),
	M(drm_qgpu_stats, bytes_vram_to_vram, 32),
	M(drm_qgpu_stats, bytes_filled, 40), M(drm_qgpu_stats, evictions, 48),
	M(drm_qgpu_stats, aperture_maps, 56),
	M(drm_qgpu_stats, aperture_unmaps, 64),
	M(drm_qgpu_stats, hap_maps, 72), M(drm_qgpu_stats, hap_unmaps, 80),
	M(drm_qgpu_stats, paging_buffers, 88),
	M(drm_qgpu_stats, submissions, 96),
	M(drm_qgpu_stats, split_portions, 104), M(drm_qgpu_stats, faults, 112),
	M(drm_qgpu_stats, resets, 120),
	/* appended (cache counters): the one answer that grows, see growth */
	M(drm_qgpu_stats, cache_invalidations, 128),
	M(drm_qgpu_stats, cache_invalidated_bytes, 136),
	/* appended (OfferAllocations) */
	M(drm_qgpu_stats, offer_discards, 144),
	M(drm_qgpu_stats, offer_discarded_bytes, 152),
	/* appended (migrating back) */
	M(drm_qgpu_stats, migrations_back, 160),
	M(drm_qgpu_stats, migrated_back_bytes, 168),
	/* appended (VRAM given back to the host) */
	M(drm_qgpu_stats, vram_discards, 176),
	M(drm_qgpu_stats, vram_discarded_bytes, 184),
	M(drm_qgpu_stats, vram_committed, 192),
	/* appended (the device lost) */
	M(drm_qgpu_stats, device_lost, 200),
	END(drm_qgpu_stats, 208),

	M(drm_qgpu_gem_create, size, 0), M(drm_qgpu_gem_create, segment_mask, 8),
	M(drm_qgpu_gem_create, flags, 12), M(drm_qgpu_gem_create, preferred, 16),
	M(drm_qgpu_gem_create, handle, 20), END(drm_qgpu_gem_create, 24),

	M(drm_qgpu_gem_lock, handle, 0), M(drm_qgpu_gem_lock, flags, 4),
	M(drm_qgpu_gem_lock, offset, 8), END(drm_qgpu_gem_lock, 16),

	M(drm_qgpu_gem_unlock, handle, 0), M(drm_qgpu_gem_unlock, flags, 4),
	END(drm_qgpu_gem_unlock, 8),

	M(drm_qgpu_gem_reside, handle, 0), M(drm_qgpu_gem_reside, op, 4),
	M(drm_qgpu_gem_reside, segment, 8), M(drm_qgpu_gem_reside, flags, 12),
	END(drm_qgpu_gem_reside, 16),

	M(drm_qgpu_gem_info, handle, 0), M(drm_qgpu_gem_info, segment, 4),
	M(drm_qgpu_gem_info, size, 8), M(drm_qgpu_gem_info, gpu_addr, 16),
	M(drm_qgpu_gem_info, segment_mask, 24),
	M(drm_qgpu_gem_info, lock_count, 28),
	M(drm_qgpu_gem_info, cpu_path, 32), M(drm_qgpu_gem_info, flags, 36),
	/* appended: a 40-byte caller (the old number) still works */
	M(drm_qgpu_gem_info, cpu_caching, 40), M(drm_qgpu_gem_info, pad, 44),
	END(drm_qgpu_gem_info, 48),

	M(drm_qgpu_invalidate_cache, handle, 0),
	M(drm_qgpu_invalidate_cache, flags, 4),
	M(drm_qgpu_invalidate_cache, offset, 8),
	M(drm_qgpu_invalidate_cache, size, 16),
	END(drm_qgpu_invalidate_cache, 24),

	M(drm_qgpu_alloc_entry, handle, 0), M(drm_qgpu_alloc_entry, flags, 4),
	END(drm_qgpu_alloc_entry, 8),

	M(drm_qgpu_patch_entry, alloc_index, 0),
	M(drm_qgpu_patch_entry, slot, 4),
	M(drm_qgpu_patch_entry, alloc_offset, 8),
	M(drm_qgpu_patch_entry, patch_offset, 16),
	M(drm_qgpu_patch_entry, split_offset, 20),
	M(drm_qgpu_patch_entry, pad, 24), END(drm_qgpu_patch_entry, 32),

	M(drm_qgpu_sync_entry, handle, 0), M(drm_qgpu_sync_entry, flags, 4),
	M(drm_qgpu_sync_entry, point, 8), END(drm_qgpu_sync_entry, 16),

	M(drm_qgpu_submit, dma, 0), M(drm_qgpu_submit, dma_size, 8),
	M(drm_qgpu_submit, ctx, 12), M(drm_qgpu_submit, allocs, 16),
	M(drm_qgpu_submit, num_allocs, 24), M(drm_qgpu_submit, num_patches, 28),
	M(drm_qgpu_submit, patches, 32), M(drm_qgpu_submit, in_syncs, 40),
	M(drm_qgpu_submit, out_syncs, 48),
	M(drm_qgpu_submit, num_in_syncs, 56),
	M(drm_qgpu_submit, num_out_syncs, 60), M(drm_qgpu_submit, flags, 64),
	M(drm_qgpu_submit, portions, 68),
	/* appended: a 72-byte caller (the old number) still works */
	M(drm_qgpu_submit, fence_value, 72), END(drm_qgpu_submit, 80),

	M(drm_qgpu_ctx_create, flags, 0), M(drm_qgpu_ctx_create, ctx, 4),
	/* appended: an 8-byte caller (the old number) still works */
	M(drm_qgpu_ctx_create, mfence, 8),
	M(drm_qgpu_ctx_create, mfence_offset, 12),
	M(drm_qgpu_ctx_create, mfence_mmap_offset, 16),
	END(drm_qgpu_ctx_create, 24),

	M(drm_qgpu_gem_destroy, handle, 0), M(drm_qgpu_gem_destroy, flags, 4),
	END(drm_qgpu_gem_destroy, 8),

	M(drm_qgpu_gem_set_priority, handles, 0),
	M(drm_qgpu_gem_set_priority, priorities, 8),
	M(drm_qgpu_gem_set_priority, count, 16),
	M(drm_qgpu_gem_set_priority, flags, 20),
	END(drm_qgpu_gem_set_priority, 24),

	M(drm_qgpu_gem_offer, handles, 0), M(drm_qgpu_gem_offer, count, 8),
	M(drm_qgpu_gem_offer, priority, 12), M(drm_qgpu_gem_offer, flags, 16),
	M(drm_qgpu_gem_offer, pad, 20), END(drm_qgpu_gem_offer, 24),

	M(drm_qgpu_gem_reclaim, handles, 0), M(drm_qgpu_gem_reclaim, results, 8),
	M(drm_qgpu_gem_reclaim, count, 16), M(drm_qgpu_gem_reclaim, flags, 20),
	M(drm_qgpu_gem_reclaim, discarded, 24), M(drm_qgpu_gem_reclaim, pad, 28),
	END(drm_qgpu_gem_reclaim, 32),

	M(drm_qgpu_vidmem_info, group, 0), M(drm_qgpu_vidmem_info, pad, 4),
	M(drm_qgpu_vidmem_info, budget, 8),
	M(drm_qgpu_vidmem_info, current_usage, 16),
	M(drm_qgpu_vidmem_info, size, 24),
	M(drm_qgpu_vidmem_info, trimmed_bytes, 32),
	END(drm_qgpu_vidmem_info, 40),

	M(drm_qgpu_mfence_create, flags, 0), M(drm_qgpu_mfence_create, handle, 4),
	M(drm_qgpu_mfence_create, initial_value, 8),
	M(drm_qgpu_mfence_create, mmap_offset, 16),
	M(drm_qgpu_mfence_create, offset, 24), M(drm_qgpu_mfence_create, pad, 28),
	END(drm_qgpu_mfence_create, 32),

	M(drm_qgpu_mfence_destroy, handle, 0),
	M(drm_qgpu_mfence_destroy, pad, 4), END(drm_qgpu_mfence_destroy, 8),

	M(drm_qgpu_mfence_wait, handles, 0), M(drm_qgpu_mfence_wait, values, 8),
	M(drm_qgpu_mfence_wait, count, 16), M(drm_qgpu_mfence_wait, flags, 20),
	M(drm_qgpu_mfence_wait, timeout_ns, 24),
	M(drm_qgpu_mfence_wait, first, 32), M(drm_qgpu_mfence_wait, pad, 36),
	END(drm_qgpu_mfence_wait, 40),

	M(drm_qgpu_mfence_export, handle, 0),
	M(drm_qgpu_mfence_export, syncobj, 4),
	M(drm_qgpu_mfence_export, value, 8), M(drm_qgpu_mfence_export, point, 16),
	M(drm_qgpu_mfence_export, flags, 24), M(drm_qgpu_mfence_export, pad, 28),
	END(drm_qgpu_mfence_export, 32),

	M(drm_qgpu_ctx_destroy, ctx, 0), M(drm_qgpu_ctx_destroy, pad, 4),
	END(drm_qgpu_ctx_destroy, 8),

	M(drm_qgpu_context_status, state, 0),
	M(drm_qgpu_context_status, fault_reason, 4),
	M(drm_qgpu_context_status, fault_offset, 8),
	M(drm_qgpu_context_status, pad, 12),
	M(drm_qgpu_context_status, submissions, 16),
	M(drm_qgpu_context_status, portions, 24),
	M(drm_qgpu_context_status, fault_addr, 32),
	END(drm_qgpu_context_status, 40),
};

static void check_layout(void)
{
	size_t i, end = 0;
	unsigned int bad = 0;

	for (i = 0; i < sizeof(layout) / sizeof(layout[0]); i++) {
		const struct member *m = &layout[i];
		size_t align = m->size < 8 ? m->size : 8;

		if (!strchr(m->name, '.')) {	/* END: the struct's size */
			if (m->offset != m->want || end != m->offset ||
			    m->offset % 8) {
				printf("%s: size %zu, members end at %zu, ABI: %zu (a multiple of 8)\n",
				       m->name, m->offset, end, m->want);
				bad++;
			}
			end = 0;
			continue;
		}
		if (m->offset != m->want) {
			printf("%s: offset %zu, ABI: %zu\n", m->name, m->offset,
			       m->want);
			bad++;
		}
		if (m->offset != end) {
			printf("%s: at %zu, the member before it ends at %zu (a hole or a reorder)\n",
			       m->name, m->offset, end);
			bad++;
		}
		if (m->offset % align) {
			printf("%s: offset %zu is not a multiple of %zu (i386 would lay it out differently)\n",
			       m->name, m->offset, align);
			bad++;
		}
		end = m->offset + m->size;
	}
	igt_assert_f(!bad, "%u layout problem(s)\n", bad);
}

/* ------------------------------------------------------------------------ */
/* ioctl-numbers, constants */

struct value {
	const char *name;
	unsigned long long have, want;
};

#define V(name, want) { #name, (unsigned long long)(name), want }

static const struct value ioctls[] = {
	/* dir << 30 | size << 16 | 'd' << 8 | DRM_COMMAND_BASE + nr */
	V(DRM_IOCTL_QGPU_QUERY, 0xc0186440),
	V(DRM_IOCTL_QGPU_GEM_CREATE, 0xc0186441),
	V(DRM_IOCTL_QGPU_GEM_LOCK, 0xc0106442),
	V(DRM_IOCTL_QGPU_GEM_UNLOCK, 0x40086443),
	V(DRM_IOCTL_QGPU_GEM_RESIDE, 0xc0106444),
	/* 0xc0286445 before cpu_caching was appended: the kernel takes both */
	V(DRM_IOCTL_QGPU_GEM_INFO, 0xc0306445),
	/* 0xc0486446 and 0xc0086447 before fence_value / mfence were
	 * appended: the kernel takes both */
	V(DRM_IOCTL_QGPU_SUBMIT, 0xc0506446),
	V(DRM_IOCTL_QGPU_CTX_CREATE, 0xc0186447),
	V(DRM_IOCTL_QGPU_CTX_DESTROY, 0x40086448),
	V(DRM_IOCTL_QGPU_MFENCE_CREATE, 0xc020644e),
	V(DRM_IOCTL_QGPU_MFENCE_DESTROY, 0x4008644f),
	V(DRM_IOCTL_QGPU_MFENCE_WAIT, 0xc0286450),
	V(DRM_IOCTL_QGPU_MFENCE_EXPORT, 0x40206451),
	V(DRM_IOCTL_QGPU_GEM_DESTROY, 0x40086452),
	V(DRM_IOCTL_QGPU_INVALIDATE_CACHE, 0x40186453),
	V(DRM_IOCTL_QGPU_GEM_SET_PRIORITY, 0x40186454),
	V(DRM_IOCTL_QGPU_GEM_OFFER, 0x40186455),
	V(DRM_IOCTL_QGPU_GEM_RECLAIM, 0xc0206456),
};

static const struct value constants[] = {
	V(QGPU_QUERY_DEVICE, 1), V(QGPU_QUERY_SEGMENTS, 2),
	V(QGPU_QUERY_STATS, 3), V(QGPU_QUERY_FILE_STATS, 4),
	V(QGPU_QUERY_CONTEXT, 5), V(QGPU_QUERY_MMU, 6), V(QGPU_QUERY_VM_INFO, 7),
	V(QGPU_QUERY_VM_LAYOUT, 8), V(QGPU_QUERY_VIDMEM_INFO, 9),
	V(QGPU_SEGMENT_GROUP_LOCAL, 0), V(QGPU_SEGMENT_GROUP_NON_LOCAL, 1),
	V(QGPU_INFO_CAP_FENCE, 1), V(QGPU_INFO_CAP_GART, 2),
	V(QGPU_INFO_CAP_HOST_APERTURE, 4), V(QGPU_INFO_CAP_PAGING, 8),
	V(QGPU_INFO_CAP_RENDER, 16), V(QGPU_INFO_CAP_CTX_SAVE, 32),
	V(QGPU_SEG_SYSTEM, 0), V(QGPU_SEG_VISIBLE, 1), V(QGPU_SEG_LOCAL, 2),
	V(QGPU_SEG_APERTURE, 3), V(QGPU_SEG_MAX, 3), V(QGPU_SEG_MASK_ALL, 0xe),
	V(QGPU_SEGF_APERTURE, 1), V(QGPU_SEGF_CPU_VISIBLE, 2),
	V(QGPU_SEGF_CACHE_COHERENT, 4), V(QGPU_SEGF_USE_BANKING, 8),
	V(QGPU_SEGF_CPU_HOST_APERTURE, 16), V(QGPU_SEGF_POPULATED_FROM_SYS, 32),
	V(QGPU_SEGF_PAGING_BUFFER, 64),
	V(QGPU_GEM_CPU_ACCESS, 1), V(QGPU_GEM_CPU_CACHED, 2),
	V(QGPU_INFO_CAP_IO_COHERENT, 1u << 9),
	V(QGPU_CPU_CACHING_NONE, 0), V(QGPU_CPU_CACHING_WC, 1),
	V(QGPU_CPU_CACHING_CACHED, 2),
	V(QGPU_RESIDE_MAKE_RESIDENT, 1), V(QGPU_RESIDE_EVICT, 2),
	V(QGPU_RESIDE_EVICT_SYSTEM, 3),
	/* the kernel's kernel/qgpu_mm.h had them first: the same values */
	V(QGPU_CPU_PATH_NONE, 0), V(QGPU_CPU_PATH_BAR, 1),
	V(QGPU_CPU_PATH_HAP, 2), V(QGPU_CPU_PATH_SYSTEM, 3),
	V(QGPU_ALLOC_WRITE, 1),
	V(QGPU_MAX_DMA_SIZE, 1u << 20), V(QGPU_MAX_ALLOCS, 4096),
	V(QGPU_MAX_PATCHES, 16384), V(QGPU_MAX_SYNCS, 64),
	V(QGPU_MAX_SPLIT_POINTS, 4096),
	V(QGPU_CTX_OK, 0), V(QGPU_CTX_LOST_HANG, 1), V(QGPU_CTX_LOST_FAULT, 2),
	/* SetAllocationPriority: D3DDDI_ALLOCATIONPRIORITY_*'s values */
	V(QGPU_PRIORITY_MINIMUM, 0x28000000), V(QGPU_PRIORITY_LOW, 0x50000000),
	V(QGPU_PRIORITY_NORMAL, 0x78000000), V(QGPU_PRIORITY_HIGH, 0xa0000000),
	V(QGPU_PRIORITY_MAXIMUM, 0xc8000000),
	V(QGPU_MAX_PRIORITY_HANDLES, 4096),
	/* OfferAllocations: D3DDDI_OFFER_PRIORITY_LOW..HIGH */
	V(QGPU_OFFER_PRIORITY_LOW, 1), V(QGPU_OFFER_PRIORITY_NORMAL, 2),
	V(QGPU_OFFER_PRIORITY_HIGH, 3), V(QGPU_MAX_OFFER_HANDLES, 4096),
	V(QGPU_RECLAIM_OK, 0), V(QGPU_RECLAIM_DISCARDED, 1),
};

static void check_values(const struct value *v, size_t n)
{
	unsigned int bad = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i].have == v[i].want)
			continue;
		printf("%s = %#llx, ABI: %#llx\n", v[i].name, v[i].have,
		       v[i].want);
		bad++;
	}
	igt_assert_f(!bad, "%u value(s) changed\n", bad);
}

/* ------------------------------------------------------------------------ */

igt_main
{
	static const struct {
		const char *cc, *lang, *std, *name;
	} modes[] = {
		{ "gcc", "c", "c89", "gcc-c89" },
		{ "gcc", "c", "c99", "gcc-c99" },
		{ "gcc", "c", "c11", "gcc-c11" },
		{ "g++", "c++", "c++98", "gxx-cxx98" },
		{ "g++", "c++", "c++11", "gxx-cxx11" },
		{ "g++", "c++", "c++17", "gxx-cxx17" },
		{ "clang", "c", "c99", "clang-c99" },
		{ "clang++", "c++", "c++11", "clangxx-cxx11" },
	};
	static unsigned int i;

	igt_fixture {
		write_tu();
	}

	igt_subtest("includes")
		check_includes();

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		igt_subtest_f("compiles-%s", modes[i].name)
			compiles(modes[i].cc, modes[i].lang, modes[i].std);
	}

	igt_subtest("layout")
		check_layout();

	igt_subtest("ioctl-numbers")
		check_values(ioctls, sizeof(ioctls) / sizeof(ioctls[0]));

	igt_subtest("constants")
		check_values(constants, sizeof(constants) / sizeof(constants[0]));

	igt_fixture {
		unlink(tu_path);
	}
}
