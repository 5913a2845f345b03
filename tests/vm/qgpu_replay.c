// SPDX-License-Identifier: MIT
/*
 * qgpu_replay: the record/replay round trip in the guest. Each workload of
 * qgpu-workload is recorded with qgpu-trace (tracefs, a snapshot of the
 * memory manager's books at each end) and replayed by qgpu-replay --check
 * with the policy the kernel used: the replay must give exactly the
 * kernel's own counters (bytes paged into, out of and within VRAM, zero
 * fills, evictions, as QGPU_QUERY_STATS counts them, taken from the
 * snapshots), every move in order, every use at the same LRU tick, and
 * the same books at the end. Then the same under every victim policy of
 * the kernel, and with the policy changed in the middle of a recording.
 * The host replays the recorded suite (traces/) the same way
 * (tests/unit/replay.c).
 */
#include <dirent.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "qgpu_test.h"

static char policy_file[300];

/* Run @cmd with sh; its exit status (or 128 + signal) */
static int sh(const char *cmd)
{
	int st = system(cmd);

	igt_assert_f(st != -1, "system(%s) failed\n", cmd);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

/* The debugfs file of the victim policy (mounting debugfs if needed) */
static void find_policy_file(void)
{
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (stat("/sys/kernel/debug/dri", &st))
		mount("nodev", "/sys/kernel/debug", "debugfs", 0, NULL);
	d = opendir("/sys/kernel/debug/dri");
	if (!d)
		return;
	while ((de = readdir(d))) {
		char p[300];

		snprintf(p, sizeof(p), "/sys/kernel/debug/dri/%s/qgpu_policy",
			 de->d_name);
		if (!stat(p, &st)) {
			snprintf(policy_file, sizeof(policy_file), "%s", p);
			break;
		}
	}
	closedir(d);
}

static void set_policy(const char *name)
{
	FILE *f = fopen(policy_file, "w");

	igt_assert_f(f, "%s: %s\n", policy_file, strerror(errno));
	igt_assert(fputs(name, f) >= 0);
	igt_assert(!fclose(f));
}

/*
 * Record @workload (qgpu-workload's arguments) into @trace and replay it
 * with --check: 0 when the replay is exact. The workload's own status is
 * the recorder's; 77 (cannot run here) is passed on.
 */
static int round_trip(const char *trace, const char *workload)
{
	char cmd[512];
	int rc;

	snprintf(cmd, sizeof(cmd),
		 "qgpu-trace record -o %s -- %s > %s.out 2>&1", trace,
		 workload, trace);
	rc = sh(cmd);
	snprintf(cmd, sizeof(cmd), "cat %s.out", trace);
	sh(cmd);
	if (rc == 77)
		return 77;
	igt_assert_f(rc == 0, "recording %s: exit status %d\n", workload, rc);
	snprintf(cmd, sizeof(cmd), "qgpu-replay --check %s", trace);
	return sh(cmd);
}

static volatile unsigned int wl;

static const char *const workloads[] = {
	"split", "frames", "training", "smallhuge", "multi", "cpu",
	"virtual",
};

igt_main
{
	igt_fixture {
		igt_require_f(!sh("command -v qgpu-trace > /dev/null && command -v qgpu-replay > /dev/null && command -v qgpu-workload > /dev/null"),
			      "qgpu-trace, qgpu-replay or qgpu-workload missing\n");
		find_policy_file();
	}

	/* each workload, with the device's policy */
	for (wl = 0; wl < ARRAY_SIZE(workloads); wl++) {
		igt_subtest_f("round-trip-%s", workloads[wl]) {
			char trace[64], cmd[128];
			int rc;

			snprintf(trace, sizeof(trace), "/tmp/rt-%s.qtr",
				 workloads[wl]);
			snprintf(cmd, sizeof(cmd), "qgpu-workload %s",
				 workloads[wl]);
			rc = round_trip(trace, cmd);
			igt_skip_on_f(rc == 77, "%s cannot run here\n",
				      workloads[wl]);
			igt_assert_f(!rc, "%s: the replay is not the kernel's\n",
				     workloads[wl]);
		}
	}

	/* the kernel under every policy, the replay following it */
	igt_subtest("round-trip-every-policy") {
		igt_require_f(policy_file[0], "no debugfs qgpu_policy\n");
		for (unsigned int p = 0; ; p++) {
			char trace[64], name[32], cmd[512];
			FILE *f;

			snprintf(cmd, sizeof(cmd),
				 "tr ' ' '\\n' < %s | tr -d '[]' | sed -n %up > /tmp/rt-policy",
				 policy_file, p + 1);
			sh(cmd);
			f = fopen("/tmp/rt-policy", "r");
			igt_assert(f);
			name[0] = 0;
			if (!fgets(name, sizeof(name), f))
				name[0] = 0;
			fclose(f);
			name[strcspn(name, "\n")] = 0;
			if (!name[0])
				break;
			set_policy(name);
			snprintf(trace, sizeof(trace), "/tmp/rt-%s.qtr", name);
			igt_assert_f(!round_trip(trace, "qgpu-workload -n 8 frames"),
				     "policy %s: the replay is not the kernel's\n",
				     name);
			igt_info("policy %s: exact\n", name);
		}
		set_policy("lru");
	}

	/* a policy change in the middle of the recording is in the trace */
	igt_subtest("round-trip-policy-change") {
		char cmd[1024];

		igt_require_f(policy_file[0], "no debugfs qgpu_policy\n");
		set_policy("lru");
		snprintf(cmd, sizeof(cmd),
			 "sh -c 'qgpu-workload -n 6 frames && echo largest > %s && qgpu-workload -n 6 frames && echo lowest-offset > %s && qgpu-workload -n 4 split'",
			 policy_file, policy_file);
		igt_assert_f(!round_trip("/tmp/rt-change.qtr", cmd),
			     "the replay did not follow the policy changes\n");
		igt_assert(!sh("grep -q ' policy value=1$' /tmp/rt-change.qtr"));
		set_policy("lru");
	}
}
