// SPDX-License-Identifier: MIT
/*
 * Debian's fio (unmodified; its io_uring engine issues libc syscall()s and
 * maps the rings with libc mmap, so it takes the preload's fast path)
 * under `uuring run --block-kernel-uring`, with its data verified:
 *
 *   rw        randwrite, randrw
 *   verify    crc32c, md5          (verify_fatal: a bad block fails the job)
 *   iodepth   1, 32
 *   direct    0, 1
 *
 * 16 jobs of 4 MiB each, run one after another (stonewall) by one fio
 * process; every job must end with error 0 and must have read its data
 * back.  Six more jobs add verify_backlog + fsync, iodepth 128,
 * registered buffers and files (fixedbufs, registerfiles), and SQPOLL
 * rings (sqthread_poll, with and without registerfiles).
 * Control: the same fio with the EPERM filter alone must fail.
 * Skipped when fio is not installed.
 */
#include "run_util.h"

#define FIO "/usr/bin/fio"

static const char *const rws[] = { "randwrite", "randrw" };
static const char *const verifies[] = { "crc32c", "md5" };
static const int depths[] = { 1, 32 };

static int write_jobs(const char *path, const char *dir)
{
	FILE *f = fopen(path, "w");
	int n = 0;

	if (!f)
		return -1;
	fprintf(f, "[global]\nioengine=io_uring\nsize=4m\nbs=4k\n"
		"verify_fatal=1\ndo_verify=1\nverify_state_save=0\n"
		"directory=%s\nstonewall\n", dir);
	for (int r = 0; r < 2; r++)
		for (int v = 0; v < 2; v++)
			for (int d = 0; d < 2; d++)
				for (int direct = 0; direct < 2; direct++) {
					fprintf(f,
						"[%s-%s-qd%d-direct%d]\nrw=%s\n"
						"verify=%s\niodepth=%d\n"
						"direct=%d\n",
						rws[r], verifies[v], depths[d],
						direct, rws[r], verifies[v],
						depths[d], direct);
					n++;
				}
	fprintf(f, "[randwrite-crc32c-qd32-backlog-fsync]\nrw=randwrite\n"
		"verify=crc32c\niodepth=32\nverify_backlog=64\nfsync=8\n");
	fprintf(f, "[randwrite-md5-qd128-direct1]\nrw=randwrite\nverify=md5\n"
		"iodepth=128\ndirect=1\n");
	/* registered buffers and files (REGISTER_BUFFERS/FILES) */
	fprintf(f, "[randrw-crc32c-qd32-direct1-fixedbufs-registerfiles]\n"
		"rw=randrw\nverify=crc32c\niodepth=32\ndirect=1\n"
		"fixedbufs=1\nregisterfiles=1\n");
	fprintf(f, "[randwrite-md5-qd32-direct0-fixedbufs]\nrw=randwrite\n"
		"verify=md5\niodepth=32\nfixedbufs=1\n");
	/* SQPOLL rings: fio's sqthread_poll (SQ_WAKEUP when the thread
	 * sleeps), with plain and registered files */
	fprintf(f, "[randrw-crc32c-qd32-direct0-sqpoll]\nrw=randrw\n"
		"verify=crc32c\niodepth=32\nsqthread_poll=1\n");
	fprintf(f, "[randwrite-md5-qd32-direct1-sqpoll-registerfiles]\n"
		"rw=randwrite\nverify=md5\niodepth=32\ndirect=1\n"
		"sqthread_poll=1\nregisterfiles=1\n");
	n += 6;
	fclose(f);
	return n;
}

/* fio --output-format=terse (v3): name;...;error;read_kb;... per job */
static int check_terse(const char *path, int want)
{
	char line[8192];
	int jobs = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *fld[8], *save, *p = line;
		int n = 0;

		if (strncmp(line, "3;", 2))
			continue;
		while (n < 8 && (fld[n] = strtok_r(p, ";", &save))) {
			p = NULL;
			n++;
		}
		if (n < 6)
			continue;
		jobs++;
		RU_CHECK(!strcmp(fld[4], "0"), "job %s: error %s", fld[2],
			 fld[4]);
		RU_CHECK(atol(fld[5]) > 0, "job %s read nothing back", fld[2]);
		fprintf(stderr, "  %-36s error=%s read_kb=%s\n", fld[2],
			fld[4], fld[5]);
	}
	fclose(f);
	RU_CHECK(jobs == want, "%d jobs reported, want %d", jobs, want);
	return 0;
}

int main(void)
{
	char dir[] = "/var/tmp/uuring-fio-XXXXXX";
	char jobs[PATH_MAX], out[PATH_MAX], arg[PATH_MAX + 32];
	double t0;
	int n, st;

	if (access(FIO, X_OK)) {
		fprintf(stderr, "skip: fio not installed\n");
		return RU_SKIP;
	}
	if (!ru_tool()) {
		fprintf(stderr, "skip: no usable uuring tool (not built, or a sanitizer build)\n");
		return RU_SKIP;
	}
	if (!mkdtemp(dir))
		return 2;
	snprintf(jobs, sizeof(jobs), "%s/jobs.fio", dir);
	snprintf(out, sizeof(out), "%s/out.terse", dir);
	n = write_jobs(jobs, dir);
	if (n < 0)
		return 2;

	/* control: fio's io_uring engine cannot start without uuring */
	{
		const char *v[] = { FIO, "--name=control", "--ioengine=io_uring",
				    "--size=64k", "--rw=write", "--directory",
				    dir, NULL };

		st = ru_run_ex((char *const *)v, 30, true);
		RU_CHECK(st != 0, "control: fio ran with io_uring blocked");
	}

	/* fio writes state files into its working directory */
	if (chdir(dir))
		return 2;
	t0 = ru_now();
	snprintf(arg, sizeof(arg), "--output=%s", out);
	{
		const char *opts[] = { "--block-kernel-uring", NULL };
		const char *args[] = { FIO, "--output-format=terse",
				       "--terse-version=3", arg, jobs, NULL };

		st = ru_uuring_run(opts, args, 120);
	}
	fprintf(stderr, "fio under uuring run: status %d, %d jobs, %.1f s\n",
		st, n, ru_now() - t0);
	RU_CHECK(st == 0, "fio exit status %d", st);
	check_terse(out, n);

	if (chdir("/")) {
		/* nothing */
	}
	snprintf(arg, sizeof(arg), "rm -rf '%s'", dir);
	if (system(arg)) {
		/* leave it */
	}
	return ru_failures ? 1 : 0;
}
