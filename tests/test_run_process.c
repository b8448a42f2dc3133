// SPDX-License-Identifier: MIT
/*
 * Process life under `uuring run --block-kernel-uring` (raw system calls,
 * so the trap path): one payload per case, each in a fresh process.
 *
 *   fork          the child gets -EPERM on the parent's ring (design, T12)
 *                 and can make and use its own; the parent is unaffected
 *   exec          exec of a dynamic program: uuring again, and the filter
 *                 is not stacked a second time (Seccomp_filters unchanged)
 *   envclear      execve with an empty environment: LD_PRELOAD put back
 *   vfork         vfork + execve
 *   spawn         posix_spawn with an empty environment
 *   system        system(3) (glibc's internal posix_spawn, all signals
 *                 blocked in the child), through /bin/sh
 *   thread        a thread started before the first ring
 *   sigsys        the program installs its own SIGSYS handler (sigaction
 *                 and signal()): uuring keeps serving, and a SIGSYS that
 *                 is not uuring's reaches the program's handler
 *   sigmask       the program blocks every signal (sigprocmask,
 *                 pthread_sigmask): SIGSYS stays deliverable
 *   eintr         a signal during a GETEVENTS wait: -EINTR, no hang
 *   exit-inflight the program exits with a read parked on an empty pipe
 *                 and an IOSQE_ASYNC one in io-wq: it exits, promptly
 *   longjmp       a signal handler siglongjmps out of a GETEVENTS wait
 *                 (on the trap path the handler runs nested in enter),
 *                 then the ring is used again.  KNOWN ENGINE LIMITATION
 *                 (docs/compatibility.md R6): the abandoned waiter stays
 *                 on the ring's list and the next post loops on it; the
 *                 case is run with a 3 s limit and reported, not counted
 *   stopcont      SIGSTOP and SIGCONT of a process waiting in enter for a
 *                 read parked on a pipe and an IOSQE_ASYNC one in io-wq,
 *                 the data written while it is stopped: the wait resumes
 *                 (-EINTR allowed, as the kernel's signal(7) stop rule),
 *                 both CQEs carry the data
 *   exec-ring     exec with a ring open and a read parked on a pipe: the
 *                 ring fd is closed in the new image (O_CLOEXEC), enter on
 *                 its number is -EBADF, no socket or io_uring file is left
 *                 open, and nothing of the old image takes a byte written
 *                 to the pipe afterwards (the read ended at the exec)
 *   kill-inflight a forked child that shares the parent's ring is killed
 *                 (SIGKILL) with a read parked on a pipe and an
 *                 IOSQE_ASYNC one: once the pipes are written both end
 *                 -ECANCELED on the ring, nothing read (the kernel
 *                 cancels a dead task's polled requests at their wakeup,
 *                 uuring at the death); the parent keeps using the ring;
 *                 no process outlives the child (the parent is its
 *                 subreaper)
 *   exec-static   exec of a fully static program (T11): it gets EPERM for
 *                 io_uring like without uuring, and does not die of SIGSYS
 *   static-refuse the same with UURING_STATIC_EXEC=refuse: execve fails
 *                 with EPERM
 */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <sys/prctl.h>
#include <spawn.h>
#include <sys/time.h>

#include "run_ring.h"

extern char **environ;

static int exec_self(const char *what, char *const envp[])
{
	char *argv[] = { (char *)ru_self_exe(), (char *)what, NULL };

	execve(argv[0], argv, envp);
	fprintf(stderr, "execve: %s\n", strerror(errno));
	return 126;
}

static int wait_ok(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "child status %#x\n", st);
		return 0;
	}
	return 1;
}

static int case_ring(void)
{
	int ret = ring_nop_once();

	if (ret)
		fprintf(stderr, "ring nop: %s\n", strerror(-ret));
	return ret ? 1 : 0;
}

static int case_fork(void)
{
	struct ring r;
	struct io_uring_sqe *sqe;
	pid_t pid;
	int ret = ring_init(&r, 4);

	if (ret)
		return 2;
	pid = fork();
	if (pid == 0) {
		struct io_uring_cqe cqe;

		/* the parent's ring is usable in the child, as on the
		 * kernel (src/xproc/xproc.c) */
		sqe = get_sqe(&r);
		sqe->opcode = IORING_OP_NOP;
		sqe->user_data = 0x77;
		ret = enter(r.fd, 1, 1, 0, NULL, 0);
		if (ret != 1 || pop(&r, &cqe) || cqe.user_data != 0x77) {
			fprintf(stderr, "child nop on parent ring: %d\n",
				ret);
			_exit(1);
		}
		_exit(case_ring());
	}
	RU_CHECK(wait_ok(pid), "fork child");
	sqe = get_sqe(&r);
	sqe->opcode = IORING_OP_NOP;
	sqe->user_data = 0x78;
	ret = enter(r.fd, 1, 1, 0, NULL, 0);
	RU_CHECK(ret == 1, "parent nop after fork: %d", ret);
	{
		struct io_uring_cqe cqe;

		RU_CHECK(!pop(&r, &cqe) && cqe.user_data == 0x78,
			 "parent's CQE after the child's");
	}
	return ru_failures;
}

/*
 * A child that execs with a TIMEOUT linked to a NOP in flight on its
 * parent's ring: both are cancelled at the exec, as the kernel cancels a
 * task's requests then (liburing's timeout, test_timeout_link_cancel);
 * the parent reaps them.  Under `uuring run` only: the engine sees the
 * exec through the preload's execve.
 */
static int case_fork_exec(void)
{
	struct __kernel_timespec ts = { 10, 0 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe = { 0 };
	struct ring r;
	int i, ret = ring_init(&r, 4);
	pid_t pid;

	if (ret)
		return 2;
	pid = fork();
	if (pid == 0) {
		char *argv[] = { (char *)"/bin/true", NULL };

		sqe = get_sqe(&r);
		sqe->opcode = IORING_OP_TIMEOUT;
		sqe->addr = (uint64_t)(uintptr_t)&ts;
		sqe->len = 1;
		sqe->flags = IOSQE_IO_LINK;
		sqe->user_data = 1;
		sqe = get_sqe(&r);
		sqe->opcode = IORING_OP_NOP;
		sqe->user_data = 2;
		if (enter(r.fd, 2, 0, 0, NULL, 0) != 2)
			_exit(3);
		execv(argv[0], argv);
		_exit(4);
	}
	RU_CHECK(wait_ok(pid), "fork child");
	for (i = 0; i < 2; i++) {
		struct __kernel_timespec t = { 2, 0 };
		struct io_uring_getevents_arg arg = {
			.ts = (uint64_t)(uintptr_t)&t,
		};

		ret = enter(r.fd, 0, 1, IORING_ENTER_EXT_ARG, &arg, sizeof(arg));
		RU_CHECK(ret == 0, "wait for the child's CQE %d: %d", i, ret);
		RU_CHECK(!pop(&r, &cqe) && cqe.user_data == (uint64_t)i + 1 &&
				 cqe.res == -ECANCELED,
			 "child's CQE %d: ud %llu res %d", i,
			 (unsigned long long)cqe.user_data, cqe.res);
	}
	return ru_failures;
}

static int case_exec(void)
{
	char n[32];
	int i = 0;

	snprintf(n, sizeof(n), "FILTERS=%d", ru_seccomp_filters());
	/* keep the environment, add FILTERS */
	for (; environ[i]; i++)
		;
	char *env2[i + 2];

	memcpy(env2, environ, (size_t)i * sizeof(char *));
	env2[i] = n;
	env2[i + 1] = NULL;
	return exec_self("exec2", env2);
}

static int case_exec2(void)
{
	const char *f = getenv("FILTERS");

	RU_CHECK(f && atoi(f) == ru_seccomp_filters(),
		 "seccomp filters before exec %s, after %d", f ? f : "?",
		 ru_seccomp_filters());
	return case_ring() || ru_failures;
}

static int case_envclear(void)
{
	char *envp[] = { NULL };

	return exec_self("ring", envp);
}

static int case_vfork(void)
{
	char *argv[] = { (char *)ru_self_exe(), (char *)"ring", NULL };
	pid_t pid = vfork();

	if (pid == 0) {
		execv(argv[0], argv);
		_exit(126);
	}
	return wait_ok(pid) ? 0 : 1;
}

static int case_spawn(void)
{
	char *argv[] = { (char *)ru_self_exe(), (char *)"ring", NULL };
	char *envp[] = { NULL };
	pid_t pid;
	int ret = posix_spawn(&pid, argv[0], NULL, NULL, argv, envp);

	RU_CHECK(ret == 0, "posix_spawn: %s", strerror(ret));
	return ret || !wait_ok(pid);
}

static int case_system(void)
{
	char cmd[PATH_MAX + 64];
	int st;

	snprintf(cmd, sizeof(cmd), "exec '%s' ring", ru_self_exe());
	st = system(cmd);
	RU_CHECK(st == 0, "system: status %#x", st);
	return st != 0;
}

static void *thread_fn(void *arg)
{
	pthread_barrier_t *b = arg;

	pthread_barrier_wait(b);
	return (void *)(intptr_t)case_ring();
}

static int case_thread(void)
{
	pthread_barrier_t b;
	pthread_t t;
	void *res;

	pthread_barrier_init(&b, NULL, 2);
	if (pthread_create(&t, NULL, thread_fn, &b))
		return 2;
	pthread_barrier_wait(&b);
	pthread_join(t, &res);
	return res != NULL;
}

static volatile sig_atomic_t own_sigsys;

static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	(void)ctx;
	own_sigsys++;
}

static void on_sigsys2(int sig)
{
	(void)sig;
	own_sigsys += 10;
}

static int case_sigsys(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigfillset(&sa.sa_mask);
	RU_CHECK(!sigaction(SIGSYS, &sa, NULL), "sigaction");
	RU_CHECK(!sigaction(SIGSYS, NULL, &old) &&
		 old.sa_sigaction == on_sigsys,
		 "sigaction does not report the program's handler");
	RU_CHECK(case_ring() == 0, "ring with own SIGSYS handler");
	RU_CHECK(own_sigsys == 0, "uuring's traps reached the handler");
	raise(SIGSYS);
	RU_CHECK(own_sigsys == 1, "own SIGSYS not delivered (%d)",
		 (int)own_sigsys);
	/* signal() reaches the kernel's rt_sigaction from inside libc */
	RU_CHECK(signal(SIGSYS, on_sigsys2) != SIG_ERR, "signal()");
	RU_CHECK(case_ring() == 0, "ring after signal(SIGSYS)");
	raise(SIGSYS);
	RU_CHECK(own_sigsys == 11, "signal() handler: %d", (int)own_sigsys);
	return ru_failures;
}

static void *mask_thread(void *arg)
{
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	return (void *)(intptr_t)case_ring();
}

static int case_sigmask(void)
{
	sigset_t all, cur;
	pthread_t t;
	void *res;

	sigfillset(&all);
	RU_CHECK(!sigprocmask(SIG_SETMASK, &all, NULL), "sigprocmask");
	sigprocmask(SIG_SETMASK, NULL, &cur);
	RU_CHECK(!sigismember(&cur, SIGSYS), "SIGSYS got blocked");
	RU_CHECK(case_ring() == 0, "ring with all signals blocked");
	if (pthread_create(&t, NULL, mask_thread, NULL))
		return 2;
	pthread_join(t, &res);
	RU_CHECK(res == NULL, "ring in a thread with all signals blocked");
	return ru_failures;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int case_eintr(void)
{
	struct itimerval it = { .it_value = { .tv_usec = 50000 } };
	struct sigaction sa;
	struct ring r;
	double t0, dt;
	int ret;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm; /* no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	if (ring_init(&r, 4))
		return 2;
	setitimer(ITIMER_REAL, &it, NULL);
	t0 = ru_now();
	ret = enter(r.fd, 0, 1, 0, NULL, 0);
	dt = ru_now() - t0;
	RU_CHECK(ret == -EINTR, "wait interrupted: %d", ret);
	RU_CHECK(dt < 5, "wait took %.2f s", dt);
	return ru_failures;
}

static int case_exit_inflight(void)
{
	struct io_uring_sqe *sqe;
	static char buf[2][64];
	int p[2][2];
	struct ring r;

	if (ring_init(&r, 4) || pipe(p[0]) || pipe(p[1]))
		return 2;
	for (int i = 0; i < 2; i++) {
		sqe = get_sqe(&r);
		sqe->opcode = IORING_OP_READ;
		sqe->fd = p[i][0];
		sqe->addr = (uintptr_t)buf[i];
		sqe->len = sizeof(buf[i]);
		sqe->flags = i ? IOSQE_ASYNC : 0;
	}
	RU_CHECK(enter(r.fd, 2, 0, 0, NULL, 0) == 2, "submit");
	return ru_failures; /* exit with both reads in flight */
}

/* a READ of fd into buf, user_data ud */
static void prep_read(struct ring *r, int fd, void *buf, unsigned int len,
		      uint64_t ud, uint8_t flags)
{
	struct io_uring_sqe *sqe = get_sqe(r);

	sqe->opcode = IORING_OP_READ;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)buf;
	sqe->len = len;
	sqe->user_data = ud;
	sqe->flags = flags;
}

/*
 * The child of stopcont: two reads in flight, told to the parent through
 * sync, then a wait for both.  A stop signal ends an io_uring_enter wait
 * with -EINTR on the kernel as it ends epoll_wait's (signal(7)), whether
 * it came before or during the wait: waited again, as liburing does.
 */
static int stopcont_child(int a, int b, int sync)
{
	static char buf[2][16];
	struct io_uring_cqe cqe;
	struct ring r;
	int got = 0, ret, eintr = 0;

	if (ring_init(&r, 4))
		_exit(2);
	prep_read(&r, a, buf[0], sizeof(buf[0]), 1, 0);
	prep_read(&r, b, buf[1], sizeof(buf[1]), 2, IOSQE_ASYNC);
	if (enter(r.fd, 2, 0, 0, NULL, 0) != 2 || write(sync, "r", 1) != 1)
		_exit(3);
	while (got < 2) {
		ret = enter(r.fd, 0, 2 - got, 0, NULL, 0);
		if (ret == -EINTR && eintr++ < 8)
			continue;
		RU_CHECK(ret == 0, "wait: %d", ret);
		if (ret)
			break;
		while (!pop(&r, &cqe)) {
			int i = (int)cqe.user_data - 1;
			const char *want = i ? "BB" : "A";

			RU_CHECK(i == 0 || i == 1, "ud %llu",
				 (unsigned long long)cqe.user_data);
			if (i != 0 && i != 1)
				continue;
			RU_CHECK(cqe.res == (int)strlen(want) &&
					 !memcmp(buf[i], want, strlen(want)),
				 "read %d: res %d", i, cqe.res);
			got++;
		}
	}
	fprintf(stderr, "stopcont: %d CQEs, %d EINTR\n", got, eintr);
	return ru_failures;
}

static int case_stopcont(void)
{
	int a[2], b[2], sync[2], st;
	char c;
	pid_t pid;

	if (pipe(a) || pipe(b) || pipe(sync))
		return 2;
	pid = fork();
	if (pid == 0)
		_exit(stopcont_child(a[0], b[0], sync[1]) ? 1 : 0);
	RU_CHECK(read(sync[0], &c, 1) == 1, "the child's reads in flight");
	RU_CHECK(!kill(pid, SIGSTOP), "SIGSTOP");
	RU_CHECK(waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st),
		 "child stopped: %#x", st);
	/* the data comes while the whole process (its engine threads
	 * too) is stopped */
	RU_CHECK(write(a[1], "A", 1) == 1 && write(b[1], "BB", 2) == 2,
		 "write the pipes");
	RU_CHECK(!kill(pid, SIGCONT), "SIGCONT");
	RU_CHECK(wait_ok(pid), "child after SIGCONT");
	return ru_failures;
}

static int case_kill_inflight(void)
{
	static char buf[2][16];
	struct __kernel_timespec t = { 5, 0 };
	struct io_uring_getevents_arg arg = { .ts = (uint64_t)(uintptr_t)&t };
	struct io_uring_cqe cqe;
	struct io_uring_sqe *sqe;
	int a[2], b[2], sync[2], st, got = 0, ret, i;
	struct ring r;
	char c;
	pid_t pid;

	if (ring_init(&r, 8) || pipe(a) || pipe(b) || pipe(sync))
		return 2;
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid = fork();
	if (pid == 0) {
		prep_read(&r, a[0], buf[0], sizeof(buf[0]), 1, 0);
		prep_read(&r, b[0], buf[1], sizeof(buf[1]), 2, IOSQE_ASYNC);
		if (enter(r.fd, 2, 0, 0, NULL, 0) != 2 ||
		    write(sync[1], "r", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	RU_CHECK(read(sync[0], &c, 1) == 1, "the child's reads in flight");
	RU_CHECK(!kill(pid, SIGKILL), "SIGKILL");
	RU_CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
			 WTERMSIG(st) == SIGKILL,
		 "child killed: %#x", st);
	/* orphans of the child are the subreaper's now: none */
	RU_CHECK(waitpid(-1, &st, WNOHANG) < 0 && errno == ECHILD,
		 "a process outlived the child");
	/*
	 * The kernel cancels a dead task's polled requests when they are
	 * woken (io_should_terminate_tw: -ECANCELED, nothing read), uuring
	 * at the death (compatibility #2): after these writes, both.
	 */
	RU_CHECK(write(a[1], "A", 1) == 1 && write(b[1], "B", 1) == 1,
		 "write the pipes");
	while (got < 2) {
		ret = enter(r.fd, 0, 1, IORING_ENTER_EXT_ARG, &arg,
			    sizeof(arg));
		RU_CHECK(ret == 0, "wait for the child's CQEs: %d", ret);
		if (ret)
			break;
		while (!pop(&r, &cqe)) {
			RU_CHECK((cqe.user_data == 1 || cqe.user_data == 2) &&
					 cqe.res == -ECANCELED,
				 "child's read %llu: res %d",
				 (unsigned long long)cqe.user_data, cqe.res);
			got++;
		}
	}
	/* the ring carries on in the parent */
	sqe = get_sqe(&r);
	sqe->opcode = IORING_OP_NOP;
	sqe->user_data = 3;
	ret = enter(r.fd, 1, 1, 0, NULL, 0);
	RU_CHECK(ret == 1 && !pop(&r, &cqe) && cqe.user_data == 3 &&
			 cqe.res == 0,
		 "parent's NOP after the kill: %d", ret);
	/* nothing read for the dead child */
	for (i = 0; i < 2; i++)
		RU_CHECK(read(i ? b[0] : a[0], &c, 1) == 1 &&
				 c == (i ? 'B' : 'A'),
			 "byte %d still in its pipe", i);
	return ru_failures;
}

/* exec-ring: a ring and a read parked on a pipe, then exec */
static int case_exec_ring(void)
{
	static char buf[16];
	char env[3][32];
	char *envp[] = { env[0], env[1], env[2], NULL };
	struct ring r;
	int p[2];

	if (ring_init(&r, 4) || pipe(p))
		return 2;
	prep_read(&r, p[0], buf, sizeof(buf), 1, 0);
	RU_CHECK(enter(r.fd, 1, 0, 0, NULL, 0) == 1, "submit the read");
	snprintf(env[0], sizeof(env[0]), "RINGFD=%d", r.fd);
	snprintf(env[1], sizeof(env[1]), "PIPE=%d,%d", p[0], p[1]);
	/* uuring run puts LD_PRELOAD back (case envclear) */
	snprintf(env[2], sizeof(env[2]), "X=1");
	return exec_self("exec-ring2", envp);
}

/* files of the process that are sockets or io_uring files */
static int count_ring_like_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	char path[300], target[256];
	ssize_t len;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		target[len > 0 ? len : 0] = 0;
		if (!strncmp(target, "socket:", 7) ||
		    strstr(target, "io_uring")) {
			fprintf(stderr, "exec-ring: fd %s: %s\n", de->d_name,
				target);
			n++;
		}
	}
	closedir(d);
	return n;
}

static int case_exec_ring2(void)
{
	const char *rf = getenv("RINGFD"), *pp = getenv("PIPE");
	int fd = rf ? atoi(rf) : -1, pr = -1, pw = -1, ret;
	char c = 0;

	if (!pp || sscanf(pp, "%d,%d", &pr, &pw) != 2 || fd < 0)
		return 2;
	RU_CHECK(fcntl(fd, F_GETFD) < 0 && errno == EBADF,
		 "ring fd %d open after exec", fd);
	ret = enter(fd, 0, 0, 0, NULL, 0);
	RU_CHECK(ret == -EBADF, "enter on the old ring fd: %d", ret);
	RU_CHECK(count_ring_like_fds() == 0, "ring files left after exec");
	/* the parked read is gone: the byte stays in the pipe */
	RU_CHECK(write(pw, "z", 1) == 1, "write the pipe");
	RU_CHECK(read(pr, &c, 1) == 1 && c == 'z',
		 "the byte written after the exec: %c", c);
	return case_ring() || ru_failures;
}

static sigjmp_buf jb;

static void on_alarm_jump(int sig)
{
	(void)sig;
	siglongjmp(jb, 1);
}

static int case_longjmp(void)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;
	struct sigaction sa;
	struct ring r;
	volatile int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm_jump;
	sigaction(SIGALRM, &sa, NULL);
	if (ring_init(&r, 4))
		return 2;
	for (i = 0; i < 5; i++) {
		if (!sigsetjmp(jb, 1)) {
			struct itimerval it = { .it_value = { .tv_usec = 2000 } };

			setitimer(ITIMER_REAL, &it, NULL);
			enter(r.fd, 0, 1, 0, NULL, 0); /* nothing in flight */
		}
	}
	for (i = 0; i < 100; i++) {
		sqe = get_sqe(&r);
		sqe->opcode = IORING_OP_NOP;
		if (enter(r.fd, 1, 1, 0, NULL, 0) != 1 || pop(&r, &cqe))
			return 1;
	}
	return 0;
}

static int case_exec_static(bool refuse)
{
	char path[PATH_MAX + 32];
	char *argv[] = { path, NULL };

	snprintf(path, sizeof(path), "%s/run_static_helper", ru_self_dir());
	if (refuse)
		setenv("UURING_STATIC_EXEC", "refuse", 1);
	execv(path, argv);
	if (refuse && errno == EPERM)
		return 0;
	fprintf(stderr, "execv %s: %s\n", path, strerror(errno));
	return 1;
}

static const struct {
	const char *name;
	int (*fn)(void);
} cases[] = {
	{ "fork", case_fork },
	{ "fork-exec", case_fork_exec },
	{ "exec", case_exec },
	{ "envclear", case_envclear },
	{ "vfork", case_vfork },
	{ "spawn", case_spawn },
	{ "system", case_system },
	{ "thread", case_thread },
	{ "sigsys", case_sigsys },
	{ "sigmask", case_sigmask },
	{ "eintr", case_eintr },
	{ "exit-inflight", case_exit_inflight },
	{ "stopcont", case_stopcont },
	{ "exec-ring", case_exec_ring },
	{ "kill-inflight", case_kill_inflight },
};

int main(int argc, char **argv)
{
	char helper[PATH_MAX + 32];
	int st;

	if (argc > 1) {
		if (!strcmp(argv[1], "ring"))
			return case_ring();
		if (!strcmp(argv[1], "exec2"))
			return case_exec2();
		if (!strcmp(argv[1], "exec-ring2"))
			return case_exec_ring2() ? 1 : 0;
		if (!strcmp(argv[1], "exec-static"))
			return case_exec_static(false);
		if (!strcmp(argv[1], "static-refuse"))
			return case_exec_static(true);
		if (!strcmp(argv[1], "longjmp"))
			return case_longjmp();
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			if (!strcmp(argv[1], cases[i].name))
				return cases[i].fn() ? 1 : 0;
		return 2;
	}
	if (!ru_tool()) {
		fprintf(stderr, "skip: no usable uuring tool (not built, or a sanitizer build)\n");
		return RU_SKIP;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		st = ru_payload(cases[i].name, NULL, 30);
		fprintf(stderr, "%-14s %s\n", cases[i].name, st ? "FAIL" : "ok");
		if (st)
			ru_describe(cases[i].name, st);
		RU_CHECK(st == 0, "case %s", cases[i].name);
	}
	/* the process faults on the kernel's io_uring too, where it works:
	 * the payloads hold no rule of uuring's own */
	if (ring_nop_once() == 0) {
		static const char *const kcases[] = { "stopcont", "exec-ring",
						      "kill-inflight" };

		for (size_t i = 0; i < 3; i++) {
			char *argv[] = { (char *)ru_self_exe(),
					 (char *)kcases[i], NULL };

			st = ru_run(argv, 30);
			fprintf(stderr, "%-14s %s (kernel)\n", kcases[i],
				st ? "FAIL" : "ok");
			RU_CHECK(st == 0, "case %s on the kernel", kcases[i]);
		}
	}
	/* an abandoned wait (compatibility R6) must not hurt the next one */
	st = ru_payload("longjmp", NULL, 10);
	fprintf(stderr, "%-14s %s\n", "longjmp", st ? "FAIL" : "ok");
	if (st)
		ru_describe("longjmp", st);
	RU_CHECK(st == 0, "case longjmp");
	snprintf(helper, sizeof(helper), "%s/run_static_helper", ru_self_dir());
	if (access(helper, X_OK)) {
		fprintf(stderr, "exec-static: no static helper (no libc.a?)\n");
	} else {
		st = ru_payload("exec-static", NULL, 30);
		fprintf(stderr, "%-14s %s\n", "exec-static", st ? "FAIL" : "ok");
		if (st)
			ru_describe("exec-static", st);
		RU_CHECK(st == 0, "case exec-static");
		st = ru_payload("static-refuse", NULL, 30);
		fprintf(stderr, "%-14s %s\n", "static-refuse",
			st ? "FAIL" : "ok");
		RU_CHECK(st == 0, "case static-refuse");
	}
	return ru_failures ? 1 : 0;
}
