#!/usr/bin/env bash
# image-builder/ checked cheaply (label distro): Ansible parses the playbook and the role,
# Packer 1.6.6 validates the HCL2 template (and its first-boot check parses as sh), cloud-init's
# user-data is a #cloud-config YAML document, and the role's templates render (through Ansible's
# own template module) into a drop-in that shimkeeper itself loads and plans, and agent settings
# whose [kube] it loads. Running them for real is tests/distro's job (ansible_role, packer_image).
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest}/tests/support/common.sh"
sk_init
command -v ansible-playbook >/dev/null || skip "ansible-playbook is missing (apt-get install ansible)"
command -v packer >/dev/null || skip "packer is missing (apt-get install packer)"
ib="$SHIMKEEPER_SOURCE_DIR/image-builder"

expect_exit 0 env ANSIBLE_ROLES_PATH="$ib/ansible/roles" ansible-playbook --syntax-check -i localhost, "$ib/ansible/playbook.yml"
expect_exit 0 packer validate -var rootfs="$T" -var shims_file="$T/shims.yml" "$ib/packer"
expect_exit 1 packer validate "$ib/packer" # the required variables are required
expect_output_contains 'Unset variable "rootfs"'
# The boot build's check runs in the image under Debian's /bin/sh (dash).
expect_exit 0 dash -n "$ib/packer/first-boot-check.sh"

# The user-data (booted for real by distro.cloud_init): a #cloud-config document whose commands
# fail as a whole when one fails and end with the apply, whose header lists every placeholder
# its active part uses, and whose commented cluster-mode example is valid once uncommented.
python3 - "$ib/cloud-init/user-data" <<'PY'
import re, sys, yaml
text = open(sys.argv[1]).read()
assert text.startswith("#cloud-config\n"), "user-data must start with #cloud-config"
doc = yaml.safe_load(text)
assert doc["locale"] is False, "minbase images have no locales"
assert any(f["path"].startswith("/etc/shimkeeper/shims.d/") for f in doc["write_files"])
assert doc["runcmd"][0] == "set -e", "runcmd must start with set -e: " + repr(doc["runcmd"][0])
assert doc["runcmd"][-1] == ["shimkeeper", "apply"], doc["runcmd"]
header = text.split("\n\n")[0]
listed = set(re.findall(r"^#\s+(@[A-Z0-9_]+@)", header, re.M))
used = set(re.findall(r"@[A-Z0-9_]+@", yaml.safe_dump(doc)))
assert used == listed, f"placeholders used {sorted(used)}, listed in the header {sorted(listed)}"
# The cluster-mode example, uncommented, is still valid YAML with private files.
block = re.search(r"^  # - path: /etc/shimkeeper/kubeconfig\n(?:^  #.*\n)+", text, re.M).group(0)
files = yaml.safe_load(re.sub(r"^  # ?", "", block, flags=re.M))
modes = {f["path"]: f["permissions"] for f in files}
assert modes["/etc/shimkeeper/kubeconfig"] == modes["/etc/shimkeeper/token"] == "0600", modes
kubeconfig = yaml.safe_load(files[0]["content"])
assert kubeconfig["users"][0]["user"]["tokenFile"] == "/etc/shimkeeper/token", kubeconfig
PY

# The role's template, rendered by Ansible, is a drop-in shimkeeper accepts.
cat >"$T/vars.yml" <<'YAML'
shimkeeper_shims:
  - name: spin-v2
    handler: spin
    runtime_type: io.containerd.spin.v2
    version: "0.17.0"
    options: { SystemdCgroup: true, ConfigPath: "/etc/spin.toml" }
    url: https://example.org/spin.tar.gz
    sha256: "1111111111111111111111111111111111111111111111111111111111111111"
YAML
cat >"$T/render.yml" <<YAML
- hosts: localhost
  gather_facts: false
  vars_files: ["$T/vars.yml"]
  tasks:
    - ansible.builtin.template:
        src: "$ib/ansible/roles/shimkeeper/templates/shim.toml.j2"
        dest: "$ROOT/etc/shimkeeper/shims.d/50-{{ item.name }}.toml"
        mode: "0644"
      loop: "{{ shimkeeper_shims }}"
YAML
expect_exit 0 ansible-playbook -c local -i localhost, "$T/render.yml"
mkdir -p "$ROOT/etc/containerd"
printf 'version = 2\n' >"$ROOT/etc/containerd/config.toml"
expect_exit 0 sk -o json plan
python3 -S - "$OUT" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
[action] = plan["actions"]
assert action["name"] == "spin-v2" and action["handler"] == "spin", action
PY
grep -q 'SystemdCgroup = true' "$ROOT/etc/shimkeeper/shims.d/50-spin-v2.toml" || fail "options not rendered"
# A second render changes nothing (idempotent).
expect_exit 0 ansible-playbook -c local -i localhost, "$T/render.yml"
expect_output_contains "changed=0"

# The role's agent settings ([kube] and extra settings from role variables), rendered by Ansible,
# load in shimkeeper: `status` names the node of the [kube] table (no cluster needed for that).
cat >"$T/render-agent.yml" <<YAML
- hosts: localhost
  gather_facts: false
  vars_files: ["$ib/ansible/roles/shimkeeper/vars/main.yml"]
  vars:
    shimkeeper_kube: { kubeconfig: /etc/shimkeeper/agent.kubeconfig, node_name: node-a }
    shimkeeper_extra_settings: "[health]\ntimeout = 60"
  tasks:
    - ansible.builtin.template:
        src: "$ib/ansible/roles/shimkeeper/templates/shimkeeper.toml.j2"
        dest: "$T/agent/shimkeeper.toml"
        mode: "0644"
YAML
mkdir -p "$T/agent"
expect_exit 0 ansible-playbook -c local -i localhost, "$T/render-agent.yml"
expect_exit 0 "$SHIMKEEPER" -c "$T/agent/shimkeeper.toml" --root "$ROOT" status
expect_output_contains "Cluster: node node-a (from [kube] node_name, not confirmed (cannot read kubeconfig /etc/shimkeeper/agent.kubeconfig"
