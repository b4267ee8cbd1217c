# shellcheck shell=sh
# Shell functions the scripts share; sourced (POSIX sh). The sourcing script
# defines log MESSAGE (progress) and die MESSAGE (print and exit 1).

# install_debs PACKAGE...: apt-get install those of the Debian packages that
# are not installed yet (as root; dies when it cannot).
install_debs() {
	_missing=
	for _pkg in "$@"; do
		dpkg-query -W -f='${Status}' "$_pkg" 2>/dev/null |
			grep -q "ok installed" || _missing="$_missing $_pkg"
	done
	[ -n "$_missing" ] || return 0
	[ "$(id -u)" = 0 ] ||
		die "missing Debian packages:$_missing (run as root, or:" \
		    "sudo apt-get install$_missing)"
	log "apt-get install$_missing"
	apt-get update -qq || die "apt-get update failed"
	# shellcheck disable=SC2086  # one word a package
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $_missing >/dev/null ||
		die "apt-get install failed"
}

# install_backports_kernel: Debian's bookworm-backports kernel image and
# headers for amd64 (the 6.12 LTS series), next to bookworm's 6.1. The apt
# source is pinned at priority 1, so nothing is installed or upgraded from
# it unless named: only the versioned image and headers packages are (they
# exist nowhere else), with their kbuild and common headers.
install_backports_kernel() {
	for _img in /boot/vmlinuz-6.12.*-amd64; do
		[ -d "/usr/src/linux-headers-${_img#/boot/vmlinuz-}" ] && return 0
	done
	[ "$(id -u)" = 0 ] ||
		die "the 6.12 kernel is missing (run scripts/install-deps.sh as root)"
	_src=/etc/apt/sources.list.d/davinci-bookworm-backports.sources
	if [ ! -f "$_src" ]; then
		[ -n "$(apt-get indextargets 2>/dev/null)" ] ||
			apt-get update -qq || die "apt-get update failed"
		# the mirror this machine already uses for bookworm
		_uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' |
			awk '$2 == "bookworm" { print $1; exit }')
		[ -n "$_uri" ] || die "no apt source for bookworm to take the mirror from"
		log "adding bookworm-backports ($_uri), pinned"
		printf '%s\n' "Types: deb" "URIs: $_uri" \
			"Suites: bookworm-backports" "Components: main" \
			"Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" \
			>"$_src"
		printf '%s\n' "Package: *" "Pin: release n=bookworm-backports" \
			"Pin-Priority: 1" >/etc/apt/preferences.d/davinci-bookworm-backports
	fi
	apt-get update -qq || die "apt-get update failed"
	# the release behind backports' linux-headers-amd64 metapackage
	_ver=$(apt-cache madison linux-headers-amd64 |
		awk -F' *[|] *' '$2 ~ /bpo12/ { print $2; exit }')
	_rel=$(apt-cache show "linux-headers-amd64=$_ver" 2>/dev/null |
		sed -n 's/^Depends: linux-headers-\(6\.12\.[^ ]*-amd64\) .*/\1/p')
	[ -n "$_rel" ] || die "bookworm-backports serves no 6.12 kernel (${_ver:-none})"
	log "apt-get install linux-image-$_rel linux-headers-$_rel"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "linux-image-$_rel" \
		"linux-headers-$_rel" >/dev/null || die "apt-get install failed"
}
