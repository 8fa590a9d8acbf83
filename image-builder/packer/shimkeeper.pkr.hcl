# Bakes containerd shims into a Debian 12 node image with the shimkeeper Ansible role, then boots
# the image once, offline, to check that it comes up converged. Packer 1.6.6 (Debian's): no
# `packer { required_plugins }`, no `packer init`; the builders used here are built in. The two
# builds run one after the other (Packer would start them in parallel), as root:
#
#   packer build -only=bake.null.rootfs -var rootfs=/srv/rootfs -var shims_file=shims.yml .
#   packer build -only=boot.qemu.first-boot -var rootfs=/srv/rootfs -var shims_file=shims.yml .
#
# 1. bake: the role runs against the unbooted root over Ansible's chroot connection (the root
#    needs python3, python3-apt, a kernel and an initrd; the shimkeeper package from apt or a .deb
#    named in shims_file's shimkeeper_deb), then `mkfs.ext4 -d` turns the root into
#    OUTPUT/disk.img, the image: a raw disk holding one ext4 filesystem (no loop mounts).
# 2. boot: qemu boots a copy of that disk with the image's own kernel, its
#    writes thrown away (-snapshot), with no way out to any network: a shim that would need a
#    download at first boot fails the check. first-boot-check.sh, handed over through QEMU's
#    firmware config (nothing of it is baked in), runs once the system is up, prints its findings
#    and a verdict on the serial console (OUTPUT/serial.log), and systemd powers the machine off;
#    the post-processor fails the build unless the verdict is ok. `-var accelerator=kvm` runs
#    it under KVM with the host's CPU (`-cpu host`) where /dev/kvm works; the default, TCG
#    (`-cpu max`), needs no KVM and is several times slower (tests/distro/packer_image.sh probes
#    KVM and picks).

variable "rootfs" {
  type        = string
  description = "Debian 12 root directory to bake into (systemd, containerd, python3, python3-apt, a kernel)"
}

variable "shims_file" {
  type        = string
  description = "YAML with the role's variables (shimkeeper_shims, shimkeeper_deb, shimkeeper_kube, ...)"
}

variable "output_directory" {
  type    = string
  default = "output"
}

variable "disk_size" {
  type    = string
  default = "2G"
}

variable "kernel" {
  type        = string
  default     = ""
  description = "Kernel to boot the image with; empty: the image's own (ROOTFS/vmlinuz)"
}

variable "initrd" {
  type        = string
  default     = ""
  description = "Its initrd, which must carry virtio_blk and ext4; empty: ROOTFS/initrd.img"
}

variable "accelerator" {
  type        = string
  default     = "tcg"
  description = "qemu's accelerator for the check boot: kvm (a working /dev/kvm) or tcg (none needed)"
}

variable "boot_timeout" {
  type        = string
  default     = "15m"
  description = "How long the check boot may take before the VM is stopped and the build fails"
}

locals {
  kernel = var.kernel != "" ? var.kernel : "${var.rootfs}/vmlinuz"
  initrd = var.initrd != "" ? var.initrd : "${var.rootfs}/initrd.img"
  # The check reaches the guest as a QEMU firmware config file (/sys/firmware/qemu_fw_cfg).
  check  = "/sys/firmware/qemu_fw_cfg/by_name/opt/org.shimkeeper/check/raw"
  serial = "${var.output_directory}/serial.log"
  # KVM runs the guest on the host's own CPU model; TCG emulates every feature it can.
  cpu    = var.accelerator == "kvm" ? "host" : "max"
}

source "null" "rootfs" {
  communicator = "none"
}

source "qemu" "first-boot" {
  disk_image       = true
  # Not named *.raw: Packer would copy it byte for byte (2G written); `qemu-img convert` keeps
  # it sparse.
  iso_url          = "${var.output_directory}/disk.img"
  iso_checksum     = "none"
  format           = "raw"
  accelerator      = var.accelerator
  headless         = true
  disable_vnc      = true
  boot_wait        = "0s"
  communicator     = "none"
  skip_resize_disk = true
  disk_interface   = "virtio"
  output_directory = "${var.output_directory}/boot"
  vm_name          = "disk.raw"
  memory           = 1024
  cpus             = 2
  shutdown_timeout = var.boot_timeout
  qemuargs = [
    ["-cpu", local.cpu],
    # Packer always adds a NIC; `restrict=on` leaves it nowhere to go.
    ["-netdev", "user,id=user.0,restrict=on"],
    ["-snapshot"],
    ["-kernel", local.kernel],
    ["-initrd", local.initrd],
    ["-append", join(" ", [
      "root=/dev/vda rw console=ttyS0 panic=-1",
      "systemd.run=\"/bin/sh -c 'modprobe qemu_fw_cfg; exec /bin/sh ${local.check}'\"",
      "systemd.run_success_action=poweroff systemd.run_failure_action=poweroff",
    ])],
    ["-fw_cfg", "name=opt/org.shimkeeper/check,file=${path.root}/first-boot-check.sh"],
    ["-serial", "file:${local.serial}"],
    ["-no-reboot"],
  ]
}

build {
  name    = "bake"
  sources = ["source.null.rootfs"]

  # `mkfs.ext4 -d` copies file by file: new inode numbers, no sub-second times. Over the chroot
  # connection the role runs `shimkeeper bake --root /`, which keeps no tamper records (they hold
  # both); the line that drops them anyway guards a root an older role filled with `apply`, which
  # the node would otherwise take for edited by hand and download again at first boot.
  provisioner "shell-local" {
    inline = [
      "ansible-playbook -c community.general.chroot -i '${var.rootfs},' -e @${var.shims_file} ${path.root}/../ansible/playbook.yml",
      "rm -rf ${var.rootfs}/var/lib/shimkeeper/state/fingerprints",
      "mkdir -p ${var.output_directory}",
      "mkfs.ext4 -q -F -d ${var.rootfs} ${var.output_directory}/disk.img ${var.disk_size}",
    ]
  }
}

build {
  name    = "boot"
  sources = ["source.qemu.first-boot"]

  # Runs once the VM has powered itself off: the verdict line decides the build's exit code.
  post-processor "shell-local" {
    inline = [
      "tr -d '\\r' <${local.serial} | grep 'shimkeeper-image-check:' || echo 'no line of the check on the serial console'",
      "tr -d '\\r' <${local.serial} | grep -q 'shimkeeper-image-check: ok$'",
    ]
  }
}
