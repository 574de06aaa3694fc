//! Queue names deeper than `weft_config::MAX_QUEUE_DEPTH` are refused wherever they arrive at run
//! time (submitted names, names a placement rule builds, moves), so no walk over the queue tree
//! can be driven arbitrarily deep.

use weft_config::alloc_file::parse_allocations;
use weft_config::MAX_QUEUE_DEPTH;
use weft_sched::{Decision, Event, SchedError, Scheduler, SchedulerConfig};
use weft_types::{AppId, ResourceTypes, Time};

fn scheduler(xml: &str) -> Scheduler {
    let (allocations, _) =
        parse_allocations(xml, &ResourceTypes::default()).expect("valid allocations");
    Scheduler::new(
        SchedulerConfig::fair(allocations, Default::default()),
        Default::default(),
    )
}

/// `root` followed by `levels - 1` components.
fn queue_of_levels(levels: usize) -> String {
    let mut name = String::from("root");
    for i in 1..levels {
        name.push_str(&format!(".q{i}"));
    }
    name
}

fn submit(s: &mut Scheduler, app: u64, user: &str, queue: &str) -> Decision {
    s.handle(
        Time(0),
        Event::AppSubmitted {
            app: AppId(app),
            user: user.into(),
            queue: Some(queue.into()),
            am_resource: None,
        },
    )
    .expect("the event is taken");
    s.poll_decision().expect("a decision on the submission")
}

#[test]
fn submitted_names_beyond_the_limit_are_rejected_and_the_deepest_allowed_is_placed() {
    let mut s = scheduler("<allocations/>");
    let deepest = queue_of_levels(MAX_QUEUE_DEPTH);
    assert_eq!(
        submit(&mut s, 1, "alice", &deepest),
        Decision::Accepted {
            app: AppId(1),
            queue: deepest.clone()
        }
    );
    for levels in [MAX_QUEUE_DEPTH + 1, 100_000] {
        match submit(&mut s, levels as u64, "alice", &queue_of_levels(levels)) {
            Decision::Rejected { reason, .. } => assert!(
                reason.contains(&format!("{levels} levels deep"))
                    && reason.contains("at most 100 levels"),
                "{reason}"
            ),
            other => panic!("a {levels}-level queue was not rejected: {other:?}"),
        }
    }
    assert_eq!(s.verify(), Vec::<String>::new());
}

#[test]
fn names_a_rule_builds_beyond_the_limit_are_rejected() {
    // The user rule under a deep parent: the specified name itself is fine, the built one not.
    let parent = queue_of_levels(MAX_QUEUE_DEPTH);
    let xml = format!(
        "<allocations><queuePlacementPolicy>\
         <rule name=\"nestedUserQueue\"><rule name=\"default\" queue=\"{parent}\"/></rule>\
         </queuePlacementPolicy></allocations>"
    );
    let mut s = scheduler(&xml);
    match submit(&mut s, 1, "alice", "whatever") {
        Decision::Rejected { reason, .. } => {
            assert!(reason.contains("at most 100 levels"), "{reason}")
        }
        other => panic!("a {}-level queue was built: {other:?}", MAX_QUEUE_DEPTH + 1),
    }
    assert_eq!(s.verify(), Vec::<String>::new());
}

#[test]
fn moves_to_names_beyond_the_limit_are_refused() {
    let mut s = scheduler("<allocations/>");
    submit(&mut s, 1, "alice", "root.default");
    let target = queue_of_levels(MAX_QUEUE_DEPTH + 1);
    match s.handle(
        Time(1),
        Event::Move {
            app: AppId(1),
            queue: target,
        },
    ) {
        Err(SchedError::MoveRefused { reason, .. }) => {
            assert!(reason.contains("at most 100 levels"), "{reason}")
        }
        other => panic!("the move was not refused: {other:?}"),
    }
}
