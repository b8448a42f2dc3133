// SPDX-License-Identifier: MIT
/*
 * A freed ring's memory leaves the table of engine mappings (ring/mem.c,
 * uu_ring_mem_is_engine_map).  The table has 1024 slots, and under
 * ThreadSanitizer uuring_munmap leaves alone an address it finds there
 * (api.c): a freed ring still noted would keep a later, unrelated
 * mapping at its address from being unmapped, and after 512 rings the
 * full table would note no new ring, whose memory the application's
 * munmap would then unmap under the engine.
 *
 * Rings are made and freed directly (core/ring.c), without setup's fd
 * registry, so nothing here waits for a deferred release.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/ring.h"
#include "core/types.h"
#include "ring/mem.h"

static int make(struct uu_ring **r)
{
	struct io_uring_params p;
	int fd;

	memset(&p, 0, sizeof(p));
	p.cq_entries = 16;
	fd = uu_ring_create(r, 8, &p);
	if (fd < 0)
		fprintf(stderr, "uu_ring_create: %d\n", fd);
	return fd;
}

int main(void)
{
	struct uu_ring *r;
	void *rings, *sqes;
	int fd;

	fd = make(&r);
	if (fd < 0)
		return 1;
	rings = r->mem.rings;
	sqes = r->mem.sqes;
	if (!uu_ring_mem_is_engine_map(rings) ||
	    !uu_ring_mem_is_engine_map(sqes)) {
		fprintf(stderr, "FAIL: a live ring's memory is not noted\n");
		return 1;
	}
	uu_ring_free(r);
	close(fd);
	if (uu_ring_mem_is_engine_map(rings) ||
	    uu_ring_mem_is_engine_map(sqes)) {
		fprintf(stderr, "FAIL: a freed ring's memory is still noted\n");
		return 1;
	}
	/* more rings than the table has slots for two mappings each */
	for (int i = 0; i < 600; i++) {
		fd = make(&r);
		if (fd < 0)
			return 1;
		uu_ring_free(r);
		close(fd);
	}
	fd = make(&r);
	if (fd < 0)
		return 1;
	if (!uu_ring_mem_is_engine_map(r->mem.rings) ||
	    !uu_ring_mem_is_engine_map(r->mem.sqes)) {
		fprintf(stderr, "FAIL: after 600 rings freed, a new ring's "
				"memory is not noted\n");
		return 1;
	}
	uu_ring_free(r);
	close(fd);
	printf("ok\n");
	return 0;
}
