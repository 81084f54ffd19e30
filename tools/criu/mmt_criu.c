// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_criu.c - CRIU plugin for mmt (mmt_criu.so; docs/CRIU.md)
 *
 * Written against the plugin API of Debian 12's criu 3.17
 * (criu-plugin.h: CR_PLUGIN_HOOK__DUMP_EXT_FILE, RESTORE_EXT_FILE).
 * CRIU hands every file it does not know (a character device of another
 * driver, an anonymous inode of an unknown kind) to its plugins; this one
 * takes the three kinds of mmt file:
 *
 *   /dev/mmt             reopened with its flags
 *   a PMO ([mmt-pmo])    keyed: MMT_IOC_PMO_CHECKPOINT (MMT_CKPT_PENDING)
 *                        writes its closures (ciphertext, MACs, tree
 *                        nodes, sealed roots) into the image, the module
 *                        keeps the one-time record and the PMO is
 *                        read-only (EUCLEAN on writes); if the dump fails
 *                        the plugin's exit hook resolves it (the record is
 *                        dropped, the process goes on with its PMO
 *                        writable); if it succeeds the PMO stays
 *                        read-only (CRIU kills the process, or leaves it
 *                        running with a read-only PMO); restore:
 *                        MMT_IOC_RESTORE, checked in full, consumed once.
 *                        Plain (no key): its bytes, which are not secure
 *                        memory, as they are.
 *                        With MMT_CRIU_PEER=ADDR:PORT in CRIU's
 *                        environment (cross-node mode, docs/CRIU.md
 *                        section 6): a keyed PMO is migrated live to the
 *                        node at ADDR (MMT_IOC_MIGRATE_SEND; its receiver,
 *                        `mmtctl migrate --role dst --park`, parks it
 *                        under the receive's nonce) and the image holds
 *                        only that handle; restore on that node:
 *                        MMT_IOC_RESTORE with no buffer.
 *   a connection or a listener ([mmt-conn], [mmt-listen])
 *                        refused: a live RDMA connection cannot be frozen
 *                        into an image (the dump fails with a message)
 *
 * PMOs cannot be mmap()ed, so the mapping hooks are not needed.
 *
 * Image: one file per mmt file, "mmt-<id>.img" in CRIU's image directory:
 * a 4096-byte header (struct mmt_criu_hdr), then the closures (or the
 * plain bytes), page-aligned so MMT_IOC_PMO_CHECKPOINT writes straight
 * into the file's pages and MMT_IOC_RESTORE reads them from there.
 */
#include <criu/criu-plugin.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libmmt.h"
#include "mmt.h"

static int mmt_criu_init(int stage);
static void mmt_criu_exit(int stage, int ret);

CR_PLUGIN_REGISTER("mmt", mmt_criu_init, mmt_criu_exit)

#define MMT_CRIU_MAGIC		"MMTCRIU1"
#define MMT_CRIU_VERSION	1
#define MMT_CRIU_HDR_BYTES	4096	/* the data starts page-aligned */

/* struct mmt_criu_hdr.kind */
#define MMT_CRIU_DEV		1	/* /dev/mmt */
#define MMT_CRIU_PMO		2	/* a keyed PMO: closures, a handle */
#define MMT_CRIU_PMO_PLAIN	3	/* a PMO without a key: its bytes */
#define MMT_CRIU_PMO_MOVED	4	/* a keyed PMO parked on the peer */

/* MMT_CRIU_PEER=ADDR:PORT: the node the PMOs move to (cross-node mode) */
#define MMT_CRIU_PEER_ENV	"MMT_CRIU_PEER"
/* how long the migration waits for each answer of the peer */
#define MMT_CRIU_PEER_TIMEOUT_MS 60000

/**
 * struct mmt_criu_hdr - head of an mmt image file (little-endian host
 *	order: an image is restored on the machine type that made it)
 * @magic: MMT_CRIU_MAGIC
 * @version: MMT_CRIU_VERSION
 * @kind: MMT_CRIU_*
 * @flags: the file's status flags (fcntl F_GETFL)
 * @closures: PMO: closures
 * @pos: the file position
 * @closure_len: keyed PMO: bytes of one closure
 * @bytes: PMO: data bytes
 * @geometry: PMO: its shape
 * @handle: keyed PMO: MMT_IOC_PMO_CHECKPOINT's one-time handle; moved
 *	PMO: the receive nonce its destination parked it under
 * @data_len: bytes after the header
 */
struct mmt_criu_hdr {
	char magic[8];
	uint32_t version;
	uint32_t kind;
	uint32_t flags;
	uint32_t closures;
	uint64_t pos;
	uint64_t closure_len;
	uint64_t bytes;
	struct mmt_geometry geometry;
	uint8_t handle[MMT_CKPT_HANDLE_BYTES];
	uint64_t data_len;
};

/*
 * The PMOs checkpointed by this dump (duplicates of CRIU's fds), settled
 * by mmt_criu_exit() once CRIU knows whether the dump succeeded: it calls
 * the plugins' exit before it kills or resumes the process.
 */
#define MMT_CRIU_MAX_PENDING	1024
static int mmt_criu_pending[MMT_CRIU_MAX_PENDING];
static unsigned int mmt_criu_npending;
/* PMOs this dump moved to MMT_CRIU_PEER (cross-node mode) */
static unsigned int mmt_criu_nmoved;

/* CRIU's own log when its symbol is there (it exports it), else stderr. */
static void mmt_criu_log(const char *fmt, ...)
{
	void (*pol)(unsigned int, const char *, ...);
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	*(void **)&pol = dlsym(RTLD_DEFAULT, "print_on_level");
	if (pol)
		pol(1 /* LOG_ERROR */, "mmt_criu: %s\n", msg);
	fprintf(stderr, "mmt_criu: %s\n", msg);
}

static void mmt_criu_img_name(char *name, size_t len, int id)
{
	snprintf(name, len, "mmt-%08x.img", (unsigned int)id);
}

/* Which mmt file @fd is: 0 (not ours), MMT_CRIU_DEV, MMT_CRIU_PMO, or -1
 * for a connection or a listener (*what names it). */
static int mmt_criu_kind(int fd, const char **what)
{
	char path[64], link[64];
	struct stat st, dev;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return 0;
	link[n] = 0;
	if (!strcmp(link, "anon_inode:[mmt-pmo]"))
		return MMT_CRIU_PMO;
	if (!strcmp(link, "anon_inode:[mmt-conn]")) {
		*what = "a live mmt connection";
		return -1;
	}
	if (!strcmp(link, "anon_inode:[mmt-listen]")) {
		*what = "an mmt listener";
		return -1;
	}
	if (fstat(fd, &st) || !S_ISCHR(st.st_mode) || stat("/dev/mmt", &dev) ||
	    st.st_rdev != dev.st_rdev)
		return 0;
	return MMT_CRIU_DEV;
}

/*
 * Cross-node mode: migrate the PMO behind @fd live to @peer ("ADDR:PORT")
 * and put the handle its receiver parked it under into @h.  The process
 * is frozen (CRIU froze it before collecting its files), so the first
 * round is the whole copy and the handover follows at once.  On success
 * the PMO here is INVALID (the authenticated COMMIT ACK); on a failure of
 * known outcome it is as before (the dump fails and CRIU resumes the
 * process with it); of unknown outcome it is read-only until its owner
 * resolves it (docs/MIGRATION.md section 7), which the message says.
 */
static int mmt_criu_move_pmo(int fd, const char *peer, struct mmt_criu_hdr *h)
{
	struct mmt_migrate_info info = { 0 };
	struct mmt_conn_addr addr;
	char host[128], hex[2 * MMT_CKPT_HANDLE_BYTES + 1], *colon, *end;
	unsigned long port;
	int dev, conn, err;
	size_t i;

	if (strlen(peer) >= sizeof(host))
		return -EINVAL;
	strcpy(host, peer);
	colon = strrchr(host, ':');
	if (!colon)
		return -EINVAL;
	*colon = 0;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || port > 65535)
		return -EINVAL;
	err = mmtu_parse_addr(host, port, &addr);
	if (err)
		return err;
	dev = mmtu_open();
	if (dev < 0)
		return dev;
	conn = mmtu_connect(dev, &addr, MMT_CRIU_PEER_TIMEOUT_MS, 0, NULL);
	close(dev);
	if (conn < 0) {
		mmt_criu_log("cannot connect to %s=%s: %s", MMT_CRIU_PEER_ENV,
			     peer, mmtu_strerror(conn));
		return conn;
	}
	err = mmtu_migrate_send(conn, fd, 0, 0, 0, MMT_CRIU_PEER_TIMEOUT_MS,
				&info);
	close(conn);
	if (err) {
		if (info.flags & MMT_MIG_F_OUTCOME_UNKNOWN)
			mmt_criu_log("the migration of fd %d to %s failed after its COMMIT left (outcome unknown): the PMO is read-only here until its owner resolves it on the statement of %s's module (MMT_IOC_MIGRATE_RESOLVE on a connection to it)",
				     fd, peer, peer);
		return err;
	}
	memcpy(h->handle, info.nonce, sizeof(h->handle));
	mmt_criu_nmoved++;
	for (i = 0; i < sizeof(h->handle); i++)
		sprintf(hex + 2 * i, "%02x", h->handle[i]);
	mmt_criu_log("fd %d: %llu bytes moved to %s, parked there under %s, in %.1f ms (downtime %.1f ms, %llu closures, peak extra memory %llu bytes)",
		     fd, (unsigned long long)h->bytes, peer, hex,
		     info.total_ns / 1e6,
		     info.downtime_ns / 1e6,
		     (unsigned long long)info.closures_sent,
		     (unsigned long long)info.peak_extra_bytes);
	return 0;
}

/* Write the image: header, then @data_len bytes written by @fill. */
static int mmt_criu_dump_pmo(int fd, struct mmt_criu_hdr *h, int imgfd)
{
	const char *peer = getenv(MMT_CRIU_PEER_ENV);
	struct mmt_pmo_info info;
	uint64_t len;
	void *map;
	int err;

	err = mmtu_pmo_info(fd, &info, NULL, 0);
	if (err)
		return err;
	h->bytes = info.bytes;
	h->geometry = info.geometry;
	h->closures = info.closures;
	if (info.key_len && peer && *peer) {
		h->kind = MMT_CRIU_PMO_MOVED;
		return mmt_criu_move_pmo(fd, peer, h);
	}
	if (info.key_len) {
		h->kind = MMT_CRIU_PMO;
		if (mmt_criu_npending == MMT_CRIU_MAX_PENDING)
			return -ENOSPC;
		err = mmtu_pmo_checkpoint(fd, 0, NULL, 0, NULL, NULL,
					  &h->closure_len);
		if (err)
			return err;
		len = (uint64_t)info.closures * h->closure_len;
	} else {
		h->kind = MMT_CRIU_PMO_PLAIN;
		len = info.bytes;
	}
	h->data_len = len;
	if (ftruncate(imgfd, MMT_CRIU_HDR_BYTES + len))
		return -errno;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, imgfd,
		   MMT_CRIU_HDR_BYTES);
	if (map == MAP_FAILED)
		return -errno;
	if (h->kind == MMT_CRIU_PMO) {
		/* keep the PMO to settle it when the dump ends */
		int keep = fcntl(fd, F_DUPFD_CLOEXEC, 0);

		if (keep < 0) {
			err = -errno;
		} else {
			err = mmtu_pmo_checkpoint(fd, MMT_CKPT_PENDING, map,
						  len, h->handle, NULL, NULL);
			if (err)
				close(keep);
			else
				mmt_criu_pending[mmt_criu_npending++] = keep;
		}
	} else
		err = mmtu_pmo_read_all(fd, map, len, 0) == (ssize_t)len ?
			0 : -EIO;
	if (!err && msync(map, len, MS_SYNC))
		err = -errno;
	munmap(map, len);
	return err;
}

static int mmt_criu_dump_file(int fd, int id)
{
	struct mmt_criu_hdr h = { .magic = MMT_CRIU_MAGIC,
				  .version = MMT_CRIU_VERSION };
	const char *what = NULL;
	char name[32];
	int kind, dir, imgfd, err;
	off_t pos;

	kind = mmt_criu_kind(fd, &what);
	if (!kind)
		return -ENOTSUP;	/* another plugin's, or none's */
	if (kind < 0) {
		mmt_criu_log("fd %d is %s: it cannot be checkpointed (an RDMA connection does not survive a freeze into an image); close it, or move its PMOs first (docs/CRIU.md)",
			     fd, what);
		return -EBUSY;
	}
	h.kind = kind;
	h.flags = fcntl(fd, F_GETFL);
	pos = lseek(fd, 0, SEEK_CUR);
	h.pos = pos < 0 ? 0 : pos;

	dir = criu_get_image_dir();
	mmt_criu_img_name(name, sizeof(name), id);
	imgfd = openat(dir, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (imgfd < 0) {
		err = -errno;
		mmt_criu_log("cannot create %s: %s", name, strerror(-err));
		return err;
	}
	err = kind == MMT_CRIU_PMO ? mmt_criu_dump_pmo(fd, &h, imgfd) : 0;
	if (!err && pwrite(imgfd, &h, sizeof(h), 0) != sizeof(h))
		err = -EIO;
	if (!err && fsync(imgfd))
		err = -errno;
	close(imgfd);
	if (err)
		mmt_criu_log("cannot dump fd %d (id %#x): %s (%s)", fd, id,
			     strerror(-err), mmtu_strerror(err));
	return err;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__DUMP_EXT_FILE, mmt_criu_dump_file)

static int mmt_criu_init(int stage)
{
	mmt_criu_npending = 0;
	mmt_criu_nmoved = 0;
	return 0;
}

/*
 * The end of a dump (or pre-dump, or restore: nothing pending then).
 * Dumped (@ret 0): the PMOs stay read-only, the images are the one
 * writable copy (CRIU kills the process next; with --leave-running the
 * process reads its PMOs as they were dumped, and its writes fail with
 * EUCLEAN).  Failed: every record is dropped and every PMO is writable
 * again, so the process CRIU resumes goes on as before.  A PMO that
 * cannot be taken back stays read-only (its owner can resolve it).
 */
static void mmt_criu_exit(int stage, int ret)
{
	unsigned int i;
	int err;

	for (i = 0; i < mmt_criu_npending; i++) {
		int fd = mmt_criu_pending[i];

		err = ret ? mmtu_pmo_mig_resolve(fd) : 0;
		if (err)
			mmt_criu_log("cannot take back a checkpointed PMO: %s (%s)",
				     strerror(-err), mmtu_strerror(err));
		close(fd);
	}
	mmt_criu_npending = 0;
	/*
	 * A moved PMO cannot be taken back from here: its one copy is
	 * parked on the peer (a migration's commit is final), and this
	 * process, resumed, finds it INVALID (EPERM).
	 */
	if (ret && mmt_criu_nmoved)
		mmt_criu_log("the dump failed after %u PMO(s) moved to %s: each is parked there under the handle logged above (restore it there with MMT_IOC_RESTORE); here they are INVALID",
			     mmt_criu_nmoved, getenv(MMT_CRIU_PEER_ENV));
	mmt_criu_nmoved = 0;
}

/* A new PMO from the image's data; returns its fd or -errno. */
static int mmt_criu_restore_pmo(const struct mmt_criu_hdr *h, int imgfd)
{
	void *map;
	int devfd, fd;

	if (h->kind == MMT_CRIU_PMO_MOVED) {
		/* parked here by the migration: no data in the image */
		if (h->data_len)
			return -EINVAL;
		devfd = mmtu_open();
		if (devfd < 0)
			return devfd;
		fd = mmtu_restore(devfd, h->handle, NULL, 0, 0);
		close(devfd);
		return fd;
	}
	if (!h->data_len)
		return -EINVAL;
	map = mmap(NULL, h->data_len, PROT_READ, MAP_PRIVATE, imgfd,
		   MMT_CRIU_HDR_BYTES);
	if (map == MAP_FAILED)
		return -errno;
	devfd = mmtu_open();
	if (devfd < 0) {
		munmap(map, h->data_len);
		return devfd;
	}
	if (h->kind == MMT_CRIU_PMO) {
		fd = mmtu_restore(devfd, h->handle, map, h->data_len, 0);
	} else {
		fd = mmtu_pmo_create(devfd, h->bytes, &h->geometry, 0, NULL);
		if (fd >= 0 && (h->data_len != h->bytes ||
				mmtu_pmo_write_all(fd, map, h->data_len, 0) !=
				(ssize_t)h->data_len)) {
			close(fd);
			fd = -EIO;
		}
	}
	close(devfd);
	munmap(map, h->data_len);
	return fd;
}

static int mmt_criu_restore_file(int id)
{
	struct mmt_criu_hdr h;
	char name[32];
	int imgfd, fd, err;

	mmt_criu_img_name(name, sizeof(name), id);
	imgfd = openat(criu_get_image_dir(), name, O_RDONLY | O_CLOEXEC);
	if (imgfd < 0)
		return -ENOTSUP;	/* not an mmt file */
	if (pread(imgfd, &h, sizeof(h), 0) != sizeof(h) ||
	    memcmp(h.magic, MMT_CRIU_MAGIC, sizeof(h.magic)) ||
	    h.version != MMT_CRIU_VERSION) {
		mmt_criu_log("%s is not an mmt image of version %u", name,
			     MMT_CRIU_VERSION);
		close(imgfd);
		return -EINVAL;
	}
	switch (h.kind) {
	case MMT_CRIU_DEV:
		fd = open("/dev/mmt", (h.flags & ~O_CREAT) | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
		break;
	case MMT_CRIU_PMO:
	case MMT_CRIU_PMO_PLAIN:
	case MMT_CRIU_PMO_MOVED:
		fd = mmt_criu_restore_pmo(&h, imgfd);
		if (fd >= 0 && h.pos && lseek(fd, h.pos, SEEK_SET) < 0) {
			err = -errno;
			close(fd);
			fd = err;
		}
		if (fd >= 0 && fcntl(fd, F_SETFL, h.flags) < 0) {
			err = -errno;
			close(fd);
			fd = err;
		}
		break;
	default:
		fd = -EINVAL;
	}
	close(imgfd);
	if (fd < 0)
		mmt_criu_log("cannot restore %s (kind %u): %s (%s)", name,
			     h.kind, strerror(-fd), mmtu_strerror(fd));
	return fd;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESTORE_EXT_FILE, mmt_criu_restore_file)

