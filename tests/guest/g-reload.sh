# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-reload.sh - the `reload` run, both guests: pads
# and sealing nonces never repeat under one key across module reloads and
# across two nodes with the same node id.
#
# Each guest loads the module, keys one PMO of 5000 MMTs of 128 bytes with
# one fixed user key (a burst of 5000 GUAs, far ahead of the millisecond
# clock the GUA sequence starts from), writes every MMT once, prints the
# (keying salt, GUA, root counter) of each (mmt-nonces), and unloads the
# module at once; RELOAD_CYCLES times.  Both guests use node id 1.  Guest 2
# sends its list to guest 1, which checks:
#   - no (keying salt, GUA, root counter) repeats, within a guest or
#     across the two: no (key, nonce) pair of a data pad or of the sealing
#     is ever used twice;
#   - the check can fail: the (GUA, root counter) pairs alone, the nonces
#     format v1 used under the key itself, do repeat across reloads and
#     across the guests (why format v1 is refused).

CYCLES=${RELOAD_CYCLES:-5}
PORT=7600
list=/tmp/nonces.$MMTG_ID

: >"$list"
i=1
while [ "$i" -le "$CYCLES" ]; do
	mmtg_t "reload $i: insmod mmt" mmtg_load_mmt &&
		mmtg_t "reload $i: burst of 5000 MMTs, node id 1" \
			sh -c "mmt-nonces -n 5000 -i 1 >>$list"
	mmtg_t "reload $i: rmmod mmt" mmtg_unload_mmt
	i=$((i + 1))
done
mmtg_t "$CYCLES reloads: $((CYCLES * 5000)) MMTs listed" \
	test "$(wc -l <"$list")" -eq $((CYCLES * 5000))

# dups FILE FIELDS - how many lines of FILE repeat in FIELDS (cut -f)
dups() {
	cut -d ' ' -f "$2" "$1" | sort | uniq -d | wc -l
}

if [ "$MMTG_ID" = 2 ]; then
	mmtg_t "send the list to guest 1" \
		mmtg_wait 120 sh -c "nc $(mmtg_ip_of 1) $PORT <$list"
	mmtg_done
	exit
fi
mmtg_t "receive guest 2's list" \
	sh -c "timeout -k 2 180 nc -l -p $PORT >/tmp/nonces.2"
mmtg_t "guest 2's list: $((CYCLES * 5000)) MMTs" \
	test "$(wc -l </tmp/nonces.2)" -eq $((CYCLES * 5000))
cat "$list" /tmp/nonces.2 >/tmp/nonces.all
echo "# guest 1: $(cut -d " " -f 1 "$list" | sort -u | wc -l) keying salts in $CYCLES loads"
echo "# (GUA, root counter) repeats in guest 1: $(dups "$list" 2,3)"
mmtg_t "no (keying salt, GUA, root counter) repeats in guest 1" \
	test "$(dups "$list" 1-3)" -eq 0
mmtg_t "no (keying salt, GUA, root counter) repeats across both guests" \
	test "$(dups /tmp/nonces.all 1-3)" -eq 0
mmtg_t "each load drew its own keying salt ($((CYCLES * 2)) loads)" \
	test "$(cut -d ' ' -f 1 /tmp/nonces.all | sort -u | wc -l)" \
	-eq $((CYCLES * 2))
mmtg_t "the check can fail: (GUA, root counter) alone repeats across reloads" \
	test "$(dups "$list" 2,3)" -gt 0
cut -d ' ' -f 2,3 "$list" | sort -u >/tmp/pairs.1
cut -d ' ' -f 2,3 /tmp/nonces.2 | sort -u >/tmp/pairs.2
cross=$(sort /tmp/pairs.1 /tmp/pairs.2 | uniq -d | wc -l)
echo "# (GUA, root counter) pairs of guest 1 also in guest 2: $cross"
mmtg_t "the check can fail: (GUA, root counter) alone repeats across guests" \
	test "$cross" -gt 0
mmtg_done
