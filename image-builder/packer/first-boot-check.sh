#!/bin/sh
# The check of build `boot` (shimkeeper.pkr.hcl), run inside the booted image by systemd. The
# template hands it over as a QEMU firmware config file and names it on the kernel command line
# (systemd.run=), so the image carries nothing of it. It prints what it finds on the console (the
# serial log) and ends with one verdict line, read by the build's post-processor:
#   shimkeeper-image-check: ok
#   shimkeeper-image-check: FAILED: <every reason>
# then systemd powers the machine off. "Converged at first boot": shimkeeper.service enabled,
# started without a restart and ready (its first reconcile done); every declared handler in
# containerd's CRI at its stored binary, which is there; the last transaction committed (the
# bake's, unless the daemon had to change something); containerd started once in this boot.

reasons=""
say() { echo "shimkeeper-image-check: $*"; }
bad() { reasons="$reasons${reasons:+; }$*"; }
# systemd's "unit started" journal record (SD_MESSAGE_UNIT_STARTED): one per successful start.
starts() {
    journalctl -b -q -o cat "UNIT=$1" MESSAGE_ID=39f53479d3a045ac8e11786248231fbf | wc -l
}

say "up $(cut -d' ' -f1 /proc/uptime) s, kernel $(uname -r), /sys/fs/cgroup is $(stat -fc %T /sys/fs/cgroup)"
systemctl -q is-enabled shimkeeper.service || bad "shimkeeper.service is not enabled"
# Joins the boot's own start job: returns once the daemon has sent READY=1, or has failed.
systemctl start shimkeeper.service || bad "shimkeeper.service failed to start"
restarts=$(systemctl show -p NRestarts --value shimkeeper.service)
say "shimkeeper.service $(systemctl is-active shimkeeper.service), $restarts restarts"
[ "$restarts" = 0 ] || bad "shimkeeper.service was restarted $restarts times"

status=$(shimkeeper status 2>&1) || bad "shimkeeper status failed"
printf '%s\n' "$status"
echo "$status" | grep -q 'RuntimeReady=true' || bad "containerd's CRI is not ready"
declared=$(echo "$status" | sed -n 's/^Desired shims: \([0-9]*\).*/\1/p')
registered=$(echo "$status" | grep -c '^  handler .*: registered -> ')
[ "${declared:-0}" -gt 0 ] || bad "no shim is declared"
[ "$registered" = "$declared" ] ||
    bad "$registered of ${declared:-?} declared handlers are registered at their stored binary"
for binary in $(echo "$status" | sed -n 's/^  handler .*: registered -> //p'); do
    [ -x "$binary" ] || bad "$binary is not an executable file"
done
# The bake's transaction stays the last one when the daemon found nothing to change.
echo "$status" | grep -q '^Last transaction: [^ ]* [^ ]* committed' ||
    bad "the last transaction did not commit: $(echo "$status" | grep '^Last transaction')"

n=$(starts containerd.service)
say "containerd.service started $n times in this boot"
[ "$n" = 1 ] || bad "containerd.service started $n times, not once"

if [ -z "$reasons" ]; then
    say "up $(cut -d' ' -f1 /proc/uptime) s"
    say ok
    exit 0
fi
journalctl -b -q -o short-monotonic -u containerd.service -u shimkeeper.service | tail -n 30
say "FAILED: $reasons"
exit 1
