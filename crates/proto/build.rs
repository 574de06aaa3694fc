//! Compiles the protocol definitions with protox (pure Rust), so no system `protoc` is needed:
//! Weft's gRPC services (`weft.v1`) and the YARN messages of Hadoop's own protocols
//! (`hadoop.yarn`, `hadoop.common`; messages only, they travel over Hadoop IPC).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(
        [
            "weft/v1/common.proto",
            "weft/v1/resource_tracker.proto",
            "weft/v1/application_master.proto",
            "weft/v1/container_management.proto",
            "weft/v1/framed.proto",
            "hadoop/yarn_service_protos.proto",
            "hadoop/yarn_security_token.proto",
        ],
        ["proto"],
    )?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(fds)?;
    Ok(())
}
