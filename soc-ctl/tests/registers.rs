//! The register file behaves identically behind both backends: the same suite runs on the
//! software engine's control socket and on a memory-mapped file laid out like the card's BAR.
//! Also the CLI's refusals (named field, legal range, nothing written).

mod common;

use std::process::Command;

use common::{Cluster, SOC_CTL, test_file};
use proto::regs::{self, MAGIC_VALUE};
use soc_ctl::regfile::{
    EngineBus, MmioBus, RegAccessError, RegisterBus, Registers, write_reset_image,
};

/// The shared suite: `r` is a freshly reset, disabled node.
fn suite<B: RegisterBus>(r: &mut Registers<B>) {
    let what = r.bus.describe();
    assert_eq!(r.get("magic").unwrap(), MAGIC_VALUE as u64, "{what}");
    // Reset values of every configuration register.
    for reg in regs::REGISTERS
        .iter()
        .filter(|g| g.access == regs::Access::Config)
    {
        if reg.name == "node_id" || reg.name == "node_count" || reg.name == "cluster_id" {
            continue; // the engine is started from a cluster file
        }
        let _ = r.read(reg).unwrap();
    }
    // A legal write reads back.
    r.set("fifo_depth", 100).unwrap();
    assert_eq!(r.get("fifo_depth").unwrap(), 100, "{what}");
    r.set("batch_max", 7).unwrap();
    assert_eq!(r.get("batch_max").unwrap(), 7, "{what}");
    // Out of range: refused, naming the field and the legal range; nothing written.
    let e = r.set("trees", 9).unwrap_err();
    let RegAccessError::Refused(m) = &e else {
        panic!("{what}: {e}")
    };
    assert!(m.contains("trees") && m.contains("1..=4"), "{what}: {m}");
    let e = r.set("fifo_depth", 1_000_000).unwrap_err().to_string();
    assert!(
        e.contains("fifo_depth") && e.contains("1..=4096"),
        "{what}: {e}"
    );
    assert_eq!(
        r.get("fifo_depth").unwrap(),
        100,
        "{what}: a refused write changed the value"
    );
    // Read-only registers and counters: refused, unchanged.
    let before = r.get("epoch").unwrap();
    let e = r.set("epoch", 5).unwrap_err().to_string();
    assert!(
        e.contains("epoch") && e.contains("read-only"),
        "{what}: {e}"
    );
    assert_eq!(r.get("epoch").unwrap(), before);
    let e = r.set("delivered", 1).unwrap_err().to_string();
    assert!(e.contains("read-only"), "{what}: {e}");
    // Unknown names.
    let e = r.get("no_such_register").unwrap_err().to_string();
    assert!(
        e.contains("no register named 'no_such_register'"),
        "{what}: {e}"
    );
    // 64-bit registers read as two words.
    assert_eq!(r.get("instance").unwrap(), 0, "{what}");
    assert_eq!(r.get("delivered").unwrap(), 0, "{what}");
    // The dump lists every register and counter, in map order.
    let d = r.dump().unwrap();
    assert_eq!(d.len(), regs::REGISTERS.len() + regs::Counter::ALL.len());
    assert_eq!(d[0].0.name, "magic");
    // The cross-field rules (here the timeout bound of §5.2): refused, nothing written. The
    // engine checks them itself; a card's CSR block does not, so `Registers` checks them on
    // both backends before the write.
    let before = r.get("timeout").unwrap();
    let e = r.set("timeout", 10).unwrap_err().to_string();
    assert!(
        e.contains("timeout") && e.contains("legal here"),
        "{what}: {e}"
    );
    assert_eq!(r.get("timeout").unwrap(), before, "{what}");
    // Put things back.
    r.set("fifo_depth", regs::by_name("fifo_depth").unwrap().reset)
        .unwrap();
    r.set("batch_max", regs::by_name("batch_max").unwrap().reset)
        .unwrap();
}

#[test]
fn suite_on_the_engine_socket() {
    let mut c = Cluster::new(test_file(1, 2, 51));
    c.spawn(0);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(c.ctl(0)).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the control socket must be private");
    let mut r = Registers::new(EngineBus::connect(&c.ctl(0)).unwrap());
    suite(&mut r);
    // The software leader cuts a batch at the MTU: a small MTU is legal with any batch_max.
    r.set("mtu", 600).unwrap();
    assert_eq!(r.get("mtu").unwrap(), 600);
    r.set("mtu", 1500).unwrap();
    // `init`'s write order through a swap of two trees' groups and two ports (each single
    // write of the swap is refused: two registers would be equal), on the engine's own checks.
    let mut f = c.file.clone();
    f.trees.swap(0, 1);
    (f.ports.decide, f.ports.client) = (f.ports.client, f.ports.decide);
    let want = f.node(0).unwrap().config;
    soc_ctl::regfile::configure(&mut r, &want).unwrap();
    r.set("ctrl", 0).unwrap();
    assert_eq!(r.config().unwrap(), want);
    // What only a live device can do: the enabled state.
    r.set("ctrl", regs::ctrl::ENABLE as u64).unwrap();
    let e = r.set("fifo_depth", 10).unwrap_err().to_string();
    assert!(e.contains("ENABLE=0"), "{e}");
}

#[test]
fn suite_on_a_mapped_bar_file() {
    let dir = tempfile::tempdir().unwrap();
    let bar = dir.path().join("resource0");
    write_reset_image(&bar).unwrap();
    let mut r = Registers::new(MmioBus::open(&bar).unwrap());
    suite(&mut r);
    // A card's own limits (`Config::validate_for(Datapath::CARD)`): its leader does not cut a
    // batch at the MTU, so with the reset batch_max (16, of which it takes 8) an MTU under a
    // DECIDE of 8 requests of 128 bytes is refused, naming the legal range; with batch_max 2
    // it is taken, and batch_max cannot then go back up past what the MTU holds.
    assert_eq!(r.get("batch_max").unwrap(), 16);
    let e = r.set("mtu", 600).unwrap_err().to_string();
    assert!(
        e.contains("mtu=600 is illegal") && e.contains("legal here: 1224..=9000"),
        "{e}"
    );
    assert_eq!(
        r.get("mtu").unwrap(),
        1500,
        "a refused write changed the value"
    );
    r.set("batch_max", 2).unwrap();
    r.set("mtu", 600).unwrap();
    let e = r.set("batch_max", 4).unwrap_err().to_string();
    assert!(e.contains("mtu=600 is illegal"), "{e}");
    assert_eq!(r.get("batch_max").unwrap(), 2);
    // Words land little-endian at the map's addresses (what the card's CSR bus decodes).
    r.set("cluster_id", 0x0102_0304).unwrap();
    let img = std::fs::read(&bar).unwrap();
    let a = regs::addr::CLUSTER_ID as usize;
    assert_eq!(img[a..a + 4], [4, 3, 2, 1]);
    // A file too small for the map is refused.
    let small = dir.path().join("small");
    std::fs::write(&small, [0u8; 64]).unwrap();
    let e = MmioBus::open(&small).err().expect("refused").to_string();
    assert!(e.contains("needs"), "{e}");
}

#[test]
fn cli_refuses_illegal_values_with_the_field_and_range() {
    let dir = tempfile::tempdir().unwrap();
    let bar = dir.path().join("resource0");
    write_reset_image(&bar).unwrap();
    let before = std::fs::read(&bar).unwrap();
    for (args, needle) in [
        (
            vec!["regs", "set", "trees", "9"],
            "trees=9 is out of range: legal values are 1..=4",
        ),
        (
            vec!["regs", "set", "tree_group0", "10.0.0.1"],
            "tree_group0",
        ),
        (vec!["regs", "set", "status", "1"], "status is read-only"),
        (
            vec!["regs", "set", "timeout", "10"],
            "timeout=10 is illegal: timeout must exceed",
        ),
        (vec!["rejoin", "--timeout", "10"], "timeout=10 is illegal"),
        (
            vec!["regs", "set", "mtu", "600"],
            "mtu=600 is illegal: this datapath's leader does not cut a batch",
        ),
        (vec!["regs", "set", "loop_period", "ten"], "not a number"),
        (vec!["regs", "get", "nope"], "no register named 'nope'"),
        (vec!["join", "--member", "1"], "needs the host application"),
    ] {
        let o = Command::new(SOC_CTL)
            .arg("--bar")
            .arg(&bar)
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert_eq!(
        std::fs::read(&bar).unwrap(),
        before,
        "a refused command wrote to the BAR"
    );
    let o = Command::new(SOC_CTL)
        .arg("--bar")
        .arg(&bar)
        .args(["regs", "set", "tree_group1", "239.1.2.3"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let o = Command::new(SOC_CTL)
        .arg("--bar")
        .arg(&bar)
        .args(["regs", "get", "tree_group1"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        (u32::from(std::net::Ipv4Addr::new(239, 1, 2, 3))).to_string()
    );
    let o = Command::new(SOC_CTL)
        .arg("--bar")
        .arg(&bar)
        .args(["regs", "dump"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("loop_period") && out.contains("late_copies"),
        "{out}"
    );
}

#[test]
fn bad_cluster_files_are_refused_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = test_file(3, 2, 52);
    f.timing.timeout_ns = 1000;
    let p = dir.path().join("bad.toml");
    std::fs::write(&p, f.to_toml()).unwrap();
    let o = Command::new(common::ENGINE)
        .arg("--config")
        .arg(&p)
        .args(["--node", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("timing.timeout_ns") && err.contains("legal here"),
        "{err}"
    );
    let good = dir.path().join("good.toml");
    std::fs::write(&good, test_file(3, 2, 52).to_toml()).unwrap();
    let o = Command::new(common::ENGINE)
        .arg("--config")
        .arg(&good)
        .args(["--node", "3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--node") && err.contains("0..=2"), "{err}");
}

/// `soc-ctl ... | head -1`: a closed pipe ends the command quietly (no panic message), as with
/// other command-line tools.
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let bar = dir.path().join("resource0");
    write_reset_image(&bar).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_soc-ctl"))
        .arg("--bar")
        .arg(&bar)
        .args(["regs", "dump"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the pipe before it writes (the reader is gone, as `| head -0` would leave it).
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(
        !err.contains("panicked"),
        "soc-ctl panicked on a closed pipe: {err}"
    );
    assert!(
        status.success() || std::os::unix::process::ExitStatusExt::signal(&status) == Some(13),
        "{status:?}: {err}"
    );
}

/// `soc-ctl rejoin` drives the CSR sequence over a BAR too; a card without the join (here a
/// register image that does not react, as a bitstream from before issue 17's join refuses
/// JOIN) gets an error naming the step and the reason.
#[test]
fn rejoin_over_a_bar_says_when_the_card_has_no_join() {
    let dir = tempfile::tempdir().unwrap();
    let bar = dir.path().join("resource0");
    write_reset_image(&bar).unwrap();
    let o = Command::new(SOC_CTL)
        .arg("--bar")
        .arg(&bar)
        .arg("rejoin")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("made no safe exit"),
        "{err}"
    );
    // The card reports its safe exit.
    let mut img = std::fs::read(&bar).unwrap();
    let at = proto::regs::addr::STATUS as usize;
    img[at..at + 4].copy_from_slice(&proto::regs::status::NET_FAULT.to_le_bytes());
    std::fs::write(&bar, &img).unwrap();
    let o = Command::new(SOC_CTL)
        .arg("--bar")
        .arg(&bar)
        .arg("rejoin")
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(!o.status.success());
    assert!(out.contains("2. CTRL <- 0"), "{out}");
    assert!(
        err.contains("JOINING = 0") && err.contains("no join"),
        "{err}"
    );
    let ctrl = proto::regs::addr::CTRL as usize;
    let img = std::fs::read(&bar).unwrap();
    let written = u32::from_le_bytes(img[ctrl..ctrl + 4].try_into().unwrap());
    assert_eq!(
        written,
        proto::regs::ctrl::ENABLE | proto::regs::ctrl::JOIN,
        "step 3 was written"
    );
}

/// `soc-ctl init` over a card's BAR writes a whole configuration register by register: with the
/// cross-field rules checked on every write (a card does not check them), it finds an order in
/// which each intermediate configuration passes, as over the engine's socket, and the BAR ends
/// up holding the node's configuration.
#[test]
fn init_over_a_bar_writes_the_whole_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let bar = dir.path().join("resource0");
    write_reset_image(&bar).unwrap();
    let file = test_file(3, 2, 53);
    let cfg = dir.path().join("cluster.toml");
    std::fs::write(&cfg, file.to_toml()).unwrap();
    let o = Command::new(SOC_CTL)
        .arg("--bar")
        .arg(&bar)
        .args(["--node", "2", "init", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let want = file.node(2).unwrap().config;
    let mut r = Registers::new(MmioBus::open(&bar).unwrap());
    assert_eq!(r.config().unwrap(), want);
    assert_eq!(r.get("ctrl").unwrap(), regs::ctrl::ENABLE as u64);
}

/// `soc-ctl init` again with a configuration that swaps two trees' groups and two ports: every
/// single write of the swap makes two registers equal (which the cross-field rules refuse), so
/// no order of plain writes gets there; `init` must still end with the new configuration.
#[test]
fn init_again_with_swapped_groups_and_ports() {
    let dir = tempfile::tempdir().unwrap();
    let bar = dir.path().join("resource0");
    write_reset_image(&bar).unwrap();
    let mut file = test_file(3, 2, 54);
    let cfg = dir.path().join("cluster.toml");
    let init = |file: &soc_ctl::cluster::ClusterFile| {
        std::fs::write(&cfg, file.to_toml()).unwrap();
        let o = Command::new(SOC_CTL)
            .arg("--bar")
            .arg(&bar)
            .args(["--node", "1", "init", "--config"])
            .arg(&cfg)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut r = Registers::new(MmioBus::open(&bar).unwrap());
        assert_eq!(r.config().unwrap(), file.node(1).unwrap().config);
        assert_eq!(r.get("ctrl").unwrap(), regs::ctrl::ENABLE as u64);
    };
    init(&file);
    file.trees.swap(0, 1);
    let p = &mut file.ports;
    (p.decide, p.client) = (p.client, p.decide);
    file.validate().unwrap();
    init(&file);
}
