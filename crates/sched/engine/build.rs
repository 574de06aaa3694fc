//! Declares the cfg that weft-sched-engine2 sets on the same source (two-lane vectors).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(weft_two_lanes)");
}
