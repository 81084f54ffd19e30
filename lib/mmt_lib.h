/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmt_lib.h - the software MMT engine: geometry, split counters, counter-mode
 * encryption, Carter-Wegman MACs, the MMT root, sealing and closure format v2.
 *
 * Pure logic: no device, no RDMA, no sleeping locks.  The same sources build
 * into the kernel module (kernel crypto API backend, lib/mmt_crypto_kernel.c)
 * and into a user-space static library (OpenSSL libcrypto backend,
 * lib/mmt_crypto_openssl.c).  Portability lives in lib/mmt_compat.h only.
 *
 * Source: Feng et al., "Efficient Distributed Secure Memory with Migratable
 * Merkle Tree", HPCA 2023, sections III-IV; docs/ENGINE.md for the bit
 * layouts.
 *
 * Locking: none inside.  Every function that takes a struct mmt expects the
 * caller to serialize access to that MMT (the driver holds the PMO's mutex).
 */
#ifndef MMT_LIB_H
#define MMT_LIB_H

#include "mmt_compat.h"

/* ---------------------------------------------------------------- limits */

#define MMT_MAX_LEVELS		4	/* counter levels, paper Table V */
#define MMT_MIN_LOG_BLOCK	6	/* 64-byte blocks (a cache line) */
#define MMT_MAX_LOG_BLOCK	12	/* 4096-byte blocks */
#define MMT_MIN_LOG_ARITY	1
#define MMT_MAX_LOG_ARITY	6	/* 64 minor counters per node */
#define MMT_MAX_LOG_BLOCKS	20	/* blocks per MMT: bounded by the nonce */
#define MMT_MINOR_BITS		7	/* split-counter minor, as Yan et al. */
#define MMT_MINOR_MAX		((1u << MMT_MINOR_BITS) - 1)
#define MMT_MAJOR_BITS		33	/* 33 + 7 = 40-bit block counter */
#define MMT_MAJOR_MAX		((1ull << MMT_MAJOR_BITS) - 1)
#define MMT_GUA_BITS		58	/* paper: 58-bit global unique address */
#define MMT_GUA_MASK		((1ull << MMT_GUA_BITS) - 1)
#define MMT_NODE_ID_BITS	16	/* GUA = node id (16) | sequence (42) */
#define MMT_MAC_BYTES		8	/* 64-bit Carter-Wegman tag */
#define MMT_KEY_MAX		32	/* AES-256 */
#define MMT_SUBKEY_BYTES	16	/* derived subkeys: AES-128 */

/* ---------------------------------------------------------------- geometry */

/**
 * struct mmt_params - geometry of one MMT, computed once by mmt_params_init()
 * @levels: counter levels, 1..MMT_MAX_LEVELS; level 0 is the leaf level
 *	(one minor per data block), level @levels - 1 the top level, which is
 *	one node held in the trusted MMT root, never in untrusted memory.
 * @log_block_size: log2 of the block size in bytes (6..12)
 * @log_arity: log2 of the number of minor counters per node at each level
 * @block_size: bytes per block (encryption and data-MAC unit)
 * @log_blocks: log2 of @blocks
 * @blocks: data blocks per MMT (product of the arities)
 * @data_bytes: bytes of plaintext (= ciphertext) per MMT, the closure size
 * @level_nodes: number of nodes at each level (top level: 1)
 * @level_start: index of the first node of each level in the untrusted node
 *	array (leaf level first); for the top level, which is not in the
 *	array, it equals @node_count
 * @node_count: untrusted nodes per MMT (all levels but the top)
 * @node_size: bytes of one serialized node in untrusted memory, the same at
 *	every level: le64 major, u8 minor[max arity] zero-padded to a multiple
 *	of 8, le64 MAC (docs/ENGINE.md)
 * @macs_bytes: bytes of data MACs per MMT (MMT_MAC_BYTES per block)
 * @nodes_bytes: bytes of untrusted tree nodes per MMT
 * @meta_bytes: @macs_bytes + @nodes_bytes + MMT_CLOSURE_HDR_BYTES +
 *	MMT_SEALED_ROOT_BYTES, reported to users
 */
struct mmt_params {
	u8 levels;
	u8 log_block_size;
	u8 log_arity[MMT_MAX_LEVELS];
	u32 block_size;
	u32 log_blocks;
	u32 blocks;
	u64 data_bytes;
	u32 level_nodes[MMT_MAX_LEVELS];
	u32 level_start[MMT_MAX_LEVELS];
	u32 node_count;
	u32 node_size;
	u64 macs_bytes;
	u64 nodes_bytes;
	u64 meta_bytes;
};

#define MMT_ALIGN8(x)		(((x) + 7u) & ~7u)

/**
 * mmt_params_init() - validate a geometry and compute its params
 * @p: (out) params; zeroed on error
 * @levels: 1..MMT_MAX_LEVELS
 * @log_arity: log2 arity per level, leaf first; NULL for the paper's
 *	defaults (64, 32, 16, 16)
 * @log_block_size: MMT_MIN_LOG_BLOCK..MMT_MAX_LOG_BLOCK
 *
 * Only the first @levels entries of @log_arity are read (each
 * MMT_MIN_LOG_ARITY..MMT_MAX_LOG_ARITY).  With the defaults and 64-byte
 * blocks, 2/3/4 levels give 128 KiB / 2 MiB / 32 MiB closures.
 *
 * Context: any.
 * Return: 0, or -EINVAL if any value is out of range or the MMT would hold
 * more than 2^MMT_MAX_LOG_BLOCKS blocks.
 */
int mmt_params_init(struct mmt_params *p, unsigned int levels,
		    const u8 *log_arity, unsigned int log_block_size);

/* ---------------------------------------------------------------- crypto */

struct mmt_crypto;	/* opaque: per-key transforms and requests */

/**
 * enum mmt_subkey - independent subkeys derived from the MMT key by
 * HKDF-SHA256 (RFC 5869), salt "mmt-v1 salt", info = "mmt v1 " + name,
 * MMT_SUBKEY_BYTES each
 * @MMT_SUBKEY_ENC: data pads, AES-128-CTR from the nonce of a run ("enc")
 * @MMT_SUBKEY_MAC: Carter-Wegman pads and hash key ("mac")
 * @MMT_SUBKEY_SEAL: AES-128-GCM sealing of the MMT root ("seal")
 * @MMT_NR_SUBKEYS: number of subkeys
 */
enum mmt_subkey {
	MMT_SUBKEY_ENC,
	MMT_SUBKEY_MAC,
	MMT_SUBKEY_SEAL,
	MMT_NR_SUBKEYS
};

#define MMT_AES_BLOCK		16	/* bytes per AES block */
#define MMT_GCM_NONCE_BYTES	12	/* AES-GCM nonce (96-bit IV) */
#define MMT_GCM_TAG_BYTES	16	/* AES-GCM tag, appended to the text */
#define MMT_CRYPTO_ECB_MAX	65536	/* bytes per mmt_crypto_ecb() call */
#define MMT_CRYPTO_SEAL_MAX	1024	/* ad_len + text length per seal */
/*
 * Carter-Wegman hash keys (docs/ENGINE.md): MMT_HASH_KEYS multilinear keys
 * in Z_p, p = 2^61 - 1 (node MACs), then MMT_NH_KEYS 64-bit words of NH key
 * (data MACs, the first stage): the 32-bit key words L_x, two per 64-bit
 * word, one per 32-bit word of a 4 KiB block plus MMT_NH_SHIFT for the
 * second pass; then MMT_GF_KEYS keys K_0, K_1 of GF(2^64) (data MACs, the
 * second stage, format v4).
 */
#define MMT_HASH_KEYS		64
#define MMT_NH_PASSES		2	/* Toeplitz passes of NH with w = 32 */
#define MMT_NH_UNIT		64	/* bytes: word j paired with word j + 8 */
#define MMT_NH_SHIFT		16	/* key words between passes */
#define MMT_NH_KEYS		(((1u << MMT_MAX_LOG_BLOCK) / 4 + \
				  (MMT_NH_PASSES - 1) * MMT_NH_SHIFT) / 2)
#define MMT_GF_KEYS		2	/* K_0, K_1 in GF(2^64) */
#define MMT_ALL_KEYS		(MMT_HASH_KEYS + MMT_NH_KEYS + MMT_GF_KEYS)

/*
 * The crypto interface: the only code that calls a crypto library.  One file
 * per backend implements it (lib/mmt_crypto_kernel.c: kernel crypto API;
 * lib/mmt_crypto_openssl.c: libcrypto).  Transforms, requests and bounce
 * buffers are allocated in mmt_crypto_alloc(); the other calls allocate
 * nothing.  Exception: the secure-channel calls of the kernel backend
 * allocate their scatterlist tables per message (see mmt_chan_seal()).
 */

#define MMT_KSALT_BYTES		16	/* keying salt, closure format v2 */
#define MMT_RX_NONCE_BYTES	16	/* a receive's nonce, format v2 */
#define MMT_KEY_ROOT_BYTES	32	/* what the driver keeps of a key */

/**
 * mmt_key_root() - the keying root of an MMT key (closure format v2)
 * @key: the MMT key, @key_len bytes
 * @key_len: 16 or 32
 * @root: (out) MMT_KEY_ROOT_BYTES: HKDF-SHA256 (RFC 5869) of @key, salt
 *	"mmt-v2 salt", info "mmt v2 keyroot"; zeroed on error
 *
 * The driver keeps the root, never the key, so that it can set up the
 * context of any keying salt a received closure names
 * (mmt_crypto_alloc_root()).  docs/ENGINE.md "Keying salt".
 *
 * Context: may sleep (kernel crypto API).
 * Return: 0; -EINVAL for a NULL argument or another @key_len; or the
 * crypto library's error.
 */
int mmt_key_root(const u8 *key, unsigned int key_len, u8 *root);

/**
 * mmt_crypto_alloc_root() - set up the context of one keying
 * @root: MMT_KEY_ROOT_BYTES from mmt_key_root()
 * @ksalt: MMT_KSALT_BYTES keying salt: chosen at random for every keying
 *	(the driver: at MMT_IOC_PMO_SET_KEY), or taken from a received
 *	closure's header
 *
 * Derives MMT_NR_SUBKEYS 16-byte subkeys with HKDF-SHA256 (RFC 5869, IKM
 * @root, salt @ksalt, info "mmt v2 enc" / "mmt v2 mac" / "mmt v2 seal"),
 * keys one AES-128-ECB transform per ENC/MAC subkey, one AES-128-CTR
 * transform with the ENC subkey and one AES-128-GCM
 * transform (16-byte tag) with the SEAL subkey, and derives the
 * Carter-Wegman hash key (mmt_hash_key_init()).  The context remembers
 * @ksalt (mmt_crypto_ksalt()).  The subkeys are wiped from the stack
 * before returning.  The kernel backend logs each transform's driver name
 * once.  Two keyings of one key thus have independent subkeys, so pads and
 * sealing nonces of one keying never meet another's (docs/ENGINE.md
 * "Keying salt").
 *
 * Context: process context, may sleep (GFP_KERNEL).
 * Return: the context, or ERR_PTR(-EINVAL) for a NULL argument,
 * ERR_PTR(-ENOMEM) on allocation failure, ERR_PTR(-ENOENT) (or the crypto
 * API's error) if a transform is unavailable.  Never NULL.
 */
struct mmt_crypto *mmt_crypto_alloc_root(const u8 *root, const u8 *ksalt);

/**
 * mmt_crypto_alloc() - mmt_key_root() then mmt_crypto_alloc_root()
 * @key: the MMT key (AES-128 or AES-256 strength input keying material)
 * @key_len: 16 or 32 bytes
 * @ksalt: MMT_KSALT_BYTES keying salt (see mmt_crypto_alloc_root())
 *
 * The same subkeys as the driver derives for (@key, @ksalt).  The root is
 * wiped from the stack before returning.
 *
 * Context: process context, may sleep (GFP_KERNEL).
 * Return: as mmt_crypto_alloc_root(); ERR_PTR(-EINVAL) also if @key_len
 * is not 16 or 32.
 */
struct mmt_crypto *mmt_crypto_alloc(const u8 *key, unsigned int key_len,
				    const u8 *ksalt);

/**
 * mmt_crypto_alloc_raw() - TEST ONLY: set up a context with given subkeys
 * @subkeys: MMT_NR_SUBKEYS * MMT_SUBKEY_BYTES bytes, in enum mmt_subkey
 *	order, used as is (no HKDF), so that known-answer tests run the real
 *	ECB, CTR and GCM code paths with the standards' keys
 * @ksalt: MMT_KSALT_BYTES the context reports as its keying salt, or NULL
 *	for zeros
 *
 * Context: process context, may sleep.
 * Return: as mmt_crypto_alloc(), without the -EINVAL case.
 */
struct mmt_crypto *mmt_crypto_alloc_raw(const u8 *subkeys, const u8 *ksalt);

/**
 * mmt_crypto_ksalt() - the keying salt a context was derived with
 * @c: a context
 *
 * Context: any.
 * Return: MMT_KSALT_BYTES bytes, valid as long as @c.
 */
const u8 *mmt_crypto_ksalt(const struct mmt_crypto *c);

/**
 * mmt_crypto_free() - free a context and wipe all its key material
 * @c: context from mmt_crypto_alloc(); NULL and ERR_PTR values are ignored
 *
 * Context: process context.
 */
void mmt_crypto_free(struct mmt_crypto *c);

/**
 * mmt_crypto_ecb() - AES-128-ECB encryption of whole blocks, one request
 * @c: context
 * @k: MMT_SUBKEY_ENC or MMT_SUBKEY_MAC
 * @in: @len bytes; may equal @out (in place)
 * @out: @len bytes
 * @len: multiple of MMT_AES_BLOCK, at most MMT_CRYPTO_ECB_MAX; 0 is a no-op
 *
 * Used to turn many nonce blocks into pads at once (the caller batches up
 * to its scratch size).  Kernel: @in and @out must be kmalloc'd or
 * vmalloc'd memory (never on the stack): they are mapped page by page into
 * scatterlists; the request is preallocated and waited for if asynchronous.
 *
 * Context: may sleep (async transforms are waited for).  Callers serialize
 * use of one context (one request per context).
 * Return: 0; -EINVAL if @k is not ENC or MAC or @len is not a multiple of
 * 16 or too large; or the crypto library's error (none expected).
 */
int mmt_crypto_ecb(struct mmt_crypto *c, enum mmt_subkey k, const u8 *in,
		   u8 *out, size_t len);

/**
 * mmt_crypto_ctr() - AES-128-CTR keystream under the ENC subkey
 * @c: context
 * @iv: MMT_AES_BLOCK bytes, the first counter block (a big-endian 128-bit
 *	integer; not changed)
 * @out: (out) @len bytes: AES_ENC(iv), AES_ENC(iv + 1), ... (NIST SP
 *	800-38A section 6.5, the standard incrementing function over all 128
 *	bits, as the kernel's "ctr(aes)" and OpenSSL's AES-128-CTR do)
 * @len: multiple of MMT_AES_BLOCK, at most MMT_CRYPTO_ECB_MAX; 0 is a no-op
 *
 * The data pads of a run of sub-blocks with consecutive nonces
 * (docs/ENGINE.md "Data encryption: pads"): the same bytes as
 * mmt_crypto_ecb() under MMT_SUBKEY_ENC over the nonces written out.
 * Kernel: @out must be kmalloc'd or vmalloc'd memory (mapped page by page);
 * the keystream is the encryption of the zero page.  User space: of a
 * constant zero buffer.
 *
 * Context: may sleep (async transforms are waited for).  Callers serialize
 * use of one context (one request per context).
 * Return: 0; -EINVAL if @len is not a multiple of 16 or too large; or the
 * crypto library's error (none expected).
 */
int mmt_crypto_ctr(struct mmt_crypto *c, const u8 *iv, u8 *out, size_t len);

/**
 * mmt_crypto_ctr_xor() - AES-128-CTR encryption under the ENC subkey
 * @c: context
 * @iv: MMT_AES_BLOCK bytes, the first counter block (not changed)
 * @in: @len bytes
 * @out: (out) @len bytes: @in XOR the keystream of mmt_crypto_ctr() from
 *	@iv; may be @in (in place), must not overlap it otherwise
 * @len: multiple of MMT_AES_BLOCK, at most MMT_CRYPTO_ECB_MAX; 0 is a no-op
 *
 * The data path's whole blocks (docs/ENGINE.md "Data encryption: pads"):
 * mmt_write() encrypts plaintext into scratch, mmt_read() decrypts in the
 * caller's buffer, the AES and the XOR in one pass of the library.
 * Kernel: @in and @out are mapped page by page when they are linear or
 * vmalloc'd memory; other memory (e.g. a module's static data) goes
 * through the context's bounce buffer, 1 KiB at a time.  User space:
 * OpenSSL's AES-128-CTR.
 *
 * Context: may sleep (async transforms are waited for).  Callers serialize
 * use of one context (one request per context).
 * Return: 0; -EINVAL if @len is not a multiple of 16 or too large; or the
 * crypto library's error (none expected).
 */
int mmt_crypto_ctr_xor(struct mmt_crypto *c, const u8 *iv, const u8 *in,
		       u8 *out, size_t len);

/**
 * mmt_crypto_seal() - AES-128-GCM encryption under the SEAL subkey
 * @c: context
 * @nonce12: MMT_GCM_NONCE_BYTES nonce; must never repeat under one key
 * @ad: @ad_len bytes of associated data (authenticated, not encrypted)
 * @ad_len: bytes of @ad
 * @pt: @pt_len bytes of plaintext
 * @pt_len: bytes of @pt; @ad_len + @pt_len <= MMT_CRYPTO_SEAL_MAX
 * @ct_tag: (out) @pt_len bytes of ciphertext then MMT_GCM_TAG_BYTES of tag;
 *	may not overlap @pt
 *
 * Source: NIST SP 800-38D; text is copied through a preallocated bounce
 * buffer (scatterlists need linear memory).
 *
 * Context: may sleep.
 * Return: 0; -EINVAL if the lengths exceed MMT_CRYPTO_SEAL_MAX; or the
 * crypto library's error.
 */
int mmt_crypto_seal(struct mmt_crypto *c, const u8 *nonce12, const u8 *ad,
		    size_t ad_len, const u8 *pt, size_t pt_len, u8 *ct_tag);

/**
 * mmt_crypto_unseal() - AES-128-GCM decryption and tag check (SEAL subkey)
 * @c: context
 * @nonce12: MMT_GCM_NONCE_BYTES nonce used by mmt_crypto_seal()
 * @ad: @ad_len bytes of associated data
 * @ad_len: bytes of @ad
 * @ct_tag: @ct_len bytes of ciphertext then MMT_GCM_TAG_BYTES of tag
 * @ct_len: bytes of ciphertext, NOT counting the tag (= plaintext length);
 *	@ad_len + @ct_len <= MMT_CRYPTO_SEAL_MAX
 * @pt: (out) @ct_len bytes; written only if the tag is valid
 *
 * Context: may sleep.
 * Return: 0; -EBADMSG if the tag does not match (@pt untouched); -EINVAL
 * if the lengths exceed MMT_CRYPTO_SEAL_MAX; or the crypto library's error.
 */
int mmt_crypto_unseal(struct mmt_crypto *c, const u8 *nonce12, const u8 *ad,
		      size_t ad_len, const u8 *ct_tag, size_t ct_len, u8 *pt);

/**
 * mmt_crypto_hkdf_sha256() - HKDF-SHA256 extract-then-expand (RFC 5869)
 * @ikm: input keying material, @ikm_len bytes (> 0)
 * @ikm_len: bytes of @ikm
 * @salt: @salt_len bytes; NULL/0 means HashLen zero bytes (RFC 5869 2.2)
 * @salt_len: bytes of @salt
 * @info: @info_len bytes of context; may be NULL if @info_len is 0
 * @info_len: bytes of @info
 * @okm: (out) @okm_len bytes of output keying material
 * @okm_len: 1..255 * 32 bytes
 *
 * Context: process context, may sleep (the kernel backend allocates an
 * "hmac(sha256)" transform per call: use it at setup only).
 * Return: 0; -EINVAL for a length out of range (@okm untouched); -ENOMEM
 * or the crypto library's error (@okm zeroed).
 */
int mmt_crypto_hkdf_sha256(const u8 *ikm, size_t ikm_len, const u8 *salt,
			   size_t salt_len, const u8 *info, size_t info_len,
			   u8 *okm, size_t okm_len);

#define MMT_SHA256_BYTES	32

/**
 * mmt_crypto_sha256() - SHA-256 (FIPS 180-4) of a buffer
 * @data: @len bytes, any memory
 * @len: bytes of @data
 * @out: (out) MMT_SHA256_BYTES
 *
 * Kernel: the library sha256() (<crypto/sha2.h>); user space: EVP_Digest.
 *
 * Context: any (kernel); no allocation in the kernel.
 * Return: 0, or the crypto library's error (user space; @out zeroed).
 */
int mmt_crypto_sha256(const u8 *data, size_t len, u8 *out);

/**
 * struct mmt_sha256_ctx - a SHA-256 computed piece by piece
 * @opaque: the backend's state (kernel: struct sha256_state; user space:
 *	an EVP_MD_CTX pointer)
 *
 * mmt_crypto_sha256_init(), any number of mmt_crypto_sha256_update(),
 * then mmt_crypto_sha256_final(), always (it frees what init allocated).
 * No buffer of the whole input: the migration's COMMIT digest streams
 * its N records through it.
 */
struct mmt_sha256_ctx {
	u64 opaque[16];
};

int mmt_crypto_sha256_init(struct mmt_sha256_ctx *c);
int mmt_crypto_sha256_update(struct mmt_sha256_ctx *c, const u8 *data,
			     size_t len);
int mmt_crypto_sha256_final(struct mmt_sha256_ctx *c, u8 *out);

/**
 * mmt_crypto_hash_key() - the Carter-Wegman hash key of a context
 * @c: context
 *
 * Return: MMT_ALL_KEYS values: MMT_HASH_KEYS values, each < 2^61 - 1,
 * then MMT_NH_KEYS 64-bit words of NH key stored little-endian (as bytes:
 * the 32-bit NH key words L_0, L_1, ... in little-endian order, see
 * mmt_nh()), then the MMT_GF_KEYS elements of GF(2^64) of mmt_gf64(); key
 * material, wiped by mmt_crypto_free().  Read-only for callers.
 */
const u64 *mmt_crypto_hash_key(const struct mmt_crypto *c);

/**
 * mmt_hash_key_init() - derive the Carter-Wegman hash key (lib/mmt_tree.c)
 * @c: context whose MAC transform is keyed
 * @key: (out) MMT_ALL_KEYS values: key i is the 64-bit half (i % 2, big
 *	endian) of AES_MAC(nonce(domain 3, index i / 2)), reduced mod 2^61 - 1
 *	for i < MMT_HASH_KEYS, stored little-endian as is for the NH keys (NH
 *	key word L_x is bits 32 (x % 2) .. 32 (x % 2) + 31 of key
 *	MMT_HASH_KEYS + x / 2), as is for the last MMT_GF_KEYS (K_0, K_1 of
 *	mmt_gf64())
 *
 * Called by the backends at the end of mmt_crypto_alloc(); not by others.
 *
 * Context: may sleep.
 * Return: 0 or the error of mmt_crypto_ecb().
 */
int mmt_hash_key_init(struct mmt_crypto *c, u64 *key);

/*
 * The secure channel (DESIGN.md section 1, channel "secure"): the baseline
 * that closure delegation is measured against.  The sender encrypts a
 * message with AES-128-GCM into a bounce buffer, RDMA-writes it, and the
 * receiver copies it in and decrypts it.  Its key is derived from the MMT
 * key and is independent of the MMT subkeys.  The record nonce is built
 * like the TLS 1.2 AES-GCM nonce (RFC 5288 section 3): a 4-byte salt
 * derived with the key, then the 8-byte big-endian message sequence number
 * (the "explicit nonce", which the caller sends in clear with the record).
 * A context refuses to seal a sequence number that is not above the last
 * one it sealed, and to open one that is not above the last one it opened
 * (replay and reorder), so it fails closed, as net/tls does.
 */
#define MMT_CHAN_KEY_BYTES	16		/* AES-128-GCM channel key */
#define MMT_CHAN_SALT_BYTES	4		/* implicit part of the nonce */
#define MMT_CHAN_MSG_MAX	(64u << 20)	/* bytes of text per message */
#define MMT_CHAN_AD_MAX		256		/* bytes of AD per message */
#define MMT_CHAN_BIND_MAX	64		/* bytes of binding, see alloc */

struct mmt_chan_crypto;	/* opaque: channel key, salt, transform, seqs */

/**
 * mmt_chan_crypto_alloc() - derive a secure-channel key and set up AES-GCM
 * @key: the MMT key
 * @key_len: 16 or 32 bytes
 * @bind: @bind_len bytes that name this use of the key; may be NULL if
 *	@bind_len is 0.  Must differ for every context that seals under the
 *	same @key, e.g. (connection id, sender node id, direction) as fixed
 *	width little-endian fields: two contexts with the same key and binding
 *	share one nonce space, and sealing the same sequence number in both
 *	would reuse a GCM nonce (it leaks the XOR of the plaintexts and the
 *	authentication key).  A receiver passes the sender's binding.
 * @bind_len: 0..MMT_CHAN_BIND_MAX
 *
 * Derives MMT_CHAN_KEY_BYTES + MMT_CHAN_SALT_BYTES bytes with HKDF-SHA256
 * (RFC 5869): salt "mmt-v1 salt", info "mmt v1 channel" || @bind; the first
 * 16 bytes key AES-128-GCM (16-byte tag), the last 4 are the nonce salt.
 * The info differs from every MMT subkey's, so the channel key is
 * independent of them.  Kernel: one "gcm(aes)" aead and its request,
 * allocated here, driver name logged once.  No sequence number has been
 * sealed or opened yet: 0 is the first valid one in both directions.
 *
 * Context: process context, may sleep (GFP_KERNEL).
 * Return: the context, or ERR_PTR(-EINVAL) if @key_len is not 16 or 32,
 * @key is NULL, or @bind_len is too large (or @bind NULL with a length);
 * ERR_PTR(-ENOMEM); or the crypto library's error (ERR_PTR(-ENOENT) if
 * "gcm(aes)" is not available).  Never NULL.
 */
struct mmt_chan_crypto *mmt_chan_crypto_alloc(const u8 *key,
					      unsigned int key_len,
					      const u8 *bind, size_t bind_len);

#define MMT_CHAN_ROOT_BYTES	32		/* channel root key */

/**
 * mmt_chan_root_key() - derive the channel root key of an MMT key
 * @key: the MMT key
 * @key_len: 16 or 32 bytes
 * @root: (out) MMT_CHAN_ROOT_BYTES: HKDF-SHA256 (RFC 5869) of @key, salt
 *	"mmt-v1 salt", info "mmt v1 chanroot"
 *
 * The driver keeps this instead of the MMT key (which it never keeps) and
 * passes it as the @key of mmt_chan_crypto_alloc() (@key_len
 * MMT_CHAN_ROOT_BYTES): channel key || salt = HKDF(root, "mmt-v1 salt",
 * "mmt v1 channel" || bind).  Two PMOs keyed with the same MMT key have the
 * same root.  The info is not "mmt v1 channel" followed by anything, so no
 * binding makes a channel context of the MMT key equal the root, and it
 * differs from every subkey's info: the root is independent of the MMT
 * subkeys.  The caller wipes @root (memzero_explicit()) when done.
 *
 * Context: process context, may sleep (the kernel HKDF allocates).
 * Return: 0; -EINVAL if @key or @root is NULL or @key_len is not 16 or 32
 * (@root untouched); or the HKDF's error (@root zeroed).
 */
int mmt_chan_root_key(const u8 *key, unsigned int key_len, u8 *root);

/**
 * mmt_chan_crypto_alloc_raw() - TEST ONLY: a channel context from a raw key
 * @key: MMT_CHAN_KEY_BYTES AES-128 key, used as is (no HKDF)
 * @salt: MMT_CHAN_SALT_BYTES nonce salt
 *
 * Lets known-answer tests run the real seal/open path with the GCM spec's
 * keys and IVs (IV = @salt || big-endian seq).
 *
 * Context: process context, may sleep.
 * Return: as mmt_chan_crypto_alloc(), without the -EINVAL case.
 */
struct mmt_chan_crypto *mmt_chan_crypto_alloc_raw(const u8 *key,
						  const u8 *salt);

/**
 * mmt_chan_crypto_free() - free a channel context and wipe its key material
 * @c: context; NULL and ERR_PTR values are ignored
 *
 * Context: process context.
 */
void mmt_chan_crypto_free(struct mmt_chan_crypto *c);

/**
 * mmt_chan_seal() - AES-128-GCM encrypt one secure-channel message
 * @c: context
 * @seq: message sequence number, sent in clear by the caller; must be above
 *	every seq sealed by @c before (the first may be 0)
 * @ad: @ad_len bytes of associated data (authenticated, not encrypted), any
 *	memory; may be NULL if @ad_len is 0
 * @ad_len: 0..MMT_CHAN_AD_MAX
 * @pt: @len bytes of plaintext
 * @out: (out) @len bytes of ciphertext then MMT_GCM_TAG_BYTES of tag; may
 *	equal @pt (in place, then @pt needs room for the tag) but must not
 *	otherwise overlap it
 * @len: 0..MMT_CHAN_MSG_MAX bytes of text
 *
 * Nonce = salt (4 bytes) || @seq (8 bytes, big endian): NIST SP 800-38D
 * section 8.2.1 deterministic construction, as TLS 1.2 (RFC 5288).  One
 * request per message, whatever @len.  Kernel: @pt and @out must be
 * kmalloc'd or vmalloc'd (never the stack); they are mapped page by page
 * into scatterlists allocated per call with sg_alloc_table() (up to 16385
 * entries for a 64 MiB message: a few page allocations, small next to the
 * encryption; acceptable for a baseline), with @ad copied first into a
 * buffer of the context so that it is the first scatterlist entry.
 *
 * Once the arguments are checked and the scatterlists allocated, @seq is
 * consumed even if the cipher then fails (never expected): a nonce is
 * never used twice, and @out is zeroed on such a failure.
 *
 * Context: process context, may sleep (allocation; asynchronous transforms
 * are waited for).  Callers serialize calls on one context.
 * Return: 0; -EINVAL if @len or @ad_len is too large, the buffers overlap
 * partially, or @seq is not above the last sealed seq; -EOVERFLOW if
 * U64_MAX has been sealed (the key is used up: allocate a context with a
 * new binding); -ENOMEM (kernel, nothing changed); or the crypto library's
 * error.  On an error before the cipher runs, nothing changed.
 */
int mmt_chan_seal(struct mmt_chan_crypto *c, u64 seq, const u8 *ad,
		  size_t ad_len, const u8 *pt, u8 *out, size_t len);

/**
 * mmt_chan_open() - verify and decrypt one secure-channel message
 * @c: context with the sender's key and salt
 * @seq: the sequence number the sender sealed the message with; must be
 *	above every seq opened by @c before (replay, reorder)
 * @ad: @ad_len bytes of associated data, as given to mmt_chan_seal()
 * @ad_len: 0..MMT_CHAN_AD_MAX
 * @in: @len bytes of ciphertext then MMT_GCM_TAG_BYTES of tag (untrusted
 *	contents, but trusted memory: copy the message out of an RDMA-writable
 *	buffer first, as the design's "copy, decrypt" says, because the
 *	library may read the ciphertext twice, once for the tag and once to
 *	decrypt, and a peer writing between the two could have unauthenticated
 *	text accepted)
 * @pt: (out) @len bytes of plaintext; may equal @in (in place) but must not
 *	otherwise overlap it
 * @len: 0..MMT_CHAN_MSG_MAX bytes of text, not counting the tag
 *
 * The tag is checked in constant time by the library (crypto_memneq /
 * CRYPTO_memcmp).  On -EBADMSG, @pt is zeroed: it never holds unverified
 * plaintext (the libraries decrypt before they check).  @seq becomes the
 * last opened one only on success.  Kernel: buffers as for mmt_chan_seal().
 *
 * Context: process context, may sleep.  Callers serialize calls on one
 * context.
 * Return: 0; -EBADMSG if the tag does not match (wrong key, seq, AD, or
 * modified text or tag); -ESTALE if @seq is not above the last opened seq
 * (@pt untouched); -EINVAL if @len or @ad_len is too large or the buffers
 * overlap partially (@pt untouched); -ENOMEM (kernel); or the crypto
 * library's error (@pt zeroed).  Only success changes @c.
 */
int mmt_chan_open(struct mmt_chan_crypto *c, u64 seq, const u8 *ad,
		  size_t ad_len, const u8 *in, u8 *pt, size_t len);

/**
 * mmt_chan_open_seq() - check (and take) @seq as opened on @c, in order
 * @c: the context whose sequence state orders a transfer's messages
 * @seq: the sequence number of a message another context with the same
 *	key and salt opened (a secure-channel receive's I/O worker)
 * @take: on success @seq becomes the last opened one; false: only check
 *
 * The sequence half of mmt_chan_open() without its crypto: -ESTALE unless
 * @seq is above every seq opened (or taken) by @c before.  A receive that opens messages on several
 * contexts at once calls it on its own context in message order, after a
 * worker's mmt_chan_open() succeeded and before it uses the plaintext, so
 * that no message is accepted out of order or twice whatever the workers
 * saw.
 *
 * Context: any; callers serialize calls on one context (with
 * mmt_chan_open() too).
 * Return: 0, or -ESTALE (@c unchanged).
 */
int mmt_chan_open_seq(struct mmt_chan_crypto *c, u64 seq, bool take);

/* ---------------------------------------------------------------- root */

/**
 * enum mmt_state - state of one MMT (DESIGN.md section 1)
 * @MMT_INVALID: not allocated or reclaimed; plain memory
 * @MMT_VALID: active; every access is checked
 * @MMT_SENDING: read-only until the delegation completes
 * @MMT_WAITING: receive buffer waiting for a closure
 * @MMT_LANDING: destination of a live migration: a closure of this index
 *	was accepted, the migration is not committed yet; neither readable
 *	nor writable, a newer closure of the index may replace it
 *	(docs/MIGRATION.md)
 * @MMT_NR_STATES: number of states, not a state
 */
enum mmt_state {
	MMT_INVALID,
	MMT_VALID,
	MMT_SENDING,
	MMT_WAITING,
	MMT_LANDING,
	MMT_NR_STATES
};

/**
 * struct mmt_node_ctr - the counters of one tree node (trusted copy)
 * @major: shared major counter, < 2^MMT_MAJOR_BITS
 * @minor: one minor per child, each <= MMT_MINOR_MAX
 */
struct mmt_node_ctr {
	u64 major;
	u8 minor[1u << MMT_MAX_LOG_ARITY];
};

/**
 * struct mmt_root - the trusted MMT root, kept only in module memory
 * @state: one of enum mmt_state; change it only with mmt_root_transition()
 * @read_only: VALID but received in copy mode: writes fail with -EPERM
 * @regua_due: VALID, but a transfer of it failed (the receiver may hold a
 *	writable copy under @gua) and it is not yet re-encrypted under a
 *	fresh GUA: writes and sealing fail with -EPERM until mmt_regua()
 *	succeeds, which clears it; reads work
 * @gua: global unique address (58 bits) bound into every pad
 * @root_counter: freshness counter, bumped on every write and every seal
 * @top: counters of the top-level node
 */
struct mmt_root {
	enum mmt_state state;
	bool read_only;
	bool regua_due;
	u64 gua;
	u64 root_counter;
	struct mmt_node_ctr top;
};

int mmt_root_transition(struct mmt_root *r, enum mmt_state to);
const char *mmt_state_name(enum mmt_state s);

/*
 * Root sealing (lib/mmt_root.c, layout in docs/ENGINE.md): AES-128-GCM under
 * MMT_SUBKEY_SEAL, 96-bit nonce = GUA (58 bits) << 38 | root counter (38
 * bits), sent in clear at the head of the sealed root.  The root counter is
 * bumped before every seal and never wraps, so a nonce never repeats under a
 * key as long as one GUA has one writer (DESIGN.md section 5).
 */
#define MMT_ROOT_COUNTER_BITS	38
#define MMT_ROOT_COUNTER_MAX	((1ull << MMT_ROOT_COUNTER_BITS) - 1)
#define MMT_ROOT_NONCE_BYTES	MMT_GCM_NONCE_BYTES

void mmt_root_nonce(u64 gua, u64 root_counter, u8 *nonce);
int mmt_root_seal(struct mmt_root *r, const struct mmt_params *p,
		  struct mmt_crypto *c, const u8 *ad, size_t ad_len, u8 *out);
int mmt_root_unseal(const struct mmt_params *p, struct mmt_crypto *c,
		    const u8 *ad, size_t ad_len, const u8 *in,
		    struct mmt_root *r);

/* ---------------------------------------------------------------- MMT */

/**
 * struct mmt - one MMT: its trusted root and views of its untrusted memory
 * @p: geometry (shared by all MMTs of a PMO)
 * @crypto: key material (shared by all MMTs of a PMO)
 * @root: trusted root
 * @data: ciphertext, @p->data_bytes
 * @macs: data MACs, @p->macs_bytes, little-endian 64-bit tags
 * @nodes: serialized tree nodes, @p->nodes_bytes
 * @scratch: engine work space of mmt_scratch_bytes(@p) bytes, kmalloc'd or
 *	kvmalloc'd; holds pads and plaintext fragments between calls: free it
 *	with kvfree_sensitive()
 */
struct mmt {
	const struct mmt_params *p;
	struct mmt_crypto *crypto;
	struct mmt_root root;
	u8 *data;
	u8 *macs;
	u8 *nodes;
	u8 *scratch;
};

/*
 * The data path (lib/mmt_tree.c).  Counters, pads and MACs: docs/ENGINE.md.
 * All functions below use m->scratch and m->crypto; the caller serializes
 * calls per scratch buffer and per crypto context (Context: process
 * context, may sleep only inside the crypto backend; no allocation).
 * Integrity failures are logged rate-limited with GUA, level and index.
 */

/**
 * mmt_scratch_bytes() - size of the engine work space of one MMT
 * @p: geometry
 *
 * Pads for a batch of blocks (32 KiB), three blocks for partial writes,
 * and a trusted staging copy of every tree node.  kmalloc'd or kvmalloc'd
 * (never on the stack); may be shared by MMTs that are used one at a time.
 *
 * Return: bytes.
 */
size_t mmt_scratch_bytes(const struct mmt_params *p);

/**
 * mmt_format() - initialize an MMT: all counters 0, zero plaintext
 * @m: MMT with @p, @crypto, @data, @macs, @nodes, @scratch set
 * @gua: its global unique address, <= MMT_GUA_MASK; a GUA must never be
 *	formatted twice under one key (pads would repeat)
 *
 * Sets @m->root.gua and zeroes @m->root.top; leaves @m->root.state,
 * read_only and root_counter alone.  Encrypts zeros into every block and
 * writes every data and node MAC.
 *
 * Return: 0; -EINVAL if @gua is too large (nothing changed); or a crypto
 * backend error (MMT left unusable: format again).
 */
int mmt_format(struct mmt *m, u64 gua);

/**
 * mmt_write() - encrypt and MAC a byte range, bumping its counters
 * @m: MMT
 * @off: first byte, < @m->p->data_bytes
 * @buf: @len bytes of plaintext
 * @len: bytes; 0 is a no-op
 *
 * Each block touched gets a fresh counter (its minor + 1; on a minor at
 * MMT_MINOR_MAX the leaf's major + 1, all its minors 0 and every block
 * under that leaf re-encrypted; likewise at inner levels, re-MACing the
 * child nodes).  Partial blocks are verified and decrypted first
 * (read-modify-write).  Each touched leaf and ancestor is written once per
 * call, and @m->root.root_counter is incremented once.  Atomic: every
 * check is made before anything changes, so on an error nothing outside
 * @m->scratch changed.  Two exceptions fail closed instead: a crypto
 * backend error half-way (not expected: requests are preallocated), and a
 * block of an overflowing leaf modified in untrusted memory between the
 * check and its re-encryption (-EBADMSG after the write is committed; that
 * block then fails verification until overwritten).  Counters and pads are
 * never reused in either case (the trusted root moves first).
 *
 * Return: 0; -EPERM if the state is not MMT_VALID or the MMT is read-only
 * or due for mmt_regua() (@m->root.regua_due);
 * -EINVAL if [@off, @off + @len) is not inside the data; -EBADMSG if a
 * node on the path or a block to read back fails verification;
 * -EOVERFLOW if a major counter would pass MMT_MAJOR_MAX or the root
 * counter is already MMT_ROOT_COUNTER_MAX (a new GUA is the way out).
 */
int mmt_write(struct mmt *m, u64 off, const void *buf, size_t len);

/**
 * mmt_write_check() - would mmt_write() of this range fail its checks?
 * @m: MMT
 * @off: first byte
 * @len: bytes; 0 checks only the state
 *
 * mmt_write()'s checks and its pass 1 (the nodes on the paths of the
 * touched blocks, the old data an overflowing leaf re-encrypts, the
 * partial first and last blocks), on the MMT as it is, without writing:
 * nothing outside @m->scratch changes.  A range that mmt_write() would
 * write in several calls is checked as one: the same nodes and blocks,
 * except the partial blocks at the inner boundaries of those calls and
 * the blocks their own counter overflows re-encrypt.  The driver runs it
 * on the closures of a parallel write before writing any of them, so the
 * write stops at the first failing closure and leaves the later ones
 * untouched, as a serial write does.
 *
 * Return: 0; or the error mmt_write() of the range would return first
 * (-EPERM, -EINVAL, -EBADMSG, -EOVERFLOW).
 */
int mmt_write_check(struct mmt *m, u64 off, size_t len);

/**
 * mmt_read() - verify and decrypt a byte range
 * @m: MMT
 * @off: first byte
 * @buf: (out) @len bytes, trusted memory
 * @len: bytes; 0 is a no-op
 *
 * Verifies every node on the paths of the touched blocks up to
 * @m->root.top and each block's data MAC, over a copy in @buf or scratch,
 * then decrypts it.  Nothing changes in the MMT.
 *
 * Return: 0; -EPERM unless the state is MMT_VALID or MMT_SENDING; -EINVAL
 * if the range is outside the data; -EBADMSG on a failed check (@buf is
 * then zeroed: never any unverified plaintext).
 */
int mmt_read(struct mmt *m, u64 off, void *buf, size_t len);

/**
 * mmt_verify_all() - eagerly verify every node and every data MAC
 * @m: MMT (any state)
 *
 * Return: 0 or -EBADMSG (or a crypto backend error).
 */
int mmt_verify_all(struct mmt *m);

/**
 * mmt_regua() - re-encrypt and re-MAC the whole MMT under a fresh GUA
 * @m: MMT (any state; the caller decides when, e.g. after a lost ack)
 * @to: the context to re-encrypt under (the owner's own keying, whose
 *	GUAs only this owner hands out), or NULL for @m->crypto
 * @new_gua: <= MMT_GUA_MASK, never used under @to (and != @m->root.gua
 *	when @to is @m->crypto)
 *
 * Verifies everything first; counters are kept, the pads change because
 * the GUA (and with @to the subkeys) are part of every pad.  Sets
 * @m->root.gua and @m->crypto and clears @m->root.regua_due on success.
 *
 * Return: 0; -EINVAL for a bad @new_gua; -EBADMSG if the MMT fails
 * verification.  A failure of that first pass changes nothing.  If the
 * untrusted memory changes under the call after that pass, the call fails
 * closed with -EBADMSG: blocks already converted no longer verify (data
 * loss, never a reused pad, since @m->root.gua and @m->crypto stay the old
 * ones and no block is ever written under them again with an old counter).
 */
int mmt_regua(struct mmt *m, struct mmt_crypto *to, u64 new_gua);

/*
 * Test-visible helpers (used by tests/lib and tools; not by the driver).
 */

/* A fixed keying salt for tests and benchmarks (16 bytes, no NUL used) */
#define MMT_TEST_KSALT		((const u8 *)"mmt test ksalt!!")

/**
 * mmt_format_major() - mmt_format() with every node's major set to @major
 * @m: MMT
 * @gua: as for mmt_format()
 * @major: <= MMT_MAJOR_MAX; lets tests reach counter exhaustion
 *
 * Return: as mmt_format(); -EINVAL also for @major too large.
 */
int mmt_format_major(struct mmt *m, u64 gua, u64 major);

/**
 * mmt_block_counter() - the verified 40-bit counter of one block
 * @m: MMT
 * @block: block index < @m->p->blocks
 * @ctr: (out) (leaf major << MMT_MINOR_BITS) | leaf minor
 *
 * Return: 0; -EINVAL for a bad @block; -EBADMSG if its path fails.
 */
int mmt_block_counter(struct mmt *m, u32 block, u64 *ctr);

/**
 * mmt_data_nonce() - the AES input of one 16-byte data pad (format v2)
 * @out: (out) 16 bytes, a big-endian 128-bit integer: 0 (2) | GUA (58) |
 *	counter (40) | off16 (28), i.e. GUA << 68 | counter << 28 | off16
 * @gua: GUA (58 bits)
 * @ctr: block counter (40 bits)
 * @off16: byte offset of the sub-block in the MMT / 16 (28 bits): block
 *	index * (block size / 16) + sub-block
 *
 * The sub-blocks of a run of blocks with one counter have consecutive
 * nonces, so counter mode (the big-endian increment of ctr(aes) and
 * OpenSSL's CTR) produces their pads in one call.  docs/ENGINE.md "Data
 * encryption: pads".
 */
void mmt_data_nonce(u8 *out, u64 gua, u64 ctr, u32 off16);

/**
 * mmt_mac_nonce() - the AES input of one MAC pad (MAC subkey)
 * @out: (out) 16 bytes, big-endian: GUA (58) | index (28) | counter (40) |
 *	domain (2)
 * @domain: 2 node MAC, 3 hash key derivation (1 was format v3's data MAC;
 *	data MAC pads are under the ENC subkey since v4, docs/ENGINE.md)
 * @gua: GUA (58 bits)
 * @index: level << 24 | node index for node MACs, j for hash key j
 * @ctr: the parent's counter of the node (0 for hash keys)
 */
void mmt_mac_nonce(u8 *out, unsigned int domain, u64 gua, u32 index,
		   u64 ctr);
/*
 * mmt_verify_top() - verify the MAC of every node of level @levels - 2
 * against the trusted @m->root.top and @m->root.gua, as the receiver of a
 * closure does before accepting it in lazy mode (DESIGN.md section 5, step
 * 4; used by lib/mmt_closure.c).  Reads @m->nodes once per node; writes only
 * @m->scratch.  Returns 0 (also with one level: there are no untrusted
 * nodes), -EBADMSG on a mismatch, or the cipher's error.
 */
int mmt_verify_top(struct mmt *m);

/* ---------------------------------------------------------------- NH */

/*
 * The first stage of the data MAC (format v3, docs/ENGINE.md "Carter-Wegman
 * MACs"): NH with 32-bit words (Black, Halevi, Krawczyk, Krovetz, Rogaway,
 * "UMAC", CRYPTO 1999), two Toeplitz passes, fused with the one pass the
 * engine makes over a block's bytes.  lib/mmt_nh.c has the portable C,
 * lib/mmt_nh_avx2.c the same function with AVX2 (x86-64 only; not under
 * UML).
 */
enum mmt_nh_mode {
	MMT_NH_COPY,	/* c = in; dst = c (dst may be NULL: hash only) */
	MMT_NH_SEAL,	/* c = in ^ pad; dst = c */
	MMT_NH_OPEN,	/* c = in; dst = c ^ pad */
};

#if defined(__x86_64__) && !(defined(__KERNEL__) && defined(CONFIG_UML))
#define MMT_NH_HAVE_AVX2	1
#else
#define MMT_NH_HAVE_AVX2	0
#endif

/**
 * mmt_nh_generic() - hash blocks with NH while copying them (portable C)
 * @key: NH key as bytes (mmt_crypto_hash_key() + MMT_HASH_KEYS): the
 *	32-bit little-endian words L_0 .. L_{len / 4 + 15}
 * @dst: where the block goes (trusted or not, as @mode says); NULL only with
 *	MMT_NH_COPY (hash only)
 * @in: the block's bytes, read once each: ciphertext for MMT_NH_COPY and
 *	MMT_NH_OPEN, plaintext for MMT_NH_SEAL
 * @pad: @len bytes of data pad for MMT_NH_SEAL and MMT_NH_OPEN, else unused
 * @len: bytes per block, a nonzero multiple of MMT_NH_UNIT, at most
 *	2^MMT_MAX_LOG_BLOCK
 * @n: blocks, consecutive in @dst, @in and @pad (n * len bytes each)
 * @mode: enum mmt_nh_mode
 * @out: (out) 2 * @n sums, out[2i + p] pass p of block i: with the
 *	block's ciphertext c as 32-bit
 *	little-endian words c_0 .. c_{n-1} (n = len / 4) and the pairs
 *	(c_{16u + j}, c_{16u + j + 8}), u < n / 16, j < 8,
 *	out[2i + p] = sum over the pairs of ((c_{16u+j} + L_{16u+j+16p})
 *	mod 2^32) * ((c_{16u+j+8} + L_{16u+j+8+16p}) mod 2^32), mod 2^64,
 *	p < 2.
 *
 * Context: any; no locks, no allocation.
 */
void mmt_nh_generic(const u8 *key, u8 *dst, const u8 *in, const u8 *pad,
		    size_t len, size_t n, unsigned int mode, u64 *out);

#if MMT_NH_HAVE_AVX2
/**
 * mmt_nh_avx2() - mmt_nh_generic() with AVX2: the same bytes and sums
 * @key: as mmt_nh_generic()
 * @dst: as mmt_nh_generic()
 * @in: as mmt_nh_generic()
 * @pad: as mmt_nh_generic()
 * @len: as mmt_nh_generic()
 * @n: as mmt_nh_generic()
 * @mode: as mmt_nh_generic()
 * @out: as mmt_nh_generic()
 *
 * Context: only between mmt_nh_simd_begin() returning true and
 * mmt_nh_simd_end() (in the kernel, inside kernel_fpu_begin()).
 */
void mmt_nh_avx2(const u8 *key, u8 *dst, const u8 *in, const u8 *pad,
		 size_t len, size_t n, unsigned int mode, u64 *out);
#endif

/**
 * mmt_nh_simd_begin() - start a stretch of mmt_nh() and mmt_gf64() calls
 * that may use SIMD
 *
 * Kernel: true, with kernel_fpu_begin() done (preemption off), if the CPU
 * has AVX2, PCLMULQDQ and OS-enabled YMM state and irq_fpu_usable(); false
 * otherwise (also under UML).  User space: true if the CPU has AVX2 and
 * PCLMULQDQ and the environment does not set MMT_NH_GENERIC (which forces
 * the portable code, for tests).
 *
 * Context: any; pair each call with mmt_nh_simd_end(), and call no crypto
 * library and nothing that sleeps in between (kernel).
 * Return: whether mmt_nh() and mmt_gf64() may use mmt_nh_avx2() and
 * mmt_gf64_clmul().
 */
bool mmt_nh_simd_begin(void);

/**
 * mmt_nh_simd_end() - end what mmt_nh_simd_begin() started
 * @simd: its return value (kernel_fpu_end() if true)
 */
void mmt_nh_simd_end(bool simd);

/**
 * mmt_nh_selftest() - compare the SIMD code of the data MAC's hash with the
 * portable code
 *
 * Hashes 4 KiB of fixed bytes under a fixed key at every length (as many
 * blocks per call as fit, up to 3), in every mode and hash only, with both
 * mmt_nh_avx2() and mmt_nh_generic(), and the sums of every call through
 * both mmt_gf64_clmul() and mmt_gf64_generic(); the module calls it at
 * load, so that a kernel whose
 * SIMD build disagrees with the portable code (and so with other nodes and
 * the golden vector) never seals data.
 *
 * Context: may sleep (allocates).
 * Return: 0 (also when SIMD is not usable), -ENOMEM, or -EIO on any
 * difference.
 */
int mmt_nh_selftest(void);

/* @n blocks through NH (docs/ENGINE.md): mmt_nh_avx2() if @simd. */
static inline void mmt_nh(bool simd, const u8 *key, u8 *dst, const u8 *in,
			  const u8 *pad, size_t len, size_t n,
			  unsigned int mode, u64 *out)
{
#if MMT_NH_HAVE_AVX2
	if (simd) {
		mmt_nh_avx2(key, dst, in, pad, len, n, mode, out);
		return;
	}
#endif
	mmt_nh_generic(key, dst, in, pad, len, n, mode, out);
}

/**
 * mmt_gf64_generic() - the data MAC's second stage (format v4), portable C
 * @key: K_0, K_1 (mmt_crypto_hash_key() + MMT_HASH_KEYS + MMT_NH_KEYS)
 * @nh: 2 * @n NH sums, as mmt_nh() gives them: Y_0 = nh[2i], Y_1 = nh[2i + 1]
 * @n: blocks
 * @out: (out) @n values: out[i] = K_0 * Y_0 + K_1 * Y_1 in GF(2^64) =
 *	GF(2)[x] / (x^64 + x^4 + x^3 + x + 1), bit j of a 64-bit word the
 *	coefficient of x^j (docs/ENGINE.md, "Carter-Wegman MACs")
 *
 * Constant time (no branch or index on the sums or the keys).
 *
 * Context: any; no locks, no allocation.
 */
void mmt_gf64_generic(const u64 *key, const u64 *nh, size_t n, u64 *out);

/*
 * @lo + x^64 @hi mod x^64 + x^4 + x^3 + x + 1: x^64 = x^4 + x^3 + x + 1,
 * and the bits that @hi * (x^4 + x^3 + x + 1) puts at x^64 .. x^67 (from
 * the top 4 bits of @hi) are folded in the same way, once (they fit in 8
 * bits after it).
 */
static inline u64 mmt_gf64_reduce(u64 lo, u64 hi)
{
	u64 t = hi ^ hi >> 63 ^ hi >> 61 ^ hi >> 60;

	return lo ^ t ^ t << 1 ^ t << 3 ^ t << 4;
}

#if MMT_NH_HAVE_AVX2
/**
 * mmt_gf64_clmul() - mmt_gf64_generic() with PCLMULQDQ: the same values
 * @key: as mmt_gf64_generic()
 * @nh: as mmt_gf64_generic()
 * @n: as mmt_gf64_generic()
 * @out: as mmt_gf64_generic()
 *
 * Context: only between mmt_nh_simd_begin() returning true and
 * mmt_nh_simd_end() (in the kernel, inside kernel_fpu_begin()).
 */
void mmt_gf64_clmul(const u64 *key, const u64 *nh, size_t n, u64 *out);
#endif

/* The second stage of @n blocks' data MACs: mmt_gf64_clmul() if @simd. */
static inline void mmt_gf64(bool simd, const u64 *key, const u64 *nh,
			    size_t n, u64 *out)
{
#if MMT_NH_HAVE_AVX2
	if (simd) {
		mmt_gf64_clmul(key, nh, n, out);
		return;
	}
#endif
	mmt_gf64_generic(key, nh, n, out);
}

/* ---------------------------------------------------------------- closure */

#define MMT_CLOSURE_MAGIC	0x43544d4du	/* "MMTC" little-endian */
#define MMT_CLOSURE_VERSION	4	/* v1-v3 refused: -EPROTONOSUPPORT */
#define MMT_CLOSURE_HDR_BYTES	96
#define MMT_CLOSURE_SUITE	1	/* the only suite of format v4 */
#define MMT_SEALED_ROOT_BYTES	128	/* root plaintext + 16-byte GCM tag */
#define MMT_CLOSURE_F_COPY	0x1u	/* receiver gets a read-only copy */

/**
 * struct mmt_closure_hdr - decoded closure header (wire form: 96 bytes LE,
 * layout in docs/ENGINE.md "Closure format v4"); also the AEAD associated
 * data of the root
 * @version: closure format version, MMT_CLOSURE_VERSION
 * @flags: MMT_CLOSURE_F_* (copy mode)
 * @sender_node: node id of the sender
 * @receiver_node: node id the closure is meant for
 * @conn_id: connection the closure travels on
 * @seq: the index of the MMT within its PMO (the receiver's slot)
 * @levels: geometry: counter levels
 * @log_block_size: geometry: log2 of the block size in bytes
 * @log_arity: geometry: log2 arity per level, leaf first
 * @suite: algorithms of pads, MACs and sealing, MMT_CLOSURE_SUITE
 * @sealed_len: bytes of the sealed root section (MMT_SEALED_ROOT_BYTES)
 * @nodes_len: bytes of the tree-node section
 * @macs_len: bytes of the data-MAC section
 * @data_len: bytes of ciphertext
 * @gen: transfer generation: which transfer on the connection the closure
 *	belongs to; rises with every transfer, never reused on a connection
 * @ksalt: keying salt of the sender's MMT: with the MMT key it gives the
 *	subkeys the ciphertext, MACs and sealed root are under
 * @rx_nonce: the nonce the receiver drew for the receive the closure is
 *	built for (sent to the sender with the grants); a closure fits no
 *	other receive
 */
struct mmt_closure_hdr {
	u16 version;
	u32 flags;
	u16 sender_node;
	u16 receiver_node;
	u64 conn_id;
	u64 seq;
	u8 levels;
	u8 log_block_size;
	u8 log_arity[MMT_MAX_LEVELS];
	u8 suite;
	u32 sealed_len;
	u32 nodes_len;
	u32 macs_len;
	u32 data_len;
	u64 gen;
	u8 ksalt[MMT_KSALT_BYTES];
	u8 rx_nonce[MMT_RX_NONCE_BYTES];
};

/**
 * struct mmt_rx_rules - receiver state for the freshness rules
 * @self_node: this node's id; a closure for another receiver is rejected
 * @conn_id: the connection's id; a closure from another one is rejected
 * @gen: the transfer generation every closure of this receive must carry
 *	(set from the transfer's offer; the driver requires it to rise on
 *	the connection)
 * @rx_nonce: the receive's nonce every closure must carry: drawn at random
 *	by the receiver for each receive, so no closure built for another
 *	receive is accepted
 * @min_root_counter: root counters must be greater than this (replay)
 * @last_root_counter: last accepted root counter of this transfer
 * @last_gua: last accepted GUA of this transfer (reorder); 0 = none yet
 * @migrate: a migration receive (docs/MIGRATION.md): closures land in
 *	WAITING or LANDING MMTs and leave them LANDING; rules 6 and 7 are
 *	per index (6m: root counter above the floor and above the landed
 *	one; 7m: the landed GUA kept) and @last_root_counter and @last_gua
 *	are not used
 * @check_seq: enforce @expect_seq (the driver does; tests may not)
 * @expect_seq: the seq the next closure must carry: the index of the MMT
 *	it is received into, so a closure cannot be installed in another
 *	MMT's slot
 * @keying: gives the context of a keying salt other than that of the
 *	receive MMT's own context; NULL: such a closure is -EBADMSG.  Called
 *	with the rules and the MMT_KSALT_BYTES salt of the closure's header
 *	(not yet authenticated: the context is what authenticates it); may
 *	sleep.  Returns a context derived from the receive PMO's key and the
 *	salt, owned by the caller (valid while an MMT uses it), or an ERR_PTR
 *	(-ENOMEM; -ENOSPC if no more keyings can be held), which the receive
 *	returns as is.
 */
struct mmt_rx_rules {
	u16 self_node;
	u64 conn_id;
	u64 gen;
	u8 rx_nonce[MMT_RX_NONCE_BYTES];
	u64 min_root_counter;
	u64 last_root_counter;
	u64 last_gua;
	bool migrate;
	bool check_seq;
	u64 expect_seq;
	struct mmt_crypto *(*keying)(struct mmt_rx_rules *rx,
				     const u8 *ksalt);
};

size_t mmt_closure_bytes(const struct mmt_params *p);
int mmt_closure_build(struct mmt *m, const struct mmt_closure_hdr *h,
		      u8 *out, size_t out_len);
int mmt_closure_parse_hdr(const u8 *buf, size_t len,
			  struct mmt_closure_hdr *h);
bool mmt_closure_same_geometry(const struct mmt_closure_hdr *h,
			       const struct mmt_params *p);
int mmt_closure_receive(struct mmt *m, struct mmt_rx_rules *rx,
			const u8 *buf, size_t len, bool eager);

/* mmt_closure_receive_inplace(): any sender node (no rule 5b) */
#define MMT_CLOSURE_ANY_SENDER	(-1)

int mmt_closure_receive_inplace(struct mmt *m, struct mmt_rx_rules *rx,
				const u8 *head, int sender, bool eager);
int mmt_closure_build_head(struct mmt *m, const struct mmt_closure_hdr *h,
			   u8 *out);

/**
 * struct mmt_closure_eager - an eager in-place receive split in three
 * (mmt_closure_eager_begin(), _verify(), _commit()), so that the full
 * checks of several closures can run at once while the rules and the
 * commits stay in order
 * @t: the closure as it is to be installed: the receive MMT with the
 *	unsealed root (VALID, read-only while checked) and @stage as its
 *	nodes; no scratch and no context (the verifier brings its own)
 * @h: its decoded header
 * @c: the receive side's context of its keying (the MMT's, or the one
 *	@rx->keying gave), which the MMT takes on commit
 * @ksalt: @c's keying salt, which a verifier's context must have
 * @stage: private copy of the tree nodes, kvmalloc'd (NULL with one level)
 */
struct mmt_closure_eager {
	struct mmt t;
	struct mmt_closure_hdr h;
	struct mmt_crypto *c;
	u8 ksalt[MMT_KSALT_BYTES];
	u8 *stage;
};

int mmt_closure_eager_begin(struct mmt *m, struct mmt_rx_rules *rx,
			    const u8 *head, int sender,
			    const struct mmt_closure_eager *prev,
			    struct mmt_closure_eager *pc);
int mmt_closure_eager_verify(const struct mmt_closure_eager *pc,
			     struct mmt_crypto *c, u8 *scratch);
int mmt_closure_eager_commit(struct mmt *m, struct mmt_rx_rules *rx,
			     const struct mmt_closure_eager *pc);
void mmt_closure_eager_free(struct mmt_closure_eager *pc);

/* ---------------------------------------------------------------- migration */

#define MMT_MIG_TAG_BYTES	16		/* COMMIT tag */
#define MMT_MIG_COMMIT_INDEX	0xffffffffu	/* the ACK of a COMMIT */
#define MMT_MIG_DOWNTIME_NS	(300ull * 1000 * 1000)	/* default limit */
#define MMT_MIG_MAX_ROUNDS	30		/* default round limit */

/*
 * Auto-converge (QEMU's cpu-throttle-* defaults): a round whose dirty
 * closures are more than MMT_MIG_THROTTLE_TRIGGER % of the closures it
 * sent does not converge; at the second such round writers are throttled
 * at MMT_MIG_THROTTLE_INITIAL %, then MMT_MIG_THROTTLE_STEP % more at
 * every second one after, at most MMT_MIG_THROTTLE_MAX %.
 */
#define MMT_MIG_THROTTLE_TRIGGER	50
#define MMT_MIG_THROTTLE_INITIAL	20
#define MMT_MIG_THROTTLE_STEP		10
#define MMT_MIG_THROTTLE_MAX		99

/**
 * struct mmt_mig_src - the source's bookkeeping of one live migration
 *	(lib/mmt_migrate.c, docs/MIGRATION.md)
 * @closures: closures of the PMO
 * @sent_gua: per index, the GUA of the last closure of it sent
 * @sent_rc: per index, the root counter sealed into that closure; 0: never
 *	sent.  The closure is dirty while the MMT's root counter differs.
 * @round: rounds begun; 1 is the full copy, the handover's round counts
 * @max_rounds: pre-copy rounds at most before the handover
 * @downtime_limit_ns: hand over once the expected downtime is within it
 * @closure_ns: measured send time per closure in the last round that sent
 *	something (0: not measured yet)
 * @dirty: dirty closures at the last mmt_mig_scan()
 * @dirty_syncs: scans made
 * @closures_sent: closures sealed for sending, every round
 * @round_sent: closures sealed in the current round
 * @stop: why pre-copy ended (MMT_MIG_STOP_* of uapi/mmt.h), set by
 *	mmt_mig_decide(); MMT_MIG_STOP_NONE while it goes on
 * @throttle_pct: share of a writer's time it sleeps (mmt_mig_throttle_ns()),
 *	0..MMT_MIG_THROTTLE_MAX; raised by mmt_mig_decide()
 * @high_rounds: rounds that did not converge since the last throttle step
 */
struct mmt_mig_src {
	u32 closures;
	u64 *sent_gua;
	u64 *sent_rc;
	u32 round;
	u32 max_rounds;
	u64 downtime_limit_ns;
	u64 closure_ns;
	u32 dirty;
	u32 dirty_syncs;
	u64 closures_sent;
	u32 round_sent;
	u32 stop;
	u32 throttle_pct;
	u32 high_rounds;
};

int mmt_mig_src_init(struct mmt_mig_src *s, u32 closures, u32 max_rounds,
		     u64 downtime_limit_ns);
void mmt_mig_src_free(struct mmt_mig_src *s);
bool mmt_mig_dirty(const struct mmt_mig_src *s, u32 i,
		   const struct mmt_root *r);
void mmt_mig_sent(struct mmt_mig_src *s, u32 i, const struct mmt_root *r);
u32 mmt_mig_scan(struct mmt_mig_src *s, const struct mmt *mmts);
void mmt_mig_round_begin(struct mmt_mig_src *s);
void mmt_mig_round_end(struct mmt_mig_src *s, u64 ns);
u64 mmt_mig_expected_downtime(const struct mmt_mig_src *s);
u32 mmt_mig_decide(struct mmt_mig_src *s, bool finish);
u64 mmt_mig_throttle_ns(const struct mmt_mig_src *s, u64 busy_ns);
int mmt_mig_src_digest(const struct mmt_mig_src *s, u8 *digest);
int mmt_mig_dst_digest(const struct mmt *mmts, u32 n, u8 *digest);

/**
 * struct mmt_bind - what an ACK tag or a COMMIT tag is bound to: one
 *	transfer (or migration) in one direction of one connection, and the
 *	fresh contribution of each end
 * @conn_id: the connection's id
 * @gen: the transfer's generation on the connection (per direction)
 * @sender_node: node id of the sending side (the source)
 * @receiver_node: node id of the receiving side (the destination)
 * @dir: 0 if the sending side connected, 1 if it accepted (loopback: 0);
 *	tells the two directions apart even between nodes of one id
 * @rx_nonce: MMT_RX_NONCE_BYTES: the receive's nonce, drawn by the
 *	receiver (GRANT)
 * @tx_nonce: MMT_RX_NONCE_BYTES: the sender's nonce, drawn by the sender
 *	for this transfer (OFFER)
 *
 * Each end checks a tag against values it chose itself (the sender its
 * @tx_nonce and direction, the receiver its @rx_nonce), so a tag made for
 * the other direction of the connection, or for another transfer with
 * the same generation, never authenticates.
 */
struct mmt_bind {
	u64 conn_id;
	u64 gen;
	u16 sender_node;
	u16 receiver_node;
	u8 dir;
	u8 rx_nonce[MMT_RX_NONCE_BYTES];
	u8 tx_nonce[MMT_RX_NONCE_BYTES];
};

/* mmt_bind_encode(): le64 conn_id, le64 gen, le16 x2, u8 dir, 2 nonces */
#define MMT_BIND_BYTES	(8 + 8 + 2 + 2 + 1 + 2 * MMT_RX_NONCE_BYTES)

void mmt_bind_encode(const struct mmt_bind *b, u8 *out);
/* mmt_bind_tag(): the longest label and fields (the COMMIT's: le32 + digest) */
#define MMT_BIND_TAG_LABEL_MAX	16
#define MMT_BIND_TAG_FIELDS_MAX	(4 + MMT_SHA256_BYTES)
int mmt_bind_tag(const u8 *key_root, const char *salt, const char *label,
		 const struct mmt_bind *b, const u8 *fields,
		 size_t fields_len, u8 *tag, size_t tag_len);
int mmt_mig_commit_tag(const u8 *key_root, const struct mmt_bind *b,
		       u32 closures, const u8 *digest, u8 *tag);
/* final outcomes of mmt_mig_resolve_tag() (= MMT_MIG_OUTCOME_* of uapi) */
#define MMT_MIG_STATED_COMMITTED	2
#define MMT_MIG_STATED_ABORTED		3
int mmt_mig_resolve_tag(const u8 *key_root, const struct mmt_bind *b,
			u32 outcome, u8 *tag);
int mmt_xfer_resolve_tag(const u8 *key_root, const struct mmt_bind *b,
			 u32 closures, u8 *tag);
int mmt_mig_dst_commit(struct mmt *mmts, u32 n, const u8 *key_root,
		       const struct mmt_bind *b, const u8 *digest,
		       const u8 *tag);
u32 mmt_mig_dst_abort(struct mmt *mmts, u32 n);

#endif /* MMT_LIB_H */
