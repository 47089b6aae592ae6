//! Writes a seed corpus for the `parse` fuzz target (`proto/fuzz`): one valid
//! packet of every kind, and each of them again inside an Ethernet/IPv4/UDP frame.
//!
//! ```text
//! cargo run -p nc-proto --example fuzz_seeds -- proto/fuzz/corpus/parse
//! ```

use proto::frame::{self, UdpMeta};
use proto::wire::{
    self, CHUNK_FLAG_ERROR, CHUNK_FLAG_LAST, ConfigItem, Decide, DecideKind, DecideMeta,
    ENTRY_FLAG_CONFIG, Entry, JoinRequest, Packet, ReplyNotLeader, ReplyOk, StateChunk,
};

/// The cluster id the fuzz target checks against.
const CLUSTER: u32 = 0xAABB_CCDD;

fn meta(kind: DecideKind) -> DecideMeta {
    DecideMeta {
        instance: 7,
        epoch: 2,
        msg_seq: 9,
        tree: 1,
        kind,
    }
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "proto/fuzz/corpus/parse".to_string());
    std::fs::create_dir_all(&dir).expect("create the corpus directory");

    let config: Vec<u8> = [
        ConfigItem {
            addr: proto::regs::addr::TIMEOUT,
            value: 1000,
        },
        ConfigItem {
            addr: proto::regs::addr::BATCH_MAX,
            value: 8,
        },
    ]
    .iter()
    .flat_map(|i| i.to_bytes())
    .collect();
    let plain = |client_id, seq, payload| Entry {
        client_id,
        seq,
        flags: 0,
        payload,
    };
    let config_entry = Entry {
        client_id: 9,
        seq: 1,
        flags: ENTRY_FLAG_CONFIG,
        payload: &config,
    };
    let batch = [
        plain(1, 10, &b"a"[..]),
        plain(2, 11, b"bcd"),
        plain(1, 12, b""),
    ];
    let mut batch_raw = vec![0u8; batch.iter().map(Entry::wire_len).sum()];
    wire::emit_entries(batch.iter(), &mut batch_raw).unwrap();
    let mut config_raw = vec![0u8; config_entry.wire_len()];
    wire::emit_entries([&config_entry], &mut config_raw).unwrap();
    let chunk = |flags, offset, total_len, data| StateChunk {
        transfer_id: 5,
        flags,
        instance: 77,
        offset,
        total_len,
        crc32: 0x1234_5678,
        timeout: 3000,
        data,
    };

    let packets = [
        ("request", Packet::Request(plain(1, 1, b"hello"))),
        ("request_config", Packet::Request(config_entry)),
        (
            "decide_heartbeat",
            Packet::Decide(Decide {
                meta: meta(DecideKind::Heartbeat),
                count: 0,
                entries_raw: &[],
            }),
        ),
        (
            "decide_start",
            Packet::Decide(Decide {
                meta: meta(DecideKind::Start),
                count: 0,
                entries_raw: &[],
            }),
        ),
        (
            "decide_batch",
            Packet::Decide(Decide {
                meta: meta(DecideKind::Batch),
                count: batch.len() as u16,
                entries_raw: &batch_raw,
            }),
        ),
        (
            "decide_config",
            Packet::Decide(Decide {
                meta: meta(DecideKind::Config),
                count: 1,
                entries_raw: &config_raw,
            }),
        ),
        (
            "reply_ok",
            Packet::ReplyOk(ReplyOk {
                client_id: 1,
                seq: 1,
                instance: 7,
                index: 0,
            }),
        ),
        (
            "reply_not_leader",
            Packet::ReplyNotLeader(ReplyNotLeader {
                client_id: 1,
                seq: 1,
                leader: 2,
                epoch: 5,
            }),
        ),
        (
            "join_request",
            Packet::JoinRequest(JoinRequest {
                transfer_id: 5,
                max_chunk: 1024,
                min_instance: 70,
                have: 0,
            }),
        ),
        ("state_chunk", Packet::StateChunk(chunk(0, 0, 10, b"snap"))),
        (
            "state_chunk_last",
            Packet::StateChunk(chunk(CHUNK_FLAG_LAST, 4, 10, b"shot!!")),
        ),
        (
            "state_chunk_error",
            Packet::StateChunk(chunk(CHUNK_FLAG_ERROR, 0, 0, b"busy")),
        ),
    ];

    let udp = UdpMeta {
        src_mac: [2, 0, 0, 0, 0, 1],
        dst_mac: frame::multicast_mac([239, 78, 67, 1]),
        src_ip: [10, 0, 0, 1],
        dst_ip: [239, 78, 67, 1],
        src_port: 7400,
        dst_port: 7400,
        ttl: 1,
    };
    for (name, p) in &packets {
        let bytes = p.to_vec(CLUSTER, 3).expect("seed packets are valid");
        assert_eq!(wire::parse(&bytes, CLUSTER).map(|(_, q)| q), Ok(*p));
        let mut f = vec![0u8; frame::PAYLOAD_OFFSET + bytes.len()];
        frame::emit_udp(&udp, &bytes, &mut f).expect("frame");
        // The framed seed must get past parse_udp (IPv4 header checksum over the raw bytes,
        // UDP length and checksum), or the fuzzer starts from frames it rejects.
        assert_eq!(frame::parse_udp(&f), Ok((udp, &bytes[..])));
        for (file, data) in [(name.to_string(), &bytes), (format!("{name}.frame"), &f)] {
            let path = std::path::Path::new(&dir).join(file);
            std::fs::write(&path, data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
    println!("wrote {} seeds to {dir}", 2 * packets.len());
}
