#!/bin/sh
# Op results must be bit-identical on every backend: compare the digests
# the conformance suite wrote (tests/conformance/test_digest.py).
#
# usage: scripts/compare-digests.sh FILE...
set -eu
first=
for f in "$@"; do
	[ -s "$f" ] || { echo "compare-digests: $f is missing" >&2; exit 1; }
	d=$(cat "$f")
	echo "   $d  $(basename "$f")"
	[ -z "$first" ] && first=$d
	if [ "$d" != "$first" ]; then
		echo "compare-digests: op results differ between backends" >&2
		exit 1
	fi
done
echo "compare-digests: $# backends, identical op results"
