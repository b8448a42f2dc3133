// SPDX-License-Identifier: MIT
/*
 * IORING_REGISTER_QUERY, with a ring or without one (fd -1), after the
 * kernel's io_query: a chain of headers, each naming a query and a buffer
 * for its answer.  The answers describe this engine, not the kernel
 * below it: the opcodes, register opcodes, FEAT bits, setup, enter and
 * SQE flags uuring itself accepts.
 */
#include <errno.h>
#include <string.h>

#include "core/memregion.h"
#include "core/types.h"
#include "util/usercopy.h"

/* the kernel's io_uring_query_hdr and IO_URING_QUERY_OPCODES answer */
struct query_hdr {
	uint64_t next_entry;
	uint64_t query_data;
	uint32_t query_op;
	uint32_t size;
	int32_t result;
	uint32_t resv[3];
};
_Static_assert(sizeof(struct query_hdr) == 40, "io_uring_query_hdr");

struct query_opcodes {
	uint32_t nr_request_opcodes;
	uint32_t nr_register_opcodes;
	uint64_t feature_flags;
	uint64_t ring_setup_flags;
	uint64_t enter_flags;
	uint64_t sqe_flags;
	uint32_t nr_query_opcodes;
	uint32_t pad;
};
_Static_assert(sizeof(struct query_opcodes) == 48, "io_uring_query_opcode");

enum { QUERY_OPCODES, QUERY_MAX };
#define QUERY_MAX_SIZE sizeof(struct query_opcodes)
/* a bound on the chain, as a cycle would otherwise never end */
#define QUERY_MAX_ENTRIES 1000

static size_t query_opcodes(void *data)
{
	struct query_opcodes *q = data;

	memset(q, 0, sizeof(*q));
	q->nr_request_opcodes = UU_OP_LAST;
	q->nr_register_opcodes = UU_REGISTER_LAST;
	q->feature_flags = UU_FEATURES;
	q->ring_setup_flags = UU_SETUP_SUPPORTED;
	q->enter_flags = UU_ENTER_FLAGS;
	q->sqe_flags = UU_SQE_FLAGS;
	q->nr_query_opcodes = QUERY_MAX;
	return sizeof(*q);
}

/* copy_struct_to_user: len bytes of data, zeros up to usize */
static int answer_to_user(char *udata, size_t usize, const void *data,
			  size_t len)
{
	static const char zeros[256];
	int ret = uu_copy_to_user(udata, data, len);

	for (size_t off = len; !ret && off < usize; off += sizeof(zeros)) {
		size_t n = usize - off < sizeof(zeros) ? usize - off :
							  sizeof(zeros);

		ret = uu_copy_to_user(udata + off, zeros, n);
	}
	return ret;
}

/* one header: 0 with its answer written, or -errno for the whole call */
static int query_entry(void *data, void *uhdr, uint64_t *next)
{
	struct query_hdr hdr;
	size_t usize, res_size = 0;
	long ret = -EINVAL;
	void *udata;

	if (uu_copy_from_user(&hdr, uhdr, sizeof(hdr)))
		return -EFAULT;
	usize = hdr.size;
	if (hdr.size > QUERY_MAX_SIZE)
		hdr.size = QUERY_MAX_SIZE;
	udata = (void *)(uintptr_t)hdr.query_data;
	if (hdr.query_op >= QUERY_MAX) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	if (hdr.resv[0] || hdr.resv[1] || hdr.resv[2] || hdr.result ||
	    !hdr.size)
		goto out;
	if (uu_copy_from_user(data, udata, hdr.size))
		return -EFAULT;
	res_size = query_opcodes(data); /* the only query */
	ret = 0;
out:
	hdr.result = (int32_t)ret;
	hdr.size = (uint32_t)(usize < res_size ? usize : res_size);
	if (answer_to_user(udata, usize, data, hdr.size))
		return -EFAULT;
	if (uu_copy_to_user(uhdr, &hdr, sizeof(hdr)))
		return -EFAULT;
	*next = hdr.next_entry;
	return 0;
}

int uu_register_query(void *arg, unsigned int nr_args)
{
	union {
		struct query_opcodes opcodes;
	} data;
	void *uhdr = arg;
	int nr = 0;

	memset(&data, 0, sizeof(data));
	if (nr_args)
		return -EINVAL;
	while (uhdr) {
		uint64_t next;
		int ret = query_entry(&data, uhdr, &next);

		if (ret)
			return ret;
		uhdr = (void *)(uintptr_t)next;
		/* counted after each entry, the last one included */
		if (++nr >= QUERY_MAX_ENTRIES)
			return -ERANGE;
	}
	return 0;
}
