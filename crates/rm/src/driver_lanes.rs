//! The driver's two lanes: a control call sent after a backlog of periodic calls (heartbeats,
//! Allocates) is run before them.

use std::sync::{mpsc, Arc, Mutex};

use weft_store::MemoryStore;

use super::test_support::start_driver;
use crate::driver::LANE_CAPACITY;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_call_runs_before_the_queued_periodic_calls() {
    let running = start_driver(Arc::new(MemoryStore::new()));
    let driver = &running.driver;

    // A job that holds the driver until the backlog is queued behind it.
    let (open, gate) = mpsc::channel::<()>();
    let (began, running) = tokio::sync::oneshot::channel();
    let holder = {
        let driver = driver.clone();
        tokio::spawn(async move {
            driver
                .call(move |_, _| {
                    let _ = began.send(());
                    let _ = gate.recv();
                })
                .await
        })
    };
    running.await.expect("the holding job runs");
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut calls = Vec::new();
    const PERIODIC: usize = 20;
    for i in 0..PERIODIC {
        let driver = driver.clone();
        let order = Arc::clone(&order);
        calls.push(tokio::spawn(async move {
            driver
                .call_periodic(move |_, _| order.lock().expect("not poisoned").push(i))
                .await
        }));
    }
    while driver.periodic_queued() < PERIODIC {
        tokio::task::yield_now().await;
    }
    let control = {
        let driver = driver.clone();
        let order = Arc::clone(&order);
        tokio::spawn(async move {
            driver
                .call(move |_, _| order.lock().expect("not poisoned").push(usize::MAX))
                .await
        })
    };
    while driver.control_queued() < 1 {
        tokio::task::yield_now().await;
    }
    open.send(()).expect("the driver waits");
    holder.await.expect("join").expect("answered");
    control.await.expect("join").expect("answered");
    for call in calls {
        call.await.expect("join").expect("answered");
    }
    let order = order.lock().expect("not poisoned").clone();
    assert_eq!(order.len(), PERIODIC + 1);
    assert_eq!(order[0], usize::MAX, "the control call first: {order:?}");
    assert_eq!(
        order[1..],
        (0..PERIODIC).collect::<Vec<_>>(),
        "the periodic calls in the order sent"
    );
}

// The backlog fits the lane, so every periodic call is queued before the gate opens.
const _: () = assert!(20 < LANE_CAPACITY);
