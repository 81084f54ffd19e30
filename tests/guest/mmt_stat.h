/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmt_stat.h - a counter of the module's debugfs file mmt/stats, for the
 * guest programs (tests/guest/mmt-ckpt.c, tests/pmo/mmt-fuzz.c); header
 * only, no libmmt
 */
#ifndef MMT_STAT_H
#define MMT_STAT_H

#include <stdio.h>
#include <string.h>

/* the counter @name of debugfs mmt/stats; -1 if unreadable or absent */
static inline long mmtg_stat(const char *name)
{
	char line[128], key[64];
	long n = -1, v;
	FILE *f = fopen("/sys/kernel/debug/mmt/stats", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %ld", key, &v) == 2 &&
		    !strcmp(key, name))
			n = v;
	fclose(f);
	return n;
}

#endif
