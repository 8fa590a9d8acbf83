# shellcheck shell=bash
# The journal of a booted node (booted_node.sh) as an operator queries it: `journalctl -u shimkeeper
# FIELD=VALUE -o json` run inside the node, the records parsed on the host (the rootfs has no
# python3). A record is picked by a journal match and a piece of its MESSAGE.
#
#   journal_has SHIM=demo committed            # some such record exists
#   journal_expect "what" SHIM=demo committed -- HANDLER=demo PRIORITY=6
#                                              # the latest such record carries these fields
#   journal_txns SHIM=broken rolled-back       # how many transactions (distinct TXN) logged one
#   last_txn_id ROOTFS                         # the id of state/journal.json's transaction

# booted_journal__records MATCH TEXT: the matching records whose MESSAGE holds TEXT, one JSON
# object a line, oldest first.
booted_journal__records() {
    boot_run journalctl -u shimkeeper -o json --no-pager "$1" |
        python3 -S -c 'import json, sys
for line in sys.stdin:
    if line.strip():
        record = json.loads(line)
        if sys.argv[1] in str(record.get("MESSAGE", "")):
            print(json.dumps(record))' "$2"
}

journal_has() {
    [[ -n "$(booted_journal__records "$1" "$2")" ]]
}

journal_txns() {
    booted_journal__records "$1" "$2" |
        python3 -S -c 'import json, sys; print(len({json.loads(l).get("TXN") for l in sys.stdin}))'
}

# journal_expect WHAT MATCH TEXT -- FIELD=VALUE...: fails naming WHAT and each field that differs.
journal_expect() {
    local what=$1 match=$2 text=$3 records wrong
    shift 3
    [[ ${1:-} == -- ]] && shift
    records=$(booted_journal__records "$match" "$text")
    [[ -n $records ]] || fail "$what: journalctl -u shimkeeper $match has no record saying '$text':" \
        "$(boot_run journalctl -u shimkeeper --no-pager | tail -20)"
    wrong=$(tail -n1 <<<"$records" | python3 -S -c 'import json, sys
record = json.loads(sys.stdin.read())
for want in sys.argv[1:]:
    name, value = want.split("=", 1)
    if record.get(name) != value:
        print(f"{name}={record.get(name)!r} (expected {value!r})")' "$@")
    [[ -z $wrong ]] || fail "$what: the journal record \"$(tail -n1 <<<"$records" |
        python3 -S -c 'import json, sys; print(json.load(sys.stdin)["MESSAGE"])')\" has ${wrong//$'\n'/, }"
}

last_txn_id() {
    python3 -S -c 'import json, sys; print(json.load(open(sys.argv[1]))["id"])' \
        "$1/var/lib/shimkeeper/state/journal.json"
}
