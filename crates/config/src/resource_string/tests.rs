//! Cases taken from the behaviour Hadoop's own configuration tests pin down.

use super::*;

fn types() -> ResourceTypes {
    ResourceTypes::default()
}

fn with_test1() -> ResourceTypes {
    ResourceTypes::with_custom(["test1"]).unwrap()
}

fn abs(text: &str) -> Resource {
    match parse_resource(text, &types(), MissingTypes::Unbounded) {
        Ok(ConfiguredResource::Absolute(r)) => r,
        other => panic!("{text}: {other:?}"),
    }
}

fn resolve(text: &str, types: &ResourceTypes, cluster: Resource) -> Resource {
    parse_resource(text, types, MissingTypes::Unbounded)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .resolve(cluster)
}

fn err(text: &str) -> String {
    match parse_resource(text, &with_test1(), MissingTypes::Unbounded) {
        Err(e) => e,
        Ok(r) => panic!("{text} was accepted as {r:?}"),
    }
}

#[test]
fn old_style_absolute_forms() {
    let expected = Resource::new(5 * 1024, 2);
    for text in [
        "2 vcores, 5120 mb",
        "5120 mb, 2 vcores",
        "2vcores,5120mb",
        "5120mb,2vcores",
        "5120mb   mb, 2    vcores",
        "5120 Mb, 2 vCores",
        "  5120 mb, 2 vcores  ",
        "  5120.3 mb, 2.35 vcores  ",
        "  5120. mb, 2. vcores  ",
        "5120 mb 2 vcores",
        "5120 mb, 2 vcores,",
    ] {
        assert_eq!(abs(text), expected, "{text}");
    }
    // The seed document's own example.
    assert_eq!(abs("10000 mb,0vcores"), Resource::new(10000, 0));
}

#[test]
fn old_style_absolute_leaves_custom_types_at_zero() {
    let r = parse_resource("1024 mb, 2 vcores", &with_test1(), MissingTypes::Unbounded).unwrap();
    assert_eq!(r, ConfiguredResource::Absolute(Resource::new(1024, 2)));
}

#[test]
fn old_style_absolute_rejections() {
    for text in ["1024", "1024mb", "1024vcores", "1o24vc0res"] {
        let e = err(text);
        assert!(e.contains(&format!("'{text}'")), "{text}: {e}");
    }
    assert_eq!(
        err("1024"),
        "'1024' is not a resource: expected e.g. '1024 mb, 2 vcores' or 'memory-mb=1024, vcores=2'"
    );
    for text in [
        "-2 vcores,5120 mb",
        "-2 vcores, 5120 mb",
        "5120mb   mb, -2    vcores",
        "  5120.3 mb, -2.35 vcores  ",
    ] {
        assert!(
            err(text).contains("vcores must not be negative"),
            "{text}: {}",
            err(text)
        );
    }
    for text in [
        "2 vcores,-5120 mb",
        "2 vcores, -5120 mb",
        "-5120mb   mb, 2    vcores",
        "  -5120.3 mb, 2.35 vcores  ",
    ] {
        assert!(
            err(text).contains("memory must not be negative"),
            "{text}: {}",
            err(text)
        );
    }
}

#[test]
fn old_style_absolute_is_limited_to_java_ints() {
    assert_eq!(
        abs("2147483647 mb, 2147483647 vcores"),
        Resource::new(2147483647, 2147483647)
    );
    let e = err("2147483648 mb, 1 vcores");
    assert!(e.contains("too large"), "{e}");
    let e = err("9223372036854775807 mb, 1 vcores");
    assert!(e.contains("too large"), "{e}");
}

#[test]
fn old_style_percentages() {
    let t = types();
    let cluster = Resource::new(10 * 1024, 4);
    let expected = Resource::new(5 * 1024, 2);
    for text in [
        "50% memory, 50% cpu",
        "50% Memory, 50% CpU",
        "50 % memory, 50 % cpu",
        "50%memory,50%cpu",
        "  50  %  memory,  50  %  cpu  ",
        "50.% memory, 50.% cpu",
        "50%",
    ] {
        assert_eq!(resolve(text, &t, cluster), expected, "{text}");
    }
    assert_eq!(
        resolve("50% memory, 100% cpu", &t, cluster),
        Resource::new(5120, 4)
    );
    assert_eq!(
        resolve(" 100% cpu, 50% memory", &t, cluster),
        Resource::new(5120, 4)
    );
    assert_eq!(
        resolve("50% memory, 0% cpu", &t, cluster),
        Resource::new(5120, 0)
    );
    assert_eq!(
        resolve("10.9% memory, 50.6% cpu", &t, cluster),
        Resource::new((1024.0 * 10.0 * 0.109) as i64, 2)
    );
}

#[test]
fn single_percentage_applies_to_custom_types() {
    let t = with_test1();
    let cluster = Resource::new(10 * 1024, 4).with(2, 8);
    assert_eq!(
        resolve("50%", &t, cluster),
        Resource::new(5120, 2).with(2, 4)
    );
}

#[test]
fn old_style_percentage_rejections() {
    for text in [
        "95%, 50% memory",
        "95A% cpu, 50% memory",
        "50% memory, 2 vcores",
        "50% memory, -2 vcores",
    ] {
        let e = err(text);
        assert!(e.contains("cpu"), "{text}: {e}");
    }
    for text in ["50% cpu, 1024 mb", "-50% cpu, 1024 mb", "50% cpu, -1024 mb"] {
        let e = err(text);
        assert!(e.contains("memory"), "{text}: {e}");
    }
    assert!(err("50% memory, 2 vcores").contains("mixes percentages and absolute amounts"));
    for text in [
        "-10% memory, 50% cpu",
        "10% memory, -10% cpu",
        "-20% memory, -10% cpu",
        "-50% memory, 2 vcores",
        "-50%",
    ] {
        assert!(
            err(text).contains("must not be negative"),
            "{text}: {}",
            err(text)
        );
    }
    assert!(err("50% memory").contains("not a percentage"));
    assert!(err("40% 80%").contains("not a percentage"));
}

#[test]
fn new_style_absolute() {
    let t = with_test1();
    let given = Resource::new(5120, 2);
    for text in [
        "vcores=2, memory-mb=5120",
        "memory-mb=5120, vcores=2",
        "vcores=2,memory-mb=5120",
        " vcores = 2 , memory-mb = 5120 ",
    ] {
        assert_eq!(
            parse_resource(text, &t, MissingTypes::Unbounded),
            Ok(ConfiguredResource::Absolute(
                Resource::UNBOUNDED.with(0, 5120).with(1, 2)
            )),
            "{text}"
        );
        assert_eq!(
            parse_resource(text, &t, MissingTypes::Zero),
            Ok(ConfiguredResource::Absolute(given)),
            "{text}"
        );
    }
    for text in [
        "vcores=2, memory-mb=5120, test1=4",
        "test1=4, vcores=2, memory-mb=5120",
        " vcores = 2 , memory-mb = 5120 , test1 = 4 ",
    ] {
        assert_eq!(
            parse_resource(text, &t, MissingTypes::Unbounded),
            Ok(ConfiguredResource::Absolute(
                Resource::UNBOUNDED.with(0, 5120).with(1, 2).with(2, 4)
            )),
            "{text}"
        );
    }
}

#[test]
fn new_style_values_near_long_max() {
    let t = types();
    let r = parse_resource(
        "memory-mb=9223372036854775807, vcores=9223372036854775807",
        &t,
        MissingTypes::Zero,
    );
    // vcores are an int in Hadoop: larger values are capped.
    assert_eq!(
        r,
        Ok(ConfiguredResource::Absolute(Resource::new(
            i64::MAX,
            i64::from(i32::MAX)
        )))
    );
    let e = parse_resource(
        "memory-mb=9223372036854775808, vcores=1",
        &t,
        MissingTypes::Zero,
    )
    .unwrap_err();
    assert!(e.contains("too large"), "{e}");
}

#[test]
fn new_style_percentages() {
    let t = with_test1();
    let cluster = Resource::new(10 * 1024, 4).with(2, 8);
    for text in [
        "vcores=75%, memory-mb=40%",
        "memory-mb=40%, vcores=75%",
        " vcores = 75 % , memory-mb = 40 % ",
    ] {
        // test1 is missing, so 100%.
        assert_eq!(
            resolve(text, &t, cluster),
            Resource::new(4096, 3).with(2, 8),
            "{text}"
        );
    }
    for text in [
        "vcores=75%, memory-mb=40%, test1=50%",
        " vcores = 75 % , memory-mb = 40 % , test1 = 50 % ",
    ] {
        assert_eq!(
            resolve(text, &t, cluster),
            Resource::new(4096, 3).with(2, 4),
            "{text}"
        );
    }
}

#[test]
fn new_style_rejections() {
    for (text, what) in [
        ("memory-mb=-5120,vcores=2", "memory-mb"),
        ("memory-mb=5120, vcores=-2", "vcores"),
        (" vcores = 2 ,  memory-mb = -5120 ", "memory-mb"),
        ("vcores=2,memory-mb=5120,test1=-4", "test1"),
    ] {
        let e = err(text);
        assert!(e.starts_with(what) && e.contains("negative"), "{text}: {e}");
    }
    for text in [
        "vcores=-75%,memory-mb=40%",
        "vcores = 75%, memory-mb = -40%",
    ] {
        assert!(err(text).contains("negative"), "{text}: {}", err(text));
    }
    assert!(err("memory-mb=1024, vcores=50%").contains("not a percentage"));
    assert!(err("memory-mb=40% 80%, vcores=50%").contains("not a percentage"));
    assert!(err("memory-mb=1024 mb, vcores=2").contains("not an integer"));
    assert!(err("memory-mb=1.5, vcores=2").contains("not an integer"));
    assert!(err("gpu=2, vcores=2").contains("unknown resource type 'gpu'"));
    assert!(err("memory=2, vcores=2").contains("unknown resource type 'memory'"));
    assert!(err("memory-mb=, vcores=2").contains("name=value"));
    assert!(err("memory-mb=1=2").contains("name=value"));
    assert!(err("   ").contains("empty"));
}

#[test]
fn quantities() {
    let t = ResourceTypes::with_custom(["gpu"]).unwrap();
    assert_eq!(
        parse_quantity("8192 mb, 8 vcores", &t),
        Ok(Resource::new(8192, 8))
    );
    assert_eq!(
        parse_quantity("8192 mb, 8 vcores, 2 gpu", &t),
        Ok(Resource::new(8192, 8).with(2, 2))
    );
    assert_eq!(
        parse_quantity("memory-mb=1024, vcores=1, gpu=2", &t),
        Ok(Resource::new(1024, 1).with(2, 2))
    );
    assert_eq!(parse_quantity("1024 mb", &t), Ok(Resource::new(1024, 0)));
    assert_eq!(
        parse_quantity("8192mb 8 vcores 2 gpu", &t),
        Ok(Resource::new(8192, 8).with(2, 2))
    );
    assert!(parse_quantity("1024, 2 vcores", &t)
        .unwrap_err()
        .starts_with("'1024' is not an amount"));
    assert!(parse_quantity("mb 1024", &t)
        .unwrap_err()
        .starts_with("'mb 1024' is not an amount"));
    assert_eq!(
        parse_quantity("1 vcores, 2048mb", &t),
        Ok(Resource::new(2048, 1))
    );
    assert!(parse_quantity("50%", &t)
        .unwrap_err()
        .contains("percentage"));
    assert!(parse_quantity("1 tpu, 1 vcores", &t)
        .unwrap_err()
        .contains("unknown resource type 'tpu'"));
    assert!(parse_quantity("tpu=1", &t)
        .unwrap_err()
        .contains("unknown resource type 'tpu'"));
    assert!(parse_quantity("-1 mb", &t)
        .unwrap_err()
        .contains("negative"));
    assert!(parse_quantity("1024", &t)
        .unwrap_err()
        .contains("not an amount"));
    assert!(parse_quantity("1 mb, 2 mb", &t)
        .unwrap_err()
        .contains("twice"));
    assert!(parse_quantity("", &t).unwrap_err().contains("empty"));
}

#[test]
fn quantity_names() {
    assert_eq!(
        quantity_type_names("8192 mb, 8 vcores, 2 gpu, 1 fpga"),
        vec!["gpu", "fpga"]
    );
    assert_eq!(
        quantity_type_names("memory-mb=1, vcores=1, gpu=2, gpu=3"),
        vec!["gpu"]
    );
    assert!(quantity_type_names("1024 mb, 1 vcores").is_empty());
    assert_eq!(
        quantity_type_names("8192 mb 8 vcores 2 yarn.io/gpu"),
        vec!["yarn.io/gpu"]
    );
}
