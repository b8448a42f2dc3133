// SPDX-License-Identifier: MIT
/*
 * A CQE that cannot even go to the overflow backlog is dropped (T14): the
 * kernel does this when allocating the backlog entry fails, which cannot
 * be provoked from user space, so this test is uuring-only and makes the
 * allocation fail with UURING_FAULT_OCQE_ALLOC=1 (it re-executes itself
 * with that set: the knob is read when the library loads).
 *
 * What the kernel does, and this checks: cq.overflow counts the dropped
 * CQEs, IORING_SQ_CQ_OVERFLOW stays clear (no backlog), a wait that
 * ends with CQEs in the ring returns 0, the first wait that has to sleep
 * and ends with the CQ empty returns -EBADR (io_cqring_wait's
 * IO_CHECK_CQ_DROPPED_BIT), and the next one waits normally
 * (io_uring_enter clears the bit once -EBADR was returned).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tcheck.h"
#include "tring.h"
#include "uuring.h"

static void drop_and_report(unsigned int setup_flags)
{
	struct io_uring_params p;
	struct uuring_stats st;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	struct tcqe cqes[8];
	struct tring r;
	unsigned int got;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = setup_flags;
	ret = tring_init_params(&r, &backend_uuring, 2, &p); /* cq 4 */
	CHECK(ret == 0, "setup 0x%x: %d", setup_flags, ret);
	if (ret)
		return;
	CHECK(r.cq_entries == 4, "cq entries %u", r.cq_entries);
	/* six NOPs into a 4-entry CQ, nothing reaped: two are dropped */
	for (unsigned int round = 0; round < 3; round++) {
		tring_prep_nop(tring_get_sqe(&r), 1 + 2 * round);
		tring_prep_nop(tring_get_sqe(&r), 2 + 2 * round);
		ret = tring_submit(&r);
		CHECK(ret == 2, "flags 0x%x round %u: submitted %d",
		      setup_flags, round, ret);
	}
	CHECK(__atomic_load_n(r.cq_overflow, __ATOMIC_ACQUIRE) == 2,
	      "flags 0x%x: cq overflow %u, want 2", setup_flags,
	      __atomic_load_n(r.cq_overflow, __ATOMIC_ACQUIRE));
	CHECK(!(tring_sq_flags(&r) & IORING_SQ_CQ_OVERFLOW),
	      "flags 0x%x: CQ_OVERFLOW set without a backlog", setup_flags);
	ret = uuring_get_stats(r.fd, &st, sizeof(st));
	CHECK(ret == (int)sizeof(st) && st.cqes_lost == 2 &&
		      st.cqes_overflowed == 0,
	      "flags 0x%x: lost %llu overflowed %llu", setup_flags,
	      (unsigned long long)st.cqes_lost,
	      (unsigned long long)st.cqes_overflowed);
	/* enough CQEs: no wait, no -EBADR */
	ret = tring_wait_ext(&r, 0, 1, 0, NULL, NULL, 0);
	CHECK(ret == 0, "flags 0x%x: wait for 1 of 4 ready: %d", setup_flags,
	      ret);
	/* with CQEs in the ring a wait ends in 0 whatever stopped it (the
	 * kernel's io_cqring_wait returns 0 unless the CQ is empty), so
	 * the drop is not reported yet */
	got = tring_reap(&r, cqes, 1);
	CHECK(got == 1 && cqes[0].user_data == 1, "flags 0x%x: first CQE",
	      setup_flags);
	ret = tring_wait_ext(&r, 0, 4, 0, &ts, NULL, 0);
	CHECK(ret == 0, "flags 0x%x: wait for 4 of 3 ready: %d, want 0",
	      setup_flags, ret);
	/* the other three that fit, in order */
	got = tring_reap(&r, cqes, 8);
	CHECK(got == 3, "flags 0x%x: reaped %u", setup_flags, got);
	for (unsigned int i = 0; i < got; i++)
		CHECK(cqes[i].user_data == i + 2 && cqes[i].res == 0,
		      "flags 0x%x: cqe %u: ud %llu res %d", setup_flags, i,
		      (unsigned long long)cqes[i].user_data, cqes[i].res);
	/* CQ empty: the first wait reports the drop, once */
	ret = tring_wait_ext(&r, 0, 1, 0, &ts, NULL, 0);
	CHECK(ret == -EBADR, "flags 0x%x: first wait, CQ empty: %d, want -EBADR",
	      setup_flags, ret);
	ret = tring_wait_ext(&r, 0, 1, 0, &ts, NULL, 0);
	CHECK(ret == -ETIME, "flags 0x%x: second wait: %d, want -ETIME",
	      setup_flags, ret);
	/* the ring goes on */
	tring_prep_nop(tring_get_sqe(&r), 9);
	ret = tring_submit_and_wait(&r, 1);
	CHECK(ret == 1, "flags 0x%x: after: %d", setup_flags, ret);
	got = tring_reap(&r, cqes, 8);
	CHECK(got == 1 && cqes[0].user_data == 9, "flags 0x%x: after: %u CQEs",
	      setup_flags, got);
	tring_exit(&r);
}

int main(int argc, char **argv)
{
	(void)argc;
	if (!getenv("UURING_FAULT_OCQE_ALLOC")) {
		setenv("UURING_FAULT_OCQE_ALLOC", "1", 1);
		execv("/proc/self/exe", argv);
		perror("execv");
		return 1;
	}
	drop_and_report(0);
	drop_and_report(IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER);
	printf("%s test_cq_drop\n", tcheck_failures ? "FAIL" : "ok");
	return tcheck_failures ? 1 : 0;
}
