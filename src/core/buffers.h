/* SPDX-License-Identifier: MIT */
/*
 * Buffers: registered buffers (core/rsrc_buf.c: REGISTER_BUFFERS*,
 * BUFFERS_UPDATE, CLONE_BUFFERS; the *_FIXED opcodes in ops/rwfixed.c)
 * and provided buffers (ops/kbuf.c: PROVIDE/REMOVE_BUFFERS, PBUF_RING,
 * PBUF_STATUS, IOSQE_BUFFER_SELECT for reads).
 */
#ifndef UURING_BUFFERS_H
#define UURING_BUFFERS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct uu_ring;
struct uu_req;

/* ---- registered buffers (core/rsrc_buf.c) ---- */

/* The memory of a registered buffer; shared by the nodes of clones. */
struct uu_rbuf {
	atomic_uint refs;
	uint64_t addr, len;
	unsigned long acct_pages;  /* charged to RLIMIT_MEMLOCK, or 0 */
	/* A driver's buffer (the kernel's io_buffer_register_bvec, is_kbuf):
	 * its addresses are offsets from addr 0 into kbase, usable only in
	 * the directions of kdir (UU_KBUF_*); release(priv) at its end. */
	uint8_t *kbase;
	uint8_t kdir;
	void (*release)(void *priv);
	void *priv;
};

/* kdir: 1 << the kernel's ITER_DEST (read into) / ITER_SOURCE (written
 * from), as imu->dir is 1 << rq_data_dir */
#define UU_KBUF_DEST 1u
#define UU_KBUF_SOURCE 2u

/* A table slot's entry (the kernel's io_rsrc_node): the table holds one
 * reference, every request using it another.  The tag CQE is posted when
 * the last one goes. */
struct uu_rbuf_node {
	atomic_uint refs;
	uint64_t tag;
	struct uu_ring *ring;
	struct uu_rbuf *buf;
};

/* uu_do_register dispatches here with uring_lock and files_lock held:
 * BUFFERS, UNREGISTER_BUFFERS, BUFFERS2, BUFFERS_UPDATE, PBUF_RING,
 * UNREGISTER_PBUF_RING, PBUF_STATUS. */
int uu_rsrc_buf_register(struct uu_ring *r, unsigned int opcode, void *arg,
			 unsigned int nr_args);
/* CLONE_BUFFERS: takes the locks of both rings itself. */
int uu_rsrc_buf_clone(struct uu_ring *r, void *arg, unsigned int nr_args);
/* The node at idx with a reference taken, or NULL. */
struct uu_rbuf_node *uu_rbuf_get(struct uu_ring *r, unsigned int idx);
void uu_rbuf_put(struct uu_rbuf_node *node);
/* a tag CQE, after the batch this thread is completing (or at once) */
void uu_rsrc_post_tag(struct uu_ring *r, uint64_t tag);
/* Ring teardown: tables and groups freed, no tag CQEs. */
void uu_rsrc_buf_free(struct uu_ring *r);
/*
 * io_buffer_register_bvec: [kbase, kbase + len) becomes the buffer at
 * slot idx of r's table (-EINVAL beyond the table, -EBUSY if the slot
 * holds one); release(priv) runs when the last user is gone.
 * io_buffer_unregister_bvec: the slot's driver buffer leaves the table
 * (-EINVAL: no such slot or an empty one, -EBUSY: an application's
 * buffer).  Both take r's files_lock, which every table change holds.
 */
int uu_rbuf_register_kbuf(struct uu_ring *r, unsigned int idx, uint8_t *kbase,
			  uint64_t len, uint8_t kdir,
			  void (*release)(void *priv), void *priv);
int uu_rbuf_unregister_kbuf(struct uu_ring *r, unsigned int idx);

/*
 * What pin_user_pages(FOLL_WRITE | FOLL_LONGTERM) would say about
 * [addr, addr + len): 0, -EFAULT (a hole, no write permission, a shared
 * mapping of a file that needs dirty tracking, PROT_NONE) or -EOVERFLOW.
 * From /proc/self/maps, read once per uu_vmas.
 */
struct uu_vmas;
struct uu_vmas *uu_vmas_read(void);
void uu_vmas_free(struct uu_vmas *v);
int uu_vmas_check(struct uu_vmas *v, uint64_t addr, uint64_t len);
/* RLIMIT_MEMLOCK accounting of a process without CAP_IPC_LOCK */
int uu_memlock_charge(uint64_t addr, uint64_t len, unsigned long *pages);
void uu_memlock_uncharge(unsigned long pages);

#endif /* UURING_BUFFERS_H */
