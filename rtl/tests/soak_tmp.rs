use rtl::lockstep;
#[test]
#[ignore]
fn soak_core() {
    let from: u64 = std::env::var("FROM")
        .map(|v| v.parse().unwrap())
        .unwrap_or(200);
    let n: u64 = std::env::var("N")
        .map(|v| v.parse().unwrap())
        .unwrap_or(400);
    let engine = std::env::var("ENGINE").is_ok();
    let mut fails = 0;
    for seed in from..from + n {
        let r = if engine {
            lockstep::run_engine(seed, 600, |_| {})
        } else {
            lockstep::run(seed, 800, |_| {})
        };
        if let Err(e) = r {
            fails += 1;
            if fails <= 2 {
                eprintln!("{}", &e[..e.len().min(6000)]);
            }
        }
    }
    eprintln!("soak: {fails} failures of {n}");
    assert_eq!(fails, 0);
}
