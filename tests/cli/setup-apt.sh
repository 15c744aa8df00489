#!/bin/bash
# scripts/setup.sh when a Debian mirror is mid-sync (issue 45): `apt-get
# update` exits 100 because one foreign architecture's index has the wrong
# size, although every package can be installed. Set-up must try the update
# again, then install anyway, and fail only if the install fails, naming the
# stale index. apt-get, dpkg-query and cmake are stand-ins on PATH: nothing is
# installed or built, and no network is used.
#   setup-apt.sh SOURCE_DIR
set -u
src=$1
. "$(dirname "$0")/../lib.sh"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/bin"
stale='http://deb.debian.org/debian-security/dists/bookworm-security/main/binary-ppc64el/Packages.xz  File has unexpected size (367892 != 368280). Mirror sync in progress?'
# apt-get: "update" fails the first $UPDATE_FAILS times (counted in $t/updates), "install" exits $INSTALL_RC.
cat >"$t/bin/apt-get" <<EOS
#!/bin/sh
case "\$*" in
*update*)
	echo x >>"$t/updates"
	if [ "\$(wc -l <"$t/updates")" -le "\${UPDATE_FAILS:-0}" ]; then
		echo "E: Failed to fetch $stale"
		echo "E: Some index files failed to download. They have been ignored, or old ones used instead."
		exit 100
	fi ;;
*install*) echo "\$*" >>"$t/installs"; exit "\${INSTALL_RC:-0}" ;;
esac
exit 0
EOS
# dpkg-query: every package is missing, so setup.sh installs.
printf '#!/bin/sh\nexit 1\n' >"$t/bin/dpkg-query"
printf '#!/bin/sh\nexit 0\n' >"$t/bin/cmake"
chmod +x "$t/bin/"*

setup() {
	rm -f "$t/updates" "$t/installs"
	PATH="$t/bin:$PATH" VN_APT_WAIT=0 VN_SKIP_DOCTOR=1 VN_BUILD_DIR="$t/build" \
		"$src/scripts/setup.sh" >"$t/out" 2>&1
	echo $?
}

check "a clean update: setup succeeds" test "$(UPDATE_FAILS=0 setup)" = 0
check "...updating once" test "$(wc -l <"$t/updates")" = 1
check "...and installing" test -s "$t/installs"

check "a mirror mid-sync twice: setup succeeds" test "$(UPDATE_FAILS=2 setup)" = 0
check "...after three updates" test "$(wc -l <"$t/updates")" = 3
check "...and installs" test -s "$t/installs"

check "an update that never works: setup still succeeds when the install does" test "$(UPDATE_FAILS=99 setup)" = 0
check "...having tried the update 3 times" test "$(wc -l <"$t/updates")" = 3
check "...and installed" test -s "$t/installs"
check "...saying it went on without fresh lists" grep -q 'installing from the package lists there are' "$t/out"

check "an update and an install that fail: setup exits 3" test "$(UPDATE_FAILS=99 INSTALL_RC=100 setup)" = 3
check "...naming the stale index" grep -q 'binary-ppc64el/Packages.xz.*Mirror sync in progress' "$t/out"
finish
