//! Behaviour of the allocation-file parser: values, structure, and every diagnostic.

use weft_config::alloc_file::{parse_allocations, parse_allocations_with, AllocationOptions};
use weft_config::reservation::{
    ReplannerKind, ReservationAgentKind, ReservationQueueSettings, SharingPolicyKind,
};
use weft_config::{
    AllocationConfig, ConfiguredResource, Diagnostic, PlacementRuleKind, PolicyKind, Severity,
};
use weft_types::{Resource, ResourceTypes};

fn parse(text: &str) -> (AllocationConfig, Vec<Diagnostic>) {
    parse_allocations(text, &ResourceTypes::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// The refused file's diagnostics as displayed, errors only.
fn errors(text: &str) -> Vec<String> {
    match parse_allocations(text, &ResourceTypes::default()) {
        Ok((c, _)) => panic!("accepted: {c:?}"),
        Err(e) => {
            e.0.iter()
                .filter(|d| d.severity == Severity::Error)
                .map(|d| d.to_string())
                .collect()
        }
    }
}

#[test]
fn every_problem_is_listed_with_its_line() {
    let text = r#"<allocations>
  <queue name="a">
    <maxAMShare>1.5x</maxAMShare>
  </queue>
  <queue name="b">
    <weight>heavy</weight>
  </queue>
  <userMaxAppsDefault>-</userMaxAppsDefault>
</allocations>"#;
    assert_eq!(
        errors(text),
        [
            "line 3, column 5: queue root.a: maxAMShare: '1.5x' is not a number",
            "line 6, column 5: queue root.b: weight: 'heavy' is not a number",
            "line 8, column 3: userMaxAppsDefault: '-' is not a whole number",
        ]
    );
}

#[test]
fn unknown_elements_are_warnings() {
    let text = r#"<allocations>
  <queue name="a">
    <maxRunningApp>3</maxRunningApp>
  </queue>
  <userMaxAppDefault>3</userMaxAppDefault>
</allocations>"#;
    let (config, warnings) = parse(text);
    assert!(config.queues.contains_key("root.a"));
    let shown: Vec<String> = warnings.iter().map(|d| d.to_string()).collect();
    assert_eq!(
        shown,
        [
            "line 3, column 5: queue root.a: unknown element <maxRunningApp> is ignored",
            "line 5, column 3: allocations: unknown element <userMaxAppDefault> is ignored",
        ]
    );
    assert!(warnings.iter().all(|d| d.severity == Severity::Warning));
}

#[test]
fn nested_queues_get_full_names_and_pool_is_an_alias() {
    let text = r#"<allocations>
  <pool name="eng">
    <queue name=" etl ">
      <pool name="nightly"/>
    </queue>
    <queue name="adhoc"/>
  </pool>
  <queue name="ops" type="parent"/>
</allocations>"#;
    let (config, warnings) = parse(text);
    assert!(warnings.is_empty());
    let names: Vec<(&str, bool)> = config
        .queues
        .values()
        .map(|q| (q.name.as_str(), q.is_parent))
        .collect();
    assert_eq!(
        names,
        [
            ("root.eng", true),
            ("root.eng.adhoc", false),
            ("root.eng.etl", true),
            ("root.eng.etl.nightly", false),
            ("root.ops", true),
        ]
    );
    assert_eq!(config.queues["root.eng.etl.nightly"].line, 4);
}

#[test]
fn explicit_root_queue() {
    let text = r#"<allocations>
  <queue name="ROOT">
    <aclSubmitApps> </aclSubmitApps>
    <queue name="a"/>
  </queue>
</allocations>"#;
    let (config, _) = parse(text);
    let names: Vec<&str> = config.queues.keys().map(String::as_str).collect();
    assert_eq!(names, ["root", "root.a"]);
    let root = &config.queues["root"];
    assert!(root.is_parent);
    let acl = root.acl_submit_apps.as_ref().unwrap();
    assert!(!acl.everyone && acl.users.is_empty() && acl.groups.is_empty());
}

#[test]
fn root_must_be_the_only_top_level_queue() {
    let text = "<allocations>\n  <queue name=\"root\"/>\n  <queue name=\"a\"/>\n</allocations>";
    let e = errors(text);
    assert_eq!(e.len(), 1);
    assert!(e[0].starts_with("line 2, column 3: queue root: a top-level queue named 'root' must be the only top-level queue"));
}

#[test]
fn queue_values_are_read_like_hadoop() {
    let text = r#"<allocations>
  <queue name="a">
    <minResources>1024 mb, 1 vcores</minResources>
    <maxResources>50% memory, 25% cpu</maxResources>
    <maxChildResources>memory-mb=2048, vcores=2</maxChildResources>
    <maxContainerAllocation>4096 mb, 4 vcores</maxContainerAllocation>
    <maxRunningApps>7</maxRunningApps>
    <maxAMShare>3.5</maxAMShare>
    <weight>0.25</weight>
    <minSharePreemptionTimeout>30</minSharePreemptionTimeout>
    <fairSharePreemptionTimeout>60</fairSharePreemptionTimeout>
    <fairSharePreemptionThreshold>1.7</fairSharePreemptionThreshold>
    <schedulingMode>FIFO</schedulingMode>
    <aclSubmitApps>alice,bob admins</aclSubmitApps>
    <aclAdministerApps> admins</aclAdministerApps>
    <aclAdministerReservations>*</aclAdministerReservations>
    <aclListReservations>carol</aclListReservations>
    <aclSubmitReservations>dave</aclSubmitReservations>
    <allowPreemptionFrom>yes</allowPreemptionFrom>
  </queue>
  <queue name="b">
    <maxAMShare>-1</maxAMShare>
    <fairSharePreemptionThreshold>-2</fairSharePreemptionThreshold>
    <allowPreemptionFrom> TRUE </allowPreemptionFrom>
    <schedulingPolicy>org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.policies.FairSharePolicy</schedulingPolicy>
  </queue>
</allocations>"#;
    let (config, warnings) = parse(text);
    assert!(warnings.is_empty(), "{warnings:?}");
    let a = &config.queues["root.a"];
    assert_eq!(a.min_resources, Some(Resource::new(1024, 1)));
    let mut half = [0.0; weft_types::MAX_RESOURCE_TYPES];
    half[0] = 0.5;
    half[1] = 0.25;
    assert_eq!(a.max_resources, Some(ConfiguredResource::Percent(half)));
    assert_eq!(
        a.max_child_resources,
        Some(ConfiguredResource::Absolute(
            Resource::UNBOUNDED.with(0, 2048).with(1, 2)
        ))
    );
    assert_eq!(
        a.max_container_allocation,
        Some(ConfiguredResource::Absolute(Resource::new(4096, 4)))
    );
    assert_eq!(a.max_running_apps, Some(7));
    assert_eq!(a.max_am_share, Some(1.0));
    assert_eq!(a.weight, Some(0.25));
    assert_eq!(a.min_share_preemption_timeout_ms, Some(30_000));
    assert_eq!(a.fair_share_preemption_timeout_ms, Some(60_000));
    assert_eq!(a.fair_share_preemption_threshold, Some(1.0));
    assert_eq!(a.scheduling_policy, Some(PolicyKind::Fifo));
    let submit = a.acl_submit_apps.as_ref().unwrap();
    assert!(submit.users.contains("alice") && submit.users.contains("bob"));
    assert!(submit.groups.contains("admins"));
    // A leading space means "no users, these groups": the text is not trimmed.
    let admin = a.acl_administer_apps.as_ref().unwrap();
    assert!(admin.users.is_empty() && admin.groups.contains("admins"));
    assert!(a.acl_administer_reservations.as_ref().unwrap().everyone);
    assert!(a
        .acl_list_reservations
        .as_ref()
        .unwrap()
        .users
        .contains("carol"));
    assert!(a
        .acl_submit_reservations
        .as_ref()
        .unwrap()
        .users
        .contains("dave"));
    assert_eq!(a.allow_preemption_from, Some(false));
    let b = &config.queues["root.b"];
    assert_eq!(b.max_am_share, Some(-1.0));
    assert_eq!(b.fair_share_preemption_threshold, Some(0.0));
    assert_eq!(b.allow_preemption_from, Some(true));
    assert_eq!(b.scheduling_policy, Some(PolicyKind::Fair));
}

#[test]
fn user_elements() {
    let text = r#"<allocations>
  <user name="bob"><maxRunningApps>3</maxRunningApps></user>
  <user name="carol">
    <maxRunningApps>many</maxRunningApps>
  </user>
</allocations>"#;
    assert_eq!(
        errors(text),
        ["line 4, column 5: user carol: maxRunningApps: 'many' is not a whole number"]
    );
    let (config, _) = parse(&text.replace("many", "9"));
    assert_eq!(config.user_max_apps.get("bob"), Some(&3));
    assert_eq!(config.user_max_apps.get("carol"), Some(&9));
}

#[test]
fn defaults_are_read() {
    let text = r#"<allocations>
  <userMaxAppsDefault>5</userMaxAppsDefault>
  <queueMaxAppsDefault>10</queueMaxAppsDefault>
  <queueMaxResourcesDefault>8192 mb, 8 vcores</queueMaxResourcesDefault>
  <queueMaxAMShareDefault>2</queueMaxAMShareDefault>
  <defaultMinSharePreemptionTimeout>20</defaultMinSharePreemptionTimeout>
  <defaultFairSharePreemptionThreshold>0.3</defaultFairSharePreemptionThreshold>
  <fairSharePreemptionTimeout>40</fairSharePreemptionTimeout>
  <defaultQueueSchedulingMode>drf</defaultQueueSchedulingMode>
  <reservation-agent>org.apache.hadoop.yarn.server.resourcemanager.reservation.planning.GreedyReservationAgent</reservation-agent>
  <reservation-policy>org.apache.hadoop.yarn.server.resourcemanager.reservation.NoOverCommitPolicy</reservation-policy>
  <reservation-planner>org.apache.hadoop.yarn.server.resourcemanager.reservation.planning.SimpleCapacityReplanner</reservation-planner>
</allocations>"#;
    let (config, warnings) = parse(text);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(config.user_max_apps_default, 5);
    assert_eq!(config.queue_max_apps_default, 10);
    assert_eq!(
        config.queue_max_resources_default,
        ConfiguredResource::Absolute(Resource::new(8192, 8))
    );
    assert_eq!(config.queue_max_am_share_default, 1.0);
    assert_eq!(config.default_min_share_preemption_timeout_ms, 20_000);
    assert_eq!(config.default_fair_share_preemption_threshold, 0.3);
    // The legacy element counts when the new one is absent...
    assert_eq!(config.default_fair_share_preemption_timeout_ms, 40_000);
    assert_eq!(config.default_queue_scheduling_policy, PolicyKind::Drf);
    assert_eq!(config.reservation_agent, Some(ReservationAgentKind::Greedy));
    assert_eq!(
        config.reservation_policy,
        Some(SharingPolicyKind::NoOverCommit)
    );
    assert_eq!(
        config.reservation_planner,
        Some(ReplannerKind::SimpleCapacity)
    );
    // ...and is overridden by it when both are present, wherever they appear.
    let both = text.replace(
        "<userMaxAppsDefault>",
        "<defaultFairSharePreemptionTimeout>15</defaultFairSharePreemptionTimeout>\n<userMaxAppsDefault>",
    );
    assert_eq!(
        parse(&both).0.default_fair_share_preemption_timeout_ms,
        15_000
    );
    // Nothing set: Hadoop's defaults.
    assert_eq!(parse("<allocations/>").0, AllocationConfig::default());
}

#[test]
fn fifo_cannot_be_the_default_policy() {
    let e = errors("<allocations>\n  <defaultQueueSchedulingPolicy>fifo</defaultQueueSchedulingPolicy>\n</allocations>");
    assert_eq!(e.len(), 1);
    assert!(e[0].starts_with(
        "line 2, column 3: defaultQueueSchedulingPolicy: fifo cannot be the default policy"
    ));
    let e = errors("<allocations><defaultQueueSchedulingPolicy>fastest</defaultQueueSchedulingPolicy></allocations>");
    assert!(e[0].contains("'fastest' is not a scheduling policy"));
}

#[test]
fn fifo_parent_and_drf_under_fair_are_refused() {
    let text = r#"<allocations>
  <queue name="a">
    <schedulingPolicy>fifo</schedulingPolicy>
    <queue name="a1"/>
  </queue>
  <queue name="b">
    <schedulingPolicy>fair</schedulingPolicy>
    <queue name="b1">
      <schedulingPolicy>drf</schedulingPolicy>
    </queue>
  </queue>
  <queue name="c">
    <schedulingPolicy>drf</schedulingPolicy>
    <queue name="c1"><schedulingPolicy>fifo</schedulingPolicy></queue>
  </queue>
</allocations>"#;
    let e = errors(text);
    assert_eq!(e.len(), 3, "{e:?}");
    assert!(e[0].starts_with(
        "line 2, column 3: queue root.a: schedulingPolicy: fifo is only allowed for leaf queues"
    ));
    assert!(e[1].starts_with("line 8, column 5: queue root.b.b1: schedulingPolicy: root.b.b1 uses drf but its parent root.b uses fair"), "{}", e[1]);
    // Top-level drf queue under the implicit root, whose policy is the default fair.
    assert!(e[2].starts_with("line 12, column 3: queue root.c: schedulingPolicy: root.c uses drf but its parent root uses fair (the default policy)"), "{}", e[2]);
    // With drf as the default, root allows drf children.
    let fixed = text.replace(
        "<allocations>",
        "<allocations><defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>",
    );
    assert_eq!(errors(&fixed).len(), 2);
}

#[test]
fn queue_structure_errors() {
    let text = r#"<allocations>
  <queue name="a.b"/>
  <queue name="  "/>
  <queue name="c"/>
  <queue name="c"/>
  <queue name="d" type="parent"><reservation/></queue>
  <queue name="e"><reservation/><queue name="e1"/></queue>
  <queue name="f"><reservation/></queue>
</allocations>"#;
    let e = errors(text);
    assert_eq!(e.len(), 5, "{e:?}");
    assert!(
        e[0].starts_with("line 2, column 3: queue 'a.b' in root: queue name 'a.b' contains '.'")
    );
    assert!(
        e[1].starts_with("line 3, column 3: queue in root: the queue element has an empty name")
    );
    assert!(e[2].starts_with(
        "line 5, column 3: queue root.c: queue root.c is declared twice (first at line 4)"
    ));
    assert!(e[3].starts_with("line 6, column 3: queue root.d: a queue with <reservation/>"));
    assert!(e[4].starts_with("line 7, column 3: queue root.e: a queue with <reservation/>"));
}

#[test]
fn reservation_queue_is_a_parent() {
    let (config, _) =
        parse("<allocations><queue name=\"plan\"><reservation/></queue></allocations>");
    let plan = &config.queues["root.plan"];
    assert!(plan.reservation && plan.is_parent);
}

#[test]
fn resource_errors_name_the_element() {
    let e = errors("<allocations>\n<queue name=\"a\">\n<minResources>1024</minResources>\n<maxResources>50%</maxResources>\n<minResources>50%</minResources>\n</queue>\n</allocations>");
    assert_eq!(
        e,
        [
            "line 3, column 1: queue root.a: minResources: '1024' is not a resource: expected e.g. '1024 mb, 2 vcores' or 'memory-mb=1024, vcores=2'",
            "line 5, column 1: queue root.a: minResources: '50%': a minimum must be an absolute amount, not a percentage",
        ]
    );
}

#[test]
fn custom_resource_types_in_queues() {
    let types = ResourceTypes::with_custom(["gpu"]).unwrap();
    let text = "<allocations><queue name=\"a\"><minResources>memory-mb=1024, vcores=1, gpu=2</minResources><maxResources>gpu=4</maxResources></queue></allocations>";
    let (config, _) = parse_allocations(text, &types).unwrap();
    let a = &config.queues["root.a"];
    assert_eq!(a.min_resources, Some(Resource::new(1024, 1).with(2, 2)));
    assert_eq!(
        a.max_resources,
        Some(ConfiguredResource::Absolute(Resource::UNBOUNDED.with(2, 4)))
    );
    let e = parse_allocations(text, &ResourceTypes::default()).unwrap_err();
    assert!(e.to_string().contains("unknown resource type 'gpu'"), "{e}");
}

#[test]
fn placement_policy_rules() {
    let text = r#"<allocations>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="user" create="false">
      <rule name="primaryGroup" create="false"/>
    </rule>
    <rule name="secondaryGroupExistingQueue"/>
    <rule name="default" queue="fallback.q"/>
  </queuePlacementPolicy>
</allocations>"#;
    let (config, warnings) = parse(text);
    assert!(warnings.is_empty(), "{warnings:?}");
    let rules = config.placement_policy.unwrap();
    assert_eq!(rules.len(), 4);
    assert!(!rules[0].create);
    assert_eq!(
        rules[1].parent.as_ref().map(|p| p.kind),
        Some(PlacementRuleKind::PrimaryGroup)
    );
    assert_eq!(rules[3].queue.as_deref(), Some("root.fallback.q"));
    assert!(rules[3].is_terminal());
}

#[test]
fn default_rule_queue_attribute() {
    let rule_queue = |attr: &str| {
        let text = format!("<allocations><queuePlacementPolicy><rule name=\"default\" {attr}/></queuePlacementPolicy></allocations>");
        let (config, warnings) = parse(&text);
        (
            config.placement_policy.unwrap()[0].queue.clone(),
            warnings.len(),
        )
    };
    assert_eq!(rule_queue(""), (None, 0));
    assert_eq!(rule_queue("queue=\"\""), (None, 0));
    assert_eq!(
        rule_queue("queue=\"root.x\""),
        (Some("root.x".to_string()), 0)
    );
    assert_eq!(rule_queue("queue=\"x\""), (Some("root.x".to_string()), 0));
    assert_eq!(rule_queue("queue=\"a..b\""), (None, 1));
}

#[test]
fn placement_policy_validation_errors() {
    let text = r#"<allocations>
  <queuePlacementPolicy>
    <rule name="user"/>
    <rule/>
    <rule name="bogus"/>
    <rule name="nestedUserQueue"/>
    <rule name="specified"><rule name="user"/></rule>
    <rule name="user"><rule name="reject"/></rule>
    <rule name="primaryGroup"><rule name="primaryGroup"/></rule>
    <rule name="specified"/>
  </queuePlacementPolicy>
</allocations>"#;
    let e = errors(text);
    let starts: Vec<&str> = e
        .iter()
        .map(|s| s.split(": ").nth(1).unwrap_or(""))
        .collect();
    assert_eq!(
        starts,
        [
            "queuePlacementPolicy rule 2",
            "queuePlacementPolicy rule 3",
            "queuePlacementPolicy rule 4",
            "queuePlacementPolicy rule 5",
            "queuePlacementPolicy rule 6",
            "queuePlacementPolicy rule 7",
        ],
        "{e:#?}"
    );
    assert!(e[0].contains("no name attribute"));
    assert!(e[1].contains("'bogus' is not a placement rule"));
    assert!(e[2].contains("needs a nested <rule>"));
    assert!(e[3].contains("a 'specified' rule cannot have a nested parent rule"));
    assert!(e[4].contains("'reject' cannot be used as a nested parent rule"));
    assert!(e[5].contains("cannot have a parent rule of the same type"));
}

#[test]
fn terminal_rules_must_end_the_policy() {
    let unreachable = r#"<allocations>
  <queuePlacementPolicy>
    <rule name="specified"/>
    <rule name="user"/>
    <rule name="default"/>
  </queuePlacementPolicy>
</allocations>"#;
    assert_eq!(
        errors(unreachable),
        ["line 4, column 5: queuePlacementPolicy rule 2: rule 'user' always places the application, so the rules after rule 2 can never be reached: remove them, or set create=\"false\" on this rule"]
    );
    let options = AllocationOptions {
        no_terminal_rule_check: true,
    };
    assert!(parse_allocations_with(unreachable, &ResourceTypes::default(), options).is_ok());

    let open_end = "<allocations>\n<queuePlacementPolicy>\n<rule name=\"specified\"/>\n<rule name=\"default\" create=\"false\"/>\n</queuePlacementPolicy>\n</allocations>";
    let e = errors(open_end);
    assert_eq!(e.len(), 1);
    assert!(e[0].starts_with("line 4, column 1: queuePlacementPolicy rule 2: the last rule 'default' may not place the application"));
}

#[test]
fn empty_placement_policy() {
    let e = errors("<allocations>\n  <queuePlacementPolicy/>\n</allocations>");
    assert_eq!(e.len(), 1);
    assert!(e[0]
        .starts_with("line 2, column 3: queuePlacementPolicy: the placement policy has no rules"));
    let (config, warnings) =
        parse("<allocations><queuePlacementPolicy><note/></queuePlacementPolicy></allocations>");
    assert_eq!(config.placement_policy, None);
    assert_eq!(warnings.len(), 2);
}

#[test]
fn root_element_must_be_allocations() {
    let e = errors("<?xml version=\"1.0\"?>\n<configuration/>");
    assert_eq!(
        e,
        ["line 2, column 1: the root element is <configuration>, but an allocation file's root element must be <allocations>"]
    );
}

#[test]
fn xml_syntax_errors_say_where_and_what() {
    let e = errors(
        "<allocations>\n  <queue name=\"a\">\n    <weight>2</weigth>\n  </queue>\n</allocations>",
    );
    assert_eq!(
        e,
        ["line 3, column 14: XML syntax error: closing tag </weigth> does not match the open element <weight>"]
    );
    let e = errors("<allocations>\n  <queue name=\"a\">\n");
    assert_eq!(e.len(), 1);
    assert!(
        e[0].contains("the document ends before every element is closed"),
        "{e:?}"
    );
    let e = errors("<allocations>\n<!-- a -- b -->\n</allocations>");
    assert!(
        e[0].starts_with("line 2, column 1: XML syntax error: malformed comment"),
        "{e:?}"
    );
}

#[test]
fn xml_errors_say_what_was_expected() {
    let e = errors("<allocations>\n  <queue name=\"a\" weight>\n  </queue>\n</allocations>");
    assert_eq!(e.len(), 1);
    assert!(e[0].starts_with("line 2, column "), "{e:?}");
    assert!(
        e[0].contains("XML syntax error: malformed markup: expected '='; found '>'"),
        "{e:?}"
    );
    let e = errors("<allocations>\n<weight/>\n<queue name=\"a\"><weight/></queue>\n</allocations>");
    assert_eq!(
        e,
        ["line 3, column 17: queue root.a: weight: the value is empty; a number is needed"]
    );
}

#[test]
fn a_percentage_max_container_allocation_is_ignored_with_a_warning_as_hadoop_ignores_it() {
    let text = r#"<allocations>
  <queue name="a">
    <maxContainerAllocation>50%</maxContainerAllocation>
  </queue>
  <queue name="b">
    <maxContainerAllocation>2048 mb, -1 vcores</maxContainerAllocation>
  </queue>
</allocations>"#;
    let e = errors(text);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("line 6, column 5: queue root.b: maxContainerAllocation:"),
        "{e:?}"
    );
    let text = r#"<allocations>
  <queue name="a">
    <maxContainerAllocation>50%</maxContainerAllocation>
  </queue>
</allocations>"#;
    let (config, warnings) = parse(text);
    assert_eq!(config.queues["root.a"].max_container_allocation, None);
    let shown: Vec<String> = warnings.iter().map(|d| d.to_string()).collect();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].starts_with("line 3, column 5: queue root.a: maxContainerAllocation '50%' is a percentage, which Hadoop ignores"),
        "{shown:?}"
    );
}

#[test]
fn preemption_value_errors_name_the_element_and_where() {
    let e = errors("<allocations>\n<defaultMinSharePreemptionTimeout>soon</defaultMinSharePreemptionTimeout>\n<queue name=\"a\">\n<minSharePreemptionTimeout>5s</minSharePreemptionTimeout>\n<fairSharePreemptionThreshold>half</fairSharePreemptionThreshold>\n</queue>\n</allocations>");
    assert_eq!(e.len(), 3, "{e:?}");
    assert!(
        e[0].starts_with("line 2, column 1: ")
            && e[0].contains("defaultMinSharePreemptionTimeout")
            && e[0].contains("'soon'"),
        "{}",
        e[0]
    );
    assert!(
        e[1].starts_with("line 4, column 1: queue root.a: minSharePreemptionTimeout: '5s'"),
        "{}",
        e[1]
    );
    assert!(
        e[2].starts_with("line 5, column 1: queue root.a: fairSharePreemptionThreshold: 'half'"),
        "{}",
        e[2]
    );
}

#[test]
fn reservation_classes_weft_cannot_load_are_errors_listing_the_supported_ones() {
    let text = r#"<allocations>
  <queue name="prod"><reservation/></queue>
  <reservation-agent>my.Agent</reservation-agent>
</allocations>"#;
    assert_eq!(
        errors(text),
        ["line 3, column 3: reservation-agent: unknown reservation agent class 'my.Agent'; Weft supports \
          org.apache.hadoop.yarn.server.resourcemanager.reservation.planning.AlignedPlannerWithGreedy, \
          org.apache.hadoop.yarn.server.resourcemanager.reservation.planning.GreedyReservationAgent"]
    );
    // Without the globals, a reservable Fair queue takes Hadoop's defaults.
    let (config, _) =
        parse(r#"<allocations><queue name="prod"><reservation/></queue></allocations>"#);
    let settings = ReservationQueueSettings::for_fair(&config);
    assert_eq!(settings, ReservationQueueSettings::default());
    assert_eq!(
        settings.agent,
        ReservationAgentKind::AlignedPlannerWithGreedy
    );
    assert_eq!(settings.window_ms, 86_400_000);
}
