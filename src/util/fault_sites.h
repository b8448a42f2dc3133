/* SPDX-License-Identifier: MIT */
/*
 * The engine's fault-injection sites (util/fault.h): one line each, the
 * name UURING_FAULT takes and what fails there.  Shared with tools/uuring.c
 * (`uuring faults` lists them).
 */
#ifndef UURING_FAULT_SITES_H
#define UURING_FAULT_SITES_H

#define UU_FAULT_SITES(X)                                                    \
	X(REQ_ALLOC, "req_alloc",                                            \
	  "a request's move to the heap (links, async work): -ENOMEM CQE")  \
	X(OCQE_ALLOC, "ocqe_alloc",                                          \
	  "an overflow CQE's allocation: the CQE is dropped and counted")    \
	X(WORKER_CREATE, "worker_create",                                    \
	  "an io-wq worker thread (EAGAIN); work waits for a running worker")\
	X(THREAD_START, "thread_start",                                      \
	  "an engine thread (poller, timer, SQPOLL, futex waiter, ...)")     \
	X(EVENTFD, "eventfd",                                                \
	  "an engine eventfd (poller kick, waiter wake, futex, fork journal)")\
	X(EPOLL_CREATE, "epoll_create",                                      \
	  "the poller's or the timer thread's epoll instance")               \
	X(TIMERFD, "timerfd", "the timer thread's timerfds")                 \
	X(AIO_SETUP, "aio_setup",                                            \
	  "the Linux AIO context (O_DIRECT I/O then goes to io-wq)")         \
	X(RING_MMAP, "ring_mmap",                                            \
	  "ring memory at setup or resize: -ENOMEM")                         \
	X(EPOLL_WAIT_EINTR, "epoll_wait_eintr",                              \
	  "EINTR from the poller's and timer thread's epoll_wait: wait again")\
	X(PPOLL_EINTR, "ppoll_eintr",                                        \
	  "EINTR from ppoll: a CQ wait ends in -EINTR, the poller looks again")\
	X(FUTEX_WAIT_EINTR, "futex_wait_eintr",                              \
	  "EINTR from the io-wq, SQPOLL and poller futex waits: a spurious wake")\
	X(AIO_EINTR, "aio_eintr",                                            \
	  "EINTR from io_submit and io_getevents: retried")                  \
	X(AIO_EAGAIN, "aio_eagain",                                          \
	  "EAGAIN from io_submit (no AIO resources): the requests go to io-wq")\
	X(EVENTFD_EAGAIN, "eventfd_eagain",                                  \
	  "EAGAIN from the engine's eventfd/timerfd reads (nothing taken) and"\
	  " eventfd writes (counter full: the write is made, readable)")

#endif
