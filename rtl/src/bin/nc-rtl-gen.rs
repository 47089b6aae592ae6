//! Writes the Verilog of every RTL module into `rtl/verilog/` (or the folder given as argument).

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("verilog"));
    std::fs::create_dir_all(&dir).expect("create the output folder");
    for (file, text) in rtl::export::all() {
        let path = dir.join(file);
        std::fs::write(&path, text).expect("write Verilog");
        println!("wrote {}", path.display());
    }
}
