# shellcheck shell=sh
# Run in the guest (vnuma exec NAME -- sh -c "$(cat guest.sh)"): each line
# prefixed with the fixture file it belongs to and a tab (record.sh).
cd /sys/devices/virtual/memory_tiering &&
	for t in memory_tier*; do printf 'memory_tiers\t%s: %s\n' "$t" "$(cat "$t/nodelist")"; done | sort
cd /sys/devices/system/node &&
	for n in node*; do
		for a in "$n"/access*; do
			[ -d "$a" ] || continue
			for f in "$a"/initiators/*_*; do [ -f "$f" ] && printf 'access\t%s: %s\n' "$f" "$(cat "$f")"; done
			for l in "$a"/initiators/node* "$a"/targets/node*; do [ -e "$l" ] && printf 'access\t%s\n' "$l"; done
		done
		printf 'meminfo\t%s: %s\n' "$n" "$(sed -n 's/.*MemTotal: *//p' "$n/meminfo")"
	done | sort
dmesg | grep -iE 'hmat|nfit|nvdimm|dax|kmem|memory.tier|memtier|demotion|Fallback order|Built [0-9]+ zonelists' |
	sed 's/^/dmesg\t/'
