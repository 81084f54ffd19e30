// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_attest.c - attested mode: the node id from the authority's credential
 *
 * Paper section IV-A (Fig. 3, step 1 of Fig. 6): a node gets its globally
 * unique node id from a global authority after it attested, not from
 * root's word.  The module trusts the authority's X.509 certificate, held
 * in a keyring of the module's own that nothing can link keys into (its
 * restriction rejects every link; the module adds the one key bypassing
 * it), and verifies each credential's detached PKCS#7 signature itself
 * with verify_pkcs7_signature(), the in-tree way module signatures are
 * checked.  docs/ATTESTATION.md has the protocol and the credential
 * layout (the same as tools/attest/mmta_cred.c writes).
 *
 * The node key is an X25519 key pair drawn once per module load, at load
 * (mmt_attest_init(), through the kpp API, as every X25519 of the module:
 * mmt_x25519()), and its public half is measured into the IMA log and PCR
 * 10 with ima_measure_critical_data() (event "mmt-node-key", label "mmt").
 * The authority certifies only the key that event names, right after the
 * IMA measurement of the module it appraised, so a key made in user space
 * gets no credential (docs/ATTESTATION.md, "The node key").  It binds that
 * public half into the credential, so a credential fits only this load of
 * the module.  The private half is used only here, by the connection
 * handshake (mmt_attest_hs_derive()), and never leaves the module; it is
 * wiped at unload (mmt_attest_exit()).
 *
 * Peers: every peer credential a handshake accepted binds its node id to
 * its node key for this load (mmt_attest_peers); a peer presenting that
 * node id with another key is refused unless its credential is newer
 * (a higher serial: the authority gives an id only to the TPM that holds
 * it, so a newer credential with another key is that node's next load).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/ima.h>
#include <linux/delay.h>
#include <linux/key.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/random.h>
#include <linux/security.h>
#include <linux/module.h>
#include <linux/uaccess.h>
#include <linux/verification.h>
#include <linux/xarray.h>
#include "mmt_kcompat.h"

#include "mmt_internal.h"
#include "mmt.h"

/*
 * mmt_attest_lock protects everything below.  A handshake holds it only to
 * copy what it needs (a reference to the keyring, the own credential file,
 * the node secret) and to update the binding table: the signature check,
 * the X25519s and their allocations run unlocked, so a slow or hostile
 * peer delays only its own connection.  A keyring reference held across
 * the unlocked steps is how a handshake sees afterwards that attested mode
 * was left (or left and entered again) meanwhile: mmt_attest_keyring is
 * then another pointer, and the reference keeps the old keyring from
 * being freed and its address reused.
 */
static DEFINE_MUTEX(mmt_attest_lock);
static struct key *mmt_attest_keyring;	/* NULL: not attested mode */
static bool mmt_node_key_ok;		/* drawn at load (mmt_attest_init()) */
static u8 mmt_node_sk[MMT_X25519_BYTES];
static u8 mmt_node_pk[MMT_X25519_BYTES];
static u8 mmt_boot_lockdown;		/* MMT_LOCKDOWN_*, at load */
static u8 mmt_boot_flags;		/* MMT_BOOT_*, at load */
static struct mmt_cred mmt_cur_cred;	/* serial 0: none installed */
static u8 *mmt_cur_cred_file;		/* its file (the hello sends it) */
static u32 mmt_cur_cred_len;

/*
 * MMT_ATTEST_OFF, _WAITING or _ATTESTED, for mmt_attest_state() and
 * mmt_attest_mode(), which the rdma_cm handler calls and which must not
 * wait for the mutex: written under mmt_attest_lock (WRITE_ONCE), read
 * without it (READ_ONCE).
 */
static u32 mmt_attest_cur_state;

/**
 * struct mmt_attest_peer - a node id a handshake accepted, and its key
 * @serial: the highest serial of a credential accepted for the id
 * @node_key: the node key of that credential
 */
struct mmt_attest_peer {
	u64 serial;
	u8 node_key[MMT_CRED_KEY_LEN];
};

/* node id -> struct mmt_attest_peer, for this load (under mmt_attest_lock) */
static DEFINE_XARRAY(mmt_attest_peers);

/* Publish the state for the lockless readers.  Caller holds the lock. */
static void mmt_attest_publish(void)
{
	lockdep_assert_held(&mmt_attest_lock);
	WRITE_ONCE(mmt_attest_cur_state,
		   !mmt_attest_keyring ? MMT_ATTEST_OFF :
		   mmt_cur_cred.serial ? MMT_ATTEST_ATTESTED :
					 MMT_ATTEST_WAITING);
}

/* The keyring's restriction: no key may be linked in (restrict_link_reject) */
static int mmt_attest_restrict(struct key *keyring,
			       const struct key_type *type,
			       const union key_payload *payload,
			       struct key *restriction_key)
{
	return -EPERM;
}

/**
 * mmt_cred_parse() - parse a credential body (docs/ATTESTATION.md)
 * @buf: at least MMT_CRED_BODY_LEN bytes
 * @len: length of @buf
 * @c: (out) the fields
 *
 * Context: any.
 * Return: 0, or -EINVAL for a short body, a wrong magic or version,
 * non-zero flags, or a node id outside 1..65535.
 */
int mmt_cred_parse(const u8 *buf, size_t len, struct mmt_cred *c)
{
	if (len < MMT_CRED_BODY_LEN || memcmp(buf, MMT_CRED_MAGIC, 8) ||
	    get_unaligned_le16(buf + 8) != MMT_CRED_VERSION ||
	    get_unaligned_le16(buf + 10))
		return -EINVAL;
	c->node_id = get_unaligned_le32(buf + 12);
	c->serial = get_unaligned_le64(buf + 16);
	c->not_before = get_unaligned_le64(buf + 24);
	c->not_after = get_unaligned_le64(buf + 32);
	memcpy(c->node_key, buf + 40, sizeof(c->node_key));
	memcpy(c->module_hash, buf + 72, sizeof(c->module_hash));
	memcpy(c->ek_hash, buf + 104, sizeof(c->ek_hash));
	if (!c->node_id || c->node_id > U16_MAX)
		return -EINVAL;
	return 0;
}

/**
 * mmt_attest_set_authority() - enter attested mode with this trust anchor
 * @der: the authority's X.509 certificate, DER
 * @len: its length in bytes
 *
 * Context: process; sleeps; takes mmt_attest_lock.
 * Return: 0; -EBUSY if an authority is installed; -EBADMSG (or another
 * error of the asymmetric key parser, -ENOPKG for a missing algorithm) if
 * @der is not a usable certificate; -ENOENT if the module has no node key
 * (the kernel had no "curve25519" kpp algorithm at load); -ENOMEM.  On
 * error nothing changes.
 */
int mmt_attest_set_authority(const void *der, size_t len)
{
	struct key_restriction *restrict_link;
	struct key *keyring;
	key_ref_t kref;
	int err = 0;

	mutex_lock(&mmt_attest_lock);
	if (mmt_attest_keyring) {
		err = -EBUSY;
		goto out;
	}
	if (!mmt_node_key_ok) {
		err = -ENOENT;	/* no node key: no curve25519 kpp algorithm */
		goto out;
	}
	restrict_link = kzalloc(sizeof(*restrict_link), GFP_KERNEL);
	if (!restrict_link) {
		err = -ENOMEM;
		goto out;
	}
	restrict_link->check = mmt_attest_restrict;
	/* owns restrict_link from here, on success and on error */
	keyring = keyring_alloc(".mmt_authority", GLOBAL_ROOT_UID,
				GLOBAL_ROOT_GID, current_cred(),
				(KEY_POS_ALL & ~KEY_POS_SETATTR) |
				KEY_USR_VIEW | KEY_USR_READ | KEY_USR_SEARCH,
				KEY_ALLOC_NOT_IN_QUOTA, restrict_link, NULL);
	if (IS_ERR(keyring)) {
		kfree(restrict_link);
		err = PTR_ERR(keyring);
		goto out;
	}
	kref = key_create_or_update(make_key_ref(keyring, 1), "asymmetric",
				    NULL, der, len,
				    (KEY_POS_ALL & ~KEY_POS_SETATTR) |
				    KEY_USR_VIEW | KEY_USR_READ,
				    KEY_ALLOC_NOT_IN_QUOTA |
				    KEY_ALLOC_BYPASS_RESTRICTION);
	if (IS_ERR(kref)) {
		err = PTR_ERR(kref);
		/* the parsers' -EINVAL and -ENOKEY mean "not a certificate" */
		if (err != -ENOMEM && err != -ENOPKG)
			err = -EBADMSG;
		key_put(keyring);
		goto out;
	}
	key_ref_put(kref);
	memset(&mmt_cur_cred, 0, sizeof(mmt_cur_cred));
	mmt_attest_keyring = keyring;
	/* no GUA under an id no authority assigned (mmt_gua_alloc()) */
	mmt_node_id_unassign(true);
	mmt_attest_publish();
	pr_info("attested mode: authority installed\n");
out:
	mutex_unlock(&mmt_attest_lock);
	return err;
}

/*
 * The signature of a credential file under the authority in @keyring (so
 * nothing of an unsigned body is believed), then its body.  The caller
 * holds mmt_attest_lock or a reference to @keyring, and checked that
 * @len > MMT_CRED_BODY_LEN.
 * Return: 0; -EKEYREJECTED (signature); -EINVAL (body); -ENOMEM.
 */
static int mmt_attest_verify(const u8 *buf, size_t len, struct key *keyring,
			     struct mmt_cred *c)
{
	int err;

	err = verify_pkcs7_signature(buf, MMT_CRED_BODY_LEN,
				     buf + MMT_CRED_BODY_LEN,
				     len - MMT_CRED_BODY_LEN, keyring,
				     VERIFYING_UNSPECIFIED_SIGNATURE, NULL,
				     NULL);
	if (err)
		return err == -ENOMEM ? err : -EKEYREJECTED;
	return mmt_cred_parse(buf, len, c);
}

/**
 * mmt_attest_set_cred() - verify a credential and take its node id
 * @buf: the credential file: body, then a detached PKCS#7 signature
 * @len: its length in bytes
 * @now: the current time, UNIX seconds (ktime_get_real_seconds())
 * @node_pk: the node key the credential must carry; NULL for this load's
 *	(the ioctl); KUnit passes its vectors' key
 *
 * The order: the signature (so nothing of an unsigned body is believed),
 * the body, the node key, the validity, the serial.
 *
 * Context: process; sleeps; takes mmt_attest_lock.
 * Return: 0; -ENOKEY without an authority; -EINVAL for a malformed body
 * or no signature; -EKEYREJECTED if the signature does not verify under
 * the authority or the node key is not this load's; -EKEYEXPIRED outside
 * the validity; -ESTALE for a serial not above the installed one;
 * -ENOMEM.  On error nothing changes.
 */
int mmt_attest_set_cred(const u8 *buf, size_t len, u64 now,
			const u8 *node_pk)
{
	struct mmt_cred c;
	u8 *file = NULL;
	int err;

	mutex_lock(&mmt_attest_lock);
	if (!mmt_attest_keyring) {
		err = -ENOKEY;
		goto out;
	}
	if (len <= MMT_CRED_BODY_LEN) {
		err = -EINVAL;
		goto out;
	}
	err = mmt_attest_verify(buf, len, mmt_attest_keyring, &c);
	if (err)
		goto out;
	if (crypto_memneq(c.node_key, node_pk ? node_pk : mmt_node_pk,
			  MMT_CRED_KEY_LEN)) {
		err = -EKEYREJECTED;
		goto out;
	}
	if (now < c.not_before || now > c.not_after) {
		err = -EKEYEXPIRED;
		goto out;
	}
	if (c.serial <= mmt_cur_cred.serial) {
		err = -ESTALE;
		goto out;
	}
	file = kmemdup(buf, len, GFP_KERNEL);
	if (!file) {
		err = -ENOMEM;
		goto out;
	}
	err = mmt_set_node_id(c.node_id);
	if (err) {
		kfree(file);
		goto out;
	}
	mmt_cur_cred = c;
	kfree(mmt_cur_cred_file);
	mmt_cur_cred_file = file;
	mmt_cur_cred_len = len;
	mmt_attest_publish();
	pr_info("attested mode: node id %u from credential %llu\n",
		c.node_id, c.serial);
out:
	mutex_unlock(&mmt_attest_lock);
	return err;
}

/**
 * mmt_attest_mode() - whether the module is in attested mode
 *
 * Context: any; does not take mmt_attest_lock (a handshake that holds it
 * never delays the caller, the rdma_cm handler among them).
 * Return: true once an authority is installed, until mmt_attest_reset().
 */
bool mmt_attest_mode(void)
{
	return READ_ONCE(mmt_attest_cur_state) != MMT_ATTEST_OFF;
}

/**
 * mmt_attest_state() - the attested mode's state
 *
 * Context: any; does not take mmt_attest_lock (as mmt_attest_mode()).
 * Return: MMT_ATTEST_OFF, MMT_ATTEST_WAITING (no credential yet) or
 * MMT_ATTEST_ATTESTED.
 */
u32 mmt_attest_state(void)
{
	return READ_ONCE(mmt_attest_cur_state);
}

/**
 * mmt_attest_info() - fill in the attested mode's state
 * @info: (out) state, node key (in every state), the installed credential
 *
 * Context: process; takes mmt_attest_lock.
 */
void mmt_attest_info(struct mmt_attest_info *info)
{
	mutex_lock(&mmt_attest_lock);
	memcpy(info->node_key, mmt_node_pk, sizeof(info->node_key));
	info->lockdown = mmt_boot_lockdown;
	info->boot_flags = mmt_boot_flags;
	if (mmt_attest_keyring) {
		info->state = mmt_cur_cred.serial ? MMT_ATTEST_ATTESTED :
			      MMT_ATTEST_WAITING;
		info->serial = mmt_cur_cred.serial;
		info->not_before = mmt_cur_cred.not_before;
		info->not_after = mmt_cur_cred.not_after;
	} else {
		info->state = MMT_ATTEST_OFF;
	}
	mutex_unlock(&mmt_attest_lock);
}

/**
 * mmt_attest_node_key() - this load's node public key (zero if the module
 * could not draw one at load)
 * @pk: (out) the public key
 *
 * Context: process; takes mmt_attest_lock.
 */
void mmt_attest_node_key(u8 pk[MMT_CRED_KEY_LEN])
{
	mutex_lock(&mmt_attest_lock);
	memcpy(pk, mmt_node_pk, MMT_CRED_KEY_LEN);
	mutex_unlock(&mmt_attest_lock);
}

/* Forget every peer binding.  Caller holds mmt_attest_lock. */
static void mmt_attest_peers_clear(void)
{
	struct mmt_attest_peer *p;
	unsigned long id;

	xa_for_each(&mmt_attest_peers, id, p)
		kfree(xa_erase(&mmt_attest_peers, id));
}

/*
 * A reference to the keyring of attested mode as it is now (key_put() it),
 * or NULL when not in attested mode; with @sk, a copy of the node secret
 * (MMT_X25519_BYTES; the caller wipes it).  Takes mmt_attest_lock briefly.
 */
static struct key *mmt_attest_hold(u8 *sk)
{
	struct key *keyring = NULL;

	mutex_lock(&mmt_attest_lock);
	if (mmt_attest_keyring) {
		keyring = key_get(mmt_attest_keyring);
		if (sk)
			memcpy(sk, mmt_node_sk, MMT_X25519_BYTES);
	}
	mutex_unlock(&mmt_attest_lock);
	return keyring;
}

/*
 * Whether attested mode was left (or left and entered again) since
 * mmt_attest_hold() returned @keyring.  Caller holds mmt_attest_lock.
 */
static bool mmt_attest_left(const struct key *keyring)
{
	lockdep_assert_held(&mmt_attest_lock);
	return mmt_attest_keyring != keyring;
}

/**
 * mmt_attest_hs_start() - start this node's half of a connection's
 *	attested handshake (mmt_hs_start() with the installed credential)
 * @hs: zeroed
 * @initiator: true on the connecting side
 * @conn_rand: the connecting side's rdma_cm hello nonce
 * @accept_rand: the accepting side's
 *
 * The credential file is copied under mmt_attest_lock into a buffer
 * allocated before (its body into @hs->own_cred); the ephemeral key is
 * drawn after (unlocked).
 *
 * Context: process; sleeps; takes mmt_attest_lock briefly.
 * Return: 0; -ENOKEY if not in attested mode or no credential is
 * installed; mmt_hs_start()'s errors; -ENOMEM.  Call mmt_hs_clear()
 * afterwards in every case.
 */
int mmt_attest_hs_start(struct mmt_hs *hs, bool initiator, u64 conn_rand,
			u64 accept_rand)
{
	u32 len = 0;
	u8 *cred;
	int err;

	cred = kmalloc(MMT_ATTEST_BLOB_MAX, GFP_KERNEL);
	if (!cred)
		return -ENOMEM;
	mutex_lock(&mmt_attest_lock);
	if (mmt_attest_keyring && mmt_cur_cred_file) {
		len = mmt_cur_cred_len;
		memcpy(cred, mmt_cur_cred_file, len);
		hs->own_cred = mmt_cur_cred;
	}
	mutex_unlock(&mmt_attest_lock);
	err = len ? mmt_hs_start(hs, initiator, conn_rand, accept_rand, cred,
				 len) : -ENOKEY;
	kfree(cred);
	return err;
}

/*
 * Whether a peer credential names this node: its node id (once a credential
 * is installed) or its node key (this load's, or the installed
 * credential's).  Whoever presents either is this node itself, its hello
 * reflected back by a relay (which turns a second connection to this
 * node's own listener into a connection to itself), or a second node
 * under this node's id.  Caller holds mmt_attest_lock.
 */
static bool mmt_attest_is_own(const struct mmt_cred *c)
{
	lockdep_assert_held(&mmt_attest_lock);
	if (!crypto_memneq(c->node_key, mmt_node_pk, MMT_CRED_KEY_LEN))
		return true;
	return mmt_cur_cred.serial &&
	       (c->node_id == mmt_cur_cred.node_id ||
		!crypto_memneq(c->node_key, mmt_cur_cred.node_key,
			       MMT_CRED_KEY_LEN));
}

/*
 * The binding rule of a peer's node id, for a credential @c accepted
 * otherwise: a credential with another key than the bound one is refused
 * unless its serial is higher, which rebinds the id; a higher serial with
 * the bound key raises the bound serial.  Caller holds mmt_attest_lock.
 * Return: 0, or -EKEYREJECTED (nothing changed).
 */
static int mmt_attest_bind(struct mmt_attest_peer *p, const struct mmt_cred *c)
{
	lockdep_assert_held(&mmt_attest_lock);
	if (crypto_memneq(p->node_key, c->node_key, MMT_CRED_KEY_LEN) &&
	    c->serial <= p->serial)
		return -EKEYREJECTED;
	if (c->serial > p->serial) {
		p->serial = c->serial;
		memcpy(p->node_key, c->node_key, MMT_CRED_KEY_LEN);
	}
	return 0;
}

/**
 * mmt_attest_hs_peer() - check the peer's credential of a handshake and
 *	bind its node id to its node key
 * @hs: after mmt_hs_peer_hello(); (out) @hs->peer_cred
 * @now: the current time, UNIX seconds
 * @hello_node: the node id the peer's rdma_cm hello named
 *
 * The order: the signature under the authority, the body, the node id of
 * the rdma_cm hello, the validity, then the binding: a credential naming
 * this node's own id or own node key is refused whatever its key or id
 * (a peer is never this node: such a hello is this node's own, reflected
 * by a relay, or a second node under its id), a peer's id is bound to
 * the key of the newest credential accepted for it on this load.  A
 * credential of a bound id with another key is accepted (and rebinds the
 * id) only with a higher serial than the bound one.
 *
 * The signature check and the allocations run without mmt_attest_lock
 * (under a reference to the keyring), which is taken only for the
 * binding: a peer whose check is slow delays no other handshake.
 *
 * Context: process; sleeps; takes mmt_attest_lock briefly.
 * Return: 0; -ENOKEY if not in attested mode (or if it was left during
 * the check); -EKEYREJECTED for a signature that does not verify, a
 * malformed body, a node id other than the hello's, this node's own node
 * id or node key, or a node id bound to another key; -EKEYEXPIRED
 * outside the validity; -ENOMEM.  On error no binding changes.
 */
int mmt_attest_hs_peer(struct mmt_hs *hs, u64 now, u16 hello_node)
{
	const u8 *cred = hs->peer + MMT_X25519_BYTES;
	u32 len = hs->peer_len - MMT_X25519_BYTES;
	struct mmt_attest_peer *p, *n = NULL;
	bool reserved = false;
	struct key *keyring;
	struct mmt_cred c;
	int err;

	keyring = mmt_attest_hold(NULL);
	if (!keyring)
		return -ENOKEY;
	err = mmt_attest_verify(cred, len, keyring, &c);
#ifdef MMT_DEBUG
	/* test builds: a slow check ("hs verify delay MS") */
	if (hs->test_verify_ms)
		msleep(hs->test_verify_ms);
#endif
	if (err == -EINVAL || (!err && c.node_id != hello_node))
		err = -EKEYREJECTED;
	if (!err && (now < c.not_before || now > c.not_after))
		err = -EKEYEXPIRED;
	if (!err) {
		/* what a new binding needs, so the lock is held only briefly */
		n = kzalloc(sizeof(*n), GFP_KERNEL);
		err = n ? xa_reserve(&mmt_attest_peers, c.node_id,
				     GFP_KERNEL) : -ENOMEM;
		reserved = !err;
	}
	mutex_lock(&mmt_attest_lock);
	if (mmt_attest_left(keyring)) {
		err = -ENOKEY;
		goto out;
	}
	if (err)
		goto out;
	if (mmt_attest_is_own(&c)) {
		err = -EKEYREJECTED;	/* a reflection of this node */
		goto out;
	}
	p = xa_load(&mmt_attest_peers, c.node_id);
	if (p) {
		err = mmt_attest_bind(p, &c);
		if (err)
			goto out;
	} else {
		/* into the reserved slot: no allocation */
		err = xa_err(xa_store(&mmt_attest_peers, c.node_id, n,
				      GFP_KERNEL));
		if (err)
			goto out;
		mmt_attest_bind(n, &c);	/* zeroed: binds */
		n = NULL;
	}
	hs->peer_cred = c;
out:
	/* drops the reservation unless an entry was stored meanwhile */
	if (reserved)
		xa_release(&mmt_attest_peers, c.node_id);
	mutex_unlock(&mmt_attest_lock);
	kfree(n);
	key_put(keyring);
	return err;
}

/**
 * mmt_attest_hs_derive() - mmt_hs_derive() with this load's node key
 * @hs: after mmt_attest_hs_peer()
 *
 * The node secret is copied under mmt_attest_lock into a stack buffer,
 * wiped after; the derivation (four X25519s through kpp, HKDF) runs
 * unlocked.
 *
 * Context: process; sleeps; takes mmt_attest_lock briefly.
 * Return: 0; -ENOKEY if not in attested mode, or if it was left during
 * the derivation (the results are wiped then); mmt_hs_derive()'s errors.
 */
int mmt_attest_hs_derive(struct mmt_hs *hs)
{
	u8 sk[MMT_X25519_BYTES];
	struct key *keyring;
	int err;

	keyring = mmt_attest_hold(sk);
	if (!keyring)
		return -ENOKEY;
	err = mmt_hs_derive(hs, sk);
	memzero_explicit(sk, sizeof(sk));
	mutex_lock(&mmt_attest_lock);
	if (mmt_attest_left(keyring))
		err = -ENOKEY;
	mutex_unlock(&mmt_attest_lock);
	key_put(keyring);
	if (err == -ENOKEY) {
		memzero_explicit(hs->secret, sizeof(hs->secret));
		memzero_explicit(hs->tag_own, sizeof(hs->tag_own));
		memzero_explicit(hs->tag_peer, sizeof(hs->tag_peer));
	}
	return err;
}

/**
 * mmt_attest_own_cred() - a copy of this node's installed credential, to
 *	send to the peers of its attested connections once renewed
 * @file: (out) the credential file, kmalloc'ed: the caller kfree()s it
 * @len: (out) its length in bytes
 * @c: (out) its body
 *
 * Context: process; sleeps; takes mmt_attest_lock briefly.
 * Return: 0; -ENOKEY if not in attested mode or no credential is
 * installed; -ENOMEM.  On error *@file is NULL.
 */
int mmt_attest_own_cred(u8 **file, u32 *len, struct mmt_cred *c)
{
	u8 *buf;
	int err = -ENOKEY;

	*file = NULL;
	buf = kmalloc(MMT_ATTEST_BLOB_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&mmt_attest_lock);
	if (mmt_attest_keyring && mmt_cur_cred_file) {
		*len = mmt_cur_cred_len;
		memcpy(buf, mmt_cur_cred_file, mmt_cur_cred_len);
		*c = mmt_cur_cred;
		err = 0;
	}
	mutex_unlock(&mmt_attest_lock);
	if (err)
		kfree(buf);
	else
		*file = buf;
	return err;
}

/**
 * mmt_attest_peer_renew() - check the renewed credential a peer sent on a
 *	live attested connection (docs/ATTESTATION.md "Renewal on a live
 *	connection")
 * @cred: the credential file: body, then a detached PKCS#7 signature
 * @len: its length in bytes
 * @now: the current time, UNIX seconds
 * @peer: the peer's credential the connection holds (its handshake's or
 *	its last renewal's); (out) the renewed one on success
 *
 * The checks of the hello, in its order (signature under the authority,
 * body, validity), then: the same node id and the same node key as
 * @peer, since the handshake showed only that the peer holds that key's
 * private half; a serial above @peer's (a credential sent again or
 * replayed is no renewal).  The binding of the node id (see
 * mmt_attest_hs_peer()) follows the renewal: its serial rises, and a
 * renewal of a key the id is no longer bound to is refused as a hello of
 * that key would be, unless its serial is higher.  The signature check
 * runs unlocked, under a reference to the keyring.
 *
 * Context: process; sleeps; takes mmt_attest_lock briefly.
 * Return: 0; -ENOKEY if not in attested mode (or if it was left during
 * the check); -EKEYREJECTED for a signature that does not verify, a
 * malformed body, another node id or node key than @peer's, a node id
 * bound to another key since; -EKEYEXPIRED outside the validity; -ESTALE
 * for a serial not above @peer's; -ENOMEM.  On error @peer and the
 * bindings are unchanged.
 */
int mmt_attest_peer_renew(const u8 *cred, u32 len, u64 now,
			  struct mmt_cred *peer)
{
	struct mmt_attest_peer *p;
	struct key *keyring;
	struct mmt_cred c;
	int err;

	if (len <= MMT_CRED_BODY_LEN || len > MMT_ATTEST_BLOB_MAX)
		return -EKEYREJECTED;
	keyring = mmt_attest_hold(NULL);
	if (!keyring)
		return -ENOKEY;
	err = mmt_attest_verify(cred, len, keyring, &c);
	if (err == -EINVAL)
		err = -EKEYREJECTED;
	if (!err && (now < c.not_before || now > c.not_after))
		err = -EKEYEXPIRED;
	if (!err && (c.node_id != peer->node_id ||
		     crypto_memneq(c.node_key, peer->node_key,
				   MMT_CRED_KEY_LEN)))
		err = -EKEYREJECTED;
	if (!err && c.serial <= peer->serial)
		err = -ESTALE;
	mutex_lock(&mmt_attest_lock);
	if (mmt_attest_left(keyring)) {
		err = -ENOKEY;
		goto out;
	}
	if (err)
		goto out;
	p = xa_load(&mmt_attest_peers, c.node_id);
	err = p ? mmt_attest_bind(p, &c) : 0;
	if (err)
		goto out;
	*peer = c;
out:
	mutex_unlock(&mmt_attest_lock);
	key_put(keyring);
	return err;
}

#if IS_ENABLED(CONFIG_MMT_KUNIT_TEST)
/**
 * mmt_attest_test_node_key() - KUnit only: make @sk this load's node key
 *	(so that a test vector's credential can be this node's)
 * @sk: the X25519 secret
 *
 * Context: process; sleeps; takes mmt_attest_lock.
 * Return: 0, -ENOKEY if not in attested mode, or mmt_x25519()'s errors.
 */
int mmt_attest_test_node_key(const u8 sk[MMT_X25519_BYTES])
{
	int err = -ENOKEY;

	mutex_lock(&mmt_attest_lock);
	if (mmt_attest_keyring) {
		memcpy(mmt_node_sk, sk, sizeof(mmt_node_sk));
		err = mmt_x25519(mmt_node_sk, NULL, mmt_node_pk);
	}
	mutex_unlock(&mmt_attest_lock);
	return err;
}
#endif

/*
 * The measured buffer (56 bytes): a domain string, the public key, the
 * boot state (docs/ATTESTATION.md "The node key event").
 */
#define MMT_NODE_KEY_EVENT	"mmt-node-key"
#define MMT_NODE_KEY_PREFIX	"mmt node key v2"	/* 16 bytes with NUL */
#define MMT_NODE_KEY_EVENT_LEN	56

/*
 * The kernel's lockdown level (MMT_LOCKDOWN_*), asked of the lockdown LSM
 * with the highest reason of each level; it can only rise while the
 * kernel runs.  A locked-down kernel logs one "Lockdown: ... is
 * restricted" notice for each level it refuses here.
 */
static u8 mmt_attest_lockdown(void)
{
	if (security_locked_down(LOCKDOWN_CONFIDENTIALITY_MAX - 1))
		return MMT_LOCKDOWN_CONFIDENTIALITY;
	if (security_locked_down(LOCKDOWN_INTEGRITY_MAX))
		return MMT_LOCKDOWN_INTEGRITY;
	return MMT_LOCKDOWN_NONE;
}

/* What the kernel enforces on module loading (MMT_BOOT_*). */
static u8 mmt_attest_boot_flags(void)
{
	return is_module_sig_enforced() ? MMT_BOOT_MODULE_SIG_ENFORCED : 0;
}

/**
 * mmt_attest_init() - draw this load's node key and measure it into IMA
 *
 * Draws the X25519 node key pair and measures the public half with
 * ima_measure_critical_data(): label "mmt", event name "mmt-node-key",
 * buffer "mmt node key v2\0" || public key || u8 lockdown level
 * (MMT_LOCKDOWN_*) || u8 MMT_BOOT_* flags (module signatures enforced) ||
 * 6 zero bytes (56 bytes, not hashed first): the key, and the boot state
 * it was born into, which can only harden while the kernel runs (lockdown
 * never drops, signature enforcement is never switched off), so the
 * IMA log's entry (template ima-buf unless the policy rule names
 * another) carries SHA-256 of that buffer and, for ima-buf, the buffer
 * itself.  The kernel's IMA measures the module file before its init runs,
 * so the event follows the module's own measurement in the log, and no
 * program can put an entry before one already logged.  An IMA policy that
 * does not measure critical data (ima_policy=critical_data, or a rule
 * "measure func=CRITICAL_DATA label=mmt") leaves the key out of the log:
 * the module loads and attested mode still works with a credential, but
 * an authority that checks the key event refuses such a node.
 * Runs once: a second call (KUnit suites) keeps the key.
 *
 * Context: process (module init); sleeps; takes mmt_attest_lock.
 * Return: 0.  A kernel without a "curve25519" kpp algorithm, or a signal
 * while the random generator is not seeded yet, leaves the module without
 * a node key (mmt_attest_set_authority() is then -ENOENT).
 */
int mmt_attest_init(void)
{
	u8 buf[MMT_NODE_KEY_EVENT_LEN] = {};
	int err;

	BUILD_BUG_ON(sizeof(MMT_NODE_KEY_PREFIX) != 16);
	BUILD_BUG_ON(16 + MMT_X25519_BYTES + 2 > MMT_NODE_KEY_EVENT_LEN);
	mutex_lock(&mmt_attest_lock);
	if (mmt_node_key_ok)
		goto out;
	/* at load, maybe early in boot: wait for a seeded generator */
	err = get_random_bytes_wait(mmt_node_sk, sizeof(mmt_node_sk));
	if (!err)
		err = mmt_x25519(mmt_node_sk, NULL, mmt_node_pk);
	if (err) {
		memzero_explicit(mmt_node_sk, sizeof(mmt_node_sk));
		memset(mmt_node_pk, 0, sizeof(mmt_node_pk));
		pr_info("no node key (%d): attested mode unavailable\n", err);
		goto out;
	}
	mmt_node_key_ok = true;
	memcpy(buf, MMT_NODE_KEY_PREFIX, sizeof(MMT_NODE_KEY_PREFIX));
	memcpy(buf + sizeof(MMT_NODE_KEY_PREFIX), mmt_node_pk,
	       MMT_X25519_BYTES);
	mmt_boot_lockdown = mmt_attest_lockdown();
	mmt_boot_flags = mmt_attest_boot_flags();
	buf[48] = mmt_boot_lockdown;
	buf[49] = mmt_boot_flags;
	err = ima_measure_critical_data("mmt", MMT_NODE_KEY_EVENT, buf,
					sizeof(buf), false, NULL, 0);
	if (!err)
		pr_info("node key %*phN measured into the IMA log (lockdown %u, module signatures %senforced)\n",
			8, mmt_node_pk, mmt_boot_lockdown,
			mmt_boot_flags & MMT_BOOT_MODULE_SIG_ENFORCED ? "" :
			"not ");
	else if (err == -ENOENT)
		pr_info("node key %*phN not measured: IMA is off or its policy does not measure critical data\n",
			8, mmt_node_pk);
	else
		pr_warn("node key %*phN not measured into the IMA log: %d\n",
			8, mmt_node_pk, err);
out:
	mutex_unlock(&mmt_attest_lock);
	return 0;
}

/**
 * mmt_attest_exit() - module exit: leave attested mode, wipe the node key
 *
 * Context: process; takes mmt_attest_lock.
 */
void mmt_attest_exit(void)
{
	mmt_attest_reset();
	mutex_lock(&mmt_attest_lock);
	memzero_explicit(mmt_node_sk, sizeof(mmt_node_sk));
	memset(mmt_node_pk, 0, sizeof(mmt_node_pk));
	mmt_node_key_ok = false;
	mutex_unlock(&mmt_attest_lock);
}

/**
 * mmt_attest_reset() - leave attested mode: drop the keyring, the
 * credential and the peer bindings (module exit; KUnit between cases).
 * The node key stays: it is this load's, measured once at load.
 *
 * Context: process; takes mmt_attest_lock.
 */
void mmt_attest_reset(void)
{
	mutex_lock(&mmt_attest_lock);
	if (mmt_attest_keyring) {
		/* unfindable at once; its restriction points into this module */
		key_invalidate(mmt_attest_keyring);
		key_put(mmt_attest_keyring);
	}
	mmt_attest_keyring = NULL;
	memset(&mmt_cur_cred, 0, sizeof(mmt_cur_cred));
	kfree(mmt_cur_cred_file);
	mmt_cur_cred_file = NULL;
	mmt_cur_cred_len = 0;
	mmt_attest_peers_clear();
	mmt_node_id_unassign(false);
	mmt_attest_publish();
	mutex_unlock(&mmt_attest_lock);
}

/*
 * mmt_attest_copy_blob() - the bytes of an mmt_attest_blob argument
 * Return: a kmalloc'ed copy (the caller kfree()s it) or an ERR_PTR:
 * -EFAULT, -EINVAL, -E2BIG, -ENOMEM.
 */
static void *mmt_attest_copy_blob(void __user *uarg, u32 *len)
{
	struct mmt_attest_blob b;
	u32 usize;
	void *buf;
	int err;

	err = mmt_copy_in(&b, sizeof(b), uarg, MMT_ATTEST_BLOB_SIZE_VER0,
			  &usize);
	if (err)
		return ERR_PTR(err);
	if (b.flags || b.reserved || !b.len || b.len > MMT_ATTEST_BLOB_MAX)
		return ERR_PTR(-EINVAL);
	buf = memdup_user(u64_to_user_ptr(b.data), b.len);
	if (!IS_ERR(buf))
		*len = b.len;
	return buf;
}

/* MMT_IOC_ATTEST_SET_AUTHORITY and _SET_CRED: see uapi/mmt.h. */
static int mmt_ioc_attest_blob(void __user *uarg, bool cred)
{
	void *buf;
	u32 len;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	buf = mmt_attest_copy_blob(uarg, &len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	if (cred)
		err = mmt_attest_set_cred(buf, len, ktime_get_real_seconds(),
					  NULL);
	else
		err = mmt_attest_set_authority(buf, len);
	kfree(buf);
	return err;
}

int mmt_ioc_attest_set_authority(void __user *uarg)
{
	return mmt_ioc_attest_blob(uarg, false);
}

int mmt_ioc_attest_set_cred(void __user *uarg)
{
	return mmt_ioc_attest_blob(uarg, true);
}

/* MMT_IOC_ATTEST_INFO: see uapi/mmt.h. */
int mmt_ioc_attest_info(void __user *uarg)
{
	struct mmt_attest_info info;
	u32 usize;
	int err;

	err = mmt_copy_in(&info, sizeof(info), uarg,
			  MMT_ATTEST_INFO_SIZE_VER0, &usize);
	if (err)
		return err;
	if (info.flags)
		return -EINVAL;
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.node_id = mmt_node_id();
	mmt_attest_info(&info);
	return mmt_copy_out(uarg, &info, sizeof(info), usize);
}
