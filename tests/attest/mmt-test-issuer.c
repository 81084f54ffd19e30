// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-test-issuer.c - TEST ONLY: put this node's module into attested mode
 * and give it a credential signed with a test authority's key, without a
 * TPM (the guest run attconn, tests/guest/tests; docs/ATTESTATION.md "The
 * hello").  The credential is made and signed by mmt-authority's own
 * encoder and signer (tools/attest/mmta_cred.c), so the module checks the
 * same bytes a real authority issues; what this tool skips is the
 * attestation itself (hello, challenge, quote), which tests/attest/run.sh
 * tests.  Never install it on a real node: whoever holds the key file can
 * give any module any node id.
 *
 *   mmt-test-issuer CERT.der KEY.pem NODE_ID [SERIAL [NOT_AFTER_DELTA]]
 *
 * MMT_IOC_ATTEST_SET_AUTHORITY with CERT.der (skipped, if an authority is
 * installed already, when it returns EBUSY), MMT_IOC_ATTEST_INFO for this
 * load's node key, a credential for NODE_ID (serial SERIAL, default the
 * current time; valid from 60 s ago to NOT_AFTER_DELTA seconds from now,
 * default 3600; a negative delta makes an expired one), signed with
 * KEY.pem, then MMT_IOC_ATTEST_SET_CRED.  Exit status: 0, 1 if an ioctl
 * failed (its errno printed), 2 on usage or file errors.
 *
 * Built static by tests/guest/tests with tools/attest/mmta_cred.c and
 * libcrypto.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "mmt.h"
#include "mmta.h"

/* read_file - the bytes of @path (malloc'ed), or NULL */
static unsigned char *read_file(const char *path, size_t *len)
{
	unsigned char *buf = NULL;
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 ||
	    fseek(f, 0, SEEK_SET) || !(buf = malloc(n)) ||
	    fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	} else {
		*len = n;
	}
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	struct mmt_attest_info info = { .size = sizeof(info) };
	struct mmt_attest_blob b = { .size = sizeof(b) };
	struct mmta_cred c = { 0 };
	const unsigned char *p;
	unsigned char *der, *cred;
	size_t der_len, cred_len;
	long long delta = 3600;
	EVP_PKEY *key;
	X509 *cert;
	FILE *kf;
	int dev;

	if (argc < 4 || argc > 6) {
		fprintf(stderr, "usage: %s CERT.der KEY.pem NODE_ID [SERIAL [NOT_AFTER_DELTA]]\n",
			argv[0]);
		return 2;
	}
	der = read_file(argv[1], &der_len);
	kf = fopen(argv[2], "r");
	key = kf ? PEM_read_PrivateKey(kf, NULL, NULL, NULL) : NULL;
	if (kf)
		fclose(kf);
	p = der;
	cert = der ? d2i_X509(NULL, &p, (long)der_len) : NULL;
	if (!cert || !key) {
		fprintf(stderr, "mmt-test-issuer: cannot read %s or %s\n",
			argv[1], argv[2]);
		return 2;
	}
	dev = open("/dev/mmt", O_RDWR);
	if (dev < 0) {
		perror("/dev/mmt");
		return 2;
	}
	b.data = (uintptr_t)der;
	b.len = der_len;
	if (ioctl(dev, MMT_IOC_ATTEST_SET_AUTHORITY, &b) && errno != EBUSY) {
		perror("MMT_IOC_ATTEST_SET_AUTHORITY");
		return 1;
	}
	if (ioctl(dev, MMT_IOC_ATTEST_INFO, &info)) {
		perror("MMT_IOC_ATTEST_INFO");
		return 1;
	}
	c.node_id = strtoul(argv[3], NULL, 0);
	c.serial = argc > 4 ? strtoull(argv[4], NULL, 0) : (uint64_t)time(NULL);
	if (argc > 5)
		delta = strtoll(argv[5], NULL, 0);
	c.not_before = time(NULL) - 60;
	c.not_after = time(NULL) + delta;
	if (delta < 0)
		c.not_before = c.not_after - 60;
	memcpy(c.node_key, info.node_key, sizeof(c.node_key));
	memset(c.module_hash, 0xa5, sizeof(c.module_hash));
	memset(c.ek_hash, 0x5a, sizeof(c.ek_hash));
	if (mmta_cred_sign(&c, key, cert, &cred, &cred_len)) {
		fprintf(stderr, "mmt-test-issuer: signing failed\n");
		return 2;
	}
	b.data = (uintptr_t)cred;
	b.len = cred_len;
	if (ioctl(dev, MMT_IOC_ATTEST_SET_CRED, &b)) {
		fprintf(stderr, "MMT_IOC_ATTEST_SET_CRED: %s (errno %d)\n",
			strerror(errno), errno);
		return 1;
	}
	printf("mmt-test-issuer: node id %u, serial %llu, %zu-byte credential\n",
	       c.node_id, (unsigned long long)c.serial, cred_len);
	free(cred);
	free(der);
	X509_free(cert);
	EVP_PKEY_free(key);
	close(dev);
	return 0;
}
