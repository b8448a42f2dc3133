/* SPDX-License-Identifier: MIT */
/*
 * uring-cp: copy a file with io_uring, an ordinary liburing 2.3 program.
 *
 *	uring-cp [-q DEPTH] [-b BLOCKSIZE] SOURCE DEST
 *
 * Keeps up to DEPTH blocks in flight: each block is read with an
 * IORING_OP_READ SQE and, once read, written with an IORING_OP_WRITE SQE from
 * the same buffer; short reads and writes are resubmitted for the rest.
 * Completions are awaited with io_uring_wait_cqe_timeout(); the copy ends
 * with an IORING_OP_FSYNC.  Nothing here knows whether the ring is the
 * kernel's or uuring's: that is decided by the library it is linked with.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

enum { OP_READ, OP_WRITE, OP_FSYNC };

struct block {
	char *buf;
	off_t offset;		/* file offset of buf[0] */
	size_t len;		/* bytes of this block */
	size_t done;		/* bytes read (OP_READ) or written (OP_WRITE) */
	int op;
};

struct copy {
	struct io_uring ring;
	int in, out;
	off_t size, next;	/* file size, next offset to read */
	unsigned int depth, inflight, max_inflight;
	unsigned long reads, writes, short_ios, timeouts, waits;
	struct block *blocks;
	struct block fsync_block;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct io_uring_sqe *get_sqe(struct copy *c)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&c->ring);

	if (!sqe) {
		/* SQ ring full: hand what we have to the ring first. */
		io_uring_submit(&c->ring);
		sqe = io_uring_get_sqe(&c->ring);
	}
	return sqe;
}

/* Queues the (rest of the) read or write of block b. */
static int queue_io(struct copy *c, struct block *b)
{
	struct io_uring_sqe *sqe = get_sqe(c);

	if (!sqe)
		return -EBUSY;
	if (b->op == OP_READ) {
		io_uring_prep_read(sqe, c->in, b->buf + b->done, b->len - b->done,
				   b->offset + b->done);
		c->reads++;
	} else {
		io_uring_prep_write(sqe, c->out, b->buf + b->done,
				    b->len - b->done, b->offset + b->done);
		c->writes++;
	}
	io_uring_sqe_set_data(sqe, b);
	return 0;
}

/* Starts reading the next block of the file into the free block b. */
static int start_block(struct copy *c, struct block *b, size_t bs)
{
	b->offset = c->next;
	b->len = c->size - c->next < (off_t)bs ? (size_t)(c->size - c->next) : bs;
	b->done = 0;
	b->op = OP_READ;
	c->next += b->len;
	c->inflight++;
	if (c->inflight > c->max_inflight)
		c->max_inflight = c->inflight;
	return queue_io(c, b);
}

/* Handles one completion; returns 1 if its block became free. */
static int complete(struct copy *c, struct block *b, int res)
{
	if (res < 0) {
		fprintf(stderr, "uring-cp: %s at offset %lld: %s\n",
			b->op == OP_READ ? "read" : b->op == OP_WRITE ? "write" : "fsync",
			(long long)b->offset, strerror(-res));
		return -1;
	}
	if (b->op == OP_FSYNC)
		return 1;
	if (res == 0 && b->op == OP_READ) {
		fprintf(stderr, "uring-cp: unexpected end of file at %lld\n",
			(long long)(b->offset + b->done));
		return -1;
	}
	b->done += res;
	if (b->done < b->len) {
		c->short_ios++;
		return queue_io(c, b) < 0 ? -1 : 0;
	}
	if (b->op == OP_READ) {
		b->op = OP_WRITE;
		b->done = 0;
		return queue_io(c, b) < 0 ? -1 : 0;
	}
	c->inflight--;
	return 1;
}

/* Waits for one completion, a second at most per try. */
static int reap_one(struct copy *c, struct block **freed)
{
	struct __kernel_timespec ts = { .tv_sec = 1 };
	struct io_uring_cqe *cqe;
	struct block *b;
	int ret;

	*freed = NULL;
	for (;;) {
		ret = io_uring_submit(&c->ring);
		if (ret < 0) {
			fprintf(stderr, "uring-cp: io_uring_submit: %s\n", strerror(-ret));
			return -1;
		}
		c->waits++;
		ret = io_uring_wait_cqe_timeout(&c->ring, &cqe, &ts);
		if (ret == -ETIME) {
			c->timeouts++;
			continue;
		}
		if (ret == -EINTR)
			continue;
		if (ret < 0) {
			fprintf(stderr, "uring-cp: io_uring_wait_cqe_timeout: %s\n",
				strerror(-ret));
			return -1;
		}
		break;
	}
	b = io_uring_cqe_get_data(cqe);
	ret = complete(c, b, cqe->res);
	io_uring_cqe_seen(&c->ring, cqe);
	if (ret > 0)
		*freed = b;
	return ret < 0 ? -1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: uring-cp [-q DEPTH] [-b BLOCKSIZE] SOURCE DEST\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct copy c = { .depth = 8 };
	size_t bs = 64 * 1024;
	struct io_uring_sqe *sqe;
	struct block *b, **free_list;
	unsigned int i, nfree = 0;
	struct stat st;
	double t0;
	int opt, ret;

	while ((opt = getopt(argc, argv, "q:b:")) != -1) {
		switch (opt) {
		case 'q':
			c.depth = strtoul(optarg, NULL, 0);
			break;
		case 'b':
			bs = strtoul(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2 || !c.depth || c.depth > 4096 || !bs)
		usage();

	c.in = open(argv[optind], O_RDONLY);
	if (c.in < 0 || fstat(c.in, &st) < 0) {
		perror(argv[optind]);
		return 1;
	}
	c.out = open(argv[optind + 1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (c.out < 0) {
		perror(argv[optind + 1]);
		return 1;
	}
	c.size = st.st_size;

	ret = io_uring_queue_init(c.depth, &c.ring, 0);
	if (ret < 0) {
		fprintf(stderr, "uring-cp: io_uring_queue_init: %s\n", strerror(-ret));
		return 1;
	}

	c.blocks = calloc(c.depth, sizeof(*c.blocks));
	free_list = calloc(c.depth, sizeof(*free_list));
	if (!c.blocks || !free_list)
		return 1;
	for (i = 0; i < c.depth; i++) {
		c.blocks[i].buf = malloc(bs);
		if (!c.blocks[i].buf)
			return 1;
		free_list[nfree++] = &c.blocks[i];
	}

	t0 = now();
	while (c.next < c.size || c.inflight) {
		while (c.next < c.size && nfree) {
			if (start_block(&c, free_list[--nfree], bs) < 0) {
				fprintf(stderr, "uring-cp: no SQE\n");
				return 1;
			}
		}
		if (reap_one(&c, &b) < 0)
			return 1;
		if (b)
			free_list[nfree++] = b;
	}

	/* Everything written: make it durable, through the ring too. */
	sqe = get_sqe(&c);
	if (!sqe)
		return 1;
	io_uring_prep_fsync(sqe, c.out, 0);
	c.fsync_block.op = OP_FSYNC;
	io_uring_sqe_set_data(sqe, &c.fsync_block);
	c.inflight++;
	if (reap_one(&c, &b) < 0)
		return 1;

	printf("uring-cp: copied %lld bytes: %lu READ + %lu WRITE SQEs and an FSYNC, "
	       "queue depth %u (max %u in flight), %zu KiB blocks, %lu short I/Os, "
	       "%lu waits (%lu timed out), %.3f s\n",
	       (long long)c.size, c.reads, c.writes, c.depth, c.max_inflight,
	       bs / 1024, c.short_ios, c.waits, c.timeouts, now() - t0);

	io_uring_queue_exit(&c.ring);
	for (i = 0; i < c.depth; i++)
		free(c.blocks[i].buf);
	free(c.blocks);
	free(free_list);
	if (close(c.out) < 0) {
		perror("close");
		return 1;
	}
	close(c.in);
	return 0;
}
