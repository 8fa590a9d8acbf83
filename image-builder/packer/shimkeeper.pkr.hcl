# Bakes containerd shims into a Debian 12 node image with the shimkeeper Ansible role, then boots
# the image once to check it. Packer 1.6.6 (Debian's): no `packer { required_plugins }`, no
# `packer init`; the builders used here are built in.
#
#   packer build -only='bake.null.rootfs' -var rootfs=/srv/rootfs -var shims_file=shims.yml .
#   packer build -only='boot.qemu.first-boot' -var kernel=... -var initrd=... .
#
# 1. bake: the role runs against the unbooted root over Ansible's chroot connection (the rootfs
#    needs python3 and the shimkeeper package or a .deb in shims_file's shimkeeper_deb), then
#    `mkfs.ext4 -d` turns it into a raw disk (no loop mounts needed).
# 2. boot: qemu under TCG boots that disk with the host's kernel; the guest powers itself off
#    (communicator "none"), its serial console is the log.

variable "rootfs" {
  type        = string
  description = "Debian 12 root directory to bake into (mmdebstrap with systemd, containerd, python3)"
}

variable "shims_file" {
  type        = string
  description = "YAML with the role's variables (shimkeeper_shims, shimkeeper_deb, shimkeeper_kube)"
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
  type    = string
  default = "/vmlinuz"
}

variable "initrd" {
  type    = string
  default = "/initrd.img"
}

source "null" "rootfs" {
  communicator = "none"
}

source "qemu" "first-boot" {
  disk_image       = true
  iso_url          = "${var.output_directory}/disk.raw"
  iso_checksum     = "none"
  format           = "raw"
  accelerator      = "tcg"
  headless         = true
  communicator     = "none"
  skip_resize_disk = true
  disk_interface   = "virtio"
  net_device       = "virtio-net"
  output_directory = "${var.output_directory}/boot"
  vm_name          = "disk.raw"
  memory           = 1024
  cpus             = 2
  shutdown_timeout = "10m"
  qemuargs = [
    ["-kernel", "${var.kernel}"],
    ["-initrd", "${var.initrd}"],
    ["-append", "root=/dev/vda rw console=ttyS0 panic=-1"],
    ["-serial", "file:${var.output_directory}/serial.log"],
    ["-no-reboot"],
  ]
}

build {
  name    = "bake"
  sources = ["source.null.rootfs"]

  provisioner "shell-local" {
    inline = [
      "ansible-playbook -c community.general.chroot -i '${var.rootfs},' -e @${var.shims_file} ${path.root}/../ansible/playbook.yml",
      "mkdir -p ${var.output_directory}",
      "mkfs.ext4 -q -F -d ${var.rootfs} ${var.output_directory}/disk.raw ${var.disk_size}",
    ]
  }
}

build {
  name    = "boot"
  sources = ["source.qemu.first-boot"]
}
