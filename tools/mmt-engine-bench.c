// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-engine-bench - native throughput of the MMT engine (user-space build,
 * OpenSSL backend, one core) beside OpenSSL AES-128-CTR, AES-128-GCM and
 * memcpy on the same buffers, as ratios measured in one run.
 *
 * Not a test: it asserts nothing.  Every figure is the best of several
 * runs.  Sections are a table (bench_sections[]): add one by writing a
 * function that calls row() for each figure.
 *
 * Usage: mmt-engine-bench [--json] [--runs N] [--section NAME]
 */
#include <getopt.h>
#include <stdarg.h>
#include <time.h>

#include <openssl/evp.h>

#include "mmt_lib.h"

#define CLOSURE_BYTES	(2u << 20)

struct row {
	char section[24];
	char name[64];
	double value;
	char unit[12];
	double ratio;		/* < 0: none */
	char ratio_of[24];
};

static struct row rows[128];
static unsigned int nrows;
static int runs = 7;

static void row(const char *section, const char *name, double value,
		const char *unit, double ratio, const char *ratio_of)
{
	struct row *r;

	if (nrows >= ARRAY_SIZE(rows))
		return;
	r = &rows[nrows++];
	snprintf(r->section, sizeof(r->section), "%s", section);
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->value = value;
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	r->ratio = ratio;
	snprintf(r->ratio_of, sizeof(r->ratio_of), "%s",
		 ratio_of ? ratio_of : "");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "mmt-engine-bench: %s: %d\n", what, err);
	exit(1);
}

/*
 * Best time (seconds) of one call of @fn over @runs runs of @iters calls
 * each, after one warm-up call.
 */
typedef void (*bench_fn)(void *arg);

/* Mean time (seconds) of one call of @fn over @iters calls. */
static double time_of(bench_fn fn, void *arg, int iters)
{
	double t0 = now();
	int i;

	for (i = 0; i < iters; i++)
		fn(arg);
	return (now() - t0) / iters;
}

static double best_of(bench_fn fn, void *arg, int iters)
{
	double best = 1e30;
	int r, i;

	fn(arg);
	for (r = 0; r < runs; r++) {
		double t0 = now(), t;

		for (i = 0; i < iters; i++)
			fn(arg);
		t = (now() - t0) / iters;
		if (t < best)
			best = t;
	}
	return best;
}

/* ------------------------------------------------------------ engine */

struct eng {
	struct mmt_params p;
	struct mmt m;
	u8 *pt, *out;
	size_t len;
	EVP_CIPHER_CTX *ctr, *gcm;
};

static void do_write(void *a)
{
	struct eng *e = a;
	int err = mmt_write(&e->m, 0, e->pt, e->len);

	if (err)
		die("mmt_write", err);
}

static void do_read(void *a)
{
	struct eng *e = a;
	int err = mmt_read(&e->m, 0, e->out, e->len);

	if (err)
		die("mmt_read", err);
}

static void do_verify(void *a)
{
	struct eng *e = a;
	int err = mmt_verify_all(&e->m);

	if (err)
		die("mmt_verify_all", err);
}

static void do_ctr(void *a)
{
	struct eng *e = a;
	static const u8 iv[16];
	int outl;

	EVP_EncryptInit_ex(e->ctr, NULL, NULL, NULL, iv);
	EVP_EncryptUpdate(e->ctr, e->out, &outl, e->pt, (int)e->len);
}

static void do_gcm(void *a)
{
	struct eng *e = a;
	static const u8 iv[12];
	u8 tag[16];
	int outl;

	EVP_EncryptInit_ex(e->gcm, NULL, NULL, NULL, iv);
	EVP_EncryptUpdate(e->gcm, e->out, &outl, e->pt, (int)e->len);
	EVP_EncryptFinal_ex(e->gcm, tag, &outl);
	EVP_CIPHER_CTX_ctrl(e->gcm, EVP_CTRL_GCM_GET_TAG, 16, tag);
}

/* The engine's pad generator alone: ECB over 32 KiB batches in place. */
static void do_ecb(void *a)
{
	struct eng *e = a;
	size_t off;
	int err;

	for (off = 0; off < e->len; off += 32768) {
		err = mmt_crypto_ecb(e->m.crypto, MMT_SUBKEY_ENC, e->out + off,
				     e->out + off, 32768);
		if (err)
			die("mmt_crypto_ecb", err);
	}
}

static void do_memcpy(void *a)
{
	struct eng *e = a;

	memcpy(e->out, e->pt, e->len);
	__asm__ volatile("" : : "r"(e->out) : "memory");
}

/* Small accesses: 4 KiB at a time over the whole closure. */
static void do_write_4k(void *a)
{
	struct eng *e = a;
	size_t off;
	int err;

	for (off = 0; off < e->len; off += 4096) {
		err = mmt_write(&e->m, off, e->pt + off, 4096);
		if (err)
			die("mmt_write 4k", err);
	}
}

static void do_read_4k(void *a)
{
	struct eng *e = a;
	size_t off;
	int err;

	for (off = 0; off < e->len; off += 4096) {
		err = mmt_read(&e->m, off, e->out + off, 4096);
		if (err)
			die("mmt_read 4k", err);
	}
}

static void engine_setup(struct eng *e, const u8 *log_arity,
			 unsigned int log_bs)
{
	static const u8 key[16] = "bench key 0123";
	size_t i;
	int err;

	memset(e, 0, sizeof(*e));
	err = mmt_params_init(&e->p, 3, log_arity, log_bs);
	if (err)
		die("mmt_params_init", err);
	e->len = e->p.data_bytes;
	e->m.p = &e->p;
	e->m.crypto = mmt_crypto_alloc(key, sizeof(key));
	if (IS_ERR(e->m.crypto))
		die("mmt_crypto_alloc", (int)PTR_ERR(e->m.crypto));
	e->m.data = aligned_alloc(64, e->p.data_bytes);
	e->m.macs = aligned_alloc(64, e->p.macs_bytes);
	e->m.nodes = aligned_alloc(64, MMT_ALIGN8(e->p.nodes_bytes) + 64);
	e->m.scratch = aligned_alloc(64, (mmt_scratch_bytes(&e->p) + 63) &
				     ~(size_t)63);
	e->pt = aligned_alloc(64, e->len);
	e->out = aligned_alloc(64, e->len);
	if (!e->m.data || !e->m.macs || !e->m.nodes || !e->m.scratch ||
	    !e->pt || !e->out)
		die("alloc", -ENOMEM);
	for (i = 0; i < e->len; i++)
		e->pt[i] = (u8)(i * 131 + 7);
	memset(e->out, 0, e->len);
	e->m.root.state = MMT_VALID;
	err = mmt_format(&e->m, 0x1234);
	if (err)
		die("mmt_format", err);
	e->ctr = EVP_CIPHER_CTX_new();
	e->gcm = EVP_CIPHER_CTX_new();
	if (!e->ctr || !e->gcm ||
	    EVP_EncryptInit_ex(e->ctr, EVP_aes_128_ctr(), NULL, key, NULL) != 1 ||
	    EVP_EncryptInit_ex(e->gcm, EVP_aes_128_gcm(), NULL, key, NULL) != 1)
		die("EVP init", -EIO);
}

static void engine_free(struct eng *e)
{
	mmt_crypto_free(e->m.crypto);
	EVP_CIPHER_CTX_free(e->ctr);
	EVP_CIPHER_CTX_free(e->gcm);
	free(e->m.data);
	free(e->m.macs);
	free(e->m.nodes);
	free(e->m.scratch);
	free(e->pt);
	free(e->out);
}

static double mbps(size_t len, double t)
{
	return len / t / 1e6;
}

static void engine_geometry(const char *sec, const u8 *log_arity,
			    unsigned int log_bs)
{
	struct eng e;
	double t_ctr, t_gcm, t_cpy, t_ecb, t_w, t_r, t_v, t_w4, t_r4;
	int iters, r;

	engine_setup(&e, log_arity, log_bs);
	iters = 10;
	/*
	 * Round robin: each run times every function once, so that a
	 * transient load on this shared machine hits all of them alike; the
	 * best run of each is kept.
	 */
	t_ctr = 1e30;
	t_gcm = 1e30;
	t_cpy = 1e30;
	t_ecb = 1e30;
	t_w = 1e30;
	t_r = 1e30;
	t_v = 1e30;
	t_w4 = 1e30;
	t_r4 = 1e30;
	for (r = 0; r < runs; r++) {
		t_ctr = min(t_ctr, time_of(do_ctr, &e, iters));
		t_gcm = min(t_gcm, time_of(do_gcm, &e, iters));
		t_cpy = min(t_cpy, time_of(do_memcpy, &e, iters));
		t_ecb = min(t_ecb, time_of(do_ecb, &e, iters));
		t_w = min(t_w, time_of(do_write, &e, iters));
		t_r = min(t_r, time_of(do_read, &e, iters));
		t_v = min(t_v, time_of(do_verify, &e, iters));
		t_w4 = min(t_w4, time_of(do_write_4k, &e, iters / 2));
		t_r4 = min(t_r4, time_of(do_read_4k, &e, iters / 2));
	}
	if (memcmp(e.out, e.pt, e.len))
		die("read back differs", -EBADMSG);

	row(sec, "openssl aes-128-ctr", mbps(e.len, t_ctr), "MB/s", 1.0,
	    "ctr");
	row(sec, "openssl aes-128-gcm", mbps(e.len, t_gcm), "MB/s",
	    t_ctr / t_gcm, "ctr");
	row(sec, "memcpy", mbps(e.len, t_cpy), "MB/s", t_ctr / t_cpy, "ctr");
	row(sec, "mmt_crypto_ecb 32 KiB calls", mbps(e.len, t_ecb), "MB/s",
	    t_ctr / t_ecb, "ctr");
	row(sec, "mmt_write 2 MiB", mbps(e.len, t_w), "MB/s", t_ctr / t_w,
	    "ctr");
	row(sec, "mmt_read 2 MiB", mbps(e.len, t_r), "MB/s", t_ctr / t_r,
	    "ctr");
	row(sec, "mmt_write 4 KiB x 512", mbps(e.len, t_w4), "MB/s",
	    t_ctr / t_w4, "ctr");
	row(sec, "mmt_read 4 KiB x 512", mbps(e.len, t_r4), "MB/s",
	    t_ctr / t_r4, "ctr");
	row(sec, "mmt_verify_all", mbps(e.len, t_v), "MB/s", t_ctr / t_v,
	    "ctr");
	row(sec, "metadata", 100.0 * (e.p.meta_bytes) / e.p.data_bytes, "%",
	    -1, NULL);
	engine_free(&e);
}

/* 2 MiB closure, 3 levels of 64/32/16 minors over 64-byte blocks. */
static void section_engine64(void)
{
	engine_geometry("engine-64B", NULL, 6);
}

/* 2 MiB closure, 3 levels of 8/8/8 minors over 4 KiB blocks. */
static void section_engine4k(void)
{
	static const u8 a[] = { 3, 3, 3 };

	engine_geometry("engine-4KiB", a, 12);
}

/* ------------------------------------------------------------ seal */

struct sealb {
	struct mmt_crypto *c;
	u8 *nonce, *ad, *pt, *ct, *back;
	size_t len;
};

static void do_seal(void *a)
{
	struct sealb *s = a;
	int err;

	s->nonce[0]++;
	err = mmt_crypto_seal(s->c, s->nonce, s->ad, MMT_CLOSURE_HDR_BYTES,
			      s->pt, s->len, s->ct);
	if (!err)
		err = mmt_crypto_unseal(s->c, s->nonce, s->ad,
					MMT_CLOSURE_HDR_BYTES, s->ct, s->len,
					s->back);
	if (err)
		die("seal/unseal", err);
}

struct rootb {
	struct mmt_params p;
	struct mmt_crypto *c;
	struct mmt_root r, back;
	u8 ad[MMT_CLOSURE_HDR_BYTES];
	u8 sealed[MMT_SEALED_ROOT_BYTES];
};

static void do_root_seal(void *a)
{
	struct rootb *s = a;
	int err;

	err = mmt_root_seal(&s->r, &s->p, s->c, s->ad, sizeof(s->ad),
			    s->sealed);
	if (!err)
		err = mmt_root_unseal(&s->p, s->c, s->ad, sizeof(s->ad),
				      s->sealed, &s->back);
	if (err)
		die("mmt_root_seal/unseal", err);
}

/*
 * AES-128-GCM seal + unseal of a sealed-root-sized plaintext with the
 * 64-byte closure header as AD, through the engine's crypto interface,
 * and the same through the root API (lib/mmt_root.c: encode, seal,
 * unseal, decode and check).
 */
static void section_seal(void)
{
	static const u8 key[16] = "seal key 0123456";
	struct rootb *rb;
	struct sealb s;
	double t;

	memset(&s, 0, sizeof(s));
	s.len = MMT_SEALED_ROOT_BYTES - MMT_GCM_TAG_BYTES;
	s.c = mmt_crypto_alloc(key, sizeof(key));
	if (IS_ERR(s.c))
		die("mmt_crypto_alloc", (int)PTR_ERR(s.c));
	s.nonce = calloc(1, 16);
	s.ad = calloc(1, MMT_CLOSURE_HDR_BYTES);
	s.pt = calloc(1, s.len);
	s.ct = calloc(1, s.len + MMT_GCM_TAG_BYTES);
	s.back = calloc(1, s.len);
	if (!s.nonce || !s.ad || !s.pt || !s.ct || !s.back)
		die("alloc", -ENOMEM);
	t = best_of(do_seal, &s, 20000);
	row("seal", "seal+unseal 112 B + 64 B AD", t * 1e6, "us", -1, NULL);

	rb = calloc(1, sizeof(*rb));
	if (!rb || mmt_params_init(&rb->p, 3, NULL, 6))
		die("root bench setup", -ENOMEM);
	rb->c = s.c;
	rb->r.state = MMT_VALID;
	rb->r.gua = 0x1234;
	t = best_of(do_root_seal, rb, 20000);
	row("seal", "mmt_root_seal+unseal", t * 1e6, "us", -1, NULL);
	free(rb);
	mmt_crypto_free(s.c);
	free(s.nonce);
	free(s.ad);
	free(s.pt);
	free(s.ct);
	free(s.back);
}

/* ------------------------------------------------------------ main */

static const struct {
	const char *name;
	void (*run)(void);
} bench_sections[] = {
	{ "engine-64B", section_engine64 },
	{ "engine-4KiB", section_engine4k },
	{ "seal", section_seal },
};

static void print_table(void)
{
	unsigned int i;

	printf("%-12s %-30s %12s %-5s %8s\n", "section", "measure", "value",
	       "unit", "ratio");
	for (i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];

		printf("%-12s %-30s %12.2f %-5s", r->section, r->name,
		       r->value, r->unit);
		if (r->ratio >= 0)
			printf(" %7.1f%% of %s", 100 * r->ratio, r->ratio_of);
		printf("\n");
	}
}

static void print_json(void)
{
	unsigned int i;

	printf("{\"tool\": \"mmt-engine-bench\", \"runs\": %d, \"rows\": [\n",
	       runs);
	for (i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];

		printf("  {\"section\": \"%s\", \"name\": \"%s\", \"value\": %.4f, \"unit\": \"%s\"",
		       r->section, r->name, r->value, r->unit);
		if (r->ratio >= 0)
			printf(", \"ratio\": %.4f, \"ratio_of\": \"%s\"",
			       r->ratio, r->ratio_of);
		printf("}%s\n", i + 1 < nrows ? "," : "");
	}
	printf("]}\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "runs", required_argument, NULL, 'r' },
		{ "section", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *only = NULL;
	bool json = false;
	unsigned int i;
	int c;

	while ((c = getopt_long(argc, argv, "jr:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'r':
			runs = atoi(optarg);
			if (runs < 1)
				runs = 1;
			break;
		case 's':
			only = optarg;
			break;
		default:
			printf("usage: %s [--json] [--runs N] [--section NAME]\n",
			       argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	for (i = 0; i < ARRAY_SIZE(bench_sections); i++)
		if (!only || !strcmp(only, bench_sections[i].name))
			bench_sections[i].run();
	if (json)
		print_json();
	else
		print_table();
	return 0;
}
