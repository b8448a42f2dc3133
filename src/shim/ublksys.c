// SPDX-License-Identifier: MIT
/*
 * Under `uuring run`, while the ublk driver's files are ours
 * (ublkfiles.c): opendir("/sys/class/ublk-char") lists the driver's
 * devices as the kernel's class directory lists them with ublk_drv
 * loaded, one ublkcN per device not deleted (libublk's
 * UblkCtrl::for_each_dev_id, and so `rublk list` and `rublk del -a`,
 * find devices this way).
 *
 * The listing is a real directory: each opendir builds a private tree
 * (ublkcN/dev holding "511:N", the made-up char device number the stat
 * answers give) under /dev/shm, opens it with libc's opendir, and the
 * closedir of that DIR removes the tree.  A real directory keeps
 * readdir, dirfd and fstatat on its entries libc's own.  A tree whose
 * process died before its closedir is swept by the next builder.  Other
 * paths cost one compare.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim/shim.h"
#include "ublk/client.h"
#include "ublk/proto.h"

#define EXPORT __attribute__((visibility("default")))

#define SYS_CLASS "/sys/class/ublk-char"
#define TREE_DIR "/dev/shm"
#define TREE_PREFIX ".uuring-ublk-char-"

typedef DIR *(*opendir_fn)(const char *);
typedef int (*closedir_fn)(DIR *);

static void *real_opendir, *real_closedir;

/* The open listings: their DIR and the tree to remove at closedir. */
struct listing {
	DIR *dir;
	char path[64];
	struct listing *next;
};

static pthread_mutex_t listings_lock = PTHREAD_MUTEX_INITIALIZER;
static struct listing *listings;
/* any listing open: closedir's fast path reads it without the lock (a
 * DIR of ours was returned after the store, by the same thread or one
 * that got the pointer through its own synchronisation) */
static int nlistings;

static bool sys_class_path(const char *path)
{
	size_t n = sizeof(SYS_CLASS) - 1;

	if (!path || strncmp(path, SYS_CLASS, n))
		return false;
	while (path[n] == '/')
		n++;
	return !path[n] && uu_shim_ublk_ours();
}

/* the tree at root: ublkcN directories with their dev file, then root */
static void tree_remove(const char *root)
{
	DIR *d = ((opendir_fn)uu_shim_real_next(&real_opendir, "opendir"))(root);
	char p[PATH_MAX];
	struct dirent *e;

	if (d) {
		while ((e = readdir(d))) {
			if (strncmp(e->d_name, "ublkc", 5))
				continue;
			snprintf(p, sizeof(p), "%s/%s/dev", root, e->d_name);
			unlink(p);
			snprintf(p, sizeof(p), "%s/%s", root, e->d_name);
			rmdir(p);
		}
		((closedir_fn)uu_shim_real_next(&real_closedir, "closedir"))(d);
	}
	rmdir(root);
}

/* trees of processes that died with a listing open (ours only: the
 * name's pid and the owner) */
static void sweep_dead(void)
{
	DIR *d = ((opendir_fn)uu_shim_real_next(&real_opendir, "opendir"))(TREE_DIR);
	struct dirent *e;
	struct stat st;
	char p[PATH_MAX];
	long pid;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, TREE_PREFIX, sizeof(TREE_PREFIX) - 1))
			continue;
		pid = strtol(e->d_name + sizeof(TREE_PREFIX) - 1, NULL, 10);
		if (pid <= 0 || !kill((pid_t)pid, 0) || errno != ESRCH)
			continue;
		snprintf(p, sizeof(p), "%s/%s", TREE_DIR, e->d_name);
		if (!lstat(p, &st) && S_ISDIR(st.st_mode) &&
		    st.st_uid == geteuid())
			tree_remove(p);
	}
	((closedir_fn)uu_shim_real_next(&real_closedir, "closedir"))(d);
}

/* builds the listing's tree in l->path: 0 or -errno */
static int tree_build(struct listing *l)
{
	uint32_t *ids = malloc(UM_LIST_MAX * sizeof(*ids));
	char p[PATH_MAX], num[32];
	int n, fd, len, ret = 0;

	if (!ids)
		return -ENOMEM;
	n = uu_ublk_list(ids, UM_LIST_MAX);
	if (n < 0) {
		free(ids);
		return n;
	}
	snprintf(l->path, sizeof(l->path), TREE_DIR "/" TREE_PREFIX "%d-XXXXXX",
		 (int)getpid());
	if (!mkdtemp(l->path)) {
		free(ids);
		return -errno;
	}
	for (int i = 0; i < n && !ret; i++) {
		snprintf(p, sizeof(p), "%s/ublkc%u", l->path, ids[i]);
		if (mkdir(p, 0755)) {
			ret = -errno;
			break;
		}
		snprintf(p, sizeof(p), "%s/ublkc%u/dev", l->path, ids[i]);
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
		if (fd < 0) {
			ret = -errno;
			break;
		}
		len = snprintf(num, sizeof(num), "%u:%u\n", UBLKD_CHAR_MAJOR,
			       ids[i]);
		if (write(fd, num, (size_t)len) != len)
			ret = -EIO;
		close(fd);
	}
	free(ids);
	if (ret)
		tree_remove(l->path);
	return ret;
}

static DIR *sys_class_open(void)
{
	struct listing *l = calloc(1, sizeof(*l));
	int ret;

	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	sweep_dead();
	ret = tree_build(l);
	if (ret) {
		free(l);
		errno = -ret;
		return NULL;
	}
	l->dir = ((opendir_fn)uu_shim_real_next(&real_opendir, "opendir"))(l->path);
	if (!l->dir) {
		ret = errno;
		tree_remove(l->path);
		free(l);
		errno = ret;
		return NULL;
	}
	pthread_mutex_lock(&listings_lock);
	l->next = listings;
	listings = l;
	__atomic_store_n(&nlistings, nlistings + 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&listings_lock);
	return l->dir;
}

EXPORT DIR *opendir(const char *path)
{
	if (sys_class_path(path))
		return sys_class_open();
	return ((opendir_fn)uu_shim_real_next(&real_opendir, "opendir"))(path);
}

EXPORT int closedir(DIR *dir)
{
	struct listing **pp, *l = NULL;
	int ret;

	if (__atomic_load_n(&nlistings, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&listings_lock);
		for (pp = &listings; *pp; pp = &(*pp)->next) {
			if ((*pp)->dir == dir) {
				l = *pp;
				*pp = l->next;
				__atomic_store_n(&nlistings, nlistings - 1,
						 __ATOMIC_RELAXED);
				break;
			}
		}
		pthread_mutex_unlock(&listings_lock);
	}
	ret = ((closedir_fn)uu_shim_real_next(&real_closedir, "closedir"))(dir);
	if (l) {
		tree_remove(l->path);
		free(l);
	}
	return ret;
}
