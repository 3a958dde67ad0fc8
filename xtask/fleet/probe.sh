#!/bin/bash
# The sandbox probes of the fleet machine (`cargo xtask fleet`): what a process can read,
# reach and write. Run twice by guest.sh: `control` as root outside any sandbox (each
# probe must succeed there, so a denial inside is the sandbox's doing) and `sandboxed` as
# the ExecStart of a copy of vdsotime-doctor.service (its shipped properties, nothing
# else changed). One line per probe: `<probe> <target> ok|denied`, and with `sandboxed`
# one `writable <directory>` line per directory it could create a file in.
set -u
mode=${1:-control}
echo "mode $mode"
echo "id $(id)"

probe() {
    if "${@:3}" >/dev/null 2>&1; then echo "$1 $2 ok"; else echo "$1 $2 denied"; fi
}
# read FILE: `read FILE ok <hash of what was read>` or `read FILE denied`. A file hidden
# by InaccessiblePaths= reads as empty to a process that may override its mode 0000, so
# the host compares the hash with the control's: the same bytes mean the secret was read.
read_file() {
    if content=$(cat "$1" 2>/dev/null); then
        sum=$(printf '%s' "$content" | sha256sum)
        echo "read $1 ok ${sum%% *}"
    else
        echo "read $1 denied"
    fi
}
read_file /etc/shadow
# sshd's host keys by name: inside the sandbox /etc/ssh may not even be listable, so a
# glob there would name no key; the control probes only the keys the machine has.
for key in /etc/ssh/ssh_host_ecdsa_key /etc/ssh/ssh_host_ed25519_key /etc/ssh/ssh_host_rsa_key; do
    if [ "$mode" = control ] && [ ! -e "$key" ]; then continue; fi
    read_file "$key"
done
for port in 9100 9090; do
    probe connect "127.0.0.1:$port" timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port"
done
echo "interfaces $(ls /sys/class/net | tr '\n' ' ')"

# try_write DIR: creates and removes a file in DIR.
try_write() {
    f="$1/.vdsotime-fleet-probe.$$"
    : >"$f" 2>/dev/null && rm -f "$f"
}
probe write /etc try_write /etc
probe write /var/lib try_write /var/lib

if [ "$mode" = sandboxed ]; then
    # A real write into every directory (access(2), and so `find -writable`, drops the
    # capabilities of a process that is not root, and would miss CAP_DAC_OVERRIDE's
    # writes). /proc and /sys are per-process views, not storage.
    find / \( -path /proc -o -path /sys \) -prune -o -type d -print 2>/dev/null |
        while read -r d; do
            if try_write "$d"; then echo "writable $d"; fi
        done
fi
echo "probe done"
