//! `proto/README.md` must contain, verbatim, the tables and examples generated here
//! from the code, so the document cannot drift from it. On failure the expected
//! text is printed: paste it into the README.

use proto::regs::{self, Access, Register};
use proto::wire::{self, Decide, DecideKind, DecideMeta, Packet};

fn readme() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

fn assert_in_readme(what: &str, expected: &str) {
    let doc = readme();
    if !doc.contains(expected) {
        panic!(
            "proto/README.md does not contain the {what} generated from the code; \
             replace it with:\n\n{expected}\n"
        );
    }
}

/// A number as the table shows it: decimal up to 65535, hex above.
fn num(v: u64) -> String {
    if v <= 0xFFFF {
        v.to_string()
    } else if v <= u32::MAX as u64 {
        format!("0x{v:08X}")
    } else {
        format!("0x{v:016X}")
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('*', "\\*")
}

fn row(r: &Register) -> String {
    let (access, range) = match r.access {
        Access::Config => ("config", format!("{}..={}", num(r.min), num(r.max))),
        Access::Control => ("control", format!("{}..={}", num(r.min), num(r.max))),
        Access::ReadOnly => ("read-only", "—".to_string()),
    };
    format!(
        "| `{}` | 0x{:03X} | {} | {} | {} | {} | {} |",
        r.name,
        r.addr,
        r.width,
        access,
        num(r.reset),
        range,
        cell(r.doc)
    )
}

/// The register map: every register, then every counter, in address order.
fn register_table() -> String {
    let mut rows: Vec<Register> = regs::REGISTERS.to_vec();
    rows.extend(
        regs::Counter::ALL
            .iter()
            .map(|c| regs::counter_register(*c)),
    );
    rows.sort_by_key(|r| r.addr);
    let mut out = String::from(
        "| Name | Address | Width | Access | Reset | Legal range | Description |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for r in &rows {
        out.push_str(&row(r));
        out.push('\n');
    }
    out
}

/// The README's worked example: a heartbeat DECIDE (cluster 0xAABBCCDD, sender 3,
/// instance 7, epoch 2, msg_seq 9, tree 1), as a hex dump of 12 bytes a line.
fn heartbeat_example() -> String {
    let p = Packet::Decide(Decide {
        meta: DecideMeta {
            instance: 7,
            epoch: 2,
            msg_seq: 9,
            tree: 1,
            kind: DecideKind::Heartbeat,
        },
        count: 0,
        entries_raw: &[],
    });
    let bytes = p.to_vec(0xAABB_CCDD, 3).unwrap();
    assert_eq!(bytes.len(), wire::HEADER_LEN + wire::DECIDE_HEADER_LEN);
    assert_eq!(wire::parse(&bytes, 0xAABB_CCDD).unwrap().1, p);
    let mut out = String::from("```text\n");
    for (i, line) in bytes.chunks(12).enumerate() {
        let hex: Vec<String> = line.iter().map(|b| format!("{b:02x}")).collect();
        out.push_str(&format!("{:04x}  {}\n", i * 12, hex.join(" ")));
    }
    out.push_str("```\n");
    out
}

#[test]
fn readme_register_table_matches_the_code() {
    assert_in_readme("register table", &register_table());
}

#[test]
fn readme_heartbeat_example_matches_the_code() {
    assert_in_readme("heartbeat DECIDE example", &heartbeat_example());
}

#[test]
fn readme_states_the_layout_constants() {
    // The numbers the layout tables are built on.
    let doc = readme();
    for (what, n) in [
        ("HEADER_LEN", wire::HEADER_LEN),
        ("ENTRY_HEADER_LEN", wire::ENTRY_HEADER_LEN),
        ("DECIDE_HEADER_LEN", wire::DECIDE_HEADER_LEN),
        ("REPLY_LEN", wire::REPLY_LEN),
        ("JOIN_REQUEST_LEN", wire::JOIN_REQUEST_LEN),
        ("RECOVER_LEN", wire::RECOVER_LEN),
        ("STATE_CHUNK_HEADER_LEN", wire::STATE_CHUNK_HEADER_LEN),
        ("CONFIG_ITEM_LEN", wire::CONFIG_ITEM_LEN),
        ("MAX_PACKET_LEN", wire::MAX_PACKET_LEN),
        ("PAYLOAD_OFFSET", proto::frame::PAYLOAD_OFFSET),
    ] {
        let needle = format!("`{what}` = {n}");
        assert!(doc.contains(&needle), "README should say {needle:?}");
    }
}
