//! The reservation system through the core, on the spec's cluster (§5): 4 nodes × 8 GB / 8
//! vcores, `root.prod` reservable with weight 3 and `root.adhoc` with weight 1. Fair always
//! has `root.default` (weight 1) too, so the prod plan holds 3/5 of the cluster: 19,662 MB (the steady share's search rounds 19,660.8 up)
//! (the spec's 24 GB leaves `root.default` out) and, scaled the same way, 19 vcores.

use weft_plan::{Interpreter, ReservationDefinition, ReservationId, ReservationRequest};

use super::*;

const PROD_ADHOC: &str = r#"<allocations>
  <queue name="prod"><weight>3</weight><reservation/></queue>
  <queue name="adhoc"><weight>1</weight></queue>
</allocations>"#;

fn cluster() -> RmCore {
    let mut c = RmCore::new(config(PROD_ADHOC), TS, Time(0));
    for n in ["n1:1", "n2:1", "n3:1", "n4:1"] {
        register(&mut c, 0, n);
    }
    drain(&mut c);
    c
}

fn gb(n: i64) -> Resource {
    Resource::new(n * 1024, n)
}

fn all(
    arrival: u64,
    deadline: u64,
    size: i64,
    n: u32,
    gang: u32,
    secs: u64,
) -> ReservationDefinition {
    ReservationDefinition {
        arrival: Time(arrival),
        deadline: Time(deadline),
        name: "a2".into(),
        priority: 0,
        recurrence: None,
        interpreter: Interpreter::All,
        requests: vec![ReservationRequest {
            capability: gb(size),
            num_containers: n,
            concurrency: gang,
            duration: Duration::from_secs(secs),
        }],
    }
}

#[test]
fn ids_follow_hadoops_format_and_count_up() {
    let mut c = cluster();
    assert_eq!(
        c.new_reservation().to_string(),
        format!("reservation_{TS}_0001")
    );
    assert_eq!(
        c.new_reservation().to_string(),
        format!("reservation_{TS}_0002")
    );
}

#[test]
fn the_plan_capacity_is_the_steady_fair_share_and_follows_the_nodes() {
    let mut c = cluster();
    let id = c.new_reservation();
    let def = all(60_000, 600_000, 1, 10, 1, 60);
    c.submit_reservation(Time(1000), "alice", "prod", Some(id), &def)
        .expect("accepted");
    let plan = c.reservations().plan("prod").expect("prod is reservable");
    // 32,768 MB × 3/5 as the Fair steady share computes it; vcores 32 × 19,662 / 32,768.
    let capacity = plan.capacity().value_at(Time(1000));
    assert_eq!((capacity.memory_mb(), capacity.get(1)), (19_662, 19));
    assert_eq!(c.reservations().queue_of(&id), Some("root.prod"));
    let r = c.reservations().find(&id).expect("stored");
    assert_eq!(r.user, "alice");
    assert_eq!(r.acceptance_time, Time(1000));
    let total = r.allocation.integral(Time(0), Time(700_000));
    assert_eq!(total[0], 10 * 1024 * 60_000, "10 × 60 s of 1 GB");

    // A fifth node: the next request sees 3/5 of 40 GB from its time on, the past stays.
    register(&mut c, 2000, "n5:1");
    drain(&mut c);
    c.delete_reservation(Time(3000), "alice", Some(id))
        .expect("deleted");
    let plan = c.reservations().plan("prod").expect("prod is reservable");
    assert_eq!(plan.capacity().value_at(Time(1000)).memory_mb(), 19_662);
    let grown = plan.capacity().value_at(Time(3000)).memory_mb();
    assert!(
        (24_570..=24_580).contains(&grown),
        "3/5 of 40,960 MB, got {grown}"
    );
}

#[test]
fn resubmitting_the_same_definition_is_a_no_op_and_another_is_refused() {
    let mut c = cluster();
    let id = c.new_reservation();
    let def = all(60_000, 600_000, 1, 10, 1, 60);
    c.submit_reservation(Time(0), "alice", "prod", Some(id), &def)
        .expect("accepted");
    c.submit_reservation(Time(5), "alice", "prod", Some(id), &def)
        .expect("same again is accepted");
    let other = all(60_000, 600_000, 1, 11, 1, 60);
    let err = c
        .submit_reservation(Time(5), "alice", "prod", Some(id), &other)
        .expect_err("different definition");
    assert!(err.to_string().contains("already exists"), "{err}");
    assert_eq!(
        c.reservations().find(&id).map(|r| r.definition.clone()),
        Some(def)
    );
}

#[test]
fn a_queue_without_a_plan_and_a_missing_id_are_refused_with_hadoops_messages() {
    let mut c = cluster();
    let id = c.new_reservation();
    let def = all(60_000, 600_000, 1, 10, 1, 60);
    let err = c
        .submit_reservation(Time(0), "alice", "adhoc", Some(id), &def)
        .expect_err("adhoc is not reservable");
    assert_eq!(
        err.to_string(),
        "The specified queue: adhoc is not managed by reservation system. Please try again with a valid reservable queue."
    );
    let err = c
        .submit_reservation(Time(0), "alice", "prod", None, &def)
        .expect_err("no id");
    assert!(
        err.to_string()
            .starts_with("Reservation id cannot be null."),
        "{err}"
    );
}

#[test]
fn an_id_the_rm_did_not_issue_is_accepted_and_never_issued_later() {
    let mut c = cluster();
    let chosen = ReservationId {
        cluster_timestamp: TS,
        sequence: 7,
    };
    let def = all(60_000, 600_000, 1, 1, 1, 60);
    c.submit_reservation(Time(0), "alice", "prod", Some(chosen), &def)
        .expect("Hadoop accepts any well-formed id");
    assert_eq!(c.new_reservation().sequence, 8);
}

#[test]
fn a_refused_update_keeps_the_old_allocation_and_delete_empties_the_list() {
    let mut c = cluster();
    let id = c.new_reservation();
    let def = all(60_000, 600_000, 1, 10, 1, 60);
    c.submit_reservation(Time(0), "alice", "prod", Some(id), &def)
        .expect("accepted");
    let before = c.reservations().find(&id).cloned().expect("stored");
    let too_big = all(60_000, 120_000, 20, 2, 1, 60);
    assert!(c
        .update_reservation(Time(1), "alice", Some(id), &too_big)
        .is_err());
    assert_eq!(c.reservations().find(&id), Some(&before));
    let smaller = all(60_000, 600_000, 1, 5, 1, 60);
    c.update_reservation(Time(2), "alice", Some(id), &smaller)
        .expect("fits");
    assert_eq!(
        c.reservations().find(&id).map(|r| &r.definition),
        Some(&smaller)
    );

    c.delete_reservation(Time(3), "alice", Some(id))
        .expect("deleted");
    let listed = c
        .reservations()
        .list(&ReservationQuery {
            queue: "prod".into(),
            ..Default::default()
        })
        .expect("prod lists");
    assert!(listed.is_empty());
    let err = c
        .delete_reservation(Time(4), "alice", Some(id))
        .expect_err("gone");
    assert!(err.to_string().contains("is unknown"), "{err}");
}

#[test]
fn the_list_selects_reservations_overlapping_the_window_or_the_id() {
    let mut c = cluster();
    let id = c.new_reservation();
    let def = all(100_000, 160_000, 1, 1, 1, 60);
    c.submit_reservation(Time(0), "alice", "prod", Some(id), &def)
        .expect("accepted");
    let list = |start: u64, end: Option<u64>, id: Option<ReservationId>| {
        c.reservations()
            .list(&ReservationQuery {
                queue: "prod".into(),
                id,
                start: Time(start),
                end: end.map(Time),
            })
            .expect("listed")
            .len()
    };
    assert_eq!(list(170_000, None, None), 0);
    assert_eq!(list(0, Some(90_000), None), 0);
    assert_eq!(list(150_000, Some(155_000), None), 1);
    assert_eq!(list(170_000, None, Some(id)), 1);
}

#[test]
fn a_reload_that_drops_the_reservable_queue_drops_its_plan() {
    let mut c = cluster();
    let id = c.new_reservation();
    c.submit_reservation(
        Time(0),
        "alice",
        "prod",
        Some(id),
        &all(60_000, 600_000, 1, 1, 1, 60),
    )
    .expect("accepted");
    let plain = config(r#"<allocations><queue name="prod"/></allocations>"#);
    c.reload(Time(10), plain.scheduler).expect("reloaded");
    assert!(c.reservations().plan("prod").is_none());
    assert!(c.reservations().find(&id).is_none());
}

#[test]
fn a_restart_loses_no_reservation_and_never_reissues_an_id() {
    let mut c = cluster();
    let kept = c.new_reservation();
    let deleted = c.new_reservation();
    let unused = c.new_reservation();
    let def = all(60_000, 600_000, 1, 10, 1, 60);
    c.submit_reservation(Time(0), "alice", "prod", Some(kept), &def)
        .expect("accepted");
    c.submit_reservation(Time(1), "bob", "prod", Some(deleted), &def)
        .expect("accepted");
    c.delete_reservation(Time(2), "alice", Some(deleted))
        .expect("deleted");
    drain(&mut c);
    let before = c.reservations().find(&kept).cloned().expect("stored");

    // Recovered before any node registers: the plan's capacity is zero, yet the reservation
    // comes back as it was (no re-validation).
    let mut r = RmCore::recover(config(PROD_ADHOC), stored(), 0, Time(10)).expect("recovers");
    let after = r.reservations().find(&kept).cloned().expect("recovered");
    assert_eq!(
        (
            &after.user,
            &after.definition,
            after.start,
            after.end,
            &after.allocation
        ),
        (
            &before.user,
            &before.definition,
            before.start,
            before.end,
            &before.allocation
        )
    );
    assert_eq!(after.acceptance_time, Time(0));
    assert!(r.reservations().find(&deleted).is_none());
    assert_eq!(r.reservations().queue_of(&kept), Some("root.prod"));
    let next = r.new_reservation();
    assert_eq!(next.sequence, unused.sequence + 1, "{next} after {unused}");
}

/// The spec's cluster under the Capacity Scheduler: `root.prod` 75% (24 GB / 24 vcores of the
/// 4 × 8 GB nodes) reservable with `prod_settings`, `root.adhoc` 25%.
pub(crate) fn capacity_cluster(prod_settings: &[(&str, &str)]) -> RmCore {
    let mut xml = String::from("<configuration>\n");
    let mut props = vec![
        ("root.queues", "prod,adhoc"),
        ("root.prod.capacity", "75"),
        ("root.adhoc.capacity", "25"),
        ("root.prod.reservable", "true"),
    ];
    props.extend_from_slice(prod_settings);
    for (name, value) in props {
        xml.push_str(&format!(
            "<property><name>yarn.scheduler.capacity.{name}</name><value>{value}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    let (capacity, _) = weft_config::capacity::parse_capacity(&xml, &ResourceTypes::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut rm = config("<allocations/>");
    rm.scheduler = SchedulerConfig::Capacity(weft_sched::CapacitySchedulerConfig {
        capacity,
        properties: weft_config::SchedulerProperties {
            update_interval_ms: 0,
            ..Default::default()
        },
    });
    let mut c = RmCore::new(rm, TS, Time(0));
    for n in ["n1:1", "n2:1", "n3:1", "n4:1"] {
        register(&mut c, 0, n);
    }
    drain(&mut c);
    c
}

/// A14: with `instantaneous-max-capacity` 50, one user's 16 GB (67% of the 24 GB plan) is
/// refused; 12 GB (50%) is accepted. The plan is the queue's absolute capacity × cluster.
#[test]
fn the_instantaneous_share_refuses_a_user_over_half_the_plan() {
    let mut c = capacity_cluster(&[("root.prod.instantaneous-max-capacity", "50")]);
    let id = c.new_reservation();
    let over = all(60_000, 600_000, 1, 16, 16, 60);
    let err = c
        .submit_reservation(Time(0), "alice", "prod", Some(id), &over)
        .expect_err("67% of the plan");
    // The agents plan within the user's headroom (Hadoop's IterativePlanner asks the
    // policy's available resources too), so the refusal may be the planner's.
    let text = err.to_string();
    assert!(
        text.starts_with("Instantaneous quota capacity 0.5 would be passed")
            || text == "The request cannot be satisfied",
        "{text}"
    );
    let plan = c
        .reservations()
        .plan("root.prod")
        .expect("prod is reservable");
    assert_eq!(plan.capacity().value_at(Time(0)), gb(24));
    let half = all(60_000, 600_000, 1, 12, 12, 60);
    c.submit_reservation(Time(0), "alice", "prod", Some(id), &half)
        .expect("50% is allowed");
}

/// A14's second half: `average-capacity` 25 over a 1 h window: 24 GB·h × 25% = 6 GB·h per
/// user. 4 GB for 1 h fits; another 4 GB for 1 h in the same hour does not.
#[test]
fn the_average_share_refuses_a_user_over_a_quarter_of_the_window() {
    let mut c = capacity_cluster(&[
        ("root.prod.average-capacity", "25"),
        ("root.prod.reservation-window", "3600000"),
    ]);
    let first = c.new_reservation();
    let hour = all(60_000, 3_660_000, 1, 4, 4, 3600);
    c.submit_reservation(Time(0), "alice", "prod", Some(first), &hour)
        .expect("4 GB·h of 6");
    let second = c.new_reservation();
    let err = c
        .submit_reservation(Time(0), "alice", "prod", Some(second), &hour)
        .expect_err("8 GB·h of 6");
    assert!(
        err.to_string()
            .starts_with("Integral (avg over time) quota capacity 0.25"),
        "{err}"
    );
    // Another user has a quota of their own.
    c.submit_reservation(Time(0), "bob", "prod", Some(second), &hour)
        .expect("bob's own 4 GB·h");
}

/// A15: capacity-scheduler.xml's `average-capacity` 1 is 1% (Hadoop's code; its
/// documentation says 1 means 100%): a 2% reservation is refused.
#[test]
fn average_capacity_one_means_one_percent() {
    let mut c = capacity_cluster(&[("root.prod.average-capacity", "1")]);
    let id = c.new_reservation();
    // 2% of 24 GB over the 24 h window: 0.48 GB × 24 h; ask 1 GB for 12 h.
    let two_percent = all(60_000, 43_260_000, 1, 1, 1, 43_200);
    let err = c
        .submit_reservation(Time(0), "alice", "prod", Some(id), &two_percent)
        .expect_err("2% over 1%");
    assert!(
        err.to_string()
            .starts_with("Integral (avg over time) quota capacity 0.01"),
        "{err}"
    );
}

/// Spec C8 on Hadoop's door (§3.3 item 5, §7 decision 2): the same 4 × 8 GB nodes with `prod`
/// holding 30/31 of them (31,710 MB), so a gang of 5 × 5 GB (25,600 MB) passes every check
/// Hadoop makes, yet no node holds two members: Σ ⌊8192 ÷ 5120⌋ = 4 < 5.
mod packability {
    use super::*;

    const PROD_ALMOST_ALL: &str = r#"<allocations>
  <queue name="prod"><weight>30</weight><reservation/></queue>
</allocations>"#;

    fn cluster_with(check: bool) -> RmCore {
        let mut cfg = config(PROD_ALMOST_ALL);
        cfg.scheduler.properties_mut().reservation_packability_check = check;
        let mut c = RmCore::new(cfg, TS, Time(0));
        for n in ["n1:1", "n2:1", "n3:1", "n4:1"] {
            register(&mut c, 0, n);
        }
        drain(&mut c);
        c
    }

    fn stage(mb: i64, n: u32, gang: u32, secs: u64) -> ReservationRequest {
        ReservationRequest {
            capability: Resource::new(mb, 1),
            num_containers: n,
            concurrency: gang,
            duration: Duration::from_secs(secs),
        }
    }

    fn definition(
        interpreter: Interpreter,
        requests: Vec<ReservationRequest>,
    ) -> ReservationDefinition {
        ReservationDefinition {
            interpreter,
            requests,
            ..all(60_000, 600_000, 1, 1, 1, 60)
        }
    }

    const C8: &str = "gang of 5 × 5120 MB cannot be packed on 4 nodes: at most 4 members";

    /// Memory × ms the reservation holds.
    fn held(c: &RmCore, id: &ReservationId) -> i128 {
        let r = c.reservations().find(id).expect("accepted");
        r.allocation.integral(Time(0), Time(700_000))[0]
    }

    #[test]
    fn an_unpackable_gang_is_refused_after_hadoops_checks_and_accepted_with_the_check_off() {
        let gang = definition(Interpreter::All, vec![stage(5120, 5, 5, 60)]);
        let mut c = cluster_with(true);
        let id = c.new_reservation();
        let err = c
            .submit_reservation(Time(0), "alice", "prod", Some(id), &gang)
            .expect_err("unpackable");
        assert_eq!(err.to_string(), C8);
        assert!(c.reservations().find(&id).is_none(), "nothing planned");

        let mut off = cluster_with(false);
        let id = off.new_reservation();
        off.submit_reservation(Time(0), "alice", "prod", Some(id), &gang)
            .expect("Hadoop's answer: the aggregate fits");
        assert_eq!(held(&off, &id), 5 * 5120 * 60_000);
    }

    #[test]
    fn hadoops_own_refusals_come_first() {
        let mut c = cluster_with(true);
        let id = c.new_reservation();
        // 7 × 5 GB = 35 GB exceeds the 31 GB plan: A6's words, though it is unpackable too.
        let too_big = definition(Interpreter::All, vec![stage(5120, 7, 7, 60)]);
        let err = c
            .submit_reservation(Time(0), "alice", "prod", Some(id), &too_big)
            .expect_err("too big");
        assert!(
            err.to_string().starts_with("The size of the largest gang"),
            "{err}"
        );
        // 10 containers in gangs of 5 × 5 GB need 2 × 60 s in a 30 s window: Hadoop's refusal.
        let short = ReservationDefinition {
            deadline: Time(90_000),
            ..definition(Interpreter::All, vec![stage(5120, 10, 5, 60)])
        };
        let err = c
            .submit_reservation(Time(0), "alice", "prod", Some(id), &short)
            .expect_err("too short");
        assert_ne!(err.to_string(), C8);
    }

    #[test]
    fn r_any_passes_over_an_unpackable_alternative_as_over_an_infeasible_one() {
        let any = definition(
            Interpreter::Any,
            vec![stage(5120, 5, 5, 60), stage(1024, 10, 1, 120)],
        );
        let mut c = cluster_with(true);
        let id = c.new_reservation();
        c.submit_reservation(Time(0), "alice", "prod", Some(id), &any)
            .expect("the second shape");
        assert_eq!(held(&c, &id), 10 * 1024 * 120_000);
        assert_eq!(
            c.reservations().find(&id).map(|r| &r.definition),
            Some(&any)
        );

        let mut off = cluster_with(false);
        let id = off.new_reservation();
        off.submit_reservation(Time(0), "alice", "prod", Some(id), &any)
            .expect("Hadoop's first shape");
        assert_eq!(held(&off, &id), 5 * 5120 * 60_000);

        // Every alternative Hadoop could place is unpackable: refused, saying why.
        let only_unpackable = definition(
            Interpreter::Any,
            vec![stage(5120, 5, 5, 60), stage(1024, 40, 40, 60)],
        );
        let id = c.new_reservation();
        let err = c
            .submit_reservation(Time(0), "alice", "prod", Some(id), &only_unpackable)
            .expect_err("nothing packable");
        assert_eq!(err.to_string(), C8);
    }

    #[test]
    fn an_update_to_an_unpackable_gang_is_refused_and_the_old_reservation_stays() {
        let mut c = cluster_with(true);
        let id = c.new_reservation();
        let fits = definition(Interpreter::All, vec![stage(5120, 4, 4, 60)]);
        c.submit_reservation(Time(0), "alice", "prod", Some(id), &fits)
            .expect("4 members, one per node");
        let unpackable = definition(Interpreter::All, vec![stage(5120, 5, 5, 60)]);
        let err = c
            .update_reservation(Time(0), "alice", Some(id), &unpackable)
            .expect_err("unpackable");
        assert_eq!(err.to_string(), C8);
        assert_eq!(
            c.reservations().find(&id).map(|r| &r.definition),
            Some(&fits)
        );
    }
}
