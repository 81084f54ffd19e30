// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_keys.c - the key schedule: subkeys and channel keys derived from an
 * MMT key with HKDF-SHA256 (RFC 5869), the same in both builds
 *
 * Backend-independent: it calls only mmt_crypto_hkdf_sha256() and the
 * backends' *_alloc_raw() constructors, so the derivation (salt, info
 * strings, output layout) is written once.  docs/ENGINE.md, "Crypto
 * interface" and "Secure channel crypto".
 */
#include "mmt_lib.h"

/* Channel keys (format-independent): salt and infos of the first schedule. */
static const char mmt_hkdf_salt[] = "mmt-v1 salt";

/*
 * Closure format v2: MMT key -> keying root (kept by the driver) -> with a
 * keying salt, the subkeys.  The infos differ from every channel info.
 */
static const char mmt_root_salt[] = "mmt-v2 salt";
static const char mmt_root_info[] = "mmt v2 keyroot";
static const char mmt_keying_salt[] = "mmt-v2 keying";
static const char *const mmt_hkdf_info[MMT_NR_SUBKEYS] = {
	[MMT_SUBKEY_ENC] = "mmt v2 enc",
	[MMT_SUBKEY_MAC] = "mmt v2 mac",
	[MMT_SUBKEY_SEAL] = "mmt v2 seal",
};

static const char mmt_chan_info[] = "mmt v1 channel";
/*
 * Not "mmt v1 channel" || something: no binding can make a channel
 * context's info equal this one (they differ at byte 11, 'r' vs 'n').
 */
static const char mmt_chan_root_info[] = "mmt v1 chanroot";

/*
 * A 32-byte root of an MMT key: HKDF-SHA256(@key, @salt, @info), @out
 * zeroed on error.  The keying root and the channel root.
 */
static int mmt_root_of_key(const u8 *key, unsigned int key_len,
			   const char *salt, const char *info, u8 *out)
{
	int err;

	BUILD_BUG_ON(MMT_KEY_ROOT_BYTES != MMT_CHAN_ROOT_BYTES);
	if (!key || !out || (key_len != 16 && key_len != 32))
		return -EINVAL;
	err = mmt_crypto_hkdf_sha256(key, key_len, (const u8 *)salt,
				     strlen(salt), (const u8 *)info,
				     strlen(info), out, MMT_KEY_ROOT_BYTES);
	if (err)
		memzero_explicit(out, MMT_KEY_ROOT_BYTES);
	return err;
}

/* mmt_key_root(): kernel-doc in mmt_lib.h */
int mmt_key_root(const u8 *key, unsigned int key_len, u8 *root)
{
	return mmt_root_of_key(key, key_len, mmt_root_salt, mmt_root_info,
			       root);
}

/* mmt_crypto_alloc_root(): kernel-doc in mmt_lib.h */
struct mmt_crypto *mmt_crypto_alloc_root(const u8 *root, const u8 *ksalt)
{
	u8 sub[MMT_NR_SUBKEYS * MMT_SUBKEY_BYTES];
	u8 info[16 + MMT_KSALT_BYTES];
	struct mmt_crypto *c;
	size_t n;
	int i, err;

	if (!root || !ksalt)
		return ERR_PTR(-EINVAL);
	/*
	 * The keying salt goes into HKDF-Expand's info, after the label, and
	 * the root (secret, uniformly random) is the input key under a fixed
	 * extract salt: the subkeys are PRF outputs of the root, whatever
	 * salt a closure names (no reliance on HMAC keyed by public data).
	 */
	for (i = 0; i < MMT_NR_SUBKEYS; i++) {
		n = strlen(mmt_hkdf_info[i]);
		memcpy(info, mmt_hkdf_info[i], n);
		memcpy(info + n, ksalt, MMT_KSALT_BYTES);
		err = mmt_crypto_hkdf_sha256(root, MMT_KEY_ROOT_BYTES,
					     (const u8 *)mmt_keying_salt,
					     strlen(mmt_keying_salt), info,
					     n + MMT_KSALT_BYTES,
					     sub + i * MMT_SUBKEY_BYTES,
					     MMT_SUBKEY_BYTES);
		if (err) {
			memzero_explicit(sub, sizeof(sub));
			return ERR_PTR(err);
		}
	}
	c = mmt_crypto_alloc_raw(sub, ksalt);
	memzero_explicit(sub, sizeof(sub));
	return c;
}

/* mmt_crypto_alloc(): kernel-doc in mmt_lib.h */
struct mmt_crypto *mmt_crypto_alloc(const u8 *key, unsigned int key_len,
				    const u8 *ksalt)
{
	u8 root[MMT_KEY_ROOT_BYTES];
	struct mmt_crypto *c;
	int err;

	err = mmt_key_root(key, key_len, root);
	if (err)
		return ERR_PTR(err);
	c = mmt_crypto_alloc_root(root, ksalt);
	memzero_explicit(root, sizeof(root));
	return c;
}

/* mmt_chan_crypto_alloc(): kernel-doc in mmt_lib.h */
struct mmt_chan_crypto *mmt_chan_crypto_alloc(const u8 *key,
					      unsigned int key_len,
					      const u8 *bind, size_t bind_len)
{
	u8 info[sizeof(mmt_chan_info) - 1 + MMT_CHAN_BIND_MAX];
	u8 okm[MMT_CHAN_KEY_BYTES + MMT_CHAN_SALT_BYTES];
	size_t info_len = sizeof(mmt_chan_info) - 1;
	struct mmt_chan_crypto *c;
	int err;

	if (!key || (key_len != 16 && key_len != 32) ||
	    bind_len > MMT_CHAN_BIND_MAX || (bind_len && !bind))
		return ERR_PTR(-EINVAL);
	memcpy(info, mmt_chan_info, info_len);
	if (bind_len)
		memcpy(info + info_len, bind, bind_len);
	err = mmt_crypto_hkdf_sha256(key, key_len, (const u8 *)mmt_hkdf_salt,
				     strlen(mmt_hkdf_salt), info,
				     info_len + bind_len, okm, sizeof(okm));
	if (err)
		return ERR_PTR(err);
	c = mmt_chan_crypto_alloc_raw(okm, okm + MMT_CHAN_KEY_BYTES);
	memzero_explicit(okm, sizeof(okm));
	return c;
}

/* mmt_chan_root_key(): kernel-doc in mmt_lib.h */
int mmt_chan_root_key(const u8 *key, unsigned int key_len, u8 *root)
{
	return mmt_root_of_key(key, key_len, mmt_hkdf_salt, mmt_chan_root_info,
			       root);
}
