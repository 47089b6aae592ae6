//! The apply side on a real redis-server: decided RESP commands run in order, exactly once per
//! (client id, seq); two servers fed the same decisions end with the same dataset (DEBUG DIGEST).

use host_app::redis::{RedisApplier, RedisServer};
use host_app::resp::Value;
use proto::wire::{self, Decide, DecideKind, DecideMeta, Entry};

fn decide(instance: u64, entries: &[(u32, u64, Vec<u8>)]) -> Vec<u8> {
    let es: Vec<Entry<'_>> = entries
        .iter()
        .map(|(c, s, p)| Entry {
            client_id: *c,
            seq: *s,
            flags: 0,
            payload: p,
        })
        .collect();
    let len: usize = es.iter().map(|e| e.wire_len()).sum();
    let mut raw = vec![0u8; len];
    wire::emit_entries(es.iter(), &mut raw).unwrap();
    wire::Packet::Decide(Decide {
        meta: DecideMeta {
            instance,
            epoch: 0,
            msg_seq: 0,
            tree: 0,
            kind: DecideKind::Batch,
        },
        count: es.len() as u16,
        entries_raw: &raw,
    })
    .to_vec(7, 0)
    .unwrap()
}

fn cmd(args: &[&str]) -> Vec<u8> {
    let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
    Value::command(&a).to_bytes()
}

fn run(server: &RedisServer, packets: &[Vec<u8>]) -> Vec<Vec<Option<Value>>> {
    let mut a = RedisApplier::new(server.connect().unwrap(), 0);
    packets
        .iter()
        .map(|p| {
            let Ok((_, wire::Packet::Decide(d))) = wire::parse(p, 7) else {
                panic!()
            };
            a.apply(d.meta.instance, &d)
                .unwrap()
                .into_iter()
                .map(|x| x.reply)
                .collect()
        })
        .collect()
}

#[test]
fn decided_commands_apply_once_in_order_and_replicas_agree() {
    let dir = tempfile::tempdir().unwrap();
    let s1 = RedisServer::start(&dir.path().join("r1")).expect("start redis-server");
    let s2 = RedisServer::start(&dir.path().join("r2")).expect("start redis-server");
    let packets = vec![
        decide(
            1,
            &[(1, 1, cmd(&["SET", "a", "1"])), (1, 2, cmd(&["INCR", "n"]))],
        ),
        // A retransmission of (1, 2) decided again, and a new command.
        decide(
            2,
            &[
                (1, 2, cmd(&["INCR", "n"])),
                (2, 1, cmd(&["HSET", "h", "f", "v"])),
            ],
        ),
        decide(
            3,
            &[
                (2, 2, b"not resp".to_vec()),
                (3, 1, cmd(&["RPUSH", "l", "x", "y"])),
            ],
        ),
    ];
    let r1 = run(&s1, &packets);
    let r2 = run(&s2, &packets);
    assert_eq!(r1, r2, "replicas answered differently");
    assert_eq!(
        r1[0],
        vec![Some(Value::Simple("OK".into())), Some(Value::Integer(1))]
    );
    assert_eq!(
        r1[1],
        vec![None, Some(Value::Integer(1))],
        "the retransmission ran again"
    );
    assert!(matches!(r1[2][0], Some(Value::Error(_))));
    let mut c = s1.connect().unwrap();
    assert_eq!(
        c.call(&Value::command(&[b"GET", b"n"])).unwrap(),
        Value::Bulk(Some(b"1".to_vec()))
    );
    assert_eq!(
        c.call(&Value::command(&[b"LLEN", b"l"])).unwrap(),
        Value::Integer(2)
    );
    let digest = |s: &RedisServer| {
        s.connect()
            .unwrap()
            .call(&Value::command(&[b"DEBUG", b"DIGEST"]))
            .unwrap()
    };
    assert!(
        matches!(digest(&s1), Value::Simple(ref d) if d.len() == 40),
        "{:?}",
        digest(&s1)
    );
    assert_eq!(digest(&s1), digest(&s2));
    assert_ne!(
        digest(&s1),
        Value::Simple("0".repeat(40)),
        "the dataset is not empty"
    );

    // Instances must come in order: a gap is an error, not a silent skip.
    let mut a = RedisApplier::new(s1.connect().unwrap(), 3);
    let p = decide(5, &[(9, 1, cmd(&["SET", "z", "1"]))]);
    let Ok((_, wire::Packet::Decide(d))) = wire::parse(&p, 7) else {
        panic!()
    };
    assert!(a.apply(5, &d).is_err());
}

/// Writes proposed together: one entry carrying several commands runs each of them, in order,
/// and answers the array of their replies; decided again (a retransmission), it runs nothing; an
/// array that is not all commands is one error reply, the same on every replica.
#[test]
fn a_batch_entry_runs_each_command_once_and_answers_each() {
    use host_app::redis::batch_payload;
    let dir = tempfile::tempdir().unwrap();
    let s1 = RedisServer::start(&dir.path().join("r1")).expect("start redis-server");
    let s2 = RedisServer::start(&dir.path().join("r2")).expect("start redis-server");
    let (set, incr, push) = (
        cmd(&["SET", "a", "1"]),
        cmd(&["INCR", "n"]),
        cmd(&["RPUSH", "l", "x"]),
    );
    let batch = batch_payload([set.as_slice(), incr.as_slice(), push.as_slice()].into_iter());
    // An array whose second item is not a command (an integer).
    let bad = b"*2\r\n*2\r\n$4\r\nINCR\r\n$1\r\nm\r\n:5\r\n".to_vec();
    let packets = vec![
        decide(1, &[(1, 1, batch.clone()), (2, 1, cmd(&["INCR", "n"]))]),
        decide(2, &[(1, 1, batch), (3, 1, bad)]),
    ];
    let r1 = run(&s1, &packets);
    assert_eq!(r1, run(&s2, &packets), "replicas answered differently");
    assert_eq!(
        r1[0],
        vec![
            Some(Value::Array(Some(vec![
                Value::Simple("OK".into()),
                Value::Integer(1),
                Value::Integer(1),
            ]))),
            Some(Value::Integer(2)),
        ]
    );
    assert_eq!(r1[1][0], None, "the batch decided again ran again");
    assert!(matches!(r1[1][1], Some(Value::Error(_))), "{:?}", r1[1][1]);
    let mut c = s1.connect().unwrap();
    assert_eq!(
        c.call(&Value::command(&[b"GET", b"n"])).unwrap(),
        Value::Bulk(Some(b"2".to_vec()))
    );
    assert_eq!(
        c.call(&Value::command(&[b"EXISTS", b"m"])).unwrap(),
        Value::Integer(0),
        "nothing of a malformed batch runs"
    );
}
