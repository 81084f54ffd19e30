// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_handshake.c - the attested hello of a connection: X25519 through the
 * kernel's kpp API, the transcript, the derivation and key confirmation
 *
 * In attested mode (docs/ATTESTATION.md) every new connection starts with
 * an exchange of hellos on the connection itself (the rdma_cm private data
 * is too small for a credential): each side sends an ephemeral X25519
 * share and its credential, checks the peer's credential against the
 * authority, and both derive, as Noise KK does with its four DH (ee, es,
 * se, ss; Noise Protocol Framework rev. 34, section 7.5), a handshake
 * secret and two key-confirmation tags over a transcript of both hello
 * nonces of the rdma_cm hello, both credentials and both shares.  Each
 * side sends its tag and checks the peer's.  The transport (messages,
 * waiting) is driver/mmt_conn_hs.c; what is here needs no RDMA and is
 * tested under KUnit (suite mmt_hs).
 *
 * Why kpp and not the curve25519 library: the kpp API picks the best
 * implementation the kernel has at run time (curve25519-x86_64 with ADX
 * and BMI2, else curve25519-generic), loads it on demand (the module has
 * no link-time dependency on libcurve25519 any more), and is the interface
 * the design names; the library is what WireGuard uses, for
 * its lower per-call cost (no transform allocation), which a handshake of
 * a few DH per connection does not need.  One of them only: the node key
 * is drawn with kpp too (driver/mmt_attest.c).
 */
#include <crypto/algapi.h>
#include <crypto/kpp.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "mmt_kcompat.h"

#include "mmt_internal.h"

/**
 * mmt_x25519() - X25519 (RFC 7748 section 5) through the kpp API
 *	("curve25519")
 * @sk: a 32-byte secret (clamped by the function, as RFC 7748 says)
 * @peer: the peer's 32-byte public key (u-coordinate); NULL for the base
 *	point, i.e. @sk's public key
 * @out: (out) 32 bytes: the shared secret, or the public key
 *
 * Context: process; sleeps (allocates a transform).
 * Return: 0; -EKEYREJECTED if the result is all zero (a peer key of small
 * order, RFC 7748 section 6.1: the check "MAY" there, done here) or @sk
 * is all zero; -ENOENT/-ENOPKG without a curve25519 kpp algorithm;
 * -ENOMEM.  @out is zeroed on error.
 */
int mmt_x25519(const u8 *sk, const u8 *peer, u8 *out)
{
	static const u8 zero[MMT_X25519_BYTES];
	struct crypto_kpp *tfm;
	struct kpp_request *req = NULL;
	struct scatterlist src, dst;
	DECLARE_CRYPTO_WAIT(wait);
	u8 *buf;
	int err;

	memset(out, 0, MMT_X25519_BYTES);
	tfm = crypto_alloc_kpp("curve25519", 0, 0);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	/* not on the stack: the scatterlists need linear-mapped memory */
	buf = kzalloc(2 * MMT_X25519_BYTES, GFP_KERNEL);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	err = crypto_kpp_set_secret(tfm, sk, MMT_X25519_BYTES);
	if (err) {
		err = -EKEYREJECTED;	/* the all-zero secret */
		goto out;
	}
	req = kpp_request_alloc(tfm, GFP_KERNEL);
	if (!req) {
		err = -ENOMEM;
		goto out;
	}
	if (peer)
		memcpy(buf, peer, MMT_X25519_BYTES);
	sg_init_one(&src, buf, MMT_X25519_BYTES);
	sg_init_one(&dst, buf + MMT_X25519_BYTES, MMT_X25519_BYTES);
	kpp_request_set_input(req, peer ? &src : NULL, MMT_X25519_BYTES);
	kpp_request_set_output(req, &dst, MMT_X25519_BYTES);
	kpp_request_set_callback(req, CRYPTO_TFM_REQ_MAY_SLEEP,
				 crypto_req_done, &wait);
	err = crypto_wait_req(peer ? crypto_kpp_compute_shared_secret(req) :
			      crypto_kpp_generate_public_key(req), &wait);
	if (!err && !crypto_memneq(buf + MMT_X25519_BYTES, zero,
				   MMT_X25519_BYTES))
		err = -EKEYREJECTED;
	if (!err)
		memcpy(out, buf + MMT_X25519_BYTES, MMT_X25519_BYTES);
out:
	kpp_request_free(req);
	kfree_sensitive(buf);
	crypto_free_kpp(tfm);
	return err;
}

/**
 * mmt_hs_start() - a handshake's own half: draw the ephemeral key and
 *	build the own hello
 * @hs: zeroed; (out) its ephemeral key and own hello
 * @initiator: true on the connecting side
 * @conn_rand: the connecting side's rdma_cm hello nonce
 * @accept_rand: the accepting side's
 * @cred: the own credential file (body and signature), @cred_len bytes
 * @cred_len: bytes of @cred, MMT_CRED_BODY_LEN + 1 .. MMT_ATTEST_BLOB_MAX
 *
 * The hello is the ephemeral public key (32 bytes) then the credential.
 *
 * Context: process; sleeps.
 * Return: 0; -EINVAL for a credential length out of range; mmt_x25519()'s
 * errors; -ENOMEM.  On error call mmt_hs_clear() all the same.
 */
int mmt_hs_start(struct mmt_hs *hs, bool initiator, u64 conn_rand,
		 u64 accept_rand, const u8 *cred, u32 cred_len)
{
	int err;

	if (cred_len <= MMT_CRED_BODY_LEN || cred_len > MMT_ATTEST_BLOB_MAX)
		return -EINVAL;
	hs->initiator = initiator;
	hs->conn_rand = conn_rand;
	hs->accept_rand = accept_rand;
	hs->own_len = MMT_X25519_BYTES + cred_len;
	hs->own = kmalloc(hs->own_len, GFP_KERNEL);
	if (!hs->own)
		return -ENOMEM;
	get_random_bytes(hs->e_sk, sizeof(hs->e_sk));
	err = mmt_x25519(hs->e_sk, NULL, hs->own);
	if (err)
		return err;
	memcpy(hs->own + MMT_X25519_BYTES, cred, cred_len);
	return 0;
}

/*
 * The transcript hash: SHA-256 (FIPS 180-4) of "mmt v1 attested hello",
 * le64 conn_rand, le64 accept_rand, then the connecting side's hello and
 * the accepting side's, each as le32 length || bytes (share ||
 * credential).  Both sides hash the same bytes in the same order.
 */
static int mmt_hs_transcript(struct mmt_hs *hs)
{
	static const char label[] = "mmt v1 attested hello";
	const u8 *ini = hs->initiator ? hs->own : hs->peer;
	const u8 *rsp = hs->initiator ? hs->peer : hs->own;
	u32 ini_len = hs->initiator ? hs->own_len : hs->peer_len;
	u32 rsp_len = hs->initiator ? hs->peer_len : hs->own_len;
	size_t n = sizeof(label) - 1 + 16 + 4 + ini_len + 4 + rsp_len;
	u8 *t, *p;
	int err;

	t = kmalloc(n, GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	p = t;
	memcpy(p, label, sizeof(label) - 1);
	p += sizeof(label) - 1;
	put_unaligned_le64(hs->conn_rand, p);
	put_unaligned_le64(hs->accept_rand, p + 8);
	p += 16;
	put_unaligned_le32(ini_len, p);
	memcpy(p + 4, ini, ini_len);
	p += 4 + ini_len;
	put_unaligned_le32(rsp_len, p);
	memcpy(p + 4, rsp, rsp_len);
	err = mmt_crypto_sha256(t, n, hs->th);
	kfree(t);
	return err;
}

/**
 * mmt_hs_peer_hello() - take the peer's hello (share || credential)
 * @hs: after mmt_hs_start()
 * @buf: the peer's hello as received, @len bytes (copied)
 * @len: MMT_X25519_BYTES + MMT_CRED_BODY_LEN + 1 .. MMT_HS_HELLO_MAX
 *
 * Only the length is checked here; the credential is checked by
 * mmt_attest_hs_peer().
 *
 * Context: process; sleeps.
 * Return: 0; -EKEYREJECTED for a length out of range (no credential);
 * -ENOMEM.
 */
int mmt_hs_peer_hello(struct mmt_hs *hs, const u8 *buf, u32 len)
{
	if (len <= MMT_X25519_BYTES + MMT_CRED_BODY_LEN ||
	    len > MMT_HS_HELLO_MAX)
		return -EKEYREJECTED;
	kfree(hs->peer);
	hs->peer = kmemdup(buf, len, GFP_KERNEL);
	if (!hs->peer)
		return -ENOMEM;
	hs->peer_len = len;
	return 0;
}

/* HKDF-SHA256 (RFC 5869) of the DH results, salt = transcript hash */
static int mmt_hs_expand(const u8 *ikm, const u8 *th, const char *info,
			 u8 *out)
{
	return mmt_crypto_hkdf_sha256(ikm, 4 * MMT_X25519_BYTES, th,
				      MMT_SHA256_BYTES, (const u8 *)info,
				      strlen(info), out, MMT_HS_SECRET_BYTES);
}

/**
 * mmt_hs_derive() - the four DH, the handshake secret and both tags
 * @hs: after mmt_hs_peer_hello() and the check of the peer's credential,
 *	whose node key is in @hs->peer_cred.node_key
 * @static_sk: this node's static X25519 secret (the node key's)
 *
 * ikm = ee || es || se || ss, where e/s name the connecting side's key
 * first: ee = DH(e_i, e_r), es = DH(e_i, s_r), se = DH(s_i, e_r), ss =
 * DH(s_i, s_r) (each side computes them from its own secrets and the
 * peer's public keys).  With th the transcript hash:
 * secret = HKDF-SHA256(ikm, salt th, info "mmt v1 hs secret"),
 * tag of the connecting side = HKDF(ikm, th, "mmt v1 hs confirm i"), of
 * the accepting side = HKDF(ikm, th, "mmt v1 hs confirm r"); 32 bytes
 * each.  A man in the middle who swaps a share changes th and ee on each
 * side, without the static secrets it cannot compute es, se and ss, so no
 * tag it can send verifies.
 *
 * Context: process; sleeps.
 * Return: 0; -EKEYREJECTED for a DH result of zero (a small-order share or
 * key); the crypto API's errors.  On error the secrets are wiped.
 */
int mmt_hs_derive(struct mmt_hs *hs, const u8 *static_sk)
{
	const u8 *peer_e = hs->peer, *peer_s = hs->peer_cred.node_key;
	u8 ikm[4 * MMT_X25519_BYTES];
	u8 *ee = ikm, *es = ikm + 32, *se = ikm + 64, *ss = ikm + 96;
	int err;

	err = mmt_hs_transcript(hs);
	if (!err)
		err = mmt_x25519(hs->e_sk, peer_e, ee);
	/* es: our ephemeral with their static if we connected, else ours */
	if (!err)
		err = hs->initiator ? mmt_x25519(hs->e_sk, peer_s, es) :
				      mmt_x25519(static_sk, peer_e, es);
	if (!err)
		err = hs->initiator ? mmt_x25519(static_sk, peer_e, se) :
				      mmt_x25519(hs->e_sk, peer_s, se);
	if (!err)
		err = mmt_x25519(static_sk, peer_s, ss);
	if (!err)
		err = mmt_hs_expand(ikm, hs->th, "mmt v1 hs secret",
				    hs->secret);
	if (!err)
		err = mmt_hs_expand(ikm, hs->th, "mmt v1 hs confirm i",
				    hs->initiator ? hs->tag_own :
						    hs->tag_peer);
	if (!err)
		err = mmt_hs_expand(ikm, hs->th, "mmt v1 hs confirm r",
				    hs->initiator ? hs->tag_peer :
						    hs->tag_own);
	memzero_explicit(ikm, sizeof(ikm));
	memzero_explicit(hs->e_sk, sizeof(hs->e_sk));
	if (err) {
		memzero_explicit(hs->secret, sizeof(hs->secret));
		memzero_explicit(hs->tag_own, sizeof(hs->tag_own));
		memzero_explicit(hs->tag_peer, sizeof(hs->tag_peer));
	}
	return err;
}

/**
 * mmt_hs_confirm() - check the peer's key-confirmation tag
 * @hs: after mmt_hs_derive()
 * @tag: the peer's MMT_HS_SECRET_BYTES, as received
 *
 * Context: any.
 * Return: 0, or -EKEYREJECTED if it is not the tag this side derived for
 * the peer (compared in constant time).
 */
int mmt_hs_confirm(const struct mmt_hs *hs, const u8 *tag)
{
	return crypto_memneq(tag, hs->tag_peer, MMT_HS_SECRET_BYTES) ?
	       -EKEYREJECTED : 0;
}

/**
 * mmt_hs_conn_id() - the connection id of an attested connection
 * @hs: after mmt_hs_derive()
 * @id: (out) the first 8 bytes, little-endian, of HKDF-SHA256(handshake
 *	secret, salt "mmt v1 conn id", info le64 conn_rand || le64
 *	accept_rand)
 *
 * Replaces mmt_conn_id_derive()'s id in attested mode: the id, bound into
 * every closure header and secure-channel key, then depends on both
 * attested identities and on fresh secrets of both sides.
 *
 * Context: process; sleeps.
 * Return: 0 or the crypto API's error.
 */
int mmt_hs_conn_id(const struct mmt_hs *hs, u64 *id)
{
	static const char salt[] = "mmt v1 conn id";
	u8 info[16], out[8];
	int err;

	put_unaligned_le64(hs->conn_rand, info);
	put_unaligned_le64(hs->accept_rand, info + 8);
	err = mmt_crypto_hkdf_sha256(hs->secret, sizeof(hs->secret),
				     (const u8 *)salt, sizeof(salt) - 1, info,
				     sizeof(info), out, sizeof(out));
	*id = err ? 0 : get_unaligned_le64(out);
	return err;
}

/**
 * mmt_hs_agree() - an MMT key agreement's key and tags
 *	(MMT_IOC_CONN_KEY_AGREE)
 * @hs_secret: the connection's handshake secret (MMT_HS_SECRET_BYTES)
 * @conn_id: the connection id
 * @seq: the agreement's number on the connection
 * @share_i: the connecting side's ephemeral public key (32 bytes)
 * @share_r: the accepting side's
 * @dh: X25519 of this side's ephemeral secret and the peer's share
 * @key_len: 16 or 32
 * @key: (out) @key_len bytes: the MMT key
 * @tag_i: (out) 32 bytes: the connecting side's key-confirmation tag
 * @tag_r: (out) 32 bytes: the accepting side's
 *
 * okm = HKDF-SHA256(@dh, salt @hs_secret, info "mmt v1 key agree" ||
 * le64 @conn_id || le64 @seq || @share_i || @share_r || le32 @key_len),
 * @key_len + 64 bytes: the key, then tag_i, then tag_r.  The handshake
 * secret binds the key to both credentials and to the connection (only
 * the two ends know it), @seq and the fresh shares make every agreement's
 * key another.
 *
 * Context: process; sleeps.
 * Return: 0, -EINVAL for a bad @key_len, or the crypto API's error
 * (outputs zeroed).
 */
int mmt_hs_agree(const u8 *hs_secret, u64 conn_id, u64 seq,
		 const u8 *share_i, const u8 *share_r, const u8 *dh,
		 u32 key_len, u8 *key, u8 *tag_i, u8 *tag_r)
{
	static const char label[] = "mmt v1 key agree";
	u8 info[sizeof(label) - 1 + 16 + 64 + 4];
	u8 okm[32 + 64], *p = info;
	int err;

	if (key_len != 16 && key_len != 32)
		return -EINVAL;
	memcpy(p, label, sizeof(label) - 1);
	p += sizeof(label) - 1;
	put_unaligned_le64(conn_id, p);
	put_unaligned_le64(seq, p + 8);
	memcpy(p + 16, share_i, MMT_X25519_BYTES);
	memcpy(p + 48, share_r, MMT_X25519_BYTES);
	put_unaligned_le32(key_len, p + 80);
	err = mmt_crypto_hkdf_sha256(dh, MMT_X25519_BYTES, hs_secret,
				     MMT_HS_SECRET_BYTES, info, sizeof(info),
				     okm, key_len + 64);
	if (!err) {
		memcpy(key, okm, key_len);
		memcpy(tag_i, okm + key_len, 32);
		memcpy(tag_r, okm + key_len + 32, 32);
	} else {
		memset(key, 0, key_len);
		memset(tag_i, 0, 32);
		memset(tag_r, 0, 32);
	}
	memzero_explicit(okm, sizeof(okm));
	return err;
}

/**
 * mmt_hs_clear() - free a handshake's buffers and wipe its secrets
 * @hs: any state from zeroed on
 *
 * Context: any.
 */
void mmt_hs_clear(struct mmt_hs *hs)
{
	kfree(hs->own);
	kfree(hs->peer);
	memzero_explicit(hs, sizeof(*hs));
}
