//! Builds the engine source with two-lane resource vectors (`src/lanes.rs`).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(weft_two_lanes)");
    println!("cargo::rustc-cfg=weft_two_lanes");
}
