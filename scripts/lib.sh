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
