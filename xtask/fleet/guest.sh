#!/bin/sh
# The fleet machine's test (`cargo xtask fleet`), run as root by vdsotime-fleet-guest.service
# once the Debian 13 guest has booted with systemd as PID 1. It only acts and records: what
# it saw goes into the host's shared directory (virtio-9p, tag `fleet`), one directory per
# boot (the kernel parameter vdsotime.fleet=<boot>), and the host judges it. It powers the
# machine off at the end.
#
# Boots: `main` (the timer enabled, a healthy host, the clocksource switched while the
# host runs and switched back, the unit's state, the security score, the sandbox probes,
# the missing-directory fault) and `tsc-unstable` (booted with tsc=unstable).
set -u
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
share=/run/vdsotime-fleet-share
textfile=/var/lib/prometheus/node-exporter/vdsotime.prom
cs=/sys/devices/system/clocksource/clocksource0
lib=/usr/local/lib/vdsotime-fleet
# Written by the host: the timer's interval and the longest shortened `for:` (seconds).
. $lib/settings

mkdir -p $share
if ! mount -t 9p -o trans=virtio,version=9p2000.L fleet $share; then
    echo "vdsotime-fleet: cannot mount the share" >/dev/console
    systemctl poweroff
    exit 1
fi
boot=$(sed -n 's/.*vdsotime\.fleet=\([a-z-]*\).*/\1/p' /proc/cmdline)
out=$share/${boot:-unknown}
mkdir -p "$out"

say() {
    echo "fleet[$boot] $*" >/dev/console
    echo "$(date +%s) $*" >>"$out/steps.log"
}
# phase NAME: the start of a phase (its end is the next phase's start, or `phase end`).
phase() {
    echo "$(date +%s.%N) $1" >>"$out/phases"
    say "phase $1"
}
# wait_for WHAT SECONDS COMMAND...: runs COMMAND every 2 s until it succeeds; records a
# timeout (the host fails the check that needed it).
wait_for() {
    what=$1 limit=$2
    shift 2
    end=$(($(date +%s) + limit))
    while ! "$@" >/dev/null 2>&1; do
        if [ "$(date +%s)" -ge "$end" ]; then
            say "TIMEOUT after $limit s: $what"
            echo "$what" >>"$out/timeouts"
            return 1
        fi
        sleep 2
    done
    say "ok after $(($(date +%s) - end + limit)) s: $what"
}
prom() { curl -sf "http://localhost:9090/api/v1/$1"; }
# The alerts as `name<TAB>state<TAB>labels<TAB>annotations` (JSON objects).
alerts() {
    prom alerts | jq -r '.data.alerts[] | [.labels.alertname, .state, (.labels | tojson), (.annotations | tojson)] | @tsv'
}
firing() { alerts | awk -F '\t' '$2 == "firing"'; }
some_firing() { [ -n "$(firing)" ]; }
none_active() { [ -z "$(alerts)" ]; }
series_in_prometheus() {
    prom 'query?query=vdsotime_doctor_last_run_timestamp_seconds' | jq -e '.data.result | length > 0'
}
rules_loaded() { prom rules | jq -e '[.data.groups[].rules[]] | length > 0'; }
healthy_is() { grep -q "^vdsotime_doctor_healthy $1\$" $textfile; }
# sample_alerts FILE SECONDS: every alert snapshot for SECONDS, each line prefixed with
# its time; the last snapshot also into FILE.
sample_alerts() {
    end=$(($(date +%s) + $2))
    while :; do
        snap=$(alerts)
        printf '%s\n' "$snap" | sed "s/^/$(date +%s)\t/" >>"$1.samples"
        [ "$(date +%s)" -lt "$end" ] || break
        sleep 3
    done
    printf '%s\n' "$snap" >"$1"
}
# settle: how long Prometheus needs to turn a new state into firing alerts and to fire
# any other alert the same state triggers: two scrapes and evaluations, the longest `for:`.
settle=$((LONGEST_FOR + 4 * SCRAPE + 5))

{
    echo "kernel $(uname -r)"
    echo "cmdline $(cat /proc/cmdline)"
    echo "pid1 $(cat /proc/1/comm)"
    echo "clocksource $(cat $cs/current_clocksource)"
    echo "available $(cat $cs/available_clocksource)"
    echo "systemd $(systemctl --version | head -n 1)"
    dpkg-query -W -f 'package ${Package} ${Version}\n' vdsotime prometheus prometheus-node-exporter systemd linux-image-amd64
} >"$out/facts" 2>&1
dmesg | grep -i -e tsc -e clocksource >"$out/dmesg-clock" 2>&1

# debug_and_end: what the host needs to say why the test could not go on, then the end.
debug_and_end() {
    systemctl status --no-pager vdsotime-doctor.timer vdsotime-doctor.service >"$out/status" 2>&1
    journalctl -b --no-pager -o short-monotonic >"$out/journal-boot" 2>&1
    phase end
    systemctl poweroff
    exit 0
}

phase timer
systemctl enable --now vdsotime-doctor.timer >"$out/enable" 2>&1
wait_for "the textfile" 300 test -s $textfile || debug_and_end
wait_for "the doctor's run ended" 120 sh -c '[ "$(systemctl show -P ActiveState vdsotime-doctor.service)" != activating ]'
systemctl show vdsotime-doctor.timer -p LastTriggerUSec -p NextElapseUSecMonotonic >"$out/timer-show"
ls -l $textfile >"$out/textfile-ls"
owner=$(stat -c %U $textfile)
stat -c '%a %U %G %u %g' $textfile >"$out/textfile-stat"
grep "^$owner:" /etc/passwd >"$out/owner-passwd"
cp $textfile "$out/textfile-first.prom"

phase scrape
wait_for "node_exporter serves the vdsotime series" 120 sh -c 'curl -sf localhost:9100/metrics | grep -q ^vdsotime_doctor_healthy'
curl -sf localhost:9100/metrics >"$out/node-metrics"
wait_for "Prometheus has the series" 180 series_in_prometheus
wait_for "Prometheus has the rules" 60 rules_loaded
prom rules | jq -r '.data.groups[].rules[] | [.name, .health, (.duration | tostring)] | @tsv' >"$out/rules-loaded"

if [ "$boot" = tsc-unstable ]; then
    phase alerts
    wait_for "an alert fires" $((settle + 120)) some_firing
    sample_alerts "$out/alerts-degraded" $settle
    cp $textfile "$out/textfile-degraded.prom"
    debug_and_end
fi

phase healthy
wait_for "no alert pending or firing" $((settle + 60)) none_active
sample_alerts "$out/alerts-healthy" $settle
healthy=$(cat $cs/current_clocksource)
switch_to=
for c in hpet acpi_pm; do
    if grep -qw $c $cs/available_clocksource && [ $c != "$healthy" ]; then switch_to=$c && break; fi
done
echo "from $healthy to ${switch_to:-nothing}" >"$out/switch"

phase switch
echo "$switch_to" >$cs/current_clocksource
date +%s >"$out/switch-time"
wait_for "the textfile says degraded" $((2 * INTERVAL + 60)) healthy_is 0
date +%s >"$out/degraded-time"
cp $textfile "$out/textfile-degraded.prom"
wait_for "an alert fires" $((settle + 120)) some_firing
sample_alerts "$out/alerts-degraded" $settle

phase switch-back
echo "$healthy" >$cs/current_clocksource
date +%s >"$out/back-time"
wait_for "the textfile says healthy" $((2 * INTERVAL + 60)) healthy_is 1
date +%s >"$out/healthy-time"
wait_for "every alert resolved" $((settle + 120)) none_active
sample_alerts "$out/alerts-after" 1

phase unit
systemctl show vdsotime-doctor.service -p Result -p ExecMainStatus -p NRestarts -p TriggeredBy \
    -p ReadWritePaths -p RuntimeDirectory -p StateDirectory -p CacheDirectory -p LogsDirectory \
    -p PrivateTmp -p RemoveIPC -p DynamicUser >"$out/service-show"
journalctl -u vdsotime-doctor.service -o short-unix --no-pager >"$out/journal"
systemd-analyze security --no-pager vdsotime-doctor.service >"$out/security" 2>&1
systemctl cat vdsotime-doctor.service >"$out/unit" 2>&1

phase sandbox
$lib/probe.sh control >"$out/probe-control" 2>&1
fragment=$(systemctl show -P FragmentPath vdsotime-doctor.service)
cp "$fragment" /run/systemd/system/vdsotime-fleet-probe.service
mkdir -p /run/systemd/system/vdsotime-fleet-probe.service.d
cat >/run/systemd/system/vdsotime-fleet-probe.service.d/probe.conf <<EOF
[Service]
ExecStart=
ExecStart=$lib/probe.sh sandboxed
ExecStartPost=
StandardOutput=truncate:/run/vdsotime-fleet-probe.out
StandardError=journal
EOF
systemctl daemon-reload
systemctl start vdsotime-fleet-probe.service >"$out/probe-start" 2>&1
cp /run/vdsotime-fleet-probe.out "$out/probe-sandboxed" 2>>"$out/probe-start"

phase fault
systemctl stop vdsotime-doctor.timer
# A run the timer started goes on after the timer stops: the directory moves only once it
# has ended (a start while it runs would join it, not test the condition).
wait_for "the last timed run ended" 300 sh -c '[ "$(systemctl show -P ActiveState vdsotime-doctor.service)" != activating ]'
dir=$(sed -n 's/^ConditionPathIsDirectory=//p' "$out/unit" | head -n 1)
echo "$dir" >"$out/fault-dir"
if [ -n "$dir" ] && [ -d "$dir" ]; then
    since=$(date +%s)
    sleep 1
    mv "$dir" "$dir.away"
    systemctl start vdsotime-doctor.service >"$out/fault-start" 2>&1
    systemctl show vdsotime-doctor.service -p ConditionResult -p Result >"$out/fault-show"
    sleep 1
    journalctl -u vdsotime-doctor.service --since "@$since" -o cat --no-pager >"$out/fault-journal"
    mv "$dir.away" "$dir"
fi

journalctl -b --no-pager -o short-monotonic >"$out/journal-boot" 2>&1
phase end
sync
systemctl poweroff
