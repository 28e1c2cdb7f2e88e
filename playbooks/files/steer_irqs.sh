#!/bin/sh
# Steer a NIC's interrupts and receive packet steering (RPS) to the measured CPUs:
#   steer_irqs.sh IFACE HEXMASK
# Writes HEXMASK to /proc/irq/N/smp_affinity of every IRQ named after IFACE in
# /proc/interrupts, and to /sys/class/net/IFACE/queues/rx-*/rps_cpus. Prints one line per
# write ("irq N", "rps rx-K") and "unchanged" when everything already had the mask.
set -eu
iface=$1
mask=$2
case "$iface" in ''|*/*|*' '*) echo "bad interface name: $iface" >&2; exit 2 ;; esac
case "$mask" in *[!0-9a-f]*|'') echo "bad mask: $mask" >&2; exit 2 ;; esac
changed=0
for irq in $(awk -v dev="$iface" '$NF ~ dev { sub(":", "", $1); print $1 }' /proc/interrupts); do
    f=/proc/irq/$irq/smp_affinity
    [ -w "$f" ] || continue
    cur=$(tr -d ',' < "$f" | sed 's/^0*//')
    if [ "$cur" != "$(echo "$mask" | sed 's/^0*//')" ]; then
        echo "$mask" > "$f" && echo "irq $irq" && changed=1
    fi
done
for f in /sys/class/net/"$iface"/queues/rx-*/rps_cpus; do
    [ -w "$f" ] || continue
    cur=$(tr -d ',' < "$f" | sed 's/^0*//')
    if [ "$cur" != "$(echo "$mask" | sed 's/^0*//')" ]; then
        echo "$mask" > "$f" && echo "rps $(basename "$(dirname "$f")")" && changed=1
    fi
done
[ "$changed" = 1 ] || echo unchanged
