//! Compiles Hadoop's IPC message definitions with protox (pure Rust, no system `protoc`); only
//! messages are generated (this is not gRPC, so no client or server code).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(
        [
            "hadoop/common/RpcHeader.proto",
            "hadoop/common/IpcConnectionContext.proto",
            "hadoop/common/ProtobufRpcEngine2.proto",
        ],
        ["proto"],
    )?;
    tonic_prost_build::configure()
        .build_server(false)
        .build_client(false)
        .compile_fds(fds)?;
    Ok(())
}
