# SPDX-License-Identifier: GPL-2.0
# Helpers sourced by the scripts in scripts/.

mmt_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mmt_cache=${MMT_CACHE:-/var/tmp/mmt-cache}

# mmt_kernel_src: print the path of Debian's linux-source tree unpacked in
# the cache (unpacking it once per tarball), for kunit.py and checkpatch.
mmt_kernel_src() {
	local tarball srcname src
	tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
	if [ -z "$tarball" ]; then
		echo "no /usr/src/linux-source-*.tar.xz; run 'make deps'" >&2
		return 1
	fi
	srcname=$(basename "$tarball" .tar.xz)
	src=$mmt_cache/kunit/src/$srcname
	if [ ! -f "$src/.mmt-unpacked" ] || [ "$tarball" -nt "$src/.mmt-unpacked" ]; then
		rm -rf "$src"
		mkdir -p "$(dirname "$src")"
		tar -C "$(dirname "$src")" -xJf "$tarball" || return 1
		touch "$src/.mmt-unpacked"
	fi
	echo "$src"
}

# mmt_kernel_sources: the project's kernel-side C files (module and KUnit).
mmt_kernel_sources() {
	(cd "$mmt_top" && ls driver/*.[ch] uapi/*.h tests/lib/*.[ch] 2>/dev/null | grep -v '\.mod\.c$'
	 cd "$mmt_top" && ls lib/*.[ch] 2>/dev/null | grep -v '_openssl\.c$')
}
