#!/usr/bin/env bash
# The hub model's accuracy (issue 29): for cases not used to calibrate, runs the prediction
# and the measurement of the same workload (`fleetsim bench hub --compare`: the model of
# sim/timing, and the hub of `fleet bench hub` on a real API server) and writes the table
# between the markers of reports/accuracy.md, with the machine's load before and after each
# case. A loaded machine moves the measurements; run it on a quiet one.
#
#   hack/accuracy.sh [small|knee|large|all] [CALIBRATION.yaml]
#
# small: 10, 40 and 100 members, one and ten placements at once, PickAll and PickN;
# knee: 100 members, PickN 10, 1, 2, 4, 8 and 16 placements at once (the knee: the first
# step whose p50 is 20 % over one at a time's); large: 300 and 1,000 members and the
# restart of 1,000 placements; all: the three (about an hour on a quiet two-core machine).
# ACCURACY_REPORT=FILE writes the table into FILE instead (to keep the tables of several
# modes apart: each run replaces the table between the markers). ACCURACY_KEEP=DIR keeps
# each case's `--compare -o json` answer there (the measurement, to predict again later with
# another model or calibration without measuring again); ACCURACY_FROM=DIR predicts again
# against the answers kept there (`--compare-with`), measuring nothing.
# The calibration defaults to the embedded reference; measure one first on this machine
# with `fleet bench hub --calibrate FILE` for figures of this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-small}
cal=${2:-}
report=${ACCURACY_REPORT:-reports/accuracy.md}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/fleet" ./cmd/fleet
go build -o "$work/fleetsim" ./cmd/fleetsim
KUBEBUILDER_ASSETS=$(hack/test-assets.sh 2>/dev/null)
export KUBEBUILDER_ASSETS
calflag=()
if [[ -n $cal ]]; then calflag=(--calibration "$cal"); fi

small=("10 3 0 1" "40 3 0 1" "100 3 0 1" "40 10 0 10" "100 10 10 10" "100 3 10 1")
knee=("100 4 10 1" "100 4 10 2" "100 8 10 4" "100 16 10 8" "100 32 10 16")
large=("300 3 100 1" "1000 3 100 1" "1000 10 100 10" "1000 1000 10 100 restart")
case $mode in
small) cases=("${small[@]}") ;;
knee) cases=("${knee[@]}") ;;
large) cases=("${large[@]}") ;;
all) cases=("${small[@]}" "${knee[@]}" "${large[@]}") ;;
*) echo "usage: $0 [small|knee|large|all] [CALIBRATION.yaml]" >&2; exit 2 ;;
esac

load() { cut -d' ' -f1-3 /proc/loadavg; }
rows=$work/rows.md
knees=$work/knee.tsv
: >"$rows"
: >"$knees"
for c in "${cases[@]}"; do
	read -r members placements pick conc restart <<<"$c"
	args=(--members "$members" --placements "$placements" --pick "$pick" --concurrent "$conc" --timeout 45m)
	if [[ ${restart:-} == restart ]]; then args+=(--restart); fi
	before=$(load)
	echo "$(date -u +%H:%M:%S) ${args[*]} (load $before)" >&2
	kept=m${members}-p${placements}-n${pick}-c${conc}${restart:+-restart}.json
	how=(--compare)
	if [[ -n ${ACCURACY_FROM:-} ]]; then how=(--compare-with "$ACCURACY_FROM/$kept"); fi
	if ! "$work/fleetsim" bench hub --fleet "$work/fleet" "${args[@]}" "${calflag[@]}" "${how[@]}" -o json >"$work/case.json" 2>"$work/case.err"; then
		echo "| $members | $placements | $pick | $conc | failed: $(tail -1 "$work/case.err") | | | | $before |" >>"$rows"
		continue
	fi
	after=$(load)
	if [[ -n ${ACCURACY_KEEP:-} ]]; then
		mkdir -p "$ACCURACY_KEEP"
		cp "$work/case.json" "$ACCURACY_KEEP/$kept"
	fi
	pick_text=$([[ $pick == 0 ]] && echo PickAll || echo "PickN $pick")
	jq -r --arg case "| $members | $placements $pick_text | $conc${restart:+, restart} " --arg load "$before → $after" '
		.figures[] | select(.timing) |
		"\($case)| \(.name) | \(.predicted) | \(.measured) | \((.error*100|round))% \(if .within then "" else "**miss**" end) | \($load) |"' \
		"$work/case.json" >>"$rows"
	if [[ $members == 100 && $pick == 10 ]]; then
		jq -r --arg conc "$conc" '"\($conc)\t\(.predicted.availableSeconds.p50)\t\(.measured.availableSeconds.p50)"' "$work/case.json" >>"$knees"
	fi
done

{
	echo "<!-- accuracy:begin (hack/accuracy.sh $mode ${cal:-reference}; $(date -u +%Y-%m-%dT%H:%MZ)) -->"
	echo
	echo "| members | placements | at once | figure | predicted | measured | error | load before → after |"
	echo "|---|---|---|---|---|---|---|---|"
	cat "$rows"
	if [[ -s $knees ]]; then
		echo
		echo "The knee (100 members, PickN 10: the first step whose p50 is 20 % over one at a time's):"
		echo
		sort -n "$knees" | awk -F'\t' '
			NR == 1 { p1 = $2; m1 = $3 }
			{ print "| " $1 " at once | predicted p50 " $2 " s | measured p50 " $3 " s |" }
			pk == "" && $2 > 1.2 * p1 { pk = $1 }
			mk == "" && $3 > 1.2 * m1 { mk = $1 }
			END { print ""; print "Knee predicted at " (pk == "" ? "none" : pk) ", measured at " (mk == "" ? "none" : mk) " at once." }'
	fi
	echo
	echo "<!-- accuracy:end -->"
} >"$work/table.md"

if [[ -f $report ]] && grep -q '<!-- accuracy:begin' "$report"; then
	awk -v table="$work/table.md" '
		/<!-- accuracy:begin/ { while ((getline line < table) > 0) print line; skip = 1; next }
		/<!-- accuracy:end -->/ { skip = 0; next }
		!skip { print }' "$report" >"$work/report.md"
	cp "$work/report.md" "$report"
else
	cat "$work/table.md" >>"$report"
fi
echo "wrote $report" >&2
