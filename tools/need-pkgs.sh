# SPDX-License-Identifier: MIT
# Sourced by the scripts that install what they need on a fresh Debian
# machine (conformance/build-liburing.sh, demo/*.sh).  The sourcing script
# defines log and die first.
#
# need_pkgs [--no-recommends] PKG...: installs the named packages that are
# not installed yet (as root, apt-get); dies without root if any is missing.
need_pkgs() {
	local p missing=() opts=()

	if [ "${1-}" = --no-recommends ]; then
		opts+=(--no-install-recommends)
		shift
	fi
	for p in "$@"; do
		[[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *"install ok installed"* ]] ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" -eq 0 ] || die "missing packages: ${missing[*]} (run as root)"
	log "installing: ${missing[*]}"
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${opts[@]}" \
		"${missing[@]}" >/dev/null
}
